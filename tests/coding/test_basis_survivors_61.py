"""Epsilon-L1 conjugate gradient and ``learn_bases``' coder tolerance, against their documented behaviour.

Pinned here:

* ``epsilon_l1_codes`` runs at most ``max_iter`` CG iterations and, when a
  sample misses the tolerance, reports exactly ``max_iter`` (as ``n_iter``
  and in the ``NonConvergenceWarning``);
* its Polak-Ribiere+ directions are conjugate directions: with ``lam = 0``
  the problem is the quadratic ``0.5 a'Ga - b'a`` and (Jacobi-)preconditioned
  CG with exact line searches terminates in at most ``n_atoms`` iterations in
  exact arithmetic, while preconditioned steepest descent (the same method
  without the ``beta P`` term), computed here with NumPy, needs hundreds;
* ``learn_bases`` accepts any ``coder_tol >= 0`` (``check_float(low=0)``),
  passes it to the coefficient solver, and refuses a negative one.
"""

import warnings

import numpy as np
import pytest

from neurosim.coding.basis import epsilon_l1_codes, learn_bases
from neurosim.coding.encoders import NonConvergenceWarning, feature_sign


def _conditioned_problem(seed, n=6, n_samples=4):
    """A square dictionary with singular values 1 .. 10^-1.5 (cond(D D^T) = 1e3), random rotations."""
    rng = np.random.default_rng(seed)
    Q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    D = Q1 @ np.diag(np.logspace(0, -1.5, n)) @ Q2
    X = rng.standard_normal((n_samples, n))
    return X, D


def _steepest_descent_iterations(X, D, tol, cap):
    """Jacobi-preconditioned steepest descent with exact line search on 0.5 a'Ga - b'a (lam = 0), every
    sample run until ||grad||_inf <= tol * max(1, ||D x||_inf) (the documented rule); its iteration count."""
    G = D @ D.T
    B = X @ D.T
    minv = 1.0 / np.diag(G)
    A = np.zeros_like(B)
    thresh = tol * np.maximum(1.0, np.max(np.abs(B), axis=1))
    for it in range(cap + 1):
        grad = A @ G - B
        if np.all(np.max(np.abs(grad), axis=1) <= thresh):
            return it
        P = -minv * grad
        t = -np.einsum("ij,ij->i", grad, P) / np.einsum("ij,ij->i", P @ G, P)
        A += t[:, None] * P
    return cap + 1


@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_eps_l1_stops_after_exactly_max_iter_iterations_and_says_so(max_iter):
    """A tolerance far below what 3 iterations reach: every run uses all max_iter iterations, reports
    n_iter == max_iter and names max_iter in the warning; the iterates are those of the longer runs cut short."""
    X, D = _conditioned_problem(0)
    lam, eps, tol = 0.1, 1.0, 1e-13
    with pytest.warns(NonConvergenceWarning, match=rf"4 of 4 samples .* max_iter={max_iter} CG iterations"):
        A, n_iter = epsilon_l1_codes(X, D, lam, eps, tol=tol, max_iter=max_iter, return_n_iter=True)
    assert n_iter == max_iter
    # max_iter iterations move the codes differently from max_iter - 1 (a fresh, deterministic run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvergenceWarning)
        A_prev, n_prev = epsilon_l1_codes(X, D, lam, eps, tol=tol, max_iter=max_iter - 1, return_n_iter=True)
    assert n_prev == max_iter - 1
    assert np.all(np.any(A != A_prev, axis=1))
    if max_iter == 1:
        np.testing.assert_array_equal(A_prev, 0.0)  # max_iter=0: the zero start, untouched


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_eps_l1_cg_on_a_quadratic_terminates_like_linear_cg(seed):
    """lam = 0: f is the quadratic 0.5 a'Ga - b'a and the preconditioner is the constant diag(G)^-1, so the
    PR+ iteration with exact line search is linear PCG, exact after n_atoms = 6 steps in exact arithmetic.
    Allow twice that for rounding (cond 1e3); steepest descent needs far more on the same problem."""
    X, D = _conditioned_problem(seed)
    tol = 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        A, n_iter = epsilon_l1_codes(X, D, 0.0, 1.0, tol=tol, max_iter=2000, return_n_iter=True)
    n_atoms = D.shape[0]
    assert 1 <= n_iter <= 2 * n_atoms
    # the minimiser solves G a = D x
    np.testing.assert_allclose(A, np.linalg.solve(D @ D.T, D @ X.T).T, rtol=0, atol=1e-6)
    # the problem discriminates: without conjugation the same preconditioned method is much slower
    assert _steepest_descent_iterations(X, D, tol, cap=2000) >= 10 * 2 * n_atoms


def _small_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((12, 5))
    D0 = rng.standard_normal((6, 5))
    D0 /= np.linalg.norm(D0, axis=1, keepdims=True)
    return X, D0


@pytest.mark.parametrize("coder_tol", [1e-6, 0.5])
def test_learn_bases_accepts_a_coder_tol_below_one_and_codes_with_it(coder_tol):
    """coder_tol only needs to be >= 0; with max_iter=0 the codes are the coder's at that tolerance."""
    X, D0 = _small_data()
    res = learn_bases(X, 6, 0.2, D_init=D0, max_iter=0, coder_tol=coder_tol)
    np.testing.assert_array_equal(res.codes, feature_sign(X, D0, 0.2, tol=coder_tol))
    res = learn_bases(X, 6, 0.2, coder="epsilon_l1", eps=1e-2, D_init=D0, max_iter=0, coder_tol=coder_tol)
    np.testing.assert_array_equal(res.codes, epsilon_l1_codes(X, D0, 0.2, 1e-2, tol=coder_tol))


def test_learn_bases_accepts_coder_tol_zero():
    """coder_tol = 0 is in the allowed range [0, inf): CG then runs to its cap (and warns), as a direct call does."""
    X, D0 = _small_data(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvergenceWarning)
        res = learn_bases(X, 6, 0.2, coder="epsilon_l1", eps=1e-2, D_init=D0, max_iter=0, coder_tol=0.0)
        ref = epsilon_l1_codes(X, D0, 0.2, 1e-2, tol=0.0)
    np.testing.assert_array_equal(res.codes, ref)


def test_learn_bases_refuses_a_negative_coder_tol():
    X, D0 = _small_data()
    with pytest.raises(ValueError, match="coder_tol"):
        learn_bases(X, 6, 0.2, D_init=D0, max_iter=0, coder_tol=-1e-6)
