"""A step's events are validated together and applied all or none; populations may empty and refill."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.streams import GaussianStream
from neurosim.triggers import every_step
from test_events import growing_network


def structure(net):
    """Every array an event touches, copied, plus the RNG state and the event log."""
    out = {f"{p}.{v}": a.copy() for p, pop in net.populations.items() for v, a in pop.state.items()}
    out.update({f"{p}.ids": pop.ids.copy() for p, pop in net.populations.items()})
    out.update({f"{p}.next_id": pop.next_id for p, pop in net.populations.items()})
    out.update({f"{n}.weights": p.weights.copy() for n, p in net.projections.items()})
    out.update({f"{n}.mask": None if p.mask is None else p.mask.copy() for n, p in net.projections.items()})
    out["rng"] = net.rng.bit_generator.state
    out["log"] = net.event_log.to_dict()
    return out


def assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].shape == b[k].shape and np.array_equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k


def quiet_network():
    net = growing_network("python")
    net.triggers.clear()
    return net


def test_two_triggers_killing_the_same_unit_in_one_step_kill_it_once():
    net = quiet_network()
    h = net.populations["h"]
    kill = lambda n: ns.Death(n.populations["h"], [2])  # noqa: E731
    net.add(ns.Trigger(lambda n: n.t == 5, kill, name="a"), ns.Trigger(lambda n: n.t == 5, kill, name="b"))
    net.run(8)
    assert h.ids.tolist() == [0, 1, 3]
    assert list(zip(net.event_log.step, net.event_log.kind, net.event_log.unit)) == [(5, "death", 2)]
    ds = net.recorders["h"].to_dataset()
    assert ds.time.values.tolist() == list(range(1, 9)), "the step of the events keeps its sample"
    assert np.isnan(ds.mu.sel(unit=2, time=5)) and np.isfinite(ds.mu.sel(unit=2, time=4))


def test_a_death_may_name_a_unit_born_earlier_in_the_same_call():
    net = quiet_network()
    h = net.populations["h"]
    born, dead = net.apply(ns.Birth(h, 2), ns.Death(h, [4, 0]))
    assert born.tolist() == [4, 5] and dead.tolist() == [0, 4]
    assert h.ids.tolist() == [1, 2, 3, 5]
    assert net.projections["M"].weights.shape == (4, 4) and net.projections["W"].weights.shape == (4, 6)
    log = list(zip(net.event_log.kind, net.event_log.unit))
    assert log == [("birth", 4), ("birth", 5), ("death", 0), ("death", 4)]


def test_a_list_with_one_invalid_event_changes_nothing():
    net = quiet_network()
    net.run(10)
    h = net.populations["h"]
    before = structure(net)
    with pytest.raises(ValueError, match=r"units \[999\] are not alive in population 'h'"):
        net.apply(ns.Birth(h, 1), ns.Death(h, [999]))
    assert_same(structure(net), before)
    # the refused Birth drew no random numbers: the next Birth draws what it would have drawn
    ref = quiet_network()
    ref.run(10)
    assert np.array_equal(net.apply(ns.Birth(h, 1)), ref.apply(ns.Birth(ref.populations["h"], 1)))
    assert np.array_equal(net.projections["W"].weights, ref.projections["W"].weights)


def test_a_failing_trigger_step_applies_none_of_its_events():
    net = quiet_network()
    h = net.populations["h"]
    net.add(ns.Trigger(lambda n: n.t == 5, lambda n: ns.Birth(n.populations["h"], 3), name="grow"))
    net.add(ns.Trigger(lambda n: n.t == 5, lambda n: ns.Death(n.populations["h"], [999]), name="bad"))
    with pytest.raises(ValueError, match="999"):
        net.run(10)
    assert h.size == 4 and h.next_id == 4 and len(net.event_log) == 0
    assert net.projections["W"].weights.shape == (4, 6)


def test_huge_birth_is_refused_before_allocating_and_the_network_still_runs():
    net = ns.Network(seed=0)
    x = ns.Population("x", 1000)
    y = ns.Population("y", 3, dynamics=ns.Jacobi(eta=0.2, max_iter=5))
    net.add(x, y)
    net.connect(GaussianStream(np.linspace(2, 0.5, 1000), seed=1), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.01)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Normal(0.01)))
    net.record(y)
    net.run(5)
    before = structure(net)
    # 10**7 units x 1000 inputs: 80 GB of weights alone and 800 TB for the lateral projection
    with pytest.raises(ValueError, match=r"population 'y' from 3 to 10000003 units .* GiB .* available"):
        net.apply(ns.Birth(y, 10**7))
    assert_same(structure(net), before)
    net.run(5)
    assert net.t == 10 and net.recorders["y"].to_dataset().activity.shape == (10, 1, 3)


def test_max_size_is_a_stated_bound():
    with pytest.raises(ValueError, match=r"max_size must be in \[4, inf\)"):
        ns.Population("h", 4, max_size=3)
    net = ns.Network()
    x, h = ns.Population("x", 2), ns.Population("h", 4, dynamics=ns.Linear(), max_size=6)
    net.add(x, h, ns.Projection("W", x, h))
    before = structure(net)
    with pytest.raises(ValueError, match=r"population 'h' from 4 to 7 units, beyond its max_size = 6"):
        net.apply(ns.Birth(h, 3))
    # validated against the state the list produces: the Death first makes room
    with pytest.raises(ValueError, match="from 6 to 7 units"):
        net.apply(ns.Birth(h, 2), ns.Birth(h, 1))
    assert_same(structure(net), before)
    net.apply(ns.Death(h, [0]), ns.Birth(h, 3))
    assert h.size == 6 and h.params()["max_size"] == 6


def turnover_network(seed=0):
    """Every kind of kernel on populations that empty and refill: Jacobi (tolerance mode) with a lateral
    projection, CumulativeActivity, NormalizedHebbian, Linear with Hebbian and Oja, SparseCode."""
    net = ns.Network(seed=seed, batch=2)
    x = ns.Population("x", 5)
    h = ns.Population("h", 4, dynamics=ns.Jacobi(eta=0.2, tol=1e-9, max_iter=200))
    z = ns.Population("z", 3, dynamics=ns.Linear())
    c = ns.Population("c", 3, dynamics=ns.SparseCode("feature_sign", lam=0.05))
    net.add(x, h, z, c)
    net.connect(GaussianStream(np.linspace(2, 0.5, 5), seed=3, chunk=16), x)
    sig = ns.SquaredNorm(x)
    net.add(ns.CumulativeActivity(h, alpha=0.1, signal=sig, beta=0.99, init=2.0))
    net.add(ns.Projection("W", x, h, init=ns.Normal(0.3), rule=ns.NormalizedHebbian(0.1, sig)))
    net.add(ns.Projection("M", h, h, sign=-1, init=ns.Normal(0.05), rule=ns.NormalizedHebbian(0.1, sig)))
    net.add(ns.Projection("V", h, z, init=ns.Normal(0.3), rule=ns.Hebbian(0.01, decay=0.01)))
    net.add(ns.Projection("U", x, z, init=ns.Normal(0.3), rule=ns.Oja(0.01)))
    net.add(ns.Projection("D", x, c, init=ns.Normal(0.5), rule=ns.Oja(0.005)))
    net.record(h, ["activity", "mu"])
    net.record(z)
    net.record(net.projections["M"], "weights", every=3, name="Mw")
    net.record(net.projections["V"], "weights", every=2, name="Vw")

    def empty(n):
        return [ns.Death(n.populations[p], n.populations[p].ids) for p in ("h", "c") if n.populations[p].size]

    def refill(n):
        return [ns.Birth(n.populations["h"], 3, init={"mu": 3.0}), ns.Birth(n.populations["c"], 2)]

    # compiled conditions, so the compiled run stays on the compiled path
    net.add(ns.Trigger(every_step(), empty, every=20, name="empty"))
    net.add(ns.Trigger(every_step(), refill, every=33, name="refill"))
    return net


def test_populations_empty_and_refill_identically_on_every_path():
    runs = {}
    for path in ("compiled", "per_step", "python"):
        net = turnover_network()
        if path == "per_step":
            net.add_callback(lambda n: None)  # a callback every step: per-step path with the same kernels
        net.run(80, backend="python" if path == "python" else "compiled")
        runs[path] = net
    a, b, c = runs["compiled"], runs["per_step"], runs["python"]
    h = a.populations["h"]
    # emptied at 20, 40, 60, 80 and refilled at 33, 66 (3 units each): empty at the end
    assert h.size == 0 and a.populations["c"].size == 0
    assert h.next_id == 4 + 6 and a.populations["c"].next_id == 3 + 4
    ds = a.recorders["h"].to_dataset()
    assert ds.sizes["time"] == 80
    alive = np.isfinite(ds.mu.values).sum(axis=1)
    assert alive[20 - 1] == 0 and alive[19 - 1] == 4 and alive[33 - 1] == 3 and alive[40 - 1] == 0
    assert np.array_equal(a.populations["z"].activity, b.populations["z"].activity)
    for name in ("h", "z", "Mw", "Vw"):
        assert a.recorders[name].to_dataset().identical(b.recorders[name].to_dataset()), name
        da, dc = a.recorders[name].to_dataset(), c.recorders[name].to_dataset()
        for v in da.data_vars:
            if v.startswith("event_"):
                assert np.array_equal(da[v].values, dc[v].values)
            else:
                np.testing.assert_allclose(da[v].values, dc[v].values, rtol=1e-7, atol=1e-9)
    # the empty stretch really ran: z is driven by U alone there, and x -> z learns
    zs = a.recorders["z"].to_dataset().activity
    assert np.all(np.abs(zs.sel(time=slice(21, 33)).values) > 0)


def test_apply_takes_a_list_and_refuses_non_events_before_applying_any():
    net = quiet_network()
    h = net.populations["h"]
    with pytest.raises(TypeError, match="event must be a Birth, Death, Link, Unlink, Assign, Prune or Grow; got str"):
        net.apply(ns.Birth(h, 1), "Death")
    assert h.size == 4 and len(net.event_log) == 0
    out = net.apply([ns.Birth(h, 1), ns.Death(h, [1, 1, 2])])
    assert [o.tolist() for o in out] == [[4], [1, 2]]
    assert h.ids.tolist() == [0, 3, 4]
