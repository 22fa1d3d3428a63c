"""Numba kernels of competitive (self-organising) circuits: best-matching unit, Kohonen's and Neural Gas's rules.

The units' prototypes are the rows of a projection's weights (post x pre,
one row per map unit). One sample per step (batch 1): these algorithms are
sequential, each input moving the prototypes the next one is matched
against. Every sum runs in one fixed order (coordinate by coordinate), which
the NumPy references in :mod:`neurosim.dynamics.competitive` and
:mod:`neurosim.rules.competitive` repeat, so both paths give the same bits.

A prototype projection with a mask, or stored sparsely (``csr_*``: compressed
rows, :mod:`neurosim.kernels.sparse`), gives each unit a receptive field: the
distance sums over the unit's synapses only, and the rules move only those
(so a masked projection and a sparse one with the same synapses give the
same bits). The sparse kernels have row-parallel forms (``*_rows``) that run
the same per-row code, so they give the same bits for any thread count.
"""

import math

import numpy as np
from numba import njit, prange

from neurosim.kernels._build import INLINE

__all__ = ["best_matching_unit", "best_matching_unit_masked", "csr_best_matching_unit",
           "csr_best_matching_unit_rows", "kohonen_update", "csr_kohonen_update", "csr_kohonen_update_rows",
           "neural_gas_update", "csr_neural_gas_update", "csr_neural_gas_update_rows", "gng_adapt", "gwr_adapt",
           "habituated", "structure_due", "NEIGHBOURHOODS"]

#: neighbourhood functions of :func:`kohonen_update`, by code (MiniSom's names)
NEIGHBOURHOODS = ("gaussian", "mexican_hat", "bubble", "triangle")


@njit(cache=True, nogil=True, inline=INLINE)
def best_matching_unit(activity, distance, x, w):
    """Squared Euclidean distances of every sample to every prototype; activity one-hot on the nearest.

    ``distance[b, i] = sum_k (x[b, k] - w[i, k])^2`` summed over ``k`` in
    order; ``activity[b]`` is 1 at the first unit of smallest distance, 0
    elsewhere (all 0 when the population is empty). Returns True.
    """
    return _nearest_prototypes(activity, distance, x, w, w, False)


@njit(cache=True, nogil=True, inline="always")
def _nearest_prototypes(activity, distance, x, w, mask, masked):
    """:func:`best_matching_unit`, or with ``masked`` (a constant where it is called) :func:`best_matching_unit_masked`."""
    batch, n = activity.shape
    m = x.shape[1]
    for b in range(batch):
        for i in range(n):
            acc = 0.0
            for k in range(m):
                if not masked or mask[i, k]:
                    diff = x[b, k] - w[i, k]
                    acc += diff * diff
            distance[b, i] = acc
        _one_hot_nearest(activity, distance, b)
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def _one_hot_nearest(activity, distance, b):
    """``activity[b]`` 1 at the first unit of smallest ``distance[b]``, 0 elsewhere (all 0 without units)."""
    best = -1
    best_d = np.inf
    for i in range(activity.shape[1]):
        activity[b, i] = 0.0
        if distance[b, i] < best_d:
            best = i
            best_d = distance[b, i]
    if best >= 0:
        activity[b, best] = 1.0


@njit(cache=True, nogil=True, inline=INLINE)
def best_matching_unit_masked(activity, distance, x, w, mask):
    """:func:`best_matching_unit` over receptive fields: ``distance[b, i] = sum_{k: mask[i, k]} (x[b, k] - w[i, k])^2``.

    Returns True.
    """
    return _nearest_prototypes(activity, distance, x, w, mask, True)


@njit(cache=True, nogil=True, inline=INLINE)
def _csr_distance_row(distance, i, x, indptr, indices, weights):
    """``distance[b, i] = sum_s (x[b, indices[s]] - weights[s])^2`` over row ``i``, in stored order."""
    for b in range(x.shape[0]):
        acc = 0.0
        for s in range(indptr[i], indptr[i + 1]):
            diff = x[b, indices[s]] - weights[s]
            acc += diff * diff
        distance[b, i] = acc


