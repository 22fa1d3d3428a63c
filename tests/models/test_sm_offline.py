"""Offline similarity-matching solutions of paper 002 against independent oracles.

Oracles: scipy's NNLS on the Appendix A problem (and exhaustive search over
supports for the rank bound), the full matrix cost evaluated on perturbed
solutions, and direct evaluation of the closed forms at the Table I bounds.
"""

from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import nnls

from neurosim.models.similarity_matching import (
    REGULARIZERS,
    alpha_for_shrinkage,
    alpha_range,
    offline_filter,
    offline_output_eigenvalues,
    offline_solution,
    pair_grid,
    top_output_eigenvalue,
    transmission_curves,
    two_level_outputs,
    universal_alpha,
)

# The papers' circuits end to end, each against its paper's numbers or an independent transcription:
# every test compiles the whole circuit, so they are the slow tier (docs/testing.md).
pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------- #
# oracles
# --------------------------------------------------------------------------- #
def nnls_diagonal_problem(lam, alpha, regularizer, support=None):
    """Solve min_{d >= 0} d^T A d - 2 c^T d on ``support`` with scipy's NNLS.

    Appendix A: for YY, ``A = I + alpha 1 1^T`` and ``c = lambda``; for TY/XY
    the cost ``||lambda - d||^2 + 2 theta 1^T d`` gives ``A = I``,
    ``c = lambda - theta``.  With ``A = R^T R`` (Cholesky) the quadratic is
    ``||R d - R^{-T} c||^2 + const``.
    """
    lam = np.asarray(lam, float)
    idx = np.arange(lam.size) if support is None else np.asarray(support)
    m = idx.size
    if regularizer == "YY":
        A = np.eye(m) + alpha * np.ones((m, m))
        c = lam[idx]
    else:
        theta = alpha if regularizer == "TY" else alpha * lam.sum()
        A = np.eye(m)
        c = lam[idx] - theta
    R = np.linalg.cholesky(A).T
    sol, _ = nnls(R, np.linalg.solve(R.T, c))
    d = np.zeros(lam.size)
    d[idx] = sol
    return d


def diagonal_cost(lam, d, alpha, regularizer):
    """Cost restricted to diagonal (aligned) solutions, Eqs. 2/5/8 up to constants."""
    if regularizer == "YY":
        return np.sum((lam - d) ** 2) + alpha * d.sum() ** 2
    theta = alpha if regularizer == "TY" else alpha * lam.sum()
    return np.sum((lam - d) ** 2) + 2 * theta * d.sum()


def matrix_cost(X, Y, alpha, regularizer):
    """Full offline costs: Eq. 2 (TY), Eq. 5 (XY), Eq. 8 (YY)."""
    G, H = X.T @ X, Y.T @ Y
    cost = np.sum((G - H) ** 2)
    if regularizer == "TY":
        return cost + 2 * alpha * X.shape[1] * np.trace(H)
    if regularizer == "XY":
        return cost + 2 * alpha * np.trace(G) * np.trace(H)
    return cost + alpha * np.trace(H) ** 2


# --------------------------------------------------------------------------- #
# Section II closed forms
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_closed_form_matches_nnls_full_rank(regularizer):
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = rng.integers(1, 9)
        lam = np.sort(rng.exponential(1.0, n) * rng.choice([0.01, 1.0, 100.0]))[::-1]
        alpha = rng.choice([0.0, 1e-3, 0.05, 0.3, 1.0, 5.0]) * (1.0 if regularizer != "TY" else lam.mean())
        got = offline_output_eigenvalues(lam, n, regularizer, alpha)
        want = nnls_diagonal_problem(lam, alpha, regularizer)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * lam.max())


