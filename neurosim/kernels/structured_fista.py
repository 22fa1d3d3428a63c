"""Accelerated proximal gradient (FISTA) for structured codes with an exact proximal operator (issue 25).

For one sample ``x`` observed on ``O`` and a dictionary with atoms as rows
(``W``, shape ``(k, m)``; ``D = W^T``), minimises the same per-sample cost as
Table 2 (:mod:`neurosim.kernels.structured`) at ``eta = 1``::

    F(alpha) = 0.5 ||x_O - D_O alpha||^2 + kappa sum_G w_G ||alpha_G||_2,

where every group's member weights are one number ``w_G`` (``d_j^G = w_G``).
FISTA (Beck & Teboulle 2009) needs the proximal operator of ``t kappa
Omega``; it is exact here when the groups form a *laminar* family (any two
are disjoint or nested: disjoint groups, singletons, a tree of subtrees):

* disjoint groups: block soft-thresholding ``alpha_G <- alpha_G max(0, 1 -
  t kappa w_G / ||alpha_G||)``;
* nested groups (a tree): the same block soft-thresholds applied one group
  after another, every group after all the groups it contains (leaves to
  root); Jenatton, Mairal, Obozinski & Bach (JMLR 2011), Prop. 2-3: this
  composition is the exact proximal operator of the sum. The kernel takes
  the groups in ``order`` (ascending size is such an order).

Per sample: the observed coordinates are gathered; the Lipschitz constant
of the gradient, ``L = ||D_O||_2^2``, is the largest eigenvalue of the
smaller of the two Gram matrices (``D_O^T D_O`` or ``D_O D_O^T``), from
LAPACK's symmetric eigensolver, times ``1 + _L_MARGIN`` (so rounding never
makes the step ``1 / L`` too long). Power iteration, used before, returned
the *smallest* eigenvalue of unit-norm atoms whose Gram has equal diagonal
entries (its start vector was an eigenvector), and FISTA then diverged;
an exact ``p^3`` solve per distinct observed set costs about what
gathering ``D_O`` does. It is reused while consecutive samples have the same observed set (full
observations: once per call). The gradient ``D_O^T (D_O y - x_O)`` is
computed through the residual (``2 k |O|`` operations; entries of ``y`` that
are 0 are skipped, and most are, since the prox sets whole groups to 0).
Momentum is restarted when it points uphill (O'Donoghue & Candès 2015,
gradient scheme), which keeps the iteration monotone in practice.

Stopping rule, as Table 2's: ``max_j |alpha_new - alpha_old| <= tol max(s,
max_j |alpha_old|)`` with ``s = ||x_O||_2 / max_j ||d_j,O||_2`` the sample's
code scale (:func:`neurosim.kernels.structured.code_scale`), so that a
rescaled problem (data and ``kappa``, or atoms and ``kappa``) stops at the same
iterate (issue 38: the floor ``max(1, .)`` used before made the rule absolute
below 1); ``tol = 0`` runs exactly ``n_iter`` iterations. A NaN
change (an overflowed code) ends the sample's iterations at once, whatever
``tol``; the kernel then returns False.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurosim.kernels.structured import (all_finite, code_scale, gather_atoms, observed_coordinates, stopping_rule,
                                         store_code, structured_codes, workspace_sizes)

__all__ = ["NO_ORDER", "SOLVER_TABLE2", "SOLVER_FISTA", "fista_workspace_sizes", "structured_fista",
           "structured_encode", "encode_workspace_sizes"]

SOLVER_TABLE2 = 0
SOLVER_FISTA = 1

# the ``order`` argument when Table 2 runs; read-only like GroupStructure.prox_order(), so that both solvers
# share one compiled specialisation of structured_encode
NO_ORDER = np.zeros(0, dtype=np.int64)
NO_ORDER.setflags(write=False)

# the eigensolver's largest eigenvalue is exact to rounding (relative ~p eps); the margin keeps 1 / L
# below 1 / ||D_O||^2 whatever that rounding
_L_MARGIN = 1e-9


def fista_workspace_sizes(n_atoms: int, n_features: int):
    """``(n_iwork, n_work)`` of :func:`structured_fista`."""
    k, m = int(n_atoms), int(n_features)
    p = min(k, m)
    return 2 * m + 1, k * m + 2 * m + 4 * k + p * p + 1


def encode_workspace_sizes(n_atoms: int, n_features: int, n_groups: int, kappa: float, path: int = 0):
    """Work lengths for :func:`structured_encode` with either solver (``kappa`` and ``path`` as for Table 2)."""
    a = workspace_sizes(n_atoms, n_features, n_groups, kappa, path)
    b = fista_workspace_sizes(n_atoms, n_features)
    return max(a[0], b[0]), max(a[1], b[1])


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot(a, b, n):
    s = 0.0
    for i in range(n):
        s += a[i] * b[i]
    return s


@njit(cache=True, nogil=True)
def _lipschitz(Wo, k, nobs, G):
    """``||D_O||_2^2`` (times ``1 + _L_MARGIN``): the largest eigenvalue of the smaller Gram matrix.

    ``G`` (at least ``p x p``, ``p = min(k, nobs)``) receives that Gram
    matrix. 0 when every observed entry of every atom is 0 (no data term);
    NaN when the Gram is not finite.
    """
    p = min(k, nobs)
    if nobs <= k:  # D_O^T D_O (nobs x nobs): sum over atoms of outer products of rows of Wo
        for a in range(p):
            for c in range(p):
                G[a, c] = 0.0
        for j in range(k):
            for a in range(p):
                t = Wo[j, a]
                if t != 0.0:
                    for c in range(p):
                        G[a, c] += t * Wo[j, c]
    else:  # D_O D_O^T (k x k)
        for a in range(p):
            for c in range(a + 1):
                s = _dot(Wo[a], Wo[c], nobs)
                G[a, c] = s
                G[c, a] = s
    top = 0.0
    for a in range(p):
        if G[a, a] > top:
            top = G[a, a]
        for c in range(p):
            if not (G[a, c] - G[a, c] == 0.0):
                # a NaN or Inf atom entry (or an overflowed Gram): LAPACK would raise inside the kernel; a NaN
                # step makes the codes NaN instead, which the kernel reports by its return value
                return np.nan
    if top == 0.0:  # a Gram with a zero diagonal is zero
        return 0.0
    # scaled by its largest diagonal entry, so that atoms of 1e-108 or 1e150 neither underflow nor overflow
    # in the solver; the largest eigenvalue lies in [top, p top]
    lam = np.linalg.eigvalsh(G[:p, :p] / top)[p - 1]
    if not lam >= 1.0:  # rounding: lambda_max >= max_a G_aa exactly
        lam = 1.0
    return lam * top * (1.0 + _L_MARGIN)


@njit(cache=True, nogil=True)
def _prox(a, indptr, indices, weights, order, thresh):
    """Exact prox of ``thresh * sum_G w_G ||a_G||`` for a laminar family taken in ``order`` (leaves first)."""
    for q in range(order.size):
        g = order[q]
        lo, hi = indptr[g], indptr[g + 1]
        s = 0.0
        for p in range(lo, hi):
            v = a[indices[p]]
            s += v * v
        if s == 0.0:
            continue
        n = np.sqrt(s)
        t = thresh * weights[lo]
        if n <= t:
            for p in range(lo, hi):
                a[indices[p]] = 0.0
        else:
            f = 1.0 - t / n
            for p in range(lo, hi):
                a[indices[p]] *= f


@njit(cache=True, nogil=True)
def structured_fista(W, X, M, indptr, indices, weights, order, kappa, n_iter, tol, warm, codes, info, iwork, work):
    """FISTA with the exact prox for every row of ``X``, observed where ``M`` is nonzero.

    Parameters are those of :func:`neurosim.kernels.structured.structured_codes`
    (``eta = 1``; no ``eps``, ``path``), plus ``order``: the groups in an order
    where every group comes after the groups it contains (the family must be
    laminar with one weight per group; not checked here). ``n_iter`` is the
    most FISTA iterations per sample. ``info`` as there. Work arrays of at
    least :func:`fista_workspace_sizes`.

    Returns False if any code is non-finite.
    """
    k, m = W.shape
    nb = X.shape[0]
    p = min(k, m)
    ni, nw = 2 * m + 1, k * m + 2 * m + 4 * k + p * p + 1
    if work.size < nw or iwork.size < ni:
        raise ValueError("structured_fista: work arrays too small (see fista_workspace_sizes)")
    o = 0
    Wo = work[o:o + k * m].reshape((k, m))
    o += k * m
    xo = work[o:o + m]
    o += m
    res = work[o:o + m]
    o += m
    x = work[o:o + k]
    o += k
    xp = work[o:o + k]
    o += k
    y = work[o:o + k]
    o += k
    pos = work[o:o + k]
    o += k
    G = work[o:o + p * p].reshape((p, p))
    o += p * p
    obs = iwork[:m]
    prev = iwork[m:2 * m]
    max_used = 0
    have_prev = False
    n_prev = 0
    L = 0.0
    for r in range(nb):
        nobs = observed_coordinates(M, r, m, obs)
        if nobs == 0:
            codes[r, :k] = 0.0
            continue
        same = have_prev and nobs == n_prev
        if same:
            for i in range(nobs):
                if obs[i] != prev[i]:
                    same = False
                    break
        if not same:
            gather_atoms(W, k, obs, nobs, Wo)
            L = _lipschitz(Wo, k, nobs, G)
            for i in range(nobs):
                prev[i] = obs[i]
            n_prev = nobs
            have_prev = True
        for i in range(nobs):
            xo[i] = X[r, obs[i]]
        if L == 0.0:  # every observed atom entry is 0: no data term, the code is 0
            codes[r, :k] = 0.0
            continue
        sref = code_scale(Wo, k, xo, nobs)
        step = 1.0 / L
        thresh = kappa * step
        for j in range(k):
            x[j] = codes[r, j] if warm else 0.0
            y[j] = x[j]
        t = 1.0
        used = 0
        converged = False
        for it in range(n_iter):
            # residual D_O y - x_O, skipping zero entries of y
            for i in range(nobs):
                res[i] = -xo[i]
            for j in range(k):
                c = y[j]
                if c != 0.0:
                    for i in range(nobs):
                        res[i] += c * Wo[j, i]
            # gradient step and prox into pos; keep x_k in xp
            for j in range(k):
                xp[j] = x[j]
                pos[j] = y[j] - step * _dot(Wo[j], res, nobs)
            _prox(pos, indptr, indices, weights, order, thresh)
            stop, converged = stopping_rule(pos, xp, k, sref, tol)
            uphill = 0.0
            for j in range(k):
                uphill += (y[j] - pos[j]) * (pos[j] - xp[j])
                x[j] = pos[j]
            used = it + 1
            if stop:
                break
            if uphill > 0.0:  # restart the momentum
                t = 1.0
                for j in range(k):
                    y[j] = x[j]
            else:
                tn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
                beta = (t - 1.0) / tn
                t = tn
                for j in range(k):
                    y[j] = x[j] + beta * (x[j] - xp[j])
        max_used = store_code(codes, r, x, k, used, converged, n_iter, tol, info, max_used)
    info[0] = max_used
    return all_finite(codes, nb, k)


@njit(cache=True, nogil=True)
def structured_encode(W, X, M, indptr, indices, weights, order, kappa, eta, eps, n_iter, fista_iter, tol, warm,
                      codes, info, iwork, work, path, solver):
    """Table 2 or FISTA: ``solver == SOLVER_FISTA`` and ``kappa > 0`` runs :func:`structured_fista`
    (``fista_iter`` iterations at most; the caller guarantees ``eta = 1`` and a laminar ``order``), anything
    else :func:`~neurosim.kernels.structured.structured_codes` (``n_iter``, ``eps``, ``path``). At ``kappa =
    0`` (a scheduled kappa may reach it) Table 2's direct least-squares solve is exact, FISTA would crawl.

    Work arrays of at least :func:`encode_workspace_sizes`.
    """
    if solver == SOLVER_FISTA and kappa > 0.0:
        return structured_fista(W, X, M, indptr, indices, weights, order, kappa, fista_iter, tol, warm, codes,
                                info, iwork, work)
    return structured_codes(W, X, M, indptr, indices, weights, kappa, eta, eps, n_iter, tol, warm, codes, info,
                            iwork, work, path)
