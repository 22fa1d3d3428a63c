"""Rules of competitive, self-organising circuits: Kohonen's map and Martinetz & Schulten's Neural Gas.

Both move every prototype (row of the projection ``x -> map``) toward the
input by a factor that falls off with the unit's distance from the winner:
on a fixed grid for the self-organising map (Kohonen 1982), by rank in input
space for Neural Gas (Martinetz & Schulten 1991; Martinetz, Berkovich &
Schulten 1993). They read what the map's
:class:`~neurosim.dynamics.competitive.BestMatchingUnit` dynamics computed
this step (the one-hot winner, the squared distances), one sample per step.
Their prototype projection may be masked or stored sparsely (units with
local receptive fields): the distances then run over each unit's synapses
and the rules move only those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim._validation import check_memory
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import competitive as k
from neurosim.kernels.plasticity import enforce_structure_all
from neurosim.params import Choice, Float, Instance, Int
from neurosim.rules.base import Rule
from neurosim.synapses import Projection, csr_refs

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neurosim.events import Event, Trigger
    from neurosim.network import Network
    from neurosim.schedules import Schedule

__all__ = ["Kohonen", "NeuralGas", "GrowingNeuralGas", "GrowWhenRequired", "grid_positions", "TOPOLOGIES"]

#: map topologies (MiniSom's)
TOPOLOGIES = ("rectangular", "hexagonal")


def grid_positions(rows: int, cols: int, topology: str = "rectangular") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Grid indices and plane coordinates of the units of a ``rows x cols`` map, in unit order.

    Unit ``u = i * cols + j`` sits at grid index ``(i, j)`` (MiniSom's
    ``(x, y)`` position; its weights ``(rows, cols, dim)`` flattened row-major
    are our rows). Its plane coordinates are ``(i, j)`` on a rectangular
    grid; on a hexagonal one, every other row of MiniSom's meshgrid (counted
    from the last) is shifted by -1/2 and ``j`` is scaled by ``(3/2) / sqrt(3) = sqrt(3)/2``,
    exactly as MiniSom builds ``_xx`` and ``_yy``.

    Parameters
    ----------
    rows, cols : int >= 1
        The map's shape (MiniSom's ``x``, ``y``).
    topology : {"rectangular", "hexagonal"}, default="rectangular"
        The grid's topology.

    Returns
    -------
    grid_i, grid_j : ndarray of float64, shape (rows * cols,)
        Grid indices of each unit.
    grid_x, grid_y : ndarray of float64, shape (rows * cols,)
        Plane coordinates of each unit (MiniSom's ``_xx``, ``_yy``).
    """
    # (cols, rows), MiniSom's layout; float aranges hold the same integers MiniSom converts
    xx, yy = np.meshgrid(np.arange(rows, dtype=float), np.arange(cols, dtype=float))
    if topology == "hexagonal":
        xx[::-2] -= 0.5
        yy *= (3.0 / 2.0) / np.sqrt(3)  # MiniSom's Y_HEX_CONV_FACTOR (one ulp above sqrt(3) / 2)
    gi, gj = np.meshgrid(np.arange(rows, dtype=float), np.arange(cols, dtype=float), indexing="ij")
    return gi.ravel(), gj.ravel(), np.ascontiguousarray(xx.T).ravel(), np.ascontiguousarray(yy.T).ravel()


class _Competitive(Rule):
    """Shared checks: one sample per step, the post population run by BestMatchingUnit."""

    def _receptive_fields(self, calls: list[KernelCall]) -> list[KernelCall]:
        """``calls``, then the zeroing of a masked projection's absent synapses, which the dense updates move."""
        p = self.projection
        if p.mask is None:
            return calls
        return calls + [KernelCall(enforce_structure_all, (ArrayRef(lambda: p.weights, f"{p.name}.weights"), False,
                                                           self._mask_ref(), True), label=f"{p.name}.structure")]

    def validate(self, network: Network) -> None:
        from neurosim.dynamics.competitive import BestMatchingUnit

        p = self.projection
        if p.lateral:
            raise ValueError(f"{type(self).__name__} learns the prototypes of a feed-forward projection; "
                             f"{p.name!r} is lateral")
        if not isinstance(p.post.dynamics, BestMatchingUnit):
            raise ValueError(f"{type(self).__name__} on projection {p.name!r} reads the winner that BestMatchingUnit "
                             f"dynamics compute; population {p.post.name!r} has "
                             f"{type(p.post.dynamics).__name__ if p.post.dynamics is not None else 'no dynamics'}")
        if network.batch != 1:
            raise ValueError(f"{type(self).__name__} on projection {p.name!r} learns from one input per step "
                             f"(each input moves the prototypes the next is matched against): the network's batch "
                             f"must be 1; got {network.batch}")


