"""The optional GPU path: what it needs and a clear error when that is missing.

A network runs on a GPU with ``net.run(steps, backend="cuda")``. That needs
the optional extra (from a checkout: ``python -m pip install -e ".[cuda]"``: numba-cuda and the CUDA
runtime wheels) and a visible NVIDIA GPU. Without a GPU the kernels still run
under numba's CUDA simulator when ``NUMBA_ENABLE_CUDASIM=1`` is set before
numba is imported (the test suite does this; it is slow and only for tiny
sizes).
"""

from __future__ import annotations

import importlib.util
from typing import Any

__all__ = ["CUDAUnavailableError", "require_cuda", "simulator", "extra_installed", "check_device_memory"]


class CUDAUnavailableError(RuntimeError):
    """``backend="cuda"`` was asked for where it cannot run; the message says why (no extra, or no GPU)."""


def simulator() -> bool:
    """Whether numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1``).

    Returns
    -------
    bool
        True when kernels run in numba's Python simulator instead of a GPU.
    """
    import numba

    # numba reads the variable once, when it is imported: what counts is its config, not the environment now
    return bool(getattr(numba.config, "ENABLE_CUDASIM", 0))


def extra_installed() -> bool:
    """Whether the ``cuda`` extra's compiler (numba-cuda) is installed.

    Returns
    -------
    bool
        True when ``numba_cuda`` can be imported.
    """
    return importlib.util.find_spec("numba_cuda") is not None


def require_cuda() -> Any:
    """Return ``numba.cuda`` ready to use, or raise :class:`CUDAUnavailableError` saying what is missing.

    Returns
    -------
    module
        ``numba.cuda``, with a GPU (or the simulator) available.

    Raises
    ------
    CUDAUnavailableError
        If the ``cuda`` extra is not installed or no GPU is found.
    """
    if simulator():
        from numba import cuda

        return cuda
    if not extra_installed():
        raise CUDAUnavailableError(
            "backend='cuda' needs the optional CUDA extra, which is not installed: from the neurosim checkout, "
            "python -m pip install -e \".[cuda]\" (numba-cuda with the CUDA 12 runtime wheels). To try the GPU kernels without a GPU, set "
            "NUMBA_ENABLE_CUDASIM=1 before Python starts (numba's simulator; tiny networks only)")
    from numba import cuda

    if not cuda.is_available():
        raise CUDAUnavailableError(
            "backend='cuda': the CUDA extra is installed but no CUDA GPU is usable here "
            "(numba.cuda.is_available() is False: no NVIDIA GPU, no driver, or CUDA_VISIBLE_DEVICES hides it); "
            "run on the CPU (backend='auto') or on a machine with an NVIDIA GPU")
    return cuda


def check_device_memory(nbytes: int, what: str, free: int | None = None) -> None:
    """Raise ``MemoryError`` naming ``what`` if ``nbytes`` exceed the GPU's free memory (before allocating).

    Parameters
    ----------
    nbytes : int
        Bytes about to be allocated.
    what : str
        What they are for, named in the error.
    free : int, optional
        Free bytes; default the current device's free memory (unknown under
        the simulator, where nothing is checked).

    Raises
    ------
    MemoryError
        If ``nbytes > free``.
    """
    if free is None:
        if simulator():
            return
        cuda = require_cuda()
        free, _total = cuda.current_context().get_memory_info()
    if nbytes > free:
        raise MemoryError(f"{what} needs {nbytes / 2**30:.3g} GiB on the GPU but only {free / 2**30:.3g} GiB is free; "
                          "use a smaller network, float32, or the CPU (backend='auto')")
