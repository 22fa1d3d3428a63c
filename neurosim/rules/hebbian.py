"""Hebbian rules: plain, Oja's, and the normalized form of similarity matching."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import plasticity as k
from neurosim.kernels import sparse as ks
from neurosim.params import Float, Instance, Name
from neurosim.rules.base import Rule
from neurosim.signals import Signal, Unity
from neurosim.synapses import csr_refs

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["Hebbian", "Oja", "NormalizedHebbian"]


def _check_signal(signal: Signal | None) -> Signal:
    if signal is None:
        return Unity()
    if not isinstance(signal, Signal):
        raise TypeError(f"signal must be a neurosim Signal (e.g. SquaredNorm(pop)) or None; got {type(signal).__name__}")
    return signal


def _rule_kernel_call(rule: Rule, dense: tuple, sparse: tuple, params: tuple, finite: bool = True) -> KernelCall:
    """The call of ``rule``'s kernel: ``(serial, row-parallel)`` of ``sparse`` or ``dense`` (the storage).

    The kernels take ``(weights, [indptr, indices,] post, pre, *params[, lateral, mask, use_mask])``: the
    compressed rows of a sparse projection, the structure of a dense one; with ``finite`` the segment tests the
    weights.
    """
    p = rule.projection
    w, post, pre = rule._refs()
    rows = rule._use_rows()
    if p.sparse:
        indptr, indices, _ = csr_refs(p)
        kernel, args = sparse[rows], (w, indptr, indices, post, pre, *params)
    else:
        kernel, args = dense[rows], (w, post, pre, *params, p.lateral, rule._mask_ref(), p.mask is not None)
    return KernelCall(kernel, args, label=f"{p.name}.rule", finite=f"{p.name}.weights" if finite else None)


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
    rate_variable : str, default="mu"
        The post population's per-unit variable whose inverse is the learning rate.

    Raises
    ------
    ValueError
        If ``alpha < 0``, or (at validation) no unit rule updates
        ``rate_variable`` on the post population.
    TypeError
        If ``signal`` is not a Signal.

    See Also
    --------
    neurosim.models.similarity_matching.build_network : the whole circuit.

    Examples
    --------
    >>> import neurosim as ns
    >>> x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Jacobi())
    >>> rule = ns.NormalizedHebbian(alpha=0.1, signal=ns.SquaredNorm(x))
    >>> rule.params()["alpha"], rule.post_variables
    (0.1, {'mu': 1.0})
    """

    sparse_projections = True

    alpha = Float(low=0.0, doc="regularization coefficient")
    signal = Instance(cls=Signal, live=False, doc="the global signal s")
    rate_variable = Name("mu", live=False, doc="post variable whose inverse is the learning rate")

    def __init__(self, alpha: float, signal: Signal | None = None, rate_variable: str = "mu") -> None:
        super().__init__()
        self.set_params(alpha=alpha, signal=_check_signal(signal), rate_variable=rate_variable)
        self.post_variables = {self.rate_variable: 1.0}

    def signals(self) -> list[Signal]:
        return [self.signal]

    def validate(self, network: Network) -> None:
        # without a unit rule updating mu the learning rate stays 1/mu(0) and the weights run away
        post = self.projection.post
        if not any((post.name, self.rate_variable) in r.writes() for r in network.unit_rules):
            raise ValueError(
                f"NormalizedHebbian on projection {self.projection.name!r} divides by {post.name}.{self.rate_variable}, "
                f"but no unit rule updates it; add CumulativeActivity({post.name}, ..., variable={self.rate_variable!r}) "
                "to the network")

    def update_numpy(self) -> None:
        p = self.projection
        y, x, w = p.post.activity, p.pre.activity, p.weights
        mu = p.post.state[self.rate_variable]
        alpha = self.value("alpha", p.network.t if p.network is not None else None)
        # Same operation order as the kernel, so both paths agree to the last bit for batch 1.
        decay = (alpha * self.signal.value[:, None] + y * y).sum(axis=0)
        if p.sparse:
            post, hebb = self._synapse_hebb()
            w += (hebb - decay[post] * w) * (1.0 / mu)[post]
            return
        hebb = y.T @ x if y.shape[0] > 1 else np.outer(y[0], x[0])
        w += (hebb - decay[:, None] * w) * (1.0 / mu)[:, None]
        p.enforce_structure()

    def kernel_call(self) -> KernelCall | None:
        p = self.projection
        mu = ArrayRef(lambda: p.post.state[self.rate_variable], f"{p.post.name}.{self.rate_variable}")
        return _rule_kernel_call(self, (k.normalized_hebbian, k.normalized_hebbian_rows),
                                 (ks.csr_normalized_hebbian, ks.csr_normalized_hebbian_rows),
                                 (mu, self.ref("alpha"), self.signal.ref()), finite=False)



