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


def _no_lateral_net(dyn, value=2.0):
    # one input unit with a constant value -> y (3 units) through weights (1, 2, 0.5): drive d = value * w,
    # no lateral projection (the kernels' lateral_sign == 0 branches)
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 1), ns.Population("y", 3, dynamics=dyn)
    net.add(x, y)
    net.connect(ArrayStream(np.full((8, 1), value)), x)
    net.add(ns.Projection("W", x, y))
    net.projections["W"].weights[:] = [[1.0], [2.0], [0.5]]
    return net


@pytest.mark.parametrize("backend", ["python", "compiled", "per-step"])
def test_fixed_iterations_without_lateral_reach_the_closed_form(backend):
    # y_k = (1 - eta) y_{k-1} + eta d from y_0 = 0 gives y_K = (1 - (1 - eta)^K) d: for eta = 1/2 and
    # K = 4, 15/16 d, exact in binary (the middle iterations are the unmeasured loop)
    net = _no_lateral_net(ns.Jacobi(eta=0.5, max_iter=4))
    if backend == "per-step":
        net.add_callback(lambda n: None, phase="record", when="after", every=1)
    net.run(2, backend="compiled" if backend == "per-step" else backend)
    np.testing.assert_array_equal(net.populations["y"].activity, [[2.0 * 15 / 16, 4.0 * 15 / 16, 1.0 * 15 / 16]])


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_warm_start_exactly_at_the_fixed_point_without_lateral_is_not_non_contracting(backend):
    # eta = 1 without lateral: y <- d, so from the second step on every update is exactly 0 while
    # |y|^2 = 21 > 1. A zero update is below the floor GROWTH_FLOOR^2 (1 + |y|^2) (and T = 0 contracts):
    # never a divergence, and y stays d bit for bit
    net = _no_lateral_net(ns.Jacobi(eta=1.0, max_iter=3, zero_start=False))
    net.run(4, backend=backend)
    np.testing.assert_array_equal(net.populations["y"].activity, [[2.0, 4.0, 1.0]])


def test_measured_iterations_give_the_bits_of_the_hand_loop():
    # _relax_measured: "the update is the same expression as in the unmeasured loops, so a measured
    # iteration gives the same bits"; for n <= SMALL_LATERAL both use the hand product, so the fixed-
    # iterations kernel (first and last iteration measured, the others not) equals a plain Python
    # evaluation of y <- (1 - eta) y + eta (d + s M y), sums in index order, bit for bit
    from neurosim.kernels.dense import SMALL_LATERAL, jacobi_relax

    rng = np.random.default_rng(7)
    batch, n, eta, s, K = 3, 9, 0.3, -1.0, 5
    assert n <= SMALL_LATERAL
    M = 0.1 * rng.standard_normal((n, n))
    np.fill_diagonal(M, 0.0)
    d = rng.standard_normal((batch, n))
    y0 = rng.standard_normal((batch, n))
    y = y0.copy()
    info = np.zeros(2, dtype=np.int64)
    assert jacobi_relax(y, d, M, s, eta, 0.0, K, False, np.empty_like(y), info)
    ref = y0.tolist()
    c = 1.0 - eta
    for _ in range(K):
        for b in range(batch):
            z = []
            for i in range(n):
                acc = 0.0
                for j in range(n):
                    acc += float(M[i, j]) * ref[b][j]
                z.append(acc)
            ref[b] = [c * ref[b][i] + eta * (float(d[b, i]) + s * z[i]) for i in range(n)]
    np.testing.assert_array_equal(y, np.array(ref))
    assert info[0] == K


