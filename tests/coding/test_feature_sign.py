"""Feature-sign search (Lee et al. 2006, Alg. 1) against independent oracles.

Oracles: scikit-learn's coordinate-descent Lasso run to a tight duality gap
(objective and codes), closed forms (soft thresholding on an orthonormal
dictionary, least squares at lam = 0), and the Step 4 optimality conditions
recomputed here from D and X (not from the kernel's Gram).
"""

import warnings

import numpy as np
import pytest
from sklearn.decomposition import sparse_encode as sk_sparse_encode
from sklearn.linear_model import Lasso

from neurosim.coding import NonConvergenceWarning, feature_sign, lambda_for_count, sparse_encode
from neurosim.kernels.feature_sign import FS_CONVERGED, feature_sign_batch, feature_sign_codes

# (n_features, n_atoms): over-, under- and equi-complete, then the four
# Table 1 shapes (input dimension x number of bases).
SHAPES = [(12, 30), (30, 12), (16, 16), (5, 40)]
TABLE1 = [(196, 512), (500, 200), (288, 400), (512, 200)]


def problem(n_features, n_atoms, n_samples, seed):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((n_samples, n_features))
    return X, D


def objective(X, D, A, lam):
    return 0.5 * np.sum((X - A @ D) ** 2, axis=1) + lam * np.sum(np.abs(A), axis=1)


def lasso_oracle(X, D, lam, positive=False):
    # sklearn's Lasso minimises (1 / (2 n)) ||y - W b||^2 + alpha ||b||_1 over
    # n = n_features rows of W = D^T: alpha = lam / n_features gives n times
    # our objective, hence the same minimiser.
    n_features = D.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Lasso(alpha=lam / n_features, fit_intercept=False, tol=1e-13, max_iter=200000, positive=positive)
        model.fit(D.T, X.T)
    return np.atleast_2d(model.coef_)


def assert_kkt(X, D, A, lam, rel=1e-7, nonneg=False):
    """Step 4 (a) on nonzeros and (b) on zeros, relative to max(lam, max|D x|)."""
    g = (A @ D - X) @ D.T
    scale = np.maximum(lam, np.abs(X @ D.T).max(axis=1, keepdims=True))
    nz = A != 0
    viol_a = np.abs(g + lam * np.sign(A)) / scale
    assert np.all(viol_a[nz] <= rel), viol_a[nz].max()
    viol_b = ((-g if nonneg else np.abs(g)) - lam) / scale
    assert np.all(viol_b[~nz] <= rel), viol_b[~nz].max()
    if nonneg:
        assert np.all(A >= 0)


@pytest.mark.parametrize("shape", SHAPES + TABLE1)
def test_objective_matches_lasso_cd_and_kkt(shape):
    n_features, n_atoms = shape
    n_samples = 3 if n_atoms >= 200 else 8
    X, D = problem(n_features, n_atoms, n_samples, seed=n_features * 1000 + n_atoms)
    # lam as a fraction of max|D x| gives a few to several dozen nonzeros.
    lam = 0.15 * np.abs(X @ D.T).max()
    A = feature_sign(X, D, lam)
    B = lasso_oracle(X, D, lam)
    fa, fb = objective(X, D, A, lam), objective(X, D, B, lam)
    assert np.all(fa <= fb * (1 + 1e-8)), ((fa - fb) / fb).max()
    # The oracle converged too (otherwise the first assertion is vacuous).
    assert np.all(fb <= fa * (1 + 1e-6))
    assert np.abs(A - B).max() < 1e-4
    assert np.count_nonzero(A) > n_samples
    assert_kkt(X, D, A, lam)


def test_scaling_matches_sklearn_sparse_encode_alpha():
    # sklearn.decomposition.sparse_encode(alpha=lam) is our lam (documented
    # mapping); its default tolerance is loose, so compare at 1e-4.
    X, D = problem(20, 35, 6, seed=3)
    lam = 0.2
    A = feature_sign(X, D, lam)
    B = sk_sparse_encode(X, D, algorithm="lasso_cd", alpha=lam, max_iter=10000)
    fa, fb = objective(X, D, A, lam), objective(X, D, B, lam)
    assert np.all(fa <= fb * (1 + 1e-8))
    assert np.all(fb <= fa * (1 + 1e-4))