class Kohonen(_Competitive):
    """Kohonen's self-organising map: ``w_j += rate h(j, c; sigma) (x - w_j)``, ``c`` the best-matching unit.

    The post population is a ``rows x cols`` map (unit ``i * cols + j`` at
    grid position ``(i, j)``, see :func:`grid_positions`); ``h`` is one of
    MiniSom's neighbourhood functions, computed as MiniSom computes it, so
    a map built with MiniSom's initial weights, schedules and input order
    learns MiniSom's weights to rounding.

    Parameters
    ----------
    rows, cols : int >= 1
        The map's shape (MiniSom's ``x``, ``y``); fixed.
    rate : float in [0, 1], default=0.5
        Learning rate (MiniSom's ``learning_rate``, default 0.5; Kohonen's
        ``0 < alpha(t) < 1``: above 1 the winner overshoots the input, and
        far above it the map diverges); usually a schedule, e.g.
        :class:`~neurosim.schedules.AsymptoticDecay`.
    sigma : float > 0, default=1.0
        Neighbourhood radius in grid units (MiniSom's default 1); usually a
        shrinking schedule. A sigma so small that the gaussian's or the
        mexican hat's ``2 sigma^2`` underflows (or ``2 / (2 sigma^2)``
        overflows) takes the limit ``sigma -> 0``: the winner alone moves.
    neighbourhood : {"gaussian", "mexican_hat", "bubble", "triangle"}, default="gaussian"
        Fixed.
    topology : {"rectangular", "hexagonal"}, default="rectangular"
        Fixed.

    Raises
    ------
    ValueError
        A parameter outside its range, or a ``rows x cols`` grid whose
        positions would need more memory than is available (before
        allocating them).

    Notes
    -----
    On a masked or sparse prototype projection only the existing synapses
    move: ``w_jk += rate h(j, c; sigma) (x_k - w_jk)`` for the synapses
    ``(j, k)`` of unit ``j``'s receptive field
    (:class:`~neurosim.dynamics.competitive.BestMatchingUnit` measures the
    distance over the same synapses).
    """

    sparse_projections = True

    rows = Int(low=1, live=False, doc="map rows (MiniSom's x)")
    cols = Int(low=1, live=False, doc="map columns (MiniSom's y)")
    rate = Float(0.5, low=0.0, high=1.0, doc="learning rate")
    sigma = Float(1.0, low=0.0, low_open=True, doc="neighbourhood radius (grid units)")
    neighbourhood = Choice("gaussian", options=k.NEIGHBOURHOODS, live=False, doc="neighbourhood function")
    topology = Choice("rectangular", options=TOPOLOGIES, live=False, doc="grid topology")

    def __init__(self, rows: int, cols: int, rate: float | Schedule = 0.5, sigma: float | Schedule = 1.0,
                 neighbourhood: str = "gaussian", topology: str = "rectangular") -> None:
        super().__init__()
        self.set_params(rows=rows, cols=cols, rate=rate, sigma=sigma, neighbourhood=neighbourhood, topology=topology)
        # grid_positions builds six float64 arrays of rows * cols (four kept)
        check_memory(6 * 8 * self.rows * self.cols, f"Kohonen's grid positions of rows * cols = {self.rows} * "
                                                    f"{self.cols} units")
        self.grid = tuple(np.ascontiguousarray(a) for a in grid_positions(self.rows, self.cols, self.topology))

    def check_structure(self, sizes: Mapping[str, int] | None = None) -> None:
        """Raise ``ValueError`` unless the map population has ``rows * cols`` units (a grid cannot grow or shrink).

        Parameters
        ----------
        sizes : mapping of str to int, optional
            Staged population sizes (:meth:`neurosim.component.Component.check_structure`);
            default the current ones.
        """
        p = self.projection
        size = self.size_of(p.post, sizes)
        if size != self.rows * self.cols:
            raise ValueError(f"Kohonen on projection {p.name!r}: population {p.post.name!r} has {size} units, "
                             f"not rows * cols = {self.rows} * {self.cols} = {self.rows * self.cols}")

    def neighbourhood_of(self, c: int, sigma: float) -> np.ndarray:
        """``h(j, c; sigma)`` for every unit ``j`` (the NumPy reference, in the kernel's operation order).

        Parameters
        ----------
        c : int in [0, rows * cols)
            The best-matching unit.
        sigma : float > 0
            The neighbourhood radius, in grid units.

        Returns
        -------
        ndarray of float64, shape (rows * cols,)
            The neighbourhood weight of every unit.
        """
        gi, gj, gx, gy = self.grid
        d = 2.0 * sigma * sigma
        if self.neighbourhood in ("gaussian", "mexican_hat") and d == 0.0:
            # sigma^2 underflowed: the limit sigma -> 0 of both formulas, the winner alone (as the kernel)
            return ((gx == gx[c]) & (gy == gy[c])).astype(np.float64)
        if self.neighbourhood == "gaussian":
            dx, dy = gx - gx[c], gy - gy[c]
            with np.errstate(over="ignore"):  # dx^2 / d overflows to inf for a tiny sigma: exp(-inf) = 0
                return np.exp(-(dx * dx) / d) * np.exp(-(dy * dy) / d)
        if self.neighbourhood == "mexican_hat":
            dx, dy = gx - gx[c], gy - gy[c]
            p = dx * dx + dy * dy
            with np.errstate(over="ignore", invalid="ignore"):
                h = np.exp(-p / d) * (1.0 - 2.0 / d * p)
            # 2 / d overflowed (tiny sigma): inf * 0 at the winner, 0 * -inf elsewhere; the limits, as the kernel
            return np.where(np.isnan(h), (p == 0.0).astype(np.float64), h)
        if self.neighbourhood == "bubble":
            inside = (gi > gi[c] - sigma) & (gi < gi[c] + sigma) & (gj > gj[c] - sigma) & (gj < gj[c] + sigma)
            return inside.astype(float)
        tx = np.maximum(-np.abs(gi[c] - gi) + sigma, 0.0)
        ty = np.maximum(-np.abs(gj[c] - gj) + sigma, 0.0)
        return tx * ty

    def update_numpy(self) -> None:
        p = self.projection
        t = p.network.t if p.network is not None else None  # a plain value needs no step
        winners = np.flatnonzero(p.post.activity[0] == 1.0)
        if winners.size == 0:
            return
        g = self.neighbourhood_of(int(winners[0]), self.value("sigma", t)) * self.value("rate", t)
        _toward_input(p, g)

    def kernel_calls(self) -> list[KernelCall]:
        p = self.projection
        w, post, pre = self._refs()
        grid = [ArrayRef(lambda a=a: a, f"{p.name}.rule.grid{n}") for n, a in enumerate(self.grid)]
        args = (post, pre, *grid, self.ref("rate"), self.ref("sigma"), k.NEIGHBOURHOODS.index(self.neighbourhood))
        if p.sparse:
            kernel = k.csr_kohonen_update_rows if self._use_rows() else k.csr_kohonen_update
            return [KernelCall(kernel, (w, *csr_refs(p)[:2], *args), label=f"{p.name}.rule")]
        return self._receptive_fields([KernelCall(k.kohonen_update, (w, *args), label=f"{p.name}.rule")])


