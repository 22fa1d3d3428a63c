"""Offline (batch) solutions of regularized similarity matching, paper 002.

Chen, Pehlevan & Chklovskii, "Self-calibrating neural networks for
dimensionality reduction".  The paper regularizes the classical MDS
(similarity-matching) cost ``||X^T X - Y^T Y||_F^2`` (Eq. 1) with one of three
penalties and shows that every optimum is a projection of the data onto its
principal subspace with shrunk eigenvalues:

======  ===============================================  ===================================
name    cost                                             output eigenvalues
======  ===============================================  ===================================
``TY``  Eq. 2, ``+ 2 alpha T Tr(Y^T Y)``                 Eq. 4: ``ST(lambda_i, alpha T)``
``XY``  Eq. 5, ``+ 2 alpha Tr(X^T X) Tr(Y^T Y)``         Eq. 7: ``ST(lambda_i, alpha Tr X^T X)``
``YY``  Eq. 8, ``+ alpha [Tr(Y^T Y)]^2``                 Eq. 9-10: ``D_p = (I - alpha/(1+alpha p) 1 1^T) Lambda_p``
======  ===============================================  ===================================

with ``ST(a, b) = max(a - b, 0)`` the soft threshold.

Eigenvalue scaling convention
-----------------------------
Everything here works on eigenvalues of the *normalized* similarity matrix
``(1/T) X^T X`` (equivalently of the input covariance ``(1/T) X X^T``; the two
share their non-zero eigenvalues) unless a number of samples ``T`` is passed,
in which case the eigenvalues are those of the un-normalized ``X^T X`` and the
results are eigenvalues of ``Y^T Y``.  Only the scale-dependent regularizer
``TY`` actually depends on this choice: its threshold is ``alpha T`` on
``X^T X``, i.e. ``alpha`` on ``(1/T) X^T X``.  The other two costs are
homogeneous of degree two in the eigenvalues, so their solutions scale
linearly with the input eigenvalues and ``T`` drops out; that is precisely the
"self-calibration" of the paper.

Section III (two degenerate eigenvalue levels, Table I, Figs. 1-2) is provided
by :func:`alpha_range`, :func:`top_output_eigenvalue`,
:func:`two_level_outputs`, :func:`pair_grid`, :func:`transmission_curves`
and :func:`universal_alpha`.
"""

from __future__ import annotations

import numpy as np

from neurosim._validation import check_array, check_choice, check_float, check_int

__all__ = [
    "REGULARIZERS",
    "TRANSMIT_RTOL",
    "soft_threshold",
    "offline_output_eigenvalues",
    "offline_solution",
    "offline_filter",
    "alpha_for_shrinkage",
    "alpha_range",
    "top_output_eigenvalue",
    "two_level_outputs",
    "pair_grid",
    "transmission_curves",
    "universal_alpha",
]

#: The three regularizers of the paper: scale-dependent (Eq. 2), input-output
#: (Eq. 5) and squared-output (Eq. 8).
REGULARIZERS = ("TY", "XY", "YY")

#: An output eigenvalue counts as "transmitted" when it exceeds this fraction
#: of the largest input eigenvalue.  Exactly at a Table I bound the closed
#: forms give an output of exactly zero, which rounding can turn into +-1e-17;
#: the relative tolerance makes the classification at the bounds match the
#: exact arithmetic.
TRANSMIT_RTOL = 1e-9


# --------------------------------------------------------------------------- #
# validation helpers
# --------------------------------------------------------------------------- #
def _check_eigenvalues(name: str, values, ndim=None) -> np.ndarray:
    """Finite, non-negative eigenvalues; clip round-off negatives of PSD spectra."""
    lam = check_array(name, values, ndim=ndim)
    if lam.ndim == 0 or lam.shape[-1] < 1:
        raise ValueError(f"{name} must contain at least one eigenvalue along its last axis; got shape {lam.shape}")
    scale = max(1.0, float(np.max(np.abs(lam))))
    if np.any(lam < -1e-10 * scale):
        raise ValueError(f"{name} must be non-negative (eigenvalues of a PSD matrix); got min {lam.min()!r}")
    return np.clip(lam, 0.0, None)


def _real_array(name: str, value) -> np.ndarray:
    """``check_array`` keeping the shape of scalars (it returns them as 1-d)."""
    arr = check_array(name, value)
    return arr.reshape(np.shape(value))