@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_closed_form_matches_exhaustive_search_with_rank_bound(regularizer):
    """With k < n outputs, search all supports of size <= k (Appendix A point 3)."""
    rng = np.random.default_rng(2)
    for _ in range(60):
        n = rng.integers(2, 7)
        k = rng.integers(1, n)
        lam = np.sort(rng.uniform(0, 3, n))[::-1]
        alpha = rng.choice([0.01, 0.1, 0.5, 2.0]) * (1.0 if regularizer == "YY" else 1.0 / n)
        best, best_cost = None, np.inf
        for size in range(1, k + 1):
            for support in combinations(range(n), size):
                d = nnls_diagonal_problem(lam, alpha, regularizer, support)
                c = diagonal_cost(lam, d, alpha, regularizer)
                if c < best_cost - 1e-12:
                    best, best_cost = d, c
        got = offline_output_eigenvalues(lam, k, regularizer, alpha)
        np.testing.assert_allclose(diagonal_cost(lam, np.pad(got, (0, n - k)), alpha, regularizer), best_cost, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.sort(got)[::-1], np.sort(best)[::-1][:k], atol=1e-9)


def test_yy_p_selection_by_hand():
    # lambda = (4, 2, 1), alpha = 1: theta_1 = 2, theta_2 = 3, theta_3 = 7/4.
    # D_3 = (4, 2, 1) - 7/4 -> last entry -3/4 < 0; D_2 = (4, 2) - 2 = (2, 0) >= 0 -> p = 2.
    np.testing.assert_allclose(offline_output_eigenvalues([4, 2, 1], 3, "YY", 1.0), [2.0, 0.0, 0.0])
    # alpha = 0.1: theta_3 = 0.7/1.3 < 1, all feasible -> p = 3
    np.testing.assert_allclose(offline_output_eigenvalues([1, 4, 2], 3, "YY", 0.1), np.array([4, 2, 1]) - 0.7 / 1.3)
    # p is capped by k: k = 1 gives lambda_1 / (1 + alpha)
    np.testing.assert_allclose(offline_output_eigenvalues([4, 2, 1], 1, "YY", 0.1), [4 / 1.1])


def test_ty_xy_by_hand_and_scaling_with_T():
    lam = np.array([5.0, 3.0, 1.0, 1.0])
    np.testing.assert_allclose(offline_output_eigenvalues(lam, 3, "TY", 2.0), [3.0, 1.0, 0.0])
    np.testing.assert_allclose(offline_output_eigenvalues(lam, 2, "XY", 0.2), [3.0, 1.0])  # threshold 0.2*10
    T = 37.0
    for reg in REGULARIZERS:
        norm = offline_output_eigenvalues(lam, 4, reg, 0.15)
        raw = offline_output_eigenvalues(T * lam, 4, reg, 0.15, T=T)
        np.testing.assert_allclose(raw, T * norm, rtol=1e-12)
    # k > n pads with zeros
    np.testing.assert_allclose(offline_output_eigenvalues([2.0], 3, "TY", 1.0), [1.0, 0.0, 0.0])


def test_batched_evaluation_matches_loop():
    rng = np.random.default_rng(3)
    lam = rng.uniform(0, 2, (5, 4, 6))
    alpha = rng.uniform(0, 0.5, (5, 1))
    for reg in REGULARIZERS:
        out = offline_output_eigenvalues(lam, 4, reg, alpha)
        assert out.shape == (5, 4, 4)
        for i in range(5):
            for j in range(4):
                np.testing.assert_allclose(out[i, j], offline_output_eigenvalues(lam[i, j], 4, reg, alpha[i, 0]))


@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_offline_solution_spectrum_and_local_optimality(regularizer):
    rng = np.random.default_rng(4)
    n, T, k = 6, 40, 4
    X = rng.standard_normal((n, n)) @ np.diag([3, 2, 1.5, 0.5, 0.3, 0.1]) @ rng.standard_normal((n, T))
    lam_raw = np.linalg.eigvalsh(X.T @ X)
    alpha = {"TY": 0.5 * np.linalg.eigvalsh(X @ X.T / T)[-2], "XY": 0.05, "YY": 0.05}[regularizer]
    Y = offline_solution(X, k, regularizer, alpha)
    assert Y.shape == (k, T)
    got = np.sort(np.linalg.eigvalsh(Y @ Y.T))[::-1]
    np.testing.assert_allclose(got, offline_output_eigenvalues(lam_raw, k, regularizer, alpha, T=T), rtol=1e-8, atol=1e-8)
    # normalized convention: (1/T) Y^T Y against eigenvalues of (1/T) X^T X with T=None
    np.testing.assert_allclose(got / T, offline_output_eigenvalues(lam_raw / T, k, regularizer, alpha), rtol=1e-8, atol=1e-10)
    # the optimum of Eqs. 2/5/8: no random perturbation lowers the full matrix cost
    c0 = matrix_cost(X, Y, alpha, regularizer)
    for scale in (1e-3, 1e-2, 1e-1):
        for _ in range(20):
            assert matrix_cost(X, Y + scale * rng.standard_normal(Y.shape), alpha, regularizer) >= c0 - 1e-8 * c0
    # U_k rotation leaves the cost unchanged
    Q, _ = np.linalg.qr(rng.standard_normal((k, k)))
    np.testing.assert_allclose(matrix_cost(X, Q @ Y, alpha, regularizer), c0, rtol=1e-10)


