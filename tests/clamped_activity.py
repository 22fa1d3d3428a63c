"""Post activity copied from another population: a teacher signal, and the same activity for two storages.

Rules tests clamp a population to a fixed code (the delta rule's target).

A projection's drive sums in another order on sparse synapses than BLAS does
on a dense matrix, so ``y = W x`` differs by rounding between the storages;
with the post activity clamped to an input, the sparse projection and the
masked dense one see the same ``post`` and ``pre`` at every step, and their
weights can be compared bit for bit.
"""

import numpy as np

import neurosim as ns
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels.dense import copy_2d


class Clamp(ns.Dynamics):
    """Activity copied from ``source`` (an input population); the projections onto the population are ignored."""

    sparse_projections = True

    def __init__(self, source):
        super().__init__()
        self.source = source

    def step_numpy(self):
        self.population.activity[:] = self.source.activity

    def kernel_calls(self):
        pop, src = self.population, self.source
        return [KernelCall(copy_2d, (ArrayRef(lambda: pop.activity, f"{pop.name}.activity"),
                                     ArrayRef(lambda: src.activity, f"{src.name}.activity")))]


def data(steps, batch, n, seed, scale=1.0):
    """``(steps, batch, n)`` Gaussian inputs for an ``ArrayStream`` (the same in both networks and the oracle)."""
    return scale * np.random.default_rng(seed).standard_normal((steps, batch, n))


def at_synapses(dense_proj):
    """A masked dense projection's weights at its synapses, in synapse order (row by row)."""
    return dense_proj.weights[dense_proj.mask]
