"""
1. A first network
==================

A network is made of **populations** of units, **projections** (weight
matrices) between them with a plasticity **rule** each, and the components
that run every step. Here: a similarity-matching circuit (paper 002) with 16
inputs and 4 outputs, which learns, online, to project its input onto the
principal subspace -- the 3 input directions with large variance -- and to
shrink each direction's power by a fixed amount.
"""

# %%
# Building it
# -----------
# ``x`` is driven by a stream of Gaussian samples whose covariance has
# eigenvalues 5, 4, 3 and thirteen times 0.1 (in random directions). ``y``
# relaxes to the fixed point of its Jacobi dynamics every step. The
# feed-forward ``W`` is Hebbian, the lateral ``M`` anti-Hebbian
# (``sign=-1``); both rules divide by ``mu``, each output's cumulative
# activity, and use the global signal ``||x||^2``.
#
# A projection's weights start from its ``init``. Without one (``W`` here)
# they are drawn from ``ns.Normal(0.1)``: independent Gaussian weights of
# mean 0 and standard deviation 0.1, whatever the number of inputs, drawn
# from the network's generator (``seed=0``) when the network adds the
# projection. ``M`` starts from zero (``ns.Constant(0.0)``); as a lateral
# projection (``y`` onto itself) it has no self-synapses, so its diagonal
# stays 0.
import numpy as np

import neurosim as ns

spectrum = np.r_[5.0, 4.0, 3.0, np.full(13, 0.1)]
net = ns.Network(seed=0)
x = ns.Population("x", 16)
y = ns.Population("y", 4, dynamics=ns.Jacobi(eta=0.1, tol=1e-8, max_iter=500))
net.add(x, y)
net.connect(ns.GaussianStream(spectrum, seed=1, eigenvectors="random"), x)

s = ns.SquaredNorm(x)
net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s, beta=0.999))
net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, s)))
net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(0.1, s)))
net.record(y, ["activity"], every=10)
print(net)

# %%
# The schedule
# ------------
# Every step runs the same explicit sequence: input, dynamics, signals,
# plasticity, events, recording. ``schedule()`` prints it, so there is no
# hidden order.
print(net.schedule())

# %%
# Running it
# ----------
# ``run`` compiles stretches of steps into one numba function. The first
# run of a new structure compiles (tens of seconds, shown as "compiling" in
# the progress output); the machine code is cached in ``NEUROSIM_CACHE_DIR``
# (by default ``~/.cache/neurosim``), so the next run of the same structure,
# in this session or a later one, starts at once.
net.run(20_000)
print("steps run:", net.t)

# %%
# What it learned
# ---------------
# Paper 002's offline optimum for this regularizer (``XY``, Eq. 7)
# soft-thresholds each input eigenvalue by ``alpha * sum(eigenvalues)``
# = 0.1 x 13.3 = 1.33: the outputs' covariance should have eigenvalues
# 5 - 1.33, 4 - 1.33, 3 - 1.33 and 0 (the fourth output is silent: there is
# no fourth strong direction).
from neurosim.metrics import output_covariance
from neurosim.models.similarity_matching import offline_output_eigenvalues

Y = net.recorders["y"].to_dataset().activity.isel(batch=0).values     # (time, unit)
late = Y[len(Y) // 2:]                                                 # after learning settled
learned = np.sort(np.linalg.eigvalsh(output_covariance(late)))[::-1]
expected = offline_output_eigenvalues(spectrum, 4, "XY", 0.1)
print("learned :", np.round(learned, 2))
print("expected:", np.round(expected, 2))

# %%
# The learned spectrum is close to the offline optimum (within about 10 %:
# the rates are constant, so the weights keep fluctuating around the
# optimum, and 10 000 samples estimate the covariance) and the fourth
# eigenvalue is zero: the network found the 3-dimensional principal
# subspace by itself. :doc:`tutorial_02_recordings` looks at the
# recording itself.
