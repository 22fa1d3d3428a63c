"""Numba kernels of online dictionary learning with neurogenesis (paper 000; Mairal et al. 2009).

The dictionary is held as a projection's weights ``W`` of shape
``(n_atoms, n_features)``: atom ``j`` is row ``W[j]`` (the paper's column
``d_j`` of ``D = W^T``). The code population's activity ``a`` is
``(batch, n_atoms)``, the input ``x`` is ``(batch, n_features)``.
"""

import numpy as np
from numba import njit, prange

from neurosim.kernels.dense import all_finite

__all__ = ["reconstruction_accuracy", "memory_update", "memory_update_rows", "block_coordinate_descent", "prox_count",
           "first_at_most", "any_zero_row"]


@njit(cache=True, nogil=True)
def _pearson(x, xh):
    n = x.size
    mx = 0.0
    mh = 0.0
    for i in range(n):
        mx += x[i]
        mh += xh[i]
    mx /= n
    mh /= n
    sxy = 0.0
    sxx = 0.0
    shh = 0.0
    for i in range(n):
        dx = x[i] - mx
        dh = xh[i] - mh
        sxy += dx * dh
        sxx += dx * dx
        shh += dh * dh
    if sxx == 0.0 or shh == 0.0:
        return np.nan  # undefined for a constant sample or a constant reconstruction
    # the product of the two roots, not the root of the product: sxx shh overflows for samples of ~1e77 and
    # underflows to 0 (a division by zero, raised inside the kernel) for ~1e-77, where each factor is fine
    return sxy / (np.sqrt(sxx) * np.sqrt(shh))


@njit(cache=True, nogil=True)
def _ranks(v):
    """Average ranks (ties share the mean of their positions), as ``scipy.stats.rankdata``."""
    n = v.size
    order = np.argsort(v, kind="mergesort")
    r = np.empty(n)
    i = 0
    while i < n:
        j = i
        while j + 1 < n and v[order[j + 1]] == v[order[i]]:
            j += 1
        mean = 0.5 * (i + j) + 1.0
        for k in range(i, j + 1):
            r[order[k]] = mean
        i = j + 1
    return r


@njit(cache=True, nogil=True)
def reconstruction_accuracy(out, x, a, w, spearman, recon):
    """``out[0]``: mean over the batch of the correlation between ``x_b`` and its reconstruction ``a_b W``.

    Pearson (paper 000, Sec. 2, ``p_c``) or Spearman (``spearman``; the
    authors' released code). Samples whose correlation is undefined (a
    constant sample or reconstruction, e.g. an all-zero code) count as 0:
    such a sample is not represented at all. ``out[1]`` is the number of those
    samples. ``recon`` is a workspace of shape ``(n_features,)``.
    """
    batch, n_atoms = a.shape
    n_features = x.shape[1]
    total = 0.0
    undefined = 0
    for b in range(batch):
        for f in range(n_features):
            recon[f] = 0.0
        for j in range(n_atoms):
            c = a[b, j]
            if c != 0.0:
                for f in range(n_features):
                    recon[f] += c * w[j, f]
        if spearman:
            r = _pearson(_ranks(x[b]), _ranks(recon))
        else:
            r = _pearson(x[b], recon)
        if r != r:
            undefined += 1
        else:
            total += r
    out[0] = total / batch
    out[1] = undefined


@njit(cache=True, nogil=True, inline="always")
def _decay_atom(A, B, i, decay):
    """Scale atom ``i``'s memory (rows ``i`` of ``A`` and ``B``) by ``decay``."""
    for j in range(A.shape[1]):
        A[i, j] *= decay
    for f in range(B.shape[1]):
        B[i, f] *= decay


@njit(cache=True, nogil=True, inline="always")
def _add_sample(A, B, a, x, b, i):
    """Add sample ``b``'s terms to atom ``i``'s memory (nothing when its code entry is 0)."""
    ai = a[b, i]
    if ai == 0.0:
        return
    for j in range(A.shape[1]):
        A[i, j] += ai * a[b, j]
    for f in range(B.shape[1]):
        B[i, f] += ai * x[b, f]