def _check_alpha(alpha) -> np.ndarray:
    arr = _real_array("alpha", alpha)
    if np.any(arr < 0):
        raise ValueError(f"alpha must be >= 0; got min {arr.min()!r}")
    return arr


# --------------------------------------------------------------------------- #
# Section II: closed-form offline solutions
# --------------------------------------------------------------------------- #
def soft_threshold(x, theta):
    """Soft-thresholding function ``ST(a, b) = max(a - b, 0)`` (below Eq. 4).

    Parameters
    ----------
    x, theta : array_like
        Values and thresholds (broadcast together).

    Returns
    -------
    numpy.ndarray
    """
    return np.maximum(np.asarray(x, dtype=float) - np.asarray(theta, dtype=float), 0.0)


def offline_output_eigenvalues(input_eigenvalues, k, regularizer, alpha, T=None):
    """Eigenvalues of the optimal output similarity matrix (Eqs. 4, 7, 9-10).

    Parameters
    ----------
    input_eigenvalues : array_like, shape (..., n)
        The full spectrum (all non-zero eigenvalues, any order) of the
        normalized similarity matrix ``(1/T) X^T X`` -- or of ``X^T X`` when
        ``T`` is given.  The *whole* spectrum is needed because ``XY``
        thresholds relative to its sum.  Leading axes are a batch: one
        spectrum per entry.
    k : int
        Number of output neurons (rank bound of ``Y``), ``k >= 1``.  If
        ``k > n`` the extra outputs are zero, like the zero eigenvalues of the
        ``T x T`` matrix ``X^T X``.
    regularizer : {"TY", "XY", "YY"}
        ``"TY"``: Eq. 4, ``ST(lambda_i, alpha T)``;
        ``"XY"``: Eq. 7, ``ST(lambda_i, alpha sum_j lambda_j)``;
        ``"YY"``: Eq. 10, ``lambda_i - alpha/(1 + alpha p) sum_{j<=p} lambda_j``
        for ``i <= p`` and 0 otherwise, where ``p`` is the largest integer in
        ``1..min(k, n)`` for which all entries of ``D_p`` are non-negative.
    alpha : float or array_like
        Regularization coefficient(s) ``>= 0``, broadcastable to the batch
        shape ``input_eigenvalues.shape[:-1]``.
    T : float, optional
        Number of samples.  ``None`` (default): the eigenvalues are normalized
        (of ``(1/T) X^T X``) and the ``TY`` threshold is ``alpha``.  Given: the
        eigenvalues are of ``X^T X`` and the ``TY`` threshold is ``alpha T``
        (Eq. 4).  ``XY`` and ``YY`` do not depend on ``T``.

    Returns
    -------
    numpy.ndarray, shape (..., k)
        Output eigenvalues in descending order, in the same normalization as
        the input.

    Notes
    -----
    The ``YY`` rule: since the entries of ``D_p`` are
    ``lambda_i - theta_p`` with ``theta_p = alpha S_p / (1 + alpha p)`` and
    ``S_p`` the sum of the top ``p`` eigenvalues, "all entries >= 0" is
    ``lambda_p >= theta_p``.  ``p = 1`` is always feasible
    (``lambda_1 / (1 + alpha) >= 0``) and the feasible set is ``{1..p*}``
    (Appendix A: the support of the NNLS solution is a leading block), so
    the rule is the KKT solution of the Appendix A NNLS restricted to rank
    ``<= k``.
    """
    lam = _check_eigenvalues("input_eigenvalues", input_eigenvalues)
    k = check_int("k", k, low=1)
    regularizer = check_choice("regularizer", regularizer, REGULARIZERS)
    alpha = _check_alpha(alpha)
    if T is not None:
        T = check_float("T", T, low=0.0, low_open=True)
    batch = lam.shape[:-1]
    try:
        ok = np.broadcast_shapes(alpha.shape, batch) == batch
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"alpha must broadcast to the batch shape {batch} of input_eigenvalues; got shape {alpha.shape}")
    alpha = alpha + np.zeros(batch)  # (0-d arrays do not np.broadcast_to a scalar shape)
    lam = -np.sort(-lam, axis=-1)  # descending
    n = lam.shape[-1]
    m = min(k, n)
    top = lam[..., :m]
    a = alpha[..., None]
    if regularizer == "TY":
        out = soft_threshold(top, a * (1.0 if T is None else T))
    elif regularizer == "XY":
        out = soft_threshold(top, a * lam.sum(axis=-1, keepdims=True))
    else:
        p_idx = np.arange(1, m + 1)
        theta = a * np.cumsum(top, axis=-1) / (1.0 + a * p_idx)  # theta_p, p = 1..m
        feasible = top - theta >= 0.0  # smallest entry of D_p is its last one
        # largest feasible p: position of the last True along the last axis
        p = m - np.argmax(feasible[..., ::-1], axis=-1)
        theta_p = np.take_along_axis(theta, (p - 1)[..., None], axis=-1)
        out = np.where(p_idx <= p[..., None], np.maximum(top - theta_p, 0.0), 0.0)
    if k > n:
        out = np.concatenate([out, np.zeros(batch + (k - n,))], axis=-1)
    return out


