"""The dictionary an encoder codes with: the learned atoms, unit-normalised, or centred and unit-normalised.

Paper 000 (Garg et al. 2017) prints Alg. 1 with codes against the learned
dictionary ``D`` itself, but the authors' released code codes against
``normalize(D)`` (their ``sparse_coding.m``; ``normalize`` from Skoglund's
ElasticNet toolbox centres each column, then scales it to unit length), and
the paper attributes ODL's small adaptation in Sec. 4 / App. E.5 to exactly
that: "normalization of sparse dictionary elements when computing codes --
the normalization introduces non-zeros of small magnitude in all
dimensions", which only centring does. This module names the three choices:

==================  ============================================================
``"none"``          ``d~_j = d_j`` (Alg. 1 as printed)
``"unit"``          ``d~_j = d_j / ||d_j||``
``"center_unit"``   ``d~_j = (d_j - mean(d_j)) / ||d_j - mean(d_j)||`` (the
                    authors' code)
==================  ============================================================

An atom that normalisation cannot scale (all zeros; under ``"center_unit"``
also an atom constant up to rounding, which centring zeroes) stays all-zero
in ``D~``: it is inactive for every encoder, as an all-zero atom always is.
The authors divide by ``norm + 1e-100``, which gives the same zero atoms
(but scales a constant atom's rounding residue up to a unit-norm atom) and
otherwise differs from exact division by at most one rounding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NORMALIZATIONS", "normalized_atoms"]

#: the coding normalisations, in order of the integer code the kernels take
NORMALIZATIONS = ("none", "unit", "center_unit")


def normalized_atoms(W: np.ndarray, normalize: str) -> np.ndarray:
    """The atoms (rows of ``W``) an encoder codes with under ``normalize`` (a new array; ``W`` is not changed).

    The NumPy twin of :func:`neurosim.kernels.encoding.normalize_rows`, with
    the same operations in the same order, so both give the same bits.

    Parameters
    ----------
    W : ndarray of shape (n_atoms, n_features)
        Dictionary, atoms as rows.
    normalize : {"none", "unit", "center_unit"}
        As they are (a copy), scaled to unit norm, or centred then scaled;
        all-zero (or constant, for ``"center_unit"``) atoms stay zero.

    Returns
    -------
    ndarray of shape (n_atoms, n_features)
        The normalised atoms.

    Examples
    --------
    >>> import numpy as np
    >>> normalized_atoms(np.array([[3.0, 4.0], [0.0, 0.0]]), "unit")
    array([[0.6, 0.8],
           [0. , 0. ]])
    >>> normalized_atoms(np.array([[1.0, 3.0], [2.0, 2.0]]), "center_unit")
    array([[-0.70710678,  0.70710678],
           [ 0.        ,  0.        ]])
    """
    from neurosim._validation import check_choice
    from neurosim.kernels.encoding import normalize_rows

    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    W = np.ascontiguousarray(W, dtype=np.float64)
    if normalize == "none":
        return W.copy()
    out = np.empty_like(W)
    normalize_rows(W, NORMALIZATIONS.index(normalize), out)
    return out
