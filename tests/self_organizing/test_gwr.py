"""Grow When Required on the engine against an independent transcription of Marsland et al. (2002), step by step."""

import numpy as np
import pytest
from reference_gas import GWRReference
from test_gng import _edges, _moving, _ref_events, _step_events, _symmetric, _winners

import neurosim as ns
from neurosim.kernels.competitive import habituated
from neurosim.models.self_organizing import build_gwr

#: slow tier: the whole GWR circuit against a transcription, on every path (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

#: a small a_max: edges and units die in a short run
FAST = dict(a_T=0.9, a_max=3)


def _compare(c, ref, t):
    ids = c.map.ids.tolist()
    assert ids == sorted(ref.w), f"step {t}: units"
    np.testing.assert_allclose(c.weights, np.array([ref.w[u] for u in ids]), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c.map.state["firing"], [ref.h[u] for u in ids], rtol=1e-12)
    assert c.edge_list() == _edges(ref), f"step {t}: edges"
    _symmetric(c, t)
    assert _step_events(c.network.event_log, t) == _ref_events(ref, t), f"step {t}: events"


@pytest.mark.parametrize("path", ["compiled", "per_step", "python"])
def test_matches_the_transcription_at_every_step(path):
    X = _moving()
    c = build_gwr(ns.ArrayStream(X), **FAST)
    ref = GWRReference(c.weights, **FAST)
    if path == "per_step":
        c.network.add_callback(lambda n: None)
    backend = "python" if path == "python" else "auto"
    for t in range(1, len(X) + 1):
        s = _winners(ref, X[t - 1])
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
        # [inputs seen, s, t, structure due, insert, a_max at the last structural step], exactly: due exactly when
        # the transcription logged an event, insert exactly when it logged a birth
        now = [k for step, k, *_ in ref.events if step == t]
        expected = [t, *s, float(bool(now)), float("birth" in now), float(ref.a_max) if ref.events else 0.0]
        assert c.rule._state.tolist() == expected, f"step {t}: state"
        assert c.rule.inputs_seen == t
    kinds = c.network.event_log.kind
    assert kinds.count("birth") > 50 and kinds.count("death") >= 5  # grew, and units died in the old region


# a compiled run stays compiled: a rule falling back to NumPy every step would warn PerStepWarning
@pytest.mark.filterwarnings("error::neurosim.PerStepWarning")
def test_a_long_compiled_run_with_the_default_parameters_and_a_cap():
    X = _moving(3000, seed=2)
    c = build_gwr(ns.ArrayStream(X), max_units=40)
    ref = GWRReference(c.weights, max_units=40)
    c.run(len(X))
    for x in X:
        ref.step(x)
    _compare(c, ref, len(X))
    assert c.map.size == 40  # the cap was reached
    rows = sorted((s, k, min(u, v) if v >= 0 else u, max(u, v) if v >= 0 else -1) for s, k, u, v in
                  zip(*(getattr(c.network.event_log, f) for f in ("step", "kind", "unit", "partner"))))
    assert rows == sorted((s, k, min(a, b) if b >= 0 else a, max(a, b) if b >= 0 else -1) for s, k, a, b in ref.events)


def test_habituation_is_eq3_in_closed_form():
    # h(k) = h0 - S/alpha (1 - exp(-alpha k / tau)), h0 = S = 1, after k firings
    h = 1.0
    for k in range(1, 40):
        h = habituated(h, 1.05, 3.33)
        assert h == pytest.approx(1 - (1 - np.exp(-1.05 * k / 3.33)) / 1.05, rel=1e-12)
    assert h < 0.1  # a unit that fired often enough can give birth (h_T = 0.1)


def test_one_insertion_by_hand():
    # s = unit 0 has fired enough (firing 0.05 < h_T) and the input is far (activity e^-1 < a_T): r is born halfway
    w0 = np.array([[0.0, 0.0], [3.0, 0.0]])
    c = build_gwr(ns.ArrayStream(np.array([[0.0, 1.0]])), init=w0)
    c.map.state["firing"][0] = 0.05
    c.run(1)
    assert c.map.ids.tolist() == [0, 1, 2]
    np.testing.assert_allclose(c.weights, [[0.0, 0.0], [3.0, 0.0], [0.0, 0.5]], rtol=1e-15)  # no adaptation
    assert c.edge_list() == [(0, 2, 1.0), (1, 2, 0.0)]  # r - s aged with s's edges; s - t linked then unlinked
    np.testing.assert_allclose(c.map.state["firing"], [habituated(0.05, 1.05, 3.33), 1.0,
                                                       habituated(1.0, 1.05, 14.3)], rtol=1e-15)
    log = c.network.event_log
    assert sorted(zip(log.kind, log.unit, log.partner)) == [("birth", 2, -1), ("link", 0, 1), ("link", 2, 0),
                                                            ("link", 2, 1), ("unlink", 0, 1)]


