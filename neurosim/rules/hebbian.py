"""Hebbian rules: plain, Oja's, and the normalized form of similarity matching."""

from __future__ import annotations

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import plasticity as k
from neurosim.kernels.parallel import use_rule_rows
from neurosim.params import Float, Instance, Name
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

    alpha = Float(low=0.0, doc="regularization coefficient")
    signal = Instance(cls=Signal, live=False, doc="the global signal s")
    rate_variable = Name("mu", live=False, doc="post variable whose inverse is the learning rate")

    def __init__(self, alpha: float, signal: Signal | None = None, rate_variable: str = "mu"):
        super().__init__()
        self.set_params(alpha=alpha, signal=_check_signal(signal), rate_variable=rate_variable)
        self.post_variables = {self.rate_variable: 1.0}

    def signals(self):
        return [self.signal]

    def validate(self, network):
        # without a unit rule updating mu the learning rate stays 1/mu(0) and the weights run away
        post = self.projection.post
        if not any((post.name, self.rate_variable) in r.writes() for r in network.unit_rules):
            raise ValueError(
                f"NormalizedHebbian on projection {self.projection.name!r} divides by {post.name}.{self.rate_variable}, "
                f"but no unit rule updates it; add CumulativeActivity({post.name}, ..., variable={self.rate_variable!r}) "
                "to the network")

    def update_numpy(self):
        p = self.projection
        y, x, w = p.post.activity, p.pre.activity, p.weights
        mu = p.post.state[self.rate_variable]
        alpha = self.value("alpha", p.network.t)
        # Same operation order as the kernel, so both paths agree to the last bit for batch 1.
        decay = (alpha * self.signal.value[:, None] + y * y).sum(axis=0)
        hebb = y.T @ x if y.shape[0] > 1 else np.outer(y[0], x[0])
        w += (hebb - decay[:, None] * w) * (1.0 / mu)[:, None]
        p.enforce_structure()

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        mu = ArrayRef(lambda: p.post.state[self.rate_variable], f"{p.post.name}.{self.rate_variable}")
        return KernelCall(
            k.normalized_hebbian_rows if use_rule_rows(*p.weights.shape) else k.normalized_hebbian,
            (w, post, pre, mu, self.ref("alpha"), self.signal.ref(), p.lateral, self._mask_ref(), p.mask is not None),
            label=f"{p.name}.rule",
        )



class Hebbian(Rule):
    """Plain Hebbian learning with decay: ``W <- (1 - decay) W + rate * mean_b(y x^T)``.

    Parameters
    ----------
    rate : float in (0, 1]
    decay : float in [0, 1)
    """

    rate = Float(0.01, low=0.0, high=1.0, low_open=True, doc="learning rate")
    decay = Float(0.0, low=0.0, high=1.0, high_open=True, doc="weight decay per step")

    def __init__(self, rate: float = 0.01, decay: float = 0.0):
        super().__init__()
        self.set_params(rate=rate, decay=decay)

    def update_numpy(self):
        p = self.projection
        y, x = p.post.activity, p.pre.activity
        t = p.network.t
        p.weights *= 1.0 - self.value("decay", t)
        p.weights += (self.value("rate", t) / y.shape[0]) * (y.T @ x)
        p.enforce_structure()

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        kernel = k.hebbian_rows if use_rule_rows(*p.weights.shape) else k.hebbian
        return KernelCall(kernel, (w, post, pre, self.ref("rate"), self.ref("decay"), p.lateral, self._mask_ref(),
                                   p.mask is not None),
                          label=f"{p.name}.rule", finite=f"{p.name}.weights")


class Oja(Rule):
    """Oja's rule ``W_ij += rate * mean_b y_i (x_j - y_i W_ij)``.

    Parameters
    ----------
    rate : float in (0, 1]
    """

    rate = Float(0.01, low=0.0, high=1.0, low_open=True, doc="learning rate")

    def __init__(self, rate: float = 0.01):
        super().__init__()
        self.set_params(rate=rate)

    def update_numpy(self):
        p = self.projection
        y, x = p.post.activity, p.pre.activity
        yy = (y * y).sum(axis=0)
        p.weights += (self.value("rate", p.network.t) / y.shape[0]) * (y.T @ x - yy[:, None] * p.weights)
        p.enforce_structure()

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        kernel = k.oja_rows if use_rule_rows(*p.weights.shape) else k.oja
        return KernelCall(kernel, (w, post, pre, self.ref("rate"), p.lateral, self._mask_ref(), p.mask is not None),
                          label=f"{p.name}.rule", finite=f"{p.name}.weights")
