"""Basis (dictionary) learning of Lee, Battle, Raina & Ng (2006).

"Efficient sparse coding algorithms", NIPS 19.  Sparse coding alternates two
convex problems (paper Eq. 3):

* coefficients for fixed bases: the L1-regularised least squares problem
  (Eq. 4/5), solved by feature-sign search in
  :func:`neurosim.coding.encoders.feature_sign`, or, for the smooth
  epsilon-L1 penalty of Eq. 1, by nonlinear conjugate gradient
  (:func:`epsilon_l1_codes`);
* bases for fixed coefficients: the L2-constrained least squares problem
  (Eq. 6), solved through its Lagrange dual (Eq. 7-11,
  :func:`lagrange_dual_bases`) or, as the paper's Table 2 baseline, by
  gradient descent with iterative projection (:func:`projected_gradient_bases`).

:func:`learn_bases` alternates the two until the relative change of the
objective falls below a tolerance (footnote 12).

Layout
------
scikit-learn's convention throughout: dictionary ``D`` of shape
``(n_atoms, n_features)`` (rows are the bases ``b_j`` of the paper), signals
``X`` of shape ``(n_samples, n_features)``, codes ``A`` of shape
``(n_samples, n_atoms)``.  In the paper's notation (columns are vectors)
``X_paper = X.T``, ``B = D.T`` and ``S = A.T``, so

* ``S S^T  = A^T A =: G``  (Gram matrix of the codes, n_atoms x n_atoms),
* ``X S^T  = X^T A = C^T`` with ``C := A^T X`` (n_atoms x n_features).

The learning objective per sample is ``0.5 ||x - D^T a||^2 + lam ||a||_1``
(Eq. 2 with ``2 sigma^2 = 1`` and ``beta = lam``), subject to
``||d_j||^2 <= c``.  The basis sub-problem (Eq. 6) drops the factor 0.5;
this only rescales the dual variables, not the bases.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from neurosim._lazy import lazy_module
from neurosim._validation import check_array, check_choice, check_float, check_int
from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.kernels.basis import eps_l1_line_search, project_rows_to_ball
from neurosim.progress import resolve as resolve_progress

if TYPE_CHECKING:
    from scipy import linalg
else:
    linalg = lazy_module("scipy.linalg")  # imported on first use (neurosim/_lazy.py)

__all__ = [
    "lagrange_dual_bases",
    "lagrange_dual_objective",
    "epsilon_l1_codes",
    "projected_gradient_bases",
    "learn_bases",
    "BasisLearningResult",
    "sparse_coding_objective",
]


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------

def _check_X_with(X: Any, name: str, M: Any, axis: int, mismatch: str) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and the matrix ``M`` (called ``name``), checked: non-empty 2-D arrays whose sizes along ``axis`` agree.

    ``mismatch`` is the error where they do not agree, a format string of ``n`` (the size of ``X``) and ``shape``
    (the shape of ``M``).
    """
    X = check_array("X", X, ndim=2)
    M = check_array(name, M, ndim=2)
    if M.shape[axis] != X.shape[axis]:
        raise ValueError(mismatch.format(n=X.shape[axis], shape=M.shape))
    if X.shape[0] < 1 or X.shape[1] < 1 or M.shape[1 - axis] < 1:
        raise ValueError(f"X and {name} must be non-empty; got X {X.shape}, {name} {M.shape}")
    return X, M


def _check_XA(X: Any, A: Any) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and the codes ``A``, one row per sample."""
    return _check_X_with(X, "A", A, 0, "A must have one row per sample of X: X has {n} rows, A has shape {shape}")


def _check_XD(X: Any, D: Any) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and the atoms ``D`` (rows), as many features."""
    return _check_X_with(X, "D", D, 1, "D must have shape (n_atoms, n_features={n}) to match X; got {shape}")


def _finite_stats(**arrays):
    """Raise ``ValueError`` unless every product the solver starts from (``A^T A``, ``A^T X``, ``D D^T``, ...) is finite.

    The inputs are finite, but their products overflow beyond about 1e154;
    from such statistics the solvers return NaN or an answer 50 % off without
    a warning (issue 38).
    """
    for name, value in arrays.items():
        if not np.all(np.isfinite(value)):
            raise ValueError(f"the inputs are too large: {name} overflows float64; rescale them")


def _check_optional(name, value, shape):
    if value is None:
        return None
    return check_array(name, value, shape=shape).copy()


# --------------------------------------------------------------------------
# Lagrange dual for the bases (Eq. 6-11)
# --------------------------------------------------------------------------

def _factor(G, lam_vec):
    """Cholesky factor of ``G + diag(lam)``.

    ``G + Lambda`` is singular only when the codes are rank deficient *and*
    the dual of an atom in the null space is zero.  The dual function is then
    still finite (``C = A^T X`` lies in the range of ``G + Lambda``), but
    Eq. 8-11 need an inverse, so we add the smallest diagonal jitter that
    makes the factorisation succeed (a vanishing Tikhonov term, relative
    1e-12 of the mean diagonal and growing by 100x per retry).
    """
    K = G + np.diag(lam_vec)
    scale = max(float(np.mean(np.diag(K))), np.finfo(float).tiny)
    jitter = 0.0
    for _ in range(8):
        try:
            return linalg.cho_factor(K + jitter * np.eye(K.shape[0]), lower=False, check_finite=False)
        except linalg.LinAlgError:
            jitter = 1e-12 * scale if jitter == 0.0 else jitter * 100.0
    raise linalg.LinAlgError("G + diag(dual) is not positive definite even with jitter")


