"""Connectivity descriptions: exact degrees, binomial and uniform statistics at fixed seeds, bad input (issue 39)."""

import numpy as np
import pytest
from random_sparse import random_csr
from scipy import stats

import neurosim as ns
from neurosim import connectivity as conn

SEEDS = [0, 1, 2]


def pairs_of(idx):
    return set(zip(*[a.tolist() for a in idx.pairs()]))


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_probability_counts_are_binomial_and_columns_uniform(seed):
    n_post, n_pre, p = 400, 300, 0.05
    idx = conn.FixedProbability(p).draw(np.random.default_rng(seed), n_post, n_pre)
    idx._check()
    assert not idx.has_multapses()
    # the total is Binomial(n_post * n_pre, p): within 4 standard deviations
    mean, sd = n_post * n_pre * p, np.sqrt(n_post * n_pre * p * (1 - p))
    assert abs(idx.size - mean) < 4 * sd
    # in-degrees are Binomial(n_pre, p): a chi-square test of their histogram
    deg = idx.in_degree()
    assert stats.kstest(deg, stats.binom(n_pre, p).cdf).pvalue > 1e-3 or \
        abs(deg.var() - n_pre * p * (1 - p)) < 0.2 * n_pre * p * (1 - p)
    # every pre unit equally likely: chi-square on the out-degrees
    out = idx.out_degree()
    assert stats.chisquare(out).pvalue > 1e-4


def test_fixed_probability_each_pair_has_probability_p_independently():
    # 4 x 4 units drawn 4000 times (one generator): each of the 16 pairs' frequency is Binomial(4000, p)
    rng = np.random.default_rng(11)
    p, draws = 0.3, 4000
    count = np.zeros((4, 4))
    both = 0
    for _ in range(draws):
        m = np.zeros((4, 4), dtype=bool)
        post, pre = conn.FixedProbability(p).draw(rng, 4, 4).pairs()
        m[post, pre] = True
        count += m
        both += m[0, 0] and m[3, 2]
    sd = np.sqrt(draws * p * (1 - p))
    assert np.all(np.abs(count - draws * p) < 4.5 * sd)
    # independence of two pairs in different rows: P(both) = p^2
    assert abs(both - draws * p * p) < 4.5 * np.sqrt(draws * p * p * (1 - p * p))


def test_lateral_projections_have_no_self_connections_unless_asked():
    rng = np.random.default_rng(0)
    for c in (conn.FixedProbability(0.5), conn.FixedInDegree(9), conn.FixedOutDegree(9), conn.AllToAll(),
              conn.Gaussian(2.0, (4, 4), (4, 4))):
        idx = c.draw(rng, 16 if isinstance(c, conn.Gaussian) else 10, 16 if isinstance(c, conn.Gaussian) else 10,
                     lateral=True)
        assert not idx.has_self_synapses(), c
    idx = conn.FixedProbability(1.0, self_connections=True).draw(rng, 5, 5, lateral=True)
    assert idx.size == 25 and idx.has_self_synapses()
    # FixedInDegree(n - 1) on a lateral projection is every other unit
    idx = conn.FixedInDegree(9).draw(rng, 10, 10, lateral=True)
    assert pairs_of(idx) == {(i, j) for i in range(10) for j in range(10) if i != j}


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_in_and_out_degrees_are_exact_and_uniform(seed):
    rng = np.random.default_rng(seed)
    idx = conn.FixedInDegree(7).draw(rng, 300, 50)
    assert idx.in_degree().tolist() == [7] * 300 and not idx.has_multapses()
    assert stats.chisquare(idx.out_degree()).pvalue > 1e-4
    idx = conn.FixedOutDegree(6).draw(rng, 40, 250)
    idx._check()
    assert idx.out_degree().tolist() == [6] * 250 and not idx.has_multapses()
    assert stats.chisquare(idx.in_degree()).pvalue > 1e-4


def test_multapses_draw_with_replacement():
    rng = np.random.default_rng(1)
    idx = conn.FixedInDegree(8, multapses=True).draw(rng, 2000, 4)
    assert idx.in_degree().tolist() == [8] * 2000 and idx.has_multapses()
    # each draw uniform over 4 columns, independent: the number of distinct columns per row follows
    # the occupancy distribution; its mean is 4 (1 - (3/4)^8)
    distinct = np.array([np.unique(idx.indices[idx.indptr[i]:idx.indptr[i + 1]]).size for i in range(2000)])
    assert abs(distinct.mean() - 4 * (1 - 0.75 ** 8)) < 0.05
    with pytest.raises(ValueError, match="at most"):
        conn.FixedInDegree(5).draw(rng, 3, 4)


