"""Jacobi's reported iteration count on both paths and its non-contraction test (seed-2 survivors)."""

import inspect
import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.streams import ArrayStream, GaussianStream


def test_declared_defaults_are_the_constructor_defaults():
    # params.py: the class attributes are the one table of parameters; __init__ must not disagree
    sig = inspect.signature(ns.Jacobi.__init__).parameters
    for name in ("eta", "tol", "max_iter", "zero_start"):
        assert getattr(ns.Jacobi, name).default == sig[name].default, name
    assert ns.Jacobi.tol.default == 0.0  # docstring: 0 means fixed iterations


def _net(dyn, scale=1.0, lateral=0.05):
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 5), ns.Population("y", 4, dynamics=dyn)
    net.add(x, y)
    net.connect(GaussianStream(scale * np.linspace(2.0, 0.5, 5), seed=1), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.3)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Normal(lateral)))
    return net


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_unreached_tolerance_is_reported_as_a_negative_count(backend):
    # tol 1e-300 cannot be met in 3 iterations of a contracting loop: iterations = -max_iter on both paths
    net = _net(ns.Jacobi(eta=0.3, tol=1e-300, max_iter=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.run(4, backend=backend)
    dyn = net.populations["y"].dynamics
    assert dyn.iterations == -3


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_one_iteration_is_never_called_non_contracting(backend):
    # max_iter = 1 gives one update: nothing to compare, so no divergence, whatever its size
    net = _net(ns.Jacobi(eta=0.5, max_iter=1), scale=1e3)
    net.run(3, backend=backend)
    assert net.populations["y"].dynamics.iterations == 1
    assert np.all(np.isfinite(net.populations["y"].activity))


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_fixed_point_at_large_activity_is_not_non_contracting(backend):
    # Warm start at the fixed point of a constant input: every update is rounding noise, |dy|^2 about
    # (eps |y|)^2 n, and the first and last may come in either order. The floor GROWTH_FLOOR^2 (1 + |y|^2)
    # (1e-24 relative) keeps such a step from being called non-contracting; |y| ~ 1e6 puts the noise
    # (~1e-20) far above a floor that did not scale with |y|^2.
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 5), ns.Population("y", 4, dynamics=ns.Jacobi(eta=0.5, max_iter=40, zero_start=False))
    net.add(x, y)
    net.connect(ArrayStream(np.tile(1e6 * np.linspace(2.0, 0.5, 5), (64, 1))), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.3)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Normal(0.05)))
    net.run(30, backend=backend)
    assert np.all(np.isfinite(y.activity))
