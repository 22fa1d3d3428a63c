"""SPAMS' structured solvers (``benchmarks/_spams_structured.py``) against an independent solver.

The l2 oracle is FISTA on ``0.5 ||x - D a||^2 + kappa sum_G w_G ||a_G||_2``
whose proximal step is computed on the dual (block coordinate ascent over
the groups' dual balls, ``u = v - sum_G xi_G``, ``||xi_G||_2 <= lambda w_G``,
run to 1e-14), written here from the definition; it handles any family of
groups. The l_inf oracle is scipy's SLSQP on the smooth epigraph QP
``min 0.5 ||x - D a||^2 + kappa sum_G w_G t_G`` s.t. ``|a_i| <= t_G``. A SPAMS call "solves (*)" when its objective is
within 1e-6 (relative) of the oracle's. The SPAMS part is skipped without
``spams`` (``pip install spams-bin``); the conversion of our group format
is tested without it.
"""

import importlib.util
import os
import sys

import numpy as np
import pytest
from scipy.optimize import minimize

from neurosim.groups import GroupStructure

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))
from _spams_structured import SpamsStructuredWorker, _spams_problem, spams_structured, tree_arrays  # noqa: E402

HAVE_SPAMS = importlib.util.find_spec("spams") is not None
needs_spams = pytest.mark.skipif(not HAVE_SPAMS, reason="spams not importable (pip install spams-bin)")


# --------------------------------------------------------------------------- #
# oracle
# --------------------------------------------------------------------------- #
def group_prox(v, groups, w, lam, xi):
    """prox of ``lam sum_G w_G ||u_G||_2`` at ``v`` by block coordinate ascent on the dual (``xi`` warm-starts)."""
    u = v.copy()
    for G, x in zip(groups, xi):
        u[G] -= x
    for _ in range(500):
        change = 0.0
        for g, G in enumerate(groups):
            z = u[G] + xi[g]
            r = lam * w[g]
            nz = np.linalg.norm(z)
            new = z if nz <= r else z * (r / nz)
            change = max(change, np.abs(new - xi[g]).max())
            u[G] = z - new
            xi[g] = new
        if change <= 1e-14:
            break
    return u


def omega(a, groups, w, norm):
    f = np.linalg.norm if norm == "l2" else (lambda z: np.abs(z).max())
    return sum(wg * f(a[G]) for G, wg in zip(groups, w))


def objective(x, W, a, kappa, groups, w, norm="l2"):
    return 0.5 * np.sum((x - a @ W) ** 2) + kappa * omega(a, groups, w, norm)


_ORACLE_CACHE = {}


def oracle(x, W, kappa, groups, w, norm="l2", n_iter=3000):
    key = (x.tobytes(), W.tobytes(), kappa, tuple(map(bytes, groups)), np.asarray(w).tobytes(), norm)
    if key not in _ORACLE_CACHE:
        solver = _fista if norm == "l2" else _linf_qp
        _ORACLE_CACHE[key] = solver(x, W, kappa, groups, w, norm, n_iter)
    return _ORACLE_CACHE[key]


def _linf_qp(x, W, kappa, groups, w, norm, n_iter):
    """The l_inf family as a smooth QP (epigraph): min 0.5||x - D a||^2 + kappa sum w_G t_G, |a_i| <= t_G on G."""
    k, ng = W.shape[0], len(groups)
    D = W.T
    rows = []
    for g, G in enumerate(groups):
        for i in G:
            for sgn in (1.0, -1.0):  # t_G - sgn a_i >= 0
                r = np.zeros(k + ng)
                r[i], r[k + g] = -sgn, 1.0
                rows.append(r)
    Acon = np.array(rows)
    c = np.concatenate([np.zeros(k), kappa * np.asarray(w, float)])

    def f(z):
        res = D @ z[:k] - x
        return 0.5 * res @ res + c @ z, np.concatenate([D.T @ res, np.zeros(ng)]) + c

    a0 = np.zeros(k)
    z0 = np.concatenate([a0, np.zeros(ng)])
    out = minimize(f, z0, jac=True, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: Acon @ z, "jac": lambda z: Acon}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    return out.x[:k]


def _fista(x, W, kappa, groups, w, norm, n_iter):
    D = W.T
    L = np.linalg.norm(D, 2) ** 2
    a = np.zeros(D.shape[1])
    y, t = a.copy(), 1.0
    xi = [np.zeros(len(G)) for G in groups]
    for _ in range(n_iter):
        a_new = group_prox(y - D.T @ (D @ y - x) / L, groups, w, kappa / L, xi)
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y = a_new + (t - 1) / t_new * (a_new - a)
        step = np.abs(a_new - a).max()
        a, t = a_new, t_new
        if step < 1e-15 * max(1.0, np.abs(a).max()):
            break
    return a


