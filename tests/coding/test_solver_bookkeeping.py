"""The solver kernels' bookkeeping: NaN guards fed a NaN, work sizes at their boundary, every iterate (issue 38).

Oracle tests check where a solver ends; a mutated guard, capacity check or convergence measure often still ends
there. Here, systematically for the kernels of Table 2, FISTA and feature-sign:

* every NaN guard is fed a NaN: a NaN observed entry of ``x`` (or of an atom) must end the sample after its first
  iteration, whatever ``tol`` (``tol = 0`` included, where nothing else would stop it), be reported by the
  return value and not counted as a cap hit;
* every work array at its documented size works and one element less is refused; feature-sign's factor reaches
  its full size (every atom active, from a cold and from a warm start) and gives scikit-learn's lasso;
* every iterate, not only the last: feature-sign's objective never increases from one iteration to the next
  (Lee et al. 2006, Lemmas 3.1-3.2 and footnote 3), on dictionaries where the null-space step of footnote 3
  runs (more atoms than features).
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from neurosim.groups import GroupStructure, as_groups
from neurosim.kernels.feature_sign import FS_CONVERGED, feature_sign_batch, feature_sign_codes
from neurosim.kernels.structured import PATH_AUTO, PATH_DIRECT, PATH_WOODBURY, structured_codes, workspace_sizes
from neurosim.kernels.structured_fista import fista_workspace_sizes, structured_fista


def _problem(k, m, n, seed):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((k, m))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    return W, rng.standard_normal((n, m))


def _table2(W, X, M, g, kappa, n_iter, tol, path=PATH_AUTO, sizes=None):
    ni, nw = workspace_sizes(W.shape[0], W.shape[1], g.n_groups, kappa, path) if sizes is None else sizes
    codes, info = np.zeros((X.shape[0], W.shape[0])), np.zeros(2, dtype=np.int64)
    ok = structured_codes(W, X, M, g.indptr, g.indices, g.weights, kappa, 1.0, 1e-8, n_iter, tol, False, codes, info,
                          np.zeros(ni, dtype=np.int64), np.zeros(nw), path)
    return codes, info, ok


def _fista(W, X, M, g, kappa, n_iter, tol, sizes=None):
    ni, nw = fista_workspace_sizes(*W.shape) if sizes is None else sizes
    codes, info = np.zeros((X.shape[0], W.shape[0])), np.zeros(2, dtype=np.int64)
    ok = structured_fista(W, X, M, g.indptr, g.indices, g.weights, g.prox_order(), kappa, n_iter, tol, False, codes,
                          info, np.zeros(ni, dtype=np.int64), np.zeros(nw))
    return codes, info, ok


# -- NaN guards --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["x", "atom"])
@pytest.mark.parametrize("tol", [0.0, 1e-8])
@pytest.mark.parametrize("solver", ["table2", "fista"])
def test_a_nan_ends_the_sample_after_its_first_iteration_and_is_reported(solver, tol, where):
    W, X = _problem(6, 8, 3, seed=1)
    M = np.ones_like(X)
    if where == "x":
        X[1, 3] = np.nan
    else:
        W[2, 3] = np.nan  # every sample observes it
    g = GroupStructure.disjoint(6, 2)
    run = _table2 if solver == "table2" else _fista
    codes, info, ok = run(W, X, M, g, 0.1, 50, tol)
    assert not ok  # the NaN code is reported
    nan_rows = [1] if where == "x" else [0, 1, 2]
    assert np.isnan(codes[nan_rows]).all()
    if where == "x":
        # the clean samples are untouched by the NaN one, and the NaN one adds no cap hit to theirs
        clean, info_clean, ok_clean = run(W, X[[0, 2]], M[[0, 2]], g, 0.1, 50, tol)
        assert ok_clean
        np.testing.assert_array_equal(codes[[0, 2]], clean)
        assert info.tolist() == info_clean.tolist()
    else:
        # every sample stopped at its first iteration: a NaN change is never "converged", and never a cap hit
        assert info.tolist() == [1, 0]


@pytest.mark.parametrize("solver", ["table2", "fista"])
def test_a_nan_sample_alone_uses_one_iteration_even_at_tol_zero(solver):
    """``tol = 0`` runs exactly ``n_iter`` iterations, except that a NaN change ends the sample at once."""
    W, X = _problem(5, 7, 1, seed=2)
    X[0, 0] = np.nan
    run = _table2 if solver == "table2" else _fista
    _, info, ok = run(W, X, np.ones_like(X), as_groups(None, 5), 0.1, 40, 0.0)
    assert not ok and info.tolist() == [1, 0]
    X[0, 0] = 0.5  # the same sample without its NaN runs all 40
    _, info, ok = run(W, X, np.ones_like(X), as_groups(None, 5), 0.1, 40, 0.0)
    assert ok and info.tolist() == [40, 0]


# -- work sizes at their boundary -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("k", "m"), [(5, 9), (9, 5)])
@pytest.mark.parametrize("kappa", [0.0, 0.2])
@pytest.mark.parametrize("path", [PATH_AUTO, PATH_DIRECT, PATH_WOODBURY])
def test_table2_work_arrays_at_their_documented_size_and_one_short(k, m, kappa, path):
    if path == PATH_WOODBURY and kappa == 0.0:
        pytest.skip("the Woodbury path needs kappa > 0 (documented)")
    W, X = _problem(k, m, 3, seed=3)
    M = (np.random.default_rng(4).random(X.shape) >= 0.3).astype(float)
    M[:, 0] = 1.0
    g = as_groups(None, k)
    ni, nw = workspace_sizes(k, m, g.n_groups, kappa, path)
    big = _table2(W, X, M, g, kappa, 30, 1e-10, path, sizes=(ni + 7, nw + 50))
    exact = _table2(W, X, M, g, kappa, 30, 1e-10, path, sizes=(ni, nw))
    assert exact[2]
    np.testing.assert_array_equal(exact[0], big[0])
    for short in ((ni - 1, nw), (ni, nw - 1)):
        with pytest.raises(ValueError, match="work arrays too small"):
            _table2(W, X, M, g, kappa, 30, 1e-10, path, sizes=short)


@pytest.mark.parametrize(("k", "m"), [(5, 9), (9, 5)])
def test_fista_work_arrays_at_their_documented_size_and_one_short(k, m):
    W, X = _problem(k, m, 3, seed=5)
    M = np.ones_like(X)
    M[1, 1:3] = 0.0
    g = as_groups(None, k)
    ni, nw = fista_workspace_sizes(k, m)
    big = _fista(W, X, M, g, 0.2, 500, 1e-10, sizes=(ni + 7, nw + 50))
    exact = _fista(W, X, M, g, 0.2, 500, 1e-10, sizes=(ni, nw))
    assert exact[2]
    np.testing.assert_array_equal(exact[0], big[0])
    for short in ((ni - 1, nw), (ni, nw - 1)):
        with pytest.raises(ValueError, match="work arrays too small"):
            _fista(W, X, M, g, 0.2, 500, 1e-10, sizes=short)


def _lasso(D, x, lam, positive=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Lasso(alpha=lam / D.shape[1], fit_intercept=False, tol=1e-14, max_iter=10**6,
                     positive=positive).fit(D.T, x).coef_


@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("nonneg", [False, True])
def test_feature_sign_fills_its_factor_with_every_atom_active(warm, nonneg):
    """n atoms, all active at the optimum: the active set reaches n, the factor's (n + 1)-row workspace its last
    used row; the codes are scikit-learn's lasso."""
    rng = np.random.default_rng(6)
    n, m = 7, 12
    D = rng.standard_normal((n, m))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((4, n)) @ D * 3.0 + 0.01 * rng.standard_normal((4, m))
    if nonneg:
        X = np.abs(rng.standard_normal((4, n))) @ D * 3.0
    lam = 1e-3
    G, C = D @ D.T, X @ D.T
    A = np.ones((4, n)) if warm else np.zeros((4, n))
    assert feature_sign_codes(G, C, lam, A, warm, nonneg, 1000, 1e-12) == 0
    for r in range(4):
        want = _lasso(D, X[r], lam, positive=nonneg)
        assert np.count_nonzero(want) == n  # the boundary case: every atom active
        np.testing.assert_allclose(A[r], want, rtol=1e-8, atol=1e-10)


