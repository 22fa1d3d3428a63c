"""Rules on per-unit variables."""

from __future__ import annotations

from neurosim._validation import check_float, check_name_or_none
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels.plasticity import cumulative_activity
from neurosim.rules.base import UnitRule
from neurosim.rules.hebbian import _check_signal
from neurosim.signals import Signal

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
    population : Population
    alpha : float >= 0
    signal : Signal, optional (``None``: the constant 1)
    beta : float in (0, 1]
    variable : str, name of the per-unit variable (default ``"mu"``)
    init : float > 0, its initial value (also for newborn units)
    """

    def __init__(self, population, alpha: float, signal: Signal | None = None, beta: float = 1.0,
                 variable: str = "mu", init: float = 1.0):
        super().__init__(population)
        self.alpha = check_float("alpha", alpha, low=0.0)
        self.beta = check_float("beta", beta, low=0.0, high=1.0, low_open=True)
        self.signal = _check_signal(signal)
        self.variable = check_name_or_none("variable", variable)
        self.init = check_float("init", init, low=0.0, low_open=True)
        self.variables = {self.variable: self.init}

    def signals(self):
        return [self.signal]

    def update_numpy(self):
        y = self.population.activity
        mu = self.population.state[self.variable]
        mu[:] = self.beta**2 * mu + (self.alpha * self.signal.value[:, None] + y * y).sum(axis=0)

    def kernel_call(self):
        pop = self.population
        return KernelCall(
            cumulative_activity,
            (ArrayRef(lambda: pop.state[self.variable], f"{pop.name}.{self.variable}"),
             ArrayRef(lambda: pop.activity, f"{pop.name}.activity"),
             self.beta**2, self.alpha, self.signal.ref()),
            label=f"{pop.name}.{self.variable}",
        )

    def params(self):
        return {**super().params(), "alpha": self.alpha, "beta": self.beta, "signal": self.signal.name,
                "variable": self.variable, "init": self.init}

