"""Greedy encoders as numba kernels: Gram-based OMP and k winners (k-Sparse).

Layout as in ``neurosim.kernels.feature_sign``: ``G = D D^T`` of shape
(n_atoms, n_atoms), ``C = X D^T`` of shape (n_samples, n_atoms), codes ``A``
of shape (n_samples, n_atoms) written in place.

OMP follows scikit-learn's ``orthogonal_mp_gram`` with ``n_nonzero_coefs``
(``sklearn.linear_model._omp._gram_omp``): select the atom with the largest
absolute correlation with the residual, ``alpha = c - G[:, S] gamma``,
extend the Cholesky factor of ``G_SS`` by one row, re-solve
``G_SS gamma = c_S`` and stop after ``n_nonzero`` atoms. Differences, all
confined to degenerate inputs: ties are broken by the lowest atom index
(scikit-learn's argmax runs over its internally swapped order), and an atom
is "dependent" when its squared distance to the span of the selected atoms
is below ``1e-10`` of its squared norm (scikit-learn uses an absolute
machine epsilon, which lets exactly duplicated atoms through with a
garbage pivot), and the "negligible correlation" stop is relative: the
search stops when ``max|alpha|^2 <= eps * max|c|^2`` (``c = D x``, the
initial correlations) instead of scikit-learn's absolute ``< eps``, so the
codes are scale-invariant (``omp(s X, t D) = s/t omp(X, D)`` for any
``s, t > 0``) and small-scale signals are not silently coded as zero.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["OMP_OK", "OMP_EXACT", "OMP_DEPENDENT", "omp_codes", "k_winners_codes", "k_winners_masked"]

OMP_OK = 0
# Residual orthogonal to every remaining atom before n_nonzero were chosen:
# the signal is represented exactly by fewer atoms (not an error).
OMP_EXACT = 1
# The best next atom is linearly dependent on the chosen ones.
OMP_DEPENDENT = 2

_DEP_RTOL = 1e-10


@njit(cache=True)
def _omp_one(G, c, n_nonzero, a, L, act, chosen, alpha, gamma):
    n = G.shape[0]
    eps = np.finfo(np.float64).eps
    for i in range(n):
        a[i] = 0.0
        alpha[i] = c[i]
        chosen[i] = False
    # Scale-relative threshold for the "negligible correlation" stop: the largest
    # initial correlation scales like ||x|| ||d||, as does every later alpha.
    cmax = 0.0
    for i in range(n):
        v = abs(c[i])
        if v > cmax:
            cmax = v
    thresh = eps * cmax * cmax
    k = 0
    status = OMP_OK
    while k < n_nonzero:
        best = 0
        bv = -1.0
        for i in range(n):
            v = abs(alpha[i])
            if v > bv:
                bv = v
                best = i
        # scikit-learn's stopping rule made scale-relative: the maximal
        # correlation sits on an already chosen atom (whose correlations are
        # zero up to rounding) or is negligible relative to the initial ones
        # (``<=`` so that an all-zero correlation vector stops at once).
        if chosen[best] or bv * bv <= thresh:
            status = OMP_EXACT
            break
        for m in range(k):
            s = G[best, act[m]]
            for p in range(m):
                s -= L[m, p] * L[k, p]
            L[k, m] = s / L[m, m]
        dd = G[best, best]
        for p in range(k):
            dd -= L[k, p] * L[k, p]
        if dd <= _DEP_RTOL * G[best, best]:
            status = OMP_DEPENDENT
            break
        L[k, k] = np.sqrt(dd)
        act[k] = best
        chosen[best] = True
        k += 1
        for m in range(k):
            s = c[act[m]]
            for p in range(m):
                s -= L[m, p] * gamma[p]
            gamma[m] = s / L[m, m]
        for m in range(k - 1, -1, -1):
            gamma[m] /= L[m, m]
            gm = gamma[m]
            for p in range(m):
                gamma[p] -= L[m, p] * gm
        for i in range(n):
            alpha[i] = c[i]
        for m in range(k):
            gm = gamma[m]
            row = act[m]
            for i in range(n):
                alpha[i] -= G[row, i] * gm
    for m in range(k):
        a[act[m]] = gamma[m]
    return status


@njit(cache=True)
def omp_codes(G, C, n_nonzero, A, status):
    """Orthogonal matching pursuit on a batch sharing one Gram, in place.

    Parameters
    ----------
    G : float64 (n_atoms, n_atoms)
    C : float64 (n_samples, n_atoms)
    n_nonzero : int
        Atoms to select per sample, ``1 <= n_nonzero <= n_atoms``.
    A : float64 (n_samples, n_atoms)
        Overwritten with the codes (no warm start: OMP is path dependent).
    status : int64 (n_samples,)
        Receives ``OMP_OK``, ``OMP_EXACT`` or ``OMP_DEPENDENT`` per sample.

    Returns
    -------
    int
        Number of samples with ``OMP_DEPENDENT``.
    """
    n = G.shape[0]
    kk = min(n_nonzero, n)
    L = np.empty((kk + 1, kk + 1))
    act = np.empty(kk + 1, dtype=np.int64)
    chosen = np.empty(n, dtype=np.bool_)
    alpha = np.empty(n)
    gamma = np.empty(kk + 1)
    failed = 0
    for s in range(C.shape[0]):
        st = _omp_one(G, C[s], kk, A[s], L, act, chosen, alpha, gamma)
        status[s] = st
        if st == OMP_DEPENDENT:
            failed += 1
    return failed


@njit(cache=True)
def k_winners_codes(C, k, A, absolute, nonneg):
    """k winners take all (k-Sparse), in place.

    Keeps, per row of ``C = X D^T``, the ``k`` entries with the largest score
    and zeroes the rest (Tsuchida & Cottrell 2015, Eq. 7, after Makhzani &
    Frey 2013). The score is ``|c|`` if ``absolute`` else ``c``; with
    ``nonneg`` the score is ``c`` (``absolute`` has no effect) and winners
    with a non-positive value are silent, so a row may have fewer than ``k``
    nonzeros. Equal scores are ranked by lowest index.

    The top-k list is kept sorted by insertion: O(n_atoms * k) in the worst
    case but usually a single comparison per entry, with no per-row
    allocation.
    """
    return k_winners_masked(C, k, A, absolute, nonneg, np.ones(C.shape[1], dtype=np.bool_))


@njit(cache=True)
def k_winners_masked(C, k, A, absolute, nonneg, active):
    """:func:`k_winners_codes` among the atoms with ``active[i]`` only; the others get 0 and never win."""
    n = C.shape[1]
    kk = min(k, n)
    top = np.empty(max(kk, 1), dtype=np.int64)
    score = np.empty(max(kk, 1))
    use_abs = absolute and not nonneg
    for s in range(C.shape[0]):
        c = C[s]
        m = 0
        for i in range(n):
            if not active[i]:
                continue
            v = abs(c[i]) if use_abs else c[i]
            if m == kk and not v > score[kk - 1]:
                continue
            # Insert after every entry with score >= v: earlier indices win ties.
            j = m if m < kk else kk - 1
            while j > 0 and score[j - 1] < v:
                if j < kk:
                    score[j] = score[j - 1]
                    top[j] = top[j - 1]
                j -= 1
            score[j] = v
            top[j] = i
            if m < kk:
                m += 1
        a = A[s]
        for i in range(n):
            a[i] = 0.0
        for j in range(m):
            v = c[top[j]]
            if nonneg and v < 0.0:
                v = 0.0
            a[top[j]] = v
    return 0
