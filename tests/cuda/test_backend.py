"""backend="cuda" against the CPU's compiled path, under numba's CUDA simulator (tests/conftest.py).

The simulator runs every CUDA thread as a Python thread, so the networks are
tiny and the runs a few steps; the kernels are the ones a GPU runs. The GPU's
reductions sum in another order than BLAS, so agreement is to rounding
(1e-10 relative in float64), not to the bit.
"""

import functools

import numpy as np
import pytest

import neurosim as ns
from neurosim import cuda as nscuda
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream

# Under the simulator each CUDA thread is a Python thread: minutes of the suite, so the slow tier.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not nscuda.simulator() and not nscuda.extra_installed(),
                                 reason="neither numba's CUDA simulator nor the cuda extra")]

STEPS = 4


def _sm(X, regularizer="XY", **kw):
    args = dict(beta=0.999, eta=0.2, tol=0.0, max_iter=4, zero_start=True, seed=0, record=("activity",),
                record_every=1)
    args.update(kw)
    return build_network(X if isinstance(X, ns.Stream) else ArrayStream(X), 3, regularizer, 0.1, **args)


def _recorded(net, var="activity"):
    rec = next(iter(net.recorders.values()))
    return rec.to_dataset()[var].values


def _close(a, b, rtol=1e-10):
    scale = max(np.abs(b).max(), 1e-300)
    assert np.abs(np.asarray(a) - np.asarray(b)).max() <= rtol * scale


@pytest.fixture(scope="module")
def inputs():
    return np.random.default_rng(0).normal(size=(12, 6))


@pytest.mark.parametrize("regularizer", ["XY", "TY"])
def test_gpu_matches_the_cpu_and_continues_on_it(inputs, regularizer):
    cpu, gpu = _sm(inputs, regularizer), _sm(inputs, regularizer)
    cpu.run(STEPS + 2)
    gpu.network.run(STEPS, backend="cuda")
    assert gpu.network.t == STEPS
    gpu.run(2)  # on from the GPU's state, on the CPU
    for a, b in [(gpu.feedforward.weights, cpu.feedforward.weights), (gpu.lateral.weights, cpu.lateral.weights),
                 (gpu.y.state["mu"], cpu.y.state["mu"]), (_recorded(gpu.network), _recorded(cpu.network))]:
        _close(a, b)
    assert np.all(np.diag(gpu.lateral.weights) == 0.0)
    assert _recorded(gpu.network).shape == (STEPS + 2, 1, 3)


def test_split_gpu_runs_equal_one(inputs):
    one, split = _sm(inputs), _sm(inputs)
    one.network.run(3, backend="cuda")
    split.network.run(1, backend="cuda")
    split.network.run(2, backend="cuda")
    np.testing.assert_array_equal(one.feedforward.weights, split.feedforward.weights)
    np.testing.assert_array_equal(_recorded(one.network), _recorded(split.network))


def _hand_built(X, Z):
    """Batch 2, a masked feed-forward projection, two feed-forward inputs, a warm-started Jacobi, Unity, mu recorded."""
    net = ns.Network(seed=3, batch=2)
    x, z = ns.Population("x", 5), ns.Population("z", 2)
    y = ns.Population("y", 3, dynamics=ns.Jacobi(eta=0.3, tol=0.0, max_iter=3, zero_start=False))
    net.add(x, z, y)
    net.connect(ArrayStream(X), x)
    net.connect(ArrayStream(Z), z)
    one = ns.Unity()
    net.add(ns.CumulativeActivity(y, alpha=0.2, signal=one, beta=0.99))
    mask = np.ones((3, 5), bool)
    mask[0, 1] = mask[2, 4] = False
    net.add(ns.Projection("W", x, y, mask=mask, rule=ns.NormalizedHebbian(0.2, one)))
    net.add(ns.Projection("V", z, y, sign=-1, init=ns.Normal(0.0, 0.3)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(0.2, one)))
    net.record(y, ["activity", "mu"], every=2)
    return net


def test_batches_masks_two_inputs_and_warm_starts():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(8, 2, 5)), rng.normal(size=(8, 2, 2))
    cpu, gpu = _hand_built(X, Z), _hand_built(X, Z)
    cpu.run(STEPS)
    gpu.run(STEPS, backend="cuda")
    for name in ("W", "M", "V"):
        _close(gpu.projections[name].weights, cpu.projections[name].weights)
    assert np.all(gpu.projections["W"].weights[[0, 2], [1, 4]] == 0.0)
    rc, rg = [next(iter(n.recorders.values())).to_dataset() for n in (cpu, gpu)]
    for v in ("activity", "mu"):
        _close(rg[v].values, rc[v].values)
    assert rg["activity"].shape[0] == STEPS // 2


