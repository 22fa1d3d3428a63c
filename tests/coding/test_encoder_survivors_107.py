"""Tests written for the real survivors of the fresh mutation sample of seed 107 (docs/testing.md, stop 44).

Each is checked against its mutant: it fails with the mutant applied and passes without it.
"""

import warnings

import numpy as np
import pytest

from neurosim.coding.encoders import NonConvergenceWarning, lambda_for_count, omp


def test_lambda_search_stops_when_the_bracket_is_strictly_narrower_than_its_fraction_of_the_top():
    """The bisection of ``lambda_for_count`` replayed by hand, at a bracket width that ties the rule exactly.

    Two orthonormal atoms with equal correlations c = (1, 1) enter the lasso path together at lambda = 1
    (the bracket's top): below it both are active, so the count of 1 is never hit and every step raises
    the bracket's bottom (lo = mid), leaving hi = 1. With rtol_lambda = 1/8 the widths are 1, 1/2, 1/4,
    1/8, 1/16 (all exact in binary). "Narrower than 1/8 of the top" is strict: at width 1/8 the search
    goes on to mid = 1 - 1/32 = 0.96875 (width 1/16 stops it); a search that stopped at width 1/8 would
    return 1 - 1/16 = 0.9375.
    """
    with pytest.warns(NonConvergenceWarning, match="no lambda giving exactly the requested count"):
        lam = lambda_for_count(np.array([1.0, 1.0]), np.eye(2), 1, rtol_lambda=0.125)
    assert lam == 0.96875


def test_omp_names_only_the_reason_that_stopped_its_samples():
    """A dependent atom stops plain OMP; the warning must not also blame a non-negative re-fit it never ran.

    The workspace test's case (x = (3, 2, 1); the third atom is within 1e-12 of span(e0, e1)) stops with
    OMP_DEPENDENT; plain OMP has no NNLS re-fit, so no sample stopped for that reason.
    """
    D = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.0, 1e-6]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        A = omp(np.array([3.0, 2.0, 1.0]), D, 3)
    messages = [str(w.message) for w in caught if issubclass(w.category, NonConvergenceWarning)]
    assert len(messages) == 1
    assert "1 sample(s) stopped early because the next atom is linearly dependent" in messages[0]
    assert "non-negative least-squares" not in messages[0]
    np.testing.assert_allclose(A, [3.0, 2.0, 0.0], rtol=1e-12, atol=1e-12)