class NeuralGas(_Competitive):
    """Neural Gas: ``w_i += rate exp(-k_i / lam) (x - w_i)``, ``k_i`` unit ``i``'s distance rank (0: the winner).

    Martinetz & Schulten 1991; Martinetz, Berkovich & Schulten 1993, Eq. 5
    (``epsilon``, ``lambda`` there; usually the schedules
    ``start (stop / start)^(t / t_max)``,
    :class:`~neurosim.schedules.GeometricDecay`). Ranks by the squared
    distances of :class:`~neurosim.dynamics.competitive.BestMatchingUnit`,
    ties to the lower column.

    Parameters
    ----------
    rate : float in [0, 1], default=0.5
        ``epsilon`` (paper: 0.5 decaying to 0.005).
    lam : float > 0, default=10.0
        ``lambda``, the neighbourhood range in ranks (paper: 10 decaying to 0.01).

    Notes
    -----
    On a masked or sparse prototype projection only the existing synapses
    move, ranked by the distances over each unit's synapses
    (:class:`~neurosim.dynamics.competitive.BestMatchingUnit`).
    """

    sparse_projections = True

    rate = Float(0.5, low=0.0, high=1.0, doc="step size epsilon")
    lam = Float(10.0, low=0.0, low_open=True, doc="neighbourhood range lambda (ranks)")

    def __init__(self, rate: float | Schedule = 0.5, lam: float | Schedule = 10.0) -> None:
        super().__init__()
        self.set_params(rate=rate, lam=lam)
        self._rank = np.zeros(0)

    def _ranks(self) -> np.ndarray:
        n = self.projection.post.size
        if self._rank.shape != (n,):
            self._rank = np.zeros(n)
        return self._rank

    def update_numpy(self) -> None:
        p = self.projection
        t = p.network.t if p.network is not None else None  # a plain value needs no step
        d = p.post.state["distance"][0]
        rank = np.empty(d.size)
        rank[np.argsort(d, kind="stable")] = np.arange(d.size)
        g = self.value("rate", t) * np.exp(-rank / self.value("lam", t))
        _toward_input(p, g)

    def kernel_calls(self) -> list[KernelCall]:
        p = self.projection
        w, post, pre = self._refs()
        dist = ArrayRef(lambda: p.post.state["distance"], f"{p.post.name}.distance")
        rank = ArrayRef(self._ranks, f"{p.name}.rule.rank")
        args = (dist, pre, rank, self.ref("rate"), self.ref("lam"))
        if p.sparse:
            kernel = k.csr_neural_gas_update_rows if self._use_rows() else k.csr_neural_gas_update
            return [KernelCall(kernel, (w, *csr_refs(p)[:2], *args), label=f"{p.name}.rule")]
        return self._receptive_fields([KernelCall(k.neural_gas_update, (w, *args), label=f"{p.name}.rule")])


def _toward_input(p: Projection, g: np.ndarray) -> None:
    """``w_ij += g_i (x_j - w_ij)`` on the synapses of ``p`` (NumPy; the kernels' expression, synapse by synapse)."""
    x = p.pre.activity[0]
    if p.sparse:
        post, pre = p.synapse_index.pairs()
        p.weights += g[post] * (x[pre] - p.weights)
        return
    p.weights += g[:, None] * (x[None, :] - p.weights)
    p.enforce_structure()  # a masked projection's absent synapses moved too: back to zero


