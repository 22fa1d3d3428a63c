"""Numba kernels of online group-structured dictionary learning (paper 003: Szabó, Póczos & Lőrincz).

Layout as everywhere in neurosim: the dictionary is a projection's weights
``W`` of shape ``(n_atoms, n_features)``, atom ``j`` the row ``W[j]`` (the
paper's column ``d_j``). The statistics live with it in the same layout:
row ``j`` of ``C`` is the diagonal of the paper's ``C_j`` (Eq. 19), row ``j``
of ``B`` is ``b_j`` (Eq. 20), row ``j`` of ``E`` is ``e_j`` (Eq. 21/25). The
exact form keeps per-coordinate code statistics ``A[f] = sum_i w_i
Delta_i[f] alpha_i alpha_i^T`` instead of ``E`` (``A.shape[0] == 1`` when
every coordinate is always observed: then ``A[0]`` is Eq. 29's ``A_t``).
A mini-batch ``X`` ``(R, n_features)`` comes with its masks ``M`` (nonzero:
observed, the diagonal of ``Delta_r``) and codes ``(R, n_atoms)``.

Mini-batch form of Table 1 (its update lines did not survive in the
supplement's text; rebuilt from Eqs. 23-25 applied to the mini-batch mean,
so each mini-batch is one term ``N_t`` of Lemma 1, and with the ``1/R`` of
the printed ``e_j`` line)::

    gamma_t = (1 - 1/t)^rho
    C_j <- gamma_t C_j + (1/R) sum_r Delta_r alpha_rj^2           (23)
    B   <- gamma_t B   + (1/R) sum_r Delta_r x_r alpha_r^T         (24)
    e_j <- gamma_t e_j                                             (25, part 1)
    D   <- Table 3 (T_D sweeps of the column updates below)
    e_j <- e_j + (1/R) sum_r Delta_r D_t alpha_r alpha_rj          (25, part 2)
"""

import numpy as np
from numba import njit, prange

from neurosim.kernels.dense import all_finite

__all__ = ["forgetting_factor", "osdl_statistics", "osdl_statistics_rows", "osdl_statistics_step", "osdl_dictionary"]


@njit(cache=True, nogil=True)
def forgetting_factor(t, rho):
    """``gamma_t = (1 - 1/t)^rho`` for mini-batch ``t >= 1`` (Lemma 1); ``rho = 0`` gives 1, also at ``t = 1``."""
    if rho == 0.0:
        return 1.0
    return (1.0 - 1.0 / t) ** rho


@njit(cache=True, nogil=True, inline="always")
def _decay_atom(C, B, E, A, j, gamma, exact):
    """Scale atom ``j``'s statistics (row ``j`` of ``C``, ``B``, ``E``; ``A[:, j]`` when ``exact``) by ``gamma``."""
    for f in range(C.shape[1]):
        C[j, f] *= gamma
        B[j, f] *= gamma
        if not exact:  # the exact form forms e_j from A; E is not read
            E[j, f] *= gamma
    if exact:
        for f in range(A.shape[0]):
            for i in range(A.shape[2]):
                A[f, j, i] *= gamma


@njit(cache=True, nogil=True, inline="always")
def _add_sample(C, B, A, X, M, codes, r, j, inv, exact):
    """Add sample ``r``'s terms to atom ``j``'s statistics (nothing when its code entry is 0)."""
    a = codes[r, j]
    if a == 0.0:
        return
    ar = a * inv
    aa = ar * a
    m = X.shape[1]
    for f in range(m):
        if M[r, f] != 0.0:
            C[j, f] += aa
            B[j, f] += ar * X[r, f]
    if exact:
        for i in range(codes.shape[1]):
            ai = codes[r, i]
            if ai == 0.0:
                continue
            if A.shape[0] == 1:
                A[0, j, i] += ar * ai
            else:
                for f in range(m):
                    if M[r, f] != 0.0:
                        A[f, j, i] += ar * ai


@njit(cache=True, nogil=True)
def osdl_statistics(C, B, E, A, X, M, codes, gamma, exact):
    """Fold one mini-batch into the statistics (Eqs. 23-25 part 1, mini-batch form; exact form: Eq. 29 per coordinate).

    ``C``, ``B``, ``E``: ``(k, m)``; ``A``: ``(F, k, k)`` with ``F`` in
    ``{1, m}``, read only when ``exact``; ``X``, ``M``: ``(R, m)``;
    ``codes``: ``(R, k)``. Zero code entries are skipped (each entry still
    receives its terms in sample order after the decay).
    """
    R, k = codes.shape
    inv = 1.0 / R
    if gamma != 1.0:
        for j in range(k):
            _decay_atom(C, B, E, A, j, gamma, exact)
    for r in range(R):
        for j in range(k):
            _add_sample(C, B, A, X, M, codes, r, j, inv, exact)


