"""Per-step kernels that run sparse encoders as population dynamics.

The dictionary is the weight matrix of the code population's feed-forward
projection (atoms are rows). Its Gram ``G = W W^T`` is cached and refreshed
only when the weights changed since the last step, so a fixed dictionary
costs one comparison per step instead of an ``O(m^2 n)`` product.

All-zero atoms (e.g. reached during learning) are inactive: their code is 0
and they are never selected. The Gram-based solvers do this by themselves
(a zero atom has zero correlation and a zero Gram row, so it never enters an
active set); ``k_winners_step`` masks them explicitly.
"""

import numpy as np
from numba import njit

from neurosim.kernels.dense import all_finite
from neurosim.kernels.feature_sign import feature_sign_codes, lambda_search_codes
from neurosim.kernels.greedy import k_winners_masked, nn_omp_codes, omp_codes

__all__ = ["refresh_gram", "gram", "correlations", "projections_representable", "feature_sign_step", "count_feature_sign_step", "omp_step",
           "nn_omp_step", "k_winners_step", "nonzero_rows", "normalize_rows"]


@njit(cache=True, nogil=True)
def gram(D, G):
    """``G = D D^T`` by the BLAS call :func:`refresh_gram` makes.

    The standalone encoders (and so ``SparseCode``'s NumPy path) use this
    instead of NumPy's ``D @ D.T``: NumPy computes that product with a
    symmetric rank-k update and its own BLAS, whose last bits differ, and
    dictionary learning amplifies a one-ulp difference in the Gram until the
    two paths disagree visibly (see ``docs/architecture.md``).
    """
    np.dot(D, D.T, G)


@njit(cache=True, nogil=True)
def correlations(X, D, C):
    """``C = X D^T`` by the BLAS call of the drive kernel (``kernels.dense.synaptic_drive``), as :func:`gram`."""
    np.dot(X, D.T, C)


@njit(cache=True, nogil=True)
def normalize_rows(W, mode, out):
    """``out``: the rows of ``W`` as an encoder codes with them (:mod:`neurosim.coding.normalization`).

    ``mode`` 0: a copy; 1: each row scaled to unit norm; 2: each row centred
    (its mean subtracted), then scaled to unit norm (paper 000, the authors'
    code). A row that cannot be scaled is all zeros in ``out``, an inactive
    atom: a zero row, and under centring a row constant up to rounding (its
    centred norm at most ``2 m^1.5 eps max|W_j|``, a bound on the residue a
    float mean leaves; scaling that residue up would make a meaningless atom).
    """
    k, m = W.shape
    for j in range(k):
        mean = 0.0
        big = 0.0
        if mode == 2:
            for f in range(m):
                mean += W[j, f]
                if abs(W[j, f]) > big:
                    big = abs(W[j, f])
            mean /= m
        ss = 0.0
        for f in range(m):
            v = W[j, f] - mean
            out[j, f] = v
            ss += v * v
        floor = 2.0 * m * np.sqrt(m) * 2.220446049250313e-16 * big  # 0 unless centring
        if mode == 0:
            for f in range(m):
                out[j, f] = W[j, f]
        elif ss > 0.0 and np.sqrt(ss) > floor:
            nrm = np.sqrt(ss)
            for f in range(m):
                out[j, f] = out[j, f] / nrm
        else:
            for f in range(m):
                out[j, f] = 0.0


@njit(cache=True, nogil=True)
def refresh_gram(G, W, W_seen, valid):
    """Recompute ``G = W W^T`` if ``W`` differs from ``W_seen`` (or ``valid[0] == 0``).

    Returns whether ``G`` is finite (tested when it is recomputed; an
    overflowing Gram is never cached as valid, so it is tested again).
    """
    same = valid[0] != 0
    if same:
        flat_w = W.ravel()
        flat_s = W_seen.ravel()
        for i in range(flat_w.size):
            if flat_w[i] != flat_s[i]:
                same = False
                break
    if not same:
        np.dot(W, W.T, G)
        if not all_finite(G):
            valid[0] = 0
            return False
        W_seen[:, :] = W
        valid[0] = 1
    return True


