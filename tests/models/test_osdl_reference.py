"""The NumPy transcription of OSDL (paper 003, Tables 1-3) against closed forms and independent oracles.

Oracles: Lemma 1's closed sums ``sum_i (i/t)^rho N_i`` computed by einsum
from the raw mini-batches; Mairal et al.'s closed column update
``u_j = d_j + (b_j - D a_j) / A_jj`` (Eq. 31) written here separately;
the unmasked update of the observed sub-problem; scipy's SLSQP for the
projection onto the constraint sets.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples
from scipy.optimize import minimize

from neurosim.models.osdl_reference import (
    OSDLStatistics,
    dictionary_step,
    finish_step,
    forgetting_factor,
    osdl_numpy,
    project_atom,
)

# The papers' circuits end to end, each against its paper's numbers or an independent transcription:
# every test compiles the whole circuit, so they are the slow tier (docs/testing.md).
pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def lasso_observed(X, M, W, lam=0.1, n_iter=300):
    """Fixed-iteration ISTA for ``0.5 ||Delta (x - D a)||^2 + lam ||a||_1`` (deterministic, any encoder will do)."""
    codes = np.zeros((X.shape[0], W.shape[0]))
    for r in range(X.shape[0]):
        obs = M[r] != 0
        Wo = W[:, obs]
        L = max(np.linalg.norm(Wo, 2) ** 2, 1e-12)
        a = np.zeros(W.shape[0])
        for _ in range(n_iter):
            g = Wo @ (a @ Wo - X[r, obs])
            z = a - g / L
            a = np.sign(z) * np.maximum(np.abs(z) - lam / L, 0.0)
        codes[r] = a
    return codes


def random_batch(rng, R, m, k, p_obs=0.7, full=False):
    X = rng.normal(size=(R, m))
    M = np.ones((R, m)) if full else (rng.random((R, m)) < p_obs).astype(float)
    codes = rng.normal(size=(R, k)) * (rng.random((R, k)) < 0.6)
    return X, M, codes


def unit_rows(rng, k, m):
    W = rng.normal(size=(k, m))
    return W / np.linalg.norm(W, axis=1, keepdims=True)


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


# --------------------------------------------------------------------------- #
# forgetting factor and Lemma 1
# --------------------------------------------------------------------------- #
def test_forgetting_factor_values():
    assert forgetting_factor(1, 0.0) == 1.0
    assert forgetting_factor(7, 0.0) == 1.0
    assert forgetting_factor(1, 0.5) == 0.0
    assert forgetting_factor(3, 2.0) == pytest.approx((2 / 3) ** 2, rel=1e-15)
    assert forgetting_factor(4, 1.0) == pytest.approx(0.75, rel=1e-15)


def batch_terms(X, M, codes):
    """N_t of Lemma 1 for C (diagonals), B (rows b_j) and A^(f), straight from Eqs. 19, 20, 29 with weight 1/R."""
    R = X.shape[0]
    obs = (M != 0).astype(float)
    NC = np.einsum("rf,rj->jf", obs, codes**2) / R
    NB = np.einsum("rf,rf,rj->jf", obs, X, codes) / R
    NA = np.einsum("rf,rl,rj->flj", obs, codes, codes) / R
    return NC, NB, NA


@pytest.mark.parametrize("rho", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("e_form", ["online", "exact"])
def test_lemma1_on_statistics(rho, e_form):
    rng = np.random.default_rng(1)
    k, m, T = 3, 4, 6
    # M_0 arbitrary: Lemma 1 says it survives unchanged for rho = 0 and is forgotten for rho > 0
    C0, B0 = rng.random((k, m)), rng.normal(size=(k, m))
    e0, A0 = rng.normal(size=(k, m)), rng.normal(size=(m, k, k))
    stats = OSDLStatistics(C0.copy(), B0.copy(), e=e0.copy()) if e_form == "online" else \
        OSDLStatistics(C0.copy(), B0.copy(), A=A0.copy())
    terms = []
    for t in range(1, T + 1):
        X, M, codes = random_batch(rng, R=int(rng.integers(1, 5)), m=m, k=k)
        terms.append(batch_terms(X, M, codes))
        stats.update(X, M, codes, rho)
        assert stats.t == t
        w = [(i / t) ** rho for i in range(1, t + 1)]
        closed = [sum(wi * N[q] for wi, N in zip(w, terms)) for q in range(3)]
        if rho == 0.0:
            closed = [closed[0] + C0, closed[1] + B0, closed[2] + A0]
        np.testing.assert_allclose(stats.C, closed[0], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(stats.B, closed[1], rtol=1e-12, atol=1e-13)
        if e_form == "exact":
            np.testing.assert_allclose(stats.A, closed[2], rtol=1e-12, atol=1e-13)
            if rho > 0:  # C_j[f] = A^(f)[j, j] once M_0 is forgotten
                np.testing.assert_allclose(stats.C, np.einsum("fjj->jf", stats.A), rtol=1e-12, atol=1e-13)
        else:
            # part 1 of Eq. 25 alone only decays e: e_t = prod gamma * e_0
            np.testing.assert_allclose(stats.e, e0 if rho == 0.0 else 0.0 * e0, rtol=1e-15, atol=0)


def test_lemma1_changes_with_rho():
    # the weights (i/t)^rho really act: the same stream gives different statistics for different rho
    rng = np.random.default_rng(2)
    batches = [random_batch(rng, 3, 4, 2) for _ in range(4)]
    out = []
    for rho in (0.0, 2.0):
        s = OSDLStatistics.zeros(2, 4)
        for X, M, c in batches:
            s.update(X, M, c, rho)
        out.append(s.B)
    assert rel(out[0], out[1]) > 0.05


# --------------------------------------------------------------------------- #
# Table 3 against Mairal's closed update (full masks, exact form)
# --------------------------------------------------------------------------- #
def mairal_sweeps(W, A, B, n_sweeps, constraint):
    """Eq. 31 column by column: ``u_j = d_j + (b_j - D a_j) / A_jj``, then the projection."""
    D = W.T.copy()
    for _ in range(n_sweeps):
        for j in range(D.shape[1]):
            if A[j, j] > 0:
                u = D[:, j] + (B[:, j] - D @ A[:, j]) / A[j, j]
            else:
                u = D[:, j].copy()
            if constraint == "nonneg_l2":
                u = np.maximum(u, 0)
            D[:, j] = u / max(1.0, np.linalg.norm(u))
    return D.T


@pytest.mark.parametrize("constraint", ["l2", "nonneg_l2"])
@pytest.mark.parametrize("n_sweeps", [1, 3])
def test_exact_full_masks_is_mairal(constraint, n_sweeps):
    rng = np.random.default_rng(3)
    k, m, R = 4, 6, 5
    W = unit_rows(rng, k, m)
    X, M, codes = random_batch(rng, R, m, k, full=True)
    stats = OSDLStatistics.zeros(k, m, "exact").update(X, M, codes, 0.0)
    A = codes.T @ codes / R  # Eq. 29, mini-batch form
    B = X.T @ codes / R      # Eq. 33
    got = dictionary_step(W, stats, X, M, codes, n_sweeps=n_sweeps, constraint=constraint)
    want = mairal_sweeps(W, A, B, n_sweeps, constraint)
    assert rel(got, want) < 1e-12
    assert rel(got, W) > 1e-3  # the step does move the dictionary


def test_exact_full_masks_is_odl_over_a_stream():
    # several mini-batches with forgetting: A_t, B_t by (32)-(33) and the closed update
    rng = np.random.default_rng(4)
    k, m, R, rho = 3, 5, 4, 1.5
    W0 = unit_rows(rng, k, m)
    data = [rng.normal(size=(R, m)) for _ in range(5)]
    full = np.ones((R, m))
    W, _ = osdl_numpy(((X, full) for X in data), W0, lasso_observed, rho=rho, e_form="exact")
    D, A, B = W0.copy(), np.zeros((k, k)), np.zeros((m, k))
    for t, X in enumerate(data, start=1):
        codes = lasso_observed(X, full, D)
        g = (1 - 1 / t) ** rho
        A = g * A + codes.T @ codes / R
        B = g * B + X.T @ codes / R
        D = mairal_sweeps(D, A, B, 1, "l2")
    assert rel(W, D) < 1e-10


# --------------------------------------------------------------------------- #
# online e_j (Eq. 25) versus the exact Eq. 21
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("n_sweeps", [1, 2])
def test_online_equals_exact_after_first_batch(full, n_sweeps):
    # at t = 1 the running e_j has only one term, evaluated with the current D: Eq. 25 is Eq. 21
    rng = np.random.default_rng(5)
    k, m, R = 4, 6, 5
    W = unit_rows(rng, k, m)
    X, M, codes = random_batch(rng, R, m, k, full=full)
    out = {}
    for e_form in ("online", "exact"):
        s = OSDLStatistics.zeros(k, m, e_form).update(X, M, codes, 0.7)
        out[e_form] = dictionary_step(W, s, X, M, codes, n_sweeps=n_sweeps)
    assert rel(out["online"], out["exact"]) < 1e-12
    assert rel(out["online"], W) > 1e-3


def test_online_differs_from_exact_later():
    rng = np.random.default_rng(6)
    k, m, R = 4, 6, 5
    W0 = unit_rows(rng, k, m)
    batches = [(rng.normal(size=(R, m)), np.ones((R, m))) for _ in range(6)]
    Wo, so = osdl_numpy(batches, W0, lasso_observed, e_form="online")
    We, se = osdl_numpy(batches, W0, lasso_observed, e_form="exact")
    assert rel(Wo, We) > 1e-4
    # after the run the online e_j is the sum of terms taken with past dictionaries, not D_T a_j
    assert rel(so.e, (We.T @ se.A[0]).T) > 1e-4


def test_finish_step_is_part2_of_eq25():
    rng = np.random.default_rng(7)
    k, m, R = 3, 4, 6
    W = unit_rows(rng, k, m)
    X, M, codes = random_batch(rng, R, m, k)
    s = OSDLStatistics.zeros(k, m).update(X, M, codes, 0.0)
    e_before = s.e.copy()
    finish_step(s, W, X, M, codes)
    want = e_before + np.einsum("rf,rl,lf,rj->jf", (M != 0).astype(float), codes, W, codes) / R
    assert rel(s.e, want) < 1e-12
    se = OSDLStatistics.zeros(k, m, "exact").update(X, M, codes, 0.0)
    A_before = se.A.copy()
    finish_step(se, W, X, M, codes)
    assert np.array_equal(se.A, A_before)


# --------------------------------------------------------------------------- #
# masks
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("e_form", ["online", "exact"])
def test_masked_equals_observed_subproblem(e_form):
    # one observed set O for all samples, atoms zero outside O: OSDL on the full vectors with masks is
    # OSDL on x_O with full masks, and the unobserved coordinates stay 0 (C_j[f] = 0 there)
    rng = np.random.default_rng(8)
    k, m, R = 3, 7, 4
    O = np.array([0, 2, 3, 5])
    W0 = np.zeros((k, m))
    W0[:, O] = unit_rows(rng, k, O.size)
    mask = np.zeros((R, m))
    mask[:, O] = 1.0
    batches = []
    for _ in range(4):
        X = rng.normal(size=(R, m))
        X[:, np.setdiff1d(np.arange(m), O)] = 1e3 * rng.normal(size=(R, m - O.size))  # must be ignored
        batches.append(X)
    W, _ = osdl_numpy([(X, mask) for X in batches], W0, lasso_observed, rho=1.0, n_sweeps=2, e_form=e_form)
    Ws, _ = osdl_numpy([(X[:, O], np.ones((R, O.size))) for X in batches], W0[:, O], lasso_observed,
                       rho=1.0, n_sweeps=2, e_form=e_form)
    assert rel(W[:, O], Ws) < 1e-12
    assert np.all(np.delete(W, O, axis=1) == 0.0)


@pytest.mark.parametrize("e_form", ["online", "exact"])
def test_unobserved_values_do_not_matter_and_never_observed_coordinate_stays_put(e_form):
    rng = np.random.default_rng(9)
    k, m, R = 3, 6, 8
    W = unit_rows(rng, k, m) * 3.0  # outside the ball: the projection scales every atom
    X, M, codes = random_batch(rng, R, m, k, p_obs=0.6)
    M[:, 4] = 0.0  # coordinate 4 is never observed
    X2 = X.copy()
    X2[M == 0] = rng.normal(size=int((M == 0).sum())) * 1e3
    out = []
    for Xi in (X, X2):
        s = OSDLStatistics.zeros(k, m, e_form).update(Xi, M, codes, 0.0)
        out.append(dictionary_step(W, s, Xi, M, codes))
    assert np.array_equal(out[0], out[1])
    Wn = out[0]
    # coordinate 4 gets no data term: it only shares the atom's projection scale max(1, ||u_j||) >= 1
    scale = W[:, 4] / Wn[:, 4]
    assert np.all(scale >= 1.0 - 1e-12)
    np.testing.assert_allclose(np.linalg.norm(Wn, axis=1), 1.0, rtol=1e-12)  # the ball was active
    # and with the projection inactive (radius never reached) it stays exactly
    Wsmall = W * 1e-3
    s = OSDLStatistics.zeros(k, m, e_form).update(X * 1e-3, M, codes, 0.0)
    Wn = dictionary_step(Wsmall, s, X * 1e-3, M, codes)
    assert np.all(np.linalg.norm(Wn, axis=1) < 1)
    assert np.array_equal(Wn[:, 4], Wsmall[:, 4])
    assert rel(Wn, Wsmall) > 1e-3


def test_atom_never_active_stays_put():
    rng = np.random.default_rng(10)
    k, m, R = 3, 5, 4
    W = unit_rows(rng, k, m) * 0.5
    X, M, codes = random_batch(rng, R, m, k, full=True)
    codes[:, 1] = 0.0
    for e_form in ("online", "exact"):
        s = OSDLStatistics.zeros(k, m, e_form).update(X, M, codes, 0.0)
        Wn = dictionary_step(W, s, X, M, codes, n_sweeps=2)
        assert np.array_equal(Wn[1], W[1])
        assert rel(Wn, W) > 1e-3


# --------------------------------------------------------------------------- #
# projections
# --------------------------------------------------------------------------- #
def slsqp_projection(u, nonneg):
    cons = [{"type": "ineq", "fun": lambda d: 1.0 - d @ d, "jac": lambda d: -2 * d}]
    bounds = [(0, None)] * u.size if nonneg else None
    res = minimize(lambda d: 0.5 * np.sum((d - u) ** 2), np.zeros(u.size), jac=lambda d: d - u,
                   constraints=cons, bounds=bounds, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    return res.x


@pytest.mark.parametrize("constraint", ["l2", "nonneg_l2"])
@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
def test_projection_against_slsqp(constraint, scale):
    rng = np.random.default_rng(11)
    for _ in range(5):
        u = rng.normal(size=6) * scale
        got = project_atom(u, constraint)
        assert np.linalg.norm(got) <= 1 + 1e-14
        if constraint == "nonneg_l2":
            assert np.all(got >= 0)
        want = slsqp_projection(u, constraint == "nonneg_l2")
        assert np.abs(got - want).max() < 1e-6


def test_projection_fixed_points_and_dictionary_constraints():
    u = np.array([0.3, -0.4, 0.0])
    assert np.array_equal(project_atom(u, "l2"), u)
    assert np.array_equal(project_atom(u, "nonneg_l2"), np.array([0.3, 0.0, 0.0]))
    np.testing.assert_allclose(project_atom([3.0, 4.0], "l2"), [0.6, 0.8], rtol=1e-15)
    np.testing.assert_allclose(project_atom([3e200, -4e200], "l2"), [0.6, -0.8], rtol=1e-15)  # no inf norm
    rng = np.random.default_rng(12)
    k, m, R = 4, 5, 6
    X, M, codes = random_batch(rng, R, m, k)
    for constraint in ("l2", "nonneg_l2"):
        s = OSDLStatistics.zeros(k, m).update(X * 50, M, codes, 0.0)
        Wn = dictionary_step(rng.normal(size=(k, m)) * 4, s, X * 50, M, codes, constraint=constraint)
        assert np.all(np.linalg.norm(Wn, axis=1) <= 1 + 1e-12)
        if constraint == "nonneg_l2":
            assert np.all(Wn >= 0)


# --------------------------------------------------------------------------- #
# inputs
# --------------------------------------------------------------------------- #
def test_inputs_not_modified():
    rng = np.random.default_rng(13)
    k, m, R = 3, 4, 5
    W = unit_rows(rng, k, m)
    X, M, codes = random_batch(rng, R, m, k)
    copies = [a.copy() for a in (W, X, M, codes)]
    s = OSDLStatistics.zeros(k, m).update(X, M, codes, 0.0)
    s_copy = s.copy()
    dictionary_step(W, s, X, M, codes, n_sweeps=2)
    for a, b in zip((W, X, M, codes), copies):
        assert np.array_equal(a, b)
    assert np.array_equal(s.e, s_copy.e) and np.array_equal(s.B, s_copy.B) and np.array_equal(s.C, s_copy.C)


def test_bad_input_names_the_parameter():
    rng = np.random.default_rng(14)
    k, m, R = 3, 4, 5
    W = unit_rows(rng, k, m)
    X, M, codes = random_batch(rng, R, m, k)
    s = OSDLStatistics.zeros(k, m)
    with pytest.raises(ValueError, match="rho"):
        s.update(X, M, codes, -0.1)
    with pytest.raises(ValueError, match="rho"):
        forgetting_factor(2, -1.0)
    with pytest.raises(ValueError, match="t must"):
        forgetting_factor(0, 1.0)
    with pytest.raises(ValueError, match="M must have shape"):
        s.update(X, M[:, :-1], codes, 0.0)
    with pytest.raises(ValueError, match="codes must have shape"):
        s.update(X, M, codes[:, :-1], 0.0)
    with pytest.raises(ValueError, match="X must"):
        s.update(X[:, :-1], M[:, :-1], codes, 0.0)
    s.update(X, M, codes, 0.0)
    with pytest.raises(ValueError, match="n_sweeps"):
        dictionary_step(W, s, X, M, codes, n_sweeps=0)
    with pytest.raises(ValueError, match="constraint"):
        dictionary_step(W, s, X, M, codes, constraint="l1")
    with pytest.raises(ValueError, match="W must have shape"):
        dictionary_step(W[:, :-1], s, X, M, codes)
    with pytest.raises(TypeError, match="stats"):
        dictionary_step(W, {"C": s.C}, X, M, codes)
    with pytest.raises(ValueError, match="e_form"):
        osdl_numpy([], W, lasso_observed, e_form="approx")
    with pytest.raises(ValueError, match="rho"):
        osdl_numpy([], W, lasso_observed, rho=-1.0)
    with pytest.raises(ValueError, match="n_sweeps"):
        osdl_numpy([], W, lasso_observed, n_sweeps=0)
    with pytest.raises(ValueError, match="constraint"):
        osdl_numpy([], W, lasso_observed, constraint="box")
    with pytest.raises(ValueError, match="M must have shape"):
        osdl_numpy([(X, M[:2])], W, lasso_observed)
    with pytest.raises(ValueError, match="codes must have shape"):
        osdl_numpy([(X, M)], W, lambda X, M, W: np.zeros((1, 1)))
    with pytest.raises(ValueError, match="codes must contain only finite"):
        osdl_numpy([(X, M)], W, lambda X, M, W: np.full((X.shape[0], W.shape[0]), np.nan))
    with pytest.raises(TypeError, match="encode"):
        osdl_numpy([], W, "lasso")
    with pytest.raises(ValueError, match="X must contain only finite"):
        s.update(np.where(X > 0, np.inf, X), M, codes, 0.0)
    with pytest.raises(ValueError, match="exactly one of e"):
        OSDLStatistics(s.C, s.B)
    with pytest.raises(ValueError, match="stats.C must be non-negative"):
        dictionary_step(W, OSDLStatistics(-s.C, s.B, e=s.e), X, M, codes)


# --------------------------------------------------------------------------- #
# hostile inputs
# --------------------------------------------------------------------------- #
floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    k=st.integers(1, 3), m=st.integers(1, 4), R=st.integers(1, 3), data=st.data(),
    rho=st.one_of(st.floats(0, 5), floats, st.integers(-3, 3)),
    n_sweeps=st.one_of(st.integers(1, 3), st.integers(-2, 0), st.floats(0.5, 2.5)),
    constraint=st.sampled_from(["l2", "nonneg_l2", "l2", "nonneg_l2", "L2", "", "linf"]),
    e_form=st.sampled_from(["online", "exact", "online", "exact", "Exact"]),
)
def test_hostile_inputs(k, m, R, data, rho, n_sweeps, constraint, e_form):
    def arr(shape):
        # mostly finite values over a wide range (tiny and huge included), sometimes NaN/inf anywhere
        finite = st.floats(-1e150, 1e150, allow_subnormal=True)
        elements = data.draw(st.sampled_from([finite, finite, finite, st.floats(-1e3, 1e3), floats]))
        return data.draw(hnp.arrays(np.float64, shape, elements=elements))

    W = arr(data.draw(st.sampled_from([(k, m), (k, m), (k, m), (k, m + 1), (m,)])))
    X = arr((R, m))
    M = arr(data.draw(st.sampled_from([(R, m), (R, m), (R, m), (R + 1, m)])))
    codes = arr((R, k))
    try:
        W_out, stats = osdl_numpy([(X, M)], W, lambda X, M, W: codes, rho=rho, n_sweeps=n_sweeps,
                                  constraint=constraint, e_form=e_form)
    except (ValueError, TypeError):
        return  # rejected with a named reason
    # accepted: the inputs were finite and well shaped, and the output is finite and in the constraint set
    assert np.all(np.isfinite(W_out)) and np.all(np.isfinite(stats.C)) and np.all(np.isfinite(stats.B))
    assert np.all(np.linalg.norm(W_out, axis=1) <= 1 + 1e-12)
    if constraint == "nonneg_l2":
        assert np.all(W_out >= 0)


# --------------------------------------------------------------------------- #
# the compiled kernels against this reference
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("nonneg", [False, True])
def test_compiled_kernels_match_reference(exact, nonneg):
    K = pytest.importorskip("neurosim.kernels.osdl")
    rng = np.random.default_rng(15)
    k, m, R, rho, sweeps = 5, 8, 6, 1.3, 2
    W = unit_rows(rng, k, m)
    C, B, E, A = np.zeros((k, m)), np.zeros((k, m)), np.zeros((k, m)), np.zeros((m, k, k))
    count = np.zeros(1)
    stats = OSDLStatistics.zeros(k, m, "exact" if exact else "online")
    W_ref = W.copy()
    for _ in range(6):
        X, M, codes = random_batch(rng, R, m, k, p_obs=0.7)
        K.osdl_statistics_step(C, B, E, A, X, M, codes, rho, exact, count)
        ok = K.osdl_dictionary(W, C, B, E, A, X, M, codes, exact, nonneg, sweeps, 0.0, np.zeros((R, m)),
                               np.zeros(m), np.zeros(m), np.zeros(R), np.zeros(2, dtype=np.int64))
        assert ok
        stats.update(X, M, codes, rho)
        W_ref = dictionary_step(W_ref, stats, X, M, codes, sweeps, "nonneg_l2" if nonneg else "l2")
        finish_step(stats, W_ref, X, M, codes)
    assert rel(W, W_ref) < 1e-12
    assert rel(C, stats.C) < 1e-12 and rel(B, stats.B) < 1e-12
    if exact:
        assert rel(A, stats.A) < 1e-12
    else:
        assert rel(E, stats.e) < 1e-12
    assert rel(W, unit_rows(np.random.default_rng(15), k, m)) > 1e-2
