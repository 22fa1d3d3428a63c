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

Non-negative OMP (``nn_omp_codes``; Tsuchida & Cottrell 2015, Eq. 6, after
Bruckstein, Elad & Zibulevsky 2008) shares the selection threshold and the
dependence test, selects by the largest *positive* correlation, and re-fits
the support by Lawson-Hanson NNLS instead of the Cholesky solve.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurosim.kernels.feature_sign import chol_extend  # the Cholesky step and dependence test feature-sign search uses

__all__ = ["OMP_OK", "OMP_EXACT", "OMP_DEPENDENT", "OMP_NNLS_FAILED", "omp_codes", "nn_omp_codes", "k_winners_codes",
           "k_winners_masked"]

OMP_OK = 0
# Residual orthogonal to every remaining atom before n_nonzero were chosen:
# the signal is represented exactly by fewer atoms (not an error).
OMP_EXACT = 1
# The best next atom is linearly dependent on the chosen ones.
OMP_DEPENDENT = 2


@njit(cache=True)
def _omp_start(c, a, alpha, chosen):
    """Reset one sample's code, residual correlations and chosen set; return the negligible-correlation threshold.

    The threshold is scale-relative: the largest initial correlation scales
    like ``||x|| ||d||``, as does every later ``alpha``.
    """
    cmax = 0.0
    for i in range(c.size):
        a[i] = 0.0
        alpha[i] = c[i]
        chosen[i] = False
        v = abs(c[i])
        if v > cmax:
            cmax = v
    return np.finfo(np.float64).eps * cmax * cmax


@njit(cache=True, nogil=True, inline="always")
def _residual_correlations(G, c, act, k, coefs, alpha, skip_zeros):
    """``alpha = c - G[act[:k]]^T coefs[:k]``: the correlations of the atoms with the residual.

    With ``skip_zeros`` the rows of zero coefficients are not subtracted (NN-OMP's support keeps atoms at 0).
    """
    n = G.shape[0]
    for i in range(n):
        alpha[i] = c[i]
    for m in range(k):
        gm = coefs[m]
        if skip_zeros and gm == 0.0:
            continue
        row = act[m]
        for i in range(n):
            alpha[i] -= G[row, i] * gm


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
    return _omp_batch(G, C, n_nonzero, A, status, False)


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


# -- non-negative OMP ------------------------------------------------------------------

# The NNLS active-set loop stopped without its optimality test holding (cap on
# Lawson-Hanson iterations reached, which needs rounding-induced cycling, or a
# non-positive Cholesky pivot on a passive set): the code is the last feasible
# (non-negative) iterate.
OMP_NNLS_FAILED = 3

# An atom of the zero set re-enters the passive set only when its gradient
# exceeds this fraction of the magnitude of the terms it is summed from: far
# above the rounding of a sum of n_nonzero + 1 products (n_nonzero * eps, at
# most ~2e-13 for 1000 atoms), so rounding noise never enters; a true gradient
# that small changes the codes by about 1e-12 relative.
_NNLS_RTOL = 1e-12


@njit(cache=True)
def _nnls_solve_passive(G, c, act, k, passive, L, Lp, pidx, z):
    """Unconstrained least squares on the passive positions: ``G_PP z_P = c_P``, ``z = 0`` elsewhere.

    Uses the support's incremental Cholesky factor ``L`` when every position
    is passive (the usual case), else factors ``G_PP`` afresh (``p <= k`` is
    small). Returns False on a non-positive pivot.
    """
    p = 0
    for m in range(k):
        if passive[m]:
            pidx[p] = m
            p += 1
        z[m] = 0.0
    if p == 0:
        return True
    if p == k:
        F = L
    else:
        for r in range(p):
            for q in range(r + 1):
                s = G[act[pidx[r]], act[pidx[q]]]
                for t in range(q):
                    s -= Lp[r, t] * Lp[q, t]
                if q < r:
                    Lp[r, q] = s / Lp[q, q]
                else:
                    if not s > 0.0:
                        return False
                    Lp[r, r] = np.sqrt(s)
        F = Lp
    # forward then back substitution, the solution written into z at the passive positions
    for r in range(p):
        s = c[act[pidx[r]]]
        for t in range(r):
            s -= F[r, t] * z[pidx[t]]
        z[pidx[r]] = s / F[r, r]
    for r in range(p - 1, -1, -1):
        s = z[pidx[r]]
        for t in range(r + 1, p):
            s -= F[t, r] * z[pidx[t]]
        z[pidx[r]] = s / F[r, r]
    return True


