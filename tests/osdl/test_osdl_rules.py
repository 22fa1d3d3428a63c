"""OSDL statistics and dictionary update (paper 003, supplement Eqs. 19-31, Lemma 1, Table 3) on the engine."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models import neurogenesis, osdl
from neurosim.rules.osdl import OSDLDictionary, OSDLStatistics

T, R, M_, K = 12, 8, 10, 14
LAM = 0.2


def _data(seed=0, missing=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, R, M_))
    masks = (rng.random((T, R, M_)) >= missing).astype(float)
    W0 = rng.standard_normal((K, M_))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    return X, masks, W0


def _masked_net(X, masks, W0, rho=0.0, e_form="online", n_sweeps=1, constraint="l2", record=True):
    """The OSDL plasticity on a lasso encoder that ignores the masks: the statistics' inputs are then known."""
    net = ns.Network(batch=R, name="osdl_rules")
    x, obs = ns.Population("x", M_), ns.Population("observed", M_)
    code = ns.Population("code", K, dynamics=ns.SparseCode("feature_sign", lam=LAM, warm_start=False))
    net.add(x, obs, code)
    net.connect(ns.ArrayStream(X), x)
    net.connect(ns.ArrayStream(masks), obs)
    D = ns.Projection("D", x, code, init=osdl.DataElements(W0),
                      rule=OSDLDictionary(n_sweeps=n_sweeps, constraint=constraint))
    net.add(D)
    st = OSDLStatistics(D, observed=obs, rho=rho, e_form=e_form)
    net.add(st)
    if record:
        net.record(code, "activity")
    return net, D, st


@pytest.mark.parametrize("backend", ["python", "auto"])
def test_exact_form_without_masks_is_paper000_odl(backend):
    """Full masks, no groups, rho = 0, exact e_j: Mairal's ODL (Eqs. 29-33), i.e. paper 000's ODL circuit."""
    X, _, W0 = _data()
    c = osdl.build_network(ns.ArrayStream(X), K, batch=R, e_form="exact", n_sweeps=30,
                           encoder=ns.SparseCode("feature_sign", lam=LAM, warm_start=False), init=W0)
    c.dictionary.rule.tol = 1e-12
    c.run(T, backend=backend)
    ng = neurogenesis.build_network(ns.ArrayStream(X), K, "ODL", batch=R, lam=LAM, beta_c=1, tol=1e-12,
                                    max_sweeps=30)
    ng.dictionary.weights = W0.copy()
    ng.run(T, backend=backend)
    np.testing.assert_allclose(c.W, ng.dictionary.weights, rtol=0, atol=1e-10)
    # A of Eq. 29 is paper 000's A / R (same sums, each mini-batch weighted 1/R)
    np.testing.assert_allclose(c.statistics.A[0] * R, ng.code.state["A"], rtol=1e-12, atol=1e-12)
    assert np.abs(c.W - W0).max() > 0.1  # it learned


