"""CUDA kernels of the dense rate step (numba.cuda): drive, Jacobi, signals, rules, checks.

Each kernel is the GPU form of a CPU kernel of :mod:`neurosim.kernels.dense`
or :mod:`neurosim.kernels.plasticity` with the same per-element arithmetic;
the dot products are block-wide tree reductions in float64 (also for
float32 state) (one block per output
element, threads striding over the summed index, so reads are coalesced),
whose summation order differs from BLAS's, hence agreement to rounding
rather than bit for bit. Kernels are compiled lazily for the dtype of their
arrays, so float32 runs the same code in single precision.

Imported only by :mod:`neurosim.cuda.backend`, after
:func:`neurosim.cuda.require_cuda` succeeded.
"""

from __future__ import annotations

import math

from numba import cuda, float64

from neurosim.cuda import simulator
from neurosim.kernels.dense import GROWTH_FLOOR

#: "no failure" in status words
NEVER = 2**63 - 1
#: Jacobi's rounding floor of the non-contraction test (``kernels.dense.GROWTH_FLOOR``)
FLOOR = GROWTH_FLOOR

#: threads per block of the reductions (a power of two); small under the simulator, where
#: every thread is a Python thread
TPB = 4 if simulator() else 128
#: threads per block of the element-wise kernels, flat and two-dimensional (rows, columns); small
#: under the simulator for the same reason (the element-wise results do not depend on the block shape)
FLAT_TPB = 4 if simulator() else 128
GRID_TPB = (2, 4) if simulator() else (8, 32)


@cuda.jit(device=True, inline=True)
def _block_sum(buf, v):
    """Sum ``v`` over the block's threads through shared memory ``buf``; every thread gets the total."""
    t = cuda.threadIdx.x
    buf[t] = v
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    total = buf[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True, inline=True)
def _store_drive(out, b, i, sign, total, accumulate):
    """Thread 0 of the block writes ``out[b, i] (+)= sign * total``."""
    if cuda.threadIdx.x == 0:
        if accumulate:
            out[b, i] += sign * total
        else:
            out[b, i] = sign * total


@cuda.jit(device=True, inline=True)
def _store_jacobi(y_new, y, drive_, b, i, lateral_sign, eta, z):
    """Thread 0 of the block writes the Jacobi iterate ``y_new[b, i]`` from the lateral sum ``z`` (Eq. 17)."""
    if cuda.threadIdx.x == 0:
        y_new[b, i] = (1.0 - eta) * y[b, i] + eta * (drive_[b, i] + lateral_sign * z)


@cuda.jit(device=True, inline=True)
def _not_contracting(u_first, u_last, y2, n_iter, floor2):
    """``jacobi_relax``'s non-contraction test on the first and last squared updates and ``y2 = ||y||^2``."""
    if n_iter <= 1:
        return False
    if u_last == math.inf:
        return u_first < math.inf
    return u_last >= u_first and u_last > floor2 * (1.0 + y2)


@cuda.jit
def drive(out, pre, weights, sign, accumulate):
    """``out[b, i] (+)= sign * pre[b] . weights[i]``; block ``(i, b)`` (``synaptic_drive``)."""
    i, b = cuda.blockIdx.x, cuda.blockIdx.y
    buf = cuda.shared.array(TPB, dtype=float64)
    acc = 0.0
    for j in range(cuda.threadIdx.x, pre.shape[1], TPB):
        acc += pre[b, j] * weights[i, j]
    _store_drive(out, b, i, sign, _block_sum(buf, acc), accumulate)


@cuda.jit
def zero(out):
    """``out[...] = 0`` for a 2-D array; one thread per element."""
    b, i = cuda.grid(2)
    if b < out.shape[0] and i < out.shape[1]:
        out[b, i] = 0.0


@cuda.jit
def copy2(dst, src):
    """``dst[...] = src`` for 2-D arrays; one thread per element."""
    b, i = cuda.grid(2)
    if b < dst.shape[0] and i < dst.shape[1]:
        dst[b, i] = src[b, i]


@cuda.jit
def scaled(y, drive_, eta):
    """``y = eta * drive``: Jacobi's first iterate from ``y = 0`` (exact, as on the CPU)."""
    b, i = cuda.grid(2)
    if b < y.shape[0] and i < y.shape[1]:
        y[b, i] = eta * drive_[b, i]


