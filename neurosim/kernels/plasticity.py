"""Numba kernels for local plasticity rules (pure functions on arrays).

Each rule has a serial kernel and a row-parallel one (``*_rows``, numba's
thread pool over post units; chosen by the rule for large projections when
more than one thread is set, :mod:`neurosim.kernels.parallel`). The row
kernels repeat the serial kernels' per-element arithmetic in the same order,
so both give the same bits (``tests/engine/test_threads.py``); the serial
ones keep their loop-invariant work outside the row loop, which a shared
per-row function would move inside it (measured: it halved the speed of a
64 x 8 network).
"""

from numba import njit, prange

from neurosim.kernels._build import INLINE

__all__ = ["cumulative_activity", "normalized_hebbian", "squared_norm", "hebbian", "oja", "enforce_structure_all",
           "normalized_hebbian_rows", "hebbian_rows", "oja_rows"]


@njit(cache=True, nogil=True, inline=INLINE)
def squared_norm(out, activity):
    """``out[b] = ||activity[b]||^2``: the global scalar signal of paper 002, Eq. 21/24."""
    batch, n = activity.shape
    for b in range(batch):
        acc = 0.0
        for i in range(n):
            acc += activity[b, i] * activity[b, i]
        out[b] = acc


@njit(cache=True, nogil=True, inline=INLINE)
def cumulative_activity(mu, post, decay, alpha, signal):
    """``mu_i <- decay * mu_i + sum_b (alpha * s_b + y_bi^2)`` (paper 002, Eq. 19/21/24; forgetting Eq. 26/28/30 with decay = beta^2)."""
    batch, n = post.shape
    for i in range(n):
        acc = decay * mu[i]
        for b in range(batch):
            acc += alpha * signal[b] + post[b, i] * post[b, i]
        mu[i] = acc


@njit(cache=True, nogil=True, inline=INLINE)
def enforce_structure(weights, i, lateral, mask, use_mask):
    """Zero row ``i``'s absent synapses: the masked-out ones and, for a lateral projection, the self-synapse.

    Applied after a row's update rather than tested per element, so that the
    update loops stay branch-free and vectorize.
    """
    if use_mask:
        for j in range(weights.shape[1]):
            if not mask[i, j]:
                weights[i, j] = 0.0
    if lateral:
        weights[i, i] = 0.0


@njit(cache=True, nogil=True, inline=INLINE)
def normalized_hebbian(weights, post, pre, mu, alpha, signal, lateral, mask, use_mask):
    """Similarity-matching update ``W_ij += (y_i x_j - (alpha s + y_i^2) W_ij) / mu_i``.

    Paper 002, Eq. 19 (s = 1), Eq. 21 (s = ||x||^2), Eq. 24 (s = ||y||^2) and
    their forgetting forms Eq. 26/28/30, which differ only in ``mu``. A batch
    sums the Hebbian and decay terms over its samples, the minibatch form of
    the same sufficient statistics. ``lateral`` keeps the diagonal at zero.

    Unlike :func:`hebbian` it does not report the finiteness of what it
    writes (that test would cost a third of the update). It is a leaky
    average rather than a growth rule: ``mu_i`` includes this step's
    ``alpha s + y_i^2``, so the decay factor ``1 - (alpha s + y_i^2) / mu_i``
    lies in [0, 1), and for ``||x||^2`` (Eq. 21) ``|y_i x_j| / mu_i <=
    1 / (2 sqrt(alpha))`` by AM-GM. Its weights therefore turn non-finite in
    practice only through a non-finite ``y``, ``mu`` or input, which the
    engine tests at the step it happens; weights are also tested at the end
    of every segment.
    """
    batch, n_post = post.shape
    n_pre = pre.shape[1]
    if batch == 1:
        # one sample: the Hebbian term is a rank-1 row update that vectorizes
        a_s = alpha * signal[0]
        x = pre[0]
        for i in range(n_post):
            yi = post[0, i]
            decay = 0.0 + (a_s + yi * yi)  # as the batch sum below, so both branches give equal numbers
            inv = 1.0 / mu[i]
            row = weights[i]
            for j in range(n_pre):
                row[j] += (yi * x[j] - decay * row[j]) * inv
            enforce_structure(weights, i, lateral, mask, use_mask)
        return
    for i in range(n_post):
        inv = 1.0 / mu[i]
        decay = 0.0
        for b in range(batch):
            decay += alpha * signal[b] + post[b, i] * post[b, i]
        for j in range(n_pre):
            hebb = 0.0
            for b in range(batch):
                hebb += post[b, i] * pre[b, j]
            weights[i, j] += (hebb - decay * weights[i, j]) * inv
        enforce_structure(weights, i, lateral, mask, use_mask)