@njit(cache=True, nogil=True)
def memory_update(A, B, a, x, decay):
    """``A <- decay A + sum_b a_b a_b^T``, ``B <- decay B + sum_b a_b x_b^T`` (paper 000, Alg. 1 step 11).

    ``B`` is stored like the weights, ``(n_atoms, n_features)``: row ``j`` is
    the paper's column ``b_j``.
    """
    # Sample-major with the inner loops over contiguous rows, skipping zero code entries: the
    # sparse codes make this ~nnz/k of the dense work. Each entry still receives its terms in
    # sample order after the decay, so the sums are those of the dense loops (a skipped
    # term is a +-0 product of finite numbers).
    batch, k = a.shape
    if decay != 1.0:
        for i in range(k):
            _decay_atom(A, B, i, decay)
    for b in range(batch):
        for i in range(k):
            _add_sample(A, B, a, x, b, i)


@njit(cache=True, nogil=True, parallel=True)
def memory_update_rows(A, B, a, x, decay):
    """:func:`memory_update` with the atoms (rows of ``A`` and ``B``) in numba's thread pool.

    Each entry gets the decay, then its sample terms in sample order, as in
    the serial kernel: the same bits, whatever the thread count.
    """
    batch, k = a.shape
    for i in prange(k):
        if decay != 1.0:
            _decay_atom(A, B, i, decay)
        for b in range(batch):
            _add_sample(A, B, a, x, b, i)


@njit(cache=True, nogil=True)
def prox_count(u, beta, eps_lambda, out):
    """Soft-threshold ``u`` so that (about) ``beta`` entries stay nonzero: paper 000, Alg. 2.

    Binary search of the threshold ``lambda`` on ``[0, max|u|]`` until the
    count of nonzeros of ``(|u| - lambda)_+`` equals ``beta`` (the paper's
    ``eps_beta = 0``) or the interval's relative width is below
    ``eps_lambda``, or the interval can no longer be halved in floating
    point (an ``eps_lambda`` below rounding, ~1.1e-16, with a count no
    threshold gives would otherwise loop forever); then ``out = sign(u)
    (|u| - lambda)_+``. With ``beta >= len(u)`` (or more nonzeros wanted
    than ``u`` has) ``out = u``.
    """
    n = u.size
    nnz_u = 0
    hi = 0.0
    for i in range(n):
        v = abs(u[i])
        if v > 0.0:
            nnz_u += 1
        if v > hi:
            hi = v
    if beta >= nnz_u:
        for i in range(n):
            out[i] = u[i]
        return 0.0
    lo = 0.0
    lam = 0.5 * (lo + hi)
    while True:
        lam = 0.5 * (lo + hi)
        count = 0
        for i in range(n):
            if abs(u[i]) > lam:
                count += 1
        if count == beta or (hi - lo) / hi < eps_lambda or not (lo < lam < hi):
            break
        if count > beta:
            lo = lam
        else:
            hi = lam
    for i in range(n):
        v = abs(u[i]) - lam
        out[i] = np.sign(u[i]) * v if v > 0.0 else 0.0
    return lam


#: Atoms per block of :func:`block_coordinate_descent`'s BLAS product.
BCD_BLOCK = 32


