"""Group families for structured sparse codes (paper 003: Szabó, Póczos & Lőrincz, OSDL).

A :class:`GroupStructure` is a family ``G`` of groups of code units with
weights ``d^G`` (``d_j^G > 0`` for ``j`` in ``G``, 0 outside), the structure
of the penalty

.. math:: \\Omega(\\alpha) = \\big\\| \\big(\\|d^G \\circ \\alpha\\|_2\\big)_{G \\in \\mathcal G} \\big\\|_\\eta

of the OSDL representation step (supplement, Table 2; Eq. 5's ``Omega``).
Groups may overlap. Four families cover the paper's experiments:

* :meth:`GroupStructure.singletons` -- no structure: ``Omega = ||alpha||_1``
  at ``eta = 1`` (the lasso);
* :meth:`GroupStructure.disjoint` -- consecutive blocks (the group lasso);
* :meth:`GroupStructure.torus` -- the ``(2r+1) x (2r+1)`` neighbourhood of
  every unit of a ``rows x cols`` grid wrapped into a torus: units that are
  active together are neighbours, so the learned dictionary is topographic;
* :meth:`GroupStructure.tree` / :meth:`GroupStructure.from_tree` -- a rooted
  tree, one group per node holding the node and all its descendants
  (Jenatton et al. 2010): a node can be active only if its ancestors are.

:func:`as_groups` also accepts a list of index sets or a networkx graph
(:meth:`GroupStructure.from_graph`). Stored as CSR arrays (``indptr``,
``indices``, ``weights``), which the compiled kernels read directly.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._lazy import lazy_module
from neurosim._validation import check_float, check_int

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = lazy_module("networkx")  # imported on first use (neurosim/_lazy.py)

__all__ = ["GroupStructure", "as_groups"]


class GroupStructure:
    """A family of (possibly overlapping) weighted groups of ``n_units`` code units.

    Parameters
    ----------
    indptr : int array, shape (n_groups + 1,)
        Group ``g`` holds ``indices[indptr[g]:indptr[g + 1]]``.
    indices : int array
        Member units, each in ``[0, n_units)``, unique within a group.
    weights : float array, same shape as ``indices``
        ``d_j^G > 0``, finite.
    n_units : int >= 1
        Number of code units the groups are over.
    parent : int array, shape (n_units,), optional
        For tree families: the parent unit of each unit (-1 for a root).
    grid : tuple (rows, cols), optional
        For torus families: the grid shape (unit ``j`` sits at ``divmod(j, cols)``).
    kind : str, optional
        Name of the family (``"singletons"``, ``"disjoint"``, ``"torus"``,
        ``"tree"``, ``"graph"``, ``"custom"``), recorded in :meth:`params`.

    Raises
    ------
    ValueError
        If the arrays are malformed, a group is empty or repeats a unit, a
        weight is not finite and positive, or a unit belongs to no group.

    Notes
    -----
    Every unit must belong to at least one group: an unpenalised unit would
    make the representation step's linear system singular for an
    overcomplete dictionary.

    Examples
    --------
    Two overlapping groups over three units, and ``Omega`` of a code
    (``eta = 1``: the sum of the groups' Euclidean norms):

    >>> import numpy as np
    >>> from neurosim.groups import GroupStructure
    >>> g = GroupStructure.from_sets([[0, 1], [1, 2]], n_units=3)
    >>> g.n_groups, [m.tolist() for m in g]
    (2, [[0, 1], [1, 2]])
    >>> float(g.omega(np.array([3.0, 4.0, 0.0])))  # ||(3, 4)|| + ||(4, 0)||
    9.0
    >>> GroupStructure.tree(depth=2, branching=2).prox_order().tolist()  # leaves before the root
    [1, 2, 0]
    """

    def __init__(self, indptr: ArrayLike, indices: ArrayLike, weights: ArrayLike, n_units: int, *,
                 parent: ArrayLike | None = None, grid: tuple[int, int] | None = None, kind: str = "custom") -> None:
        self.n_units = check_int("n_units", n_units, low=1)
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        weights = np.asarray(weights, dtype=np.float64) if np.size(weights) else np.zeros(0)
        if indptr.ndim != 1 or indptr.size < 2 or not np.issubdtype(indptr.dtype, np.integer):
            raise ValueError("indptr must be a 1-D integer array of length n_groups + 1 >= 2 (at least one group)")
        if indices.ndim != 1 or (indices.size and not np.issubdtype(indices.dtype, np.integer)):
            raise ValueError("indices must be a 1-D integer array")
        if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
            raise ValueError(f"indptr must start at 0, be non-decreasing and end at len(indices) = {indices.size}")
        sizes = np.diff(indptr)
        if np.any(sizes == 0):
            raise ValueError(f"groups must not be empty; groups {np.flatnonzero(sizes == 0)[:10].tolist()} are")
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_units):
            bad = indices[(indices < 0) | (indices >= self.n_units)]
            raise ValueError(f"group members must be units in [0, {self.n_units - 1}] (n_units = {self.n_units}); "
                             f"got {bad[:10].tolist()}")
        if weights.shape != indices.shape:
            raise ValueError(f"weights must have the shape of indices {indices.shape}; got {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
            raise ValueError("weights d_j^G must be finite and > 0")
        indptr = indptr.astype(np.int64)
        indices = indices.astype(np.int64)
        # members sorted within each group (the kernels rely on nothing else), duplicates refused
        order = np.lexsort((indices, np.repeat(np.arange(sizes.size), sizes)))
        indices, weights = indices[order], weights[order]
        same = (np.diff(indices) == 0) & (np.repeat(np.arange(sizes.size), sizes)[1:]
                                          == np.repeat(np.arange(sizes.size), sizes)[:-1])
        if np.any(same):
            g = int(np.searchsorted(indptr, np.flatnonzero(same)[0] + 1, side="right") - 1)
            raise ValueError(f"group {g} names unit {int(indices[np.flatnonzero(same)[0]])} twice")
        covered = np.zeros(self.n_units, dtype=bool)
        covered[indices] = True
        if not covered.all():
            raise ValueError(f"every unit must belong to a group; units {np.flatnonzero(~covered)[:10].tolist()} "
                             "belong to none (an unpenalised unit makes the coding problem ill-posed)")
        self.indptr, self.indices, self.weights = indptr, indices, weights
        self.parent = None if parent is None else np.asarray(parent, dtype=np.int64)
        self.grid = None if grid is None else tuple(int(g) for g in grid)
        self.kind = kind
        for a in (self.indptr, self.indices, self.weights):
            a.setflags(write=False)

    # -- constructors -------------------------------------------------------------
    @classmethod
    def from_sets(cls, sets: Iterable[Iterable[int]], n_units: int, weights: Sequence | None = None) -> GroupStructure:
        """Groups from a list of index collections.

        Parameters
        ----------
        sets : iterable of iterables of int
            The members of each group.
        n_units : int >= 1
            Number of units.
        weights : sequence, optional
            ``None`` (all 1), one scalar per group, or one list of per-member
            weights per group; all finite and > 0.

        Returns
        -------
        GroupStructure
            Kind ``"custom"``.
        """
        n_units = check_int("n_units", n_units, low=1)
        if isinstance(sets, (str, bytes)) or not hasattr(sets, "__iter__"):
            raise TypeError(f"groups must be a list of index sets; got {type(sets).__name__}")
        members = []
        for g, s in enumerate(sets):
            if isinstance(s, (str, bytes)) or not hasattr(s, "__iter__"):
                raise TypeError(f"group {g} must be a collection of unit indices; got {type(s).__name__}")
            items = list(s)
            for u in items:
                if isinstance(u, (bool, np.bool_)) or not isinstance(u, numbers.Integral):
                    raise TypeError(f"group {g} must hold integer unit indices; got {type(u).__name__} {u!r}")
            members.append(np.asarray(items, dtype=np.int64))
        if not members:
            raise ValueError("groups must hold at least one group")
        sizes = np.array([m.size for m in members])
        indptr = np.concatenate([[0], np.cumsum(sizes)])
        indices = np.concatenate(members) if indptr[-1] else np.zeros(0, dtype=np.int64)
        if weights is None:
            w = np.ones(indices.size)
        else:
            w = _member_weights(weights, sizes)
        return cls(indptr, indices, w, n_units)

    @classmethod
    def singletons(cls, n_units: int) -> GroupStructure:
        """One group per unit, weight 1: ``Omega = ||alpha||_1`` at ``eta = 1`` (the lasso).

        Parameters
        ----------
        n_units : int >= 1
            Number of units.

        Returns
        -------
        GroupStructure
            Kind ``"singletons"``.
        """
        n = check_int("n_units", n_units, low=1)
        return cls(np.arange(n + 1), np.arange(n), np.ones(n), n, kind="singletons")

    @classmethod
    def disjoint(cls, n_units: int, size: int) -> GroupStructure:
        """Consecutive blocks of ``size`` units (the last may be shorter): the group lasso.

        Parameters
        ----------
        n_units : int >= 1
            Number of units.
        size : int in [1, n_units]
            Units per block.

        Returns
        -------
        GroupStructure
            Kind ``"disjoint"``.
        """
        n = check_int("n_units", n_units, low=1)
        size = check_int("size", size, low=1, high=n)
        indptr = np.concatenate([np.arange(0, n, size), [n]])
        return cls(indptr, np.arange(n), np.ones(n), n, kind="disjoint")

    @classmethod
    def torus(cls, rows: int, cols: int, radius: int = 1) -> GroupStructure:
        """The ``(2 radius + 1)^2`` neighbourhood of every unit of a ``rows x cols`` torus, one group each.

        Unit ``j`` sits at ``(j // cols, j % cols)``; groups wrap around the
        edges. The neighbourhood may not wrap onto itself: ``2 radius + 1 <=
        min(rows, cols)``.

        Parameters
        ----------
        rows, cols : int >= 1
            The grid's shape.
        radius : int >= 0, optional
            Half-width of the neighbourhood.

        Returns
        -------
        GroupStructure
            Kind ``"torus"`` (topographic coding).
        """
        rows = check_int("rows", rows, low=1)
        cols = check_int("cols", cols, low=1)
        radius = check_int("radius", radius, low=0)
        if 2 * radius + 1 > min(rows, cols):
            raise ValueError(f"radius must be in [0, {(min(rows, cols) - 1) // 2}] so that a neighbourhood "
                             f"(2 radius + 1 = {2 * radius + 1} wide) fits the {rows} x {cols} torus; got {radius}")
        r, c = np.divmod(np.arange(rows * cols), cols)
        offs = np.arange(-radius, radius + 1)
        dr, dc = np.meshgrid(offs, offs, indexing="ij")
        members = ((r[:, None] + dr.ravel()) % rows) * cols + (c[:, None] + dc.ravel()) % cols
        w = (2 * radius + 1) ** 2
        return cls(np.arange(0, rows * cols * w + 1, w), members.ravel(), np.ones(members.size), rows * cols,
                   grid=(rows, cols), kind="torus")

    @classmethod
    def tree(cls, depth: int, branching: int) -> GroupStructure:
        """A complete rooted tree: ``depth`` levels (1: the root alone), ``branching`` children per node.

        Units are numbered breadth-first (root 0). One group per node: the
        node and all its descendants (Jenatton et al. 2010).

        Parameters
        ----------
        depth : int in [1, 32]
            Levels.
        branching : int >= 1
            Children per node (at most 1e7 nodes in all).

        Returns
        -------
        GroupStructure
            Kind ``"tree"``.
        """
        depth = check_int("depth", depth, low=1, high=32)
        branching = check_int("branching", branching, low=1)
        n = sum(branching ** d for d in range(depth))
        if n > 10 ** 7:
            raise ValueError(f"a tree of depth {depth} and branching {branching} has {n} nodes; at most 1e7 allowed")
        parent = np.full(n, -1, dtype=np.int64)
        parent[1:] = (np.arange(1, n) - 1) // branching
        return cls.from_parents(parent)

    @classmethod
    def from_parents(cls, parent: ArrayLike) -> GroupStructure:
        """A forest from a parent array; one group per unit: its subtree.

        Parameters
        ----------
        parent : array_like of int, shape (n_units,)
            ``parent[j]`` is ``j``'s parent unit, -1 for a root.

        Returns
        -------
        GroupStructure
            Kind ``"tree"``.

        Raises
        ------
        ValueError
            If ``parent`` does not describe a forest.
        """
        parent = np.asarray(parent)
        if parent.ndim != 1 or parent.size == 0 or not np.issubdtype(parent.dtype, np.integer):
            raise ValueError("parent must be a non-empty 1-D integer array")
        n = parent.size
        if np.any((parent < -1) | (parent >= n)) or np.any(parent == np.arange(n)):
            raise ValueError(f"parent entries must be -1 (root) or another unit in [0, {n - 1}]")
        graph = nx.DiGraph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((int(p), j) for j, p in enumerate(parent) if p >= 0)
        if not nx.is_directed_acyclic_graph(graph):
            raise ValueError("parent must describe a forest (it has a cycle)")
        members = [sorted({j} | nx.descendants(graph, j)) for j in range(n)]
        sizes = np.array([len(m) for m in members])
        return cls(np.concatenate([[0], np.cumsum(sizes)]), np.concatenate(members), np.ones(sizes.sum()), n,
                   parent=parent, kind="tree")

    @classmethod
    def from_tree(cls, graph: nx.DiGraph) -> GroupStructure:
        """Groups of a rooted tree or forest given as a networkx ``DiGraph`` (edges parent -> child).

        Nodes are units ``0 .. n-1`` (integers) or are numbered in ``sorted``
        order. One group per node: the node and its descendants.

        Parameters
        ----------
        graph : networkx.DiGraph
            A non-empty forest, at most one parent per node.

        Returns
        -------
        GroupStructure
            Kind ``"tree"``.
        """
        if not isinstance(graph, nx.DiGraph) or not nx.is_forest(graph) or graph.number_of_nodes() == 0:
            raise ValueError("a tree of groups must be a non-empty networkx DiGraph forest (edges parent -> child)")
        if any(d > 1 for _, d in graph.in_degree()):
            raise ValueError("a tree of groups must have at most one parent per node (edges parent -> child)")
        index = _node_index(graph)
        parent = np.full(len(index), -1, dtype=np.int64)
        for p, c in graph.edges():
            parent[index[c]] = index[p]
        return cls.from_parents(parent)

    @classmethod
    def from_graph(cls, graph: nx.Graph, radius: int = 1) -> GroupStructure:
        """Groups from a networkx graph.

        A directed forest (edges parent -> child) gives the hierarchical
        family (:meth:`from_tree`); any other graph gives one group per node:
        the nodes within ``radius`` hops (its closed neighbourhood), the
        topographic family of an arbitrary neighbourhood graph. Nodes are
        units ``0 .. n-1`` or are numbered in ``sorted`` order.

        Parameters
        ----------
        graph : networkx.Graph
            A non-empty graph.
        radius : int >= 0, optional
            Hops of a neighbourhood (not used for a directed forest).

        Returns
        -------
        GroupStructure
            Kind ``"tree"`` or ``"graph"``.
        """
        if not isinstance(graph, nx.Graph):
            raise TypeError(f"graph must be a networkx graph; got {type(graph).__name__}")
        if graph.number_of_nodes() == 0:
            raise ValueError("graph must have at least one node")
        if isinstance(graph, nx.DiGraph) and nx.is_forest(graph) and all(d <= 1 for _, d in graph.in_degree()):
            return cls.from_tree(graph)
        radius = check_int("radius", radius, low=0)
        index = _node_index(graph)
        und = graph.to_undirected(as_view=True)
        members = [sorted(index[v] for v in nx.single_source_shortest_path_length(und, node, cutoff=radius))
                   for node in sorted(index, key=index.__getitem__)]
        sizes = np.array([len(m) for m in members])
        return cls(np.concatenate([[0], np.cumsum(sizes)]), np.concatenate(members), np.ones(sizes.sum()),
                   len(index), kind="graph")

    # -- views ----------------------------------------------------------------------
    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return self.indptr.size - 1

    def __len__(self) -> int:
        return self.n_groups

    def group(self, g: int) -> np.ndarray:
        """The members of group ``g``.

        Parameters
        ----------
        g : int in [0, n_groups)
            The group.

        Returns
        -------
        numpy.ndarray of int64
            Sorted unit indices (read-only).
        """
        g = check_int("g", g, low=0, high=self.n_groups - 1)
        return self.indices[self.indptr[g]:self.indptr[g + 1]]

    def __iter__(self):
        return (self.indices[self.indptr[g]:self.indptr[g + 1]] for g in range(self.n_groups))

    def incidence(self) -> np.ndarray:
        """Dense matrix of the weights ``d_j^G`` (0 where ``j`` is not in ``G``).

        Returns
        -------
        numpy.ndarray, shape (n_groups, n_units)
            The weights.
        """
        out = np.zeros((self.n_groups, self.n_units))
        rows = np.repeat(np.arange(self.n_groups), np.diff(self.indptr))
        out[rows, self.indices] = self.weights
        return out

    def group_norms(self, codes: ArrayLike) -> np.ndarray:
        """``||d^G o alpha||_2`` for every row of ``codes`` and group.

        Parameters
        ----------
        codes : array_like, shape (n_samples, n_units) or (n_units,)
            Codes ``alpha``.

        Returns
        -------
        numpy.ndarray, shape (n_samples, n_groups) or (n_groups,)
            The weighted group norms (computed without overflow or underflow).
        """
        codes = np.asarray(codes, dtype=np.float64)
        one = codes.ndim == 1
        codes = np.atleast_2d(codes)
        if codes.ndim != 2 or codes.shape[1] != self.n_units:
            raise ValueError(f"codes must have {self.n_units} columns (n_units); got shape {codes.shape}")
        v = codes[:, self.indices] * self.weights
        with np.errstate(over="ignore", invalid="ignore"):
            big = np.abs(v).max(axis=1, initial=0.0) if v.size else np.zeros(codes.shape[0])
            # rows whose squares would overflow or vanish are scaled first (rows in range keep their bits)
            scale = np.where((big > 1e150) | ((big < 1e-150) & (big > 0)), big, 1.0)
            sq = (v / scale[:, None]) ** 2
            norms = np.sqrt(np.add.reduceat(sq, self.indptr[:-1], axis=1)) * scale[:, None]
        return norms[0] if one else norms

    def omega(self, codes: ArrayLike, eta: float = 1.0) -> np.ndarray:
        """``Omega(alpha) = ||(||d^G o alpha||_2)_G||_eta`` per row of ``codes`` (a scalar for one code).

        The structured penalty of paper 003 (Szabó et al. 2011, Eq. 2).

        Parameters
        ----------
        codes : array_like, shape (n_samples, n_units) or (n_units,)
            Codes ``alpha``.
        eta : float in (0, 1], optional
            The outer quasi-norm's exponent.

        Returns
        -------
        numpy.ndarray, shape (n_samples,) or ()
            ``Omega`` per code.
        """
        eta = check_float("eta", eta, low=0.0, high=1.0, low_open=True)
        norms = self.group_norms(codes)
        if eta == 1.0:
            return norms.sum(axis=-1)
        with np.errstate(divide="ignore"):
            return (norms ** eta).sum(axis=-1) ** (1.0 / eta)

    def prox_order(self) -> np.ndarray | None:
        """Groups in an order for the exact proximal operator of ``sum_G w_G ||alpha_G||_2``, or ``None``.

        The composition of block soft-thresholds is that operator when the
        family is laminar (any two groups disjoint or nested: disjoint
        groups, singletons, a tree's subtrees) and every group has one member
        weight ``w_G``, taken with each group after the groups it contains
        (Jenatton et al., JMLR 2011, Prop. 2-3). Returns the group indices in
        ascending size (such an order) as an int64 array, or ``None`` when
        the family is not laminar or some group's weights differ (overlapping
        groups: only Table 2 applies). Computed once per structure.

        Returns
        -------
        numpy.ndarray of int64 or None
            Group indices, smaller groups first (read-only).
        """
        if hasattr(self, "_prox_order"):
            return self._prox_order
        order: np.ndarray | None = None
        sizes = np.diff(self.indptr)
        uniform = all(np.all(self.weights[a:b] == self.weights[a]) for a, b in zip(self.indptr[:-1], self.indptr[1:]))
        if uniform:
            # laminar iff, for every unit, the groups holding it form a chain under inclusion; it is enough to
            # check consecutive groups of each unit's chain sorted by size (inclusion is transitive)
            gid = np.repeat(np.arange(self.n_groups), sizes)
            by_unit = np.lexsort((gid, sizes[gid], self.indices))
            units, groups_of = self.indices[by_unit], gid[by_unit]
            same_unit = units[1:] == units[:-1]
            pairs = set(zip(groups_of[:-1][same_unit].tolist(), groups_of[1:][same_unit].tolist()))
            sets = {}
            laminar = True
            for small, big in pairs:
                for g in (small, big):
                    if g not in sets:
                        sets[g] = set(self.indices[self.indptr[g]:self.indptr[g + 1]].tolist())
                if not sets[small] <= sets[big]:
                    laminar = False
                    break
            if laminar:
                order = np.argsort(sizes, kind="stable").astype(np.int64)
                order.setflags(write=False)
        self._prox_order: np.ndarray | None = order
        return order

    def params(self) -> dict[str, Any]:
        """Flat description for Dataset attrs and checkpoints.

        Returns
        -------
        dict
            Kind, number of groups and members (and the torus grid).
        """
        out = {"groups": self.kind, "n_groups": self.n_groups, "group_members": int(self.indices.size)}
        if self.grid is not None:
            out["groups_grid"] = list(self.grid)
        return out

    def __eq__(self, other) -> bool:
        return (isinstance(other, GroupStructure) and self.n_units == other.n_units
                and np.array_equal(self.indptr, other.indptr) and np.array_equal(self.indices, other.indices)
                and np.array_equal(self.weights, other.weights))

    # __eq__ compares the arrays by value, so instances are unhashable (mypy: object declares a method)
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GroupStructure({self.kind}, n_units={self.n_units}, n_groups={self.n_groups})"


def _node_index(graph) -> dict:
    nodes = list(graph.nodes())
    if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in nodes) \
            and sorted(nodes) == list(range(len(nodes))):
        return {v: int(v) for v in nodes}
    try:
        ordered = sorted(nodes)
    except TypeError:
        ordered = nodes
    return {v: i for i, v in enumerate(ordered)}


def _member_weights(weights, sizes) -> np.ndarray:
    if isinstance(weights, numbers.Real):
        w = check_float("weights", weights, low=0.0, low_open=True)
        return np.full(int(sizes.sum()), w)
    if len(weights) != sizes.size:
        raise ValueError(f"weights must have one entry per group ({sizes.size}); got {len(weights)}")
    out = []
    for g, (w, s) in enumerate(zip(weights, sizes)):
        if isinstance(w, numbers.Real):
            out.append(np.full(s, check_float(f"weights[{g}]", w, low=0.0, low_open=True)))
        else:
            per_member = np.asarray(w, dtype=np.float64)
            if per_member.shape != (s,):
                raise ValueError(f"weights[{g}] must be a scalar or {s} per-member weights; got shape {per_member.shape}")
            out.append(per_member)
    return np.concatenate(out) if out else np.zeros(0)


def as_groups(groups: GroupStructure | nx.Graph | Iterable[Iterable[int]] | None, n_units: int) -> GroupStructure:
    """Coerce ``groups`` to a :class:`GroupStructure` over ``n_units`` units.

    Parameters
    ----------
    groups : GroupStructure, networkx graph, list of index sets or None
        ``None`` gives :meth:`GroupStructure.singletons` (no structure, the
        lasso); a ``GroupStructure`` must have ``n_units`` units; a networkx
        graph goes through :meth:`GroupStructure.from_graph`; a list of index
        sets through :meth:`GroupStructure.from_sets`.
    n_units : int >= 1
        Number of code units.

    Returns
    -------
    GroupStructure
        Over ``n_units`` units.

    Raises
    ------
    ValueError
        If the structure covers another number of units.
    """
    n_units = check_int("n_units", n_units, low=1)
    if groups is None:
        return GroupStructure.singletons(n_units)
    # a GroupStructure first: asking whether it is a networkx graph would import networkx (neurosim/_lazy.py)
    if not isinstance(groups, GroupStructure):
        is_graph = isinstance(groups, nx.Graph)
        groups = GroupStructure.from_graph(groups) if is_graph else GroupStructure.from_sets(groups, n_units)
    if groups.n_units != n_units:
        raise ValueError(f"groups must cover the {n_units} code units; the structure has n_units = {groups.n_units}")
    return groups
