"""The network: populations, projections, rules, inputs, triggers and recorders.

The network holds the entities and their state; :mod:`neurosim.engine` runs
it. Its structure is available as ``network.graph``, a ``networkx.DiGraph``
whose nodes are population names and whose edges are projections (a lateral
projection is a self-loop).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim._lazy import lazy_module
from neurosim._validation import available_memory as _available_memory  # by this name for Birth's check
from neurosim._validation import check_choice, check_float, check_int
from neurosim.component import COMPONENT_PHASES, PHASES, Component
from neurosim.events import Assign, Birth, Event, EventLog, Link, Trigger, Unlink
from neurosim.population import Population, _index_of
from neurosim.recording import Recorder, RecorderDict
from neurosim.rules.base import Rule, UnitRule
from neurosim.streams import Stream
from neurosim.structural_plasticity import _SynapseRule
from neurosim.synapses import Projection

if TYPE_CHECKING:
    import networkx as nx

    from neurosim.engine import Engine
    from neurosim.signals import Signal
else:
    nx = lazy_module("networkx")  # imported on first use (neurosim/_lazy.py)

__all__ = ["Network", "Input", "PHASES", "StepSchedule"]


def _resolved(path):
    """``path`` absolute with symlinks resolved (a ``pathlib.Path``), so two spellings of one store compare equal."""
    from pathlib import Path

    return Path(os.path.abspath(os.fspath(path))).resolve()


class Input:
    """Drives a population's activity from a :class:`~neurosim.streams.Stream`.

    Made by :meth:`Network.connect`; in the input phase of step ``t`` the
    population's activity becomes ``stream.block(t - 1, 1, batch)[0]``.

    Parameters
    ----------
    stream : neurosim.streams.Stream
        The source; its ``dim`` must equal the population's size.
    population : neurosim.Population
        The driven population (one without dynamics).

    Raises
    ------
    TypeError
        If ``stream`` is not a Stream or ``population`` not a Population.
    ValueError
        If ``stream.dim`` differs from ``population.size``.
    """

    def __init__(self, stream: Stream, population: Population) -> None:
        if not isinstance(stream, Stream):
            raise TypeError(f"stream must be a neurosim Stream; got {type(stream).__name__}")
        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        if stream.dim != population.size:
            raise ValueError(
                f"stream dimension ({stream.dim}) must equal the size of population {population.name!r} ({population.size})"
            )
        self.stream, self.population = stream, population


class Network:
    """A circuit of populations and projections, and its state.

    Parameters
    ----------
    seed : int >= 0, default=0
        Seeds ``network.rng``, the generator of every random draw the network
        makes (initial weights, newborn units). Input streams carry their own
        seeds. The same seeds give bit-identical runs.
    batch : int >= 1, default=1
        Samples processed per step; activity arrays are ``(batch, size)``.
    name : str, default="network"
        Name of the network, shown in schedules, summaries and recordings.
    dt : float > 0, optional
        Physical duration of one step, in seconds. When set, recorded
        Datasets index time as ``timedelta64`` (``step * dt``), so
        ``ds.resample(time="10ms")`` works, and keep the step count as a
        coordinate. ``None`` (default): time is the step count.

    Raises
    ------
    ValueError
        If ``seed < 0``, ``batch < 1`` or ``dt <= 0``.
    TypeError
        If ``name`` is not a string.

    See Also
    --------
    Population, Projection, Recorder

    Examples
    --------
    Two inputs drive two linear units through constant weights:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network(seed=0)
    >>> x = ns.Population("x", 2)
    >>> y = ns.Population("y", 2, dynamics=ns.Linear())
    >>> _ = net.add(x, y, ns.Projection("W", x, y, init=ns.Constant(0.5)))
    >>> _ = net.connect(ns.ArrayStream(np.array([[1.0, 0.0], [0.0, 2.0]])), x)
    >>> _ = net.record(y)
    >>> _ = net.run(2)
    >>> net.t
    2
    >>> print(net.recorders["y"].to_dataset().activity.isel(batch=0).values)
    [[0.5 0.5]
     [1.  1. ]]
    """

    def __init__(self, seed: int = 0, batch: int = 1, name: str = "network", dt: float | None = None) -> None:
        self.seed = check_int("seed", seed, low=0)
        self.batch = check_int("batch", batch, low=1)
        if not isinstance(name, str):
            raise TypeError(f"name must be a string; got {type(name).__name__}")
        self.name = name
        self.dt = None if dt is None else check_float("dt", dt, low=0.0, low_open=True)
        self.rng = np.random.default_rng(self.seed)
        self.t = 0
        self.populations: dict[str, Population] = {}
        self.projections: dict[str, Projection] = {}
        self.unit_rules: list[UnitRule] = []
        self.inputs: list[Input] = []
        self.triggers: list[Trigger] = []
        #: recorders by name; a missing name is a KeyError saying which exist and how to record
        self.recorders: dict[str, Recorder] = RecorderDict()
        self.callbacks: list = []
        self.event_log = EventLog()
        #: seconds spent in segments that had to be compiled (or loaded from numba's cache) by this network
        self.timings = {"compile_seconds": 0.0}
        self.attrs: dict = {}
        #: components added with ``add`` that are neither rules nor dynamics (e.g. statistics, selectors)
        self.components: list[Component] = []
        self._engine: Engine | None = None
        self._version = 0  # bumped by every structural change, so a running engine re-reads the network
        self._running = False
        self._warned_per_step: set = set()

    # -- building -----------------------------------------------------------------
    def add(self, *entities: Any) -> Any:
        """Add populations, projections, unit rules, components, triggers or recorders.

        Entities are added in the order given; a projection's populations
        must be added first (earlier in the same call is enough).

        Parameters
        ----------
        *entities : Population, Projection, UnitRule, Component, Trigger or Recorder
            Any number of entities. A :class:`~neurosim.component.Component`
            that is neither a rule nor dynamics (a statistics accumulator, a
            selector) joins the step schedule by its ``phase`` and ``order``.

        Returns
        -------
        object or tuple
            The entity when one was given, else the tuple of entities (so
            ``W = net.add(Projection(...))`` keeps a handle).

        Raises
        ------
        TypeError
            If an entity is none of the kinds above (dynamics belong to a
            Population, signals to the rules that read them).
        ValueError
            If a name is taken, an entity already belongs to a network, or a
            referenced population is not in this network.
        """
        for e in entities:
            if isinstance(e, Population):
                self._add_population(e)
            elif isinstance(e, Projection):
                self._add_projection(e)
            elif isinstance(e, UnitRule):
                self._require(e.population, "unit rule")
                for var, init in e.variables.items():
                    e.population.add_variable(var, init, **e.variable_attrs.get(var, {}))
                e.network = self
                e.attach(self)
                self.unit_rules.append(e)
            elif isinstance(e, Component) and not isinstance(e, Rule):
                self._add_component(e)
            elif isinstance(e, Trigger):
                self.triggers.append(e)
            elif isinstance(e, Recorder):
                self._add_recorder(e)
            else:
                raise TypeError(f"cannot add {type(e).__name__} to a Network")
            self._changed()
        return entities[0] if len(entities) == 1 else entities

    def _add_component(self, comp: Component):
        if comp.phase not in COMPONENT_PHASES:
            raise ValueError(f"{comp.label} has phase {comp.phase!r}; components run in one of {COMPONENT_PHASES}")
        from neurosim.dynamics.base import Dynamics
        from neurosim.signals import Signal

        if isinstance(comp, Dynamics):
            raise TypeError("dynamics are given to a Population (Population(name, size, dynamics=...)), not added to a Network")
        if isinstance(comp, Signal):
            raise TypeError("signals are not added to a Network: pass them to the rules that read them")
        if any(c is comp for c in self.components):
            raise ValueError(f"{comp.label} is already in the network")
        for pop in comp.populations():
            self._require(pop, comp.label)
        comp.network = self
        comp.attach(self)
        self.components.append(comp)

    def _require(self, pop, what):
        if self.populations.get(pop.name) is not pop:
            raise ValueError(f"{what} refers to population {pop.name!r}, which is not in this network; add it first")

    def _add_population(self, pop: Population):
        if pop.name in self.populations:
            raise ValueError(f"a population named {pop.name!r} is already in the network")
        if pop.network is not None:
            raise ValueError(f"population {pop.name!r} already belongs to a network")
        pop.network = self
        pop.set_batch(self.batch)
        self.populations[pop.name] = pop
        if pop.dynamics is not None:
            pop.dynamics.attach(self)  # declare the variables the dynamics keep (e.g. a LIF unit's v, ge, gi)

    def _add_projection(self, proj: Projection):
        if proj.name in self.projections:
            raise ValueError(f"a projection named {proj.name!r} is already in the network")
        self._require(proj.pre, f"projection {proj.name!r}")
        self._require(proj.post, f"projection {proj.name!r}")
        proj.network = self
        proj.materialize(self.rng)
        if proj.rule is not None:
            for var, init in proj.rule.post_variables.items():
                proj.post.add_variable(var, init, **proj.rule.variable_attrs.get(var, {}))
            proj.rule.attach(self)
        self.projections[proj.name] = proj

    def _add_recorder(self, rec: Recorder):
        if rec.name in self.recorders:
            raise ValueError(f"a recorder named {rec.name!r} is already in the network")
        target = rec.target
        if isinstance(target, Population):
            self._require(target, f"recorder {rec.name!r}")
        elif self.projections.get(target.name) is not target:
            raise ValueError(f"recorder {rec.name!r} refers to projection {target.name!r}, which is not in this network")
        rec.validate()
        if rec.store is not None:
            # two recorders writing one store replace each other's samples (a KeyError 'weights' at the next
            # flush, and every later run failing the same way): refused here, before any run
            here = _resolved(rec.store)
            for other in self.recorders.values():
                if other.store is None:
                    continue
                there = _resolved(other.store)
                if here == there or here in there.parents or there in here.parents:
                    raise ValueError(f"recorders {other.name!r} and {rec.name!r} would both write the store "
                                     f"{rec.store}" + ("" if here == there else f" (inside {other.store})"
                                                       if there in here.parents else f" (around {other.store})") +
                                     "; a store holds one recorder's samples: give each recorder a store= path "
                                     "of its own")
        rec.network = self
        self.recorders[rec.name] = rec

    def connect(self, stream: Stream, population: Population) -> Input:
        """Drive ``population`` (which must have no dynamics) from ``stream``.

        Parameters
        ----------
        stream : neurosim.streams.Stream
            Input of dimension ``population.size``; step ``t`` reads
            ``stream.block(t - 1, 1, batch)``.
        population : neurosim.Population
            A population of this network without dynamics and without
            another input.

        Returns
        -------
        Input
            The connection (``network.inputs`` lists it).

        Raises
        ------
        ValueError
            If the population is not in the network, has dynamics, already
            has an input, or its size differs from ``stream.dim``.
        """
        self._require(population, "input")
        if population.dynamics is not None:
            raise ValueError(f"population {population.name!r} has dynamics; an input stream drives populations without dynamics")
        if any(i.population is population for i in self.inputs):
            raise ValueError(f"population {population.name!r} already has an input stream")
        inp = Input(stream, population)
        self.inputs.append(inp)
        self._changed()
        return inp

    def record(self, target: Population | Projection, variables: str | Sequence[str] = "activity", every: int = 1,
               name: str | None = None, time_dim: str = "time", store: str | os.PathLike | None = None,
               buffer: int | None = None, overwrite: bool = False) -> Recorder:
        """Create and add a :class:`~neurosim.recording.Recorder` (``store``: stream it to a zarr store).

        Parameters
        ----------
        target : Population or Projection
            What to sample; it must be in this network.
        variables : str or sequence of str, default="activity"
            State variables of ``target`` (``"activity"``, declared per-unit
            variables such as ``"mu"``, or ``"weights"`` of a projection).
        every : int >= 1, default=1
            Sample at steps ``t`` with ``t % every == 0``.
        name : str, optional
            Recorder name, unique in the network (default: the target's name).
        time_dim : str, default="time"
            Name of the time dimension of the recorded Dataset.
        store : path, optional
            Stream the samples to a zarr store at this path while the run
            goes on (the ``zarr`` extra). It must be a new path, an empty
            folder or a store this recorder wrote.
        buffer : int >= 1, optional
            Samples held in memory before a store is written (default: sized
            to about 64 MiB).
        overwrite : bool, default=False
            Replace whatever else is at ``store``.

        Returns
        -------
        Recorder
            The recorder, also ``network.recorders[name]``.

        Raises
        ------
        ValueError
            If the target is not in the network, a variable is unknown, the
            name is taken, or ``store`` holds something else.

        See Also
        --------
        neurosim.recording.Recorder.to_dataset

        Examples
        --------
        >>> import numpy as np
        >>> import neurosim as ns
        >>> net = ns.Network()
        >>> x = ns.Population("x", 3)
        >>> _ = net.add(x)
        >>> _ = net.connect(ns.ArrayStream(np.arange(12.0).reshape(4, 3)), x)
        >>> rec = net.record(x, every=2)
        >>> _ = net.run(4)
        >>> ds = rec.to_dataset()
        >>> print(ds["time"].values, ds.activity.isel(batch=0).values.tolist())
        [2 4] [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]]
        """
        return self.add(Recorder(target, variables, every=every, name=name, time_dim=time_dim, store=store,
                                 buffer=buffer, overwrite=overwrite))

    def add_callback(self, fn: Callable[[Network], object], phase: str = "record", when: str = "after",
                     every: int = 1) -> Callable[[Network], object]:
        """Call ``fn(network)`` before or after ``phase`` of every ``every``-th step.

        Steps with a due callback run through the per-step path (using the
        compiled kernels one call at a time, so numbers do not change).

        Parameters
        ----------
        fn : callable
            Called as ``fn(network)``; its return value is ignored.
        phase : {"input", "dynamics", "plasticity", "events", "record"}, default="record"
            The phase of the step (:data:`PHASES`) the call is placed at.
        when : {"before", "after"}, default="after"
            Before or after that phase.
        every : int >= 1, default=1
            Call at steps ``t`` with ``t % every == 0``.

        Returns
        -------
        callable
            ``fn`` itself, so the method works as a decorator factory's result.

        Raises
        ------
        TypeError
            If ``fn`` is not callable.
        ValueError
            If ``phase``, ``when`` or ``every`` is out of range.
        """
        if not callable(fn):
            raise TypeError("fn must be callable as fn(network)")
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}; got {phase!r}")
        if when not in ("before", "after"):
            raise ValueError(f"when must be 'before' or 'after'; got {when!r}")
        self.callbacks.append((fn, phase, when, check_int("every", every, low=1)))
        return fn

    def _changed(self):
        self._version += 1
        if not self._running:
            self._engine = None

    def __getitem__(self, name: str):
        """The population, projection or recorder called ``name``."""
        found = [d[name] for d in (self.populations, self.projections) if name in d]
        if len(found) > 1:
            raise KeyError(f"{name!r} names both a population and a projection; use network.populations[{name!r}] "
                           f"or network.projections[{name!r}]")
        if found:
            return found[0]
        if name in self.recorders:
            return self.recorders[name]
        raise KeyError(f"no population, projection or recorder named {name!r}; populations: {list(self.populations)}, "
                       f"projections: {list(self.projections)}, recorders: {list(self.recorders)}")

    def __contains__(self, name) -> bool:
        return name in self.populations or name in self.projections or name in self.recorders

    # -- structure ------------------------------------------------------------------
    @property
    def graph(self) -> nx.DiGraph:
        """Populations as nodes, projections as edges (attribute ``projections``: list of names)."""
        g = nx.DiGraph(name=self.name)
        for pop in self.populations.values():
            g.add_node(pop.name, population=pop, size=pop.size,
                       dynamics=type(pop.dynamics).__name__ if pop.dynamics is not None else None,
                       input=any(i.population is pop for i in self.inputs))
        for proj in self.projections.values():
            if g.has_edge(proj.pre.name, proj.post.name):
                g.edges[proj.pre.name, proj.post.name]["projections"].append(proj.name)
            else:
                g.add_edge(proj.pre.name, proj.post.name, projections=[proj.name])
        return g

    def validate(self) -> list[Population]:
        """Check wiring and shapes; return populations in the order their dynamics run.

        Checks weight shapes, that every population is driven (dynamics, an
        input stream or a component that writes it), that the feed-forward
        graph is acyclic, and every component's own ``validate``. Runs before
        every :meth:`run`.

        Returns
        -------
        list of Population
            The populations in topological order of the feed-forward graph
            (lateral projections excluded).

        Raises
        ------
        ValueError
            Naming the first problem found.
        """
        for proj in self.projections.values():
            have = proj.synapse_index.shape if proj.sparse else proj.weights.shape
            if have != (proj.post.size, proj.pre.size):
                raise ValueError(f"projection {proj.name!r} weights have shape {have} (post, pre), "
                                 f"expected {(proj.post.size, proj.pre.size)}")
            if proj.sparse and proj.weights.shape != (proj.synapse_index.size,):
                raise ValueError(f"projection {proj.name!r} holds {proj.weights.size} weights for "
                                 f"{proj.synapse_index.size} synapses")
        driven = {i.population.name for i in self.inputs}
        # a population holding a component's per-unit results (e.g. a selector's chosen slots) needs neither
        driven |= {name for c in self.components for name, _ in (c.writes() if hasattr(c, "writes") else ())}
        for pop in self.populations.values():
            if pop.dynamics is None and pop.name not in driven:
                raise ValueError(f"population {pop.name!r} has neither dynamics nor an input stream "
                                 "(nor variables a component writes)")
        wired = {n for p in self.projections.values() for n in (p.pre.name, p.post.name)}
        wired |= {i.population.name for i in self.inputs}
        for pop in self.populations.values():
            if pop.batch != self.batch and (pop.dynamics is not None or pop.name in wired):
                raise ValueError(f"population {pop.name!r} holds {pop.batch} sample(s) per step but is wired into "
                                 f"network {self.name!r} of batch {self.batch} (a selection population takes no "
                                 "dynamics, input or projections)")
        ff = nx.DiGraph()
        ff.add_nodes_from(self.populations)
        ff.add_edges_from((p.pre.name, p.post.name) for p in self.projections.values() if not p.lateral)
        try:
            order = list(nx.topological_sort(ff))
        except nx.NetworkXUnfeasible:
            cycle = nx.find_cycle(ff)
            raise ValueError(f"feed-forward projections form a cycle {cycle}; recurrence must be a lateral projection") from None
        for pop in self.populations.values():
            if pop.dynamics is not None:
                ffw = [p for p in self.projections.values() if p.post is pop and not p.lateral]
                lat = [p for p in self.projections.values() if p.post is pop and p.lateral]
                _refuse_sparse(pop.dynamics, ffw + lat)  # before connect, which may read the weights
                pop.dynamics.connect(ffw, lat)
            elif any(p.post is pop and not _learns_only(p) for p in self.projections.values()):
                names = [p.name for p in self.projections.values() if p.post is pop and not _learns_only(p)]
                raise ValueError(f"input population {pop.name!r} cannot receive projections {names}")
        for rec in self.recorders.values():
            rec.validate()
        ordered = [self.populations[n] for n in order if self.populations[n].dynamics is not None]
        for k, pop in enumerate(ordered):
            pop.dynamics.order = k  # type: ignore[union-attr]  # ordered holds populations with dynamics
        for comp in self._all_components(ordered):
            self._check_component(comp)
        return ordered

    def _check_component(self, comp):
        # a component must only touch this network's populations: a signal built on another
        # network's population would make this one learn from that one's input
        for pop in comp.populations():
            if self.populations.get(pop.name) is not pop:
                owner = "another network" if pop.network is not None else "no network"
                raise ValueError(f"{comp.label} reads population {pop.name!r}, which belongs to {owner}, "
                                 f"not to network {self.name!r}")
        if comp.phase not in COMPONENT_PHASES:
            raise ValueError(f"{comp.label} has phase {comp.phase!r}; components run in one of {COMPONENT_PHASES}")
        _refuse_sparse(comp, comp.projections())
        comp.validate(self)
        comp.check_structure()  # its constraints on the sizes, which Network.apply checks on staged sizes too

    def _all_components(self, ordered) -> list:
        comps = [p.dynamics for p in ordered]
        comps += self.signals()
        comps += list(self.unit_rules) + list(self.components)
        comps += [p.rule for p in self.projections.values() if p.rule is not None]
        return comps

    def schedule(self) -> StepSchedule:
        """The components in the order the engine runs them inside a step (``print`` it).

        Sorted by phase (dynamics, plasticity), then by ``order``, then by
        the order they were added, as Brian2 sorts by ``when``, ``order``
        and name.

        Returns
        -------
        StepSchedule
            Iterable over the components; its ``str`` is a table that also
            shows inputs, triggers and recorders.

        Raises
        ------
        ValueError
            If the network does not validate (:meth:`validate`).

        Examples
        --------
        >>> import neurosim as ns
        >>> net = ns.Network(name="demo")
        >>> x, y = ns.Population("x", 2), ns.Population("y", 2, dynamics=ns.Linear())
        >>> _ = net.add(x, y, ns.Projection("W", x, y, rule=ns.Hebbian(rate=0.01)))
        >>> _ = net.connect(ns.GaussianStream([1.0, 0.5], seed=0), x)
        >>> print(net.schedule())
        Step schedule of network 'demo':
          input                   GaussianStream -> x
          dynamics       0  Linear dynamics of 'y'
          plasticity     0  Hebbian on projection 'W'
          plasticity   end  NaN/Inf check of every state variable
        """
        ordered = self.validate()
        comps = self._all_components(ordered)
        keyed = sorted(enumerate(comps), key=lambda kc: (PHASES.index(kc[1].phase), kc[1].order, kc[0]))
        return StepSchedule([c for _, c in keyed], self)

    def signals(self) -> list[Signal]:
        """The distinct global signals read by the network's rules, in first-use order.

        Returns
        -------
        list of Signal
            Each signal once, bound to the network's batch size.
        """
        out, seen = [], set()
        rules: list[UnitRule | Rule] = [*self.unit_rules]
        rules += [p.rule for p in self.projections.values() if p.rule is not None]
        for src in rules:
            for s in src.signals():
                if id(s) not in seen:
                    seen.add(id(s))
                    s.bind(self.batch)
                    out.append(s)
        return out

    # -- events -----------------------------------------------------------------------
    def apply(self, *events):
        """Apply structural events now, all of them or none.

        The events are validated together, in order, against the structure
        each earlier one would leave: a :class:`~neurosim.events.Death` may
        name a unit born by an earlier :class:`~neurosim.events.Birth` of the
        same call, and a unit named by several Deaths dies once (the later
        Deaths drop it; they fail only for ids that are not alive and were
        not killed earlier in the call). Every new array (population state,
        weights and masks of every projection touching a changed population)
        is computed before any is swapped in, and every component checks the
        sizes the events would leave (its ``check_structure``, the checks
        :meth:`validate` runs), so an invalid event, a structure a component
        does not allow, an unreasonable size or a failed allocation raises
        with the network, its RNG and its event log exactly as they were.

        Parameters
        ----------
        *events : Birth, Death, Link, Unlink, Assign, Prune or Grow
            Applied in order; a single list of events is accepted too.
            Link, Unlink and Assign name units by id, alive or born earlier
            in the call; a Death after them removes the synapses and values
            with the unit. A :class:`~neurosim.structural_plasticity.Prune`
            or :class:`~neurosim.structural_plasticity.Grow` is resolved
            when its turn comes, against the synapses the earlier events
            leave, into the Unlink or Link it makes.

        Returns
        -------
        ndarray or list of ndarray
            The ids born or killed: one array for a single event, a list of
            arrays (one per event, in order) otherwise. A Death whose units
            all died earlier in the call gives an empty array.

        Raises
        ------
        TypeError
            For something that is not an event.
        ValueError
            For an event on a population outside this network or fed by an
            input stream, ids that are not alive, bad ``init`` values, a
            structure a component does not allow (its ``check_structure``,
            e.g. a Kohonen map's ``rows * cols`` units; the message names the
            component and the constraint), a Birth
            beyond the population's ``max_size``, or a Birth whose new arrays
            (population state, weights and masks) would need more bytes than
            the memory available (``MemAvailable`` of ``/proc/meminfo``); the
            message names the population and the sizes.
        MemoryError
            When an allocation fails anyway; the network is unchanged.

        Notes
        -----
        The event log gets one row per unit actually born or killed and one
        per synapse linked or unlinked (an undirected ``symmetric`` edge once).
        """
        if len(events) == 1 and isinstance(events[0], (list, tuple)):
            events = tuple(events[0])
        for e in events:
            if not isinstance(e, Event):
                raise TypeError(f"event must be a Birth, Death, Link, Unlink, Assign, Prune or Grow; got "
                                f"{type(e).__name__}")
        pops, projs, killed, rows, out = {}, {}, {}, [], []
        fresh = set()  # ids of staged synapse arrays this call copied already: later Links/Unlinks write them in place
        rng_state = self.rng.bit_generator.state  # a refused call must not consume random draws
        try:
            for e in events:
                if isinstance(e, _SynapseRule):
                    # a Prune or Grow becomes the Unlink or Link it makes of the synapses as they are staged now
                    e = self._resolve_synapse_rule(e, pops, projs)
                    if e is None:
                        out.append(np.zeros(0, dtype=np.int64))
                        continue
                if isinstance(e, (Link, Unlink)):
                    rows.append(self._stage_synapses(e, pops, projs, fresh))
                    out.append(np.zeros(0, dtype=np.int64))
                    continue
                if isinstance(e, Assign):
                    self._stage_assign(e, pops)
                    out.append(np.zeros(0, dtype=np.int64))
                    continue
                pop = e.population
                self._require(pop, "event")
                fed = [i for i in self.inputs if i.population is pop]
                if fed:
                    raise ValueError(f"population {pop.name!r} is driven by an input stream of dimension "
                                     f"{fed[0].stream.dim}; its size is fixed by the stream, so "
                                     f"{type(e).__name__} cannot change it")
                staged = pops.get(pop.name) or pop._stage()
                touching = [p for p in self.projections.values() if p.pre is pop or p.post is pop]
                if isinstance(e, Birth):
                    self._check_birth(pop, staged, e.n, touching, projs, pops)
                    ids, pops[pop.name] = pop._grown(staged, e.n, e.init)
                    unknown = set(e.weights) - {p.name for p in touching}
                    if unknown:
                        raise ValueError(f"Birth on {pop.name!r} gives weights for {sorted(unknown)}, which are not "
                                         f"projections touching it; touching: {[p.name for p in touching]}")
                    unknown = e.unlinked - {p.name for p in touching if p.structured}
                    if unknown:
                        raise ValueError(f"Birth on {pop.name!r} leaves {sorted(unknown)} unlinked, which are not "
                                         f"masked or sparse projections touching it; masked or sparse and touching: "
                                         f"{[p.name for p in touching if p.structured]}")
                    for p in touching:
                        projs[p.name] = p._grown(_staged_projection(p, projs), pop, e.n, self.rng,
                                                 given=e.weights.get(p.name), linked=p.name not in e.unlinked)
                    rows.append(("birth", pop.name, ids))
                else:
                    dead = killed.setdefault(pop.name, set())
                    ids = np.array([u for u in e.ids.tolist() if u not in dead], dtype=np.int64)
                    index = _index_of(pop.name, staged.ids, ids)
                    for p in touching:
                        projs[p.name] = p._shrunk(_staged_projection(p, projs), pop, index)
                    pops[pop.name] = pop._shrunk(staged, index)
                    dead.update(ids.tolist())
                    rows.append(("death", pop.name, ids))
                out.append(ids)
            for name, staged in projs.items():
                if isinstance(staged, _SynapseEdits) and staged.sparse:
                    projs[name] = staged.materialized()  # new arrays: before the commit, which must not fail
            # the components' constraints on the structure these events leave (a map's rows * cols, a code's
            # n_nonzero, ...), checked before anything is committed: a refused call changes nothing
            self._check_staged_structure(pops, events)
            for rec in self.recorders.values():
                # a recorder opens its store at the first change of structure (below): one it may not write
                # is refused before anything is committed
                rec.check_store(fresh=True)
        except MemoryError as err:
            self.rng.bit_generator.state = rng_state
            raise MemoryError(f"applying {list(events)} ran out of memory; nothing was applied and the network "
                              f"is unchanged") from err
        except BaseException:
            self.rng.bit_generator.state = rng_state
            raise
        # every array exists: swap them in (assignments only, nothing left to fail)
        for name, staged in pops.items():
            self.populations[name]._commit(staged)
        for name, staged in projs.items():
            if isinstance(staged, _SynapseEdits):
                staged.write_into(self.projections[name])
            else:
                self.projections[name]._commit(staged)
        for kind, pop_name, ids, *partners in rows:
            if ids.size:
                self.event_log.add(self.t, kind, pop_name, ids, partners[0] if partners else None)
        for rec in self.recorders.values():
            rec.prepare()
        return out[0] if len(out) == 1 else out

    def _check_staged_structure(self, pops: dict, events) -> None:
        """Let every component refuse the population sizes the staged events would leave.

        Runs each component's :meth:`~neurosim.component.Component.check_structure`
        -- the checks :meth:`validate` runs before every run -- on the staged
        sizes, so a Birth on a ``rows x cols`` map is refused here instead of
        committing and leaving a network that no run accepts. Links, Unlinks
        and Assigns change no size and are not checked again.
        """
        sizes = {name: pop.size for name, pop in self.populations.items()}
        changed = {name: int(staged.ids.size) for name, staged in pops.items() if staged.ids.size != sizes[name]}
        if not changed:
            return
        sizes.update(changed)
        kinds = sorted({type(e).__name__ for e in events})
        for comp in self._all_components([p for p in self.populations.values() if p.dynamics is not None]):
            try:
                comp.check_structure(sizes)
            except ValueError as err:
                text = str(err) if str(err).startswith(comp.label) else f"{comp.label}: {err}"
                leave = ", ".join(f"{name!r} {self.populations[name].size} -> {n} units" for name, n in changed.items())
                raise ValueError(f"{' and '.join(kinds)} refused ({leave}): {text}; nothing was applied (the network, "
                                 "its random generator and its event log are unchanged)") from err

    def _resolve_synapse_rule(self, e, pops, projs):
        """The Link or Unlink a Prune or Grow makes of its projection as the call's earlier events left it, or None."""
        p = self._structured_projection(e)
        staged = _staged_projection(p, projs)
        post_ids = (pops.get(p.post.name) or p.post._stage()).ids
        pre_ids = (pops.get(p.pre.name) or p.pre._stage()).ids
        return e.resolve(staged[0], staged[1], post_ids, pre_ids, self.rng)

    def _structured_projection(self, e) -> Projection:
        """The projection of a synapse event, refused unless it is this network's and masked or sparse."""
        p = e.projection
        if p.name not in self.projections or self.projections[p.name] is not p:
            raise ValueError(f"{type(e).__name__} names projection {p.name!r}, which is not in this network")
        if not p.structured:
            raise ValueError(f"{type(e).__name__} needs a masked or sparse projection; {p.name!r} is dense without a "
                             f"mask (give it mask= or connectivity= when building it)")
        return p

    def _stage_synapses(self, e, pops, projs, fresh: set) -> tuple:
        """Stage a Link or Unlink on ``projs``; return its event-log rows.

        The edits are kept as a list of synapses (:class:`_SynapseEdits`):
        a growing network links or unlinks a few synapses every few steps,
        and copying every synapse's arrays for each event cost more than
        the steps. A dense projection's are written into the live arrays at
        the commit; a sparse projection's are spliced into new arrays once
        per call (one copy of the synapses, not one per event). After a
        Birth or Death of the call touched a dense projection, its staged
        arrays are copied once and then written in place (``fresh`` holds
        the ids of those copies).
        """
        p = self._structured_projection(e)
        staged = projs.get(p.name)
        if staged is None or (p.sparse and not isinstance(staged, _SynapseEdits)):
            staged = _SynapseEdits(p._stage() if staged is None else staged, p)
        base = staged.base if isinstance(staged, _SynapseEdits) else staged
        w, m = base[0], base[1]
        post_ids = (pops.get(p.post.name) or p.post._stage()).ids
        pre_ids = (pops.get(p.pre.name) or p.pre._stage()).ids
        rows = _index_of(p.post.name, post_ids, e.post_ids)
        cols = _index_of(p.pre.name, pre_ids, e.pre_ids)
        self_ok = p.sparse and p.connectivity is not None and p.connectivity.self_connections
        if p.lateral and not self_ok and np.any(rows == cols):
            raise ValueError(f"{type(e).__name__} on the lateral projection {p.name!r} names a self-synapse "
                             f"(unit {int(e.post_ids[rows == cols][0])}); lateral projections have none unless "
                             "their connectivity allows self_connections")
        link = isinstance(e, Link)
        r, c = (np.r_[rows, cols], np.r_[cols, rows]) if e.symmetric else (rows, cols)
        # the weight of each synapse (r, c): a symmetric edge's pair gets its weight both ways
        weight = np.resize(np.broadcast_to(e.weight, rows.shape), r.shape) if link else np.zeros(r.shape)
        keys = r.astype(np.int64) * pre_ids.size + c
        ordered = np.sort(keys)
        twice = ordered[1:][ordered[1:] == ordered[:-1]]
        if twice.size:
            i, j = divmod(int(twice[0]), pre_ids.size)
            raise ValueError(f"{type(e).__name__} on {p.name!r} names the synapse {int(post_ids[i])} <- "
                             f"{int(pre_ids[j])} twice")
        present = staged.present(r, c) if isinstance(staged, _SynapseEdits) else m[r, c]
        multapses = p.sparse and p.connectivity is not None and p.connectivity.multapses
        if link and present.any() and not multapses:
            k = int(np.argmax(present))
            raise ValueError(f"Link on {p.name!r}: the synapse {int(post_ids[r[k]])} <- {int(pre_ids[c[k]])} exists "
                             "already (unlink it first to re-initialise it)")
        if not link and not present.all():
            k = int(np.argmin(present))
            raise ValueError(f"Unlink on {p.name!r}: there is no synapse {int(post_ids[r[k]])} <- "
                             f"{int(pre_ids[c[k]])}")
        arrays = dict(base[2]) if len(base) > 2 else {}
        if link:
            unknown = set(e.values) - set(arrays)
            if unknown:
                raise ValueError(f"Link on {p.name!r} gives values for {sorted(unknown)}, which are not arrays of "
                                 f"the projection; it has {sorted(arrays)}")
        log = ("link" if link else "unlink", p.name, post_ids[rows], pre_ids[cols])
        values = {name: e.values.get(name, p._array_init[name]) if link else p._array_init[name] for name in arrays}
        if isinstance(staged, _SynapseEdits):
            staged.stage(r, c, link, weight, values)
            projs[p.name] = staged
            return log

        def private(a):
            if id(a) in fresh:
                return a
            a = a.copy()
            fresh.add(id(a))
            return a

        w, m = private(w), private(m)
        m[r, c] = link
        w[r, c] = weight
        for name in arrays:
            arrays[name] = private(arrays[name])
            arrays[name][r, c] = values[name]
        projs[p.name] = [w, m, arrays]
        return log

    def _stage_assign(self, e, pops):
        pop = e.population
        self._require(pop, "Assign")
        staged = pops.get(pop.name) or pop._stage()
        if e.variable not in staged.state or e.variable == "activity":
            raise ValueError(f"Assign names variable {e.variable!r}, which is not a per-unit variable of population "
                             f"{pop.name!r}; it has {sorted(v for v in staged.state if v != 'activity')}")
        if pop.is_pair(e.variable) or pop.is_per_sample(e.variable):
            raise ValueError(f"Assign sets per-unit variables of shape (size,); {pop.name}.{e.variable} is "
                             f"{'a pair' if pop.is_pair(e.variable) else 'a per-sample'} variable")
        index = _index_of(pop.name, staged.ids, e.ids)
        arr = staged.state[e.variable].copy()
        arr[index] = e.values
        state = dict(staged.state)
        state[e.variable] = arr
        pops[pop.name] = type(staged)(staged.ids, staged.next_id, state)

    def _check_birth(self, pop, staged, n, touching, projs, pops):
        """Refuse a Birth beyond ``max_size`` or beyond the available memory, before allocating anything."""
        size = staged.ids.size
        if pop.max_size is not None and size + n > pop.max_size:
            raise ValueError(f"Birth of {n} unit(s) would grow population {pop.name!r} from {size} to {size + n} "
                             f"units, beyond its max_size = {pop.max_size}")
        need = pop._state_bytes(size + n)
        for p in touching:
            post = size + n if p.post is pop else (pops[p.post.name].ids.size if p.post.name in pops else p.post.size)
            pre = size + n if p.pre is pop else (pops[p.pre.name].ids.size if p.pre.name in pops else p.pre.size)
            need += p._bytes((post, pre))
        avail = _available_memory()
        if avail is not None and need > avail:
            names = [p.name for p in touching]
            raise ValueError(f"Birth of {n} unit(s) would grow population {pop.name!r} from {size} to {size + n} "
                             f"units and allocate {need / 2**30:.3g} GiB (its state and the weights of projections "
                             f"{names}); only {avail / 2**30:.3g} GiB of memory is available")

    # -- running ----------------------------------------------------------------------
    def run(self, steps: int, progress: bool | None = None, backend: str = "auto", leave: bool = False,
            checkpoint: str | os.PathLike | None = None, checkpoint_every: int | None = None, resume: bool = False,
            precision: str = "float64") -> Network:
        """Advance ``steps`` steps.

        Parameters
        ----------
        steps : int >= 0
            Number of steps; ``network.t`` grows by it.
        progress : bool, optional
            Show a tqdm progress bar (it says "compiling segment…" while a
            first run compiles). Default: when someone is watching (standard
            error is a terminal, or a notebook), unless ``NEUROSIM_PROGRESS``
            says otherwise (:mod:`neurosim.progress`).
        backend : {"auto", "compiled", "python", "cuda"}, default="auto"
            ``"compiled"`` runs compiled segments, compiling a new
            structure's segment before the first step (every component needs
            a kernel), ``"python"`` runs the NumPy reference implementation
            step by step, ``"auto"`` runs segments when every component has a
            kernel -- a new structure's first in their Python form (the same
            compiled kernels called from Python, the same numbers) until
            compiling would pay (``neurosim.engine.PYTHON_TIER_SECONDS``) --
            and otherwise steps with each component's kernel where it has
            one (warning once, naming the component without). ``"cuda"`` runs on a GPU
            (:mod:`neurosim.cuda.backend`; the ``cuda`` extra and an NVIDIA
            GPU, or numba's CUDA simulator): the dense rate family only,
            refusing anything else with an error that names it.
        precision : {"float64", "float32"}, default="float64"
            Arithmetic on the GPU (``backend="cuda"`` only; the state is
            stored back as float64). float32 is about twice as fast on most
            GPUs and agrees with float64 to about 1e-5 relative over short
            runs (measured in ``tests/cuda``).
        leave : bool, default=False
            Keep the progress bar on screen after the run.
        checkpoint : path, optional
            Where to save a checkpoint (:meth:`save`) every
            ``checkpoint_every`` steps (at steps that are multiples of it)
            and at the end; recorders with a store write what they hold
            first, so the store and the checkpoint agree. A file already
            there that is not a checkpoint of this circuit is refused
            (``ValueError``) before the run starts, never overwritten.
        checkpoint_every : int >= 1, optional
            Save a checkpoint at the steps that are multiples of it. Default:
            only at the end of the run.
        resume : bool, default=False
            If ``checkpoint`` exists, load it first and run only the steps
            left to reach ``t + steps`` (``t`` as it was when ``run`` was
            called): rerunning a script killed with ``kill -9`` finishes the
            run bit-identically to an uninterrupted one. Recorders with a
            store continue it (samples after the checkpoint's step are
            dropped); in-memory recorders hold only what is recorded after
            the checkpoint.

        Returns
        -------
        Network
            This network, at step ``t + steps``.

        Raises
        ------
        neurosim.SimulationDiverged
            If NaN or Inf appears in a state variable (or a solver fails); the
            diverged state is kept for inspection.
        ValueError
            If an argument is out of range, the network does not validate, or
            ``checkpoint`` names a file that is not this circuit's checkpoint.
        RuntimeError
            If called from a callback or trigger of the same network.

        Notes
        -----
        A step that fails (an exception in a callback, a trigger, an event)
        leaves the network exactly at the last completed step: state,
        recordings, event log, random generator and ``t``.
        """
        from neurosim.engine import Engine
        from neurosim.progress import resolve as resolve_progress

        if self._running:
            raise RuntimeError(f"network {self.name!r} is already running: run() cannot be called from a callback or "
                               "trigger of the same network (its step count would go wrong); change parameters or "
                               "structure there, and let the outer run continue")
        steps = check_int("steps", steps, low=0)
        # every argument is checked before a checkpoint is loaded: a refusal must leave the network as it was
        progress = resolve_progress(progress)
        check_choice("backend", backend, {"auto", "compiled", "python", "cuda"})
        check_choice("precision", precision, {"float64", "float32"})
        if checkpoint is None and (resume or checkpoint_every is not None):
            raise ValueError("resume and checkpoint_every need checkpoint= (the checkpoint's path)")
        if checkpoint_every is not None:
            checkpoint_every = check_int("checkpoint_every", checkpoint_every, low=1)
        target = self.t + steps
        for rec in self.recorders.values():
            rec.check_writer()  # a store another network took up since is refused now, not at the first flush
        if checkpoint is not None:
            from neurosim.io import check_checkpoint_target

            # a file at the path that is not this circuit's checkpoint is refused now, not at the first save
            check_checkpoint_target(self, checkpoint)
        from neurosim.io import checkpoint_path

        if not (resume and checkpoint is not None and checkpoint_path(checkpoint).exists()):
            for rec in self.recorders.values():
                # a recorder that would start its store afresh refuses another run's recording now, before
                # anything runs (a resumed run continues its store: the checkpoint's load checks that one)
                rec.check_store(fresh=True)
        if resume and self._engine is None:
            self._engine = Engine(self)  # validates the network: an invalid one is refused before the load
        if resume:
            from neurosim.io import _assign, _checked_load

            assert checkpoint is not None  # resume without a checkpoint was refused above
            if checkpoint_path(checkpoint).exists():
                state = _checked_load(self, checkpoint)
                if state["t"] > target:
                    raise ValueError(f"the checkpoint {str(checkpoint)!r} is at step {state['t']}, past the end of "
                                     f"this run (step {target}); resume=True continues a run, it cannot go back "
                                     "(nothing was loaded)")
                _assign(self, state)
        if self._engine is None:
            self._engine = Engine(self)
        self._running = True
        try:
            if checkpoint is None:
                return self._engine.run(steps, progress=progress, backend=backend, leave=leave, precision=precision)
            while self.t < target:
                every = checkpoint_every or target
                n = min(every - self.t % every, target - self.t)
                self._engine.run(n, progress=progress, backend=backend, leave=leave, precision=precision)
                for rec in self.recorders.values():
                    rec.flush()
                self.save(checkpoint)
            if steps == 0:
                self.save(checkpoint)
            return self  # as without a checkpoint (it returned None here)
        finally:
            self._running = False
            if self._engine is not None and self._engine._version != self._version:
                self._engine = None

    # -- metadata ---------------------------------------------------------------------
    def params(self) -> dict[str, dict]:
        """Parameters of the network and every entity, nested by entity.

        Returns
        -------
        dict
            ``{"network": {...}, population or projection name: {...},
            "unit_rule<i>": ..., "component<i>": ..., "input_<pop>": ...}``;
            recorded Datasets carry it flattened (:meth:`flat_params`).
        """
        out: dict[str, dict] = {"network": {"seed": self.seed, "batch": self.batch, "name": self.name, **self.attrs}}
        if self.dt is not None:
            out["network"]["dt"] = self.dt
        for pop in self.populations.values():
            out[pop.name] = pop.params()
        for proj in self.projections.values():
            out[proj.name] = proj.params()
        for i, rule in enumerate(self.unit_rules):
            out[f"unit_rule{i}"] = rule.params()
        for i, comp in enumerate(self.components):
            out[f"component{i}"] = comp.params()
        for inp in self.inputs:
            out[f"input_{inp.population.name}"] = inp.stream.params()
        return out

    def flat_params(self) -> dict[str, Any]:
        """Parameters flattened to ``{"entity.key": value}`` with netCDF-safe values.

        Returns
        -------
        dict
            :meth:`params` flattened; booleans as ints, ``None`` as
            ``"None"``, sequences as arrays, anything else as its ``str``.
        """
        flat = {}
        for ent, d in self.params().items():
            for k, v in d.items():
                if isinstance(v, (bool, np.bool_)):
                    v = int(v)
                elif v is None:
                    v = "None"
                elif not isinstance(v, (int, float, str, np.integer, np.floating)):
                    v = np.asarray(v).tolist() if np.ndim(v) else str(v)
                    if isinstance(v, list):
                        v = np.asarray(v)
                flat[f"{ent}.{k}"] = v
        return flat

    def summary(self) -> str:
        """A multi-line description of the network's entities.

        Returns
        -------
        str
            One line for the network (``t``, batch, seed), then one per
            population, projection, unit rule, input, trigger and recorder.
        """
        lines = [f"Network {self.name!r}: t={self.t}, batch={self.batch}, seed={self.seed}"]
        lines += [f"  {p!r}" for p in self.populations.values()]
        lines += [f"  {p!r}" for p in self.projections.values()]
        lines += [f"  {type(r).__name__}({r.population.name})" for r in self.unit_rules]
        lines += [f"  Input({type(i.stream).__name__} -> {i.population.name})" for i in self.inputs]
        lines += [f"  Trigger({t.name}, every={t.every})" for t in self.triggers]
        lines += [f"  Recorder({r.name}: {r.variables} every {r.every})" for r in self.recorders.values()]
        return "\n".join(lines)

    def __repr__(self):
        # short multi-line, as xarray's: what the network holds and how far it has run
        def listed(items, limit=6):
            items = list(items)
            more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
            return ", ".join(items[:limit]) + more if items else "none"

        def pop_text(p):
            source = next((type(i.stream).__name__ for i in self.inputs if i.population is p), None)
            kind = type(p.dynamics).__name__ if p.dynamics is not None else (f"input {source}" if source else "input")
            return f"{p.name} ({p.size}, {kind})"

        def proj_text(p):
            rule = type(p.rule).__name__ if p.rule is not None else "fixed"
            post, pre = p.shape
            size = f"{post}x{pre}, {p.n_synapses} synapses" if p.sparse else f"{post}x{pre}"
            return f"{p.name} {p.pre.name}->{p.post.name} ({size}, {p.sign:+d}, {rule})"

        lines = [f"<Network {self.name!r}: t={self.t}, batch={self.batch}, seed={self.seed}"
                 + (f", dt={self.dt:g} s" if self.dt is not None else "") + ">",
                 f"  populations: {listed(pop_text(p) for p in self.populations.values())}",
                 f"  projections: {listed(proj_text(p) for p in self.projections.values())}"]
        others = [*(f"{type(r).__name__} on {r.population.name}" for r in self.unit_rules),
                  *(c.label for c in self.components), *(f"Trigger {g.name}" for g in self.triggers)]
        if others:
            lines.append(f"  components:  {listed(others)}")
        if self.recorders:
            lines.append(f"  recorders:   {listed(r.describe() for r in self.recorders.values())}")
        if len(self.event_log):
            lines.append(f"  events:      {len(self.event_log)} units born or killed")
        return "\n".join(lines)

    # -- checkpoints ------------------------------------------------------------------
    def save(self, path: str | os.PathLike, overwrite: bool = False) -> pathlib.Path:
        """Write a checkpoint (arrays in ``.npz`` + JSON metadata; no pickle); return the file's path.

        Parameters
        ----------
        path : str or path-like
            Where to write; ``.npz`` is appended unless present. :meth:`load`
            takes the same ``path``. The file is written atomically.
        overwrite : bool, default=False
            Replace a file there that is not a checkpoint of this circuit.

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        ValueError
            If a file at ``path`` is not a checkpoint of the same circuit and
            ``overwrite`` is false.

        See Also
        --------
        load, neurosim.io.save_checkpoint
        """
        from neurosim.io import save_checkpoint

        return save_checkpoint(self, path, overwrite=overwrite)

    def load(self, path: str | os.PathLike, strict: bool = True) -> Network:
        """Restore state from a checkpoint written by :meth:`save` of the same circuit (all or none).

        Recordings roll back to the checkpoint's step.

        Parameters
        ----------
        path : str or path-like
            The path given to :meth:`save` (``.npz`` optional).
        strict : bool, default=True
            Refuse a checkpoint saved with other parameters (schedules by
            kind and parameters) or other masks. ``False``: load it and warn,
            listing the differences.

        Returns
        -------
        Network
            This network, at the checkpoint's step ``t``.

        Raises
        ------
        ValueError
            If the file is missing, damaged (unreadable, NaN weights, a
            nonzero lateral diagonal) or of another circuit; the network is
            left untouched.

        See Also
        --------
        save, neurosim.io.load_checkpoint

        Examples
        --------
        >>> import tempfile, pathlib
        >>> import neurosim as ns
        >>> net = ns.Network(seed=1)
        >>> x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
        >>> _ = net.add(x, y, ns.Projection("W", x, y, rule=ns.Hebbian(rate=0.1)))
        >>> _ = net.connect(ns.GaussianStream([1.0, 1.0, 1.0], seed=2), x)
        >>> _ = net.run(2)
        >>> folder = tempfile.mkdtemp()
        >>> path = net.save(pathlib.Path(folder) / "ckpt")
        >>> W = net["W"].weights.copy()
        >>> _ = net.run(3)
        >>> _ = net.load(path)
        >>> net.t, bool((net["W"].weights == W).all())
        (2, True)
        """
        from neurosim.io import load_checkpoint

        return load_checkpoint(self, path, strict=strict)


