"""FISTA with the exact prox for structured codes (issue 25 part 3) against Table 2, KKT, SPAMS and itself.

Oracles: Table 2 run to high precision minimises the same cost (objectives
agree to 1e-6 relative); the optimality conditions of the group lasso on the
observed coordinates; the prox of a tree against Table 2 with the identity
dictionary (whose code *is* the prox) and against random perturbations
(convexity: the prox is the global minimiser); SPAMS' ``fistaFlat`` /
``fistaTree`` in their own process where ``spams`` is importable.
"""

import importlib.util
import os
import sys

import numpy as np
import pytest

import neurosim as ns
from neurosim.coding import structured_objective, structured_sparse_code
from neurosim.coding.structured import resolve_solver
from neurosim.groups import GroupStructure, as_groups
from neurosim.kernels.structured_fista import SOLVER_FISTA, SOLVER_TABLE2, _prox


HAVE_SPAMS = importlib.util.find_spec("spams") is not None


def problem(n_atoms, n_features, n_samples, seed, missing=0.0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n_atoms, n_features))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = rng.standard_normal((n_samples, n_features))
    M = (rng.random(X.shape) >= missing).astype(float)
    return X, W, M


def tree(n, branching, seed=None):
    if seed is None:
        parent = np.concatenate([[-1], (np.arange(1, n) - 1) // branching])
    else:  # a random forest: every node's parent among the earlier nodes, some roots
        rng = np.random.default_rng(seed)
        parent = np.array([-1] + [int(rng.integers(-1, j)) for j in range(1, n)])
    return GroupStructure.from_parents(parent)


FAMILIES = {
    "disjoint": lambda k: GroupStructure.disjoint(k, 4),
    "disjoint-uneven": lambda k: GroupStructure.disjoint(k, 5),
    "singletons": lambda k: None,
    "tree": lambda k: tree(k, 3),
    "forest": lambda k: tree(k, 0, seed=3),
    "nested-sets": lambda k: GroupStructure.from_sets([range(k // 2), range(k // 4), range(k // 2, k),
                                                        range(k // 2, k // 2 + 3)] + [[j] for j in range(k)], k,
                                                       weights=[2.0, 1.0, 0.5, 1.5] + [0.3] * k),
}


# Table 2 at a few cases uses all its iterations: the objectives are compared, the cap warning is tested apart
@pytest.mark.filterwarnings("ignore::neurosim.coding.NonConvergenceWarning")
@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("kappa", [0.02, 0.2, 0.8])
@pytest.mark.parametrize("missing", [0.0, 0.4])
def test_fista_and_table2_agree_on_the_objective(family, kappa, missing):
    """Same cost: FISTA's objective within 1e-6 (relative) of Table 2's run to high precision, never above it."""
    X, W, M = problem(24, 10, 6, seed=sorted(FAMILIES).index(family) * 10 + int(10 * missing), missing=missing)
    g = FAMILIES[family](24)
    assert resolve_solver("auto", as_groups(g, 24), 1.0) == SOLVER_FISTA
    a2 = structured_sparse_code(X, W, g, kappa, observed=M, solver="table2", n_iter=20000, tol=1e-13, eps=1e-12)
    af = structured_sparse_code(X, W, g, kappa, observed=M, solver="fista", tol=1e-12, fista_iter=100000)
    f2 = structured_objective(X, W, a2, g, kappa, observed=M)
    ff = structured_objective(X, W, af, g, kappa, observed=M)
    assert np.all(ff <= f2 * (1 + 1e-9) + 1e-14)
    np.testing.assert_allclose(ff, f2, rtol=1e-6, atol=0)
    auto = structured_sparse_code(X, W, g, kappa, observed=M, tol=1e-12, fista_iter=100000)
    np.testing.assert_array_equal(auto, af)


@pytest.mark.parametrize("kappa", [0.05, 0.3])
def test_kkt_of_the_group_lasso_on_observed_coordinates(kappa):
    """Disjoint groups, masks: D_O^T (x_O - D_O a)_G = kappa a_G / ||a_G|| (active), ||D_O^T r_G|| <= kappa (zero)."""
    X, W, M = problem(32, 12, 8, seed=5, missing=0.3)
    g = GroupStructure.disjoint(32, 4)
    A = structured_sparse_code(X, W, g, kappa, observed=M, tol=1e-13, fista_iter=200000)
    n_zero = 0
    for r in range(X.shape[0]):
        o = M[r] != 0
        D = W[:, o].T
        grad = D.T @ (X[r, o] - D @ A[r])
        for G in g:
            a = A[r, G]
            na = np.linalg.norm(a)
            if na == 0.0:
                n_zero += 1
                assert np.linalg.norm(grad[G]) <= kappa * (1 + 1e-6)
            else:
                np.testing.assert_allclose(grad[G], kappa * a / na, rtol=0, atol=1e-6 * max(1.0, kappa))
    assert n_zero > 0  # exact zeros: whole groups (Table 2 reaches them only approximately)


def prox_objective(z, v, groups, w, t):
    return 0.5 * np.sum((z - v) ** 2) + t * sum(wg * np.linalg.norm(z[G]) for G, wg in zip(groups, w))


@pytest.mark.parametrize("seed", range(6))
def test_tree_prox_is_the_exact_minimiser(seed):
    """Leaves-to-root block soft-thresholds = argmin 0.5||z - v||^2 + t sum_G w_G ||z_G|| on small trees."""
    rng = np.random.default_rng(seed)
    n = 7
    g = tree(n, 0, seed=seed) if seed % 2 else tree(n, 2)
    # one weight per group, different between groups
    w_group = rng.uniform(0.3, 2.0, g.n_groups)
    g = GroupStructure(g.indptr, g.indices, np.repeat(w_group, np.diff(g.indptr)), n, parent=g.parent, kind="tree")
    order = g.prox_order()
    assert order is not None
    groups = list(g)
    for t in (0.05, 0.4, 1.5):
        v = rng.standard_normal(n) * 1.5
        z = v.copy()
        _prox(z, g.indptr, g.indices, g.weights, order, t)
        f = prox_objective(z, v, groups, w_group, t)
        # Table 2 with the identity dictionary minimises exactly this objective
        ref = structured_sparse_code(v, np.eye(n), g, t, solver="table2", n_iter=50000, tol=1e-14, eps=1e-14)
        assert f <= prox_objective(ref, v, groups, w_group, t) * (1 + 1e-9) + 1e-12
        np.testing.assert_allclose(z, ref, atol=1e-5)
        # convexity: no perturbation (including onto the zero patterns) does better
        for _ in range(200):
            d = rng.standard_normal(n) * rng.choice([1e-4, 1e-2, 0.3])
            d[rng.random(n) < 0.3] = 0.0
            assert prox_objective(z + d, v, groups, w_group, t) >= f - 1e-12
        for G in groups:
            y = z.copy()
            y[G] = 0.0
            assert prox_objective(y, v, groups, w_group, t) >= f - 1e-12


def test_prox_of_disjoint_groups_is_block_soft_thresholding():
    rng = np.random.default_rng(0)
    g = GroupStructure.disjoint(12, 3)
    v = rng.standard_normal(12)
    z = v.copy()
    _prox(z, g.indptr, g.indices, g.weights, g.prox_order(), 0.9)
    for G in g:
        n = np.linalg.norm(v[G])
        np.testing.assert_allclose(z[G], v[G] * max(0.0, 1 - 0.9 / n), rtol=0, atol=1e-15)


def test_auto_picks_fista_exactly_where_the_prox_is_exact():
    k = 16
    fista = [GroupStructure.disjoint(k, 4), GroupStructure.singletons(k), tree(k, 2), tree(k, 0, seed=1),
             GroupStructure.from_sets([range(8), range(4), range(8, 16)], k, weights=[1.0, 2.0, 0.5]),
             GroupStructure.from_sets([range(16), range(16)], k)]  # identical groups nest
    table2 = [GroupStructure.torus(4, 4), GroupStructure.from_sets([range(8), range(4, 12), range(12, 16)], k),
              GroupStructure.from_sets([range(8), range(8, 16)], k, weights=[[1.0] * 7 + [2.0], 1.0])]
    for g in fista:
        assert resolve_solver("auto", g, 1.0) == SOLVER_FISTA, g
        assert resolve_solver("auto", g, 0.5) == SOLVER_TABLE2  # eta < 1: non-convex, Table 2
        assert resolve_solver("table2", g, 1.0) == SOLVER_TABLE2
        assert resolve_solver("fista", g, 1.0) == SOLVER_FISTA
    for g in table2:
        assert g.prox_order() is None
        assert resolve_solver("auto", g, 1.0) == SOLVER_TABLE2
        with pytest.raises(ValueError, match="exact proximal"):
            resolve_solver("fista", g, 1.0)
    with pytest.raises(ValueError, match="exact proximal.*eta"):
        resolve_solver("fista", GroupStructure.disjoint(k, 4), 0.7)
    with pytest.raises(ValueError, match="solver"):
        resolve_solver("ista", GroupStructure.disjoint(k, 4), 1.0)
    # the order puts every group after the groups it contains
    g = tree(40, 3)
    pos = np.empty(g.n_groups, int)
    pos[g.prox_order()] = np.arange(g.n_groups)
    sets = [set(G.tolist()) for G in g]
    for a in range(g.n_groups):
        for b in range(g.n_groups):
            if a != b and sets[a] < sets[b]:
                assert pos[a] < pos[b]


def test_torus_and_eta_below_one_run_table2_unchanged():
    X, W, M = problem(16, 8, 4, seed=2, missing=0.3)
    for g, eta in ((GroupStructure.torus(4, 4), 1.0), (GroupStructure.disjoint(16, 4), 0.5)):
        a = structured_sparse_code(X, W, g, 0.1, eta=eta, observed=M, n_iter=40, tol=0.0)
        b = structured_sparse_code(X, W, g, 0.1, eta=eta, observed=M, n_iter=40, tol=0.0, solver="table2")
        np.testing.assert_array_equal(a, b)


def test_kappa_zero_and_edge_samples():
    """kappa = 0 takes Table 2's direct least squares; no observed coordinate or zero atoms give 0; warm start."""
    X, W, M = problem(6, 10, 5, seed=4, missing=0.2)
    g = GroupStructure.disjoint(6, 2)
    np.testing.assert_array_equal(structured_sparse_code(X, W, g, 0.0, observed=M),
                                  structured_sparse_code(X, W, g, 0.0, observed=M, solver="table2"))
    M[1] = 0.0
    W2 = W.copy()
    W2[:, M[2] != 0] = 0.0  # sample 2 sees only zero atom entries
    A = structured_sparse_code(X, W2, g, 0.1, observed=M, solver="fista")
    assert np.all(A[1] == 0) and np.all(A[2] == 0) and np.all(np.isfinite(A))
    # warm start from the solution: stops at once, same code
    A = structured_sparse_code(X, W, g, 0.1, observed=M, solver="fista", tol=1e-12, fista_iter=100000)
    B = structured_sparse_code(X, W, g, 0.1, observed=M, solver="fista", tol=1e-10, init=A, fista_iter=3)
    np.testing.assert_allclose(A, B, atol=1e-9)


def test_cap_warning_names_fista_iter():
    X, W, M = problem(24, 10, 3, seed=1)
    with pytest.warns(ns.coding.NonConvergenceWarning, match="fista_iter = 2"):
        structured_sparse_code(X, W, GroupStructure.disjoint(24, 4), 0.1, fista_iter=2, tol=1e-14)


def _network(groups, kappa, masks, W0, X, solver="auto"):
    from neurosim.models import osdl

    return osdl.build_network(ns.ArrayStream(X), W0.shape[0], groups=groups, kappa=kappa,
                              masks=ns.ArrayStream(masks), batch=X.shape[1], init=W0, solver=solver,
                              code_tol=1e-9, record_every=1)


@pytest.mark.parametrize("family", ["disjoint", "tree"])
def test_dynamics_paths_agree_and_use_fista(family):
    """The compiled kernel and the NumPy reference step give the same codes; both are structured_sparse_code's."""
    rng = np.random.default_rng(7)
    k, m, R, T = 16, 8, 5, 3
    X = rng.standard_normal((T, R, m))
    masks = (rng.random((T, R, m)) >= 0.3).astype(float)
    W0 = rng.standard_normal((k, m))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    g = FAMILIES[family](k)
    out = {}
    for backend in ("python", "auto"):
        c = _network(g, 0.2, masks, W0, X)
        assert c.code.dynamics.resolved_solver() == "fista"
        c.run(T, backend=backend)
        out[backend] = (c.W.copy(), c.code.activity.copy())
    np.testing.assert_allclose(out["python"][0], out["auto"][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["python"][1], out["auto"][1], rtol=0, atol=1e-12)
    # the dynamics' encode is structured_sparse_code with the same solver
    dyn = c.code.dynamics
    A = dyn.encode(X[0], W0, masks[0])
    B = structured_sparse_code(X[0], W0, g, 0.2, observed=masks[0], tol=1e-9, solver="fista", fista_iter=1000)
    np.testing.assert_array_equal(A, B)
    # solver="fista" on a torus is refused before the run
    c = _network(GroupStructure.torus(4, 4), 0.2, masks, W0, X, solver="fista")
    with pytest.raises(ValueError, match="exact proximal"):
        c.run(1)
    with pytest.raises(ValueError, match="exact proximal"):  # by the network's validation, with the others
        c.network.validate()
    assert c.network.t == 0


@pytest.mark.skipif(not HAVE_SPAMS, reason="spams not importable (pip install spams-bin)")
@pytest.mark.parametrize("kind", ["group-lasso-l2", "tree-l2", "l1"])
def test_fista_matches_spams(kind):
    """Full observations: our FISTA reaches SPAMS' objective (fistaFlat / fistaTree at tol 1e-10)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "benchmarks"))
    from _spams_structured import spams_structured

    X, W, _ = problem(40, 12, 6, seed=11)
    g = {"group-lasso-l2": GroupStructure.disjoint(40, 4), "tree-l2": tree(40, 3),
         "l1": GroupStructure.singletons(40)}[kind]
    kappa = 0.15
    sp, _ = spams_structured(X, W, (g.indptr, g.indices, g.weights), kappa, kind, tol=1e-10, max_it=100000)
    ours = structured_sparse_code(X, W, g, kappa, tol=1e-12, fista_iter=100000)
    fs = structured_objective(X, W, sp, g, kappa)
    fo = structured_objective(X, W, ours, g, kappa)
    assert np.all(fo <= fs * (1 + 1e-7))
    np.testing.assert_allclose(ours, sp, atol=1e-5)


def _fista_info(X, W, M, kappa, n_iter, tol):
    """Run the FISTA kernel directly and return (codes, info): info[0] = most iterations a sample used."""
    from neurosim.kernels.structured_fista import encode_workspace_sizes, structured_encode
    from neurosim.kernels.structured import PATH_AUTO
    g = as_groups(None, W.shape[0])
    ni, nw = encode_workspace_sizes(W.shape[0], W.shape[1], g.n_groups, kappa, PATH_AUTO)
    codes, info = np.zeros((X.shape[0], W.shape[0])), np.zeros(2, dtype=np.int64)
    ok = structured_encode(W, X, M, g.indptr, g.indices, g.weights, g.prox_order(), kappa, 1.0, 1e-8, 10, n_iter,
                           tol, False, codes, info, np.zeros(ni, dtype=np.int64), np.zeros(nw), PATH_AUTO,
                           SOLVER_FISTA)
    assert ok
    return codes, info


def test_fista_counts_the_iterations_it_used():
    # Identity dictionary: the code is the prox, soft(x, kappa). info[0] = u iterations; a cap of u is met
    # (converged on the last allowed iteration, not capped), a cap of u - 1 is hit (one capped sample).
    x = np.array([[1.5, -0.2, 0.7, -2.0]])
    codes, info = _fista_info(x, np.eye(4), np.ones_like(x), 0.5, 50, 1e-12)
    np.testing.assert_allclose(codes[0], np.sign(x[0]) * np.maximum(np.abs(x[0]) - 0.5, 0.0), rtol=1e-12, atol=1e-12)
    used = int(info[0])
    assert 2 <= used < 50 and info[1] == 0
    _, info = _fista_info(x, np.eye(4), np.ones_like(x), 0.5, used, 1e-12)
    assert info.tolist() == [used, 0]
    _, info = _fista_info(x, np.eye(4), np.ones_like(x), 0.5, used - 1, 1e-12)
    assert info.tolist() == [used - 1, 1]


def test_fista_samples_with_nothing_observed_use_no_iteration():
    X, W, _ = problem(6, 5, 3, seed=4)
    codes, info = _fista_info(X, W, np.zeros_like(X), 0.3, 50, 1e-10)
    assert info.tolist() == [0, 0]
    np.testing.assert_array_equal(codes, 0.0)
    # one observed sample among unobserved ones: the count is that sample's, not a leftover
    M = np.zeros_like(X)
    M[1] = 1.0
    _, info_one = _fista_info(X, W, M, 0.3, 500, 1e-10)
    _, info_alone = _fista_info(X[1:2], W, np.ones((1, 5)), 0.3, 500, 1e-10)
    assert info_one[0] == info_alone[0] >= 2


@pytest.mark.parametrize("shape", [(0, 4), (3, 0)])
def test_structured_coder_refuses_a_dictionary_without_atoms_or_features(shape):
    with pytest.raises(ValueError, match=r"W must have shape \(n_atoms >= 1, n_features >= 1\)"):
        structured_sparse_code(np.ones(max(shape[1], 1)), np.zeros(shape))


@pytest.mark.parametrize("shape", [(5, 4), (3, 6)])
def test_fista_kernel_workspace_is_in_bounds_when_run_as_python(monkeypatch, shape):
    # numba does not bounds-check: a work slice cut short (an empty x or y view) is written past its end and
    # the compiled codes still look right. The kernel's own source run by the interpreter checks every index.
    import neurosim.kernels.structured_fista as kf
    n_atoms, n_features = shape
    X, W, M = problem(n_atoms, n_features, 4, seed=9, missing=0.3)
    M[0] = 0.0
    M[2] = M[1]  # the same mask twice: the Lipschitz constant is reused
    g = GroupStructure.disjoint(n_atoms, 2)
    ni, nw = kf.fista_workspace_sizes(n_atoms, n_features)

    def run(kernel):
        codes, info = np.zeros((4, n_atoms)), np.zeros(2, dtype=np.int64)
        ok = kernel(W, X, M, g.indptr, g.indices, g.weights, g.prox_order(), 0.1, 300, 1e-10, False, codes, info,
                    np.zeros(ni, dtype=np.int64), np.zeros(nw))
        return ok, codes, info

    ok_c, codes_c, info_c = run(kf.structured_fista)
    for name in ("_dot", "_lipschitz", "_prox"):
        monkeypatch.setattr(kf, name, getattr(kf, name).py_func)
    ok_p, codes_p, info_p = run(kf.structured_fista.py_func)
    assert ok_c and ok_p
    np.testing.assert_allclose(codes_p, codes_c, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(codes_c[0], 0.0)
    assert info_p[1] == info_c[1] == 0


@pytest.mark.parametrize("shape", [(5, 4), (3, 6)])
def test_fista_kernel_runs_at_its_documented_work_sizes_and_refuses_one_less(shape):
    # The kernel carves its work arrays into views; at exactly fista_workspace_sizes every view fits (the
    # test build checks every index), and one slot less of either array is refused before anything is written.
    import neurosim.kernels.structured_fista as kf
    n_atoms, n_features = shape
    X, W, M = problem(n_atoms, n_features, 3, seed=4, missing=0.3)
    g = GroupStructure.disjoint(n_atoms, 2)
    ni, nw = kf.fista_workspace_sizes(n_atoms, n_features)

    def run(n_int, n_float):
        codes, info = np.zeros((3, n_atoms)), np.zeros(2, dtype=np.int64)
        return kf.structured_fista(W, X, M, g.indptr, g.indices, g.weights, g.prox_order(), 0.1, 50, 1e-10, False,
                                   codes, info, np.zeros(n_int, dtype=np.int64), np.zeros(n_float))

    assert run(ni, nw)
    with pytest.raises(ValueError, match="work arrays too small"):
        run(ni, nw - 1)
    with pytest.raises(ValueError, match="work arrays too small"):
        run(ni - 1, nw)

def test_lipschitz_constant_is_the_largest_eigenvalue_even_when_the_atoms_have_equal_norms():
    # Unit-norm atoms give a Gram with equal diagonal entries; power iteration started from the diagonal
    # (the previous method) sat on the eigenvector [1, 1] of the *smallest* eigenvalue and FISTA diverged.
    import neurosim.kernels.structured_fista as kf
    for W in (np.array([[1.0, 0.0, 0.3], [-0.3, 1.0, 0.0]]), np.array([[0.6, 0.8], [0.8, -0.6], [-0.6, -0.8]])):
        W = W / np.linalg.norm(W, axis=1, keepdims=True)
        k, m = W.shape
        p = min(k, m)
        L = kf._lipschitz(W.copy(), k, m, np.zeros((p, p)))
        top = np.linalg.norm(W, 2) ** 2
        assert top <= L <= top * (1 + 1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fista_codes_of_two_negatively_correlated_unit_atoms_are_the_lasso(seed):
    # the OSDL case that diverged: singleton groups (the lasso), 2 unit atoms, full observations
    from sklearn.linear_model import Lasso
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((2, 9))
    W[1] = -0.3 * W[0] + rng.standard_normal(9)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = 3.0 * rng.standard_normal((8, 9))
    codes = structured_sparse_code(X, W, None, 0.1, solver="fista", tol=1e-12)
    assert np.all(np.isfinite(codes))
    for x, a in zip(X, codes):
        ref = Lasso(alpha=0.1 / 9, fit_intercept=False, tol=1e-14, max_iter=100000).fit(W.T, x).coef_
        np.testing.assert_allclose(a, ref, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("w, x, kappa", [(1.12222489e-108, 0.0, 1.0), (1.12222489e-108, 1.0, 1e-220),
                                         (3e150, 2e150, 1.0)])
def test_fista_one_atom_of_extreme_scale_is_the_soft_threshold(w, x, kappa):
    # 0.5 (x - w a)^2 + kappa |a| is minimised by a = sign(w x) max(|w x| - kappa, 0) / w^2; the Gram's scale
    # (1e-216, 9e300) must neither underflow nor overflow in the step length
    want = np.sign(w * x) * max(abs(w * x) - kappa, 0.0) / w ** 2
    got = structured_sparse_code(np.array([[x]]), np.array([[w]]), None, kappa, solver="fista")
    np.testing.assert_allclose(got[0, 0], want, rtol=1e-9, atol=0)


@pytest.mark.parametrize("fill", [0, 1, 2])
def test_fista_codes_do_not_depend_on_what_its_workspaces_held(fill):
    # The work arrays are scratch: what they hold on entry must not matter. The kernel keeps the last row's
    # observed index set in its integer workspace to reuse that row's Lipschitz constant; rows 0 and 1 observe
    # as many features but not the same ones ({0, 2}, then {0, 1}), so no stale entry may make them look alike.
    import neurosim.kernels.structured_fista as kf

    n_atoms, n_features = 3, 3
    X, W, _ = problem(n_atoms, n_features, 3, seed=4)
    M = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    g = as_groups(None, n_atoms)
    ni, nw = kf.fista_workspace_sizes(n_atoms, n_features)

    def run(x, m, iwork):
        codes, info = np.zeros((x.shape[0], n_atoms)), np.zeros(2, dtype=np.int64)
        assert kf.structured_fista(W, x, m, g.indptr, g.indices, g.weights, g.prox_order(), 0.1, 500, 1e-12,
                                   False, codes, info, iwork, np.full(nw, np.nan))
        return codes

    together = run(X, M, np.full(ni, fill, dtype=np.int64))
    for r in range(3):  # the oracle: each row coded alone, from fresh workspaces
        alone = run(X[r:r + 1], M[r:r + 1], np.zeros(ni, dtype=np.int64))
        np.testing.assert_allclose(together[r], alone[0], rtol=1e-12, atol=1e-15)
