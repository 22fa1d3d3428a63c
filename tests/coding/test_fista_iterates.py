"""FISTA's iterates, not only its fixed point, against a NumPy transcription of its docstring.

The other FISTA tests check where the iteration ends (the objective of Table 2, KKT, SPAMS). A change to
the momentum, the restart rule, the step or the stopping rule still ends there, by other iterates.
Here ``structured_sparse_code(..., solver="fista", fista_iter=n, tol=0)`` must give, for each ``n``,
the ``n``-th iterate of Beck & Teboulle's FISTA as the module docstring states it:

* step ``1 / L`` with ``L = lambda_max(D_O^T D_O) (1 + 1e-9)``;
* ``x_{k+1} = prox_{kappa / L}(y_k - D_O^T (D_O y_k - x_O) / L)`` (block soft-thresholding here,
  disjoint groups with one weight each);
* momentum restarted (``t = 1``, ``y = x_{k+1}``) when ``(y_k - x_{k+1}) . (x_{k+1} - x_k) > 0``
  (O'Donoghue & Candès 2015, gradient scheme), otherwise ``t' = (1 + sqrt(1 + 4 t^2)) / 2``,
  ``y = x_{k+1} + (t - 1) / t' (x_{k+1} - x_k)``;
* the run stops after the first iteration with ``max |x_{k+1} - x_k| <= tol max(s, max |x_k|)``,
  ``s = ||x_O|| / max_j ||d_j,O||`` the sample's code scale (issue 38).

The transcription sums in another order than the kernel, so the iterates agree to a bound well above
rounding (1e-9 relative over at most 40 iterations of a contraction), not bit for bit.
"""

import numpy as np
import pytest

from neurosim.coding import structured_sparse_code
from neurosim.groups import GroupStructure


def _block_soft(a, groups, weights, thresh):
    out = a.copy()
    for G, w in zip(groups, weights):
        n = np.linalg.norm(a[G])
        out[G] = 0.0 if n <= thresh * w else a[G] * (1.0 - thresh * w / n)
    return out


def fista_reference(x, W, obs, groups, weights, kappa, n_iter, tol, init=None):
    """The iterates of the docstring's FISTA for one sample; returns (code, iterations used, restarts)."""
    D = W[:, obs].T  # D_O, shape (|O|, k)
    xo = x[obs]
    L = np.linalg.eigvalsh(D.T @ D)[-1] * (1.0 + 1e-9)
    step = 1.0 / L
    a = np.zeros(W.shape[0]) if init is None else init.copy()
    y, t, restarts = a.copy(), 1.0, 0
    s = np.linalg.norm(xo) / np.linalg.norm(D, axis=0).max()
    for it in range(n_iter):
        new = _block_soft(y - step * (D.T @ (D @ y - xo)), groups, weights, kappa * step)
        change = np.max(np.abs(new - a))
        scale = max(s, np.max(np.abs(a)))
        uphill = (y - new) @ (new - a)
        old, a = a, new
        if tol > 0 and change <= tol * scale:
            return a, it + 1, restarts
        if uphill > 0:
            t, y = 1.0, a.copy()
            restarts += 1
        else:
            tn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            y = a + (t - 1.0) / tn * (a - old)
            t = tn
    return a, n_iter, restarts


def _problem(seed, scale, k=12, m=9, n=3, missing=0.0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((k, m))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = scale * rng.standard_normal((n, m))
    M = rng.random((n, m)) >= missing
    M[:, 0] = True
    return X, W, M


def _members_and_weights(g):
    """Each group's members and its one weight (``GroupStructure`` stores a weight per member)."""
    return ([g.indices[g.indptr[i]:g.indptr[i + 1]] for i in range(g.n_groups)],
            [g.weights[g.indptr[i]] for i in range(g.n_groups)])


SIZES = [3, 4]  # disjoint groups of 3 (one weight each: their sizes' square roots) and of 4


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("seed", "scale", "missing"), [(0, 1.0, 0.0), (1, 30.0, 0.3), (2, 0.02, 0.0)])
def test_each_fista_iterate_is_the_documented_one(seed, scale, missing, size):
    X, W, M = _problem(seed, scale, missing=missing)
    g = GroupStructure.disjoint(W.shape[0], size)
    groups, weights = _members_and_weights(g)
    kappa = 0.15 * scale
    for n_iter in range(1, 41):
        got = structured_sparse_code(X, W, g, kappa, observed=M, solver="fista", fista_iter=n_iter, tol=0.0)
        restarts = 0
        for r in range(X.shape[0]):
            want, used, restarts_r = fista_reference(X[r], W, np.flatnonzero(M[r]), groups, weights, kappa, n_iter,
                                                     0.0)
            assert used == n_iter
            np.testing.assert_allclose(got[r], want, rtol=1e-9, atol=1e-12 * scale, err_msg=f"row {r} n_iter {n_iter}")
            restarts += restarts_r
    # the cases exercise both momentum branches: in the 40 iterations of the rows some restart, most do not
    assert 0 < restarts < 40 * X.shape[0] // 2


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])  # the rule is relative at every scale (issue 38)
@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_fista_stops_after_the_first_iteration_meeting_the_documented_rule(scale, tol):
    X, W, M = _problem(5, scale, n=4, missing=0.2)
    g = GroupStructure.disjoint(W.shape[0], 3)
    groups, weights = _members_and_weights(g)
    kappa = 0.1 * scale
    got = structured_sparse_code(X, W, g, kappa, observed=M, solver="fista", fista_iter=5000, tol=tol)
    for r in range(X.shape[0]):
        want, used, _ = fista_reference(X[r], W, np.flatnonzero(M[r]), groups, weights, kappa, 5000, tol)
        assert 2 <= used < 5000
        # the stop is the rule's and not an iteration earlier or later: with tol = 0 and the same count
        # the kernel gives the same code, and one iteration fewer or more gives another
        same = structured_sparse_code(X[r:r + 1], W, g, kappa, observed=M[r:r + 1], solver="fista",
                                      fista_iter=used, tol=0.0)[0]
        np.testing.assert_array_equal(got[r], same)
        np.testing.assert_allclose(got[r], want, rtol=1e-9, atol=1e-12 * scale)
        for other in (used - 1, used + 1):
            code = structured_sparse_code(X[r:r + 1], W, g, kappa, observed=M[r:r + 1], solver="fista",
                                          fista_iter=other, tol=0.0)[0]
            assert not np.array_equal(code, got[r]), other


