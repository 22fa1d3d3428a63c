"""Ensemble.recording stacks members sampled alike and refuses the others; members may not share a store."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream


def _member(seed, n=10, k=3):
    X = np.random.default_rng(100 + seed).normal(size=(40, n))
    return build_network(ArrayStream(X), k, "XY", 0.1, beta=0.999, eta=0.1, max_iter=30, zero_start=True,
                         seed=seed, record=("activity",), record_every=2).network


def _recorded(seed, every=2, dt=None, steps=8):
    net = _member(seed)
    if dt is not None:
        net.dt = dt
    for rec in net.recorders.values():
        rec.every = every
    net.run(steps)
    return net


@pytest.mark.parametrize("other, text", [
    (lambda: _recorded(1, every=3), r"every 3 \(networks\[0\]: 2\)"),
    (lambda: _recorded(1, dt=0.001), r"dt 0\.001 \(networks\[0\]: None\)"),
    (lambda: _recorded(1, steps=10), r"t \(steps run\) 10 \(networks\[0\]: 8\)"),
])
def test_recording_refuses_members_sampled_differently(other, text):
    # these used to be stacked with NaN where the members' steps did not meet
    ens = ns.Ensemble([_recorded(0), other()])
    with pytest.raises(ValueError, match=r"networks\[1\]'s recording of 'activity' of 'y' .*differs .*" + text):
        ens.recording("y")


def test_recording_refuses_members_that_recorded_other_steps():
    a, b = _member(0), _member(1)
    a.run(4)
    b.recorders.clear()
    b.run(4)
    b.record(b["y"], "activity", every=2)  # recorded only from step 4 on
    for net in (a, b):
        net.run(4)
    with pytest.raises(ValueError, match=r"networks\[1\].*recorded steps \(2 samples"):
        ns.Ensemble([a, b]).recording("y")
