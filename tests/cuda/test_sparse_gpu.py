"""backend="cuda" on sparse projections against the CPU's compiled path, under numba's CUDA simulator (issue 39).

The simulator runs every CUDA thread as a Python thread, so the networks are
tiny and the runs a few steps. The GPU sums each row with a block-wide tree
reduction, in another order than the CPU's row loop: agreement to rounding.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim import cuda as nscuda

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not nscuda.simulator() and not nscuda.extra_installed(),
                                 reason="neither numba's CUDA simulator nor the cuda extra")]


def _net(rule, lateral, batch=2, inputs=None):
    net = ns.Network(seed=4, batch=batch)
    x = ns.Population("x", 6)
    y = ns.Population("y", 3, dynamics=ns.Jacobi(eta=0.3, max_iter=2) if lateral else ns.Linear())
    net.add(x, y)
    X = np.random.default_rng(1).normal(size=(8, 6)) if inputs is None else inputs
    net.connect(ns.ArrayStream(X), x)
    s = ns.SquaredNorm(x)
    if rule == "NormalizedHebbian":
        net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s, beta=0.99))
    make = {"Oja": lambda: ns.Oja(0.05), "Hebbian": lambda: ns.Hebbian(0.02, decay=0.05),
            "NormalizedHebbian": lambda: ns.NormalizedHebbian(0.1, s)}[rule]
    net.add(ns.Projection("W", x, y, connectivity=ns.FixedProbability(0.5), rule=make()))
    if lateral:
        net.add(ns.Projection("M", y, y, sign=-1, connectivity=ns.FixedProbability(0.5), init=ns.Uniform(0, 0.1),
                              rule=make() if rule == "NormalizedHebbian" else None))
    net.record(y, ["activity"], every=1)
    return net


@pytest.mark.parametrize("rule, lateral, batch", [("Oja", False, 2), ("Hebbian", True, 1), ("NormalizedHebbian", True, 2)])
def test_sparse_projections_on_the_gpu_match_the_cpu(rule, lateral, batch):
    cpu, gpu = _net(rule, lateral, batch), _net(rule, lateral, batch)
    cpu.run(2)
    gpu.run(2, backend="cuda")
    for name in ["W"] + (["M"] if lateral else []):
        a, b = gpu[name].weights, cpu[name].weights
        assert np.abs(a - b).max() <= 1e-10 * np.abs(b).max(), name
        assert gpu[name].synapse_index == cpu[name].synapse_index
    ra, rb = gpu.recorders["y"].to_dataset().activity.values, cpu.recorders["y"].to_dataset().activity.values
    assert np.abs(ra - rb).max() <= 1e-10 * np.abs(rb).max()


def test_a_runaway_sparse_rule_stops_the_gpu_run_at_the_step_it_overflows():
    # one synapse per unit, w = 1e200 and x = 1e108: the drive y = 1e308 is finite, the Hebbian update
    # w + y x = 1e416 is not, so the rule's own test stops the run at step 2 (step 1 runs finite: x = 0)
    def net():
        n = ns.Network(seed=0)
        x, y = ns.Population("x", 2), ns.Population("y", 2, dynamics=ns.Linear())
        n.add(x, y, ns.Projection("W", x, y, connectivity=ns.FromIndices([0, 1], [0, 1]), init=ns.Constant(1e200),
                                  rule=ns.Hebbian(1.0)))
        n.connect(ns.ArrayStream(np.array([[0.0, 0.0], [1e108, 1.0]])), x)
        return n

    cpu, gpu = net(), net()
    with pytest.raises(ns.SimulationDiverged) as a:
        cpu.run(3)
    with pytest.raises(ns.SimulationDiverged) as b:
        gpu.run(3, backend="cuda")
    assert a.value.step == b.value.step == 2 and a.value.variable == b.value.variable == "W.weights"
    assert cpu.t == gpu.t == 2