def test_float32_is_close_to_float64(inputs):
    cpu, gpu = _sm(inputs), _sm(inputs)
    cpu.run(STEPS)
    gpu.network.run(STEPS, backend="cuda", precision="float32")
    err = np.abs(gpu.feedforward.weights - cpu.feedforward.weights).max() / np.abs(cpu.feedforward.weights).max()
    assert 0.0 < err < 1e-5  # single precision: not the float64 bits, within 1e-5 (measured ~1e-7)


class _NaNAtStep(ns.Stream):
    """Replays ``data`` but gives NaN at step ``bad`` (ArrayStream refuses non-finite data)."""

    def __init__(self, data, bad):
        self.data, self.bad, self.dim = data, bad, data.shape[1]

    def block(self, t0, n, batch=1):
        out = self.data[t0:t0 + n, None, :].copy()
        if t0 <= self.bad < t0 + n:
            out[self.bad - t0, 0, 1] = np.nan
        return out


def test_non_finite_input_stops_at_its_step_with_recordings(inputs):
    X = _NaNAtStep(inputs, 2)
    gpu = _sm(X)
    with pytest.raises(ns.SimulationDiverged) as info:
        gpu.network.run(STEPS, backend="cuda")
    assert info.value.step == 3 and info.value.variable == "x.activity"
    assert _recorded(gpu.network).shape[0] == 2
    cpu = _sm(X)
    with pytest.raises(ns.SimulationDiverged) as cinfo:
        cpu.run(STEPS)
    assert (cinfo.value.step, cinfo.value.variable) == (info.value.step, info.value.variable)
    _close(gpu.feedforward.weights, cpu.feedforward.weights)


def test_non_contracting_jacobi_is_named_at_the_same_step_as_on_the_cpu(inputs):
    def unstable():
        c = _sm(inputs, eta=1.0, max_iter=6)
        c.lateral.weights = -3.0 * (np.ones((3, 3)) - np.eye(3))  # excitatory through sign -1: rho >= 1
        return c

    errors = []
    for backend in ("auto", "cuda"):
        c = unstable()
        with pytest.raises(ns.SimulationDiverged) as info:
            c.network.run(STEPS, backend=backend)
        errors.append((info.value.step, info.value.variable, info.value.nonfinite))
    assert errors[0] == errors[1]
    assert "not contracting" in errors[1][1]


def test_unsupported_components_are_named_before_running(inputs):
    tol = _sm(inputs, tol=1e-6, max_iter=50)
    with pytest.raises(ValueError, match="tol > 0"):
        tol.network.run(2, backend="cuda")
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ArrayStream(inputs[:, :4]), x)
    net.add(ns.Projection("W", x, y, rule=ns.Oja(0.01)))
    with pytest.raises(ValueError, match=r"W\.rule.*backend='auto'"):
        net.run(2, backend="cuda")
    assert net.t == 0
    net.add_callback(lambda n: None, "dynamics", "after")
    with pytest.raises(ValueError, match="callbacks"):
        net.run(2, backend="cuda")


@pytest.mark.parametrize("kw, err, text", [
    (dict(backend="auto", precision="float32"), ValueError, "needs backend='cuda'"),
    (dict(backend="cuda", precision="float16"), ValueError, "precision"),
    (dict(backend="gpu"), ValueError, "backend"),
])
def test_bad_backend_and_precision(inputs, kw, err, text):
    with pytest.raises(err, match=text):
        _sm(inputs).network.run(1, **kw)


def test_missing_extra_or_gpu_says_which(monkeypatch):
    monkeypatch.setattr(nscuda, "simulator", lambda: False)
    monkeypatch.setattr(nscuda, "extra_installed", lambda: False)
    with pytest.raises(nscuda.CUDAUnavailableError, match=r'python -m pip install -e "\.\[cuda\]"'):
        nscuda.require_cuda()
    monkeypatch.setattr(nscuda, "extra_installed", lambda: True)
    from numba import cuda

    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(nscuda.CUDAUnavailableError, match="no CUDA GPU is usable"):
        nscuda.require_cuda()


def test_too_large_for_the_device_is_refused_before_allocating(inputs, monkeypatch):
    from neurosim.cuda import backend

    monkeypatch.setattr(backend, "check_device_memory", functools.partial(nscuda.check_device_memory, free=1000))
    c = _sm(inputs)
    w0 = c.feedforward.weights.copy()
    with pytest.raises(MemoryError, match="only 9.31e-07 GiB is free"):
        c.network.run(2, backend="cuda")
    assert c.network.t == 0 and np.array_equal(c.feedforward.weights, w0)
    with pytest.raises(MemoryError, match="needs 1 GiB"):
        nscuda.check_device_memory(2**30, "x", free=10)