@njit(cache=True)
def _nnls_support(G, c, act, k, L, xs, z, Lp, pidx, passive, skip):
    """Lawson-Hanson NNLS on the support ``act[:k]``, warm-started from ``xs``, in place.

    Solves ``min_{s >= 0} 0.5 s^T G_SS s - c_S^T s`` (the least squares
    ``min ||x - D_S^T s||^2`` written with the Gram). ``xs[:k-1]`` is the
    previous solution (optimal on ``act[:k-1]``, so a valid Lawson-Hanson
    start with the positive entries passive) and ``xs[k-1] = 0`` is the atom
    just selected; its gradient is positive, so it enters first. Returns
    False when the iteration cap is hit or a pivot fails (codes stay
    feasible).
    """
    for m in range(k):
        passive[m] = xs[m] > 0.0
        skip[m] = False
    enter = k - 1
    for _ in range(3 * k + 3):
        if enter < 0:
            # gradient w = c_S - G_SS s on the zero set; the largest one above rounding enters
            wv = 0.0
            for m in range(k):
                if passive[m] or skip[m]:
                    continue
                row = act[m]
                s = c[row]
                e = abs(s)
                for q in range(k):
                    if xs[q] != 0.0:
                        g = G[row, act[q]] * xs[q]
                        s -= g
                        e += abs(g)
                if s > _NNLS_RTOL * e and s > wv:
                    wv = s
                    enter = m
            if enter < 0:
                return True  # Kuhn-Tucker conditions hold
        passive[enter] = True
        first = True
        while True:
            if not _nnls_solve_passive(G, c, act, k, passive, L, Lp, pidx, z):
                return False
            if first and not z[enter] > 0.0:
                # positive in exact arithmetic (Lawson & Hanson 1974, Lemma 23.17); rounding says the
                # entering atom does not lower the objective: leave it at 0 and try the others
                passive[enter] = False
                skip[enter] = True
                break
            first = False
            step = 1.0
            block = -1
            for m in range(k):
                if passive[m] and z[m] <= 0.0:
                    t = xs[m] / (xs[m] - z[m])
                    if t < step:
                        step = t
                        block = m
            if block < 0:
                for m in range(k):
                    xs[m] = z[m]
                for m in range(k):
                    skip[m] = False
                break
            # move towards z until the first passive coefficient reaches 0; it (and any other at 0) leaves
            for m in range(k):
                if passive[m]:
                    xs[m] += step * (z[m] - xs[m])
            xs[block] = 0.0
            passive[block] = False
            for m in range(k):
                if passive[m] and xs[m] <= 0.0:
                    xs[m] = 0.0
                    passive[m] = False
            for m in range(k):
                skip[m] = False
        enter = -1
    return False


@njit(cache=True)
def _omp_one(G, c, n_nonzero, a, L, act, chosen, alpha, coefs, nonneg, z, Lp, pidx, passive, skip):
    """One sample's OMP (``nonneg``: NN-OMP); returns its status. ``coefs`` holds the support's coefficients.

    The two share the loop, the scale-relative stop and the dependence test; NN-OMP selects by the largest
    positive correlation among the atoms not chosen yet and re-fits by NNLS instead of the Cholesky solve.
    """
    n = G.shape[0]
    thresh = _omp_start(c, a, alpha, chosen)
    k = 0
    status = OMP_OK
    while k < n_nonzero:
        if nonneg:
            best = -1
            bv = 0.0
            for i in range(n):
                # strictly positive only: all-zero atoms (alpha = 0) and chosen atoms never enter
                if not chosen[i] and alpha[i] > bv:
                    bv = alpha[i]
                    best = i
            # none positive: the code is optimal for min_{s >= 0} ||x - D^T s|| over the whole dictionary
            # (a Kuhn-Tucker point)
            stop = best < 0
        else:
            best = 0
            bv = -1.0
            for i in range(n):
                v = abs(alpha[i])
                if v > bv:
                    bv = v
                    best = i
            # scikit-learn's stopping rule made scale-relative: the maximal correlation sits on an already
            # chosen atom (whose correlations are zero up to rounding) or is negligible relative to the
            # initial ones (``<=`` so that an all-zero correlation vector stops at once).
            stop = chosen[best]
        if stop or bv * bv <= thresh:
            status = OMP_EXACT
            break
        if not chol_extend(G, act, k, L, best):
            status = OMP_DEPENDENT
            break
        act[k] = best
        chosen[best] = True
        if nonneg:
            coefs[k] = 0.0
            k += 1
            if not _nnls_support(G, c, act, k, L, coefs, z, Lp, pidx, passive, skip):
                status = OMP_NNLS_FAILED
                break
        else:
            k += 1
            for m in range(k):
                s = c[act[m]]
                for p in range(m):
                    s -= L[m, p] * coefs[p]
                coefs[m] = s / L[m, m]
            for m in range(k - 1, -1, -1):
                coefs[m] /= L[m, m]
                gm = coefs[m]
                for p in range(m):
                    coefs[p] -= L[m, p] * gm
        _residual_correlations(G, c, act, k, coefs, alpha, nonneg)
    for m in range(k):
        a[act[m]] = coefs[m]
    return status


