"""The compressed-row synapse index against scipy.sparse and plain Python sets (issue 39)."""

import numpy as np
import pytest
import scipy.sparse as sp

from neurosim.synapse_index import SynapseIndex, index_dtype


def _random_pairs(rng, n_post, n_pre, n):
    keys = rng.choice(n_post * n_pre, size=n, replace=False)
    return keys // n_pre, keys % n_pre


def test_from_pairs_is_scipys_sorted_csr_and_order_aligns_values():
    rng = np.random.default_rng(3)
    post, pre = _random_pairs(rng, 7, 11, 30)
    values = rng.normal(size=30)
    idx, order = SynapseIndex.from_pairs(post, pre, 7, 11)
    ref = sp.csr_array((values, (post, pre)), shape=(7, 11))
    ref.sort_indices()
    assert idx.indptr.tolist() == ref.indptr.tolist()
    assert idx.indices.tolist() == ref.indices.tolist()
    assert np.array_equal(values[order], ref.data)
    p2, q2 = idx.pairs()
    assert set(zip(p2.tolist(), q2.tolist())) == set(zip(post.tolist(), pre.tolist()))
    assert idx.in_degree().tolist() == np.bincount(post, minlength=7).tolist()
    assert idx.out_degree().tolist() == np.bincount(pre, minlength=11).tolist()


def test_transposed_index_is_scipys_csc_and_keeps_row_order_within_columns():
    rng = np.random.default_rng(4)
    post, pre = _random_pairs(rng, 9, 6, 25)
    idx, _ = SynapseIndex.from_pairs(post, pre, 9, 6)
    pre_indptr, synapses, post_of = idx.by_pre()
    numbers = np.arange(idx.size, dtype=float) + 1.0
    csc = sp.csr_array((numbers, idx.indices, idx.indptr), shape=(9, 6)).tocsc()
    csc.sort_indices()
    assert pre_indptr.tolist() == csc.indptr.tolist()
    assert post_of.tolist() == csc.indices.tolist()
    assert (synapses + 1.0).tolist() == csc.data.tolist()
    assert idx.by_pre() is idx.by_pre()  # computed once
    assert not synapses.flags.writeable


def test_removed_equals_the_index_of_the_surviving_pairs_renumbered():
    rng = np.random.default_rng(5)
    post, pre = _random_pairs(rng, 8, 8, 30)
    idx, _ = SynapseIndex.from_pairs(post, pre, 8, 8)
    dead_post, dead_pre = [1, 5], [0, 5, 7]
    new, keep = idx.removed(dead_post, dead_pre)
    p, q = idx.pairs()
    survive = ~np.isin(p, dead_post) & ~np.isin(q, dead_pre)
    assert keep.tolist() == survive.tolist()
    post_map = {o: n for n, o in enumerate(i for i in range(8) if i not in dead_post)}
    pre_map = {o: n for n, o in enumerate(j for j in range(8) if j not in dead_pre)}
    want = sorted((post_map[a], pre_map[b]) for a, b in zip(p[survive].tolist(), q[survive].tolist()))
    got = list(zip(*[a.tolist() for a in new.pairs()]))
    assert got == want
    assert new.shape == (6, 5)
    new._check()


def test_removed_handles_empty_rows_at_the_end_and_killing_everything():
    idx, _ = SynapseIndex.from_pairs([0, 0], [1, 2], 4, 3)
    new, keep = idx.removed([1], [])
    assert new.indptr.tolist() == [0, 2, 2, 2] and keep.all()
    none, keep = idx.removed([0, 1, 2, 3], [0, 1, 2])
    assert none.size == 0 and none.shape == (0, 0) and not keep.any()


def test_grown_inserts_pairs_keeping_old_values_in_place():
    idx, _ = SynapseIndex.from_pairs([0, 1, 1], [1, 0, 2], 2, 3)
    new, old, added = idx.grown(3, 4, [2, 0, 1], [3, 0, 3])
    p, q = new.pairs()
    keys = list(zip(p.tolist(), q.tolist()))
    assert keys == sorted(keys)
    assert [keys[s] for s in old] == [(0, 1), (1, 0), (1, 2)]
    assert [keys[s] for s in added] == [(2, 3), (0, 0), (1, 3)]


