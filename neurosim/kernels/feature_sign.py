"""Feature-sign search (Lee, Battle, Raina & Ng 2006, Algorithm 1) as numba kernels.

Problem solved for every sample (row ``s``)::

    minimize_a  0.5 * ||x - D^T a||^2 + lam * ||a||_1

with ``D`` of shape (n_atoms, n_features). The kernels never see ``D`` or
``x``: they work on the Gram ``G = D D^T`` and the correlations
``c = D x`` (one row of ``C = X D^T``), so that a batch shares one Gram and
the smooth part of the objective is ``0.5 a^T G a - c^T a + const``.

Mapping to the paper's Eq. (5) ``||y - A x||^2 + gamma ||x||_1``: the paper's
``A`` is ``D^T``, its ``y`` is our ``x``, and dividing Eq. (5) by two gives
our objective with ``lam = gamma / 2``. Hence the paper's derivative
``d||y - Ax||^2/dx_i`` equals ``2 g_i`` with ``g = G a - c`` and its Step 3
solution ``(A^T A)^-1 (A^T y - gamma theta / 2)`` is ``G_AA^-1 (c_A - lam
theta_A)``. The optimality conditions of Step 4 become

* (a) ``g_j + lam * sign(a_j) = 0`` for every nonzero ``a_j``,
* (b) ``|g_j| <= lam`` for every zero ``a_j``

(the extracted paper text garbles some formulas; these are re-derived from
Eq. (5) and the prose of Section 3).

Implementation notes (why, not what):

* The reduced Gram ``G_AA`` is kept as a Cholesky factor that is updated
  when an atom enters (one triangular solve, O(k^2)) and downdated with
  Givens rotations when one leaves (O(k^2)), instead of refactorising each
  step (O(k^3)).
* Step 3 is computed as a Newton step from the current point,
  ``d = -G_AA^-1 (g_A + lam theta_A)``, which is algebraically the paper's
  ``x_new - x`` but makes a repeated Step 3 on an unchanged active set an
  iterative refinement: an ill-conditioned ``G_AA`` then still reaches
  condition (a) to working precision instead of cycling.
* The discrete line search evaluates the exact objective along the segment
  as ``t q1 + t^2 q2 / 2 + lam ||a + t d||_1`` with ``q1 = d^T g_A`` and
  ``q2 = d^T G_AA d = -d^T (g_A + lam theta_A)``, so each candidate point
  costs O(k) and no extra matrix product is needed.
* Footnote 3 (singular ``G_AA``): an atom is only added to the factor if it
  is numerically independent of the active atoms. If it is not, ``G_AA``
  with it would be singular and ``q = c_A - lam theta_A`` is not in its
  range (the entering atom violates (b) while the others satisfy (a)), so
  the footnote's second branch applies: move along the null-space direction
  ``z`` (``D^T z = 0``) in which the objective decreases linearly, up to the
  first zero crossing, and drop the coordinate that crosses. Duplicated
  atoms are handled this way.

Status codes per sample: ``FS_CONVERGED`` (Step 4 (a) and (b) hold within
``tol``), ``FS_MAX_ITER`` (iteration cap hit, the returned code is the
last iterate, a valid but possibly suboptimal point), ``FS_BREAKDOWN``
(numerical breakdown, see ``_fs_solve``), ``FS_COUNT_MISSED`` (only the
lambda search: no lambda found with exactly the requested count).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "FS_CONVERGED",
    "FS_MAX_ITER",
    "FS_BREAKDOWN",
    "FS_COUNT_MISSED",
    "feature_sign_codes",
    "feature_sign_batch",
    "lambda_search_codes",
]

FS_CONVERGED = 0
FS_MAX_ITER = 1
FS_BREAKDOWN = 2
FS_COUNT_MISSED = 3

# An entering atom whose squared distance to the span of the active atoms is
# below this fraction of its squared norm is treated as dependent. The
# cancellation noise in that distance for an exactly dependent atom is
# O(k eps) ~ 1e-14, well below; genuinely independent atoms with a
# conditioning up to ~1e10 still enter and are polished by the refinement.
_DEP_RTOL = 1e-10

# Reassociation lets LLVM vectorise the dot products of the triangular
# solves and the gradient; no-NaN/no-Inf flags are deliberately left out
# because the callers compare against inf.
_FAST = {"reassoc", "contract"}


# inline="always": the arithmetic is compiled in each caller, under the caller's fastmath flags (here _FAST;
# none in the OMP kernels of neurosim.kernels.greedy, which share it), so each keeps its own numbers.
@njit(cache=True, nogil=True, inline="always")
def chol_extend(G, act, k, L, j):
    """Extend the Cholesky factor ``L`` of ``G[act[:k]][:, act[:k]]`` by atom ``j``; False if ``j`` is dependent.

    Writes row ``k`` of ``L`` (``L^-1 G[act, j]``, also when ``j`` is
    dependent) and, unless its squared distance to the span of the active
    atoms is at most ``_DEP_RTOL`` of its squared norm, the pivot ``L[k, k]``.
    """
    for m in range(k):
        s = G[j, act[m]]
        for p in range(m):
            s -= L[m, p] * L[k, p]
        L[k, m] = s / L[m, m]
    dd = G[j, j]
    for p in range(k):
        dd -= L[k, p] * L[k, p]
    if dd <= _DEP_RTOL * G[j, j]:
        return False
    L[k, k] = np.sqrt(dd)
    return True


@njit(cache=True, fastmath=_FAST)
def _chol_append(G, act, k, L, j):
    """Write row ``k`` of the factor for atom ``j``; False if ``j`` is dependent.

    Row ``k`` of ``L`` receives ``l = L^-1 G[act, j]`` even when ``j`` is
    dependent, because the null-space step needs it.
    """
    return chol_extend(G, act, k, L, j)


@njit(cache=True, fastmath=_FAST)
def _chol_solve(L, k, b):
    """Overwrite ``b[:k]`` with ``(L L^T)^-1 b[:k]``."""
    for m in range(k):
        s = b[m]
        for p in range(m):
            s -= L[m, p] * b[p]
        b[m] = s / L[m, m]
    _chol_back(L, k, b)


@njit(cache=True, fastmath=_FAST)
def _chol_back(L, k, b):
    """Overwrite ``b[:k]`` with ``L^-T b[:k]`` (row-wise, so L is read contiguously)."""
    for m in range(k - 1, -1, -1):
        b[m] /= L[m, m]
        bm = b[m]
        for p in range(m):
            b[p] -= L[m, p] * bm


@njit(cache=True)
def _chol_delete(L, k, p):
    """Remove row/column ``p`` from the ``k x k`` factor (k-1 remain).

    Dropping row ``p`` of ``L`` leaves ``L' L'^T`` equal to the reduced Gram
    but ``L'`` upper Hessenberg from column ``p`` on; Givens rotations
    applied to column pairs (orthogonal from the right) restore the
    triangle without changing ``L' L'^T``.
    """
    for r in range(p, k - 1):
        for q in range(r + 2):
            L[r, q] = L[r + 1, q]
    for j in range(p, k - 1):
        a = L[j, j]
        b = L[j, j + 1]
        h = np.hypot(a, b)
        cs = a / h
        sn = b / h
        for r in range(j, k - 1):
            u = L[r, j]
            v = L[r, j + 1]
            L[r, j] = cs * u + sn * v
            L[r, j + 1] = -sn * u + cs * v
        L[j, j + 1] = 0.0


@njit(cache=True)
def _remove_active(L, act, theta, pos, k, m):
    _chol_delete(L, k, m)
    pos[act[m]] = -1
    for q in range(m, k - 1):
        act[q] = act[q + 1]
        theta[q] = theta[q + 1]
        pos[act[q]] = q
    return k - 1


@njit(cache=True, fastmath=_FAST)
def _objective_along(a, act, d, k, t, q1, q2, lam):
    """Objective at ``a + t d`` minus its value's constant part."""
    s = 0.0
    for m in range(k):
        s += abs(a[act[m]] + t * d[m])
    return t * q1 + 0.5 * t * t * q2 + lam * s


