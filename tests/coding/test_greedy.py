"""OMP against scikit-learn, k winners against hand-made cases and a stable sort."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp, orthogonal_mp_gram

from neurosim.coding import NonConvergenceWarning, k_winners, omp, sparse_encode
from neurosim.kernels.greedy import OMP_EXACT, OMP_OK, k_winners_codes, omp_codes


def problem(n_features, n_atoms, n_samples, seed):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    return rng.standard_normal((n_samples, n_features)), D


@pytest.mark.parametrize("shape", [(12, 30), (30, 12), (16, 16), (196, 512), (500, 200)])
@pytest.mark.parametrize("k", [1, 4, 10])
def test_omp_matches_sklearn(shape, k):
    X, D = problem(*shape, 6, seed=shape[0] + shape[1] + k)
    A = omp(X, D, k)
    B = orthogonal_mp_gram(D @ D.T, (X @ D.T).T, n_nonzero_coefs=k).T
    np.testing.assert_allclose(A, B, atol=1e-10)
    B2 = orthogonal_mp(D.T, X.T, n_nonzero_coefs=k).T
    np.testing.assert_allclose(A, B2, atol=1e-9)
    assert np.all(np.count_nonzero(A, axis=1) == k)


def test_omp_unnormalised_atoms_and_full_support():
    rng = np.random.default_rng(3)
    X, D = problem(10, 25, 5, seed=4)
    D = D * rng.uniform(0.2, 5.0, size=(25, 1))
    A = omp(X, D, 10)
    B = orthogonal_mp_gram(D @ D.T, (X @ D.T).T, n_nonzero_coefs=10).T
    np.testing.assert_allclose(A, B, atol=1e-9)
    # 10 independent atoms in R^10 reconstruct exactly.
    np.testing.assert_allclose(A @ D, X, atol=1e-9)


def test_omp_exact_representation_stops_early_without_warning():
    _, D = problem(8, 20, 1, seed=5)
    x = 2.0 * D[3] - 0.5 * D[11]
    G, C = D @ D.T, (x @ D.T)[None, :]
    A = np.zeros_like(C)
    status = np.full(1, -1, dtype=np.int64)
    assert omp_codes(G, C, 5, A, status) == 0
    assert status[0] == OMP_EXACT
    expected = np.zeros(20)
    expected[[3, 11]] = [2.0, -0.5]
    np.testing.assert_allclose(A[0], expected, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        np.testing.assert_allclose(omp(x, D, 5), expected, atol=1e-12)
    X, D = problem(8, 20, 3, seed=6)
    status = np.full(3, -1, dtype=np.int64)
    omp_codes(D @ D.T, X @ D.T, 5, np.zeros((3, 20)), status)
    assert np.all(status == OMP_OK)


def test_omp_duplicated_atoms():
    # A duplicate of a selected atom has zero correlation with the residual,
    # so it is never selected: same codes as without the copies.
    X, D = problem(15, 20, 4, seed=7)
    D2 = np.vstack([D, D[:5]])
    A2 = omp(X, D2, 6)
    np.testing.assert_allclose(A2[:, :20], omp(X, D, 6), atol=1e-10)
    assert np.all(A2[:, 20:] == 0)


def test_k_winners_hand_cases():
    D = np.eye(5)
    x = np.array([0.5, -3.0, 2.0, 2.0, -0.1])
    np.testing.assert_array_equal(k_winners(x, D, 2), [0, -3.0, 2.0, 0, 0])
    # ties on |c| = 2 broken by the lowest index
    np.testing.assert_array_equal(k_winners(x, D, 2, absolute=False), [0, 0, 2.0, 2.0, 0])
    np.testing.assert_array_equal(k_winners(x, D, 1, absolute=False), [0, 0, 2.0, 0, 0])
    np.testing.assert_array_equal(k_winners(x, D, 3, absolute=False), [0.5, 0, 2.0, 2.0, 0])
    # nonneg ranks by value; non-positive winners stay silent
    np.testing.assert_array_equal(k_winners(x, D, 4, nonneg=True), [0.5, 0, 2.0, 2.0, 0])
    np.testing.assert_array_equal(k_winners(-x, D, 2, nonneg=True), [0, 3.0, 0, 0, 0.1])
    np.testing.assert_array_equal(k_winners(x, D, 5), x)
    # all equal: the first k atoms win
    np.testing.assert_array_equal(k_winners(np.ones(5), D, 3), [1, 1, 1, 0, 0])
    # non-identity dictionary: the code is built from D x
    D2 = np.array([[1.0, 1.0], [1.0, -1.0], [0.0, 2.0]])
    np.testing.assert_array_equal(k_winners(np.array([1.0, 2.0]), D2, 1), [0, 0, 4.0])
    np.testing.assert_array_equal(k_winners(np.array([1.0, 2.0]), D2, 2, absolute=False), [3.0, 0, 4.0])


@pytest.mark.parametrize("absolute", [True, False])
@pytest.mark.parametrize("nonneg", [True, False])
def test_k_winners_matches_stable_sort(absolute, nonneg):
    rng = np.random.default_rng(8)
    C = rng.integers(-4, 5, size=(50, 30)).astype(float)  # many ties
    for k in (1, 5, 29, 30):
        A = np.zeros_like(C)
        k_winners_codes(C, k, A, absolute, nonneg)
        score = C if (nonneg or not absolute) else np.abs(C)
        idx = np.argsort(-score, axis=1, kind="stable")[:, :k]
        expected = np.zeros_like(C)
        np.put_along_axis(expected, idx, np.take_along_axis(C, idx, axis=1), axis=1)
        if nonneg:
            expected = np.maximum(expected, 0.0)
        np.testing.assert_array_equal(A, expected)


def test_sparse_encode_dispatch():
    X, D = problem(10, 20, 3, seed=9)
    np.testing.assert_array_equal(sparse_encode(X, D, "omp", n_nonzero=3), omp(X, D, 3))
    np.testing.assert_array_equal(
        sparse_encode(X, D, "k_winners", n_nonzero=3, absolute=False), k_winners(X, D, 3, absolute=False)
    )


@pytest.mark.parametrize("scale", [1e-10, 1e-5, 1.0, 1e5, 1e10])
def test_omp_is_scale_invariant(scale):
    # The "negligible correlation" stop is relative to the initial correlations:
    # an absolute threshold coded small-scale signals (or dictionaries) as zero.
    rng = np.random.default_rng(11)
    D = rng.standard_normal((8, 5))
    X = rng.standard_normal((3, 5))
    ref = omp(X, D, 2)
    assert np.all(np.count_nonzero(ref, axis=1) == 2)
    A = omp(X * scale, D, 2)
    assert np.array_equal(A != 0, ref != 0)
    np.testing.assert_allclose(A, scale * ref, rtol=1e-9, atol=0)
    B = omp(X, D * scale, 2)
    assert np.array_equal(B != 0, ref != 0)
    np.testing.assert_allclose(B, ref / scale, rtol=1e-9, atol=0)
    C = omp(X * scale, D * scale, 2)
    assert np.array_equal(C != 0, ref != 0)
    np.testing.assert_allclose(C, ref, rtol=1e-9, atol=0)