def offline_solution(X, k, regularizer, alpha):
    """Optimal offline output ``Y`` for data ``X`` (Eqs. 4, 7, 9 with ``U_k = I``).

    Parameters
    ----------
    X : array_like, shape (n, T)
        Input data matrix, one (centered) sample per column as in the paper.
    k : int
        Number of outputs (``>= 1``).
    regularizer : {"TY", "XY", "YY"}
        See :func:`offline_output_eigenvalues`.
    alpha : float
        Regularization coefficient ``>= 0``, on the normalized scale (the
        ``TY`` threshold on ``X^T X`` is ``alpha T`` with ``T = X.shape[1]``,
        as in Eq. 2).

    Returns
    -------
    Y : numpy.ndarray, shape (k, T)
        ``Y = D^{1/2} V_k^T`` where ``V_k`` holds the top-``k`` eigenvectors of
        ``X^T X`` (right singular vectors of ``X``) and ``D`` the output
        eigenvalues of :func:`offline_output_eigenvalues` with ``T`` samples;
        so ``eig(Y^T Y)`` are the offline values.  Any ``U_k Y`` with
        ``U_k`` orthogonal is an equally good optimum.
    """
    X = check_array("X", X, ndim=2)
    n, T = X.shape
    if n < 1 or T < 1:
        raise ValueError(f"X must have shape (n, T) with n, T >= 1; got {X.shape}")
    alpha = check_float("alpha", alpha, low=0.0)
    _, s, vt = np.linalg.svd(X, full_matrices=False)  # eig(X^T X) = s**2, descending
    d = offline_output_eigenvalues(s**2, k, regularizer, alpha, T=T)
    r = min(k, vt.shape[0])
    Y = np.zeros((k, T))
    Y[:r] = np.sqrt(d[:r])[:, None] * vt[:r]
    return Y


def offline_filter(covariance, k, regularizer, alpha):
    """Population-limit linear filter ``F`` with ``y = F x`` optimal offline.

    For stationary input of covariance ``C = U diag(lambda) U^T`` the offline
    optimum (Eqs. 4/7/9) is ``y_t = F x_t`` with
    ``F = diag(sqrt(d_i / lambda_i)) U_k^T`` (rows with ``d_i = 0`` are zero),
    so that ``F C F^T = diag(d)``.  It is the oracle the network's learned
    filter ``(I + W^YY)^{-1} W^YX`` should converge to, up to a ``k x k``
    rotation.

    Parameters
    ----------
    covariance : array_like, shape (n, n)
        Symmetric PSD input covariance ``(1/T) X X^T``.
    k : int
        Number of outputs.
    regularizer : {"TY", "XY", "YY"}
    alpha : float
        Regularization coefficient on the normalized scale.

    Returns
    -------
    F : numpy.ndarray, shape (k, n)
    """
    C = check_array("covariance", covariance, ndim=2)
    if C.shape[0] != C.shape[1] or C.shape[0] < 1:
        raise ValueError(f"covariance must be square (n, n) with n >= 1; got {C.shape}")
    alpha = check_float("alpha", alpha, low=0.0)
    lam, U = np.linalg.eigh(0.5 * (C + C.T))
    lam, U = np.clip(lam[::-1], 0.0, None), U[:, ::-1]
    d = offline_output_eigenvalues(lam, k, regularizer, alpha)
    r = min(k, lam.size)
    F = np.zeros((k, C.shape[0]))
    on = d[:r] > 0  # lambda_i >= d_i > 0 there, so the ratio is safe
    gains = np.zeros(r)
    gains[on] = np.sqrt(d[:r][on] / lam[:r][on])
    F[:r] = gains[:, None] * U[:, :r].T
    return F