class _EdgeView:
    """The edges as the events of this step leave them, read from the sparse projection without copying it.

    ``index`` and ``age`` are the projection's (an edge ``i - j`` is the
    synapses ``i <- j`` and ``j <- i``, of equal age); ``changes`` holds the
    pairs the events staged so far, ``{(i, j), i < j: (linked, age)}``. A
    structural step reads the rows of a few units: O(their edges).
    """

    def __init__(self, index, age):
        self.index, self.age, self.changes = index, age, {}

    def _row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Columns and ages of the synapses onto unit ``i`` (views)."""
        lo, hi = self.index.indptr[i], self.index.indptr[i + 1]
        return self.index.indices[lo:hi], self.age[lo:hi]

    def linked(self, i: int, j: int) -> bool:
        key = (min(i, j), max(i, j))
        if key in self.changes:
            return self.changes[key][0]
        cols = self._row(i)[0]
        k = int(np.searchsorted(cols, j))
        return k < cols.size and int(cols[k]) == j

    def set(self, i: int, j: int, linked: bool, age: float = 0.0):
        self.changes[(min(i, j), max(i, j))] = (linked, age)

    def neighbours(self, i: int) -> np.ndarray:
        """The units ``i`` is linked to, in increasing column (int64)."""
        cols = set(self._row(i)[0].tolist())
        for (a, b), (on, _) in self.changes.items():
            if i in (a, b):
                (cols.add if on else cols.discard)(b if a == i else a)
        return np.array(sorted(cols), dtype=np.int64)

    def old(self, rows, a_max: float) -> np.ndarray:
        """Pairs ``(i, j)``, ``i < j``, linked, older than ``a_max``, ``i`` or ``j`` in ``rows`` (None: any); sorted."""
        if rows is None:
            post, pre = self.index.pairs()
            too_old = self.age > a_max
            pairs = set(zip(np.minimum(post, pre)[too_old].tolist(), np.maximum(post, pre)[too_old].tolist()))
        else:
            pairs = set()
            for i in rows:
                cols, ages = self._row(i)
                pairs.update((min(i, j), max(i, j)) for j in cols[ages > a_max].tolist())
        for (a, b), (on, age) in self.changes.items():
            if (rows is None or a in rows or b in rows) and on and age > a_max:
                pairs.add((a, b))
            elif (a, b) in pairs and not on:
                pairs.discard((a, b))
        return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


def _reverse(index, i: int, cols: np.ndarray) -> np.ndarray:
    """Synapse numbers of ``j <- i`` for each ``j`` in ``cols`` (the other half of the edges of ``i``; -1: none)."""
    return index.find(cols, np.full(cols.size, i))


class _Growing(_Competitive):
    """Shared by the growing networks: edges, a state vector kept between steps, the structural trigger."""

    #: the sparse lateral projection of edges (a declared parameter of each subclass)
    edges: Projection
    #: per-rule numbers kept between steps (set by the subclass), saved by checkpoints
    _state: np.ndarray
    #: the edges are a sparse projection; the prototypes must be dense rows (checked in validate)
    sparse_projections = True

    @staticmethod
    def _check_edges(edges) -> None:
        """TypeError/ValueError unless ``edges`` is a sparse lateral projection."""
        if not isinstance(edges, Projection):
            raise TypeError(f"edges must be a Projection (lateral, sparse); got {type(edges).__name__}")
        if not edges.lateral or not edges.sparse:
            how = "not lateral" if not edges.lateral else "dense (its edge arrays would hold units^2 values)"
            raise ValueError(f"edges must be a sparse lateral projection, e.g. Projection({edges.name!r}, map, map, "
                             f"connectivity=FromIndices([], []), storage='sparse'); {edges.name!r} is {how}")

    def state(self) -> dict:
        return {"state": self._state}

    @property
    def inputs_seen(self) -> int:
        return int(self._state[0])

    def validate(self, network: Network) -> None:
        super().validate(network)
        p = self.projection
        name = type(self).__name__
        if self.edges.post is not p.post:
            raise ValueError(f"{name}: the edges {self.edges.name!r} must connect the units of "
                             f"{p.post.name!r}; they connect {self.edges.post.name!r}")
        if network.projections.get(self.edges.name) is not self.edges:
            raise ValueError(f"{name}: the edges {self.edges.name!r} are not in the network; add them")
        if p.sparse:  # BestMatchingUnit may accept receptive fields; these rules move whole prototypes
            raise ValueError(f"{name} moves the prototypes as dense rows; projection {p.name!r} stores its synapses "
                             "sparsely (build it without connectivity=, or with storage='dense')")
        if self._state[0] == 0:
            # the edges a user built the network with (the rule's events keep them symmetric): checked once, before
            # the first input, since validate runs at every structural change and this costs a sort of the edges
            post, pre = self.edges.synapse_index.pairs()
            n = max(p.post.size, 1)
            if not np.array_equal(np.sort(pre.astype(np.int64) * n + post), post.astype(np.int64) * n + pre):
                raise ValueError(f"{name}: the edges {self.edges.name!r} must be symmetric (an edge i - j is the "
                                 "synapses i <- j and j <- i; link and unlink them with symmetric=True)")

    def _adapt_call(self, kernel, per_unit: str, params: tuple[str, ...]) -> KernelCall:
        """The step's kernel call: ``kernel(w, x, distance, edge rows, edge columns, age, per_unit, state, *params,
        max_size)``, with ``per_unit`` the post population's state variable of that name (-1: no size limit)."""
        p, e = self.projection, self.edges
        w, _, pre = self._refs()
        indptr, indices, _ = csr_refs(e)
        return KernelCall(kernel, (
            w, pre, ArrayRef(lambda: p.post.state["distance"], f"{p.post.name}.distance"),
            indptr, indices, ArrayRef(lambda: e.arrays["age"], f"{e.name}.age"),
            ArrayRef(lambda: p.post.state[per_unit], f"{p.post.name}.{per_unit}"),
            ArrayRef(lambda: self._state, f"{p.name}.rule.state"),
            *(self.ref(n) for n in params),
            -1 if p.post.max_size is None else p.post.max_size), label=f"{p.name}.rule")

    def trigger(self) -> Trigger:
        """The :class:`~neurosim.events.Trigger` (compiled condition) that applies :meth:`structural_events`."""
        from neurosim.events import Trigger

        return Trigger(KernelCall(k.structure_due, (ArrayRef(lambda: self._state, f"{type(self).__name__}.state"),)),
                       self.structural_events, name=type(self).__name__)

    def structural_events(self, network: Network) -> list[Event]:
        raise NotImplementedError


