"""One rule for missing values (issue 38, item 13): an entry not observed is never read, so it may be NaN or Inf;
an observed entry must be finite.

``inpaint`` accepted NaN at missing pixels while ``structured_sparse_code`` refused NaN at coordinates its
``observed`` mask marks missing, although it never reads them. Now the functions taking a mask of observed entries
(``structured_sparse_code``, ``structured_objective``, ``inpaint``) follow the same rule. The oracle: the result
with NaN or Inf at the missing entries is the result with 0 there, bit for bit (the value is never read); a
non-finite observed entry is refused naming its position.
"""

import numpy as np
import pytest

from neurosim.analysis.inpainting import inpaint
from neurosim.coding import structured_sparse_code
from neurosim.coding.structured import structured_objective
from neurosim.groups import GroupStructure


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((6, 9))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = rng.standard_normal((4, 9))
    M = rng.random((4, 9)) >= 0.3
    M[:, 0] = True
    return X, W, M


def _structured(X, W, M):
    return structured_sparse_code(X, W, GroupStructure.disjoint(6, 2), 0.1, observed=M)


def _objective(X, W, M):
    A = np.random.default_rng(1).standard_normal((4, 6))
    return structured_objective(X, W, A, None, 0.1, observed=M)


def _inpaint(X, W, M):
    # the image is X itself (4 x 9 pixels), patches of 2 x 2 coded against the first 4 columns of W as atoms
    D = np.ascontiguousarray(W[:, :4])
    return inpaint(X, M, lambda P, Mp: structured_sparse_code(P, D, None, 0.1, observed=Mp), D, size=2)


CASES = [_structured, _objective, _inpaint]


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("func", CASES, ids=lambda f: f.__name__.strip("_"))
def test_a_non_finite_missing_entry_is_never_read(func, value):
    X, W, M = _problem()
    zeros = np.where(M, X, 0.0)
    holes = np.where(M, X, value)
    np.testing.assert_array_equal(func(holes, W, M), func(zeros, W, M))


@pytest.mark.parametrize("value", [np.nan, np.inf])
@pytest.mark.parametrize("func", CASES, ids=lambda f: f.__name__.strip("_"))
def test_a_non_finite_observed_entry_is_refused_naming_its_position(func, value):
    X, W, M = _problem()
    X[2, 0] = value  # observed in every sample
    with pytest.raises(ValueError, match=r"must be finite at observed (coordinates|pixels); NaN/Inf at \[\[2, 0\]"):
        func(X, W, M)


def test_a_single_sample_names_the_coordinate():
    X, W, M = _problem()
    x = X[0].copy()
    x[0] = np.nan
    with pytest.raises(ValueError, match=r"NaN/Inf at \[0\]"):
        structured_sparse_code(x, W, None, 0.1, observed=M[0])
    x[0], x[~M[0]] = 1.0, np.nan
    np.testing.assert_array_equal(structured_sparse_code(x, W, None, 0.1, observed=M[0]),
                                  structured_sparse_code(np.where(M[0], x, 0.0), W, None, 0.1, observed=M[0]))
