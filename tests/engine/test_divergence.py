"""NaN/Inf stops a run with an error naming the step and the variable; recordings are kept."""

import numpy as np
import pytest
from numba import njit

import neurosim as ns
from neurosim.codegen import KernelCall
from neurosim.engine import Engine
from neurosim.streams import GaussianStream


def exploding(backend_steps_ok=40):
    data = np.ones((200, 3))
    data[backend_steps_ok:] = 1e200  # its square overflows: ||x||^2 = inf
    net = ns.Network(seed=0)
    x = ns.Population("x", 3)
    y = ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.5, max_iter=5))
    net.add(x, y)
    net.connect(ns.ArrayStream(data), x)
    sig = ns.SquaredNorm(x)
    net.add(ns.CumulativeActivity(y, alpha=0.1, signal=sig))
    net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, sig)))
    net.record(y, ["activity", "mu"])
    return net


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_divergence_names_step_and_variable_and_keeps_recording(backend):
    net = exploding()
    with pytest.raises(ns.SimulationDiverged) as info:
        net.run(100, backend=backend)
    err = info.value
    assert err.step == 41
    assert err.variable in {"y.activity", "y.mu", "W.weights"}
    assert "step 41" in str(err)
    ds = err.recordings["y"]
    assert ds.time.values.tolist() == list(range(1, 41))
    assert np.isfinite(ds.mu.values).all()
    assert net.t == 41


def test_python_and_compiled_report_the_same_divergence():
    a, b = exploding(), exploding()
    with pytest.raises(ns.SimulationDiverged) as ea:
        a.run(100, backend="compiled")
    with pytest.raises(ns.SimulationDiverged) as eb:
        b.run(100, backend="python")
    assert ea.value.step == eb.value.step


class _NaNAt(ns.ChunkedRandomStream):
    """A user stream that emits NaN at one step (ArrayStream would refuse such data)."""

    def __init__(self, dim, bad_step):
        super().__init__(dim, seed=0, chunk=16)
        self.bad_step = bad_step

    def _draw(self, rng, t0, n, batch):
        x = rng.standard_normal((n, batch, self.dim))
        for t in range(t0, t0 + n):
            if t == self.bad_step - 1:  # step numbers count from 1
                x[t - t0] = np.nan
        return x


@pytest.mark.parametrize("backend", ["compiled", "python"])
@pytest.mark.parametrize("bad_step", [1, 37])
def test_non_finite_input_stops_at_its_step_naming_the_input(backend, bad_step):
    net = ns.Network(seed=0)
    x = ns.Population("x", 4)
    y = ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.5, max_iter=5))
    net.add(x, y)
    net.connect(_NaNAt(4, bad_step), x)
    net.add(ns.Projection("W", x, y, rule=ns.Hebbian(rate=0.01)))
    net.record(y, ["activity"])
    with pytest.raises(ns.SimulationDiverged) as info:
        net.run(100, backend=backend)
    assert info.value.step == bad_step
    assert info.value.variable == "x.activity"
    assert info.value.recordings["y"].time.values.tolist() == list(range(1, bad_step))


def _runaway_hebbian():
    """Weights grow without bound (Hebbian, no decay) until they overflow."""
    net = ns.Network(seed=0)
    x = ns.Population("x", 3)
    y = ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream([3.0, 3.0, 3.0], seed=1), x)
    net.add(ns.Projection("W", x, y, rule=ns.Hebbian(rate=1.0)))
    net.record(y, "activity")
    net.record(net.projections["W"], "weights", name="W")
    return net


def test_diverging_weights_are_reported_alike_by_both_paths_at_their_step():
    errors = {}
    for backend in ("compiled", "python"):
        net = _runaway_hebbian()
        with pytest.raises(ns.SimulationDiverged) as info:
            net.run(5000, backend=backend)
        errors[backend] = info.value
        rec = info.value.recordings
        assert np.isfinite(rec["W"].weights.values).all()  # the diverged step was not recorded
        assert rec["W"].time.values[-1] == info.value.step - 1
    assert errors["compiled"].step == errors["python"].step
    assert errors["compiled"].variable == errors["python"].variable == "W.weights"


@pytest.mark.parametrize("rule", ["oja", "hebbian"])
@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_oja_weights_that_overflow_stop_the_run_naming_the_projection(backend, rule):
    # Oja's update w += rate (y x - y^2 w): with x = 1e200 and w = 1e-50, y = 3e150 is finite but y x
    # overflows at the first step; the plasticity kernel's own finiteness flag names W
    data = np.full((20, 3), 1e200)
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 3), ns.Population("y", 1, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(data), x)
    net.add(ns.Projection("W", x, y, init=ns.Constant(1e-50),
                          rule=ns.Oja(0.5) if rule == "oja" else ns.Hebbian(0.5)))
    with pytest.raises(ns.SimulationDiverged) as info:
        net.run(10, backend=backend)
    assert info.value.step == 1
    assert info.value.variable == "W.weights"


