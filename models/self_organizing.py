"""Self-organising networks of fixed size: Kohonen's map (SOM) and Martinetz & Schulten's Neural Gas (issue 27).

Entities (all public neurosim components):

* ``x``: the input population, one sample per step (``Network(batch=1)``);
* ``map``: the competitive population, dynamics
  :class:`~neurosim.dynamics.competitive.BestMatchingUnit` (squared
  distances to every prototype in the per-sample variable ``distance``,
  activity one-hot on the nearest unit);
* ``W``: the prototypes, projection ``x -> map`` (row ``i`` is unit ``i``'s
  point in input space), learning by

  - :class:`~neurosim.rules.competitive.Kohonen` (SOM):
    ``w_j += eta(t) h(j, c; sigma(t)) (x - w_j)`` on a ``rows x cols`` grid,
  - :class:`~neurosim.rules.competitive.NeuralGas`:
    ``w_i += eps(t) exp(-k_i / lambda(t)) (x - w_i)``, ``k_i`` the rank.

===============  ========================================  ===========================================
parameter        SOM (MiniSom's defaults)                  Neural Gas (Martinetz et al. 1993)
===============  ========================================  ===========================================
rate             ``rate = 0.5``, ``AsymptoticDecay``       ``eps_i = 0.5 -> eps_f = 0.005``, geometric
radius / range   ``sigma = 1``, ``AsymptoticDecay``        ``lam_i = 10 -> lam_f = 0.01``, geometric
schedule length  ``steps`` (MiniSom's ``num_iteration``)   ``steps`` (``t_max = 40000``)
neighbourhood    gaussian (mexican_hat, bubble, triangle)  rank-based ``exp(-k / lambda)``
===============  ========================================  ===========================================

Step ``t`` processes the ``t``-th input and uses the schedules' values at
``i = t - 1`` inputs seen (MiniSom's iteration index), so a map built with
MiniSom's initial weights and fed MiniSom's input order learns MiniSom's
weights to rounding (``tests/self_organizing``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

import neurosim as ns
from neurosim._validation import check_array, check_choice, check_float, check_int, check_memory
from neurosim.dynamics.competitive import BestMatchingUnit
from neurosim.kernels.competitive import NEIGHBOURHOODS
from neurosim.models.circuit import Circuit
from neurosim.rules.competitive import (TOPOLOGIES, GrowingNeuralGas, GrowWhenRequired, Kohonen, NeuralGas,
                                        grid_positions)
from neurosim.schedules import AsymptoticDecay, GeometricDecay, MiniSomDecay, Schedule

__all__ = ["PrototypeCircuit", "SelfOrganizingCircuit", "GrowingCircuit", "build_som", "build_neural_gas", "build_gng",
           "build_gwr", "quantization_error", "topographic_error", "minisom_initial_weights", "DECAYS", "SIGMA_DECAYS"]

#: how ``build_som`` anneals a float ``rate`` (MiniSom's ``decay_function``) or not at all
DECAYS = ("asymptotic", "inverse_to_zero", "linear_to_zero", "constant")
#: how it anneals a float ``sigma`` (MiniSom's ``sigma_decay_function``) or not at all
SIGMA_DECAYS = ("asymptotic", "inverse_to_one", "linear_to_one", "constant")

#: initial prototypes: an array, ``init(rng, shape) -> array``, or None for the default
Init = ArrayLike | Callable[[np.random.Generator, tuple[int, int]], ArrayLike] | None


def minisom_initial_weights(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """MiniSom's random initialisation, ``rand * 2 - 1`` scaled to unit-norm rows, drawn from ``rng``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The generator drawn from (``n * dim`` uniform draws).
    n : int >= 1
        Number of prototypes.
    dim : int >= 1
        Input dimension.

    Returns
    -------
    ndarray of float64, shape (n, dim)
        Unit-norm rows.
    """
    w = rng.random((n, dim)) * 2 - 1
    return w / np.linalg.norm(w, axis=-1, keepdims=True)


class PrototypeCircuit(Circuit):
    """A circuit whose map units are prototypes in the input space: :class:`SelfOrganizingCircuit`, :class:`GrowingCircuit`.

    Subclasses have ``weights``, the prototypes ``(units, dim)``.
    """

    def quantization_error(self, X: ArrayLike) -> float:
        """Mean distance from each sample to its nearest prototype (:func:`quantization_error`).

        Parameters
        ----------
        X : array_like, shape (samples, dim)
            The data.

        Returns
        -------
        float
            The quantisation error, in the data's units.
        """
        return quantization_error(X, self.weights)


@dataclass
class SelfOrganizingCircuit(PrototypeCircuit):
    """The built network and handles to its parts (what :func:`build_som` and :func:`build_neural_gas` return).

    Parameters
    ----------
    network : Network
        The network, one input per step.
    x : Population
        The input population.
    map : Population
        The competitive population (:class:`~neurosim.dynamics.competitive.BestMatchingUnit`).
    prototypes : Projection
        ``x -> map``, row ``i`` unit ``i``'s prototype.
    shape : tuple of int, optional
        ``(rows, cols)`` of a map; None for Neural Gas.
    topology : {"rectangular", "hexagonal"}
        The map's grid.
    """

    network: ns.Network
    x: ns.Population
    map: ns.Population
    prototypes: ns.Projection
    shape: tuple[int, int] | None = None
    topology: str = "rectangular"

    @property
    def weights(self) -> np.ndarray:
        """The prototypes, ``(units, dim)``; for a map ``reshape(rows, cols, dim)`` is MiniSom's ``get_weights()``."""
        return self.prototypes.weights

    def topographic_error(self, X: ArrayLike) -> float:
        """Fraction of samples whose two nearest prototypes are not neighbours on the map (:func:`topographic_error`).

        Parameters
        ----------
        X : array_like, shape (samples, dim)
            The data.

        Returns
        -------
        float in [0, 1]
            The topographic error.

        Raises
        ------
        ValueError
            The circuit has no grid (Neural Gas).
        """
        if self.shape is None:
            raise ValueError("the topographic error needs a grid: this circuit has none (Neural Gas)")
        rows, cols = self.shape
        return topographic_error(X, self.weights, rows, cols, topology=self.topology)


