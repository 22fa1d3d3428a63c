"""Connectivity: which synapses a projection has, as a description drawn when the network adds it.

``Projection(..., connectivity=FixedProbability(0.01))`` stores only the
synapses that exist (a sparse projection, :mod:`neurosim.synapse_index`);
``storage="dense"`` keeps the same synapses as a dense weight matrix with a
mask. A description is drawn from the network's random generator when the
projection is added (so the network's seed fixes it), and again for the
units a :class:`~neurosim.events.Birth` adds, as Brian2's
``Synapses.connect(p=...)``, NEST's connection rules (``pairwise_bernoulli``,
``fixed_indegree``, ``fixed_outdegree``) and ANNarchy's ``connect_*``
describe connectivity:

========================= ================================================ ======================================
description               synapses                                         newborn units get
========================= ================================================ ======================================
:class:`AllToAll`         every pair                                       every synapse to and from them
:class:`FixedProbability` each pair independently with probability p       each new pair with probability p
:class:`FixedInDegree`    k pre units drawn for every post unit            newborn post units k; newborn pre none
:class:`FixedOutDegree`   k post units drawn for every pre unit            newborn pre units k; newborn post none
:class:`Gaussian`         probability ``p exp(-d^2 / 2 sigma^2)`` on grids none (they have no grid position)
:class:`FromIndices`      the pairs given (or a ``scipy.sparse`` matrix's) none
========================= ================================================ ======================================

A lateral projection (``pre is post``) has no self-connections unless
``self_connections=True`` (sparse storage only); multapses (several synapses
between one pair) only with ``multapses=True`` where a description can make
them (sparse storage only). Bad values are refused when the projection is
built, before anything is drawn: ``p`` outside ``[0, 1]``, ``k`` above the
units there are to choose from, indices out of range, repeated pairs without
``multapses``, or a number of synapses whose arrays would not fit in memory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neurosim._validation import check_bool, check_float, check_int
from neurosim.synapse_index import SynapseIndex, index_dtype

__all__ = ["Connectivity", "AllToAll", "FixedProbability", "FixedInDegree", "FixedOutDegree", "Gaussian",
           "FromIndices", "as_connectivity"]

#: Rows drawn per block of random numbers (bounds the random numbers held at once).
_BLOCK_SYNAPSES = 1 << 22


class Connectivity:
    """Base class: a rule that says which synapses a projection has.

    Subclasses implement :meth:`_draw` (the synapses of ``n_post x n_pre``
    units), :meth:`expected_synapses`, and optionally :meth:`_newborn` and
    :meth:`_check`.

    Parameters
    ----------
    self_connections : bool, default=False
        Whether a lateral projection may have a synapse from a unit onto
        itself (sparse storage only).
    multapses : bool, default=False
        Whether one pair of units may be joined by several synapses (sparse
        storage only; descriptions that draw with replacement).
    """

    def __init__(self, *, self_connections: bool = False, multapses: bool = False) -> None:
        self.self_connections = check_bool("self_connections", self_connections)
        self.multapses = check_bool("multapses", multapses)

    # -- what a subclass provides ----------------------------------------------------------------
    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        """An upper estimate of the synapses drawn for ``n_post x n_pre`` units (for the memory check).

        Parameters
        ----------
        n_post, n_pre : int
            Population sizes.
        lateral : bool, default=False
            Whether pre is post (no self-connections unless allowed).

        Returns
        -------
        int
        """
        raise NotImplementedError

    def _draw(self, rng: np.random.Generator, n_post: int, n_pre: int, lateral: bool) -> SynapseIndex:
        raise NotImplementedError

    def _check(self, n_post: int, n_pre: int, lateral: bool) -> None:
        """Raise ``ValueError`` if the description cannot be drawn for these sizes."""

    def _newborn(self, rng: np.random.Generator, n_post: int, n_pre: int, new_post: int, new_pre: int,
                 lateral: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(post, pre)`` positions of the synapses of newborn units (default: none)."""
        return np.zeros(0, np.int64), np.zeros(0, np.int64)

    def params(self) -> dict[str, Any]:
        """The description's kind and parameters, as ``{"connectivity": name, "connectivity_<param>": value}``.

        Returns
        -------
        dict
            Merged into :meth:`neurosim.Projection.params` (recorded Datasets
            and checkpoint fingerprints carry them).
        """
        out: dict[str, Any] = {"connectivity": type(self).__name__}
        if self.self_connections:
            out["connectivity_self_connections"] = True
        if self.multapses:
            out["connectivity_multapses"] = True
        return out

    # -- what projections call -------------------------------------------------------------------
    def check(self, n_post: int, n_pre: int, lateral: bool, sparse: bool) -> None:
        """Refuse a description that cannot be drawn for these sizes or stored this way (before drawing).

        Parameters
        ----------
        n_post, n_pre : int
            Population sizes.
        lateral : bool
            Whether pre is post.
        sparse : bool
            Whether the projection stores synapses sparsely.

        Raises
        ------
        ValueError
            Naming the parameter and the allowed range.
        """
        if not sparse and self.self_connections and lateral:
            raise ValueError("self_connections=True needs sparse storage: a dense lateral projection keeps a zero "
                             "diagonal (storage='sparse')")
        if not sparse and self.multapses:
            raise ValueError("multapses=True needs sparse storage: a dense matrix holds one weight per pair "
                             "(storage='sparse')")
        self._check(n_post, n_pre, lateral)

    def draw(self, rng: np.random.Generator, n_post: int, n_pre: int, lateral: bool = False) -> SynapseIndex:
        """Draw the synapses of ``n_post x n_pre`` units from ``rng``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The network's generator.
        n_post, n_pre : int
            Population sizes.
        lateral : bool, default=False
            Whether pre is post (then no self-connections unless allowed).

        Returns
        -------
        SynapseIndex
        """
        self._check(n_post, n_pre, lateral)
        return self._draw(rng, n_post, n_pre, lateral)

    def newborn(self, rng: np.random.Generator, n_post: int, n_pre: int, new_post: int, new_pre: int,
                lateral: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The synapses newborn units get, drawn from ``rng``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The network's generator.
        n_post, n_pre : int
            Sizes after the birth; the last ``new_post`` post units and the
            last ``new_pre`` pre units are the newborn ones.
        new_post, new_pre : int
            Newborn units on each side (both equal for a lateral projection).
        lateral : bool, default=False
            Whether pre is post.

        Returns
        -------
        tuple of numpy.ndarray
            ``(post, pre)`` positions (int64) of the new synapses, sorted by
            post then pre.
        """
        post, pre = self._newborn(rng, n_post, n_pre, new_post, new_pre, lateral)
        post, pre = np.asarray(post, dtype=np.int64), np.asarray(pre, dtype=np.int64)
        order = np.lexsort((pre, post))
        return post[order], pre[order]

    def _skip_diagonal(self, lateral: bool) -> bool:
        return lateral and not self.self_connections

    def __repr__(self) -> str:
        args = ", ".join(f"{k.removeprefix('connectivity_')}={v!r}" for k, v in self.params().items()
                         if k != "connectivity")
        return f"{type(self).__name__}({args})"


# -- helpers shared by the random descriptions ---------------------------------------------------------
def _rows_with_counts(rng, counts: np.ndarray, n_cols: int, skip_diagonal: bool, replace: bool) -> SynapseIndex:
    """An index whose row ``i`` holds ``counts[i]`` random columns of ``n_cols`` (see :func:`sample_rows`)."""
    from neurosim.kernels.connect import sample_rows

    n_rows = counts.size
    total = int(counts.sum())
    dtype = index_dtype(total, n_rows, n_cols)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(total, dtype=dtype)
    marks = np.zeros(max(n_cols, 1), dtype=np.bool_)
    row = 0
    while row < n_rows:
        # rows whose synapses fit in one block of uniforms (at least one row)
        end = int(np.searchsorted(indptr, indptr[row] + _BLOCK_SYNAPSES, side="right")) - 1
        end = min(max(end, row + 1), n_rows)
        u = rng.random(int(indptr[end] - indptr[row]))
        sample_rows(indptr, row, n_cols, u, skip_diagonal, replace, marks, indices)
        row = end
    return SynapseIndex(indptr.astype(dtype), indices, n_cols, check=False)


def _transposed(index: SynapseIndex, n_post: int) -> SynapseIndex:
    """Rows of ``index`` are pre units (a per-pre draw): the index by post."""
    from neurosim.kernels.connect import transpose_index

    t_indptr, t_indices, _ = transpose_index(index.indptr, index.indices, n_post)
    return SynapseIndex(t_indptr, t_indices, index.n_post, check=False)


class AllToAll(Connectivity):
    """Every pre unit onto every post unit (a lateral projection: every other unit).

    With ``storage="sparse"`` this stores a dense connectivity in the sparse
    layout; the default storage of a projection without a connectivity is the
    dense matrix.

    Parameters
    ----------
    self_connections : bool, default=False
        Lateral projections: include the synapse of each unit onto itself
        (sparse storage only).

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.connectivity import AllToAll
    >>> AllToAll().draw(np.random.default_rng(0), 2, 2, lateral=True).indices.tolist()
    [1, 0]
    """

    def __init__(self, *, self_connections: bool = False) -> None:
        super().__init__(self_connections=self_connections)

    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        return n_post * n_pre - (min(n_post, n_pre) if self._skip_diagonal(lateral) else 0)

    def _draw(self, rng, n_post, n_pre, lateral):
        counts = np.full(n_post, n_pre, dtype=np.int64)
        skip = self._skip_diagonal(lateral)
        if skip:
            counts[:min(n_post, n_pre)] -= 1
        indptr = np.zeros(n_post + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        cols = np.tile(np.arange(n_pre, dtype=np.int64), n_post)
        if skip:
            rows = np.repeat(np.arange(n_post), n_pre)
            cols = cols[cols != rows]
        return SynapseIndex(indptr, cols, n_pre, check=False)

    def _newborn(self, rng, n_post, n_pre, new_post, new_pre, lateral):
        old_post = n_post - new_post
        post_new = np.arange(old_post, n_post)
        # new rows to every pre unit, then old rows to the new pre units
        p1 = np.repeat(post_new, n_pre)
        q1 = np.tile(np.arange(n_pre), new_post)
        p2 = np.repeat(np.arange(old_post), new_pre)
        q2 = np.tile(np.arange(n_pre - new_pre, n_pre), old_post)
        post, pre = np.concatenate([p1, p2]), np.concatenate([q1, q2])
        if self._skip_diagonal(lateral):
            keep = post != pre
            post, pre = post[keep], pre[keep]
        return post, pre


class FixedProbability(Connectivity):
    """Each pair of units joined independently with probability ``p`` (NEST's ``pairwise_bernoulli``).

    Drawn row by row: the number of synapses of each post unit is binomial,
    and that many distinct pre units are chosen uniformly (the same
    distribution as one Bernoulli draw per pair, in time and memory
    proportional to the synapses).

    Parameters
    ----------
    p : float in [0, 1]
        Connection probability.
    self_connections : bool, default=False
        Lateral projections: allow a unit's synapse onto itself (sparse storage only).

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.connectivity import FixedProbability
    >>> idx = FixedProbability(0.1).draw(np.random.default_rng(0), 1000, 1000)
    >>> round(idx.size / 1e6, 2)
    0.1
    """

    def __init__(self, p: float, *, self_connections: bool = False) -> None:
        super().__init__(self_connections=self_connections)
        self.p = check_float("p", p, low=0.0, high=1.0)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "connectivity_p": self.p}

    def _candidates(self, n_pre, lateral):
        return n_pre - 1 if self._skip_diagonal(lateral) else n_pre

    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        mean = self.p * n_post * self._candidates(n_pre, lateral)
        return int(math.ceil(mean + 6.0 * math.sqrt(mean + 1.0)))

    def _draw(self, rng, n_post, n_pre, lateral):
        skip = self._skip_diagonal(lateral)
        counts = rng.binomial(max(self._candidates(n_pre, lateral), 0), self.p, size=n_post).astype(np.int64)
        return _rows_with_counts(rng, counts, n_pre, skip, replace=False)

    def _newborn(self, rng, n_post, n_pre, new_post, new_pre, lateral):
        pairs = AllToAll(self_connections=self.self_connections)._newborn(rng, n_post, n_pre, new_post, new_pre,
                                                                          lateral)
        keep = rng.random(pairs[0].size) < self.p
        return pairs[0][keep], pairs[1][keep]


class _FixedDegree(Connectivity):
    """``k`` synapses for every unit of one side: what :class:`FixedInDegree` and :class:`FixedOutDegree` share."""

    def __init__(self, k: int, *, self_connections: bool = False, multapses: bool = False) -> None:
        super().__init__(self_connections=self_connections, multapses=multapses)
        self.k = check_int("k", k, low=0)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "connectivity_k": self.k}


class FixedInDegree(_FixedDegree):
    """``k`` pre units drawn for every post unit (NEST's ``fixed_indegree``).

    Parameters
    ----------
    k : int >= 0
        Synapses onto each post unit; at most the pre units there are to
        choose from (``n_pre``, or ``n_pre - 1`` for a lateral projection
        without self-connections), unless ``multapses``.
    self_connections : bool, default=False
        Lateral projections: allow a unit's synapse onto itself (sparse storage only).
    multapses : bool, default=False
        Draw with replacement: a pair may get several synapses (sparse storage only).

    Notes
    -----
    Newborn post units get ``k`` synapses each; newborn pre units get none,
    so every in-degree stays ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.connectivity import FixedInDegree
    >>> FixedInDegree(3).draw(np.random.default_rng(0), 4, 10).in_degree().tolist()
    [3, 3, 3, 3]
    """

    def _check(self, n_post, n_pre, lateral):
        skip = self._skip_diagonal(lateral)
        _check_degree(self.k, self.multapses, n_pre - 1 if skip else n_pre, "post", "pre",
                      f" ({'pre units but itself' if skip else 'pre units'})")

    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        return n_post * self.k

    def _draw(self, rng, n_post, n_pre, lateral):
        counts = np.full(n_post, self.k, dtype=np.int64)
        return _rows_with_counts(rng, counts, n_pre, self._skip_diagonal(lateral), self.multapses)

    def _newborn(self, rng, n_post, n_pre, new_post, new_pre, lateral):
        return _newborn_degree(rng, self.k, self.multapses, n_post, new_post, n_pre, self._skip_diagonal(lateral))


def _check_degree(k: int, multapses: bool, n: int, unit: str, other: str, which: str) -> None:
    """Raise unless each ``unit`` (post for an in-degree) can draw ``k`` synapses from the ``n`` ``other`` ones."""
    if multapses:
        if k > 0 and n <= 0:
            raise ValueError(f"k = {k} synapses per {unit} unit, but there is no {other} unit to draw from")
    elif k > n:
        raise ValueError(f"k must be at most the {n} {other} unit(s) each {unit} unit can draw from{which}; "
                         f"got k = {k} (multapses=True draws with replacement)")


def _newborn_degree(rng, k: int, multapses: bool, n: int, new: int, n_other: int, skip: bool):
    """``(units, others)``: ``k`` synapses for each of the ``new`` last of ``n`` units, from the ``n_other`` others.

    Each newborn unit's own index is excluded where ``skip`` (a lateral projection without self-connections).
    """
    old = n - new
    u = rng.random(new * k)
    rows = [_sample_one(u[r * k:(r + 1) * k], n_other, old + r if skip else -1, multapses) for r in range(new)]
    others = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    return np.repeat(np.arange(old, n), k), others


def _sample_one(u: np.ndarray, n: int, exclude: int, replace: bool) -> np.ndarray:
    """``u.size`` sorted columns of ``n`` (distinct unless ``replace``), never ``exclude`` (``-1``: none)."""
    from neurosim.kernels.connect import sample_rows

    k = u.size
    out = np.empty(k, dtype=np.int64)
    m = n - 1 if exclude >= 0 else n
    sample_rows(np.array([0, k], dtype=np.int64), 0, m, u, False, replace, np.zeros(max(m, 1), np.bool_), out)
    if exclude >= 0:
        out[out >= exclude] += 1
    return np.sort(out)


class FixedOutDegree(_FixedDegree):
    """``k`` post units drawn for every pre unit (NEST's ``fixed_outdegree``).

    Parameters
    ----------
    k : int >= 0
        Synapses from each pre unit; at most the post units there are to
        choose from, unless ``multapses``.
    self_connections : bool, default=False
        Lateral projections: allow a unit's synapse onto itself (sparse storage only).
    multapses : bool, default=False
        Draw with replacement (sparse storage only).

    Notes
    -----
    Newborn pre units get ``k`` synapses each; newborn post units get none,
    so every out-degree stays ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.connectivity import FixedOutDegree
    >>> FixedOutDegree(2).draw(np.random.default_rng(0), 10, 4).out_degree().tolist()
    [2, 2, 2, 2]
    """

    def _check(self, n_post, n_pre, lateral):
        _check_degree(self.k, self.multapses, n_post - 1 if self._skip_diagonal(lateral) else n_post, "pre", "post", "")

    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        return n_pre * self.k

    def _draw(self, rng, n_post, n_pre, lateral):
        counts = np.full(n_pre, self.k, dtype=np.int64)
        by_pre = _rows_with_counts(rng, counts, n_post, self._skip_diagonal(lateral), self.multapses)
        return _transposed(by_pre, n_post)

    def _newborn(self, rng, n_post, n_pre, new_post, new_pre, lateral):
        pre, post = _newborn_degree(rng, self.k, self.multapses, n_pre, new_pre, n_post, self._skip_diagonal(lateral))
        return post, pre


class Gaussian(Connectivity):
    """Local receptive fields: units on 2-D grids, joined with probability ``p exp(-d^2 / (2 sigma^2))``.

    Pre unit ``j`` sits at row ``j // cols``, column ``j % cols`` of
    ``pre_grid``; post unit ``i`` at the point of the pre grid that the centre
    of its cell in ``post_grid`` maps to (so a 10 x 10 post grid over a
    100 x 100 pre grid tiles it with receptive fields 10 steps apart). ``d``
    is measured in pre grid steps; candidates beyond ``cutoff * sigma`` steps
    along either axis are never connected (``exp(-8) = 3e-4`` of the peak at
    the default 4 sigma), which keeps drawing proportional to the synapses.

    Parameters
    ----------
    sigma : float > 0
        Width, in pre grid steps.
    pre_grid, post_grid : tuple of int
        ``(rows, cols)`` of each population's grid; ``rows * cols`` must
        equal the population's size when the projection is built. For a
        lateral projection give the same grid twice.
    p : float in (0, 1], default=1.0
        Probability at distance 0.
    periodic : bool, default=False
        The pre grid wraps around (a torus).
    cutoff : float > 0, default=4.0
        Candidates lie within ``ceil(cutoff * sigma)`` steps per axis.
    self_connections : bool, default=False
        Lateral projections: allow a unit's synapse onto itself (sparse storage only).

    Notes
    -----
    Newborn units have no grid position: they get no synapses from the
    description (give them synapses with :class:`~neurosim.events.Link`).

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.connectivity import Gaussian
    >>> c = Gaussian(1.0, pre_grid=(10, 10), post_grid=(10, 10), cutoff=1.0)
    >>> c.draw(np.random.default_rng(0), 100, 100).in_degree().max() <= 9
    True
    """

    def __init__(self, sigma: float, pre_grid: tuple[int, int], post_grid: tuple[int, int], *, p: float = 1.0,
                 periodic: bool = False, cutoff: float = 4.0, self_connections: bool = False) -> None:
        super().__init__(self_connections=self_connections)
        self.sigma = check_float("sigma", sigma, low=0.0, low_open=True)
        self.p = check_float("p", p, low=0.0, high=1.0, low_open=True)
        self.periodic = check_bool("periodic", periodic)
        self.cutoff = check_float("cutoff", cutoff, low=0.0, low_open=True)
        self.pre_grid = _grid("pre_grid", pre_grid)
        self.post_grid = _grid("post_grid", post_grid)
        self.radius = int(math.ceil(self.cutoff * self.sigma))
        if (2 * self.radius + 1) ** 2 > 1 << 24:
            raise ValueError(f"cutoff * sigma = {self.cutoff * self.sigma:g} grid steps gives windows of "
                             f"{(2 * self.radius + 1) ** 2} candidates per unit; at most 2^24 are allowed "
                             "(lower sigma or cutoff)")

    def params(self) -> dict[str, Any]:
        return {**super().params(), "connectivity_sigma": self.sigma, "connectivity_p": self.p,
                "connectivity_pre_grid": list(self.pre_grid), "connectivity_post_grid": list(self.post_grid),
                "connectivity_periodic": self.periodic, "connectivity_cutoff": self.cutoff}

    def _check(self, n_post, n_pre, lateral):
        for label, grid, n in (("pre_grid", self.pre_grid, n_pre), ("post_grid", self.post_grid, n_post)):
            if grid[0] * grid[1] != n:
                raise ValueError(f"{label} = {grid} holds {grid[0] * grid[1]} units; the population has {n}")
        if lateral and self.pre_grid != self.post_grid:
            raise ValueError(f"a lateral projection needs one grid: pre_grid = {self.pre_grid}, post_grid = "
                             f"{self.post_grid}")

    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        # per post unit: the sum of p exp(-d^2 / 2 sigma^2) over its window (grid points at integer offsets)
        r = np.arange(-self.radius, self.radius + 1)
        per_unit = float(np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * self.sigma ** 2)).sum()) * self.p
        mean = n_post * min(per_unit + 1.0, float(n_pre))
        return int(math.ceil(mean + 6.0 * math.sqrt(mean + 1.0)))

    def _draw(self, rng, n_post, n_pre, lateral):
        from neurosim.kernels.connect import gaussian_rows

        width = (2 * self.radius + 1) ** 2
        rows_per_block = max(1, _BLOCK_SYNAPSES // width)
        counts = np.zeros(n_post, dtype=np.int64)
        parts = []
        for row0 in range(0, n_post, rows_per_block):
            n = min(rows_per_block, n_post - row0)
            u = rng.random(n * width)
            out = np.empty(n * width, dtype=np.int64)
            used = gaussian_rows(row0, n, self.post_grid[0], self.post_grid[1], self.pre_grid[0], self.pre_grid[1],
                                 self.sigma, self.p, self.radius, self.periodic, self._skip_diagonal(lateral), u,
                                 counts[row0:row0 + n], out, 0)
            parts.append(out[:used].copy())
        indptr = np.zeros(n_post + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return SynapseIndex(indptr, indices, n_pre, check=False)


def _grid(name: str, grid) -> tuple[int, int]:
    try:
        rows, cols = grid
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be (rows, cols); got {grid!r}") from None
    return check_int(f"{name}[0]", rows, low=1), check_int(f"{name}[1]", cols, low=1)


class FromIndices(Connectivity):
    """Exactly the synapses given, as ``(post, pre)`` positions or the stored entries of a ``scipy.sparse`` matrix.

    Parameters
    ----------
    post, pre : array_like of int, optional
        Positions (0 .. size - 1) of each synapse's post and pre unit.
    matrix : scipy.sparse matrix or array, optional
        Instead of ``post`` and ``pre``: a ``(n_post, n_pre)`` matrix whose
        stored entries (``scipy.sparse``) or nonzero entries (a dense array)
        are the synapses.
    self_connections : bool, default=False
        Lateral projections: allow pairs ``(i, i)`` (sparse storage only).
    multapses : bool, default=False
        Allow a pair more than once (sparse storage only).

    Raises
    ------
    ValueError
        Indices out of range, of different lengths, a repeated pair without
        ``multapses`` or a self-connection of a lateral projection without
        ``self_connections`` (when the projection is built).

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.connectivity import FromIndices
    >>> FromIndices(post=[0, 0, 1], pre=[2, 0, 1]).draw(np.random.default_rng(0), 2, 3).indices.tolist()
    [0, 2, 1]
    """

    def __init__(self, post=None, pre=None, *, matrix=None, self_connections: bool = False,
                 multapses: bool = False) -> None:
        super().__init__(self_connections=self_connections, multapses=multapses)
        if matrix is not None:
            if post is not None or pre is not None:
                raise ValueError("give either post and pre, or matrix, not both")
            post, pre, shape = _matrix_pairs(matrix)
            self.shape: tuple[int, int] | None = shape
        else:
            if post is None or pre is None:
                raise ValueError("give post and pre (positions of each synapse's units), or matrix")
            self.shape = None
        self.post = _positions("post", post)
        self.pre = _positions("pre", pre)
        if self.post.size != self.pre.size:
            raise ValueError(f"post and pre must name the same number of synapses; got {self.post.size} and "
                             f"{self.pre.size}")

    def params(self) -> dict[str, Any]:
        import hashlib

        h = hashlib.sha256(self.post.tobytes() + b"|" + self.pre.tobytes()).hexdigest()[:16]
        return {**super().params(), "connectivity_synapses": int(self.post.size), "connectivity_sha256": h}

    def _check(self, n_post, n_pre, lateral):
        if self.shape is not None and self.shape != (n_post, n_pre):
            raise ValueError(f"matrix has shape {self.shape}; the projection is (post, pre) = {(n_post, n_pre)}")
        for label, arr, n in (("post", self.post, n_post), ("pre", self.pre, n_pre)):
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                bad = arr[(arr < 0) | (arr >= n)][:5].tolist()
                raise ValueError(f"{label} indices must lie in [0, {n}) (positions in the {label} population); got "
                                 f"{bad}")
        if self._skip_diagonal(lateral) and np.any(self.post == self.pre):
            k = int(np.argmax(self.post == self.pre))
            raise ValueError(f"synapse {k} joins unit {int(self.post[k])} to itself in a lateral projection; "
                             "self_connections=True allows it (sparse storage)")
        if not self.multapses and self.post.size > 1:
            keys = self.post * max(n_pre, 1) + self.pre
            uniq, counts = np.unique(keys, return_counts=True)
            if np.any(counts > 1):
                dup = int(uniq[np.argmax(counts > 1)])
                raise ValueError(f"the pair (post {dup // max(n_pre, 1)}, pre {dup % max(n_pre, 1)}) is given "
                                 f"{int(counts.max())} times; multapses=True allows repeated pairs (sparse storage)")

    def expected_synapses(self, n_post: int, n_pre: int, lateral: bool = False) -> int:
        return int(self.post.size)

    def _draw(self, rng, n_post, n_pre, lateral):
        return SynapseIndex.from_pairs(self.post, self.pre, n_post, n_pre)[0]


def _positions(name: str, values) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of positions; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers (unit positions); got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _matrix_pairs(matrix) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    import scipy.sparse as sp

    if sp.issparse(matrix):
        coo = sp.coo_array(matrix)
        return coo.row.astype(np.int64), coo.col.astype(np.int64), (int(coo.shape[0]), int(coo.shape[1]))
    arr = np.asarray(matrix)
    if arr.ndim != 2:
        raise ValueError(f"matrix must be 2-D (post x pre); got shape {arr.shape}")
    r, c = np.nonzero(arr)
    return r.astype(np.int64), c.astype(np.int64), (int(arr.shape[0]), int(arr.shape[1]))


def as_connectivity(value) -> Connectivity | None:
    """A :class:`Connectivity` from what ``Projection(connectivity=...)`` accepts.

    Parameters
    ----------
    value : Connectivity, scipy.sparse matrix or None
        A description, or a matrix whose stored entries are the synapses.

    Returns
    -------
    Connectivity or None

    Raises
    ------
    TypeError
        For anything else.
    """
    if value is None or isinstance(value, Connectivity):
        return value
    import scipy.sparse as sp

    if sp.issparse(value):
        return FromIndices(matrix=value)
    raise TypeError(f"connectivity must be a neurosim.connectivity description (FixedProbability(p), FixedInDegree(k), "
                    f"...) or a scipy.sparse matrix; got {type(value).__name__}")
