"""lambda_for_count's bisection (Garg et al. 2017, Alg. 2), step by step against a by-hand replay.

With orthonormal atoms (``D = I``) the lasso code is soft thresholding of
``c = D x``, so the count at ``lam`` is ``#{|c_i| > lam}`` (``#{c_i > lam}``
when non-negative) and the bisection can be replayed in plain Python with the
same float operations: every ``mid`` here is a dyadic multiple of the bracket
top, never equal to an entry of ``c``, so the replay gives the kernel's bits.
The brackets stay wider than ``1e-6``: closer to a jump of the count, codes
of size ``|c_i| - lam`` fall below feature-sign's own tolerance.
The replay stops where the documentation says: the count is hit, the bracket
is narrower than ``rtol_lambda`` times its top, or ``max_bisect`` steps ran.
"""

import numpy as np
import pytest

from neurosim.coding import NonConvergenceWarning, lambda_for_count


def replay(c, n_nonzero, rtol_lambda, max_bisect, nonneg=False):
    """The documented search, by hand: (returned lambda, steps taken, count at that lambda)."""
    values = c if nonneg else np.abs(c)
    lo, hi = 0.0, float(values.max())
    mid, cnt, steps = hi, 0, 0
    for _ in range(max_bisect):
        steps += 1
        mid = 0.5 * (lo + hi)
        cnt = int(np.sum(values > mid))
        if cnt == n_nonzero or (hi - lo) < rtol_lambda * hi:
            break
        if cnt > n_nonzero:
            lo = mid
        else:
            hi = mid
    return mid, steps, cnt


# two atoms entering together at |c| = 2: the count jumps from 1 to 3 and 2 is never hit
MISSED = np.array([3.0, -2.0, 2.0, 1.0])
# the count 2 holds for lambda in [1, 2): hit on the way
HIT = np.array([3.0, -2.5, 1.0, 0.25])


# rows searched in one call, each on its own: the largest |c| first, last, negative, below 1; a count hit
# on the way; and D x = 0, whose lambda is 0 (no bracket to search)
ROWS = np.array([MISSED, 0.1 * MISSED[::-1], -0.5 * MISSED, HIT, 0.0 * HIT, 0.25 * HIT[::-1]])


@pytest.mark.parametrize("rtol_lambda", [0.3, 0.05, 1e-3, 1e-6])
@pytest.mark.parametrize("max_bisect", [3, 8, 100])
def test_each_row_stops_at_the_documented_bracket(rtol_lambda, max_bisect):
    expected = [replay(c, 2, rtol_lambda, max_bisect)[0] if c.any() else 0.0 for c in ROWS]
    with pytest.warns(NonConvergenceWarning):
        lam, A = lambda_for_count(ROWS, np.eye(4), 2, rtol_lambda=rtol_lambda, max_bisect=max_bisect,
                                  return_codes=True)
    assert lam.tolist() == expected
    soft = np.sign(ROWS) * np.maximum(np.abs(ROWS) - lam[:, None], 0.0)
    np.testing.assert_allclose(A, soft, rtol=1e-12, atol=1e-14)


def test_the_replay_separates_the_stopping_rules():
    # the cases above must tell the bracket rule from the step cap, else they could not fail on either
    assert replay(MISSED, 2, 0.3, 100)[1] < replay(MISSED, 2, 1e-3, 100)[1] < replay(MISSED, 2, 1e-6, 100)[1] < 100
    assert replay(MISSED, 2, 1e-6, 8)[1] == 8


@pytest.mark.parametrize("nonneg", [False, True])
def test_a_count_hit_on_the_way_stops_there(nonneg):
    c = np.abs(HIT) if nonneg else HIT
    expected, steps, cnt = replay(c, 2, 1e-10, 100, nonneg=nonneg)
    assert cnt == 2 and steps == 1  # the first mid, 1.5, has the count
    lam = lambda_for_count(c, np.eye(4), 2, nonneg=nonneg)
    assert lam == expected == 1.5


def test_non_negative_codes_count_only_positive_correlations():
    # -5 never enters a non-negative code; 2 and 2 enter together (the largest entry first, then last)
    C = np.array([[3.0, -5.0, 2.0, 2.0], [0.2, 0.2, -0.5, 0.3], [-1.0, -2.0, 0.0, 0.0]])
    expected = [replay(c, 2, 0.05, 100, nonneg=True)[0] for c in C[:2]] + [0.0]  # no positive entry: lambda 0
    with pytest.warns(NonConvergenceWarning):
        lam, A = lambda_for_count(C, np.eye(4), 2, nonneg=True, rtol_lambda=0.05, return_codes=True)
    assert lam.tolist() == expected
    np.testing.assert_allclose(A, np.maximum(C - lam[:, None], 0.0), rtol=1e-12, atol=1e-14)


def test_the_kernel_returns_how_many_rows_missed_their_count():
    # the count the network's count coder reports as failed solves (kernels.encoding reads the return value)
    from neurosim.kernels.feature_sign import FS_CONVERGED, FS_COUNT_MISSED, lambda_search_codes

    A, lams = np.zeros_like(ROWS), np.zeros(len(ROWS))
    status = np.full(len(ROWS), -99, dtype=np.int64)
    failed = lambda_search_codes(np.eye(4), ROWS, 2, A, lams, False, 100, 1e-10, 1e-3, 100, status)
    missed = [FS_COUNT_MISSED, FS_COUNT_MISSED, FS_COUNT_MISSED, FS_CONVERGED, FS_COUNT_MISSED, FS_CONVERGED]
    assert status.tolist() == missed
    assert failed == 4
    # what the code array held before is overwritten, not warm-started from
    A2, lams2 = np.full_like(ROWS, 7.0), np.zeros(len(ROWS))
    assert lambda_search_codes(np.eye(4), ROWS, 2, A2, lams2, False, 100, 1e-10, 1e-3, 100, status) == 4
    np.testing.assert_array_equal(A2, A)
    np.testing.assert_array_equal(lams2, lams)
