"""Hebbian rules: plain, Oja's, and the normalized form of similarity matching."""

from __future__ import annotations

import numpy as np

from neurosim._validation import check_float, check_name_or_none
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import plasticity as k
from neurosim.rules.base import Rule
from neurosim.signals import Signal, Unity

__all__ = ["Hebbian", "Oja", "NormalizedHebbian"]


def _check_signal(signal):
    if signal is None:
        return Unity()
    if not isinstance(signal, Signal):
        raise TypeError(f"signal must be a neurosim Signal (e.g. SquaredNorm(pop)) or None; got {type(signal).__name__}")
    return signal


class NormalizedHebbian(Rule):
    """Similarity-matching plasticity, paper 002 Eq. 19, 21, 24 (forgetting: Eq. 26, 28, 30).

    .. math:: W_{ij} \\leftarrow W_{ij} + \\frac{y_i x_j - (\\alpha s + y_i^2) W_{ij}}{\\mu_i}

    where ``s`` is a global signal (1 for the scale-dependent regularizer
    R_TY, ``||x||^2`` for R_XY, ``||y||^2`` for R_YY) and ``mu`` is the
    post population's cumulative activity, updated earlier in the same
    plasticity phase by :class:`~neurosim.rules.CumulativeActivity`. On the
    feed-forward projection this is Hebbian; on the lateral projection the
    same rule with an inhibitory sign in the dynamics is anti-Hebbian.

    Parameters
    ----------
    alpha : float >= 0
        Regularization coefficient.
    signal : Signal, optional
        The global signal ``s``; ``None`` means the constant 1.
    rate_variable : str
        The post population's per-unit variable whose inverse is the learning rate.
    """

    def __init__(self, alpha: float, signal: Signal | None = None, rate_variable: str = "mu"):
        super().__init__()
        self.alpha = check_float("alpha", alpha, low=0.0)
        self.signal = _check_signal(signal)
        self.rate_variable = check_name_or_none("rate_variable", rate_variable)
        self.post_variables = {self.rate_variable: 1.0}

    def signals(self):
        return [self.signal]

    def update_numpy(self):
        p = self.projection
        y, x, w = p.post.activity, p.pre.activity, p.weights
        mu = p.post.state[self.rate_variable]
        # Same operation order as the kernel, so both paths agree to the last bit for batch 1.
        decay = (self.alpha * self.signal.value[:, None] + y * y).sum(axis=0)
        hebb = y.T @ x if y.shape[0] > 1 else np.outer(y[0], x[0])
        w += (hebb - decay[:, None] * w) * (1.0 / mu)[:, None]
        p.enforce_structure()

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        mu = ArrayRef(lambda: p.post.state[self.rate_variable], f"{p.post.name}.{self.rate_variable}")
        return KernelCall(
            k.normalized_hebbian,
            (w, post, pre, mu, self.alpha, self.signal.ref(), p.lateral, self._mask_ref(), p.mask is not None),
            label=f"{p.name}.rule",
        )

    def params(self):
        return {"rule": "NormalizedHebbian", "alpha": self.alpha, "signal": self.signal.name, "rate_variable": self.rate_variable}


class Hebbian(Rule):
    """Plain Hebbian learning with decay: ``W <- (1 - decay) W + rate * mean_b(y x^T)``.

    Parameters
    ----------
    rate : float in (0, 1]
    decay : float in [0, 1)
    """

    def __init__(self, rate: float = 0.01, decay: float = 0.0):
        super().__init__()
        self.rate = check_float("rate", rate, low=0.0, high=1.0, low_open=True)
        self.decay = check_float("decay", decay, low=0.0, high=1.0, high_open=True)

    def update_numpy(self):
        p = self.projection
        y, x = p.post.activity, p.pre.activity
        p.weights *= 1.0 - self.decay
        p.weights += (self.rate / y.shape[0]) * (y.T @ x)
        p.enforce_structure()

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        return KernelCall(k.hebbian, (w, post, pre, self.rate, self.decay, p.lateral, self._mask_ref(), p.mask is not None),
                          label=f"{p.name}.rule", finite=f"{p.name}.weights")

    def params(self):
        return {"rule": "Hebbian", "rate": self.rate, "decay": self.decay}


class Oja(Rule):
    """Oja's rule ``W_ij += rate * mean_b y_i (x_j - y_i W_ij)``.

    Parameters
    ----------
    rate : float in (0, 1]
    """

    def __init__(self, rate: float = 0.01):
        super().__init__()
        self.rate = check_float("rate", rate, low=0.0, high=1.0, low_open=True)

    def update_numpy(self):
        p = self.projection
        y, x = p.post.activity, p.pre.activity
        yy = (y * y).sum(axis=0)
        p.weights += (self.rate / y.shape[0]) * (y.T @ x - yy[:, None] * p.weights)
        p.enforce_structure()

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        return KernelCall(k.oja, (w, post, pre, self.rate, p.lateral, self._mask_ref(), p.mask is not None),
                          label=f"{p.name}.rule", finite=f"{p.name}.weights")

    def params(self):
        return {"rule": "Oja", "rate": self.rate}