def alpha_for_shrinkage(input_eigenvalues, regularizer, shrinkage, p):
    """The ``alpha`` that shrinks the top ``p`` eigenvalues by ``shrinkage``.

    Section VI chooses, for each regularizer, the ``alpha`` with which the top
    three input eigenvalues are soft-thresholded by 2.  From Eqs. 4, 7, 10
    (normalized eigenvalues):

    * ``TY``: ``alpha = s``;
    * ``XY``: ``alpha = s / sum_j lambda_j``;
    * ``YY``: ``alpha / (1 + alpha p) S_p = s``, i.e.
      ``alpha = s / (S_p - p s)`` with ``S_p`` the sum of the top ``p``.

    Whether exactly ``p`` modes are then transmitted depends on the spectrum
    (the ``p+1``-st must lie at or below the threshold); check with
    :func:`offline_output_eigenvalues`.

    Parameters
    ----------
    input_eigenvalues : array_like, shape (n,)
        Full normalized spectrum.
    regularizer : {"TY", "XY", "YY"}
    shrinkage : float
        Amount ``s > 0`` subtracted from each transmitted eigenvalue.
    p : int
        Number of modes meant to be transmitted (``1 <= p <= n``).

    Returns
    -------
    float
    """
    lam = _check_eigenvalues("input_eigenvalues", input_eigenvalues, ndim=1)
    regularizer = check_choice("regularizer", regularizer, REGULARIZERS)
    s = check_float("shrinkage", shrinkage, low=0.0, low_open=True)
    p = check_int("p", p, low=1, high=lam.size)
    lam = np.sort(lam)[::-1]
    if regularizer == "TY":
        return s
    if regularizer == "XY":
        return s / float(lam.sum())
    denom = float(lam[:p].sum()) - p * s
    if denom <= 0:
        raise ValueError(f"shrinkage {s} is too large for the top {p} eigenvalues (needs sum > p * shrinkage)")
    return s / denom


# --------------------------------------------------------------------------- #
# Section III: two degenerate levels a (n1 times) > b (n2 times)
# --------------------------------------------------------------------------- #
def _two_level_args(a, b, n1, n2, regularizer):
    a = _real_array("a", a)
    b = _real_array("b", b)
    if np.any(a < 0) or np.any(b < 0):
        raise ValueError("a and b must be non-negative eigenvalues")
    if np.any(b > a):
        raise ValueError("the signal level a must be >= the noise level b")
    n1 = check_int("n1", n1, low=1)
    n2 = check_int("n2", n2, low=1)
    regularizer = check_choice("regularizer", regularizer, REGULARIZERS)
    return a, b, n1, n2, regularizer


def alpha_range(a, b, n1, n2, regularizer):
    """Table I: range of ``alpha`` transmitting all signal and no noise.

    The normalized input spectrum is ``(a,...,a, b,...,b)`` with ``n1`` signal
    and ``n2`` noise modes, ``a >= b >= 0``; ``k >= n1 + n2`` outputs.

    * ``TY`` (Eq. 4): ``b <= alpha < a``;
    * ``XY`` (Eq. 11): ``b / (n1 a + n2 b) <= alpha < a / (n1 a + n2 b)``;
    * ``YY`` (Eq. 12): ``alpha >= b / ((a - b) n1)``, no upper bound.

    The paper writes both ends closed.  At ``lo`` the noise output is exactly
    zero (rejected) and at ``hi`` the signal output is exactly zero, i.e. not
    transmitted, so the set where the goal is met is ``[lo, hi)``.  For
    ``a == b`` it is empty (``lo >= hi``; ``YY`` gives ``lo = inf`` unless
    ``b = 0``).

    Parameters
    ----------
    a, b : float or array_like
        Signal and noise eigenvalues (broadcast together), ``a >= b >= 0``.
    n1, n2 : int
        Multiplicities (``>= 1``).
    regularizer : {"TY", "XY", "YY"}

    Returns
    -------
    lo, hi : numpy.ndarray
        Bounds of the interval (``hi = inf`` for ``YY``).
    """
    a, b, n1, n2, regularizer = _two_level_args(a, b, n1, n2, regularizer)
    a, b = np.broadcast_arrays(a, b)
    if regularizer == "TY":
        return b.copy(), a.copy()
    if regularizer == "XY":
        tr = n1 * a + n2 * b  # Tr((1/T) X^T X)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(tr > 0, b / tr, 0.0), np.where(tr > 0, a / tr, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(b == 0, 0.0, b / ((a - b) * n1))  # b > 0 and a == b gives inf
    return lo, np.full_like(lo, np.inf)