@pytest.mark.parametrize("name", ["oja", "oja_rows", "hebbian", "hebbian_rows"])
def test_rule_kernels_report_an_overflowing_weight(name):
    # the serial and the row-parallel kernels return False when a weight stops being finite, True otherwise
    from neurosim.kernels import plasticity as pk
    kernel = getattr(pk, name)
    extra = (0.5,) if name.startswith("oja") else (0.5, 0.0)
    mask = np.ones((2, 3), dtype=np.bool_)
    for x, finite in ((1e200, False), (1.0, True)):
        pre = np.full((1, 3), x)
        w = np.full((2, 3), 1e-50)
        post = pre @ w.T
        assert kernel(w, post, pre, *extra, False, mask, False) is finite
        assert bool(np.isfinite(w).all()) is finite


def _state(net):
    """Every state array of ``net`` (population variables, weights, masks), its step, ids and event log."""
    out = {"t": net.t, "log": net.event_log.to_dict()}
    for p in net.populations.values():
        out[f"{p.name}.ids"] = p.ids.copy()
        out.update({f"{p.name}.{v}": a.copy() for v, a in p.state.items()})
    for p in net.projections.values():
        out[f"{p.name}.weights"] = p.weights.copy()
    return out


@pytest.mark.parametrize("when", ["dynamics", "events"])
def test_a_step_that_diverges_after_a_compiled_trigger_fired_keeps_the_diverged_state_on_both_paths(when):
    # Issue 38, item 7: a compiled trigger firing at the diverging step made the compiled path finish that
    # step in Python and, when it diverged there, roll back to the step before (finite weights, t = 40),
    # while the per-step path kept the diverged state at step 41 (architecture.md, "A failed step is undone")
    from neurosim.triggers import every_step

    states, errors = {}, {}
    for path in ("compiled", "per-step", "python"):
        net = exploding()
        y = net.populations["y"]
        net.add(ns.Trigger(every_step(), lambda n, y=y: ns.Birth(y, 1), every=41, when=when))
        if path == "per-step":  # a callback due every step: compiled kernels, one step at a time
            net.add_callback(lambda n: None, phase="record", when="after", every=1)
        with pytest.raises(ns.SimulationDiverged) as info:
            net.run(100, backend="python" if path == "python" else "compiled")
        errors[path], states[path] = info.value, _state(net)
    for path in ("compiled", "python"):
        assert errors[path].step == errors["per-step"].step == 41
        assert errors[path].variable == errors["per-step"].variable
    compiled, per_step = states["compiled"], states["per-step"]
    assert compiled["t"] == per_step["t"] == 41
    # a trigger of the dynamics phase gave its newborn before the step diverged (it stays); one of the events
    # phase never ran
    assert compiled["log"] == per_step["log"] and compiled["log"]["step"] == ([41] if when == "dynamics" else [])
    assert compiled.keys() == per_step.keys()
    for key in compiled:
        if key not in ("t", "log"):
            np.testing.assert_array_equal(compiled[key], per_step[key], err_msg=key)  # NaN where NaN, bit for bit
    assert not np.isfinite(compiled["W.weights"]).all()  # the diverged state, not the step before
    assert states["python"]["log"] == per_step["log"]
    for key in compiled:
        if key not in ("t", "log"):
            np.testing.assert_array_equal(np.isfinite(states["python"][key]), np.isfinite(per_step[key]), err_msg=key)
    # what was recorded stops before the diverged step, alike
    for path in ("compiled", "per-step"):
        assert errors[path].recordings["y"].time.values.tolist() == list(range(1, 41))


@njit(cache=True, nogil=True)
def _scale_weights(weights, factor):
    """A rule's kernel that tests nothing it writes (no ``finite`` label): the end of its segment must."""
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            weights[i, j] *= factor


class _Scale(ns.Rule):
    """``W <- factor W`` every step."""

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def update_numpy(self):
        self.projection.weights *= self.factor

    def kernel_call(self):
        w, _, _ = self._refs()
        return KernelCall(_scale_weights, (w, self.factor), label=f"{self.projection.name}.rule")


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_weights_a_rule_makes_non_finite_unchecked_stop_the_run_at_their_step(backend):
    net = ns.Network(seed=0)
    x = ns.Population("x", 3)
    y, z = ns.Population("y", 2, dynamics=ns.Linear()), ns.Population("z", 2, dynamics=ns.Linear())
    net.add(x, y, z)
    net.connect(GaussianStream([1.0, 1.0, 1.0], seed=1), x)
    net.add(ns.Projection("W", x, y, rule=ns.Oja(0.01)), ns.Projection("V", x, y),
            ns.Projection("U", x, z, init=ns.Constant(0.1), rule=_Scale(1e200)))
    engine = Engine(net)
    # scanned after a segment: only U (Oja tests W as it writes it; V has no rule, the drive only reads it)
    assert [p.name for p in engine._unchecked_weights(engine._plan())] == ["U"]
    # step 1: U = 1e199, z finite; step 2: z = U x still finite, then U overflows; the run ends there
    with pytest.raises(ns.SimulationDiverged) as info:
        net.run(2, backend=backend)
    assert (info.value.step, info.value.variable) == (2, "U.weights")