def _dual_terms(G, C, c, lam_vec, want_hessian=True):
    """Negated Lagrange dual and its derivatives at ``lam_vec``.

    Returns ``(h, grad, hess, D)`` with ``h(lam) = -D(lam) - trace(X^T X)``:

    * Eq. 8:  D(lam) = tr(X^T X) - tr(C^T (G + Lambda)^{-1} C) - c sum(lam)
    * Eq. 11: D_opt(lam) = (G + Lambda)^{-1} C   (rows are the bases)
    * Eq. 9:  dD/dlam_i = ||row_i(D_opt)||^2 - c
      (paper: ||X S^T (S S^T + Lambda)^{-1} e_i||^2 - c; the same vector,
      since X S^T (S S^T + Lambda)^{-1} = D_opt^T)
    * Eq. 10: d2D/dlam_i dlam_j = -2 (D_opt D_opt^T)_{ij} ((G + Lambda)^{-1})_{ij}
      Derivation (the extracted text garbles it): with M = (G + Lambda)^{-1},
      dM/dlam_j = -M e_j e_j^T M, hence d D_opt / d lam_j = -M e_j d_j^T and
      d||d_i||^2 / d lam_j = -2 M_ij d_i . d_j.  This is the paper's
      (M C C^T M) o M with C C^T = (X S^T)^T X S^T.

    ``h`` is convex; its Hessian ``2 (D D^T) o M`` is positive definite
    whenever every atom has a nonzero basis (Schur product theorem), which
    the caller guarantees by dropping atoms whose codes are all zero.
    """
    cf = _factor(G, lam_vec)
    if want_hessian:
        # M = (G + Lambda)^{-1} from the Cholesky factor (LAPACK potri,
        # 2n^3/3 flops, a third of solving against the identity); D = M C.
        M, info = linalg.lapack.dpotri(cf[0], lower=0)
        if info != 0:  # pragma: no cover - cho_factor succeeded, so potri cannot fail
            raise linalg.LinAlgError(f"dpotri failed with info={info}")
        M = np.triu(M) + np.triu(M, 1).T  # potri fills the upper triangle only
        D = M @ C
    else:
        D = linalg.cho_solve(cf, C, check_finite=False)
    h = float(np.sum(C * D)) + c * float(np.sum(lam_vec))
    norms = np.einsum("ij,ij->i", D, D)
    grad = c - norms
    hess = 2.0 * (D @ D.T) * M if want_hessian else None
    return h, grad, hess, D


def lagrange_dual_objective(X: ArrayLike, A: ArrayLike, dual: ArrayLike, c: float = 1.0) -> float:
    """Value of the Lagrange dual ``D(lambda)`` of Eq. 8.

    ``D(lambda) = tr(X^T X) - tr(C^T (G + Lambda)^{-1} C) - c sum(lambda)``
    with ``G = A^T A`` and ``C = A^T X`` (paper: ``S S^T`` and ``(X S^T)^T``).
    By weak duality it lower-bounds the optimal value of Eq. 6,
    ``min ||X - A D||_F^2`` subject to ``||d_j||^2 <= c``, for every
    ``dual >= 0``; equality at the optimum.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.
    A : array-like of shape (n_samples, n_atoms)
        Codes of the samples.
    dual : array-like of shape (n_atoms,)
        Nonnegative dual variables; ``G + diag(dual)`` must be nonsingular.
    c : float, default=1.0
        Squared-norm bound of the bases.

    Returns
    -------
    float
        ``D(lambda)``, a lower bound of the optimal value of Eq. 6.
    """
    X, A = _check_XA(X, A)
    c = check_float("c", c, low=0.0, low_open=True)
    dual = check_array("dual", dual, shape=(A.shape[1],))
    if np.any(dual < 0):
        raise ValueError("dual must be >= 0 elementwise")
    G = A.T @ A
    C = A.T @ X
    h, _, _, _ = _dual_terms(G, C, c, dual, want_hessian=False)
    return float(np.sum(X * X)) - h


