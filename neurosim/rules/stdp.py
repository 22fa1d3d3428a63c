"""Spike-timing-dependent plasticity with traces, as Brian2 computes it (issue 42).

:class:`STDP` is pair-based STDP (Song, Miller & Abbott 2000, in the form
of Brian2's ``examples/synapses/STDP.py``): each synapse keeps a
presynaptic trace ``a_pre`` and a postsynaptic trace ``a_post``, decayed
exponentially between the synapse's events. On a pre spike the synapse
(optionally) transmits its weight, ``a_pre`` grows by ``d_pre`` and the
weight moves by ``a_post``; on a post spike ``a_post`` grows by ``d_post``
and the weight moves by ``a_pre``. Additive (hard bounds) or multiplicative
(soft bounds) weight dependence; all-to-all or nearest-spike pairing.
:class:`TripletSTDP` is Pfister & Gerstner's (2006) triplet rule. Both are
:class:`~neurosim.rules.trace.TraceRule` s: the traces live per synapse and
are decayed only at the synapse's events, as Brian2's event-driven
variables are, so the weights are Brian2's bit for bit
(``tests/spiking/test_stdp_brian2.py``).
"""

from __future__ import annotations

from typing import Any

from neurosim.kernels.spiking import clip
from neurosim.params import Choice, Float
from neurosim.rules.local import _compiled
from neurosim.rules.trace import TraceRule

__all__ = ["STDP", "TripletSTDP"]


# The pathways, as Brian2's generated code computes them (its expression trees; ``1 / w_max`` is its
# loop-invariant ``_lio``). ``d_pre`` >= 0 potentiates through ``a_pre`` on post spikes, ``d_post`` <= 0
# depresses through ``a_post`` on pre spikes.

def additive_pre(w, a_pre, a_post, d_pre, w_max):
    """All-to-all, additive: ``a_pre += d_pre``, ``w = clip(w + a_post, 0, w_max)``."""
    a_pre += d_pre
    return clip(w + a_post, 0.0, w_max), a_pre, a_post


def additive_post(w, a_pre, a_post, d_post, w_max):
    """All-to-all, additive: ``a_post += d_post``, ``w = clip(w + a_pre, 0, w_max)``."""
    a_post += d_post
    return clip(w + a_pre, 0.0, w_max), a_pre, a_post


def additive_nearest_pre(w, a_pre, a_post, d_pre, w_max):
    """Nearest-spike, additive: ``a_pre = d_pre``, ``w = clip(w + a_post, 0, w_max)``."""
    return clip(w + a_post, 0.0, w_max), d_pre, a_post


def additive_nearest_post(w, a_pre, a_post, d_post, w_max):
    """Nearest-spike, additive: ``a_post = d_post``, ``w = clip(w + a_pre, 0, w_max)``."""
    return clip(w + a_pre, 0.0, w_max), a_pre, d_post


def multiplicative_pre(w, a_pre, a_post, d_pre, w_max):
    """All-to-all, multiplicative: ``a_pre += d_pre``, ``w = clip(w + (1 / w_max) (w a_post), 0, w_max)``."""
    a_pre += d_pre
    return clip(w + (1.0 / w_max) * (w * a_post), 0.0, w_max), a_pre, a_post


def multiplicative_post(w, a_pre, a_post, d_post, w_max):
    """All-to-all, multiplicative: ``a_post += d_post``, ``w = clip(w + (1 / w_max) ((w_max - w) a_pre), 0, w_max)``."""
    a_post += d_post
    return clip(w + (1.0 / w_max) * ((w_max - w) * a_pre), 0.0, w_max), a_pre, a_post


def multiplicative_nearest_pre(w, a_pre, a_post, d_pre, w_max):
    """Nearest-spike, multiplicative: ``a_pre = d_pre``, then as :func:`multiplicative_pre`."""
    return clip(w + (1.0 / w_max) * (w * a_post), 0.0, w_max), d_pre, a_post


def multiplicative_nearest_post(w, a_pre, a_post, d_post, w_max):
    """Nearest-spike, multiplicative: ``a_post = d_post``, then as :func:`multiplicative_post`."""
    return clip(w + (1.0 / w_max) * ((w_max - w) * a_pre), 0.0, w_max), a_pre, d_post


