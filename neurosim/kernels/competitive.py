"""Numba kernels of competitive (self-organising) circuits: best-matching unit, Kohonen's and Neural Gas's rules.

The units' prototypes are the rows of a projection's weights (post x pre,
one row per map unit). One sample per step (batch 1): these algorithms are
sequential, each input moving the prototypes the next one is matched
against. Every sum runs in one fixed order (coordinate by coordinate), which
the NumPy references in :mod:`neurosim.dynamics.competitive` and
:mod:`neurosim.rules.competitive` repeat, so both paths give the same bits.
"""

import math

import numpy as np
from numba import njit

from neurosim.kernels._build import INLINE

__all__ = ["best_matching_unit", "kohonen_update", "neural_gas_update", "NEIGHBOURHOODS"]

#: neighbourhood functions of :func:`kohonen_update`, by code (MiniSom's names)
NEIGHBOURHOODS = ("gaussian", "mexican_hat", "bubble", "triangle")


@njit(cache=True, nogil=True, inline=INLINE)
def best_matching_unit(activity, distance, x, w):
    """Squared Euclidean distances of every sample to every prototype; activity one-hot on the nearest.

    ``distance[b, i] = sum_k (x[b, k] - w[i, k])^2`` summed over ``k`` in
    order; ``activity[b]`` is 1 at the first unit of smallest distance, 0
    elsewhere (all 0 when the population is empty). Returns True.
    """
    batch, n = activity.shape
    m = x.shape[1]
    for b in range(batch):
        best = -1
        best_d = np.inf
        for i in range(n):
            acc = 0.0
            for k in range(m):
                diff = x[b, k] - w[i, k]
                acc += diff * diff
            distance[b, i] = acc
            activity[b, i] = 0.0
            if acc < best_d:
                best = i
                best_d = acc
        if best >= 0:
            activity[b, best] = 1.0
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def _winner(activity):
    """Column of the first 1 in ``activity[0]`` (-1 when there is none)."""
    for i in range(activity.shape[1]):
        if activity[0, i] == 1.0:
            return i
    return -1


@njit(cache=True, nogil=True, inline=INLINE)
def kohonen_update(w, post, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind):
    """Kohonen's rule: ``w_j += rate h(j, c, sigma) (x - w_j)`` around the winner ``c`` (batch 1).

    ``kind`` indexes :data:`NEIGHBOURHOODS`, with MiniSom's formulas and
    their operation order: gaussian ``exp(-dx^2/d) exp(-dy^2/d)`` and
    mexican hat ``exp(-p/d) (1 - 2/d p)`` (``d = 2 sigma^2``, ``p = dx^2 +
    dy^2``) on the units' plane coordinates ``grid_x``, ``grid_y``; bubble
    (1 inside the open box of half-width ``sigma``) and triangle
    (``max(0, sigma - |di|) max(0, sigma - |dj|)``) on the grid indices
    ``grid_i``, ``grid_j``. The factor ``h rate`` multiplies ``x - w`` as
    MiniSom's ``einsum`` does.
    """
    c = _winner(post)
    if c < 0:
        return True
    n, m = w.shape
    d = 2.0 * sigma * sigma
    for j in range(n):
        if kind == 0:
            dx = grid_x[j] - grid_x[c]
            dy = grid_y[j] - grid_y[c]
            h = math.exp(-(dx * dx) / d) * math.exp(-(dy * dy) / d)
        elif kind == 1:
            dx = grid_x[j] - grid_x[c]
            dy = grid_y[j] - grid_y[c]
            p = dx * dx + dy * dy
            h = math.exp(-p / d) * (1.0 - 2.0 / d * p)
        elif kind == 2:
            inside = (grid_i[j] > grid_i[c] - sigma and grid_i[j] < grid_i[c] + sigma
                      and grid_j[j] > grid_j[c] - sigma and grid_j[j] < grid_j[c] + sigma)
            h = 1.0 if inside else 0.0
        else:
            tx = -abs(grid_i[c] - grid_i[j]) + sigma
            ty = -abs(grid_j[c] - grid_j[j]) + sigma
            h = max(tx, 0.0) * max(ty, 0.0)
        g = h * rate
        for k in range(m):
            w[j, k] += g * (pre[0, k] - w[j, k])
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def neural_gas_update(w, distance, pre, rank, rate, lam):
    """Neural Gas: ``w_i += rate exp(-k_i / lam) (x - w_i)``, ``k_i`` the rank of unit ``i`` by distance (batch 1).

    Ranks come from a stable sort of ``distance[0]`` (ties: lower column
    first); ``rank`` is a workspace of the population's size.
    """
    n, m = w.shape
    if n == 0:
        return True
    order = np.argsort(distance[0], kind="mergesort")
    for r in range(n):
        rank[order[r]] = r
    for i in range(n):
        g = rate * math.exp(-rank[i] / lam)
        for k in range(m):
            w[i, k] += g * (pre[0, k] - w[i, k])
    return True
