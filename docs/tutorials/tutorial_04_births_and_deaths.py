"""
4. Units born and killed while the network runs
================================================

Structural plasticity is part of the model, not a rebuild: a
:class:`~neurosim.Birth` adds units to a population, a
:class:`~neurosim.Death` removes units by their stable id, and a
:class:`~neurosim.Trigger` produces them when a condition holds. Every
projection touching the population, every rule's per-unit state and every
recorder follows.
"""

# %%
# The circuit of tutorial 1, but with only 2 outputs for the 3 strong input
# directions. At step 15 000 a third output is born; at step 30 000 the
# output with the oldest id dies.
import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
from neurosim.metrics import output_covariance
from neurosim.models.similarity_matching import offline_output_eigenvalues

spectrum = np.r_[5.0, 4.0, 3.0, np.full(13, 0.1)]
net = ns.Network(seed=0)
x = ns.Population("x", 16)
y = ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.1, tol=1e-8, max_iter=500))
net.add(x, y)
net.connect(ns.GaussianStream(spectrum, seed=1, eigenvectors="random"), x)
s = ns.SquaredNorm(x)
net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s, beta=0.999))
net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, s)))
net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(0.1, s)))
net.record(y, ["activity"], every=10)

# %%
# A trigger's condition is a Python function of the network (or a compiled
# condition from :mod:`neurosim.triggers`, evaluated inside compiled
# segments); its action returns the events. Evaluated every 5000 steps here.
net.add(ns.Trigger(lambda n: n.t == 15_000, lambda n: ns.Birth(y, 1), every=5_000, name="grow"))
net.add(ns.Trigger(lambda n: n.t == 30_000, lambda n: ns.Death(y, y.ids.min()), every=5_000, name="prune"))
net.run(45_000)
print("ids alive:", y.ids)
print(net.event_log)

# %%
# The newborn unit got the next free id (2); the dead one's id (0) is never
# reused. Each phase converges to the offline optimum for the number of
# outputs alive: 2, then 3, then 2 again.
ds = net.recorders["y"].to_dataset()
print("recorded units:", ds.unit.values)
for start, stop, k in [(7_500, 15_000, 2), (22_500, 30_000, 3), (37_500, 45_000, 2)]:
    Y = ds.activity.isel(batch=0).sel(time=slice(start, stop - 1)).dropna("unit", how="all").values
    learned = np.sort(np.linalg.eigvalsh(output_covariance(Y)))[::-1]
    print(f"steps {start}-{stop}, {k} outputs: learned {np.round(learned, 2)}, "
          f"expected {np.round(offline_output_eigenvalues(spectrum, k, 'XY', 0.1)[:k], 2)}")

# %%
# In the recording a unit is NaN where it was not alive (the "dense"
# layout; ``to_dataset(layout="slots")`` keeps only the live units of each
# sample, for long runs with much turnover).
fig, ax = plt.subplots(figsize=(8, 2.6), constrained_layout=True)
power = (ds.activity.isel(batch=0) ** 2).rolling(time=200).mean()
for unit in ds.unit.values:
    power.sel(unit=unit).plot.line(x="time", ax=ax, label=f"unit {unit}")
for step in (15_000, 30_000):
    ax.axvline(step, color="k", lw=0.8, ls="--")
ax.set(xlabel="step", ylabel="output power", title="a birth at 15 000, a death at 30 000")
ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))

# %%
# Births and deaths are not tied to dictionary learning: the self-organising
# circuits of :mod:`neurosim.models.self_organizing` use the same events.
# Growing Neural Gas and Grow When Required insert units where the input is
# badly covered and remove units left without edges, and their edges are
# synapses of a masked projection, created and removed by
# :class:`~neurosim.events.Link` and :class:`~neurosim.events.Unlink` events
# in the same log (:ref:`sphx_glr_auto_examples_example_gng_ring.py`).
