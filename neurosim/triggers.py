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
    """Holds when any unit's ``variable`` exceeds ``threshold``.

    Parameters
    ----------
    population : neurosim.Population
        The population to watch.
    threshold : float
        Strict lower bound (``value > threshold`` holds).
    variable : str, default="activity"
        A state variable of the population (default its activity).

    Returns
    -------
    neurosim.codegen.KernelCall
        A trigger condition evaluated inside compiled segments.

    Raises
    ------
    TypeError
        If ``population`` is not a Population.
    ValueError
        If the population has no ``variable`` or ``threshold`` is not finite.

    Examples
    --------
    A unit is added each time the input's activity exceeds 1.5 (steps 2 and 4):

    >>> import numpy as np
    >>> import neurosim as ns
    >>> from neurosim.triggers import activity_above
    >>> net = ns.Network()
    >>> x, y = ns.Population("x", 1), ns.Population("y", 1, dynamics=ns.Linear())
    >>> _ = net.add(x, y, ns.Projection("W", x, y))
    >>> _ = net.connect(ns.ArrayStream(np.array([[1.0], [2.0], [1.0], [3.0]])), x)
    >>> grow = ns.Trigger(activity_above(x, 1.5), lambda n: ns.Birth(y, 1), name="grow")
    >>> _ = net.add(grow)
    >>> _ = net.run(4)
    >>> y.size, net.event_log.step
    (3, [2, 4])
    """
    return KernelCall(k.any_above, (_var_ref(population, variable), check_float("threshold", threshold)))


def variable_mean_below(population: Population, variable: str, threshold: float) -> KernelCall:
    """Holds when the mean of ``variable`` over units (and batch) is below ``threshold``.

    Parameters
    ----------
    population : neurosim.Population
        The population to watch.
    variable : str
        A state variable of the population.
    threshold : float
        Strict upper bound (``mean < threshold`` holds).

    Returns
    -------
    neurosim.codegen.KernelCall
        As :func:`activity_above`: a condition evaluated inside compiled segments.

    Raises
    ------
    TypeError, ValueError
        As :func:`activity_above`.
    """
    return KernelCall(k.mean_below, (_var_ref(population, variable), check_float("threshold", threshold)))


def every_step() -> KernelCall:
    """Always holds; combine with ``Trigger(every=n)`` for periodic events.

    Returns
    -------
    neurosim.codegen.KernelCall
        A trigger condition evaluated inside compiled segments.
    """
    return KernelCall(k.always, ())
