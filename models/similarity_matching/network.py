"""Online self-calibrating similarity-matching networks (paper 002, Sections IV-V).

The circuit (Fig. 3): an input population ``x`` (n units, driven by a
stream), an output population ``y`` (k units) with per-unit cumulative
activity ``mu``, a Hebbian feed-forward projection ``W`` (``x -> y``), an
anti-Hebbian lateral projection ``M`` (``y -> y``, inhibitory, no
self-synapses) and, for the self-calibrating regularizers, a global signal:

========  =====================  ==========================  =================
name      regularizer            signal ``s`` in the rules   equations
========  =====================  ==========================  =================
``TY``    scale-dependent R_TY   1                           19 / 26
``XY``    input-output R_XY      ``||x||^2``                 21 / 28
``YY``    squared-output R_YY    ``||y||^2``                 24 / 30
========  =====================  ==========================  =================

Each step: the Jacobi dynamics (Eq. 17) relaxes ``y``; then
``mu <- beta^2 mu + alpha s + y^2`` and both projections learn
``W_ij += (y_i x_j - (alpha s + y_i^2) W_ij) / mu_i``. Everything here is
assembled from neurosim's public entities; nothing is specific to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import neurosim as ns
from neurosim._validation import check_choice, check_float, check_int
from neurosim.metrics import neural_filter
from neurosim.models.circuit import Circuit

__all__ = ["REGULARIZERS", "SimilarityMatchingCircuit", "build_network"]

REGULARIZERS = ("TY", "XY", "YY")


@dataclass
class SimilarityMatchingCircuit(Circuit):
    """The built network and handles to its parts.

    Parameters
    ----------
    network : neurosim.Network
        The circuit.
    x : neurosim.Population
        Input units, driven by the stream.
    y : neurosim.Population
        Output units (Jacobi dynamics, Eq. 17).
    feedforward : neurosim.Projection
        ``W`` (Hebbian).
    lateral : neurosim.Projection
        ``M`` (anti-Hebbian, inhibitory).
    regularizer : {"TY", "XY", "YY"}
        The paper's regularizer.
    alpha : float
        Regularization coefficient.
    beta : float
        Forgetting factor (1: none).
    """

    network: ns.Network
    x: ns.Population
    y: ns.Population
    feedforward: ns.Projection
    lateral: ns.Projection
    regularizer: str
    alpha: float
    beta: float

    def filter(self) -> np.ndarray:
        """The neural filter ``F = (I + M)^{-1} W`` mapping ``x`` to the fixed point ``y`` (Eq. 16).

        Returns
        -------
        numpy.ndarray, shape (k, n)
            The filter of the current weights.
        """
        return neural_filter(self.feedforward.weights, self.lateral.weights)


def build_network(
    stream: ns.Stream,
    k: int,
    regularizer: str,
    alpha: float,
    *,
    beta: float = 1.0,
    eta: float = 0.1,
    tol: float = 0.0,
    max_iter: int = 30,
    zero_start: bool = True,
    init_std: float | None = None,
    mu_init: float = 1.0,
    seed: int = 0,
    batch: int = 1,
    record: tuple = ("activity",),
    record_every: int = 1,
) -> SimilarityMatchingCircuit:
    """Build a similarity-matching network driven by ``stream``.

    Parameters
    ----------
    stream : neurosim.Stream
        Input; its ``dim`` is the number of input units ``n``.
    k : int >= 1
        Number of output units.
    regularizer : {"TY", "XY", "YY"}
        Scale-dependent, input-output or squared-output regularizer.
    alpha : float >= 0
        Regularization coefficient.
    beta : float in (0, 1]
        Forgetting factor (Eq. 26, 28, 30); 1 means no forgetting (Eq. 19, 21, 24).
    eta : float in (0, 1]
        Jacobi weight of Eq. 17 (0.1 in the paper).
    tol, max_iter, zero_start
        Jacobi stopping rule, see :class:`neurosim.Jacobi` (``tol=0``: exactly
        ``max_iter`` iterations).
    init_std : float >= 0, optional
        Standard deviation of the random initial feed-forward weights;
        default ``1 / sqrt(n)``. Lateral weights start at zero.
    mu_init : float > 0
        Initial cumulative activity ``mu`` (sets the first learning rates ``1 / mu``).
    seed : int >= 0
        Network seed (initial weights).
    batch : int >= 1
        Samples per step.
    record : tuple of str
        Variables of ``y`` to record (``"activity"``, ``"mu"``); empty for none.
    record_every : int >= 1
        Record ``y`` (and the weights) every this many steps.

    Returns
    -------
    SimilarityMatchingCircuit
    """
    if not isinstance(stream, ns.Stream):
        raise TypeError(f"stream must be a neurosim Stream; got {type(stream).__name__}")
    k = check_int("k", k, low=1)
    regularizer = check_choice("regularizer", regularizer, set(REGULARIZERS))
    alpha = check_float("alpha", alpha, low=0.0)
    beta = check_float("beta", beta, low=0.0, high=1.0, low_open=True)
    n = stream.dim
    init_std = 1.0 / np.sqrt(n) if init_std is None else check_float("init_std", init_std, low=0.0)
    mu_init = check_float("mu_init", mu_init, low=0.0, low_open=True)

    net = ns.Network(seed=seed, batch=batch, name=f"similarity_matching_{regularizer}")
    x = ns.Population("x", n)
    y = ns.Population("y", k, dynamics=ns.Jacobi(eta=eta, tol=tol, max_iter=max_iter, zero_start=zero_start))
    net.add(x, y)
    net.connect(stream, x)
    signal = {"TY": None, "XY": ns.SquaredNorm(x), "YY": ns.SquaredNorm(y)}[regularizer]
    net.add(ns.CumulativeActivity(y, alpha=alpha, signal=signal, beta=beta, init=mu_init))
    ff = ns.Projection("W", x, y, sign=+1, init=ns.Normal(init_std), rule=ns.NormalizedHebbian(alpha, signal))
    lat = ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(alpha, signal))
    net.add(ff, lat)
    if record:
        net.record(y, list(record), every=record_every)
    net.attrs.update({"model": "similarity_matching", "regularizer": regularizer, "alpha": alpha, "beta": beta})
    return SimilarityMatchingCircuit(net, x, y, ff, lat, regularizer, alpha, beta)
