"""How many threads a network's kernels and BLAS may use.

One setting drives both thread pools a step can use: numba's (the parallel
kernels of :mod:`neurosim.kernels.parallel`, which split large populations
by rows) and the BLAS library's (matrix products inside kernels and in the
NumPy reference path, through threadpoolctl). Set it in code with
:func:`set_num_threads`, for a block with :func:`num_threads`, or for a whole
process with the environment variable ``NEUROSIM_NUM_THREADS`` (read when
neurosim is imported). Without either, numba and BLAS keep their own
defaults (every core). Sweeps run each worker process on one thread
(:class:`neurosim.Sweep`), since their parallelism is the processes.

numba's setting is per Python thread (a thread that starts a network run
sees numba's default unless it calls :func:`set_num_threads` itself); the
BLAS limit is per process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numba
import numpy as np

__all__ = ["set_num_threads", "get_num_threads", "num_threads", "max_threads", "ENV_VARIABLE"]

#: the environment variable read at import
ENV_VARIABLE = "NEUROSIM_NUM_THREADS"

_blas_limits = None  # the threadpoolctl limiter currently applied, if any


def _check(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= 1, got {type(n).__name__} {n!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    limit = numba.config.NUMBA_NUM_THREADS
    if n > limit:
        raise ValueError(f"{name} = {n} is more than numba's thread pool holds ({limit}: NUMBA_NUM_THREADS, the "
                         f"number of cores by default); set the environment variable NUMBA_NUM_THREADS={n} "
                         "before Python starts to use more threads than cores")
    return n


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for numba's parallel kernels and for BLAS from now on.

    Parameters
    ----------
    n : int, 1 <= n <= :func:`max_threads`
        ``1`` gives exactly the single-thread kernels (the parallel ones are
        not used at all). A given ``n`` always gives the same bits; different
        ``n`` agree to rounding (see ``docs/performance.md``).
    """
    global _blas_limits
    n = _check(n, "n")
    numba.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return
    _blas_limits = threadpool_limits(limits=n, user_api="blas")


def max_threads() -> int:
    """The most threads :func:`set_num_threads` accepts: numba's pool (``NUMBA_NUM_THREADS``, every core by default).

    Returns
    -------
    int
        The size of numba's thread pool, ``>= 1``.
    """
    return int(numba.config.NUMBA_NUM_THREADS)


def get_num_threads() -> int:
    """Threads numba's parallel kernels use in this Python thread.

    Returns
    -------
    int
        Between 1 and :func:`max_threads`.
    """
    return numba.get_num_threads()


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[int]:
    """``with num_threads(n):`` run the block on ``n`` threads, then restore numba's and BLAS's settings.

    Parameters
    ----------
    n : int in [1, max_threads()]
        Threads for numba's parallel kernels and for BLAS inside the block.

    Yields
    ------
    int
        ``n``.

    Raises
    ------
    ValueError
        If ``n`` is outside ``[1, max_threads()]``.

    Examples
    --------
    >>> import neurosim as ns
    >>> before = ns.get_num_threads()
    >>> with ns.num_threads(1) as n:
    ...     inside = ns.get_num_threads()
    >>> n, inside, ns.get_num_threads() == before
    (1, 1, True)
    """
    n = _check(n, "n")
    before = numba.get_num_threads()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=n, user_api="blas")
    numba.set_num_threads(n)
    try:
        with limits:
            yield n
    finally:
        numba.set_num_threads(before)


def _from_environment() -> None:
    """Apply ``NEUROSIM_NUM_THREADS`` if set (a clear error naming the variable otherwise)."""
    raw = os.environ.get(ENV_VARIABLE, "").strip()
    if not raw:
        return
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"environment variable {ENV_VARIABLE} must be an integer >= 1, got {raw!r}") from None
    try:
        set_num_threads(n)
    except ValueError as err:
        raise ValueError(f"environment variable {ENV_VARIABLE}={raw}: {err}") from None
