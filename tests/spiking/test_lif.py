"""LIF dynamics and spike transmission: semantics by hand, refusals, both paths, checkpoints (issue 42)."""

import math

import numpy as np
import pytest

import neurosim as ns
from neurosim.dynamics.spiking import current_exact_constants, refractory_steps


def _single(v_rest=-0.04, method="exact", refractory=0.005, steps=1000, backend="compiled"):
    net = ns.Network(dt=1e-4)
    p = ns.Population("p", 1, dynamics=ns.LIF(v_rest=v_rest, method=method, refractory=refractory))
    net.add(p)
    p.state["v"][:] = -0.06
    net.record(p, ["activity", "v"])
    net.run(steps, backend=backend)
    ds = net.recorders["p"].to_dataset()
    return ds.activity.values[:, 0, 0].nonzero()[0], ds.v.values[:, 0, 0]


@pytest.mark.parametrize("method", ["exact", "euler"])
@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_a_unit_above_threshold_fires_at_the_closed_form_period(method, backend):
    # v(t) = v_rest + (v_reset - v_rest) exp(-t / tau_m) crosses -50 mV at tau_m ln 2 = 13.86 ms from -60 mV;
    # then 50 refractory steps (5 ms, v held at the reset) before it integrates again
    spikes, v = _single(method=method, backend=backend)
    first = 0.02 * math.log(2.0) / 1e-4
    assert abs(spikes[0] - first) <= 1.5  # Euler's error over 139 steps of dt/tau_m = 1/200 stays under a step
    gaps = np.diff(spikes)
    assert np.all(gaps == gaps[0]) and gaps[0] == spikes[0] + 50
    # held at the reset while refractory: the recorded v of the 49 steps after a spike is v_reset exactly
    assert np.all(v[spikes[0]:spikes[0] + 50] == -0.06) and v[spikes[0] + 50] > -0.06


def test_the_exact_step_is_the_linear_systems_solution():
    # one step of the exact kernel against scipy's matrix exponential of the 3-variable linear system
    from scipy.linalg import expm

    dt, tm, te, ti, el = 1e-4, 0.02, 0.005, 0.01, -0.049
    c0, c_ge, c_gi, c_v, a_ge, a_gi = current_exact_constants(dt, tm, te, ti, el)
    # d/dt [v, ge, gi, 1] = A [v, ge, gi, 1]
    A = np.array([[-1 / tm, 1 / tm, 1 / tm, el / tm], [0, -1 / te, 0, 0], [0, 0, -1 / ti, 0], [0, 0, 0, 0]])
    E = expm(A * dt)
    np.testing.assert_allclose([c_v, c_ge, c_gi, c0, a_ge, a_gi], [E[0, 0], E[0, 1], E[0, 2], E[0, 3], E[1, 1], E[2, 2]],
                               rtol=1e-12, atol=0.0)


def test_refractory_steps_round_as_brian2s_timestep():
    assert refractory_steps(0.005, 1e-4) == 50
    assert refractory_steps(0.0, 1e-4) == 0
    assert refractory_steps(0.00049, 1e-4) == 4  # 4.9 steps: 4 whole steps
    assert refractory_steps(0.00049999, 1e-4) == 5  # within 1e-3 dt of 5 steps: 5, as Brian2's timestep()


def test_without_refractoriness_a_unit_can_fire_every_step():
    spikes, _ = _single(v_rest=5.0, refractory=0.0, steps=20)
    assert spikes.tolist() == list(range(20))


def test_a_spike_reaches_its_target_in_the_same_step_and_moves_v_in_the_next():
    net = ns.Network(dt=1e-4)
    a = ns.Population("a", 1, dynamics=ns.LIF())
    b = ns.Population("b", 2, dynamics=ns.LIF())
    w = ns.Projection("W", a, b, init=np.array([[0.001], [0.002]]), rule=ns.OnPre("ge"))
    net.add(a, b, w)
    a.state["v"][:] = -0.0499999  # crosses -50 mV in the first step (v_rest = -49 mV pulls it up)
    net.run(1)
    assert a.activity.tolist() == [[1.0]]
    assert b.state["ge"].tolist() == [[0.001, 0.002]]  # delivered after the step's integration
    v_before = b.state["v"].copy()
    net.run(1)
    c0, c_ge, c_gi, c_v, a_ge, a_gi = current_exact_constants(1e-4, 0.02, 0.005, 0.01, -0.049)
    expected = c0 + ((c_ge * np.array([0.001, 0.002]) + c_gi * 0.0) + c_v * v_before[0])
    assert b.state["v"][0].tolist() == expected.tolist()


def test_an_inhibitory_projection_subtracts_its_weights():
    net = ns.Network(dt=1e-4)
    a = ns.Population("a", 2, dynamics=ns.LIF(v_rest=5.0, refractory=0.0))
    b = ns.Population("b", 1, dynamics=ns.LIF())
    w = ns.Projection("W", a, b, sign=-1, init=ns.Constant(0.25), rule=ns.OnPre("gi"))
    net.add(a, b, w)
    net.run(1)
    assert b.state["gi"].tolist() == [[-0.5]]


