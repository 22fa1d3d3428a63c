"""Numba kernels for dense rate populations: synaptic drive and Jacobi dynamics.

Pure functions on contiguous float64 arrays, compiled once and cached on disk
(``cache=True``). They write into preallocated outputs so that a compiled
segment allocates nothing per step.
"""

import numpy as np
from numba import njit

__all__ = ["synaptic_drive", "jacobi_relax", "all_finite"]


@njit(cache=True, nogil=True)
def synaptic_drive(out, pre, weights, sign, accumulate):
    """``out (+)= sign * pre @ weights.T`` for a batch of activity rows.

    Parameters
    ----------
    out : (batch, n_post) array, written in place.
    pre : (batch, n_pre) array.
    weights : (n_post, n_pre) array.
    sign : float, +1 or -1.
    accumulate : bool, add to ``out`` instead of overwriting it.
    """
    # BLAS gemm through numba: same numbers as NumPy's ``pre @ weights.T``.
    if accumulate:
        tmp = np.dot(pre, weights.T)
        out += sign * tmp
    else:
        np.dot(pre, weights.T, out)
        if sign != 1.0:
            out *= sign


@njit(cache=True, nogil=True)
def jacobi_relax(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info):
    """Weighted Jacobi iteration ``y <- (1 - eta) y + eta (drive + s M y)`` (paper 002, Eq. 17).

    With ``s = -1`` and ``M = W^YY`` this is Eq. 17 exactly: the fixed point
    solves ``(I + W^YY) y = W^YX x`` (Eq. 16 after dividing by the
    normalisers of Eq. 18).

    Parameters
    ----------
    y : (batch, n) array, in place; the starting point unless ``zero_start``.
    drive : (batch, n) array, the feed-forward input ``W^YX x`` (fixed within a step).
    lateral : (n, n) array with zero diagonal; ignored when ``lateral_sign == 0``.
    lateral_sign : float, -1 (inhibitory), +1, or 0 (no lateral projection).
    eta : float in (0, 1], the Jacobi weight.
    tol : float; stop when ``max |dy| <= tol * (1 + max |y|)``. ``tol <= 0``
        runs exactly ``max_iter`` iterations (fixed-iterations mode).
    max_iter : int >= 1.
    zero_start : bool, start from ``y = 0`` instead of the previous ``y``.
    scratch : (batch, n) array used as workspace.
    info : int64 array of length 1; receives the return value, so a compiled
        segment that ignores return values still exposes it.

    Returns
    -------
    n_iter : int, iterations run; ``-n_iter`` when ``tol > 0`` and the
        tolerance was not reached within ``max_iter``.
    """
    batch, n = y.shape
    if zero_start:
        y[:, :] = 0.0
    for it in range(max_iter):
        delta = 0.0
        ymax = 0.0
        if lateral_sign != 0.0:
            np.dot(y, lateral.T, scratch)
        else:
            scratch[:, :] = 0.0
        for b in range(batch):
            for i in range(n):
                scratch[b, i] = (1.0 - eta) * y[b, i] + eta * (drive[b, i] + lateral_sign * scratch[b, i])
        for b in range(batch):
            for i in range(n):
                d = abs(scratch[b, i] - y[b, i])
                if d > delta:
                    delta = d
                v = abs(scratch[b, i])
                if v > ymax:
                    ymax = v
                y[b, i] = scratch[b, i]
        if tol > 0.0 and delta <= tol * (1.0 + ymax):
            info[0] = it + 1
            return it + 1
        # NaN never satisfies the test above; leave early so divergence is reported promptly.
        if delta != delta:
            info[0] = it + 1
            return it + 1
    info[0] = -max_iter if tol > 0.0 else max_iter
    return info[0]


@njit(cache=True, nogil=True)
def all_finite(a):
    """True when every element of ``a`` (any shape) is finite."""
    flat = a.ravel()
    for i in range(flat.size):
        v = flat[i]
        if not (v - v == 0.0):
            return False
    return True


@njit(cache=True, nogil=True)
def zero_fill(a):
    """Set every element of a 2-D array to zero."""
    a[:, :] = 0.0


@njit(cache=True, nogil=True)
def copy_into(dst, src):
    """``dst[...] = src`` for 2-D arrays of equal shape."""
    dst[:, :] = src
