"""Goodness measures (Tsuchida & Cottrell 2015, Eq. 9-13) and activity equalization (Alg. 1 step 4b)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples

from neurosim.kernels import selection as K
from neurosim.selection_functions import equalize_activity, goodness, saliency

# Hand case, N=4 samples, K=3 atoms, P=2 features (atoms as rows).
D = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
X = np.array([[1.0, 2.0], [3.0, 0.0], [0.0, 0.0], [2.0, 2.0]])
S = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
# reconstructions S @ D: [1,0], [2,2], [0,0], [1,2]
# residuals:             [0,2], [1,-2], [0,0], [1,0]
# L1 residual:           2, 3, 0, 1
# SNR ||x||^2/||r||^2:   5/4, 9/5, 0 (zero signal), 8/1
L1 = np.array([2.0, 3.0, 0.0, 1.0])
SNR = np.array([1.25, 1.8, 0.0, 8.0])


def test_err_hand():
    G = goodness(X, S, D, "err")
    np.testing.assert_array_equal(G, np.repeat(L1[:, None], 3, axis=1))


def test_grad_hand():
    G = goodness(X, S, D, "grad")
    np.testing.assert_array_equal(G, [[2, 0, 0], [0, 0, 6], [0, 0, 0], [0, 1, 1]])


def test_snr_hand():
    G = goodness(X, S, D, "snr")
    np.testing.assert_allclose(G, [[1.25, 0, 0], [0, 0, 3.6], [0, 0, 0], [0, 8, 8]], rtol=1e-14, atol=0)


def test_sun_hand():
    np.testing.assert_array_equal(goodness(X, S, D, "sun"), S)


def test_salmap_is_element_independent_saliency():
    rng = np.random.default_rng(1)
    Xp = rng.normal(size=(5, 16))
    Sp = rng.exponential(size=(5, 3))
    Dp = rng.normal(size=(3, 16))
    G = goodness(Xp, Sp, Dp, "salmap", side=4)
    np.testing.assert_array_equal(G, np.repeat(saliency(Xp, 4)[:, None], 3, axis=1))
    np.testing.assert_array_equal(goodness(Xp, Sp, Dp, "salmap"), G)  # side inferred from P = 16


def test_signed_codes_use_abs():
    # (-S) @ (-D) = S @ D: the residual is unchanged and |s| gives the same goodness
    for m in ("err", "grad", "snr", "sun"):
        np.testing.assert_array_equal(goodness(X, -S, -D, m), goodness(X, S, D, m))


def test_snr_exact_reconstruction_is_inf_without_nan():
    Xe = np.array([[1.0, 1.0], [0.0, 0.0]])
    De = np.array([[1.0, 1.0], [1.0, 0.0]])
    Se = np.array([[1.0, 0.0], [0.0, 3.0]])  # row 1: zero signal, reconstruction [3,0] -> SNR 0
    G = goodness(Xe, Se, De, "snr")
    assert G[0, 0] == np.inf and G[0, 1] == 0.0
    np.testing.assert_array_equal(G[1], [0.0, 0.0])
    assert not np.isnan(G).any()


def test_snr_no_overflow_of_squared_norms():
    # ||x||^2 = 2e400 overflows float64 but the ratio is 2e400 / 1e400 = 2
    Xe = np.array([[1e200, 1e200]])
    De = np.array([[1.0, 0.0]])
    Se = np.array([[1e200 - 1e200 / 2**20]])  # leaves residual [1e200 / 2**20, 1e200]
    G = goodness(Xe, Se, De, "snr")
    r = np.array([1e200 / 2**20, 1e200]) / 1e200
    expected = 2.0 / (r @ r) * Se[0, 0]
    np.testing.assert_allclose(G[0, 0], expected, rtol=1e-12)


def _oracle_factors(X, S, D, measure):
    R = X - S @ D
    if measure in ("err", "grad"):
        return np.abs(R).sum(axis=1)
    if measure == "snr":
        return (X**2).sum(axis=1) / (R**2).sum(axis=1)
    return np.ones(X.shape[0])


@pytest.mark.parametrize("measure", ["err", "grad", "snr", "sun"])
def test_random_against_numpy_formulas(measure):
    rng = np.random.default_rng(7)
    N, Kk, P = 60, 12, 9
    Xr = rng.normal(size=(N, P))
    Dr = rng.normal(size=(Kk, P))
    Sr = np.where(rng.random((N, Kk)) < 0.3, rng.exponential(size=(N, Kk)), 0.0)
    f = _oracle_factors(Xr, Sr, Dr, measure)
    want = np.repeat(f[:, None], Kk, axis=1) if measure == "err" else f[:, None] * Sr
    np.testing.assert_allclose(goodness(Xr, Sr, Dr, measure), want, rtol=1e-10, atol=0)


def test_kernel_factors_and_overflow_status():
    Xo = np.array([[1e308, -1e308], [1.0, 0.0]])
    Do = np.array([[-1.0, 1.0]])
    So = np.array([[1e308], [0.0]])  # row 0: residual 2e308 overflows
    f = np.empty(2)
    assert K.sample_factors(Xo, So, Do, K.ERR, np.zeros(0), f) == 1
    assert np.isnan(f[0]) and f[1] == 1.0
    with pytest.raises(ValueError, match="too large"):
        goodness(Xo, So, Do, "grad")
    # the L1 norm alone overflowing is also reported
    Xl = np.array([[1.5e308, 1.5e308]])
    with pytest.raises(ValueError, match="too large"):
        goodness(Xl, np.zeros((1, 1)), np.ones((1, 2)), "err")


@pytest.mark.parametrize(
    "args, kw, err, match",
    [
        ((X, S, D, "l2"), {}, ValueError, "measure must be one of"),
        ((X, S, D, 3), {}, TypeError, "measure"),
        ((X, S[:3], D, "err"), {}, ValueError, "S must have shape"),
        ((X, S, D.T, "err"), {}, ValueError, "D must have shape"),
        ((X[0], S, D, "err"), {}, ValueError, "X must have 2 dimensions"),
        ((X, S, D, "err"), {"side": 2}, ValueError, "side is used by"),
        ((X, S, D, "salmap"), {"side": 3}, ValueError, "side"),
        ((np.zeros((4, 3)), S, np.zeros((3, 3)), "salmap"), {}, ValueError, "perfect square"),
        ((np.zeros((0, 2)), np.zeros((0, 3)), D, "err"), {}, ValueError, "N >= 1"),
    ],
)
def test_goodness_validation(args, kw, err, match):
    with pytest.raises(err, match=match):
        goodness(*args, **kw)


def test_goodness_rejects_nan():
    Xn = X.copy()
    Xn[1, 0] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite"):
        goodness(Xn, S, D, "snr")


_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


def test_goodness_product_overflow_is_a_clear_error():
    # finite factor and activation whose product overflows (found by test_goodness_hostile on another run)
    with pytest.raises(ValueError, match="goodness f_i \\|s_ij\\| overflows"):
        goodness(np.zeros((2, 1)), np.array([[1e110], [0.0]]), np.array([[1e100]]), "grad")


@settings(max_examples=examples(60), deadline=None)
@given(
    Xh=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), elements=_floats),
    Sh=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), elements=_floats),
    Dh=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5), elements=_floats),
    measure=st.sampled_from(["err", "grad", "snr", "sun", "salmap", "bogus"]),
)
def test_goodness_hostile(Xh, Sh, Dh, measure):
    try:
        G = goodness(Xh, Sh, Dh, measure)
    except (ValueError, TypeError) as exc:
        assert str(exc)
        return
    assert G.shape == Sh.shape
    assert not np.isnan(G).any() and (G >= 0).all()
    assert np.isfinite(G).all() or measure == "snr"


@settings(max_examples=examples(60), deadline=None)
@given(
    data=st.data(),
    N=st.integers(1, 6),
    Kk=st.integers(1, 4),
    P=st.integers(1, 5),
    measure=st.sampled_from(["err", "grad", "snr", "sun"]),
)
def test_goodness_finite_inputs_never_nan(data, N, Kk, P, measure):
    el = st.floats(-1e300, 1e300, allow_nan=False) | st.sampled_from([0.0, 1.0, -1.0, 5e-324])
    Xh = data.draw(hnp.arrays(np.float64, (N, P), elements=el))
    Sh = data.draw(hnp.arrays(np.float64, (N, Kk), elements=el))
    Dh = data.draw(hnp.arrays(np.float64, (Kk, P), elements=el))
    try:
        G = goodness(Xh, Sh, Dh, measure)
    except ValueError as exc:
        assert "too large" in str(exc)
        return
    assert not np.isnan(G).any() and (G >= 0).all()
    assert ((G == 0) | (Sh != 0)).all() or measure == "err"


# ----------------------------------------------------------------------------- equalization

def test_equalize_gamma_zero_is_identity():
    rng = np.random.default_rng(3)
    Se = rng.exponential(size=(20, 6)) * (rng.random((20, 6)) < 0.4)
    out = equalize_activity(Se, 0.0)
    np.testing.assert_array_equal(out, Se)
    assert out is not Se


def test_equalize_gamma_one_equal_column_sums():
    rng = np.random.default_rng(4)
    Se = rng.exponential(size=(30, 5)) * (rng.random((30, 5)) < 0.5)
    Se[:, 2] *= 40.0
    m = Se.sum(axis=0)
    out = equalize_activity(Se, 1.0)
    np.testing.assert_allclose(out.sum(axis=0), np.full(5, m.mean()), rtol=1e-12)


def test_equalize_hand_case():
    # column sums m = [1, 3, 0] -> mean 4/3; gamma = 1/2:
    # column 0 scaled by sqrt(4/3), column 1 by sqrt(4/9) = 2/3, column 2 (zero) unchanged
    Se = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 0.0]])
    out = equalize_activity(Se, 0.5)
    np.testing.assert_allclose(out, [[np.sqrt(4 / 3), 2 / 3, 0.0], [0.0, 4 / 3, 0.0]], rtol=1e-14)
    # the input is not modified
    np.testing.assert_array_equal(Se, [[1.0, 1.0, 0.0], [0.0, 2.0, 0.0]])


def test_equalize_signed_uses_abs_and_keeps_signs():
    Se = np.array([[1.0, -1.0], [-1.0, -2.0]])  # m = [2, 3], mean 2.5
    out = equalize_activity(Se, 1.0)
    np.testing.assert_allclose(out, Se * np.array([2.5 / 2, 2.5 / 3]), rtol=1e-14)


def test_equalize_moves_sums_towards_mean_paper_gamma():
    rng = np.random.default_rng(5)
    Se = rng.exponential(size=(50, 8)) * rng.exponential(size=8) * 5
    m0 = Se.sum(axis=0)
    m1 = equalize_activity(Se, 0.2).sum(axis=0)
    # m1_j = m_j^(0.8) mean^(0.2): the log spread shrinks by exactly the factor 0.8
    np.testing.assert_allclose(np.log(m1).std(), 0.8 * np.log(m0).std(), rtol=1e-10)


def test_equalize_subnormal_column_is_finite():
    Se = np.array([[5e-324, 1.0]])
    out = equalize_activity(Se, 1.0)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[0, 1], 0.5, rtol=1e-14)
    # the subnormal column's factor 0.5 / 5e-324 overflows: it is applied through logarithms, to the mean too
    np.testing.assert_allclose(out[0, 0], 0.5, rtol=1e-12)


@pytest.mark.parametrize("gamma,big,overflows", [(1.0, 1.0, True), (1.0, 1e300, True), (0.5, 1e300, True),
                                                 (0.2, 1e300, False)])
def test_equalize_columns_whose_factor_overflows_match_exact_arithmetic(gamma, big, overflows):
    """``s_ij (mean / m_j)^gamma`` where the factor may overflow float64 (tiny ``m_j``), against 60-digit decimals."""
    from decimal import Decimal, localcontext

    Se = np.array([[3e-310, big, -2.5e-320, 0.0],
                   [-1e-311, 2.0, 0.0, 0.0],
                   [0.0, 4.0, 5e-324, 0.0]])
    out = equalize_activity(Se, gamma)
    with localcontext() as ctx:
        ctx.prec = 60
        m = [sum(abs(Decimal(float(v))) for v in Se[:, j]) for j in range(Se.shape[1])]
        mean = sum(m) / len(m)
        factors = [((mean.ln() - mj.ln()) * Decimal(gamma)).exp() if mj else Decimal(1) for mj in m]
        want = np.array([[float(Decimal(float(v)) * factors[j]) for j, v in enumerate(row)] for row in Se])
    # the case the logarithms are for: a factor beyond float64 (at gamma = 0.2 none can be: the plain path)
    assert (max(factors) > Decimal(float(np.finfo(float).max))) == overflows
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize(
    "S_, gamma, err, match",
    [
        (np.ones((2, 2)), -0.1, ValueError, r"gamma must be in \[0.0, 1.0\]"),
        (np.ones((2, 2)), 1.5, ValueError, "gamma"),
        (np.ones((2, 2)), np.nan, ValueError, "gamma must be finite"),
        (np.ones((2, 2)), "x", TypeError, "gamma"),
        (np.ones(3), 0.2, ValueError, "S must have 2 dimensions"),
        (np.full((2, 2), np.inf), 0.2, ValueError, "finite"),
        (np.full((3, 1), 1e308), 0.2, ValueError, "overflows"),
    ],
)
def test_equalize_validation(S_, gamma, err, match):
    with pytest.raises(err, match=match):
        equalize_activity(S_, gamma)


@pytest.mark.parametrize("f_rows, out_shape", [(5, (4, 3)), (5, (5, 2)), (4, (5, 3))])
def test_dense_goodness_kernel_refuses_inconsistent_shapes(f_rows, out_shape):
    # a compiled kernel writes without bounds checks: every mismatched dimension must be refused before
    S = np.ones((5, 3))
    with pytest.raises(ValueError, match="inconsistent shapes"):
        K.goodness_dense(np.ones(f_rows), S, K.GRAD, np.zeros(out_shape))
