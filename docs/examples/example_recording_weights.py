"""
Recording weights and activity into xarray
==========================================

A recorder can sample a projection's weights as well as a population's
variables, each at its own rate. ``to_dataset()`` gives the weights the
dimensions ``unit`` (post) and ``pre_unit``, keyed by the units' stable ids.
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns

net = ns.Network(seed=0)
x = ns.Population("x", 16)
y = ns.Population("y", 4, dynamics=ns.Jacobi(eta=0.1, tol=1e-8, max_iter=500))
net.add(x, y)
stream = ns.GaussianStream(np.r_[5.0, 4.0, 3.0, np.full(13, 0.1)], seed=1, eigenvectors="random")
net.connect(stream, x)
s = ns.SquaredNorm(x)
net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s, beta=0.999))
net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, s)))
net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(0.1, s)))
net.record(y, ["activity", "mu"], every=10)
net.record(net["W"], ["weights"], every=250, time_dim="weight_time")
net.run(20_000)

weights = net.recorders["W"].to_dataset()
print(weights.weights.dims, weights.weights.shape)

# %%
# How much of each output's weight vector lies in the 3-dimensional
# principal subspace of the input (1 = all of it): the feed-forward weights
# start random and rotate into it.
U = stream.eigenvectors[:, :3]
W = weights.weights.values                                     # (time, unit, pre_unit)
in_subspace = np.linalg.norm(W @ U, axis=2) / np.linalg.norm(W, axis=2)
fig, axes = plt.subplots(1, 2, figsize=(9, 3), constrained_layout=True)
axes[0].plot(weights.weight_time, in_subspace)
axes[0].set(xlabel="step", ylabel="fraction of |W_i| in the subspace", title="feed-forward weights")
ds = net.recorders["y"].to_dataset()
ds.mu.plot.line(x="time", ax=axes[1], add_legend=False)
axes[1].set(xlabel="step", title="cumulative activity mu of each output")
print("final fractions:", np.round(in_subspace[-1], 3))
print("final weight norms:", np.round(np.linalg.norm(W[-1], axis=1), 3))

# %%
# All four outputs' weights end in the principal subspace, with norms near
# 0.8-0.9: four outputs, but only three dimensions among them (one output
# eigenvalue is zero, :doc:`/auto_tutorials/tutorial_01_first_network`), their
# activities a rotation of the three principal components. Distinct ``time_dim`` names
# let recordings sampled at different rates be merged into one Dataset.