def _stream_and_dim(stream) -> int:
    if not isinstance(stream, ns.Stream):
        raise TypeError(f"stream must be a neurosim Stream (e.g. ArrayStream(X), one sample per step); "
                        f"got {type(stream).__name__}")
    return stream.dim


def _initial(init, n: int, dim: int, grid: tuple | None = None):
    """``None``, a callable, or the checked initial prototypes ``(n, dim)`` (a map's also as ``(rows, cols, dim)``)."""
    if init is None or callable(init):
        return init
    arr = check_array("init", init, ndim=(2, 3) if grid is not None else 2)
    if arr.ndim == 3 and grid is not None:  # MiniSom's get_weights() layout
        arr = check_array("init", arr, shape=(*grid, dim)).reshape(n, dim)
    return check_array("init", arr, shape=(n, dim)).copy()


def _annealed(name: str, value, decay: str, steps):
    """A Schedule as given; a float checked, and annealed by MiniSom's decay unless ``decay="constant"``."""
    if isinstance(value, Schedule):
        return value
    value = (check_float(name, value, low=0.0, high=1.0) if name == "rate"
             else check_float(name, value, low=0.0, low_open=True))
    if decay == "constant":
        return value
    if decay == "asymptotic":
        return AsymptoticDecay(value, steps)
    return MiniSomDecay(value, steps, decay)


def _check_map_memory(n: int, dim: int, what: str, grid: bool = False) -> None:
    """Refuse, naming the sizes, a circuit of ``n`` units on ``dim`` inputs whose arrays would not fit in memory.

    Counted before anything is allocated: the map's ids, activity and
    distances (3 x 8 bytes a unit), the prototypes ``W`` (8 x ``dim`` a unit)
    and, for a map, Kohonen's grid positions (6 x 8 a unit while they are
    built). The population and the rule check their own parts again, but by
    then the message could only name ``size``, not what the caller typed.
    """
    check_memory(8 * n * (3 + dim + (6 if grid else 0)), f"{what} with dim = {dim} inputs (the map's state, its "
                 f"prototypes W of shape ({n}, {dim}){' and its grid positions' if grid else ''})")