def test_gaussian_probabilities_follow_distance_and_cutoff():
    rng = np.random.default_rng(7)
    c = conn.Gaussian(1.5, pre_grid=(9, 9), post_grid=(3, 3), p=0.8, cutoff=2.0)
    draws = 800
    count = np.zeros((9, 81))
    for _ in range(draws):
        post, pre = c.draw(rng, 9, 81).pairs()
        count[post, pre] += 1
    # post unit 4 (the middle cell of the 3 x 3 grid) sits at pre grid point (4, 4)
    r, q = np.divmod(np.arange(81), 9)
    d2 = (r - 4.0) ** 2 + (q - 4.0) ** 2
    within = (np.abs(r - 4) <= 3) & (np.abs(q - 4) <= 3)  # radius ceil(2 * 1.5) = 3
    prob = np.where(within, 0.8 * np.exp(-d2 / (2 * 1.5 ** 2)), 0.0)
    sd = np.sqrt(draws * prob * (1 - prob)) + 1e-9
    assert np.all(np.abs(count[4] - draws * prob) <= 4.5 * sd + 1e-9)
    assert np.all(count[4][~within] == 0)


def test_gaussian_periodic_wraps_around_the_grid():
    c = conn.Gaussian(0.5, pre_grid=(5, 5), post_grid=(5, 5), p=1.0, periodic=True, cutoff=2.0)
    idx = c.draw(np.random.default_rng(0), 25, 25)
    # unit 0 at (0, 0): its distance-1 neighbours across the edges (4, 0) and (0, 4) have p = exp(-2) > 0;
    # p = 1 at d = 0 connects it to itself (not lateral here)
    mine = set(idx.indices[idx.indptr[0]:idx.indptr[1]].tolist())
    assert 0 in mine
    flat = conn.Gaussian(0.5, pre_grid=(5, 5), post_grid=(5, 5), p=1.0, periodic=False, cutoff=2.0)
    mine_flat = set(flat.draw(np.random.default_rng(0), 25, 25).indices[:25].tolist())
    assert all(j < 25 for j in mine_flat)
    many = [set(c.draw(np.random.default_rng(s), 25, 25).indices[:0].tolist()) for s in range(1)]
    assert many == [set()]
    wrapped = [c.draw(np.random.default_rng(s), 25, 25) for s in range(200)]
    hits = sum(20 in w.indices[w.indptr[0]:w.indptr[1]] for w in wrapped)  # (4, 0): one step up, wrapped
    assert abs(hits / 200 - np.exp(-2.0)) < 0.1


def test_from_indices_and_matrices_give_exactly_those_synapses():
    c = conn.FromIndices(post=[2, 0, 1], pre=[0, 3, 3])
    assert pairs_of(c.draw(np.random.default_rng(0), 3, 4)) == {(2, 0), (0, 3), (1, 3)}
    m = random_csr((5, 6), 0.4, np.random.default_rng(2))
    got = conn.as_connectivity(m).draw(np.random.default_rng(0), 5, 6)
    assert pairs_of(got) == set(zip(*[a.tolist() for a in m.nonzero()]))


