"""Spike-timing-dependent plasticity with traces, as Brian2 computes it (issue 42).

:class:`STDP` is pair-based STDP (Song, Miller & Abbott 2000, in the form
of Brian2's ``examples/synapses/STDP.py``): each synapse keeps a
presynaptic trace ``a_pre`` and a postsynaptic trace ``a_post``, decayed
exponentially between the synapse's events. On a pre spike the synapse
(optionally) transmits its weight, ``a_pre`` grows by ``d_pre`` and
``w = clip(w + a_post, 0, w_max)``; on a post spike ``a_post`` grows by
``d_post`` and ``w = clip(w + a_pre, 0, w_max)``. All-to-all pairing,
additive bounds. The traces live per synapse and are decayed only at the
synapse's events, as Brian2's event-driven variables are, so the weights
are Brian2's bit for bit (``tests/spiking/test_stdp_brian2.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels.spiking import stdp_pair
from neurosim.params import Float, Name
from neurosim.rules.transmission import OnPre

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["STDP"]

#: the synapse arrays the rule keeps (``Projection.arrays``): traces and the time of each synapse's last event
ARRAYS = ("a_pre", "a_post", "last_update")


class STDP(OnPre):
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

    Raises
    ------
    ValueError
        A bad parameter, by name; when the network validates, a dense
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

    target = Name(None, optional=True, doc="post variable a pre spike adds the weight to (None: learn only)")
    tau_pre = Float(0.02, low=0.0, low_open=True, schedulable=False, doc="pre trace time constant, s")
    tau_post = Float(0.02, low=0.0, low_open=True, schedulable=False, doc="post trace time constant, s")
    d_pre = Float(1e-4, schedulable=False, doc="a_pre increment on a pre spike")
    d_post = Float(-1.05e-4, schedulable=False, doc="a_post increment on a post spike")
    w_max = Float(0.01, low=0.0, low_open=True, schedulable=False, doc="upper weight bound")

    def __init__(self, target: str | None = None, tau_pre: float = 0.02, tau_post: float = 0.02, d_pre: float = 1e-4,
                 d_post: float = -1.05e-4, w_max: float = 0.01) -> None:
        super(OnPre, self).__init__()
        self.set_params(target=target, tau_pre=tau_pre, tau_post=tau_post, d_pre=d_pre, d_post=d_post, w_max=w_max)
        self._by_pre = None
        self._signed = None
        self.step = np.zeros(1, dtype=np.int64)

    @property
    def learns_only(self) -> bool:
        """True without a ``target``: the projection may then end on an input population (a given spike train)."""
        return self.target is None

    def attach(self, network: Network) -> None:
        for name in ARRAYS:
            self.projection.add_array(name, 0.0)
        self.step[0] = network.t  # Brian2's t = step * dt from the network's start

    def state(self) -> dict[str, np.ndarray]:
        return {"step": self.step}

    def validate(self, network: Network) -> None:
        p = self.projection
        if self.delay:
            raise ValueError(f"{self.label}: STDP with a transmission delay is not built yet; use delay=0")
        if not p.sparse:
            raise ValueError(f"{self.label}: STDP keeps its traces per stored synapse and needs sparse storage "
                             "(Projection(..., connectivity=...) or storage='sparse')")
        if network.batch != 1:
            raise ValueError(f"{self.label}: STDP learns from one spike train; the network's batch is {network.batch}")
        if network.dt is None:
            raise ValueError(f"{self.label}: STDP needs the network's time step: Network(dt=...) in seconds")
        if self.target is not None:
            super().validate(network)

    def _args(self) -> tuple:
        p = self.projection
        pre_ptr, by_pre, post_by_pre = self._index()
        target = p.post.state[self.target] if self.target is not None else _NO_TARGET
        return (p.weights, p.arrays["a_pre"], p.arrays["a_post"], p.arrays["last_update"], p.pre.activity,
                p.post.activity, pre_ptr, by_pre, post_by_pre, p.synapse_index.indptr, target)

    def _scalars(self) -> tuple:
        p, net = self.projection, self.projection.network
        assert net is not None and net.dt is not None  # validated before any step
        return (self.target is not None, float(p.sign), self.step, float(net.dt), 1.0 / self.tau_pre,
                1.0 / self.tau_post, self.d_pre, self.d_post, self.w_max)

    def update_numpy(self) -> None:
        # the kernel's own loops run by the interpreter: the same operations in the same order, so the
        # same bits (math.exp is the C library's, as numba's exp); the independent check is Brian2's
        stdp_pair.py_func(*self._args(), *self._scalars())

    def kernel_call(self) -> KernelCall:
        p = self.projection
        names = ("weights", "a_pre", "a_post", "last_update", "pre", "post", "pre_ptr", "by_pre", "post_by_pre",
                 "indptr", "target")
        refs = tuple(ArrayRef(lambda k=k: self._args()[k], f"{p.name}.stdp.{n}") for k, n in enumerate(names))
        s = self._scalars()
        step = ArrayRef(lambda: self.step, f"{p.name}.stdp.step")
        return KernelCall(stdp_pair, refs + (s[0], s[1], step) + s[3:], label=f"{p.name}.stdp",
                          finite=f"{p.name}.weights")


_NO_TARGET = np.zeros((1, 1))
