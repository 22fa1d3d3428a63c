"""The dictionary update of learning with example selection (Tsuchida & Cottrell 2015, Alg. 1 step 4).

One call runs the inner loop of one epoch on the ``n`` selected examples:
``passes`` times (the paper: 10) re-encode them with the current dictionary
(step 4a), equalize the activations (4b), take a stochastic-gradient step
on the reconstruction loss (4c, Eq. 8) and normalise the atoms (4d).

Layout: atoms are the rows of ``W`` (``(K, P)``; the paper's ``A-hat`` is
``W^T``), examples the rows of ``Xn`` (``(n, P)``) and codes the rows of
``Sn`` (``(n, K)``). In that layout Eq. 8, ``A <- A - eta (A S - X) S^T / n``,
is ``W <- W - eta S^T (S W - X) / n``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurosim.kernels.dense import all_finite
from neurosim.kernels.encoding import nonzero_rows
from neurosim.kernels.feature_sign import feature_sign_codes
from neurosim.kernels.greedy import k_winners_masked, nn_omp_codes, omp_codes
from neurosim.kernels.selection import equalize

__all__ = ["K_WINNERS", "FEATURE_SIGN", "OMP", "NN_OMP", "encode_rows", "example_sgd_epoch", "normalize_rows"]

#: encoder codes (the code population's ``SparseCode`` method)
K_WINNERS, FEATURE_SIGN, OMP, NN_OMP = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def normalize_rows(W):
    """Scale every nonzero finite row of ``W`` to unit Euclidean norm (projection onto ``C_A``).

    Each row is divided by its largest magnitude first, so a row whose
    squared norm would overflow (a huge learning rate) is still normalised
    instead of collapsing to zero. Zero rows and non-finite rows are left as
    they are (as by ``normalize_rows_numpy``); the engine's divergence check
    reports the latter.
    """
    for i in range(W.shape[0]):
        mx = 0.0
        for j in range(W.shape[1]):
            a = abs(W[i, j])
            if a > mx or a != a:  # a NaN stays (``max`` would skip it): the row is then left as it is
                mx = a
        if mx == 0.0 or not mx < np.inf:
            continue
        s = 0.0
        for j in range(W.shape[1]):
            W[i, j] /= mx
            s += W[i, j] * W[i, j]
        r = 1.0 / np.sqrt(s)
        for j in range(W.shape[1]):
            W[i, j] *= r


@njit(cache=True, nogil=True)
def encode_rows(method, X, W, k, lam, nonneg, absolute, max_iter, tol, S, C, G, active, status):
    """Codes of the rows of ``X`` under ``W`` by the encoder ``method``, in place in ``S``; returns failures.

    The same kernels as the ``SparseCode`` dynamics (all-zero atoms inactive):
    ``K_WINNERS`` (Eq. 7), ``FEATURE_SIGN`` with the fixed L1 weight ``lam``
    (the lasso of Eq. 5; LARS and feature-sign search reach the same
    minimiser), ``OMP`` (signed) and ``NN_OMP`` (Eq. 6, ``s >= 0``).
    """
    np.dot(X, W.T, C)
    if method == K_WINNERS:
        nonzero_rows(W, active)
        k_winners_masked(C, k, S, absolute, nonneg, active)
        return 0
    np.dot(W, W.T, G)
    if method == FEATURE_SIGN:
        # a cold start: the selected examples of consecutive passes are the same, but the dictionary moved
        return feature_sign_codes(G, C, lam, S, False, nonneg, max_iter, tol)
    kk = min(k, min(W.shape[0], W.shape[1]))
    if method == OMP:
        return omp_codes(G, C, kk, S, status)
    return nn_omp_codes(G, C, kk, S, status)


@njit(cache=True, nogil=True)
def example_sgd_epoch(W, X, index, method, k, lam, nonneg, absolute, max_iter, tol, gamma, eta, passes,
                      Xn, Sn, Cn, G, R, grad, active, status, info):
    """Alg. 1 step 4 on the examples ``X[index]``; returns whether ``W`` stayed finite.

    ``index`` holds the selected rows as float64 (the selector's recordable
    variable); ``Xn .. status`` are workspaces of the shapes their names say.
    ``info[0]`` is the number of encoder failures (non-converged feature-sign
    samples, dependent OMP atoms) in this epoch, ``info[1]`` their running sum.
    """
    n = index.size
    for r in range(n):
        Xn[r, :] = X[int(index[r])]
    failed = 0
    scale = eta / n
    for _ in range(passes):
        failed += encode_rows(method, Xn, W, k, lam, nonneg, absolute, max_iter, tol, Sn, Cn, G, active, status)
        equalize(Sn, gamma)
        np.dot(Sn, W, R)
        R -= Xn
        np.dot(Sn.T, R, grad)
        W -= scale * grad
        normalize_rows(W)
    info[0] = failed
    info[1] += failed
    return all_finite(W)
