"""Jacobi relaxation: the fixed point it reaches, and a non-contracting lateral loop stopping the run."""

import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.dynamics.jacobi import JacobiNotConverged

#: "compiled": segments; "python": NumPy reference; "per-step": compiled kernels called one at a
#: time (a callback due every step forces that path)
PATHS = ["compiled", "python", "per-step"]

FAILED = "y.activity (Jacobi iteration not contracting)"


def run(net, steps, path):
    if path == "per-step":
        net.add_callback(lambda n: None, phase="record", when="after", every=1)
        return net.run(steps, backend="compiled")
    return net.run(steps, backend=path)


def lateral_net(D, M, sign, eta, tol=0.0, max_iter=30, zero_start=True, quiet=0, steps=60, seed=0):
    """Input ``x`` (3 units, all ones after ``quiet`` silent steps) -> ``y`` with drive ``D x`` and lateral ``M``."""
    data = np.ones((steps, D.shape[1]))
    data[:quiet] = 0.0
    net = ns.Network(seed=seed)
    x = ns.Population("x", D.shape[1])
    y = ns.Population("y", D.shape[0], dynamics=ns.Jacobi(eta=eta, tol=tol, max_iter=max_iter, zero_start=zero_start))
    net.add(x, y)
    net.connect(ns.ArrayStream(data), x)
    net.add(ns.Projection("W", x, y, init=D))
    net.add(ns.Projection("M", y, y, sign=sign, init=M))
    net.record(y, "activity")
    return net


def excitatory_loop(n=4, value=2.0, **kw):
    """``y <- D x + M y`` with every lateral weight ``value``: spectral radius ``(n - 1) value`` at eta = 1."""
    M = np.full((n, n), value)
    np.fill_diagonal(M, 0.0)
    return lateral_net(np.full((n, 3), 0.1), M, sign=1, eta=1.0, **kw)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("tol", [0.0, 1e-8])
def test_an_unstable_lateral_loop_stops_the_run_at_its_step_in_both_modes(path, tol):
    net = excitatory_loop(tol=tol, quiet=5)  # zero input for 5 steps: y = 0 is the fixed point, nothing grows
    with warnings.catch_warnings():
        warnings.simplefilter("error", JacobiNotConverged)  # reported as a failure, not as slow convergence
        with pytest.raises(ns.SimulationDiverged) as info:
            run(net, 50, path)
    err = info.value
    assert err.step == 6 and net.t == 6
    assert err.variable == FAILED
    assert "step 6" in str(err) and "not contracting" in str(err) and "NaN" not in str(err) and not err.nonfinite
    assert err.recordings["y"].time.values.tolist() == [1, 2, 3, 4, 5]
    y = net.populations["y"].activity
    assert np.isfinite(y).all() and np.abs(y).max() > 1e3  # the last iterate is kept as it is


def test_every_path_stops_with_the_same_state():
    ys = {}
    for path in PATHS:
        net = excitatory_loop(quiet=2)
        with pytest.raises(ns.SimulationDiverged) as info:
            run(net, 10, path)
        assert (info.value.step, info.value.variable) == (3, FAILED)
        ys[path] = net.populations["y"].activity.copy()
    np.testing.assert_array_equal(ys["compiled"], ys["per-step"])  # the same kernel
    np.testing.assert_allclose(ys["python"], ys["compiled"], rtol=1e-12)


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_a_marginal_loop_is_not_contracting(path):
    # two units, eta = 1, y <- d + M y with M = [[0, 1], [1, 0]] and d = (0.3, 0.3): the iterates are
    # 0.3 k (1, 1), every update has the same size, y grows without bound (rho = 1)
    net = lateral_net(np.full((2, 3), 0.1), np.array([[0.0, 1.0], [1.0, 0.0]]), sign=1, eta=1.0, max_iter=5)
    with pytest.raises(ns.SimulationDiverged) as info:
        run(net, 3, path)
    assert (info.value.step, info.value.variable) == (1, FAILED)
    np.testing.assert_allclose(net.populations["y"].activity, [[1.5, 1.5]], rtol=1e-14)