@pytest.mark.parametrize("rho", [0.0, 1.0, 4.0])
@pytest.mark.parametrize("backend", ["python", "auto"])
def test_lemma1_on_the_circuit_statistics(rho, backend):
    """C_t, B_t of the circuit equal sum_i (i/t)^rho N_i (+ C_0 when rho = 0), N_i the mini-batch terms (Lemma 1)."""
    X, masks, W0 = _data(1)
    net, D, st = _masked_net(X, masks, W0, rho=rho)
    C0 = np.random.default_rng(5).random((K, M_))
    net.validate()
    D.arrays["C"][:] = C0  # arbitrary start: forgotten at once for rho > 0 (gamma_1 = 0), kept for rho = 0
    net.run(T, backend=backend)
    codes = net.recorders["code"].to_dataset()["activity"].values  # (T, R, K)
    t = T
    C = sum((i / t) ** rho * ((codes[i - 1] ** 2).T @ masks[i - 1]) / R for i in range(1, t + 1))
    B = sum((i / t) ** rho * (codes[i - 1].T @ (masks[i - 1] * X[i - 1])) / R for i in range(1, t + 1))
    if rho == 0.0:
        C = C + C0
    np.testing.assert_allclose(D.arrays["C"], C, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(D.arrays["B"], B, rtol=1e-12, atol=1e-13)
    assert st.count[0] == T


def test_online_equals_exact_after_the_first_minibatch_only():
    """With one sweep, e_j^tmp of Table 3 is Eq. 21 exactly on batch 1; later batches use stale dictionaries."""
    X, masks, W0 = _data(2)
    nets = {f: _masked_net(X, masks, W0, e_form=f) for f in ("online", "exact")}
    for net, _, _ in nets.values():
        net.run(1)
    np.testing.assert_allclose(nets["online"][1].weights, nets["exact"][1].weights, rtol=0, atol=1e-12)
    for net, _, _ in nets.values():
        net.run(T - 1)
    assert np.abs(nets["online"][1].weights - nets["exact"][1].weights).max() > 1e-3


@pytest.mark.parametrize("e_form", ["online", "exact"])
@pytest.mark.parametrize("constraint", ["l2", "nonneg_l2"])
def test_compiled_equals_numpy_reference(e_form, constraint):
    X, masks, W0 = _data(3)
    out = {}
    for backend in ("python", "auto"):
        net, D, st = _masked_net(X, masks, W0, rho=2.0, e_form=e_form, n_sweeps=3, constraint=constraint)
        net.run(T, backend=backend)
        out[backend] = (D.weights.copy(), D.arrays["E"].copy(), st.A.copy())
    for a, b in zip(out["python"], out["auto"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    W = out["auto"][0]
    assert np.all(np.linalg.norm(W, axis=1) <= 1 + 1e-12)
    if constraint == "nonneg_l2":
        assert W.min() >= 0.0


def test_unobserved_coordinate_keeps_its_value():
    """A coordinate never observed gives C_j[f] = 0: Eq. 22 is 0 = 0 there and d_j[f] stays (up to the ball projection)."""
    X, masks, W0 = _data(4)
    masks[:, :, 3] = 0.0
    W0 = W0 * 0.5  # inside the ball: the projection does not rescale at first
    net, D, _ = _masked_net(X, masks, W0)
    net.run(1)
    np.testing.assert_array_equal(D.arrays["C"][:, 3], 0.0)
    # the atom's only change at f = 3 is the scaling of the ball projection, 1 / max(1, ||u_j||)
    ratio = D.weights[:, 3] / W0[:, 3]
    norms = np.linalg.norm(D.weights, axis=1)
    assert np.all((ratio > 0) & (ratio <= 1 + 1e-12))
    inside = norms < 1 - 1e-9
    assert inside.any() and (~inside).any()
    np.testing.assert_allclose(ratio[inside], 1.0, rtol=0, atol=1e-12)
    assert np.all(ratio[~inside] < 1 - 1e-6)
    assert np.abs(D.weights[:, :3] - W0[:, :3]).max() > 1e-3  # observed coordinates did learn


def test_masked_update_ignores_unobserved_values():
    """Changing x where it is not observed changes nothing in the statistics' view of the data (B, C)."""
    X, masks, W0 = _data(5)
    X2 = np.where(masks > 0, X, 1e3)
    stats = []
    for data in (X, X2):
        net = ns.Network(batch=R)
        x, obs = ns.Population("x", M_), ns.Population("observed", M_)
        code = ns.Population("code", K, dynamics=ns.SparseCode("feature_sign", lam=LAM))  # codes set by hand
        net.add(x, obs, code)
        net.connect(ns.ArrayStream(data), x)
        net.connect(ns.ArrayStream(masks), obs)
        D = ns.Projection("D", x, code, init=osdl.DataElements(W0), rule=OSDLDictionary())
        net.add(D)
        st = OSDLStatistics(D, observed=obs)
        net.add(st)
        net.validate()
        x.activity[:] = data[0]
        obs.activity[:] = masks[0]
        code.activity[:] = np.random.default_rng(0).standard_normal((R, K))
        st.update_numpy()
        D.rule.update_numpy()
        stats.append((D.arrays["B"].copy(), D.arrays["C"].copy(), D.weights.copy()))
    for a, b in zip(*stats):
        np.testing.assert_array_equal(a, b)


def test_checkpoint_resume_is_bit_identical(tmp_path):
    X, masks, W0 = _data(6)
    full, Df, _ = _masked_net(X, masks, W0, rho=1.0, e_form="exact", record=False)
    full.run(T)
    half, Dh, _ = _masked_net(X, masks, W0, rho=1.0, e_form="exact", record=False)
    half.run(T // 2)
    half.save(tmp_path / "c")
    again, Da, sta = _masked_net(X, masks, W0, rho=1.0, e_form="exact", record=False)
    again.load(tmp_path / "c")
    again.run(T - T // 2)
    np.testing.assert_array_equal(Da.weights, Df.weights)
    assert sta.count[0] == T


def test_bad_arguments():
    X, masks, W0 = _data()
    x, code = ns.Population("x", M_), ns.Population("code", K)
    D = ns.Projection("D", x, code)
    with pytest.raises(ValueError, match="rho"):
        OSDLStatistics(D, rho=-1.0)
    with pytest.raises(ValueError, match="e_form"):
        OSDLStatistics(D, e_form="approx")
    with pytest.raises(ValueError, match="observed"):
        OSDLStatistics(D, observed=ns.Population("observed", M_ + 1))
    with pytest.raises(TypeError, match="observed"):
        OSDLStatistics(D, observed=np.ones(M_))
    with pytest.raises(ValueError, match="n_sweeps"):
        OSDLDictionary(n_sweeps=0)
    with pytest.raises(ValueError, match="constraint"):
        OSDLDictionary(constraint="l1")
    net = ns.Network(batch=R)
    x2 = ns.Population("x", M_)
    code2 = ns.Population("code", K, dynamics=ns.SparseCode("feature_sign", lam=LAM))
    net.add(x2, code2)
    net.connect(ns.ArrayStream(X), x2)
    D2 = ns.Projection("D2", x2, code2, rule=OSDLDictionary())
    net.add(D2)
    with pytest.raises(ValueError, match="OSDLStatistics"):
        net.validate()


@pytest.mark.parametrize("e_form", ["online", "exact"])
@pytest.mark.parametrize("rho", [0.0, 2.0])
@pytest.mark.parametrize("constraint", ["l2", "nonneg_l2"])
@pytest.mark.parametrize("backend", ["python", "auto"])
def test_plasticity_equals_the_numpy_transcription(e_form, rho, constraint, backend):
    """Masks, forgetting, T_D = 3: the circuit's statistics and dictionary are those of Tables 1 and 3 in NumPy."""
    from neurosim.coding import feature_sign
    from neurosim.models import osdl_reference

    X, masks, W0 = _data(7)
    net, D, st = _masked_net(X, masks, W0, rho=rho, e_form=e_form, n_sweeps=3, constraint=constraint, record=False)
    net.run(T, backend=backend)

    def encode(Xb, Mb, W):  # the circuit's encoder: a lasso on every coordinate (it ignores the masks)
        return feature_sign(Xb, W, LAM)

    W_ref, stats = osdl_reference.osdl_numpy(zip(X, masks), W0, encode, rho=rho, n_sweeps=3, constraint=constraint,
                                             e_form=e_form)
    np.testing.assert_allclose(D.weights, W_ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(D.arrays["B"], stats.B, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(D.arrays["C"], stats.C, rtol=1e-9, atol=1e-11)
    if e_form == "online":
        np.testing.assert_allclose(D.arrays["E"], stats.e, rtol=1e-9, atol=1e-11)
    assert np.abs(D.weights - W0).max() > 0.05


@pytest.mark.parametrize("rho", [0.0, 2.0])
def test_full_masks_give_eqs_26_to_28(rho):
    """No mask population: C_j = I A_jj (Eq. 26), B = sum x alpha^T (Eq. 27); exact e_j = D a_j (Eqs. 28, 30)."""
    X, _, W0 = _data(8)
    c = osdl.build_network(ns.ArrayStream(X), K, batch=R, e_form="exact", rho=rho,
                           encoder=ns.SparseCode("feature_sign", lam=LAM, warm_start=False), init=W0, record_every=1)
    c.run(T)
    A = c.statistics.A
    assert A.shape == (1, K, K)
    C = c.dictionary.arrays["C"]
    np.testing.assert_array_equal(C, np.repeat(np.diag(A[0])[:, None], M_, axis=1))
    codes = c.network.recorders["code"].to_dataset()["activity"].values
    w = [(i / T) ** rho / R for i in range(1, T + 1)]
    np.testing.assert_allclose(A[0], sum(wi * a.T @ a for wi, a in zip(w, codes)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c.dictionary.arrays["B"], sum(wi * a.T @ x for wi, a, x in zip(w, codes, X)),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("exact", [False, True])
def test_dictionary_kernel_reports_non_finite_atoms(exact):
    """An update that overflows (C_j tiny, b_j huge) returns False: the engine then stops naming D.weights."""
    from neurosim.kernels import osdl as kern

    rng = np.random.default_rng(0)
    W = rng.standard_normal((K, M_)) * 0.1
    C, B, E = np.full((K, M_), 1e-300), np.full((K, M_), 1e300), np.zeros((K, M_))
    A = np.full((1, K, K), 1e-300) if exact else np.zeros((0, 0, 0))
    X, M, codes = rng.standard_normal((R, M_)), np.ones((R, M_)), rng.standard_normal((R, K))
    ok = kern.osdl_dictionary(W, C, B, E, A, X, M, codes, exact, False, 1, 0.0, np.zeros((R, M_)), np.zeros(M_),
                              np.zeros(M_), np.zeros(R), np.zeros(1, dtype=np.int64))
    assert ok is False and not np.isfinite(W).all()
    # and a finite update reports True
    W2 = rng.standard_normal((K, M_)) * 0.1
    C2, B2, E2 = np.ones((K, M_)), rng.standard_normal((K, M_)), np.zeros((K, M_))
    A2 = np.ones((1, K, K)) if exact else np.zeros((0, 0, 0))
    assert kern.osdl_dictionary(W2, C2, B2, E2, A2, X, M, codes, exact, False, 1, 0.0, np.zeros((R, M_)),
                                np.zeros(M_), np.zeros(M_), np.zeros(R), np.zeros(1, dtype=np.int64)) is True


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_the_dictionary_rule_reports_the_sweeps_of_its_last_step(backend):
    # info[0]: sweeps used in the last step; tol = 0 runs exactly n_sweeps (the paper), a tolerance every
    # sweep meets stops after the first
    X, masks, W0 = _data()
    net, D, _ = _masked_net(X, masks, W0, n_sweeps=3, record=False)
    net.run(2, backend=backend)
    assert D.rule.info.tolist() == [3]
    net, D, _ = _masked_net(X, masks, W0, n_sweeps=3, record=False)
    D.rule.set_params(tol=1e6)
    net.run(2, backend=backend)
    assert D.rule.info.tolist() == [1]
