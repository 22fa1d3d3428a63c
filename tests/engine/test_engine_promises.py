"""What the engine promises: refused wiring, failed steps undone, safe concurrency, no speed cliffs."""

import multiprocessing
import threading

import numpy as np
import pytest

import neurosim as ns
from neurosim.engine import Engine
from neurosim.streams import GaussianStream
from neurosim.triggers import activity_above, every_step

from sm_helpers import make_sm, state_of

#: slow tier: networks compiled in several processes and threads at once (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow


def test_a_signal_of_another_networks_population_is_refused():
    other = ns.Network(name="A")
    xa = ns.Population("x", 4)
    other.add(xa)
    net = ns.Network(name="B")
    x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.ones(4), seed=0), x)
    s = ns.SquaredNorm(xa)  # built on network A's input
    net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s))
    net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, s)))
    with pytest.raises(ValueError, match="reads population 'x', which belongs to another network"):
        net.run(1)


def test_normalized_hebbian_without_its_mu_rule_is_refused():
    net = ns.Network()
    x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.ones(4), seed=0), x)
    net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1)))
    with pytest.raises(ValueError, match=r"no unit rule updates it; add CumulativeActivity\(y"):
        net.run(1)


def test_run_inside_a_callback_is_refused():
    net = make_sm()
    net.add_callback(lambda n: n.run(10), every=5)
    with pytest.raises(RuntimeError, match="already running"):
        net.run(20)
    assert net.t == 4  # step 5 failed and was undone


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_a_failing_callback_leaves_the_network_at_the_last_completed_step(backend):
    ref = make_sm()
    ref.run(60, backend=backend)

    net = make_sm()
    calls = []

    def flaky(n):
        if n.t == 37 and not calls:
            calls.append(n.t)
            raise RuntimeError("user error")

    net.add_callback(flaky, phase="record", when="after")
    with pytest.raises(RuntimeError, match="user error"):
        net.run(60, backend=backend)
    assert net.t == 36
    net.run(24, backend=backend)  # continuing gives exactly the uninterrupted run
    a, b = state_of(net), state_of(ref)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    ta = net.recorders["y"].to_dataset()
    tb = ref.recorders["y"].to_dataset()
    assert ta.time.values.tolist() == list(range(1, 61))
    np.testing.assert_array_equal(ta.activity.values, tb.activity.values)


def test_a_failing_action_after_a_compiled_trigger_is_undone():
    def build():
        net = make_sm()
        y = net.populations["y"]
        net.add(ns.Trigger(every_step(), lambda n: ns.Birth(y, 1) if n.t == 40 else None, every=20))
        return net

    ref = build()
    ref.run(80)
    net = build()
    y = net.populations["y"]
    boom = [True]

    def bad_action(n):
        if n.t == 60 and boom:
            boom.clear()
            raise KeyError("action failed")
        return None

    net.add(ns.Trigger(every_step(), bad_action, every=30))
    with pytest.raises(KeyError, match="action failed"):
        net.run(80)
    assert net.t == 59 and y.size == 4  # the birth at step 40 stays; step 60 never happened
    net.run(21)
    a, b = state_of(net), state_of(ref)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert list(net.event_log.step) == list(ref.event_log.step)


def test_a_recorder_added_by_a_callback_mid_run():
    net = make_sm()

    def add_recorder(n):
        if "mu_late" not in n.recorders:
            n.record(n.populations["y"], "mu", every=5, name="mu_late")

    net.add_callback(add_recorder, phase="record", when="after", every=100)
    net.run(300)
    ds = net.recorders["mu_late"].to_dataset()
    assert ds.time.values.tolist() == list(range(105, 301, 5))


def test_compiled_triggers_are_evaluated_on_their_own_every_inside_segments(monkeypatch):
    net = make_sm()
    fired = []
    y = net.populations["y"]
    net.add(ns.Trigger(activity_above(y, -1e300), lambda n: fired.append(n.t), every=2_500))
    segments = []
    real = Engine._run_segment
    monkeypatch.setattr(Engine, "_run_segment", lambda self, n: (segments.append(n), real(self, n))[1])
    net.run(10_000)
    assert fired == [2_500, 5_000, 7_500, 10_000]
    # a segment ends only where the trigger fires (and where segments are sized), not at every step
    assert len(segments) < 40


