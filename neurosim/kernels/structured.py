"""Numba kernels of the structured representation step of OSDL (paper 003, supplement Table 2).

For one sample ``x`` observed on the coordinates ``O`` (the paper's
``Delta = diag(M[b])``) and a dictionary stored with atoms as rows
(``W``, shape ``(k, m)``; the paper's ``D = W^T``), Table 2 minimises,
jointly in the code ``alpha`` and auxiliary group variables ``z >= 0``::

    J(alpha, z) = 0.5 ||x_O - D_O alpha||^2 + (kappa / 2) (sum_j zeta_j(z) alpha_j^2 + ||z||_beta),
    zeta_j(z) = sum_{G ∋ j} (d_j^G)^2 / z^G,     beta = eta / (2 - eta),

by block-coordinate (alternating) minimisation. Since
``sum_j zeta_j alpha_j^2 = sum_G y_G^2 / z^G`` with ``y_G = ||d^G o alpha||_2``,
the variational identity of Jenatton, Audibert & Bach (2010), for
``eta in (0, 1]``::

    min_{z >= 0} 0.5 (sum_G y_G^2 / z^G + ||z||_beta) = ||y||_eta = Omega(alpha),

gives ``min_z J(alpha, z) = 0.5 ||x_O - D_O alpha||^2 + kappa Omega(alpha)``
(supplement Eq. 5's per-sample cost). Proof: Hölder with ``p = 2 / eta``,
``q = 2 / (2 - eta)`` gives ``sum_G y_G^eta = sum_G (y_G^2 / z^G)^(eta/2)
(z^G)^(eta/2) <= (sum_G y_G^2 / z^G)^(eta/2) ||z||_beta^(eta/2)``, so
``Omega <= sqrt(A ||z||_beta) <= (A + ||z||_beta) / 2`` with ``A = sum_G
y_G^2 / z^G`` (AM-GM); at ``z^G = y_G^(2-eta) Omega^(eta-1)`` both terms
equal ``Omega``, so the bound is attained: this is Table 2's z-step. For
``eta = 1`` it reads ``z^G = y_G``.

Per iteration (Table 2)::

    z^G   = max(y_G^(2-eta) Omega^(eta-1), eps)     (z^G = eps for every G when Omega = 0)
    zeta_j = sum_{G ∋ j} (d_j^G)^2 / z^G
    alpha = argmin ||x_O - D_O alpha||^2 + kappa alpha^T diag(zeta) alpha
          = (D_O^T D_O + kappa Z)^-1 D_O^T x_O,        Z = diag(zeta).

The constraint set is ``A = R^k``. ``eps`` keeps ``zeta`` finite when a
group's norm vanishes; it smooths ``Omega`` by at most ``eps / 2`` per
group (``eta = 1``).

Start: with a warm start the first z-step is computed from it. Without
one, the first iteration uses ``z^G = s`` for every group, ``s`` the
sample's code scale (:func:`code_scale`; 1 where it is 0), i.e. a ridge
regression: starting from ``alpha = 0`` would give ``Omega = 0``, hence
``z^G = eps`` everywhere, ``zeta ~ 1 / eps`` and a code ``~ eps``-small
that needs many iterations (each growing it by a bounded factor) to crawl
out of the origin. ``z^G`` is in code units, so the start scales with the
problem (issue 38): ``z^G = 1``, used before, started codes of 1e24 as a
ridge regression penalised 1e24 times too hard, which crawled up by a
bounded factor per iteration.

The linear system, per sample and iteration (``n_O = |O|``):

* direct (``k <= n_O``, or ``kappa = 0``): Cholesky of the ``k x k``
  matrix ``D_O^T D_O + kappa Z``; ``D_O^T D_O`` and ``D_O^T x_O`` are formed
  once per sample, since only ``Z`` changes between iterations;
* Woodbury (``n_O < k``, the usual overcomplete case with missing
  coordinates): ``(D_O^T D_O + kappa Z) Z^-1 D_O^T = D_O^T (kappa I + D_O Z^-1
  D_O^T)`` (multiply out), hence
  ``alpha = Z^-1 D_O^T (kappa I + D_O Z^-1 D_O^T)^-1 x_O``: an
  ``n_O x n_O`` Cholesky. It needs ``kappa > 0`` (or ``D_O`` of full row
  rank), which is why ``kappa = 0`` always takes the direct path.

Both Cholesky factorisations are small loops here (deterministic, no
threads; faster than numba's LAPACK binding at these sizes, see the paper
report). A pivot at or below ``_PIVOT_RTOL`` times its diagonal entry marks
a column that depends on the previous ones (only possible with ``kappa =
0``: least squares with dependent or all-zero observed atoms); its unknown
is set to 0, which still solves the consistent normal equations, i.e. gives
a least-squares code.

A sample with no observed coordinate gets the code 0: nothing is fitted and
the penalty is minimised at 0.

Stopping rule (issue 38): a sample stops after the first iteration with
``max_j |alpha_new - alpha_old| <= tol max(s, max_j |alpha_old|)``, where
``s = ||x_O||_2 / max_j ||d_j,O||_2`` (:func:`code_scale`) is the sample's
code scale: the code that the observed atom of largest norm needs to
reproduce ``||x_O||``. Both sides scale as the codes do when the data
(with ``kappa``) or the atoms (with ``kappa``) are rescaled, so the same
problem at any scale stops at the same iterate; the rule used before, ``tol
max(1, max_j |alpha_old|)``, was absolute below 1 and stopped codes of
1e-8 after a few iterations, 90 % off. (``eps``, the floor of ``z``, is in
code units: a rescaled problem needs ``eps`` rescaled with its codes.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["PATH_AUTO", "PATH_DIRECT", "PATH_WOODBURY", "code_scale", "structured_codes", "structured_workspace",
           "workspace_sizes"]

PATH_AUTO = 0
PATH_DIRECT = 1
PATH_WOODBURY = 2

# Cancellation noise in the Schur complement of an exactly dependent column is O(n eps) ~ 6e-14 relative
# for n = 256; 1e-10 is far above it. With kappa > 0 every pivot is at least kappa zeta_j / (||d_j||^2 +
# kappa zeta_j) of its diagonal, which stays far above 1e-10 for any sensible scaling.
_PIVOT_RTOL = 1e-10


@njit(cache=True, nogil=True)
def _work_layout(k, m, n_groups, kappa, path):
    """``(p, n_work)``: the side of the Gram / Cholesky matrices the ``path`` solves with and the float64 work length.

    One place for :func:`workspace_sizes` and the check in :func:`structured_codes`.
    """
    if path == PATH_DIRECT or (path == PATH_AUTO and kappa == 0.0):
        p = k
    elif path == PATH_WOODBURY:
        p = m
    else:
        p = min(k, m)
    return p, k * m + m + 2 * p * p + 2 * max(k, m) + 3 * k + n_groups


def workspace_sizes(n_atoms: int, n_features: int, n_groups: int, kappa: float, path: int = PATH_AUTO):
    """``(n_iwork, n_work)``: lengths of the int64 and float64 work arrays of :func:`structured_codes`."""
    m = int(n_features)
    return m, int(_work_layout(int(n_atoms), m, int(n_groups), float(kappa), int(path))[1])


def structured_workspace(n_atoms: int, n_features: int, n_groups: int, kappa: float, path: int = PATH_AUTO):
    """Allocate the ``(iwork, work)`` arrays :func:`structured_codes` needs."""
    ni, nw = workspace_sizes(n_atoms, n_features, n_groups, kappa, path)
    return np.zeros(ni, dtype=np.int64), np.zeros(nw)


@njit(cache=True, nogil=True)
def code_scale(Wo, k, xo, nobs):
    """``||x_O||_2 / max_j ||d_j,O||_2`` from the gathered ``Wo[:k, :nobs]`` and ``xo[:nobs]``: the stopping rule's scale.

    The size of the code that the observed atom of largest norm needs to
    reproduce ``||x_O||``: it scales as the codes do (as ``x``, as ``1 /``
    the atoms). 0 when ``x_O`` or every observed atom entry is 0 (the code
    is then 0). Both norms are taken of the arrays divided by their largest
    magnitude, so neither underflows nor overflows where the ratio is
    representable.
    """
    xmax = 0.0
    for i in range(nobs):
        if abs(xo[i]) > xmax:
            xmax = abs(xo[i])
    wmax = 0.0
    for j in range(k):
        for i in range(nobs):
            if abs(Wo[j, i]) > wmax:
                wmax = abs(Wo[j, i])
    if xmax == 0.0 or wmax == 0.0 or not (xmax - xmax == 0.0 and wmax - wmax == 0.0):
        return 0.0
    sx = 0.0
    for i in range(nobs):
        v = xo[i] / xmax
        sx += v * v
    sw = 0.0
    for j in range(k):
        s = 0.0
        for i in range(nobs):
            v = Wo[j, i] / wmax
            s += v * v
        if s > sw:
            sw = s
    return (xmax / wmax) * np.sqrt(sx / sw)


# The per-sample bookkeeping both solvers of these codes share (neurosim.kernels.structured_fista too),
# inlined into each.
@njit(cache=True, nogil=True, inline="always")
def observed_coordinates(M, r, m, obs):
    """Write the coordinates ``f < m`` with ``M[r, f] != 0`` into ``obs`` (ascending); return their number."""
    nobs = 0
    for f in range(m):
        if M[r, f] != 0.0:
            obs[nobs] = f
            nobs += 1
    return nobs


@njit(cache=True, nogil=True, inline="always")
def gather_atoms(W, k, obs, nobs, Wo):
    """``Wo[:k, :nobs] = W[:k, obs[:nobs]]``: the atoms on the observed coordinates."""
    for j in range(k):
        for i in range(nobs):
            Wo[j, i] = W[j, obs[i]]


@njit(cache=True, nogil=True, inline="always")
def store_code(codes, r, code, k, used, converged, n_iter, tol, info, max_used):
    """Write sample ``r``'s code ``code[:k]``; count it in ``info[1]`` if it ran out of iterations; return ``max_used``."""
    for j in range(k):
        codes[r, j] = code[j]
    if tol > 0.0 and not converged and used == n_iter:
        info[1] += 1
    return max(max_used, used)


