"""Bad input to the public encoders: only TypeError/ValueError, with useful messages."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples

from neurosim.coding import feature_sign, k_winners, lambda_for_count, omp, sparse_encode


D_OK = np.random.default_rng(0).standard_normal((6, 4))
X_OK = np.random.default_rng(1).standard_normal((3, 4))

CALLS = {
    "feature_sign": lambda X, D, p: feature_sign(X, D, p, max_iter=200),
    "feature_sign_nonneg": lambda X, D, p: feature_sign(X, D, p, nonneg=True, max_iter=200),
    "omp": lambda X, D, p: omp(X, D, p),
    "omp_nonneg": lambda X, D, p: omp(X, D, p, nonneg=True),
    "k_winners": lambda X, D, p: k_winners(X, D, p),
    "lambda_for_count": lambda X, D, p: lambda_for_count(X, D, p, max_bisect=20, return_codes=True),
    "sparse_encode": lambda X, D, p: sparse_encode(X, D, "feature_sign", n_nonzero=p),
}

floats_any = st.floats(allow_nan=True, allow_infinity=True, width=64)
hostile_arrays = st.one_of(
    hnp.arrays(
        dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.bool_, np.complex128]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
        elements=None,
    ),
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=6), elements=floats_any),
    st.lists(st.one_of(floats_any, st.integers(-5, 5)), max_size=6),
    st.lists(st.lists(st.floats(-10, 10), min_size=0, max_size=5), max_size=4),  # maybe ragged
    st.sampled_from([None, "abc", 3, 2.5, object(), [[1, "a"]], {"a": 1}]),
)
hostile_params = st.one_of(
    st.integers(-3, 12),
    floats_any,
    st.sampled_from([None, "1", True, np.float64(np.nan), np.int64(2), [1, 2], np.array([0.1, 0.2, 0.3])]),
)

ALLOWED = (TypeError, ValueError)

#: hostile draws may be degenerate (a zero signal asked for a nonzero count): a NonConvergenceWarning is a
#: correct answer there; what the hostile tests assert is a clean error or finite codes
DEGENERATE_DRAWS_MAY_WARN = pytest.mark.filterwarnings("ignore::neurosim.coding.NonConvergenceWarning")


def call_checked(name, X, D, p):
    try:
        out = CALLS[name](X, D, p)
    except ALLOWED:
        return None
    out = out[1] if isinstance(out, tuple) else out
    assert np.all(np.isfinite(out))
    return out


@DEGENERATE_DRAWS_MAY_WARN
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CALLS)), X=hostile_arrays, D=hostile_arrays, p=hostile_params)
def test_hostile_everything(name, X, D, p):
    call_checked(name, X, D, p)


@DEGENERATE_DRAWS_MAY_WARN
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CALLS)), X=hostile_arrays, p=hostile_params)
def test_hostile_signals_valid_dictionary(name, X, p):
    call_checked(name, X, D_OK, p)


@DEGENERATE_DRAWS_MAY_WARN
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CALLS)), D=hostile_arrays, p=hostile_params)
def test_hostile_dictionary_valid_signals(name, D, p):
    call_checked(name, X_OK, D, p)


# degenerate draws legitimately warn (a count not reachable, dependent atoms)
@pytest.mark.filterwarnings("ignore::neurosim.coding.NonConvergenceWarning")
@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(CALLS)),
    X=hnp.arrays(np.float64, st.tuples(st.integers(0, 4), st.just(4)), elements=st.floats(-1e6, 1e6)),
    D=hnp.arrays(np.float64, (5, 4), elements=st.floats(-1e3, 1e3)),
    p=st.integers(1, 4),
)
def test_finite_inputs_give_finite_codes_or_clean_errors(name, X, D, p):
    # Valid shapes with arbitrary finite values (zeros, duplicates, huge
    # ranges): the only allowed error is the zero-atom ValueError.
    out = call_checked(name, X, D, p if name not in ("feature_sign", "feature_sign_nonneg") else float(p))
    if out is not None:
        assert out.shape == (X.shape[0], 5)


def test_messages_name_argument_and_range():
    with pytest.raises(ValueError, match=r"lam must be in \[0.0, inf\)"):
        feature_sign(X_OK, D_OK, -0.1)
    with pytest.raises(ValueError, match="lam must be finite"):
        feature_sign(X_OK, D_OK, np.nan)
    with pytest.raises(ValueError, match=r"lam must be in \[0.0, inf\)"):
        feature_sign(X_OK, D_OK, np.array([0.1, -1.0, 0.2]))
    with pytest.raises(ValueError, match=r"lam must be a scalar or have shape \(3,\)"):
        feature_sign(X_OK, D_OK, np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match=r"X must have n_features = 4"):
        feature_sign(np.ones((3, 5)), D_OK, 0.1)
    with pytest.raises(ValueError, match="X must contain only finite"):
        feature_sign(np.full((2, 4), np.nan), D_OK, 0.1)
    with pytest.raises(ValueError, match="D must contain only finite"):
        omp(X_OK, np.full((6, 4), np.inf), 2)
    with pytest.raises(ValueError, match="D must have 2 dimensions"):
        omp(X_OK, np.ones(4), 2)
    D0 = D_OK.copy()
    D0[2] = 0.0
    with pytest.raises(ValueError, match=r"D must have no all-zero rows.*\[2\]"):
        feature_sign(X_OK, D0, 0.1)
    with pytest.raises(ValueError, match=r"n_nonzero must be in \[1, 4\]"):
        omp(X_OK, D_OK, 5)
    with pytest.raises(ValueError, match=r"n_nonzero must be in \[1, 4\]"):
        lambda_for_count(X_OK, D_OK, 0)
    with pytest.raises(ValueError, match=r"k must be in \[1, 6\]"):
        k_winners(X_OK, D_OK, 7)
    with pytest.raises(TypeError, match="k must be an integer"):
        k_winners(X_OK, D_OK, 2.0)
    with pytest.raises(ValueError, match=r"init must have shape \(3, 6\)"):
        feature_sign(X_OK, D_OK, 0.1, init=np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"max_iter must be in \[1, inf\)"):
        feature_sign(X_OK, D_OK, 0.1, max_iter=0)
    with pytest.raises(ValueError, match=r"tol must be in \(0.0, 1.0\)"):
        feature_sign(X_OK, D_OK, 0.1, tol=0.0)
    with pytest.raises(ValueError, match="exactly one of lam"):
        sparse_encode(X_OK, D_OK)
    with pytest.raises(ValueError, match="exactly one of lam"):
        sparse_encode(X_OK, D_OK, lam=0.1, n_nonzero=2)
    with pytest.raises(ValueError, match="method must be one of"):
        sparse_encode(X_OK, D_OK, "lars", lam=0.1)
    with pytest.raises(ValueError, match="needs n_nonzero"):
        sparse_encode(X_OK, D_OK, "omp")
    with pytest.raises(ValueError, match="overflows"):
        feature_sign(np.full((1, 4), 1e300), D_OK * 1e10, 0.1)
    with pytest.raises(TypeError, match="X must be a numeric array"):
        feature_sign([["a", "b", "c", "d"]], D_OK, 0.1)
    with pytest.raises(TypeError, match="nonneg must be a bool"):
        feature_sign(X_OK, D_OK, 0.1, nonneg=1)


def test_lists_ints_and_empty_batches_are_accepted():
    Xl = [[1, 0, 0, 0], [0, 2, 0, 0]]
    Dl = [[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]]
    A = feature_sign(Xl, Dl, 0.0)
    np.testing.assert_allclose(A @ np.array(Dl, float), Xl, atol=1e-10)
    assert feature_sign(np.zeros((0, 4)), D_OK, 0.1).shape == (0, 6)
    assert omp(np.zeros((0, 4)), D_OK, 2).shape == (0, 6)
    assert k_winners(np.zeros((0, 4)), D_OK, 2).shape == (0, 6)
    assert lambda_for_count(np.zeros((0, 4)), D_OK, 2).shape == (0,)


@pytest.mark.parametrize("method,kw", [("omp", {"n_nonzero": 2}), ("k_winners", {"n_nonzero": 2}),
                                       ("feature_sign", {"lam": 0.1})])
def test_sparse_encode_checks_every_option_whatever_the_method(method, kw):
    # out-of-range values are refused by name even where the option is not used
    with pytest.raises(ValueError, match=r"max_iter must be in \[1, inf\)"):
        sparse_encode(X_OK, D_OK, method, max_iter=-5, **kw)
    with pytest.raises(ValueError, match=r"tol must be in \(0.0, 1.0\)"):
        sparse_encode(X_OK, D_OK, method, tol=2.0, **kw)
    with pytest.raises(TypeError, match="absolute must be a bool"):
        sparse_encode(X_OK, D_OK, method, absolute=1, **kw)
    with pytest.raises(TypeError, match="nonneg must be a bool"):
        sparse_encode(X_OK, D_OK, method, nonneg="yes", **kw)


@pytest.mark.parametrize("method,kw,option", [
    ("k_winners", {"max_iter": 50}, "max_iter"),
    ("k_winners", {"tol": 1e-6}, "tol"),
    ("omp", {"max_iter": 50}, "max_iter"),
    ("omp", {"absolute": False}, "absolute"),
    ("omp", {"lam": 0.1}, "lam"),
])
def test_sparse_encode_rejects_options_the_method_does_not_use(method, kw, option):
    with pytest.raises(ValueError, match=rf"option\(s\) {option} not used by method='{method}'"):
        sparse_encode(X_OK, D_OK, method, n_nonzero=2, **kw)
    with pytest.raises(ValueError, match=r"option\(s\) absolute not used by method='feature_sign'"):
        sparse_encode(X_OK, D_OK, lam=0.1, absolute=False)