@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_offline_filter_output_covariance(regularizer):
    rng = np.random.default_rng(5)
    V, _ = np.linalg.qr(rng.standard_normal((7, 7)))
    lam = np.array([4.0, 3.0, 2.5, 0.4, 0.3, 0.2, 0.1])
    C = (V * lam) @ V.T
    alpha = alpha_for_shrinkage(lam, regularizer, 1.0, 3)
    F = offline_filter(C, 5, regularizer, alpha)
    want = offline_output_eigenvalues(lam, 5, regularizer, alpha)
    np.testing.assert_allclose(F @ C @ F.T, np.diag(want), atol=1e-10)
    np.testing.assert_allclose(want, [3.0, 2.0, 1.5, 0, 0], atol=1e-12)


def test_alpha_for_shrinkage_paper_setting():
    """Section VI: top three of {6,5,4,2,...} soft-thresholded by 2 for every regularizer."""
    lam = np.concatenate([[6, 5, 4, 2], np.linspace(0.2, 0.0, 60)])
    for reg in REGULARIZERS:
        alpha = alpha_for_shrinkage(lam, reg, 2.0, 3)
        np.testing.assert_allclose(offline_output_eigenvalues(lam, 6, reg, alpha), [4, 3, 2, 0, 0, 0], atol=1e-12)
    assert alpha_for_shrinkage(lam, "YY", 2.0, 3) == pytest.approx(2 / 9)
    with pytest.raises(ValueError, match="shrinkage"):
        alpha_for_shrinkage(lam, "YY", 5.0, 3)


# --------------------------------------------------------------------------- #
# Section III, Table I
# --------------------------------------------------------------------------- #
def _full_spectrum(a, b, n1, n2):
    return np.concatenate([np.full(n1, a), np.full(n2, b)])


def _passes(a, b, n1, n2, reg, alpha):
    out = offline_output_eigenvalues(_full_spectrum(a, b, n1, n2), n1 + n2, reg, alpha)
    tol = 1e-9 * a
    return bool(np.all(out[:n1] > tol)), bool(np.any(out[n1:] > tol))


@pytest.mark.parametrize("regularizer", REGULARIZERS)
@pytest.mark.parametrize("n1,n2", [(1, 1), (3, 61), (5, 2)])
def test_table1_bounds_flip_exactly(regularizer, n1, n2):
    """Signal passes / noise is rejected flip at the Table I bounds, per the general closed form."""
    rng = np.random.default_rng(6)
    eps = 1e-6
    for _ in range(25):
        a = rng.uniform(0.05, 1.0)
        b = a * rng.uniform(0.05, 0.95)
        lo, hi = (float(v) for v in alpha_range(a, b, n1, n2, regularizer))
        assert _passes(a, b, n1, n2, regularizer, lo * (1 - eps))[1]  # noise leaks just below lo
        assert not _passes(a, b, n1, n2, regularizer, lo)[1]  # rejected at lo (inclusive)
        assert not _passes(a, b, n1, n2, regularizer, lo * (1 + eps))[1]
        assert _passes(a, b, n1, n2, regularizer, lo * (1 + eps))[0]
        if np.isfinite(hi):
            assert _passes(a, b, n1, n2, regularizer, hi * (1 - eps))[0]  # signal passes just below hi
            assert not _passes(a, b, n1, n2, regularizer, hi)[0]  # output exactly 0 at hi
            assert not _passes(a, b, n1, n2, regularizer, hi * (1 + eps))[0]
        else:
            assert regularizer == "YY"
            assert _passes(a, b, n1, n2, regularizer, 1e8)[0]
        # Table I last column inside the range (geometric middle, or 10 lo for YY)
        mid = np.sqrt(lo * hi) if np.isfinite(hi) else 10 * lo
        out = offline_output_eigenvalues(_full_spectrum(a, b, n1, n2), n1 + n2, regularizer, mid)
        np.testing.assert_allclose(out[:n1], top_output_eigenvalue(a, b, n1, n2, regularizer, mid), rtol=1e-12)
        assert np.all(out[n1:] == 0)