@njit(cache=True, fastmath=_FAST)
def _gradient(G, c, a, act, k, g):
    """``g = G a - c`` from the active rows of G.

    Rows are taken four at a time so that ``g`` is loaded and stored once per
    four rows: this loop is the O(n_atoms k) part of every iteration and is
    bound by memory traffic, not arithmetic.
    """
    n = G.shape[0]
    for j in range(n):
        g[j] = -c[j]
    m = 0
    while m + 4 <= k:
        r0, r1, r2, r3 = act[m], act[m + 1], act[m + 2], act[m + 3]
        a0, a1, a2, a3 = a[r0], a[r1], a[r2], a[r3]
        for j in range(n):
            g[j] += G[r0, j] * a0 + G[r1, j] * a1 + G[r2, j] * a2 + G[r3, j] * a3
        m += 4
    while m < k:
        r0 = act[m]
        a0 = a[r0]
        for j in range(n):
            g[j] += G[r0, j] * a0
        m += 1


@njit(cache=True)
def _fs_solve(G, c, lam, a, warm, nonneg, max_iter, tol, L, act, theta, pos, g, gA, r, d):
    """Feature-sign search for one sample; ``a`` is warm start and output.

    Returns a status code. ``FS_BREAKDOWN`` is returned if a step that must
    decrease the objective in exact arithmetic (Lemmas 3.1/3.2, footnote 3)
    cannot, by a margin far above the tolerance; ``a`` is then the last
    iterate.
    """
    n = G.shape[0]
    scale = lam
    for i in range(n):
        if abs(c[i]) > scale:
            scale = abs(c[i])
    if scale == 0.0:
        # c = 0 and lam = 0: x is orthogonal to every atom, a = 0 is optimal.
        for i in range(n):
            a[i] = 0.0
        return FS_CONVERGED
    thr = tol * scale

    for i in range(n):
        pos[i] = -1
    k = 0
    if warm:
        # Start at Step 3 from the given point (paper, end of Section 3).
        # Coordinates that cannot be represented in an active set with an
        # invertible G_AA (dependent atoms) are dropped; the result is still
        # a valid starting point, only the reconstruction differs.
        for i in range(n):
            v = a[i]
            if nonneg and v < 0.0:
                v = 0.0
            if v != 0.0 and _chol_append(G, act, k, L, i):
                act[k] = i
                theta[k] = 1.0 if v > 0.0 else -1.0
                pos[i] = k
                k += 1
                a[i] = v
            else:
                a[i] = 0.0
    else:
        for i in range(n):
            a[i] = 0.0

    status = FS_MAX_ITER
    it = 0
    g_valid = False
    while it < max_iter:
        it += 1
        # One full gradient per iteration serves both Step 4 (a) (its active
        # entries) and Step 4 (b)/Step 2; an activation does not move ``a``,
        # so the Step 3 that follows it reuses the same gradient.
        if not g_valid:
            _gradient(G, c, a, act, k, g)
            g_valid = True
        rmax = 0.0
        for m in range(k):
            gA[m] = g[act[m]]
            r[m] = gA[m] + lam * theta[m]
            if abs(r[m]) > rmax:
                rmax = abs(r[m])

        if rmax > thr:
            # Step 3: feature-sign step with discrete line search.
            for m in range(k):
                d[m] = -r[m]
            _chol_solve(L, k, d)
            q1 = 0.0
            q2 = 0.0
            for m in range(k):
                q1 += d[m] * gA[m]
                q2 -= d[m] * r[m]
            phi0 = _objective_along(a, act, d, k, 0.0, q1, q2, lam)
            best_t = 1.0
            if nonneg:
                # Beyond the first crossing the point is infeasible, and the
                # objective is convex along the segment, so the best feasible
                # candidate is the first crossing or the full step.
                for m in range(k):
                    am = a[act[m]]
                    if am > 0.0 and am + d[m] <= 0.0:
                        tm = am / (am - (am + d[m]))
                        if tm < best_t:
                            best_t = tm
                best_phi = _objective_along(a, act, d, k, best_t, q1, q2, lam)
            else:
                best_phi = _objective_along(a, act, d, k, 1.0, q1, q2, lam)
                for m in range(k):
                    am = a[act[m]]
                    if am != 0.0:
                        nm = am + d[m]
                        if (am > 0.0 and nm <= 0.0) or (am < 0.0 and nm >= 0.0):
                            tm = am / (am - nm)
                            if tm < 1.0:
                                ph = _objective_along(a, act, d, k, tm, q1, q2, lam)
                                if ph < best_phi:
                                    best_phi = ph
                                    best_t = tm
            if best_phi < phi0:
                for m in range(k):
                    i = act[m]
                    am = a[i]
                    nm = am + d[m]
                    crosses = (am > 0.0 and nm <= 0.0) or (am < 0.0 and nm >= 0.0)
                    if crosses and am / (am - nm) == best_t:
                        a[i] = 0.0
                    else:
                        a[i] = am + best_t * d[m]
                        if nonneg and a[i] < 0.0:
                            a[i] = 0.0
                for m in range(k - 1, -1, -1):
                    v = a[act[m]]
                    if v == 0.0:
                        k = _remove_active(L, act, theta, pos, k, m)
                    else:
                        theta[m] = 1.0 if v > 0.0 else -1.0
                g_valid = False
                continue
            # No decrease: the Newton step is below rounding. Accept (a) to
            # working precision unless the residual is far above tolerance.
            if rmax > 1e4 * thr:
                status = FS_BREAKDOWN
                break

        # Step 4 (b) over the zero coordinates, and Step 2 selection.
        best = -1
        bv = lam + thr
        for j in range(n):
            if pos[j] < 0:
                v = -g[j] if nonneg else abs(g[j])
                if v > bv:
                    bv = v
                    best = j
        if best < 0:
            status = FS_CONVERGED
            break

        # Step 2: activate with the sign that locally decreases the objective.
        th = 1.0 if g[best] < 0.0 else -1.0
        ok = _chol_append(G, act, k, L, best) if k < L.shape[0] - 1 else False
        # Footnote 3, second branch, repeated while the entering atom stays
        # dependent (each pass removes one active coordinate).
        while not ok:
            # With l = row k of L, w = G_AA^-1 G_{A,best} = L^-T l, and the
            # direction z (z_best = th, z_A = -th w) lies in the null space of
            # the extended Gram. Along it the smooth part is constant and the
            # objective falls at rate lam - |g_best| < 0 until a crossing.
            if k == L.shape[0] - 1:
                # The active set is as large as the factor allows; l is not
                # available. This needs more active atoms than n_atoms - 1,
                # which for a dependent atom cannot happen in exact arithmetic.
                status = FS_BREAKDOWN
                break
            for m in range(k):
                d[m] = L[k, m]
            _chol_back(L, k, d)
            tstar = np.inf
            mstar = -1
            for m in range(k):
                zm = -th * d[m]
                am = a[act[m]]
                if am * zm < 0.0:
                    tm = -am / zm
                    if tm < tstar:
                        tstar = tm
                        mstar = m
            if mstar < 0:
                status = FS_BREAKDOWN
                break
            for m in range(k):
                a[act[m]] += tstar * (-th * d[m])
            a[act[mstar]] = 0.0
            a[best] += th * tstar
            k = _remove_active(L, act, theta, pos, k, mstar)
            g_valid = False
            ok = _chol_append(G, act, k, L, best)
        if status == FS_BREAKDOWN:
            break
        act[k] = best
        theta[k] = th
        pos[best] = k
        k += 1
    return status


