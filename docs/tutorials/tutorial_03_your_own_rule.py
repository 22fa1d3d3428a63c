"""
3. Your own plasticity rule
===========================

A rule is one function on arrays, made a rule class by
:func:`neurosim.local_rule`. The function is compiled by numba and inlined
in the engine's segments (no Python per step); called uncompiled on NumPy
arrays it is its own reference implementation. Its declared parameters are
validated, live (assignable between runs) and schedulable.
"""

# %%
# An anti-Hebbian rule
# --------------------
# ``W_ij -= rate * mean_b y_i x_j`` on a lateral projection decorrelates the
# outputs (Földiák's lateral inhibition). The function receives the
# projection's ``weights`` (updated in place), the post and pre activity
# ``(batch, units)`` and the declared parameters.
import numpy as np

import neurosim as ns
from neurosim.params import Float


@ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)})
def AntiHebbian(weights, post, pre, rate):
    """W_ij -= rate * mean_b y_i x_j: decorrelating lateral inhibition."""
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            acc = 0.0
            for b in range(post.shape[0]):
                acc += post[b, i] * pre[b, j]
            weights[i, j] -= rate * acc / post.shape[0]


print(AntiHebbian(rate=0.005))

# %%
# Parameters are checked when the rule is made:
try:
    AntiHebbian(rate=2.0)
except ValueError as err:
    print("ValueError:", err)

# %%
# Using it
# --------
# Eight inputs with correlated components (one direction carries most of the
# variance) feed eight outputs one to one
# (identity weights, no learning); the lateral projection ``M`` learns with
# the new rule. ``sign=+1`` because the rule itself makes the weights
# negative. We record the outputs before and after learning.
net = ns.Network(seed=0)
x, y = ns.Population("x", 8), ns.Population("y", 8, dynamics=ns.Jacobi(tol=1e-8, max_iter=500))
net.add(x, y)
net.connect(ns.GaussianStream(np.r_[3.0, 1.0, np.full(6, 0.2)], seed=1, eigenvectors="random"), x)
net.add(ns.Projection("F", x, y, init=ns.Constant(0.0)))
net["F"].weights = np.eye(8)
net.add(ns.Projection("M", y, y, sign=+1, init=ns.Constant(0.0), rule=AntiHebbian(rate=0.005)))
net.record(y, ["activity"], every=1)
print(net.schedule())


def mean_abs_correlation(ds, start, stop):
    Y = ds.activity.isel(batch=0).sel(time=slice(start, stop)).values
    C = np.corrcoef(Y.T)
    return np.abs(C[~np.eye(len(C), dtype=bool)]).mean()


net.run(5_000)
net["M"].rule.rate = 0.001      # live parameter: takes effect from the next step
net.run(5_000)
ds = net.recorders["y"].to_dataset()
print("mean |correlation| between outputs, first 500 steps:", round(mean_abs_correlation(ds, 0, 500), 3))
print("mean |correlation| between outputs, last 2000 steps:", round(mean_abs_correlation(ds, 8_000, 10_000), 3))

# %%
# The inputs arrive correlated (random eigenvectors mix the 8 variances),
# so the outputs start correlated (mean absolute correlation about 0.07);
# the learned lateral inhibition removes most of it (about 0.01). The same function, uncompiled, is the rule's NumPy reference:
W = np.zeros((2, 2))
AntiHebbian.kernel.py_func(W, np.array([[1.0, 2.0]]), np.array([[1.0, 2.0]]), 0.5)
print(W)     # -0.5 * y y^T (the engine zeroes a lateral diagonal afterwards)

# %%
# :doc:`/rules` lists the ready-made rules (``Sanger``, ``OjaSubspace``,
# ``BCM``, ``Foldiak``, ``Delta``, each written this way) and the full
# ``Rule`` interface for rules that need more than one function.
