"""Row-parallel kernels for large populations (every core of one machine).

The work of a dense step splits by rows of a weight matrix: the drive
``W x`` and the lateral product ``M y`` are one dot product per post unit,
and a local rule updates each post unit's row from that unit's activity
and the presynaptic activity. These kernels run those rows in numba's
thread pool (``prange``); :func:`neurosim.set_num_threads` sets how many
threads. Each row is computed by one thread with the same instructions,
whichever thread and however many threads there are, so the results do not
depend on the thread count at all; the rules' row updates are the same
expressions as the serial kernels', so those are bit-identical to them too.
The dot products are vectorized (reassociated) sums in a fixed order chosen
at compile time, so they differ from BLAS (the serial path) by rounding.

Components choose these kernels when planning a segment
(:func:`use_rows`, :func:`use_rule_rows`): only with more than one thread
and a matrix large enough that splitting it pays for waking the pool
(:data:`MIN_ROWS_WORK`, :data:`MIN_RULE_WORK`); otherwise they keep the
serial kernels, so small networks run exactly as on one thread. The rules'
row kernels are in :mod:`neurosim.kernels.plasticity`
(``normalized_hebbian_rows``, ``hebbian_rows``, ``oja_rows``).
"""

from __future__ import annotations

import numba
from numba import njit, prange

__all__ = ["use_rows", "use_rule_rows", "MIN_ROWS_WORK", "MIN_RULE_WORK", "MAX_ROWS_BATCH", "dot", "rows_product", "drive_rows"]

#: Smallest weight matrix (rows x columns) a row-parallel product is used for. One launch of
#: numba's pool costs some microseconds; below this BLAS on one thread is as fast (measured:
#: equal at 256 x 256, twice as fast row-parallel at 512 x 512 on two threads).
MIN_ROWS_WORK = 1 << 18
#: Smallest weight matrix a row-parallel rule update is used for (an update reads and writes
#: every weight, so it pays earlier: 1.4x at 256 x 256 on two threads, even at 128 x 128).
MIN_RULE_WORK = 1 << 16


#: Largest batch the row-parallel products take: above it a product is a matrix-matrix product,
#: which (multi-threaded) BLAS does better than one dot product per row and sample.
MAX_ROWS_BATCH = 4


def use_rows(n_rows: int, n_cols: int, batch: int = 1) -> bool:
    """Whether a product with an ``n_rows x n_cols`` matrix should run row-parallel in this thread now.

    ``batch``: the rows of activity it multiplies.
    """
    return numba.get_num_threads() > 1 and n_rows * n_cols >= MIN_ROWS_WORK and batch <= MAX_ROWS_BATCH


def use_rule_rows(n_rows: int, n_cols: int) -> bool:
    """Whether a rule's update of an ``n_rows x n_cols`` weight matrix should run row-parallel now (any batch)."""
    return numba.get_num_threads() > 1 and n_rows * n_cols >= MIN_RULE_WORK


@njit(cache=True, nogil=True, inline="always")
def dot(a, b):
    """``sum_j a[j] b[j]``; vectorized where the caller is compiled with ``fastmath={"reassoc"}``.

    numba inlines it into its callers, which then compile it with their own
    flags: the summation order is fixed by the compiled code, not by threads.
    """
    acc = 0.0
    for j in range(a.shape[0]):
        acc += a[j] * b[j]
    return acc


@njit(cache=True, nogil=True, parallel=True, fastmath={"reassoc"})
def rows_product(out, a, weights):
    """``out = a @ weights.T`` (a batch of rows times a matrix), one post unit's row per task.

    Parameters
    ----------
    out : (batch, n_post) array, written.
    a : (batch, n_pre) array.
    weights : (n_post, n_pre) array.
    """
    batch = a.shape[0]
    for i in prange(weights.shape[0]):
        row = weights[i]
        for b in range(batch):
            out[b, i] = dot(row, a[b])


@njit(cache=True, nogil=True, parallel=True, fastmath={"reassoc"})
def drive_rows(out, pre, weights, sign, accumulate):
    """``out (+)= sign * pre @ weights.T``, row-parallel (the drive of :func:`~neurosim.kernels.dense.synaptic_drive`)."""
    batch = pre.shape[0]
    for i in prange(weights.shape[0]):
        row = weights[i]
        for b in range(batch):
            v = sign * dot(row, pre[b])
            if accumulate:
                out[b, i] += v
            else:
                out[b, i] = v