@pytest.mark.parametrize("zero_start", [True, False])
@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_one_unconverged_iteration_in_tolerance_mode_is_never_non_contracting(backend, zero_start):
    # as in fixed-iterations mode: max_iter = 1 gives one update, nothing to compare (the test runs
    # "from two iterations on"); tol 1e-300 is never met, so the step reports -1, never a divergence
    net = _net(ns.Jacobi(eta=0.5, tol=1e-300, max_iter=1, zero_start=zero_start), scale=1e3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.run(3, backend=backend)
    assert net.populations["y"].dynamics.iterations == -1
    assert np.all(np.isfinite(net.populations["y"].activity))


def test_dynamics_label_names_its_population_once_attached():
    # the label is what divergence and non-convergence messages print
    dyn = ns.Jacobi(eta=0.1, max_iter=5)
    assert dyn.label == "Jacobi dynamics of '?'"
    y = ns.Population("y", 3, dynamics=dyn)
    assert dyn.label == "Jacobi dynamics of 'y'"
    assert y.dynamics is dyn


def test_dynamics_know_their_network_only_through_their_population():
    dyn = ns.Jacobi(eta=0.1, max_iter=5)
    assert dyn.network_of() is None
    y = ns.Population("y", 3, dynamics=dyn)
    assert dyn.network_of() is None  # attached to a population that is in no network yet
    net = ns.Network(seed=0)
    net.add(ns.Population("x", 2), y)
    assert dyn.network_of() is net


@pytest.mark.parametrize("n", [4, 20])  # either side of the kernel's small-population threshold (16)
@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_without_lateral_synapses_the_tolerance_mode_converges_to_the_drive(backend, n):
    """No lateral projection: Eq. 17 is ``y <- (1 - eta) y + eta W x``, whose iterates from ``y = 0`` are
    ``y_k = (1 - (1 - eta)^k) W x``; the tolerance mode stops at the first ``k`` whose update
    ``eta (1 - eta)^(k-1) max|W x|`` is at most ``tol max(max|y_k|, max|W x|) = tol max|W x|``."""
    eta, tol = 0.4, 1e-9
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 5), ns.Population("y", n, dynamics=ns.Jacobi(eta=eta, tol=tol, max_iter=500))
    net.add(x, y)
    X = np.random.default_rng(n).standard_normal((3, 5))
    net.connect(ArrayStream(X), x)
    W = ns.Projection("W", x, y, init=ns.Normal(0.3))
    net.add(W)
    for t in range(3):
        net.run(1, backend=backend)
        drive = W.weights @ X[t]
        k = 1
        while eta * (1 - eta) ** (k - 1) * np.abs(drive).max() > tol * np.abs(drive).max():
            k += 1
        assert y.dynamics.iterations == k
        np.testing.assert_allclose(y.activity[0], (1 - (1 - eta) ** k) * drive, rtol=1e-12, atol=1e-15)


# the sparse forms in the slow tier: compiling jacobi_relax's sparse form for them alone took 9 s of the quick tier
@pytest.mark.parametrize("sparse", [False, pytest.param(True, marks=pytest.mark.slow)])
@pytest.mark.parametrize("n", [5, 20])  # either side of the small-population threshold (16)
@pytest.mark.parametrize("zero_start", [True, False])
@pytest.mark.parametrize("tol", [0.0, 1e-7, 1e-300])  # fixed iterations, reached, not reached
def test_the_kernels_a_plan_chooses_give_the_bits_of_jacobi_relax(tol, zero_start, n, sparse):
    # jacobi_kernel's serial kernels are jacobi_relax with its tol test decided by the plan: the same bits
    # and bookkeeping; the row-parallel ones sum the lateral products in another order (rounding only)
    from neurosim.kernels.dense import jacobi_kernel, jacobi_relax

    rng = np.random.default_rng(7)
    m = rng.normal(size=(n, n)) * 0.3 / n
    m = m + m.T
    np.fill_diagonal(m, 0.0)
    d = rng.normal(size=(3, n))
    y0 = rng.normal(size=(3, n))
    args = (m,)
    if sparse:  # every off-diagonal entry stored, so the dense and sparse products see the same synapses
        rows, cols = np.nonzero(~np.eye(n, dtype=bool))
        indptr = np.searchsorted(rows, np.arange(n + 1)).astype(np.int64)
        args = (m[rows, cols].copy(),)
        extra = (indptr, cols.astype(np.int64))
    else:
        extra = ()
    out = {}
    for name, kernel in [("relax", jacobi_relax), ("serial", jacobi_kernel(tol, False)),
                         ("rows", jacobi_kernel(tol, True))]:
        y, info = y0.copy(), np.zeros(2, np.int64)
        ok = kernel(y, d, args[0], -1.0, 0.3, tol, 200, zero_start, np.empty_like(y), info, *extra)
        out[name] = (ok, info.copy(), y)
    assert jacobi_kernel(tol, False).__name__ == ("jacobi_tolerance" if tol > 0 else "jacobi_fixed")
    assert out["serial"][0] == out["relax"][0]
    np.testing.assert_array_equal(out["serial"][1], out["relax"][1])
    np.testing.assert_array_equal(out["serial"][2], out["relax"][2])
    assert out["rows"][0] == out["relax"][0]
    np.testing.assert_allclose(out["rows"][2], out["relax"][2], rtol=1e-12, atol=1e-14)
    # where the tolerance was reached, y is near the fixed point of (I + M) y = d (the stop is on the update,
    # max |dy| <= 1e-7 max(|y|, |d|); the residual is that over eta (1 - rho), within 1e-4 here)
    if tol == 1e-7:
        assert out["relax"][1][0] > 0
        np.testing.assert_allclose(out["relax"][2] @ (np.eye(n) + m).T, d, atol=1e-4)
