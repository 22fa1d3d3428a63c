"""Numba kernels for basis learning (Lee, Battle, Raina & Ng 2006).

Pure array functions: no validation happens here, the callers in
:mod:`neurosim.coding.basis` check shapes, dtypes and ranges first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["eps_l1_line_search", "project_rows_to_ball"]


@njit(cache=True)
def _phi_derivs(a, p, q_dot_p, pgp, lam, eps, t):
    """First and second derivative of the 1-D restriction phi(t) = f(a + t p).

    With f(a) = 0.5 a'Ga - b'a + lam * sum_j sqrt(a_j^2 + eps) (Eq. 1,
    epsilon-L1 penalty) and q = Ga - b the gradient of the quadratic part:

        phi'(t)  = q'p + t p'Gp + lam * sum_j p_j u_j / sqrt(u_j^2 + eps)
        phi''(t) = p'Gp        + lam * sum_j p_j^2 eps / (u_j^2 + eps)^(3/2)

    where u = a + t p.
    """
    d1 = q_dot_p + t * pgp
    d2 = pgp
    for j in range(a.shape[0]):
        pj = p[j]
        if pj == 0.0:
            continue
        u = a[j] + t * pj
        r = np.sqrt(u * u + eps)
        d1 += lam * pj * u / r
        d2 += lam * pj * pj * eps / (r * r * r)
    return d1, d2


@njit(cache=True)
def eps_l1_line_search(A, P, Q, PG, lam, eps, active, t_out):
    """Exact line search of the epsilon-L1 objective along each row's direction.

    For every active sample ``i`` minimise the strictly convex
    phi_i(t) = f_i(A[i] + t P[i]) over t >= 0 by safeguarded Newton on
    phi_i'(t) = 0: a bracket [lo, hi] with phi'(lo) < 0 < phi'(hi) is kept and
    any Newton iterate leaving it is replaced by bisection, so the step can
    never increase the objective.

    Parameters
    ----------
    A : (n_samples, n_atoms) float64
        Current coefficients.
    P : (n_samples, n_atoms) float64
        Descent directions (``P[i] . grad_i < 0`` for active rows).
    Q : (n_samples, n_atoms) float64
        Gradient of the quadratic part, ``A G - B``.
    PG : (n_samples, n_atoms) float64
        ``P G`` (so ``p'Gp`` is a dot product).
    lam, eps : float
        Penalty weight and epsilon of Eq. 1.
    active : (n_samples,) bool
        Rows to process; others get ``t_out = 0``.
    t_out : (n_samples,) float64
        Output step lengths.
    """
    n = A.shape[0]
    for i in range(n):
        t_out[i] = 0.0
        if not active[i]:
            continue
        a = A[i]
        p = P[i]
        qp = 0.0
        pgp = 0.0
        for j in range(a.shape[0]):
            qp += Q[i, j] * p[j]
            pgp += PG[i, j] * p[j]
        g0, h0 = _phi_derivs(a, p, qp, pgp, lam, eps, 0.0)
        if not (g0 < 0.0) or h0 <= 0.0:
            continue  # not a descent direction: caller restarts CG
        # Bracket the minimiser: start from the Newton step at t = 0 and
        # double until the derivative changes sign.
        lo = 0.0
        hi = -g0 / h0
        for _ in range(200):
            ghi, _h = _phi_derivs(a, p, qp, pgp, lam, eps, hi)
            if ghi >= 0.0:
                break
            lo = hi
            hi *= 2.0
        t = 0.5 * (lo + hi)
        for _ in range(100):
            g, h = _phi_derivs(a, p, qp, pgp, lam, eps, t)
            if g == 0.0:
                break
            if g < 0.0:
                lo = t
            else:
                hi = t
            tn = t - g / h if h > 0.0 else 0.5 * (lo + hi)
            if not (lo < tn < hi):
                tn = 0.5 * (lo + hi)
            if abs(tn - t) <= 1e-15 * max(1.0, abs(t)) or hi - lo <= 1e-15 * max(1.0, hi):
                t = tn
                break
            t = tn
        t_out[i] = t


@njit(cache=True)
def project_rows_to_ball(D, c):
    """Project every row of ``D`` onto {d : ||d||^2 <= c} in place.

    The Euclidean projection onto a ball is a radial rescale of the rows
    that lie outside it; rows inside are untouched.  Returns the number of
    rows that were rescaled.
    """
    radius = np.sqrt(c)
    n_scaled = 0
    for i in range(D.shape[0]):
        s = 0.0
        for j in range(D.shape[1]):
            s += D[i, j] * D[i, j]
        if s > c:
            f = radius / np.sqrt(s)
            for j in range(D.shape[1]):
                D[i, j] *= f
            n_scaled += 1
    return n_scaled
