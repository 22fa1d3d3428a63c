"""The blocked block-coordinate sweep (``kernels.dictionary.block_coordinate_descent``) against the atom-by-atom one.

The kernel takes the data term of ``BCD_BLOCK`` atoms at a time from one BLAS
product and corrects it with the changes of the block's atoms updated before
each one. Oracle: the sweep of Mairal et al. (2009, Alg. 2) written atom by
atom in NumPy (``BlockCoordinateDescent.update_numpy``'s steps), for sizes
below, at and across block boundaries, with never-used atoms, the sparsifying
prox, the group shrink and several sweeps to a tolerance.
"""

import numpy as np
import pytest

from neurosim.kernels.dictionary import BCD_BLOCK, block_coordinate_descent
from neurosim.rules.dictionary import prox_count_numpy


def reference(w, A, B, lambda_g, beta_d, tol, max_sweeps, eps_lambda=1e-10):
    w = w.copy()
    for sweep in range(max_sweeps):
        change = norm = 0.0
        for j in range(w.shape[0]):
            ajj = A[j, j]
            u = (B[j] - A[j] @ w) / ajj + w[j] if ajj > 0.0 else w[j].copy()
            v = prox_count_numpy(u, beta_d, eps_lambda) if beta_d > 0 else u
            nv = float(np.sqrt(v @ v))
            shrink = max(0.0, 1.0 - lambda_g / nv) if nv > 0.0 else 0.0
            new = v * (shrink / max(1.0, shrink * nv))
            change += float((new - w[j]) @ (new - w[j]))
            norm += float(w[j] @ w[j])
            w[j] = new
        if change <= tol * tol * norm:
            return w, sweep + 1
    return w, max_sweeps


@pytest.mark.parametrize("k", [1, 5, BCD_BLOCK, BCD_BLOCK + 1, 2 * BCD_BLOCK + 7])
@pytest.mark.parametrize("lambda_g, beta_d, max_sweeps", [(0.0, 0, 1), (0.0, 0, 50), (0.05, 0, 3), (0.0, 6, 2)])
def test_blocked_sweep_equals_atom_by_atom(k, lambda_g, beta_d, max_sweeps):
    rng = np.random.default_rng(k + 100 * beta_d + max_sweeps)
    m, n = 24, 300
    w = rng.standard_normal((k, m))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    codes = rng.standard_normal((n, k)) * (rng.random((n, k)) < 0.3)
    if k > 1:
        codes[:, k // 2] = 0.0  # a never-used atom: a_jj = 0, no data term
    X = codes @ w + 0.1 * rng.standard_normal((n, m))
    A, B = codes.T @ codes, codes.T @ X
    want, sweeps = reference(w, A, B, lambda_g, beta_d, 1e-6, max_sweeps)
    got, info = w.copy(), np.zeros(2, np.int64)
    assert block_coordinate_descent(got, A, B, lambda_g, beta_d, 1e-6, max_sweeps, 1e-10, False, np.zeros(m), np.zeros(m), info)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    assert info[0] == sweeps
    assert np.abs(got - w).max() > 1e-3  # the sweep did move the atoms


def test_blocked_sweep_reports_non_finite():
    k, m = BCD_BLOCK + 3, 8
    w = np.ones((k, m)) / np.sqrt(m)
    A, B = np.eye(k), np.zeros((k, m))
    B[k - 1, 0] = np.inf  # the last block's last atom
    assert not block_coordinate_descent(w, A, B, 0.0, 0, 1e-6, 1, 1e-10, False, np.zeros(m), np.zeros(m), np.zeros(2, np.int64))
