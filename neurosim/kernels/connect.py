"""Numba kernels that draw random connectivity (:mod:`neurosim.connectivity`).

Pure functions on arrays. The random numbers come from the network's NumPy
generator, drawn by the caller in blocks of rows (one uniform per synapse
or per candidate), so a connectivity is a function of the network's seed
whatever the block size, and drawing 10^8 synapses never holds more than
one block of random numbers beside the index itself.
"""

import numpy as np
from numba import njit

__all__ = ["sample_rows", "transpose_index", "gaussian_rows"]


@njit(cache=True, nogil=True)
def sample_rows(indptr, row0, n_cols, u, skip_diagonal, replace, marks, out):
    """Fill rows ``row0 ..`` of a compressed-row index with random columns, each row sorted.

    Row ``i`` gets ``indptr[i + 1] - indptr[i]`` columns out of ``n_cols``
    (without column ``i`` itself when ``skip_diagonal``): distinct ones by
    Floyd's algorithm (one uniform per column drawn, uniformly distributed
    subsets), or independent draws when ``replace`` (multapses).

    Parameters
    ----------
    indptr : (n_rows + 1,) int array
        Row pointers of the whole index (absolute synapse numbers).
    row0 : int
        First row of this block; the block's synapses are
        ``indptr[row0] .. indptr[row0] + u.size - 1``.
    n_cols : int
        Columns to choose from.
    u : (block synapses,) float array
        Uniforms in ``[0, 1)``, one per synapse of the block.
    skip_diagonal : bool
        Never choose column ``i`` for row ``i`` (a lateral projection
        without self-connections): choose among ``n_cols - 1`` and skip it.
    replace : bool
        Draw with replacement.
    marks : (n_cols,) bool array, all False
        Scratch for Floyd's membership test; left all False.
    out : (n_synapses,) int array
        The index's ``indices``, written for the block's rows.
    """
    base = indptr[row0]
    pos = 0
    i = row0
    while pos < u.shape[0]:
        lo = indptr[i] - base
        hi = indptr[i + 1] - base
        k = hi - lo
        n = n_cols - 1 if skip_diagonal else n_cols
        if replace:
            for m in range(k):
                out[base + lo + m] = min(int(u[lo + m] * n), n - 1)
        else:
            # Floyd: for j = n - k .. n - 1 take t uniform in [0, j]; if t was taken, take j instead
            m = 0
            for j in range(n - k, n):
                t = min(int(u[lo + m] * (j + 1)), j)
                if marks[t]:
                    t = j
                marks[t] = True
                out[base + lo + m] = t
                m += 1
            for m in range(k):
                marks[out[base + lo + m]] = False
        if skip_diagonal:
            for m in range(k):
                if out[base + lo + m] >= i:
                    out[base + lo + m] += 1
        out[base + lo:base + hi] = np.sort(out[base + lo:base + hi])
        pos = hi
        i += 1


@njit(cache=True, nogil=True)
def transpose_index(indptr, indices, n_cols):
    """The transposed compressed-row index by counting sort: rows of the result are the columns.

    Stable: within each new row the old row numbers increase.

    Parameters
    ----------
    indptr : (n_rows + 1,) int array
    indices : (n,) int array
    n_cols : int

    Returns
    -------
    t_indptr : (n_cols + 1,) int64 array
    t_indices : (n,) int64 array
        The old row of each entry.
    order : (n,) int64 array
        The old entry number of each new entry.
    """
    n_rows = indptr.shape[0] - 1
    n = indices.shape[0]
    t_indptr = np.zeros(n_cols + 1, dtype=np.int64)
    for s in range(n):
        t_indptr[indices[s] + 1] += 1
    for j in range(n_cols):
        t_indptr[j + 1] += t_indptr[j]
    fill = t_indptr[:-1].copy()
    t_indices = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    for i in range(n_rows):
        for s in range(indptr[i], indptr[i + 1]):
            j = indices[s]
            t_indices[fill[j]] = i
            order[fill[j]] = s
            fill[j] += 1
    return t_indptr, t_indices, order


@njit(cache=True, nogil=True)
def gaussian_rows(row0, n_rows, post_rows, post_cols, pre_rows, pre_cols, sigma, p_max, radius, periodic,
                  skip_diagonal, u, counts, out, n_out):
    """Bernoulli synapses with probability ``p_max exp(-d^2 / (2 sigma^2))`` for a block of post units on a grid.

    Post unit ``i`` (row ``i // post_cols``, column ``i % post_cols`` of its
    grid) sits at the point of the pre grid its grid cell's centre maps to;
    every pre unit within ``radius`` grid steps in each direction is a
    candidate, drawn with one uniform each, in a fixed order (so the
    result depends only on the uniforms, not on where a block starts).

    Parameters
    ----------
    row0, n_rows : int
        The block: post units ``row0 .. row0 + n_rows - 1``.
    post_rows, post_cols, pre_rows, pre_cols : int
        Grid shapes.
    sigma, p_max : float
        Width in pre grid steps, and the probability at distance 0.
    radius : int
        Candidates lie within this many pre grid steps per axis.
    periodic : bool
        Distances on a torus (the pre grid wraps around).
    skip_diagonal : bool
        No synapse from a unit onto itself (lateral, same grid).
    u : (n_rows * (2 radius + 1)^2,) float array
        Uniforms, ``(2 radius + 1)^2`` per post unit of the block.
    counts : (n_rows,) int64 array
        Written: synapses per post unit.
    out : int64 array
        Written: their pre units, row after row, sorted within rows.
    n_out : int
        Synapses already in ``out`` (the block's start).

    Returns
    -------
    int
        Synapses in ``out`` after the block.
    """
    width = 2 * radius + 1
    two_s2 = 2.0 * sigma * sigma
    pos = n_out
    for r in range(n_rows):
        i = row0 + r
        cy = (i // post_cols + 0.5) * pre_rows / post_rows - 0.5
        cx = (i % post_cols + 0.5) * pre_cols / post_cols - 0.5
        ry = int(np.floor(cy + 0.5))
        rx = int(np.floor(cx + 0.5))
        start = pos
        k = r * width * width
        for dy in range(-radius, radius + 1):
            for dx in range(-radius, radius + 1):
                uu = u[k]
                k += 1
                y = ry + dy
                x = rx + dx
                if periodic:
                    y %= pre_rows
                    x %= pre_cols
                elif y < 0 or y >= pre_rows or x < 0 or x >= pre_cols:
                    continue
                j = y * pre_cols + x
                if skip_diagonal and j == i:
                    continue
                ey = ry + dy - cy
                ex = rx + dx - cx
                if uu < p_max * np.exp(-(ey * ey + ex * ex) / two_s2):
                    out[pos] = j
                    pos += 1
        # periodic wrapping can repeat a column when the window is wider than the grid: keep one
        seg = np.sort(out[start:pos])
        m = 0
        for q in range(seg.shape[0]):
            if q == 0 or seg[q] != seg[q - 1]:
                out[start + m] = seg[q]
                m += 1
        pos = start + m
        counts[r] = m
    return pos
