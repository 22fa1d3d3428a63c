"""scikit-learn compatibility and correctness of neurosim.estimators."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.decomposition import sparse_encode as sk_sparse_encode  # noqa: E402
from sklearn.linear_model import Lasso  # noqa: E402
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks  # noqa: E402

from neurosim.coding.basis import lagrange_dual_bases, sparse_coding_objective  # noqa: E402
from neurosim.estimators import DictionaryLearner, SparseCoder, _online_dictionary_update  # noqa: E402

_rng = np.random.RandomState(0)

# A SparseCoder's dictionary fixes n_features, while the common checks use
# data of several widths.  scikit-learn tests its own SparseCoder with one
# dictionary per check (sklearn/utils/_test_common/instance_generator.py,
# PER_ESTIMATOR_CHECK_PARAMS); we mirror that table.
_SPARSE_CODER_WIDTH = {
    "check_estimators_dtypes": 5,
    "check_dtype_object": 10,
    "check_transformers_unfitted_stateless": 5,
    "check_fit_idempotent": 2,
    "check_set_output_transform": 5,
    "check_global_output_transform_pandas": 5,
    "check_set_output_transform_pandas": 5,
    "check_set_output_transform_polars": 5,
    "check_global_set_output_transform_polars": 5,
    "check_dataframe_column_names_consistency": 8,
    "check_estimators_overwrite_params": 2,
    "check_estimators_fit_returns_self": 2,
    "check_readonly_memmap_input": 2,
    "check_n_features_in_after_fitting": 4,
    "check_fit_check_is_fitted": 2,
    "check_n_features_in": 2,
    "check_positive_only_tag_during_fit": 4,
    "check_fit2d_1sample": 10,
    "check_fit2d_1feature": 1,
    "check_array_api_input": 10,
}


def _check_name(check):
    return getattr(check, "func", check).__name__


def _sparse_coder_checks():
    """(estimator, check) pairs: each check on the coder of the width it needs."""
    coders = {w: SparseCoder(dictionary=_rng.normal(size=(5, w)))
              for w in sorted({3, *_SPARSE_CODER_WIDTH.values()})}
    for width, coder in coders.items():
        for est, check in estimator_checks_generator(coder):
            if _SPARSE_CODER_WIDTH.get(_check_name(check), 3) == width:
                yield pytest.param(est, check, id=f"SparseCoder(width={width})-{_check_name(check)}")


@pytest.mark.parametrize("estimator,check", list(_sparse_coder_checks()))
def test_sparse_coder_passes_check_estimator(estimator, check):
    check(estimator)


@parametrize_with_checks([DictionaryLearner(n_components=4, max_iter=20, random_state=0)])
def test_dictionary_learner_passes_check_estimator(estimator, check):
    check(estimator)


def _data(seed=0, n_samples=60, n_features=8, n_atoms=12):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    A = rng.laplace(size=(n_samples, n_atoms)) * (rng.random((n_samples, n_atoms)) < 0.2)
    return A @ D + 0.05 * rng.standard_normal((n_samples, n_features)), D


def test_sparse_coder_feature_sign_equals_sklearn_lasso():
    X, D = _data()
    for alpha in (0.05, 0.3):
        code = SparseCoder(D, transform_alpha=alpha).fit_transform(X)
        # sparse_encode(algorithm="lasso_cd") is this Lasso at its default
        # tol=1e-4, which older scikit-learn releases stop far from the optimum
        # (3e-3 off with 1.6); a converged Lasso is the oracle on every version.
        ref = Lasso(alpha=alpha / X.shape[1], fit_intercept=False, tol=1e-12, max_iter=100000).fit(D.T, X.T).coef_
        f = sparse_coding_objective(X, D, code, alpha)
        f_ref = sparse_coding_objective(X, D, ref, alpha)
        assert f <= f_ref + 1e-9 * abs(f_ref)
        np.testing.assert_allclose(code, ref, atol=1e-8)


def test_sparse_coder_omp_and_options():
    X, D = _data(1)
    code = SparseCoder(D, transform_algorithm="omp", transform_n_nonzero_coefs=3).transform(X)
    ref = sk_sparse_encode(X, D, algorithm="omp", n_nonzero_coefs=3)
    np.testing.assert_allclose(code, ref, atol=1e-8)
    assert np.all(np.count_nonzero(code, axis=1) <= 3)
    kw = SparseCoder(D, transform_algorithm="k_winners", transform_n_nonzero_coefs=2).transform(X)
    assert np.all(np.count_nonzero(kw, axis=1) <= 2)
    pos = SparseCoder(D, transform_alpha=0.1, positive_code=True).transform(X)
    assert pos.min() >= 0
    coder = SparseCoder(D, transform_alpha=0.1, split_sign=True)
    split = coder.transform(X)
    plain = SparseCoder(D, transform_alpha=0.1).transform(X)
    assert split.shape == (X.shape[0], 2 * D.shape[0]) and split.min() >= 0
    np.testing.assert_allclose(coder.inverse_transform(split), plain @ D)
    with pytest.raises(ValueError, match="transform_algorithm must be one of"):
        SparseCoder(D, transform_algorithm="lasso_lars").transform(X)
    with pytest.raises(ValueError, match="transform_alpha must be in"):
        SparseCoder(D, transform_alpha=-1.0).transform(X)
    with pytest.raises(ValueError, match="features but the dictionary has"):
        SparseCoder(D).fit(X[:, :3])


def test_dictionary_learner_fit_matches_learn_bases_and_is_a_stationary_point():
    X, _ = _data(2)
    est = DictionaryLearner(n_components=12, alpha=0.1, tol=1e-6, random_state=0).fit(X)
    D = est.components_
    assert D.shape == (12, 8) and np.all(np.sum(D * D, axis=1) <= 1 + 1e-9)
    assert est.n_iter_ == len(est.error_) - 1
    assert np.all(np.diff(est.error_) <= 1e-10 * est.error_[1:])
    code = est.transform(X)
    assert sparse_coding_objective(X, D, code, 0.1) == pytest.approx(est.error_[-1], rel=1e-9)
    # at convergence the atoms are (nearly) optimal for the codes: Eq. 6 by the dual
    D_opt, _ = lagrange_dual_bases(X, code, 1.0)
    f = sparse_coding_objective(X, D, code, 0.1)
    f_opt = sparse_coding_objective(X, D_opt, code, 0.1)
    assert f_opt <= f and f - f_opt <= 1e-4 * f


def test_online_dictionary_update_solves_the_surrogate_exactly():
    """Mairal et al.'s block-coordinate update and the Lagrange dual solve the same problem."""
    X, _ = _data(3)
    rng = np.random.default_rng(0)
    A = rng.laplace(size=(60, 12)) * (rng.random((60, 12)) < 0.4)
    G, C = A.T @ A, A.T @ X
    for c in (0.3, 1.0):
        D0 = rng.standard_normal((12, 8)) * 0.1
        D_bcd = _online_dictionary_update(D0.copy(), G, C, c, sweeps=20000, tol=1e-14)
        D_dual, _ = lagrange_dual_bases(X, A, c)
        np.testing.assert_allclose(D_bcd, D_dual, atol=1e-7)


