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


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_the_non_contraction_floor_scales_with_the_state(backend):
    # eta = 1, lateral M = [[0, 1], [1, 0]] (inhibitory), drive (D, D): y <- d - M y maps (a, b) to
    # (D - b, D - a) and back, a period-2 oscillation whose updates are (D - a - b)(1, 1), all exact in
    # binary for D = 2e6, a = 1e6, b = a - delta. The first and last update are equal, so the step is
    # non-contracting unless |dy|^2 = 2 delta^2 is under the floor GROWTH_FLOOR^2 (1 + |y|^2) = 1e-24 (1 + 2e12):
    # delta = 2^-22 is under it (by a factor 18), delta = 2^-16 above (by 240).
    for delta, diverges in ((2.0 ** -22, False), (2.0 ** -16, True)):
        net = ns.Network(seed=0)
        x = ns.Population("x", 1)
        y = ns.Population("y", 2, dynamics=ns.Jacobi(eta=1.0, max_iter=2, zero_start=False))
        net.add(x, y)
        net.connect(ArrayStream(np.full((4, 1), 2e6)), x)
        net.add(ns.Projection("W", x, y), ns.Projection("M", y, y, sign=-1))
        net.projections["W"].weights[:] = 1.0
        net.projections["M"].weights[:] = [[0.0, 1.0], [1.0, 0.0]]
        y.activity[:] = [1e6, 1e6 - delta]
        if diverges:
            with pytest.raises(ns.SimulationDiverged):
                net.run(3, backend=backend)
        else:
            net.run(3, backend=backend)
            np.testing.assert_array_equal(y.activity, [[1e6, 1e6 - delta]])


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_state_turning_nan_inside_the_loop_reports_the_iteration_it_appeared_in(backend):
    # warm start from an infinite state with eta = 1: (1 - eta) y = 0 * inf is NaN in the first
    # iterate; the adaptive loop leaves at once and reports 1 iteration, then the engine names the NaN
    net = _net(ns.Jacobi(eta=1.0, tol=1e-6, max_iter=10, zero_start=False))
    y = net.populations["y"]
    y.activity[:] = np.inf
    with pytest.raises(ns.SimulationDiverged):
        net.run(2, backend=backend)
    assert y.dynamics.iterations == 1