def test_table1_values_by_hand():
    # a = 1, b = 0.5, n1 = 3, n2 = 61: Tr = 33.5
    assert np.allclose(alpha_range(1.0, 0.5, 3, 61, "TY"), (0.5, 1.0))
    assert np.allclose(alpha_range(1.0, 0.5, 3, 61, "XY"), (0.5 / 33.5, 1 / 33.5))
    assert np.allclose(alpha_range(1.0, 0.5, 3, 61, "YY"), (1 / 3, np.inf))
    assert top_output_eigenvalue(1.0, 0.5, 3, 61, "YY", 1.0) == pytest.approx(0.25)
    assert top_output_eigenvalue(1.0, 0.5, 3, 61, "XY", 0.02) == pytest.approx(1 - 0.02 * 33.5)
    lo, hi = alpha_range(0.4, 0.4, 2, 2, "YY")  # a == b: no alpha works
    assert lo == np.inf and hi == np.inf


@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_two_level_outputs_match_general_closed_form(regularizer):
    rng = np.random.default_rng(7)
    n1, n2 = 3, 5
    a = rng.uniform(0.01, 1, 300)
    b = a * rng.uniform(0, 1, 300)
    b[:20] = a[:20]  # degenerate pairs too
    alpha = np.exp(rng.uniform(np.log(1e-3), np.log(1e2), 300))
    s, z = two_level_outputs(a, b, n1, n2, regularizer, alpha)
    spectra = np.concatenate([np.repeat(a[:, None], n1, 1), np.repeat(b[:, None], n2, 1)], axis=1)
    full = offline_output_eigenvalues(spectra, n1 + n2, regularizer, alpha)
    np.testing.assert_allclose(full[:, :n1], np.repeat(s[:, None], n1, 1), atol=1e-12)
    np.testing.assert_allclose(full[:, n1:], np.repeat(z[:, None], n2, 1), atol=1e-12)


def test_pair_grid():
    a, b = pair_grid()
    assert a.size == 5050 and np.all(a >= b) and a.min() == 0.01 and a.max() == 1.0
    a2, b2 = pair_grid(include_diagonal=False)
    assert a2.size == 4950 and np.all(a2 > b2)


def test_universal_alpha_and_fig1_claims():
    """Fig. 1: no universal alpha for TY; XY and YY reach (0 noise, all signal) on a > b."""
    n1, n2 = 3, 61
    a, b = pair_grid(include_diagonal=False)
    alpha_ty, frac_ty = universal_alpha(a, b, n1, n2, "TY")
    assert frac_ty < 0.6
    for reg in ("XY", "YY"):
        alpha, frac = universal_alpha(a, b, n1, n2, reg)
        assert frac == 1.0
        curves = transmission_curves(a, b, n1, n2, reg, [alpha])
        assert curves["signal"][0] == 1.0 and curves["noise"][0] == 0.0
    # XY's universal window is [max lo, min hi) = [0.99/(3+61*0.99), 1/(3+61*0.99))
    assert universal_alpha(a, b, n1, n2, "XY")[0] == pytest.approx(0.99 / (3 + 61 * 0.99))
    assert universal_alpha(a, b, n1, n2, "YY")[0] == pytest.approx(0.99 / (0.01 * 3))
    # cross-check the sweep against brute force on a grid for TY
    alphas = np.linspace(0, 1.01, 2021)
    goal = transmission_curves(a, b, n1, n2, "TY", alphas)["goal"]
    assert goal.max() <= frac_ty + 1e-12
    assert transmission_curves(a, b, n1, n2, "TY", [alpha_ty])["goal"][0] == pytest.approx(frac_ty)
    # with the a == b pairs (paper's S), nothing reaches exactly (0, 1)
    a_d, b_d = pair_grid()
    for reg in REGULARIZERS:
        assert universal_alpha(a_d, b_d, n1, n2, reg)[1] <= 4950 / 5050 + 1e-12