def test_a_warm_start_continues_from_the_given_code():
    X, W, M = _problem(7, 1.0)
    g = GroupStructure.disjoint(W.shape[0], 3)
    groups, weights = _members_and_weights(g)
    init = np.random.default_rng(8).standard_normal((X.shape[0], W.shape[0]))
    got = structured_sparse_code(X, W, g, 0.2, observed=M, solver="fista", fista_iter=5, tol=0.0, init=init)
    for r in range(X.shape[0]):
        want, _, _ = fista_reference(X[r], W, np.flatnonzero(M[r]), groups, weights, 0.2, 5, 0.0, init=init[r])
        np.testing.assert_allclose(got[r], want, rtol=1e-9, atol=1e-12)


def test_tol_zero_runs_exactly_the_iteration_cap_even_once_the_code_stops_changing():
    """Module docstring: ``tol = 0`` runs exactly ``n_iter`` iterations (no stopping rule at all).

    A penalty above ``max |D_O^T x_O| / w_G`` makes the code 0 from the first iteration on, so every change
    is exactly 0; a rule ``change <= tol * scale`` left in force at ``tol = 0`` would stop after one.
    """
    from neurosim.kernels.structured import PATH_AUTO
    from neurosim.kernels.structured_fista import SOLVER_FISTA, encode_workspace_sizes, structured_encode
    X, W, M = _problem(9, 1.0)
    g = GroupStructure.disjoint(W.shape[0], 3)
    kappa = 10.0 * np.abs(X @ W.T).max()
    ni, nw = encode_workspace_sizes(W.shape[0], W.shape[1], g.n_groups, kappa, PATH_AUTO)
    for n_iter in (1, 5, 17):
        codes, info = np.ones((X.shape[0], W.shape[0])), np.zeros(2, dtype=np.int64)
        assert structured_encode(W, X, M.astype(float), g.indptr, g.indices, g.weights, g.prox_order(), kappa, 1.0,
                                 1e-8, n_iter, n_iter, 0.0, False, codes, info, np.zeros(ni, dtype=np.int64),
                                 np.zeros(nw), PATH_AUTO, SOLVER_FISTA)
        np.testing.assert_array_equal(codes, 0.0)
        assert info.tolist() == [n_iter, 0]


def test_a_nan_ends_the_samples_iterations_at_once_and_is_reported():
    """Module docstring: a NaN change (an overflowed code) ends that sample's iterations; the kernel
    returns False. The kernel is called directly with a NaN input (the public function refuses one)."""
    from neurosim.kernels.structured import PATH_AUTO
    from neurosim.kernels.structured_fista import SOLVER_FISTA, encode_workspace_sizes, structured_encode
    X, W, M = _problem(10, 1.0, n=1)
    X[0, 2] = np.nan
    g = GroupStructure.disjoint(W.shape[0], 3)
    ni, nw = encode_workspace_sizes(W.shape[0], W.shape[1], g.n_groups, 0.1, PATH_AUTO)
    codes, info = np.zeros((1, W.shape[0])), np.zeros(2, dtype=np.int64)
    ok = structured_encode(W, X, M.astype(float), g.indptr, g.indices, g.weights, g.prox_order(), 0.1, 1.0, 1e-8,
                           50, 50, 1e-8, False, codes, info, np.zeros(ni, dtype=np.int64), np.zeros(nw), PATH_AUTO,
                           SOLVER_FISTA)
    assert not ok
    assert np.isnan(codes).any()
    assert info[0] == 1  # the first iteration's change is NaN: no second one
