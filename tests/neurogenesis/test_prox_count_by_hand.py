"""prox_count (paper 000, Alg. 2) where no threshold gives the count: the bisection's stop, replayed by hand.

Two entries of equal magnitude enter together, so the count jumps over
``beta`` and the search ends on the bracket's relative width,
``(hi - lo) / hi < eps_lambda``. It also ends where the bracket cannot be halved any more in floating
point (an ``eps_lambda`` below rounding). The replay uses the same float operations
(every threshold is a dyadic multiple of ``max|u|``), so the kernel and its
NumPy reference must give its bits, at scales far from 1 where a relative
and an absolute width differ.
"""

import numpy as np
import pytest

from neurosim.kernels.dictionary import prox_count
from neurosim.rules.dictionary import prox_count_numpy


def replay(u, beta, eps_lambda):
    """(threshold, sparsified u) of the documented search."""
    a = [abs(float(v)) for v in u]
    hi, lo = max(a), 0.0
    while True:
        lam = 0.5 * (lo + hi)
        count = sum(v > lam for v in a)
        if count == beta or (hi - lo) / hi < eps_lambda or not (lo < lam < hi):
            break
        if count > beta:
            lo = lam
        else:
            hi = lam
    return lam, np.array([np.sign(float(x)) * (v - lam) if v > lam else 0.0 for x, v in zip(u, a)])


TIE = np.array([3.0, -2.0, 0.5, 2.0, 0.0])  # |u| = 2 twice: 1 -> 3 nonzeros, never 2


@pytest.mark.parametrize("scale", [1e-3, 1.0, 40.0])
@pytest.mark.parametrize("eps_lambda", [0.2, 1e-2, 1e-6])
def test_a_count_no_threshold_gives_stops_at_the_relative_width(scale, eps_lambda):
    u = scale * TIE
    lam, expected = replay(u, 2, eps_lambda)
    assert np.count_nonzero(expected) in (1, 3)
    out = np.full(u.size, np.nan)
    assert prox_count(u, 2, eps_lambda, out) == lam
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(prox_count_numpy(u, 2, eps_lambda), expected)


def test_the_cases_separate_relative_from_absolute_width():
    # at scale 40 an absolute width would stop later, at 1e-3 sooner: the cases above can fail either way
    for scale in (40.0, 1e-3):
        u = scale * TIE
        rel = replay(u, 2, 1e-2)[0]
        a = np.abs(u)
        lo, hi = 0.0, float(a.max())
        while True:
            lam = 0.5 * (lo + hi)
            count = int(np.sum(a > lam))
            if count == 2 or (hi - lo) < 1e-2:
                break
            lo, hi = (lam, hi) if count > 2 else (lo, lam)
        assert lam != rel


def test_a_count_hit_on_the_way_and_more_than_there_are():
    u = np.array([4.0, -1.0, 0.0, 2.5])
    out = np.zeros(4)
    assert prox_count(u, 2, 1e-10, out) == 2.0  # the first threshold, max/2, keeps 4 and 2.5
    np.testing.assert_array_equal(out, [2.0, 0.0, 0.0, 0.5])
    assert prox_count(u, 3, 1e-10, out) == 0.0  # u has 3 nonzeros: unchanged, threshold 0
    np.testing.assert_array_equal(out, u)


def test_an_eps_lambda_below_rounding_ends_on_adjacent_floats_instead_of_looping(tmp_path):
    # (hi - lo) / hi never falls below 1e-20: before the floating-point stop, a tie looped forever. Run in a
    # subprocess with a timeout, so a regression fails instead of hanging the suite.
    import subprocess
    import sys

    script = tmp_path / "tie.py"
    script.write_text(
        "import numpy as np\n"
        "from neurosim.kernels.dictionary import prox_count\n"
        "from neurosim.rules.dictionary import prox_count_numpy\n"
        "u = 40.0 * np.array([3.0, -2.0, 2.0, 0.5, 0.0])\n"
        "out = np.zeros(5)\n"
        "lam = prox_count(u, 2, 1e-20, out)\n"
        "assert np.array_equal(out, prox_count_numpy(u, 2, 1e-20))\n"
        "print(repr(lam), np.count_nonzero(out))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lam, nonzero = done.stdout.split()
    lam = float(lam)
    assert lam == replay(40.0 * TIE, 2, 1e-20)[0]
    assert abs(lam - 80.0) <= 2 * np.spacing(80.0)  # the bracket closed on the jump of the count at |u| = 80
    assert int(nonzero) in (1, 3)
