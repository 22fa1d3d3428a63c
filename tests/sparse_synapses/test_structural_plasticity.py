"""Structural plasticity of synapses (issue 39, item 3): Prune and Grow events and their compiled triggers.

Oracles: NumPy transcriptions of the two rules on small hand-made cases (Grow's draws reproduced from the
documented order with an explicit list of candidates), the masked dense projection on the same synapses,
the per-step NumPy path, and an uninterrupted run for checkpoints. The circuit feeds one-hot inputs, so
every drive is one weight exactly (no summation order), and the Hebbian rule repeats the same expression
synapse by synapse: sparse and dense, compiled and NumPy, must agree bit for bit.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.engine import Engine
from neurosim.kernels import structural as ks


# -- the circuit shared by the path tests (one structure per storage: compiled once) ------------------
def circuit(storage, turnover=None, seed=0, steps=97):
    """x (one-hot input) -> y (identity, so y is x) -> z through V, sparse or masked, pruned and grown every 5 steps.

    ``turnover``: None, or "before"/"after": a Python trigger every 10 steps that kills the oldest unit of y
    (V's pre side) and of z (V's post side) and gives each a newborn (z's unlinked in V), added before or
    after the structural triggers (so its events come before or after theirs in the same call).
    """
    net = ns.Network(seed=seed)
    x, y = ns.Population("x", 8), ns.Population("y", 8, dynamics=ns.Linear())
    z = ns.Population("z", 5, dynamics=ns.Linear())
    V = ns.Projection("V", y, z, connectivity=ns.FixedInDegree(3), storage=storage, init=ns.Uniform(0.2, 1.0),
                      rule=ns.Hebbian(0.1, decay=0.05))
    net.add(x, y, z, ns.Projection("U", x, y, init=np.eye(8)), V)
    rng = np.random.default_rng(5)
    net.connect(ns.ArrayStream(np.eye(8)[rng.integers(0, 8, steps)]), x)
    plastic = [ns.PruneSynapses(V, 0.3, every=5), ns.GrowSynapses(V, fan_in=3, init=ns.Uniform(0.2, 0.6), every=5)]
    if turnover is None:
        net.add(*plastic)
        return net
    swap = ns.Trigger(lambda n: True, lambda n: [ns.Death(y, [y.ids[0]]), ns.Birth(y, 1), ns.Death(z, [z.ids[0]]),
                                                 ns.Birth(z, 1, unlinked=[V])], every=10, name="turnover")
    net.add(*([swap, *plastic] if turnover == "before" else [*plastic, swap]))
    return net


def state(net):
    """Everything the structural events decide, in a form comparable across storages."""
    V = net["V"]
    weights = V.weights if V.sparse else V.weights[V.mask]
    return weights.copy(), V.synapses(), net.event_log.to_dict(), net["z"].ids.copy()


def assert_same(a, b):
    assert np.array_equal(a[0], b[0])  # bit for bit
    assert all(np.array_equal(u, v) for u, v in zip(a[1], b[1]))
    assert a[2] == b[2]
    assert np.array_equal(a[3], b[3])


@pytest.mark.parametrize("turnover", [None, "before", "after"])
def test_compiled_numpy_sparse_and_masked_dense_give_the_same_bits(turnover):
    runs = {}
    for storage in ("sparse", "dense"):
        for backend in ("python", "auto"):
            net = circuit(storage, turnover)
            net.run(90, backend=backend)
            runs[storage, backend] = state(net)
    ref = runs["sparse", "auto"]
    log = ref[2]
    # the run did prune and grow, so the comparison is not of untouched projections
    assert log["kind"].count("unlink") >= 10 and log["kind"].count("link") >= 10
    for key, got in runs.items():
        assert_same(got, ref)
    if turnover == "before":
        # the deaths of the same call left their partners short: Grow refilled them at once
        assert net["V"].synapse_index.in_degree().tolist() == [3] * 5


def test_a_death_in_the_same_call_is_seen_by_prune_and_grow():
    # the structural events are resolved when their turn comes, against what the Death left
    net = circuit("sparse")
    net.run(1)
    V, y, z = net["V"], net["y"], net["z"]
    V.weights[:] = 0.1  # everything is weak
    victim = int(y.ids[0])
    grow = ns.Grow(V, fan_in=2, init=0.5)
    net.apply(ns.Death(y, [victim]), ns.Prune(V, 0.3), grow)
    log = net.event_log
    unlinked = [p for k, p in zip(log.kind, log.partner) if k == "unlink"]
    assert victim not in unlinked  # its synapses died with it, not by the Prune
    assert V.synapse_index.in_degree().tolist() == [2] * z.size
    assert victim not in V.synapses()[1]
    assert np.all(V.weights == 0.5)


def test_prune_removes_what_a_numpy_transcription_removes():
    W0 = np.array([[0.5, -0.05, 0.0, 0.2],
                   [0.09, 0.0, -0.3, 0.1],
                   [0.0, 0.0, 0.0, 0.0]])
    mask = np.array([[1, 1, 0, 1], [1, 1, 1, 1], [0, 1, 0, 0]], dtype=bool)
    theta = 0.1
    for storage in ("sparse", "dense"):
        net = ns.Network()
        x, y = ns.Population("x", 4), ns.Population("y", 3, dynamics=ns.Linear())
        W = ns.Projection("W", x, y, connectivity=ns.FromIndices(matrix=mask), init=W0, storage=storage)
        net.add(x, y, W)
        net.apply(ns.Death(y, [0]), ns.Birth(y, 1, unlinked=[W]))  # ids 1, 2, 3: ids and positions differ
        net.apply(ns.Link(W, [3, 3], [0, 2], weight=[0.05, 0.4]))
        # the transcription: every synapse (i, j) with |w| < theta, row by row, named by ids
        w = np.vstack([W0[1:], [[0.05, 0.0, 0.4, 0.0]]])
        m = np.vstack([mask[1:], [[True, False, True, False]]])
        want = [(int(y.ids[i]), int(x.ids[j])) for i in range(3) for j in range(4) if m[i, j] and abs(w[i, j]) < theta]
        n = len(net.event_log)
        net.apply(ns.Prune(W, theta))
        log = net.event_log
        got = list(zip(log.unit[n:], log.partner[n:]))
        assert log.kind[n:] == ["unlink"] * len(want) and got == want
        kept = m & ~(np.abs(w) < theta)
        assert np.array_equal(W.to_dense() != 0, kept & (w != 0))
        assert W.n_synapses == kept.sum()


def grow_by_hand(rng, rows, post_ids, pre_ids, fan_in, lateral, low, high):
    """Grow, transcribed from its documented draws with an explicit list of candidates per post unit."""
    new = []
    for i, post in enumerate(post_ids):
        have = rows[i]
        if len(have) >= fan_in:
            continue
        candidates = [j for j in pre_ids if j not in have and not (lateral and j == post)]
        need = min(fan_in - len(have), len(candidates))
        if need <= 0:
            continue
        picked = np.asarray(candidates)[rng.choice(len(candidates), size=need, replace=False)]
        new += [(int(post), int(j)) for j in sorted(picked)]
    return new, rng.uniform(low, high, size=len(new))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lateral", [False, True])
def test_grow_draws_what_a_numpy_transcription_draws(seed, lateral):
    n_pre, fan_in = 9, 4
    base = np.random.default_rng(100 + seed).random((6 if not lateral else n_pre, n_pre)) < 0.3
    for storage in ("sparse", "dense"):
        net = ns.Network(seed=seed)
        x = ns.Population("x", n_pre, dynamics=ns.Linear() if lateral else None)
        y = x if lateral else ns.Population("y", 6, dynamics=ns.Linear())
        if lateral:
            np.fill_diagonal(base, False)
        W = ns.Projection("W", x, y, connectivity=ns.FromIndices(matrix=base), storage=storage)
        net.add(*([x] if lateral else [x, y]), W)
        net.apply(ns.Death(x, [2, 5]))  # the pre side shrinks: ids and positions differ
        post_ids, pre_ids = list(y.ids), list(x.ids)
        rows = [[int(j) for j in W.synapses()[1][W.synapses()[0] == p]] for p in post_ids]
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = net.rng.bit_generator.state
        want, weights = grow_by_hand(rng, rows, post_ids, pre_ids, fan_in, lateral, 0.2, 0.6)
        n = len(net.event_log)
        net.apply(ns.Grow(W, fan_in, init=ns.Uniform(0.2, 0.6)))
        log = net.event_log
        assert log.kind[n:] == ["link"] * len(want)
        assert list(zip(log.unit[n:], log.partner[n:])) == want
        dense = W.to_dense()
        got = [dense[list(post_ids).index(p), list(pre_ids).index(j)] for p, j in want]
        assert np.array_equal(got, weights)
        assert W.synapse_index.in_degree().tolist() == [fan_in] * len(post_ids)
        assert net.rng.bit_generator.state == rng.bit_generator.state  # no other draw


def test_grow_gives_every_candidate_when_the_pre_population_shrank_below_fan_in():
    net = ns.Network()
    x, y = ns.Population("x", 5, dynamics=ns.Linear()), ns.Population("y", 2, dynamics=ns.Linear())
    W = ns.Projection("W", x, y, connectivity=ns.FixedInDegree(1))
    net.add(x, y, W)
    grow = ns.Grow(W, fan_in=4, init=1.0)
    net.apply(ns.Death(x, [0, 1, 2]), grow)
    assert W.synapse_index.in_degree().tolist() == [2, 2]
    # nothing left to grow: the condition says so, and the event makes nothing
    assert not grow.condition()()
    assert net.apply(grow).size == 0


def test_the_trigger_fires_exactly_at_the_steps_with_events(monkeypatch):
    # the compiled conditions say whether anything is due: a segment leaves compiled code only then
    fired = []
    finish = Engine._finish_triggered_step

    def counting(self, trigger):
        fired.append(self.net.t)
        return finish(self, trigger)

    monkeypatch.setattr(Engine, "_finish_triggered_step", counting)
    net = circuit("sparse")
    net.run(90)
    steps = sorted(set(net.event_log.step))
    assert len(steps) >= 5 and sorted(set(fired)) == steps


def test_checkpoint_save_run_load_run_equals_an_uninterrupted_run(tmp_path):
    whole = circuit("sparse", "before")
    whole.run(85)
    part = circuit("sparse", "before")
    part.run(43)
    path = part.save(tmp_path / "ck")
    part.run(42)
    assert_same(state(part), state(whole))
    again = circuit("sparse", "before")
    again.load(path)
    again.run(42)
    assert_same(state(again), state(whole))
    assert again.rng.bit_generator.state == whole.rng.bit_generator.state


def test_condition_kernels_against_numpy():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n_post, n_pre = rng.integers(1, 7), rng.integers(1, 7)
        mask = rng.random((n_post, n_pre)) < rng.random()
        w = np.where(mask, rng.normal(size=(n_post, n_pre)), 0.0)
        theta, k = float(rng.random()), int(rng.integers(1, 8))
        post, pre = np.nonzero(mask)
        indptr = np.r_[0, np.cumsum(mask.sum(axis=1))]
        weak = bool(np.any(np.abs(w[mask]) < theta))
        assert ks.masked_any_weak(w, mask, theta) == weak == ks.csr_any_weak(w[mask], theta)
        for exclude_self in (False, True):
            free = n_pre - mask.sum(axis=1) - exclude_self
            short = bool(np.any((mask.sum(axis=1) < k) & (free > 0)))
            assert ks.masked_fan_in_short(mask, k, exclude_self) == short
            assert ks.csr_fan_in_short(indptr, pre, np.arange(n_pre), k, exclude_self) == short
    # multapses count once among the pre units a row still lacks
    assert not ks.csr_fan_in_short(np.array([0, 3]), np.array([0, 0, 1]), np.arange(2), 4, False)
    assert ks.csr_fan_in_short(np.array([0, 3]), np.array([0, 0, 1]), np.arange(3), 4, False)


def test_bad_input_is_refused_by_name_before_anything_changes():
    net = ns.Network()
    x, y = ns.Population("x", 4), ns.Population("y", 3, dynamics=ns.Linear())
    W = ns.Projection("W", x, y, connectivity=ns.FixedInDegree(2))
    D = ns.Projection("D", x, y)  # dense, no mask
    M = ns.Projection("M", y, y, connectivity=ns.FixedInDegree(2, multapses=True))
    net.add(x, y, W, D)
    with pytest.raises(ValueError, match=r"threshold must be in \[0"):
        ns.PruneSynapses(W, -0.1)
    with pytest.raises(ValueError, match="threshold must be finite"):
        ns.Prune(W, np.nan)
    with pytest.raises(ValueError, match=r"fan_in must be in \[1, 4\].*got 5"):
        ns.GrowSynapses(W, fan_in=5)
    with pytest.raises(ValueError, match=r"fan_in must be in \[1, 2\].*itself excluded.*got 3"):
        ns.Grow(ns.Projection("L", y, y, connectivity=ns.FixedInDegree(1)), fan_in=3)
    with pytest.raises(ValueError, match="'D' is dense without a mask"):
        ns.GrowSynapses(D, fan_in=2)
    with pytest.raises(ValueError, match="'D' is dense without a mask"):
        ns.Prune(D, 0.1)
    with pytest.raises(TypeError, match="projection must be a Projection"):
        ns.PruneSynapses(W.weights, 0.1)
    with pytest.raises(ValueError, match="multapses"):
        ns.Prune(M, 0.1)
    with pytest.raises(ValueError, match="init must be finite"):
        ns.Grow(W, 2, init=np.inf)
    with pytest.raises(ValueError, match=r"weight must be one number or one per synapse \(2\)"):
        ns.Link(W, [0, 1], [3, 3], weight=[0.1, 0.2, 0.3])
    # a call with a refused event applies nothing, and Grow's draws are given back
    before = (W.weights.copy(), W.synapse_index, net.rng.bit_generator.state, len(net.event_log))
    W.weights[:] = 0.0
    with pytest.raises(ValueError, match="not alive"):
        net.apply(ns.Prune(W, 0.5), ns.Grow(W, 3, init=ns.Uniform(0.0, 1.0)), ns.Death(y, [7]))
    assert np.all(W.weights == 0.0) and W.synapse_index is before[1]
    assert net.rng.bit_generator.state == before[2] and len(net.event_log) == before[3]
    with pytest.raises(ValueError, match="'M', which is not in this network"):
        net.apply(ns.Grow(M, 1))

    class NaNs(ns.synapses.Initializer):
        def __call__(self, rng, shape):
            rng.random()  # a draw, given back with the refusal
            return np.full(shape, np.nan)

    with pytest.raises(ValueError, match="initializer NaNs must draw 3 finite weights; got NaN/Inf"):
        net.apply(ns.Grow(W, 3, init=NaNs()))
    assert W.synapse_index is before[1] and net.rng.bit_generator.state == before[2]