class GrowingNeuralGas(_Growing):
    """Fritzke's (1995) Growing Neural Gas: prototypes, error counters, and edges as a sparse lateral projection.

    The rule runs on the prototype projection ``x -> map`` (dense: row
    ``i`` is unit ``i``'s prototype) and reads and writes the lateral
    projection ``edges`` (``map -> map``, sparse storage: an edge is a
    synapse in both directions, weight 1, with its age in the per-synapse
    array ``edges.arrays["age"]``) and the map's per-unit variable
    ``error``. Memory grows with the units and the edges, not with
    ``units^2``; an input costs the distances to every prototype plus the
    winner's edges, and a structural step one copy of the edges' arrays.
    Each step (one input) its kernel does Fritzke's
    steps 2-5 (:func:`~neurosim.kernels.competitive.gng_adapt`); the
    structural part (steps 5-7: a new edge between the two winners, edges
    older than ``a_max`` removed, units left without an edge removed, a unit
    inserted every ``lam`` inputs between the unit ``q`` of largest error
    and its neighbour ``f`` of largest error) is a list of network events
    (:meth:`structural_events`: :class:`~neurosim.events.Link`,
    :class:`~neurosim.events.Unlink`, :class:`~neurosim.events.Death`,
    :class:`~neurosim.events.Birth`, :class:`~neurosim.events.Assign`)
    that a trigger applies in the events phase of the steps that need
    them, so every edge and unit born or removed is in the event log with
    stable unit ids. ``rule.trigger()`` returns that
    :class:`~neurosim.events.Trigger`, to add to the network with the
    projections (:func:`~neurosim.models.self_organizing.build_gng` does);
    ``rule.inputs_seen`` counts the inputs processed.

    Ties, which the paper leaves open, go to the lowest column (the lowest
    id): for ``s1``, ``s2``, ``q`` and ``f``. They are not rare for ``f``: a
    newborn unit inherits its parent's error exactly, and the two keep equal
    errors until one of them wins an input.

    Step 8 (every error ``*= d``) runs at the start of the next input's
    kernel, so the events phase sees the errors Fritzke's step 7 sees; the
    ``error`` variable between steps is therefore Fritzke's value divided by
    ``d`` (the same numbers one multiplication later).

    The defaults are Fritzke's (1995, Sec. 3, the values of Fig. 1).

    Parameters
    ----------
    edges : Projection
        The lateral, sparse projection holding the edges (e.g.
        ``Projection("edges", map, map, connectivity=FromIndices([], []),
        storage="sparse")``, no edges yet); symmetric; fixed. A dense
        (masked) one is refused: its edge arrays would hold ``units^2``
        values.
    eps_b : float in [0, 1], default=0.2
        Step of the winner toward the input (0.2).
    eps_n : float in [0, 1], default=0.006
        Step of the winner's neighbours (0.006).
    lam : int >= 1, default=100
        A unit is inserted after every ``lam`` inputs (lambda, 100).
    a_max : float >= 0, default=50.0
        Edges older than this are removed (50).
    alpha : float in [0, 1], default=0.5
        Error decrease of ``q`` and ``f`` at an insertion (0.5).
    d : float in [0, 1], default=0.995
        Error decay per input (0.995).
    """

    edges = Instance(cls=Projection, live=False, doc="the lateral sparse projection of edges")
    eps_b = Float(0.2, low=0.0, high=1.0, doc="winner step size")
    eps_n = Float(0.006, low=0.0, high=1.0, doc="neighbour step size")
    lam = Int(100, low=1, doc="inputs between insertions (lambda)")
    a_max = Float(50.0, low=0.0, doc="largest edge age")
    alpha = Float(0.5, low=0.0, high=1.0, doc="error decrease of q and f at an insertion")
    d = Float(0.995, low=0.0, high=1.0, doc="error decay per input")

    def __init__(self, edges: Projection, eps_b: float | Schedule = 0.2, eps_n: float | Schedule = 0.006,
                 lam: int = 100, a_max: float | Schedule = 50.0, alpha: float | Schedule = 0.5,
                 d: float | Schedule = 0.995) -> None:
        super().__init__()
        self._check_edges(edges)
        self.set_params(edges=edges, eps_b=eps_b, eps_n=eps_n, lam=lam, a_max=a_max, alpha=alpha, d=d)
        self.post_variables = {"error": 0.0}
        edges.add_array("age")
        #: ``[inputs seen, s1, s2, structure due, a_max at the last structural step]``: kept between steps,
        #: saved by checkpoints
        self._state = np.zeros(5)

    # -- steps 0-5 --------------------------------------------------------------------------------
    def update_numpy(self) -> None:
        p, e = self.projection, self.edges
        t = p.network.t if p.network is not None else None  # a plain value needs no step
        w, x, error, index, age = p.weights, p.pre.activity[0], p.post.state["error"], e.synapse_index, e.arrays["age"]
        st = self._state
        st[0] += 1.0
        st[3] = 0.0
        error *= self.value("d", t)
        dist = p.post.state["distance"][0]
        order = np.argsort(dist, kind="stable")
        s1 = int(order[0]) if dist.size else -1
        s2 = int(order[1]) if dist.size > 1 else -1
        st[1], st[2] = s1, s2
        if s1 >= 0:
            lo, hi = int(index.indptr[s1]), int(index.indptr[s1 + 1])
            nb = index.indices[lo:hi].astype(np.int64)
            back = _reverse(index, s1, nb)
            age[lo:hi] += 1.0
            age[back[back >= 0]] += 1.0
            error[s1] += dist[s1]
            w[s1] += self.value("eps_b", t) * (x - w[s1])
            w[nb] += self.value("eps_n", t) * (x[None, :] - w[nb])
            if s2 >= 0:
                both = index.find([s1, s2], [s2, s1])
                if both[0] >= 0:
                    age[both[both >= 0]] = 0.0
                else:
                    st[3] = 1.0
            if np.any(age[lo:hi] > self.value("a_max", t)):
                st[3] = 1.0
        cap = p.post.max_size
        if st[0] % self.value("lam", t) == 0 and (cap is None or p.post.size < cap):
            st[3] = 1.0
        if self.value("a_max", t) < st[4]:
            st[3] = 1.0

    def kernel_call(self) -> KernelCall:
        return self._adapt_call(k.gng_adapt, "error", ("eps_b", "eps_n", "a_max", "lam", "d"))

    # -- steps 5-7: network events ------------------------------------------------------------------
    def structural_events(self, network: Network) -> list[Event]:
        """Fritzke's steps 5 (new edge), 6 (old edges, isolated units) and 7 (insertion) as events, in order.

        Only the winner's edges age, so only they can pass ``a_max``; all
        edges are scanned when ``a_max`` was lowered since the last step.

        Parameters
        ----------
        network : Network
            The network the rule runs in, at the step just computed.

        Returns
        -------
        list of Event
            :class:`~neurosim.events.Link`, :class:`~neurosim.events.Unlink`,
            :class:`~neurosim.events.Death`, :class:`~neurosim.events.Birth`
            and :class:`~neurosim.events.Assign` events, in Fritzke's order
            (empty when the structure does not change).
        """
        from neurosim.events import Assign, Birth, Death, Link, Unlink

        p, e = self.projection, self.edges
        pop = p.post
        t = network.t
        ids = pop.ids
        edges = _EdgeView(e.synapse_index, e.arrays["age"])
        s1, s2 = int(self._state[1]), int(self._state[2])
        a_max = self.value("a_max", t)
        rows = None if a_max < self._state[4] else ([s1] if s1 >= 0 else [])
        self._state[4] = a_max
        events: list[Event] = []
        if s1 >= 0 and s2 >= 0 and not edges.linked(s1, s2):
            events.append(Link(e, ids[s1], ids[s2], symmetric=True, weight=1.0, values={"age": 0.0}))
            edges.set(s1, s2, True)
        old = edges.old(rows, a_max)
        isolated = np.zeros(0, dtype=np.int64)
        if old.size:
            events.append(Unlink(e, ids[old[:, 0]], ids[old[:, 1]], symmetric=True))
            for a, b in old:
                edges.set(a, b, False)
            touched = np.unique(old)
            isolated = np.array([u for u in touched if not edges.neighbours(u).size], dtype=np.int64)
            if isolated.size:
                events.append(Death(pop, ids[isolated]))
        if self._state[0] % self.value("lam", t) == 0 and (pop.max_size is None or pop.size - isolated.size
                                                            < pop.max_size):
            alive = np.ones(pop.size, dtype=bool)
            alive[isolated] = False
            error = pop.state["error"]
            # no unit left (a user's Death may empty the map) means no q; a unit without an edge (a one-unit
            # map) has no neighbour f. Fritzke leaves both undefined: no insertion
            q = int(np.flatnonzero(alive)[np.argmax(error[alive])]) if alive.any() else -1
            nb = edges.neighbours(q) if q >= 0 else np.zeros(0, dtype=np.int64)
            if nb.size:
                f = int(nb[np.argmax(error[nb])])
                alpha = self.value("alpha", t)
                r = pop.next_id
                eq, ef = alpha * error[q], alpha * error[f]
                events += [Birth(pop, 1, init={"error": eq}, weights={p: 0.5 * (p.weights[q] + p.weights[f])[None, :]},
                                 unlinked=[e]),
                           Link(e, [r, r], [ids[q], ids[f]], symmetric=True, weight=1.0, values={"age": 0.0}),
                           Unlink(e, ids[q], ids[f], symmetric=True),
                           Assign(pop, "error", [ids[q], ids[f]], [eq, ef])]
        return events


