"""Ready-made trigger conditions that run inside compiled segments.

Each returns a :class:`~neurosim.codegen.KernelCall` to pass as a
:class:`~neurosim.events.Trigger` condition.
"""

from __future__ import annotations

from neurosim._validation import check_float
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import triggers as k
from neurosim.population import Population

__all__ = ["activity_above", "variable_mean_below", "every_step"]


def _var_ref(pop: Population, variable: str) -> ArrayRef:
    if not isinstance(pop, Population):
        raise TypeError(f"population must be a Population; got {type(pop).__name__}")
    if variable not in pop.state:
        raise ValueError(f"population {pop.name!r} has no variable {variable!r}; it has {sorted(pop.state)}")
    return ArrayRef(lambda: pop.state[variable], f"{pop.name}.{variable}")


def activity_above(population: Population, threshold: float, variable: str = "activity") -> KernelCall:
    """Holds when any unit's ``variable`` exceeds ``threshold``."""
    return KernelCall(k.any_above, (_var_ref(population, variable), check_float("threshold", threshold)))


def variable_mean_below(population: Population, variable: str, threshold: float) -> KernelCall:
    """Holds when the mean of ``variable`` over units (and batch) is below ``threshold``."""
    return KernelCall(k.mean_below, (_var_ref(population, variable), check_float("threshold", threshold)))


def every_step() -> KernelCall:
    """Always holds; combine with ``Trigger(every=n)`` for periodic events."""
    return KernelCall(k.always, ())