@njit(cache=True, nogil=True, inline="always")
def stopping_rule(new, old, k, sref, tol):
    """``(stop, converged)`` after an iteration from ``old[:k]`` to ``new[:k]`` (module docstring).

    Converged when ``tol > 0`` and ``max_j |new_j - old_j| <= tol max(sref, max_j |old_j|)``; a NaN change (an
    overflowed code) stops too, not converged: nothing more to gain, reported through the kernel's return value.
    """
    change = 0.0
    scale = sref
    for j in range(k):
        d = abs(new[j] - old[j])
        if d > change or d != d:
            change = d
        if abs(old[j]) > scale:
            scale = abs(old[j])
    converged = tol > 0.0 and change <= tol * scale
    return converged or change != change, converged


@njit(cache=True, nogil=True, inline="always")
def all_finite(codes, nb, k):
    """Whether every code ``codes[:nb, :k]`` is finite (the kernels' return value)."""
    ok = True
    for r in range(nb):
        for j in range(k):
            v = codes[r, j]
            if not (v - v == 0.0):
                ok = False
    return ok


@njit(cache=True, nogil=True)
def _chol_solve(A, n, b, x, L):
    """Solve ``A x = b`` (``A[:n, :n]`` symmetric PSD, lower triangle read) by Cholesky ``A = L L^T``.

    Rows of ``L`` are walked contiguously (left-looking, row-major). A
    pivot at or below ``_PIVOT_RTOL A_jj`` (a dependent column) gets a zero
    column in ``L`` and its unknown is 0; a non-finite pivot (``A``
    overflowed) makes the solution NaN.
    """
    for j in range(n):
        s = A[j, j]
        for p in range(j):
            s -= L[j, p] * L[j, p]
        if s > _PIVOT_RTOL * A[j, j] and s > 0.0:
            d = np.sqrt(s)
            L[j, j] = d
            for i in range(j + 1, n):
                t = A[i, j]
                for p in range(j):
                    t -= L[i, p] * L[j, p]
                L[i, j] = t / d
        else:
            # a dependent column gets a zero column; an overflowed one (an Inf or NaN pivot, which the test
            # above also rejects) a NaN column, so that the solution is NaN and the caller reports the
            # overflow instead of returning a zero code
            f = 0.0 if s - s == 0.0 else np.nan
            L[j, j] = f
            for i in range(j + 1, n):
                L[i, j] = f
    # forward: L y = b (y stored in x)
    for i in range(n):
        if L[i, i] == 0.0:
            x[i] = 0.0
            continue
        t = b[i]
        for p in range(i):
            t -= L[i, p] * x[p]
        x[i] = t / L[i, i]
    # backward: L^T x = y
    for i in range(n - 1, -1, -1):
        if L[i, i] == 0.0:
            x[i] = 0.0
            continue
        t = x[i]
        for p in range(i + 1, n):
            t -= L[p, i] * x[p]
        x[i] = t / L[i, i]