# -- every iterate ---------------------------------------------------------------------------------------------------
def _objective(D, x, a, lam):
    r = x - a @ D
    return 0.5 * r @ r + lam * np.abs(a).sum()


@pytest.mark.parametrize("seed", range(6))
def test_feature_sign_never_increases_the_objective_from_one_iteration_to_the_next(seed):
    """Step 3 (a line search), Step 2 (an activation, which does not move the code) and footnote 3's null-space
    step (a move along which the smooth part is constant and the penalty falls) each keep or lower the objective.
    With more atoms than features an entering atom is often dependent on the active ones, so the null-space step
    runs. The kernel is cut after each number of iterations and the objective of every cut is compared."""
    rng = np.random.default_rng(seed)
    n, m = 9, 4
    D = rng.standard_normal((n, m))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    D[7] = (D[0] + D[1]) / np.linalg.norm(D[0] + D[1])  # exactly dependent atoms too
    X = rng.standard_normal((5, m))
    G, C = D @ D.T, X @ D.T
    lam = 0.05
    status = np.zeros(5, dtype=np.int64)
    prev = np.array([_objective(D, x, np.zeros(n), lam) for x in X])
    done = np.zeros(5, dtype=bool)
    for it in range(1, 200):
        A = np.zeros((5, n))
        feature_sign_batch(G, C, np.full(5, lam), A, False, False, it, 1e-12, status)
        f = np.array([_objective(D, X[r], A[r], lam) for r in range(5)])
        assert np.all(f <= prev * (1 + 1e-12) + 1e-15), (it, f - prev)
        prev = f
        done |= status == FS_CONVERGED
        if done.all():
            break
    assert done.all()
    for r in range(5):  # and the end is the lasso's optimum value
        assert prev[r] <= _objective(D, X[r], _lasso(D, X[r], lam), lam) * (1 + 1e-9)
