"""Growing Neural Gas on the engine against an independent transcription of Fritzke (1995), step by step.

At every input the engine's units (stable ids), prototypes, errors, edges with
their ages and the events of the step (units born and killed, edges linked and
unlinked, from ``network.event_log``) must be the transcription's, on the
compiled path, the per-step kernel path and the NumPy path.
"""

import numpy as np
import pytest
from reference_gas import GNGReference

import neurosim as ns
from neurosim.models.self_organizing import build_gng

#: slow tier: the whole GNG circuit against a transcription, on every path (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

#: small lam and a_max: many insertions, edge removals and deaths in a short test
FAST = dict(lam=10, a_max=2, eps_b=0.2, eps_n=0.01, alpha=0.5, d=0.99)


def _moving(n=600, seed=0):
    """Points on a ring whose centre jumps halfway: units in the old region lose their edges and die."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[np.cos(a), np.sin(a)] * rng.uniform(0.6, 1.0, n)[:, None]
    X[n // 2:] += 4.0
    return X


def _edges(ref):
    return sorted((min(e), max(e), float(a)) for e, a in ref.edges.items())


def _step_events(log, t):
    rows = [(k, u, v) for s, k, u, v in zip(log.step, log.kind, log.unit, log.partner) if s == t]
    return sorted((k, min(u, v) if v >= 0 else u, max(u, v) if v >= 0 else -1) for k, u, v in rows)


def _ref_events(ref, t):
    return sorted((k, min(a, b) if b >= 0 else a, max(a, b) if b >= 0 else -1) for s, k, a, b in ref.events if s == t)


def _symmetric(c, t):
    # an edge is a synapse in both directions with one age: edge_list reads the synapses i <- j with i < j only, so
    # a link, unlink or ageing applied to one direction would hide there
    index, age = c.edges.synapse_index, c.edges.arrays["age"]
    post, pre = index.pairs()
    back = index.find(pre, post)
    assert np.all(back >= 0), f"step {t}: edges not symmetric"
    np.testing.assert_array_equal(age[back], age, err_msg=f"step {t}: ages")
    # the edges' weights are 1 on every edge (what build_gng's recording of edges.weights shows), also on the
    # edges a unit is born with
    np.testing.assert_array_equal(c.edges.weights, np.ones(index.size), err_msg=f"step {t}: edge weights")


def _compare(c, ref, t):
    ids = c.map.ids.tolist()
    assert ids == sorted(ref.w), f"step {t}: units"
    np.testing.assert_allclose(c.weights, np.array([ref.w[u] for u in ids]), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c.errors(), [ref.error[u] for u in ids], rtol=1e-12, atol=1e-15)
    assert c.edge_list() == _edges(ref), f"step {t}: edges"
    _symmetric(c, t)
    assert _step_events(c.network.event_log, t) == _ref_events(ref, t), f"step {t}: events"


def _winners(ref, x):
    """The columns (positions among the sorted ids) of the two units nearest ``x`` in the transcription, ties low."""
    ids = sorted(ref.w)
    order = sorted(range(len(ids)), key=lambda k: (float(np.sum((x - ref.w[ids[k]]) ** 2)), ids[k]))
    return order[:2]


def _compare_state(c, ref, t, winners):
    # the rule's state vector [inputs seen, s1, s2, structure due, a_max at the last structural step], exactly:
    # the structure is due exactly when the transcription logged an event (no new edge, no old edge, no insertion
    # means no event, and a_max is not lowered here); a_max is recorded by the first structural step
    expected = [t, *winners, float(any(s == t for s, *_ in ref.events)), float(ref.a_max) if ref.events else 0.0]
    assert c.rule._state.tolist() == expected, f"step {t}: state"
    assert c.rule.inputs_seen == t


@pytest.mark.parametrize("path", ["compiled", "per_step", "python"])
def test_matches_the_transcription_at_every_step(path):
    X = _moving()
    c = build_gng(ns.ArrayStream(X), **FAST)
    ref = GNGReference(c.weights, **FAST)
    if path == "per_step":
        c.network.add_callback(lambda n: None)
    backend = "python" if path == "python" else "auto"
    for t in range(1, len(X) + 1):
        s = _winners(ref, X[t - 1])
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
        _compare_state(c, ref, t, s)
    kinds = c.network.event_log.kind
    assert kinds.count("birth") == len(X) // FAST["lam"]
    assert kinds.count("death") >= 2 and kinds.count("unlink") > 50  # the structure did change both ways


# a compiled run stays compiled: a rule falling back to NumPy every step would warn PerStepWarning
@pytest.mark.filterwarnings("error::neurosim.PerStepWarning")
def test_a_long_compiled_run_matches_the_transcription_with_the_papers_parameters():
    # one run() over many steps: segments end at every structural step and resume
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (3000, 2))
    c = build_gng(ns.ArrayStream(X))
    ref = GNGReference(c.weights)
    c.run(len(X))
    for x in X:
        ref.step(x)
    _compare(c, ref, len(X))
    assert c.map.size == 2 + len(X) // 100
    log = c.network.event_log
    ref_rows = sorted((s, k, min(a, b) if b >= 0 else a, max(a, b) if b >= 0 else -1) for s, k, a, b in ref.events)
    rows = sorted((s, k, min(u, v) if v >= 0 else u, max(u, v) if v >= 0 else -1)
                  for s, k, u, v in zip(log.step, log.kind, log.unit, log.partner))
    assert rows == ref_rows


def test_checkpoint_mid_growth_equals_an_uninterrupted_run(tmp_path):
    X = _moving()
    whole = build_gng(ns.ArrayStream(X), **FAST)
    whole.run(len(X))
    first = build_gng(ns.ArrayStream(X), **FAST)
    first.run(377)
    path = first.network.save(tmp_path / "gng")
    second = build_gng(ns.ArrayStream(X), **FAST)
    second.network.load(path)
    assert second.map.ids.tolist() == first.map.ids.tolist() and second.edge_list() == first.edge_list()
    second.run(len(X) - 377)
    np.testing.assert_array_equal(second.map.ids, whole.map.ids)
    np.testing.assert_array_equal(second.weights, whole.weights)
    np.testing.assert_array_equal(second.map.state["error"], whole.map.state["error"])
    assert second.edge_list() == whole.edge_list()
    assert second.network.event_log.to_dict() == whole.network.event_log.to_dict()


@pytest.mark.parametrize("path", ["compiled", "per_step"])
def test_a_failed_structural_step_is_undone_and_the_run_continues_as_if_uninterrupted(path):
    # the engine keeps a copy of the state and the event log's length at every segment a trigger may end, and at
    # every guarded step: a failure at a structural step (t = 300, an insertion) leaves the network at t = 299 with
    # the log of 299 steps (the rows the step appended dropped), and the run continues as if uninterrupted
    X = _moving()
    whole = build_gng(ns.ArrayStream(X), **FAST)
    whole.run(len(X))
    c = build_gng(ns.ArrayStream(X), **FAST)
    boom = [True]

    def fail(net):
        if net.t == 300 and boom:
            boom.clear()
            raise RuntimeError("user error")

    if path == "compiled":  # a second compiled trigger, firing with the rule's, whose action fails
        c.network.add(ns.Trigger(c.rule.trigger().condition, fail, name="flaky"))
    else:  # a callback after the events were applied: their log rows and arrays must be undone too
        c.network.add_callback(fail, phase="events", when="after")
    with pytest.raises(RuntimeError, match="user error"):
        c.run(len(X))
    log = c.network.event_log
    assert c.network.t == 299 and c.rule.inputs_seen == 299 and max(log.step) < 300
    assert log.to_dict() == {k: [v for v, t in zip(rows, log.step) if t < 300]
                             for k, rows in whole.network.event_log.to_dict().items()}
    c.run(len(X) - 299)
    np.testing.assert_array_equal(c.map.ids, whole.map.ids)
    np.testing.assert_array_equal(c.weights, whole.weights)
    np.testing.assert_array_equal(c.map.state["error"], whole.map.state["error"])
    assert c.edge_list() == whole.edge_list()
    assert c.network.event_log.to_dict() == whole.network.event_log.to_dict()


def test_memory_grows_with_units_and_edges_not_units_squared():
    # 2,000 units on a ring of edges (2,000 edges, 4,000 synapses): every array the network and the engine's
    # snapshot hold is O(units + edges); dense edge arrays alone would be 3 x 8 x 2000^2 bytes = 96 MB
    X = _moving()
    c = build_gng(ns.ArrayStream(X), lam=10**6)
    net, n = c.network, 2000
    net.apply(ns.Birth(c.map, n - 2, unlinked=[c.edges]))
    ring = np.arange(n)
    net.apply(ns.Link(c.edges, ring, np.roll(ring, 1), symmetric=True, values={"age": 0.0}))
    c.run(20)
    assert c.map.size == n and c.edges.sparse and n <= len(c.edge_list()) < n + 20
    held = sum(a.nbytes for p in net.populations.values() for a in p.state.values())
    held += sum(p.weights.nbytes + sum(a.nbytes for a in p.arrays.values()) for p in net.projections.values())
    held += c.edges.synapse_index.nbytes()
    from neurosim.engine import _Snapshot

    snap = _Snapshot(net)  # what the engine copies at every segment a trigger may end, for an undo
    kept = sum(ids.nbytes + sum(a.nbytes for a in state.values()) for ids, _, state, _ in snap.pops.values())
    kept += sum(w.nbytes + (m.nbytes if isinstance(m, np.ndarray) else 0) + sum(a.nbytes for a in arrays.values())
                for w, m, arrays in snap.projs.values())
    # per unit: prototype (2 x 8), activity, distance, error (8 each), id; per synapse: weight, age (8), index (4)
    assert held <= 64 * n + 24 * 2 * n + 8 * (n + 1), held
    assert kept <= held


def test_recordings_carry_unit_and_edge_events_with_stable_ids():
    X = _moving()
    c = build_gng(ns.ArrayStream(X), record_every=50, **FAST)
    c.run(len(X))
    ds = c.network.recorders[next(iter(c.network.recorders))].to_dataset()
    kinds = ds["event_kind"].values.astype(str)
    assert set(kinds) == {"birth", "death", "link", "unlink"}
    partner = ds["event_partner"].values
    assert np.all(partner[np.isin(kinds, ["birth", "death"])] == -1)
    assert np.all(partner[np.isin(kinds, ["link", "unlink"])] >= 0)
    born = ds["event_unit"].values[kinds == "birth"]
    assert born.tolist() == list(range(2, 2 + len(X) // FAST["lam"]))  # ids count up, never reused


def test_one_input_by_hand():
    # two units, no edge: the first input moves the winner by eps_b, links the two, and nothing else changes
    w0 = np.array([[0.0, 0.0], [1.0, 0.0]])
    c = build_gng(ns.ArrayStream(np.array([[0.5, 0.5]])), init=w0, eps_b=0.2)
    c.run(1)
    np.testing.assert_allclose(c.weights, [[0.1, 0.1], [1.0, 0.0]], rtol=1e-15)
    assert c.edge_list() == [(0, 1, 0.0)]
    np.testing.assert_allclose(c.errors(), [0.5 * 0.995, 0.0], rtol=1e-15)
    assert list(zip(c.network.event_log.kind, c.network.event_log.unit, c.network.event_log.partner)) == [
        ("link", 0, 1)]
    c.run(1)  # the same input again: the edge exists (age reset), the neighbour moves by eps_n
    np.testing.assert_allclose(c.weights[1], [1.0 + 0.006 * (0.5 - 1.0), 0.006 * 0.5], rtol=1e-15)
    assert c.edge_list() == [(0, 1, 0.0)] and len(c.network.event_log) == 1


def test_same_network_as_minigng_from_the_same_start_and_input_order(monkeypatch):
    # minigng (MiniGNG) implements the same steps; with its shuffling off and its two starting samples given,
    # it sees our input order and must end with our units, prototypes and edges
    minigng = pytest.importorskip("minigng")
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 2 * np.pi, 500)
    X = np.c_[np.cos(a), np.sin(a)] * rng.uniform(0.7, 1.0, 500)[:, None]
    start = np.array([17, 301])
    monkeypatch.setattr(np.random, "choice", lambda *args, **kw: start)  # minigng's draw of its two first units
    theirs = minigng.MiniGNG(shuffle=False, max_units=15)
    theirs.init_model(X)
    # minigng links its two first units; Fritzke starts without edges (C = {}), as we do: unlink them
    for u in theirs.units:
        u.neighbors.clear()
    theirs.edges = []
    for _ in range(4):
        theirs.partial_fit(X)  # one epoch in order (shuffle=False)
    ours = build_gng(ns.ArrayStream(X), init=X[start], max_units=15)
    ours.run(4 * len(X))
    P = np.array([u.prototype for u in theirs.units])  # in order of insertion, as our ids
    assert ours.map.size == len(theirs.units) == 15  # the cap stops insertions
    np.testing.assert_allclose(ours.weights, P, rtol=1e-12, atol=1e-15)
    index = {id(u): k for k, u in enumerate(theirs.units)}
    edges = sorted(tuple(sorted((index[id(e.source)], index[id(e.target)]))) + (float(e.age),) for e in theirs.edges)
    ids = {int(u): k for k, u in enumerate(ours.map.ids)}
    assert sorted((ids[a], ids[b], age) for a, b, age in ours.edge_list()) == edges
    np.testing.assert_allclose(ours.errors(), [u.error for u in theirs.units], rtol=1e-12)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_lowering_a_max_mid_run_removes_every_old_edge_at_the_next_input(backend):
    # a live parameter: the next input removes every edge older than the new a_max (not only the winner's)
    X = _moving()
    params = {**FAST, "a_max": 30}
    c = build_gng(ns.ArrayStream(X), **params)
    ref = GNGReference(c.weights, **params)
    c.run(250, backend=backend)
    for x in X[:250]:
        ref.step(x)
    c.rule.a_max = ref.a_max = 3
    winner = min(ref.w, key=lambda u: (float(np.sum((X[250] - ref.w[u]) ** 2)), u))
    for t in range(251, 300):
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
    log = c.network.event_log
    cut = [(u, v) for s, k, u, v in zip(log.step, log.kind, log.unit, log.partner) if s == 251 and k == "unlink"]
    assert any(winner not in pair for pair in cut)  # edges away from the winner went too, at once


def test_a_streamed_recording_carries_the_edge_events_with_their_partners(tmp_path):
    pytest.importorskip("zarr")
    X = _moving()[:120]  # every birth flushes the store (a zarr commit): a few of them
    c = build_gng(ns.ArrayStream(X), **FAST)
    c.network.record(c.prototypes, "weights", every=50, store=tmp_path / "W.zarr")
    c.run(len(X))
    ds = c.network.recorders[next(iter(c.network.recorders))].to_dataset()
    log = c.network.event_log
    assert ds["event_kind"].values.astype(str).tolist() == log.kind
    np.testing.assert_array_equal(ds["event_unit"].values, log.unit)
    np.testing.assert_array_equal(ds["event_partner"].values, log.partner)
    assert {"link", "unlink", "birth"} <= set(log.kind)


def test_ties_go_to_the_lowest_column_in_every_kernel_and_on_the_numpy_path():
    # the paper leaves ties open; ours go to the lowest column, and exact ties never happen on random data, so by hand
    from neurosim.kernels.competitive import _two_nearest, best_matching_unit, neural_gas_update

    for dist, expected in [([1.0, 0.0, 0.0, 0.0], (1, 2)), ([0.0, 0.0, 1.0], (0, 1)), ([2.0, 1.0, 1.0], (1, 2)),
                           ([1.0, 1.0, 1.0], (0, 1)), ([3.0, 2.0, 1.0], (2, 1)), ([5.0], (0, -1)), ([], (-1, -1))]:
        assert tuple(_two_nearest(np.array(dist))) == expected, dist
    # three prototypes at the same distance 1 from the input, one farther: the first of the three wins
    w = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 0.0], [-1.0, 0.0]])
    x = np.zeros((1, 2))
    act, dist = np.full((1, 4), 7.0), np.zeros((1, 4))
    assert best_matching_unit(act, dist, x, w) is True  # as its docstring says
    assert act.tolist() == [[0.0, 1.0, 0.0, 0.0]] and dist.tolist() == [[4.0, 1.0, 1.0, 1.0]]
    rank, w2 = np.zeros(4), w.copy()
    neural_gas_update(w2, dist, x, rank, 0.5, 1.0)
    assert rank.tolist() == [3.0, 0.0, 1.0, 2.0]
    # numba's exp and NumPy's may differ in the last bit (seen on the oldest pins): a bound well above rounding
    np.testing.assert_allclose(w2, w - (0.5 * np.exp(-rank))[:, None] * w, rtol=1e-12, atol=0)
    # both GNG paths: an input halfway between the two units picks column 0 as s1, column 1 as s2
    for backend in ("auto", "python"):
        c = build_gng(ns.ArrayStream(np.array([[1.0, 0.0]])), init=np.array([[0.0, 0.0], [2.0, 0.0]]))
        c.run(1, backend=backend)
        assert c.rule._state[:3].tolist() == [1.0, 0.0, 1.0], backend
        np.testing.assert_allclose(c.weights, [[0.2, 0.0], [2.0, 0.0]], rtol=1e-15)


@pytest.mark.parametrize("backend", ["auto", "python"])
@pytest.mark.parametrize("cap", [4, 6])
def test_a_cap_stops_insertions_on_both_paths_as_in_the_transcription(backend, cap):
    # with max_units reached, every lam-th input inserts nothing and the structure is not due for it -- unless a
    # unit dies in that step, which frees a place for the insertion (cap 4: it happens once)
    X = _moving(300)
    c = build_gng(ns.ArrayStream(X), max_units=cap, **FAST)
    ref = GNGReference(c.weights, max_units=cap, **FAST)
    freed = 0
    for t in range(1, len(X) + 1):
        s = _winners(ref, X[t - 1])
        full = len(ref.w) == cap
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
        _compare_state(c, ref, t, s)
        now = [k for step, k, *_ in ref.events if step == t]
        freed += full and "death" in now and "birth" in now
    births = c.network.event_log.kind.count("birth")
    assert births < len(X) // FAST["lam"] and c.map.size <= cap  # some insertions were skipped
    assert freed == (cap == 4)


def _quiet_lowering_step(ref, X, start, lam):
    """First input ``t >= start`` at which only a lowered a_max makes the structure due, and that a_max.

    At ``t`` (before its step): the two winners are linked, ``t`` is no insertion step, the winner's other edges
    will be at most ``A`` old after ageing and some edge elsewhere is older than ``A``; ``ref`` is left at ``t - 1``.
    """
    for t in range(1, len(X) + 1):
        ids = sorted(ref.w)
        s1, s2 = (ids[k] for k in _winners(ref, X[t - 1]))
        mine = [a + 1 for e, a in ref.edges.items() if s1 in e and e != frozenset((s1, s2))]
        A = max(mine, default=0)
        if (t >= start and frozenset((s1, s2)) in ref.edges and t % lam and A >= 1
                and any(a > A for e, a in ref.edges.items() if s1 not in e)):
            return t, A
        ref.step(X[t - 1])
    raise AssertionError("no such input")


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_a_lowered_a_max_alone_makes_the_structure_due(backend):
    # the winner's own edges stay young enough: only the lowering can call the structural step that removes the
    # edges elsewhere
    X = _moving()
    params = {**FAST, "a_max": 30}
    c = build_gng(ns.ArrayStream(X), **params)
    ref = GNGReference(c.weights, **params)
    t, A = _quiet_lowering_step(ref, X, 200, FAST["lam"])
    c.run(t - 1, backend=backend)
    _compare(c, ref, t - 1)
    c.rule.a_max = ref.a_max = A
    s = _winners(ref, X[t - 1])
    c.run(1, backend=backend)
    ref.step(X[t - 1])
    _compare(c, ref, t)
    _compare_state(c, ref, t, s)
    assert c.rule._state[3] == 1.0 and "unlink" in [k for step, k, *_ in ref.events if step == t]


def test_the_edge_view_reads_the_staged_changes_over_the_arrays():
    # the structural steps stage links and unlinks before the events apply them; every query sees them
    from neurosim.rules.competitive import _EdgeView
    from neurosim.synapse_index import SynapseIndex

    edges = [(0, 1, 5.0), (1, 2, 1.0), (2, 3, 7.0)]
    post = [i for i, j, _ in edges] + [j for i, j, _ in edges]
    pre = [j for i, j, _ in edges] + [i for i, j, _ in edges]
    index, order = SynapseIndex.from_pairs(post, pre, 4, 4)
    age = np.array([a for *_, a in edges] * 2)[order]
    kept = age.copy()
    v = _EdgeView(index, age)
    assert v.old(None, 4.0).tolist() == [[0, 1], [2, 3]] and v.old(range(4), 4.0).tolist() == [[0, 1], [2, 3]]
    assert v.old([0], 4.0).tolist() == [[0, 1]] and v.old([1], 5.0).tolist() == [] and v.old([], 0.0).shape == (0, 2)
    v.set(3, 2, False)  # unlinked: no longer old, nor linked, in either order
    v.set(3, 0, True, 9.0)  # linked and old
    v.set(1, 3, True)  # linked, young
    assert v.changes == {(2, 3): (False, 0.0), (0, 3): (True, 9.0), (1, 3): (True, 0.0)}
    assert not v.linked(2, 3) and not v.linked(3, 2) and v.linked(0, 3) and v.linked(3, 1) and v.linked(1, 0)
    assert not v.linked(0, 2)
    assert v.neighbours(3).tolist() == [0, 1] and v.neighbours(2).tolist() == [1]
    assert v.neighbours(0).tolist() == [1, 3]
    assert v.old(None, 4.0).tolist() == [[0, 1], [0, 3]] and v.old(range(4), 4.0).tolist() == [[0, 1], [0, 3]]
    assert v.old([3], 4.0).tolist() == [[0, 3]] and v.old([2], 4.0).tolist() == []
    assert v.old([0], 9.0).tolist() == []  # the bound itself is not too old
    assert index.find([2, 0], [3, 3]).tolist()[1] == -1 and np.array_equal(age, kept)  # the arrays are left alone