"""Tests for survivors of the 200-mutant run on the final engine (see docs/testing.md)."""

import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.streams import GaussianStream


def test_the_per_step_warning_is_given_once_per_network():
    class NumpyOnly(ns.Rule):
        def update_numpy(self):
            self.projection.weights *= 0.999

    net = ns.Network()
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.ones(3), seed=0), x)
    net.add(ns.Projection("W", x, y, rule=NumpyOnly()))
    with pytest.warns(ns.PerStepWarning):
        net.run(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ns.PerStepWarning)
        net.run(2)  # the same network, the same component: not again


def test_sparse_code_refuses_a_lateral_projection():
    net = ns.Network()
    x, a = ns.Population("x", 4), ns.Population("a", 3, dynamics=ns.SparseCode("omp", n_nonzero=1))
    net.add(x, a)
    net.connect(GaussianStream(np.ones(4), seed=0), x)
    net.add(ns.Projection("D", x, a), ns.Projection("L", a, a, sign=-1))
    with pytest.raises(ValueError, match="cannot take lateral projections"):
        net.run(1)


@pytest.mark.parametrize("batch", [1, 3])
def test_large_lateral_jacobi_and_two_feedforward_inputs_agree_across_paths(batch):
    """n > 16 takes the BLAS lateral product; two feed-forward projections (one inhibitory) accumulate the drive."""
    def build():
        net = ns.Network(seed=0, batch=batch)
        x1, x2 = ns.Population("x1", 6), ns.Population("x2", 5)
        y = ns.Population("y", 20, dynamics=ns.Jacobi(eta=0.2, tol=0.0, max_iter=25))
        net.add(x1, x2, y)
        net.connect(GaussianStream(np.linspace(2, 0.5, 6), seed=1), x1)
        net.connect(GaussianStream(np.linspace(1, 0.2, 5), seed=2), x2)
        net.add(ns.Projection("A", x1, y, init=ns.Normal(0.3)), ns.Projection("B", x2, y, sign=-1, init=ns.Normal(0.3)))
        net.add(ns.Projection("M", y, y, sign=-1, init=ns.Uniform(0.0, 0.02)))
        net.record(y, "activity")
        return net

    comp, ref = build(), build()
    comp.run(15)
    ref.run(15, backend="python")
    a = comp.recorders["y"].to_dataset().activity.values
    b = ref.recorders["y"].to_dataset().activity.values
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # the oracle: the last step's y from the same drive and lateral weights, 25 Jacobi iterations by hand
    net = comp
    x1, x2 = net["x1"].activity, net["x2"].activity
    drive = x1 @ net["A"].weights.T - x2 @ net["B"].weights.T
    M = net["M"].weights
    yk = np.zeros_like(drive)
    for _ in range(25):
        yk = 0.8 * yk + 0.2 * (drive - yk @ M.T)
    np.testing.assert_allclose(net["y"].activity, yk, rtol=1e-10, atol=1e-12)


def test_add_returns_what_it_added():
    net = ns.Network()
    x = ns.Population("x", 2)
    assert net.add(x) is x
    a, b = ns.Population("a", 1), ns.Population("b", 1)
    assert net.add(a, b) == (a, b)