@njit(cache=True)
def _workspace(n):
    L = np.empty((n + 1, n + 1))
    act = np.empty(n + 1, dtype=np.int64)
    theta = np.empty(n + 1)
    pos = np.empty(n, dtype=np.int64)
    g = np.empty(n)
    gA = np.empty(n + 1)
    r = np.empty(n + 1)
    d = np.empty(n + 1)
    return L, act, theta, pos, g, gA, r, d


@njit(cache=True)
def feature_sign_codes(G, C, lam, A, warm, nonneg, max_iter, tol):
    """Feature-sign search on a batch, in place; returns the number of failures.

    Parameters
    ----------
    G : float64 (n_atoms, n_atoms)
        Gram ``D D^T``, symmetric positive semi-definite.
    C : float64 (n_samples, n_atoms)
        Correlations ``X D^T``.
    lam : float
        L1 weight (>= 0), the paper's ``gamma / 2``.
    A : float64 (n_samples, n_atoms), C-contiguous
        Warm start if ``warm`` (Step 3 start), overwritten with the codes.
    warm, nonneg : bool
    max_iter : int
        Cap on feature-sign steps plus activations per sample.
    tol : float
        Optimality conditions (a) and (b) are enforced to
        ``tol * max(lam, max|c|)``.

    Returns
    -------
    int
        Number of samples that did not reach ``FS_CONVERGED``.

    No input checks: the public, validated entry point is
    ``neurosim.coding.feature_sign``. Workspace is allocated once per call.
    """
    n = G.shape[0]
    L, act, theta, pos, g, gA, r, d = _workspace(n)
    failed = 0
    for s in range(C.shape[0]):
        st = _fs_solve(G, C[s], lam, A[s], warm, nonneg, max_iter, tol, L, act, theta, pos, g, gA, r, d)
        if st != FS_CONVERGED:
            failed += 1
    return failed