@cuda.jit
def jacobi_iteration(y_new, y, drive_, lateral, lateral_sign, eta):
    """One weighted Jacobi iteration (paper 002, Eq. 17) into ``y_new``; block ``(i, b)``."""
    i, b = cuda.blockIdx.x, cuda.blockIdx.y
    buf = cuda.shared.array(TPB, dtype=float64)
    acc = 0.0
    if lateral_sign != 0.0:
        for j in range(cuda.threadIdx.x, y.shape[1], TPB):
            acc += lateral[i, j] * y[b, j]
    _store_jacobi(y_new, y, drive_, b, i, lateral_sign, eta, _block_sum(buf, acc))


@cuda.jit
def update_norms(norms, slot, y_new, y):
    """``norms[slot] = ||y_new - y||^2``, ``norms[slot + 1] = ||y_new||^2`` over the batch (one block)."""
    buf = cuda.shared.array(TPB, dtype=float64)
    n = y.shape[1]
    du = 0.0
    yy = 0.0
    for e in range(cuda.threadIdx.x, y.shape[0] * n, TPB):
        b, i = e // n, e % n
        d = y_new[b, i] - y[b, i]
        du += d * d
        yy += y_new[b, i] * y_new[b, i]
    du = _block_sum(buf, du)
    yy = _block_sum(buf, yy)
    if cuda.threadIdx.x == 0:
        norms[slot] = du
        norms[slot + 1] = yy


@cuda.jit
def contraction_test(norms, info, max_iter, floor2, status, step):
    """The non-contraction test of ``jacobi_relax`` on ``norms = [u_first, _, u_last, y2]``; one thread.

    Sets ``info[0]`` to ``max_iter`` or ``-max_iter`` and, on failure, the
    run's failure step ``status[1]`` (the smallest such step).
    """
    u_first, u_last, y2 = norms[0], norms[2], norms[3]
    bad = _not_contracting(u_first, u_last, y2, max_iter, floor2)
    info[0] = -max_iter if bad else max_iter
    if bad:
        cuda.atomic.min(status, 1, step)


@cuda.jit
def squared_norm(out, activity):
    """``out[b] = ||activity[b]||^2``; block ``b``."""
    b = cuda.blockIdx.x
    buf = cuda.shared.array(TPB, dtype=float64)
    acc = 0.0
    for j in range(cuda.threadIdx.x, activity.shape[1], TPB):
        acc += activity[b, j] * activity[b, j]
    total = _block_sum(buf, acc)
    if cuda.threadIdx.x == 0:
        out[b] = total


@cuda.jit
def cumulative_activity(mu, post, decay, alpha, signal):
    """``mu_i <- decay mu_i + sum_b (alpha s_b + y_bi^2)`` (Eq. 19/21/24, 26/28/30); thread ``i``."""
    i = cuda.grid(1)
    if i < mu.shape[0]:
        acc = decay * mu[i]
        for b in range(post.shape[0]):
            acc += alpha * signal[b] + post[b, i] * post[b, i]
        mu[i] = acc


@cuda.jit
def normalized_hebbian(weights, post, pre, mu, alpha, signal, lateral, mask, use_mask):
    """``W_ij += (sum_b y_bi x_bj - (sum_b alpha s_b + y_bi^2) W_ij) / mu_i``; thread ``(i, j)``."""
    i, j = cuda.grid(2)
    if i < weights.shape[0] and j < weights.shape[1]:
        decay = 0.0
        hebb = 0.0
        for b in range(post.shape[0]):
            decay += alpha * signal[b] + post[b, i] * post[b, i]
            hebb += post[b, i] * pre[b, j]
        v = weights[i, j] + (hebb - decay * weights[i, j]) * (1.0 / mu[i])
        if (use_mask and not mask[i, j]) or (lateral and i == j):
            v = 0.0
        weights[i, j] = v


@cuda.jit
def check_finite(a, status, code, step):
    """If an element of 2-D ``a`` is NaN/Inf, lower ``status[0]`` to ``step`` and ``status[2 + code]`` too."""
    b, i = cuda.grid(2)
    if b < a.shape[0] and i < a.shape[1]:
        v = a[b, i]
        if not (v - v == 0.0):
            cuda.atomic.min(status, 0, step)
            cuda.atomic.min(status, 2 + code, step)


@cuda.jit
def record(buf, row, a):
    """``buf[row] = a`` for 2-D ``a``; one thread per element."""
    b, i = cuda.grid(2)
    if b < a.shape[0] and i < a.shape[1]:
        buf[row, b, i] = a[b, i]