def test_without_and_find_against_a_python_set():
    rng = np.random.default_rng(6)
    post, pre = _random_pairs(rng, 10, 10, 40)
    idx, _ = SynapseIndex.from_pairs(post, pre, 10, 10)
    have = set(zip(*[a.tolist() for a in idx.pairs()]))
    qp, qq = rng.integers(0, 10, 50), rng.integers(0, 10, 50)
    found = idx.find(qp, qq)
    for a, b, s in zip(qp.tolist(), qq.tolist(), found.tolist()):
        assert (s >= 0) == ((a, b) in have)
        if s >= 0:
            assert (int(idx.post()[s]), int(idx.indices[s])) == (a, b)
    gone = np.flatnonzero(found >= 0)[:5]
    new, keep = idx.without(found[gone])
    assert set(zip(*[a.tolist() for a in new.pairs()])) == have - {(int(qp[k]), int(qq[k])) for k in gone}
    assert int(keep.sum()) == new.size


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("many", [False, True], ids=["few edits", "many edits"])
def test_edited_equals_a_rebuild_from_the_kept_and_added_pairs(seed, many):
    # the oracle: from_pairs (a stable sort) of the kept old synapses followed by the added ones, values carried
    # along; multapses (random pairs repeat) put an added pair after the old ones and equal added pairs in order
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n_post, n_pre = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        post, pre = rng.integers(0, n_post, 40), rng.integers(0, n_pre, 40)
        idx, _ = SynapseIndex.from_pairs(post, pre, n_post, n_pre)
        values = rng.normal(size=idx.size)
        n_edit = 80 if many else 3  # the vectorised and the run-copying paths (beyond and below _FEW edits)
        remove = rng.choice(idx.size, size=min(n_edit // 2, idx.size), replace=False)
        ap, aq, av = rng.integers(0, n_post, n_edit), rng.integers(0, n_pre, n_edit), rng.normal(size=n_edit)
        new, splice = idx.edited(remove, ap, aq)
        keep = np.ones(idx.size, dtype=bool)
        keep[remove] = False
        p, q = idx.pairs()
        ref, order = SynapseIndex.from_pairs(np.r_[p[keep], ap], np.r_[q[keep], aq], n_post, n_pre)
        assert new == ref
        new._check()
        assert np.array_equal(splice(values, av), np.r_[values[keep], av][order])
        assert np.array_equal(splice(values, 2.5), np.r_[values[keep], np.full(n_edit, 2.5)][order])
        positions = idx.positions(ap, aq, side="left")
        assert all(np.sum((p < a) | ((p == a) & (q < b))) == s for a, b, s in zip(ap, aq, positions))


def test_grown_without_pairs_shares_the_indices_and_appends_empty_rows():
    idx, _ = SynapseIndex.from_pairs([0, 1], [1, 0], 2, 2)
    new, old, added = idx.grown(4, 4)
    assert new.indptr.tolist() == [0, 1, 2, 2, 2] and new.indices is idx.indices and new.n_pre == 4
    assert old.tolist() == [0, 1] and added.size == 0


def test_multapses_and_self_synapses_are_detected():
    idx, _ = SynapseIndex.from_pairs([0, 0, 1], [1, 1, 1], 2, 2)
    assert idx.has_multapses() and idx.has_self_synapses()
    idx, _ = SynapseIndex.from_pairs([0, 1], [1, 1], 2, 2)  # equal neighbours across a row boundary
    assert not idx.has_multapses()


@pytest.mark.parametrize("indptr, indices, what", [
    ([0, 2], [1, 0], "sorted"),
    ([0, 1], [3], r"\[0, 3\)"),
    ([1, 1], [0], "rise"),
    ([0, 3], [0, 1], "rise"),
])
def test_a_damaged_index_is_refused(indptr, indices, what):
    with pytest.raises(ValueError, match=what):
        SynapseIndex(indptr, indices, 3)


def test_index_type_is_int32_until_counts_pass_2_31():
    assert index_dtype(10, 10, 10) == np.int32
    assert index_dtype(2**31 - 2, 5, 5) == np.int32
    assert index_dtype(2**31 - 1, 5, 5) == np.int64
    assert index_dtype(5, 2**31, 5) == np.int64
    idx = SynapseIndex([0, 1], [0], 1)
    assert idx.indices.dtype == np.int32 and not idx.indices.flags.writeable


def test_find_of_many_pairs_gives_what_a_pair_by_pair_search_gives():
    # beyond a few pairs (a pruning step) find searches all keys at once; it must answer as row by row
    rng = np.random.default_rng(4)
    post, pre = rng.integers(0, 30, 400), rng.integers(0, 20, 400)
    idx = SynapseIndex.from_pairs(post, pre, 30, 20)[0]  # with multapses: find gives the first
    q_post, q_pre = rng.integers(0, 30, 300), rng.integers(0, 20, 300)
    many = idx.find(q_post, q_pre)
    few = np.concatenate([idx.find(q_post[k:k + 10], q_pre[k:k + 10]) for k in range(0, 300, 10)])
    assert np.array_equal(many, few) and (many >= 0).any() and (many < 0).any()
    empty = SynapseIndex.from_pairs([], [], 3, 3)[0]
    assert np.array_equal(empty.find(np.zeros(100, int), np.zeros(100, int)), np.full(100, -1))
