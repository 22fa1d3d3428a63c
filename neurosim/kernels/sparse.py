"""Numba kernels on sparse projections: compressed rows by post unit (:mod:`neurosim.synapse_index`).

Pure functions on arrays. A sparse projection is three arrays: ``indptr``
(``n_post + 1``), ``indices`` (pre unit of each synapse, sorted within a
row) and ``weights`` (one per synapse). Every kernel here walks the rows: a
post unit's drive is a sum over its row (in an order fixed by the row, see
:func:`_drive_row`), and a rule updates its row's synapses from that unit's
activity and the pre activity it gathers. Each has a serial form and a
row-parallel one (``*_rows``: numba's thread pool over post units,
:func:`neurosim.kernels.parallel.use_rows` decides) that runs the same
per-row function, so the two give the same bits for any thread count (a row
is one thread's work, in the same order).

The rules repeat, synapse by synapse, the arithmetic of the dense kernels in
:mod:`neurosim.kernels.plasticity` (same expression, same order), so a
sparse projection learns exactly what the masked dense projection with the
same synapses learns from the same activity. The drive sums in another
order than BLAS, so it agrees with the dense drive to rounding.

Oja's subspace rule, the delta rule and Sanger's rule need a sum down a
column, ``sum_k W_kj y_k``, over the synapses from pre unit ``j``: they walk
the transposed index (:meth:`~neurosim.synapse_index.SynapseIndex.by_pre`,
a column's synapses in increasing post unit), one column per thread in
their row-parallel forms. The subspace rule's residuals then equal the
dense kernel's (the same terms in the same order, without the absent
synapses' zeros); Sanger's is computed in another order than the dense
kernel's (linear in the synapses instead of quadratic in the column
lengths), so it agrees with it to rounding.
"""

import numpy as np
from numba import njit, prange

from neurosim.kernels._build import INLINE
from neurosim.kernels.plasticity import squared_activity

__all__ = ["csr_drive", "csr_drive_rows", "csr_product", "csr_hebbian", "csr_hebbian_rows", "csr_oja",
           "csr_linear_oja", "csr_linear_oja_rows", "csr_linear_hebbian", "csr_linear_hebbian_rows",
           "csr_oja_rows", "csr_normalized_hebbian", "csr_normalized_hebbian_rows", "csr_subspace",
           "csr_subspace_rows", "csr_sanger", "csr_sanger_rows", "csr_all_finite"]


# -- drive ----------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def _u(k):
    """``k`` (a synapse number or a stored pre unit, never negative) as an unsigned integer, to index with.

    numba wraps negative signed indices around (a compare and a select on
    every access); an unsigned index has none. On the rows' loops this is
    a quarter of Oja's time and of the drive's with short rows.
    """
    return np.uintp(k)


# unsigned steps along a row (a signed constant would make the sum a float in numba's typing)
_ONE, _TWO, _THREE, _FOUR = np.uintp(1), np.uintp(2), np.uintp(3), np.uintp(4)


@njit(cache=True, nogil=True, inline=INLINE)
def _drive_row(out, i, pre, indptr, indices, weights, sign, accumulate):
    """``out[:, i] (+)= sign * sum_s weights[s] pre[:, indices[s]]`` over row ``i``.

    Four partial sums, over the synapses ``lo + 4k + r`` (``r = 0..3``, the
    last ``< 4`` into the first), added as ``(a0 + a1) + (a2 + a3)``: one
    running sum makes every synapse wait for the previous addition (its
    latency, about 4 cycles), four keep the adder busy (15-20 % faster, in
    cache and out of it). The order is fixed by the row alone, so the serial
    and row-parallel forms give the same bits; it is not the order of a
    single sum (scipy's, Brian2's), which agree to rounding.
    """
    lo = _u(indptr[i])
    hi = _u(indptr[i + 1])
    for b in range(pre.shape[0]):
        x = pre[b]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        s = lo
        while s + _FOUR <= hi:
            a0 += weights[s] * x[_u(indices[s])]
            a1 += weights[s + _ONE] * x[_u(indices[s + _ONE])]
            a2 += weights[s + _TWO] * x[_u(indices[s + _TWO])]
            a3 += weights[s + _THREE] * x[_u(indices[s + _THREE])]
            s += _FOUR
        while s < hi:
            a0 += weights[s] * x[_u(indices[s])]
            s += _ONE
        v = sign * ((a0 + a1) + (a2 + a3))
        if accumulate:
            out[b, i] += v
        else:
            out[b, i] = v