@pytest.mark.parametrize("make, match", [
    (lambda: conn.FixedProbability(1.5), r"p must be in \[0.0, 1.0\]"),
    (lambda: conn.FixedProbability(-0.1), "p must be"),
    (lambda: conn.FixedInDegree(-1), "k must be"),
    (lambda: conn.FixedOutDegree(2.5), "k must be an integer"),
    (lambda: conn.Gaussian(0.0, (2, 2), (2, 2)), "sigma"),
    (lambda: conn.Gaussian(1.0, (2, 0), (2, 2)), r"pre_grid\[1\]"),
    (lambda: conn.FromIndices(post=[0, 1], pre=[0]), "same number"),
    (lambda: conn.FromIndices(post=[0.5], pre=[0]), "integers"),
])
def test_bad_descriptions_are_refused_by_name(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize("c, match", [
    (conn.FixedInDegree(6), "k must be at most the 5"),
    (conn.FixedOutDegree(5), "k must be at most the 4"),
    (conn.FromIndices(post=[0], pre=[9]), r"pre indices must lie in \[0, 5\)"),
    (conn.FromIndices(post=[0, 0], pre=[1, 1]), "given 2 times"),
    (conn.Gaussian(1.0, (2, 3), (2, 2)), "holds 6 units"),
])
def test_descriptions_that_do_not_fit_the_populations_are_refused_when_the_projection_is_built(c, match):
    x, y = ns.Population("x", 5), ns.Population("y", 4, dynamics=ns.Linear())
    with pytest.raises(ValueError, match=match):
        ns.Projection("W", x, y, connectivity=c)


def test_a_projection_too_large_for_memory_is_refused_before_anything_is_drawn():
    x, y = ns.Population("x", 10**6), ns.Population("y", 10**6, dynamics=ns.Linear())
    with pytest.raises(ValueError, match=r"Projection .W. .* would allocate .* GiB"):
        ns.Projection("W", x, y, connectivity=conn.FixedProbability(0.5))


def test_storage_and_mask_options_are_checked():
    x, y = ns.Population("x", 3), ns.Population("y", 3, dynamics=ns.Jacobi())
    with pytest.raises(ValueError, match="storage must be one of"):
        ns.Projection("W", x, y, storage="csr")
    with pytest.raises(ValueError, match="mask or connectivity, not both"):
        ns.Projection("W", x, y, mask=np.ones((3, 3)), connectivity=conn.AllToAll())
    with pytest.raises(ValueError, match="self_connections=True needs sparse storage"):
        ns.Projection("M", y, y, connectivity=conn.FixedProbability(0.5, self_connections=True), storage="dense")
    with pytest.raises(ValueError, match="multapses=True needs sparse storage"):
        ns.Projection("W", x, y, connectivity=conn.FixedInDegree(2, multapses=True), storage="dense")
    with pytest.raises(TypeError, match="connectivity must be"):
        ns.Projection("W", x, y, connectivity=0.5)


def test_drawing_is_a_function_of_the_seed_not_of_the_block_size(monkeypatch):
    a = conn.FixedProbability(0.02).draw(np.random.default_rng(5), 300, 200)
    b = conn.FixedProbability(0.02).draw(np.random.default_rng(5), 300, 200)
    c = conn.FixedProbability(0.02).draw(np.random.default_rng(6), 300, 200)
    assert a == b and a != c
    monkeypatch.setattr(conn, "_BLOCK_SYNAPSES", 7)
    assert conn.FixedProbability(0.02).draw(np.random.default_rng(5), 300, 200) == a
    g = conn.Gaussian(2.0, (20, 20), (20, 20))
    small = g.draw(np.random.default_rng(1), 400, 400)
    monkeypatch.setattr(conn, "_BLOCK_SYNAPSES", 1 << 22)
    assert g.draw(np.random.default_rng(1), 400, 400) == small


def test_newborn_units_get_what_their_description_says():
    rng = np.random.default_rng(3)
    post, pre = conn.FixedInDegree(4).newborn(rng, 12, 30, 2, 0)
    assert post.tolist() == [10] * 4 + [11] * 4 and len(set(pre[:4].tolist())) == 4
    post, pre = conn.FixedInDegree(4).newborn(rng, 10, 30, 0, 5)
    assert post.size == 0  # newborn pre units: in-degrees stay k
    post, pre = conn.FixedOutDegree(3).newborn(rng, 20, 12, 0, 2)
    assert sorted(pre.tolist()) == [10, 10, 10, 11, 11, 11] and np.all(np.diff(post) >= 0)
    post, pre = conn.AllToAll().newborn(rng, 4, 4, 1, 1, lateral=True)
    assert set(zip(post.tolist(), pre.tolist())) == {(3, 0), (3, 1), (3, 2), (0, 3), (1, 3), (2, 3)}
    post, pre = conn.Gaussian(1.0, (2, 2), (2, 2)).newborn(rng, 5, 4, 1, 0)
    assert post.size == 0
    # FixedProbability: each new pair with probability p
    post, pre = conn.FixedProbability(0.25).newborn(rng, 1000, 40, 1000, 0)
    assert abs(post.size - 10000) < 4.5 * np.sqrt(40000 * 0.25 * 0.75)


def test_params_name_the_description():
    assert conn.FixedProbability(0.1).params() == {"connectivity": "FixedProbability", "connectivity_p": 0.1}
    assert conn.FixedInDegree(3, multapses=True).params()["connectivity_multapses"] is True
    assert repr(conn.FixedOutDegree(2)) == "FixedOutDegree(k=2)"
