"""Both paths stop at the same step, with the same recordings, whatever makes a run fail.

The compiled path draws a whole segment's schedule values before the segment
starts; a value out of range (or NaN) at some step must still let every step
before it run, exactly as the per-step Python path does, and the error must
name the parameter and the step. A user kernel indexing out of bounds raises
the same clear error on both paths at the same step (issue 23).
"""

import numpy as np
import pytest

from numba import njit

import neurosim as ns
from neurosim.params import Float
from neurosim.rules import local_rule
from neurosim.schedules import Function, LinearRamp
from neurosim.streams import GaussianStream


def _overreach(weights, post, pre, rate, last):
    """Oja-like update that, once the step's ``last`` parameter exceeds the array, writes past the weights' end."""
    batch = post.shape[0]
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            acc = 0.0
            for b in range(batch):
                acc += post[b, i] * pre[b, j]
            weights[i, j] += rate * acc / batch
    k = int(last)
    weights[0, k] = weights[0, k] * (1.0 - rate)  # in range while last < n_pre


# called as a function (not as a decorator): the module's name ``_overreach`` stays the plain function
Overreach = local_rule(_overreach, params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True),
                                           "last": Float(0.0, low=0.0)}, name="Overreach")


@local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True), "last": Float(0.0, low=0.0)})
@njit(cache=True)  # the user's own dispatcher, without bounds checks: local_rule compiles it again with them
def DecoratedOverreach(weights, post, pre, rate, last):
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            weights[i, j] += rate * post[0, i] * pre[0, j]
    k = int(last)
    weights[0, k] = weights[0, k] * (1.0 - rate)


def _net(rule, n=6, k=2):
    net = ns.Network(seed=0)
    x = ns.Population("x", n)
    y = ns.Population("y", k, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.linspace(2.0, 0.2, n), seed=3), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.3), rule=rule))
    net.record(y, "activity", every=1)
    return net


def _fail_on_both_paths(make, steps, error, match):
    """Run ``make()`` on both paths; both must raise ``error`` at the same step and keep the same samples."""
    out = {}
    for backend in ("compiled", "python"):
        net = make()
        with pytest.raises(error, match=match):
            net.run(steps, backend=backend)
        ds = net.recorders["y"].to_dataset()
        out[backend] = (net.t, ds.time.values.copy(), ds.activity.values.copy(), net.projections["W"].weights.copy())
    (tc, timec, actc, wc), (tp, timep, actp, wp) = out["compiled"], out["python"]
    assert tc == tp
    np.testing.assert_array_equal(timec, timep)
    np.testing.assert_allclose(actc, actp, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(wc, wp, rtol=1e-10, atol=1e-13)
    return tc


def test_schedule_out_of_range_stops_both_paths_before_the_same_step():
    # rate = 0.02 * (1 - t/50): 0 at step 50, outside (0, 1]
    t = _fail_on_both_paths(lambda: _net(ns.Oja(rate=LinearRamp(0.02, -0.02, 100))), 100, ValueError,
                            r"schedule of rate gives 0\.0 at step 50")
    assert t == 49


def test_schedule_nan_in_a_later_segment_stops_both_paths_before_the_same_step():
    def nan_at_150(t):
        return np.where(t == 150, np.nan, 0.01)

    t = _fail_on_both_paths(lambda: _net(ns.Oja(rate=Function(nan_at_150))), 300, ValueError,
                            r"schedule of rate gives nan at step 150")
    assert t == 149


def test_a_schedule_failing_at_the_first_step_of_a_run_leaves_the_network_untouched():
    for backend in ("compiled", "python"):
        net = _net(ns.Oja(rate=LinearRamp(0.02, -0.02, 100)))
        net.run(20, backend=backend)
        with pytest.raises(ValueError, match="at step 50"):
            net.run(60, backend=backend)
        assert net.t == 49
        w = net.projections["W"].weights.copy()
        with pytest.raises(ValueError, match="at step 50"):
            net.run(1, backend=backend)
        assert net.t == 49 and np.array_equal(w, net.projections["W"].weights)


def test_user_rule_made_by_a_function_call_runs_compiled():
    import warnings

    a, b = _net(Overreach(rate=0.02, last=1.0)), _net(Overreach(rate=0.02, last=1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a PerStepWarning would mean the rule was not compiled
        a.run(150)
    b.run(150, backend="python")
    assert not a._engine.missing
    np.testing.assert_allclose(a.projections["W"].weights, b.projections["W"].weights, rtol=1e-10, atol=1e-13)


def test_user_rule_writing_out_of_bounds_stops_both_paths_at_the_same_step():
    # ``last`` reaches 6 (= n_pre, one past the end) at step 120
    t = _fail_on_both_paths(lambda: _net(Overreach(rate=0.02, last=LinearRamp(0.0, 10.0, 200))), 200, IndexError,
                            r"Overreach on projection .W. indexed an array out of bounds at step 120")
    assert t == 119


def test_decorated_user_rule_writing_out_of_bounds_raises_on_the_compiled_path_too():
    # the common form: @local_rule on a module-level function (here already @njit without bounds checks)
    t = _fail_on_both_paths(lambda: _net(DecoratedOverreach(rate=0.02, last=LinearRamp(0.0, 10.0, 200))), 200,
                            IndexError,
                            r"DecoratedOverreach on projection .W. indexed an array out of bounds at step 120")
    assert t == 119
