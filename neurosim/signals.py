"""Global scalar signals: quantities every synapse of a rule can see.

Paper 002 needs ``||x||^2`` (input-output regularizer, Eq. 21) and
``||y||^2`` (squared-output regularizer, Eq. 24), computed once per step and
broadcast to all synapses, "via extracellular space or glia". A signal has
one value per batch sample, shape ``(batch,)``, and is computed after the
dynamics phase, before any rule runs.
"""

from __future__ import annotations

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Component
from neurosim.kernels.plasticity import squared_norm
from neurosim.population import Population

__all__ = ["Signal", "SquaredNorm", "Unity"]


class Signal(Component):
    """Base class; subclasses fill ``self.value`` (shape ``(batch,)``).

    Runs in the plasticity phase at order -20, before unit rules and rules.
    """

    name = "signal"
    params_key = "signal"
    phase = "plasticity"
    order = -20
    # The signal's output, one value per batch sample. It shadows Parametrized.value(name, t), so a
    # signal reads a scheduled parameter with neurosim.params.resolve_value instead.
    value: np.ndarray  # type: ignore[assignment]

    def __init__(self):
        self.value = np.ones(1)

    def bind(self, batch: int):
        if self.value.shape != (batch,):
            self.value = np.ones(batch)

    def compute_numpy(self):
        raise NotImplementedError

    def kernel_call(self):
        """A KernelCall that updates ``value``; ``None`` when there is none."""
        return None

    def kernel_calls(self):
        call = self.kernel_call()
        return None if call is None else [call]

    def step_numpy(self):
        self.compute_numpy()

    @property
    def label(self) -> str:
        return f"signal {self.name!r}"

    def ref(self) -> ArrayRef:  # type: ignore[override]  # the signal's value, not a declared parameter
        return ArrayRef(lambda: self.value, f"signal.{self.name}")

    def params(self) -> dict:
        return {"signal": self.name}


class Unity(Signal):
    """The constant 1: the scale-dependent regularizer's offset ``alpha * 1`` (Eq. 19)."""

    name = "one"

    def compute_numpy(self):
        pass

    def kernel_calls(self):
        return []  # constant: nothing to do on either path


class SquaredNorm(Signal):
    """``||a||^2`` of a population's activity, per batch sample."""

    def __init__(self, population: Population):
        super().__init__()
        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        self.population = population
        self.name = f"sqnorm_{population.name}"

    def populations(self):
        return [self.population]

    def compute_numpy(self):
        a = self.population.activity
        self.value[:] = np.einsum("bi,bi->b", a, a)

    def kernel_call(self):
        return KernelCall(
            squared_norm, (self.ref(), ArrayRef(lambda: self.population.activity, f"{self.population.name}.activity")),
            label=self.name,
        )
