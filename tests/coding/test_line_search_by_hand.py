"""The epsilon-L1 exact line search (Lee et al. 2006, Eq. 1) replayed by hand, bit for bit.

``eps_l1_line_search`` minimises ``phi(t) = f(a + t p)`` over ``t >= 0`` by
safeguarded Newton on ``phi'(t) = 0`` (kernels/basis.py): a bracket grown by
doubling from the Newton step at 0, then Newton iterates replaced by
bisection whenever they leave the bracket, stopping when a step or the
bracket is below ``1e-15`` relative. A wrong curvature or stopping rule
still ends near the minimiser, so the result alone cannot tell it; the
replay below does the same float operations in plain Python, in the same
order, and the kernel must give its bits. Independently, the returned step
must make ``phi'`` vanish and lower the objective.
"""

import math

import numpy as np
import pytest

from neurosim.kernels.basis import eps_l1_line_search


def derivs(a, p, qp, pgp, lam, eps, t):
    d1 = qp + t * pgp
    d2 = pgp
    for aj, pj in zip(a, p):
        if pj == 0.0:
            continue
        u = aj + t * pj
        r = math.sqrt(u * u + eps)
        d1 += lam * pj * u / r
        d2 += lam * pj * pj * eps / (r * r * r)
    return d1, d2


def replay(a, p, q, pg, lam, eps):
    """The documented search for one row; 0.0 when ``p`` is not a descent direction."""
    a, p = [float(v) for v in a], [float(v) for v in p]
    qp = pgp = 0.0
    for qj, gj, pj in zip(q, pg, p):
        qp += float(qj) * pj
        pgp += float(gj) * pj
    g0, h0 = derivs(a, p, qp, pgp, lam, eps, 0.0)
    if not (g0 < 0.0) or h0 <= 0.0:
        return 0.0
    lo, hi = 0.0, -g0 / h0
    for _ in range(200):
        if derivs(a, p, qp, pgp, lam, eps, hi)[0] >= 0.0:
            break
        lo, hi = hi, 2.0 * hi
    t = 0.5 * (lo + hi)
    for _ in range(100):
        g, h = derivs(a, p, qp, pgp, lam, eps, t)
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
    return t


def objective(G, b, lam, eps, a):
    return 0.5 * a @ G @ a - b @ a + lam * np.sum(np.sqrt(a * a + eps))


def _rows(seed, n_rows=6, n=5):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n + 3, n))
    G = M.T @ M  # positive definite Gram
    B = rng.standard_normal((n_rows, n)) * 3.0
    A = rng.standard_normal((n_rows, n)) * (rng.random((n_rows, n)) < 0.6)
    Q = A @ G - B
    P = -Q + 0.3 * rng.standard_normal((n_rows, n))  # mostly descent directions of the smooth part
    P[1, 2] = 0.0  # a zero component is skipped
    P[-1] = Q[-1]  # an ascent direction: step 0
    return G, B, A, P, Q


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("lam", "eps"), [(0.0, 1e-2), (0.5, 1e-2), (2.0, 1e-6), (5.0, 1.0)])
# longer directions, steps below 1: there the stopping rule's floor max(1, |t|) makes its tolerance absolute
@pytest.mark.parametrize("p_scale", [1.0, 100.0])
def test_the_kernel_gives_the_replays_bits_and_a_stationary_step(seed, lam, eps, p_scale):
    G, B, A, P, Q = _rows(seed)
    P *= p_scale
    PG = P @ G
    active = np.ones(len(A), dtype=bool)
    active[2] = False  # an inactive row gets step 0
    t = np.full(len(A), np.nan)
    eps_l1_line_search(A, P, Q, PG, lam, eps, active, t)
    expected = [replay(A[i], P[i], Q[i], PG[i], lam, eps) if active[i] else 0.0 for i in range(len(A))]
    assert t.tolist() == expected
    assert t[2] == 0.0 and t[-1] == 0.0
    for i in np.flatnonzero(t > 0):
        # phi'(t) = p'(G u - b) + lam sum_j p_j u_j / sqrt(u_j^2 + eps) vanishes at u = a + t p, relative to
        # the size of its terms (vectorized from G and b, not from the kernel's Q and PG)
        u, p = A[i] + t[i] * P[i], P[i]
        terms = np.concatenate([p * (G @ u), -p * B[i], lam * p * u / np.sqrt(u * u + eps)])
        assert abs(terms.sum()) <= 1e-9 * np.abs(terms).sum(), (i, terms.sum())
        assert objective(G, B[i], lam, eps, u) < objective(G, B[i], lam, eps, A[i])


def test_a_case_grows_the_bracket_by_doubling():
    # the doubling loop is taken by the cases above (the Newton step at 0 falls short of the minimiser)
    G, B, A, P, Q = _rows(0)
    PG = P @ G
    grown = 0
    for i in range(len(A) - 1):
        a, p = A[i].tolist(), P[i].tolist()
        qp, pgp = float(Q[i] @ P[i]), float(PG[i] @ P[i])
        g0, h0 = derivs(a, p, qp, pgp, 2.0, 1e-6, 0.0)
        if g0 < 0:
            grown += derivs(a, p, qp, pgp, 2.0, 1e-6, -g0 / h0)[0] < 0.0
    assert grown >= 1
