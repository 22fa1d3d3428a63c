"""Structural plasticity of synapses: prune weak synapses, grow new ones to keep a fan-in.

Two rule-driven structural events and the triggers that apply them:

* :class:`Prune` removes every synapse of a projection whose weight has
  ``|w| < threshold`` (synaptic elimination of weak synapses);
* :class:`Grow` links, for every post unit with fewer than ``fan_in``
  synapses, new synapses from pre units drawn at random among those it has
  none from, so each post unit keeps ``fan_in`` incoming synapses
  (synaptogenesis at a fixed in-degree); their weights come from ``init``.

Both are :class:`~neurosim.events.Event` s: :meth:`Network.apply
<neurosim.network.Network.apply>` resolves them against the structure the
call's earlier events leave (a :class:`~neurosim.events.Death` of the same
step, a :class:`~neurosim.events.Birth` whose newborns start unlinked), turns
them into an :class:`~neurosim.events.Unlink` or a
:class:`~neurosim.events.Link` and applies them with the call's other
events, all or none. The event log gets one ``unlink``/``link`` row per
synapse with both ends (post id as ``unit``, pre id as ``partner``).

:class:`PruneSynapses` and :class:`GrowSynapses` are :class:`~neurosim.events.Trigger` s
whose condition is a compiled kernel (:mod:`neurosim.kernels.structural`)
saying whether anything is due, so a compiled run stays in its segments
and leaves them only at the steps where a synapse is pruned or grown;
ANNarchy's ``Projection.start_pruning(period)`` / ``start_creating`` and
NEST's structural-plasticity update interval play the same part. Both work
on sparse projections (``Projection(connectivity=...)``) and masked dense
ones, with the same numbers: the same synapses pruned, the same pre units
drawn, the same initial weights.

Randomness: :class:`Grow` draws from the network's generator
(``network.rng``), so a run is reproducible from the network's seed and a
checkpoint restores it. The draw is specified exactly (an independent
implementation can reproduce it): post units are visited in position order
(increasing stable id); a unit with ``d < fan_in`` synapses, whose
candidates are the ``f`` pre units (increasing id) it has no synapse from
(not itself in a lateral projection without self-connections), gets the
candidates ``rng.choice(f, size=min(fan_in - d, f), replace=False)``; then
``init`` draws one weight per new synapse, in one call, in the order of the
new synapses by (post id, pre id).

The triggers keep no state of their own: the synapses, the weights and the
generator are the network's, saved by checkpoints.

Examples
--------
Weak synapses of a sparse projection die and new ones grow back every 10
steps, each post unit keeping 3 incoming synapses:

>>> import numpy as np
>>> import neurosim as ns
>>> net = ns.Network(seed=0)
>>> x, y = ns.Population("x", 8), ns.Population("y", 4, dynamics=ns.Linear())
>>> W = ns.Projection("W", x, y, connectivity=ns.FixedInDegree(3), init=ns.Uniform(0.0, 1.0),
...                   rule=ns.Hebbian(rate=0.01, decay=0.1))
>>> _ = net.add(x, y, W)
>>> _ = net.connect(ns.GaussianStream(np.ones(8), seed=1), x)
>>> _ = net.add(ns.PruneSynapses(W, threshold=0.2, every=10),
...             ns.GrowSynapses(W, fan_in=3, init=ns.Uniform(0.5, 1.0), every=10))
>>> _ = net.run(50)
>>> W.synapse_index.in_degree().tolist()
[3, 3, 3, 3]
>>> sorted(set(net.event_log.kind))
['link', 'unlink']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim._validation import check_float, check_int
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.events import Event, Link, Trigger, Unlink
from neurosim.kernels import structural as k
from neurosim.synapse_index import SynapseIndex
from neurosim.synapses import Constant, Initializer, Projection

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["Prune", "Grow", "PruneSynapses", "GrowSynapses"]


def _structured(kind: str, projection) -> Projection:
    """``projection``, refused unless it is a Projection whose synapses can be linked and unlinked."""
    if not isinstance(projection, Projection):
        raise TypeError(f"{kind}: projection must be a Projection; got {type(projection).__name__}")
    if not projection.structured:
        raise ValueError(f"{kind} needs a sparse or masked projection (one that says which synapses exist); "
                         f"{projection.name!r} is dense without a mask: build it with connectivity= (sparse) or "
                         "mask= (masked dense)")
    return projection


def _self_allowed(p: Projection) -> bool:
    """Whether a unit of a lateral projection may have a synapse onto itself (sparse with self_connections)."""
    return p.sparse and p.connectivity is not None and p.connectivity.self_connections


def _mask_ref(p: Projection) -> ArrayRef:
    def mask():
        if p.mask is None:
            raise ValueError(f"projection {p.name!r} lost its mask; structural plasticity needs one "
                             "(or sparse storage)")
        return p.mask

    return ArrayRef(mask, f"{p.name}.mask")


class _SynapseRule(Event):
    """A structural event computed from the synapses as the call's earlier events leave them."""

    projection: Projection

    def resolve(self, weights: np.ndarray, structure, post_ids: np.ndarray, pre_ids: np.ndarray,
                rng: np.random.Generator) -> Event | None:
        """The :class:`~neurosim.events.Link` or :class:`~neurosim.events.Unlink` this rule makes now, or None.

        Parameters
        ----------
        weights : numpy.ndarray
            The projection's weights (one per synapse, or ``(post, pre)``).
        structure : SynapseIndex or numpy.ndarray
            Its synapse index (sparse) or mask (masked dense).
        post_ids, pre_ids : numpy.ndarray
            Stable ids of the post and pre units, by position.
        rng : numpy.random.Generator
            The network's generator.

        Returns
        -------
        Event or None
            None when no synapse changes.
        """
        raise NotImplementedError

    def condition(self) -> KernelCall:
        """A compiled trigger condition: whether :meth:`resolve` would change any synapse now.

        Returns
        -------
        neurosim.codegen.KernelCall
        """
        raise NotImplementedError


