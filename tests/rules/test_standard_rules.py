"""The standard local rules: one step against their equations, and each against an oracle."""

import numpy as np
import pytest

import neurosim as ns
from neurosim import rules
from neurosim.rules import standard
from neurosim.streams import GaussianStream

from clamped_activity import Clamp  # tests/: activity copied from another population (the teacher signal)


# --------------------------------------------------------------------------- #
# one step of each function against its equation, in NumPy
# --------------------------------------------------------------------------- #
def _formula(name, W, Y, X, extra):
    B = Y.shape[0]
    if name == "sanger":
        (rate,) = extra
        return W + rate / B * (Y.T @ X - np.tril(Y.T @ Y) @ W), ()
    if name == "oja_subspace":
        (rate,) = extra
        return W + rate / B * (Y.T @ X - (Y.T @ Y) @ W), ()
    if name == "bcm":
        theta, rate, tau_rate, nonnegative = extra
        new = W + rate / B * ((Y * (Y - theta)).T @ X)
        if nonnegative:
            new = np.maximum(new, 0.0)
        return new, (theta + ((Y * Y).mean(axis=0) - theta) * tau_rate,)
    if name == "foldiak":
        rate, p = extra
        return W + rate * (Y.T @ X / B - p * p), ()
    if name == "delta":
        (rate,) = extra
        return W + rate / B * (Y.T @ (X - Y @ W)), ()
    raise AssertionError(name)


CASES = {
    "sanger": lambda rng, n: (0.03,),
    "oja_subspace": lambda rng, n: (0.03,),
    "bcm": lambda rng, n: (rng.uniform(0.5, 2.0, n), 0.03, 0.2, False),
    "bcm_nonnegative": lambda rng, n: (rng.uniform(0.5, 2.0, n), 0.3, 0.2, True),
    "foldiak": lambda rng, n: (0.03, 0.3),
    "delta": lambda rng, n: (0.03,),
}


def _whole_matrix(cls, compiled):
    """The rule's update of a whole weight matrix: its function, or its per-synapse function mapped by hand."""
    kernel = cls.kernel if compiled else cls.kernel.py_func
    if not cls.per_synapse:
        return kernel
    unit = None if cls.unit_kernel is None else cls.unit_kernel if compiled else cls.unit_kernel.py_func

    def update(W, Y, X, *extra):
        variables, params = extra[:len(cls.variable_names)], extra[len(cls.variable_names):]
        for i in range(W.shape[0]):
            for j in range(W.shape[1]):
                W[i, j] = kernel(W[i, j], Y[:, i].copy(), X[:, j].copy(), *(v[i] for v in variables), *params)
        if unit is not None:
            unit(Y, *variables, *params)

    return update


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("compiled", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("batch", [1, 5])
def test_one_step_is_the_equation(case, compiled, batch):
    name = case.split("_nonnegative")[0]
    cls = getattr(standard, name)
    fn = _whole_matrix(cls, compiled)
    rng = np.random.default_rng(7)
    n_post, n_pre = 3, 7
    W = rng.standard_normal((n_post, n_pre))
    Y = rng.standard_normal((batch, n_post))
    X = rng.standard_normal((batch, n_pre))
    extra = CASES[case](rng, n_post)
    want_w, want_vars = _formula(name, W, Y, X, extra)
    got_vars = tuple(np.array(e) if isinstance(e, np.ndarray) else e for e in extra)
    fn(W, Y, X, *got_vars)
    np.testing.assert_allclose(W, want_w, rtol=1e-12, atol=1e-14)
    for got, want in zip(got_vars, want_vars):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    if case == "bcm_nonnegative":
        assert (W == 0.0).any() and (W >= 0.0).all()  # the clip acted


# --------------------------------------------------------------------------- #
# networks
# --------------------------------------------------------------------------- #
LAM = np.r_[6.0, 4.0, 2.5, np.linspace(0.4, 0.1, 5)]


def pca_net(rule, k=3, batch=200, mask=None, seed=0):
    """Linear units ``y = W x`` on Gaussian input of covariance with eigenvalues LAM (random eigenvectors)."""
    stream = GaussianStream(LAM, seed=1, eigenvectors="random", eigvec_seed=5, chunk=64)
    net = ns.Network(seed=seed, batch=batch)
    x = ns.Population("x", LAM.size)
    y = ns.Population("y", k, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(stream, x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.1), mask=mask, rule=rule))
    return net, stream.covariance


def leading_eigenvectors(cov, k):
    """Rows: the eigenvectors of ``cov`` with the k largest eigenvalues, largest first."""
    val, vec = np.linalg.eigh(cov)
    assert np.all(np.diff(val) > 0.05)  # distinct eigenvalues: the ordered eigenvectors are defined
    return vec[:, ::-1][:, :k].T