def top_output_eigenvalue(a, b, n1, n2, regularizer, alpha):
    """Table I, last column: top output eigenvalue inside the ``alpha`` range.

    ``TY``: ``a - alpha``; ``XY``: ``a - alpha (n1 a + n2 b)``;
    ``YY``: ``a / (1 + alpha n1)`` (Eq. 10 with ``p = n1``).  Valid when
    ``alpha`` lies in :func:`alpha_range`; outside it use
    :func:`two_level_outputs`.

    Parameters
    ----------
    a, b : float or array_like
        Signal and noise eigenvalues, ``a >= b >= 0`` (broadcast together).
    n1, n2 : int
        Multiplicities of the signal and noise eigenvalues, ``>= 1``.
    regularizer : {"TY", "XY", "YY"}
        The regularizer: scale-dependent (``TY``), input-output (``XY``) or squared-output (``YY``).
    alpha : float or array_like
        Regularization coefficient(s), ``>= 0``.

    Returns
    -------
    numpy.ndarray
    """
    a, b, n1, n2, regularizer = _two_level_args(a, b, n1, n2, regularizer)
    alpha = _check_alpha(alpha)
    if regularizer == "TY":
        return a - alpha + 0.0 * b
    if regularizer == "XY":
        return a - alpha * (n1 * a + n2 * b)
    return a / (1.0 + alpha * n1) + 0.0 * b


def two_level_outputs(a, b, n1, n2, regularizer, alpha):
    """Exact output eigenvalues for the two-level spectrum of Section III.

    Evaluates Eqs. 4, 7, 9-10 for the normalized spectrum ``a`` (``n1``
    times), ``b`` (``n2`` times) with ``k >= n1 + n2`` outputs, using the
    degeneracy to avoid materializing the ``n``-vector, so that Fig. 1 can be
    computed for thousands of ``alpha`` times thousands of ``(a, b)`` pairs.

    For ``YY`` the candidate supports are ``p = n1 + m``; with ``D_p`` of
    Eq. 10 the noise entry is ``b - theta`` with
    ``theta = alpha (n1 a + m b)/(1 + alpha (n1 + m))`` whose sign is that of
    ``b (1 + alpha n1) - alpha n1 a`` for every ``m``: either all noise modes
    are in the support (``p = n``) or none (``p = n1``, signal output
    ``a / (1 + alpha n1)``).

    Parameters
    ----------
    a, b : array_like
        Signal and noise levels, ``a >= b >= 0`` (broadcast with ``alpha``).
    n1, n2 : int
        Multiplicities of the signal and noise eigenvalues, ``>= 1``.
    regularizer : {"TY", "XY", "YY"}
        The regularizer: scale-dependent (``TY``), input-output (``XY``) or squared-output (``YY``).
    alpha : array_like
        ``>= 0``.

    Returns
    -------
    signal, noise : numpy.ndarray
        Output eigenvalue of each signal mode and of each noise mode.
    """
    a, b, n1, n2, regularizer = _two_level_args(a, b, n1, n2, regularizer)
    alpha = _check_alpha(alpha)
    if regularizer == "TY":
        return soft_threshold(a, alpha), soft_threshold(b, alpha)
    if regularizer == "XY":
        theta = alpha * (n1 * a + n2 * b)
        return soft_threshold(a, theta), soft_threshold(b, theta)
    n = n1 + n2
    theta_all = alpha * (n1 * a + n2 * b) / (1.0 + alpha * n)
    noise_in = b - theta_all >= 0.0
    signal = np.where(noise_in, a - theta_all, a / (1.0 + alpha * n1))
    noise = np.where(noise_in, b - theta_all, 0.0)
    return np.maximum(signal, 0.0), np.maximum(noise, 0.0)


