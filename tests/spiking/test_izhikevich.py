"""Izhikevich dynamics: one step and the reset by hand, firing patterns, spike delivery, refusals, both paths (issue 42)."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.dynamics.izhikevich import EULER_CONSTANTS, RESET_ORDER

# slow tier: the Brian2 oracle (test_izhikevich_brian2.py) keeps a compiled Izhikevich network in the quick tier (the quick tier's 2 minutes)
pytestmark = pytest.mark.slow

DT = 1e-4
#: the paper's regular-spiking and fast-spiking parameters (per ms, mV, mV/ms) in SI units
RS = dict(a=20.0, b=200.0, c=-0.065, d=8.0)
FS = dict(a=100.0, b=200.0, c=-0.065, d=2.0)


def _network(size=1, batch=1, **params):
    net = ns.Network(dt=DT, batch=batch)
    p = ns.Population("p", size, dynamics=ns.Izhikevich(**params))
    net.add(p)
    return net, p


def _spike_steps(params, steps=10000, backend="compiled"):
    net, p = _network(**params)
    net.record(p, ["activity", "v"])
    net.run(steps, backend=backend)
    ds = net.recorders["p"].to_dataset()
    return ds.activity.values[:, 0, 0].nonzero()[0], ds.v.values[:, 0, 0]


def test_the_constants_are_the_papers_in_si_units():
    # 140 mV/ms, 5/ms and 0.04/(mV ms) in V/s, 1/s and 1/(V s), computed as Brian2's generated code does
    assert EULER_CONSTANTS == (140.0, 5000.0, 40000.0)


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_one_euler_step_by_hand(backend):
    v0, u0, current, a, b = -0.07, -13.0, 6.5, 30.0, 250.0
    net, p = _network(a=a, b=b)
    p.state["v"][:], p.state["u"][:], p.state["I"][:] = v0, u0, current
    net.run(1, backend=backend)
    # Brian2's generated expression trees, bit for bit
    u1 = (DT * (a * ((b * v0) - u0))) + u0
    v1 = (DT * ((140.0 + ((current + (5000.0 * v0)) + (40000.0 * (v0 * v0)))) - u0)) + v0
    assert p.state["u"].tolist() == [[u1]] and p.state["v"].tolist() == [[v1]]
    # and the paper's equations 1-2 in its own units (mV, ms), to rounding: the SI form is the same model
    v_mv, dt_ms = v0 * 1e3, DT * 1e3
    v1_paper = v_mv + dt_ms * (0.04 * v_mv**2 + 5 * v_mv + 140 - u0 + current)
    u1_paper = u0 + dt_ms * ((a * 1e-3) * ((b * 1e-3) * v_mv - u0))
    assert p.state["v"][0, 0] * 1e3 == pytest.approx(v1_paper, rel=1e-12)
    assert p.state["u"][0, 0] == pytest.approx(u1_paper, rel=1e-12)
    assert p.activity.tolist() == [[0.0]]


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_the_threshold_and_the_reset_by_hand(backend):
    # units just under 30 mV cross it in one step: v = c, u = u' + d (u' the step's Euler update)
    net, p = _network(size=3)
    p.state["c"][:] = [-0.065, -0.05, -0.055]
    p.state["d"][:] = [8.0, 4.0, 2.0]
    p.state["v"][:] = [0.0299, 0.0299, -0.06]
    p.state["u"][:] = 1.0
    v0, u0 = p.state["v"][0].copy(), p.state["u"][0].copy()
    net.run(1, backend=backend)
    u1 = (DT * (20.0 * ((200.0 * v0) - u0))) + u0
    assert p.activity.tolist() == [[1.0, 1.0, 0.0]]
    assert p.state["v"][0, :2].tolist() == [-0.065, -0.05]
    assert p.state["u"][0].tolist() == [u1[0] + 8.0, u1[1] + 4.0, u1[2]]
    # the threshold is v >= v_threshold: a unit landing exactly on it spikes, one just short of it does not
    v1 = (DT * ((140.0 + ((0.0 + (5000.0 * -0.06)) + (40000.0 * (-0.06 * -0.06)))) - 0.0)) + -0.06
    for threshold, spikes in ((v1, 1.0), (np.nextafter(v1, 1.0), 0.0)):
        net, p = _network(v_threshold=float(threshold))
        p.state["v"][:], p.state["u"][:] = -0.06, 0.0
        net.run(1, backend=backend)
        assert p.activity.tolist() == [[spikes]]


def test_regular_spiking_fires_tonically_and_fast_spiking_faster(backend="compiled"):
    # (the compiled path only: test_both_paths_give_the_same_bits compares the paths)
    rs, v = _spike_steps(dict(RS, I=10.0), backend=backend)
    fs, _ = _spike_steps(dict(FS, I=10.0), backend=backend)
    # 1 s under 10 mV/ms: the regular-spiking unit adapts (its first interval is its shortest) and settles into a
    # constant period; the fast-spiking one, with a fast recovery and a small reset increment, fires far more
    isi = np.diff(rs)
    assert rs.size == 23 and fs.size == 131
    assert isi[0] == isi.min() and isi[0] < isi[-1]
    # (a period that is no whole number of steps: the intervals of the fast-spiking unit take two or three values)
    assert np.ptp(isi[-8:]) <= 1 and np.ptp(np.diff(fs)[-20:]) <= 2
    # the recorded v of a spike step is the reset, and v never reaches the cut-off between steps
    assert np.all(v[rs] == -0.065) and v.max() < 0.03
    # without input a regular-spiking unit rests (at about -70 mV for b = 0.2/ms) and never fires
    quiet, v = _spike_steps(dict(RS), backend=backend)
    assert quiet.size == 0 and abs(v[-1] + 0.070) < 0.001


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_a_spike_onto_v_is_a_jump_that_the_reset_overwrites(backend):
    # Brian2's order (thresholds, synapses, resets): unit 1 receives a's spike in the step it spikes itself, so
    # it ends the step at its reset; unit 0 just moves by the weight
    net = ns.Network(dt=DT)
    a = ns.Population("a", 1, dynamics=ns.Izhikevich())
    b = ns.Population("b", 2, dynamics=ns.Izhikevich())
    w = ns.Projection("W", a, b, init=np.array([[0.002], [0.002]]), rule=ns.OnPre("v"))
    net.add(a, b, w)
    a.state["v"][:] = 0.0299
    b.state["v"][:] = [-0.065, 0.0299]
    b.state["u"][:] = -13.0
    v0 = b.state["v"][0].copy()
    net.run(1, backend=backend)
    assert a.activity.tolist() == [[1.0]] and b.activity.tolist() == [[0.0, 1.0]]
    v1 = (DT * ((140.0 + ((0.0 + (5000.0 * v0[0])) + (40000.0 * (v0[0] * v0[0])))) - -13.0)) + v0[0]
    assert b.state["v"].tolist() == [[v1 + 0.002, -0.065]]
    schedule = [c.label for c in net.schedule()]
    assert schedule.index("OnPre on projection 'W'") < schedule.index("Izhikevich reset of 'b'")
    assert net.populations["b"].dynamics.reset.order == RESET_ORDER


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_a_spike_onto_the_current_is_a_lasting_step(backend):
    net = ns.Network(dt=DT)
    a = ns.Population("a", 1, dynamics=ns.Izhikevich())
    b = ns.Population("b", 1, dynamics=ns.Izhikevich(I=1.5))
    net.add(a, b, ns.Projection("W", a, b, sign=-1, init=ns.Constant(0.25), rule=ns.OnPre("I")))
    a.state["v"][:] = 0.0299
    net.run(3, backend=backend)
    assert b.state["I"].tolist() == [[1.25]]  # once, and it stays


def _random_network(batch):
    rng = np.random.default_rng(7)
    net = ns.Network(dt=DT, batch=batch, seed=3)
    p = ns.Population("p", 120, dynamics=ns.Izhikevich())
    ex = ns.Projection("E", p, p, connectivity=ns.FixedProbability(0.1), init=ns.Uniform(0.0, 0.002),
                       rule=ns.OnPre("v"))
    inh = ns.Projection("Inh", p, p, sign=-1, connectivity=ns.FixedProbability(0.05), init=ns.Uniform(0.0, 0.5),
                        rule=ns.OnPre("I"))
    net.add(p, ex, inh)
    r = rng.random(120)
    p.state["a"][:] = 20.0 + 80.0 * r
    p.state["c"][:] = (-65.0 + 15.0 * r**2) * 1e-3
    p.state["d"][:] = 8.0 - 6.0 * r**2
    p.state["I"][:] = 12.0 * rng.random((batch, 120))
    p.state["v"][:] = -0.065 + 0.01 * rng.random((batch, 120))
    return net


# the quick tier compiles one Izhikevich network here (and the Brian2 oracle's); the by-hand tests' compiled
# twins run in the slow tier
def test_both_paths_give_the_same_bits():
    runs = []
    for backend in ("compiled", "python"):
        net = _random_network(batch=2)
        net.record(net.populations["p"], ["activity", "v", "u", "I"])
        net.run(1500, backend=backend)
        runs.append(net.recorders["p"].to_dataset())
    assert float(runs[0].activity.sum()) > 500
    # the samples differ (their own currents and starts) and each follows its own spikes
    assert not np.array_equal(runs[0].activity.values[:, 0], runs[0].activity.values[:, 1])
    for var in ("activity", "v", "u", "I"):
        np.testing.assert_array_equal(runs[0][var].values, runs[1][var].values)


def test_a_checkpointed_run_continues_with_the_same_bits(tmp_path):
    whole = _random_network(batch=1)
    whole.run(700)
    cut = _random_network(batch=1)
    cut.run(300)
    cut.save(tmp_path / "ckpt")
    resumed = _random_network(batch=1)
    resumed.load(tmp_path / "ckpt")
    resumed.run(400)
    for var in ("v", "u", "I", "a", "b", "c", "d", "activity"):
        np.testing.assert_array_equal(resumed.populations["p"].state[var], whole.populations["p"].state[var])


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_units_die_and_are_born_with_their_own_parameters(backend):
    net = _random_network(batch=1)
    p = net.populations["p"]
    net.run(200, backend=backend)
    keep_c = p.state["c"][1::2].copy()
    net.apply(ns.Death(p, p.ids[::2].copy()))
    assert p.state["c"].tolist() == keep_c.tolist()  # per-unit parameters follow their units
    net.apply(ns.Birth(p, 3, init={"c": -0.05, "I": 10.0}))
    assert p.state["c"][-3:].tolist() == [-0.05] * 3 and p.state["a"][-3:].tolist() == [20.0] * 3
    assert p.state["v"][0, -3:].tolist() == [-0.065] * 3 and p.state["u"][0, -3:].tolist() == [200.0 * -0.065] * 3
    net.record(p, ["activity"])
    net.run(1000, backend=backend)
    assert net.recorders["p"].to_dataset().activity.values[:, 0, -3:].sum() > 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(a=float("nan")), "a must be"), (dict(b=float("inf")), "b must be"), (dict(c=float("-inf")), "c must be"),
    (dict(d=float("nan")), "d must be"), (dict(I=float("inf")), "I must be"),
    (dict(v_threshold=float("inf")), "v_threshold must be"),
    (dict(c=0.03), "c must be below v_threshold"), (dict(c=-0.05, v_threshold=-0.06), "c must be below v_threshold"),
])
def test_bad_parameters_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ns.Izhikevich(**kwargs)


def test_a_wrong_type_is_refused_by_name():
    with pytest.raises(TypeError, match="I"):
        ns.Izhikevich(I="10")


def test_bad_networks_are_refused_before_the_run():
    net = ns.Network()
    net.add(ns.Population("p", 2, dynamics=ns.Izhikevich()))
    with pytest.raises(ValueError, match=r"Network\(dt=...\)"):
        net.run(1)
    for rule, match in ((ns.Hebbian(0.1), "needs rule=ns.OnPre\\('v'\\)"), (ns.OnPre("u"), "OnPre\\('u'\\)"),
                        (None, "no rule")):
        net = ns.Network(dt=DT)
        a, b = ns.Population("a", 2, dynamics=ns.Izhikevich()), ns.Population("b", 2, dynamics=ns.Izhikevich())
        net.add(a, b, ns.Projection("W", a, b, rule=rule))
        with pytest.raises(ValueError, match=match):
            net.run(1)
        assert net.t == 0
    # a per-unit reset at or above the threshold, and a parameter set after construction
    net, p = _network(size=3)
    p.state["c"][1] = 0.03
    with pytest.raises(ValueError, match=r"state\['c'\] must be below v_threshold=0.03.*unit 1 has c=0.03"):
        net.run(1)
    net, p = _network()
    p.dynamics.v_threshold = -0.07
    with pytest.raises(ValueError, match="c must be below v_threshold"):
        net.run(1)
    assert net.t == 0


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_a_diverging_unit_stops_the_run_naming_its_state(backend):
    net, p = _network()
    p.state["v"][:] = 1e200  # v * v overflows
    with pytest.raises(ns.SimulationDiverged, match="at step 1: p.v contains NaN or Inf"):
        net.run(10, backend=backend)
