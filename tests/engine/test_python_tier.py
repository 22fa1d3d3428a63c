"""A new structure first runs its segment's Python form: the same kernels, the same numbers (issue 40).

The generated segment is a loop calling compiled kernels; run by the
interpreter (``segment.py_func``) it calls them in the same order on the
same arrays. ``backend="auto"`` runs that form until the steps it has run
and the steps left, at the rate measured there, would cost more than
``PYTHON_TIER_SECONDS``; then it compiles. Every comparison here is exact.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim import codegen, engine
from neurosim.triggers import activity_above
from sm_helpers import make_sm, state_of


@pytest.fixture
def fresh_segments(monkeypatch):
    """Segments as in a new process with an empty numba cache: none loaded, none on disk, none interpreted."""
    monkeypatch.setattr(codegen, "_loaded", {})
    monkeypatch.setattr(engine, "_in_disk_cache", lambda segment: False)
    monkeypatch.setattr(engine, "_python_seconds", {})


def _segment(net):
    return codegen.compile_segment(net._engine._plan())[0]


def _assert_same_state(a, b):
    sa, sb = state_of(a), state_of(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)
    for name in a.recorders:
        np.testing.assert_array_equal(a.recorders[name].to_dataset().activity.values,
                                      b.recorders[name].to_dataset().activity.values)


def test_a_short_run_of_a_new_structure_compiles_no_segment_and_gives_the_compiled_bits(fresh_segments):
    short = make_sm(every=3)
    short.run(150)
    assert _segment(short).signatures == []  # never compiled: the Python form ran every step
    assert short.timings.get("compile_seconds", 0.0) == 0.0
    reference = make_sm(every=3)
    reference.run(150, backend="compiled")
    assert _segment(reference).signatures  # the same dispatcher, now compiled
    _assert_same_state(short, reference)


def test_a_long_run_switches_to_the_compiled_segment_without_changing_a_number(fresh_segments, monkeypatch):
    monkeypatch.setattr(engine, "PYTHON_TIER_SECONDS", 1e-9)  # any measured rate predicts more than this
    calls = []
    real = engine.Engine._interpreted

    def spy(self, segment):
        calls.append(real(self, segment))
        return calls[-1]

    monkeypatch.setattr(engine.Engine, "_interpreted", spy)
    tiered = make_sm(every=7, batch=2)
    tiered.run(900)
    assert calls[0] is True and calls[-1] is False  # measured in the Python form first, then compiled
    assert tiered.timings["compile_seconds"] > 0
    reference = make_sm(every=7, batch=2)
    reference.run(900, backend="compiled")
    _assert_same_state(tiered, reference)


def test_the_python_forms_seconds_add_up_over_runs_and_networks_of_a_structure(fresh_segments, monkeypatch):
    # ski rental: the Python form is rented while the seconds spent on it stay under the compile's price
    monkeypatch.setattr(engine, "PYTHON_TIER_SECONDS", 1e9)
    first = make_sm()
    first.run(40)  # a network's first segment in the Python form warms its kernels up: not counted
    segment = _segment(first)
    assert segment not in engine._python_seconds
    first.run(40)
    spent = engine._python_seconds[segment]
    assert spent > 0
    second = make_sm()  # another network of the same structure
    second.run(300)  # its warm-up segment, then counted ones
    assert engine._python_seconds[segment] > spent
    assert segment.signatures == []
    monkeypatch.setattr(engine, "PYTHON_TIER_SECONDS", engine._python_seconds[segment])
    make_sm().run(40)  # the next run would spend more than the price: it compiles
    assert segment.signatures


def test_a_segment_in_numbas_disk_cache_is_loaded_not_interpreted(fresh_segments, monkeypatch):
    monkeypatch.setattr(engine, "_in_disk_cache", lambda segment: True)
    net = make_sm()
    net.run(20)
    assert _segment(net).signatures


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_other_backends_are_not_tiered(fresh_segments, backend):
    net = make_sm()
    net.run(20, backend=backend)
    assert bool(_segment(net).signatures) == (backend == "compiled")
    assert engine._python_seconds == {}


def test_a_compiled_trigger_and_a_divergence_stop_the_python_form_at_the_compiled_forms_step(fresh_segments):
    def fired_steps(backend):
        net = make_sm(every=2)
        fired = []
        net.add(ns.Trigger(activity_above(net.populations["y"], 0.5), lambda n: fired.append(n.t), every=3))
        net.run(90, backend=backend)
        return net, fired

    (python_form, fired_a), (compiled, fired_b) = fired_steps("auto"), fired_steps("compiled")
    assert fired_a == fired_b and len(fired_a) > 1
    _assert_same_state(python_form, compiled)

    def diverging(backend):
        net = make_sm()
        net.run(5, backend=backend)
        net.projections["W"].weights[0, 0] = np.inf
        with pytest.raises(ns.SimulationDiverged) as err:
            net.run(20, backend=backend)
        return net, str(err.value)

    (a, message_a), (b, message_b) = diverging("auto"), diverging("compiled")
    assert message_a == message_b and a.t == b.t


def test_the_compile_clock_counts_numbas_compiles_and_nothing_else():
    from numba import njit

    before = engine._numba_clock.seconds

    @njit
    def double(x):
        return 2 * x

    assert double(3) == 6
    assert engine._numba_clock.seconds > before
    after = engine._numba_clock.seconds
    assert double(4) == 8  # compiled already: nothing counted
    assert engine._numba_clock.seconds == after


def test_a_price_of_zero_compiles_every_segment_before_its_first_step(fresh_segments, monkeypatch):
    monkeypatch.setattr(engine, "PYTHON_TIER_SECONDS", 0.0)  # NEUROSIM_PYTHON_TIER_SECONDS=0
    net = make_sm()
    net.run(3)
    assert _segment(net).signatures and engine._python_seconds == {}


@pytest.mark.parametrize(("value", "seconds"), [(None, 2.0), ("", 2.0), ("0", 0.0), ("1.5", 1.5), ("30", 30.0)])
def test_the_price_comes_from_the_environment(value, seconds):
    assert engine._python_tier_seconds(value) == seconds


@pytest.mark.parametrize("value", ["-1", "inf", "nan", "two", "1s"])
def test_a_bad_price_is_refused_by_name(value):
    with pytest.raises(ValueError, match="NEUROSIM_PYTHON_TIER_SECONDS must be a number of seconds >= 0"):
        engine._python_tier_seconds(value)


@pytest.mark.parametrize("method", ["feature_sign", "omp"])
def test_the_python_form_of_a_fast_math_encoder_gives_the_compiled_bits(fresh_segments, method):
    # feature-sign search compiles with fast-math (its kernels may vectorise differently where a segment
    # inlines them); the codes and a dictionary learning from them must still be the compiled form's bits
    rng = np.random.default_rng(4)
    D = rng.standard_normal((12, 8))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((60, 2, 8))

    def coded(backend):
        net = ns.Network(seed=0, batch=2)
        x = ns.Population("x", 8)
        params = {"lam": 0.2} if method == "feature_sign" else {"n_nonzero": 3}
        a = ns.Population("a", 12, dynamics=ns.SparseCode(method, **params))
        net.add(x, a)
        net.connect(ns.ArrayStream(X), x)
        net.add(ns.Projection("D", x, a, init=D, rule=ns.Oja(0.01)))
        net.record(a, "activity")
        net.run(60, backend=backend)
        return net

    python_form = coded("auto")
    assert _segment(python_form).signatures == []  # every step ran in the Python form
    compiled = coded("compiled")
    np.testing.assert_array_equal(python_form.recorders["a"].to_dataset().activity.values,
                                  compiled.recorders["a"].to_dataset().activity.values)
    np.testing.assert_array_equal(python_form.projections["D"].weights, compiled.projections["D"].weights)