def _circuit(stream, n: int, rule, init, seed: int, name: str, record_every):
    dim = stream.dim
    net = ns.Network(seed=seed, batch=1, name=name)
    x = ns.Population("x", dim)
    units = ns.Population("map", n, dynamics=BestMatchingUnit())
    units.add_variable("distance", 0.0, per_sample=True)
    net.add(x, units)
    net.connect(stream, x)
    if init is None:
        w0 = minisom_initial_weights(net.rng, n, dim)
    elif callable(init):
        w0 = check_array("init", init(net.rng, (n, dim)), shape=(n, dim)).copy()
    else:
        w0 = init
    W = ns.Projection("W", x, units, init=w0, rule=rule)
    net.add(W)
    if record_every is not None:
        net.record(W, "weights", every=check_int("record_every", record_every, low=1))
    return net, x, units, W


def build_som(stream: ns.Stream, rows: int, cols: int, *, steps: int | None = None, rate: float | Schedule = 0.5,
              sigma: float | Schedule = 1.0,
              decay: str = "asymptotic", sigma_decay: str | None = None, neighbourhood: str = "gaussian",
              topology: str = "rectangular",
              init: Init = None, seed: int = 0, record_every: int | None = None) -> SelfOrganizingCircuit:
    """Build Kohonen's self-organising map with MiniSom's defaults.

    Parameters
    ----------
    stream : Stream
        One sample per step (``ArrayStream(X)`` replays ``X`` in order,
        cycling: MiniSom's ``train(X, steps)``).
    rows, cols : int >= 1
        The map's shape (MiniSom's ``x``, ``y``).
    steps : int >= 1
        Length of the schedules (MiniSom's ``num_iteration``); needed when
        ``decay="asymptotic"`` anneals a float ``rate`` or ``sigma``.
    rate : float in [0, 1] or Schedule
        Learning rate at the first input (MiniSom's ``learning_rate``, 0.5).
    sigma : float > 0 or Schedule
        Neighbourhood radius at the first input, in grid units (MiniSom: 1).
    decay : {"asymptotic", "inverse_to_zero", "linear_to_zero", "constant"}
        How a float ``rate`` changes (MiniSom's ``decay_function``): its
        default ``x / (1 + i / (steps / 2))``
        (:class:`~neurosim.schedules.AsymptoticDecay`), its other two
        (:class:`~neurosim.schedules.MiniSomDecay`), or not at all. A
        Schedule given as ``rate`` or ``sigma`` is used as it is.
    sigma_decay : {"asymptotic", "inverse_to_one", "linear_to_one", "constant"}, optional
        How a float ``sigma`` changes (MiniSom's ``sigma_decay_function``);
        default: ``"constant"`` when ``decay="constant"``, else ``"asymptotic"``.
    neighbourhood : {"gaussian", "mexican_hat", "bubble", "triangle"}
        MiniSom's ``neighborhood_function`` (Kohonen's ``h_ci``).
    topology : {"rectangular", "hexagonal"}
        MiniSom's ``topology``.
    init : array of shape (rows * cols, dim) or (rows, cols, dim), or callable, optional
        Initial prototypes (e.g. MiniSom's ``get_weights()``), or
        ``init(rng, shape)``; default MiniSom's random unit vectors drawn
        from the network's generator.
    seed : int >= 0
        Seed of the network's generator.
    record_every : int >= 1, optional
        Record the prototypes ``W.weights`` every so many steps.

    Returns
    -------
    SelfOrganizingCircuit
        The network and its parts; ``run`` it.

    Raises
    ------
    TypeError, ValueError
        A parameter of the wrong type or outside its range, naming it (before anything is built); a
        ``rows x cols`` map whose arrays (state, prototypes, grid) would need more memory than is available.
    """
    dim = _stream_and_dim(stream)
    rows = check_int("rows", rows, low=1)
    cols = check_int("cols", cols, low=1)
    _check_map_memory(rows * cols, dim, f"build_som: rows * cols = {rows} * {cols} = {rows * cols} units", grid=True)
    decay = check_choice("decay", decay, set(DECAYS))
    if sigma_decay is None:
        sigma_decay = "constant" if decay == "constant" else "asymptotic"
    sigma_decay = check_choice("sigma_decay", sigma_decay, set(SIGMA_DECAYS))
    neighbourhood = check_choice("neighbourhood", neighbourhood, set(NEIGHBOURHOODS))
    topology = check_choice("topology", topology, set(TOPOLOGIES))
    seed = check_int("seed", seed, low=0)
    needs_steps = ((decay != "constant" and not isinstance(rate, Schedule))
                   or (sigma_decay != "constant" and not isinstance(sigma, Schedule)))
    if steps is not None or needs_steps:
        if steps is None:
            raise ValueError("steps (the schedules' length, MiniSom's num_iteration) must be an int >= 1 when "
                             "decay or sigma_decay anneals rate or sigma; got None")
        steps = check_int("steps", steps, low=1)
    rate = _annealed("rate", rate, decay, steps)
    sigma = _annealed("sigma", sigma, sigma_decay, steps)
    init = _initial(init, rows * cols, dim, grid=(rows, cols))
    rule = Kohonen(rows, cols, rate=rate, sigma=sigma, neighbourhood=neighbourhood, topology=topology)
    net, x, units, W = _circuit(stream, rows * cols, rule, init, seed, "som", record_every)
    return SelfOrganizingCircuit(net, x, units, W, (rows, cols), topology)