class Hebbian(Rule):
    """Plain Hebbian learning with decay: ``W <- (1 - decay) W + rate * mean_b(y x^T)``.

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate (a number or a :mod:`~neurosim.schedules` schedule).
    decay : float in [0, 1), default=0.0
        Fraction of every weight lost per step.

    Raises
    ------
    ValueError
        If ``rate`` or ``decay`` is outside its range.

    Examples
    --------
    One step by hand: ``W = 0.5 * 0 + 0.1 * y x^T`` with ``x = [1, 2]``,
    ``y = W0 x``:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network()
    >>> x, y = ns.Population("x", 2), ns.Population("y", 1, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y, init=ns.Constant(1.0), rule=ns.Hebbian(rate=0.1, decay=0.5))
    >>> _ = net.add(x, y, W)
    >>> _ = net.connect(ns.ArrayStream(np.array([[1.0, 2.0]])), x)
    >>> _ = net.run(1)
    >>> W.weights.tolist()  # 0.5 * 1 + 0.1 * 3 * [1, 2]
    [[0.8, 1.1]]
    """

    sparse_projections = True

    rate = Float(0.01, low=0.0, high=1.0, low_open=True, doc="learning rate")
    decay = Float(0.0, low=0.0, high=1.0, high_open=True, doc="weight decay per step")

    def __init__(self, rate: float = 0.01, decay: float = 0.0) -> None:
        super().__init__()
        self.set_params(rate=rate, decay=decay)

    def update_numpy(self) -> None:
        p = self.projection
        y, x = p.post.activity, p.pre.activity
        t = p.network.t if p.network is not None else None
        p.weights *= 1.0 - self.value("decay", t)
        if p.sparse:
            p.weights += (self.value("rate", t) / y.shape[0]) * self._synapse_hebb()[1]
            return
        p.weights += (self.value("rate", t) / y.shape[0]) * (y.T @ x)
        p.enforce_structure()

    def kernel_call(self) -> KernelCall | None:
        return _rule_kernel_call(self, (k.hebbian, k.hebbian_rows), (ks.csr_hebbian, ks.csr_hebbian_rows),
                                 (self.ref("rate"), self.ref("decay")))


class Oja(Rule):
    """Oja's rule ``W_ij += rate * mean_b y_i (x_j - y_i W_ij)``.

    With linear output units it drives each row of ``W`` to unit norm along
    the principal eigenvector of the input covariance (one unit; more
    units all find the same one: use :class:`~neurosim.rules.standard.OjaSubspace`
    or :class:`~neurosim.rules.standard.Sanger` for several).

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate (a number or a :mod:`~neurosim.schedules` schedule).

    Raises
    ------
    ValueError
        If ``rate`` is outside ``(0, 1]``.

    Examples
    --------
    The weights of one linear unit converge to the leading principal axis
    of a Gaussian input with variances 4 and 1:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network(seed=0)
    >>> x, y = ns.Population("x", 2), ns.Population("y", 1, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y, init=ns.Constant(0.5), rule=ns.Oja(rate=0.01))
    >>> _ = net.add(x, y, W)
    >>> _ = net.connect(ns.GaussianStream([4.0, 1.0], seed=1), x)
    >>> _ = net.run(3000)
    >>> print(np.round(np.abs(W.weights), 1), round(float(np.linalg.norm(W.weights)), 1))
    [[1. 0.]] 1.0
    """

    sparse_projections = True

    rate = Float(0.01, low=0.0, high=1.0, low_open=True, doc="learning rate")

    def __init__(self, rate: float = 0.01) -> None:
        super().__init__()
        self.set_params(rate=rate)

    def update_numpy(self) -> None:
        p = self.projection
        y, x = p.post.activity, p.pre.activity
        yy = (y * y).sum(axis=0)
        rate = self.value("rate", p.network.t if p.network is not None else None)
        if p.sparse:
            post, hebb = self._synapse_hebb()
            p.weights += (rate / y.shape[0]) * (hebb - yy[post] * p.weights)
            return
        p.weights += (rate / y.shape[0]) * (y.T @ x - yy[:, None] * p.weights)
        p.enforce_structure()

    def kernel_call(self) -> KernelCall | None:
        return _rule_kernel_call(self, (k.oja, k.oja_rows), (ks.csr_oja, ks.csr_oja_rows), (self.ref("rate"),))