@pytest.mark.parametrize("kwargs, match", [
    (dict(tau_m=0.0), "tau_m"), (dict(tau_e=-0.005), "tau_e"), (dict(tau_i=float("nan")), "tau_i"),
    (dict(v_reset=-0.05, v_threshold=-0.05), "v_reset must be below v_threshold"),
    (dict(refractory=-0.001), "refractory"), (dict(method="rk4"), "method"),
    (dict(tau_e=0.02), "tau_e != tau_m"),
])
def test_bad_parameters_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ns.LIF(**kwargs)


def test_a_network_without_dt_and_a_projection_without_transmission_are_refused_before_the_run():
    net = ns.Network()
    p = ns.Population("p", 2, dynamics=ns.LIF())
    net.add(p)
    with pytest.raises(ValueError, match=r"Network\(dt=...\)"):
        net.run(1)
    net = ns.Network(dt=1e-4)
    a, b = ns.Population("a", 2, dynamics=ns.LIF()), ns.Population("b", 2, dynamics=ns.LIF())
    net.add(a, b, ns.Projection("W", a, b, rule=ns.Hebbian(0.1)))
    with pytest.raises(ValueError, match="needs rule=ns.OnPre"):
        net.run(1)
    net = ns.Network(dt=1e-4)
    a, b = ns.Population("a", 2, dynamics=ns.LIF()), ns.Population("b", 2, dynamics=ns.LIF())
    net.add(a, b, ns.Projection("W", a, b, rule=ns.OnPre("gx")))
    with pytest.raises(ValueError, match="gx"):
        net.run(1)


def test_a_checkpointed_run_continues_with_the_same_spikes(tmp_path):
    def build():
        rng = np.random.default_rng(5)
        net = ns.Network(dt=1e-4)
        p = ns.Population("p", 200, dynamics=ns.LIF())
        w = ns.Projection("W", p, p, connectivity=ns.FixedProbability(0.1), init=ns.Constant(0.002),
                          rule=ns.OnPre("ge"))
        net.add(p, w)
        p.state["v"][0] = -0.06 + 0.011 * rng.random(200)
        return net

    whole = build()
    whole.run(400)
    cut = build()
    cut.run(150)
    cut.save(tmp_path / "ckpt")
    resumed = build()
    resumed.load(tmp_path / "ckpt")
    resumed.run(250)
    for v in ("v", "ge", "gi", "refractory_left", "activity"):
        np.testing.assert_array_equal(resumed.populations["p"].state[v], whole.populations["p"].state[v])


def test_parameters_changed_one_at_a_time_are_checked_together_before_the_run():
    net = ns.Network(dt=1e-4)
    p = ns.Population("p", 2, dynamics=ns.LIF())
    net.add(p)
    p.dynamics.v_reset = -0.04  # above the threshold: refused when the network validates, before any step
    with pytest.raises(ValueError, match="v_reset must be below v_threshold"):
        net.run(1)
    assert net.t == 0


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_spiking_units_die_and_are_born_as_events(backend):
    # a dead unit neither spikes nor receives; a newborn one starts at its variables' initial values
    # (v at the reset, not refractory) and takes part through the projection's connectivity
    rng = np.random.default_rng(3)
    net = ns.Network(seed=1, dt=1e-4)
    p = ns.Population("p", 100, dynamics=ns.LIF())
    w = ns.Projection("W", p, p, connectivity=ns.FixedProbability(0.1), init=ns.Constant(0.002), rule=ns.OnPre("ge"))
    net.add(p, w)
    p.state["v"][0] = -0.06 + 0.0105 * rng.random(100)
    net.run(200, backend=backend)
    doomed = p.ids[::2].copy()
    net.apply(ns.Death(p, doomed))
    assert p.size == 50 and not np.isin(p.ids, doomed).any()
    net.apply(ns.Birth(p, 10))
    born = p.ids[-10:]
    assert p.state["v"][0, -10:].tolist() == [-0.06] * 10 and p.state["refractory_left"][0, -10:].tolist() == [0.0] * 10
    net.record(p, ["activity", "ge"])
    net.run(600, backend=backend)
    ds = net.recorders["p"].to_dataset()
    assert ds.activity.shape[-1] == 60 and float(ds.activity.sum()) > 0
    # the newborn units receive the survivors' spikes through the synapses drawn for them, and fire
    # (from the reset, -60 mV, towards rest above threshold: alone they would first fire after 48 ms)
    assert float(ds.ge.sel(unit=born).max()) > 0
    first = ds.activity.sel(unit=born).argmax("time").values.ravel()
    assert float(ds.activity.sel(unit=born).sum()) > 0 and first[first > 0].min() < 480
