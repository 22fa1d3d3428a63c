"""Seed-2 survivors in the engine: an undone step restores its dynamics' state; every run re-checks the components."""

import numpy as np
import pytest

import neurosim as ns
from test_events import growing_network


def _network():
    net = growing_network("python")
    net.triggers.clear()
    net.populations["h"].dynamics.tol = 1e-2  # adaptive: the iteration count differs from step to step
    return net


def test_a_failed_step_restores_the_dynamics_report_and_buffers():
    twin = _network()
    twin.run(4)
    info4 = twin.populations["h"].dynamics.info.copy()
    twin.run(1)
    # the test needs step 5 to leave a report other than step 4's
    assert not np.array_equal(twin.populations["h"].dynamics.info, info4)

    net = _network()
    net.run(4)
    dyn = net.populations["h"].dynamics
    np.testing.assert_array_equal(dyn.info, info4)
    buffers = {k: b.copy() for k, b in dyn._buffers.items()}
    net.add(ns.Trigger(lambda n: n.t == 5, lambda n: ns.Death(n.populations["h"], [999]), name="bad"))
    with pytest.raises(ValueError, match="999"):
        net.run(3)
    assert net.t == 4
    np.testing.assert_array_equal(dyn.info, info4)
    assert dyn._buffers.keys() == buffers.keys()
    for k, b in buffers.items():
        np.testing.assert_array_equal(dyn._buffers[k], b, err_msg=k)


def test_compiled_backend_refuses_a_kernel_less_rule_added_after_a_run():
    # run() follows structural changes made since its last run before it checks backend='compiled'
    # (the engine outlives a run; its list of components without kernels must not be stale)
    from neurosim.streams import GaussianStream

    class NumpyOnly(ns.Rule):
        def update_numpy(self):
            self.projection.weights *= 0.999

    net = ns.Network()
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.ones(3), seed=0), x)
    net.add(ns.Projection("W", x, y))
    net.run(2, backend="compiled")
    net.add(ns.Projection("V", x, y, rule=NumpyOnly()))
    with pytest.raises(ValueError, match="needs a kernel for every component; missing: NumpyOnly"):
        net.run(2, backend="compiled")
    assert net.t == 2


def test_every_run_rechecks_the_options_even_a_run_of_zero_steps():
    # SparseCode.check_options: "checked again before every run"; a parameter assignment that makes the
    # options inconsistent is no structural change, so only the run's own check can see it
    from neurosim.streams import GaussianStream

    net = ns.Network()
    x, a = ns.Population("x", 4), ns.Population("a", 3, dynamics=ns.SparseCode("omp", n_nonzero=1))
    net.add(x, a)
    net.connect(GaussianStream(np.ones(4), seed=0), x)
    net.add(ns.Projection("D", x, a))
    net.run(1)
    a.dynamics.lam = 0.1
    for steps in (0, 1):
        with pytest.raises(ValueError, match="takes n_nonzero, not lam"):
            net.run(steps)
    assert net.t == 1


# -- survivors of the last mutants of the final seed-2 run (rules/local.py, params.py) ----------------

def test_a_local_rule_steps_by_itself_outside_any_network():
    """``update_numpy`` is the rule's public NumPy reference: on a projection in no network it reads no step."""
    from neurosim.rules.standard import Sanger

    rule = Sanger()
    x, y = ns.Population("x", 3), ns.Population("y", 2)
    p = ns.Projection("W", x, y, init=ns.Constant(0.5), rule=rule)
    x.activity[:] = [[1.0, 0.0, 2.0]]
    y.activity[:] = [[1.0, -1.0]]
    before = p.weights.copy()
    rule.update_numpy()  # the mutant reads network.t of no network: AttributeError
    assert p.network is None and not np.array_equal(p.weights, before)


def test_local_rule_refuses_what_is_not_a_function_in_its_own_words():
    with pytest.raises(TypeError, match="func must be a function; got int"):
        ns.local_rule(5)


def test_a_scheduled_parameter_needs_a_step_number():
    """Reading a scheduled value without a step is refused with the reason, not a TypeError from int(None)."""
    rule = ns.Oja(rate=ns.schedules.InverseTime(0.1, half_life=10))
    assert rule.value("rate", 10) == pytest.approx(0.05)
    with pytest.raises(RuntimeError, match="needs a step number"):
        rule.value("rate", None)