@njit(cache=True)
def _omp_batch(G, C, n_nonzero, A, status, nonneg):
    """:func:`omp_codes` (``nonneg``: :func:`nn_omp_codes`): the workspaces, then one sample at a time."""
    n = G.shape[0]
    kk = min(n_nonzero, n)
    L = np.empty((kk + 1, kk + 1))
    Lp = np.empty((kk + 1, kk + 1))
    act = np.empty(kk + 1, dtype=np.int64)
    pidx = np.empty(kk + 1, dtype=np.int64)
    passive = np.empty(kk + 1, dtype=np.bool_)
    skip = np.empty(kk + 1, dtype=np.bool_)
    chosen = np.empty(n, dtype=np.bool_)
    alpha = np.empty(n)
    coefs = np.empty(kk + 1)
    z = np.empty(kk + 1)
    failed = 0
    for s in range(C.shape[0]):
        st = _omp_one(G, C[s], kk, A[s], L, act, chosen, alpha, coefs, nonneg, z, Lp, pidx, passive, skip)
        status[s] = st
        if st == OMP_DEPENDENT or st == OMP_NNLS_FAILED:
            failed += 1
    return failed


@njit(cache=True)
def nn_omp_codes(G, C, n_nonzero, A, status):
    """Non-negative orthogonal matching pursuit on a batch sharing one Gram, in place.

    Approximates Tsuchida & Cottrell (2015), Eq. 6,
    ``min_{s >= 0} ||x - D^T s||^2 s.t. ||s||_0 <= n_nonzero``, by the
    non-negative OMP of Bruckstein, Elad & Zibulevsky (2008): per sample,
    repeat at most ``n_nonzero`` times

    1. select the not yet chosen atom with the largest *positive*
       correlation ``alpha_i = c_i - (G s)_i`` with the residual (ties: lowest
       index); stop (``OMP_EXACT``) when none exceeds omp's scale-relative
       threshold ``alpha_i^2 > eps * max|c|^2``: the code then minimises
       ``||x - D^T s||`` over all ``s >= 0`` (Kuhn-Tucker conditions);
    2. stop (``OMP_DEPENDENT``) when that atom is linearly dependent on the
       chosen ones (same test as :func:`omp_codes`);
    3. set the coefficients on the support by non-negative least squares
       ``min_{s_S >= 0} ||x - D_S^T s_S||^2``, exactly, by the Lawson-Hanson
       active-set method on ``G_SS`` warm-started from the previous solution.

    An atom whose NNLS coefficient drops to 0 stays in the support at 0: it
    counts towards ``n_nonzero`` and is not selected again (at the NNLS
    optimum its correlation with the residual is <= 0 anyway), so each
    sample takes at most ``n_nonzero`` selections and its supports are
    nested in ``n_nonzero`` (the residual norm never increases with it). A
    code may therefore have fewer than ``n_nonzero`` nonzeros. All-zero atoms
    (zero Gram row and correlation) are never selected.

    Parameters
    ----------
    G : float64 (n_atoms, n_atoms)
    C : float64 (n_samples, n_atoms)
    n_nonzero : int
        Atoms to select per sample, ``1 <= n_nonzero <= n_atoms``.
    A : float64 (n_samples, n_atoms)
        Overwritten with the codes, all ``>= 0``.
    status : int64 (n_samples,)
        ``OMP_OK``, ``OMP_EXACT``, ``OMP_DEPENDENT`` or ``OMP_NNLS_FAILED``.

    Returns
    -------
    int
        Number of samples with ``OMP_DEPENDENT`` or ``OMP_NNLS_FAILED``.
    """
    return _omp_batch(G, C, n_nonzero, A, status, True)