def test_transmission_curves_ty_counts():
    """TY: signal passes iff a > alpha, noise iff b > alpha -- counted directly."""
    a, b = pair_grid()
    alphas = np.array([0.0, 0.005, 0.255, 0.5, 0.995, 2.0])
    c = transmission_curves(a, b, 1, 1, "TY", alphas)
    np.testing.assert_allclose(c["signal"], [(a > x).mean() for x in alphas])
    np.testing.assert_allclose(c["noise"], [(b > x).mean() for x in alphas])


@pytest.mark.parametrize(
    "call",
    [
        lambda: offline_output_eigenvalues([1, 2], 0, "TY", 0.1),
        lambda: offline_output_eigenvalues([1, -2], 1, "TY", 0.1),
        lambda: offline_output_eigenvalues([1, np.nan], 1, "TY", 0.1),
        lambda: offline_output_eigenvalues([1, 2], 1, "ZZ", 0.1),
        lambda: offline_output_eigenvalues([1, 2], 1, "TY", -0.1),
        lambda: offline_output_eigenvalues([[1, 2]] * 3, 1, "TY", [0.1, 0.2]),
        lambda: offline_output_eigenvalues([1, 2], 1, "TY", 0.1, T=0),
        lambda: offline_solution(np.ones(3), 1, "TY", 0.1),
        lambda: alpha_range(0.5, 1.0, 1, 1, "TY"),
        lambda: alpha_range(1.0, 0.5, 0, 1, "XY"),
        lambda: pair_grid(step=0),
    ],
)
def test_invalid_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_invalid_types_raise_type_error():
    with pytest.raises(TypeError):
        offline_output_eigenvalues("abc", 1, "TY", 0.1)
    with pytest.raises(TypeError):
        offline_output_eigenvalues([1.0], 1.5, "TY", 0.1)
    with pytest.raises(TypeError):
        offline_solution(np.ones((2, 2)), 1, 3, 0.1)


def test_simulation_module_smoke(tmp_path):
    """sm_offline_table1.run writes its files and reproduces the Fig. 1 / Table I facts."""
    import xarray as xr

    from neurosim.simulations import sm_offline_table1 as sim

    assert sim.NAME == "sm_offline_table1" and sim.DEFAULT_STEPS is None
    paths = sim.run(steps=41, out=tmp_path / "o", progress=False)
    assert set(paths) == {"dataset", "table", "fig1", "fig2"} and all(p.exists() for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        frac = ds.universal_fraction.sel(pair_set="a>b")
        assert float(frac.sel(regularizer="TY")) < 0.6
        assert float(frac.sel(regularizer="XY")) == 1.0 and float(frac.sel(regularizer="YY")) == 1.0
        np.testing.assert_allclose(ds.table_lo_numeric, ds.table_lo, rtol=1e-6)  # transmission tolerance 1e-9 a
        np.testing.assert_allclose(ds.table_hi_numeric, ds.table_hi, rtol=1e-6)  # inf == inf for YY
        np.testing.assert_allclose(ds.table_top_closed_form, ds.table_top_formula, rtol=1e-12)
        # the curves reach (0, 1) exactly for XY and YY on a > b (the exact universal alphas are on the grid)
        for reg in ("XY", "YY"):
            c = ds.sel(regularizer=reg, pair_set="a>b")
            assert np.any((c.signal_fraction == 1.0) & (c.noise_fraction == 0.0))
        c = ds.sel(regularizer="TY", pair_set="a>b")
        assert not np.any((c.signal_fraction == 1.0) & (c.noise_fraction == 0.0))


@pytest.mark.parametrize("mu_init", [0, 0.0, -1.0])
def test_build_network_names_mu_init(mu_init):
    from neurosim.models.similarity_matching import build_network
    from neurosim.streams import GaussianStream

    with pytest.raises(ValueError, match=r"mu_init must be in \(0\.0, inf\)"):
        build_network(GaussianStream(np.ones(3), seed=0), 2, "TY", alpha=0.1, mu_init=mu_init)
