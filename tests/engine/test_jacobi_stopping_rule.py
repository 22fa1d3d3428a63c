"""Jacobi's tolerance mode stops at the iteration its documented rule names, replayed by hand.

``jacobi_relax`` stops after the first iteration whose largest update, over the
whole batch, is at most ``tol * max(max |y|, max |drive|)`` (``max |y|`` of
the new iterate, over the batch; with an all-zero drive the starting state's
``max |y|`` takes the drive's place), and reports the iterations run in ``info[0]``
(``-max_iter`` when the rule never held). The replay below is the same
arithmetic in plain Python floats (lateral sums in index order, as the
hand-loop product does for ``n <= SMALL_LATERAL``), so iterates and counts
must agree bit for bit. Activities both below 1 (where the rule used before
issue 38, ``tol * (1 + max |y|)``, was absolute) and far above 1 are used.
"""

import numpy as np
import pytest

from neurosim.kernels.dense import SMALL_LATERAL, jacobi_relax


def replay(y0, d, M, s, eta, tol, max_iter, zero_start):
    """(iterations as info[0] reports them, final iterate) of the documented rule."""
    batch, n = d.shape
    c = 1.0 - eta
    y = [[0.0] * n for _ in range(batch)] if zero_start else y0.tolist()
    floor = max(abs(float(v)) for v in d.ravel())
    if floor == 0.0:
        floor = max(abs(v) for row in y for v in row)
    first = 0
    if zero_start:
        y = [[eta * float(d[b, i]) for i in range(n)] for b in range(batch)]
        delta = max(abs(v) for row in y for v in row)
        if delta <= tol * max(delta, floor):
            return 1, np.array(y)
        first = 1
    for it in range(first, max_iter):
        new = []
        for b in range(batch):
            z = [sum((float(M[i, j]) * y[b][j] for j in range(n)), 0.0) if s != 0.0 else 0.0 for i in range(n)]
            new.append([c * y[b][i] + eta * (float(d[b, i]) + s * z[i]) for i in range(n)])
        delta = max(abs(new[b][i] - y[b][i]) for b in range(batch) for i in range(n))
        ymax = max(abs(v) for row in new for v in row)
        y = new
        if delta <= tol * max(ymax, floor):
            return it + 1, np.array(y)
    return -max_iter, np.array(y)


def _problem(scale, lateral, batch=2, n=5, seed=3):
    rng = np.random.default_rng(seed)
    M = lateral * rng.standard_normal((n, n))
    np.fill_diagonal(M, 0.0)
    d = scale * rng.standard_normal((batch, n))
    y0 = scale * rng.standard_normal((batch, n))
    return M, d, y0


@pytest.mark.parametrize("zero_start", [True, False])
@pytest.mark.parametrize("scale", [1e-3, 0.2, 50.0])
@pytest.mark.parametrize(("s", "lateral"), [(0.0, 0.0), (-1.0, 0.1), (1.0, 0.05)])
@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-9])
def test_the_iteration_count_and_iterate_follow_the_rule(zero_start, scale, s, lateral, tol):
    M, d, y0 = _problem(scale, lateral)
    assert d.shape[1] <= SMALL_LATERAL
    eta, max_iter = 0.3, 200
    expected, y_ref = replay(y0, d, M, s, eta, tol, max_iter, zero_start)
    y = y0.copy()
    info = np.zeros(2, dtype=np.int64)
    assert jacobi_relax(y, d, M, s, eta, tol, max_iter, zero_start, np.empty_like(y), info)
    assert info[0] == expected
    np.testing.assert_array_equal(y, y_ref)


def test_the_cases_reach_the_rule_at_different_iterations():
    # the cases above must tell the rule apart from a looser one, and no case ends on max_iter
    M, d, y0 = _problem(1e-3, 0.1)
    exact = replay(y0, d, M, -1.0, 0.3, 1e-4, 200, False)[0]
    assert 0 < exact < 200
    looser = replay(y0, d, M, -1.0, 0.3, 2e-4, 200, False)[0]
    assert looser < exact


