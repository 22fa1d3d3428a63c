"""The printed step schedule lists the phases in the order the engine runs them (engine module docstring).

Within a phase the engine's own closing work comes last: the NaN/Inf check
runs after every plasticity rule, and a Python trigger with
``when="dynamics"`` re-runs the dynamics after the dynamics components.
"""

import neurosim as ns
from neurosim.component import PHASES

from sm_helpers import make_sm


def _rows_by_phase(net):
    rows = net.schedule().rows()
    phases = [r[0] for r in rows]
    # phases appear in PHASES order, each as one contiguous block
    assert phases == sorted(phases, key=PHASES.index)
    return rows, {p: [r for r in rows if r[0] == p] for p in PHASES}


def test_the_nan_check_closes_the_plasticity_phase_after_every_rule():
    """Rows of the plasticity phase: the components in run order, then the NaN/Inf check."""
    net = make_sm("XY")
    rows, by_phase = _rows_by_phase(net)
    plasticity = by_phase["plasticity"]
    components = [c for c in net.schedule() if c.phase == "plasticity"]
    assert len(components) >= 3
    assert [r[2] for r in plasticity[:-1]] == [c.label for c in components]
    assert plasticity[-1] == ("plasticity", "end", "NaN/Inf check of every state variable")
    assert rows[0][0] == "input" and rows[-1][0] == "record"


def test_a_dynamics_trigger_closes_the_dynamics_phase():
    """A Python trigger with when='dynamics' is listed after every dynamics component (it re-runs them)."""
    net = make_sm("XY")
    net.add(ns.Trigger(lambda n: False, lambda n: None, every=5, when="dynamics", name="regrow"))
    _, by_phase = _rows_by_phase(net)
    dynamics = by_phase["dynamics"]
    assert [r[2] for r in dynamics[:-1]] == [c.label for c in net.schedule() if c.phase == "dynamics"]
    assert dynamics[-1][1] == "end" and "Trigger 'regrow' every 5" in dynamics[-1][2]