class Prune(_SynapseRule):
    """Remove every synapse of ``projection`` with ``|w| < threshold`` (an event; logged as ``unlink`` rows).

    Parameters
    ----------
    projection : Projection
        A sparse or masked projection without multapses.
    threshold : float >= 0
        Synapses whose weight's magnitude is strictly below it are removed
        (0 removes none).

    Raises
    ------
    TypeError
        If ``projection`` is not a Projection or ``threshold`` not a number.
    ValueError
        If ``threshold`` is negative or not finite, the projection is dense
        without a mask, or its connectivity allows multapses (an Unlink
        removes every synapse of a pair, the strong ones with the weak).

    See Also
    --------
    PruneSynapses : the trigger that applies it.
    """

    def __init__(self, projection: Projection, threshold: float) -> None:
        self.projection = _structured("Prune", projection)
        self.population = projection.post
        self.threshold = check_float("threshold", threshold, low=0.0)
        if projection.connectivity is not None and projection.connectivity.multapses:
            raise ValueError(f"Prune cannot remove single synapses of {projection.name!r}: its connectivity allows "
                             "multapses, and an Unlink removes every synapse of a pair")

    def resolve(self, weights, structure, post_ids, pre_ids, rng):
        weak = np.abs(weights) < self.threshold
        if isinstance(structure, SynapseIndex):
            s = np.flatnonzero(weak)
            rows, cols = structure.post()[s], structure.indices[s]
        else:
            rows, cols = np.nonzero(structure & weak)
        if rows.size == 0:
            return None
        return Unlink(self.projection, post_ids[rows], pre_ids[cols])

    def condition(self) -> KernelCall:
        p = self.projection
        w = ArrayRef(lambda: p.weights, f"{p.name}.weights")
        if p.sparse:
            return KernelCall(k.csr_any_weak, (w, self.threshold), label=f"{p.name}: prune due")
        return KernelCall(k.masked_any_weak, (w, _mask_ref(p), self.threshold), label=f"{p.name}: prune due")

    def __repr__(self):
        return f"Prune({self.projection.name!r}, threshold={self.threshold!r})"