def build_neural_gas(stream: ns.Stream, n_units: int, *, steps: int = 40_000, eps_i: float = 0.5,
                     eps_f: float = 0.005, lam_i: float = 10.0, lam_f: float = 0.01, init: Init = None, seed: int = 0,
                     record_every: int | None = None) -> SelfOrganizingCircuit:
    """Build Martinetz & Schulten's Neural Gas with the 1993 paper's schedules and defaults.

    ``eps(t) = eps_i (eps_f / eps_i)^(i / steps)`` and ``lambda(t) = lam_i
    (lam_f / lam_i)^(i / steps)`` with ``i = t - 1`` inputs seen
    (:class:`~neurosim.schedules.GeometricDecay`).

    Parameters
    ----------
    stream : Stream
        One sample per step.
    n_units : int >= 1
        Number of units (prototypes).
    steps : int >= 1
        ``t_max`` (paper: 40,000).
    eps_i, eps_f : float in (0, 1]
        Initial and final step size (paper: 0.5, 0.005).
    lam_i, lam_f : float > 0
        Initial and final neighbourhood range in ranks (paper: 10, 0.01).
    init : array of shape (n_units, dim) or callable, optional
        Initial prototypes; default MiniSom-style random unit vectors from
        the network's generator.
    seed, record_every : int
        As :func:`build_som`: the network generator's seed (>= 0), and how often the prototypes are recorded.

    Returns
    -------
    SelfOrganizingCircuit
        The network and its parts; ``run`` it.

    Raises
    ------
    TypeError, ValueError
        As :func:`build_som`, with ``n_units`` for the map's size.
    """
    dim = _stream_and_dim(stream)
    n_units = check_int("n_units", n_units, low=1)
    _check_map_memory(n_units, dim, f"build_neural_gas: n_units = {n_units}")
    steps = check_int("steps", steps, low=1)
    eps_i = check_float("eps_i", eps_i, low=0.0, high=1.0, low_open=True)
    eps_f = check_float("eps_f", eps_f, low=0.0, high=1.0, low_open=True)
    lam_i = check_float("lam_i", lam_i, low=0.0, low_open=True)
    lam_f = check_float("lam_f", lam_f, low=0.0, low_open=True)
    seed = check_int("seed", seed, low=0)
    init = _initial(init, n_units, dim)
    rule = NeuralGas(rate=GeometricDecay(eps_i, eps_f, steps), lam=GeometricDecay(lam_i, lam_f, steps))
    net, x, units, W = _circuit(stream, n_units, rule, init, seed, "neural_gas", record_every)
    return SelfOrganizingCircuit(net, x, units, W, None)


