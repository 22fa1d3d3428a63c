"""Measures of dictionaries and selected example sets (paper 004, Sec. 4-5).

Tsuchida & Cottrell (2015), "Example selection for dictionary learning":
mutual and average coherence of a dictionary (Sec. 4), the distance of a
learned dictionary from the ground truth up to a permutation of its
elements (Eq. 16, Fig. 3-4) and the histogram intersection distance between
the activations of the selected and of all examples (Fig. 5).

Layout
------
Dictionaries are in the PAPER's layout: ``A`` of shape ``(P, K)``, one
element per COLUMN (the framework's circuits hold atoms as rows and pass
``W.T``). Activations are in the framework's layout: ``S`` of shape
``(N, K)``, one example per ROW.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_bool, check_int

__all__ = [
    "coherence",
    "average_coherence",
    "dictionary_distance",
    "histogram_intersection_distance",
]


def _unit_columns(A) -> np.ndarray:
    A = check_array("A", A, ndim=2)
    if A.shape[0] < 1 or A.shape[1] < 2:
        raise ValueError(f"A must have shape (P >= 1, K >= 2): coherence needs two elements; got {A.shape}")
    with np.errstate(over="ignore", under="ignore"):
        norms = np.sqrt(np.einsum("pk,pk->k", A, A))
    bad = np.flatnonzero(~((norms > 0.0) & np.isfinite(norms)))
    if bad.size:
        raise ValueError(
            f"A must have columns with norms in (0, inf); columns {bad[:10].tolist()} are zero, underflow or overflow"
        )
    return A / norms


def _abs_gram_pairs(A) -> np.ndarray:
    U = _unit_columns(A)
    G = np.abs(U.T @ U)
    i, j = np.triu_indices(G.shape[0], 1)
    # rounding can lift |u_i . u_j| a few ulps above 1 for parallel columns
    return np.minimum(G[i, j], 1.0)


def coherence(A: ArrayLike) -> float:
    """Mutual coherence ``mu(A) = max_{i != j} |a_i^T a_j|`` (paper 004, Sec. 4).

    The columns are normalised first (Elad 2010's definition; the paper's
    dictionaries are unit-norm already, where this changes nothing).

    Parameters
    ----------
    A : array_like, shape (P, K)
        Dictionary in the paper's layout (elements are columns), ``K >= 2``,
        finite, no zero column.

    Returns
    -------
    float
        In ``[0, 1]``.
    """
    return float(_abs_gram_pairs(A).max())


def average_coherence(A: ArrayLike) -> float:
    """Average coherence ``mu-bar(A)``, the mean of ``|a_i^T a_j|`` over pairs (Sec. 4).

    The paper prints ``2 / (K (K - 1)) sum_{i != j} |a_i^T a_j|``; summed over
    all ordered pairs ``i != j`` that is twice the mean (each pair counted
    twice), which cannot be meant for a quantity compared with ``mu``. This
    function takes the sum over unordered pairs ``i < j``, i.e. the mean of
    ``|a_i^T a_j|`` over the ``K (K - 1) / 2`` pairs, with columns normalised
    as in :func:`coherence`.

    Parameters
    ----------
    A : array_like, shape (P, K)
        Dictionary in the paper's layout, ``K >= 2``, finite, no zero column.

    Returns
    -------
    float
        In ``[0, mu(A)]``.
    """
    return float(_abs_gram_pairs(A).mean())


def dictionary_distance(A_hat: ArrayLike, A_star: ArrayLike,
                        return_permutation: bool = False) -> float | tuple[float, np.ndarray]:
    """Minimal mean square distance ``D*(A_hat, A*)`` up to a permutation (Eq. 16).

    ``D* = min_pi (1 / (K P)) ||A_hat P_pi - A*||_F^2`` over all permutation
    matrices ``P_pi``, solved exactly as a linear assignment
    (``scipy.optimize.linear_sum_assignment``) on the cost
    ``C_ij = ||a_hat_i - a*_j||^2``: the Frobenius norm of a column
    permutation is the sum of the matched columns' squared distances. No
    sign flips are allowed (the paper's activations are non-negative, so an
    element's sign is identifiable).

    With more learned elements than true ones (``K_hat > K``), each true
    element is matched to a distinct learned one and the unmatched learned
    elements are not scored (the paper compares equal sizes; this is its
    natural extension, still ``(1 / (K P))`` times the matched sum). Fewer
    learned than true elements leave true elements unmatched, where ``D*``
    has no meaning: refused.

    Parameters
    ----------
    A_hat : array_like, shape (P, K_hat)
        Learned dictionary in the paper's layout (elements are columns),
        ``K_hat >= K``, finite.
    A_star : array_like, shape (P, K)
        Ground truth, finite. Neither is normalised here.
    return_permutation : bool
        Also return the matching.

    Returns
    -------
    float
        ``D*``, ``>= 0``.
    numpy.ndarray of int64, shape (K,) (of indices into the K_hat learned elements)
        Only with ``return_permutation``: ``perm`` with ``A_hat[:, perm]``
        the optimally matched copy of ``A_star`` (learned element
        ``perm[j]`` matches true element ``j``), so ``D* = ((A_hat[:, perm]
        - A_star) ** 2).mean()``.
    """
    A_hat = check_array("A_hat", A_hat, ndim=2)
    A_star = check_array("A_star", A_star, ndim=2)
    if A_star.shape[0] < 1 or A_star.shape[1] < 1:
        raise ValueError(f"A_star must have shape (P >= 1, K >= 1); got {A_star.shape}")
    if A_hat.shape[0] != A_star.shape[0] or A_hat.shape[1] < A_star.shape[1]:
        raise ValueError(f"A_hat must have shape (P, K_hat) with P = {A_star.shape[0]} and K_hat >= K = "
                         f"{A_star.shape[1]} (every true element matched to a learned one); got {A_hat.shape}")
    return_permutation = check_bool("return_permutation", return_permutation)
    # here, not at import: neurosim.plot imports this package, and a figure needs no SciPy (issue 40)
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    P, K = A_star.shape
    # cdist's direct sum of squared differences: no cancellation as in |a|^2 + |b|^2 - 2 a.b
    with np.errstate(over="ignore"):
        C = cdist(A_hat.T, A_star.T, "sqeuclidean")
    if not np.all(np.isfinite(C)):
        raise ValueError("A_hat or A_star values are too large: squared distances overflow float64")
    rows, cols = linear_sum_assignment(C)
    perm = np.empty(K, dtype=np.int64)
    perm[cols] = rows
    d = float(((A_hat[:, perm] - A_star) ** 2).sum() / (K * P))
    return (d, perm) if return_permutation else d


def _histogram(v: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    # numpy's equal-width bins on [lo, hi] (last bin closed), computed on halved
    # values so that a range like [-1e308, 1e308] does not overflow to inf
    span = hi * 0.5 - lo * 0.5
    if span > 0.0:
        h = v * 0.5
        t = (h - lo * 0.5) / span
        idx = np.minimum((t * bins).astype(np.int64), bins - 1)
        # a value on an edge may round into the bin below or above; compare with
        # the edges themselves, as numpy.histogram does, so edges belong to the upper bin
        e = np.linspace(lo * 0.5, hi * 0.5, bins + 1)
        idx -= (h < e[idx]) & (idx > 0)
        idx += (h >= e[idx + 1]) & (idx < bins - 1)
    else:  # one value, or a range below the float resolution: one bin holds all
        idx = np.zeros(v.size, dtype=np.int64)
    return np.bincount(idx, minlength=bins)


def histogram_intersection_distance(S_selected: ArrayLike, S_all: ArrayLike, bins: int = 20,
                                    nonzero_only: bool = True) -> float:
    """Histogram intersection distance of selected versus all activations (Fig. 5).

    Rubner, Tomasi & Guibas (2000): for normalised histograms ``p`` and
    ``q`` on the same bins, ``d(p, q) = 1 - sum_b min(p_b, q_b)``, 0 for
    equal histograms and 1 for disjoint ones. Paper 004 (Sec. 5, Fig. 5)
    compares the distribution of the selected examples ``D(X_n)`` with that
    of all examples ``D(X_N)``; this function does so per dictionary
    element on the activations:

    1. for element ``j``, take the activations ``s_ij`` of the selected
       and of all examples (with ``nonzero_only``, the default, only the
       nonzero ones: the distribution of an element's activation when it is
       used; otherwise every value, zeros included);
    2. bin both on SHARED edges, ``bins`` equal-width bins spanning the
       pooled range of both sets (for a selected set drawn from ``S_all``
       this is the range of ``S_all``; the last bin is closed, as numpy's),
       and normalise each histogram to sum 1;
    3. ``d_j = 1 - sum_b min(p_b, q_b)``.

    The result is the mean of ``d_j`` over the elements whose activations
    are non-empty in at least one of the two sets; an element with values
    in one set only has ``d_j = 1``, one with values in neither is left out
    of the mean. If all of an element's values are equal they share one
    bin (distance 0).

    Parameters
    ----------
    S_selected : array_like, shape (n, K)
        Activations of the selected examples, examples as rows.
    S_all : array_like, shape (N, K)
        Activations of all examples, same ``K``.
    bins : int
        Bins per element, in ``[1, 10000]``.
    nonzero_only : bool
        Histogram only the nonzero activations (default) or all of them.

    Returns
    -------
    float
        In ``[0, 1]``; symmetric in its two arguments.

    Raises
    ------
    ValueError
        If no element has any (nonzero) activation in either set.
    """
    S_selected = check_array("S_selected", S_selected, ndim=2)
    S_all = check_array("S_all", S_all, ndim=2)
    if S_all.shape[1] < 1:
        raise ValueError(f"S_all must have shape (N, K >= 1); got {S_all.shape}")
    if S_selected.shape[1] != S_all.shape[1]:
        raise ValueError(f"S_selected must have K = {S_all.shape[1]} columns (as S_all); got {S_selected.shape}")
    bins = check_int("bins", bins, low=1, high=10000)
    nonzero_only = check_bool("nonzero_only", nonzero_only)
    dists = []
    for j in range(S_all.shape[1]):
        a, b = S_selected[:, j], S_all[:, j]
        if nonzero_only:
            a, b = a[a != 0.0], b[b != 0.0]
        if a.size == 0 and b.size == 0:
            continue
        if a.size == 0 or b.size == 0:
            dists.append(1.0)
            continue
        lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
        ca = _histogram(a, lo, hi, bins)
        cb = _histogram(b, lo, hi, bins)
        # sum_b min(ca/na, cb/nb) in exact integers: identical histograms give
        # exactly 0, disjoint ones exactly 1, and swapping the sets the same bits
        na, nb = a.size, b.size
        inter = int(np.minimum(ca.astype(object) * nb, cb.astype(object) * na).sum())
        dists.append((na * nb - inter) / (na * nb))
    if not dists:
        raise ValueError(
            "S_selected and S_all have no " + ("nonzero " if nonzero_only else "")
            + "activation in any element: the distance is undefined"
        )
    return float(np.mean(dists))