class Grow(_SynapseRule):
    """Link random new synapses so each post unit of ``projection`` has ``fan_in`` (an event; ``link`` rows).

    A post unit with ``d < fan_in`` synapses gets ``fan_in - d`` new ones
    from pre units drawn uniformly without replacement among those it has
    no synapse from (never itself in a lateral projection, unless a sparse
    connectivity allows self-connections); when fewer candidates remain (the
    pre population shrank), it gets them all. The exact order of the draws
    is in :mod:`neurosim.structural_plasticity`.

    Parameters
    ----------
    projection : Projection
        A sparse or masked projection.
    fan_in : int >= 1
        Incoming synapses each post unit keeps; at most the number of pre
        units a post unit can link to (``pre.size``, one less in a lateral
        projection without self-connections) when the event is made.
    init : float, Initializer or None, default=None
        Weights of the new synapses: a number, an
        :class:`~neurosim.synapses.Initializer` drawing one per new synapse
        from the network's generator, or None for the projection's own
        initializer.

    Raises
    ------
    TypeError
        If ``projection`` is not a Projection, ``fan_in`` not an integer or
        ``init`` none of the three.
    ValueError
        If ``fan_in`` is out of range, ``init`` not finite, or the projection
        dense without a mask.

    See Also
    --------
    GrowSynapses : the trigger that applies it.
    """

    def __init__(self, projection: Projection, fan_in: int, init: float | Initializer | None = None) -> None:
        self.projection = _structured("Grow", projection)
        self.population = projection.post
        no_self = projection.lateral and not _self_allowed(projection)
        most = projection.pre.size - (1 if no_self else 0)
        self.fan_in = check_int("fan_in", fan_in, low=1)
        if self.fan_in > most:
            raise ValueError(f"fan_in must be in [1, {most}] (the pre units of {projection.name!r} a post unit can "
                             f"link to{', itself excluded' if no_self else ''}); got {self.fan_in}")
        if init is not None and not isinstance(init, Initializer):
            init = Constant(check_float("init", init))
        self.init = init

    def _candidates(self, structure, i: int) -> tuple[int, np.ndarray]:
        """``(synapses onto post unit i, sorted pre positions it may not link to)``."""
        p = self.projection
        if isinstance(structure, SynapseIndex):
            row = structure.indices[structure.indptr[i]:structure.indptr[i + 1]].astype(np.int64)
            d = row.size
            taken = np.unique(row) if p.connectivity is not None and p.connectivity.multapses else row  # sorted
        else:
            taken = np.flatnonzero(structure[i])
            d = taken.size
        if p.lateral and not _self_allowed(p):
            taken = np.insert(taken, np.searchsorted(taken, i), i)  # never linked to itself: i is not in the row
        return d, taken

    def resolve(self, weights, structure, post_ids, pre_ids, rng):
        p = self.projection
        degree = structure.in_degree() if isinstance(structure, SynapseIndex) else structure.sum(axis=1)
        rows, cols = [], []
        for i in np.flatnonzero(degree < self.fan_in).tolist():
            d, taken = self._candidates(structure, i)
            free = pre_ids.size - taken.size
            need = min(self.fan_in - d, free)
            if need <= 0:
                continue
            ranks = rng.choice(free, size=need, replace=False)
            # the r-th free position skips the taken ones below it: taken[k] - k free positions precede taken[k]
            picked = ranks + np.searchsorted(taken - np.arange(taken.size), ranks, side="right")
            rows.append(np.full(need, i, dtype=np.int64))
            cols.append(np.sort(picked))
        if not rows:
            return None
        r, c = np.concatenate(rows), np.concatenate(cols)
        init = self.init if self.init is not None else p.initializer
        values = np.asarray(init(rng, (r.size,)), dtype=np.float64)
        if values.shape != (r.size,) or not np.all(np.isfinite(values)):
            what = "NaN/Inf" if values.shape == (r.size,) else f"shape {values.shape}"
            raise ValueError(f"Grow on {p.name!r}: the initializer {type(init).__name__} must draw {r.size} finite "
                             f"weights; got {what}")
        return Link(p, post_ids[r], pre_ids[c], weight=values)

    def condition(self) -> KernelCall:
        p = self.projection
        exclude_self = p.lateral and not _self_allowed(p)
        if p.sparse:
            return KernelCall(k.csr_fan_in_short,
                              (ArrayRef(lambda: p.synapse_index.indptr, f"{p.name}.indptr"),
                               ArrayRef(lambda: p.synapse_index.indices, f"{p.name}.indices"),
                               ArrayRef(lambda: p.pre.ids, f"{p.pre.name}.ids"), self.fan_in, exclude_self),
                              label=f"{p.name}: growth due")
        return KernelCall(k.masked_fan_in_short, (_mask_ref(p), self.fan_in, exclude_self),
                          label=f"{p.name}: growth due")

    def __repr__(self):
        return f"Grow({self.projection.name!r}, fan_in={self.fan_in})"


