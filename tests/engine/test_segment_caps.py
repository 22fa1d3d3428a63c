"""How long a compiled segment may be: the input-memory caps of ``Engine._compiled_span``.

A segment pre-draws its inputs, ``8 * batch * sum(input dims)`` bytes per step.
The engine caps a segment at ``SEGMENT_INPUT_BYTES`` of inputs, but never below
``MIN_SEGMENT`` steps (Python's share per segment must stay amortized), and
never above ``SEGMENT_INPUT_MAX_BYTES`` (a huge batch: one step may already be
an epoch). A network without inputs is capped only by ``MAX_SEGMENT``. The
lengths are worked out by hand from those rules; the numbers a run gives must
not depend on them.
"""

import numpy as np
import pytest

import neurosim as ns
import neurosim.engine as engine
from sm_helpers import make_sm, state_of

N_INPUT = 12  # make_sm's input population
BATCH = 2
PER_STEP = 8 * BATCH * N_INPUT  # bytes of input one step pre-draws


def segment_lengths(monkeypatch, net, steps, **caps):
    """The lengths of the segments ``net.run(steps)`` asks for (a firing trigger may end one sooner) with the engine's caps set to ``caps``.

    The time budget and the first-segment cap are lifted, so only the memory caps (and the recorder's
    buffer, kept larger than every cap here) bound a segment.
    """
    monkeypatch.setattr(engine, "SEGMENT_SECONDS", 1e9)
    monkeypatch.setattr(engine, "FIRST_SEGMENT", 10**9)
    for name, value in caps.items():
        monkeypatch.setattr(engine, name, value)
    calls = []
    original = engine.Engine._run_segment
    monkeypatch.setattr(engine.Engine, "_run_segment", lambda self, n: (calls.append(n), original(self, n))[1])
    net.run(steps)
    return calls


