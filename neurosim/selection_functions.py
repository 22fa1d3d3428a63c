"""Example selection for dictionary learning (Tsuchida & Cottrell 2015).

Validated NumPy-facing wrappers of :mod:`neurosim.kernels.selection`:
goodness measures (Sec. 3.1, Eq. 9-13), selector functions (Sec. 3.2,
Eq. 14-15), activity equalization (Sec. 2.3, Alg. 1 step 4b) and the
single-scale saliency map used by SalMap (Eq. 13).

Layout (the framework's): ``X`` (N, P) inputs, ``S`` (N, K) activations,
``D`` (K, P) the dictionary with atoms as rows (the paper's ``A-hat`` is
``D.T``; sample ``i`` is reconstructed as ``S[i] @ D``).

=============  =============================================  ==========
measure        goodness ``G_ij``                              paper
=============  =============================================  ==========
``"err"``      ``||x_i - S[i] @ D||_1``                       Eq. 9
``"grad"``     ``||x_i - S[i] @ D||_1 * |s_ij|``              Eq. 10
``"snr"``      ``||x_i||^2 / ||x_i - S[i] @ D||^2 * |s_ij|``  Eq. 11
``"sun"``      ``|s_ij|``                                     Eq. 12
``"salmap"``   ``saliency(x_i)``                              Eq. 13
=============  =============================================  ==========

``|s_ij|`` admits signed codes and is the paper's ``s_ij`` for its
non-negative ones. A zero activation (or a zero factor) gives goodness
exactly 0; the SNR of a nonzero signal reconstructed exactly is ``+inf``
(ranked first, ties to the lower index) and that of a zero signal is 0.

Every argument is checked here, so bad input raises ``TypeError`` or
``ValueError`` naming the parameter and never reaches a kernel.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_choice, check_float, check_int
from neurosim.kernels import selection as _k

__all__ = [
    "MEASURES",
    "SELECTORS",
    "SELECTION_ALGORITHMS",
    "DegenerateSelectionWarning",
    "goodness",
    "select",
    "equalize_activity",
    "saliency",
    "saliency_maps",
]

MEASURES = ("err", "grad", "snr", "sun", "salmap")
SELECTORS = ("uniform", "by_sum", "by_element")

#: The selection algorithms compared in the paper (Fig. 3-5): name -> (measure, selector).
#: Err and SalMap are only used with BySum (with ByElement they select the same set, Sec. 3.2).
SELECTION_ALGORITHMS = {
    "Uniform": (None, "uniform"),
    "ErrBySum": ("err", "by_sum"),
    "GradBySum": ("grad", "by_sum"),
    "SNRBySum": ("snr", "by_sum"),
    "SUNBySum": ("sun", "by_sum"),
    "SalMap": ("salmap", "by_sum"),
    "GradByElement": ("grad", "by_element"),
    "SNRByElement": ("snr", "by_element"),
    "SUNByElement": ("sun", "by_element"),
}

_MEASURE_CODE = {"err": _k.ERR, "grad": _k.GRAD, "snr": _k.SNR, "sun": _k.SUN, "salmap": _k.SALMAP}
_SELECTOR_CODE = {"uniform": _k.UNIFORM, "by_sum": _k.BY_SUM, "by_element": _k.BY_ELEMENT}
_MAX_SEED = 2**63 - 1


class DegenerateSelectionWarning(RuntimeWarning):
    """Every goodness value is 0 (e.g. all activations are zero).

    The selectors then fall back on their tie rule and return the lowest
    sample indices ``0..n-1``: deterministic, but no selection at all.
    """


def _check_side(side, P: int) -> int:
    if side is None:
        r = math.isqrt(P)
        if r * r != P:
            raise ValueError(f"side must be given when X.shape[1] = {P} is not a perfect square (side * side == P)")
        return r
    side = check_int("side", side, low=1)
    if side * side != P:
        raise ValueError(f"side must satisfy side * side == X.shape[1] = {P}; got side={side}")
    return side


def _check_data(X: ArrayLike, S: ArrayLike, D: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = check_array("X", X, ndim=2)
    S = check_array("S", S, ndim=2)
    D = check_array("D", D, ndim=2)
    N, P = X.shape
    if N < 1 or P < 1:
        raise ValueError(f"X must have shape (N >= 1, P >= 1); got {X.shape}")
    if S.shape[0] != N or S.shape[1] < 1:
        raise ValueError(f"S must have shape (N={N}, K >= 1) (one row per row of X); got {S.shape}")
    K = S.shape[1]
    if D.shape != (K, P):
        raise ValueError(f"D must have shape (K={K}, P={P}) (atoms as rows, K = S.shape[1], P = X.shape[1]); "
                         f"got {D.shape}")
    return X, S, D


def _check_measure(measure) -> int:
    return _MEASURE_CODE[check_choice("measure", measure, set(MEASURES))]


def _factors(X, S, D, code: int, side) -> np.ndarray:
    N, P = X.shape
    if code != _k.SALMAP and side is not None:
        raise ValueError(f"side is used by measure='salmap' only; leave it None (got side={side!r})")
    sal = saliency(X, _check_side(side, P)) if code == _k.SALMAP else np.zeros(0)
    f = np.empty(N)
    bad = _k.sample_factors(X, S, D, code, sal, f)
    if bad:
        first = np.flatnonzero(np.isnan(f))[:10].tolist()
        raise ValueError(f"X, S or D values are too large: the residual x - S @ D (or its L1 norm) overflows "
                         f"float64 for {bad} sample(s), first {first}; rescale the inputs")
    if code in (_k.GRAD, _k.SUN):
        # finite factors times finite activations can still overflow (e.g. 3e205 * 6e102); SNR's
        # +inf has a meaning (exact reconstruction), these would only be overflow
        with np.errstate(over="ignore", invalid="ignore"):
            top = f * np.abs(S).max(axis=1)
        rows = np.flatnonzero(~np.isfinite(top))
        if rows.size:
            raise ValueError(f"X, S or D values are too large: the goodness f_i |s_ij| overflows float64 for "
                             f"sample(s) {rows[:10].tolist()}; rescale the inputs")
    return f


def goodness(X: ArrayLike, S: ArrayLike, D: ArrayLike, measure: str, *, side: int | None = None) -> np.ndarray:
    """Dense goodness values ``G`` of Eq. 9-13 (Alg. 1 step 3, first bullet).

    Parameters
    ----------
    X : array_like, shape (N, P)
        Signals, one per row.
    S : array_like, shape (N, K)
        Their activations (codes).
    D : array_like, shape (K, P)
        Dictionary, atoms as rows.
    measure : {"err", "grad", "snr", "sun", "salmap"}
        See the table in the module docstring.
    side : int, optional
        ``"salmap"`` only: patches are ``side x side``; default
        ``sqrt(P)`` when ``P`` is a perfect square.

    Returns
    -------
    G : ndarray, shape (N, K)
        Non-negative; ``+inf`` only for ``"snr"`` (exact reconstruction of
        a nonzero signal on an active element).

    Raises
    ------
    ValueError, TypeError
        If the shapes do not agree, a value is not finite, or ``measure`` or
        ``side`` is not allowed.

    Examples
    --------
    Three signals coded over the identity dictionary; SUN is ``|s_ij|``, Err
    the L1 norm of each signal's residual:

    >>> import numpy as np
    >>> from neurosim.selection_functions import goodness
    >>> X = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 2.0]])
    >>> S = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]])
    >>> D = np.eye(2)
    >>> goodness(X, S, D, "sun").tolist()
    [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]]
    >>> goodness(X, S, D, "err").tolist()
    [[0.0, 0.0], [2.0, 2.0], [2.0, 2.0]]
    """
    X, S, D = _check_data(X, S, D)
    code = _check_measure(measure)
    f = _factors(X, S, D, code, side)
    G = np.empty(S.shape)
    _k.goodness_dense(f, S, code, G)
    return G


def select(X: ArrayLike, S: ArrayLike, D: ArrayLike, n: int, *, measure: str | None, selector: str, seed: int = 0,
           counter: int = 0, side: int | None = None) -> np.ndarray:
    """Select ``n`` distinct examples (Alg. 1 step 3; Eq. 14, 15).

    Parameters
    ----------
    X, S, D : array_like
        As in :func:`goodness`.
    n : int in [1, N]
        Number of examples to select.
    measure : {"err", "grad", "snr", "sun", "salmap"} or None
        Goodness measure; must be ``None`` for ``selector="uniform"`` (which
        uses no goodness; a measure there raises rather than being ignored)
        and a name otherwise.
    selector : {"uniform", "by_sum", "by_element"}
        ``"by_sum"`` (Eq. 14): the ``n`` largest ``sum_j G_ij``, best first.
        ``"by_element"`` (Eq. 15): round robin over the elements
        ``j = 0..K-1``, each taking its best not-yet-selected example per
        turn, until ``n`` are selected (the first ``n mod K`` elements get
        one extra). With ``"err"``/``"salmap"`` this equals ``"by_sum"``
        exactly. ``"uniform"``: uniform without replacement, a pure function
        of ``(seed, counter)`` (SplitMix64 + partial Fisher-Yates, see
        :func:`neurosim.kernels.selection.uniform_indices`).
        Ties are broken by the lower sample index.
    seed, counter : int in [0, 2**63 - 1]
        Used by ``"uniform"`` only (e.g. ``counter`` = the epoch); checked
        but ignored by the goodness-based selectors, which are
        deterministic, so a caller may always pass its clock.
    side : int, optional
        ``"salmap"`` only, see :func:`goodness`.

    Returns
    -------
    idx : ndarray of int64, shape (n,)
        Indices into the rows of ``X``, in selection order.

    Warns
    -----
    DegenerateSelectionWarning
        If every goodness value is 0 (e.g. ``S`` is all zero with
        ``"sun"``, ``"grad"`` or ``"snr"``): the result is then ``0..n-1``
        by the tie rule.

    Raises
    ------
    ValueError, TypeError
        If ``n`` is outside ``[1, N]``, ``measure`` and ``selector`` do not
        go together, or the data are malformed.

    Examples
    --------
    With the data of :func:`goodness`: by the summed SUN the best two are
    samples 2 and 0; by Err, samples 1 and 2 (the worst reconstructed);
    round robin over the elements (ByElement) takes element 0's best, then
    element 1's:

    >>> import numpy as np
    >>> from neurosim.selection_functions import select
    >>> X = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 2.0]])
    >>> S = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]])
    >>> D = np.eye(2)
    >>> select(X, S, D, 2, measure="sun", selector="by_sum").tolist()
    [2, 0]
    >>> select(X, S, D, 2, measure="err", selector="by_sum").tolist()
    [1, 2]
    >>> select(X, S, D, 2, measure="sun", selector="by_element").tolist()
    [2, 1]
    """
    X, S, D = _check_data(X, S, D)
    N, K = S.shape
    n = check_int("n", n, low=1)
    if n > N:
        raise ValueError(f"n must be in [1, N] with N = {N} (the number of samples); got n={n}")
    sel = _SELECTOR_CODE[check_choice("selector", selector, set(SELECTORS))]
    seed = check_int("seed", seed, low=0, high=_MAX_SEED)
    counter = check_int("counter", counter, low=0, high=_MAX_SEED)
    out = np.empty(n, dtype=np.int64)
    wi, wf = _k.selection_workspace(N, K, n)
    if sel == _k.UNIFORM:
        if measure is not None:
            raise ValueError(f"measure must be None for selector='uniform' (it uses no goodness); got {measure!r}")
        if side is not None:
            raise ValueError(f"side is used by measure='salmap' only; leave it None (got side={side!r})")
        _k.select_examples(np.zeros(N), S, _k.SUN, sel, n, seed, counter, out, wi, wf)
        return out
    if measure is None:
        raise ValueError(f"selector={selector!r} needs a measure, one of {sorted(MEASURES)}")
    code = _check_measure(measure)
    f = _factors(X, S, D, code, side)
    scores = np.empty(N)
    _k.row_scores(f, S, code, scores)
    if not np.any(scores > 0.0):
        warnings.warn(
            f"select: every goodness value is 0 for measure={measure!r} (all-zero activations or factors); "
            f"the tie rule returns the first {n} samples",
            DegenerateSelectionWarning,
            stacklevel=2,
        )
    _k.select_examples(f, S, code, sel, n, 0, 0, out, wi, wf)
    return out


_MASK = (1 << 64) - 1
_G = 0x9E3779B97F4A7C15


def _mix_py(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _uniform_reference(N: int, n: int, seed: int, counter: int) -> np.ndarray:
    """Pure-Python twin of :func:`neurosim.kernels.selection.uniform_indices` (the NumPy path)."""
    key = _mix_py((_mix_py((seed + _G) & _MASK) + counter * _G) & _MASK)
    perm = list(range(N))
    out = np.empty(n, dtype=np.int64)
    q = 0
    for j in range(n):
        m = N - j
        thr = ((1 << 64) - m) % m
        while True:
            q += 1
            x = _mix_py((key + q * _G) & _MASK)
            if x >= thr:
                break
        t = j + x % m
        perm[j], perm[t] = perm[t], perm[j]
        out[j] = perm[j]
    return out


def equalize_activity(S: ArrayLike, gamma: float) -> np.ndarray:
    """Activity equalization (Sec. 2.3; Alg. 1 step 4b) on a copy of ``S``.

    ``s_ij * (mean_j' m_j' / m_j) ** gamma`` with ``m_j = sum_i |s_ij|``
    (the paper's ``sum_i s_ij`` for non-negative codes; ``|.|`` admits
    signed ones) and the mean over all ``K`` elements. Elements with
    ``m_j = 0`` are left unchanged (their column is zero).

    Parameters
    ----------
    S : array_like, shape (n, K)
        Activations of the selected examples.
    gamma : float in [0, 1]
        0: no equalization (``S`` returned unchanged); 1: every nonzero
        column sum becomes the mean; the paper uses 0.2.

    Returns
    -------
    ndarray, shape (n, K)
        The equalized copy.

    Examples
    --------
    Column sums 1 and 3 (mean 2), fully equalized:

    >>> import numpy as np
    >>> from neurosim.selection_functions import equalize_activity
    >>> equalize_activity(np.array([[1.0, 3.0]]), 1.0).tolist()
    [[2.0, 2.0]]
    """
    out = check_array("S", S, ndim=2).copy()
    gamma = check_float("gamma", gamma, low=0.0, high=1.0)
    if out.shape[1] < 1:
        raise ValueError(f"S must have shape (n, K >= 1); got {out.shape}")
    with np.errstate(over="ignore"):
        sums = np.abs(out).sum(axis=0)
    if not np.all(np.isfinite(sums)):
        raise ValueError("S values are too large: a column sum of |S| overflows float64; rescale S")
    _k.equalize(out, gamma)
    if not np.all(np.isfinite(out)):  # pragma: no cover - bounded by max(mean, m_j) for gamma <= 1
        raise ValueError("equalize_activity overflowed float64; rescale S")
    return out


def _check_patches(X: ArrayLike, side: int | None) -> tuple[np.ndarray, int]:
    X = check_array("X", X, ndim=2)
    if X.shape[1] < 1:
        raise ValueError(f"X must have shape (N, P >= 1); got {X.shape}")
    return X, _check_side(side, X.shape[1])


def saliency(X: ArrayLike, side: int | None = None) -> np.ndarray:
    """SalMap score of each patch (Eq. 13): single-scale Itti-Koch-Niebur saliency.

    Intensity centre-surround and a 4-orientation Gabor channel, Itti's
    N(.) operator keeping amplitude, score = maximum of the saliency map;
    the exact definition is in
    :func:`neurosim.kernels.selection.saliency_map`.

    Parameters
    ----------
    X : array_like, shape (N, side * side)
        Row-major monochrome patches (signed).
    side : int, optional
        Patch side; default ``sqrt(P)``.

    Returns
    -------
    ndarray, shape (N,)
        Non-negative; 0 for a blank patch; ``saliency(c X) = c saliency(X)``
        for ``c > 0``.
    """
    X, side = _check_patches(X, side)
    out = np.empty(X.shape[0])
    with np.errstate(over="ignore"):
        big = np.abs(X).max() if X.size else 0.0
    # the Gabor sums (unit-norm filters, 49 taps) and the squared weights stay finite below this
    if big > 1e150:
        raise ValueError(f"X values are too large for the saliency map (max |X| = {big:g} > 1e150); rescale X")
    _k.saliency_map(X, side, out)
    return out


def saliency_maps(X: ArrayLike, side: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The maps behind :func:`saliency`, for analysis.

    Parameters
    ----------
    X : array_like, shape (N, side * side)
        Row-major monochrome patches (signed).
    side : int, optional
        Patch side; default ``sqrt(P)``.

    Returns
    -------
    maps : ndarray, shape (N, 6, side, side)
        ``[:, 0]`` N(intensity centre-surround); ``[:, 1:5]`` N(orientation
        0, 45, 90, 135 degrees); ``[:, 5]`` the saliency map.
    score : ndarray, shape (N,)
        As :func:`saliency`.
    """
    X, side = _check_patches(X, side)
    if X.size and np.abs(X).max() > 1e150:
        raise ValueError("X values are too large for the saliency map (max |X| > 1e150); rescale X")
    maps = np.empty((X.shape[0], _k.N_MAPS, side, side))
    out = np.empty(X.shape[0])
    _k.saliency_maps(X, side, maps, out)
    return maps, out