class PruneSynapses(Trigger):
    """Every ``every`` steps, remove the synapses of ``projection`` with ``|w| < threshold`` (a compiled trigger).

    ``network.add(PruneSynapses(W, threshold=0.01, every=100))``. The
    condition is a compiled kernel (any synapse below the threshold?), so a
    compiled run leaves its segments only at the steps where a synapse is
    pruned; the :class:`Prune` event is applied with the step's other
    events, all or none.

    Parameters
    ----------
    projection : Projection
        A sparse or masked projection without multapses.
    threshold : float >= 0
        Synapses with ``|w| < threshold`` are removed.
    every : int >= 1, default=1
        Evaluated at steps ``t`` with ``t % every == 0`` (in the events phase).
    name : str, optional
        Shown in schedules (default ``"prune <projection>"``).

    Raises
    ------
    TypeError, ValueError
        As :class:`Prune` and :class:`~neurosim.events.Trigger`.

    Examples
    --------
    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network(seed=0)
    >>> x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y, connectivity=ns.AllToAll(),
    ...                   init=np.array([[0.5, 0.01, 0.3, -0.02], [0.0, 1.0, 0.05, 2.0]]))
    >>> _ = net.add(x, y, W, ns.PruneSynapses(W, threshold=0.1))
    >>> _ = net.connect(ns.GaussianStream(np.ones(4), seed=1), x)
    >>> _ = net.run(1)
    >>> W.to_dense().tolist()
    [[0.5, 0.0, 0.3, 0.0], [0.0, 1.0, 0.0, 2.0]]
    >>> list(zip(net.event_log.kind, net.event_log.unit, net.event_log.partner))
    [('unlink', 0, 1), ('unlink', 0, 3), ('unlink', 1, 0), ('unlink', 1, 2)]
    """

    def __init__(self, projection: Projection, threshold: float, every: int = 1, name: str | None = None) -> None:
        self.event = Prune(projection, threshold)
        super().__init__(self.event.condition(), self._events, every=every,
                         name=name or f"prune {projection.name}")

    def _events(self, network: Network) -> Prune:
        return self.event


class GrowSynapses(Trigger):
    """Every ``every`` steps, grow synapses so each post unit of ``projection`` has ``fan_in`` (a compiled trigger).

    ``network.add(GrowSynapses(W, fan_in=20, init=ns.Normal(0.1), every=100))``.
    The condition is a compiled kernel (a post unit short of ``fan_in`` with
    a pre unit left to link to?), so a compiled run leaves its segments only
    at the steps where synapses grow; the :class:`Grow` event draws the new
    synapses from the network's generator when it is applied, with the
    step's other events (after a Death of the same step, the dead units'
    synapses are gone and their partners short).

    Parameters
    ----------
    projection : Projection
        A sparse or masked projection.
    fan_in : int >= 1
        Incoming synapses each post unit keeps (see :class:`Grow`).
    init : float, Initializer or None, default=None
        Weights of new synapses (None: the projection's initializer).
    every : int >= 1, default=1
        Evaluated at steps ``t`` with ``t % every == 0`` (in the events phase).
    name : str, optional
        Shown in schedules (default ``"grow <projection>"``).

    Raises
    ------
    TypeError, ValueError
        As :class:`Grow` and :class:`~neurosim.events.Trigger`.

    Examples
    --------
    Newborn post units start without synapses and get two at the next step:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network(seed=0)
    >>> x, y = ns.Population("x", 5), ns.Population("y", 2, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y, connectivity=ns.FixedInDegree(2))
    >>> _ = net.add(x, y, W, ns.GrowSynapses(W, fan_in=2, init=0.5))
    >>> _ = net.add(ns.Trigger(lambda n: n.t == 1, lambda n: ns.Birth(y, 1, unlinked=[W])))
    >>> _ = net.connect(ns.GaussianStream(np.ones(5), seed=1), x)
    >>> _ = net.run(2)
    >>> W.synapse_index.in_degree().tolist(), W.weights[-2:].tolist()
    ([2, 2, 2], [0.5, 0.5])
    """

    def __init__(self, projection: Projection, fan_in: int, init: float | Initializer | None = None, every: int = 1,
                 name: str | None = None) -> None:
        self.event = Grow(projection, fan_in, init)
        super().__init__(self.event.condition(), self._events, every=every,
                         name=name or f"grow {projection.name}")

    def _events(self, network: Network) -> Grow:
        return self.event