def lagrange_dual_bases(
    X: ArrayLike,
    A: ArrayLike,
    c: float = 1.0,
    *,
    dual_init: ArrayLike | None = None,
    D_init: ArrayLike | None = None,
    max_iter: int = 100,
    tol: float = 1e-10,
    return_n_iter: bool = False,
) -> Any:
    """Bases minimising ``||X - A D||_F^2`` s.t. ``||d_j||^2 <= c`` via the dual.

    Solves the basis sub-problem of Lee et al. (2006), Eq. 6, by maximising
    its Lagrange dual (Eq. 8) over ``lambda >= 0`` with a projected Newton
    method (Bertsekas 1982) using the analytic gradient (Eq. 9) and Hessian
    (Eq. 10), then recovers the bases in closed form (Eq. 11):
    ``D = (A^T A + diag(lambda))^{-1} A^T X``.

    Each Newton step splits the duals into a *binding* set (``lambda_i`` at
    or within ``eps_k`` of zero and the gradient pushing it further down) and
    a free set.  On the free set it takes the Newton step of the reduced
    Hessian, on the binding set a diagonally scaled gradient step; the trial
    point is projected back onto ``lambda >= 0`` and the step length is
    backtracked until the Armijo condition along the projection arc holds.
    Near the solution this is Newton's method on the active face and
    converges quadratically.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Signals.
    A : array-like of shape (n_samples, n_atoms)
        Fixed coefficients.
    c : float, default=1.0
        Bound on the squared norm of every basis, ``c > 0``.
    dual_init : array-like of shape (n_atoms,), optional
        Warm start for the duals (e.g. the previous alternation's duals);
        negative entries are clipped to zero.  Default: the diagonal
        approximation ``lambda_i = max(0, ||C_i|| / sqrt(c) - G_ii)``, which
        is exact when the codes are orthogonal.
    D_init : array-like of shape (n_atoms, n_features), optional
        Bases for atoms whose coefficients are identically zero.  Eq. 6 does
        not determine them (any feasible vector is optimal); they are copied
        from ``D_init`` (projected onto the ball), or set to zero.
    max_iter : int, default=100
        Maximum number of Newton iterations.
    tol : float, default=1e-10
        Stop when the projected dual gradient, in the metric of the
        Hessian's diagonal ``H_ii``, satisfies ``max_i H_ii |lambda_i -
        max(0, lambda_i - g_i / H_ii)| <= tol * c`` (``g_i = c -
        ||d_i||^2``), i.e. every active constraint holds to relative
        precision ``tol`` and every inactive one is satisfied to that
        precision, or when the Newton decrement falls to the rounding level
        of the dual value (the attainable precision of ill-conditioned
        codes). Both sides are in the units of ``c``, so the same problem
        at any scale of ``X`` and ``A`` (``c`` scaled as ``||X|| / ||A||``
        squared) stops at the same iterate (issue 38: the unscaled
        ``|lambda_i - max(0, lambda_i - g_i)|`` compared duals, in units of
        ``A^T A``, with ``c``, and returned the initial guess at once,
        22 % off, for data of 1e-12).
    return_n_iter : bool, default=False
        Also return the number of Newton iterations.

    Returns
    -------
    D : ndarray of shape (n_atoms, n_features)
        Optimal bases.  Rows whose squared norm exceeds ``c`` by the residual
        ``tol`` are rescaled onto the sphere, so the result is feasible.
    dual : ndarray of shape (n_atoms,)
        Optimal dual variables of Eq. 7 (for the objective without the
        factor 0.5); zero for unused atoms.
    n_iter : int
        Only if ``return_n_iter``.

    Warns
    -----
    NonConvergenceWarning
        If the scaled projected gradient is still above ``tol * c`` after
        ``max_iter`` steps or when the line search can make no progress.

    Notes
    -----
    Complexity per Newton step is ``O(n_atoms^3 + n_atoms^2 n_features)``,
    independent of the number of samples once ``G`` and ``C`` are formed:
    the point of the paper's dual (n_atoms unknowns instead of
    n_atoms x n_features).
    """
    X, A = _check_XA(X, A)
    c = check_float("c", c, low=0.0, low_open=True)
    max_iter = check_int("max_iter", max_iter, low=0)
    tol = check_float("tol", tol, low=0.0)
    n_atoms, n_features = A.shape[1], X.shape[1]
    dual_init = _check_optional("dual_init", dual_init, (n_atoms,))
    D_init = _check_optional("D_init", D_init, (n_atoms, n_features))

    with np.errstate(over="ignore", invalid="ignore"):
        G_full = A.T @ A
        C_full = A.T @ X
    _finite_stats(**{"A^T A": G_full, "A^T X": C_full})
    return _lagrange_dual_from_stats(G_full, C_full, c, dual_init, D_init, max_iter, tol, return_n_iter)


def _projected_gradient(lam, g, H):
    """The projected gradient of the negated dual on ``lambda >= 0``, in the metric of ``diag(H)``, in units of ``c``.

    ``H_ii (lambda_i - max(0, lambda_i - g_i / H_ii))``: ``g_i`` where the
    diagonal Newton step ``g_i / H_ii`` stays inside the bound, ``H_ii
    lambda_i`` where it would cross it. The unscaled form ``lambda_i -
    max(0, lambda_i - g_i)`` subtracts ``g`` (units of ``c``) from ``lambda``
    (units of ``A^T A``) and loses ``g`` entirely when the two scales differ
    by 1e16. Where ``H_ii = 0`` (an atom whose basis is 0, so its constraint
    is inactive) it is ``g_i`` for ``lambda_i > 0`` and ``min(g_i, 0)`` at the bound.
    """
    d = np.diag(H)
    pg = np.where(lam > 0.0, g, np.minimum(g, 0.0))
    ok = d > 0.0
    pg[ok] = d[ok] * (lam[ok] - np.maximum(lam[ok] - g[ok] / d[ok], 0.0))
    return pg