def test_an_unreachable_tolerance_reports_minus_max_iter_and_counts_the_call():
    M, d, y0 = _problem(0.2, 0.1)
    y = y0.copy()
    info = np.zeros(2, dtype=np.int64)
    assert jacobi_relax(y, d, M, -1.0, 0.3, 1e-300, 7, False, np.empty_like(y), info)
    assert info.tolist() == [-7, 1]
    np.testing.assert_array_equal(y, replay(y0, d, M, -1.0, 0.3, 1e-300, 7, False)[1])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("sign", [1.0, -1.0, 0.5, 0.0])
def test_synaptic_drive_is_the_signed_product(sign, accumulate):
    # the drive Jacobi relaxes towards: out (+)= sign * pre @ W.T (an inhibitory projection first into its
    # population overwrites out with the negated product)
    from neurosim.kernels.dense import synaptic_drive

    rng = np.random.default_rng(11)
    pre, W, out0 = rng.standard_normal((3, 6)), rng.standard_normal((4, 6)), rng.standard_normal((3, 4))
    out = out0.copy()
    synaptic_drive(out, pre, W, sign, accumulate)
    expected = sign * (pre @ W.T) + (out0 if accumulate else 0.0)
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("zero_start", [True, False])
@pytest.mark.parametrize("tol", [0.0, 1e-300])
@pytest.mark.parametrize(("delta", "contracting"), [(2.0**-39, False), (2.0**-40, True)])
def test_the_non_contraction_floor_at_a_tiny_state(zero_start, tol, delta, contracting):
    # M = [[0, 1], [1, 0]], s = +1, eta = 1/2: T = (I + M) / 2 keeps (1, 1) (eigenvalue 1) and drops (1, -1),
    # so from y = 0 every update is exactly delta/2 (1, 1): u_K = u_1, the iteration does not shrink it, and
    # only the floor GROWTH_FLOOR^2 (1 + ||y_K||^2) = 1e-24 (||y_K|| ~ 1e-11 vanishes beside 1) decides.
    # ||dy||^2 = delta^2 / 2: 2^-79 = 1.65e-24 is above it (not contracting), 2^-81 below. All values are
    # dyadic, so the arithmetic is exact.
    from neurosim.kernels.dense import GROWTH_FLOOR

    assert GROWTH_FLOOR == 1e-12
    M = np.array([[0.0, 1.0], [1.0, 0.0]])
    d = np.full((1, 2), delta)
    y = np.zeros((1, 2))
    info = np.zeros(2, dtype=np.int64)
    ok = jacobi_relax(y, d, M, 1.0, 0.5, tol, 6, zero_start, np.empty_like(y), info)
    assert ok is contracting
    np.testing.assert_array_equal(y, np.full((1, 2), 3.0 * delta))  # six updates of delta / 2
    assert info[0] == (6 if tol == 0.0 and contracting else -6)  # -max_iter: tolerance unmet, or not contracting
    assert info[1] == (1 if tol > 0.0 and contracting else 0)


@pytest.mark.parametrize("zero_start", [True, False])
@pytest.mark.parametrize("max_iter", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("s", [0.0, -1.0])
def test_fixed_iterations_run_exactly_max_iter_updates(zero_start, max_iter, s):
    # tol = 0: exactly max_iter updates, whatever share of them the kernel measures (the first unless
    # zero_start gave it, and the last) and however few are left for its unmeasured loop (0, 1, 2, ...)
    M, d, y0 = _problem(0.2, 0.1)
    y = y0.copy()
    info = np.zeros(2, dtype=np.int64)
    assert jacobi_relax(y, d, M, s, 0.3, 0.0, max_iter, zero_start, np.empty_like(y), info)
    # the replay with a tolerance no update meets runs the same max_iter updates
    count, y_ref = replay(y0, d, M, s, 0.3, 1e-300, max_iter, zero_start)
    assert count == -max_iter and info[0] == max_iter
    np.testing.assert_array_equal(y, y_ref)