@pytest.mark.parametrize("shape", [(12, 30), (30, 12), (196, 512)])
def test_nonneg_matches_positive_lasso(shape):
    X, D = problem(*shape, 4, seed=7)
    lam = 0.1 * np.abs(X @ D.T).max()
    A = feature_sign(X, D, lam, nonneg=True)
    B = lasso_oracle(X, D, lam, positive=True)
    fa, fb = objective(X, D, A, lam), objective(X, D, B, lam)
    assert np.all(fa <= fb * (1 + 1e-8))
    assert np.all(fb <= fa * (1 + 1e-6))
    assert np.abs(A - B).max() < 1e-4
    assert_kkt(X, D, A, lam, nonneg=True)


def test_orthonormal_dictionary_is_soft_threshold():
    rng = np.random.default_rng(11)
    Q, _ = np.linalg.qr(rng.standard_normal((20, 20)))
    D = Q[:13]  # 13 orthonormal atoms in R^20
    X = rng.standard_normal((10, 20))
    lam = 0.4
    C = X @ D.T
    expected = np.sign(C) * np.maximum(np.abs(C) - lam, 0.0)
    np.testing.assert_allclose(feature_sign(X, D, lam), expected, atol=1e-12)
    np.testing.assert_allclose(feature_sign(X, D, lam, nonneg=True), np.maximum(C - lam, 0.0), atol=1e-12)


def test_lam_zero_is_least_squares_and_large_lam_is_zero():
    X, D = problem(30, 12, 5, seed=5)
    A = feature_sign(X, D, 0.0)
    ls = np.linalg.lstsq(D.T, X.T, rcond=None)[0].T
    np.testing.assert_allclose(A, ls, atol=1e-9)
    big = np.abs(X @ D.T).max(axis=1)
    assert np.all(feature_sign(X, D, big) == 0.0)
    # Just below the threshold exactly one atom enters, the argmax of |D x|.
    A = feature_sign(X, D, big * (1 - 1e-6))
    assert np.all(np.count_nonzero(A, axis=1) == 1)
    assert np.all(np.argmax(np.abs(A), axis=1) == np.argmax(np.abs(X @ D.T), axis=1))


@pytest.mark.parametrize("shape", [(12, 30), (30, 12), (196, 512)])
def test_warm_and_cold_starts_agree(shape):
    X, D = problem(*shape, 5, seed=13)
    lam = 0.1 * np.abs(X @ D.T).max()
    cold = feature_sign(X, D, lam)
    rng = np.random.default_rng(0)
    starts = [
        rng.standard_normal(cold.shape),  # arbitrary dense start
        cold + 0.01 * rng.standard_normal(cold.shape) * (cold != 0),  # near the optimum
        feature_sign(X, D, 2 * lam),  # previous point on the path
        -cold,  # every sign wrong
    ]
    for init in starts:
        warm = feature_sign(X, D, lam, init=init)
        np.testing.assert_allclose(objective(X, D, warm, lam), objective(X, D, cold, lam), rtol=1e-10)
        np.testing.assert_allclose(warm, cold, atol=1e-7)
        assert_kkt(X, D, warm, lam)


def test_duplicated_atoms_footnote3():
    # Duplicates make G_AA singular whenever both copies could be active; the
    # optimum value equals the one on the deduplicated dictionary.
    X, Du = problem(6, 25, 12, seed=17)
    D = np.vstack([Du, Du[:10], 2.0 * Du[3:5]])  # exact and scaled copies
    for lam in [1e-1, 1e-3, 1e-6]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", NonConvergenceWarning)
            A = feature_sign(X, D, lam)
            # Warm start with every atom active, including all copies.
            W = feature_sign(X, D, lam, init=np.ones((X.shape[0], D.shape[0])))
        ref = objective(X, Du, lasso_oracle(X, Du, lam), lam)
        for Z in (A, W):
            f = objective(X, D, Z, lam)
            assert np.all(f <= ref * (1 + 1e-8)), ((f - ref) / ref).max()
            assert_kkt(X, D, Z, lam)
            # The active atoms of a feature-sign solution are independent.
            for z in Z:
                S = D[z != 0]
                assert np.linalg.matrix_rank(S) == S.shape[0]


def test_in_place_kernel_matches_public_api_and_warm_starts():
    X, D = problem(40, 60, 7, seed=19)
    lam = 0.3
    G, C = D @ D.T, X @ D.T
    A = np.zeros_like(C)
    assert feature_sign_codes(G, C, lam, A, False, False, 1000, 1e-10) == 0
    np.testing.assert_allclose(A, feature_sign(X, D, lam), atol=1e-12)
    # The time-step use: A carries over as the warm start of the next call.
    C2 = C + 0.05 * np.random.default_rng(1).standard_normal(C.shape)
    A_warm = A.copy()
    assert feature_sign_codes(G, C2, lam, A_warm, True, False, 1000, 1e-10) == 0
    A_cold = np.zeros_like(C)
    feature_sign_codes(G, C2, lam, A_cold, False, False, 1000, 1e-10)
    np.testing.assert_allclose(A_warm, A_cold, atol=1e-9)
    # Per-sample lambdas and status.
    lams = np.linspace(0.05, 0.5, len(X))
    A3 = np.zeros_like(C)
    status = np.full(len(X), -1, dtype=np.int64)
    assert feature_sign_batch(G, C, lams, A3, False, False, 1000, 1e-10, status) == 0
    assert np.all(status == FS_CONVERGED)
    for s in range(len(X)):
        np.testing.assert_allclose(A3[s], feature_sign(X[s], D, lams[s]), atol=1e-12)
    np.testing.assert_allclose(A3, feature_sign(X, D, lams), atol=1e-12)


