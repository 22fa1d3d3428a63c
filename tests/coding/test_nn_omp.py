"""Non-negative OMP (Tsuchida & Cottrell 2015, Eq. 6; Bruckstein, Elad & Zibulevsky 2008).

Oracle: a slow NumPy reference written here, which selects the not yet
chosen atom with the largest positive correlation ``D (x - D^T s)`` (computed
from the signal, not from the Gram) and re-fits the support with
``scipy.optimize.nnls`` on ``D_S^T``; atoms whose NNLS coefficient is 0 stay in
the support, as in the kernel.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples
from scipy.optimize import nnls

from neurosim.coding import NonConvergenceWarning, omp, sparse_encode
from neurosim.kernels.encoding import correlations, gram
from neurosim.kernels.greedy import OMP_DEPENDENT, OMP_EXACT, OMP_OK, nn_omp_codes

EPS = np.finfo(np.float64).eps


def reference(x, D, k):
    """Greedy positive-correlation selection + scipy NNLS on the support; also returns the support."""
    c0 = D @ x
    thresh = EPS * np.max(np.abs(c0)) ** 2  # omp's scale-relative "negligible correlation" stop
    support, a = [], np.zeros(D.shape[0])
    for _ in range(k):
        corr = D @ (x - a @ D)
        corr[support] = -np.inf
        j = int(np.argmax(corr))
        if not corr[j] > 0.0 or corr[j] ** 2 <= thresh:
            break
        support.append(j)
        coef, _ = nnls(D[support].T, x)
        a = np.zeros(D.shape[0])
        a[support] = coef
    return a, support


def kernel(X, D, k):
    # G and C by the BLAS calls the public encoder makes (NumPy's D @ D.T differs in the last bits)
    X, D = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(D, dtype=float)
    G, C = np.empty((D.shape[0], D.shape[0])), np.empty((X.shape[0], D.shape[0]))
    gram(D, G)
    correlations(X, D, C)
    A = np.full((X.shape[0], D.shape[0]), np.nan)
    status = np.full(X.shape[0], -1, dtype=np.int64)
    failed = nn_omp_codes(G, C, k, A, status)
    return A, status, failed


def problem(seed, positive):
    rng = np.random.default_rng(seed)
    K, P = int(rng.integers(20, 101)), int(rng.integers(16, 65))
    D = rng.standard_normal((K, P)) * rng.uniform(0.3, 3.0, (K, 1))  # unnormalised atoms
    X = rng.standard_normal((8, P))
    if positive:  # non-negative atoms and signals: coefficients often drop to 0 in the NNLS re-fit
        D, X = np.abs(D), np.abs(X)
    return X, D


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_matches_greedy_selection_plus_scipy_nnls(k, positive):
    drops = 0
    for seed in range(6):
        X, D = problem(100 * k + seed, positive)
        A = omp(X, D, k, nonneg=True)
        Ak, status, failed = kernel(X, D, k)
        np.testing.assert_array_equal(A, Ak)  # the wrapper adds checks only
        assert failed == 0 and np.all((status == OMP_OK) | (status == OMP_EXACT))
        for x, a, stat in zip(X, A, status):
            want, support = reference(x, D, k)
            scale = np.abs(want).max()
            np.testing.assert_allclose(a, want, rtol=0, atol=1e-10 * scale)
            # exactly the oracle's support (zero-coefficient atoms included) carries the code
            assert set(np.flatnonzero(a)) <= set(support)
            assert (stat == OMP_OK) == (len(support) == k)
            drops += int(np.count_nonzero(a) < len(support))
    if positive and k >= 3:
        # the NNLS re-fit did set earlier coefficients to 0 (the Lawson-Hanson inner loop ran)
        assert drops > 0


@pytest.mark.parametrize("shape", [(12, 4), (20, 6), (40, 8)])
def test_matches_the_oracle_up_to_a_full_support(shape):
    # n_nonzero = n_features on non-negative data: here the Lawson-Hanson loop also re-admits atoms
    # it had dropped earlier in the same re-fit (checked by tracing the kernel's Python source)
    K, P = shape
    rng = np.random.default_rng(K)
    D, X = np.abs(rng.standard_normal((K, P))), np.abs(rng.standard_normal((60, P)))
    A, status, failed = kernel(X, D, P)
    assert failed == 0 and np.all(A >= 0.0)
    for x, a, stat in zip(X, A, status):
        want, support = reference(x, D, P)
        np.testing.assert_allclose(a, want, rtol=0, atol=1e-10 * np.abs(want).max())
        if stat == OMP_EXACT:
            # no atom correlates positively with the residual: the NNLS optimum over the whole
            # dictionary, whose residual is unique
            _, rnorm = nnls(D.T, x)
            np.testing.assert_allclose(np.linalg.norm(x - a @ D), rnorm, rtol=1e-9, atol=1e-12)


def test_hand_computed_case_differs_from_signed_omp():
    # c = D x = (3, -1, sqrt(2)): both pick atom 0 (3 is the largest |c| and the largest positive c);
    # the residual (0, -1) then correlates (0, -1, -1/sqrt(2)): signed OMP takes atom 1 with -1,
    # the non-negative one finds no positive correlation and stops.
    D = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]) / np.array([[1.0], [1.0], [np.sqrt(2.0)]])
    x = np.array([3.0, -1.0])
    np.testing.assert_allclose(omp(x, D, 2), [3.0, -1.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(omp(x, D, 2, nonneg=True), [3.0, 0.0, 0.0], atol=1e-14)
    A, status, _ = kernel(x[None], D, 2)
    assert status[0] == OMP_EXACT
    # every correlation negative: the zero code, which is the NNLS optimum
    A, status, _ = kernel(np.array([[-3.0, -1.0]]), np.eye(2), 2)
    assert status[0] == OMP_EXACT and np.all(A == 0.0)


def test_k_equal_one_is_the_largest_positive_correlation_over_the_atom_norm():
    rng = np.random.default_rng(7)
    D = rng.standard_normal((30, 12)) * rng.uniform(0.5, 2.0, (30, 1))
    X = rng.standard_normal((20, 12))
    A = omp(X, D, 1, nonneg=True)
    C = X @ D.T
    for a, c in zip(A, C):
        j = int(np.argmax(c))
        want = np.zeros(30)
        want[j] = c[j] / (D[j] @ D[j])
        np.testing.assert_allclose(a, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("dictionary", ["orthonormal", "identity+hadamard"])
def test_exactly_sparse_non_negative_signals_are_recovered(dictionary):
    rng = np.random.default_rng(11)
    if dictionary == "orthonormal":
        Q, _ = np.linalg.qr(rng.standard_normal((32, 32)))
        D, ks = Q.T, [1, 2, 3, 5, 8]
    else:
        # mutual coherence 1/8: OMP recovers any k-sparse signal with k < (1 + 8) / 2 (Tropp 2004)
        H = np.array([[1.0]])
        for _ in range(6):
            H = np.block([[H, H], [H, -H]])
        D, ks = np.vstack([np.eye(64), H / 8.0]), [1, 2, 3, 4]
    for k in ks:
        for _ in range(10):
            s = np.zeros(D.shape[0])
            s[rng.choice(D.shape[0], k, replace=False)] = rng.uniform(0.2, 3.0, k)
            x = s @ D
            for n_nonzero in (k, k + 2):
                a = omp(x, D, n_nonzero, nonneg=True)
                np.testing.assert_array_equal(np.flatnonzero(a), np.flatnonzero(s))
                np.testing.assert_allclose(a, s, rtol=0, atol=1e-12 * s.max())
            _, status, _ = kernel(x[None], D, k + 2)
            assert status[0] == OMP_EXACT  # residual zero: stops before k + 2 atoms


def test_codes_non_negative_supports_nested_and_residual_non_increasing():
    rng = np.random.default_rng(3)
    D = rng.standard_normal((60, 24))
    X = rng.standard_normal((40, 24))
    prev_res = np.linalg.norm(X, axis=1)  # s = 0 is feasible
    prev_support = [[] for _ in X]
    for k in range(1, 11):
        A, status, _ = kernel(X, D, k)
        assert np.all(A >= 0.0)
        assert np.all(np.count_nonzero(A, axis=1) <= k)
        res = np.linalg.norm(X - A @ D, axis=1)
        assert np.all(res <= prev_res * (1 + 1e-12))
        # the k-th atom had a positive correlation with the residual: NNLS on the larger support does better
        assert np.all(res[status == OMP_OK] < prev_res[status == OMP_OK])
        for i, a in enumerate(A):
            _, support = reference(X[i], D, k)
            # the greedy path of k atoms extends that of k - 1; the code lives on it
            assert support[: len(prev_support[i])] == prev_support[i]
            assert set(np.flatnonzero(a)) <= set(support)
            prev_support[i] = support
        prev_res = res


def test_scale_invariance():
    rng = np.random.default_rng(5)
    X, D = rng.standard_normal((10, 16)), rng.standard_normal((30, 16))
    A = omp(X, D, 4, nonneg=True)
    B = omp(1e-150 * X, 1e150 * D, 4, nonneg=True)
    np.testing.assert_allclose(B, A * 1e-300, rtol=1e-10, atol=0)



@pytest.mark.parametrize("seed", [6, 16])
@pytest.mark.parametrize("scale", [1e-14, 1e-30, 1e13])
def test_signals_scaled_alone_scale_the_codes(scale, seed):
    # The codes are linear in x (same supports, coefficients times the scale). NNLS's test of which zero
    # coefficient may enter compares the gradient with rounding *relative* to its terms, so it holds for
    # signals far below 1 (an absolute threshold would declare the Kuhn-Tucker conditions met while a
    # coefficient should re-enter; these two draws need a re-entry) and far above it.
    # (test_scale_invariance scales x and D together, which leaves the gradients unchanged.)
    rng = np.random.default_rng(seed)
    n_atoms, n_features = int(rng.integers(5, 30)), int(rng.integers(3, 12))
    D = rng.standard_normal((n_atoms, n_features))
    X = np.abs(rng.standard_normal((6, n_features)))
    k = int(rng.integers(1, min(n_atoms, n_features) + 1))
    A, status, _ = kernel(X, D, k)
    B, status_b, _ = kernel(scale * X, D, k)
    np.testing.assert_array_equal(status_b, status)
    np.testing.assert_array_equal(B != 0.0, A != 0.0)
    np.testing.assert_allclose(B, scale * A, rtol=1e-9, atol=0)

def test_zero_atoms_are_never_selected_by_the_kernel():
    # SparseCode's convention: an all-zero atom has a zero Gram row and correlation
    rng = np.random.default_rng(9)
    D = np.abs(rng.standard_normal((12, 6)))
    D[[2, 7]] = 0.0
    X = np.abs(rng.standard_normal((15, 6)))
    A, status, failed = kernel(X, D, 6)
    assert failed == 0 and np.all(A[:, [2, 7]] == 0.0)
    keep = np.setdiff1d(np.arange(12), [2, 7])
    np.testing.assert_allclose(A[:, keep], omp(X, D[keep], 6, nonneg=True), rtol=0, atol=1e-12)
    # an all-zero dictionary gives zero codes, stopped at once
    A, status, _ = kernel(X, np.zeros((4, 6)), 3)
    assert np.all(A == 0.0) and np.all(status == OMP_EXACT)


def test_duplicated_atoms_give_the_same_codes():
    X, D = problem(1, positive=False)
    D2 = np.vstack([D, D[:5]])
    A2 = omp(X, D2, 5, nonneg=True)
    np.testing.assert_allclose(A2[:, : D.shape[0]], omp(X, D, 5, nonneg=True), rtol=0, atol=1e-12)
    assert np.all(A2[:, D.shape[0]:] == 0.0)


def deg(t):
    return np.array([np.cos(np.radians(t)), np.sin(np.radians(t)), 0.0])


def test_dependent_next_atom_is_flagged_and_warned():
    # Atoms in the plane z = 0: p = 10 e(0), q = e(60), w = 0.5 e(100); x = e(80) (e(t): unit vector
    # at t degrees). Step 1: c = (10 cos 80, cos 20, 0.5 cos 20) = (1.74, 0.94, 0.47): p. Residual
    # (0, sin 80): q (sin 60 sin 80 = 0.85 > w's 0.5 sin 100 sin 80 = 0.48). x lies beyond q, outside
    # the cone of p and q, so the NNLS re-fit sets p to 0 and q to x . q = cos 20. The residual
    # sin 20 e(150) then correlates positively with w (0.5 sin 20 cos 50), which is dependent on the
    # plane spanned by p and q: stop, flagged, with the code of two atoms.
    D = np.array([10.0 * deg(0), deg(60), 0.5 * deg(100)])
    x = deg(80)
    want = np.array([0.0, np.cos(np.radians(20)), 0.0])
    A, status, failed = kernel(x[None], D, 3)
    assert status[0] == OMP_DEPENDENT and failed == 1
    np.testing.assert_allclose(A[0], want, rtol=0, atol=1e-14)
    X = np.vstack([x, deg(30), x])
    with pytest.warns(NonConvergenceWarning,
                      match=r"omp\(nonneg=True\): 2 sample\(s\) .* linearly dependent .*first samples: \[0, 2\]"):
        A = omp(X, D, 3, nonneg=True)
    np.testing.assert_allclose(A[[0, 2]], [want, want], rtol=0, atol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        omp(X, D, 2, nonneg=True)  # two atoms: the dependent third is never examined


def test_sparse_encode_forwards_nonneg_to_omp():
    X, D = problem(4, positive=False)
    np.testing.assert_array_equal(sparse_encode(X, D, "omp", n_nonzero=3, nonneg=True), omp(X, D, 3, nonneg=True))
    assert not np.array_equal(sparse_encode(X, D, "omp", n_nonzero=3), omp(X, D, 3, nonneg=True))


def test_bad_input_names_the_parameter():
    X, D = problem(0, positive=False)
    K, P = D.shape
    for bad in (0, -1, min(K, P) + 1):
        with pytest.raises(ValueError, match=rf"n_nonzero must be in \[1, {min(K, P)}\]; got {bad}"):
            omp(X, D, bad, nonneg=True)
    with pytest.raises(TypeError, match="n_nonzero must be an integer"):
        omp(X, D, 2.0, nonneg=True)
    with pytest.raises(TypeError, match="nonneg must be a bool"):
        omp(X, D, 2, nonneg=1)
    Xn = X.copy()
    Xn[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"X must contain only finite values"):
        omp(Xn, D, 2, nonneg=True)
    Dn = D.copy()
    Dn[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"D must contain only finite values"):
        omp(X, Dn, 2, nonneg=True)
    with pytest.raises(ValueError, match=r"D must have no all-zero rows"):
        omp(X, np.vstack([D, np.zeros(P)]), 2, nonneg=True)
    with pytest.raises(ValueError, match=r"X must have n_features = "):
        omp(X[:, :-1], D, 2, nonneg=True)
    with pytest.raises(ValueError, match=r"D values are too large: squared atom norms overflow float64"):
        omp(X, D * 1e200, 2, nonneg=True)
    with pytest.raises(ValueError, match=r"X or D values are too large: D D\^T or X D\^T overflows float64"):
        omp(X * 1e250, D * 1e100, 2, nonneg=True)


finite = st.floats(-1e6, 1e6, allow_nan=False, width=64)
hostile = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    n_features=st.integers(1, 6),
    n_atoms=st.integers(1, 8),
    n_samples=st.integers(0, 4),
    elements=st.sampled_from([finite, hostile]),
)
def test_hypothesis_public_nonneg_omp(data, n_features, n_atoms, n_samples, elements):
    X = data.draw(hnp.arrays(np.float64, (n_samples, n_features), elements=elements))
    D = data.draw(hnp.arrays(np.float64, (n_atoms, n_features), elements=elements))
    k = data.draw(st.one_of(st.integers(-2, 9), st.sampled_from([None, 1.5, True, "2", np.int64(1)])))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)  # dependent atoms are legitimate here
            A = omp(X, D, k, nonneg=True)
    except (TypeError, ValueError):
        return
    assert A.shape == (n_samples, n_atoms)
    assert np.all(np.isfinite(A)) and np.all(A >= 0.0)
    assert np.all(np.count_nonzero(A, axis=1) <= k)
    # s = 0 is feasible, so NNLS never does worse than the zero code (up to rounding)
    res = np.linalg.norm(X - A @ D, axis=1)
    assert np.all(res <= np.linalg.norm(X, axis=1) * (1 + 1e-9) + 1e-300)


# Two problems (found by a search over 40,000 random ones with strongly correlated atoms) where the NNLS re-fit
# must *interpolate*: a passive coefficient would turn negative, so Lawson & Hanson (1974, Alg. 23.10 steps 8-11)
# move towards the unconstrained solution only until the first coefficient reaches 0. Jumping the whole way and
# clipping instead cycles until the re-fit's iteration cap (status OMP_NNLS_FAILED) with a worse code.
INTERPOLATING = [
    (np.array([[0.11046806338180361, -0.3637938176162429, -0.12412091341135859, -0.9165396140324779],
               [-0.7796751533946664, -0.0706345001329968, 0.23660809897477686, -0.5754424646039838],
               [0.6093171824859724, 0.3681847941646826, -0.4755940960771077, -0.5167037683720388],
               [-0.1731566254544087, -0.1926820269676527, 0.5035444304360532, -0.8242168562470129],
               [-0.6022569302868799, -0.6663747182920884, 0.42733963760607774, -0.1030153331949679],
               [-0.1630942137564547, 0.8410038957304591, -0.354570757395746, 0.37468960861646805],
               [0.4937595163386209, 0.8658001129690063, 0.035068057933005624, -0.07322523964258763]]),
     np.array([-2.325183515355687, -1.2671730123269844, -1.6838518230390076, 0.6819231621794273])),
    (np.array([[-0.7785273865833056, -0.18411303915784055, -0.5247928407442626, 0.2908435515107717],
               [-0.8418300813473896, 0.07116250499748357, 0.09706563047777106, -0.5261523309851277],
               [-0.19305154241115163, 0.6709959873993018, 0.3278633680895272, -0.6363969663124602],
               [-0.5198184840295855, -0.7432967552343073, 0.41489099334965596, -0.07186195764568076],
               [0.106052524767348, -0.8361558741234145, 0.4521063424018562, -0.29188366058996057],
               [-0.1805668369835345, 0.9369745522608587, -0.18238156765733426, -0.23708915955011145],
               [0.07372091612908258, -0.2408776422984128, -0.8956390071841648, 0.366570534516906]]),
     np.array([0.7346934850024853, 0.10426262269302017, -1.6904576688334392, -0.6551271822916865])),
]


@pytest.mark.parametrize("case", range(len(INTERPOLATING)))
def test_the_nnls_refit_interpolates_where_a_coefficient_would_turn_negative(case):
    D, x = INTERPOLATING[case]
    A, status, failed = kernel(x[None], D, 4)
    assert failed == 0 and status[0] in (OMP_OK, OMP_EXACT)
    want, support = reference(x, D, 4)
    np.testing.assert_allclose(A[0], want, rtol=0, atol=1e-10 * np.abs(want).max())
    # and the code is the NNLS optimum on its support (a Kuhn-Tucker point of the re-fit)
    coef, rnorm = nnls(D[support].T, x)
    np.testing.assert_allclose(np.linalg.norm(x - A[0] @ D), rnorm, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(omp(x[None], D, 4, nonneg=True), A)