def pair_grid(step=0.01, include_diagonal=True):
    """The Appendix B set ``S = {(a, b) | a >= b, a, b in {0.01, ..., 1.00}}``.

    Parameters
    ----------
    step : float
        Grid spacing; ``0.01`` gives the paper's 100 levels and 5050 pairs.
    include_diagonal : bool
        Keep the 100 pairs with ``a == b`` (as in the paper's definition of
        ``S``).  For them signal and noise are indistinguishable, so no
        ``alpha`` of any method can pass the signal and stop the noise.

    Returns
    -------
    a, b : numpy.ndarray, shape (N,)
    """
    step = check_float("step", step, low=0.0, high=1.0, low_open=True)
    levels = np.round(np.arange(1, int(round(1.0 / step)) + 1) * step, 12)
    ia, ib = np.tril_indices(levels.size, k=0 if include_diagonal else -1)
    return levels[ia], levels[ib]


def transmission_curves(a, b, n1, n2, regularizer, alphas, block=256):
    """Fig. 1: fractions of ``(a, b)`` pairs transmitting signal / noise vs ``alpha``.

    A pair transmits "all signal" when every signal output eigenvalue is
    positive, and "transmits noise" when the noise outputs are positive (by
    degeneracy all noise modes share one output value, so "some" and "all"
    noise coincide).  "Positive" means above ``TRANSMIT_RTOL * a``.

    Parameters
    ----------
    a, b : array_like, shape (N,)
        Pairs, e.g. from :func:`pair_grid`.
    n1, n2 : int
        Multiplicities of the signal and noise eigenvalues, ``>= 1``.
    regularizer : {"TY", "XY", "YY"}
        The regularizer: scale-dependent (``TY``), input-output (``XY``) or squared-output (``YY``).
    alphas : array_like, shape (M,)
        Values of ``alpha >= 0``.
    block : int
        ``alpha`` values processed at once (bounds memory to ``block * N``).

    Returns
    -------
    dict
        ``signal``: fraction of pairs with all signal transmitted, shape (M,);
        ``noise``: fraction with noise transmitted; ``goal``: fraction with
        all signal and no noise transmitted.
    """
    a = check_array("a", a, ndim=1)
    b = check_array("b", b, ndim=1, shape=(a.size,))
    alphas = _check_alpha(check_array("alphas", alphas, ndim=1))
    block = check_int("block", block, low=1)
    sig = np.empty(alphas.size)
    noi = np.empty(alphas.size)
    goal = np.empty(alphas.size)
    tol = TRANSMIT_RTOL * a
    for i in range(0, alphas.size, block):
        al = alphas[i : i + block, None]
        s_out, n_out = two_level_outputs(a[None, :], b[None, :], n1, n2, regularizer, al)
        s_on, n_on = s_out > tol, n_out > tol
        sig[i : i + block] = s_on.mean(axis=1)
        noi[i : i + block] = n_on.mean(axis=1)
        goal[i : i + block] = (s_on & ~n_on).mean(axis=1)
    return {"signal": sig, "noise": noi, "goal": goal}


def universal_alpha(a, b, n1, n2, regularizer):
    """Best single ``alpha`` for a set of pairs, from the Table I intervals.

    Each pair succeeds (all signal, no noise) on ``[lo_i, hi_i)`` of
    :func:`alpha_range`.  The number of intervals containing ``alpha`` is
    maximal at some left end ``lo_j``, where it equals
    ``#{lo_i <= lo_j} - #{hi_i <= lo_j}``; both counts come from sorted
    searches, so this is exact and ``O(N log N)``.

    Parameters
    ----------
    a, b : array_like, shape (N,)
        Signal and noise eigenvalues, ``a >= b >= 0`` (broadcast together).
    n1, n2 : int
        Multiplicities of the signal and noise eigenvalues, ``>= 1``.
    regularizer : {"TY", "XY", "YY"}
        The regularizer: scale-dependent (``TY``), input-output (``XY``) or squared-output (``YY``).

    Returns
    -------
    alpha : float
        Smallest ``alpha`` achieving the maximum (``nan`` if no pair can
        succeed).
    fraction : float
        Fraction of the pairs that succeed at that ``alpha``.
    """
    lo, hi = alpha_range(a, b, n1, n2, regularizer)
    lo, hi = np.ravel(lo), np.ravel(hi)
    valid = lo < hi
    if not np.any(valid):
        return float("nan"), 0.0
    lo_s, hi_s = np.sort(lo[valid]), np.sort(hi[valid])
    cand = lo_s
    count = np.searchsorted(lo_s, cand, side="right") - np.searchsorted(hi_s, cand, side="right")
    j = int(np.argmax(count))
    return float(cand[j]), float(count[j]) / lo.size
