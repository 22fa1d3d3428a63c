"""Input streams: deterministic, random-access sources of input activity.

A stream is a function of the step index. ``stream.block(t0, n, batch)``
returns the inputs of steps ``t0 .. t0 + n - 1`` and gives the same numbers
however a run is cut into blocks. That property is what lets the compiled
engine pre-draw a segment's inputs, the per-step path draw one step at a time,
and a checkpoint store nothing but the step counter, while all three agree
bit for bit.

Randomness comes from fixed-size chunks of steps, each drawn from its own
``numpy.random.Generator`` seeded by ``SeedSequence(seed, spawn_key=(chunk,))``.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from neurosim._validation import check_int

__all__ = ["Stream", "ChunkedRandomStream", "ArrayStream"]


class Stream:
    """Base class of input streams.

    Subclasses implement :meth:`block`. ``dim`` is the size of the population
    the stream drives.
    """

    dim: int

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        """Inputs of steps ``t0 .. t0 + n - 1`` as a ``(n, batch, dim)`` array."""
        raise NotImplementedError

    def params(self) -> dict:
        """Plain parameters recorded in a Dataset's attrs."""
        return {"stream": type(self).__name__, "dim": int(self.dim)}


class ChunkedRandomStream(Stream):
    """A random stream generated in independent chunks of ``chunk`` steps.

    Subclasses implement :meth:`_draw` which turns a generator into the inputs
    of one chunk; this class makes the result random-access and reproducible.

    Parameters
    ----------
    dim : int
        Input dimension (>= 1).
    seed : int
        Root seed (>= 0).
    chunk : int
        Steps per independently seeded chunk (>= 1).
    """

    def __init__(self, dim: int, seed: int = 0, chunk: int = 1024):
        self.dim = check_int("dim", dim, low=1)
        self.seed = check_int("seed", seed, low=0)
        self.chunk = check_int("chunk", chunk, low=1)
        self._cache: OrderedDict = OrderedDict()

    def _draw(self, rng: np.random.Generator, t0: int, n: int, batch: int) -> np.ndarray:
        """Draw the ``(n, batch, dim)`` inputs of steps ``t0 .. t0+n-1`` (one chunk)."""
        raise NotImplementedError

    def _chunk(self, c: int, batch: int) -> np.ndarray:
        key = (c, batch)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(c,)))
        arr = np.ascontiguousarray(self._draw(rng, c * self.chunk, self.chunk, batch), dtype=np.float64)
        if arr.shape != (self.chunk, batch, self.dim):
            raise RuntimeError(f"{type(self).__name__}._draw returned shape {arr.shape}")
        self._cache[key] = arr
        while len(self._cache) > 8:
            self._cache.popitem(last=False)
        return arr

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        t0 = check_int("t0", t0, low=0)
        n = check_int("n", n, low=0)
        batch = check_int("batch", batch, low=1)
        out = np.empty((n, batch, self.dim))
        t, filled = t0, 0
        while filled < n:
            c, off = divmod(t, self.chunk)
            take = min(self.chunk - off, n - filled)
            out[filled : filled + take] = self._chunk(c, batch)[off : off + take]
            filled += take
            t += take
        return out

    def params(self) -> dict:
        return {**super().params(), "seed": self.seed, "chunk": self.chunk}


class ArrayStream(Stream):
    """Replay a fixed array of inputs, cycling when the run is longer.

    Parameters
    ----------
    data : array_like, shape (T, dim) or (T, batch, dim)
        The inputs; step ``t`` reads ``data[t % T]``.
    """

    def __init__(self, data):
        arr = np.asarray(data, dtype=np.float64)
        if arr.ndim == 2:
            arr = arr[:, None, :]
        if arr.ndim != 3 or arr.shape[0] < 1 or arr.shape[2] < 1:
            raise ValueError(f"data must have shape (T, dim) or (T, batch, dim) with T, dim >= 1; got {np.shape(data)}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("data must be finite (no NaN or Inf)")
        self.data = arr
        self.dim = arr.shape[2]

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        t0 = check_int("t0", t0, low=0)
        n = check_int("n", n, low=0)
        if self.data.shape[1] not in (1, batch):
            raise ValueError(f"batch must be 1 or {self.data.shape[1]} for this ArrayStream; got {batch}")
        idx = (t0 + np.arange(n)) % self.data.shape[0]
        out = self.data[idx]
        return np.ascontiguousarray(np.broadcast_to(out, (n, batch, self.dim)))
