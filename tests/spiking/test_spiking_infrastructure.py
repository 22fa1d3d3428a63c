"""Spiking networks with the rest of the framework (issue 42): ensembles, stores, births and deaths under STDP."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.analysis import spike_events
from neurosim.models.stdp_song import song_network
from neurosim.store import open_store

# slow tier: ensembles, stores and traces through births compile networks of their own (the quick tier's 2 minutes)
pytestmark = pytest.mark.slow


def _stdp_net(seed):
    return song_network(25.0, "additive", seed=seed, n_inputs=150, g_max=0.04)


def test_an_ensemble_of_stdp_networks_gives_each_member_its_own_run():
    alone = []
    for seed in range(3):
        net = _stdp_net(seed)
        net.run(3000)
        alone.append(net)
    members = [_stdp_net(seed) for seed in range(3)]
    ns.Ensemble(members).run(3000)
    for a, m in zip(alone, members):
        np.testing.assert_array_equal(m.projections["S"].weights, a.projections["S"].weights)
        for name in ("a_pre", "a_post", "last_update"):
            np.testing.assert_array_equal(m.projections["S"].arrays[name], a.projections["S"].arrays[name])
        np.testing.assert_array_equal(m.recorders["neuron"].to_dataset().activity.values,
                                      a.recorders["neuron"].to_dataset().activity.values)
    assert sum(float(a.recorders["neuron"].to_dataset().activity.sum()) for a in alone) > 10


def test_spikes_streamed_to_a_store_are_the_recorded_spikes(tmp_path):
    nets = []
    for store in (None, tmp_path / "spikes.zarr"):
        net = ns.Network(dt=1e-4, seed=2)
        p = ns.Population("p", 40, dynamics=ns.LIF(v_rest=-0.045))
        net.add(p)
        p.state["v"][0] = np.linspace(-0.06, -0.05, 40)
        net.record(p, ["activity", "v"], store=store, name="rec")
        net.run(1500)
        nets.append(net)
    in_memory = nets[0].recorders["rec"].to_dataset()
    stored = open_store(tmp_path / "spikes.zarr")  # the slot layout: read as stored, ids per slot
    assert "slot" in stored.activity.dims
    a, b = spike_events(in_memory), spike_events(stored)
    assert a.sizes["spike"] > 40 and b.attrs["n_units"] == 40
    np.testing.assert_array_equal(a.unit.values, b.unit.values)
    np.testing.assert_array_equal(a.step.values, b.step.values)


def test_spikes_of_a_store_with_deaths_and_births_keep_their_stable_ids(tmp_path):
    net = ns.Network(dt=1e-4, seed=2)
    p = ns.Population("p", 6, dynamics=ns.LIF(v_rest=-0.045))
    net.add(p)
    net.record(p, ["activity"], store=tmp_path / "s.zarr", name="rec")
    dense = net.record(p, ["activity"], name="dense")
    net.run(300)
    net.apply(ns.Death(p, p.ids[[0, 3]]))
    net.apply(ns.Birth(p, 3))
    net.run(300)
    stored = spike_events(open_store(tmp_path / "s.zarr"))
    in_memory = spike_events(dense.to_dataset())
    # units 0 and 3 spiked before they died, the newborn 6-8 after they were born
    assert {0, 3, 6, 7, 8} <= set(stored.unit.values.tolist()) == set(in_memory.unit.values.tolist())
    order = lambda ev: np.lexsort((ev.unit.values, ev.step.values))  # noqa: E731
    np.testing.assert_array_equal(stored.unit.values[order(stored)], in_memory.unit.values[order(in_memory)])
    np.testing.assert_array_equal(stored.step.values[order(stored)], in_memory.step.values[order(in_memory)])


@pytest.mark.parametrize("rule", [ns.STDP, pytest.param(ns.TripletSTDP, marks=pytest.mark.slow)])
def test_traces_follow_their_synapses_when_post_units_die_and_are_born(rule):
    # a death removes the dead unit's synapses and their traces; the survivors keep theirs (by synapse)
    runs = {}
    for backend in ("compiled", "python"):
        net = ns.Network(dt=1e-4, seed=4)
        inputs = ns.Population("inputs", 60)
        units = ns.Population("units", 8, dynamics=ns.LIF(v_rest=-0.055))
        net.add(inputs, units)
        net.connect(ns.PoissonStream(30.0, dt=1e-4, dim=60, seed=5), inputs)
        kw = dict(w_max=0.004) if rule is ns.STDP else dict(w_max=0.004, a2_plus=4e-5, a3_plus=4e-5, a2_minus=4e-5)
        S = net.add(ns.Projection("S", inputs, units, connectivity=ns.FixedProbability(0.5), init=ns.Uniform(0, 0.004),
                                  rule=rule("ge", **kw)))
        net.run(2000, backend=backend)
        post, pre = S.synapse_index.pairs()
        before = {n: dict(zip(zip(units.ids[post], pre), S.arrays[n])) for n in (*rule.traces, "last_update")}
        doomed = units.ids[[1, 5]]
        net.apply(ns.Death(units, doomed))
        post, pre = S.synapse_index.pairs()
        assert not np.isin(units.ids[post], doomed).any()
        for n, old in before.items():
            survivors = [old[key] for key in zip(units.ids[post], pre)]
            np.testing.assert_array_equal(S.arrays[n], survivors)
        net.apply(ns.Birth(units, 2))
        net.run(2000, backend=backend)
        runs[backend] = (S.weights.copy(), {n: S.arrays[n].copy() for n in rule.traces})
        assert S.weights.size == S.arrays["last_update"].size
    np.testing.assert_array_equal(runs["compiled"][0], runs["python"][0])
    for n in rule.traces:
        np.testing.assert_array_equal(runs["compiled"][1][n], runs["python"][1][n])