class StepSchedule:
    """The per-step schedule a network runs: phases in order, components sorted within them.

    Made by :meth:`Network.schedule`; iterating gives the components in run
    order, ``str`` gives the table.

    Parameters
    ----------
    components : list of Component
        The components, already in run order.
    network : Network
        The network whose inputs, triggers and recorders complete the table.
    """

    def __init__(self, components: list[Component], network: Network) -> None:
        self.components = components
        self.network = network

    def rows(self) -> list[tuple[str, int | str, str]]:
        """The table's rows, including the engine's own phases.

        Returns
        -------
        list of tuple
            ``(phase, order, what)`` sorted by phase, with each phase's
            ``"end"`` rows (the NaN/Inf check, dynamics-phase triggers) last.
        """
        net = self.network
        rows: list[tuple[str, int | str, str]] = [
            ("input", "", f"{type(i.stream).__name__} -> {i.population.name}") for i in net.inputs]
        for c in self.components:
            rows.append((c.phase, c.order, c.label))
        rows.append(("plasticity", "end", "NaN/Inf check of every state variable"))
        for g in net.triggers:
            what = f"Trigger {g.name!r} every {g.every}" + (" (compiled)" if g.compiled else "")
            if g.when == "dynamics":
                rows.append(("dynamics", "end", what + "; its events re-run the dynamics phase"))
            else:
                rows.append(("events", "", what))
        rows += [("record", "", f"Recorder {r.name!r}: {r.variables} every {r.every}") for r in net.recorders.values()]
        order = {p: k for k, p in enumerate(PHASES)}
        return sorted(rows, key=lambda r: (order[r[0]], r[1] == "end"))

    def __iter__(self):
        return iter(self.components)

    def __len__(self):
        return len(self.components)

    def __str__(self):
        lines = [f"Step schedule of network {self.network.name!r}:"]
        for phase, order, what in self.rows():
            lines.append(f"  {phase:<10} {str(order):>5}  {what}")
        return "\n".join(lines)

    __repr__ = __str__


