"""Populations: groups of units with stable ids and vectorized state.

A :class:`Population` stores every state variable as one array whose last
axis runs over its live units (struct of arrays). Activity has a leading batch
axis, ``(batch, size)``; per-unit variables such as the similarity-matching
``mu`` are ``(size,)``. Units carry integer ids that are never reused, so a
recording can say which unit a column belonged to after units are born and
killed; :meth:`Population.unit` gives an object view of one unit for
inspection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_float, check_int, check_memory

if TYPE_CHECKING:
    from neurosim.dynamics.base import Dynamics
    from neurosim.network import Network

__all__ = ["Population", "Unit"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_name(kind: str, name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name must be a string; got {type(name).__name__}")
    if not _NAME.match(name):
        raise ValueError(f"{kind} name must be a Python identifier (letters, digits, underscore); got {name!r}")
    return name


@dataclass
class _VarSpec:
    """How a per-unit variable is laid out and what newborn units start with."""

    per_sample: bool
    init: float
    pair: bool = False  # (size, size): one value per pair of units, e.g. a code's second-moment matrix
    units: str | None = None  # CF-style units of a recording ("1": dimensionless)
    long_name: str | None = None  # what a recording of it says the variable is


class Population:
    """A group of units with stable ids.

    Parameters
    ----------
    name : str
        Identifier, unique within a network.
    size : int
        Number of units at creation (>= 1).
    dynamics : neurosim.dynamics.Dynamics, optional
        How the activity is computed inside a step. ``None`` for populations
        driven by an input stream.
    max_size : int >= size, optional
        Most units the population may hold; a :class:`~neurosim.events.Birth`
        that would exceed it is refused before anything is allocated.
        ``None``: no stated maximum (a Birth is still refused when its
        arrays would not fit in the available memory, see
        :meth:`neurosim.network.Network.apply`).

    Notes
    -----
    A population may shrink to zero units (every unit killed) and grow
    again; while it is empty its arrays have a zero-length unit axis and
    both run paths step it like any other.

    Attributes
    ----------
    ids : ndarray of int64, shape (size,)
        Stable unit ids; column ``i`` of every state array belongs to unit ``ids[i]``.
    activity : ndarray, shape (batch, size)
        The units' activity in the current step.

    Raises
    ------
    ValueError
        If ``name`` is not an identifier, ``size < 1`` or ``max_size < size``,
        or the population's arrays at ``size`` would need more memory than is
        available (``MemAvailable`` of ``/proc/meminfo``), before allocating.
    TypeError
        If ``dynamics`` is not a :class:`~neurosim.dynamics.Dynamics`.

    Examples
    --------
    >>> import neurosim as ns
    >>> pop = ns.Population("y", 3, dynamics=ns.Jacobi(tol=1e-8))
    >>> pop.size, pop.ids.tolist(), pop.activity.shape
    (3, [0, 1, 2], (1, 3))
    >>> mu = pop.add_variable("mu", init=1.0)
    >>> pop.state["mu"].tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, name: str, size: int, dynamics: Dynamics | None = None, max_size: int | None = None) -> None:
        self.name = check_name("population", name)
        size = check_int("size", size, low=1)
        self.max_size = None if max_size is None else check_int("max_size", max_size, low=size)
        check_memory(16 * size, f"Population {self.name!r} of size={size} (its ids and activity, 8 bytes per unit each)")
        self.ids = np.arange(size, dtype=np.int64)
        self.next_id = size
        self.batch = 1
        self._specs: dict[str, _VarSpec] = {"activity": _VarSpec(True, 0.0, units="1",
                                                                  long_name=f"activity of population {self.name}")}
        self.state: dict[str, np.ndarray] = {"activity": np.zeros((1, size))}
        self.network: Network | None = None
        self.dynamics: Dynamics | None = None
        if dynamics is not None:
            self.set_dynamics(dynamics)

    # -- structure -----------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of units alive now (``>= 0``)."""
        return int(self.ids.size)

    @property
    def activity(self) -> np.ndarray:
        """The units' activity in the current step, shape ``(batch, size)`` (``state["activity"]``)."""
        return self.state["activity"]

    def set_dynamics(self, dynamics: Dynamics) -> None:
        """Make ``dynamics`` compute this population's activity.

        Parameters
        ----------
        dynamics : neurosim.dynamics.Dynamics
            A dynamics object not driving another population.

        Raises
        ------
        TypeError
            If ``dynamics`` is not a Dynamics instance.
        ValueError
            If it already drives another population.
        """
        from neurosim.dynamics.base import Dynamics

        if not isinstance(dynamics, Dynamics):
            raise TypeError(f"dynamics must be a neurosim Dynamics instance; got {type(dynamics).__name__}")
        if dynamics.population is not None and dynamics.population is not self:
            raise ValueError("this Dynamics object already drives another population")
        dynamics.population = self
        self.dynamics = dynamics

    def add_variable(self, name: str, init: float = 0.0, per_sample: bool = False, pair: bool = False, *,
                     units: str | None = None, long_name: str | None = None) -> np.ndarray:
        """Declare a state variable; shape ``(size,)``, ``(batch, size)`` (``per_sample``) or ``(size, size)`` (``pair``).

        ``units`` and ``long_name`` describe it in recordings (the
        variable's ``attrs``; see :meth:`variable_attrs` for the defaults);
        a later declaration of the same variable adds them where the first
        left them out.

        A *pair* variable holds one value per ordered pair of units (e.g. the
        memory matrix ``A = sum alpha alpha^T`` of online dictionary
        learning): a Birth adds rows and columns filled with ``init``, a
        Death removes the unit's row and column. Declaring an existing
        variable again with the same layout is allowed (several rules may
        declare the same ``mu``) and keeps its values.

        Parameters
        ----------
        name : str
            Variable name (a Python identifier).
        init : float, optional
            Initial value of every entry, also of newborn units.
        per_sample : bool, optional
            One value per batch sample and unit, shape ``(batch, size)``.
        pair : bool, optional
            One value per ordered pair of units, shape ``(size, size)``.
        units : str, optional
            Physical units written to the recorded variable's ``attrs``
            (``""`` for dimensionless); default from :meth:`variable_attrs`.
        long_name : str, optional
            Human-readable name written to the recorded variable's ``attrs``.

        Returns
        -------
        numpy.ndarray
            The variable's array, ``state[name]``.

        Raises
        ------
        ValueError
            If ``per_sample`` and ``pair`` are both set, the variable
            exists with another layout, or its array would need more memory
            than is available (a ``pair`` variable of a large population).
        """
        check_name("variable", name)
        init = check_float("init", init)
        for key, value in (("units", units), ("long_name", long_name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{key} must be a string or None; got {type(value).__name__}")
        if per_sample and pair:
            raise ValueError(f"variable {name!r}: per_sample and pair layouts exclude each other")
        spec = _VarSpec(bool(per_sample), init, bool(pair), units, long_name)
        if name in self._specs:
            old = self._specs[name]
            if (old.per_sample, old.pair) != (spec.per_sample, spec.pair):
                raise ValueError(f"variable {name!r} of population {self.name!r} already exists with another layout")
            old.units = old.units if old.units is not None else units
            old.long_name = old.long_name if old.long_name is not None else long_name
            return self.state[name]
        shape = self._shape(spec, self.size)
        check_memory(8 * int(np.prod(shape)), f"variable {name!r} of population {self.name!r}, shape {shape},")
        self._specs[name] = spec
        self.state[name] = np.full(shape, init)
        return self.state[name]

    def _shape(self, spec, size: int) -> tuple:
        if spec.pair:
            return (size, size)
        return (self.batch, size) if spec.per_sample else (size,)

    def variable_shape(self, name: str, size: int | None = None) -> tuple[int, ...]:
        """Shape of variable ``name`` at ``size`` units (default: now).

        Parameters
        ----------
        name : str
            A declared variable.
        size : int, optional
            Number of units; default the current size.

        Returns
        -------
        tuple of int
            ``(size,)``, ``(batch, size)`` or ``(size, size)`` by the layout.
        """
        return self._shape(self._specs[name], self.size if size is None else size)

    def variable_attrs(self, name: str) -> dict:
        """``{"units", "long_name"}`` of variable ``name`` as its recordings carry them.

        Declared with :meth:`add_variable`; otherwise ``units`` is ``"1"``
        (dimensionless, as rates and codes here are) and ``long_name`` names
        the variable and this population.

        Parameters
        ----------
        name : str
            A variable of this population (``"activity"`` or a declared one).

        Returns
        -------
        dict
            ``{"units": str, "long_name": str}``.

        Examples
        --------
        >>> import neurosim as ns
        >>> ns.Population("y", 3).variable_attrs("activity")
        {'units': '1', 'long_name': 'activity of population y'}
        """
        spec = self._specs[name]
        default = f"{name} of population {self.name}"
        return {"units": spec.units if spec.units is not None else "1",
                "long_name": spec.long_name if spec.long_name is not None else default}

    def is_pair(self, name: str) -> bool:
        """Whether variable ``name`` holds one value per pair of units.

        Parameters
        ----------
        name : str
            A declared variable.

        Returns
        -------
        bool
            True for the ``(size, size)`` layout.
        """
        return self._specs[name].pair

    def variable_init(self, name: str) -> float:
        """The value newborn units start variable ``name`` at.

        Parameters
        ----------
        name : str
            A variable declared with :meth:`add_variable`.

        Returns
        -------
        float
            The ``init`` it was declared with.
        """
        return self._specs[name].init

    def is_per_sample(self, name: str) -> bool:
        """Whether the declared variable ``name`` holds one value per batch sample and unit.

        Parameters
        ----------
        name : str
            As :meth:`is_pair`.

        Returns
        -------
        bool
            True for the ``(batch, size)`` layout.
        """
        return self._specs[name].per_sample

    def set_batch(self, batch: int) -> None:
        """Resize the per-sample variables to ``batch`` samples (refilled with their initial values).

        Called by :meth:`neurosim.Network.add` with the network's batch.

        Parameters
        ----------
        batch : int >= 1
            Samples per step.
        """
        batch = check_int("batch", batch, low=1)
        self.batch = batch
        for name, spec in self._specs.items():
            if spec.per_sample and self.state[name].shape[0] != batch and not spec.pair:
                self.state[name] = np.full((batch, self.size), spec.init)

    def index_of(self, ids: ArrayLike) -> np.ndarray:
        """Column indices of the given unit ids.

        Parameters
        ----------
        ids : int or array_like of int
            Stable unit ids.

        Returns
        -------
        numpy.ndarray of int64
            ``i`` with ``self.ids[i] == ids``.

        Raises
        ------
        ValueError
            If an id is not alive (the message lists the alive ids).
        TypeError
            If ``ids`` are not integers.
        """
        return _index_of(self.name, self.ids, ids)

    # -- structural change (staged by Network.apply, then swapped in) ----------------
    def _stage(self) -> "_Staged":
        """The structural state as a value that staged events replace piece by piece (never mutate)."""
        return _Staged(self.ids, self.next_id, dict(self.state))

    def _commit(self, staged: "_Staged"):
        self.ids, self.next_id = staged.ids, staged.next_id
        for name, arr in staged.state.items():
            self.state[name] = arr

    def _state_bytes(self, size: int) -> int:
        """Bytes of the ids and every state array at ``size`` units."""
        rows = sum(self.batch if spec.per_sample else size if spec.pair else 1 for spec in self._specs.values())
        return 8 * size * (rows + 1)

    def _grown(self, staged: "_Staged", n: int, init: dict | None) -> tuple:
        """``(new ids, staged state with n more units)``; ``staged`` itself is left as it was."""
        # every value is checked before anything is allocated at the new size
        init = init or {}
        unknown = set(init) - set(self._specs)
        if unknown:
            raise ValueError(f"init names unknown variables {sorted(unknown)} of population {self.name!r}; "
                             f"known: {sorted(self._specs)}")
        blocks = {}
        for name, spec in self._specs.items():
            if spec.pair:
                if name in init:
                    raise ValueError(f"init[{name!r}]: pair variable {name!r} of population {self.name!r} starts newborn "
                                     f"rows and columns at its declared value {spec.init}; it cannot be set per Birth")
                continue
            shape = staged.state[name].shape[:-1] + (n,)
            value = init.get(name, spec.init)
            try:
                arr = np.asarray(value, dtype=np.float64)
                blocks[name] = np.broadcast_to(arr, shape)
            except (TypeError, ValueError):
                raise ValueError(f"init[{name!r}] must be a number or an array broadcastable to {shape} "
                                 f"(n = {n} newborn units); got {value!r}") from None
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"init[{name!r}] must be finite; got {value!r}")
        new_ids = np.arange(staged.next_id, staged.next_id + n, dtype=np.int64)
        state = {name: np.concatenate([staged.state[name], block], axis=-1) for name, block in blocks.items()}
        for name, spec in self._specs.items():
            if spec.pair:
                old = staged.state[name]
                size = old.shape[0]
                grown = np.full((size + n, size + n), spec.init)
                grown[:size, :size] = old
                state[name] = grown
        state = {name: state[name] for name in self._specs}  # keep the declaration order
        return new_ids, _Staged(np.concatenate([staged.ids, new_ids]), staged.next_id + n, state)

    def _shrunk(self, staged: "_Staged", index: np.ndarray) -> "_Staged":
        """``staged`` without the units at columns ``index`` (possibly all of them)."""
        keep = np.ones(staged.ids.size, dtype=bool)
        keep[index] = False
        state = {name: np.ascontiguousarray(a[keep][:, keep] if self._specs[name].pair else a[..., keep])
                 for name, a in staged.state.items()}
        return _Staged(staged.ids[keep], staged.next_id, state)

    # -- inspection ---------------------------------------------------------------
    def unit(self, uid: int) -> Unit:
        """An object view of the unit with stable id ``uid``.

        Parameters
        ----------
        uid : int >= 0
            A stable id of a unit alive now.

        Returns
        -------
        Unit
            Read-only view: state, incoming and outgoing synapses.

        Raises
        ------
        ValueError
            If no unit with that id is alive.
        """
        (i,) = self.index_of([check_int("uid", uid, low=0)])
        return Unit(self, int(uid), int(i))

    def params(self) -> dict[str, Any]:
        """The population's parameters: size, ``max_size`` and its dynamics' (as ``"dynamics.<name>"``).

        Returns
        -------
        dict
            Plain values, as recorded Datasets and checkpoints carry them.
        """
        out: dict[str, Any] = {"size": self.size}
        if self.max_size is not None:
            out["max_size"] = self.max_size
        if self.dynamics is not None:
            out.update({f"dynamics.{k}": v for k, v in self.dynamics.params().items()})
        return out

    def __repr__(self) -> str:
        dyn = type(self.dynamics).__name__ if self.dynamics is not None else "input"
        out = f"Population({self.name!r}, size={self.size}, dynamics={dyn}, batch={self.batch}"
        if self.max_size is not None:
            out += f", max_size={self.max_size}"
        if self.next_id != self.size or (self.size and self.ids[-1] != self.size - 1):
            # units were born or killed: say which ids are alive (stable ids, never reused)
            out += f", ids={_ids_text(self.ids)}"
        return out + f", variables={list(self.state)})"


def _ids_text(ids: np.ndarray) -> str:
    """Ids for a repr: all when few, else the first and last three."""
    values = [int(i) for i in ids]
    if len(values) <= 8:
        return "[" + ", ".join(map(str, values)) + "]"
    return "[" + ", ".join(map(str, values[:3])) + ", ..., " + ", ".join(map(str, values[-3:])) + "]"


@dataclass
class _Staged:
    """A population's structure while a list of events is validated: replaced, never mutated."""

    ids: np.ndarray
    next_id: int
    state: dict


def _index_of(name: str, alive: np.ndarray, ids) -> np.ndarray:
    """Column indices in ``alive`` of the unit ids ``ids``; ValueError naming population ``name`` otherwise."""
    ids = np.atleast_1d(np.asarray(ids))
    if ids.dtype.kind not in "iu":
        raise TypeError(f"ids must be integers; got dtype {ids.dtype}")
    if alive.size and ids.size:
        # alive ids are increasing (births append larger ids, deaths keep the order): a search, not a dict of
        # every unit, for the few ids an event names (a growing network applies events every few steps). Ids are
        # distinct, so a position holding the id is its position even were the order broken: only a miss needs
        # the dict below, and nothing here costs a pass over every unit
        at = np.minimum(np.searchsorted(alive, ids), alive.size - 1)
        if np.all(alive[at] == ids):
            return at.astype(np.int64)
    pos = {int(u): i for i, u in enumerate(alive)}
    missing = [int(u) for u in ids if int(u) not in pos]
    if missing:
        shown = alive[:20].tolist()
        more = f" and {alive.size - 20} more" if alive.size > 20 else ""
        raise ValueError(f"units {missing} are not alive in population {name!r} "
                         f"(alive ids: {shown}{more}; {alive.size} alive)")
    return np.array([pos[int(u)] for u in ids], dtype=np.int64)


@dataclass
class Unit:
    """Read-only view of one unit: its id, state, incoming and outgoing synapses.

    Made by :meth:`Population.unit`; the arrays it returns are copies.

    Parameters
    ----------
    population : Population
        The unit's population.
    id : int
        The unit's stable id.
    index : int
        Its column in the population's state arrays now.
    """

    population: Population
    id: int
    index: int = field(repr=False)

    @property
    def state(self) -> dict[str, np.ndarray]:
        """``{variable: value}`` of this unit (copies; per-sample variables give one value per sample)."""
        return {k: np.array(v[..., self.index]) for k, v in self.population.state.items()}

    def _projections(self):
        net = self.population.network
        return [] if net is None else list(net.projections.values())

    def _synapses(self, side: str) -> dict:
        """``{projection: (partner ids, weights)}`` where this unit is the ``side`` ("post" or "pre")."""
        out = {}
        for p in self._projections():
            if getattr(p, side) is not self.population:
                continue
            if p.sparse:
                post, pre = p.synapse_index.pairs()
                sel = (post if side == "post" else pre) == self.index
                partner = (pre if side == "post" else post)[sel]
                ids = (p.pre if side == "post" else p.post).ids
                out[p.name] = (ids[partner].copy(), p.weights[sel].copy())
                continue
            if side == "post":
                w, ids, sel = p.weights[self.index], p.pre.ids, None if p.mask is None else p.mask[self.index]
            else:
                w, ids, sel = p.weights[:, self.index], p.post.ids, None if p.mask is None else p.mask[:, self.index]
            keep = np.ones(ids.size, dtype=bool) if sel is None else sel.copy()
            if p.lateral:
                keep &= ids != self.id
            out[p.name] = (ids[keep].copy(), w[keep].copy())
        return out

    @property
    def incoming(self) -> dict:
        """``{projection name: (pre ids, weights)}`` of synapses onto this unit."""
        return self._synapses("post")

    @property
    def outgoing(self) -> dict:
        """``{projection name: (post ids, weights)}`` of synapses from this unit."""
        return self._synapses("pre")
