"""Which synapses of a sparse projection exist: a compressed-row index by post unit.

A sparse :class:`~neurosim.synapses.Projection` stores one value per
*existing* synapse, as Brian2's ``Synapses`` and NEST's connections do:
``weights[s]`` (and every per-synapse array) belongs to synapse ``s``, and a
:class:`SynapseIndex` says which pair of units that is. Synapses are numbered
row by row (compressed sparse rows, CSR, by post unit): those onto post unit
``i`` are ``indptr[i] <= s < indptr[i + 1]``, their pre units ``indices[s]``
in increasing order (equal pre units next to each other when multapses are
allowed). This is the layout the drive ``sum_j W_ij x_j`` and every rule
that updates a post unit's row read in order, and what
``scipy.sparse.csr_matrix((weights, indices, indptr))`` takes.

Pre-side traversal (a column reduction such as ``W^T y``, or finding the
synapse ``j -> i`` from ``i -> j``) uses the *transposed* index,
:meth:`SynapseIndex.by_pre`: for each pre unit the synapse numbers ordered
by post unit. It is computed when first asked for and kept with the index
(an index never changes: a structural change makes a new one).

Indices are ``int32`` while every count fits (fewer than 2**31 synapses and
units), ``int64`` beyond; kernels compile once per index type.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["SynapseIndex", "Splice", "index_dtype"]

#: Largest count an ``int32`` index holds.
_INT32_MAX = np.iinfo(np.int32).max
#: Up to this many pairs or edits, a search per row and copies of the runs between edits; beyond, vectorised
#: passes over every synapse (the same results)
_FEW = 64


def index_dtype(n_synapses: int, n_post: int, n_pre: int) -> np.dtype:
    """``int32`` when every synapse number and unit index fits in it, else ``int64``.

    Parameters
    ----------
    n_synapses, n_post, n_pre : int
        The counts the index must hold (``indptr`` holds up to ``n_synapses``).

    Returns
    -------
    numpy.dtype
    """
    return np.dtype(np.int32 if max(n_synapses, n_post, n_pre) < _INT32_MAX else np.int64)


class SynapseIndex:
    """The synapses of a sparse projection as compressed rows by post unit (immutable).

    Parameters
    ----------
    indptr : array_like of int, shape (n_post + 1,)
        Row pointers: synapses onto post unit ``i`` are ``indptr[i]:indptr[i + 1]``.
    indices : array_like of int, shape (n_synapses,)
        Pre unit (position in the pre population) of each synapse, sorted
        within each row.
    n_pre : int
        Units of the pre population.
    check : bool, default=True
        Check the arrays (off where the caller built them sorted and in range).

    Raises
    ------
    ValueError
        If the arrays do not describe sorted rows of pre units in ``[0, n_pre)``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.synapse_index import SynapseIndex
    >>> idx = SynapseIndex.from_pairs([1, 0, 1], [2, 1, 0], n_post=2, n_pre=3)[0]
    >>> idx.indptr.tolist(), idx.indices.tolist()
    ([0, 1, 3], [1, 0, 2])
    >>> [a.tolist() for a in idx.pairs()]
    [[0, 1, 1], [1, 0, 2]]
    """

    __slots__ = ("indptr", "indices", "n_pre", "_by_pre")

    def __init__(self, indptr, indices, n_pre: int, *, check: bool = True) -> None:
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        n_pre = int(n_pre)
        dtype = index_dtype(indices.size, max(indptr.size - 1, 0), n_pre)
        self.indptr = np.ascontiguousarray(indptr, dtype=dtype)
        self.indices = np.ascontiguousarray(indices, dtype=dtype)
        self.n_pre = n_pre
        self._by_pre: tuple | None = None
        if check:
            self._check()
        self.indptr.flags.writeable = False
        self.indices.flags.writeable = False

    def _check(self) -> None:
        p, j = self.indptr, self.indices
        if p.ndim != 1 or p.size < 1 or p[0] != 0 or p[-1] != j.size or np.any(np.diff(p) < 0):
            raise ValueError(f"indptr must rise from 0 to the number of synapses ({j.size}); got {p[:5].tolist()}...")
        if j.size and (j.min() < 0 or j.max() >= self.n_pre):
            raise ValueError(f"pre indices must lie in [0, {self.n_pre}); got values in [{j.min()}, {j.max()}]")
        if j.size > 1:
            step = np.diff(j.astype(np.int64))
            starts = np.zeros(j.size - 1, dtype=bool)
            starts[p[1:-1][(p[1:-1] > 0) & (p[1:-1] < j.size)] - 1] = True  # a new row may start lower
            if np.any((step < 0) & ~starts):
                raise ValueError("pre indices must be sorted within each row")

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def n_post(self) -> int:
        """Units of the post population (rows)."""
        return self.indptr.size - 1

    @property
    def size(self) -> int:
        """Number of synapses."""
        return self.indices.size

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_post, n_pre)``, the shape of the dense matrix the synapses sit in."""
        return (self.n_post, self.n_pre)

    def nbytes(self) -> int:
        """Bytes held by the index arrays (and the transposed index, once computed).

        Returns
        -------
        int
        """
        extra = sum(a.nbytes for a in self._by_pre) if self._by_pre is not None else 0
        return self.indptr.nbytes + self.indices.nbytes + extra

    # -- views ----------------------------------------------------------------------------------
    def post(self) -> np.ndarray:
        """Post unit (position) of every synapse, shape ``(n_synapses,)``.

        Returns
        -------
        numpy.ndarray
            A new array of the index's dtype.
        """
        return np.repeat(np.arange(self.n_post, dtype=self.indices.dtype), np.diff(self.indptr))

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(post, pre)`` positions of every synapse, in synapse order.

        Returns
        -------
        tuple of numpy.ndarray
        """
        return self.post(), self.indices.copy()

    def in_degree(self) -> np.ndarray:
        """Synapses onto each post unit, shape ``(n_post,)``.

        Returns
        -------
        numpy.ndarray of int64
        """
        return np.diff(self.indptr).astype(np.int64)

    def out_degree(self) -> np.ndarray:
        """Synapses from each pre unit, shape ``(n_pre,)``.

        Returns
        -------
        numpy.ndarray of int64
        """
        return np.bincount(self.indices, minlength=self.n_pre).astype(np.int64)

    def by_pre(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The transposed index: ``(pre_indptr, synapses, post)``, computed once.

        Synapses from pre unit ``j`` are ``synapses[pre_indptr[j]:pre_indptr[j + 1]]``,
        in increasing post unit ``post[...]`` (the same order a row-by-row
        pass visits them, so a column sum gathered this way equals one
        scattered row by row, bit for bit).

        Returns
        -------
        tuple of numpy.ndarray
            ``pre_indptr`` ``(n_pre + 1,)``, ``synapses`` ``(n_synapses,)``
            and ``post`` ``(n_synapses,)``, read-only, of the index's dtype.
        """
        if self._by_pre is None:
            dtype = self.indices.dtype
            order = np.argsort(self.indices, kind="stable").astype(dtype)
            pre_indptr = np.zeros(self.n_pre + 1, dtype=dtype)
            np.cumsum(np.bincount(self.indices, minlength=self.n_pre), out=pre_indptr[1:])
            post = self.post()[order]
            for a in (order, pre_indptr, post):
                a.flags.writeable = False
            self._by_pre = (pre_indptr, order, post)
        return self._by_pre

    def keys(self) -> np.ndarray:
        """``post * n_pre + pre`` of every synapse (int64), increasing in synapse order.

        Returns
        -------
        numpy.ndarray of int64
        """
        return self.post().astype(np.int64) * self.n_pre + self.indices

    def find(self, post, pre) -> np.ndarray:
        """Synapse number of each ``(post, pre)`` pair, ``-1`` where there is none (the first of multapses).

        Parameters
        ----------
        post, pre : array_like of int
            Positions in the post and pre populations.

        Returns
        -------
        numpy.ndarray of int64
        """
        post = np.asarray(post, dtype=np.int64)
        pre = np.asarray(pre, dtype=np.int64)
        s = self.positions(post.ravel(), pre.ravel(), side="left").reshape(post.shape)
        found = s < self.indptr[post + 1]
        found[found] = self.indices[s[found]] == pre[found]
        return np.where(found, s, -1)

    def positions(self, post, pre, side: Literal["left", "right"] = "left") -> np.ndarray:
        """Where each ``(post, pre)`` pair sits or would be inserted in synapse order (a sorted search per row).

        Parameters
        ----------
        post, pre : array_like of int
            Positions in the post and pre populations (``post < n_post``).
        side : {"left", "right"}, default="left"
            Before (``"left"``) or after (``"right"``) the synapses of the
            same pair, as :func:`numpy.searchsorted`.

        Returns
        -------
        numpy.ndarray of int64
            Synapse numbers in ``[indptr[post], indptr[post + 1]]``.
        """
        post = np.asarray(post, dtype=np.int64).ravel()
        pre = np.asarray(pre, dtype=np.int64).ravel()
        if post.size > _FEW:
            # many pairs: one search over every synapse's (post, pre) key beats a search per row
            return np.searchsorted(self.keys(), post * self.n_pre + pre, side=side).astype(np.int64)
        out = np.empty(post.size, dtype=np.int64)
        for k, (i, j) in enumerate(zip(post.tolist(), pre.tolist())):
            lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
            out[k] = lo + int(np.searchsorted(self.indices[lo:hi], j, side=side))
        return out

    # -- new indices (structural change) ---------------------------------------------------------
    @classmethod
    def from_pairs(cls, post, pre, n_post: int, n_pre: int) -> tuple[SynapseIndex, np.ndarray]:
        """The index of the given synapses, and the order that sorts them into it.

        Parameters
        ----------
        post, pre : array_like of int
            Positions of each synapse's units (any order; repeated pairs are
            multapses).
        n_post, n_pre : int
            Population sizes.

        Returns
        -------
        index : SynapseIndex
        order : numpy.ndarray of int64
            ``order[s]`` is the given synapse that became synapse ``s``
            (values given per synapse are ``values[order]``).
        """
        post = np.asarray(post, dtype=np.int64).ravel()
        pre = np.asarray(pre, dtype=np.int64).ravel()
        if post.size != pre.size:
            raise ValueError(f"post and pre must name the same number of synapses; got {post.size} and {pre.size}")
        if post.size and (post.min() < 0 or post.max() >= n_post):
            raise ValueError(f"post indices must lie in [0, {n_post}); got values in [{post.min()}, {post.max()}]")
        if pre.size and (pre.min() < 0 or pre.max() >= n_pre):
            raise ValueError(f"pre indices must lie in [0, {n_pre}); got values in [{pre.min()}, {pre.max()}]")
        order = np.lexsort((pre, post))
        indptr = np.zeros(n_post + 1, dtype=np.int64)
        np.cumsum(np.bincount(post, minlength=n_post), out=indptr[1:])
        return cls(indptr, pre[order], n_pre, check=False), order

    def has_multapses(self) -> bool:
        """Whether some pair of units is joined by more than one synapse.

        Returns
        -------
        bool
        """
        if self.size < 2:
            return False
        same = self.indices[1:] == self.indices[:-1]
        row_start = np.zeros(self.size, dtype=bool)
        row_start[self.indptr[:-1][self.indptr[:-1] < self.size]] = True
        return bool(np.any(same & ~row_start[1:]))

    def has_self_synapses(self) -> bool:
        """Whether some synapse joins a unit to itself (meaningful for a lateral projection).

        Returns
        -------
        bool
        """
        return bool(np.any(self.post() == self.indices))

    def removed(self, post_index=None, pre_index=None) -> tuple[SynapseIndex, np.ndarray]:
        """The index after units die: their rows (post) and columns (pre) removed.

        Parameters
        ----------
        post_index, pre_index : array_like of int, optional
            Positions of the dying post and pre units.

        Returns
        -------
        index : SynapseIndex
        keep : numpy.ndarray of bool
            Per old synapse: whether it survives (values are ``values[keep]``).
        """
        n_post, n_pre = self.shape
        keep = np.ones(self.size, dtype=bool)
        post_alive = np.ones(n_post, dtype=bool)
        pre_alive = np.ones(n_pre, dtype=bool)
        if post_index is not None and len(post_index):
            post_alive[np.asarray(post_index, dtype=np.int64)] = False
            keep &= np.repeat(post_alive, np.diff(self.indptr))
        if pre_index is not None and len(pre_index):
            pre_alive[np.asarray(pre_index, dtype=np.int64)] = False
            keep &= pre_alive[self.indices]
        new_pre = np.cumsum(pre_alive) - 1  # old pre position -> new
        counts = self._kept_per_row(keep)[post_alive]
        indptr = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return SynapseIndex(indptr, new_pre[self.indices[keep]], int(pre_alive.sum()), check=False), keep

    def _kept_per_row(self, keep: np.ndarray) -> np.ndarray:
        kept = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum(keep, out=kept[1:])
        return kept[self.indptr[1:]] - kept[self.indptr[:-1]]

    def grown(self, n_post: int, n_pre: int, post=(), pre=()) -> tuple[SynapseIndex, np.ndarray, np.ndarray]:
        """The index with the populations grown to ``n_post`` x ``n_pre`` and the synapses ``(post, pre)`` added.

        Newborn units are appended (the old positions keep their numbers).
        An added pair equal to an existing one (a multapse) comes after it.

        Parameters
        ----------
        n_post, n_pre : int
            New sizes (at least the old ones).
        post, pre : array_like of int
            The synapses to add (positions in the new sizes).

        Returns
        -------
        index : SynapseIndex
        old : numpy.ndarray of int64
            New synapse number of every old synapse.
        new : numpy.ndarray of int64
            New synapse number of every added synapse, in the order given.
        """
        rows = np.concatenate([self.indptr, np.full(n_post - self.n_post, self.size)])
        wider = SynapseIndex(rows, self.indices, n_pre, check=False)
        if len(post) == 0 and len(pre) == 0:
            return wider, np.arange(self.size, dtype=np.int64), np.zeros(0, dtype=np.int64)
        index, edit = wider.edited(post=post, pre=pre)
        at = edit.at
        old = np.arange(self.size, dtype=np.int64)
        old += np.searchsorted(at, old, side="right")
        new = np.empty(at.size, dtype=np.int64)
        new[edit.order] = at + np.arange(at.size)
        return index, old, new

    def without(self, synapses) -> tuple[SynapseIndex, np.ndarray]:
        """The index with the given synapses removed.

        Parameters
        ----------
        synapses : array_like of int
            Synapse numbers to remove.

        Returns
        -------
        index : SynapseIndex
        keep : numpy.ndarray of bool
            Per old synapse: whether it stays.
        """
        index, edit = self.edited(remove=synapses)
        keep = np.ones(self.size, dtype=bool)
        keep[edit.remove] = False
        return index, keep

    def edited(self, remove=(), post=(), pre=()) -> tuple[SynapseIndex, Splice]:
        """The index with the synapses ``remove`` taken out and the pairs ``(post, pre)`` added; sizes unchanged.

        Costs one copy of the index (no sort of the synapses): a network
        that links and unlinks a few synapses per step pays ``O(synapses)``
        memory traffic, not a rebuild. Values per synapse follow with the
        returned :class:`Splice`.

        Parameters
        ----------
        remove : array_like of int, optional
            Synapse numbers to remove (repeats are removed once).
        post, pre : array_like of int, optional
            Pairs to add, in any order; a pair equal to an existing synapse
            (a multapse) comes after it, equal added pairs in the order given.

        Returns
        -------
        index : SynapseIndex
        splice : Splice
            ``splice(values, added_values)`` gives the per-synapse values of the new index.

        Examples
        --------
        >>> import numpy as np
        >>> idx = SynapseIndex.from_pairs([0, 1, 1], [1, 0, 2], n_post=2, n_pre=3)[0]
        >>> new, splice = idx.edited(remove=[1], post=[0], pre=[2])
        >>> [a.tolist() for a in new.pairs()]
        [[0, 0, 1], [1, 2, 2]]
        >>> splice(np.array([10.0, 20.0, 30.0]), 99.0).tolist()
        [10.0, 99.0, 30.0]
        """
        remove = np.unique(np.asarray(remove, dtype=np.int64).ravel())
        post = np.asarray(post, dtype=np.int64).ravel()
        pre = np.asarray(pre, dtype=np.int64).ravel()
        if post.size != pre.size:
            raise ValueError(f"post and pre must name the same number of synapses; got {post.size} and {pre.size}")
        if remove.size and (remove[0] < 0 or remove[-1] >= self.size):
            raise ValueError(f"synapse numbers must lie in [0, {self.size}); got values in [{remove[0]}, {remove[-1]}]")
        for label, arr, n in (("post", post, self.n_post), ("pre", pre, self.n_pre)):
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                raise ValueError(f"{label} indices must lie in [0, {n}); got values in [{arr.min()}, {arr.max()}]")
        order = np.lexsort((pre, post))  # the added pairs only
        at = self.positions(post[order], pre[order], side="right")
        rows_removed = np.searchsorted(self.indptr, remove, side="right") - 1
        if remove.size + post.size <= _FEW:
            # a few edits: shift the row pointers after each edited row (no pass building counts per row)
            indptr = self.indptr.astype(np.int64)
            for r in rows_removed.tolist():
                indptr[r + 1:] -= 1
            for r in post.tolist():
                indptr[r + 1:] += 1
        else:
            counts = np.diff(self.indptr).astype(np.int64)
            counts -= np.bincount(rows_removed, minlength=self.n_post)
            counts += np.bincount(post, minlength=self.n_post)
            indptr = np.zeros(self.n_post + 1, dtype=np.int64)
            np.cumsum(counts, out=indptr[1:])
        splice = Splice(self.size, remove, at, order)
        return SynapseIndex(indptr, splice(self.indices, pre), self.n_pre, check=False), splice

    def __eq__(self, other) -> bool:
        return (isinstance(other, SynapseIndex) and self.n_pre == other.n_pre
                and np.array_equal(self.indptr, other.indptr) and np.array_equal(self.indices, other.indices))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking arrays: compared by value, not hashed

    def __repr__(self) -> str:
        return f"SynapseIndex({self.size} synapses, {self.n_post} post x {self.n_pre} pre, {self.indices.dtype})"