def test_a_component_without_kernel_runs_alone_in_numpy_and_the_others_keep_their_kernels(monkeypatch):
    class Shrink(ns.Rule):
        def update_numpy(self):
            self.projection.weights *= 0.999

    def build():
        net = make_sm()
        x = net.populations["x"]
        z = ns.Population("z", 2, dynamics=ns.Linear())
        net.add(z)
        net.add(ns.Projection("V", x, z, rule=Shrink()))
        return net

    net, ref = build(), build()
    called = []
    monkeypatch.setattr(ns.Jacobi, "step_numpy", lambda self: called.append(1))
    with pytest.warns(ns.PerStepWarning, match="Shrink on projection 'V' has no compiled kernel"):
        net.run(50)
    assert not called  # Jacobi kept its kernel
    monkeypatch.undo()
    ref.run(50, backend="python")
    np.testing.assert_allclose(net.projections["W"].weights, ref.projections["W"].weights, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(net.projections["V"].weights, ref.projections["V"].weights, rtol=1e-12)


def _run_structure(seed, out, k):
    try:
        net = make_sm(seed=seed, n=9, k=2)
        net.run(200)
        out[k] = net.projections["W"].weights.copy()
    except BaseException as exc:  # pragma: no cover - reported by the assertion
        out[k] = exc


def test_threads_building_one_structure_on_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NEUROSIM_CACHE_DIR", str(tmp_path))
    from neurosim import codegen

    monkeypatch.setattr(codegen, "_loaded", {})
    out = {}
    threads = [threading.Thread(target=_run_structure, args=(s, out, s)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert isinstance(out[k], np.ndarray), out[k]
    single = {}
    _run_structure(2, single, 0)
    np.testing.assert_array_equal(out[2], single[0])


def _process_worker(args):
    cache, seed = args
    import os

    os.environ["NEUROSIM_CACHE_DIR"] = cache
    out = {}
    _run_structure(seed, out, 0)
    w = out[0]
    if not isinstance(w, np.ndarray):
        return repr(w)
    return float(w.sum())


@pytest.mark.slow
def test_processes_sharing_one_empty_cache(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        # a worker that dies loses its task and Pool.map would wait forever: fail instead
        res = pool.map_async(_process_worker, [(str(tmp_path / "shared"), s) for s in range(3)]).get(timeout=300)
    assert all(isinstance(r, float) for r in res), res


def test_lookup_by_name_and_the_printed_schedule():
    net = make_sm()
    assert net["y"] is net.populations["y"] and net["W"] is net.projections["W"]
    with pytest.raises(KeyError, match="no population, projection or recorder named 'q'"):
        net["q"]
    text = str(net.schedule())
    lines = [line.split()[0] for line in text.splitlines()[1:]]
    assert lines == ["input", "dynamics", "plasticity", "plasticity", "plasticity", "plasticity", "plasticity", "record"]
    order = [c.label for c in net.schedule()]
    assert order == ["Jacobi dynamics of 'y'", "signal 'sqnorm_x'", "CumulativeActivity on population 'y'",
                     "NormalizedHebbian on projection 'W'", "NormalizedHebbian on projection 'M'"]


def test_a_new_kind_of_component_is_placed_by_its_order():
    class Accumulate(ns.Component):
        """Running sum of y, a statistics accumulator between the unit rules and the rules."""

        order = -5

        def __init__(self, pop):
            self.population = pop
            self.total = np.zeros(pop.size)

        def populations(self):
            return [self.population]

        def state(self):
            return {"total": self.total}

        def step_numpy(self):
            seen.append("acc")
            self.total += self.population.activity.sum(axis=0)

    seen = []
    net = make_sm()
    acc = Accumulate(net.populations["y"])
    net.add(acc)
    labels = [c.label for c in net.schedule()]
    assert labels.index("Accumulate") == labels.index("CumulativeActivity on population 'y'") + 1
    with pytest.warns(ns.PerStepWarning):
        net.run(10)
    ds_ref = make_sm()
    ds_ref.run(10)
    total = ds_ref.recorders["y"].to_dataset().activity.values.sum(axis=(0, 1))
    np.testing.assert_allclose(acc.total, total, rtol=1e-12)
    assert len(seen) == 10


def test_a_components_own_state_follows_checkpoints_and_undone_steps(tmp_path):
    class Count(ns.Component):
        order = 5

        def __init__(self):
            self.n = np.zeros(1)

        def state(self):
            return {"n": self.n}

        def step_numpy(self):
            self.n += 1

    net = make_sm()
    c = Count()
    net.add(c)
    with pytest.warns(ns.PerStepWarning):
        net.run(10)
    net.save(tmp_path / "ck")
    net.run(5)
    assert c.n[0] == 15
    net.load(tmp_path / "ck")
    assert c.n[0] == 10

    def boom(n):
        raise RuntimeError("no")

    net.add_callback(boom, phase="record", every=3)
    with pytest.raises(RuntimeError):
        net.run(5)
    assert net.t == 11 and c.n[0] == 11  # step 12 ran Count, then failed: undone


def test_the_engine_and_its_measured_step_cost_outlive_a_run_unless_the_structure_changes(monkeypatch):
    # A run of an unchanged network reuses the engine (its plan and the step cost it measured), so its
    # first segment is sized by that cost instead of the short measuring segment of a new engine;
    # after a structural change the engine is rebuilt and measures again.
    from neurosim import engine as engine_module

    calls = []
    original = Engine._run_segment
    monkeypatch.setattr(Engine, "_run_segment", lambda self, n: (calls.append(n), original(self, n))[1])
    net = make_sm("XY")
    net.run(600)
    first = net._engine
    calls.clear()
    net.run(600)
    assert net._engine is first
    assert calls[0] > engine_module.FIRST_SEGMENT
    net.add(ns.Population("spare", 2))  # a structural change
    net.connect(GaussianStream(np.ones(2), seed=2), net.populations["spare"])
    calls.clear()
    net.run(300)
    assert net._engine is not first and calls[0] <= engine_module.FIRST_SEGMENT
