"""Topographic maps: are neighbouring dictionary elements alike? (paper 003)

With the torus group family (:meth:`neurosim.groups.GroupStructure.torus`)
OSDL learns a dictionary in which elements that sit close on the
``rows x cols`` torus have similar receptive fields. This module measures
that from Gabor fits of the elements
(:func:`neurosim.analysis.receptive_fields.fit_gabors`): it compares the
orientation and centre differences of torus-neighbour pairs with those of
random pairs of elements.

Conventions: element ``j`` sits at ``(j // cols, j % cols)`` on the torus
(the layout of ``GroupStructure.torus``); Gabor parameters are rows in
:class:`~neurosim.analysis.receptive_fields.GaborParams` order
``(x0, y0, theta, freq, phase, sigma_x, sigma_y, amp)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_float, check_int

__all__ = ["torus_neighbour_pairs", "orientation_difference", "neighbour_differences"]


def _grid(shape) -> tuple[int, int]:
    grid = getattr(shape, "grid", shape)  # a torus GroupStructure carries its grid
    if grid is None:
        raise ValueError("shape must be (rows, cols) or a GroupStructure with a grid (GroupStructure.torus)")
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or len(grid) != 2:
        raise TypeError(f"shape must be a pair (rows, cols) or a torus GroupStructure; got {shape!r}")
    return check_int("rows", grid[0], low=1), check_int("cols", grid[1], low=1)


def torus_neighbour_pairs(shape: tuple[int, int], radius: int = 1) -> np.ndarray:
    """Unordered pairs of distinct units within ``radius`` of each other on a torus.

    Two units are neighbours when both their row and their column
    differences, taken around the torus, are at most ``radius`` (they share
    a ``(2 radius + 1)``-square neighbourhood, the groups of
    ``GroupStructure.torus(rows, cols, radius)`` centred on either).

    Parameters
    ----------
    shape : (int, int) or GroupStructure
        Torus shape ``(rows, cols)``, or a torus group structure (its
        ``grid``).
    radius : int
        Neighbourhood radius (>= 1).

    Returns
    -------
    numpy.ndarray of int64, shape (n_pairs, 2)
        Pairs ``(j, k)`` with ``j < k``, each listed once, sorted.
    """
    rows, cols = _grid(shape)
    radius = check_int("radius", radius, low=1)
    r, c = np.divmod(np.arange(rows * cols), cols)
    offs = np.arange(-radius, radius + 1)
    dr, dc = (a.ravel() for a in np.meshgrid(offs, offs, indexing="ij"))
    keep = (dr != 0) | (dc != 0)
    nb = ((r[:, None] + dr[keep]) % rows) * cols + (c[:, None] + dc[keep]) % cols
    j = np.repeat(np.arange(rows * cols), keep.sum())
    k = nb.ravel()
    # on a small torus offsets wrap onto the unit itself or onto one partner twice
    pairs = np.stack([np.minimum(j, k), np.maximum(j, k)], axis=1)[j != k]
    return np.unique(pairs, axis=0).astype(np.int64).reshape(-1, 2)


def orientation_difference(theta_a: ArrayLike, theta_b: ArrayLike) -> np.ndarray:
    """Circular difference of orientations (period ``pi``), in ``[0, pi/2]``.

    Orientations ``theta`` and ``theta + pi`` are the same, so the
    difference is ``min(d, pi - d)`` with ``d = |theta_a - theta_b| mod pi``.

    Parameters
    ----------
    theta_a, theta_b : float or array_like
        Orientations in radians (finite), broadcast against each other.

    Returns
    -------
    numpy.ndarray
        The differences, of the broadcast shape (0-d for two scalars).
    """
    # check_array makes scalars 1-D: restore the given shapes so scalars stay 0-d
    a = check_array("theta_a", theta_a).reshape(np.shape(theta_a))
    b = check_array("theta_b", theta_b).reshape(np.shape(theta_b))
    try:
        d = np.abs(a - b) % np.pi
    except ValueError:
        raise ValueError(f"theta_a and theta_b must broadcast; got shapes {a.shape} and {b.shape}") from None
    return np.minimum(d, np.pi - d)


def neighbour_differences(
    params: ArrayLike,
    shape: tuple[int, int],
    r2: ArrayLike | None = None,
    *,
    min_r2: float = 0.5,
    radius: int = 1,
    n_random: int | None = None,
    seed: int = 0,
) -> dict:
    """Orientation and centre differences of torus neighbours versus random pairs.

    For every pair of torus neighbours (:func:`torus_neighbour_pairs`) whose
    two elements are both well fitted, and for ``n_random`` random pairs of
    distinct well-fitted elements, compute

    * the orientation difference of the Gabor fits
      (:func:`orientation_difference`, radians in ``[0, pi/2]``),
    * the distance between their centres ``(x0, y0)`` in pixels.

    An element is *well fitted* when its coefficient of determination
    ``r2 >= min_r2`` (fit error ``1 - r2`` at most ``1 - min_r2``); poorly
    fitted elements (noise-like, flat or multi-lobed atoms) have meaningless
    orientation and centre, so every pair containing one is dropped, from
    both the neighbour and the random pairs.

    Parameters
    ----------
    params : array_like, shape (rows*cols, 8)
        Gabor fits, rows in ``GaborParams`` order (``fit_gabors``' first
        output).
    shape : (int, int) or GroupStructure
        The torus ``(rows, cols)``, or a torus group structure.
    r2 : array_like, shape (rows*cols,), optional
        Fit quality per element (``fit_gabors``' second output); ``None``
        keeps every element.
    min_r2 : float
        Threshold on ``r2``, finite and at most 1 (default 0.5).
    radius : int
        Neighbourhood radius on the torus (>= 1).
    n_random : int, optional
        Number of random pairs (>= 1); default: as many as there are
        neighbour pairs kept, at least 1.
    seed : int
        Seed of the random pairs (>= 0).

    Returns
    -------
    dict
        ``included`` (bool per element), ``neighbour_pairs`` and
        ``random_pairs`` (``(n, 2)`` int arrays), ``neighbour_orientation``,
        ``random_orientation``, ``neighbour_distance``, ``random_distance``
        (arrays per pair) and ``summary``: a dict with the counts
        ``n_included``, ``n_neighbour_pairs``, ``n_random_pairs``, the means
        ``neighbour_orientation_mean``, ``random_orientation_mean``,
        ``neighbour_distance_mean``, ``random_distance_mean``, and the
        one-sided Mann-Whitney U p-values ``orientation_p`` and
        ``distance_p`` of the hypothesis that neighbour differences are
        stochastically *smaller* than random-pair differences
        (``scipy.stats.mannwhitneyu(..., alternative="less")``; NaN when a
        side has no pair).

    Raises
    ------
    ValueError
        If fewer than two elements are well fitted.
    """
    from scipy.stats import mannwhitneyu

    rows, cols = _grid(shape)
    n = rows * cols
    params = check_array("params", params, ndim=2, shape=(n, 8))
    min_r2 = check_float("min_r2", min_r2, high=1.0)
    if r2 is None:
        included = np.ones(n, dtype=bool)
    else:
        # a NaN fit quality is a failed fit: excluded, not an error
        r2 = check_array("r2", r2, ndim=1, shape=(n,), finite=False)
        included = r2 >= min_r2
    idx = np.flatnonzero(included)
    if idx.size < 2:
        raise ValueError(f"at least 2 elements must have r2 >= min_r2 = {min_r2}; {idx.size} do")
    pairs = torus_neighbour_pairs((rows, cols), radius)
    pairs = pairs[included[pairs[:, 0]] & included[pairs[:, 1]]]
    n_random = max(1, len(pairs)) if n_random is None else check_int("n_random", n_random, low=1)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    a = rng.integers(0, idx.size, size=n_random)
    # a second index drawn from the other idx.size - 1 elements: uniform over distinct pairs
    b = (a + rng.integers(1, idx.size, size=n_random)) % idx.size
    rand = np.stack([idx[a], idx[b]], axis=1).astype(np.int64)

    def differences(p):
        ori = orientation_difference(params[p[:, 0], 2], params[p[:, 1], 2])
        dist = np.hypot(params[p[:, 0], 0] - params[p[:, 1], 0], params[p[:, 0], 1] - params[p[:, 1], 1])
        return ori, dist

    n_ori, n_dist = differences(pairs)
    r_ori, r_dist = differences(rand)

    def less_p(x, y):
        return float(mannwhitneyu(x, y, alternative="less").pvalue) if len(x) and len(y) else float("nan")

    def mean(x):
        return float(np.mean(x)) if len(x) else float("nan")

    summary = {
        "n_included": int(idx.size),
        "n_neighbour_pairs": int(len(pairs)),
        "n_random_pairs": int(n_random),
        "neighbour_orientation_mean": mean(n_ori),
        "random_orientation_mean": mean(r_ori),
        "neighbour_distance_mean": mean(n_dist),
        "random_distance_mean": mean(r_dist),
        "orientation_p": less_p(n_ori, r_ori),
        "distance_p": less_p(n_dist, r_dist),
    }
    return {
        "included": included,
        "neighbour_pairs": pairs,
        "random_pairs": rand,
        "neighbour_orientation": n_ori,
        "random_orientation": r_ori,
        "neighbour_distance": n_dist,
        "random_distance": r_dist,
        "summary": summary,
    }
