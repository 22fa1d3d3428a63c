"""Rules on per-unit variables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels.plasticity import cumulative_activity
from neurosim.params import Float, Instance, Name
from neurosim.rules.base import UnitRule
from neurosim.rules.hebbian import _check_signal
from neurosim.signals import Signal

if TYPE_CHECKING:
    from neurosim.population import Population

__all__ = ["CumulativeActivity"]


class CumulativeActivity(UnitRule):
    """Cumulative activity ``mu_i <- beta^2 mu_i + alpha s + y_i^2`` (paper 002).

    Eq. 19 (``s = 1``), Eq. 21 (``s = ||x||^2``), Eq. 24 (``s = ||y||^2``),
    with forgetting factor ``beta`` as in Eq. 26, 28, 30 (``beta = 1``: no
    forgetting). ``1 / mu_i`` is the learning rate of unit ``i``'s synapses,
    so the ``beta^2`` decay keeps it from vanishing and lets the weights
    follow non-stationary input.

    Parameters
    ----------
    population : neurosim.Population
        The population whose variable ``variable`` is updated (the output
        population ``y``).
    alpha : float >= 0
        Regularization coefficient (a number or a schedule).
    signal : neurosim.Signal, optional
        The global signal ``s``; ``None``: the constant 1.
    beta : float in (0, 1], default=1.0
        Forgetting factor (1: no forgetting).
    variable : str, default="mu"
        Name of the per-unit variable (default ``"mu"``).
    init : float > 0, default=1.0
        Its initial value, also for newborn units.

    Raises
    ------
    ValueError
        If a parameter is outside its range.
    TypeError
        If ``population`` is not a Population or ``signal`` not a Signal.

    Examples
    --------
    One step by hand, ``mu <- 0.5**2 * 1 + 0.1 * 1 + y**2`` with ``y = [1, 2]``:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network()
    >>> y = ns.Population("y", 2)
    >>> _ = net.add(y, ns.CumulativeActivity(y, alpha=0.1, beta=0.5))
    >>> _ = net.connect(ns.ArrayStream(np.array([[1.0, 2.0]])), y)
    >>> _ = net.run(1)
    >>> np.round(y.state["mu"], 12).tolist()
    [1.35, 4.35]
    """

    alpha = Float(low=0.0, doc="regularization coefficient")
    beta = Float(1.0, low=0.0, high=1.0, low_open=True, schedulable=False, doc="forgetting factor")
    signal = Instance(cls=Signal, live=False, doc="the global signal s")
    variable = Name("mu", live=False, doc="name of the per-unit variable")
    init = Float(1.0, low=0.0, low_open=True, live=False, doc="initial value (also of newborn units)")

    def __init__(self, population: Population, alpha: float, signal: Signal | None = None, beta: float = 1.0,
                 variable: str = "mu", init: float = 1.0) -> None:
        super().__init__(population)
        self.set_params(alpha=alpha, beta=beta, signal=_check_signal(signal), variable=variable, init=init)
        self.variables = {self.variable: self.init}
        self.variable_attrs = {self.variable: {
            "units": "1", "long_name": f"cumulative activity {self.variable} (beta^2 {self.variable} + alpha s + y^2, "
                                       f"the inverse learning rate; paper 002)"}}

    def signals(self) -> list[Signal]:
        return [self.signal]

    def update_numpy(self) -> None:
        y = self.population.activity
        mu = self.population.state[self.variable]
        alpha = self.value("alpha", self.network.t if self.network is not None else None)
        mu[:] = self.beta**2 * mu + (alpha * self.signal.value[:, None] + y * y).sum(axis=0)

    def kernel_call(self) -> KernelCall | None:
        pop = self.population
        return KernelCall(
            cumulative_activity,
            (ArrayRef(lambda: pop.state[self.variable], f"{pop.name}.{self.variable}"),
             ArrayRef(lambda: pop.activity, f"{pop.name}.activity"),
             self.beta**2, self.ref("alpha"), self.signal.ref()),
            label=f"{pop.name}.{self.variable}",
        )