@njit(cache=True, nogil=True)
def _z_step(alpha, indptr, indices, weights, eta, eps, first_cold, z0, z, zeta):
    """Table 2's z- and zeta-steps from ``alpha`` (``first_cold``: the ridge start, ``z^G = z0``)."""
    n_groups = indptr.size - 1
    k = alpha.size
    if first_cold:
        for g in range(n_groups):
            z[g] = z0
    else:
        omega = 0.0
        for g in range(n_groups):
            s = 0.0
            for p in range(indptr[g], indptr[g + 1]):
                v = weights[p] * alpha[indices[p]]
                s += v * v
            y = np.sqrt(s)
            z[g] = y
            if eta == 1.0:
                omega += y
            else:
                omega += y ** eta
        if omega == 0.0:
            for g in range(n_groups):
                z[g] = eps
        else:
            if eta != 1.0:
                # z^G = y^(2-eta) Omega^(eta-1) with Omega^(eta-1) = S^((eta-1)/eta), S = sum_G y^eta:
                # Omega itself (S^(1/eta)) would overflow for small eta. For eta = 1, z^G = y (no pow).
                f = omega ** ((eta - 1.0) / eta)
                for g in range(n_groups):
                    z[g] = z[g] ** (2.0 - eta) * f
            for g in range(n_groups):
                if z[g] < eps:  # a NaN from an overflowed code stays NaN and is reported
                    z[g] = eps
    for j in range(k):
        zeta[j] = 0.0
    for g in range(n_groups):
        zg = z[g]
        for p in range(indptr[g], indptr[g + 1]):
            zeta[indices[p]] += weights[p] * weights[p] / zg


