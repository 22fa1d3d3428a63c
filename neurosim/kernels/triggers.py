"""Numba kernels usable as compiled trigger conditions (they return a bool)."""

from numba import njit

__all__ = ["any_above", "mean_below", "always"]


@njit(cache=True, nogil=True)
def any_above(a, threshold):
    """True when some element of ``a`` exceeds ``threshold``."""
    flat = a.ravel()
    for i in range(flat.size):
        if flat[i] > threshold:
            return True
    return False


@njit(cache=True, nogil=True)
def mean_below(a, threshold):
    """True when the mean of ``a`` is below ``threshold``."""
    flat = a.ravel()
    acc = 0.0
    for i in range(flat.size):
        acc += flat[i]
    return acc / flat.size < threshold


@njit(cache=True, nogil=True)
def always():
    """Always True: with ``Trigger(every=n)`` fires every ``n`` steps without leaving compiled code early."""
    return True