@njit(cache=True, nogil=True, inline=INLINE)
def csr_best_matching_unit(activity, distance, x, indptr, indices, weights):
    """:func:`best_matching_unit_masked` on sparse prototypes: each unit's distance over its stored synapses.

    Returns True.
    """
    return _csr_nearest_prototypes(activity, distance, x, indptr, indices, weights, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_best_matching_unit_rows(activity, distance, x, indptr, indices, weights):
    """Row-parallel :func:`csr_best_matching_unit` (distances in numba's thread pool): the same bits, any threads."""
    return _csr_nearest_prototypes(activity, distance, x, indptr, indices, weights, True)


# The sparse kernels and their row-parallel forms share one body each: ``parallel``, a constant where the public
# kernels pass it, chooses the loop over the units (numba prunes the other).
@njit(cache=True, nogil=True, inline="always")
def _csr_nearest_prototypes(activity, distance, x, indptr, indices, weights, parallel):
    """:func:`csr_best_matching_unit`; ``parallel``: the distances in numba's thread pool."""
    if parallel:
        for i in prange(indptr.shape[0] - 1):
            _csr_distance_row(distance, i, x, indptr, indices, weights)
    else:
        for i in range(indptr.shape[0] - 1):
            _csr_distance_row(distance, i, x, indptr, indices, weights)
    for b in range(x.shape[0]):
        _one_hot_nearest(activity, distance, b)
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
    MiniSom's ``einsum`` does. For a ``sigma`` so small that ``d`` underflows
    to 0, or that the mexican hat's ``2 p / d`` overflows, ``h`` is the limit
    ``sigma -> 0`` (1 at the winner, 0 elsewhere) where the formulas would
    divide by zero or give NaN.
    """
    c = _winner(post)
    if c < 0:
        return True
    n, m = w.shape
    d = 2.0 * sigma * sigma
    for j in range(n):
        g = _neighbourhood(j, c, grid_i, grid_j, grid_x, grid_y, sigma, kind, d) * rate
        for k in range(m):
            w[j, k] += g * (pre[0, k] - w[j, k])
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def _neighbourhood(j, c, grid_i, grid_j, grid_x, grid_y, sigma, kind, d):
    """``h(j, c; sigma)`` of :func:`kohonen_update` (``d = 2 sigma^2``)."""
    if kind <= 1 and d == 0.0:
        # sigma^2 underflowed (sigma < ~1e-162): the limit sigma -> 0 of both formulas, the winner alone
        return 1.0 if grid_x[j] == grid_x[c] and grid_y[j] == grid_y[c] else 0.0
    if kind == 0:
        dx = grid_x[j] - grid_x[c]
        dy = grid_y[j] - grid_y[c]
        return math.exp(-(dx * dx) / d) * math.exp(-(dy * dy) / d)
    if kind == 1:
        dx = grid_x[j] - grid_x[c]
        dy = grid_y[j] - grid_y[c]
        p = dx * dx + dy * dy
        h = math.exp(-p / d) * (1.0 - 2.0 / d * p)
        if h != h:  # 2 / d overflowed (tiny sigma): inf * 0 at the winner, 0 * -inf elsewhere; the limits
            h = 1.0 if p == 0.0 else 0.0
        return h
    if kind == 2:
        inside = (grid_i[j] > grid_i[c] - sigma and grid_i[j] < grid_i[c] + sigma
                  and grid_j[j] > grid_j[c] - sigma and grid_j[j] < grid_j[c] + sigma)
        return 1.0 if inside else 0.0
    tx = -abs(grid_i[c] - grid_i[j]) + sigma
    ty = -abs(grid_j[c] - grid_j[j]) + sigma
    return max(tx, 0.0) * max(ty, 0.0)


@njit(cache=True, nogil=True, inline=INLINE)
def _toward_input_row(weights, i, indptr, indices, pre, g):
    """``w_s += g (x_k - w_s)`` on row ``i``'s synapses ``s = (i, k)``: a sparse prototype's move toward the input."""
    for s in range(indptr[i], indptr[i + 1]):
        weights[s] += g * (pre[0, indices[s]] - weights[s])


@njit(cache=True, nogil=True, inline=INLINE)
def csr_kohonen_update(weights, indptr, indices, post, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind):
    """:func:`kohonen_update` on sparse prototypes: each unit's stored synapses move (batch 1). Returns True."""
    return _csr_kohonen(weights, indptr, indices, post, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_kohonen_update_rows(weights, indptr, indices, post, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind):
    """:func:`csr_kohonen_update` with its units in numba's thread pool: the same bits, any thread count."""
    return _csr_kohonen(weights, indptr, indices, post, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind, True)


@njit(cache=True, nogil=True, inline="always")
def _csr_kohonen(weights, indptr, indices, post, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind, parallel):
    """:func:`csr_kohonen_update`; ``parallel``: its units in numba's thread pool."""
    c = _winner(post)
    if c < 0:
        return True
    d = 2.0 * sigma * sigma
    if parallel:
        for j in prange(indptr.shape[0] - 1):
            _kohonen_row(weights, j, c, indptr, indices, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind, d)
    else:
        for j in range(indptr.shape[0] - 1):
            _kohonen_row(weights, j, c, indptr, indices, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind, d)
    return True


@njit(cache=True, nogil=True, inline="always")
def _kohonen_row(weights, j, c, indptr, indices, pre, grid_i, grid_j, grid_x, grid_y, rate, sigma, kind, d):
    """Unit ``j``'s move of :func:`csr_kohonen_update` (winner ``c``, ``d = 2 sigma^2``)."""
    g = _neighbourhood(j, c, grid_i, grid_j, grid_x, grid_y, sigma, kind, d) * rate
    _toward_input_row(weights, j, indptr, indices, pre, g)


@njit(cache=True, nogil=True, inline=INLINE)
def neural_gas_update(w, distance, pre, rank, rate, lam):
    """Neural Gas: ``w_i += rate exp(-k_i / lam) (x - w_i)``, ``k_i`` the rank of unit ``i`` by distance (batch 1).

    Ranks come from a stable sort of ``distance[0]`` (ties: lower column
    first); ``rank`` is a workspace of the population's size.
    """
    n, m = w.shape
    if n == 0:
        return True
    _ranks(distance, rank)
    for i in range(n):
        g = rate * math.exp(-rank[i] / lam)
        for k in range(m):
            w[i, k] += g * (pre[0, k] - w[i, k])
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def _ranks(distance, rank):
    """``rank[i]``: unit ``i``'s position in a stable sort of ``distance[0]`` (ties: lower column first)."""
    order = np.argsort(distance[0], kind="mergesort")
    for r in range(order.size):
        rank[order[r]] = r


@njit(cache=True, nogil=True, inline=INLINE)
def csr_neural_gas_update(weights, indptr, indices, distance, pre, rank, rate, lam):
    """:func:`neural_gas_update` on sparse prototypes: each unit's stored synapses move (batch 1). Returns True."""
    return _csr_neural_gas(weights, indptr, indices, distance, pre, rank, rate, lam, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_neural_gas_update_rows(weights, indptr, indices, distance, pre, rank, rate, lam):
    """:func:`csr_neural_gas_update` with its units in numba's thread pool: the same bits, any thread count."""
    return _csr_neural_gas(weights, indptr, indices, distance, pre, rank, rate, lam, True)


@njit(cache=True, nogil=True, inline="always")
def _csr_neural_gas(weights, indptr, indices, distance, pre, rank, rate, lam, parallel):
    """:func:`csr_neural_gas_update`; ``parallel``: its units in numba's thread pool."""
    n = indptr.shape[0] - 1
    if n == 0:
        return True
    _ranks(distance, rank)
    if parallel:
        for i in prange(n):
            _toward_input_row(weights, i, indptr, indices, pre, rate * math.exp(-rank[i] / lam))
    else:
        for i in range(n):
            _toward_input_row(weights, i, indptr, indices, pre, rate * math.exp(-rank[i] / lam))
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def _two_nearest(dist):
    """Columns of the smallest and second-smallest entry of ``dist`` (first one on ties; -1 when missing)."""
    s1 = -1
    s2 = -1
    for i in range(dist.size):
        if s1 < 0 or dist[i] < dist[s1]:
            s2 = s1
            s1 = i
        elif s2 < 0 or dist[i] < dist[s2]:
            s2 = i
    return s1, s2


@njit(cache=True, nogil=True, inline=INLINE)
def _synapse(indptr, indices, i, j):
    """Number of the synapse ``i <- j`` (row ``i`` of the compressed rows, sorted), -1 when there is none."""
    lo = indptr[i]
    hi = indptr[i + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < j:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[i + 1] and indices[lo] == j:
        return lo
    return -1


@njit(cache=True, nogil=True, inline=INLINE)
def _set_edge_age(indptr, indices, age, i, j, value):
    """Both synapses of the edge ``i - j`` get age ``value`` (of a one-sided edge a user's event left: its one)."""
    k = _synapse(indptr, indices, i, j)
    if k >= 0:
        age[k] = value
    k = _synapse(indptr, indices, j, i)
    if k >= 0:
        age[k] = value


@njit(cache=True, nogil=True, inline=INLINE)
def gng_adapt(w, pre, distance, indptr, indices, age, error, state, eps_b, eps_n, a_max, lam, d, cap):
    """One input of Fritzke's (1995) Growing Neural Gas, the parts that change no structure (batch 1).

    The edges are a sparse lateral projection (compressed rows ``indptr``,
    ``indices``; an edge ``i - j`` is the synapses ``i <- j`` and ``j <- i``,
    their ages ``age`` one per synapse): the winner's edges are its row, the
    reverse synapse a binary search in the neighbour's row, so an input
    costs O(units x dim) for the distances and O(edges of s1) for the rest.

    ``state`` = ``[inputs seen, s1, s2, structure due, a_max at the last
    structural step]`` (float64). In order:

    0. Step 8 of the previous input, moved here: every error ``*= d`` (the
       structural step of the previous input, in the events phase, read the
       errors before this decay, as Fritzke's step 7 does).
    1. ``s1``, ``s2``: the nearest and second-nearest unit (``distance``
       from the dynamics; ties to the lower column).
    2. Every edge of ``s1`` ages by 1 (both synapses).
    3. ``error[s1] += ||x - w_s1||^2``.
    4. ``w_s1 += eps_b (x - w_s1)``; ``w_n += eps_n (x - w_n)`` for the
       neighbours ``n`` of ``s1``, in increasing column.
    5. An existing edge ``s1 - s2`` gets age 0.

    ``state[3]`` is set to 1 when the structure must change in this step:
    no edge ``s1 - s2`` yet, an edge of ``s1`` older than ``a_max``, or
    ``inputs seen`` a multiple of ``lam`` while the map holds fewer than
    ``cap`` units (an insertion; ``cap`` -1: no limit), or ``a_max`` lowered
    since the last structural step. Returns True.
    """
    n, m = w.shape
    state[0] += 1.0
    state[3] = 0.0
    for i in range(n):
        error[i] *= d
    s1, s2 = _two_nearest(distance[0])
    state[1] = s1
    state[2] = s2
    if s1 >= 0:
        lo = indptr[s1]
        hi = indptr[s1 + 1]
        for k in range(lo, hi):
            age[k] += 1.0
            back = _synapse(indptr, indices, indices[k], s1)
            if back >= 0:
                age[back] += 1.0
        error[s1] += distance[0, s1]
        for c in range(m):
            w[s1, c] += eps_b * (pre[0, c] - w[s1, c])
        for k in range(lo, hi):
            j = indices[k]
            for c in range(m):
                w[j, c] += eps_n * (pre[0, c] - w[j, c])
        if s2 >= 0:
            if _synapse(indptr, indices, s1, s2) >= 0:
                _set_edge_age(indptr, indices, age, s1, s2, 0.0)
            else:
                state[3] = 1.0
        for k in range(lo, hi):
            if age[k] > a_max:
                state[3] = 1.0
    if state[0] % lam == 0.0 and (cap < 0 or n < cap):
        state[3] = 1.0
    if a_max < state[4]:  # lowered since the last structural step: any edge may be too old now
        state[3] = 1.0
    return True


@njit(cache=True, nogil=True)
def structure_due(state):
    """Trigger condition: ``state[3]`` says the structure must change this step."""
    return state[3] != 0.0


@njit(cache=True, nogil=True, inline=INLINE)
def habituated(h, alpha, tau):
    """One firing of Marsland et al.'s habituation, Eq. 3 (``h_0 = S = 1``): ``tau dh/dt = alpha (1 - h) - 1`` over one unit of time.

    The exact solution ``h_inf + (h - h_inf) exp(-alpha / tau)``, ``h_inf =
    1 - 1 / alpha``: a counter that fired ``k`` times from ``h_0 = 1`` holds the
    paper's ``h(k) = 1 - (1 - exp(-alpha k / tau)) / alpha``.
    """
    h_inf = 1.0 - 1.0 / alpha
    return h_inf + (h - h_inf) * math.exp(-alpha / tau)


@njit(cache=True, nogil=True, inline=INLINE)
def gwr_adapt(w, pre, distance, indptr, indices, age, firing, state, eps_b, eps_n, a_T, h_T, tau_b, tau_n, alpha_b,
              alpha_n, a_max, cap):
    """One input of Marsland, Shapiro & Nehmzow's (2002) Grow When Required network, what changes no structure.

    The edges as in :func:`gng_adapt` (a sparse lateral projection, ages per
    synapse). ``state`` = ``[inputs seen, s, t, structure due, insert, a_max
    at the last structural step]`` (float64). With ``s``, ``t`` the nearest
    and second-nearest unit, ``N`` the neighbours of ``s`` once the edge
    ``s - t`` exists (``t`` among them; after an insertion, without ``t``,
    and the newborn's share is the events'):

    * an existing edge ``s - t`` gets age 0;
    * ``insert`` when the activity ``exp(-||x - w_s||) < a_T`` and ``s``'s
      firing counter ``< h_T``; otherwise ``w_s += eps_b h_s (x - w_s)`` and
      ``w_i += eps_n h_i (x - w_i)`` for ``i`` in ``N``, in increasing column;
    * the existing edges of ``s`` to ``N`` age by 1;
    * ``s`` habituates with ``tau_b``, ``alpha_b``, ``N`` with ``tau_n``, ``alpha_n``.

    ``state[3]`` is set when the structure must change: a new edge ``s - t``,
    an insertion, or an edge of ``s`` older than ``a_max``. Returns True.
    """
    n, m = w.shape
    state[0] += 1.0
    state[3] = 0.0
    state[4] = 0.0
    s, t = _two_nearest(distance[0])
    state[1] = s
    state[2] = t
    if s < 0 or t < 0:
        return True
    linked = _synapse(indptr, indices, s, t) >= 0
    if linked:
        _set_edge_age(indptr, indices, age, s, t, 0.0)
    else:
        state[3] = 1.0
    activity = math.exp(-math.sqrt(distance[0, s]))
    insert = activity < a_T and firing[s] < h_T and (cap < 0 or n < cap)
    lo = indptr[s]
    hi = indptr[s + 1]
    # t joins the neighbours in column order when the edge s - t is new (it is made in the events phase)
    t_extra = not linked and not insert
    if insert:
        state[3] = 1.0
        state[4] = 1.0
    else:
        for c in range(m):
            w[s, c] += eps_b * firing[s] * (pre[0, c] - w[s, c])
        pending = t_extra
        for k in range(lo, hi + 1):
            j = indices[k] if k < hi else n
            if pending and t < j:
                for c in range(m):
                    w[t, c] += eps_n * firing[t] * (pre[0, c] - w[t, c])
                pending = False
            if k < hi:
                for c in range(m):
                    w[j, c] += eps_n * firing[j] * (pre[0, c] - w[j, c])
    for k in range(lo, hi):
        j = indices[k]
        if not (insert and j == t):
            age[k] += 1.0
            back = _synapse(indptr, indices, j, s)
            if back >= 0:
                age[back] += 1.0
            if age[k] > a_max:
                state[3] = 1.0
    if a_max < state[5]:  # lowered since the last structural step: any edge may be too old now
        state[3] = 1.0
    firing[s] = habituated(firing[s], alpha_b, tau_b)
    pending = t_extra
    for k in range(lo, hi + 1):
        j = indices[k] if k < hi else n
        if pending and t < j:
            firing[t] = habituated(firing[t], alpha_n, tau_n)
            pending = False
        if k < hi and not (insert and j == t):
            firing[j] = habituated(firing[j], alpha_n, tau_n)
    return True