@dataclass
class GrowingCircuit(PrototypeCircuit):
    """A growing network: the built network and handles to its parts (what :func:`build_gng` and :func:`build_gwr` return).

    Parameters
    ----------
    network, x : Network, Population
        As :class:`SelfOrganizingCircuit`: the network (one input per step) and its input population.
    map : Population
        The competitive population, whose units are born and killed.
    prototypes : Projection
        ``x -> map``, row ``i`` unit ``i``'s prototype.
    edges : Projection
        ``map -> map``, sparse: the edges (each the synapses ``i <- j`` and
        ``j <- i``), ages in ``edges.arrays["age"]`` (one per synapse).
    rule : GrowingNeuralGas or GrowWhenRequired
        The prototypes' rule, which also changes the structure.
    """

    network: ns.Network
    x: ns.Population
    map: ns.Population
    prototypes: ns.Projection
    edges: ns.Projection
    rule: GrowingNeuralGas | GrowWhenRequired

    @property
    def weights(self) -> np.ndarray:
        """The prototypes of the units alive, ``(units, dim)``, in the order of ``map.ids``."""
        return self.prototypes.weights

    @property
    def ids(self) -> np.ndarray:
        """The stable ids of the units alive, in row order."""
        return self.map.ids

    def edge_list(self) -> list:
        """Every edge with its age.

        Returns
        -------
        list of (int, int, float)
            ``(id, id, age)`` of every edge, smaller id first, sorted.
        """
        post, pre = self.edges.synapse_index.pairs()
        one = post < pre  # an edge is two synapses of equal age: list each once
        ids, age = self.map.ids, self.edges.arrays["age"]
        out = zip(ids[post[one]].tolist(), ids[pre[one]].tolist(), age[one].tolist())
        return sorted((min(a, b), max(a, b), g) for a, b, g in out)

    def errors(self) -> np.ndarray:
        """GNG: the accumulated errors as Fritzke's algorithm has them after the last input.

        Returns
        -------
        ndarray of float64, shape (units,)
            The map's ``error`` times ``d`` (Fritzke's step 8 is applied at
            the start of the next input), in the order of :attr:`ids`.
        """
        return self.map.state["error"] * self.rule.value("d", self.network.t)


def build_gng(stream: ns.Stream, *, eps_b: float = 0.2, eps_n: float = 0.006, lam: int = 100, a_max: float = 50.0,
              alpha: float = 0.5, d: float = 0.995, max_units: int | None = None, init: Init = None,
              seed: int = 0,
              record_every: int | None = None) -> GrowingCircuit:
    """Build Fritzke's (1995) Growing Neural Gas with the paper's parameters.

    Two units at the start, no edges; every input adapts the winner and its
    neighbours and ages the winner's edges; the structure changes by network
    events (edges linked between the two winners and unlinked past
    ``a_max``, units left without edges killed, a unit born every ``lam``
    inputs between the unit of largest error and its neighbour of largest
    error), all in ``network.event_log`` with stable unit ids
    (:class:`~neurosim.rules.competitive.GrowingNeuralGas`).

    Parameters
    ----------
    stream : Stream
        One sample per step.
    eps_b, eps_n : float in [0, 1]
        Steps of the winner and of its neighbours (0.2, 0.006).
    lam : int >= 1
        Inputs between insertions (100).
    a_max : float >= 0
        Largest edge age (50).
    alpha : float in [0, 1]
        Error decrease of the parents at an insertion (0.5).
    d : float in [0, 1]
        Error decay per input (0.995).
    max_units : int >= 2, optional
        No insertion once the network holds this many units (Fritzke: none).
    init : array of shape (2, dim) or callable, optional
        The two starting prototypes; default the stream's first two inputs
        ("random positions according to P(xi)").
    seed : int >= 0
        Seed of the network's generator.
    record_every : int >= 1, optional
        Record the prototypes and the edges (``edges.weights``: 1 on an edge) every so many steps.

    Returns
    -------
    GrowingCircuit
        The network and its parts; ``run`` it.

    Raises
    ------
    TypeError, ValueError
        A parameter of the wrong type or outside its range, naming it (before anything is built).
    """
    _stream_and_dim(stream)  # a Stream (TypeError first); _growing reads its dim
    for name, value in (("eps_b", eps_b), ("eps_n", eps_n), ("alpha", alpha), ("d", d)):
        check_float(name, value, low=0.0, high=1.0)
    lam = check_int("lam", lam, low=1)
    a_max = check_float("a_max", a_max, low=0.0)
    return _growing(stream, lambda edges: GrowingNeuralGas(edges, eps_b=eps_b, eps_n=eps_n, lam=lam, a_max=a_max,
                                                           alpha=alpha, d=d),
                    init, max_units, seed, record_every, "growing_neural_gas")


