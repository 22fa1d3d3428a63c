"""Argument checks shared by every public entry point.

Each check raises ``TypeError`` for a wrong kind of value and ``ValueError``
for a value outside its range, always naming the parameter and the allowed
range, so that bad input never reaches a numba kernel.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

__all__ = ["check_int", "check_float", "check_array", "check_choice", "check_bool", "check_not_too_large",
           "available_memory", "check_memory"]

#: allocations below this many bytes are not checked against the available memory (reading it costs more)
MEMORY_CHECK_BYTES = 2**20


def check_bool(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be a bool; got {type(value).__name__}")


def check_int(name: str, value, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]`` or raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be in {_range_text(low, high, True, True)}; got {value}")
    return value


def check_float(
    name: str,
    value,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float in the given interval or raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    bad = (
        (low is not None and (value < low or (low_open and value == low)))
        or (high is not None and (value > high or (high_open and value == high)))
    )
    if bad:
        raise ValueError(f"{name} must be in {_range_text(low, high, not low_open, not high_open)}; got {value}")
    return value


def check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {sorted(choices)}; got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}; got {value!r}")
    return value


def check_array(
    name: str,
    value,
    ndim: int | tuple[int, ...] | None = None,
    shape: tuple | None = None,
    finite: bool = True,
    dtype=np.float64,
) -> np.ndarray:
    """Return ``value`` as a C-contiguous array of ``dtype`` or raise.

    ``shape`` may contain ``None`` for free axes.
    """
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be array-like; {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be a numeric array; got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real; got a complex array")
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimensions; got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    if finite and arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or Inf)")
    return arr


def check_not_too_large(name: str, value: np.ndarray, power: int = 2, hint: str = "") -> np.ndarray:
    """Return ``value`` (a finite float array) unless the sum of its ``power``-th powers overflows float64.

    Solvers form squared norms (sums of squares) of their inputs, and some
    products of those; where they overflow, the arithmetic gives Inf and NaN
    that later show up as all-zero codes or as an error about an array the
    user never passed. Refusing such inputs up front names the input
    instead. ``power=2`` (squared norms) is what every encoder needs;
    ``power=4`` is for solvers that multiply squared norms (e.g. the
    Lagrange-dual basis solve). Computed as a sum of powers of ``|x|``, so
    it is exact where it passes (no false refusal by a cruder bound).

    Parameters
    ----------
    name : str
        The input's name in the error message (e.g. ``"X"``).
    value : ndarray of float64
        Already checked to be finite.
    power : {2, 4}
    hint : str, optional
        Appended to the message (e.g. another option that needs only squares).
    """
    if power not in (2, 4):
        raise ValueError(f"power must be 2 or 4; got {power!r}")
    if value.size:
        flat = np.ravel(value)
        with np.errstate(over="ignore"):
            if power == 2:
                total = np.einsum("i,i->", flat, flat)  # no temporary array
            else:
                sq = flat * flat
                total = np.einsum("i,i->", sq, sq)
        if not np.isfinite(total):
            what = "squared norms overflow" if power == 2 else "fourth powers overflow"
            raise ValueError(f"{name} values are too large: {what} float64; rescale {name}{hint}")
    return value


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(need: int, what: str) -> None:
    """Refuse (``ValueError``), before allocating, arrays of ``need`` bytes beyond the memory available now.

    Without the check a size typed one order too large allocates for many
    seconds, swaps, and ends in NumPy's ``MemoryError`` (or the OOM killer)
    without naming the parameter. ``what`` begins the message and names the
    parameters and values that set the size. Allocations under
    :data:`MEMORY_CHECK_BYTES` and systems that do not report their
    available memory (:func:`available_memory` gives None) are not checked.

    Parameters
    ----------
    need : int
        Bytes the arrays would take.
    what : str
        What allocates them, with the sizes (``"Population 'y' of size=10**12 (its ids and activity)"``).
    """
    if need < MEMORY_CHECK_BYTES:
        return
    avail = available_memory()
    if avail is not None and need > avail:
        raise ValueError(f"{what} would allocate {need / 2**30:.3g} GiB; only {avail / 2**30:.3g} GiB of memory "
                         "is available")


def _range_text(low, high, low_closed, high_closed) -> str:
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    return f"{'[' if low_closed and low is not None else '('}{lo}, {hi}{']' if high_closed and high is not None else ')'}"


def check_name_or_none(name: str, value) -> str:
    """A variable name: a Python identifier."""
    if not isinstance(value, str) or not value.isidentifier():
        raise ValueError(f"{name} must be an identifier string; got {value!r}")
    return value