def _stable(n=6, seed=3):
    """A symmetric lateral matrix with zero diagonal and ``I + M`` well conditioned, and a drive matrix."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = (A + A.T) / 2
    np.fill_diagonal(M, 0.0)
    M *= 0.6 / np.abs(np.linalg.eigvalsh(M)).max()  # eigenvalues of M in [-0.6, 0.6]
    return rng.standard_normal((n, 3)), M


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mode", [dict(tol=1e-13, max_iter=5000), dict(tol=0.0, max_iter=400)])
def test_a_contracting_loop_reaches_the_linear_solve(path, mode):
    D, M = _stable()
    d = D @ np.ones(3)
    net = lateral_net(D, M, sign=-1, eta=0.5, **mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JacobiNotConverged)
        run(net, 3, path)
    # the fixed point of y <- (1 - eta) y + eta (d - M y) solves (I + M) y = d (paper 002, Eq. 16)
    np.testing.assert_allclose(net.populations["y"].activity[0], np.linalg.solve(np.eye(len(d)) + M, d), rtol=1e-10)


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_a_warm_started_step_already_at_its_fixed_point_is_not_flagged(path):
    # constant input, zero_start=False: after the first steps every update is rounding noise, which
    # may grow from one iteration to the next; the floor keeps it from counting as growth
    D, M = _stable(seed=4)
    net = lateral_net(D, M, sign=-1, eta=1.0, zero_start=False, steps=300)
    run(net, 300, path)
    d = D @ np.ones(3)
    np.testing.assert_allclose(net.populations["y"].activity[0], np.linalg.solve(np.eye(len(d)) + M, d), rtol=1e-12)


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_the_paper_002_circuit_in_fixed_iterations_is_never_flagged(sm, path):
    # eta = 0.1, 30 iterations, anti-Hebbian M learning from zero (symmetric, so contracting)
    net = sm("XY", n=12, k=3, beta=0.99)
    net.run(1500 if path == "compiled" else 300, backend=path)
    assert net.populations["y"].dynamics.iterations == 30
    assert np.abs(net.projections["M"].weights).max() > 0.05  # the lateral loop did develop


def test_a_loop_overflowing_within_a_step_is_reported_as_inf_alike_on_both_paths():
    # lateral weights of 1e40: y overflows within the first step, so the state itself names the problem
    errors = []
    for path in ("compiled", "python"):
        with pytest.raises(ns.SimulationDiverged) as info:
            run(excitatory_loop(value=1e40), 5, path)
        errors.append(info.value)
    assert errors[0].step == errors[1].step == 1
    assert errors[0].variable == errors[1].variable == "y.activity"
    assert str(errors[0]) == str(errors[1]) and "contains NaN or Inf" in str(errors[0])


def test_a_loop_overflowing_in_tolerance_mode_stops_at_the_overflowing_iteration_on_both_paths():
    # the adaptive loop (tol > 0) leaves at the iteration whose update is Inf, as the NumPy mirror
    # promises ("a NaN/Inf state: the engine's finiteness check names it"): one more iteration would
    # turn the Inf state into NaN (0 * Inf on the zero diagonal). Lateral weights 1e40 overflow
    # y_k ~ 0.3 (3e40)^(k-1) at the 9th iteration: same iteration count, same Inf state on both paths.
    reports = []
    for path in ("compiled", "python"):
        net = excitatory_loop(value=1e40, tol=1e-8, max_iter=30)
        with pytest.raises(ns.SimulationDiverged) as info:
            run(net, 5, path)
        y = net.populations["y"]
        reports.append((info.value.step, info.value.variable, y.dynamics.iterations))
        assert np.all(np.isposinf(y.activity)), path
    assert reports[0] == reports[1] == (1, "y.activity", 9)


def test_a_divergence_names_every_other_non_finite_variable_alike_on_both_paths():
    # y overflows within the first step and z = V y (V all ones) with it: the error names y.activity
    # (first in the per-step path's order) and lists z.activity as "also non-finite", on the compiled
    # path (a segment's check) exactly as on the NumPy path (the per-step check of every variable)
    errors = []
    for path in ("compiled", "python"):
        net = excitatory_loop(value=1e40)
        z = ns.Population("z", 2, dynamics=ns.Linear())
        net.add(z)
        net.add(ns.Projection("V", net.populations["y"], z, init=np.ones((2, 4))))
        with pytest.raises(ns.SimulationDiverged) as info:
            run(net, 5, path)
        errors.append(info.value)
    for e in errors:
        assert e.step == 1 and e.variable == "y.activity"
        assert "also non-finite: z.activity" in str(e)
    assert str(errors[0]) == str(errors[1])


@pytest.mark.parametrize("path", PATHS)
def test_the_contraction_check_compares_the_last_update_with_the_first(path):
    # A contracting but non-normal loop (eta = 0.5, M = [[0, 6], [0, 0]]: updates u_{t+1} = u_t B with
    # B = [[0.5, 0], [3, 0.5]], spectral radius 0.5) grows before it shrinks: from u_0 = (0, 1) the squared
    # update norms are 1, 9.25, 9.06, 5.06, 2.25, 0.88, ... (hand-computed: u_t = (3 t 0.5^(t-1), 0.5^t)).
    # The documented test flags a step whose last update is at least as large as its first: after 5
    # iterations (2.25 >= 1) it is flagged, after 6 (0.88 < 1) it is not; a test against the second update
    # (9.25) would flag neither.
    D = np.array([[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]]) / 3.0  # drive (0, 2): u_0 = eta * drive = (0, 1)
    M = np.array([[0.0, 6.0], [0.0, 0.0]])
    net = lateral_net(D, M, sign=1, eta=0.5, max_iter=5)
    with pytest.raises(ns.SimulationDiverged) as info:
        run(net, 3, path)
    assert (info.value.step, info.value.variable) == (1, FAILED)
    net = lateral_net(D, M, sign=1, eta=0.5, max_iter=6)
    run(net, 3, path)
    # six iterations from zero: y_6 = sum of the first six updates, hand-computed
    u = [np.array([3 * t * 0.5 ** (t - 1), 0.5 ** t]) for t in range(6)]
    np.testing.assert_allclose(net.populations["y"].activity[0], np.sum(u, axis=0), rtol=1e-14)


@pytest.mark.parametrize("path", PATHS)
def test_one_iteration_is_never_flagged_and_two_growing_ones_are(path):
    # The contraction check needs two updates to compare: with max_iter = 1 a step is one update from zero,
    # y = eta * drive, whatever the lateral loop; with max_iter = 2 an unstable loop's second update is
    # larger than its first (eta = 1, M = 2 (J - I) on 4 units: the second update is 6 times the first).
    net = excitatory_loop(max_iter=1)
    run(net, 3, path)
    np.testing.assert_allclose(net.populations["y"].activity, np.full((1, 4), 0.3), rtol=1e-14)
    net = excitatory_loop(max_iter=2)
    with pytest.raises(ns.SimulationDiverged) as info:
        run(net, 3, path)
    assert (info.value.step, info.value.variable) == (1, FAILED)
