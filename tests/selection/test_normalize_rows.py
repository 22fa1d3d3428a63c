"""Step 4d of paper 004's Alg. 1 (atoms back to unit norm): the kernel and its NumPy reference.

Oracle: the closed form ``w / ||w||`` computed in extended range (each row scaled by a power of two first,
which is exact), and the documented exceptions: all-zero and non-finite rows are left as they are.
The rows are chosen where a shortcut shows: the largest entry first, last or alone; entries whose squares
overflow or underflow (the reason for dividing by the largest magnitude first).
"""

import math

import numpy as np
import pytest

from neurosim.kernels.example_sgd import normalize_rows
from neurosim.rules.example_sgd import normalize_rows_numpy

ROWS = [
    [3.0, 4.0, 0.0],
    [0.0, 0.0, 5.0],  # the only nonzero entry is the last
    [-7.0, 0.0, 0.0],  # ... the first
    [1.0, 2.0, -1e300],  # squares overflow; the largest is last
    [1e300, 1e300, 1e300],
    [1e-300, -2e-300, 0.0],  # squares underflow to 0
    [5e-324, 0.0, 0.0],  # the smallest subnormal
    [2.0, -2.0, 1.0],
]
UNTOUCHED = [[0.0, 0.0, 0.0], [np.inf, 1.0, 0.0], [1.0, np.nan, 2.0], [-np.inf, np.inf, 0.0]]


def _unit(row):
    """w / ||w|| with the row scaled by 2^-e first (exact), e the exponent of its largest magnitude."""
    row = np.asarray(row, float)
    e = math.frexp(float(np.abs(row).max()))[1]
    scaled = np.array([math.ldexp(v, -e) for v in row])
    return scaled / math.sqrt(math.fsum(v * v for v in scaled))


@pytest.mark.parametrize("normalize", [normalize_rows, normalize_rows_numpy], ids=["kernel", "numpy"])
def test_every_nonzero_finite_row_becomes_its_unit_vector(normalize):
    W = np.array(ROWS)
    normalize(W)
    for row, got in zip(ROWS, W):
        np.testing.assert_allclose(got, _unit(row), rtol=4e-16, atol=0, err_msg=str(row))
        assert abs(float(np.sum(got * got)) - 1.0) <= 4e-16


@pytest.mark.parametrize("normalize", [normalize_rows, normalize_rows_numpy], ids=["kernel", "numpy"])
def test_zero_and_non_finite_rows_are_left_as_they_are(normalize):
    W = np.array(UNTOUCHED + ROWS[:2])
    before = W.copy()
    normalize(W)
    np.testing.assert_array_equal(W[:len(UNTOUCHED)], before[:len(UNTOUCHED)])
    np.testing.assert_allclose(W[len(UNTOUCHED):], [_unit(r) for r in ROWS[:2]], rtol=4e-16, atol=0)


def test_kernel_and_numpy_reference_agree_to_rounding_on_random_rows():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((50, 7)) * 10.0 ** rng.integers(-200, 200, size=(50, 1))
    a, b = W.copy(), W.copy()
    normalize_rows(a)
    normalize_rows_numpy(b)
    np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-15)