@cuda.jit
def sm_ensemble_chunk(X, W, M, mu, U, Y, Z, rec, rec_row, params, sig_kind, lateral, n_iter, zero_start, step0, status,
             stop_at):
    """Steps ``X.shape[1]`` of similarity-matching member ``blockIdx.x`` (:mod:`neurosim.cuda.ensemble`).

    ``params[e] = (eta, alpha_mu, decay, alpha_W, alpha_M)``; ``status[e]``
    receives ``(step, kind)`` of a failure (1 NaN/Inf, 2 Jacobi not
    contracting, 3 a non-finite input at ``stop_at[e]``), after which the
    member does nothing more. Arithmetic as in the CPU kernels, in order.
    """
    e = cuda.blockIdx.x
    t = cuda.threadIdx.x
    k, n = W.shape[1], W.shape[2]
    eta, a_mu, decay, a_w, a_m = params[e, 0], params[e, 1], params[e, 2], params[e, 3], params[e, 4]
    c = 1.0 - eta
    sh = cuda.shared.array(4, dtype=float64)
    for s in range(X.shape[1]):
        if status[e, 0] != NEVER:
            return
        if step0 + s + 1 >= stop_at[e]:  # a non-finite input: the member stops at this step
            if t == 0:
                status[e, 0] = step0 + s + 1
                status[e, 1] = 3
            return
        for i in range(t, k, TPB):  # drive u = W x
            acc = 0.0
            for j in range(n):
                acc += X[e, s, j] * W[e, i, j]
            U[e, i] = acc
        if t == 0 and sig_kind == 1:  # ||x||^2
            acc = 0.0
            for j in range(n):
                acc += X[e, s, j] * X[e, s, j]
            sh[0] = acc
        cuda.syncthreads()
        # Jacobi (paper 002, Eq. 17), fixed iterations
        first = 0
        if zero_start:
            for i in range(t, k, TPB):
                Y[e, i] = eta * U[e, i]
            first = 1
        cuda.syncthreads()
        if t == 0 and zero_start:
            acc = 0.0
            for i in range(k):
                acc += Y[e, i] * Y[e, i]
            sh[1] = acc  # u_first
            sh[2] = acc
        cuda.syncthreads()
        for it in range(first, n_iter):
            for i in range(t, k, TPB):
                z = 0.0
                if lateral:
                    for j in range(k):
                        z += M[e, i, j] * Y[e, j]
                Z[e, i] = c * Y[e, i] + eta * (U[e, i] + -1.0 * z)
            cuda.syncthreads()
            if t == 0 and (it == 0 or it == n_iter - 1):
                du = 0.0
                yy = 0.0
                for i in range(k):
                    d = Z[e, i] - Y[e, i]
                    du += d * d
                    yy += Z[e, i] * Z[e, i]
                if it == 0:
                    sh[1] = du
                sh[2] = du
                sh[3] = yy
            cuda.syncthreads()
            for i in range(t, k, TPB):
                Y[e, i] = Z[e, i]
            cuda.syncthreads()
        if t == 0:
            u_first, u_last, y2 = sh[1], sh[2], sh[3]
            bad = _not_contracting(u_first, u_last, y2, n_iter, FLOOR * FLOOR)
            finite = True
            acc = 0.0
            for i in range(k):
                v = Y[e, i]
                acc += v * v
                if not (v - v == 0.0):
                    finite = False
            if sig_kind == 2:  # ||y||^2
                sh[0] = acc
            elif sig_kind == 0:
                sh[0] = 1.0
            if not finite:
                status[e, 0] = step0 + s + 1
                status[e, 1] = 1
            elif bad:
                status[e, 0] = step0 + s + 1
                status[e, 1] = 2
        cuda.syncthreads()
        if status[e, 0] != NEVER:
            return
        sig = sh[0]
        for i in range(t, k, TPB):  # mu (Eq. 19/21/24 with forgetting)
            yi = Y[e, i]
            mu[e, i] = decay * mu[e, i] + (a_mu * sig + yi * yi)
        cuda.syncthreads()
        for idx in range(t, k * n, TPB):  # W (normalized Hebbian)
            i = idx // n
            j = idx - i * n
            yi = Y[e, i]
            dec = 0.0 + (a_w * sig + yi * yi)
            W[e, i, j] += (yi * X[e, s, j] - dec * W[e, i, j]) * (1.0 / mu[e, i])
        if lateral:
            for idx in range(t, k * k, TPB):
                i = idx // k
                j = idx - i * k
                yi = Y[e, i]
                dec = 0.0 + (a_m * sig + yi * yi)
                v = M[e, i, j] + (yi * Y[e, j] - dec * M[e, i, j]) * (1.0 / mu[e, i])
                M[e, i, j] = 0.0 if i == j else v
        row = rec_row[s]
        if row >= 0:
            for i in range(t, k, TPB):
                rec[e, row, i] = Y[e, i]
        cuda.syncthreads()


