"""Competition by distance: the best-matching unit of self-organising maps and (growing) neural gases."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.dynamics.base import Dynamics
from neurosim.kernels import competitive as k
from neurosim.kernels.parallel import use_rule_rows
from neurosim.synapses import csr_refs

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

    A prototype projection with a mask, or stored sparsely, gives every unit
    a receptive field: its distance sums over its own synapses only,
    ``sum_{j: (i, j) exists} (x_bj - w_ij)^2``, and
    :class:`~neurosim.rules.Kohonen` and :class:`~neurosim.rules.NeuralGas`
    move only those synapses (the coordinates outside the field are not part
    of the unit's prototype, not coordinates at 0). A masked projection and a
    sparse one with the same synapses compute the same bits. Units compete
    on sums of different lengths: one with fewer synapses has fewer terms
    (an empty field has distance 0 and wins every input), so maps of local
    fields usually give every unit as many synapses
    (:class:`~neurosim.connectivity.FixedInDegree`, or a
    :class:`~neurosim.connectivity.Gaussian` field away from the borders).

    A lateral projection onto the population (the edges of a growing neural
    gas, dense or sparse) is allowed and does not enter the competition.
    No parameters.
    """

    sparse_projections = True

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        what = f"BestMatchingUnit dynamics of {self.population.name!r}"
        if len(feedforward) != 1:
            raise ValueError(f"{what} needs exactly one feed-forward projection (the prototypes); "
                             f"got {[p.name for p in feedforward]}")
        if feedforward[0].sign != 1:
            raise ValueError(f"the prototype projection {feedforward[0].name!r} must be excitatory (sign=+1)")
        if len(lateral) > 1:
            raise ValueError(f"{what} takes at most one lateral projection (the edges); got {[p.name for p in lateral]}")
        super().connect(feedforward, lateral)
        self.population.add_variable("distance", 0.0, per_sample=True)

    def step_numpy(self) -> None:
        pop = self.population
        p = self.feedforward[0]
        x, w = p.pre.activity, p.weights
        # coordinate by coordinate, the kernel's order, so both paths give the same distances and winners
        d = np.zeros((x.shape[0], pop.size))
        if p.sparse:
            indptr, indices = p.synapse_index.indptr, p.synapse_index.indices
            degree = np.diff(indptr)
            for r in range(int(degree.max(initial=0))):  # the r-th synapse of every row that has one
                rows = np.flatnonzero(degree > r)
                s = indptr[rows] + r
                diff = x[:, indices[s]] - w[s]
                d[:, rows] += diff * diff
        else:
            for j in range(w.shape[1]):
                diff = x[:, j:j + 1] - w[None, :, j]
                if p.mask is not None:
                    diff = np.where(p.mask[None, :, j], diff, 0.0)
                d += diff * diff
        pop.state["distance"][...] = d
        act = pop.activity
        act[...] = 0.0
        if pop.size:
            act[np.arange(x.shape[0]), np.argmin(d, axis=1)] = 1.0

    def kernel_calls(self) -> list[KernelCall]:
        pop = self.population
        p = self.feedforward[0]
        out = (ArrayRef(lambda: pop.activity, f"{pop.name}.activity"),
               ArrayRef(lambda: pop.state["distance"], f"{pop.name}.distance"),
               ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"))
        if p.sparse:
            rows = use_rule_rows(pop.size, p.n_synapses // max(pop.size, 1))
            return [KernelCall(k.csr_best_matching_unit_rows if rows else k.csr_best_matching_unit,
                               (*out, *csr_refs(p)), label=f"{pop.name}.bmu")]
        w = ArrayRef(lambda: p.weights, f"{p.name}.weights")
        if p.mask is not None:
            mask = ArrayRef(lambda: p.mask, f"{p.name}.mask")  # type: ignore[arg-type, return-value]  # not None here
            return [KernelCall(k.best_matching_unit_masked, (*out, w, mask), label=f"{pop.name}.bmu")]
        return [KernelCall(k.best_matching_unit, (*out, w), label=f"{pop.name}.bmu")]