def _lagrange_dual_from_stats(G_full, C_full, c, dual_init, D_init, max_iter, tol, return_n_iter=False):
    """Core of :func:`lagrange_dual_bases` on sufficient statistics.

    Only ``G = A^T A`` and ``C = A^T X`` enter Eq. 8-11, which is what lets
    the online learner (Mairal et al. 2009 statistics) reuse the solver.
    """
    n_atoms, n_features = C_full.shape
    diagG = np.diag(G_full)
    # An atom is unused when its code column is zero; then G_ii = 0 and
    # row i of C is zero, so lambda_i would be driven to 0 and G + Lambda
    # would be singular.  It drops out of the dual entirely.
    used = diagG > 0.0
    D = np.zeros((n_atoms, n_features))
    if D_init is not None:
        D[~used] = D_init[~used]
        project_rows_to_ball(D, c)
    dual = np.zeros(n_atoms)
    n_iter = 0
    if not np.any(used):
        return (D, dual, 0) if return_n_iter else (D, dual)

    G = np.ascontiguousarray(G_full[np.ix_(used, used)])
    C = np.ascontiguousarray(C_full[used])
    if dual_init is not None:
        lam = np.maximum(dual_init[used], 0.0)
    else:
        # ||C_i|| through its largest entry: the squares overflow for C of ~1e154 (codes and data of ~1e77),
        # where the solve itself is fine; an infinite start returned bases 50 % off without a warning
        big = np.abs(C).max(axis=1)
        norms = big * np.sqrt(np.einsum("ij,ij->i", C / big[:, None], C / big[:, None]))
        lam = np.maximum(norms / np.sqrt(c) - np.diag(G), 0.0)

    sigma = 1e-4  # Armijo constant
    h, g, H, Du = _dual_terms(G, C, c, lam)
    converged = False
    for n_iter in range(1, max_iter + 1):
        pg = _projected_gradient(lam, g, H)
        if np.max(np.abs(pg)) <= tol * c:
            n_iter -= 1
            converged = True
            break
        # Bertsekas' epsilon-binding set: duals at (or numerically at) the
        # bound whose gradient points outward.  eps_k shrinks with the
        # projected gradient so the set is exact near the solution.
        # (in the units of c, as pg; a dual is within it of the bound when lambda_i H_ii is)
        eps_k = min(1e-3 * c, float(np.linalg.norm(pg)))
        binding = (lam * np.diag(H) <= eps_k) & (g > 0.0)
        free = ~binding
        p = np.zeros_like(lam)
        if np.any(free):
            Hff = H[np.ix_(free, free)]
            try:
                p[free] = -linalg.solve(Hff, g[free], assume_a="pos", check_finite=False)
            except (linalg.LinAlgError, ValueError):
                # Numerically singular reduced Hessian: fall back to a
                # diagonally scaled gradient step (always a descent step).
                p[free] = -g[free] / np.maximum(np.diag(Hff), 1e-300)
        if np.any(binding):
            p[binding] = -g[binding] / np.maximum(np.diag(H)[binding], 1e-300)
        # Newton decrement: the decrease the full step predicts.  Once it is
        # at the rounding level of h, the projected gradient sits on its
        # floating-point floor (~ machine eps x cond(G + Lambda)); stop there
        # instead of looping on steps that cannot change h.
        decrement = -float(g[free] @ p[free]) + float(g[binding] @ (lam[binding] - np.maximum(lam[binding] + p[binding], 0.0)))
        pg_max = float(np.max(np.abs(pg)))
        noise_level = np.sqrt(np.finfo(float).eps) * max(abs(h), np.finfo(float).tiny)
        if decrement <= 16.0 * np.finfo(float).eps * max(abs(h), np.finfo(float).tiny):
            n_iter -= 1  # no step taken
            converged = True
            break
        step = 1.0
        accepted = False
        for _ in range(60):
            lam_new = np.maximum(lam + step * p, 0.0)
            h_new, g_new, H_new, D_new = _dual_terms(G, C, c, lam_new)
            # Armijo condition along the projection arc (Bertsekas 1982,
            # Eq. 32): decrease at least sigma times the first-order
            # prediction on the free set plus the gradient-projection
            # prediction on the binding set.
            pred = -step * float(g[free] @ p[free]) + float(g[binding] @ (lam[binding] - lam_new[binding]))
            if h - h_new >= sigma * pred:
                accepted = True
                break
            # Close to the optimum the decrease falls below the rounding
            # noise of h (|h| ~ tr(C^T M C) can be 1e9 times the decrease),
            # so Armijo cannot see it; there, accept the step when it
            # reduces the projected gradient, as Newton's method for the
            # KKT equations would.
            if decrement <= noise_level and np.max(np.abs(_projected_gradient(lam_new, g_new, H_new))) < pg_max:
                accepted = True
                break
            step *= 0.5
        if not accepted:
            break  # no further decrease representable in floating point
        lam, h, g, H, Du = lam_new, h_new, g_new, H_new, D_new
    else:
        pg = _projected_gradient(lam, g, H)
        converged = np.max(np.abs(pg)) <= tol * c
    if not (np.all(np.isfinite(Du)) and np.all(np.isfinite(lam))):
        # codes of ~1e-155 make A^T A subnormal or 0: the solve has nothing left to work with (issue 38)
        raise ValueError("lagrange_dual_bases: the bases are not finite; A^T A or A^T X lost their precision to "
                         "underflow (codes or data below about 1e-150); rescale X and A")
    if not converged:
        pg = _projected_gradient(lam, g, H)
        warnings.warn(
            f"Lagrange dual stopped after {n_iter} Newton steps with projected gradient "
            f"{np.max(np.abs(pg)):.3g} > tol * c = {tol * c:.3g}; bases are projected onto the "
            "norm ball and feasible but may be suboptimal",
            NonConvergenceWarning,
            stacklevel=3,
        )

    D[used] = Du
    dual[used] = lam
    # The dual solution satisfies ||d_j||^2 <= c (1 + tol); make it exactly
    # feasible (a radial rescale by at most tol/2, negligible in objective).
    project_rows_to_ball(D, c)
    return (D, dual, n_iter) if return_n_iter else (D, dual)


# --------------------------------------------------------------------------
# gradient descent with iterative projection (Table 2 baseline)
# --------------------------------------------------------------------------