@njit(cache=True, nogil=True, inline="always")
def squared_activity(post, i):
    """``sum_b y_bi^2``: Oja's decay of unit ``i``'s weights (the batch's sum, in sample order)."""
    yy = 0.0
    for b in range(post.shape[0]):
        yy += post[b, i] * post[b, i]
    return yy


@njit(cache=True, nogil=True, inline="always")
def _update_weight(weights, i, j, post, pre, scale, decay, yy, oja):
    """Write ``W_ij``'s Hebbian (``decay``) or Oja (``oja``, ``yy``) update; return whether it is not finite."""
    hebb = 0.0
    for b in range(post.shape[0]):
        hebb += post[b, i] * pre[b, j]
    if oja:
        v = weights[i, j] + scale * (hebb - yy * weights[i, j])
    else:
        v = (1.0 - decay) * weights[i, j] + scale * hebb
    weights[i, j] = v
    return not (v - v == 0.0)


# The Hebbian rule and Oja's differ in the weight update and Oja's per-row decay; one body serves both (``oja``,
# a constant where the kernels below call it: numba prunes the other rule's branches, so each compiles to its own
# loops). It keeps the loop-invariant work outside the row loop (module docstring).
@njit(cache=True, nogil=True, inline="always")
def _hebbian_or_oja(weights, post, pre, rate, decay, oja, lateral, mask, use_mask):
    """:func:`oja` (``oja``) or :func:`hebbian` (``decay`` read by it alone); returns whether every weight is finite."""
    batch, n_post = post.shape
    n_pre = pre.shape[1]
    scale = rate / batch
    bad = 0
    for i in range(n_post):
        yy = squared_activity(post, i) if oja else 0.0
        for j in range(n_pre):
            bad |= _update_weight(weights, i, j, post, pre, scale, decay, yy, oja)
        enforce_structure(weights, i, lateral, mask, use_mask)
    return bad == 0


@njit(cache=True, nogil=True)
def hebbian(weights, post, pre, rate, decay, lateral, mask, use_mask):
    """``W <- (1 - decay) W + rate * mean_b(y_b x_b^T)``: plain Hebbian learning with weight decay.

    Returns whether every updated weight is finite, tested as it is written:
    this rule can run away (no normalisation), and a segment then stops at
    the step its weights overflow rather than a step later in the activity.
    """
    return _hebbian_or_oja(weights, post, pre, rate, decay, False, lateral, mask, use_mask)


@njit(cache=True, nogil=True)
def oja(weights, post, pre, rate, lateral, mask, use_mask):
    """Oja's rule ``W_ij += rate * mean_b y_i (x_j - y_i W_ij)``.

    Returns whether every updated weight is finite, tested as it is written:
    this rule can run away (no normalisation), and a segment then stops at
    the step its weights overflow rather than a step later in the activity.
    """
    return _hebbian_or_oja(weights, post, pre, rate, 0.0, True, lateral, mask, use_mask)


