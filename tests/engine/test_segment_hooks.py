"""Only the steps a callback or a Python trigger needs leave the compiled path (engine module docstring).

The compiled path runs segments "leaving it only when ... a callback or a
Python trigger is due": every other step runs inside a segment. Counted by
wrapping the engine's segment runner and its per-step path.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.engine import Engine

from sm_helpers import make_sm, state_of


def _count_paths(monkeypatch):
    segments, per_step = [], []
    run_segment, guarded_step = Engine._run_segment, Engine._guarded_step
    monkeypatch.setattr(Engine, "_run_segment", lambda self, n: (segments.append(n), run_segment(self, n))[1])
    monkeypatch.setattr(Engine, "_guarded_step",
                        lambda self, kernels: (per_step.append(self.net.t + 1), guarded_step(self, kernels))[1])
    return segments, per_step


@pytest.mark.parametrize("every", [1, 2, 7, 10])
def test_only_callback_steps_run_per_step(monkeypatch, every):
    """With a callback every `every` steps, exactly the steps t % every == 0 run per step, the rest in segments."""
    ref = make_sm("XY")
    ref.run(60)
    segments, per_step = _count_paths(monkeypatch)
    net = make_sm("XY")
    seen = []
    net.add_callback(lambda n: seen.append(n.t), phase="dynamics", when="before", every=every)
    net.run(60)
    hooks = list(range(every, 61, every))
    assert seen == hooks
    assert per_step == hooks
    assert sum(segments) == 60 - len(hooks) and min(segments, default=1) >= 1
    for key, value in state_of(ref).items():
        assert np.array_equal(value, state_of(net)[key]), key


def test_only_python_trigger_steps_run_per_step(monkeypatch):
    """A Python (uncompiled) trigger every 4 steps sends exactly its own steps down the per-step path."""
    segments, per_step = _count_paths(monkeypatch)
    net = make_sm("XY")
    fired = []
    net.add(ns.Trigger(lambda n: True, lambda n: fired.append(n.t), every=4, name="py"))
    net.run(30)
    assert fired == list(range(4, 31, 4))
    assert per_step == fired
    assert sum(segments) == 30 - len(fired)
