"""Projections: dense synaptic weights from a pre- to a post-population.

``weights[i, j]`` is the synapse from pre unit ``j`` onto post unit ``i``
(post x pre, the layout of a matrix acting on activity vectors). A lateral
projection (pre is post) has no self-synapses: its diagonal is held at zero
by construction and by every rule. An optional boolean ``mask`` restricts
connectivity; weights outside it stay zero.
"""

from __future__ import annotations

import numpy as np

from neurosim._validation import check_array, check_float
from neurosim.population import Population, check_name

__all__ = ["Projection", "Initializer", "Normal", "Uniform", "Constant"]


class Initializer:
    """Draws initial weights; called for the whole matrix and for newborn rows/columns."""

    def __call__(self, rng: np.random.Generator, shape: tuple) -> np.ndarray:
        raise NotImplementedError

    def params(self) -> dict:
        return {"init": type(self).__name__}


class Normal(Initializer):
    """Gaussian weights with mean ``mean`` and standard deviation ``std``."""

    def __init__(self, std: float = 0.1, mean: float = 0.0):
        self.std = check_float("std", std, low=0.0)
        self.mean = check_float("mean", mean)

    def __call__(self, rng, shape):
        return self.mean + self.std * rng.standard_normal(shape)

    def params(self):
        return {"init": "Normal", "init_std": self.std, "init_mean": self.mean}


class Uniform(Initializer):
    """Uniform weights on ``[low, high)``."""

    def __init__(self, low: float = -0.1, high: float = 0.1):
        self.low = check_float("low", low)
        self.high = check_float("high", high)
        if self.high < self.low:
            raise ValueError(f"high must be >= low; got low={low}, high={high}")

    def __call__(self, rng, shape):
        return rng.uniform(self.low, self.high, size=shape)

    def params(self):
        return {"init": "Uniform", "init_low": self.low, "init_high": self.high}


class Constant(Initializer):
    """All weights equal ``value``."""

    def __init__(self, value: float = 0.0):
        self.value = check_float("value", value)

    def __call__(self, rng, shape):
        return np.full(shape, self.value)

    def params(self):
        return {"init": "Constant", "init_value": self.value}


class Projection:
    """Dense synapses ``pre -> post`` with at most one plasticity rule.

    Parameters
    ----------
    name : str
        Identifier, unique within a network.
    pre, post : Population
        Source and target. ``pre is post`` makes a lateral projection.
    sign : {+1, -1}
        Excitatory (+1) or inhibitory (-1): the drive onto ``post`` is
        ``sign * weights @ pre.activity``.
    init : Initializer or array_like, optional
        Initial weights; an array must have shape ``(post.size, pre.size)``.
        Default ``Normal(0.1)``. Newborn units get rows/columns from an
        Initializer, or zeros when ``init`` was an array.
    mask : array_like of bool, optional
        Connectivity, shape ``(post.size, pre.size)``; newborn units are
        fully connected (but for self-synapses).
    rule : neurosim.rules.Rule, optional
        The plasticity rule updating ``weights``.
    """

    def __init__(self, name: str, pre: Population, post: Population, *, sign: int = 1, init=None, mask=None, rule=None):
        self.name = check_name("projection", name)
        for label, pop in (("pre", pre), ("post", post)):
            if not isinstance(pop, Population):
                raise TypeError(f"{label} must be a Population; got {type(pop).__name__}")
        if sign not in (1, -1) or isinstance(sign, bool):
            raise ValueError(f"sign must be +1 (excitatory) or -1 (inhibitory); got {sign!r}")
        self.pre, self.post, self.sign = pre, post, int(sign)
        self.lateral = pre is post
        shape = (post.size, pre.size)
        if init is None:
            init = Normal(0.1)
        if isinstance(init, Initializer):
            self.initializer = init
            self._init_array = None
        else:
            self.initializer = Constant(0.0)
            self._init_array = check_array("init", init, shape=shape)
        self.mask = None if mask is None else np.ascontiguousarray(check_array("mask", mask, shape=shape, dtype=np.bool_))
        if self.mask is not None and self.lateral:
            np.fill_diagonal(self.mask, False)
        self.weights = np.zeros(shape)
        self.rule = None
        self.network = None
        if rule is not None:
            from neurosim.rules.base import Rule

            if not isinstance(rule, Rule):
                raise TypeError(f"rule must be a neurosim Rule instance; got {type(rule).__name__}")
            if rule.projection is not None:
                raise ValueError("this Rule object is already attached to another projection")
            rule.projection = self
            self.rule = rule

    def materialize(self, rng: np.random.Generator):
        """Draw the initial weights (done once, when the network adds the projection)."""
        shape = (self.post.size, self.pre.size)
        w = self._init_array.copy() if self._init_array is not None else np.asarray(self.initializer(rng, shape), float)
        self.weights = np.ascontiguousarray(w)
        self.enforce_structure()

    def enforce_structure(self):
        """Zero the weights that the connectivity forbids (self-synapses, masked-out)."""
        if self.lateral:
            np.fill_diagonal(self.weights, 0.0)
        if self.mask is not None:
            self.weights[~self.mask] = 0.0

    # -- structural change -------------------------------------------------------
    def _grow(self, pop: Population, n: int, rng: np.random.Generator):
        old_post, old_pre = self.weights.shape
        if pop is self.post:
            rows = np.asarray(self.initializer(rng, (n, self.weights.shape[1])), float)
            self.weights = np.concatenate([self.weights, rows], axis=0)
            if self.mask is not None:
                self.mask = np.concatenate([self.mask, np.ones((n, self.mask.shape[1]), bool)], axis=0)
        if pop is self.pre:
            cols = np.asarray(self.initializer(rng, (self.weights.shape[0], n)), float)
            self.weights = np.concatenate([self.weights, cols], axis=1)
            if self.mask is not None:
                self.mask = np.concatenate([self.mask, np.ones((self.mask.shape[0], n), bool)], axis=1)
        self.weights = np.ascontiguousarray(self.weights)
        if self.mask is not None:
            if self.lateral:
                np.fill_diagonal(self.mask, False)
            self.mask = np.ascontiguousarray(self.mask)
        self.enforce_structure()

    def _shrink(self, pop: Population, index: np.ndarray):
        if pop is self.post:
            self.weights = np.delete(self.weights, index, axis=0)
            if self.mask is not None:
                self.mask = np.delete(self.mask, index, axis=0)
        if pop is self.pre:
            self.weights = np.delete(self.weights, index, axis=1)
            if self.mask is not None:
                self.mask = np.delete(self.mask, index, axis=1)
        self.weights = np.ascontiguousarray(self.weights)
        if self.mask is not None:
            self.mask = np.ascontiguousarray(self.mask)

    def _restore(self, weights: np.ndarray, mask):
        """Put back arrays saved earlier from this projection (undoing a failed step); no checks."""
        self.__dict__["weights"] = weights
        self.__dict__["mask"] = mask

    def params(self) -> dict:
        out = {"pre": self.pre.name, "post": self.post.name, "sign": self.sign, **self.initializer.params()}
        if self.rule is not None:
            out.update({f"rule.{k}": v for k, v in self.rule.params().items()})
        return out

    def __repr__(self) -> str:
        rule = type(self.rule).__name__ if self.rule is not None else None
        return f"Projection({self.name!r}, {self.pre.name} -> {self.post.name}, sign={self.sign:+d}, rule={rule})"