@njit(cache=True, nogil=True, inline=INLINE)
def csr_drive(out, pre, indptr, indices, weights, sign, accumulate):
    """``out (+)= sign * pre @ W.T`` for a sparse ``W`` (the drive of :func:`~neurosim.kernels.dense.synaptic_drive`).

    Parameters
    ----------
    out : (batch, n_post) array, written in place.
    pre : (batch, n_pre) array.
    indptr, indices, weights : the projection's compressed rows.
    sign : float, +1 or -1.
    accumulate : bool, add to ``out`` instead of overwriting it.
    """
    for i in range(indptr.shape[0] - 1):
        _drive_row(out, i, pre, indptr, indices, weights, sign, accumulate)


@njit(cache=True, nogil=True, parallel=True)
def csr_drive_rows(out, pre, indptr, indices, weights, sign, accumulate):
    """:func:`csr_drive` with its rows in numba's thread pool: the same bits, any thread count."""
    for i in prange(indptr.shape[0] - 1):
        _drive_row(out, i, pre, indptr, indices, weights, sign, accumulate)


@njit(cache=True, nogil=True, inline=INLINE)
def csr_product(out, y, indptr, indices, weights, parallel):
    """``out = y @ W.T`` for a sparse square ``W`` (Jacobi's lateral product); row-parallel when asked."""
    if parallel:
        csr_drive_rows(out, y, indptr, indices, weights, 1.0, False)
    else:
        csr_drive(out, y, indptr, indices, weights, 1.0, False)


# -- rules ------------------------------------------------------------------------------------------------
# The Hebbian rule and Oja's share their kernels here: each takes ``oja`` (with ``decay`` read by the Hebbian rule
# alone) and ``parallel``, constants where the public kernels pass them, so that numba prunes the other branches and
# each kernel compiles to its own loops.
@njit(cache=True, nogil=True, inline="always")
def _update_synapse(weights, s, hebb, scale, decay, yy, oja):
    """Write synapse ``s``'s Hebbian (``decay``) or Oja (``yy``) update from ``hebb``; return whether it is not finite.

    The expressions of :func:`neurosim.kernels.plasticity.hebbian` and :func:`~neurosim.kernels.plasticity.oja`.
    """
    if oja:
        v = weights[s] + scale * (hebb - yy * weights[s])
    else:
        v = (1.0 - decay) * weights[s] + scale * hebb
    weights[s] = v
    return not (v - v == 0.0)


@njit(cache=True, nogil=True, inline=INLINE)
def _hebbian_or_oja_row(weights, i, indptr, indices, post, pre, rate, decay, oja):
    """Row ``i`` of :func:`csr_oja` (``oja``) or :func:`csr_hebbian`; returns 1 if a written weight is not finite."""
    batch = post.shape[0]
    scale = rate / batch
    yy = squared_activity(post, i) if oja else 0.0
    bad = 0
    if batch == 1:
        # the loop below for one sample, y_i and the row of x taken out of it: the same expressions (so the same
        # bits), in a third (Hebbian) or 40 % (Oja) less time
        yi = post[0, i]
        x = pre[0]
        for s in range(_u(indptr[i]), _u(indptr[i + 1])):
            bad |= _update_synapse(weights, s, 0.0 + yi * x[_u(indices[s])], scale, decay, yy, oja)
        return bad
    for s in range(_u(indptr[i]), _u(indptr[i + 1])):
        j = _u(indices[s])
        hebb = 0.0
        for b in range(batch):
            hebb += post[b, i] * pre[b, j]
        bad |= _update_synapse(weights, s, hebb, scale, decay, yy, oja)
    return bad


