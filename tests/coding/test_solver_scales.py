"""Every iterative solver gives the same answer to the same problem at every scale, or warns (issue 38).

A problem rescaled consistently is the same problem: data ``X -> s X`` with the penalty (``kappa``, ``lam``)
scaled by ``s`` gives codes ``s a``; atoms ``D -> c D`` with the penalty scaled by ``c`` gives codes ``a / c``
(Table 2's ``eps`` and the epsilon-L1 ``sqrt(eps)`` are in code units and follow the codes). A stopping rule
relative to the problem's own scale stops at the same iterate whatever ``s`` and ``c``; the rules before issue
38 with a floor ``max(1, .)`` were absolute below 1 and returned codes of data at 1e-8 90 % off without a
warning. Here every solver runs at ``s`` and ``c`` from 1e-12 to 1e12 and must give, without a warning (the
suite's warnings are errors), the answer of an independent oracle rescaled: scikit-learn's ``Lasso``, the
KKT conditions, ``numpy.linalg.solve``, ``scipy.optimize.nnls``. Tolerance 1e-6 relative to the answer's
largest entry, far above rounding.
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize, nnls
from sklearn.linear_model import Lasso

from neurosim.coding import structured_sparse_code
from neurosim.coding.basis import epsilon_l1_codes, lagrange_dual_bases
from neurosim.coding.encoders import feature_sign, omp
from neurosim.groups import GroupStructure

SCALES = [1e-12, 1e-6, 1.0, 1e6, 1e12]
#: (data scale s, atom scale c): each alone over SCALES, and the two extreme corners together
CASES = [(s, 1.0) for s in SCALES] + [(1.0, c) for c in SCALES if c != 1.0] + [(1e-12, 1e12), (1e12, 1e-12)]
RTOL = 1e-6


def _close(got, want, what):
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err <= RTOL, f"{what}: {err:.2e} relative off"


def _lasso_problem(seed=3, k=5, m=12, n=4):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((k, m))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    return W, rng.standard_normal((n, m))


def _lasso_oracle(W, X, lam):
    """``argmin 0.5 ||x - W^T a||^2 + lam ||a||_1`` per row by scikit-learn (its objective is ours / m)."""
    m = W.shape[1]
    return np.array([Lasso(alpha=lam / m, fit_intercept=False, tol=1e-15, max_iter=10**6).fit(W.T, x).coef_
                     for x in X])


@pytest.fixture(scope="module")
def lasso():
    W, X = _lasso_problem()
    out = {}
    for lam in (0.05, 0.3):  # all codes nonzero; about half of them zero
        ref = _lasso_oracle(W, X, lam)
        out[lam] = ref
    return W, X, out


@pytest.mark.parametrize(("s", "c"), CASES)
@pytest.mark.parametrize("lam", [0.05, 0.3])
def test_fista_lasso_at_every_scale(lasso, s, c, lam):
    W, X, ref = lasso
    codes = structured_sparse_code(s * X, c * W, None, lam * s * c, solver="fista", tol=1e-10)
    _close(codes * c / s, ref[lam], "fista")


@pytest.mark.parametrize(("s", "c"), CASES)
@pytest.mark.parametrize("lam", [0.05, 0.3])
def test_table2_lasso_at_every_scale(lasso, s, c, lam):
    W, X, ref = lasso
    codes = structured_sparse_code(s * X, c * W, None, lam * s * c, solver="table2", n_iter=2000, tol=1e-12,
                                   eps=1e-12 * s / c)
    _close(codes * c / s, ref[lam], "table2")


@pytest.fixture(scope="module")
def group_lasso():
    """Disjoint groups, a third of the coordinates missing; the reference checked against the group-lasso KKT
    conditions (``D_O^T r = kappa w_G a_G / ||a_G||`` on nonzero groups, ``||D_O^T r|| <= kappa w_G`` on zero ones)."""
    rng = np.random.default_rng(5)
    W = rng.standard_normal((6, 10))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = rng.standard_normal((3, 10))
    M = rng.random((3, 10)) >= 0.3
    g = GroupStructure.disjoint(6, 2)
    kappa = 0.2
    ref = structured_sparse_code(X, W, g, kappa, observed=M, solver="fista", tol=1e-14, fista_iter=100000)
    for r in range(3):
        o = M[r]
        grad = W[:, o] @ (X[r, o] - ref[r] @ W[:, o])
        for G in (range(0, 2), range(2, 4), range(4, 6)):
            G = list(G)
            n = np.linalg.norm(ref[r, G])
            w = g.weights[g.indptr[G[0] // 2]]
            if n > 0:
                np.testing.assert_allclose(grad[G], kappa * w * ref[r, G] / n, rtol=0, atol=1e-9)
            else:
                assert np.linalg.norm(grad[G]) <= kappa * w * (1 + 1e-9)
    return X, W, M, g, kappa, ref


@pytest.mark.parametrize(("s", "c"), CASES)
def test_fista_group_lasso_with_missing_coordinates_at_every_scale(group_lasso, s, c):
    X, W, M, g, kappa, ref = group_lasso
    codes = structured_sparse_code(s * X, c * W, g, kappa * s * c, observed=M, solver="fista", tol=1e-10)
    _close(codes * c / s, ref, "fista, groups")


@pytest.mark.parametrize(("s", "c"), CASES)
@pytest.mark.parametrize("lam", [0.05, 0.3])
def test_feature_sign_at_every_scale(lasso, s, c, lam):
    W, X, ref = lasso
    _close(feature_sign(s * X, c * W, lam * s * c) * c / s, ref[lam], "feature-sign")


@pytest.mark.parametrize(("s", "c"), CASES)
def test_nonnegative_omp_and_its_nnls_at_every_scale(s, c):
    """NN-OMP's Lawson-Hanson re-fit: at every scale the code is ``scipy.optimize.nnls`` on the support chosen
    at scale 1, and the support is the same."""
    rng = np.random.default_rng(7)
    W = np.abs(rng.standard_normal((8, 10)))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = np.abs(rng.standard_normal((4, 10)))
    base = omp(X, W, 4, nonneg=True)
    ref = np.zeros_like(base)
    for r in range(4):
        S = np.flatnonzero(base[r])
        ref[r, S] = nnls(W[S].T, X[r])[0]
    codes = omp(s * X, c * W, 4, nonneg=True)
    _close(codes * c / s, ref, "nn-omp")
    assert np.array_equal(codes != 0, ref != 0)


@pytest.fixture(scope="module")
def epsilon_l1():
    """Oracle: scipy's L-BFGS-B on Eq. 2 with the epsilon-L1 penalty at scale 1, to a gradient of 1e-13."""
    W, X = _lasso_problem(seed=4)
    lam, eps = 0.2, 1e-2

    def f(a, x):
        r = x - a @ W
        return 0.5 * r @ r + lam * np.sum(np.sqrt(a * a + eps)), -W @ r + lam * a / np.sqrt(a * a + eps)

    ref = np.array([minimize(f, np.zeros(W.shape[0]), args=(x,), jac=True, method="L-BFGS-B",
                             options={"gtol": 1e-13, "ftol": 0, "maxiter": 10000}).x for x in X])
    return W, X, lam, eps, ref


