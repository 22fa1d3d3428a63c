"""Units born and killed during a run keep weights, rule state and recordings consistent."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.streams import GaussianStream
from neurosim.events import Link, Unlink
from neurosim.triggers import activity_above, every_step


def growing_network(trigger_kind="python", seed=0):
    """x (6) -> h (4, Jacobi + lateral) with similarity-matching plasticity; h grows and shrinks."""
    net = ns.Network(seed=seed)
    x = ns.Population("x", 6)
    h = ns.Population("h", 4, dynamics=ns.Jacobi(eta=0.2, max_iter=20))
    net.add(x, h)
    net.connect(GaussianStream(np.linspace(3, 0.5, 6), seed=2, chunk=32), x)
    sig = ns.SquaredNorm(x)
    net.add(ns.CumulativeActivity(h, alpha=0.1, signal=sig, beta=0.995, init=2.0))
    net.add(ns.Projection("W", x, h, init=ns.Normal(0.3), rule=ns.NormalizedHebbian(0.1, sig)))
    net.add(ns.Projection("M", h, h, sign=-1, init=ns.Normal(0.05), rule=ns.NormalizedHebbian(0.1, sig)))
    net.record(h, ["activity", "mu"])
    net.record(net.projections["W"], "weights", every=10, name="W")

    def grow(n):
        return ns.Birth(n.populations["h"], 2, init={"mu": 5.0})

    def kill(n):
        pop = n.populations["h"]
        return ns.Death(pop, pop.ids[:2]) if pop.size > 3 else None

    if trigger_kind == "python":
        net.add(ns.Trigger(lambda n: n.t % 50 == 0, grow, name="grow"))
        net.add(ns.Trigger(lambda n: n.t % 70 == 0, kill, name="kill"))
    else:
        net.add(ns.Trigger(every_step(), grow, every=50, name="grow"))
        net.add(ns.Trigger(every_step(), kill, every=70, name="kill"))
    return net


def alive_at(net, pop, t, initial):
    alive = set(initial)
    log = net.event_log
    for s, kind, p, u in zip(log.step, log.kind, log.population, log.unit):
        if p != pop or s > t:
            continue
        (alive.add if kind == "birth" else alive.discard)(u)
    return alive


@pytest.mark.parametrize("kind", ["python", "compiled"])
def test_structure_stays_consistent(kind):
    net = growing_network(kind)
    net.run(300)
    h, W, M = net.populations["h"], net.projections["W"], net.projections["M"]
    assert W.weights.shape == (h.size, 6)
    assert M.weights.shape == (h.size, h.size)
    assert np.all(np.diag(M.weights) == 0.0)
    assert h.state["mu"].shape == (h.size,)
    assert h.activity.shape == (1, h.size)
    # births at 50, 100, ..., 300 (6 x 2 units), deaths at 70, 140, 210, 280 (4 x 2 units)
    assert h.size == 4 + 12 - 8
    assert len(set(h.ids)) == h.size
    births = [u for k, u in zip(net.event_log.kind, net.event_log.unit) if k == "birth"]
    assert births == list(range(4, 16)), "ids are handed out in order and never reused"
    deaths = [s for k, s in zip(net.event_log.kind, net.event_log.step) if k == "death"]
    assert sorted(set(deaths)) == [70, 140, 210, 280]


@pytest.mark.parametrize("kind", ["python", "compiled"])
def test_recorded_units_are_exactly_the_living(kind):
    net = growing_network(kind)
    net.run(300)
    ds = net.recorders["h"].to_dataset()
    assert ds.sizes["time"] == 300
    for t in (1, 49, 50, 51, 69, 70, 71, 140, 150, 299, 300):
        row = ds.mu.sel(time=t)
        recorded = set(ds.unit.values[np.isfinite(row.values)].tolist())
        assert recorded == alive_at(net, "h", t, range(4)), t
    # newborn units start from the given init, then learn
    born_at_50 = ds.mu.sel(unit=[4, 5])
    assert np.all(np.isnan(born_at_50.sel(time=49)))
    w = net.recorders["W"].to_dataset()
    assert w.weights.dims == ("time", "unit", "pre_unit")
    assert np.isnan(w.weights.sel(time=40, unit=4)).all() and np.isfinite(w.weights.sel(time=60, unit=4)).all()
    # the event log travels with the dataset
    assert int((ds.event_kind == "birth").sum()) == 12


def test_compiled_trigger_and_python_trigger_give_identical_runs():
    a, b = growing_network("python"), growing_network("compiled")
    a.run(300)
    b.run(300)
    assert np.array_equal(a.projections["W"].weights, b.projections["W"].weights)
    assert np.array_equal(a.populations["h"].ids, b.populations["h"].ids)
    assert a.recorders["h"].to_dataset().identical(b.recorders["h"].to_dataset())


def test_numpy_path_follows_the_same_events():
    a, b = growing_network("python"), growing_network("python")
    a.run(200, backend="python")
    b.run(200, backend="compiled")
    np.testing.assert_allclose(a.projections["W"].weights, b.projections["W"].weights, rtol=1e-9, atol=1e-12)


def test_activity_threshold_trigger_fires_inside_a_segment():
    net = growing_network("python")
    net.triggers.clear()
    fired = []

    def grow_once(n):
        fired.append(n.t)
        return ns.Birth(n.populations["h"], 1) if len(fired) == 1 else None

    net.add(ns.Trigger(activity_above(net.populations["h"], 1.5), grow_once))
    net.run(200)
    assert fired, "the threshold was crossed"
    ds = net.recorders["h"].to_dataset()
    first = fired[0]
    assert np.nanmax(ds.activity.sel(time=slice(1, first - 1)).values, initial=-np.inf) <= 1.5
    # the step that fired recorded the crossing, and the unit born in its events phase is alive in its record phase
    assert ds.activity.sel(time=first, unit=[0, 1, 2, 3]).max() > 1.5
    assert np.isfinite(ds.activity.sel(time=first, unit=4)).all()
    assert np.isnan(ds.activity.sel(time=first - 1, unit=4)).all()
    assert net.populations["h"].size == 5


def test_manual_events_and_unit_view():
    net = growing_network("python")
    net.triggers.clear()
    net.run(10)
    h = net.populations["h"]
    new = net.apply(ns.Birth(h, 1, init={"mu": 7.0}))
    assert new.tolist() == [4]
    u = h.unit(4)
    assert u.state["mu"] == 7.0
    ids, w = u.incoming["W"]
    assert ids.tolist() == list(range(6)) and w.shape == (6,)
    lat_ids, _ = u.incoming["M"]
    assert 4 not in lat_ids.tolist(), "no self-synapse"
    net.apply(ns.Death(h, [0, 4]))
    assert h.ids.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="not alive"):
        h.unit(0)
    gone = net.apply(ns.Death(h, h.ids))  # every unit may die, and the population can grow again
    assert gone.tolist() == [1, 2, 3] and h.size == 0 and net.projections["M"].weights.shape == (0, 0)
    assert net.apply(ns.Birth(h, 1)).tolist() == [5]
    net.run(10)
    assert net.t == 20


def test_events_cannot_resize_a_stream_fed_population(sm):
    net = sm("XY", n=12)
    net.run(3)
    x = net.populations["x"]
    with pytest.raises(ValueError, match="driven by an input stream"):
        net.apply(ns.Birth(x, 2))
    with pytest.raises(ValueError, match="driven by an input stream"):
        net.apply(ns.Death(x, [0, 1]))
    assert x.size == 12 and net.projections["W"].weights.shape == (3, 12)
    net.run(3)


def test_checkpoint_with_another_input_size_is_refused(sm, tmp_path):
    a = sm("XY", n=12)
    a.run(5)
    path = a.save(tmp_path / "ck")
    with pytest.raises(ValueError, match="structure"):
        sm("XY", n=10).load(path)


def test_a_stream_that_does_not_fit_its_population_is_refused_by_both_paths(sm):
    for backend in ("compiled", "python"):
        net = sm("XY", n=12)
        net.inputs[0].stream.dim = 10  # a broken user stream: declares one size, its blocks have another
        net.inputs[0].stream.block = lambda t0, n, batch=1: np.zeros((n, batch, 10))
        with pytest.raises(ValueError, match="needs float64 of shape"):
            net.run(5, backend=backend)


@pytest.mark.parametrize("init, match", [
    ({"foo": 1.0}, "unknown variables"),
    ({"mu": [1.0, 2.0, 3.0]}, r"init\['mu'\] must be a number or an array broadcastable"),
    ({"mu": "abc"}, r"init\['mu'\]"),
    ({"mu": np.nan}, r"init\['mu'\] must be finite"),
])
def test_refused_birth_leaves_the_network_intact(init, match):
    net = growing_network("python")
    net.run(10)
    h = net.populations["h"]
    before = {k: v.copy() for k, v in h.state.items()}, h.ids.copy(), net.projections["W"].weights.copy()
    with pytest.raises(ValueError, match=match):
        net.apply(ns.Birth(h, 2, init=init))
    assert np.array_equal(h.ids, before[1])
    assert all(np.array_equal(h.state[k], v) for k, v in before[0].items())
    assert np.array_equal(net.projections["W"].weights, before[2])
    net.run(5)  # still runs


@pytest.mark.parametrize("every", [0, -1])
def test_trigger_refuses_a_period_below_one(every):
    # Documented: ``every : int >= 1`` (evaluated at steps with t % every == 0); 0 would make
    # that test a division by zero in the middle of a run, so the constructor refuses it.
    with pytest.raises(ValueError, match="every"):
        ns.Trigger(every_step(), lambda n: None, every=every)
    assert ns.Trigger(every_step(), lambda n: None, every=1).every == 1


def test_synapse_events_must_name_at_least_one_synapse():
    net = ns.Network()
    y = ns.Population("y", 3)
    net.add(y)
    E = ns.Projection("E", y, y, mask=np.zeros((3, 3), bool))
    net.add(E)
    for event in (Link, Unlink):
        with pytest.raises(ValueError, match="must name at least one synapse"):
            event(E, [], [])
    # one synapse is enough
    Link(E, 0, 1)


@pytest.mark.parametrize("storage", ["dense", "sparse"])
def test_a_link_gives_each_new_synapse_its_own_weight(storage):
    """``weight`` one per pair: each new synapse gets its own (by id), others are untouched; a wrong count is refused."""
    net = ns.Network()
    y = ns.Population("y", 3)
    E = ns.Projection("E", y, y, connectivity=ns.FromIndices(matrix=np.zeros((3, 3), bool)), storage=storage)
    net.add(y, E)
    net.apply(Link(E, [0, 2, 1], [1, 0, 2], weight=[0.25, -0.5, 2.0]))
    W = E.to_dense()
    expected = np.zeros((3, 3))
    expected[0, 1], expected[2, 0], expected[1, 2] = 0.25, -0.5, 2.0
    assert np.array_equal(W, expected)
    with pytest.raises(ValueError, match=r"one per synapse \(2\); got shape \(3,\)"):
        Link(E, [0, 1], [2, 2], weight=[0.1, 0.2, 0.3])


def test_a_trigger_is_compiled_exactly_when_its_condition_is_a_kernel_call():
    y = ns.Population("y", 2)
    compiled = ns.Trigger(activity_above(y, 0.5), lambda n: [], every=3)
    python = ns.Trigger(lambda n: True, lambda n: [], every=3)
    assert compiled.compiled is True and python.compiled is False
    assert ns.Trigger(every_step(), lambda n: [], every=1).compiled is True


@pytest.mark.parametrize("where", [0, 5, 11])  # first, middle and last of a (3, 4) variable
def test_the_trigger_kernels_read_every_element(where):
    """``any_above`` and ``mean_below`` (kernels.triggers) over all 12 entries, whichever one is set."""
    from neurosim.kernels.triggers import any_above, mean_below

    a = np.zeros((3, 4))
    a.flat[where] = 2.0
    assert any_above(a, 1.0) and not any_above(a, 2.0)
    # mean 2 / 12 exactly when every entry is summed
    assert mean_below(a, 2.0 / 12 + 1e-12) and not mean_below(a, 2.0 / 12)