def _refuse_sparse(comp, projections) -> None:
    """``ValueError`` naming ``comp`` and the sparse ones of ``projections`` unless it runs on sparse synapses."""
    if comp.sparse_projections:
        return
    sparse = [p.name for p in projections if p.sparse]
    if sparse:
        raise ValueError(f"{comp.label} does not run on sparse projections; {sparse} store their synapses sparsely "
                         f"({comp.sparse_hint})")


def _staged_projection(p, projs) -> list:
    """``[weights, mask, arrays]`` of ``p`` as the events staged so far leave them (new arrays where edited)."""
    staged = projs.get(p.name)
    if staged is None:
        return p._stage()
    if isinstance(staged, _SynapseEdits):
        return staged.materialized()
    return staged


class _SynapseEdits:
    """Links and unlinks of one projection staged by :meth:`Network.apply` without copying its arrays.

    ``base`` is ``[weights, mask or SynapseIndex, arrays]``, the projection's
    live arrays or those an earlier Birth or Death of the call staged,
    untouched until the commit; ``edits`` maps ``(post column, pre column)``
    to ``(base_removed, added)``, in the order the events came: an Unlink
    removes the pair's synapses in ``base`` and those linked earlier in the
    call, a Link adds one ``(weight, {array: value})`` (a dense projection's
    pair, or a sparse one's without multapses, holds at most one). A dense
    projection's edits are written into its live arrays at the commit
    (:meth:`write_into`, which cannot fail); a sparse projection's give new
    arrays, one copy of the synapses for the whole call (:meth:`materialized`,
    computed before the commit).
    """

    def __init__(self, base: list, projection):
        self.base = base
        self.sparse = projection.sparse
        self.inits = dict(projection._array_init)
        self.edits: dict = {}

    def present(self, rows, cols) -> np.ndarray:
        out = self.base[1].find(rows, cols) >= 0 if self.sparse else self.base[1][rows, cols].copy()
        for k, (i, j) in enumerate(zip(rows.tolist(), cols.tolist())):
            if (i, j) in self.edits:
                removed, added = self.edits[(i, j)]
                out[k] = bool(added) or (out[k] and not removed)
        return out

    def stage(self, rows, cols, link: bool, weights: np.ndarray, values: dict):
        """A Link (``link``) or Unlink of the synapses ``(rows[k], cols[k])``, weights ``weights[k]``."""
        for i, j, weight in zip(rows.tolist(), cols.tolist(), weights.tolist()):
            removed, added = self.edits.get((i, j), (False, []))
            self.edits[(i, j)] = (removed, [*added, (weight, values)]) if link else (True, [])

    def _write(self, w, m, arrays):
        for (i, j), (_, added) in self.edits.items():
            weight, values = added[-1] if added else (0.0, self.inits)
            m[i, j] = bool(added)
            w[i, j] = weight
            for name in arrays:
                arrays[name][i, j] = values[name]

    def materialized(self) -> list:
        """``[weights, mask or SynapseIndex, arrays]`` with the edits, as new arrays."""
        w, structure = self.base[0], self.base[1]
        arrays = self.base[2] if len(self.base) > 2 else {}
        if not self.sparse:
            w, m = w.copy(), structure.copy()
            arrays = {k: a.copy() for k, a in arrays.items()}
            self._write(w, m, arrays)
            return [w, m, arrays]
        gone = [key for key, (removed, _) in self.edits.items() if removed]
        remove = np.zeros(0, dtype=np.int64)
        if gone:
            r, c = np.array(gone, dtype=np.int64).T
            lo, hi = structure.positions(r, c, "left"), structure.positions(r, c, "right")
            remove = np.concatenate([np.arange(a, b) for a, b in zip(lo.tolist(), hi.tolist())])  # every multapse
        born = [(i, j, weight, values) for (i, j), (_, added) in self.edits.items() for weight, values in added]
        post = np.array([b[0] for b in born], dtype=np.int64)
        pre = np.array([b[1] for b in born], dtype=np.int64)
        index, splice = structure.edited(remove, post, pre)
        return [splice(w, np.array([b[2] for b in born], dtype=np.float64)), index,
                {name: splice(a, np.array([b[3][name] for b in born], dtype=np.float64)) for name, a in arrays.items()}]

    def write_into(self, projection):
        self._write(projection._weights, projection._mask, projection.arrays)


def _learns_only(p) -> bool:
    """Whether a projection only learns from its populations' activity and drives nothing (e.g. STDP onto a
    spike train given as input), so that it may end on an input population."""
    return p.rule is not None and getattr(p.rule, "learns_only", False)
