"""Performance metrics comparing learned networks with their offline optima.

Paper 002 (Chen, Pehlevan & Chklovskii, Section VI-A) scores the online
similarity-matching networks with two numbers:

* the **eigenvalue error** (:func:`eigenvalue_error`): squared distance between
  the spectrum of the output covariance ``(1/T) Y^T Y`` and the offline optimum
  of Section II (Eqs. 4, 7, 9-10);
* the **subspace error** (:func:`subspace_error`): distance between the
  subspace the network projects onto and the input principal subspace, as
  defined in Pehlevan & Chklovskii (NIPS 2015), ref. [7] of the paper.

Helpers: :func:`neural_filter` (the network's input-output map at the fixed
point of its dynamics) and :func:`principal_subspace`.  The module is meant
to grow with the metrics of later papers (e.g. dictionary-learning errors).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_choice, check_float, check_int

__all__ = [
    "output_covariance",
    "eigenvalue_error",
    "principal_subspace",
    "neural_filter",
    "row_space_basis",
    "subspace_error",
]


def _symmetric(name: str, C) -> np.ndarray:
    C = check_array(name, C, ndim=2)
    if C.shape[0] != C.shape[1] or C.shape[0] < 1:
        raise ValueError(f"{name} must be a square (k, k) matrix with k >= 1; got shape {C.shape}")
    scale = max(1.0, float(np.max(np.abs(C))))
    if not np.allclose(C, C.T, rtol=0.0, atol=1e-8 * scale):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (C + C.T)


def output_covariance(Y: ArrayLike, time_axis: int = 0) -> np.ndarray:
    """Output covariance ``(1/T) sum_t y_t y_t^T`` (non-centered, as in the paper).

    Its eigenvalues are the non-zero eigenvalues of the normalized output
    similarity matrix ``(1/T) Y^T Y`` of the paper (``Y`` being ``k x T``).

    Parameters
    ----------
    Y : array_like, shape (T, k) or (k, T)
        Outputs over ``T >= 1`` steps.
    time_axis : {0, 1}
        Axis of ``Y`` that indexes time: 0 for the engine's ``(T, k)``
        recordings (default), 1 for the paper's ``k x T`` matrix.

    Returns
    -------
    numpy.ndarray, shape (k, k)
        The covariance, symmetric positive semi-definite.

    Raises
    ------
    ValueError
        If ``Y`` is not 2-D with at least one step and one output, or its
        covariance overflows.
    """
    Y = check_array("Y", Y, ndim=2)
    time_axis = check_int("time_axis", time_axis, low=0, high=1)
    Y = Y.T if time_axis == 1 else Y
    if Y.shape[0] < 1 or Y.shape[1] < 1:
        raise ValueError(f"Y must have at least one step and one output; got shape {Y.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        C = Y.T @ Y / Y.shape[0]
    if not np.all(np.isfinite(C)):
        raise ValueError("Y is too large: its covariance overflows float64")
    return C


def eigenvalue_error(Y_or_cov: ArrayLike, target_eigenvalues: ArrayLike, kind: str = "auto",
                     time_axis: int = 0) -> float:
    """Eigenvalue error of Section VI-A (Fig. 5, left).

    .. math::

        E_\\lambda = \\sum_{i=1}^{K} \\left(\\lambda_i\\!\\left(\\tfrac{1}{T} Y^\\top Y\\right)
                     - \\lambda_i^{*}\\right)^2,

    with both spectra sorted in descending order and ``lambda*`` the offline
    optimum (Eqs. 4, 7, 9-10, e.g. from
    ``neurosim.models.similarity_matching.offline_output_eigenvalues``).
    ``(1/T) Y^T Y`` is ``T x T`` but has the same non-zero eigenvalues as the
    ``k x k`` output covariance, so the shorter of the two spectra is padded
    with zeros to ``K = max(k, len(target))``; an output neuron that should be
    silent but is not thus adds its whole eigenvalue squared.

    The error is invariant under rotations ``Y -> U_k Y`` (``U_k`` orthogonal),
    matching the ``U_k`` freedom of the offline solutions.

    Parameters
    ----------
    Y_or_cov : array_like, shape (T, k), (k, T) or (k, k)
        Either outputs over time or an output covariance.
    target_eigenvalues : array_like, shape (m,)
        Offline output eigenvalues (any order), normalized by ``T``.
    kind : {"auto", "samples", "covariance"}
        How to read ``Y_or_cov``.  ``"auto"`` takes a square symmetric matrix
        as a covariance and anything else as samples; pass the kind
        explicitly when a sample matrix could be square.
    time_axis : {0, 1}
        For samples, the axis indexing time (see :func:`output_covariance`).

    Returns
    -------
    float
        ``E_lambda >= 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.metrics import eigenvalue_error
    >>> eigenvalue_error(np.diag([3.0, 1.0]), [3.0, 0.5, 0.5])  # (1 - 0.5)^2 + (0 - 0.5)^2
    0.5
    """
    kind = check_choice("kind", kind, {"auto", "samples", "covariance"})
    M = check_array("Y_or_cov", Y_or_cov, ndim=2)
    target = check_array("target_eigenvalues", target_eigenvalues, ndim=1)
    if target.size < 1:
        raise ValueError("target_eigenvalues must contain at least one value")
    if kind == "auto":
        square = M.shape[0] == M.shape[1]
        kind = "covariance" if square and np.allclose(M, M.T, rtol=0.0, atol=1e-12 * max(1.0, np.abs(M).max())) else "samples"
    C = _symmetric("Y_or_cov", M) if kind == "covariance" else output_covariance(M, time_axis)
    got = np.sort(np.linalg.eigvalsh(C))[::-1]
    want = np.sort(target)[::-1]
    K = max(got.size, want.size)
    got = np.pad(got, (0, K - got.size))
    want = np.pad(want, (0, K - want.size))
    return float(np.sum((got - want) ** 2))


def principal_subspace(covariance: ArrayLike, p: int) -> np.ndarray:
    """Orthonormal basis of the top-``p`` eigenvectors of a covariance matrix.

    Parameters
    ----------
    covariance : array_like, shape (n, n)
        Symmetric input covariance.
    p : int
        Subspace dimension, ``1 <= p <= n``.

    Returns
    -------
    numpy.ndarray, shape (n, p)
        Columns are the eigenvectors of the ``p`` largest eigenvalues, in
        descending order of eigenvalue.
    """
    C = _symmetric("covariance", covariance)
    p = check_int("p", p, low=1, high=C.shape[0])
    _, vecs = np.linalg.eigh(C)
    return np.ascontiguousarray(vecs[:, ::-1][:, :p])


def neural_filter(W_yx: ArrayLike, W_yy: ArrayLike) -> np.ndarray:
    """Input-output map of a Hebbian/anti-Hebbian network at its fixed point.

    The Jacobi dynamics (Eq. 17), ``y <- (1-eta) y + eta (W^YX x - W^YY y)``,
    converge to ``(I + W^YY) y = W^YX x``; hence ``y = F x`` with

    .. math:: F = (I + W^{YY})^{-1} W^{YX}.

    Parameters
    ----------
    W_yx : array_like, shape (k, n)
        Feed-forward weights.
    W_yy : array_like, shape (k, k)
        Lateral weights (zero diagonal in the paper; not required here).

    Returns
    -------
    numpy.ndarray, shape (k, n)
        The filter ``F``.

    Raises
    ------
    ValueError
        If ``I + W^YY`` is singular (no unique fixed point).
    """
    W = check_array("W_yx", W_yx, ndim=2)
    M = check_array("W_yy", W_yy, ndim=2, shape=(W.shape[0], W.shape[0]))
    A = np.eye(M.shape[0]) + M
    if np.linalg.cond(A) > 1e12:
        raise ValueError("I + W_yy is singular; the network dynamics have no unique fixed point")
    return np.linalg.solve(A, W)


def row_space_basis(F: ArrayLike, rtol: float = 1e-6, rank: int | None = None) -> np.ndarray:
    """Orthonormal basis of the row space of a filter, ignoring silent outputs.

    Parameters
    ----------
    F : array_like, shape (k, n)
        The filter, one row per output.
    rtol : float in [0, 1]
        Singular values at or below ``rtol * s_max`` are treated as zero, so
        output neurons whose filters have (numerically) died out do not add
        directions.  Online networks switch neurons off only asymptotically
        (their weights decay like ``1/T``), so raise ``rtol`` to the level
        at which an output counts as "off" in a given experiment.
    rank : int, optional
        Use exactly the top ``rank`` right singular directions instead of the
        ``rtol`` rule.

    Returns
    -------
    numpy.ndarray, shape (n, r)
        Columns form an orthonormal basis; ``r`` may be 0.
    """
    F = check_array("F", F, ndim=2)
    if F.shape[0] < 1 or F.shape[1] < 1:
        raise ValueError(f"F must have shape (k, n) with k, n >= 1; got {F.shape}")
    rtol = check_float("rtol", rtol, low=0.0, high=1.0)
    _, s, vt = np.linalg.svd(F, full_matrices=False)
    if rank is None:
        r = int(np.sum(s > rtol * s[0])) if s[0] > 0 else 0
    else:
        r = check_int("rank", rank, low=0, high=s.size)
    return np.ascontiguousarray(vt[:r].T)


def subspace_error(F: ArrayLike, U: ArrayLike, rtol: float = 1e-6, rank: int | None = None) -> float:
    """Subspace error between a learned filter and a principal subspace.

    Following Pehlevan & Chklovskii (NIPS 2015, ref. [7] of paper 002), the
    error compares orthogonal projectors:

    .. math::

        E_{\\mathrm{sub}} = \\frac{1}{p}\\left\\| \\tilde V \\tilde V^\\top
                            - U U^\\top \\right\\|_F^2
                          = \\frac{r + p - 2\\,\\|\\tilde V^\\top U\\|_F^2}{p},

    where ``U`` (``n x p``) is an orthonormal basis of the top-``p``
    principal subspace of the input covariance, ``p`` the number of modes the
    offline optimum transmits, and ``Ṽ`` (``n x r``) an orthonormal basis of
    the row space of the filter ``F`` (e.g. ``(I + W^YY)^{-1} W^YX``,
    :func:`neural_filter`) restricted to outputs that are on
    (:func:`row_space_basis`).  ``E = 0`` iff the two subspaces coincide; a
    missing dimension and a spurious extra one each add ``1/p``.  The error
    is invariant under ``F -> Q F`` for invertible ``Q`` (in particular the
    ``U_k`` rotations of the offline solutions) and under ``U -> U R``.

    Parameters
    ----------
    F : array_like, shape (k, n)
        Learned filter.
    U : array_like, shape (n, p)
        Basis of the target subspace; orthonormalized here (QR), so any
        full-column-rank basis is accepted.
    rtol : float in [0, 1], optional
        Passed to :func:`row_space_basis`.
    rank : int, optional
        Passed to :func:`row_space_basis`.

    Returns
    -------
    float
        ``E_sub >= 0``; 0 iff the subspaces coincide.

    Raises
    ------
    ValueError
        If the shapes do not match or ``U``'s columns are dependent.

    Examples
    --------
    A filter onto the first two axes of R^3 against the subspace of the
    first axis: one spurious dimension out of ``p = 1``; a rotated filter
    spanning the same plane as ``U`` gives 0:

    >>> import numpy as np
    >>> from neurosim.metrics import subspace_error
    >>> F = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    >>> subspace_error(F, np.array([[1.0], [0.0], [0.0]]))
    1.0
    >>> R = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    >>> U = np.array([[1.0, 1.0], [1.0, -1.0], [0.0, 0.0]])
    >>> round(subspace_error(R @ F, U), 12)
    0.0
    """
    F = check_array("F", F, ndim=2)
    U = check_array("U", U, ndim=2)
    if U.shape[0] != F.shape[1]:
        raise ValueError(f"U must have shape (n, p) with n = F.shape[1] = {F.shape[1]}; got {U.shape}")
    if U.shape[1] < 1 or U.shape[1] > U.shape[0]:
        raise ValueError(f"U must have 1 <= p <= n columns; got shape {U.shape}")
    Q, R = np.linalg.qr(U)
    if np.min(np.abs(np.diag(R))) <= 1e-10 * max(1.0, np.max(np.abs(R))):
        raise ValueError("U must have linearly independent columns")
    V = row_space_basis(F, rtol=rtol, rank=rank)
    p, r = Q.shape[1], V.shape[1]
    overlap = np.sum((V.T @ Q) ** 2) if r else 0.0
    return float(max(r + p - 2.0 * overlap, 0.0) / p)