def projected_gradient_bases(X: ArrayLike, A: ArrayLike, c: float = 1.0, *, D_init: ArrayLike | None = None,
                             lr: float | None = None, max_iter: int = 100, tol: float = 1e-8,
                             seed: int | np.random.Generator | None = None) -> np.ndarray:
    """Bases for Eq. 6 by gradient descent with iterative projection.

    The baseline of the paper's Table 2 (Censor & Zenios 1997): repeat
    ``D <- P_c(D - lr * grad)`` with ``grad = 2 (G D - C)`` the gradient of
    ``||X - A D||_F^2`` (``G = A^T A``, ``C = A^T X``) and ``P_c`` the
    row-wise projection onto ``{||d||^2 <= c}`` (a radial rescale).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.
    A : array-like of shape (n_samples, n_atoms)
        Codes of the samples (fixed during the basis step).
    c : float, default=1.0
        Squared-norm bound, ``c > 0``.
    D_init : array-like of shape (n_atoms, n_features), optional
        Starting bases (projected onto the ball first); in alternating
        learning the previous bases.  Default: random unit-norm rows scaled
        to ``sqrt(c)`` drawn with ``seed``.
    lr : float, optional
        Step size.  Default ``1 / L`` with ``L = 2 lambda_max(G)`` the
        Lipschitz constant of the gradient, the largest fixed step for which
        projected gradient is guaranteed to decrease the objective
        monotonically.
    max_iter : int, default=100
        Maximum number of projected gradient steps.
    tol : float, default=1e-8
        Stop after the first step that decreases the objective by at most
        ``tol`` relative to its value (``tol = 0``: once a step no longer
        decreases it).
    seed : int or numpy Generator, optional
        Only used for the default ``D_init``.

    Returns
    -------
    D : ndarray of shape (n_atoms, n_features)

    Warns
    -----
    NonConvergenceWarning
        If all ``max_iter >= 1`` steps ran without one meeting ``tol``
        (the bases are the last iterate, feasible).
    """
    X, A = _check_XA(X, A)
    c = check_float("c", c, low=0.0, low_open=True)
    max_iter = check_int("max_iter", max_iter, low=0)
    tol = check_float("tol", tol, low=0.0)
    n_atoms, n_features = A.shape[1], X.shape[1]
    if D_init is None:
        D = _random_bases(np.random.default_rng(seed), n_atoms, n_features, c)
    else:
        D = check_array("D_init", D_init, shape=(n_atoms, n_features)).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        G = A.T @ A
        C = A.T @ X
    _finite_stats(**{"A^T A": G, "A^T X": C})
    if lr is None:
        L = 2.0 * float(linalg.eigvalsh(G, subset_by_index=[n_atoms - 1, n_atoms - 1])[0])
        if L <= 0.0:  # all codes zero: nothing to learn
            project_rows_to_ball(D, c)
            return D
        lr = 1.0 / L
    else:
        lr = check_float("lr", lr, low=0.0, low_open=True)
    D, done = _projected_gradient_from_stats(G, C, float(np.sum(X * X)), c, D, lr, max_iter, tol)
    if max_iter > 0 and not done:
        warnings.warn(f"projected_gradient_bases: all max_iter={max_iter} steps ran without one decreasing the "
                      f"objective by at most tol={tol:g} of its value; the bases are the last iterate (increase "
                      "max_iter)", NonConvergenceWarning, stacklevel=2)
    return D


def _projected_gradient_from_stats(G, C, xx, c, D, lr, max_iter, tol):
    """``(D, met)``: ``met`` when a step met the relative-decrease rule before the cap."""
    project_rows_to_ball(D, c)
    done = False
    # ||X - A D||^2 = tr(X^T X) - 2 tr(D^T C) + tr(D^T G D): O(n_atoms^2
    # n_features) per evaluation, independent of n_samples.
    GD = G @ D
    f = xx - 2.0 * float(np.sum(D * C)) + float(np.sum(D * GD))
    for _ in range(max_iter):
        D -= (2.0 * lr) * (GD - C)
        project_rows_to_ball(D, c)
        GD = G @ D
        f_new = xx - 2.0 * float(np.sum(D * C)) + float(np.sum(D * GD))
        done = f - f_new <= tol * abs(f)
        f = f_new
        if done:
            break
    return D, done


# --------------------------------------------------------------------------
# epsilon-L1 coefficients by nonlinear conjugate gradient (Eq. 1)
# --------------------------------------------------------------------------

def epsilon_l1_codes(X: ArrayLike, D: ArrayLike, lam: float, eps: float = 1e-3, *, init: ArrayLike | None = None,
                     max_iter: int = 1000, tol: float = 1e-8, return_n_iter: bool = False) -> Any:
    """Coefficients under the epsilon-L1 penalty by nonlinear conjugate gradient.

    Minimises, independently for each sample ``x``,

        f(a) = 0.5 ||x - D^T a||^2 + lam * sum_j sqrt(a_j^2 + eps)

    (Eq. 2 with the "epsilonL1" sparsity function of Eq. 1,
    ``phi(s) = (s^2 + eps)^(1/2)``).  ``f`` is smooth and strictly convex,
    so the paper uses conjugate gradient.  We run Polak-Ribiere+ nonlinear
    CG on all samples at once (one ``P @ G`` GEMM per iteration) with:

    * an exact line search per sample (safeguarded Newton on the 1-D
      derivative, :func:`neurosim.kernels.basis.eps_l1_line_search`), so
      every step decreases ``f``;
    * Jacobi preconditioning with the Hessian diagonal
      ``G_jj + lam eps / (a_j^2 + eps)^(3/2)``, refreshed each iteration.
      For small ``eps`` the penalty's curvature near zero is
      ``lam / sqrt(eps)``, so unpreconditioned CG crawls; the paper does not
      say whether it preconditioned (deviation: ours does);
    * restart along the preconditioned steepest descent direction whenever
      the CG direction is not a descent direction.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples, one per row.
    D : array-like of shape (n_atoms, n_features)
        Dictionary, atoms as rows.
    lam : float
        Penalty weight, ``lam >= 0``.
    eps : float, default=1e-3
        Smoothing constant of Eq. 1, ``eps > 0``.  As ``eps -> 0`` the
        solution tends to the L1 (lasso) solution.
    init : array-like of shape (n_samples, n_atoms), optional
        Warm start; default zeros.
    max_iter : int, default=1000
        Maximum CG iterations.
    tol : float, default=1e-8
        Per-sample stopping rule ``||grad f(a)||_inf <= tol * max(lam, ||D x||_inf)``:
        relative to the gradient's own scale, so the same problem rescaled
        (``X``, ``lam`` and ``sqrt(eps)`` with the codes) stops at the same
        iterate (issue 38: ``max(1, .)`` made the rule absolute below 1, and
        signals of 1e-9 got zero codes without an iteration).
    return_n_iter : bool, default=False
        Also return the iterations used.

    Returns
    -------
    A : ndarray of shape (n_samples, n_atoms)
    n_iter : int
        Only if ``return_n_iter``.

    Warns
    -----
    NonConvergenceWarning
        If some samples miss the gradient tolerance within ``max_iter``.
    """
    X, D = _check_XD(X, D)
    lam = check_float("lam", lam, low=0.0)
    eps = check_float("eps", eps, low=0.0, low_open=True)
    max_iter = check_int("max_iter", max_iter, low=0)
    tol = check_float("tol", tol, low=0.0)
    n_samples, n_atoms = X.shape[0], D.shape[0]
    if init is None:
        A = np.zeros((n_samples, n_atoms))
    else:
        A = check_array("init", init, shape=(n_samples, n_atoms)).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        G = D @ D.T
        B = X @ D.T
    _finite_stats(**{"D D^T": G, "X D^T": B})
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        A, n_iter, n_left = _eps_l1_cg(G, B, lam, eps, A, max_iter, tol)
    if not np.all(np.isfinite(A)):
        # the penalty's curvature (a^2 + eps)^(3/2) over- or underflows for codes (or sqrt(eps)) beyond about
        # 1e100 or below 1e-100: NaN codes were returned without a word (issue 38)
        raise ValueError("epsilon_l1_codes overflowed float64 (non-finite codes): codes or sqrt(eps) beyond about "
                         "1e100 or below 1e-100 cannot be represented in the penalty's curvature (a^2 + eps)^(3/2); "
                         "rescale X, D, lam and eps")
    if n_left:
        warnings.warn(
            f"epsilon_l1_codes: {n_left} of {n_samples} samples did not reach the gradient "
            f"tolerance in max_iter={max_iter} CG iterations",
            NonConvergenceWarning,
            stacklevel=2,
        )
    return (A, n_iter) if return_n_iter else A


