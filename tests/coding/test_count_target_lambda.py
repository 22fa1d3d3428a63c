"""The count-target encoder (paper 000, Alg. 2) inside a network uses lambda_for_count's documented search.

``SparseCode("feature_sign", n_nonzero=k)`` bisects lambda in ``[0, max|D x|]``
exactly as :func:`neurosim.coding.lambda_for_count` with its defaults
(``rtol_lambda=1e-10``, ``max_bisect=100``). Oracles: the public encoder (the
same kernel, so the same bits) and, for a count that no lambda gives, the
hand value of the bisection.
"""

import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.coding import NonConvergenceWarning, lambda_for_count

#: slow tier: the count-target circuit compiled on each path (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

D = np.eye(3)  # orthonormal atoms: the lasso code is soft thresholding of D x, by hand
X = np.array([
    [2.0, 0.0, 0.0],  # one atom correlates: 2 nonzeros never happen, lambda is halved max_bisect times
    [3.0, 1.0, 0.5],  # 2 nonzeros for lambda in [0.5, 1)
    [2.0, 1.0, 1.0],  # atoms 1 and 2 enter together at lambda = 1: 1 -> 3 nonzeros, the bracket closes on 1
])


def _network():
    net = ns.Network(seed=0, batch=len(X))
    x = ns.Population("x", 3)
    a = ns.Population("a", 3, dynamics=ns.SparseCode("feature_sign", n_nonzero=2))
    net.add(x, a)
    net.connect(ns.ArrayStream(X[None]), x)
    net.add(ns.Projection("D", x, a, init=D))
    return net, a


def test_count_search_by_hand():
    """lambda_for_count: 2^-99 after 100 halvings of [0, 2], a lambda in [0.5, 1), and lambda -> 1 on the tie."""
    with pytest.warns(NonConvergenceWarning):
        lam, A = lambda_for_count(X, D, 2, return_codes=True)
    assert lam[0] == 2.0 * 0.5**100
    assert 0.5 <= lam[1] < 1.0
    np.testing.assert_allclose(A[1], [3.0 - lam[1], 1.0 - lam[1], 0.0], rtol=1e-12)
    assert abs(lam[2] - 1.0) <= 2e-10
    np.testing.assert_allclose(A[0], [2.0, 0.0, 0.0], rtol=1e-9)  # feature-sign stops within its tol


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_network_count_coder_gives_the_public_encoders_codes(backend):
    """The network's codes equal lambda_for_count's with its default rtol_lambda and max_bisect."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvergenceWarning)
        lam_ref, A_ref = lambda_for_count(X, D, 2, return_codes=True)
        net, a = _network()
        net.run(1, backend=backend)
    np.testing.assert_array_equal(a.activity, A_ref)
    if backend == "compiled":
        # the lambda of each returned code, kept in the coder's workspace
        np.testing.assert_array_equal(a.dynamics.buffer("lams", (len(X),)), lam_ref)