def test_iteration_cap_flags_and_warns():
    X, D = problem(30, 60, 4, seed=23)
    lam = 0.01
    G, C = D @ D.T, X @ D.T
    A = np.zeros_like(C)
    assert feature_sign_codes(G, C, lam, A, False, False, 3, 1e-10) == 4
    with pytest.warns(NonConvergenceWarning, match="max_iter"):
        A = feature_sign(X, D, lam, max_iter=3)
    assert np.all(np.isfinite(A))
    # Each step strictly decreases the objective, so the capped iterate is
    # still better than zero.
    assert np.all(objective(X, D, A, lam) < objective(X, D, np.zeros_like(A), lam))


def test_single_signal_returns_1d():
    X, D = problem(10, 20, 1, seed=29)
    a = feature_sign(X[0], D, 0.1)
    assert a.shape == (20,)
    # X[0] @ D.T and a row of X @ D.T may round differently (BLAS gemv vs gemm)
    np.testing.assert_allclose(a, feature_sign(X, D, 0.1)[0], rtol=1e-12, atol=1e-14)


def test_lambda_search_orthonormal_closed_form_and_monotone():
    # With orthonormal atoms the code is soft thresholding, so the count is
    # #{|c_i| > lam}: a lambda hits count k iff |c|_(k+1) <= lam < |c|_(k).
    rng = np.random.default_rng(31)
    Q, _ = np.linalg.qr(rng.standard_normal((24, 24)))
    D = Q[:18]
    X = rng.standard_normal((6, 24))
    c_sorted = -np.sort(-np.abs(X @ D.T), axis=1)
    previous = np.full(len(X), np.inf)
    for k in range(1, 18):
        lam = lambda_for_count(X, D, k)
        assert np.all(lam < c_sorted[:, k - 1])
        assert np.all(lam >= c_sorted[:, k])
        assert np.all(lam <= previous)
        previous = lam


@pytest.mark.parametrize("shape", [(12, 30), (30, 12), (196, 512)])
def test_lambda_search_hits_count(shape):
    X, D = problem(*shape, 5, seed=37)
    for k in (1, 3, 8):
        lam, A = lambda_for_count(X, D, k, return_codes=True)
        assert np.all(np.count_nonzero(A, axis=1) == k)
        np.testing.assert_allclose(A, feature_sign(X, D, lam), atol=1e-8)
        assert_kkt(X, D, A, lam[:, None])
        np.testing.assert_allclose(sparse_encode(X, D, n_nonzero=k), A, atol=1e-12)
    lam_nn, A_nn = lambda_for_count(X, D, 4, nonneg=True, return_codes=True)
    assert np.all(np.count_nonzero(A_nn, axis=1) == 4) and np.all(A_nn >= 0)


def test_lambda_search_unreachable_count_warns():
    X, D = problem(8, 10, 2, seed=41)
    X[1] = 0.0  # D x = 0: every lambda gives the zero code
    with pytest.warns(NonConvergenceWarning, match="exactly the requested count"):
        lam = lambda_for_count(X, D, 3)
    assert lam[1] == 0.0


def test_oracles_reject_slightly_wrong_codes():
    # The checks above must be able to fail: a 1e-5 relative perturbation of
    # the optimum violates Step 4 (a), a spurious tiny coefficient violates
    # the objective comparison, and a loose tolerance is caught by the KKT
    # check.
    X, D = problem(30, 60, 4, seed=43)
    lam = 0.1 * np.abs(X @ D.T).max()
    A = feature_sign(X, D, lam)
    with pytest.raises(AssertionError):
        assert_kkt(X, D, A * (1 + 1e-5), lam)
    B = A.copy()
    B[A == 0] = 1e-6
    assert np.any(objective(X, D, B, lam) > objective(X, D, A, lam) * (1 + 1e-8))
    with pytest.raises(AssertionError):
        assert_kkt(X, D, feature_sign(X, D, lam, tol=1e-2), lam)


