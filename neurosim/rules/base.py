"""Local plasticity rules.

A :class:`Rule` updates one projection's weights from what is local to each
synapse: pre activity, post activity, per-unit variables it declares on the
post population (e.g. ``mu``), and global scalar :mod:`signals <neurosim.signals>`
it declares. A :class:`UnitRule` updates per-unit variables of one population
(e.g. the cumulative activity ``mu``). In the plasticity phase every unit
rule runs first, then every projection rule, each in the order added, so a
projection rule always sees this step's unit variables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim.codegen import ArrayRef
from neurosim.component import Component
from neurosim.kernels.parallel import use_rule_rows

if TYPE_CHECKING:
    from neurosim.codegen import KernelCall
    from neurosim.network import Network
    from neurosim.population import Population
    from neurosim.signals import Signal
    from neurosim.synapses import Projection

__all__ = ["Rule", "UnitRule"]


class _OneKernel(Component):
    """A component whose step is one kernel (``kernel_call``) with a NumPy reference (``update_numpy``)."""

    def update_numpy(self) -> None:
        """Reference per-step update in NumPy (the per-step path).

        Raises
        ------
        NotImplementedError
            In the base class.
        """
        raise NotImplementedError

    def kernel_call(self) -> KernelCall | None:
        """The compiled per-step update.

        Returns
        -------
        neurosim.codegen.KernelCall or None
            ``None`` when there is no kernel (the network then steps the
            rule with :meth:`update_numpy`).
        """
        return None

    def kernel_calls(self) -> list[KernelCall] | None:
        call = self.kernel_call()
        return None if call is None else [call]

    def step_numpy(self) -> None:
        self.update_numpy()


class Rule(_OneKernel):
    """Base class of weight-updating rules attached to a :class:`~neurosim.synapses.Projection`.

    Runs in the plasticity phase at order 0, after signals (-20) and unit
    rules (-10). Subclasses implement :meth:`update_numpy` and, for the
    compiled path, :meth:`kernel_call`; parameters are declared as class
    attributes (:mod:`neurosim.params`). :func:`neurosim.rules.local_rule`
    makes a rule from one plain function.

    Attributes
    ----------
    projection : neurosim.Projection
        The projection the rule updates (``None`` until a projection takes
        the rule).
    post_variables : dict
        ``{name: initial value}`` of per-unit variables the rule reads on the
        post population; the network declares them when the projection is
        added.
    """

    params_key = "rule"
    phase = "plasticity"
    order = 0
    #: names of per-unit variables the rule reads on the post population, with initial values
    post_variables: dict = {}
    #: ``{variable: {"units": ..., "long_name": ...}}`` for those variables' recordings (defaults: see
    #: :meth:`~neurosim.population.Population.variable_attrs`)
    variable_attrs: dict = {}

    def __init__(self) -> None:
        # None until a Projection takes the rule (Projection(rule=...)); a rule runs only attached, so
        # its methods read self.projection as a Projection
        self.projection: Projection = None  # type: ignore[assignment]

    def signals(self) -> list[Signal]:
        """Global signals the rule reads.

        Returns
        -------
        list of neurosim.Signal
            Computed by the network before the rule runs (empty by default).
        """
        return []

    def network_of(self) -> Network | None:
        return None if self.projection is None else self.projection.network

    @property
    def label(self) -> str:
        name = self.projection.name if self.projection is not None else "?"
        return f"{type(self).__name__} on projection {name!r}"

    def populations(self) -> list[Population]:
        p = self.projection
        return [] if p is None else [p.pre, p.post]

    def projections(self) -> list:
        return ([] if self.projection is None else [self.projection]) + [
            q for q in super().projections() if q is not self.projection]

    # helpers for subclasses
    def _refs(self):
        p = self.projection
        return (
            ArrayRef(lambda: p.weights, f"{p.name}.weights"),
            ArrayRef(lambda: p.post.activity, f"{p.post.name}.activity"),
            ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"),
        )

    def _mask_ref(self):
        p = self.projection
        return ArrayRef(lambda: p.mask if p.mask is not None else _NO_MASK, f"{p.name}.mask")

    def _use_rows(self) -> bool:
        """Whether the update should run row-parallel now (sparse: as a dense matrix of as many synapses).

        :func:`neurosim.kernels.parallel.use_rule_rows` on the weight matrix,
        or on ``n_post`` rows of the mean in-degree.
        """
        p = self.projection
        if p.sparse:
            return use_rule_rows(p.shape[0], p.n_synapses // max(p.shape[0], 1))
        return use_rule_rows(*p.weights.shape)

    def _synapse_hebb(self) -> tuple[np.ndarray, np.ndarray]:
        """``(post, hebb)`` of a sparse projection: each synapse's post position and ``sum_b y_i x_j`` (NumPy).

        The per-synapse form of ``y.T @ x`` that the sparse references of
        the Hebbian rules share.
        """
        p = self.projection
        post, pre = p.synapse_index.pairs()
        y, x = p.post.activity, p.pre.activity
        return post, np.einsum("bs,bs->s", y[:, post], x[:, pre]) if y.shape[0] > 1 else y[0, post] * x[0, pre]


class UnitRule(_OneKernel):
    """Base class of rules that update per-unit variables of one population (plasticity phase, order -10).

    Added to a network with :meth:`neurosim.Network.add`; it runs before
    every projection rule, so those see this step's values.

    Parameters
    ----------
    population : neurosim.Population
        The population whose variables the rule updates.

    Raises
    ------
    TypeError
        If ``population`` is not a Population.
    """

    params_key = "rule"
    phase = "plasticity"
    order = -10

    def __init__(self, population: Population) -> None:
        from neurosim.population import Population

        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        self.population = population
        self.network: Network | None = None

    #: variables declared on the population, with initial values
    variables: dict = {}
    #: ``{variable: {"units": ..., "long_name": ...}}`` for those variables' recordings
    variable_attrs: dict = {}

    def signals(self) -> list[Signal]:
        """Global signals the rule reads.

        Returns
        -------
        list of neurosim.Signal
            Computed by the network before the rule runs (empty by default).
        """
        return []

    def network_of(self) -> Network | None:
        return self.network

    @property
    def label(self) -> str:
        return f"{type(self).__name__} on population {self.population.name!r}"

    def populations(self) -> list[Population]:
        return [self.population]

    def writes(self) -> set[tuple[str, str]]:
        """What this rule updates.

        Returns
        -------
        set of tuple of str
            ``{(population name, variable)}``.
        """
        return {(self.population.name, v) for v in self.variables}

    def params(self) -> dict[str, Any]:
        """The rule's declared parameters and its population's name.

        Returns
        -------
        dict
            ``{name: value}`` of the declared parameters, plus ``"population"``.
        """
        return {**super().params(), "population": self.population.name}


import numpy as _np  # noqa: E402

_NO_MASK = _np.ones((1, 1), dtype=_np.bool_)
