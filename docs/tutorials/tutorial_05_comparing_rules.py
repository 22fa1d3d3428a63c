"""
5. Comparing rules in a sweep
=============================

A :class:`~neurosim.Sweep` calls a model function for every point of a
parameter grid and every seed and collects the results in one
:class:`xarray.Dataset`, with one dimension per grid parameter and one for
the seed. Here: two principal-subspace rules, Sanger's generalized Hebbian
algorithm and Oja's subspace rule, at two learning rates, three seeds each.
"""

# %%
# The model
# ---------
# One run: 8 inputs with a known covariance, 3 linear outputs
# (``y = W x``), the weights learning with the chosen rule. Every 250 steps
# it measures the subspace error between the rows of ``W`` and the top-3
# eigenvectors (0: the same subspace) and how well each row aligns with
# *its own* eigenvector (1: row i is eigenvector i). A model may return a
# network to be run, or -- as here -- a Dataset it computed.
import numpy as np
import xarray as xr

import neurosim as ns
import neurosim.plot
from neurosim.metrics import subspace_error
from neurosim.rules import OjaSubspace, Sanger

SPECTRUM = np.r_[4.0, 2.0, 1.0, np.full(5, 0.1)]
RULES = {"Sanger": Sanger, "OjaSubspace": OjaSubspace}


def pca_run(rule, rate, seed):
    stream = ns.GaussianStream(SPECTRUM, seed=seed, eigenvectors="random", eigvec_seed=0)
    net = ns.Network(seed=seed)
    x, y = ns.Population("x", 8), ns.Population("y", 3, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(stream, x)
    W = ns.Projection("W", x, y, rule=RULES[rule](rate=rate))
    net.add(W)
    U = stream.eigenvectors[:, :3]                    # the top-3 eigenvectors, as columns
    steps, error, alignment = [], [], []
    for _ in range(24):
        net.run(250)
        rows = W.weights / np.linalg.norm(W.weights, axis=1, keepdims=True)
        steps.append(net.t)
        error.append(subspace_error(W.weights, U))
        alignment.append(np.abs(np.sum(rows * U.T, axis=1)).mean())
    return xr.Dataset({"subspace_error": ("step", error), "alignment": ("step", alignment)}, coords={"step": steps})


sweep = ns.Sweep(pca_run, grid={"rule": list(RULES), "rate": [0.002, 0.01]}, seeds=range(3))
print(sweep)

# %%
# Running it
# ----------
# ``executor="serial"`` runs in this process; ``"processes"`` uses worker
# processes (then the script's top level must be under
# ``if __name__ == "__main__":``, because every worker imports it) and
# ``"dask"`` a dask cluster. Every run is a function of its point and seed,
# so all executors give the same numbers.
ds = sweep.run(executor="serial", progress=False)
print(ds.subspace_error.dims)
final = ds[["subspace_error", "alignment"]].isel(step=-1, drop=True).mean("seed")
print(final.to_dataframe().round(3))

# %%
# Both rules find the principal subspace (subspace error near 0; the larger
# rate ends noisier, because a constant rate keeps the weights fluctuating),
# but only Sanger's rule orders it: its rows align with the
# individual eigenvectors (alignment near 1), while Oja's subspace rule
# settles on some rotation of them.
#
# Plotting
# --------
# :func:`neurosim.plot.facet` draws learning curves: a panel per value of
# one dimension, a line per value of another, and a band over the seeds.
fig = ns.plot.facet(ds.subspace_error, x="step", col="rate", hue="rule", over="seed")
fig.suptitle("subspace error (band: the seeds' 10-90 % range)")
fig = ns.plot.facet(ds.alignment, x="step", col="rate", hue="rule", over="seed")
fig.suptitle("alignment of row i with eigenvector i")

# %%
# Long sweeps take ``out="folder"``: each finished run is stored at once and
# a killed sweep resumes where it stopped. ``neurosim sweep NAME`` sweeps the
# reproductions in ``simulations/`` from the command line.
