"""A linear population's drive and its projection's rule fused into one pass (neurosim/fusion.py, issue 39).

The oracle: the same network stepped by the compiled per-step path, which
runs every component's kernels one at a time and never fuses, must give the
same bits; and the fused kernels against the unfused calls on arrays.
"""

import numba
import numpy as np
import pytest

import neurosim as ns
from neurosim.fusion import fuse_linear_rules
from neurosim.kernels import sparse as ks
from neurosim.kernels.dense import copy_2d

# Full suite only (the slow tier): the fused kernels compiled per block size and thread count (9 s of a cold quick tier);
# the quick tier stays a quick check of an edit.
pytestmark = pytest.mark.slow


def build(rule, batch=1, n=300, extra=None):
    net = ns.Network(seed=0, batch=batch)
    x, y = ns.Population("x", n), ns.Population("y", n, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, connectivity=ns.FixedProbability(0.05), rule=rule()))
    net.connect(ns.GaussianStream(np.linspace(2.0, 0.5, n), seed=1), x)
    if extra is not None:
        extra(net)
    return net


RULES = {"oja": lambda: ns.Oja(0.002), "hebbian": lambda: ns.Hebbian(0.001, decay=0.01)}


def plan(net, fuse=True):
    from neurosim.engine import Engine

    return Engine(net)._plan(fuse=fuse)


def kernels(net):
    return [c.func.__name__ for c in plan(net).calls]


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("batch", [1, 3])
def test_a_fused_segment_gives_the_bits_of_the_unfused_per_step_kernels(rule, batch):
    fused, stepped = build(RULES[rule], batch), build(RULES[rule], batch)
    assert kernels(fused) == [f"csr_linear_{rule}"]
    fused.run(40)
    # a callback due every step: the compiled kernels one component at a time, nothing fused
    stepped.add_callback(lambda n: None, phase="record", when="after", every=1)
    stepped.run(40)
    assert np.array_equal(fused["W"].weights, stepped["W"].weights)
    assert np.array_equal(fused["y"].activity, stepped["y"].activity)


def test_nothing_is_fused_when_something_runs_between_or_a_trigger_runs_mid_step():
    from neurosim.triggers import every_step

    signal = build(RULES["oja"], extra=lambda net: net.add(ns.CumulativeActivity(net["y"], alpha=0.1,
                                                                                  signal=ns.SquaredNorm(net["x"]))))
    assert "csr_oja" in kernels(signal) and "csr_linear_oja" not in kernels(signal)
    midstep = build(RULES["oja"], extra=lambda net: net.add(ns.Trigger(every_step(), lambda n: [], when="dynamics")))
    assert "csr_linear_oja" not in kernels(midstep)
    two_inputs = build(RULES["oja"], extra=lambda net: net.add(ns.Projection("V", net["x"], net["y"],
                                                                             connectivity=ns.FixedInDegree(2))))
    assert "csr_linear_oja" not in kernels(two_inputs)  # the drive accumulates two projections
    dense = ns.Network(seed=0)
    x, y = ns.Population("x", 5), ns.Population("y", 5, dynamics=ns.Linear())
    dense.add(x, y, ns.Projection("W", x, y, rule=ns.Oja(0.01)))
    dense.connect(ns.GaussianStream(np.ones(5), seed=1), x)
    unfused = plan(dense, fuse=False)
    assert fuse_linear_rules(unfused) is unfused and [c.func.__name__ for c in unfused.calls][-1] == "oja"
    # the GPU plans without fusion (it maps each CPU kernel to its CUDA form)
    assert "csr_oja" in [c.func.__name__ for c in plan(build(RULES["oja"]), fuse=False).calls]


def test_a_fused_runaway_rule_stops_at_the_step_it_overflows_as_the_unfused_one():
    def make():
        net = ns.Network(seed=0)
        x, y = ns.Population("x", 6), ns.Population("y", 4, dynamics=ns.Linear())
        W = ns.Projection("W", x, y, connectivity=ns.FixedProbability(0.8), init=ns.Constant(1e300),
                          rule=ns.Hebbian(1.0))
        net.add(x, y, W)
        net.connect(ns.ArrayStream(np.ones((1, 6))), x)
        return net

    fused, stepped = make(), make()
    stepped.add_callback(lambda n: None, phase="record", when="after", every=1)
    errors = []
    for net in (fused, stepped):
        with pytest.raises(ns.SimulationDiverged) as info:
            net.run(30)
        errors.append(info.value)
    assert errors[0].step == errors[1].step and errors[0].variable == errors[1].variable
    np.testing.assert_array_equal(fused["W"].weights, stepped["W"].weights)


@pytest.mark.parametrize("n_post, p", [(700, 0.05), (5, 0.5), (3000, 0.002)])
def test_fused_kernels_equal_the_unfused_calls_in_any_block_and_thread_count(n_post, p):
    from neurosim.connectivity import FixedProbability

    rng = np.random.default_rng(n_post)
    index = FixedProbability(p).draw(rng, n_post, 400)
    w0 = rng.normal(size=index.size)
    x = rng.normal(size=(2, 400))
    y1, d1, w1 = np.zeros((2, n_post)), np.zeros((2, n_post)), w0.copy()
    ks.csr_drive(d1, x, index.indptr, index.indices, w1, -1.0, False)
    copy_2d(y1, d1)
    ks.csr_oja(w1, index.indptr, index.indices, y1, x, 0.01)
    before = numba.get_num_threads()
    try:
        for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
            numba.set_num_threads(threads)
            for kernel in (ks.csr_linear_oja, ks.csr_linear_oja_rows):
                y2, d2, w2 = np.zeros((2, n_post)), np.zeros((2, n_post)), w0.copy()
                assert kernel(y2, d2, x, index.indptr, index.indices, w2, -1.0, 0.01)
                assert np.array_equal(w2, w1) and np.array_equal(y2, y1) and np.array_equal(d2, d1)
    finally:
        numba.set_num_threads(before)
    # Hebbian too, against its own unfused calls
    y1, d1, w1 = np.zeros((2, n_post)), np.zeros((2, n_post)), w0.copy()
    ks.csr_drive(d1, x, index.indptr, index.indices, w1, 1.0, False)
    copy_2d(y1, d1)
    ks.csr_hebbian(w1, index.indptr, index.indices, y1, x, 0.01, 0.1)
    for kernel in (ks.csr_linear_hebbian, ks.csr_linear_hebbian_rows):
        y2, d2, w2 = np.zeros((2, n_post)), np.zeros((2, n_post)), w0.copy()
        assert kernel(y2, d2, x, index.indptr, index.indices, w2, 1.0, 0.01, 0.1)
        assert np.array_equal(w2, w1) and np.array_equal(y2, y1)
