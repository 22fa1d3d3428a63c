"""The compiled segments, the per-step kernel path and the NumPy reference agree."""

import numpy as np
import pytest

from sm_helpers import make_sm, state_of


@pytest.mark.parametrize("regularizer", ["TY", "XY", "YY"])
@pytest.mark.parametrize("batch", [1, 3])
def test_compiled_matches_numpy_reference(regularizer, batch):
    a = make_sm(regularizer, batch=batch)
    b = make_sm(regularizer, batch=batch)
    a.run(300, backend="compiled")
    b.run(300, backend="python")
    sa, sb = state_of(a), state_of(b)
    for key in sa:
        np.testing.assert_allclose(sa[key], sb[key], rtol=1e-9, atol=1e-12, err_msg=key)
    ra = a.recorders["y"].to_dataset()
    rb = b.recorders["y"].to_dataset()
    np.testing.assert_allclose(ra.activity.values, rb.activity.values, rtol=1e-9, atol=1e-12)


def test_segments_are_bit_identical_to_per_step_kernels():
    seg = make_sm("YY")
    seg.run(257)
    per = make_sm("YY")
    # a callback due every step forces the per-step path, which calls the same kernels one at a time
    per.add_callback(lambda net: None, phase="dynamics", when="after", every=1)
    per.run(257)
    for key, value in state_of(seg).items():
        assert np.array_equal(value, state_of(per)[key]), key
    assert seg.recorders["y"].to_dataset().identical(per.recorders["y"].to_dataset())


def test_cutting_a_run_into_pieces_changes_nothing():
    whole = make_sm("XY", every=3)
    whole.run(400)
    pieces = make_sm("XY", every=3)
    for n in (1, 2, 97, 100, 200):
        pieces.run(n)
    assert pieces.t == whole.t == 400
    for key, value in state_of(whole).items():
        assert np.array_equal(value, state_of(pieces)[key]), key
    assert whole.recorders["y"].to_dataset().identical(pieces.recorders["y"].to_dataset())


def test_small_record_buffers_split_segments_without_changing_numbers(monkeypatch):
    import neurosim.recording as recording

    ref = make_sm("TY")
    ref.run(300)
    monkeypatch.setattr(recording, "_BUFFER_BYTES", 200)  # a few samples per buffer: many segments
    small = make_sm("TY")
    small.run(300)
    assert small.recorders["y"].to_dataset().identical(ref.recorders["y"].to_dataset())
    assert len(small.recorders["y"]._chunks) > 10


def test_same_seed_is_bit_identical_and_other_seed_differs():
    a, b, c = make_sm(seed=3), make_sm(seed=3), make_sm(seed=4)
    for net in (a, b, c):
        net.run(50)
    assert np.array_equal(a.projections["W"].weights, b.projections["W"].weights)
    assert not np.allclose(a.projections["W"].weights, c.projections["W"].weights)


def test_phase_order_and_callbacks():
    net = make_sm("XY")
    seen = []
    for phase in ("input", "dynamics", "plasticity", "events", "record"):
        for when in ("before", "after"):
            net.add_callback(lambda n, p=phase, w=when: seen.append((n.t, p, w)), phase=phase, when=when, every=5)
    net.run(10)
    order = [(p, w) for (t, p, w) in seen if t == 5]
    assert order == [(p, w) for p in ("input", "dynamics", "plasticity", "events", "record") for w in ("before", "after")]
    assert sorted({t for t, _, _ in seen}) == [5, 10]


def test_callback_sees_this_steps_input_before_dynamics():
    net = make_sm("XY")
    got = {}

    def grab(n):
        got[n.t] = (n.populations["x"].activity.copy(), n.populations["y"].activity.copy())

    net.add_callback(grab, phase="dynamics", when="before", every=7)
    net.run(7)
    stream = net.inputs[0].stream
    assert np.array_equal(got[7][0], stream.block(6, 1)[0])


def test_segments_follow_the_time_budget_without_changing_numbers(monkeypatch):
    import neurosim.engine as engine

    ref = make_sm("XY")
    ref.run(300)
    calls = []
    original = engine.Engine._run_segment
    monkeypatch.setattr(engine.Engine, "_run_segment", lambda self, n: (calls.append(n), original(self, n))[1])
    monkeypatch.setattr(engine, "SEGMENT_SECONDS", 1e-12)  # every measured segment asks for one step
    net = make_sm("XY")
    net.run(300)
    assert calls[0] == engine.FIRST_SEGMENT  # unknown step cost: a short first segment
    assert max(calls[2:]) == 1 and len(calls) > 100
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key
    assert ref.recorders["y"].to_dataset().identical(net.recorders["y"].to_dataset())


@pytest.mark.slow
def test_ctrl_c_stops_at_a_consistent_step_and_the_run_can_continue():
    import os
    import signal

    ref = make_sm("XY")
    ref.run(120)
    net = make_sm("XY")
    net.add_callback(lambda n: os.kill(os.getpid(), signal.SIGINT), phase="dynamics", when="before", every=50)
    with pytest.raises(KeyboardInterrupt, match="after step 50"):
        net.run(120)
    assert net.t == 50
    assert net.recorders["y"].to_dataset().time.values.tolist() == list(range(1, 51))
    net.callbacks.clear()
    net.run(70)
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key
    assert ref.recorders["y"].to_dataset().identical(net.recorders["y"].to_dataset())


@pytest.mark.slow
def test_second_ctrl_c_interrupts_at_once():
    import os
    import signal

    net = make_sm("XY")
    hits = []

    def stubborn(n):
        hits.append(n.t)
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)  # raises here, inside the callback
        hits.append("not reached")

    net.add_callback(stubborn, phase="plasticity", when="before", every=20)
    # Python's own handler before the run, whatever this process inherited (a job started in the
    # background of a shell, and so its xdist workers, starts with SIGINT ignored): the run must
    # put back exactly the handler it found
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            net.run(100)
        assert hits == [20]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_jacobi_hitting_its_cap_is_warned_once_per_run_with_the_count(backend):
    import warnings

    from neurosim.dynamics.jacobi import JacobiNotConverged

    net = make_sm("XY", tol=1e-14, max_iter=3)  # 3 iterations cannot reach 1e-14
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        net.run(40, backend=backend)
    msgs = [str(w.message) for w in got if issubclass(w.category, JacobiNotConverged)]
    assert msgs == ["Jacobi dynamics of 'y' did not reach tol=1e-14 within max_iter=3 iterations in 40 step(s) of this run"]
    converging = make_sm("XY", tol=1e-6, max_iter=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JacobiNotConverged)
        converging.run(40, backend=backend)