@pytest.mark.parametrize(("s", "c"), CASES)
def test_epsilon_l1_cg_at_every_scale(epsilon_l1, s, c):
    W, X, lam, eps, ref = epsilon_l1
    codes = epsilon_l1_codes(s * X, c * W, lam * s * c, eps * (s / c) ** 2, tol=1e-12)
    _close(codes * c / s, ref, "epsilon-L1 CG")


@pytest.fixture(scope="module")
def dual_problem():
    """Oracle at scale 1: the KKT conditions of Eq. 6 (stationarity ``(A^T A + diag lambda) D = A^T X``,
    ``lambda >= 0``, feasibility, complementary slackness)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 8))
    A = rng.standard_normal((30, 5)) * (rng.random((30, 5)) < 0.5)
    D1, dual1 = lagrange_dual_bases(X, A, 1.0, tol=1e-12)
    norms = np.einsum("ij,ij->i", D1, D1)
    np.testing.assert_allclose((A.T @ A + np.diag(dual1)) @ D1, A.T @ X, atol=1e-9)
    assert np.all(dual1 >= 0) and np.all(norms <= 1 + 1e-12)
    assert np.all(dual1 * (1 - norms) <= 1e-9) and 0 < np.count_nonzero(dual1) < 5  # some bind, some do not
    return X, A, D1, dual1


@pytest.mark.parametrize(("s", "c"), CASES)
def test_lagrange_dual_bases_at_every_scale(dual_problem, s, c):
    """Here ``c`` scales the codes ``A``: ``X -> s X``, ``A -> c A`` gives bases ``(s / c) D`` under the bound
    ``(s / c)^2`` and duals ``c^2 lambda``."""
    X, A, D1, dual1 = dual_problem
    D, dual = lagrange_dual_bases(s * X, c * A, (s / c) ** 2, tol=1e-12)
    _close(D * c / s, D1, "lagrange dual bases")
    _close(dual / c**2, dual1, "lagrange dual duals")


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("zero_start", [True, False])
def test_jacobi_tolerance_mode_at_every_scale(s, zero_start):
    """Oracle: the fixed point ``(I - sign M) y = drive`` by ``numpy.linalg.solve``."""
    from neurosim.kernels.dense import jacobi_relax
    rng = np.random.default_rng(2)
    n = 6
    M = 0.1 * rng.standard_normal((n, n))
    np.fill_diagonal(M, 0.0)
    d = s * rng.standard_normal((2, n))
    want = np.linalg.solve(np.eye(n) + M, d.T).T
    y = s * rng.standard_normal((2, n))
    info = np.zeros(2, dtype=np.int64)
    assert jacobi_relax(y, d, M, -1.0, 0.3, 1e-10, 2000, zero_start, np.empty_like(y), info)
    assert 1 < info[0] < 2000 and info[1] == 0
    _close(y, want, "jacobi")


@pytest.fixture(scope="module")
def bcd_problem():
    """Oracle: SLSQP on ``0.5 tr(D^T A D) - tr(D^T B)`` subject to ``||d_j|| <= 1``, at scale 1."""
    rng = np.random.default_rng(6)
    k, m = 4, 6
    codes = rng.standard_normal((40, k))
    X = rng.standard_normal((40, m))
    A, B = codes.T @ codes / 40, codes.T @ X / 40

    def f(w):
        D = w.reshape(k, m)
        return 0.5 * np.sum(D * (A @ D)) - np.sum(D * B), (A @ D - B).ravel()

    cons = [{"type": "ineq", "fun": (lambda w, j=j: 1.0 - w.reshape(k, m)[j] @ w.reshape(k, m)[j])} for j in range(k)]
    ref = minimize(f, np.zeros(k * m), jac=True, method="SLSQP", constraints=cons,
                   options={"ftol": 1e-15, "maxiter": 1000}).x.reshape(k, m)
    return A, B, ref, 0.5 * rng.standard_normal((k, m))


@pytest.mark.parametrize("s", SCALES)
def test_block_coordinate_descent_at_every_scale(bcd_problem, s):
    """Paper 000's dictionary update on statistics of data at scale ``s`` (``A``, ``B`` scale as ``s^2``; the
    atoms live in the unit ball, so they do not scale)."""
    from neurosim.kernels.dictionary import block_coordinate_descent
    A, B, ref, w0 = bcd_problem
    k, m = w0.shape
    w = w0.copy()
    info = np.zeros(2, dtype=np.int64)
    assert block_coordinate_descent(w, s * s * A, s * s * B, 0.0, 0, 1e-12, 5000, 1e-3, False, np.empty(m),
                                    np.empty(m), info)
    assert info[1] == 0
    np.testing.assert_allclose(w, ref, rtol=0, atol=1e-6)


# -- beyond the family: the edges of float64 give the answer or an error, never NaN or a silent 50 % ---------------
@pytest.mark.parametrize("s", [1e80, 1e150])
def test_lagrange_dual_bases_with_products_near_overflow(s):
    """``X`` and ``A`` both at ``s`` (bases unchanged): ``||A^T X||^2`` overflows from ~1e77, which made the dual's
    default start infinite and the bases 50 % off without a warning; the solve itself needs only ``A^T A``."""
    rng = np.random.default_rng(1)
    X, A = rng.standard_normal((30, 8)), rng.standard_normal((30, 5))
    D1, _ = lagrange_dual_bases(X, A, 1.0, tol=1e-12)
    D, _ = lagrange_dual_bases(s * X, s * A, 1.0, tol=1e-12)
    _close(D, D1, "lagrange dual bases")


@pytest.mark.parametrize("s", [1e155, 1e-160])
def test_basis_solvers_refuse_products_that_overflow_or_underflow(s):
    from neurosim.coding.basis import projected_gradient_bases
    rng = np.random.default_rng(1)
    X, A = rng.standard_normal((30, 8)), rng.standard_normal((30, 5))
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="too large|underflow"):
        with warnings.catch_warnings():  # scipy's ill-conditioning warning on the way to the refusal
            warnings.simplefilter("ignore")
            lagrange_dual_bases(s * X, s * A, 1.0, max_iter=5)
    if s > 1:
        with pytest.raises(ValueError, match=r"A\^T A overflows"):
            projected_gradient_bases(s * X, s * A, 1.0, seed=0)


@pytest.mark.parametrize("s", [1e150, 1e-155])
def test_epsilon_l1_codes_beyond_its_range_raise_instead_of_returning_nan(s):
    W, X = _lasso_problem(seed=4)
    with pytest.raises(ValueError, match="epsilon_l1_codes overflowed float64"):
        epsilon_l1_codes(s * X, W, 0.2 * s, 1e-2 * s * s)