def test_sanger_rows_converge_to_the_ordered_eigenvectors():
    net, cov = pca_net(rules.Sanger(rate=0.05))
    E = leading_eigenvectors(cov, 3)
    W0 = net.projections["W"].weights.copy()
    assert (np.abs(np.sum(W0 * E, axis=1)) / np.linalg.norm(W0, axis=1)).max() < 0.9  # not aligned at the start
    net.run(300)
    W = net.projections["W"].weights
    cos = np.abs(np.sum(W * E, axis=1)) / np.linalg.norm(W, axis=1)
    assert cos.min() > 0.99, cos
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), 1.0, atol=0.02)


def test_oja_subspace_rows_span_the_principal_subspace():
    net, cov = pca_net(rules.OjaSubspace(rate=0.05))
    E = leading_eigenvectors(cov, 3)
    P = E.T @ E
    net.run(300)
    W = net.projections["W"].weights
    Q = np.linalg.qr(W.T)[0]
    assert np.linalg.norm(Q @ Q.T - P) < 0.05
    assert np.linalg.norm(W @ W.T - np.eye(3)) < 0.01
    # a subspace, not the eigenvectors: the rows are some rotation of them
    cos = np.abs(np.sum(W * E, axis=1)) / np.linalg.norm(W, axis=1)
    assert cos.min() < 0.99


PATTERNS = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]) / np.sqrt(2.0)


def bcm_net(rule, steps, batch=10, seed=0):
    """Four linear units; each sample is one of two orthogonal patterns, drawn at random."""
    data = PATTERNS[np.random.default_rng(seed).integers(0, 2, (steps, batch))]
    net = ns.Network(seed=seed, batch=batch)
    x = ns.Population("x", 4)
    y = ns.Population("y", 4, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(data), x)
    net.add(ns.Projection("W", x, y, init=ns.Uniform(0.4, 0.6), rule=rule))
    return net


def selectivity(W):
    """Per unit ``1 - r_min / r_max`` over the responses to the patterns."""
    R = PATTERNS @ W.T
    return 1.0 - R.min(axis=0) / R.max(axis=0), R.max(axis=0)


@pytest.mark.parametrize("nonnegative", [False, True])
def test_bcm_units_become_selective_and_theta_tracks_mean_squared_activity(nonnegative):
    steps = 400
    net = bcm_net(rules.BCM(rate=0.1, tau_rate=0.5, nonnegative=nonnegative), steps)
    si0, _ = selectivity(net.projections["W"].weights)
    assert si0.max() < 0.25  # near-symmetric start: every unit answers both patterns alike
    rec = net.record(net.populations["y"], ["activity", "theta"])
    net.run(steps)
    W = net.projections["W"].weights
    si, strong = selectivity(W)
    assert si.min() > 0.9, si
    assert strong.min() > 1.5  # the selective fixed point answers its pattern with theta = E[y^2] = 2
    last = rec.to_dataset().isel(time=slice(-100, None))
    theta = last.theta.values.mean(axis=0)
    mean_y2 = (last.activity.values ** 2).mean(axis=(0, 1))
    np.testing.assert_allclose(theta, mean_y2, rtol=0.03)
    if nonnegative:
        assert W.min() == 0.0  # the clip held weights at zero


def correlation(cov):
    d = np.sqrt(np.diag(cov))
    return cov / np.outer(d, d)


def foldiak_net(rule, batch=200, tol=1e-12, max_iter=200):
    """Correlated Gaussian input through a fixed identity projection; inhibitory lateral weights learn."""
    stream = GaussianStream([3.0, 1.0, 0.5, 0.25], seed=2, eigenvectors="random", eigvec_seed=3, chunk=64)
    net = ns.Network(seed=0, batch=batch)
    x = ns.Population("x", 4)
    y = ns.Population("y", 4, dynamics=ns.Jacobi(eta=1.0, tol=tol, max_iter=max_iter))
    net.add(x, y)
    net.connect(stream, x)
    net.add(ns.Projection("F", x, y, init=np.eye(4)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=rule))
    return net, stream.covariance


def test_foldiak_lateral_inhibition_decorrelates_the_outputs():
    net, cov = foldiak_net(rules.Foldiak(rate=0.01))
    off = ~np.eye(4, dtype=bool)
    assert np.abs(correlation(cov)[off]).max() > 0.3  # the input is clearly correlated
    rec = net.record(net.populations["y"], "activity", every=1)
    net.run(800)
    M = net.projections["M"].weights
    np.testing.assert_allclose(M, M.T, rtol=1e-12, atol=1e-15)  # a symmetric update from a symmetric start
    # exact output covariance at the fixed point y = (I + M)^-1 x
    G = np.linalg.inv(np.eye(4) + M)
    assert np.abs(correlation(G @ cov @ G.T)[off]).max() < 0.05
    # and the correlation of the outputs the network produced in its last 50 steps
    y = rec.to_dataset().activity.values[-50:].reshape(-1, 4)
    assert np.abs(np.corrcoef(y.T)[off]).max() < 0.05