@njit(cache=True, nogil=True)
def block_coordinate_descent(w, A, B, lambda_g, beta_d, tol, max_sweeps, eps_lambda, unused_zero, u, v, info):
    """Dictionary update of paper 000, Alg. 1 steps 13-19 (Mairal et al. 2009, Alg. 2, with two proximal steps).

    For each atom ``j`` with ``A_jj > 0``::

        u_j = (b_j - sum_k a_jk d_k) / a_jj + d_j         (step 14)
        v_j = prox_count(u_j, beta_d)                      (step 15, only if beta_d > 0)
        w_j = v_j (1 - lambda_g / ||v_j||)_+               (step 16: group sparsity, "death")
        d_j = w_j / max(1, ||w_j||)                        (step 17)

    Sweeps repeat until ``||D_new - D_old||_F <= tol ||D_old||_F`` or
    ``max_sweeps`` (exactly ``max_sweeps`` when ``tol < 0``: no tolerance).
    An atom with ``A_jj == 0`` has never been used; step 14 is undefined for
    it. By default (``unused_zero`` False) ``u_j = d_j`` (no data term) and
    only steps 15-17 act: ODL leaves it as it is, while the group shrink
    wears it down by ``lambda_g`` per sweep until it dies -- the paper's
    "dead elements are implicitly removed via group sparsity". With
    ``unused_zero`` (the authors' code, which divides by ``1e-100`` instead
    of ``A_jj``: ``b_j`` and ``a_j`` are 0, so ``u_j = 0``) the atom becomes
    0. Returns whether every weight is finite; ``info[0]`` = sweeps run,
    ``info[1]`` += 1 if the cap was hit before the tolerance.
    """
    k, m = w.shape
    # Blocked Gauss-Seidel: the data term sum_i a_ji d_i of a block of BCD_BLOCK atoms comes from one
    # BLAS product R = A[block] W at the block's start (atoms before the block already new, the block's
    # and later ones old), and each atom adds the changes of the block's atoms updated before it:
    # sum_i a_ji d_i = R_j + sum_{j0 <= i < j} a_ji delta_i. The same sequential sweep as one atom at
    # a time (up to rounding), with its O(k^2 m) part in BLAS-3 instead of k passes over W.
    nb = min(BCD_BLOCK, k)
    R = np.empty((nb, m))
    delta = np.empty((nb, m))
    j0 = 0
    for sweep in range(max_sweeps):
        change = 0.0
        norm = 0.0
        for j in range(k):
            if j % nb == 0:
                j0 = j
                np.dot(A[j0:min(j0 + nb, k)], w, R[: min(nb, k - j0)])
            ajj = A[j, j]
            if ajj > 0.0:
                for f in range(m):
                    u[f] = B[j, f] - R[j - j0, f]
                for i in range(j0, j):
                    aji = A[j, i]
                    if aji == 0.0:
                        continue
                    for f in range(m):
                        u[f] -= aji * delta[i - j0, f]
                for f in range(m):
                    u[f] = u[f] / ajj + w[j, f]
            elif unused_zero:
                # the authors' code: (b_j - D a_j + a_jj d_j) / 1e-100 with b_j = a_j = 0
                for f in range(m):
                    u[f] = 0.0
            else:
                # never used: no data term, so only the proximal steps act (a group shrink wears it down)
                for f in range(m):
                    u[f] = w[j, f]
            if beta_d > 0:
                prox_count(u, beta_d, eps_lambda, v)
            else:
                for f in range(m):
                    v[f] = u[f]
            nv = 0.0
            for f in range(m):
                nv += v[f] * v[f]
            nv = np.sqrt(nv)
            shrink = 1.0 - lambda_g / nv if nv > 0.0 else 0.0
            if shrink < 0.0:
                shrink = 0.0
            nw = shrink * nv
            scale = shrink / max(1.0, nw)
            for f in range(m):
                new = v[f] * scale
                d = new - w[j, f]
                delta[j - j0, f] = d
                change += d * d
                norm += w[j, f] * w[j, f]
                w[j, f] = new
        info[0] = sweep + 1
        if tol >= 0.0 and change <= tol * tol * norm:
            break
    else:
        if tol >= 0.0:
            info[1] += 1
    return all_finite(w)


@njit(cache=True, nogil=True)
def first_at_most(a, threshold):
    """True when ``a[0] <= threshold``: e.g. the batch's reconstruction accuracy at or below gamma (Alg. 1 step 5)."""
    return a[0] <= threshold


@njit(cache=True, nogil=True)
def any_zero_row(w):
    """True when some row of ``w`` is all zeros: a dictionary element killed by the group-sparsity shrink."""
    k, m = w.shape
    for j in range(k):
        zero = True
        for f in range(m):
            if w[j, f] != 0.0:
                zero = False
                break
        if zero:
            return True
    return False
