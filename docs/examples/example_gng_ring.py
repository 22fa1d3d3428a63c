"""
Growing Neural Gas on a ring: units and edges born and removed (Fritzke 1995)
=============================================================================

Growing Neural Gas starts from two units and inserts one every ``lam``
inputs between the unit of largest accumulated error and its worst
neighbour; edges between the two units nearest each input are created,
aged, and removed past ``a_max``, and a unit left without edges dies.
:func:`~neurosim.models.self_organizing.build_gng` assembles it from public
entities (a :class:`~neurosim.dynamics.competitive.BestMatchingUnit`
population, a prototype projection learning by
:class:`~neurosim.rules.competitive.GrowingNeuralGas`, the edges as a masked
lateral projection), so every change of structure is a network event with
stable unit ids. Full reproduction on a square, a line and a ring, three
seeds: ``neurosim run gng_shapes``.
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
from neurosim import plot
from neurosim.models.self_organizing import build_gng

# %%
# The data: 3,000 points uniform on a ring (an annulus of radii 0.6 and 1),
# one input per step. Fritzke's parameters, except a unit every 50 inputs
# instead of 100 so that the ring is covered within the short run.
rng = np.random.default_rng(0)
angle = rng.uniform(0, 2 * np.pi, 3000)
radius = np.sqrt(rng.uniform(0.6**2, 1.0**2, 3000))  # uniform on the annulus' area
X = np.c_[radius * np.cos(angle), radius * np.sin(angle)]

circuit = build_gng(ns.ArrayStream(X), lam=50, seed=0, record_every=500)
circuit.run(len(X))
kinds = list(circuit.network.event_log.kind)
print(f"after {len(X)} inputs: {circuit.ids.size} units and {len(circuit.edge_list())} edges "
      f"(from 2 units and no edges)")
print(f"units: {kinds.count('birth')} born (one every 50 inputs), {kinds.count('death')} died")
print(f"edges: {kinds.count('link')} linked, {kinds.count('unlink')} unlinked")
print(f"quantisation error: {circuit.quantization_error(X):.3f} "
      f"(mean distance to the nearest unit; the ring is 0.4 wide)")

# %%
# The network drawn over the data as it grows: each unit at its prototype,
# each edge a line (:func:`neurosim.plot.graph_at` reads the recordings of
# the prototypes and of the edges, units by stable id).
recordings = {r.target.name: r.to_dataset(layout="dense") for r in circuit.network.recorders.values()}
W, E = recordings["W"], recordings["edges"]
fig, axes = plt.subplots(1, 3, figsize=(10, 3.6), constrained_layout=True)
for ax, k in zip(axes, [0, 2, W.sizes["time"] - 1]):
    plot.graph_at(W, E, step=k, data=X, ax=ax)
    ax.set_title(f"after {int(W['time'][k])} inputs")
    ax.set(xlabel="$x_1$", ylabel="$x_2$")

# %%
# Every edge linked and unlinked is in the event log, with its step:
# edges form faster than they age out while the network grows.
steps, existing, linked, unlinked = plot.edge_counts(W, np.arange(1, len(X) + 1), projection="edges")
fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
ax.plot(steps, existing, label="edges")
ax.plot(steps, np.cumsum(linked), ls="--", label="linked so far")
ax.plot(steps, np.cumsum(unlinked), ls=":", label="unlinked so far")
ax.set(xlabel="input (step)", ylabel="count", title="edges of the growing network")
ax.legend(loc="upper left")

# %%
# An edge is only made between the two units nearest one input, so no
# edge ever crosses the hole: the graph follows the ring's topology from the
# first drawing (a closed loop of a dozen units) to the last (a closed band
# of triangles, one dimension around and a little across). Edges whose ends
# drift apart stop being refreshed, age past ``a_max`` and are unlinked.
