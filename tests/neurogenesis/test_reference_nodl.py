"""Checks of the plain-NumPy NODL reference against facts independent of it.

Line numbers refer to the paper text ``000_7b546350ffac6c20.txt``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from reference_nodl import (
    NODLReference,
    births_count,
    column_update,
    draw_elements,
    group_shrink,
    lambda_for_count,
    lambda_for_vector_count,
    lasso_cd,
    lasso_path_solution,
    pearson_accuracy,
    prox_count,
    sparse_codes,
    surrogate_objective,
)


# --------------------------------------------------------------------------
# Lasso and Alg. 2
# --------------------------------------------------------------------------
def _kkt_violation(D, x, a, lam):
    """Largest violation of the lasso optimality conditions, relative to lam."""
    g = D.T @ (x - D @ a)  # = lam * subgradient of ||a||_1
    on = a != 0
    v_on = np.max(np.abs(g[on] - lam * np.sign(a[on])), initial=0.0)
    v_off = np.max(np.abs(g[~on]) - lam, initial=0.0)
    return max(v_on, v_off) / lam


@pytest.mark.parametrize("seed", range(6))
def test_lasso_path_solution_satisfies_kkt_and_matches_coordinate_descent(seed):
    rng = np.random.default_rng(seed)
    m, k = 15, 25  # overcomplete
    D = rng.standard_normal((m, k))
    D /= np.linalg.norm(D, axis=0)
    x = rng.standard_normal(m)
    lam_max = np.max(np.abs(D.T @ x))
    for frac in (0.9, 0.5, 0.2, 0.05):
        lam = frac * lam_max
        a = lasso_path_solution(D, x, lam)
        assert np.count_nonzero(a) >= 1
        assert _kkt_violation(D, x, a, lam) < 1e-8
        a_cd = lasso_cd(D, x, lam)
        assert _kkt_violation(D, x, a_cd, lam) < 1e-6
        np.testing.assert_allclose(a, a_cd, atol=1e-6)
    # at and above lam_max the solution is exactly zero
    assert not np.any(lasso_path_solution(D, x, lam_max))
    assert not np.any(lasso_path_solution(D, x, 2 * lam_max))


@pytest.mark.parametrize("beta_c", [1, 3, 7, 12])
def test_alg2_binary_search_hits_the_count(beta_c):
    rng = np.random.default_rng(10 + beta_c)
    m, k = 20, 30
    D = rng.standard_normal((m, k))
    D /= np.linalg.norm(D, axis=0)
    for _ in range(8):
        x = rng.standard_normal(m)
        lam, a = lambda_for_count(x, D, beta_c)
        assert 0 < lam < np.max(np.abs(D.T @ x))
        assert np.count_nonzero(a) == beta_c
        assert _kkt_violation(D, x, a, lam) < 1e-8


def test_alg2_stops_on_bracket_width_when_count_unreachable():
    rng = np.random.default_rng(0)
    m, k = 20, 4
    D = rng.standard_normal((m, k))
    x = rng.standard_normal(m)
    lam, a = lambda_for_count(x, D, beta_c=10, eps_lambda=1e-6)
    lam_max = np.max(np.abs(D.T @ x))
    # the bracket [0, lam_max] is halved until its width is < 1e-6 of its top
    assert 0 < lam < 1e-6 * lam_max
    assert np.count_nonzero(a) == k
    # zero correlation: no lambda gives a nonzero, the zero code is returned
    D2 = np.zeros((m, 3))
    D2[:5] = rng.standard_normal((5, 3))
    x2 = np.zeros(m)
    x2[10:] = rng.standard_normal(m - 10)
    lam2, a2 = lambda_for_count(x2, D2, 2)
    assert lam2 == 0.0 and not np.any(a2)


def test_sparse_codes_batch_equals_per_sample_search():
    rng = np.random.default_rng(4)
    D = rng.standard_normal((12, 18))
    X = rng.standard_normal((12, 5))
    codes, lams = sparse_codes(X, D, 4)
    for i in range(5):
        lam, a = lambda_for_count(X[:, i], D, 4)
        assert lam == lams[i]
        np.testing.assert_array_equal(a, codes[:, i])
    assert np.all(np.count_nonzero(codes, axis=0) == 4)


def test_alg2_on_vector_and_element_prox_hand_cases():
    u = np.array([3.0, -1.0, 2.0, 0.5])
    # bisection on [0, 3]: mean 1.5 leaves {3, 2} -> count 2 hit at once
    assert lambda_for_vector_count(u, 2) == 1.5
    np.testing.assert_array_equal(prox_count(u, 2, "soft"), [1.5, 0.0, 0.5, 0.0])
    np.testing.assert_array_equal(prox_count(u, 2, "hard"), [3.0, 0.0, 2.0, 0.0])
    # count 3: 1.5 -> 2 (too few) -> [0, 1.5]: 0.75 leaves {3, 1, 2} -> hit
    assert lambda_for_vector_count(u, 3) == 0.75
    np.testing.assert_array_equal(prox_count(u, 3, "soft"), [2.25, -0.25, 1.25, 0.0])
    # already sparse enough: untouched
    np.testing.assert_array_equal(prox_count(np.array([0.0, 2.0, 0.0]), 2, "soft"), [0.0, 2.0, 0.0])


# --------------------------------------------------------------------------
# Column update (steps 12-19)
# --------------------------------------------------------------------------
def test_group_shrink_hand_cases():
    np.testing.assert_allclose(group_shrink(np.array([3.0, 4.0]), 1.0), [2.4, 3.2], rtol=1e-15)
    assert not np.any(group_shrink(np.array([0.3, 0.4]), 0.5))
    assert not np.any(group_shrink(np.array([0.3, 0.4]), 0.5 + 1e-12))
    assert not np.any(group_shrink(np.zeros(3), 0.1))
    np.testing.assert_array_equal(group_shrink(np.array([0.3, 0.4]), 0.0), [0.3, 0.4])


def test_column_update_hand_cases():
    # one column, A = [[4]], b = (2, 2, 1): u = b/4 = (.5, .5, .25), ||u|| = .75
    A = np.array([[4.0]])
    B = np.array([[2.0], [2.0], [1.0]])
    D, info = column_update(np.zeros((3, 1)), A, B, lambda_g=0.15, tol=1e-12)
    np.testing.assert_allclose(D[:, 0], [0.4, 0.4, 0.2], rtol=1e-14)  # (1 - .15/.75) u
    assert info.converged and info.sweeps == 2  # second sweep reproduces the first
    # projection: A = [[2]], b = (8, 0, 6): u = (4, 0, 3), shrink by 1 -> (3.2, 0, 2.4), norm 4
    D, _ = column_update(np.zeros((3, 1)), np.array([[2.0]]), np.array([[8.0], [0.0], [6.0]]), lambda_g=1.0)
    np.testing.assert_allclose(D[:, 0], [0.8, 0.0, 0.6], rtol=1e-14)
    # "ajj" scaling: threshold 1/2 on u -> (4, 0, 3) * (1 - .5/5), then projection
    D, _ = column_update(np.zeros((3, 1)), np.array([[2.0]]), np.array([[8.0], [0.0], [6.0]]), lambda_g=1.0, shrink_scale="ajj")
    np.testing.assert_allclose(D[:, 0], [0.8, 0.0, 0.6], rtol=1e-14)
    # killing: ||u|| = .75 <= lambda_g
    D, _ = column_update(np.full((3, 1), 0.1), np.array([[4.0]]), np.array([[2.0], [2.0], [1.0]]), lambda_g=0.75)
    assert not np.any(D)


def test_column_update_skips_unused_column():
    rng = np.random.default_rng(0)
    D0 = draw_elements(rng, 6, 3)
    C = rng.standard_normal((3, 10))
    C[2] = 0.0  # element 2 never used: A_22 = 0, a_2 = 0, b_2 = 0
    X = rng.standard_normal((6, 10))
    D, _ = column_update(D0, C @ C.T, X @ C.T, lambda_g=0.1)
    np.testing.assert_array_equal(D[:, 2], D0[:, 2])
    assert not np.allclose(D[:, :2], D0[:, :2])


def test_unused_column_prox_rule_wears_it_down():
    # A = 0: only steps 15-17 act on d_j = (.6, .8): ||.|| drops by lambda_g per sweep
    D0 = np.array([[0.6], [0.8]])
    A, B = np.zeros((1, 1)), np.zeros((2, 1))
    D1, _ = column_update(D0, A, B, 0.25, max_sweeps=1, unused="prox")
    np.testing.assert_allclose(D1[:, 0], [0.45, 0.6], rtol=1e-14)
    D4, info = column_update(D0, A, B, 0.25, tol=1e-12, max_sweeps=10, unused="prox")
    assert not np.any(D4) and info.converged and info.sweeps == 5  # 1 -> .75 -> .5 -> .25 -> 0, then no change
    np.testing.assert_array_equal(column_update(D0, A, B, 0.25, unused="skip")[0], D0)
    np.testing.assert_array_equal(column_update(D0, A, B, 0.0, unused="prox")[0], D0)  # ODL: untouched


def _random_stats(rng, m, k, n, scale=1.0):
    C = rng.standard_normal((k, n))
    X = scale * rng.standard_normal((m, n))
    return C @ C.T, X @ C.T


@pytest.mark.parametrize("seed", range(4))
def test_sweeps_decrease_the_objective_they_minimise(seed):
    rng = np.random.default_rng(seed)
    m, k, lam_g = 10, 6, 0.3
    A, B = _random_stats(rng, m, k, 8, scale=0.3)
    for scale, weighted in (("unit", True), ("ajj", False)):
        D = draw_elements(np.random.default_rng(100 + seed), m, k)
        f = [surrogate_objective(D, A, B, lam_g, weighted)]
        for _ in range(15):
            D, info = column_update(D, A, B, lam_g, None, tol=0.0, max_sweeps=1, shrink_scale=scale)
            f.append(surrogate_objective(D, A, B, lam_g, weighted))
        steps = np.diff(f)
        assert np.all(steps <= 1e-12 * max(1.0, abs(f[0])))
        assert f[-1] < f[0] - 1e-3


def test_paper_threshold_can_increase_the_unweighted_objective():
    # one column: A = [[4]], b = (1, 0), lambda_g = .2, start at the minimiser
    # d = (.2, 0) of 0.5*4*||d||^2 - b.d + .2||d||; step 16 with threshold .2
    # (not .2/A_jj) moves to u = (.25, 0) -> (.05, 0).
    A = np.array([[4.0]])
    B = np.array([[1.0], [0.0]])
    D0 = np.array([[0.2], [0.0]])
    D1, _ = column_update(D0, A, B, 0.2, max_sweeps=1)
    np.testing.assert_allclose(D1[:, 0], [0.05, 0.0], rtol=1e-14)
    assert surrogate_objective(D1, A, B, 0.2) == pytest.approx(-0.035, rel=1e-12)
    assert surrogate_objective(D0, A, B, 0.2) == pytest.approx(-0.08, rel=1e-12)
    assert surrogate_objective(D1, A, B, 0.2, weighted=True) < surrogate_objective(D0, A, B, 0.2, weighted=True)
    # with the A_jj-scaled threshold the unweighted minimiser is a fixed point
    D2, _ = column_update(D0, A, B, 0.2, max_sweeps=1, shrink_scale="ajj")
    np.testing.assert_allclose(D2, D0, rtol=1e-14)


def test_converged_update_solves_normal_equations_when_ball_inactive():
    rng = np.random.default_rng(7)
    m, k = 9, 5
    C = rng.standard_normal((k, 40))
    A = C @ C.T
    D_star = rng.standard_normal((m, k))
    D_star *= 0.5 / np.linalg.norm(D_star, axis=0)
    B = D_star @ A  # minimiser of eq. (3) without the constraint, inside the ball
    D, info = column_update(draw_elements(rng, m, k), A, B, tol=1e-13, max_sweeps=5000)
    assert info.converged
    np.testing.assert_allclose(D, D_star, atol=1e-9)


def test_sparse_elements_have_beta_d_nonzeros():
    rng = np.random.default_rng(2)
    m, k, beta_d = 20, 6, 4
    A, B = _random_stats(rng, m, k, 30)
    D0 = draw_elements(rng, m, k)
    for mode in ("soft", "hard"):
        D, _ = column_update(D0, A, B, 0.0, beta_d, prox_mode=mode)
        assert np.all(np.count_nonzero(D, axis=0) == beta_d)
        assert np.all(np.linalg.norm(D, axis=0) <= 1 + 1e-12)


# --------------------------------------------------------------------------
# Accuracy, births
# --------------------------------------------------------------------------
def test_accuracy_matches_scipy_correlations():
    rng = np.random.default_rng(5)
    D = rng.standard_normal((10, 4))
    codes = rng.standard_normal((4, 6))
    X = D @ codes + 0.5 * rng.standard_normal((10, 6))
    R = D @ codes
    want_p = np.mean([pearsonr(X[:, i], R[:, i])[0] for i in range(6)])
    want_s = np.mean([spearmanr(X[:, i], R[:, i])[0] for i in range(6)])
    assert pearson_accuracy(X, D, codes) == pytest.approx(want_p, rel=1e-12)
    assert pearson_accuracy(X, D, codes, "spearman") == pytest.approx(want_s, rel=1e-12)
    codes[:, 0] = 0.0  # zero reconstruction counts as 0
    r = pearson_accuracy(X, D, codes, per_sample=True)
    assert r[0] == 0.0 and r[1] == pytest.approx(pearsonr(X[:, 1], R[:, 1])[0], rel=1e-12)


def test_births_count():
    assert births_count(0.95, 0.9, 50) == 0
    assert births_count(0.9, 0.9, 50) == 5  # p_c <= gamma triggers (step 5)
    assert births_count(0.85, 0.9, 50) == 8  # 7.5 rounds half up
    assert births_count(0.0, 0.9, 8) == 8
    assert births_count(-0.5, 0.9, 10) == 10  # bounded by c_k
    assert births_count(0.3, 0.9, 0) == 0
    # (1 - .75) * 10 = 2.5 exactly
    assert [births_count(0.75, 0.9, 10, r) for r in ("half_up", "half_even", "ceil", "floor")] == [3, 2, 3, 2]
    assert births_count(0.88, 0.9, 10, "ceil") == 2 and births_count(0.88, 0.9, 10) == 1
    with pytest.raises(ValueError):
        births_count(0.5, 0.9, 10, "stochastic")


def test_draw_elements_recipe():
    m, k_n = 12, 3
    got = draw_elements(np.random.default_rng(42), m, k_n)
    Z = np.random.default_rng(42).standard_normal((k_n, m))  # element-major
    np.testing.assert_array_equal(got, (Z / np.linalg.norm(Z, axis=1, keepdims=True)).T)
    # the first newborns do not depend on how many are drawn
    np.testing.assert_array_equal(draw_elements(np.random.default_rng(42), m, 5)[:, :3], got)
    sp = draw_elements(np.random.default_rng(42), m, k_n, beta_d=4)
    for i in range(k_n):
        top = np.argsort(-np.abs(Z[i]))[:4]
        want = np.zeros(m)
        want[top] = Z[i, top]
        np.testing.assert_allclose(sp[:, i], want / np.linalg.norm(want), rtol=1e-14)
        assert np.count_nonzero(sp[:, i]) == 4


# --------------------------------------------------------------------------
# Alg. 1
# --------------------------------------------------------------------------
M, L = 40, 20
P, Q = np.arange(L), np.arange(L, M)


def _domain(rng, dims, n, n_atoms=6, atom_nnz=5, per=2):
    """Samples = 2 of 6 sparse ground-truth atoms supported in ``dims``."""
    atoms = np.zeros((M, n_atoms))
    for j in range(n_atoms):
        s = rng.choice(dims, atom_nnz, replace=False)
        atoms[s, j] = rng.standard_normal(atom_nnz)
    C = np.zeros((n_atoms, n))
    for i in range(n):
        s = rng.choice(n_atoms, per, replace=False)
        C[s, i] = rng.uniform(0.5, 1.5, per) * rng.choice([-1, 1], per)
    return atoms @ C


@pytest.fixture(scope="module")
def two_domains():
    rng = np.random.default_rng(1)
    return _domain(rng, P, 100), _domain(rng, Q, 100)


def _batches(X, size=20):
    return [X[:, i : i + size] for i in range(0, X.shape[1], size)]


def test_odl_matches_sklearn_minibatch_update():
    """ODL (lambda_g = 0, dense elements, fixed lambda_c) vs MiniBatchDictionaryLearning.

    sklearn's statistics are forgetting-weighted means (A <- beta A + C C^T/n),
    the paper's are plain sums (l.110); the column update (eq. (4)) is
    invariant to a common scale of A and B, so from A = B = 0 the first step
    must agree, later steps differ -- and agree again when fed sklearn's own
    statistics.  sklearn makes one sweep per batch: max_sweeps=1 here.
    """
    from sklearn.decomposition import MiniBatchDictionaryLearning

    rng = np.random.default_rng(3)
    m, k, n, lam = 12, 5, 30, 0.2
    D0 = draw_elements(rng, m, k)
    X1, X2 = rng.standard_normal((m, n)), rng.standard_normal((m, n))
    mb = MiniBatchDictionaryLearning(n_components=k, alpha=lam, fit_algorithm="lars", dict_init=D0.T.copy(), random_state=0)

    def codes(D, X):
        return np.stack([lasso_path_solution(D, X[:, i], lam) for i in range(X.shape[1])], axis=1)

    mb.partial_fit(X1.T)
    C1 = codes(D0, X1)
    A, B = C1 @ C1.T, X1 @ C1.T
    assert np.diag(A).min() > 1e-6  # sklearn would resample unused atoms
    D1, _ = column_update(D0, A, B, max_sweeps=1)
    np.testing.assert_allclose(D1, mb.components_.T, atol=1e-10)

    mb.partial_fit(X2.T)
    C2 = codes(D1, X2)
    D2, _ = column_update(D1, A + C2 @ C2.T, B + X2 @ C2.T, max_sweeps=1)
    assert np.abs(D2 - mb.components_.T).max() > 1e-3  # sums vs forgetting means
    if not hasattr(mb, "_A"):
        pytest.skip("sklearn no longer exposes its statistics")
    D2_sk, _ = column_update(D1, mb._A, mb._B, max_sweeps=1)
    np.testing.assert_allclose(D2_sk, mb.components_.T, atol=1e-10)


def test_lemma1_odl_cannot_leave_P_while_nodl_grows_into_Q(two_domains):
    """Lemma 1 (l.342, proof sketch l.354) and Sec. C.2 synthetic data (l.320-328), scaled down.

    |P| = |Q| = l = 20, elements with beta_d = 10 <= l nonzeros.  ODL from a
    random DENSE dictionary: after domain 1 every element is supported in P
    (part 1, exact zeros); on domain 2 every code is exactly 0, A and B do not
    move and the dictionary stays in P (part 2).  NODL started from the same
    state gives birth (p_c = 0 <= gamma), its used newborns live in Q and
    domain 2 is reconstructed.
    """
    X1, X2 = two_domains
    kw = dict(beta_c=3, beta_d=10, gamma=0.9, c_k=8)
    rng = np.random.default_rng(5)
    odl = NODLReference(draw_elements(rng, M, 8), rng, "ODL", **kw)
    assert np.count_nonzero(odl.D[Q]) == 8 * len(Q)
    odl.run(_batches(X1))
    assert not np.any(odl.D[Q])  # part (1)
    acc1_odl = odl.accuracy(X1)
    assert acc1_odl > 0.9
    D_end1, A_end1, B_end1 = odl.D.copy(), odl.A.copy(), odl.B.copy()

    nodl = NODLReference(D_end1, np.random.default_rng(6), "NODL", lambda_g=0.05, **kw)
    nodl.A, nodl.B = A_end1.copy(), B_end1.copy()

    for Xb in _batches(X2):
        rec = odl.step(Xb)
        assert rec.accuracy == 0.0
        assert not np.any(odl.last_codes)
        np.testing.assert_array_equal(odl.A, A_end1)
        np.testing.assert_array_equal(odl.B, B_end1)
        assert not np.any(odl.D[Q])  # part (2): exact zeros
    # (D itself may still move inside P: the sweeps go on from the
    # tolerance-converged D_end1 with the same A, B)
    assert np.abs(odl.D - D_end1).max() < 1e-4
    assert odl.accuracy(X2) == 0.0

    b2 = _batches(X2)
    first = nodl.step(b2[0])
    assert first.accuracy == 0.0 and first.k_born == 8  # k_n = (1 - 0) c_k
    # step 9: the batch was re-encoded with the newborns before step 11
    assert nodl.last_codes.shape == (16, 20) and np.any(nodl.last_codes[8:])
    assert first.accuracy_after_birth > 0.2
    nodl.run(b2[1:])
    born = [j for j, i in enumerate(nodl.ids) if i >= 8]
    used = [j for j in born if nodl.A[j, j] > 0]
    assert len(used) >= 6
    for j in used:
        d = nodl.D[:, j]
        assert np.count_nonzero(d) <= 10
        assert np.linalg.norm(d[Q]) >= 0.99 * np.linalg.norm(d)
    assert sum(not np.any(nodl.D[P, j]) for j in used) >= len(used) // 2
    acc2 = nodl.accuracy(X2)
    assert acc2 > 0.9  # reached about 0.957 in this setting
    assert nodl.accuracy(X1) > acc1_odl - 0.02  # domain 1 not forgotten


def test_births_deaths_keep_bookkeeping_consistent(two_domains):
    """A, B equal the sums of the codes of surviving ids; A PSD; ids never reused."""
    X1, X2 = two_domains
    rng = np.random.default_rng(5)
    D0 = draw_elements(rng, M, 8)
    model = NODLReference(D0, rng, "NODL", beta_c=3, beta_d=10, gamma=0.9, c_k=8, lambda_g=2.0)
    sumA, sumB = {}, {}
    live = set(range(8))
    seen = set(range(8))
    n_birth = n_death = 0
    for Xb in _batches(X1) + _batches(X2):
        rng_copy = np.random.default_rng()
        rng_copy.bit_generator.state = model.rng.bit_generator.state
        t = model.t
        rec = model.step(Xb)
        ev = {kind: ids for (tt, kind, ids) in model.events if tt == t}
        if "birth" in ev:
            n_birth += 1
            assert not seen & set(ev["birth"])
            assert min(ev["birth"]) == max(seen) + 1
            seen |= set(ev["birth"])
            live |= set(ev["birth"])
            np.testing.assert_array_equal(model.last_born, draw_elements(rng_copy, M, rec.k_born))
        ids = model.last_ids
        C = model.last_codes
        for a, ia in enumerate(ids):
            sumB[ia] = sumB.get(ia, 0) + Xb @ C[a]
            for b, ib in enumerate(ids):
                sumA[ia, ib] = sumA.get((ia, ib), 0) + C[a] @ C[b]
        if "death" in ev:
            n_death += 1
            assert set(ev["death"]) <= live
            live -= set(ev["death"])
        assert list(model.ids) == sorted(live)
        assert rec.k_after == len(live) == model.D.shape[1] == model.A.shape[0] == model.B.shape[1]
        assert np.all(np.linalg.norm(model.D, axis=0) > 0)
        A = model.A
        np.testing.assert_array_equal(A, A.T)
        assert np.linalg.eigvalsh(A).min() >= -1e-9 * max(1.0, np.abs(A).max())
        want_A = np.array([[sumA.get((i, j), 0.0) for j in model.ids] for i in model.ids]).reshape(A.shape)
        np.testing.assert_allclose(A, want_A, rtol=1e-12, atol=1e-12)
        for c, i in enumerate(model.ids):
            np.testing.assert_allclose(model.B[:, c], sumB.get(i, np.zeros(M)), rtol=1e-12, atol=1e-12)
    assert n_birth >= 3 and n_death >= 3


def test_variants_switch_mechanisms(two_domains):
    X1, X2 = two_domains
    kw = dict(beta_c=3, beta_d=10, gamma=0.9, c_k=8)
    D0 = draw_elements(np.random.default_rng(5), M, 8)
    with pytest.raises(ValueError):
        NODLReference(D0, np.random.default_rng(0), "ODL", lambda_g=0.1, **kw)
    with pytest.raises(ValueError):
        NODLReference(D0, np.random.default_rng(0), "NODL+", lambda_g=0.1, **kw)
    batches = _batches(X1[:, :40]) + _batches(X2[:, :40])
    kinds = {}
    for name, lam in (("NODL+", 0.0), ("NODL-", 2.0), ("NODL", 2.0)):
        mdl = NODLReference(D0, np.random.default_rng(0), name, lambda_g=lam, **kw)
        mdl.run(batches)
        kinds[name] = {kind for _, kind, _ in mdl.events}
    assert kinds["NODL+"] == {"birth"}
    assert kinds["NODL-"] == {"death"}
    assert kinds["NODL"] == {"birth", "death"}


def test_odl_star_redraws_dead_elements(two_domains):
    X1, _ = two_domains
    D0 = draw_elements(np.random.default_rng(5), M, 6)
    D0[:, 2] = 0.0  # a dead element: never coded, never updated (A_22 = 0)
    kw = dict(beta_c=3, beta_d=10)
    odl = NODLReference(D0, np.random.default_rng(9), "ODL", **kw)
    star = NODLReference(D0, np.random.default_rng(9), "ODL*", **kw)
    odl.step(X1[:, :20])
    star.step(X1[:, :20])
    assert not np.any(odl.D[:, 2]) and odl.events == []
    assert star.events == [(0, "reinit", (2,))]
    np.testing.assert_array_equal(star.D[:, 2], draw_elements(np.random.default_rng(9), M, 1)[:, 0])
    assert not np.any(star.A[2]) and not np.any(star.A[:, 2]) and not np.any(star.B[:, 2])
    np.testing.assert_array_equal(star.D[:, [0, 1, 3, 4, 5]], odl.D[:, [0, 1, 3, 4, 5]])
    star.step(X1[:, 20:40])
    assert star.ids == [0, 1, 2, 3, 4, 5] and np.linalg.norm(star.D[:, 2]) > 0.5
    # the same as a death and a birth: fresh id, appended column
    star2 = NODLReference(D0, np.random.default_rng(9), "ODL*", reinit_as_birth=True, **kw)
    star2.step(X1[:, :20])
    assert star2.events == [(0, "death", (2,)), (0, "birth", (6,))]
    assert star2.ids == [0, 1, 3, 4, 5, 6]
    np.testing.assert_array_equal(star2.D[:, 5], draw_elements(np.random.default_rng(9), M, 1)[:, 0])
    np.testing.assert_array_equal(star2.D[:, :5], odl.D[:, [0, 1, 3, 4, 5]])
    assert star2.A.shape == (6, 6) and not np.any(star2.A[5]) and not np.any(star2.B[:, 5])


def test_step5_accuracy_method(two_domains):
    X1, _ = two_domains
    D0 = draw_elements(np.random.default_rng(5), M, 8)
    for method in ("pearson", "spearman"):
        mdl = NODLReference(D0, np.random.default_rng(0), "NODL", beta_c=3, c_k=4, accuracy_method=method)
        rec = mdl.step(X1[:, :20])
        codes, _ = sparse_codes(X1[:, :20], D0, 3)
        assert rec.accuracy == pearson_accuracy(X1[:, :20], D0, codes, method)
    assert pearson_accuracy(X1[:, :20], D0, codes, "spearman") != pearson_accuracy(X1[:, :20], D0, codes)