@njit(cache=True, nogil=True)
def structured_codes(W, X, M, indptr, indices, weights, kappa, eta, eps, n_iter, tol, warm, codes, info,
                     iwork, work, path):
    """Table 2 (supplement of paper 003) for every row of ``X``, observed where ``M`` is nonzero.

    Parameters
    ----------
    W : (k, m) float64, atoms as rows (``D = W^T``).
    X, M : (b, m) float64; ``M[r, f] != 0`` marks coordinate ``f`` of sample ``r`` observed.
    indptr, indices, weights : CSR group family (int64, int64, float64 ``d_j^G > 0``); every unit in a group.
    kappa : float >= 0; eta : float in (0, 1]; eps : float > 0, the floor of ``z``.
    n_iter : int >= 1, ``T_alpha``.
    tol : float >= 0. A sample stops after ``n_iter`` iterations or as soon as
        ``max_j |alpha_new - alpha_old| <= tol max(s, max_j |alpha_old|)`` with
        ``s`` the sample's :func:`code_scale` (module docstring); ``tol = 0``:
        exactly ``n_iter`` iterations (the paper's ``T_alpha``). Without a warm
        start ``alpha_old`` of the first iteration is 0.
    warm : bool, read ``codes`` as the starting point (the first z-step is computed from it).
    codes : (b, k) float64, in/out.
    info : int64 array, ``info[0]`` = the largest number of iterations a sample
        used in this call (0 for no sample), ``info[1] +=`` the number of samples
        that ran ``n_iter`` iterations without meeting ``tol > 0``.
    iwork, work : int64 and float64 work arrays of at least the lengths
        :func:`workspace_sizes` gives for the same ``kappa`` and ``path``.
    path : ``PATH_AUTO`` (direct Cholesky if ``k <= |O|`` or ``kappa = 0``,
        Woodbury otherwise), ``PATH_DIRECT`` or ``PATH_WOODBURY`` (needs
        ``kappa > 0`` for an exact solve); forcing a path is for testing.

    Returns
    -------
    bool
        False if any code is non-finite (overflow), True otherwise.
    """
    k, m = W.shape
    nb = X.shape[0]
    n_groups = indptr.size - 1
    p, need = _work_layout(k, m, n_groups, kappa, path)
    q = max(k, m)
    if work.size < need or iwork.size < m:
        raise ValueError("structured_codes: work arrays too small (see workspace_sizes)")
    o = 0
    Wo = work[o:o + k * m].reshape((k, m))
    o += k * m
    xo = work[o:o + m]
    o += m
    G = work[o:o + p * p].reshape((p, p))
    o += p * p
    L = work[o:o + p * p].reshape((p, p))
    o += p * p
    rhs = work[o:o + q]
    o += q
    sol = work[o:o + q]
    o += q
    zeta = work[o:o + k]
    o += k
    old = work[o:o + k]
    o += k
    new = work[o:o + k]
    o += k
    z = work[o:o + n_groups]
    max_used = 0
    obs = iwork
    for r in range(nb):
        nobs = observed_coordinates(M, r, m, obs)
        if nobs == 0:
            codes[r, :k] = 0.0
            continue
        gather_atoms(W, k, obs, nobs, Wo)
        for i in range(nobs):
            xo[i] = X[r, obs[i]]
        sref = code_scale(Wo, k, xo, nobs)
        direct = path == PATH_DIRECT or (path == PATH_AUTO and (kappa == 0.0 or k <= nobs))
        if direct:
            # D_O^T D_O and D_O^T x_O do not depend on z: once per sample
            for a in range(k):
                for c in range(a + 1):
                    s = 0.0
                    for i in range(nobs):
                        s += Wo[a, i] * Wo[c, i]
                    G[a, c] = s
                s = 0.0
                for i in range(nobs):
                    s += Wo[a, i] * xo[i]
                rhs[a] = s
        for j in range(k):
            old[j] = codes[r, j] if warm else 0.0
        used = 0
        converged = False
        for it in range(n_iter):
            _z_step(old, indptr, indices, weights, eta, eps, it == 0 and not warm, sref if sref > 0.0 else 1.0, z,
                    zeta)
            if direct:
                for a in range(k):
                    for c in range(a):
                        L[a, c] = G[a, c]  # _chol_solve reads A's lower triangle before overwriting L's
                    L[a, a] = G[a, a] + kappa * zeta[a]
                _chol_solve(L, k, rhs, new, L)
            else:
                # K = kappa I + D_O Z^-1 D_O^T, as a sum of rank-one terms over contiguous atom rows
                for a in range(nobs):
                    for c in range(a + 1):
                        L[a, c] = 0.0
                    L[a, a] = kappa
                for j in range(k):
                    # zeta_j = 0 only when every group of j has z = inf (an overflowed code): propagate as inf/NaN
                    # instead of numba's ZeroDivisionError, and report it through the return value
                    sj = 1.0 / zeta[j] if zeta[j] != 0.0 else np.inf
                    for a in range(nobs):
                        t = sj * Wo[j, a]
                        if t != 0.0:
                            for c in range(a + 1):
                                L[a, c] += t * Wo[j, c]
                _chol_solve(L, nobs, xo, sol, L)
                for j in range(k):
                    s = 0.0
                    for i in range(nobs):
                        s += Wo[j, i] * sol[i]
                    new[j] = s / zeta[j] if zeta[j] != 0.0 else np.nan
            stop, converged = stopping_rule(new, old, k, sref, tol)
            for j in range(k):
                old[j] = new[j]
            used = it + 1
            if stop:
                break
        max_used = store_code(codes, r, old, k, used, converged, n_iter, tol, info, max_used)
    info[0] = max_used
    return all_finite(codes, nb, k)