def triplet_pre(w, r1, r2, o1, o2, a2_minus, a3_minus, w_max):
    """Pfister & Gerstner (2006) eq. 3, all-to-all: ``w -= o1 (A2- + A3- r2)``, then ``r1 += 1``, ``r2 += 1``."""
    return clip(w - o1 * (a2_minus + a3_minus * r2), 0.0, w_max), r1 + 1.0, r2 + 1.0, o1, o2


def triplet_post(w, r1, r2, o1, o2, a2_plus, a3_plus, w_max):
    """Pfister & Gerstner (2006) eq. 4, all-to-all: ``w += r1 (A2+ + A3+ o2)``, then ``o1 += 1``, ``o2 += 1``."""
    return clip(w + r1 * (a2_plus + a3_plus * o2), 0.0, w_max), r1, r2, o1 + 1.0, o2 + 1.0


def triplet_nearest_pre(w, r1, r2, o1, o2, a2_minus, a3_minus, w_max):
    """Nearest-spike triplet rule: as :func:`triplet_pre`, the pre traces set to 1 instead of incremented."""
    return clip(w - o1 * (a2_minus + a3_minus * r2), 0.0, w_max), 1.0, 1.0, o1, o2


def triplet_nearest_post(w, r1, r2, o1, o2, a2_plus, a3_plus, w_max):
    """Nearest-spike triplet rule: as :func:`triplet_post`, the post traces set to 1 instead of incremented."""
    return clip(w + r1 * (a2_plus + a3_plus * o2), 0.0, w_max), r1, r2, 1.0, 1.0


#: the pathways by ``(weight_dependence, pairing)`` and for the triplet rule by ``pairing``, compiled for inlining
PAIR_PATHWAYS = {(dep, pairing): tuple(_compiled(globals()[f"{dep}{'_nearest' if pairing == 'nearest' else ''}_{side}"],
                                                 inline=True) for side in ("pre", "post"))
                 for dep in ("additive", "multiplicative") for pairing in ("all", "nearest")}
TRIPLET_PATHWAYS = {pairing: tuple(_compiled(globals()[f"triplet{'_nearest' if pairing == 'nearest' else ''}_{side}"],
                                             inline=True) for side in ("pre", "post"))
                    for pairing in ("all", "nearest")}