@njit(cache=True, nogil=True)
def projections_representable(G, C):
    """True when ``n_atoms max_{s,i} C[s, i]^2 / G[i, i]`` is finite (``G``, ``C`` finite, atoms with ``G_ii = 0`` skipped).

    ``C[s, i] / sqrt(G[i, i])`` is the length of sample ``s``'s projection on
    atom ``i``; the Gram-based solvers (feature-sign's line search and its
    objective, OMP's residual test) form sums over the atoms of such squared
    lengths. Where they overflow, the solvers stop on a "breakdown" with
    all-zero codes and dictionary learning goes on from them (issue 38: NODL
    fed inputs of 1e155 ended with all-zero atoms); the callers stop or
    refuse instead. Computed as a square of the ratio, so that neither
    ``C^2`` nor ``1 / G_ii`` overflows on its own.
    """
    k = G.shape[0]
    top = 0.0
    for i in range(k):
        g = G[i, i]
        if g > 0.0:
            r = 1.0 / np.sqrt(g)
            for s in range(C.shape[0]):
                v = abs(C[s, i]) * r
                if v > top:
                    top = v
    return top * top * k < np.inf


@njit(cache=True, nogil=True)
def _usable(G, C, W, W_seen, valid):
    """Refresh the Gram; True when it and the correlations ``C = x W^T`` are finite, and so are the squared
    projections the solvers form (:func:`projections_representable`).

    With an overflowing dictionary or drive the solvers cannot run; the step
    kernels then leave the codes untouched and return False, and the engine
    stops the run at that step (the NumPy path tests the same and stops alike).
    """
    return refresh_gram(G, W, W_seen, valid) and all_finite(C) and projections_representable(G, C)


@njit(cache=True, nogil=True)
def feature_sign_step(A, C, G, W, W_seen, valid, lam, warm, nonneg, max_iter, tol, info):
    """Codes by feature-sign search, warm-started from the previous step's codes if ``warm``.

    Returns False, codes untouched, when ``W W^T``, ``C`` or the squared projections overflow (:func:`_usable`).
    """
    if not _usable(G, C, W, W_seen, valid):
        return False
    info[0] = feature_sign_codes(G, C, lam, A, warm, nonneg, max_iter, tol)
    info[1] += info[0]  # samples not converged since the engine last reported
    return True


@njit(cache=True, nogil=True)
def count_feature_sign_step(A, C, G, W, W_seen, valid, n_nonzero, lams, nonneg, max_iter, tol, rtol_lambda,
                            max_bisect, status, info):
    """Codes with ``n_nonzero`` nonzeros each, lambda found by bisection (paper 000, Alg. 2).

    Returns False, codes untouched, when ``W W^T``, ``C`` or the squared projections overflow (:func:`_usable`).
    """
    if not _usable(G, C, W, W_seen, valid):
        return False
    info[0] = lambda_search_codes(G, C, n_nonzero, A, lams, nonneg, max_iter, tol, rtol_lambda, max_bisect, status)
    info[1] += info[0]  # samples not converged since the engine last reported
    return True


@njit(cache=True, nogil=True)
def omp_step(A, C, G, W, W_seen, valid, n_nonzero, status, info):
    """Codes by orthogonal matching pursuit with ``n_nonzero`` atoms.

    Returns False, codes untouched, when ``W W^T``, ``C`` or the squared projections overflow (:func:`_usable`).
    """
    if not _usable(G, C, W, W_seen, valid):
        return False
    info[0] = omp_codes(G, C, n_nonzero, A, status)
    info[1] += info[0]  # samples not converged since the engine last reported
    return True


@njit(cache=True, nogil=True)
def nn_omp_step(A, C, G, W, W_seen, valid, n_nonzero, status, info):
    """Codes by non-negative orthogonal matching pursuit with at most ``n_nonzero`` atoms (paper 004, Eq. 6).

    Returns False, codes untouched, when ``W W^T``, ``C`` or the squared projections overflow (:func:`_usable`).
    """
    if not _usable(G, C, W, W_seen, valid):
        return False
    info[0] = nn_omp_codes(G, C, n_nonzero, A, status)
    info[1] += info[0]  # samples not converged since the engine last reported
    return True


@njit(cache=True, nogil=True)
def nonzero_rows(W, active):
    """``active[i]``: row ``i`` of ``W`` has a nonzero entry (an all-zero atom is inactive)."""
    for i in range(W.shape[0]):
        nz = False
        for j in range(W.shape[1]):
            if W[i, j] != 0.0:
                nz = True
                break
        active[i] = nz


@njit(cache=True, nogil=True)
def k_winners_step(A, C, W, active, k, absolute, nonneg, info):
    """Codes by k winners take all on ``C = x W^T``; all-zero atoms (rows of ``W``) are inactive.

    Returns False, codes untouched, when ``C`` overflows. (The selection
    needs no Gram; a dictionary whose squared atom norms overflow is refused
    when the network is validated, as for the other methods.)
    """
    if not all_finite(C):
        return False
    nonzero_rows(W, active)
    k_winners_masked(C, k, A, absolute, nonneg, active)
    info[0] = 0
    return True