def _eps_l1_cg(G, B, lam, eps, A, max_iter, tol):
    n_samples = A.shape[0]
    diagG = np.diag(G).copy()
    # the gradient's scale: its data term D x and its penalty term (at most lam per coordinate)
    thresh = tol * np.maximum(lam, np.max(np.abs(B), axis=1))

    def penalty_grad(A):
        return lam * A / np.sqrt(A * A + eps)

    def precond(A):
        r = np.sqrt(A * A + eps)
        return 1.0 / np.maximum(diagG + lam * eps / (r * r * r), 1e-300)

    Q = A @ G - B  # gradient of the quadratic part
    grad = Q + penalty_grad(A)
    Minv = precond(A)
    Z = Minv * grad
    P = -Z
    rz = np.einsum("ij,ij->i", grad, Z)
    active = np.max(np.abs(grad), axis=1) > thresh
    t = np.zeros(n_samples)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        if not np.any(active):
            n_iter -= 1
            break
        PG = P @ G
        eps_l1_line_search(A, P, Q, PG, lam, eps, active, t)
        A += t[:, None] * P
        Q += t[:, None] * PG
        if n_iter % 50 == 0:  # cancel drift of the incremental update
            Q = A @ G - B
        grad_new = Q + penalty_grad(A)
        Minv = precond(A)
        Z_new = Minv * grad_new
        rz_new = np.einsum("ij,ij->i", grad_new, Z_new)
        # Polak-Ribiere+ with the (variable) Jacobi preconditioner.
        beta = np.maximum(
            (rz_new - np.einsum("ij,ij->i", grad, Z_new)) / np.maximum(rz, 1e-300), 0.0
        )
        P_new = -Z_new + beta[:, None] * P
        # Restart where the new direction is not a descent direction or the
        # line search made no progress (t == 0 signals a non-descent P).
        bad = (np.einsum("ij,ij->i", P_new, grad_new) >= 0.0) | (active & (t == 0.0))
        if np.any(bad):
            P_new[bad] = -Z_new[bad]
        P, grad, rz = P_new, grad_new, rz_new
        active = np.max(np.abs(grad), axis=1) > thresh
    return A, n_iter, int(np.count_nonzero(active))


# --------------------------------------------------------------------------
# alternating learner
# --------------------------------------------------------------------------

@dataclass
class BasisLearningResult:
    """Outcome of :func:`learn_bases`.

    Parameters
    ----------
    components : ndarray of shape (n_atoms, n_features)
        Learned bases (rows), ``||d_j||^2 <= c``.
    codes : ndarray of shape (n_samples, n_atoms)
        Coefficients for ``components`` from the last coding step.
    objective : ndarray of shape (n_iter + 1,)
        ``objective[0]`` is the objective of the initial (random) bases with
        their codes; ``objective[t]`` is ``f(D_t, A_t)`` after the basis step
        of iteration ``t`` and the coding step that follows it, so the codes
        always belong to the bases they are reported with.
    times : ndarray of shape (n_iter + 1,)
        Wall-clock seconds since the start at which each ``objective`` entry
        was reached (includes the time to compute the objective).
    coding_time, basis_time : float
        Total seconds spent in the coefficient and basis sub-problems.
    n_iter : int
        Number of alternations (basis updates) performed.
    converged : bool
        Whether the footnote-12 criterion was met before ``max_iter``.
    dual : ndarray of shape (n_atoms,) or None
        Final Lagrange duals (``basis="dual"`` only).
    params : dict
        The arguments of :func:`learn_bases` that produced it.
    """

    components: np.ndarray
    codes: np.ndarray
    objective: np.ndarray
    times: np.ndarray
    coding_time: float
    basis_time: float
    n_iter: int
    converged: bool
    dual: np.ndarray | None = None
    params: dict = field(default_factory=dict)