# -- sparse projections (compressed rows by post unit, neurosim.synapse_index) ---------------------------------
@cuda.jit
def csr_drive(out, pre, indptr, indices, weights, sign, accumulate):
    """``out[b, i] (+)= sign * sum_s weights[s] pre[b, indices[s]]`` over row ``i``; block ``(i, b)`` (``csr_drive``)."""
    i, b = cuda.blockIdx.x, cuda.blockIdx.y
    buf = cuda.shared.array(TPB, dtype=float64)
    acc = 0.0
    for s in range(indptr[i] + cuda.threadIdx.x, indptr[i + 1], TPB):
        acc += weights[s] * pre[b, indices[s]]
    _store_drive(out, b, i, sign, _block_sum(buf, acc), accumulate)


@cuda.jit
def csr_jacobi_iteration(y_new, y, drive_, indptr, indices, weights, lateral_sign, eta):
    """:func:`jacobi_iteration` with a sparse lateral projection; block ``(i, b)``."""
    i, b = cuda.blockIdx.x, cuda.blockIdx.y
    buf = cuda.shared.array(TPB, dtype=float64)
    acc = 0.0
    for s in range(indptr[i] + cuda.threadIdx.x, indptr[i + 1], TPB):
        acc += weights[s] * y[b, indices[s]]
    _store_jacobi(y_new, y, drive_, b, i, lateral_sign, eta, _block_sum(buf, acc))


@cuda.jit
def csr_hebbian(weights, indptr, indices, post, pre, rate, decay):
    """``w_s <- (1 - decay) w_s + rate * mean_b y_i x_j`` (``csr_hebbian``); block ``i``, threads over its synapses."""
    i = cuda.blockIdx.x
    batch = post.shape[0]
    scale = rate / batch
    for s in range(indptr[i] + cuda.threadIdx.x, indptr[i + 1], TPB):
        j = indices[s]
        hebb = 0.0
        for b in range(batch):
            hebb += post[b, i] * pre[b, j]
        weights[s] = (1.0 - decay) * weights[s] + scale * hebb


@cuda.jit
def csr_oja(weights, indptr, indices, post, pre, rate):
    """Oja's ``w_s += rate * mean_b y_i (x_j - y_i w_s)`` (``csr_oja``); block ``i``, threads over its synapses."""
    i = cuda.blockIdx.x
    batch = post.shape[0]
    scale = rate / batch
    yy = 0.0
    for b in range(batch):
        yy += post[b, i] * post[b, i]
    for s in range(indptr[i] + cuda.threadIdx.x, indptr[i + 1], TPB):
        j = indices[s]
        hebb = 0.0
        for b in range(batch):
            hebb += post[b, i] * pre[b, j]
        weights[s] = weights[s] + scale * (hebb - yy * weights[s])


@cuda.jit
def csr_normalized_hebbian(weights, indptr, indices, post, pre, mu, alpha, signal):
    """``w_s += (sum_b y_bi x_bj - (sum_b alpha s_b + y_bi^2) w_s) / mu_i`` (``csr_normalized_hebbian``); block ``i``."""
    i = cuda.blockIdx.x
    decay = 0.0
    for b in range(post.shape[0]):
        decay += alpha * signal[b] + post[b, i] * post[b, i]
    inv = 1.0 / mu[i]
    for s in range(indptr[i] + cuda.threadIdx.x, indptr[i + 1], TPB):
        j = indices[s]
        hebb = 0.0
        for b in range(post.shape[0]):
            hebb += post[b, i] * pre[b, j]
        weights[s] += (hebb - decay * weights[s]) * inv


@cuda.jit
def check_finite_flat(a, status, step):
    """If an element of 1-D ``a`` is NaN/Inf, lower ``status[0]`` to ``step`` (a rule's weights, tested as it wrote them)."""
    s = cuda.grid(1)
    if s < a.shape[0]:
        v = a[s]
        if not (v - v == 0.0):
            cuda.atomic.min(status, 0, step)