@njit(cache=True, nogil=True, parallel=True)
def osdl_statistics_rows(C, B, E, A, X, M, codes, gamma, exact):
    """:func:`osdl_statistics` with the atoms (rows ``j`` of ``C``, ``B``, ``E``, ``A[:, j]``) in numba's pool.

    Every entry receives the decay, then its terms in sample order, as in
    the serial kernel: the same bits, whatever the thread count.
    """
    R, k = codes.shape
    inv = 1.0 / R
    for j in prange(k):
        if gamma != 1.0:
            _decay_atom(C, B, E, A, j, gamma, exact)
        for r in range(R):
            _add_sample(C, B, A, X, M, codes, r, j, inv, exact)


@njit(cache=True, nogil=True)
def osdl_statistics_step(C, B, E, A, X, M, codes, rho, exact, count, parallel=False):
    """One step of :func:`osdl_statistics` with ``gamma_t`` from the mini-batch counter ``count[0]`` (then incremented).

    ``parallel``: use :func:`osdl_statistics_rows` (large dictionaries on several threads; same bits).
    """
    gamma = forgetting_factor(count[0] + 1.0, rho)
    if parallel:
        osdl_statistics_rows(C, B, E, A, X, M, codes, gamma, exact)
    else:
        osdl_statistics(C, B, E, A, X, M, codes, gamma, exact)
    count[0] += 1


@njit(cache=True, nogil=True)
def _project(u, nonneg):
    """Projection onto ``D_j``: the unit ball (``||d|| <= 1``), optionally intersected with ``d >= 0``."""
    m = u.size
    s = 0.0
    for f in range(m):
        if nonneg and u[f] < 0.0:
            u[f] = 0.0
        s += u[f] * u[f]
    n = np.sqrt(s)
    if n > 1.0:
        for f in range(m):
            u[f] /= n


@njit(cache=True, nogil=True)
def osdl_dictionary(W, C, B, E, A, X, M, codes, exact, nonneg, n_sweeps, tol, P, u, e, col, info):
    """Table 3 (T_D sweeps of column updates) and, in the online form, part 2 of Eq. 25.

    For each atom ``j`` in order, with the current ``D`` (atoms already
    updated in this sweep included)::

        e_j^tmp = e_j + (1/R) sum_r Delta_r D alpha_r alpha_rj      (online, Table 3)
        e_j^tmp = sum_l A[f]_lj d_l  per coordinate f                (exact: Eq. 21 with the current D)
        u_j = d_j + (b_j - e_j^tmp) / C_j                             (22), coordinate-wise
        d_j = Pi(u_j)                                                  (unit ball, optionally non-negative)

    A coordinate with ``C_j[f] = 0`` (never observed while atom ``j`` was
    active) leaves Eq. 22 as ``0 = 0``: ``u_j[f] = d_j[f]``. Sweeps stop after
    ``n_sweeps`` or once ``||D_new - D_old||_F <= tol ||D_old||_F`` (``tol =
    0``: exactly ``n_sweeps``, the paper's ``T_D``). ``P`` ``(R, m)`` holds
    ``Delta_r D alpha_r`` for the current ``D``, kept up to date column by
    column; ``u``, ``e``: ``(m,)`` work arrays. ``info[0]`` = sweeps run.
    Returns whether every weight is finite.
    """
    k, m = W.shape
    R = codes.shape[0]
    F = A.shape[0]
    inv = 1.0 / R
    if not exact:
        # the batch's reconstructions through BLAS (codes of Table 2 are dense: nothing to skip)
        P[:, :] = np.dot(codes, W)
        for r in range(R):
            for f in range(m):
                if M[r, f] == 0.0:
                    P[r, f] = 0.0
    for sweep in range(n_sweeps):
        change = 0.0
        norm = 0.0
        for j in range(k):
            if exact:
                for f in range(m):
                    e[f] = 0.0
                if F == 1:
                    for l in range(k):
                        a = A[0, l, j]
                        if a == 0.0:
                            continue
                        for f in range(m):
                            e[f] += a * W[l, f]
                else:
                    for f in range(m):
                        s = 0.0
                        for l in range(k):
                            s += A[f, l, j] * W[l, f]
                        e[f] = s
            else:
                for r in range(R):
                    col[r] = codes[r, j] * inv
                e[:] = np.dot(col, P)
                for f in range(m):
                    e[f] += E[j, f]
            for f in range(m):
                c = C[j, f]
                u[f] = W[j, f] + (B[j, f] - e[f]) / c if c > 0.0 else W[j, f]
            _project(u, nonneg)
            for f in range(m):
                d = u[f] - W[j, f]
                change += d * d
                norm += W[j, f] * W[j, f]
                e[f] = d
                W[j, f] = u[f]
            if not exact:
                for r in range(R):
                    a = codes[r, j]
                    if a == 0.0:
                        continue
                    for f in range(m):
                        # branch-free (vectorises): P stays 0 where the coordinate is not observed
                        P[r, f] += a * e[f] * (M[r, f] != 0.0)
        info[0] = sweep + 1
        if change <= tol * tol * norm:
            break
    if not exact:
        for j in range(k):
            for r in range(R):
                a = codes[r, j]
                if a == 0.0:
                    continue
                for f in range(m):
                    E[j, f] += inv * a * P[r, f]
    return all_finite(W)