def test_checkpoint_mid_growth_equals_an_uninterrupted_run(tmp_path):
    X = _moving()
    whole = build_gwr(ns.ArrayStream(X), **FAST)
    whole.run(len(X))
    first = build_gwr(ns.ArrayStream(X), **FAST)
    first.run(333)
    path = first.network.save(tmp_path / "gwr")
    second = build_gwr(ns.ArrayStream(X), **FAST)
    second.network.load(path)
    second.run(len(X) - 333)
    np.testing.assert_array_equal(second.map.ids, whole.map.ids)
    np.testing.assert_array_equal(second.weights, whole.weights)
    np.testing.assert_array_equal(second.map.state["firing"], whole.map.state["firing"])
    assert second.edge_list() == whole.edge_list()
    assert second.network.event_log.to_dict() == whole.network.event_log.to_dict()


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_lowering_a_max_mid_run_removes_every_old_edge_at_the_next_input(backend):
    X = _moving()
    params = {**FAST, "a_max": 30}
    c = build_gwr(ns.ArrayStream(X), **params)
    ref = GWRReference(c.weights, **params)
    c.run(250, backend=backend)
    for x in X[:250]:
        ref.step(x)
    c.rule.a_max = ref.a_max = 2
    winner = min(ref.w, key=lambda u: (float(np.sum((X[250] - ref.w[u]) ** 2)), u))
    for t in range(251, 300):
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
    log = c.network.event_log
    cut = [(u, v) for s, k, u, v in zip(log.step, log.kind, log.unit, log.partner) if s == 251 and k == "unlink"]
    assert any(winner not in pair for pair in cut)  # edges away from the winner went too, at once


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_a_cap_stops_insertions_on_both_paths_as_in_the_transcription(backend):
    X = _moving(300)
    c = build_gwr(ns.ArrayStream(X), max_units=10, **FAST)
    ref = GWRReference(c.weights, max_units=10, **FAST)
    full = 0
    for t in range(1, len(X) + 1):
        s = _winners(ref, X[t - 1])
        full += len(ref.w) == 10
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
        now = [k for step, k, *_ in ref.events if step == t]
        expected = [t, *s, float(bool(now)), float("birth" in now), float(ref.a_max) if ref.events else 0.0]
        assert c.rule._state.tolist() == expected, f"step {t}: state"
    assert full > 50  # the cap held for many inputs (where the uncapped network would have grown)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_a_lowered_a_max_alone_makes_the_structure_due(backend):
    # an input whose winners are linked, that inserts nothing and leaves the winner's edges at most A old: only
    # the lowering of a_max to A can call the structural step that removes the older edges elsewhere
    X = _moving()
    params = {**FAST, "a_max": 30}
    c = build_gwr(ns.ArrayStream(X), **params)
    ref = GWRReference(c.weights, **params)
    for t in range(1, len(X) + 1):
        ids = sorted(ref.w)
        s, u = (ids[k] for k in _winners(ref, X[t - 1]))
        d2 = float(np.sum((X[t - 1] - ref.w[s]) ** 2))
        inserts = np.exp(-np.sqrt(d2)) < ref.a_T and ref.h[s] < ref.h_T
        A = max([a + 1 for e, a in ref.edges.items() if s in e and e != frozenset((s, u))], default=1)
        if (t >= 200 and frozenset((s, u)) in ref.edges and not inserts
                and any(a > A for e, a in ref.edges.items() if s not in e)):
            break
        ref.step(X[t - 1])
    c.run(t - 1, backend=backend)
    _compare(c, ref, t - 1)
    c.rule.a_max = ref.a_max = A
    c.run(1, backend=backend)
    ref.step(X[t - 1])
    _compare(c, ref, t)
    assert c.rule._state[3] == 1.0 and c.rule._state[4] == 0.0
    assert "unlink" in [k for step, k, *_ in ref.events if step == t]


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_the_smallest_a_max_keeps_the_newborns_edges_as_in_the_transcription(backend):
    # a_max = 1, the floor: the newborn's edge to s has age 1, exactly a_max, and must stay (and keep s alive)
    # while s's other edges, older, go
    X = _moving(300)
    params = dict(a_T=0.9, a_max=1.0)
    c = build_gwr(ns.ArrayStream(X), **params)
    ref = GWRReference(c.weights, **params)
    for t in range(1, len(X) + 1):
        c.run(1, backend=backend)
        ref.step(X[t - 1])
        _compare(c, ref, t)
    kinds = c.network.event_log.kind
    assert kinds.count("birth") > 20 and kinds.count("death") > 5 and c.map.size >= 2
    assert any(a == 1.0 for *_, a in c.edge_list())