def group_lists(gs):
    groups = [gs.indices[gs.indptr[g]:gs.indptr[g + 1]] for g in range(gs.n_groups)]
    return groups, np.array([gs.weights[gs.indptr[g]] for g in range(gs.n_groups)])


def problem(seed, gs, m, n=3, weights=None):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(gs.n_units, m))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = rng.normal(size=(n, m))
    if weights is not None:
        gs = GroupStructure(gs.indptr, gs.indices, np.repeat(weights, np.diff(gs.indptr)), gs.n_units)
    return X, W, gs


def test_oracle_prox_is_block_soft_threshold_on_disjoint_groups():
    rng = np.random.default_rng(0)
    v = rng.normal(size=9)
    groups = [np.arange(0, 3), np.arange(3, 6), np.arange(6, 9)]
    w = [1.0, 2.0, 0.5]
    u = group_prox(v, groups, w, 0.7, [np.zeros(3) for _ in groups])
    want = np.concatenate([v[G] * max(0.0, 1 - 0.7 * wg / np.linalg.norm(v[G])) for G, wg in zip(groups, w)])
    assert np.abs(u - want).max() < 1e-14
    assert np.any(u == 0) and np.any(u != 0)


# --------------------------------------------------------------------------- #
# conversion of our groups (no spams needed)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("gs", [GroupStructure.tree(3, 2), GroupStructure.tree(4, 3), GroupStructure.disjoint(7, 3),
                                GroupStructure.from_parents(np.array([-1, 0, 0, -1, 3, 1]))])
def test_tree_arrays_make_every_group_one_contiguous_block(gs):
    groups, w = group_lists(gs)
    perm, tree = tree_arrays(groups, w, gs.n_units)
    assert sorted(perm.tolist()) == list(range(gs.n_units))
    pos = np.empty(gs.n_units, int)
    pos[perm] = np.arange(gs.n_units)
    G = tree["groups"].toarray()
    ng = G.shape[0]
    # subtree of each SPAMS group = own block followed by its descendants' blocks: contiguous
    sizes = tree["N_own_variables"].astype(int).copy()
    for g in reversed(range(ng)):
        parents = np.flatnonzero(G[g])
        assert parents.size <= 1 and (g == 0) == (parents.size == 0)
        if parents.size:
            assert parents[0] < g  # parents come first (depth-first order)
            sizes[parents[0]] += sizes[g]
    blocks = {(int(tree["own_variables"][g]), int(tree["own_variables"][g] + sizes[g])) for g in range(ng)}
    for members in groups:
        p = np.sort(pos[members])
        assert (int(p[0]), int(p[-1]) + 1) in blocks and p[-1] - p[0] + 1 == p.size
    assert sizes[0] == gs.n_units
    virtual = ng == gs.n_groups + 1
    assert virtual == (gs.n_groups != 1 and max(len(g) for g in groups) < gs.n_units)
    if virtual:
        assert tree["eta_g"][0] == 0.0 and tree["N_own_variables"][0] == 0


def test_conversion_rejects_what_spams_cannot_express():
    X, W, _ = problem(0, GroupStructure.singletons(6), 4)
    torus = GroupStructure.torus(4, 4)
    X9, W9, _ = problem(0, torus, 4)
    with pytest.raises(ValueError, match="not a tree"):
        _spams_problem(X9, W9, (torus.indptr, torus.indices, torus.weights), 0.1, "tree-l2")
    with pytest.raises(ValueError, match="disjoint"):
        _spams_problem(X9, W9, (torus.indptr, torus.indices, torus.weights), 0.1, "group-lasso-l2")
    d = GroupStructure.disjoint(6, 2)
    with pytest.raises(ValueError, match="one weight for all groups"):
        _spams_problem(X, W, (d.indptr, d.indices, np.array([1, 1, 2, 2, 1, 1.0])), 0.1, "group-lasso-l2")
    with pytest.raises(ValueError, match="unequal member weights"):
        _spams_problem(X, W, (d.indptr, d.indices, np.array([1, 2, 2, 2, 1, 1.0])), 0.1, "graph")
    with pytest.raises(ValueError, match="singleton"):
        _spams_problem(X, W, (d.indptr, d.indices, d.weights), 0.1, "l1")
    with pytest.raises(ValueError, match="kind"):
        _spams_problem(X, W, (d.indptr, d.indices, d.weights), 0.1, "graph-linf")
    with pytest.raises(ValueError, match="in no group"):
        _spams_problem(X, W, (np.array([0, 2]), np.array([0, 1]), np.ones(2)), 0.1, "graph")
    with pytest.raises(ValueError, match="kappa"):
        spams_structured(X, W, (d.indptr, d.indices, d.weights), -1.0, "group-lasso-l2")
    with pytest.raises(ValueError, match="must agree"):
        spams_structured(X, W[:, :-1], (d.indptr, d.indices, d.weights), 0.1, "group-lasso-l2")


