"""Spike transmission: what a projection does with the spikes of its pre population (issue 42).

:class:`OnPre` is Brian2's ``on_pre="ge += w"``: for every unit that spiked
in the step, each of its synapses adds its weight (times the projection's
sign) to its post unit's variable. It runs in the plasticity phase, after
every population's dynamics, so a spike first changes a membrane potential
in the next step, as in Brian2's schedule (synapses after thresholds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.dynamics.spiking import SpikingDynamics
from neurosim.kernels.spiking import (transmit_delayed, transmit_dense, transmit_dense_delayed, transmit_fired,
                                      transmit_sparse, transmit_synapse_delays)
from neurosim.params import Float, Name
from neurosim.rules.base import Rule

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["OnPre"]

_NO_MASK = np.ones((1, 1), dtype=bool)


class OnPre(Rule):
    """On each pre spike, add the synapse's weight (times the sign) to its post unit's ``target``.

    The weights do not change: this is transmission, not plasticity. Spikes
    are delivered in Brian2's order (pre units ascending, then each unit's
    synapses by post unit), so a post unit receiving several spikes in a
    step sums them as Brian2 does, bit for bit.

    Parameters
    ----------
    target : str
        The post population's variable receiving the spikes (``"ge"`` or
        ``"gi"`` of a :class:`~neurosim.LIF` population, ``"v"`` or ``"I"`` of
        an :class:`~neurosim.Izhikevich` one).
    delay : float >= 0, default=0
        Seconds from a spike to its arrival, the same for every synapse of
        the projection; whole steps, rounded as Brian2's spike queue rounds
        (``int(delay / dt + 0.5)``). ``0``: in the step of the spike (after
        every population's update, as Brian2 delivers). A delay above 0 but
        below one step is refused (it would round to 0 or 1 silently). Needs
        dense or sparse storage.
    delays : callable, optional
        A delay per synapse: ``delays(post_ids, pre_ids)`` gets the stable
        ids of the synapses' units (arrays) and returns their delays in
        seconds (from distances, say, or a table), each rounded to whole
        steps as ``delay`` is and ``0`` or at least one step; it replaces
        ``delay``. Synapses made later (births, links) get theirs from the
        same function before they first deliver. Delivery follows Brian2's
        spike queue (the spikes queued earliest first). Needs sparse
        storage.

    Raises
    ------
    ValueError
        When ``target`` is not a name or ``delay`` is negative or not
        finite; when the network validates, when the post population has no
        such variable, a delay is shorter than a step, or per-synapse delays
        on a dense projection or that are negative, not finite or shorter than
        a step (naming the first such synapse).

    Examples
    --------
    >>> import neurosim as ns
    >>> net = ns.Network(dt=1e-4)
    >>> a = ns.Population("a", 1, dynamics=ns.LIF(v_rest=-0.04))
    >>> b = ns.Population("b", 3, dynamics=ns.LIF())
    >>> W = ns.Projection("W", a, b, init=ns.Constant(0.001), rule=ns.OnPre("ge"))
    >>> _ = net.add(a, b, W)
    >>> a.state["v"][:] = -0.0499   # just under threshold: it spikes in the first step
    >>> _ = net.run(1)
    >>> b.state["ge"].tolist()     # the spike arrived (decay first, in the next step)
    [[0.001, 0.001, 0.001]]
    """

    target = Name(doc="post population variable the spikes add to")
    delay = Float(0.0, low=0.0, schedulable=False, doc="spike transmission delay, s (whole steps)")
    sparse_projections = True
    #: the per-synapse delay function (``None``: the one ``delay``); subclasses without delays keep None
    delays: Callable[[np.ndarray, np.ndarray], Any] | None = None

    def __init__(self, target: str, delay: float = 0.0,
                 delays: Callable[[np.ndarray, np.ndarray], Any] | None = None) -> None:
        super().__init__()
        self.set_params(target=target, delay=delay)
        if delays is not None and not callable(delays):
            raise TypeError(f"delays must be a function delays(post_ids, pre_ids) -> seconds; got {type(delays).__name__}")
        self.delays = delays
        self._by_pre: tuple | None = None
        self._signed: np.ndarray | None = None
        self.step = np.zeros(1, dtype=np.int64)
        self._history = np.zeros((1, 1, 0))
        self._history_ids = np.zeros(0, dtype=np.int64)

    def delay_steps(self) -> int:
        """The delay in whole steps of the network's ``dt``: ``int(delay / dt + 0.5)`` (0 without a network).

        Returns
        -------
        int
        """
        net = self.projection.network if self.projection is not None else None
        if not self.delay or net is None or net.dt is None:
            return 0
        return int(self.delay / net.dt + 0.5)

    def ring_steps(self) -> int:
        """Steps the ring of past spikes reaches back: the delay, or the longest per-synapse delay.

        Returns
        -------
        int
        """
        if self.delays is None:
            return self.delay_steps()
        steps = self.synapse_delays()
        return int(steps.max()) if steps.size else 0

    def synapse_delays(self) -> np.ndarray:
        """Each stored synapse's delay in whole steps (per-synapse ``delays``), drawn for new synapses first.

        Returns
        -------
        numpy.ndarray of float, shaped like the projection's weights (the array ``arrays["delay_steps"]``)

        Raises
        ------
        ValueError
            For a delay that is negative, not finite or shorter than a step
            (above 0), naming the synapse.
        """
        p = self.projection
        steps = p.add_array("delay_steps", -1.0)
        new = np.flatnonzero(steps < 0)
        if new.size:
            net = p.network
            if net is None or net.dt is None:
                raise ValueError(f"{self.label}: delays need the network's time step: Network(dt=...) in seconds")
            post, pre = p.synapse_index.pairs()
            assert self.delays is not None  # synapse_delays serves per-synapse delays only
            seconds = np.asarray(self.delays(p.post.ids[post[new]], p.pre.ids[pre[new]]), dtype=np.float64)
            if seconds.shape != new.shape:
                raise ValueError(f"{self.label}: delays(post_ids, pre_ids) returned shape {seconds.shape} for "
                                 f"{new.size} synapses; it must return one delay per synapse")
            bad = ~np.isfinite(seconds) | (seconds < 0) | ((seconds > 0) & (seconds < net.dt))
            if bad.any():
                k = int(np.argmax(bad))
                raise ValueError(f"{self.label}: delays must be 0 or at least one step (dt={net.dt!r} s), finite and "
                                 f"not negative; the synapse from unit {int(p.pre.ids[pre[new[k]]])} to unit "
                                 f"{int(p.post.ids[post[new[k]]])} got {seconds[k]!r} s")
            steps[new] = np.floor(seconds / net.dt + 0.5)
        return steps

    def attach(self, network: Network) -> None:
        self.step[0] = network.t

    def state(self) -> dict[str, np.ndarray]:
        return {"step": self.step, "history": self.history()}

    def history(self) -> np.ndarray:
        """The ring of the pre population's last ``ring_steps() + 1`` spike vectors, following its units.

        A unit born since it was allocated gets an empty column; a unit that
        died loses its own, so spikes in flight from survivors still arrive.

        Returns
        -------
        numpy.ndarray, shape (ring_steps() + 1, batch, pre.size)
        """
        pre = self.projection.pre
        shape = (self.ring_steps() + 1, pre.batch, pre.size)
        h, ids = self._history, self._history_ids
        if h.shape != shape or not np.array_equal(ids, pre.ids):
            new = np.zeros(shape)
            if h.shape[:2] == shape[:2] and ids.size:
                keep = np.isin(pre.ids, ids)
                new[:, :, keep] = h[:, :, np.searchsorted(ids, pre.ids[keep])]
            self._history, self._history_ids = new, pre.ids.copy()
        return self._history

    def validate(self, network: Network) -> None:
        post = self.projection.post
        if self.delay:
            if network.dt is None:
                raise ValueError(f"{self.label}: a delay needs the network's time step: Network(dt=...) in seconds")
            if self.delay < network.dt:
                raise ValueError(f"{self.label}: delay={self.delay!r} s is shorter than one step (dt={network.dt!r} s); "
                                 "use 0 (delivery in the spike's step) or at least dt")
        if self.delays is not None:
            if not self.projection.sparse:
                raise ValueError(f"{self.label}: per-synapse delays need sparse storage (Projection(..., "
                                 "connectivity=...) or storage='sparse')")
            if network.dt is None:
                raise ValueError(f"{self.label}: delays need the network's time step: Network(dt=...) in seconds")
            self.synapse_delays()
        if self.target not in post.state:
            raise ValueError(f"{self.label}: the post population {post.name!r} has no variable {self.target!r} "
                             f"(it has {sorted(post.state)})")

    def _index(self) -> tuple:
        """``(pre_ptr, by_pre, post_by_pre)`` of the sparse projection, rebuilt when its synapses change.

        ``by_pre``: synapse numbers (positions in ``weights``) sorted by (pre,
        post), Brian2's synapse order (with per-synapse delays: by pre, then
        delay, then post); ``pre_ptr[j]:pre_ptr[j + 1]`` are unit ``j``'s;
        ``post_by_pre``: their post units.
        """
        p = self.projection
        index = p.synapse_index
        if self._by_pre is None or self._by_pre[0] is not index:
            post, pre = index.pairs()
            delays = None if self.delays is None else self.synapse_delays()
            by_pre = np.lexsort((post, pre) if delays is None else (post, delays, pre)).astype(np.int64)
            pre_ptr = np.searchsorted(pre[by_pre], np.arange(p.pre.size + 1)).astype(np.int64)
            delay_by_pre = np.zeros(0, dtype=np.int64) if delays is None else delays[by_pre].astype(np.int64)
            self._by_pre = (index, pre_ptr, by_pre, np.ascontiguousarray(post[by_pre], dtype=np.int64), delay_by_pre)
        return self._by_pre[1:4]

    def _signed_by_pre(self) -> np.ndarray:
        """Each synapse's ``sign * weight`` in the by-pre layout, refreshed when a segment starts.

        The weights are fixed within a segment (this rule is the projection's
        only one). The array is the rule's own and outlives the segment: a
        segment tells its arrays apart by identity.
        """
        p = self.projection
        by_pre = self._index()[1]
        if self._signed is None or self._signed.shape != by_pre.shape:
            self._signed = np.empty(by_pre.shape)
        np.multiply(float(p.sign), p.weights[by_pre], out=self._signed)
        return self._signed

    def _delay_by_pre(self) -> np.ndarray:
        """Each synapse's delay in steps in the by-pre layout (per-synapse delays; kept with the layout)."""
        self._index()
        assert self._by_pre is not None
        return self._by_pre[4]

    def _update_synapse_delays(self) -> None:
        """The NumPy form of :func:`~neurosim.kernels.spiking.transmit_synapse_delays` (the same additions in order)."""
        p = self.projection
        target = p.post.state[self.target]
        ring = self.history()
        slots, n = ring.shape[0], int(self.step[0])
        ring[n % slots] = p.pre.activity
        pre_ptr, _, post_by_pre = self._index()
        signed, delay = self._signed_by_pre(), self._delay_by_pre()
        for d in range(slots - 1, -1, -1):
            if n < d:
                continue
            spikes = ring[(n - d) % slots]
            for b in range(spikes.shape[0]):
                for j in np.flatnonzero(spikes[b]):
                    k = np.arange(pre_ptr[j], pre_ptr[j + 1])
                    k = k[delay[k] == d]
                    np.add.at(target[b], post_by_pre[k], signed[k])  # unbuffered: one addition at a time
        self.step[0] = n + 1

    def update_numpy(self) -> None:
        p = self.projection
        target = p.post.state[self.target]
        spikes = p.pre.activity
        if self.delays is not None:
            self._update_synapse_delays()
            return
        if self.delay_steps():
            ring = self.history()
            ring[self.step[0] % ring.shape[0]] = spikes
            spikes = ring[(self.step[0] + 1) % ring.shape[0]]
            self.step[0] += 1
        for b in range(spikes.shape[0]):
            fired = np.flatnonzero(spikes[b])
            if p.sparse:
                pre_ptr, _, post_by_pre = self._index()
                signed = self._signed_by_pre()
                syn = np.concatenate([np.arange(pre_ptr[j], pre_ptr[j + 1]) for j in fired]) if fired.size else \
                    np.zeros(0, dtype=np.int64)
                np.add.at(target[b], post_by_pre[syn], signed[syn])  # unbuffered: one addition at a time, in order
            else:
                for j in fired:
                    rows = np.arange(p.weights.shape[0]) if p.mask is None else np.flatnonzero(p.mask[:, j])
                    target[b, rows] += p.sign * p.weights[rows, j]

    def kernel_call(self) -> KernelCall:
        p = self.projection
        target = ArrayRef(lambda: p.post.state[self.target], f"{p.post.name}.{self.target}")
        spikes = ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity")
        weights = ArrayRef(lambda: p.weights, f"{p.name}.weights")
        if p.sparse:
            layout = (ArrayRef(lambda: self._index()[0], f"{p.name}.pre_ptr"),
                      ArrayRef(lambda: self._index()[2], f"{p.name}.post_by_pre"),
                      ArrayRef(self._signed_by_pre, f"{p.name}.signed_by_pre"))
            if self.delays is not None:
                return KernelCall(transmit_synapse_delays,
                                  (target, spikes, ArrayRef(self.history, f"{p.name}.history"),
                                   ArrayRef(lambda: self.step, f"{p.name}.step")) + layout
                                  + (ArrayRef(self._delay_by_pre, f"{p.name}.delay_by_pre"),), label=f"{p.name}.on_pre")
            if self.delay_steps():
                return KernelCall(transmit_delayed, (target, spikes, ArrayRef(self.history, f"{p.name}.history"),
                                                     ArrayRef(lambda: self.step, f"{p.name}.step")) + layout,
                                  label=f"{p.name}.on_pre")
            source = p.pre.dynamics
            if isinstance(source, SpikingDynamics):  # its kernel lists the units that spiked: no pass over every unit
                fired = (ArrayRef(source.fired, f"{p.pre.name}.fired"), ArrayRef(source.n_fired, f"{p.pre.name}.n_fired"))
                return KernelCall(transmit_fired, (target,) + fired + layout, label=f"{p.name}.on_pre")
            return KernelCall(transmit_sparse, (target, spikes) + layout, label=f"{p.name}.on_pre")
        mask = ArrayRef(lambda: p.mask if p.mask is not None else _NO_MASK, f"{p.name}.mask")
        if self.delay_steps():
            return KernelCall(transmit_dense_delayed, (target, spikes, ArrayRef(self.history, f"{p.name}.history"),
                                                       ArrayRef(lambda: self.step, f"{p.name}.step"), weights, mask,
                                                       p.mask is not None, float(p.sign)), label=f"{p.name}.on_pre")
        return KernelCall(transmit_dense, (target, spikes, weights, mask, p.mask is not None, float(p.sign)),
                          label=f"{p.name}.on_pre")