class STDP(TraceRule):
    """Pair-based STDP with per-synapse traces (Song et al. 2000; Brian2's event-driven form).

    Parameters
    ----------
    target : str, optional
        The post variable a pre spike adds the weight to (``"ge"`` of a
        :class:`~neurosim.LIF` population); ``None``: learn only (a post
        population driven by a spike stream).
    tau_pre, tau_post : float > 0
        Trace time constants, seconds (default 20 ms).
    d_pre : float
        Increment of ``a_pre`` on a pre spike (Brian2's ``dApre``; default
        1e-4, Song et al.'s 0.01 ``w_max``).
    d_post : float
        Increment of ``a_post`` on a post spike (``dApost``; default
        -1.05e-4: depression 5 % stronger, as in Song et al.).
    w_max : float > 0
        Upper bound of the weights (lower bound 0).
    weight_dependence : {"additive", "multiplicative"}
        ``"additive"``: the weight moves by the trace (``w + a``), clipped to
        ``[0, w_max]`` (hard bounds; Song et al.'s bimodal weights).
        ``"multiplicative"``: potentiation is scaled by ``(w_max - w) /
        w_max`` and depression by ``w / w_max`` (soft bounds, van Rossum et
        al. 2000; unimodal weights); needs ``d_pre >= 0 >= d_post``.
    pairing : {"all", "nearest"}
        ``"all"``: every earlier spike counts (traces accumulate);
        ``"nearest"``: only the latest (a trace is set to its increment
        instead of growing by it; Brian2's ``Apre = dApre``).

    Raises
    ------
    ValueError
        A bad parameter, by name (also a multiplicative rule whose
        increments have the wrong signs); when the network validates, a dense
        projection (STDP keeps its traces per stored synapse: use
        ``connectivity=`` or ``storage="sparse"``), a batch above 1, a
        network without ``dt``, or a ``target`` the post population lacks.

    Examples
    --------
    A pre spike 1 ms before a post spike potentiates by ``d_pre exp(-1 ms /
    tau_pre)`` (the post pathway adds the decayed ``a_pre``):

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network(dt=1e-4)
    >>> spikes = np.zeros((11, 1, 2)); spikes[0, 0, 0] = 1; spikes[10, 0, 1] = 1   # pre at 0, post at 1 ms
    >>> a, b = ns.Population("a", 1), ns.Population("b", 1)
    >>> _ = net.add(a, b)
    >>> _ = net.connect(ns.ArrayStream(spikes[:, :, :1]), a), net.connect(ns.ArrayStream(spikes[:, :, 1:]), b)
    >>> W = net.add(ns.Projection("W", a, b, connectivity=ns.AllToAll(), init=ns.Constant(0.005), rule=ns.STDP()))
    >>> _ = net.run(11)
    >>> f"{W.weights[0] - 0.005:.6e}", f"{1e-4 * np.exp(-0.001 / 0.02):.6e}"
    ('9.512294e-05', '9.512294e-05')
    """

    tau_pre = Float(0.02, low=0.0, low_open=True, schedulable=False, doc="pre trace time constant, s")
    tau_post = Float(0.02, low=0.0, low_open=True, schedulable=False, doc="post trace time constant, s")
    d_pre = Float(1e-4, schedulable=False, doc="a_pre increment on a pre spike")
    d_post = Float(-1.05e-4, schedulable=False, doc="a_post increment on a post spike")
    w_max = Float(0.01, low=0.0, low_open=True, schedulable=False, doc="upper weight bound")
    weight_dependence = Choice("additive", options=("additive", "multiplicative"),
                               doc="additive (hard bounds) or multiplicative (soft bounds) weight changes")
    pairing = Choice("all", options=("all", "nearest"), doc="all-to-all or nearest-spike pairing")
    traces = {"a_pre": "tau_pre", "a_post": "tau_post"}

    def __init__(self, target: str | None = None, tau_pre: float = 0.02, tau_post: float = 0.02, d_pre: float = 1e-4,
                 d_post: float = -1.05e-4, w_max: float = 0.01, weight_dependence: str = "additive",
                 pairing: str = "all") -> None:
        super().__init__(target=target, tau_pre=tau_pre, tau_post=tau_post, d_pre=d_pre, d_post=d_post, w_max=w_max,
                         weight_dependence=weight_dependence, pairing=pairing)
        self._check_together()

    def _check_together(self) -> None:
        if self.weight_dependence == "multiplicative" and not (self.d_pre >= 0.0 >= self.d_post):
            raise ValueError("weight_dependence='multiplicative' scales potentiation (through a_pre) by w_max - w "
                             "and depression (through a_post) by w: it needs d_pre >= 0 and d_post <= 0; got "
                             f"d_pre={self.d_pre!r}, d_post={self.d_post!r}")

    def validate(self, network: Any) -> None:
        self._check_together()  # parameters set one at a time after construction
        super().validate(network)

    def pathways(self) -> tuple[Any, Any]:
        return PAIR_PATHWAYS[self.weight_dependence, self.pairing]


