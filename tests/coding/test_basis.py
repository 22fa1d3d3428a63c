"""Tests of basis learning (Lee, Battle, Raina & Ng 2006), against independent oracles.

Oracles: scipy's SLSQP on the primal constrained least squares (Eq. 6),
finite differences of the dual value (Eq. 8) for the gradient / Hessian
(Eq. 9-10), the KKT conditions, scipy's L-BFGS on the smooth epsilon-L1
objective and scikit-learn's coordinate-descent lasso for the eps -> 0 limit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from neurosim.coding.basis import (
    _dual_terms,
    epsilon_l1_codes,
    lagrange_dual_bases,
    lagrange_dual_objective,
    learn_bases,
    projected_gradient_bases,
    sparse_coding_objective,
)
from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.kernels.basis import project_rows_to_ball


def _problem(seed, n_samples=30, n_atoms=6, n_features=4, density=0.5, scale=3.0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_samples, n_atoms)) * (rng.random((n_samples, n_atoms)) < density)
    X = scale * rng.standard_normal((n_samples, n_features))
    return X, A


def _primal(X, A, D):
    R = X - A @ D
    return float(np.sum(R * R))


def _slsqp_bases(X, A, c):
    """Direct solution of Eq. 6 by SLSQP with analytic gradients."""
    n_atoms, n_features = A.shape[1], X.shape[1]
    G, C = A.T @ A, A.T @ X
    xx = float(np.sum(X * X))

    def f(d):
        D = d.reshape(n_atoms, n_features)
        return xx - 2 * np.sum(D * C) + np.sum(D * (G @ D))

    def grad(d):
        D = d.reshape(n_atoms, n_features)
        return (2 * (G @ D - C)).ravel()

    cons = []
    for j in range(n_atoms):
        def fun(d, j=j):
            return c - np.sum(d.reshape(n_atoms, n_features)[j] ** 2)

        def jac(d, j=j):
            g = np.zeros((n_atoms, n_features))
            g[j] = -2 * d.reshape(n_atoms, n_features)[j]
            return g.ravel()

        cons.append({"type": "ineq", "fun": fun, "jac": jac})
    res = minimize(f, np.zeros(n_atoms * n_features), jac=grad, constraints=cons, method="SLSQP",
                   options={"ftol": 1e-16, "maxiter": 2000})
    return res.x.reshape(n_atoms, n_features), res.fun


@pytest.mark.parametrize("seed,c", [(0, 1.0), (1, 4.0), (2, 0.25), (3, 1e3)])
def test_dual_bases_equal_direct_constrained_least_squares(seed, c):
    X, A = _problem(seed)
    D, dual = lagrange_dual_bases(X, A, c)
    D_ref, f_ref = _slsqp_bases(X, A, c)
    np.testing.assert_allclose(D, D_ref, atol=1e-6)
    # SLSQP may violate the constraints by ~1e-12, so compare values, not order
    assert _primal(X, A, D) == pytest.approx(f_ref, rel=1e-10)


@pytest.mark.parametrize("seed,c", [(0, 1.0), (1, 4.0), (4, 2.0), (5, 1e3)])
def test_dual_solution_satisfies_kkt_and_strong_duality(seed, c):
    X, A = _problem(seed, n_samples=50, n_atoms=10, n_features=5)
    D, dual = lagrange_dual_bases(X, A, c)
    G, C = A.T @ A, A.T @ X
    norms = np.sum(D * D, axis=1)
    # primal feasibility, dual feasibility
    assert np.all(norms <= c + 1e-9)
    assert np.all(dual >= 0)
    # stationarity of the Lagrangian (Eq. 7): (G + Lambda) D = C
    np.testing.assert_allclose((G + np.diag(dual)) @ D, C, atol=1e-8 * max(1.0, np.abs(C).max()))
    # complementary slackness: active constraints hold with equality
    active = dual > 1e-8
    np.testing.assert_allclose(norms[active], c, rtol=1e-9)
    np.testing.assert_allclose(dual * (norms - c), 0.0, atol=1e-8 * max(1.0, dual.max()))
    # zero duality gap (Eq. 8 at the optimum equals the primal value)
    f_primal = _primal(X, A, D)
    assert lagrange_dual_objective(X, A, dual, c) == pytest.approx(f_primal, rel=1e-10)
    if c < 100:
        assert active.any()  # the test exercises active constraints
    else:
        assert not active.any()  # ... and the unconstrained least-squares case


def test_dual_gradient_and_hessian_match_finite_differences():
    """Eq. 9 and Eq. 10 (derived in _dual_terms) against central differences of Eq. 8."""
    X, A = _problem(7, n_samples=40, n_atoms=5, n_features=3)
    G, C = A.T @ A, A.T @ X
    c = 1.5
    lam = np.array([0.3, 2.0, 0.0, 5.0, 1.0])
    h, grad, hess, _ = _dual_terms(G, C, c, lam)
    # _dual_terms returns h = -D(lam) - tr(X^T X); D(lam) itself is the oracle
    def dual_value(v):
        return lagrange_dual_objective(X, A, v, c)

    # two formulas for D(lam) differing by cancellations of terms of size tr(X^T X)
    trace = float(np.sum(X * X))
    assert -h + trace == pytest.approx(dual_value(lam), rel=1e-12, abs=1e-12 * trace)
    step = 1e-5
    lam_c = lam + 0.1  # keep every lam +/- step >= 0
    h, grad, hess, _ = _dual_terms(G, C, c, lam_c)
    fd_grad = np.empty(5)
    fd_hess = np.empty((5, 5))
    for i in range(5):
        e = np.zeros(5)
        e[i] = step
        fd_grad[i] = (dual_value(lam_c + e) - dual_value(lam_c - e)) / (2 * step)
        _, g_plus, _, _ = _dual_terms(G, C, c, lam_c + e)
        _, g_minus, _, _ = _dual_terms(G, C, c, lam_c - e)
        fd_hess[:, i] = -(g_plus - g_minus) / (2 * step)
    # grad/hess are of -D: Eq. 9 and Eq. 10 are the negatives.
    np.testing.assert_allclose(-grad, fd_grad, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(-hess, fd_hess, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hess, hess.T, rtol=0, atol=1e-13 * np.abs(hess).max())
    assert np.linalg.eigvalsh(hess).min() > 0  # -D strictly convex


def test_dual_warm_start_and_unused_atoms():
    X, A = _problem(8, n_samples=60, n_atoms=8, n_features=5)
    A[:, 3] = 0.0  # atom 3 unused: Eq. 6 does not determine it
    D0 = np.random.default_rng(0).standard_normal((8, 5)) * 5
    D, dual, it = lagrange_dual_bases(X, A, 1.0, D_init=D0, return_n_iter=True)
    assert it > 0
    assert dual[3] == 0.0
    np.testing.assert_allclose(D[3], D0[3] / np.linalg.norm(D0[3]))  # kept, projected onto the ball
    D2, dual2, it2 = lagrange_dual_bases(X, A, 1.0, dual_init=dual, D_init=D0, return_n_iter=True)
    assert it2 == 0
    np.testing.assert_array_equal(D2, D)
    # a perturbed warm start converges to the same optimum in fewer steps
    D3, dual3, it3 = lagrange_dual_bases(X, A, 1.0, dual_init=dual * 1.3 + 0.01, return_n_iter=True)
    np.testing.assert_allclose(D3[np.arange(8) != 3], D[np.arange(8) != 3], atol=1e-9)
    np.testing.assert_allclose(dual3, dual, rtol=1e-6, atol=1e-9)


def test_dual_rank_deficient_codes_reach_optimal_value():
    # fewer samples than atoms: G = A^T A is singular, the minimiser is not
    # unique, but the optimal value is.
    X, A = _problem(9, n_samples=4, n_atoms=6, n_features=3, density=0.8)
    c = 0.5
    D, dual = lagrange_dual_bases(X, A, c)
    _, f_ref = _slsqp_bases(X, A, c)
    assert np.all(np.sum(D * D, axis=1) <= c + 1e-9)
    assert _primal(X, A, D) == pytest.approx(f_ref, rel=1e-6, abs=1e-9)


def test_projected_gradient_reaches_dual_objective():
    X, A = _problem(10, n_samples=80, n_atoms=8, n_features=5)
    c = 1.0
    D_dual, _ = lagrange_dual_bases(X, A, c)
    f_star = _primal(X, A, D_dual)
    D_pg = projected_gradient_bases(X, A, c, max_iter=20000, tol=0.0, seed=0)
    assert np.all(np.sum(D_pg**2, axis=1) <= c + 1e-9)
    # stated tolerance: relative objective gap 1e-8 (bases within 1e-4)
    assert _primal(X, A, D_pg) == pytest.approx(f_star, rel=1e-8)
    np.testing.assert_allclose(D_pg, D_dual, atol=1e-4)
    # with few steps it is feasible but measurably worse: the baseline is slow
    with pytest.warns(NonConvergenceWarning, match="max_iter=3"):
        D_few = projected_gradient_bases(X, A, c, max_iter=3, seed=0)
    assert _primal(X, A, D_few) > f_star * (1 + 1e-6)


def _eps_objective(X, D, lam, eps):
    G, B = D @ D.T, X @ D.T

    def f(a_flat, i):
        a = a_flat
        return 0.5 * a @ G @ a - B[i] @ a + lam * np.sum(np.sqrt(a * a + eps))

    def g(a_flat, i):
        a = a_flat
        return G @ a - B[i] + lam * a / np.sqrt(a * a + eps)

    return f, g


@pytest.mark.parametrize("eps", [1e-1, 1e-3, 1e-5])
def test_epsilon_l1_codes_are_stationary_and_match_lbfgs(eps):
    rng = np.random.default_rng(11)
    D = rng.standard_normal((12, 8))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((15, 8))
    lam = 0.4
    A, n_iter = epsilon_l1_codes(X, D, lam, eps, tol=1e-10, return_n_iter=True)
    grad = A @ D @ D.T - X @ D.T + lam * A / np.sqrt(A * A + eps)
    assert np.abs(grad).max() <= 1e-9 * max(1.0, np.abs(X @ D.T).max())
    f, g = _eps_objective(X, D, lam, eps)
    for i in range(X.shape[0]):
        ref = minimize(f, np.zeros(12), args=(i,), jac=g, method="L-BFGS-B",
                       options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
        assert f(A[i], i) <= ref.fun + 1e-10
    # warm start from the solution: nothing left to do
    A2, it2 = epsilon_l1_codes(X, D, lam, eps, init=A, tol=1e-10, return_n_iter=True)
    assert it2 == 0
    np.testing.assert_array_equal(A2, A)


def test_epsilon_l1_approaches_lasso_as_eps_vanishes():
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(12)
    D = rng.standard_normal((10, 20))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((6, 20))
    lam = 0.5
    n_features = X.shape[1]
    # sklearn's Lasso: (1/(2 n)) ||y - W a||^2 + alpha ||a||_1, alpha = lam / n
    lasso = sklearn.Lasso(alpha=lam / n_features, fit_intercept=False, tol=1e-14, max_iter=200000)
    A_l1 = np.array([lasso.fit(D.T, x).coef_ for x in X])
    errors = []
    for eps in [1e-2, 1e-4, 1e-6, 1e-8]:
        A = epsilon_l1_codes(X, D, lam, eps, tol=1e-12, max_iter=20000)
        errors.append(np.abs(A - A_l1).max())
        # the epsilon-L1 solution is also near-optimal for the L1 objective
        f_eps = sparse_coding_objective(X, D, A, lam, "l1")
        f_l1 = sparse_coding_objective(X, D, A_l1, lam, "l1")
        assert f_l1 <= f_eps + 1e-9
        assert f_eps - f_l1 <= 10 * lam * np.sqrt(eps) * A.size
    assert all(e1 < e0 for e0, e1 in zip(errors, errors[1:]))
    assert errors[-1] < 1e-3


def _planted(seed, n_samples=120, n_atoms=8, n_features=6):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    A = rng.laplace(size=(n_samples, n_atoms)) * (rng.random((n_samples, n_atoms)) < 0.25)
    return A @ D + 0.05 * rng.standard_normal((n_samples, n_features))


@pytest.mark.parametrize(
    "coder,basis",
    [("feature_sign", "dual"), ("feature_sign", "gradient"), ("lars", "dual"), ("epsilon_l1", "dual")],
)
def test_learner_monotone_and_stops_by_footnote_12(coder, basis):
    if coder == "lars":
        pytest.importorskip("sklearn")
    X = _planted(13)
    tol = 1e-5
    res = learn_bases(X, 8, 0.2, coder=coder, basis=basis, tol=tol, max_iter=2000, seed=3)
    f = res.objective
    assert res.converged and res.n_iter == len(f) - 1
    # monotone non-increasing within 1e-10 relative
    assert np.all(f[1:] <= f[:-1] * (1 + 1e-10))
    # stopped at the first iteration whose relative change is below tol
    rel = np.abs(np.diff(f)) / np.abs(f[:-1])
    assert rel[-1] < tol and np.all(rel[:-1] >= tol)
    # the reported codes and objective belong to the returned bases
    penalty = "epsilon_l1" if coder == "epsilon_l1" else "l1"
    assert sparse_coding_objective(X, res.components, res.codes, 0.2, penalty) == pytest.approx(f[-1], rel=1e-12)
    assert np.all(np.sum(res.components**2, axis=1) <= 1.0 + 1e-9)
    assert np.all(np.diff(res.times) >= 0) and res.coding_time > 0 and res.basis_time > 0
    # learning beats the random initial bases by a wide margin
    assert f[-1] < 0.7 * f[0]


def test_learner_basis_step_is_optimal_for_its_codes():
    """With basis='dual' every basis step solves Eq. 6 exactly: re-solving for
    the final codes from scratch gives the final bases (up to the last coding step)."""
    X = _planted(14)
    seen = []
    learn_bases(X, 8, 0.2, tol=1e-4, seed=1, callback=lambda s: seen.append((s["D"].copy(), s["A"].copy())))
    (_, A_prev), (D_last, _) = seen[-2], seen[-1]
    D_ref, _ = lagrange_dual_bases(X, A_prev, 1.0)
    np.testing.assert_allclose(D_last, D_ref, atol=1e-8)


def test_learner_callback_can_stop():
    X = _planted(15)
    res = learn_bases(X, 8, 0.2, coder="epsilon_l1", tol=0.0, max_iter=50, seed=0, callback=lambda s: s["iteration"] >= 3)
    assert res.n_iter == 3 and not res.converged and len(res.objective) == 4


def test_nonconvergence_warnings():
    from neurosim.coding.encoders import NonConvergenceWarning

    X, A = _problem(16, n_samples=50, n_atoms=10, n_features=5)
    with pytest.warns(NonConvergenceWarning, match="Lagrange dual stopped after 1 Newton steps"):
        D, _ = lagrange_dual_bases(X, A, 1.0, max_iter=1)
    assert np.all(np.sum(D * D, axis=1) <= 1.0 + 1e-9)  # still feasible
    rng = np.random.default_rng(0)
    Dict = rng.standard_normal((10, 5))
    with pytest.warns(NonConvergenceWarning, match="did not reach the gradient tolerance"):
        epsilon_l1_codes(X, Dict, 0.3, 1e-6, max_iter=2)


def test_project_rows_to_ball_kernel():
    D = np.array([[3.0, 4.0], [0.1, 0.2], [0.0, 0.0]])
    n = project_rows_to_ball(D, 4.0)
    assert n == 1
    np.testing.assert_allclose(D, [[1.2, 1.6], [0.1, 0.2], [0.0, 0.0]])


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda X, A: lagrange_dual_bases(X, A, c=0.0), ValueError, "c must be in"),
        (lambda X, A: lagrange_dual_bases(X, A, c="1"), TypeError, "c must be a real"),
        (lambda X, A: lagrange_dual_bases(X, A[:-1]), ValueError, "A must have one row per sample"),
        (lambda X, A: lagrange_dual_bases(X, A, dual_init=np.ones(2)), ValueError, "dual_init must have shape"),
        (lambda X, A: lagrange_dual_bases(np.full_like(X, np.nan), A), ValueError, "X must contain only finite"),
        (lambda X, A: lagrange_dual_bases(X[0], A), ValueError, "X must have 2 dimensions"),
        (lambda X, A: lagrange_dual_objective(X, A, -np.ones(A.shape[1])), ValueError, "dual must be >= 0"),
        (lambda X, A: projected_gradient_bases(X, A, 1.0, lr=-1.0), ValueError, "lr must be in"),
        (lambda X, A: epsilon_l1_codes(X, np.ones((3, 2)), 0.1), ValueError, "D must have shape"),
        (lambda X, A: epsilon_l1_codes(X, A.T @ X, -0.1), ValueError, "lam must be in"),
        (lambda X, A: epsilon_l1_codes(X, A.T @ X, 0.1, eps=0.0), ValueError, "eps must be in"),
        (lambda X, A: learn_bases(X, 0, 0.1), ValueError, "n_atoms must be in"),
        (lambda X, A: learn_bases(X, 2.5, 0.1), TypeError, "n_atoms must be an integer"),
        (lambda X, A: learn_bases(X, 3, 0.1, coder="cvx"), ValueError, "coder must be one of"),
        (lambda X, A: learn_bases(X, 3, 0.1, basis="qp"), ValueError, "basis must be one of"),
        (lambda X, A: learn_bases(X, 3, 0.1, callback=3), TypeError, "callback must be callable"),
        (lambda X, A: learn_bases(X, 3, 0.1, D_init=np.ones((2, 2))), ValueError, "D_init must have shape"),
    ],
)
def test_validation_errors_name_argument(call, exc, match):
    X, A = _problem(0)
    with pytest.raises(exc, match=match):
        call(X, A)


@pytest.mark.parametrize("penalty", ["l1", "epsilon_l1"])
def test_sparse_coding_objective_is_eq2_by_hand(penalty):
    # X - A D = [[0.5, 2.0], [1.0, -1.0]]: fit = 0.5 (0.25 + 4 + 1 + 1) = 3.125
    X = np.array([[1.0, 2.0], [0.0, -1.0]])
    D = np.array([[1.0, 0.0]])
    A = np.array([[0.5], [-1.0]])
    lam, eps = 0.3, 1e-3
    phi = np.abs(A) if penalty == "l1" else np.sqrt(A * A + eps)
    expected = 3.125 + lam * float(phi.sum())
    assert sparse_coding_objective(X, D, A, lam, penalty, eps) == pytest.approx(expected, rel=1e-14)
    # the penalty term counts: a larger lambda raises the objective by the sum of phi
    assert sparse_coding_objective(X, D, A, 2 * lam, penalty, eps) - sparse_coding_objective(
        X, D, A, lam, penalty, eps) == pytest.approx(lam * float(phi.sum()), rel=1e-12)