@pytest.mark.parametrize(("caps", "expected"), [
    # SEGMENT_INPUT_BYTES // PER_STEP = 20 steps, above MIN_SEGMENT = 8
    ({"SEGMENT_INPUT_BYTES": 20 * PER_STEP + PER_STEP - 1, "MIN_SEGMENT": 8}, [20, 20, 20, 10]),
    # the byte budget would allow 3 steps; MIN_SEGMENT lifts it to 16
    ({"SEGMENT_INPUT_BYTES": 3 * PER_STEP, "MIN_SEGMENT": 16}, [16, 16, 16, 16, 6]),
    # MAX_SEGMENT is below the byte budget
    ({"SEGMENT_INPUT_BYTES": 50 * PER_STEP, "MIN_SEGMENT": 8, "MAX_SEGMENT": 30}, [30, 30, 10]),
    # the hard bound cuts below MIN_SEGMENT: 5 steps of input at most
    ({"SEGMENT_INPUT_BYTES": 3 * PER_STEP, "MIN_SEGMENT": 16, "SEGMENT_INPUT_MAX_BYTES": 5 * PER_STEP + 7},
     [5] * 14),
    # the hard bound below one step still runs one step per segment, never zero
    ({"SEGMENT_INPUT_BYTES": 1, "MIN_SEGMENT": 16, "SEGMENT_INPUT_MAX_BYTES": PER_STEP // 2}, [1] * 70),
])
def test_segments_follow_the_input_memory_caps(monkeypatch, caps, expected):
    steps = sum(expected)
    ref = make_sm("XY", batch=BATCH)
    ref.run(steps)
    net = make_sm("XY", batch=BATCH)
    assert segment_lengths(monkeypatch, net, steps, **caps) == expected
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key
    assert ref.recorders["y"].to_dataset().identical(net.recorders["y"].to_dataset())


def test_a_network_without_inputs_is_capped_by_max_segment_only(monkeypatch):
    net = ns.Network(seed=0)
    net.add(ns.Population("y", 3, dynamics=ns.Jacobi(eta=0.1, max_iter=5)))
    lengths = segment_lengths(monkeypatch, net, 50, SEGMENT_INPUT_BYTES=0, SEGMENT_INPUT_MAX_BYTES=0,
                              MIN_SEGMENT=2, MAX_SEGMENT=21)
    assert lengths == [21, 21, 8]
    assert net.t == 50


@pytest.mark.parametrize(("every", "buffer", "expected"), [
    # samples at steps 3, 6, ..., 15 fill the first buffer of 5: the segment ends at step 17, before the 6th
    # sample; each later buffer takes the samples at 18..30, 33..45, ...: segments of 15 steps
    (3, 5, [17, 15, 15, 13]),
    # every step sampled, buffer of 4: one segment per buffer
    (1, 4, [4] * 9),
    # a buffer of one sample at every 7th step: the segment ends just before the next sample after that
    (7, 1, [13, 7, 7, 3]),
])
def test_segments_end_where_the_recorder_buffer_is_full(monkeypatch, every, buffer, expected):
    steps = sum(expected)
    ref = make_sm("XY")
    ref.record(ref.populations["y"], "activity", every=every, name="sparse")
    ref.run(steps)
    net = make_sm("XY")
    net.record(net.populations["y"], "activity", every=every, name="sparse", buffer=buffer)
    assert segment_lengths(monkeypatch, net, steps) == expected
    got = net.recorders["sparse"].to_dataset()
    assert got.time.values.tolist() == list(range(every, steps + 1, every))
    assert ref.recorders["sparse"].to_dataset().identical(got)
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key


@pytest.mark.parametrize(("restructure", "expected"), [
    # the lengths asked for: the trigger at step 150 ends the first 200-step segment, and the next one only
    # uses up the rows drawn for steps 151..200; at 300 the trigger ends the segment 201..400, whose last
    # 100 rows are used up next; the same at 450 in the segment 401..500
    (False, [200, 50, 200, 100, 100, 50]),
    # the network changed at step 150 (a recorder added): the kept rows are of the old version and are not
    # used, so the next segment is not cut at their end; it draws 151..350, the trigger ends it at 300, and
    # the rows kept for 301..350 (of the new version) are used up next
    (True, [200, 200, 50, 150, 50]),
])
def test_kept_inputs_bound_the_next_segment_only_while_the_network_is_unchanged(monkeypatch, restructure, expected):
    from neurosim.triggers import every_step

    def act(n):
        if restructure and "late" not in n.recorders:
            n.record(n.populations["x"], "activity", name="late")
        return []

    ref = make_sm("XY")
    ref.run(500)
    net = make_sm("XY")
    net.add(ns.Trigger(every_step(), act, every=150))
    assert segment_lengths(monkeypatch, net, 500, MAX_SEGMENT=200, MIN_SEGMENT=8) == expected
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key
    assert ref.recorders["y"].to_dataset().identical(net.recorders["y"].to_dataset())


def test_kept_inputs_bound_the_segments_of_a_trigger_firing_every_few_steps(monkeypatch):
    from neurosim.triggers import every_step

    ref = make_sm("XY")
    ref.run(240)
    net = make_sm("XY")
    net.add(ns.Trigger(every_step(), lambda n: [], every=3))
    lengths = segment_lengths(monkeypatch, net, 240, MAX_SEGMENT=200, MIN_SEGMENT=8)
    # each segment ends at the next multiple of 3 and the next uses up the rows drawn for the first: 200,
    # 197, ..., 2 up to step 200; from there the run's end bounds the draw (40 steps), then 39, 36, ..., 3
    assert lengths == list(range(200, 0, -3)) + [40] + list(range(39, 0, -3))
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key


@pytest.mark.parametrize(("batch", "dim", "expected"), [
    # 8 bytes a step: the 8 MiB budget allows 2**20 steps, MAX_SEGMENT's 65536 bounds it
    (1, 1, 65536),
    # 8 KiB a step: the 8 MiB budget gives 1024 steps, between MIN_SEGMENT (256) and MAX_SEGMENT
    (1, 1024, 1024),
    # 256 KiB a step: the budget gives 32 steps, MIN_SEGMENT lifts them to 256 (64 MiB, under 256 MiB)
    (32, 1024, 256),
    # 4 MiB a step: MIN_SEGMENT's 256 steps would hold 1 GiB; the 256 MiB hard bound cuts them to 64
    (512, 1024, 64),
])
def test_the_shipped_caps_are_the_documented_ones(batch, dim, expected):
    """docs/architecture.md's caps with the values it states: 65536 steps, ~8 MiB of inputs (at least 256 steps) and 256 MiB.

    The tests above move the caps to small values to reach every rule in a short run; this one works the
    next segment's length out by hand from the documented values, without running (no input is drawn).
    """
    net = ns.Network(seed=0, batch=batch)
    x, y = ns.Population("x", dim), ns.Population("y", 1, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, init=ns.Constant(0.0)))
    net.connect(ns.ArrayStream(np.zeros((batch, dim))), x)
    eng = engine.Engine(net)
    eng._seconds_per_step = 1e-15  # a step cost measured as free: the time budget does not bind
    assert eng._compiled_span(10**9) == expected