def _growing(stream, make_rule, init, max_units, seed, record_every, name) -> GrowingCircuit:
    """Two units, no edges, the prototypes' rule and its structural trigger (GNG, GWR).

    Checks ``max_units``, ``seed`` and ``init`` first (the builders have checked the rule's parameters).
    """
    dim = stream.dim
    if max_units is not None:
        max_units = check_int("max_units", max_units, low=2)
    seed = check_int("seed", seed, low=0)
    init = _initial(init, 2, dim)
    net = ns.Network(seed=seed, batch=1, name=name)
    x = ns.Population("x", dim)
    units = ns.Population("map", 2, dynamics=BestMatchingUnit(), max_size=max_units)
    units.add_variable("distance", 0.0, per_sample=True)
    net.add(x, units)
    net.connect(stream, x)
    if init is None:
        w0 = np.array(stream.block(0, 2, 1)[:, 0, :], dtype=np.float64)
    elif callable(init):
        w0 = check_array("init", init(net.rng, (2, dim)), shape=(2, dim)).copy()
    else:
        w0 = init
    # sparse: the edges' arrays hold one value per edge end, not units^2 (a 10,000-unit network has ~40,000)
    edges = ns.Projection("edges", units, units, init=ns.Constant(1.0), connectivity=ns.FromIndices([], []),
                          storage="sparse")
    rule = make_rule(edges)
    W = ns.Projection("W", x, units, init=w0, rule=rule)
    net.add(edges, W)
    net.add(rule.trigger())
    if record_every is not None:
        every = check_int("record_every", record_every, low=1)
        net.record(W, "weights", every=every)
        net.record(edges, "weights", every=every)
    return GrowingCircuit(net, x, units, W, edges, rule)


def build_gwr(stream: ns.Stream, *, a_T: float = 0.95, h_T: float = 0.1, eps_b: float = 0.1, eps_n: float = 0.01,
              tau_b: float = 3.33, tau_n: float = 14.3, alpha_b: float = 1.05, alpha_n: float = 1.05,
              a_max: float = 50.0, max_units: int | None = None, init: Init = None,
              seed: int = 0,
              record_every: int | None = None) -> GrowingCircuit:
    """Build Marsland, Shapiro & Nehmzow's (2002) Grow When Required network.

    Two units at the start, no edges; a unit is born whenever the winner
    matches the input badly (activity ``exp(-||x - w_s||) < a_T``) although it
    has fired often (firing counter ``< h_T``), halfway between the winner
    and the input; edges and units die as in GNG
    (:class:`~neurosim.rules.competitive.GrowWhenRequired`). Units' firing
    counters are the map's variable ``firing``.

    Parameters
    ----------
    stream : Stream
        One sample per step.
    a_T : float in (0, 1]
        Activity threshold (0.95; it sets the resolution in the data's units:
        a unit is added where the nearest prototype is farther than ``-ln a_T``).
    h_T : float in [0, 1]
        Firing threshold (0.1).
    eps_b, eps_n : float in [0, 1]
        Learning rates (0.1, 0.01).
    tau_b, tau_n : float > 0
        Habituation time constants (3.33, 14.3).
    alpha_b, alpha_n : float > 1
        Habituation constants (1.05).
    a_max : float >= 1
        Largest edge age (50); below 1 the two winners' own edge would go at
        once and the network would lose all its units (refused).
    max_units : int >= 2, optional
        No birth once the network holds this many units.
    init : array of shape (2, dim) or callable, optional
        The two starting prototypes; default the stream's first two inputs.
    seed, record_every : int
        As :func:`build_gng`: the network generator's seed (>= 0), and how often the prototypes and edges are
        recorded.

    Returns
    -------
    GrowingCircuit
        The network and its parts; ``run`` it.

    Raises
    ------
    TypeError, ValueError
        As :func:`build_gng`.
    """
    _stream_and_dim(stream)  # a Stream (TypeError first); _growing reads its dim
    a_T = check_float("a_T", a_T, low=0.0, high=1.0, low_open=True)
    for name, value in (("h_T", h_T), ("eps_b", eps_b), ("eps_n", eps_n)):
        check_float(name, value, low=0.0, high=1.0)
    for name, value in (("tau_b", tau_b), ("tau_n", tau_n)):
        check_float(name, value, low=0.0, low_open=True)
    for name, value in (("alpha_b", alpha_b), ("alpha_n", alpha_n)):
        check_float(name, value, low=1.0, low_open=True)
    a_max = check_float("a_max", a_max, low=1.0)
    return _growing(stream, lambda edges: GrowWhenRequired(edges, a_T=a_T, h_T=h_T, eps_b=eps_b, eps_n=eps_n,
                                                           tau_b=tau_b, tau_n=tau_n, alpha_b=alpha_b,
                                                           alpha_n=alpha_n, a_max=a_max),
                    init, max_units, seed, record_every, "grow_when_required")


