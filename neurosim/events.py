"""Structural events and the triggers that produce them.

An event changes the network's structure between phases of a step:
:class:`Birth` adds units to a population, :class:`Death` removes units by
id (a population may lose every unit and grow again later), :class:`Link`
and :class:`Unlink` add and remove synapses of a masked projection between
units named by id (structural change of synapses: the edges of a growing
neural gas), and :class:`Assign` sets per-unit variables of named units in
the same all-or-none call (e.g. the errors of the parents of a newborn unit). The network
applies events everywhere at once (the population, every projection
touching it, every rule's per-unit state, every dynamics workspace;
recorders follow through the unit ids), and appends one row per unit
actually born or killed, and one per synapse linked or unlinked, to its
:class:`EventLog`.

:meth:`Network.apply(*events) <neurosim.network.Network.apply>` validates a
list of events together, in order, and applies all of them or none: every
new array is computed before any is swapped in. The engine hands it all the
events of one step's triggers in a single call, so two triggers that kill
the same unit in one step kill it once, and one invalid event leaves the
step's other events unapplied and the network as it was.

A :class:`Trigger` is evaluated every ``every`` steps in the
triggers/events phase; when its condition holds, its ``action`` returns the
events to apply. A condition is a Python callable ``f(network) -> bool``,
or a :class:`~neurosim.codegen.KernelCall` returning a bool, which lets a
compiled segment evaluate it without leaving compiled code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_int
from neurosim.codegen import KernelCall
from neurosim.population import Population

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.synapses import Projection

__all__ = ["Birth", "Death", "Link", "Unlink", "Assign", "Trigger", "EventLog"]


class Event:
    population: Population


class Birth(Event):
    """Add ``n`` units to ``population``.

    Parameters
    ----------
    population : neurosim.Population
        Where the units are born; newborn units get the next stable ids.
    n : int >= 1, default=1
        Number of units.
    init : dict, optional
        Initial values of the newborn units' variables, ``{name: scalar or
        array of shape (n,)}``; variables not named start at their declared
        initial value. Projection weights of newborn units come from each
        projection's initializer, unless given in ``weights``.
    weights : dict, optional
        ``{projection (or its name): array}``: the newborn units' weights in
        that projection, rows ``(n, pre.size)`` where the population is the
        post side, columns ``(post.size, n)`` where it is the pre side (e.g.
        new dictionary elements drawn from data, or sparse ones). Checked
        when the event is applied.
    unlinked : iterable of projections (or names), optional
        Masked projections in which the newborn units start without any
        synapse (their mask rows and columns False) instead of fully
        connected; :class:`Link` events later in the same call give them
        the synapses they should have (a growing neural gas's newborn unit
        gets exactly two edges).

    Raises
    ------
    TypeError
        If ``population`` is not a Population, or ``init``/``weights`` are
        not dicts keyed as described.
    ValueError
        If ``n < 1``; when applied, if the population would exceed its
        ``max_size`` or the available memory, or a value has the wrong shape.

    See Also
    --------
    neurosim.Network.apply, Trigger
    """

    def __init__(self, population: Population, n: int = 1, init: dict | None = None,
                 weights: dict | None = None, unlinked: Iterable = ()) -> None:
        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        self.population = population
        self.n = check_int("n", n, low=1)
        if init is not None and not isinstance(init, dict):
            raise TypeError(f"init must be a dict of variable name -> value; got {type(init).__name__}")
        self.init = init
        if weights is not None and not isinstance(weights, dict):
            raise TypeError(f"weights must be a dict of projection (or name) -> array; got {type(weights).__name__}")
        self.weights = {}
        for key, block in (weights or {}).items():
            name = key if isinstance(key, str) else getattr(key, "name", None)
            if not isinstance(name, str):
                raise TypeError(f"weights keys must be projections or their names; got {type(key).__name__}")
            self.weights[name] = block
        self.unlinked = set()
        for key in unlinked:
            name = key if isinstance(key, str) else getattr(key, "name", None)
            if not isinstance(name, str):
                raise TypeError(f"unlinked must hold projections or their names; got {type(key).__name__}")
            self.unlinked.add(name)

    def __repr__(self):
        return f"Birth({self.population.name!r}, n={self.n})"


class Death(Event):
    """Remove the units with the given stable ids from ``population``.

    Parameters
    ----------
    population : neurosim.Population
        Where the units die.
    ids : int or array_like of int
        Stable ids of units alive when the event is applied (or born by an
        earlier Birth of the same :meth:`~neurosim.network.Network.apply`
        call); repeated ids count once. May name every unit of the population.

    Raises
    ------
    TypeError
        If ``population`` is not a Population or ``ids`` are not integers.
    ValueError
        If ``ids`` is empty; when applied, if an id is not alive.
    """

    def __init__(self, population: Population, ids: ArrayLike) -> None:
        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        self.population = population
        ids = np.unique(np.atleast_1d(np.asarray(ids)))
        if ids.size == 0:
            raise ValueError("ids must name at least one unit")
        if ids.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers; got dtype {ids.dtype}")
        self.ids = ids.astype(np.int64)

    def __repr__(self):
        return f"Death({self.population.name!r}, ids={self.ids.tolist()})"


def _pair_ids(name: str, ids) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(ids))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a unit id or a 1-D array of unit ids; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers (unit ids); got dtype {arr.dtype}")
    return arr.astype(np.int64)


class _Synapses(Event):
    """Synapses of a masked projection named by ``(post id, pre id)`` pairs."""

    def __init__(self, projection: Projection, post_ids: ArrayLike, pre_ids: ArrayLike, symmetric: bool = False) -> None:
        from neurosim.synapses import Projection

        if not isinstance(projection, Projection):
            raise TypeError(f"projection must be a Projection; got {type(projection).__name__}")
        self.projection = projection
        self.population = projection.post
        self.post_ids = _pair_ids("post_ids", post_ids)
        self.pre_ids = _pair_ids("pre_ids", pre_ids)
        if self.post_ids.size != self.pre_ids.size:
            raise ValueError(f"post_ids and pre_ids must name the same number of synapses; got {self.post_ids.size} "
                             f"and {self.pre_ids.size}")
        if self.post_ids.size == 0:
            raise ValueError("post_ids and pre_ids must name at least one synapse")
        if not isinstance(symmetric, (bool, np.bool_)):
            raise TypeError(f"symmetric must be a bool; got {type(symmetric).__name__}")
        if symmetric and not projection.lateral:
            raise ValueError(f"symmetric=True needs a lateral projection (pre is post); {projection.name!r} is not")
        self.symmetric = bool(symmetric)

    def __repr__(self):
        pairs = list(zip(self.post_ids.tolist(), self.pre_ids.tolist()))
        return f"{type(self).__name__}({self.projection.name!r}, {pairs}{', symmetric=True' if self.symmetric else ''})"


class Link(_Synapses):
    """Add synapses ``pre id -> post id`` to a masked or sparse projection (structural plasticity of synapses).

    Parameters
    ----------
    projection : Projection
        Must have a ``mask`` or sparse storage.
    post_ids, pre_ids : int or array_like of int
        Stable ids of the units at each end, pair by pair (alive when the
        event is applied, or born earlier in the same call). Each synapse
        must be absent (a Link never silently re-initialises one) and not a
        self-synapse of a lateral projection.
    symmetric : bool, default=False
        Lateral projections only: also link ``post -> pre`` (an undirected
        edge, logged once).
    weight : float or array_like of float, default=0.0
        The new synapses' weight: one for all, or one per pair (a
        ``symmetric`` edge gets its pair's weight both ways).
    values : dict, optional
        ``{array name: value}`` for the projection's per-synapse arrays
        (:meth:`~neurosim.synapses.Projection.add_array`, e.g. an edge's
        age); arrays not named start at their declared initial value.
    """

    def __init__(self, projection: Projection, post_ids: ArrayLike, pre_ids: ArrayLike, symmetric: bool = False,
                 weight: float | ArrayLike = 0.0, values: dict[str, float] | None = None) -> None:
        from neurosim._validation import check_float

        super().__init__(projection, post_ids, pre_ids, symmetric)
        if np.ndim(weight) == 0:
            self.weight: float | np.ndarray = check_float("weight", weight)
        else:
            w = np.asarray(weight)
            if w.dtype.kind not in "iuf":
                raise TypeError(f"weight must be a number or an array of real numbers; got dtype {w.dtype}")
            if w.shape != self.post_ids.shape:
                raise ValueError(f"weight must be one number or one per synapse ({self.post_ids.size}); got shape "
                                 f"{w.shape}")
            if not np.all(np.isfinite(w)):
                raise ValueError("weight must be finite")
            self.weight = w.astype(np.float64)
        if values is not None and not isinstance(values, dict):
            raise TypeError(f"values must be a dict of array name -> value; got {type(values).__name__}")
        self.values = {k: check_float(f"values[{k!r}]", v) for k, v in (values or {}).items()}


class Unlink(_Synapses):
    """Remove synapses ``pre id -> post id`` from a masked or sparse projection (a sparse one drops them).

    Parameters
    ----------
    projection, post_ids, pre_ids
        As :class:`Link` (a projection with a mask or sparse storage; the
        stable ids of each synapse's ends, pair by pair); each synapse must
        exist.
    symmetric : bool, default=False
        Lateral projections only: also unlink ``post -> pre`` (an undirected
        edge, logged once).

    Raises
    ------
    TypeError, ValueError
        ``projection`` not a Projection, ids not integers, ``post_ids`` and
        ``pre_ids`` of different lengths or empty, or ``symmetric`` on a
        projection that is not lateral.
    """


class Assign(Event):
    """Set a per-unit variable of the named units (applied with the call's other events, all or none; not logged).

    Parameters
    ----------
    population : Population
        The population whose variable is set.
    variable : str
        A per-unit variable of shape ``(size,)``.
    ids : int or array_like of int
        Units alive when the event is applied or born earlier in the same call.
    values : float or array_like
        One value, or one per id; finite.

    Raises
    ------
    TypeError, ValueError
        ``population`` not a Population, ``variable`` not a string, ids not
        integers, or ``values`` neither one number nor one per id, or not finite.
    """

    def __init__(self, population: Population, variable: str, ids: ArrayLike, values: ArrayLike) -> None:
        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        self.population = population
        if not isinstance(variable, str):
            raise TypeError(f"variable must be a string; got {type(variable).__name__}")
        self.variable = variable
        self.ids = _pair_ids("ids", ids)
        vals = np.asarray(values, dtype=np.float64)
        try:
            self.values = np.broadcast_to(vals, self.ids.shape).copy()
        except ValueError:
            raise ValueError(f"values must be one number or one per id ({self.ids.size}); got shape {vals.shape}") from None
        if not np.all(np.isfinite(self.values)):
            raise ValueError("values must be finite")

    def __repr__(self):
        return f"Assign({self.population.name!r}, {self.variable!r}, ids={self.ids.tolist()})"


class Trigger:
    """Produce events when a condition holds.

    Parameters
    ----------
    condition : callable or KernelCall
        ``condition(network) -> bool`` evaluated in Python, or a KernelCall
        whose function returns a bool (evaluated inside compiled segments).
    action : callable
        ``action(network) -> Event or list of Events`` applied when the
        condition holds.
    every : int >= 1, default=1
        Evaluate at steps ``t`` with ``t % every == 0``.
    when : {"events", "dynamics"}, default="events"
        ``"events"`` (default): evaluated in the events phase, after the
        plasticity phase. ``"dynamics"``: evaluated right after the
        dynamics phase; when its events change the structure, the dynamics
        phase runs again before plasticity, so the step's activity (and
        everything learned from it) uses the new structure -- e.g. a batch
        re-encoded with newborn dictionary elements (conditional
        neurogenesis).
    name : str, optional
        Shown in schedules and error messages (default: the action's name).

    Raises
    ------
    TypeError
        If ``condition`` or ``action`` is not callable.
    ValueError
        If ``every < 1`` or ``when`` is not one of the two phases.

    See Also
    --------
    neurosim.triggers : compiled conditions.

    Examples
    --------
    A unit is born at step 2 and the first unit dies at step 3; the
    projection onto the population follows:

    >>> import neurosim as ns
    >>> net = ns.Network()
    >>> x, y = ns.Population("x", 2), ns.Population("y", 2, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y)
    >>> _ = net.add(x, y, W)
    >>> _ = net.connect(ns.GaussianStream([1.0, 1.0], seed=0), x)
    >>> born = ns.Trigger(lambda n: n.t == 2, lambda n: ns.Birth(y, 1), name="grow")
    >>> killed = ns.Trigger(lambda n: n.t == 3, lambda n: ns.Death(y, [0]), name="prune")
    >>> _ = net.add(born, killed)
    >>> _ = net.run(4)
    >>> y.ids.tolist(), W.weights.shape
    ([1, 2], (2, 2))
    >>> log = net.event_log
    >>> list(zip(log.step, log.kind, log.unit))
    [(2, 'birth', 2), (3, 'death', 0)]
    """

    def __init__(self, condition: Callable[[Network], bool] | KernelCall,
                 action: Callable[[Network], Event | Sequence[Event] | None], every: int = 1,
                 name: str | None = None, when: str = "events") -> None:
        if not (callable(condition) or isinstance(condition, KernelCall)):
            raise TypeError("condition must be a callable f(network) -> bool or a KernelCall")
        if not callable(action):
            raise TypeError("action must be a callable f(network) -> Event | list[Event]")
        self.condition, self.action = condition, action
        self.every = check_int("every", every, low=1)
        self.name = name or getattr(action, "__name__", "trigger")
        if when not in ("events", "dynamics"):
            raise ValueError(f"when must be 'events' or 'dynamics'; got {when!r}")
        self.when = when

    @property
    def compiled(self) -> bool:
        """Whether the condition is a KernelCall (evaluated inside compiled segments)."""
        return isinstance(self.condition, KernelCall)

    def holds(self, network: Network) -> bool:
        """Evaluate the condition now.

        Parameters
        ----------
        network : neurosim.Network
            Passed to a Python condition.

        Returns
        -------
        bool
            Whether the trigger fires.
        """
        if isinstance(self.condition, KernelCall):
            return bool(self.condition())
        return bool(self.condition(network))

    def events(self, network: Network) -> list[Event]:
        """Call the action and check what it returns.

        Parameters
        ----------
        network : neurosim.Network
            Passed to the action.

        Returns
        -------
        list of Event
            The events to apply (empty when the action returns ``None``).

        Raises
        ------
        TypeError
            If the action returns something that is not an Event.
        """
        out = self.action(network)
        if out is None:
            return []
        out = [out] if isinstance(out, Event) else list(out)
        for e in out:
            if not isinstance(e, Event):
                raise TypeError(f"trigger {self.name!r} action returned {type(e).__name__}, not an Event")
        return out


@dataclass
class EventLog:
    """One row per unit born or killed and one per synapse linked or unlinked (``network.event_log``).

    Parameters
    ----------
    step : list of int, optional
        The step of each row.
    kind : list of str, optional
        ``"birth"`` or ``"death"`` (a unit), ``"link"`` or ``"unlink"`` (a synapse).
    population : list of str, optional
        The population's name; for a synapse, the projection's name.
    unit : list of int, optional
        The unit's stable id; for a synapse, the post unit's id.
    partner : list of int, optional
        For a synapse, the pre unit's stable id; -1 for a unit's row.
    """

    step: list = field(default_factory=list)
    kind: list = field(default_factory=list)
    population: list = field(default_factory=list)
    unit: list = field(default_factory=list)
    partner: list = field(default_factory=list)

    def add(self, step: int, kind: str, population: str, ids: ArrayLike, partners: ArrayLike | None = None) -> None:
        """Append one row per id.

        Parameters
        ----------
        step : int
            The step the event was applied at.
        kind : {"birth", "death", "link", "unlink"}
            What happened.
        population : str
            The population's name (the projection's for a synapse).
        ids : int or array_like of int
            The units affected (the post units of synapses).
        partners : int or array_like of int, optional
            The pre units of synapses, one per id; default -1 (a unit's row).
        """
        ids = np.atleast_1d(ids)
        partners = np.full(ids.shape, -1) if partners is None else np.atleast_1d(partners)
        n = min(ids.size, partners.size)
        # whole lists at once (a pruning step logs a row per synapse); Python ints, as JSON and the log's users want
        self.step.extend([int(step)] * n)
        self.kind.extend([kind] * n)
        self.population.extend([population] * n)
        self.unit.extend(np.asarray(ids[:n], dtype=np.int64).tolist())
        self.partner.extend(np.asarray(partners[:n], dtype=np.int64).tolist())

    def __len__(self):
        return len(self.step)

    def to_dict(self) -> dict[str, list]:
        """The log as plain lists, for JSON (checkpoints).

        Returns
        -------
        dict
            ``{"step": [...], "kind": [...], "population": [...], "unit": [...], "partner": [...]}``.
        """
        return {"step": list(self.step), "kind": list(self.kind), "population": list(self.population),
                "unit": list(self.unit), "partner": list(self.partner)}

    @classmethod
    def from_dict(cls, d: dict) -> EventLog:
        """The inverse of :meth:`to_dict`.

        Parameters
        ----------
        d : dict
            With the keys of :meth:`to_dict`; a log written before synapse
            events existed has no ``"partner"`` (every row is then a unit's).

        Returns
        -------
        EventLog
            A new log holding copies of the lists.

        Raises
        ------
        KeyError
            If one of the four other keys is missing.
        """
        partner = list(d["partner"]) if "partner" in d else [-1] * len(d["step"])
        return cls(list(d["step"]), list(d["kind"]), list(d["population"]), list(d["unit"]), partner)