# --------------------------------------------------------------------------- #
# SPAMS against the oracle
# --------------------------------------------------------------------------- #
CASES = [
    # (kind, groups, m, kappa, per-group weights or None, norm of the objective SPAMS minimises)
    ("l1", GroupStructure.singletons(12), 8, 0.4, None, "l2"),
    ("group-lasso-l2", GroupStructure.disjoint(12, 3), 8, 0.6, None, "l2"),
    ("tree-l2", GroupStructure.tree(3, 3), 10, 0.25, None, "l2"),
    ("tree-l2", GroupStructure.tree(3, 2), 6, 0.2, np.linspace(0.5, 2.0, 7), "l2"),
    ("tree-l2", GroupStructure.disjoint(12, 3), 8, 0.4, np.array([0.5, 1.0, 2.0, 4.0]), "l2"),  # weighted group lasso
    ("graph", GroupStructure.torus(5, 5), 10, 0.08, None, "linf"),
    ("graph", GroupStructure.torus(5, 5), 10, 0.05, np.linspace(0.5, 2.0, 25), "linf"),
    ("graph-l2", GroupStructure.torus(5, 5), 10, 0.05, None, "l2"),
]


@pytest.fixture(scope="module")
def worker():
    if not HAVE_SPAMS:
        pytest.skip("spams not importable (pip install spams-bin)")
    with SpamsStructuredWorker() as w:
        yield w


@needs_spams
@pytest.mark.parametrize("kind, gs, m, kappa, weights, norm", CASES)
def test_spams_minimises_the_stated_objective(worker, kind, gs, m, kappa, weights, norm):
    X, W, gs = problem(1, gs, m, weights=weights)
    groups, w = group_lists(gs)
    codes, seconds = worker.solve(X, W, (gs.indptr, gs.indices, gs.weights), kappa, kind, tol=1e-10, max_it=20000)
    assert seconds > 0 and codes.shape == (X.shape[0], W.shape[0])
    for r in range(X.shape[0]):
        a = oracle(X[r], W, kappa, groups, w, norm)
        f_oracle = objective(X[r], W, a, kappa, groups, w, norm)
        f_spams = objective(X[r], W, codes[r], kappa, groups, w, norm)
        assert abs(f_spams - f_oracle) <= 1e-6 * f_oracle, (kind, r, f_spams, f_oracle)
        if kind != "graph-l2":  # the ADMM path gives no exact zeros; the others are exact
            assert np.abs(codes[r] - a).max() < 1e-4


@needs_spams
def test_some_cases_have_zero_groups(worker):
    # the cases above are not all-dense (or all-zero): the structure really acts
    for kind, gs, m, kappa, weights, norm in CASES:
        X, W, gs = problem(1, gs, m, weights=weights)
        groups, w = group_lists(gs)
        a = np.array([oracle(X[r], W, kappa, groups, w, norm) for r in range(X.shape[0])])
        assert np.any(np.abs(a) > 1e-8), kind
        if kind in ("l1", "group-lasso-l2", "tree-l2"):
            assert np.any(a == 0.0), kind


@needs_spams
def test_graph_is_linf_not_l2(worker):
    X, W, gs = problem(2, GroupStructure.torus(5, 5), 10)
    groups, w = group_lists(gs)
    kappa = 0.05
    c_inf, _ = worker.solve(X, W, (gs.indptr, gs.indices, gs.weights), kappa, "graph", tol=1e-10, max_it=20000)
    c_l2, _ = worker.solve(X, W, (gs.indptr, gs.indices, gs.weights), kappa, "graph-l2", tol=1e-10, max_it=20000)
    for r in range(X.shape[0]):
        best = objective(X[r], W, oracle(X[r], W, kappa, groups, w, "l2"), kappa, groups, w, "l2")
        assert objective(X[r], W, c_inf[r], kappa, groups, w, "l2") > best * (1 + 1e-3)
        assert objective(X[r], W, c_l2[r], kappa, groups, w, "l2") < best * (1 + 1e-6)


@needs_spams
def test_worker_reports_errors_and_keeps_serving(worker):
    with pytest.raises(RuntimeError, match="spams worker: error"):
        worker._ask("solve /nonexistent.npz /tmp/x.npy")
    with pytest.raises(RuntimeError, match="unknown command"):
        worker._ask("run")
    X, W, gs = problem(3, GroupStructure.singletons(6), 5, n=2)
    codes, _ = spams_structured(X, W, (gs.indptr, gs.indices, gs.weights), 0.1, "l1", worker=worker)
    assert codes.shape == (2, 6) and np.all(np.isfinite(codes))
