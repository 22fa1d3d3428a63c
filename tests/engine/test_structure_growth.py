"""Events inside a step, state that grows with units, newborn weights set by the event."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.streams import GaussianStream
from neurosim.triggers import every_step


def grow_net(when="dynamics", trigger_kind="compiled", every=5):
    net = ns.Network(seed=0, batch=2)
    x = ns.Population("x", 6)
    y = ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.linspace(2.0, 0.5, 6), seed=1), x)
    W = ns.Projection("W", x, y, init=ns.Normal(0.5), rule=ns.Oja(0.01))
    net.add(W)
    W.add_array("B")  # follows births like the weights
    y.add_variable("A", pair=True)

    def stats(n):
        a, xa = n.populations["y"].activity, n.populations["x"].activity
        n.populations["y"].state["A"] += a.T @ a
        n.projections["W"].arrays["B"] += a.T @ xa

    net.add_callback(stats, phase="plasticity", when="after")

    def born(n):
        row = np.full((1, 6), 0.1 * (n.t // every))
        return ns.Birth(n.populations["y"], 1, weights={"W": row})

    cond = every_step() if trigger_kind == "compiled" else (lambda n: True)
    net.add(ns.Trigger(cond, born, every=every, when=when))
    net.record(y, "activity")
    return net


def test_events_after_the_dynamics_phase_rerun_it_with_the_new_units():
    net = grow_net("dynamics")
    net.run(12)
    ds = net.recorders["y"].to_dataset(layout="dense")
    # unit 2 was born in step 5 and its activity in that very step is w_new . x (the dynamics ran again)
    x5 = GaussianStream(np.linspace(2.0, 0.5, 6), seed=1).block(4, 1, 2)[0]
    np.testing.assert_allclose(ds.activity.sel(time=5, unit=2).values, x5 @ np.full(6, 0.1), rtol=1e-12)
    assert np.isnan(ds.activity.sel(time=4, unit=2).values).all()
    assert net.populations["y"].ids.tolist() == [0, 1, 2, 3]
    # with the trigger in the events phase the newborn unit is silent in its birth step
    late = grow_net("events")
    late.run(12)
    dl = late.recorders["y"].to_dataset(layout="dense")
    assert np.all(dl.activity.sel(time=5, unit=2).values == 0.0)
    assert "re-run the dynamics phase" in str(net.schedule())


def test_midstep_events_give_the_same_numbers_on_every_path():
    comp, step, py = grow_net(), grow_net(trigger_kind="python"), grow_net()
    comp.run(23)
    step.run(23)
    py.run(23, backend="python")
    for other, exact in ((step, True), (py, False)):
        for a, b in ((comp.projections["W"].weights, other.projections["W"].weights),
                     (comp.projections["W"].arrays["B"], other.projections["W"].arrays["B"]),
                     (comp.populations["y"].state["A"], other.populations["y"].state["A"])):
            if exact:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_pair_variables_and_projection_arrays_follow_births_and_deaths():
    net = grow_net(every=1000)  # no births from the trigger
    y, W = net.populations["y"], net.projections["W"]
    net.run(10)
    A0, B0 = y.state["A"].copy(), W.arrays["B"].copy()
    assert A0.shape == (2, 2) and np.allclose(A0, A0.T) and np.all(np.linalg.eigvalsh(A0) >= -1e-12)
    net.apply(ns.Birth(y, 2, weights={W: np.ones((2, 6))}))
    assert y.state["A"].shape == (4, 4) and W.arrays["B"].shape == (4, 6)
    np.testing.assert_array_equal(y.state["A"][:2, :2], A0)
    assert np.all(y.state["A"][2:] == 0) and np.all(y.state["A"][:, 2:] == 0) and np.all(W.arrays["B"][2:] == 0)
    np.testing.assert_array_equal(W.weights[2:], np.ones((2, 6)))
    net.apply(ns.Death(y, [0]))
    np.testing.assert_array_equal(y.state["A"], np.pad(A0, ((0, 2), (0, 2)))[1:, 1:])
    np.testing.assert_array_equal(W.arrays["B"][0], B0[1])
    with pytest.raises(ValueError, match=r"must have shape \(1, 6\)"):
        net.apply(ns.Birth(y, 1, weights={"W": np.ones((2, 6))}))
    with pytest.raises(ValueError, match="not projections touching it"):
        net.apply(ns.Birth(y, 1, weights={"V": np.ones((1, 6))}))
    with pytest.raises(ValueError, match="pair variables"):
        net.record(y, "A", name="rec_A")


def test_grown_state_survives_checkpoints(tmp_path):
    a, b = grow_net(), grow_net()
    a.run(12)
    a.save(tmp_path / "g")
    a.run(8)
    b.run(3)
    b.load(tmp_path / "g")
    b.run(8)
    np.testing.assert_array_equal(a.projections["W"].arrays["B"], b.projections["W"].arrays["B"])
    np.testing.assert_array_equal(a.populations["y"].state["A"], b.populations["y"].state["A"])


def test_midstep_events_inside_compiled_segments_rerun_the_dynamics_with_their_kernels():
    # A compiled trigger of the dynamics phase stops a segment mid-step; the rest of that step (the
    # dynamics again, with the newborn units) must run the kernels, so a run of segments equals the
    # per-step kernel path bit for bit. Jacobi with a lateral projection: its NumPy reference takes the
    # lateral product with BLAS, not the kernels' loop, so the two differ in the last bits.
    def make(per_step):
        net = ns.Network(seed=0)
        x = ns.Population("x", 6)
        h = ns.Population("h", 4, dynamics=ns.Jacobi(eta=0.2, max_iter=20))
        net.add(x, h)
        net.connect(GaussianStream(np.linspace(3, 0.5, 6), seed=2, chunk=32), x)
        sig = ns.SquaredNorm(x)
        net.add(ns.CumulativeActivity(h, alpha=0.1, signal=sig, beta=0.995, init=2.0))
        net.add(ns.Projection("W", x, h, init=ns.Normal(0.3), rule=ns.NormalizedHebbian(0.1, sig)))
        net.add(ns.Projection("M", h, h, sign=-1, init=ns.Normal(0.05), rule=ns.NormalizedHebbian(0.1, sig)))
        net.add(ns.Trigger(every_step(), lambda n: ns.Birth(n.populations["h"], 1, init={"mu": 5.0}),
                           every=20, when="dynamics"))
        if per_step:
            net.add_callback(lambda n: None, phase="record", when="after", every=1)
        return net

    seg, per = make(False), make(True)
    seg.run(70)
    per.run(70)
    assert seg.populations["h"].size == 7
    np.testing.assert_array_equal(seg.populations["h"].activity, per.populations["h"].activity)
    for name in ("W", "M"):
        np.testing.assert_array_equal(seg.projections[name].weights, per.projections[name].weights)
