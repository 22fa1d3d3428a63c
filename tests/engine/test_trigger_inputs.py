"""A compiled trigger that fires ends its segment early; the inputs drawn for the rest are used, not drawn again.

Before issue 23, the next segment drew its whole span afresh, so a trigger
with ``every=10000`` over 100,000 steps drew 3.4 times the steps it ran and
doubled the run time of a cheap network (benchmarks/bench_triggers.py).
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.triggers import every_step
from sm_helpers import make_sm, state_of


def _counting(net):
    """Count the rows the network's input stream hands out."""
    stream = net.inputs[0].stream
    drawn = []
    original = stream.block

    def block(t0, n, batch=1):
        drawn.append((t0, n))
        return original(t0, n, batch)

    stream.block = block
    return drawn


@pytest.mark.parametrize("when", ["events", "dynamics"])
def test_a_firing_trigger_draws_each_input_once_and_changes_no_number(when):
    plain = make_sm("XY", every=3)
    plain.run(700)
    net = make_sm("XY", every=3)
    fired = []
    net.add(ns.Trigger(every_step(), lambda n: fired.append(n.t) or [], every=50, when=when))
    drawn = _counting(net)
    net.run(700)
    assert fired == list(range(50, 701, 50))  # every firing ended a segment
    assert sum(n for _, n in drawn) == 700  # no step's input drawn twice, none thrown away
    starts = [t0 for t0, _ in drawn]
    assert starts == sorted(set(starts))
    for key, value in state_of(plain).items():
        assert np.array_equal(value, state_of(net)[key]), key
    assert plain.recorders["y"].to_dataset().identical(net.recorders["y"].to_dataset())


def test_kept_inputs_are_dropped_when_the_stream_is_replaced_or_the_run_ends():
    from neurosim.streams import GaussianStream

    other = GaussianStream(np.linspace(1.0, 0.1, 12), seed=9)

    def swap(n):
        if n.t == 40:
            n.inputs[0].stream = other  # between two segments, with rows of the old stream kept
        return []

    net = make_sm("XY")
    net.add(ns.Trigger(every_step(), swap, every=40))
    old = net.inputs[0].stream
    net.run(60)
    assert net._engine._kept is None  # not held between runs
    assert np.array_equal(net.populations["x"].activity, other.block(59, 1)[0])
    assert not np.array_equal(net.populations["x"].activity, old.block(59, 1)[0])
