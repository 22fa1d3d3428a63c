"""Ensemble backend="cuda" (one block per member) against the CPU ensemble, under numba's CUDA simulator."""

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


def _member(seed, eta, regularizer="XY", X=None, **kw):
    X = np.random.default_rng(100 + seed).normal(size=(10, 5)) if X is None else X
    args = dict(beta=0.999, eta=eta, tol=0.0, max_iter=4, zero_start=True, seed=seed, record=("activity",),
                record_every=2)
    args.update(kw)
    stream = X if isinstance(X, ns.Stream) else ArrayStream(X)
    return build_network(stream, 3, regularizer, 0.1, **args).network


def _pair(regularizer="XY", etas=(0.1, 0.3), **kw):
    return [ns.Ensemble([_member(s, e, regularizer, **kw) for s, e in enumerate(etas)]) for _ in range(2)]


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("regularizer", ["XY", "YY", "TY"])
def test_gpu_ensemble_matches_the_cpu_ensemble(regularizer):
    cpu, gpu = _pair(regularizer, zero_start=regularizer != "YY")
    cpu.run(5, threads=1)
    gpu.run(3, backend="cuda")
    gpu.run(2, backend="cuda")
    for a, b in zip(gpu.networks, cpu.networks):
        assert a.t == b.t == 5
        for p in ("W", "M"):
            assert _rel(a.projections[p].weights, b.projections[p].weights) <= 1e-10
        assert _rel(a.populations["y"].state["mu"], b.populations["y"].state["mu"]) <= 1e-10
    assert _rel(gpu.recording("y").values, cpu.recording("y").values) <= 1e-10
    assert gpu.recording("y").shape == (2, 2, 1, 3)


def test_float32_ensemble_is_close():
    cpu, gpu = _pair()
    cpu.run(4, threads=1)
    gpu.run(4, backend="cuda", precision="float32")
    err = max(_rel(a.projections["W"].weights, b.projections["W"].weights) for a, b in zip(gpu.networks, cpu.networks))
    assert 0.0 < err < 1e-5


def test_a_failing_member_stops_at_its_step_and_the_others_finish():
    ens = []
    for _ in range(2):
        nets = [_member(s, 0.2) for s in range(3)]
        nets[1].projections["M"].weights = -3.0 * (np.ones((3, 3)) - np.eye(3))
        nets[1].populations["y"].dynamics.eta = 1.0
        ens.append(ns.Ensemble(nets))
    errs = []
    for e, backend in zip(ens, ("cpu", "cuda")):
        with pytest.raises(ns.SimulationDiverged) as info:
            e.run(4, backend=backend)
        errs.append((info.value.member, info.value.step, info.value.variable))
    assert errs[0] == errs[1]
    assert [n.t for n in ens[1].networks] == [n.t for n in ens[0].networks]
    assert _rel(ens[1].networks[2].projections["W"].weights, ens[0].networks[2].projections["W"].weights) <= 1e-10


def test_unsupported_members_are_refused_naming_why():
    with pytest.raises(ValueError, match="tol > 0"):
        ns.Ensemble([_member(0, 0.1, tol=1e-6, max_iter=20)]).run(1, backend="cuda")
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ArrayStream(np.ones((3, 4))), x)
    net.add(ns.Projection("W", x, y, rule=ns.Oja(0.01)))
    with pytest.raises(ValueError, match="cannot run network"):
        ns.Ensemble([net]).run(1, backend="cuda")
    a, b = _member(0, 0.1), _member(1, 0.1)
    a.run(1)
    with pytest.raises(ValueError, match="same step"):
        ns.Ensemble([a, b]).run(1, backend="cuda")