class TripletSTDP(TraceRule):
    """Triplet STDP (Pfister & Gerstner 2006, eqs. 3-4), per-synapse traces, Brian2's event-driven form.

    Each synapse keeps two presynaptic traces ``r1`` (time constant
    ``tau_plus``) and ``r2`` (``tau_x``) and two postsynaptic traces ``o1``
    (``tau_minus``) and ``o2`` (``tau_y``). On a pre spike ``w = clip(w -
    o1 (a2_minus + a3_minus r2), 0, w_max)``, then ``r1``, ``r2`` grow by 1;
    on a post spike ``w = clip(w + r1 (a2_plus + a3_plus o2), 0, w_max)``,
    then ``o1``, ``o2`` grow by 1 (the triplet terms use ``r2`` and ``o2``
    from before the spike, the paper's ``t - epsilon``). With
    ``pairing="nearest"`` the traces are set to 1 instead (the paper's
    nearest-spike model). ``a3_plus = a3_minus = 0`` is pair-based STDP.

    Parameters
    ----------
    target : str, optional
        The post variable a pre spike adds the weight to; ``None``: learn only.
    tau_plus, tau_minus, tau_x, tau_y : float > 0
        Trace time constants, seconds (defaults 16.8, 33.7, 101 and 125 ms:
        the paper's fit to visual cortex data, all-to-all model).
    a2_plus, a3_plus, a2_minus, a3_minus : float >= 0
        Pair and triplet amplitudes, in weight units (defaults 5e-10,
        6.2e-3, 7e-3 and 2.3e-4, the paper's visual cortex values with
        weights between 0 and 1; scale them with ``w_max``).
    w_max : float > 0
        Upper bound of the weights (lower bound 0; default 1).
    pairing : {"all", "nearest"}
        All-to-all or nearest-spike interactions.

    Raises
    ------
    ValueError
        A bad parameter, by name; at validation, as :class:`STDP`.

    Examples
    --------
    Two post spikes 10 ms apart after a pre spike: the second potentiates
    more than the first, because ``o2`` remembers the first (the triplet
    term; with ``a3_plus = 0`` both potentiate alike):

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network(dt=1e-4)
    >>> spikes = np.zeros((111, 1, 2)); spikes[0, 0, 0] = 1; spikes[10, 0, 1] = spikes[110, 0, 1] = 1
    >>> a, b = ns.Population("a", 1), ns.Population("b", 1)
    >>> _ = net.add(a, b)
    >>> _ = net.connect(ns.ArrayStream(spikes[:, :, :1]), a), net.connect(ns.ArrayStream(spikes[:, :, 1:]), b)
    >>> W = net.add(ns.Projection("W", a, b, connectivity=ns.AllToAll(), init=ns.Constant(0.5),
    ...                           rule=ns.TripletSTDP(a2_plus=0.01, a3_plus=0.01)))
    >>> _ = net.record(W, ["weights"])
    >>> _ = net.run(111)
    >>> w = net.recorders["W"].to_dataset().weights.values.ravel()
    >>> first, second = w[10] - w[9], w[110] - w[109]
    >>> bool(second > first > 0)
    True
    """

    tau_plus = Float(0.0168, low=0.0, low_open=True, schedulable=False, doc="pre trace r1 time constant, s")
    tau_minus = Float(0.0337, low=0.0, low_open=True, schedulable=False, doc="post trace o1 time constant, s")
    tau_x = Float(0.101, low=0.0, low_open=True, schedulable=False, doc="pre trace r2 time constant, s")
    tau_y = Float(0.125, low=0.0, low_open=True, schedulable=False, doc="post trace o2 time constant, s")
    a2_plus = Float(5e-10, low=0.0, schedulable=False, doc="pair potentiation amplitude")
    a3_plus = Float(6.2e-3, low=0.0, schedulable=False, doc="triplet potentiation amplitude")
    a2_minus = Float(7e-3, low=0.0, schedulable=False, doc="pair depression amplitude")
    a3_minus = Float(2.3e-4, low=0.0, schedulable=False, doc="triplet depression amplitude")
    w_max = Float(1.0, low=0.0, low_open=True, schedulable=False, doc="upper weight bound")
    pairing = Choice("all", options=("all", "nearest"), doc="all-to-all or nearest-spike interactions")
    traces = {"r1": "tau_plus", "r2": "tau_x", "o1": "tau_minus", "o2": "tau_y"}

    def __init__(self, target: str | None = None, tau_plus: float = 0.0168, tau_minus: float = 0.0337,
                 tau_x: float = 0.101, tau_y: float = 0.125, a2_plus: float = 5e-10, a3_plus: float = 6.2e-3,
                 a2_minus: float = 7e-3, a3_minus: float = 2.3e-4, w_max: float = 1.0, pairing: str = "all") -> None:
        super().__init__(target=target, tau_plus=tau_plus, tau_minus=tau_minus, tau_x=tau_x, tau_y=tau_y,
                         a2_plus=a2_plus, a3_plus=a3_plus, a2_minus=a2_minus, a3_minus=a3_minus, w_max=w_max,
                         pairing=pairing)

    def pathways(self) -> tuple[Any, Any]:
        return TRIPLET_PATHWAYS[self.pairing]
