"""EventLog's dict form (checkpoints) and the refusals of Trigger's constructor, by hand."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.events import EventLog
from neurosim.triggers import every_step


def test_the_dict_form_round_trips_and_copies():
    log = EventLog()
    log.add(3, "birth", "y", [4, 5])
    log.add(7, "link", "E", [1], partners=[2])
    d = log.to_dict()
    assert d == {"step": [3, 3, 7], "kind": ["birth", "birth", "link"], "population": ["y", "y", "E"],
                 "unit": [4, 5, 1], "partner": [-1, -1, 2]}
    back = EventLog.from_dict(d)
    assert back.to_dict() == d
    d["step"][0] = 99  # the new log holds copies
    d["partner"][2] = 0
    assert back.step[0] == 3 and back.partner[2] == 2


def test_a_log_written_before_synapse_events_has_unit_rows_only():
    # no "partner" key: every row is a unit's, partner -1
    old = {"step": [1, 2], "kind": ["birth", "death"], "population": ["y", "y"], "unit": [0, 0]}
    log = EventLog.from_dict(old)
    assert log.partner == [-1, -1]
    assert log.to_dict() == {**old, "partner": [-1, -1]}
    with pytest.raises(KeyError):
        EventLog.from_dict({"step": [1], "kind": ["birth"], "population": ["y"]})  # "unit" missing


def test_trigger_refuses_what_it_cannot_call():
    with pytest.raises(TypeError, match="action must be a callable"):
        ns.Trigger(every_step(), 5)
    with pytest.raises(TypeError, match="action must be a callable"):
        ns.Trigger(lambda n: True, "births")
    with pytest.raises(TypeError, match="condition must be a callable"):
        ns.Trigger(np.ones(3), lambda n: [])
    assert ns.Trigger(every_step(), lambda n: []).compiled  # a kernel call and a callable: accepted
    assert not ns.Trigger(lambda n: True, lambda n: []).compiled


def test_take_unconverged_reads_a_count_only_from_a_two_element_info():
    # Dynamics.take_unconverged: the count is info[1]; dynamics without info, or with a one-element info
    # (an iteration count only), have nothing to report
    from neurosim.dynamics.base import Dynamics

    class Counting(Dynamics):
        def step_numpy(self):
            pass

    pop = ns.Population("y", 2, dynamics=Counting())
    dyn = pop.dynamics
    assert dyn.take_unconverged() is None  # no info at all
    dyn.info = np.array([7], dtype=np.int64)
    assert dyn.take_unconverged() is None
    dyn.info = np.array([5, 3], dtype=np.int64)
    assert dyn.take_unconverged() == "Counting dynamics of 'y': the solver hit its cap 3 time(s) during this run"
    assert dyn.info.tolist() == [5, 0]  # taken, so forgotten
    assert dyn.take_unconverged() is None
    dyn.info = np.array([5, 2, 9], dtype=np.int64)  # longer info: the count is still info[1]
    assert "cap 2 time(s)" in dyn.take_unconverged()
