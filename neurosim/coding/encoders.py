"""Validated sparse encoders: feature-sign search, OMP, k winners, lambda search.

Layout (scikit-learn's): dictionary ``D`` of shape (n_atoms, n_features),
rows are atoms (the weight matrix of a projection input -> code, post x
pre); signals ``X`` of shape (n_samples, n_features) or a single signal of
shape (n_features,); codes of shape (n_samples, n_atoms) (or (n_atoms,)).

The L1 problem solved per sample is::

    minimize_a  0.5 * ||x - D^T a||_2^2 + lam * ||a||_1

which is Eq. (5) of Lee, Battle, Raina & Ng (2006), ``||y - A x||^2 +
gamma ||x||_1``, with ``A = D^T``, ``y = x`` and ``gamma = 2 lam``. It is also
scikit-learn's ``sparse_encode(X, D, algorithm="lasso_cd", alpha=lam)``
and ``Lasso(alpha=lam / n_features, fit_intercept=False)`` fitted on
``(D^T, x)``, and SPAMS' ``lasso(..., mode=2, lambda1=lam)``.

All numerics run in the numba kernels of ``neurosim.kernels.feature_sign``
and ``neurosim.kernels.greedy`` on the shared Gram ``D D^T``; this module
only checks arguments, so bad input raises ``TypeError``/``ValueError``
here and never reaches a kernel.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_bool, check_choice, check_float, check_int
from neurosim.kernels.feature_sign import (
    FS_BREAKDOWN,
    FS_COUNT_MISSED,
    FS_MAX_ITER,
    feature_sign_batch,
    lambda_search_codes,
)
from neurosim.kernels.encoding import correlations, gram, projections_representable
from neurosim.kernels.greedy import OMP_DEPENDENT, OMP_NNLS_FAILED, k_winners_codes, nn_omp_codes, omp_codes

__all__ = [
    "NonConvergenceWarning",
    "feature_sign",
    "omp",
    "k_winners",
    "lambda_for_count",
    "sparse_encode",
]


class NonConvergenceWarning(UserWarning):
    """An encoder stopped before its optimality/termination criterion held.

    The returned codes are still valid points (feasible, finite) but may be
    suboptimal for the samples named in the message.
    """


def _default_max_iter(n_atoms: int) -> int:
    # Each feature-sign step either activates an atom or shrinks the active
    # set; 10 passes over every atom is far above what converging problems
    # use (typically ~2x the final number of nonzeros).
    return max(1000, 10 * n_atoms)


def _check_dictionary(D) -> np.ndarray:
    D = check_array("D", D, ndim=2)
    if D.shape[0] < 1 or D.shape[1] < 1:
        raise ValueError(f"D must have shape (n_atoms >= 1, n_features >= 1); got {D.shape}")
    with np.errstate(over="ignore", under="ignore"):
        norms = np.einsum("ij,ij->i", D, D)
    bad = np.flatnonzero(~(norms > 0.0))
    if bad.size:
        raise ValueError(
            f"D must have no all-zero rows (atoms); rows {bad[:10].tolist()} are zero "
            "(or their squared norm underflows), allowed: ||D[i]||^2 in (0, inf)"
        )
    if not np.all(np.isfinite(norms)):
        raise ValueError("D values are too large: squared atom norms overflow float64")
    return D


def _check_signals(X: Any, n_features: int) -> tuple[np.ndarray, bool]:
    X = check_array("X", X, ndim=(1, 2))
    single = X.ndim == 1
    if single:
        X = X[None, :]
    if X.shape[1] != n_features:
        raise ValueError(
            f"X must have n_features = {n_features} columns (D.shape[1]); got shape "
            f"{X.shape[1:] if single else X.shape}"
        )
    return X, single


def _corr(X, D) -> np.ndarray:
    # the BLAS call SparseCode's compiled path makes, so both paths get the same bits
    C = np.zeros((X.shape[0], D.shape[0]))
    if C.size and D.shape[1]:
        correlations(np.ascontiguousarray(X), D, C)
    return C


def _gram_and_corr(X, D):
    # D D^T and X D^T by the kernels SparseCode's compiled path uses (not NumPy's matmul, whose
    # last bits differ); overflow is reported as the ValueError below.
    D = np.ascontiguousarray(D)
    G = np.empty((D.shape[0], D.shape[0]))
    gram(D, G)
    C = _corr(X, D)
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(C))):
        raise ValueError("X or D values are too large: D D^T or X D^T overflows float64; rescale the inputs")
    if not projections_representable(G, C):
        # the solvers sum squared projections; beyond this they stop on a "breakdown" with wrong codes
        raise ValueError("X values are too large for D: n_atoms times the largest squared projection of a sample "
                         "on an atom, (x . d_i)^2 / ||d_i||^2, overflows float64 (samples of about 1e154 on unit "
                         "atoms); rescale X")
    return G, C


def _check_lam(lam, n_samples: int) -> np.ndarray:
    if np.ndim(lam) == 0 and not isinstance(lam, np.ndarray):
        value = check_float("lam", lam, low=0.0)
        return np.full(n_samples, value)
    arr = check_array("lam", lam, ndim=(0, 1))
    if arr.ndim == 0:
        return np.full(n_samples, check_float("lam", float(arr), low=0.0))
    if arr.shape[0] != n_samples:
        raise ValueError(f"lam must be a scalar or have shape ({n_samples},) (one per sample); got {arr.shape}")
    if np.any(arr < 0.0):
        raise ValueError(f"lam must be in [0.0, inf); got min {arr.min()}")
    return arr


def _check_solver_opts(max_iter, tol, n_atoms):
    max_iter = _default_max_iter(n_atoms) if max_iter is None else check_int("max_iter", max_iter, low=1)
    tol = check_float("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    return max_iter, tol


def _finish(A, single):
    if not np.all(np.isfinite(A)):  # pragma: no cover - guarded by the overflow checks
        raise ValueError("encoding overflowed float64; rescale X and D")
    return A[0] if single else A


def _warn_status(status, what: str) -> None:
    n_iter = int(np.count_nonzero(status == FS_MAX_ITER))
    n_break = int(np.count_nonzero(status == FS_BREAKDOWN))
    n_count = int(np.count_nonzero(status == FS_COUNT_MISSED))
    parts = []
    if n_iter:
        parts.append(f"{n_iter} sample(s) hit max_iter (increase max_iter)")
    if n_break:
        parts.append(f"{n_break} sample(s) stopped on a numerical breakdown (ill-conditioned or dependent atoms)")
    if n_count:
        parts.append(f"{n_count} sample(s) have no lambda giving exactly the requested count (closest kept)")
    if parts:
        first = np.flatnonzero(status != 0)[:10].tolist()
        warnings.warn(
            f"{what}: {'; '.join(parts)}; first samples: {first}. Their codes are the last iterate.",
            NonConvergenceWarning,
            stacklevel=3,
        )


def feature_sign(X: ArrayLike, D: ArrayLike, lam: float | ArrayLike, *, init: ArrayLike | None = None,
                 nonneg: bool = False, max_iter: int | None = None, tol: float = 1e-10) -> np.ndarray:
    """L1-regularised least squares by feature-sign search (Lee et al. 2006, Alg. 1).

    Solves, for each row ``x`` of ``X``, Eq. (5) of the paper rewritten as
    ``min_a 0.5 ||x - D^T a||^2 + lam ||a||_1`` (``gamma = 2 lam``).

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features) or (n_features,)
        Signals.
    D : array_like, shape (n_atoms, n_features)
        Dictionary, one atom per row; no row may be zero. Atoms need not be
        normalised, and may be dependent or duplicated (footnote 3).
    lam : float >= 0 or array_like, shape (n_samples,)
        L1 weight, one for all samples or one per sample.
    init : array_like, shape (n_samples, n_atoms), optional
        Warm start: the search starts at Step 3 from this point with the
        active set and signs it defines (paper, end of Section 3). Entries
        on atoms dependent on earlier nonzero atoms are dropped; with
        ``nonneg`` negative entries are dropped.
    nonneg : bool, default=False
        Add the constraint ``a >= 0`` (only ``theta_i = +1`` is activated in
        Step 2 and the line search stops at the first zero crossing).
    max_iter : int >= 1, optional
        Cap on feature-sign steps plus activations per sample; default
        ``max(1000, 10 n_atoms)``.
    tol : float in (0, 1), default=1e-10
        Conditions 4(a) and 4(b) are enforced to ``tol * max(lam, max|D x|)``.

    Returns
    -------
    A : ndarray, shape (n_samples, n_atoms) or (n_atoms,)

    Warns
    -----
    NonConvergenceWarning
        If some samples hit ``max_iter`` or a numerical breakdown.
    """
    D = _check_dictionary(D)
    X, single = _check_signals(X, D.shape[1])
    n_samples, n_atoms = X.shape[0], D.shape[0]
    lams = _check_lam(lam, n_samples)
    nonneg = check_bool("nonneg", nonneg)
    max_iter, tol = _check_solver_opts(max_iter, tol, n_atoms)
    if init is None:
        A = np.zeros((n_samples, n_atoms))
        warm = False
    else:
        A = check_array("init", init, ndim=(1, 2)).copy()
        if A.ndim == 1:
            A = A[None, :]
        if A.shape != (n_samples, n_atoms):
            raise ValueError(f"init must have shape ({n_samples}, {n_atoms}) (n_samples, n_atoms); got {A.shape}")
        warm = True
    G, C = _gram_and_corr(X, D)
    status = np.zeros(n_samples, dtype=np.int64)
    if n_samples:
        feature_sign_batch(G, C, lams, A, warm, nonneg, max_iter, tol, status)
        _warn_status(status, "feature_sign")
    return _finish(A, single)


def lambda_for_count(
    X: ArrayLike, D: ArrayLike, n_nonzero: int, *, nonneg: bool = False, max_iter: int | None = None,
    tol: float = 1e-10, rtol_lambda: float = 1e-10, max_bisect: int = 100, return_codes: bool = False
) -> Any:
    """Per-sample lambda giving ``n_nonzero`` nonzeros (Garg et al. 2017, App. B.2, Alg. 2).

    Alg. 2 bisects ``lam`` in ``[0, max|u|]`` until the count of nonzeros of
    the sparse solution equals the target; here the sparse solution is the
    exact lasso solution by feature-sign search (warm-started from the
    previous bisection step), and the bracket top is ``max|D x|`` (or
    ``max D x`` with ``nonneg``), the smallest lambda with an all-zero code.
    The paper's ``eps_beta`` is 0 (exact count) and ``eps_lambda`` is
    ``rtol_lambda``.

    Parameters
    ----------
    X, D : array_like
        As in :func:`feature_sign`.
    n_nonzero : int in [1, min(n_atoms, n_features)]
        Target count. A lasso solution found by feature-sign search has
        linearly independent active atoms, hence at most ``n_features``.
    nonneg : bool, default=False
        Non-negative codes (see :func:`feature_sign`).
    max_iter : int >= 1, optional
        Feature-sign iteration cap per solve (see :func:`feature_sign`).
    tol : float in (0, 1), default=1e-10
        Feature-sign tolerance (see :func:`feature_sign`).
    rtol_lambda : float in (0, 1), default=1e-10
        Stop when the bracket is narrower than this fraction of its top.
    max_bisect : int >= 1, default=100
        Most bisection steps per sample.
    return_codes : bool, default=False
        Also return the codes at the returned lambdas.

    Returns
    -------
    lam : ndarray, shape (n_samples,) (or a float for a 1-D ``X``)
    A : ndarray, shape (n_samples, n_atoms), only if ``return_codes``

    Warns
    -----
    NonConvergenceWarning
        For samples whose count was not hit (e.g. ``D x = 0``, or two atoms
        entering the lasso path at the same lambda) or whose solve failed.
    """
    D = _check_dictionary(D)
    X, single = _check_signals(X, D.shape[1])
    n_samples, n_atoms = X.shape[0], D.shape[0]
    n_nonzero = check_int("n_nonzero", n_nonzero, low=1, high=min(n_atoms, D.shape[1]))
    nonneg = check_bool("nonneg", nonneg)
    max_iter, tol = _check_solver_opts(max_iter, tol, n_atoms)
    rtol_lambda = check_float("rtol_lambda", rtol_lambda, low=0.0, high=1.0, low_open=True, high_open=True)
    max_bisect = check_int("max_bisect", max_bisect, low=1)
    return_codes = check_bool("return_codes", return_codes)
    G, C = _gram_and_corr(X, D)
    A = np.zeros((n_samples, n_atoms))
    lams = np.zeros(n_samples)
    status = np.zeros(n_samples, dtype=np.int64)
    if n_samples:
        lambda_search_codes(G, C, n_nonzero, A, lams, nonneg, max_iter, tol, rtol_lambda, max_bisect, status)
        _warn_status(status, "lambda_for_count")
    lam_out = float(lams[0]) if single else lams
    if return_codes:
        return lam_out, _finish(A, single)
    return lam_out


def omp(X: ArrayLike, D: ArrayLike, n_nonzero: int, *, nonneg: bool = False) -> np.ndarray:
    """Orthogonal matching pursuit with a fixed number of atoms, optionally non-negative.

    Approximates, for each row ``x`` of ``X``, the L0-constrained problem of
    Tsuchida & Cottrell (2015), Eq. 6 (their ``A`` is our ``D^T``)::

        minimize_s  ||x - D^T s||_2^2   s.t.  ||s||_0 <= n_nonzero  (and s >= 0 if nonneg)

    ``nonneg=False``: plain OMP, same problem and stopping rule as
    scikit-learn's ``orthogonal_mp_gram(D @ D.T, X @ D.T,
    n_nonzero_coefs=n_nonzero)``, batched on one shared Gram with an
    incrementally updated Cholesky factor.

    ``nonneg=True``: the non-negative OMP of Bruckstein, Elad & Zibulevsky
    (2008), Eq. 6 with its ``s >= 0``: each iteration selects the atom with
    the largest *positive* correlation with the residual and re-fits the
    coefficients on the support by exact non-negative least squares
    (Lawson-Hanson). It stops early, without a warning, when no atom has a
    positive correlation (the code then minimises ``||x - D^T s||`` over all
    ``s >= 0``). An atom whose coefficient drops to 0 in the re-fit stays in
    the support at 0 and counts towards ``n_nonzero``, so a code can have
    fewer than ``n_nonzero`` nonzeros (see
    :func:`neurosim.kernels.greedy.nn_omp_codes`).

    Parameters
    ----------
    X, D : array_like
        As in :func:`feature_sign`.
    n_nonzero : int in [1, min(n_atoms, n_features)]
        Atoms per code, in ``[1, min(n_atoms, n_features)]``.
    nonneg : bool, default=False
        Non-negative codes (Eq. 6's ``s >= 0``).

    Returns
    -------
    A : ndarray, shape (n_samples, n_atoms) or (n_atoms,)
        With ``nonneg``, every entry is ``>= 0``.

    Warns
    -----
    NonConvergenceWarning
        If for some samples the next atom is linearly dependent on the chosen
        ones (fewer than ``n_nonzero`` atoms are then used), or (``nonneg``)
        the NNLS re-fit hit its iteration cap. Stopping early because the
        residual is already zero (or, with ``nonneg``, no correlation is
        positive) is not warned about.
    """
    D = _check_dictionary(D)
    X, single = _check_signals(X, D.shape[1])
    n_samples, n_atoms = X.shape[0], D.shape[0]
    n_nonzero = check_int("n_nonzero", n_nonzero, low=1, high=min(n_atoms, D.shape[1]))
    nonneg = check_bool("nonneg", nonneg)
    G, C = _gram_and_corr(X, D)
    A = np.zeros((n_samples, n_atoms))
    status = np.zeros(n_samples, dtype=np.int64)
    codes = nn_omp_codes if nonneg else omp_codes
    if codes(G, C, n_nonzero, A, status):  # no samples: the kernel loops zero times and returns 0
        what = "omp(nonneg=True)" if nonneg else "omp"
        dep = np.flatnonzero(status == OMP_DEPENDENT)
        cap = np.flatnonzero(status == OMP_NNLS_FAILED)
        parts = []
        if dep.size:
            parts.append(f"{dep.size} sample(s) stopped early because the next atom is linearly dependent on the "
                         f"selected ones; first samples: {dep[:10].tolist()}")
        if cap.size:
            parts.append(f"{cap.size} sample(s) stopped because the non-negative least-squares re-fit did not "
                         f"converge (ill-conditioned atoms); first samples: {cap[:10].tolist()}")
        warnings.warn(f"{what}: {'; '.join(parts)}", NonConvergenceWarning, stacklevel=2)
    return _finish(A, single)


def k_winners(X: ArrayLike, D: ArrayLike, k: int, *, nonneg: bool = False, absolute: bool = True) -> np.ndarray:
    """k winners take all: keep the ``k`` largest entries of ``D x``.

    The k-Sparse encoder of Tsuchida & Cottrell (2015), Eq. (7),
    ``s = supp_k{A^T x}`` (their ``A`` is our ``D^T``), from Makhzani & Frey
    (2013). The winners keep their value of ``D x``; the others are zero.

    Parameters
    ----------
    X, D : array_like
        As in :func:`feature_sign`.
    k : int in [1, n_atoms]
        Nonzeros kept per code, in ``[1, n_atoms]``.
    nonneg : bool, default=False
        Rank by value and silence winners with a non-positive value (firing
        rates); ``absolute`` is then ignored.
    absolute : bool, default=True
        Rank by ``|D x|`` (True) or by ``D x`` (False).

    Returns
    -------
    A : ndarray, shape (n_samples, n_atoms) or (n_atoms,)
        Ties are broken in favour of the lowest atom index.
    """
    D = _check_dictionary(D)
    X, single = _check_signals(X, D.shape[1])
    k = check_int("k", k, low=1, high=D.shape[0])
    nonneg = check_bool("nonneg", nonneg)
    absolute = check_bool("absolute", absolute)
    C = _corr(X, np.ascontiguousarray(D))
    if not np.all(np.isfinite(C)):
        raise ValueError("X or D values are too large: X D^T overflows float64; rescale the inputs")
    A = np.zeros_like(C)
    if X.shape[0]:
        k_winners_codes(C, k, A, absolute, nonneg)
    return _finish(A, single)


def sparse_encode(
    X: ArrayLike,
    D: ArrayLike,
    method: str = "feature_sign",
    *,
    lam: float | ArrayLike | None = None,
    n_nonzero: int | None = None,
    init: ArrayLike | None = None,
    nonneg: bool = False,
    absolute: bool = True,
    max_iter: int | None = None,
    tol: float = 1e-10,
) -> np.ndarray:
    """Encode ``X`` on ``D`` with one of the encoders of this module.

    Parameters
    ----------
    X, D : array_like
        As in :func:`feature_sign`.
    method : {"feature_sign", "omp", "k_winners"}, default="feature_sign"
        The encoder.
    lam : float >= 0 or array_like (n_samples,), optional
        ``feature_sign`` only; give exactly one of ``lam`` and ``n_nonzero``.
    n_nonzero : int, optional
        ``feature_sign``: target count, lambda found per sample by
        :func:`lambda_for_count` (Garg et al. 2017, Alg. 2); ``omp``: number
        of atoms (required); ``k_winners``: ``k`` (required).
    init : array_like, shape (n_samples, n_atoms), optional
        Warm start; ``feature_sign`` with ``lam`` only.
    nonneg : bool, default=False
        Non-negative codes, for every method (``omp``: the non-negative OMP
        of Eq. 6, see :func:`omp`).
    absolute : bool, default=True
        ``k_winners`` only: rank by ``|D x|`` (True) or ``D x``.
    max_iter : int >= 1, optional
        Feature-sign iteration cap (``lam`` and target-count modes).
    tol : float in (0, 1), default=1e-10
        Feature-sign tolerance (``lam`` and target-count modes).

    Returns
    -------
    A : ndarray, shape (n_samples, n_atoms) or (n_atoms,)
        The codes (one row per sample; 1-D for a 1-D ``X``).

    Raises
    ------
    ValueError
        If an option is out of range, or an option that does not apply to
        ``method`` is not at its default (it would be silently ignored).

    Notes
    -----
    Every option is checked (type and range) whatever the method.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.coding.encoders import sparse_encode
    >>> X, D = np.array([[0.0, 2.0, 0.5]]), np.eye(3)
    >>> sparse_encode(X, D, "omp", n_nonzero=1).tolist()
    [[0.0, 2.0, 0.0]]
    >>> sparse_encode(X, D, "feature_sign", lam=0.25).round(12).tolist()  # soft threshold by lam
    [[0.0, 1.75, 0.25]]
    """
    method = check_choice("method", method, {"feature_sign", "omp", "k_winners"})
    nonneg = check_bool("nonneg", nonneg)
    absolute = check_bool("absolute", absolute)
    if max_iter is not None:
        max_iter = check_int("max_iter", max_iter, low=1)
    tol = check_float("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    if n_nonzero is not None:
        n_nonzero = check_int("n_nonzero", n_nonzero, low=1)
    # options that do not apply to the method: (name, set?)
    unused = {
        "feature_sign": [("absolute", absolute is not True)],
        "omp": [("lam", lam is not None), ("init", init is not None),
                ("absolute", absolute is not True), ("max_iter", max_iter is not None), ("tol", tol != 1e-10)],
        "k_winners": [("lam", lam is not None), ("init", init is not None), ("max_iter", max_iter is not None),
                      ("tol", tol != 1e-10)],
    }[method]
    given = [name for name, is_set in unused if is_set]
    if given:
        raise ValueError(f"option(s) {', '.join(given)} not used by method={method!r}: leave them at their defaults "
                         "(lam, init, max_iter, tol apply to feature_sign; absolute to k_winners; nonneg to "
                         "feature_sign, omp and k_winners)")
    if method == "feature_sign":
        if (lam is None) == (n_nonzero is None):
            raise ValueError("feature_sign needs exactly one of lam (L1 weight) and n_nonzero (target count)")
        if lam is not None:
            return feature_sign(X, D, lam, init=init, nonneg=nonneg, max_iter=max_iter, tol=tol)
        if init is not None:
            raise ValueError("init is not used with n_nonzero (the lambda search warm-starts itself); pass init=None")
        assert n_nonzero is not None  # exactly one of lam and n_nonzero, checked above
        _, A = lambda_for_count(X, D, n_nonzero, nonneg=nonneg, max_iter=max_iter, tol=tol, return_codes=True)
        return A
    if n_nonzero is None:
        raise ValueError(f"method={method!r} needs n_nonzero (number of nonzeros per sample)")
    if method == "omp":
        return omp(X, D, n_nonzero, nonneg=nonneg)
    return k_winners(X, D, n_nonzero, nonneg=nonneg, absolute=absolute)