@njit(cache=True)
def feature_sign_batch(G, C, lams, A, warm, nonneg, max_iter, tol, status):
    """As ``feature_sign_codes`` with one lambda per sample and a status per sample."""
    n = G.shape[0]
    L, act, theta, pos, g, gA, r, d = _workspace(n)
    failed = 0
    for s in range(C.shape[0]):
        st = _fs_solve(G, C[s], lams[s], A[s], warm, nonneg, max_iter, tol, L, act, theta, pos, g, gA, r, d)
        status[s] = st
        if st != FS_CONVERGED:
            failed += 1
    return failed


@njit(cache=True)
def lambda_search_codes(G, C, n_nonzero, A, lams, nonneg, max_iter, tol, rtol_lambda, max_bisect, status):
    """Per-sample bisection of lambda for ``n_nonzero`` nonzeros (Garg et al. 2017, Alg. 2).

    Alg. 2 bisects the threshold of a proximal operator; here the inner
    problem is the full lasso solved by feature-sign search, so the bracket
    is ``[0, max|c|]`` (``max c`` if non-negative): above ``max|c|`` the
    code is zero. Every bisection step warm-starts feature-sign from the
    previous step's code, which is what makes the search cheap. Exact count
    is required (the paper's ``eps_beta = 0``); the search stops when the
    bracket is narrower than ``rtol_lambda`` relative to its top or after
    ``max_bisect`` steps, with status ``FS_COUNT_MISSED`` if the count was
    not hit. ``lams`` receives the lambda of the returned code.
    """
    n = G.shape[0]
    L, act, theta, pos, g, gA, r, d = _workspace(n)
    failed = 0
    for s in range(C.shape[0]):
        c = C[s]
        a = A[s]
        hi = 0.0
        for i in range(n):
            v = c[i] if nonneg else abs(c[i])
            if v > hi:
                hi = v
        for i in range(n):
            a[i] = 0.0
        if hi <= 0.0:
            lams[s] = 0.0
            status[s] = FS_COUNT_MISSED
            failed += 1
            continue
        lo = 0.0
        st = FS_CONVERGED
        mid = hi
        cnt = 0
        # every step warm-starts from the last code; a comparison (always true here), not the literal
        # True, so that numba compiles _fs_solve once for this caller and feature_sign_codes
        warm = hi > 0.0
        for _ in range(max_bisect):
            mid = 0.5 * (lo + hi)
            st = _fs_solve(G, c, mid, a, warm, nonneg, max_iter, tol, L, act, theta, pos, g, gA, r, d)
            cnt = 0
            for i in range(n):
                if a[i] != 0.0:
                    cnt += 1
            if cnt == n_nonzero or (hi - lo) < rtol_lambda * hi:
                break
            if cnt > n_nonzero:
                lo = mid
            else:
                hi = mid
        lams[s] = mid
        if st == FS_CONVERGED and cnt != n_nonzero:
            st = FS_COUNT_MISSED
        status[s] = st
        if st != FS_CONVERGED:
            failed += 1
    return failed