def sparse_coding_objective(X: np.ndarray, D: np.ndarray, A: np.ndarray, lam: float, penalty: str = "l1",
                            eps: float = 1e-3) -> float:
    """Objective of Eq. 2 (Lee et al. 2006): ``sum_i 0.5 ||x_i - D^T a_i||^2 + lam sum phi(a_ij)``.

    Parameters
    ----------
    X : numpy.ndarray, shape (n_samples, n_features)
        Data, one sample per row.
    D : numpy.ndarray, shape (n_atoms, n_features)
        Bases, one per row.
    A : numpy.ndarray, shape (n_samples, n_atoms)
        Codes.
    lam : float >= 0
        Penalty weight.
    penalty : {"l1", "epsilon_l1"}, default="l1"
        ``phi = |.|``, or ``phi(s) = sqrt(s^2 + eps)`` (Eq. 1).
    eps : float > 0, default=0.001
        Smoothing constant of ``"epsilon_l1"``.

    Returns
    -------
    float
        The objective.

    Raises
    ------
    ValueError
        If ``penalty`` is unknown, ``lam`` or ``eps`` is outside its range,
        or the shapes do not match.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.coding.basis import sparse_coding_objective
    >>> sparse_coding_objective(np.array([[1.0, 2.0]]), np.eye(2), np.array([[1.0, 0.0]]), lam=0.5)
    2.5
    """
    X, D = _check_XD(X, D)
    A = check_array("A", A, shape=(X.shape[0], D.shape[0]))
    lam = check_float("lam", lam, low=0.0)
    penalty = check_choice("penalty", penalty, {"l1", "epsilon_l1"})
    eps = check_float("eps", eps, low=0.0, low_open=True)
    R = X - A @ D
    fit = 0.5 * float(np.sum(R * R))
    if penalty == "l1":
        return fit + lam * float(np.sum(np.abs(A)))
    return fit + lam * float(np.sum(np.sqrt(A * A + eps)))


def _random_bases(rng, n_atoms, n_features, c):
    D = rng.standard_normal((n_atoms, n_features))
    D *= np.sqrt(c) / np.linalg.norm(D, axis=1, keepdims=True)
    return D


def _lars_codes(X, D, lam):
    """L1 codes by LARS-lasso (scikit-learn), the paper's "modified LARS".

    LARS follows the regularisation path from zero and cannot be warm
    started, exactly the limitation the paper points out.  scikit-learn is
    imported here, when first needed, not with this module.
    """
    from sklearn.decomposition import sparse_encode

    # sklearn's lasso_lars minimises (1/(2 n_features)) ||x - D^T a||^2 +
    # (lam / n_features) ||a||_1 after its own rescaling of alpha, i.e. our
    # 0.5 ||x - D^T a||^2 + lam ||a||_1.
    return sparse_encode(X, D, algorithm="lasso_lars", alpha=lam, max_iter=10 * D.shape[0])