class Splice:
    """Per-synapse values carried through :meth:`SynapseIndex.edited`: synapses removed, others inserted.

    Parameters
    ----------
    n_old : int
        Synapses before the edit.
    remove : numpy.ndarray of int64
        Sorted, distinct synapse numbers removed.
    at : numpy.ndarray of int64
        Sorted insertion points (old synapse numbers, ``0 .. n_old``) of the
        added synapses in their final order: each goes before the old
        synapse ``at[k]``.
    order : numpy.ndarray of int64
        ``order[k]``: which of the added synapses, as given, is the ``k``-th
        in final order.
    """

    __slots__ = ("n_old", "remove", "at", "order")

    def __init__(self, n_old: int, remove: np.ndarray, at: np.ndarray, order: np.ndarray) -> None:
        self.n_old, self.remove, self.at, self.order = int(n_old), remove, at, order

    def __call__(self, values: np.ndarray, added) -> np.ndarray:
        """The values of the edited synapses: ``values`` without the removed, ``added`` inserted (a new array).

        Parameters
        ----------
        values : numpy.ndarray, shape (n_old,)
            One value per old synapse.
        added : scalar or array_like, shape (n_added,)
            The added synapses' values, in the order they were given to
            :meth:`SynapseIndex.edited` (a scalar: the same for all).

        Returns
        -------
        numpy.ndarray
            Of ``values``' dtype.
        """
        k = self.at.size
        added = np.asarray(added, dtype=values.dtype)
        added = np.broadcast_to(added, (k,)) if added.ndim == 0 else added[self.order]
        if self.remove.size + k > _FEW:
            keep = np.ones(self.n_old, dtype=bool)
            keep[self.remove] = False
            kept = values[keep]
            return np.insert(kept, self.at - np.searchsorted(self.remove, self.at), added)
        # a few edits: copy the runs of old values between them (memcpy speed, no pass over a mask)
        cuts = sorted([(int(p), 0, n) for n, p in enumerate(self.at.tolist())]
                      + [(int(p), 1, 0) for p in self.remove.tolist()])
        pieces, start = [], 0
        for p, removed, n in cuts:  # at equal points an insertion comes before the old synapse it precedes
            pieces.append(values[start:p])
            if removed:
                start = p + 1
            else:
                pieces.append(added[n:n + 1])
                start = p
        pieces.append(values[start:])
        return np.concatenate(pieces)