def _habituated(h, alpha, tau):
    """:func:`neurosim.kernels.competitive.habituated` on NumPy values (the same expression)."""
    h_inf = 1.0 - 1.0 / alpha
    return h_inf + (h - h_inf) * np.exp(-alpha / tau)


class GrowWhenRequired(_Growing):
    """Marsland, Shapiro & Nehmzow's (2002) Grow When Required network (GWR).

    Like :class:`GrowingNeuralGas`, a rule on the prototype projection that
    also keeps the edges (a sparse lateral projection ``edges`` with ages in
    ``edges.arrays["age"]``) and a per-unit variable of the map, here the
    firing counter ``firing`` (``h``, 1 for a unit that never fired). Per
    input (Sec. 3.1): the nearest ``s`` and second-nearest ``t`` are linked
    (an existing edge gets age 0); when ``s``'s activity ``exp(-||x - w_s||)``
    is below ``a_T`` and its firing counter below ``h_T``, a unit ``r`` is
    born at ``(w_s + x) / 2`` with edges to ``s`` and ``t`` and the edge
    ``s - t`` is removed; otherwise ``s`` and its neighbours move toward
    ``x`` by ``eps_b h_s`` and ``eps_n h_i``; the edges of ``s`` age by 1;
    ``s`` and its neighbours habituate (Eq. 3, ``h_0 = S = 1``, one unit of
    time per firing: :func:`~neurosim.kernels.competitive.habituated`);
    edges older than ``a_max`` and units left without edges are removed.
    The kernel (:func:`~neurosim.kernels.competitive.gwr_adapt`) does what
    changes no structure; :meth:`structural_events` (applied by the
    :class:`~neurosim.events.Trigger` that ``rule.trigger()`` returns, to add
    to the network as :func:`~neurosim.models.self_organizing.build_gwr`
    does) the links, unlinks, births and deaths, as network
    events. The newborn ``r`` is a neighbour of ``s`` when the habituation
    step comes, so it starts habituated once (``tau_n``) and its edge to
    ``s`` has age 1.

    The defaults are the values we read in the paper (Sec. 4); ``a_T``
    depends on the scale of the data.

    Parameters
    ----------
    edges : Projection
        Lateral, sparse, symmetric (as for :class:`GrowingNeuralGas`); fixed.
    a_T : float in (0, 1], default=0.95
        Activity threshold (insertion when the winner's activity is below it).
    h_T : float in [0, 1], default=0.1
        Firing threshold (insertion only for a winner that fired enough).
    eps_b, eps_n : float in [0, 1]
        Learning rates of the winner and its neighbours (0.1, 0.01).
    tau_b, tau_n : float > 0
        Habituation time constants of the winner and its neighbours (3.33, 14.3).
    alpha_b, alpha_n : float > 1
        Habituation constants (1.05; the counters tend to ``1 - 1/alpha``).
    a_max : float >= 1, default=50.0
        Largest edge age (50). The edge between this input's two winners
        has age 1 when the removals come (made or refreshed at age 0, then
        aged with the other edges of ``s``); below 1 it would be removed
        at once and both winners, left without edges, would die -- with
        every other unit in turn, the network would lose all its units.
    """

    edges = Instance(cls=Projection, live=False, doc="the lateral sparse projection of edges")
    a_T = Float(0.95, low=0.0, high=1.0, low_open=True, doc="activity threshold")
    h_T = Float(0.1, low=0.0, high=1.0, doc="firing threshold")
    eps_b = Float(0.1, low=0.0, high=1.0, doc="winner learning rate")
    eps_n = Float(0.01, low=0.0, high=1.0, doc="neighbour learning rate")
    tau_b = Float(3.33, low=0.0, low_open=True, doc="winner habituation time constant")
    tau_n = Float(14.3, low=0.0, low_open=True, doc="neighbour habituation time constant")
    alpha_b = Float(1.05, low=1.0, low_open=True, doc="winner habituation constant")
    alpha_n = Float(1.05, low=1.0, low_open=True, doc="neighbour habituation constant")
    a_max = Float(50.0, low=1.0, doc="largest edge age (>= 1: the edge of the two winners keeps them alive)")

    def __init__(self, edges: Projection, a_T: float | Schedule = 0.95, h_T: float | Schedule = 0.1,
                 eps_b: float | Schedule = 0.1, eps_n: float | Schedule = 0.01, tau_b: float | Schedule = 3.33,
                 tau_n: float | Schedule = 14.3, alpha_b: float | Schedule = 1.05, alpha_n: float | Schedule = 1.05,
                 a_max: float | Schedule = 50.0) -> None:
        super().__init__()
        self._check_edges(edges)
        self.set_params(edges=edges, a_T=a_T, h_T=h_T, eps_b=eps_b, eps_n=eps_n, tau_b=tau_b, tau_n=tau_n,
                        alpha_b=alpha_b, alpha_n=alpha_n, a_max=a_max)
        self.post_variables = {"firing": 1.0}
        edges.add_array("age")
        #: ``[inputs seen, s, t, structure due, insert, a_max at the last structural step]``
        self._state = np.zeros(6)

    def _values(self, t):
        return {k: self.value(k, t) for k in ("a_T", "h_T", "eps_b", "eps_n", "tau_b", "tau_n", "alpha_b", "alpha_n",
                                              "a_max")}

    def update_numpy(self) -> None:
        p, e = self.projection, self.edges
        v = self._values(p.network.t if p.network is not None else None)
        w, x, h, index, age = p.weights, p.pre.activity[0], p.post.state["firing"], e.synapse_index, e.arrays["age"]
        st = self._state
        st[0] += 1.0
        st[3] = st[4] = 0.0
        dist = p.post.state["distance"][0]
        order = np.argsort(dist, kind="stable")
        s = int(order[0]) if dist.size else -1
        t = int(order[1]) if dist.size > 1 else -1
        st[1], st[2] = s, t
        if s < 0 or t < 0:
            return
        both = index.find([s, t], [t, s])
        linked = bool(both[0] >= 0)
        if linked:
            age[both[both >= 0]] = 0.0
        else:
            st[3] = 1.0
        cap = p.post.max_size
        insert = (np.exp(-np.sqrt(dist[s])) < v["a_T"] and h[s] < v["h_T"]
                  and (cap is None or p.post.size < cap))
        lo, hi = int(index.indptr[s]), int(index.indptr[s + 1])
        row = index.indices[lo:hi].astype(np.int64)
        # the neighbours N: s's edges, with t (linked now or in the events phase) unless a unit is inserted
        nb = row[row != t] if insert else np.union1d(row, [t])
        if insert:
            st[3] = st[4] = 1.0
        else:
            w[s] += v["eps_b"] * h[s] * (x - w[s])
            w[nb] += (v["eps_n"] * h[nb])[:, None] * (x[None, :] - w[nb])
        aged = np.flatnonzero(np.isin(row, nb))
        back = _reverse(index, s, row[aged])
        age[lo + aged] += 1.0
        age[back[back >= 0]] += 1.0
        if np.any(age[lo + aged] > v["a_max"]) or v["a_max"] < st[5]:
            st[3] = 1.0
        h[s] = _habituated(h[s], v["alpha_b"], v["tau_b"])
        h[nb] = _habituated(h[nb], v["alpha_n"], v["tau_n"])

    def kernel_call(self) -> KernelCall:
        return self._adapt_call(k.gwr_adapt, "firing",
                                ("eps_b", "eps_n", "a_T", "h_T", "tau_b", "tau_n", "alpha_b", "alpha_n", "a_max"))

    def structural_events(self, network: Network) -> list[Event]:
        """The links, unlinks, birth and deaths of this input, in the paper's order.

        Only the edges of ``s`` age, so only they can pass ``a_max``; all
        edges are scanned when ``a_max`` was lowered since the last step.

        Parameters
        ----------
        network : Network
            The network the rule runs in, at the step just computed.

        Returns
        -------
        list of Event
            :class:`~neurosim.events.Link`, :class:`~neurosim.events.Unlink`,
            :class:`~neurosim.events.Birth` and :class:`~neurosim.events.Death`
            events, in the paper's order (empty when the structure does not change).
        """
        from neurosim.events import Birth, Death, Link, Unlink

        p, e = self.projection, self.edges
        pop = p.post
        v = self._values(network.t)
        ids = pop.ids
        edges = _EdgeView(e.synapse_index, e.arrays["age"])
        s, t, insert = int(self._state[1]), int(self._state[2]), bool(self._state[4])
        if s < 0 or t < 0:
            return []
        rows = None if v["a_max"] < self._state[5] else [s]
        self._state[5] = v["a_max"]
        events: list[Event] = []
        r_edges = {}  # the newborn's edges: {column of s or t: age}
        if insert:
            r = pop.next_id
            h_r = float(_habituated(1.0, v["alpha_n"], v["tau_n"]))
            w_r = 0.5 * (p.weights[s] + p.pre.activity[0])
            if not edges.linked(s, t):  # step 5 links s and t even when step 7 then unlinks them: both are logged
                events.append(Link(e, ids[s], ids[t], symmetric=True, weight=1.0, values={"age": 0.0}))
            events += [Birth(pop, 1, init={"firing": h_r}, weights={p: w_r[None, :]}, unlinked=[e]),
                       Unlink(e, ids[s], ids[t], symmetric=True)]
            edges.set(s, t, False)
            # the edge r - s is one of s's when the edges of s age: it starts at age 1
            r_edges = {s: 1.0, t: 0.0}
            events += [Link(e, r, ids[u], symmetric=True, weight=1.0, values={"age": a}) for u, a in r_edges.items()]
        elif not edges.linked(s, t):
            # created (age 0), then aged with the other edges of s
            events.append(Link(e, ids[s], ids[t], symmetric=True, weight=1.0, values={"age": 1.0}))
            edges.set(s, t, True, 1.0)
        old = edges.old(rows, v["a_max"])
        gone = [u for u, a in r_edges.items() if a > v["a_max"]]  # only if a_max < 1, which the rule refuses
        if old.size:
            events.append(Unlink(e, ids[old[:, 0]], ids[old[:, 1]], symmetric=True))
            for a, b in old:
                edges.set(a, b, False)
        if gone:
            events.append(Unlink(e, [r] * len(gone), ids[gone], symmetric=True))
        kept_by_r = {u for u, a in r_edges.items() if a <= v["a_max"]}
        touched = set(np.unique(old).tolist()) | set(gone)
        isolated = [u for u in sorted(touched) if not edges.neighbours(u).size and u not in kept_by_r]
        if isolated:
            events.append(Death(pop, ids[isolated]))
        return events
