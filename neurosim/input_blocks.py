"""Input blocks as a compiled segment reads them: checked against the population, one array type.

Shared by the CPU engine (:mod:`neurosim.engine`) and the GPU path
(:mod:`neurosim.cuda.backend`), so that neither imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from neurosim.network import Input

__all__ = ["checked_block"]


def checked_block(inp: Input, t0: int, n: int, batch: int) -> np.ndarray:
    """``inp.stream.block(t0, n, batch)``, refused unless it fits the population (a segment copies without bounds checks).

    Parameters
    ----------
    inp : neurosim.network.Input
        The input connection.
    t0 : int
        First step (0-based).
    n : int
        Number of steps.
    batch : int
        Samples per step.

    Returns
    -------
    numpy.ndarray, shape (n, batch, size)
        The block, float64, C-contiguous and read-only.

    Raises
    ------
    ValueError
        If the stream's block has another shape or dtype.
    """
    x = inp.stream.block(t0, n, batch)
    want = (n,) + inp.population.activity.shape
    if x.shape != want or x.dtype != np.float64:
        raise ValueError(f"input stream {type(inp.stream).__name__} of population {inp.population.name!r} gave a block of "
                         f"shape {x.shape} and dtype {x.dtype}; the population needs float64 of shape {want} "
                         f"(steps, batch, size)")
    # One array type whatever the stream returns: numba compiles a segment per argument type, and a
    # read-only block (ArrayStream's view when it does not wrap around) against a writable one (a fresh
    # draw, a wrapped block) would compile the whole segment twice, mid-run. Segments only read inputs.
    x = np.ascontiguousarray(x).view()
    x.flags.writeable = False
    return x
