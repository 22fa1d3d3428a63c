"""
A parameter sweep: output power against the regularization
===========================================================

A :class:`~neurosim.Sweep` over ``alpha`` and seeds of paper 002's ``XY``
network: the model returns a network, the sweep runs it for ``steps`` and
collects its recordings along the sweep's dimensions.
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
from neurosim.models.similarity_matching import build_network, offline_output_eigenvalues

SPECTRUM = np.r_[5.0, 4.0, 3.0, np.full(13, 0.1)]


def similarity_matching(alpha, seed):
    stream = ns.GaussianStream(SPECTRUM, seed=seed + 1, eigenvectors="random")
    return build_network(stream, 4, "XY", alpha, tol=0.0, max_iter=200, record_every=10, seed=seed)   # 200 Jacobi iterations a step


sweep = ns.Sweep(similarity_matching, grid={"alpha": [0.05, 0.1, 0.2, 0.3]}, seeds=range(2), steps=10_000)
ds = sweep.run(executor="serial", progress=False)
print(ds.activity.dims)

# %%
# Total output power over the second half of each run, against the offline
# optimum (the sum of the soft-thresholded input eigenvalues, Eq. 7): more
# regularization, less output power, and fewer active outputs.
late = ds.activity.isel(batch=0).sel(time=slice(5_000, None))
power = (late ** 2).mean("time").sum("unit")
alphas = ds.alpha.values
optimum = [offline_output_eigenvalues(SPECTRUM, 4, "XY", a).sum() for a in alphas]
print(power.mean("seed").round(2).to_series())
fig, ax = plt.subplots(figsize=(5, 3), constrained_layout=True)
for seed in ds.seed.values:
    ax.plot(alphas, power.sel(seed=seed), "o", color="C0", label="learned (each seed)" if seed == 0 else None)
ax.plot(alphas, optimum, "k-", label="offline optimum")
ax.set(xlabel="alpha", ylabel="total output power", title="XY regularizer")
ax.legend()
