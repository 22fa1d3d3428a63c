"""
2. Recordings are xarray Datasets
=================================

``net.record`` attaches a recorder to a population (or a projection); the
compiled segments write into its buffers, and ``to_dataset()`` returns an
:class:`xarray.Dataset` with named dimensions, the units' stable ids as
coordinates and the network's parameters as attributes.
"""

# %%
# The network of :doc:`tutorial_01_first_network`, recording the output
# activity every 10 steps. (Any per-unit variable can be recorded too, e.g.
# ``net.record(y, ["activity", "mu"])``, and a projection's weights:
# ``net.record(net["W"], ["weights"], every=1000)``.)
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

import neurosim as ns
import neurosim.plot

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
net.run(20_000)

ds = net.recorders["y"].to_dataset()
print(ds)

# %%
# ``activity`` has dimensions ``time`` (the step count at each sample),
# ``batch`` (samples per step; 1 here) and ``unit`` (the stable ids of the
# outputs). The attributes hold every parameter of the network
# (``"W.rule.alpha"``, ...), so a saved file says how it was made.
print(ds.activity.dims, ds.sizes["time"], "samples")
print({k: v for k, v in ds.attrs.items() if k.startswith("W.")})

# %%
# Selecting and reducing by name
# ------------------------------
# The power of each output over the second half of the run, by unit id.
# The outputs are a rotation of the principal components, so each unit's
# power is a mixture of the eigenvalues of tutorial 1; their sum is the
# trace, which should be 3.67 + 2.67 + 1.67 = 8.0.
late = ds.activity.isel(batch=0).sel(time=slice(10_000, None))
power = (late ** 2).mean("time")
print(power.round(2).to_series())
print("total power:", round(float(power.sum()), 2))

# %%
# Plotting
# --------
# :func:`neurosim.plot.activity` draws a recording as an image over time and
# units; xarray's own plotting works on any variable.
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), constrained_layout=True)
ns.plot.activity(ds.isel(time=slice(0, 200)), ax=axes[0])
axes[0].set_title("output activity, first 2000 steps")
(ds.activity.isel(batch=0) ** 2).rolling(time=100).mean().plot.line(x="time", ax=axes[1], add_legend=False)
axes[1].set_title("output power (rolling mean of 100 samples)")
axes[1].set_xlabel("step")

# %%
# Saving and loading
# ------------------
# Datasets write to netCDF with the ``h5netcdf`` engine and read back
# identical.
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "y.nc"
    ds.to_netcdf(path, engine="h5netcdf")
    back = xr.load_dataset(path, engine="h5netcdf")
print("identical after a round trip:", back.identical(ds))

# %%
# Long runs can stream their recordings to a zarr store instead of memory
# (``net.record(y, store="run.zarr")``); see :doc:`/architecture`.
