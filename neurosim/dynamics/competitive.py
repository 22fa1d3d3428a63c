"""Competition by distance: the best-matching unit of self-organising maps and (growing) neural gases."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.dynamics.base import Dynamics
from neurosim.kernels.competitive import best_matching_unit

if TYPE_CHECKING:
    from neurosim.synapses import Projection

__all__ = ["BestMatchingUnit"]


class BestMatchingUnit(Dynamics):
    """Winner-take-all by Euclidean distance: the unit whose prototype is nearest the input fires.

    The prototypes are the rows of the population's one excitatory
    feed-forward projection (``weights[i]``: unit ``i``'s point in input
    space). Each step sets

    * ``distance[b, i] = ||x_b - w_i||^2`` (a per-sample variable, squared
      Euclidean distance, summed coordinate by coordinate), which the rules
      of the family read (ranks, second winner, accumulated error), and
    * ``activity[b]`` one-hot on the first unit of smallest distance
      (Kohonen's best-matching unit; all zeros while the population is empty).

    A lateral projection onto the population (the edges of a growing neural
    gas, dense or sparse) is allowed and does not enter the competition;
    the prototypes must be dense. No parameters.
    """

    #: a sparse lateral projection (the edges) is allowed; a sparse prototype projection is refused in connect
    sparse_projections = True

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        what = f"BestMatchingUnit dynamics of {self.population.name!r}"
        if len(feedforward) != 1:
            raise ValueError(f"{what} needs exactly one feed-forward projection (the prototypes); "
                             f"got {[p.name for p in feedforward]}")
        if feedforward[0].sign != 1:
            raise ValueError(f"the prototype projection {feedforward[0].name!r} must be excitatory (sign=+1)")
        if feedforward[0].sparse:
            raise ValueError(f"{what} reads the prototypes as dense rows; projection {feedforward[0].name!r} stores "
                             "its synapses sparsely (build it without connectivity=, or with storage='dense')")
        if len(lateral) > 1:
            raise ValueError(f"{what} takes at most one lateral projection (the edges); got {[p.name for p in lateral]}")
        super().connect(feedforward, lateral)
        self.population.add_variable("distance", 0.0, per_sample=True)

    def step_numpy(self) -> None:
        pop = self.population
        p = self.feedforward[0]
        x, w = p.pre.activity, p.weights
        # coordinate by coordinate, the kernel's order, so both paths give the same distances and winners
        d = np.zeros((x.shape[0], w.shape[0]))
        for k in range(w.shape[1]):
            diff = x[:, k:k + 1] - w[None, :, k]
            d += diff * diff
        pop.state["distance"][...] = d
        act = pop.activity
        act[...] = 0.0
        if w.shape[0]:
            act[np.arange(x.shape[0]), np.argmin(d, axis=1)] = 1.0

    def kernel_calls(self) -> list[KernelCall]:
        pop = self.population
        p = self.feedforward[0]
        return [KernelCall(best_matching_unit, (
            ArrayRef(lambda: pop.activity, f"{pop.name}.activity"),
            ArrayRef(lambda: pop.state["distance"], f"{pop.name}.distance"),
            ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"),
            ArrayRef(lambda: p.weights, f"{p.name}.weights")), label=f"{pop.name}.bmu")]
