"""The basis learners' documented contracts, on problems small enough to solve by hand.

Written for mutants of ``coding/basis.py`` and ``kernels/basis.py`` that the
optimum-only checks of ``test_basis.py`` cannot see (docs/testing.md, seed-2
run): a one-sample problem, the no-atom-used return, the Lagrange dual's
stopping rule and warnings, its fallback step, the projected-gradient update
and the count the ball projection returns.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg

import neurosim.coding.basis as basis
from neurosim.coding.basis import lagrange_dual_bases, projected_gradient_bases
from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.kernels.basis import project_rows_to_ball


def _problem(seed, n_samples=40, n_atoms=5, n_features=8):
    rng = np.random.default_rng(seed)
    A = rng.laplace(size=(n_samples, n_atoms)) * (rng.random((n_samples, n_atoms)) < 0.6)
    X = A @ rng.standard_normal((n_atoms, n_features)) + 0.1 * rng.standard_normal((n_samples, n_features))
    return X, A


def _projected_dual_gradient(X, A, dual, c):
    """max_i |lambda_i - max(0, lambda_i - g_i)| with g_i = c - ||d_i||^2, d = (G + Lambda)^{-1} C (Eq. 9, 11)."""
    D = np.linalg.solve(A.T @ A + np.diag(dual), A.T @ X)
    g = c - np.sum(D * D, axis=1)
    return float(np.max(np.abs(dual - np.maximum(dual - g, 0.0))))


def test_one_sample_is_a_valid_problem_with_a_hand_solution():
    # min ||x - 2 d||^2 s.t. ||d||^2 <= 1 with x = (3, 4): the unconstrained d = x / 2 has norm 2.5,
    # so d = x / ||x|| = (0.6, 0.8); stationarity 2 (2 d - x) 2 + 2 lam d = 0 gives d = 2 x / (4 + lam),
    # ||d|| = 10 / (4 + lam) = 1, lam = 6
    X, A = np.array([[3.0, 4.0]]), np.array([[2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        D, dual = lagrange_dual_bases(X, A, 1.0)
    np.testing.assert_allclose(D, [[0.6, 0.8]], rtol=1e-10)
    np.testing.assert_allclose(dual, [6.0], rtol=1e-8)
    # projected gradient with its default step 1 / (2 lambda_max(G)) = 1/8 lands on x / 2, then the ball
    with pytest.warns(NonConvergenceWarning, match="max_iter=1"):  # one step, on purpose
        D_pg = projected_gradient_bases(X, A, 1.0, D_init=np.array([[0.0, -1.0]]), max_iter=1)
    np.testing.assert_allclose(D_pg, [[0.6, 0.8]], rtol=1e-12)


def test_no_atom_used_returns_the_iteration_count_when_asked():
    X = np.array([[3.0, 4.0], [1.0, 0.0]])
    A = np.zeros((2, 2))
    D_init = np.array([[3.0, 4.0], [0.0, 0.5]])
    out = lagrange_dual_bases(X, A, 1.0, D_init=D_init, return_n_iter=True)
    assert len(out) == 3
    D, dual, n_iter = out
    assert n_iter == 0
    np.testing.assert_array_equal(dual, 0.0)
    # unused atoms keep D_init, projected onto the ball
    np.testing.assert_allclose(D, [[0.6, 0.8], [0.0, 0.5]], rtol=1e-15)
    assert len(lagrange_dual_bases(X, A, 1.0)) == 2


@pytest.mark.parametrize("seed,c", [(0, 1.0), (2, 0.25), (5, 4.0)])
def test_lagrange_dual_stops_on_its_documented_rule_without_warning(seed, c):
    # On these problems the projected-gradient rule ends the iteration (pg 1e-9 and below, recomputed
    # independently; the factor 2 is room for the recomputation's rounding only). Not on every problem:
    # the second rule, the Newton decrement at 16 eps |h|, can stop a well-conditioned problem at pg ~1e-6
    # (seed 1, c = 4: decrement 5.9e-12 against 6.1e-12), which docs/testing.md reports.
    X, A = _problem(seed)
    tol = 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        D, dual, n_iter = lagrange_dual_bases(X, A, c, tol=tol, return_n_iter=True)
    assert _projected_dual_gradient(X, A, dual, c) <= 2 * tol * c
    assert 1 <= n_iter <= 30


@pytest.mark.parametrize("seed,pg_bound", [(5, 1e-9), (1, 1e-5)])
def test_lagrange_dual_with_tol_zero_stops_at_the_rounding_floor_without_warning(seed, pg_bound):
    # tol = 0 cannot be met by a projected gradient in floating point; the documented second stop
    # (Newton decrement at the rounding level of the dual value) ends the iteration instead, converged.
    # c = 4 leaves a constraint inactive (dual 0, outward gradient) beside active ones
    # (seed 1 is the problem the decrement stop leaves at pg ~1e-6, hence its loose bound; without that
    # stop the iteration runs on to a step the line search rejects, and warns)
    X, A = _problem(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        D, dual, n_iter = lagrange_dual_bases(X, A, 4.0, tol=0.0, return_n_iter=True, max_iter=200)
    assert (dual == 0.0).any() and (dual > 0.0).any()
    assert n_iter < 50
    assert _projected_dual_gradient(X, A, dual, 4.0) <= pg_bound


def test_lagrange_dual_warns_when_no_step_decreases_the_dual(monkeypatch):
    # a line search that finds no decrease must end the iteration unconverged, with the warning
    X, A = _problem(0)
    real = basis._dual_terms
    start = {}

    def worse_everywhere_but_the_start(G, C, c, lam, want_hessian=True):
        h, g, H, D = real(G, C, c, lam, want_hessian)
        if not start:
            start["lam"] = lam.copy()
        elif not np.array_equal(lam, start["lam"]):
            h = h + 1.0 + abs(h)
        return h, g, H, D

    monkeypatch.setattr(basis, "_dual_terms", worse_everywhere_but_the_start)
    with pytest.warns(NonConvergenceWarning, match="stopped after 1 Newton steps"):
        lagrange_dual_bases(X, A, 1.0, dual_init=np.zeros(A.shape[1]), return_n_iter=True)


class _LinalgWithoutSolve:
    """scipy.linalg whose ``solve`` reports a singular matrix, as for a numerically singular Hessian."""

    def __getattr__(self, name):
        return getattr(scipy.linalg, name)

    @staticmethod
    def solve(*args, **kwargs):
        raise scipy.linalg.LinAlgError("singular")


def test_lagrange_dual_fallback_step_descends(monkeypatch):
    # Orthogonal code columns make G and the dual Hessian 2 (D D^T) o (G + Lambda)^{-1} diagonal, so the
    # fallback (the gradient scaled by the Hessian's diagonal) is the Newton step itself: started away
    # from the optimum it must reach the same bases as the Newton solve, without warning.
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.standard_normal((30, 4)))
    A = Q * np.array([3.0, 1.0, 0.5, 2.0])
    X = A @ rng.standard_normal((4, 6))
    D_ref, dual_ref = lagrange_dual_bases(X, A, 1.0, dual_init=np.zeros(4), tol=1e-10)
    monkeypatch.setattr(basis, "linalg", _LinalgWithoutSolve())
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        D, dual, n_iter = lagrange_dual_bases(X, A, 1.0, dual_init=np.zeros(4), tol=1e-10, return_n_iter=True)
    assert n_iter >= 1
    np.testing.assert_allclose(dual, dual_ref, rtol=1e-7)
    np.testing.assert_allclose(D, D_ref, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("lr", [0.05, None])
def test_projected_gradient_step_is_the_documented_update(lr):
    # D <- P_c(D - lr * 2 (G D - C)), one step, against NumPy; lr=None means 1 / (2 lambda_max(G))
    X, A = _problem(4, n_samples=12, n_atoms=3, n_features=4)
    D0 = np.random.default_rng(9).standard_normal((3, 4)) * 0.3
    G, C = A.T @ A, A.T @ X
    step = 1.0 / (2.0 * np.linalg.eigvalsh(G)[-1]) if lr is None else lr
    D1 = D0 - step * 2.0 * (G @ D0 - C)
    norms = np.sqrt(np.sum(D1 * D1, axis=1, keepdims=True))
    D1 = np.where(norms > 2.0, D1 * (2.0 / norms), D1)
    with pytest.warns(NonConvergenceWarning, match="max_iter=1"):  # one step, on purpose
        got = projected_gradient_bases(X, A, 4.0, D_init=D0, lr=lr, max_iter=1)
    np.testing.assert_allclose(got, D1, rtol=1e-10, atol=1e-12)


def test_ball_projection_counts_only_rows_outside_the_ball():
    # a row exactly on the sphere (squared norm == c, exact in binary) is in the ball: not rescaled
    D = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.5], [0.0, -1.0]])
    before = D.copy()
    assert project_rows_to_ball(D, 1.0) == 1
    np.testing.assert_array_equal(D[[0, 2, 3]], before[[0, 2, 3]])
    np.testing.assert_allclose(D[1], [0.6, 0.8], rtol=1e-15)


@pytest.mark.parametrize("seed", [0, 5])
def test_lagrange_dual_converges_when_rounding_noise_hides_small_decreases(seed, monkeypatch):
    # The second acceptance rule: once the Newton decrement is below sqrt(eps) |h|, a step whose decrease
    # the rounding of h hides is accepted when it reduces the projected gradient. Emulated by an h that
    # drifts up by delta = 1e-9 |h| per evaluation (every decrease below delta is invisible to Armijo);
    # c = 8 leaves constraints inactive, whose projected gradient is 0 although their gradient is not.
    X, A = _problem(seed)
    real = basis._dual_terms
    calls = [0]

    def drifting(G, C, c, lam, want_hessian=True):
        h, g, H, D = real(G, C, c, lam, want_hessian)
        calls[0] += 1
        return h + 1e-9 * abs(h) * calls[0], g, H, D

    D_ref, dual_ref = lagrange_dual_bases(X, A, 8.0, tol=1e-10)
    assert (dual_ref == 0.0).any() and (dual_ref > 0.0).any()
    monkeypatch.setattr(basis, "_dual_terms", drifting)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        D, dual = lagrange_dual_bases(X, A, 8.0, tol=1e-10)
    assert _projected_dual_gradient(X, A, dual, 8.0) <= 1e-6
    np.testing.assert_allclose(D, D_ref, rtol=1e-6, atol=1e-9)


def test_the_dual_objective_alone_solves_against_c_and_forms_no_inverse(monkeypatch):
    """A cost promise of ``lagrange_dual_objective``: Eq. 8 needs ``(G + Lambda)^{-1} C``, one Cholesky solve,
    not the inverse (LAPACK ``potri``) and the Hessian of Eq. 10 that Newton's steps need."""
    rng = np.random.default_rng(11)
    X, A = rng.standard_normal((30, 7)), rng.standard_normal((30, 4))
    dual, c = rng.uniform(0.1, 2.0, 4), 1.5

    def no_inverse(*args, **kwargs):
        raise AssertionError("lagrange_dual_objective formed (G + Lambda)^-1")

    monkeypatch.setattr(scipy.linalg.lapack, "dpotri", no_inverse)
    value = basis.lagrange_dual_objective(X, A, dual, c)
    G, C = A.T @ A, A.T @ X
    expected = np.sum(X * X) - np.trace(C.T @ np.linalg.solve(G + np.diag(dual), C)) - c * dual.sum()
    assert value == pytest.approx(expected, rel=1e-12)