def delta_problem(T=40, n_atoms=4, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((T, n_atoms))
    X = A @ rng.standard_normal((n_atoms, n_features)) + 0.3 * rng.standard_normal((T, n_features))
    return A, X


def delta_net(rule, A, X):
    """The whole data set is one batch every step; the code population is clamped to the fixed codes A."""
    T, n_atoms = A.shape
    net = ns.Network(seed=0, batch=T)
    x = ns.Population("x", X.shape[1])
    c = ns.Population("c", n_atoms)
    a = ns.Population("a", n_atoms, dynamics=Clamp(c))
    net.add(x, c, a)
    net.connect(ns.ArrayStream(X[None]), x)
    net.connect(ns.ArrayStream(A[None]), c)
    net.add(ns.Projection("D", x, a, init=ns.Normal(0.1), rule=rule))
    return net


def objective(W, A, X):
    return 0.5 * np.sum((X - A @ W) ** 2)


def test_delta_rule_descends_monotonically_to_the_least_squares_dictionary():
    A, X = delta_problem()
    rate = 0.5
    assert rate < 2.0 / np.linalg.eigvalsh(A.T @ A / len(A)).max()  # the step size of a descent
    net = delta_net(rules.Delta(rate=rate), A, X)
    rec = net.record(net.projections["D"], "weights", every=1)
    W0 = net.projections["D"].weights.copy()
    net.run(300)
    Ws = np.concatenate([W0[None], rec.to_dataset().weights.values])
    f = np.array([objective(W, A, X) for W in Ws])
    assert np.all(np.diff(f) <= 1e-13 * f[0])  # decreases at every step (to rounding, once converged)
    W_opt = np.linalg.lstsq(A, X, rcond=None)[0]
    f_opt = objective(W_opt, A, X)
    assert f[0] > 2.0 * f_opt
    assert abs(f[-1] - f_opt) <= 1e-6 * f_opt
    np.testing.assert_allclose(Ws[-1], W_opt, atol=1e-6)


# --------------------------------------------------------------------------- #
# compiled segments against the per-step NumPy reference; structure
# --------------------------------------------------------------------------- #
def _equivalence_nets():
    A, X = delta_problem(T=12)
    return {
        "sanger": lambda: pca_net(rules.Sanger(rate=0.02), batch=4)[0],
        "oja_subspace": lambda: pca_net(rules.OjaSubspace(rate=0.02), batch=4)[0],
        "bcm": lambda: bcm_net(rules.BCM(rate=0.1, tau_rate=0.5), 200, batch=3),
        "bcm_nonnegative": lambda: bcm_net(rules.BCM(rate=0.1, tau_rate=0.5, nonnegative=True), 200, batch=3),
        "foldiak": lambda: foldiak_net(rules.Foldiak(rate=0.02, p=0.1), batch=8, tol=0.0, max_iter=40)[0],
        "delta": lambda: delta_net(rules.Delta(rate=0.2), A, X),
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_matches_the_numpy_reference(case):
    make = _equivalence_nets()[case]
    a, b = make(), make()
    a.run(200, backend="compiled")
    b.run(200, backend="python")
    for name, proj in a.projections.items():
        w_ref = b.projections[name].weights
        scale = np.abs(w_ref).max()
        np.testing.assert_allclose(proj.weights, w_ref, rtol=1e-10, atol=1e-12 * scale, err_msg=name)
        assert not np.allclose(proj.weights, make().projections[name].weights) or proj.rule is None  # it learnt
    for name, pop in a.populations.items():
        for var, value in pop.state.items():
            np.testing.assert_allclose(value, b.populations[name].state[var], rtol=1e-10, atol=1e-12,
                                       err_msg=f"{name}.{var}")
    if case == "foldiak":
        for net in (a, b):
            assert np.all(np.diag(net.projections["M"].weights) == 0.0)  # no self-inhibition


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_masked_weights_stay_exactly_zero(backend):
    mask = np.random.default_rng(3).random((3, LAM.size)) < 0.7
    assert not mask.all()
    net, _ = pca_net(rules.Sanger(rate=0.05), batch=20, mask=mask)
    w0 = net.projections["W"].weights.copy()
    assert np.all(w0[~mask] == 0.0)
    net.run(100, backend=backend)
    w = net.projections["W"].weights
    assert np.all(w[~mask] == 0.0)
    assert np.all(w[mask] != w0[mask])