@njit(cache=True, nogil=True, inline="always")
def _hebbian_or_oja(weights, indptr, indices, post, pre, rate, decay, oja, parallel):
    """:func:`csr_oja` (``oja``) or :func:`csr_hebbian`; ``parallel``: their ``*_rows`` forms."""
    bad = 0
    if parallel:
        for i in prange(indptr.shape[0] - 1):
            bad += _hebbian_or_oja_row(weights, i, indptr, indices, post, pre, rate, decay, oja)
    else:
        for i in range(indptr.shape[0] - 1):
            bad |= _hebbian_or_oja_row(weights, i, indptr, indices, post, pre, rate, decay, oja)
    return bad == 0


@njit(cache=True, nogil=True)
def csr_hebbian(weights, indptr, indices, post, pre, rate, decay):
    """``w_s <- (1 - decay) w_s + rate * mean_b(y_i x_j)`` on every stored synapse ``s = (i, j)``.

    :func:`neurosim.kernels.plasticity.hebbian` on the synapses that exist.
    Returns whether every updated weight is finite.
    """
    return _hebbian_or_oja(weights, indptr, indices, post, pre, rate, decay, False, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_hebbian_rows(weights, indptr, indices, post, pre, rate, decay):
    """:func:`csr_hebbian` with its rows in numba's thread pool: the same bits, any thread count."""
    return _hebbian_or_oja(weights, indptr, indices, post, pre, rate, decay, False, True)


@njit(cache=True, nogil=True)
def csr_oja(weights, indptr, indices, post, pre, rate):
    """Oja's rule ``w_s += rate * mean_b y_i (x_j - y_i w_s)`` on every stored synapse ``s = (i, j)``.

    :func:`neurosim.kernels.plasticity.oja` on the synapses that exist.
    Returns whether every updated weight is finite.
    """
    return _hebbian_or_oja(weights, indptr, indices, post, pre, rate, 0.0, True, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_oja_rows(weights, indptr, indices, post, pre, rate):
    """:func:`csr_oja` with its rows in numba's thread pool: the same bits, any thread count."""
    return _hebbian_or_oja(weights, indptr, indices, post, pre, rate, 0.0, True, True)


# -- a linear population's drive and its rule, a block of rows at a time ------------------------------------
#: Synapses per block of rows a fused kernel drives and then updates (weights and indices of a block, 96 KiB,
#: stay in the L2 cache between the two passes)
FUSED_BLOCK = 8192


@njit(cache=True, nogil=True, inline=INLINE)
def _rows_per_block(indptr):
    """Rows per block of :data:`FUSED_BLOCK` synapses on average (at least one)."""
    n = indptr.shape[0] - 1
    return max(1, (FUSED_BLOCK * n) // max(1, indptr[n]))


# The two halves of a block are separate functions, never inlined into one: compiled as one function, the drive's
# and the rule's loops ran 1.5-2x slower (measured at 10^5 synapses) than as two -- LLVM optimises each loop
# nest better alone.
@njit(cache=True, nogil=True, inline="never")
def _linear_block(post, drive, pre, indptr, indices, weights, sign, i0, i1):
    """Rows ``i0 .. i1 - 1`` of the drive of a ``Linear`` population fed by this one projection, into ``drive`` and ``post``."""
    for i in range(i0, i1):
        _drive_row(drive, i, pre, indptr, indices, weights, sign, False)
    for b in range(post.shape[0]):
        for i in range(i0, i1):
            post[b, i] = drive[b, i]


@njit(cache=True, nogil=True, inline="always")
def _rule_block(weights, indptr, indices, post, pre, rate, decay, oja, i0, i1):
    """Rows ``i0 .. i1 - 1`` of :func:`csr_oja` (``oja``) or :func:`csr_hebbian`; returns 1 if a weight is not finite."""
    bad = 0
    for i in range(i0, i1):
        bad |= _hebbian_or_oja_row(weights, i, indptr, indices, post, pre, rate, decay, oja)
    return bad


@njit(cache=True, nogil=True, inline="never")
def _oja_block(weights, indptr, indices, post, pre, rate, i0, i1):
    """:func:`_rule_block` of Oja's rule, compiled alone."""
    return _rule_block(weights, indptr, indices, post, pre, rate, 0.0, True, i0, i1)


@njit(cache=True, nogil=True, inline="never")
def _hebbian_block(weights, indptr, indices, post, pre, rate, decay, i0, i1):
    """:func:`_rule_block` of the Hebbian rule, compiled alone."""
    return _rule_block(weights, indptr, indices, post, pre, rate, decay, False, i0, i1)


@njit(cache=True, nogil=True, inline="never")
def _linear_block_gathering(post, drive, x, indptr, indices, weights, sign, i0, i1, xg):
    """:func:`_linear_block` for one sample, keeping each synapse's ``x_j`` in ``xg`` (from synapse ``indptr[i0]``).

    The rule then reads ``xg`` in order instead of gathering ``x`` at random a
    second time: with 10^5 inputs ``x`` does not stay in the L2 cache beside
    the weights streaming through, and the second gather was a third of the
    step. The sums are :func:`_drive_row`'s, in its order (the same bits).
    """
    base = _u(indptr[i0])
    for i in range(i0, i1):
        lo = _u(indptr[i])
        hi = _u(indptr[i + 1])
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        s = lo
        while s + _FOUR <= hi:
            x0 = x[_u(indices[s])]
            x1 = x[_u(indices[s + _ONE])]
            x2 = x[_u(indices[s + _TWO])]
            x3 = x[_u(indices[s + _THREE])]
            xg[s - base] = x0
            xg[s + _ONE - base] = x1
            xg[s + _TWO - base] = x2
            xg[s + _THREE - base] = x3
            a0 += weights[s] * x0
            a1 += weights[s + _ONE] * x1
            a2 += weights[s + _TWO] * x2
            a3 += weights[s + _THREE] * x3
            s += _FOUR
        while s < hi:
            x0 = x[_u(indices[s])]
            xg[s - base] = x0
            a0 += weights[s] * x0
            s += _ONE
        v = sign * ((a0 + a1) + (a2 + a3))
        drive[0, i] = v
        post[0, i] = v


@njit(cache=True, nogil=True, inline="always")
def _rule_block_gathered(weights, indptr, post, rate, decay, oja, i0, i1, xg):
    """:func:`_rule_block` for one sample with the gathered ``x_j`` (:func:`_hebbian_or_oja_row`'s expressions)."""
    base = _u(indptr[i0])
    scale = rate / 1
    bad = 0
    for i in range(i0, i1):
        yi = post[0, i]
        yy = 0.0 + yi * yi if oja else 0.0
        for s in range(_u(indptr[i]), _u(indptr[i + 1])):
            bad |= _update_synapse(weights, s, 0.0 + yi * xg[s - base], scale, decay, yy, oja)
    return bad


@njit(cache=True, nogil=True, inline="never")
def _oja_block_gathered(weights, indptr, post, rate, i0, i1, xg):
    """:func:`_rule_block_gathered` of Oja's rule, compiled alone."""
    return _rule_block_gathered(weights, indptr, post, rate, 0.0, True, i0, i1, xg)


@njit(cache=True, nogil=True, inline="never")
def _hebbian_block_gathered(weights, indptr, post, rate, decay, i0, i1, xg):
    """:func:`_rule_block_gathered` of the Hebbian rule, compiled alone."""
    return _rule_block_gathered(weights, indptr, post, rate, decay, False, i0, i1, xg)


@njit(cache=True, nogil=True, inline=INLINE)
def _largest_block(indptr, step):
    """Synapses in the largest block of ``step`` rows (the scratch a one-sample fused kernel needs)."""
    n = indptr.shape[0] - 1
    most = 0
    for i0 in range(0, n, step):
        most = max(most, indptr[min(i0 + step, n)] - indptr[i0])
    return most


@njit(cache=True, nogil=True, inline="always")
def _linear_rule(post, drive, pre, indptr, indices, weights, sign, rate, decay, oja, parallel):
    """:func:`csr_linear_oja` (``oja``) or :func:`csr_linear_hebbian`; ``parallel``: their ``*_rows`` forms."""
    n = indptr.shape[0] - 1
    step = _rows_per_block(indptr)
    bad = 0
    if parallel:
        for k in prange((n + step - 1) // step):
            i0 = k * step
            i1 = min(i0 + step, n)
            if pre.shape[0] == 1:
                xg = np.empty(indptr[i1] - indptr[i0])
                _linear_block_gathering(post, drive, pre[0], indptr, indices, weights, sign, i0, i1, xg)
                if oja:
                    bad += _oja_block_gathered(weights, indptr, post, rate, i0, i1, xg)
                else:
                    bad += _hebbian_block_gathered(weights, indptr, post, rate, decay, i0, i1, xg)
            else:
                _linear_block(post, drive, pre, indptr, indices, weights, sign, i0, i1)
                if oja:
                    bad += _oja_block(weights, indptr, indices, post, pre, rate, i0, i1)
                else:
                    bad += _hebbian_block(weights, indptr, indices, post, pre, rate, decay, i0, i1)
        return bad == 0
    xg = np.empty(_largest_block(indptr, step) if pre.shape[0] == 1 else 0)
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        if pre.shape[0] == 1:
            _linear_block_gathering(post, drive, pre[0], indptr, indices, weights, sign, i0, i1, xg)
            if oja:
                bad |= _oja_block_gathered(weights, indptr, post, rate, i0, i1, xg)
            else:
                bad |= _hebbian_block_gathered(weights, indptr, post, rate, decay, i0, i1, xg)
        else:
            _linear_block(post, drive, pre, indptr, indices, weights, sign, i0, i1)
            if oja:
                bad |= _oja_block(weights, indptr, indices, post, pre, rate, i0, i1)
            else:
                bad |= _hebbian_block(weights, indptr, indices, post, pre, rate, decay, i0, i1)
    return bad == 0


@njit(cache=True, nogil=True)
def csr_linear_oja(post, drive, pre, indptr, indices, weights, sign, rate):
    """A ``Linear`` population's drive and Oja's rule on its one projection, a block of rows at a time.

    Computes exactly what :func:`csr_drive` (into ``drive``), the copy into
    ``post`` and :func:`csr_oja` compute one after the other -- the same
    per-row arithmetic, so the same bits (each row's depends on nothing but
    the row) -- but drives a block of rows (:data:`FUSED_BLOCK` synapses)
    and then updates it while its weights and indices are still in the
    cache, with one sample reading the inputs it gathered for the drive
    rather than gathering them again: with 10^7-10^8 synapses the two
    passes over the weights from memory, and the random reads of the input,
    are the step's cost. The engine uses it when nothing runs between the
    population's drive and the rule (:func:`neurosim.fusion.fuse_linear_rules`).
    Returns whether every updated weight is finite.
    """
    return _linear_rule(post, drive, pre, indptr, indices, weights, sign, rate, 0.0, True, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_linear_oja_rows(post, drive, pre, indptr, indices, weights, sign, rate):
    """:func:`csr_linear_oja` with its blocks of rows in numba's thread pool: the same bits, any thread count."""
    return _linear_rule(post, drive, pre, indptr, indices, weights, sign, rate, 0.0, True, True)


@njit(cache=True, nogil=True)
def csr_linear_hebbian(post, drive, pre, indptr, indices, weights, sign, rate, decay):
    """:func:`csr_linear_oja` for the Hebbian rule (:func:`csr_hebbian`): drive, copy and rule per block of rows."""
    return _linear_rule(post, drive, pre, indptr, indices, weights, sign, rate, decay, False, False)


@njit(cache=True, nogil=True, parallel=True)
def csr_linear_hebbian_rows(post, drive, pre, indptr, indices, weights, sign, rate, decay):
    """:func:`csr_linear_hebbian` with its blocks of rows in numba's thread pool: the same bits, any thread count."""
    return _linear_rule(post, drive, pre, indptr, indices, weights, sign, rate, decay, False, True)


@njit(cache=True, nogil=True, inline=INLINE)
def _normalized_hebbian_row(weights, i, indptr, indices, post, pre, mu, alpha, signal):
    """Row ``i`` of :func:`csr_normalized_hebbian` (the dense kernel's arithmetic, in its order)."""
    batch = post.shape[0]
    inv = 1.0 / mu[i]
    if batch == 1:
        yi = post[0, i]
        decay = 0.0 + (alpha * signal[0] + yi * yi)
        for s in range(indptr[i], indptr[i + 1]):
            weights[s] += (yi * pre[0, indices[s]] - decay * weights[s]) * inv
        return
    decay = 0.0
    for b in range(batch):
        decay += alpha * signal[b] + post[b, i] * post[b, i]
    for s in range(indptr[i], indptr[i + 1]):
        j = indices[s]
        hebb = 0.0
        for b in range(batch):
            hebb += post[b, i] * pre[b, j]
        weights[s] += (hebb - decay * weights[s]) * inv


@njit(cache=True, nogil=True)
def csr_normalized_hebbian(weights, indptr, indices, post, pre, mu, alpha, signal):
    """Similarity-matching update ``w_s += (y_i x_j - (alpha s + y_i^2) w_s) / mu_i`` on every stored synapse.

    :func:`neurosim.kernels.plasticity.normalized_hebbian` (paper 002, Eq.
    19/21/24 and their forgetting forms) on the synapses that exist.
    """
    for i in range(indptr.shape[0] - 1):
        _normalized_hebbian_row(weights, i, indptr, indices, post, pre, mu, alpha, signal)


@njit(cache=True, nogil=True, parallel=True)
def csr_normalized_hebbian_rows(weights, indptr, indices, post, pre, mu, alpha, signal):
    """:func:`csr_normalized_hebbian` with its rows in numba's thread pool: the same bits, any thread count."""
    for i in prange(indptr.shape[0] - 1):
        _normalized_hebbian_row(weights, i, indptr, indices, post, pre, mu, alpha, signal)


@njit(cache=True, nogil=True, inline=INLINE)
def _residual_column(res, j, pre, col_ptr, col_syn, col_post, weights, post):
    """``res[j, b] = x_bj - sum_k W_kj y_bk`` over column ``j``'s synapses, in increasing post unit ``k``."""
    for b in range(pre.shape[0]):
        acc = pre[b, j]
        for t in range(col_ptr[j], col_ptr[j + 1]):
            acc -= weights[col_syn[t]] * post[b, col_post[t]]
        res[j, b] = acc


@njit(cache=True, nogil=True, inline=INLINE)
def _subspace_row(weights, i, indptr, indices, post, res, scale):
    """Row ``i`` of :func:`csr_subspace` from the residuals; returns 1 if a written weight is not finite."""
    bad = 0
    for s in range(indptr[i], indptr[i + 1]):
        j = indices[s]
        acc = 0.0
        for b in range(post.shape[0]):
            acc += post[b, i] * res[j, b]
        v = weights[s] + scale * acc
        weights[s] = v
        bad |= not (v - v == 0.0)
    return bad


@njit(cache=True, nogil=True)
def csr_subspace(weights, indptr, indices, col_ptr, col_syn, col_post, post, pre, res, rate):
    """Oja's subspace rule and the delta rule, ``w_s += rate * mean_b y_i (x_j - sum_k W_kj y_k)``, per stored synapse.

    The residuals ``x_j - sum_k W_kj y_k`` are taken from the old weights
    over the synapses of column ``j`` (posts in increasing order, as the
    dense kernel sums its rows), then every synapse ``s = (i, j)`` moves.
    The dense kernel's arithmetic on the synapses that exist.

    Parameters
    ----------
    weights, indptr, indices : the projection's compressed rows (``weights`` updated in place).
    col_ptr, col_syn, col_post : its transposed index (:meth:`~neurosim.synapse_index.SynapseIndex.by_pre`).
    post : (batch, n_post) array.
    pre : (batch, n_pre) array.
    res : (n_pre, batch) array, a workspace.
    rate : float.

    Returns
    -------
    bool
        Whether every updated weight is finite.
    """
    for j in range(pre.shape[1]):
        _residual_column(res, j, pre, col_ptr, col_syn, col_post, weights, post)
    scale = rate / post.shape[0]
    bad = 0
    for i in range(indptr.shape[0] - 1):
        bad |= _subspace_row(weights, i, indptr, indices, post, res, scale)
    return bad == 0


@njit(cache=True, nogil=True, parallel=True)
def csr_subspace_rows(weights, indptr, indices, col_ptr, col_syn, col_post, post, pre, res, rate):
    """:func:`csr_subspace` with its columns, then its rows, in numba's thread pool: the same bits, any thread count."""
    for j in prange(pre.shape[1]):
        _residual_column(res, j, pre, col_ptr, col_syn, col_post, weights, post)
    scale = rate / post.shape[0]
    bad = 0
    for i in prange(indptr.shape[0] - 1):
        bad += _subspace_row(weights, i, indptr, indices, post, res, scale)
    return bad == 0


@njit(cache=True, nogil=True, inline=INLINE)
def _sanger_column(weights, j, col_ptr, col_syn, col_post, post, pre, prefix, scale):
    """Column ``j`` of :func:`csr_sanger`, in increasing post unit; returns 1 if a written weight is not finite.

    ``prefix[j, b]`` runs over ``sum_{k <= i} y_bk W_kj`` with the old
    weights: synapse ``(i, j)`` adds its own old weight before it moves, and
    the synapses after it (larger ``i``) read only the sum.
    """
    batch = post.shape[0]
    for b in range(batch):
        prefix[j, b] = 0.0
    bad = 0
    for t in range(col_ptr[j], col_ptr[j + 1]):
        s = col_syn[t]
        i = col_post[t]
        w = weights[s]
        hebb = 0.0
        decay = 0.0
        for b in range(batch):
            yi = post[b, i]
            acc = prefix[j, b] + yi * w
            prefix[j, b] = acc
            hebb += yi * pre[b, j]
            decay += yi * acc
        v = w + scale * (hebb - decay)
        weights[s] = v
        bad |= not (v - v == 0.0)
    return bad


@njit(cache=True, nogil=True)
def csr_sanger(weights, col_ptr, col_syn, col_post, post, pre, prefix, rate):
    """Sanger's rule ``w_s += rate * mean_b y_i (x_j - sum_{k <= i} y_k W_kj)`` on every stored synapse ``s = (i, j)``.

    The decay ``sum_b y_bi sum_{k <= i} y_bk W_kj`` (old weights) is
    gathered down column ``j`` as a running sum over its synapses, posts in
    increasing order: linear in the synapses. The dense kernel computes
    ``sum_{k <= i} (sum_b y_bi y_bk) W_kj`` instead; the two agree to
    rounding.

    Parameters
    ----------
    weights : (n_synapses,) array, updated in place.
    col_ptr, col_syn, col_post : the transposed index (:meth:`~neurosim.synapse_index.SynapseIndex.by_pre`).
    post : (batch, n_post) array.
    pre : (batch, n_pre) array.
    prefix : (n_pre, batch) array, a workspace.
    rate : float.

    Returns
    -------
    bool
        Whether every updated weight is finite.
    """
    scale = rate / post.shape[0]
    bad = 0
    for j in range(pre.shape[1]):
        bad |= _sanger_column(weights, j, col_ptr, col_syn, col_post, post, pre, prefix, scale)
    return bad == 0


@njit(cache=True, nogil=True, parallel=True)
def csr_sanger_rows(weights, col_ptr, col_syn, col_post, post, pre, prefix, rate):
    """:func:`csr_sanger` with its columns in numba's thread pool: the same bits, any thread count."""
    scale = rate / post.shape[0]
    bad = 0
    for j in prange(pre.shape[1]):
        bad += _sanger_column(weights, j, col_ptr, col_syn, col_post, post, pre, prefix, scale)
    return bad == 0


@njit(cache=True, nogil=True)
def csr_all_finite(weights):
    """Whether every weight is finite (the check a rule made by ``local_rule`` gets after its update)."""
    bad = 0
    for s in range(weights.shape[0]):
        v = weights[s]
        bad |= not (v - v == 0.0)
    return bad == 0