@njit(cache=True, nogil=True)
def enforce_structure_all(weights, lateral, mask, use_mask):
    """Zero every absent synapse (masked out; a lateral projection's diagonal); return whether all weights are finite.

    Runs after a rule written as one plain function (``neurosim.rules.local_rule``),
    which need not know the projection's structure.
    """
    n_post, n_pre = weights.shape
    bad = 0
    for i in range(n_post):
        enforce_structure(weights, i, lateral, mask, use_mask)
        for j in range(n_pre):
            v = weights[i, j]
            bad |= not (v - v == 0.0)
    return bad == 0


@njit(cache=True, nogil=True, parallel=True)
def normalized_hebbian_rows(weights, post, pre, mu, alpha, signal, lateral, mask, use_mask):
    """:func:`normalized_hebbian` with its rows in numba's thread pool: the same bits, any thread count."""
    if post.shape[0] == 1:
        for i in prange(post.shape[1]):
            _normalized_hebbian_row1(weights, i, post, pre, mu, alpha, signal, lateral, mask, use_mask)
    else:
        for i in prange(post.shape[1]):
            _normalized_hebbian_row(weights, i, post, pre, mu, alpha, signal, lateral, mask, use_mask)


@njit(cache=True, nogil=True, inline=INLINE)
def _normalized_hebbian_row1(weights, i, post, pre, mu, alpha, signal, lateral, mask, use_mask):
    """Row ``i`` of :func:`normalized_hebbian` for one sample (its arithmetic, in its order)."""
    yi = post[0, i]
    decay = 0.0 + (alpha * signal[0] + yi * yi)  # as the batch sum below, so both forms give equal numbers
    inv = 1.0 / mu[i]
    x = pre[0]
    row = weights[i]
    for j in range(x.shape[0]):
        row[j] += (yi * x[j] - decay * row[j]) * inv
    enforce_structure(weights, i, lateral, mask, use_mask)


@njit(cache=True, nogil=True, inline=INLINE)
def _normalized_hebbian_row(weights, i, post, pre, mu, alpha, signal, lateral, mask, use_mask):
    """Row ``i`` of :func:`normalized_hebbian` for a batch (its arithmetic, in its order)."""
    batch = post.shape[0]
    inv = 1.0 / mu[i]
    decay = 0.0
    for b in range(batch):
        decay += alpha * signal[b] + post[b, i] * post[b, i]
    for j in range(pre.shape[1]):
        hebb = 0.0
        for b in range(batch):
            hebb += post[b, i] * pre[b, j]
        weights[i, j] += (hebb - decay * weights[i, j]) * inv
    enforce_structure(weights, i, lateral, mask, use_mask)


@njit(cache=True, nogil=True, parallel=True)
def hebbian_rows(weights, post, pre, rate, decay, lateral, mask, use_mask):
    """:func:`hebbian` with its rows in numba's thread pool: the same bits, any thread count."""
    bad = 0
    for i in prange(post.shape[1]):
        bad += _hebbian_or_oja_row(weights, i, post, pre, rate, decay, False, lateral, mask, use_mask)
    return bad == 0


@njit(cache=True, nogil=True, parallel=True)
def oja_rows(weights, post, pre, rate, lateral, mask, use_mask):
    """:func:`oja` with its rows in numba's thread pool: the same bits, any thread count."""
    bad = 0
    for i in prange(post.shape[1]):
        bad += _hebbian_or_oja_row(weights, i, post, pre, rate, 0.0, True, lateral, mask, use_mask)
    return bad == 0


@njit(cache=True, nogil=True, inline=INLINE)
def _hebbian_or_oja_row(weights, i, post, pre, rate, decay, oja, lateral, mask, use_mask):
    """Row ``i`` of :func:`oja` (``oja``) or :func:`hebbian`; returns 1 if a written weight is not finite."""
    batch = post.shape[0]
    scale = rate / batch
    yy = squared_activity(post, i) if oja else 0.0
    bad = 0
    for j in range(pre.shape[1]):
        bad |= _update_weight(weights, i, j, post, pre, scale, decay, yy, oja)
    enforce_structure(weights, i, lateral, mask, use_mask)
    return bad