def test_partial_fit_recursion():
    X, _ = _data(4, n_samples=200)
    est = DictionaryLearner(n_components=12, alpha=0.1, random_state=0, dict_update_iter=50)
    f_start = None
    for batch in np.array_split(X, 10):
        est.partial_fit(batch)
        if f_start is None:
            f_start = sparse_coding_objective(X, est.components_, est.transform(X), 0.1)
    assert est.n_steps_ == 10
    assert est._A.shape == (12, 12) and est._B.shape == (12, 8)
    f_end = sparse_coding_objective(X, est.components_, est.transform(X), 0.1)
    assert f_end < f_start
    assert np.all(np.sum(est.components_**2, axis=1) <= 1 + 1e-9)
    # partial_fit after fit continues from the batch statistics and keeps the fit
    est2 = DictionaryLearner(n_components=12, alpha=0.1, random_state=0).fit(X)
    f_fit = sparse_coding_objective(X, est2.components_, est2.transform(X), 0.1)
    est2.partial_fit(X[:20])
    f_after = sparse_coding_objective(X, est2.components_, est2.transform(X), 0.1)
    assert f_after <= f_fit * 1.01
    with pytest.raises(ValueError, match="X has 3 features"):
        est2.partial_fit(X[:5, :3])


def test_partial_fit_sufficient_statistics_follow_the_recursion():
    """A_t = rho A_{t-1} + C_t^T C_t and B_t = rho B_{t-1} + C_t^T X_t (Mairal et al. 2009),
    with C_t the feature-sign codes of batch t against the atoms before the update."""
    from neurosim.coding.encoders import feature_sign

    X, D0 = _data(6, n_samples=40)
    b1, b2 = X[:20], X[20:]
    est = DictionaryLearner(n_components=12, alpha=0.1, dict_init=D0, forget_factor=0.5)
    est.partial_fit(b1)
    c1 = feature_sign(b1, D0, 0.1)
    np.testing.assert_allclose(est._A, c1.T @ c1, atol=1e-10)
    np.testing.assert_allclose(est._B, c1.T @ b1, atol=1e-10)
    D1 = est.components_.copy()
    assert not np.allclose(D1, D0)
    est.partial_fit(b2)
    c2 = feature_sign(b2, D1, 0.1)
    np.testing.assert_allclose(est._A, 0.5 * c1.T @ c1 + c2.T @ c2, atol=1e-10)
    np.testing.assert_allclose(est._B, 0.5 * c1.T @ b1 + c2.T @ b2, atol=1e-10)


