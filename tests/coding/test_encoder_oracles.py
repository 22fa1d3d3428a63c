"""Encoder and basis-learning checks with oracles that other tests leave implicit."""

import warnings

import numpy as np
import pytest

from neurosim.coding import NonConvergenceWarning, feature_sign, lambda_for_count, sparse_encode
from neurosim.coding.basis import learn_bases, sparse_coding_objective


def _problem(seed, n_features=10, n_atoms=20, n_samples=6):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    return rng.standard_normal((n_samples, n_features)), D


def test_sparse_encode_with_lam_is_feature_sign():
    X, D = _problem(0)
    A = sparse_encode(X, D, "feature_sign", lam=0.3)
    assert A is not None and A.shape == (6, 20)
    np.testing.assert_array_equal(A, feature_sign(X, D, 0.3))
    assert np.count_nonzero(A) > 0


def test_lambda_for_count_hits_the_count_without_warning():
    # Random atoms in general position: the lasso path adds one atom at a time, so every
    # count up to the dimension is reached by some lambda and none is reported missed.
    X, D = _problem(1)
    for k in (1, 3, 5):
        with warnings.catch_warnings():
            warnings.simplefilter("error", NonConvergenceWarning)
            lam, A = lambda_for_count(X, D, k, return_codes=True)
        assert np.all(np.count_nonzero(A, axis=1) == k), k
        assert np.all(lam > 0.0)


def test_lars_coder_solves_the_same_lasso_as_feature_sign():
    pytest.importorskip("sklearn")
    # Both coders solve min 0.5 ||x - D^T a||^2 + lam ||a||_1 exactly, so from the same start
    # the learners take the same steps up to the solvers' tolerances; the epsilon-L1 coder
    # solves a smoothed problem whose objective differs by far more than 1e-6 here.
    rng = np.random.default_rng(13)
    D0 = rng.standard_normal((8, 10))
    A0 = rng.laplace(size=(40, 8)) * (rng.random((40, 8)) < 0.25)
    X = A0 @ D0 + 0.05 * rng.standard_normal((40, 10))
    kw = dict(basis="dual", max_iter=3, tol=0.0, seed=3)
    lars = learn_bases(X, 8, 0.2, coder="lars", **kw)
    fs = learn_bases(X, 8, 0.2, coder="feature_sign", **kw)
    np.testing.assert_allclose(lars.objective, fs.objective, rtol=1e-6)
    np.testing.assert_allclose(lars.codes, fs.codes, atol=1e-5)
    # the lasso codes are exactly sparse and their objective is the plain L1 one
    assert np.mean(lars.codes == 0.0) > 0.3
    f = sparse_coding_objective(X, lars.components, lars.codes, 0.2, "l1")
    assert f == pytest.approx(lars.objective[-1], rel=1e-12)


def test_basis_solvers_refuse_empty_data():
    from neurosim.coding.basis import lagrange_dual_bases

    with pytest.raises(ValueError, match="non-empty"):
        lagrange_dual_bases(np.zeros((0, 4)), np.zeros((0, 3)))
    with pytest.raises(ValueError, match="non-empty"):
        lagrange_dual_bases(np.ones((5, 0)), np.ones((5, 3)))


def test_lagrange_dual_counts_newton_steps_and_none_from_the_optimum():
    from neurosim.coding.basis import lagrange_dual_bases

    rng = np.random.default_rng(5)
    A = rng.laplace(size=(60, 6)) * (rng.random((60, 6)) < 0.5)
    X = A @ rng.standard_normal((6, 9)) + 0.1 * rng.standard_normal((60, 9))
    D, dual, n = lagrange_dual_bases(X, A, tol=1e-8, return_n_iter=True)
    assert n >= 1
    # started at its own optimum the solver is converged before any step: 0 iterations, same bases
    D2, dual2, n2 = lagrange_dual_bases(X, A, tol=1e-8, dual_init=dual, return_n_iter=True)
    assert n2 == 0
    np.testing.assert_allclose(D2, D, rtol=1e-12, atol=1e-14)


def test_lambda_for_count_is_scale_free_and_zero_signals_report_a_miss():
    # The lasso with (s x, s lam) has the codes s a: the count search must find the same supports and
    # lambdas s lam for tiny signals (correlations far below 1) as for the originals.
    X, D = _problem(1)
    lam, A = lambda_for_count(X, D, 3, return_codes=True)
    for s in (1e-3, 1e3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", NonConvergenceWarning)
            lam_s, A_s = lambda_for_count(s * X, D, 3, return_codes=True)
        np.testing.assert_array_equal(A_s != 0.0, A != 0.0)
        np.testing.assert_allclose(lam_s, s * lam, rtol=1e-6)
    # a zero signal has no lambda that gives 3 nonzeros: lambda 0, the all-zero code, a warning
    X0 = X.copy()
    X0[0] = 0.0
    with pytest.warns(NonConvergenceWarning):
        lam0, A0 = lambda_for_count(X0, D, 3, return_codes=True)
    assert lam0[0] == 0.0 and not A0[0].any()
    np.testing.assert_array_equal(A0[1:] != 0.0, A[1:] != 0.0)