# -- measures ----------------------------------------------------------------------------------------
def _data(X, W) -> tuple:
    W = check_array("weights", W, ndim=2)
    X = check_array("X", X, ndim=2)
    if X.shape[0] == 0:
        raise ValueError("X must hold at least one sample; got 0")
    if X.shape[1] != W.shape[1]:
        raise ValueError(f"X must have {W.shape[1]} features (the prototypes' dimension); got {X.shape[1]}")
    if W.shape[0] == 0:
        raise ValueError("weights must hold at least one prototype; got 0")
    diff = X[:, None, :] - W[None, :, :]
    return X, W, np.sqrt((diff * diff).sum(axis=-1))


def quantization_error(X: ArrayLike, weights: ArrayLike) -> float:
    """Mean Euclidean distance from each sample to its nearest prototype (MiniSom's ``quantization_error``).

    Parameters
    ----------
    X : array_like, shape (samples, dim)
        The data; at least one sample.
    weights : array_like, shape (units, dim)
        The prototypes; at least one.

    Returns
    -------
    float >= 0
        The quantisation error, in the data's units.

    Raises
    ------
    ValueError
        Empty ``X`` or ``weights``, or their dimensions differ.
    """
    X, W, d = _data(X, weights)
    bmu = np.argmin(d, axis=1)
    return float(np.linalg.norm(X - W[bmu], axis=1).mean())


def topographic_error(X: ArrayLike, weights: ArrayLike, rows: int, cols: int, topology: str = "rectangular") -> float:
    """Fraction of samples whose two nearest prototypes are not neighbours on the map (MiniSom's definition).

    Rectangular grids count 8-neighbours as adjacent (grid distance at most
    1.42, as MiniSom does); hexagonal ones the six units at plane distance 1.
    NaN for a map of one unit (undefined).

    Parameters
    ----------
    X : array_like, shape (samples, dim)
        The data; at least one sample.
    weights : array_like, shape (rows * cols, dim)
        The map's prototypes, unit ``i * cols + j`` at grid position ``(i, j)``.
    rows, cols : int >= 1
        The map's shape.
    topology : {"rectangular", "hexagonal"}
        The map's grid.

    Returns
    -------
    float in [0, 1]
        The topographic error (NaN for one unit).

    Raises
    ------
    ValueError
        Empty ``X``, dimensions that differ, or ``weights`` not ``rows * cols`` prototypes.
    """
    rows = check_int("rows", rows, low=1)
    cols = check_int("cols", cols, low=1)
    topology = check_choice("topology", topology, set(TOPOLOGIES))
    X, W, d = _data(X, weights)
    if W.shape[0] != rows * cols:
        raise ValueError(f"weights must have rows * cols = {rows * cols} prototypes; got {W.shape[0]}")
    if W.shape[0] == 1:
        return float("nan")
    best2 = np.argsort(d, axis=1, kind="stable")[:, :2]
    gi, gj, gx, gy = grid_positions(rows, cols, topology)
    if topology == "rectangular":
        step = np.hypot(gi[best2[:, 1]] - gi[best2[:, 0]], gj[best2[:, 1]] - gj[best2[:, 0]])
        return float((step > 1.42).mean())
    step = np.hypot(gx[best2[:, 1]] - gx[best2[:, 0]], gy[best2[:, 1]] - gy[best2[:, 0]])
    return float(1.0 - np.isclose(1.0, step).mean())