@pytest.mark.parametrize(
    "params,exc,match",
    [
        ({"n_components": 0}, ValueError, "n_components must be in"),
        ({"alpha": -1.0}, ValueError, "alpha must be in"),
        ({"norm_bound": 0.0}, ValueError, "norm_bound must be in"),
        ({"fit_algorithm": "cd"}, ValueError, "fit_algorithm must be one of"),
        ({"forget_factor": 1.5}, ValueError, "forget_factor must be in"),
        ({"dict_init": np.ones((3, 3))}, ValueError, "dict_init must have shape"),
    ],
)
def test_dictionary_learner_validation(params, exc, match):
    X, _ = _data(5)
    with pytest.raises(exc, match=match):
        DictionaryLearner(**params).fit(X)


def test_dict_init_with_a_zero_atom_is_refused_by_name():
    X, _ = _data(5)
    D0 = np.zeros((X.shape[1], X.shape[1]))
    with pytest.raises(ValueError, match=r"dict_init must have no all-zero rows"):
        DictionaryLearner(dict_init=D0).fit(X)
    with pytest.raises(ValueError, match=r"dict_init must have no all-zero rows"):
        DictionaryLearner(dict_init=D0).partial_fit(X)


@pytest.mark.parametrize("algorithm", ["omp", "k_winners"])
def test_too_many_nonzero_coefs_are_refused_by_name(algorithm):
    # Both count encoders refuse a count they cannot honour (k winners used to clip it silently).
    X, D = _data(1)
    n_atoms, n_features = D.shape
    high = n_atoms if algorithm == "k_winners" else min(n_atoms, n_features)
    match = rf"transform_n_nonzero_coefs must be in \[1, {high}\]"
    coder = SparseCoder(D, transform_algorithm=algorithm, transform_n_nonzero_coefs=high + 1)
    with pytest.raises(ValueError, match=match):
        coder.fit(X)
    with pytest.raises(ValueError, match=match):
        coder.transform(X)
    assert SparseCoder(D, transform_algorithm=algorithm, transform_n_nonzero_coefs=high).transform(X).shape == (
        X.shape[0], n_atoms)
    learner = DictionaryLearner(n_components=3, transform_algorithm=algorithm, transform_n_nonzero_coefs=4, max_iter=2)
    with pytest.raises(ValueError, match=r"transform_n_nonzero_coefs must be in \[1, 3\]"):
        learner.fit(X)


# -- huge inputs (issue 23) -----------------------------------------------------------------------------
# Every estimator refuses, with one message naming X, an input whose squared norms overflow (as
# OnlineStructuredDictionaryLearner always did), instead of returning all-zero codes; the batch
# learner's Lagrange-dual basis solve, which multiplies squared norms, refuses X whose fourth powers
# overflow instead of failing on a "D" the user never passed.

_HUGE = "X values are too large: squared norms overflow float64; rescale X"


def _huge_estimators():
    from neurosim.estimators import NeurogenesisDictionaryLearner, OnlineStructuredDictionaryLearner

    D = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))[0][:4]
    return [SparseCoder(D), DictionaryLearner(n_components=4, random_state=0),
            NeurogenesisDictionaryLearner(n_components=4, batch_size=5, random_state=0),
            OnlineStructuredDictionaryLearner(n_components=4, batch_size=5, random_state=0)]


@pytest.mark.slow  # fits all four estimators three times (about 25 s cold); the quick tier keeps the 1e100-1e154 cases below
@pytest.mark.parametrize("scale", [1e155, 1e200, 1e300])
def test_every_estimator_refuses_X_whose_squares_overflow(scale):
    X = np.random.default_rng(1).standard_normal((10, 6))
    for est in _huge_estimators():
        with pytest.raises(ValueError, match=_HUGE):
            est.fit(X * scale)
        est.fit(X)  # fitted on sane data, transform and score refuse too
        with pytest.raises(ValueError, match=_HUGE):
            est.transform(X * scale)
        if hasattr(est, "score"):
            with pytest.raises(ValueError, match=_HUGE):
                est.score(X * scale)
        if hasattr(est, "partial_fit"):
            with pytest.raises(ValueError, match=_HUGE):
                est.partial_fit(X * scale)


@pytest.mark.parametrize("scale", [1e100, 1e120, 1e154])
def test_dictionary_learner_names_X_not_D_for_large_inputs(scale):
    X = np.random.default_rng(1).standard_normal((10, 6)) * scale
    with pytest.raises(ValueError, match=r"X values are too large: .* overflow float64; rescale X") as info:
        DictionaryLearner(n_components=4, random_state=0).fit(X)
    assert "D " not in str(info.value)


def test_large_but_representable_inputs_still_work():
    from neurosim.estimators import NeurogenesisDictionaryLearner

    X = np.random.default_rng(1).standard_normal((20, 6))
    for scale in (1e60, 1e120):
        nodl = NeurogenesisDictionaryLearner(n_components=4, batch_size=5, random_state=0).fit(X * scale)
        assert np.count_nonzero(nodl.transform(X * scale)) > 0
        # the Pearson accuracy is scale-free: not 0.0 from an overflowing denominator
        assert nodl.score(X * scale) > 0.5
    dl = DictionaryLearner(n_components=4, random_state=0, basis_algorithm="gradient").fit(X * 1e120)
    assert np.count_nonzero(dl.transform(X * 1e120)) > 0