def test_kernel_callable_from_compiled_time_loop():
    # The engine calls the in-place kernel from its own njit loop, carrying
    # the codes over as warm starts between time steps; its options arrive as
    # the segment's arguments, as here (literal constants would make numba
    # compile the kernel once more, for those literal types).
    from numba import njit

    @njit
    def run(G, Cs, lam, A, warm, nonneg, max_iter, tol):
        failed = 0
        for t in range(Cs.shape[0]):
            failed += feature_sign_codes(G, Cs[t], lam, A, warm, nonneg, max_iter, tol)
        return failed

    X, D = problem(20, 35, 3, seed=47)
    rng = np.random.default_rng(2)
    Xs = X[None] + 0.1 * rng.standard_normal((4,) + X.shape)
    Cs = np.ascontiguousarray(Xs @ D.T)
    A = np.zeros((3, 35))
    assert run(D @ D.T, Cs, 0.2, A, True, False, 1000, 1e-10) == 0
    np.testing.assert_allclose(A, feature_sign(Xs[-1], D, 0.2), atol=1e-9)


@pytest.mark.parametrize("a0", [1.0, 0.5, 3.0])
def test_one_warm_step_is_the_papers_discrete_line_search(a0):
    # Algorithm 1, Step 3: from the current point, the new point is the one of lowest objective
    # among x_new and the points where a coefficient changes sign. One atom (G = 1), c = -0.3,
    # lam = 0.5, warm start a0 > 0 (sign +): x_new = c - lam = -0.8 has objective
    # 0.5 x^2 - c x + lam |x| = 0.48, the sign change at x = 0 has 0, so one step (max_iter = 1)
    # must land exactly on 0 (a0 = 1.0 exercises the comparison of a coefficient with 0).
    G = np.array([[1.0]])
    C = np.array([[-0.3]])
    A = np.array([[a0]])
    assert feature_sign_codes(G, C, 0.5, A, True, False, 1, 1e-10) == 1  # the cap: not converged yet
    assert A[0, 0] == 0.0
    # two steps: 0 satisfies Step 4 (b) (|g| = 0.3 <= lam), converged at the closed form 0
    A = np.array([[a0]])
    assert feature_sign_codes(G, C, 0.5, A, True, False, 2, 1e-10) == 0
    assert A[0, 0] == 0.0


def test_batch_kernel_returns_the_number_of_samples_not_converged():
    # The documented return value (as feature_sign_codes: the number of failures) must equal
    # the count of statuses other than FS_CONVERGED: with max_iter = 1 a sample that needs an
    # atom stops at the cap, a zero signal is optimal at 0 and converges at once.
    X, D = problem(8, 12, 5, seed=3)
    X[2] = 0.0
    G, C = D @ D.T, X @ D.T
    A = np.zeros_like(C)
    status = np.full(len(X), -1, dtype=np.int64)
    failed = feature_sign_batch(G, C, np.full(len(X), 0.05), A, False, False, 1, 1e-10, status)
    assert status[2] == FS_CONVERGED
    assert np.count_nonzero(status != FS_CONVERGED) == 4
    assert failed == 4


def test_lambda_search_kernel_returns_the_number_of_samples_that_missed_their_count():
    # The kernel's documented return value is the count of samples whose status is not
    # FS_CONVERGED; a sample with D x = 0 misses at once (its bracket is empty), and with one
    # bisection step a sample whose first midpoint does not give the count misses too.
    from neurosim.kernels.feature_sign import lambda_search_codes

    X, D = problem(8, 10, 4, seed=41)
    X[1] = 0.0
    G, C = D @ D.T, X @ D.T
    for max_bisect, tol_lam in ((100, 1e-10), (1, 1e-10)):
        A, lams = np.zeros_like(C), np.zeros(len(X))
        status = np.full(len(X), -1, dtype=np.int64)
        failed = lambda_search_codes(G, C, 3, A, lams, False, 1000, 1e-10, tol_lam, max_bisect, status)
        assert status[1] != FS_CONVERGED
        assert failed == np.count_nonzero(status != FS_CONVERGED)
        hit = np.count_nonzero(A, axis=1) == 3
        assert np.array_equal(status == FS_CONVERGED, hit)
    assert failed > 1  # one bisection step leaves more than the zero signal short of its count


def test_default_feature_sign_cap_is_the_documented_max_of_1000_and_10_atoms():
    from neurosim.coding.encoders import _default_max_iter
    assert [_default_max_iter(n) for n in (1, 99, 100, 101, 1024)] == [1000, 1000, 1000, 1010, 10240]
