"""
Checkpoints: stop a run and resume it bit for bit
=================================================

``net.run(steps, checkpoint=path, checkpoint_every=n, resume=True)`` saves
the whole state (weights, per-unit variables, the random generator, the
step count; ``.npz`` and JSON, no pickle) every ``n`` steps; rerunning the
same line after a crash loads the last checkpoint and runs only the steps
left. Inputs are random-access streams keyed by the step, so nothing else
needs saving.
"""

import tempfile
from pathlib import Path

import numpy as np

import neurosim as ns


def make():
    net = ns.Network(seed=0)
    x = ns.Population("x", 16)
    y = ns.Population("y", 4, dynamics=ns.Jacobi(eta=0.1, tol=1e-8, max_iter=500))
    net.add(x, y)
    net.connect(ns.GaussianStream(np.r_[5.0, 4.0, 3.0, np.full(13, 0.1)], seed=1, eigenvectors="random"), x)
    s = ns.SquaredNorm(x)
    net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s, beta=0.999))
    net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, s)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(0.1, s)))
    net.record(y, ["activity"], every=10)
    return net


# %%
# One uninterrupted run of 10 000 steps, and one that "crashes" after 6000
# (here: stops) and is restarted in a fresh process-like state.
reference = make()
reference.run(10_000)

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "ck"
    first = make()
    first.run(6_000, checkpoint=path, checkpoint_every=2_500)   # checkpoints at steps 2500, 5000 and the end
    print("checkpoint written at step", first.t)

    second = make()                                              # a new network, as after a restart
    second.run(10_000, checkpoint=path, checkpoint_every=2_500, resume=True)
    print("resumed from the checkpoint and finished at step", second.t)

same = all(np.array_equal(reference[name].weights, second[name].weights) for name in ("W", "M"))
print("weights identical to the uninterrupted run:", same)

# %%
# ``resume=True`` ran only the 4000 steps left to reach ``t + steps`` of
# the call (``t`` was 0), and the result is bit-identical to the run that
# never stopped. ``net.save(path)`` and ``net.load(path)`` do the same by
# hand; a checkpoint of another circuit, or a damaged one, is refused with
# the network untouched.