def learn_bases(
    X: ArrayLike,
    n_atoms: int,
    lam: float,
    *,
    coder: str = "feature_sign",
    basis: str = "dual",
    c: float = 1.0,
    eps: float = 1e-3,
    tol: float = 1e-6,
    max_iter: int = 1000,
    seed: int | np.random.Generator | None = None,
    D_init: ArrayLike | None = None,
    basis_max_iter: int | None = None,
    coder_tol: float | None = None,
    callback: Callable | None = None,
    progress: bool | None = None,
) -> BasisLearningResult:
    """Learn sparse-coding bases by alternating coefficients and bases.

    Minimises Eq. 3 of Lee et al. (2006) in our layout,

        sum_i 0.5 ||x_i - D^T a_i||^2 + lam sum_ij phi(a_ij)
        s.t.  ||d_j||^2 <= c,

    by alternating the two convex sub-problems, warm-starting each from the
    previous alternation: the coefficients (feature-sign with ``init=``
    previous codes, or CG from the previous codes; LARS cannot be warm
    started) and the bases (the dual from the previous duals, projected
    gradient from the previous bases).  Stops when the relative change of
    the objective over one iteration is below ``tol`` (footnote 12:
    ``|(f_new - f_old) / f_old| < tol``, the paper used 1e-6).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training signals (e.g. whitened image patches).
    n_atoms : int
        Number of bases, ``>= 1`` (may exceed ``n_features``: overcomplete).
    lam : float
        Sparsity weight ``lam >= 0`` (the paper's ``2 sigma^2 beta``
        rescaled to the 0.5 convention).
    coder : {"feature_sign", "lars", "epsilon_l1"}, default="feature_sign"
        Coefficient solver; "lars" needs scikit-learn.  "epsilon_l1" switches
        the penalty to ``sqrt(a^2 + eps)`` (Eq. 1) for both the coder and the
        reported objective.
    basis : {"dual", "gradient"}, default="dual"
        Basis solver: Lagrange dual (Eq. 6-11) or projected gradient (the
        Table 2 baseline).
    c : float, default=1.0
        Squared-norm bound of the bases, ``c > 0``.
    eps : float, default=1e-3
        Epsilon of the epsilon-L1 penalty (only for ``coder="epsilon_l1"``).
    tol : float, default=1e-6
        Footnote-12 tolerance on the relative objective change.
    max_iter : int, default=1000
        Maximum number of alternations.
    seed : int or numpy Generator, optional
        Seeds the random initial bases (Gaussian rows scaled to norm
        ``sqrt(c)``; the paper initialises randomly).
    D_init : array-like of shape (n_atoms, n_features), optional
        Initial bases instead of random ones (projected onto the ball).
    basis_max_iter : int, optional
        Iteration cap of the basis solver per alternation (default 100
        Newton steps for the dual, 50 projected gradient steps). The dual is
        solved to :func:`lagrange_dual_bases`' default ``tol = 1e-10``
        (warm-started from the previous alternation's duals), projected
        gradient to ``tol = 1e-8``.
    coder_tol : float, optional
        Tolerance passed to the coefficient solver (default: the solver's).
    callback : callable, optional
        Called after every alternation as ``callback(state)`` with a dict
        holding ``iteration``, ``D``, ``A``, ``objective``, ``elapsed``;
        returning ``True`` stops the learner.
    progress : bool, optional
        A progress bar over the alternations, showing the objective; default
        :func:`neurosim.progress.resolve` (a bar when someone is watching).
        It appears before the first coefficient step, which compiles the
        coder's kernels on a first run.

    Returns
    -------
    BasisLearningResult

    Notes
    -----
    Each coefficient step starts from the previous codes and each basis
    step from a feasible point that the solver improves on, so the
    objective is non-increasing up to solver tolerance.  Atoms that no
    sample uses keep their previous basis: Eq. 6 leaves them undetermined
    and keeping them leaves the objective unchanged.
    """
    X = check_array("X", X, ndim=2)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be non-empty; got shape {X.shape}")
    n_atoms = check_int("n_atoms", n_atoms, low=1)
    lam = check_float("lam", lam, low=0.0)
    coder = check_choice("coder", coder, {"feature_sign", "lars", "epsilon_l1"})
    basis = check_choice("basis", basis, {"dual", "gradient"})
    c = check_float("c", c, low=0.0, low_open=True)
    eps = check_float("eps", eps, low=0.0, low_open=True)
    tol = check_float("tol", tol, low=0.0)
    max_iter = check_int("max_iter", max_iter, low=0)
    if basis_max_iter is not None:
        basis_max_iter = check_int("basis_max_iter", basis_max_iter, low=1)
    if coder_tol is not None:
        coder_tol = check_float("coder_tol", coder_tol, low=0.0)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None; got {type(callback).__name__}")
    n_samples, n_features = X.shape
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if D_init is None:
        D = _random_bases(rng, n_atoms, n_features, c)
    else:
        D = check_array("D_init", D_init, shape=(n_atoms, n_features)).copy()
        project_rows_to_ball(D, c)

    penalty = "epsilon_l1" if coder == "epsilon_l1" else "l1"
    if coder == "feature_sign":
        from neurosim.coding.encoders import feature_sign

        def code(D, A_prev):
            kw = {} if coder_tol is None else {"tol": coder_tol}
            return feature_sign(X, D, lam, init=A_prev, **kw)
    elif coder == "lars":
        def code(D, A_prev):
            return _lars_codes(X, D, lam)
    else:
        def code(D, A_prev):
            kw = {} if coder_tol is None else {"tol": coder_tol}
            return epsilon_l1_codes(X, D, lam, eps, init=A_prev, **kw)

    progress = resolve_progress(progress)
    from tqdm.auto import tqdm  # here, not at import: import neurosim does not pay for it (issue 40)

    with tqdm(total=max_iter, disable=not progress, desc="learn_bases", unit="alternation", leave=False) as bar:
        return _alternate(X, D, lam, code, basis, penalty, c, eps, tol, max_iter, n_atoms, basis_max_iter,
                          callback, bar, {"n_atoms": n_atoms, "lam": lam, "coder": coder, "basis": basis, "c": c,
                                          "eps": eps, "tol": tol, "max_iter": max_iter})


def _alternate(X, D, lam, code, basis, penalty, c, eps, tol, max_iter, n_atoms, basis_max_iter, callback, bar, params):
    """:func:`learn_bases`' alternations from the initial bases ``D``, advancing the progress ``bar``."""
    xx = float(np.sum(X * X))
    dual = None
    t0 = time.perf_counter()
    tc = time.perf_counter()
    A = code(D, None)
    coding_time = time.perf_counter() - tc
    basis_time = 0.0
    f_old = sparse_coding_objective(X, D, A, lam, penalty, eps)
    history = [f_old]
    times = [time.perf_counter() - t0]
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        tb = time.perf_counter()
        G = A.T @ A
        C = A.T @ X
        if basis == "dual":
            D, dual = _lagrange_dual_from_stats(
                G, C, c, dual, D, 100 if basis_max_iter is None else basis_max_iter, 1e-10
            )
        else:
            L = 2.0 * float(linalg.eigvalsh(G, subset_by_index=[n_atoms - 1, n_atoms - 1])[0])
            if L > 0.0:
                # a capped inner solve is part of the alternation (footnote 12's rule judges the whole)
                D, _ = _projected_gradient_from_stats(
                    G, C, xx, c, D, 1.0 / L, 50 if basis_max_iter is None else basis_max_iter, 1e-8
                )
        basis_time += time.perf_counter() - tb
        tc = time.perf_counter()
        A = code(D, A)
        coding_time += time.perf_counter() - tc
        f_new = sparse_coding_objective(X, D, A, lam, penalty, eps)
        history.append(f_new)
        times.append(time.perf_counter() - t0)
        bar.set_postfix(objective=f"{f_new:.6g}", refresh=False)
        bar.update(1)
        stop = False
        if callback is not None:
            stop = bool(callback({"iteration": n_iter, "D": D, "A": A, "objective": f_new,
                                  "elapsed": times[-1]}))
        rel = abs(f_new - f_old) / max(abs(f_old), np.finfo(float).tiny)
        f_old = f_new
        if rel < tol:
            converged = True
            break
        if stop:
            break

    return BasisLearningResult(
        components=D,
        codes=A,
        objective=np.asarray(history),
        times=np.asarray(times),
        coding_time=coding_time,
        basis_time=basis_time,
        n_iter=n_iter,
        converged=converged,
        dual=dual,
        params=params,
    )
