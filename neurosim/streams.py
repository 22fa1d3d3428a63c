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
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_bool, check_float, check_int

__all__ = [
    "Stream",
    "ChunkedRandomStream",
    "ArrayStream",
    "ObservedStream",
    "BernoulliMaskStream",
    "PoissonStream",
    "SpikeTimeStream",
    "GaussianStream",
    "SwitchingStream",
    "paper002_spectrum",
    "PAPER002_SWITCHES",
]


class Stream:
    """Base class of input streams.

    Subclasses implement :meth:`block`. ``dim`` is the size of the population
    the stream drives. Streams are random-access: a block depends only on
    the steps asked for, never on earlier calls, so a checkpoint needs only
    the step count.
    """

    dim: int

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        """Inputs of steps ``t0 .. t0 + n - 1`` as a ``(n, batch, dim)`` float64 array.

        The result may be a read-only view of the stream's own data; copy it
        before modifying it.

        Parameters
        ----------
        t0 : int >= 0
            First step (0-based: step ``t`` of a network reads ``t0 = t - 1``).
        n : int >= 0
            Number of steps.
        batch : int >= 1, optional
            Samples per step.

        Returns
        -------
        numpy.ndarray, shape (n, batch, dim)
            The inputs, float64.

        Raises
        ------
        NotImplementedError
            In the base class.
        """
        raise NotImplementedError

    def view_steps(self, t0: int, n: int, batch: int = 1) -> int:
        """How many of the steps ``t0 .. t0 + n - 1``, from ``t0``, :meth:`block` returns without copying.

        ``n`` (the default) when the stream has no such preference. A
        stream that serves a view of its own data up to some step (e.g.
        :class:`ArrayStream` up to the end of its array) returns the steps
        before it; the engine may end a compiled segment there rather than
        have a large block copied.

        Parameters
        ----------
        t0 : int >= 0
            First step.
        n : int >= 0
            Number of steps asked for.
        batch : int >= 1, optional
            Samples per step.

        Returns
        -------
        int
            Between 0 and ``n``.
        """
        return n

    def params(self) -> dict[str, Any]:
        """Plain parameters recorded in a Dataset's attrs.

        Returns
        -------
        dict
            At least ``{"stream": class name, "dim": dim}``.
        """
        return {"stream": type(self).__name__, "dim": int(self.dim)}


#: largest ``chunk`` of a ChunkedRandomStream, in steps, and in bytes per batch row
MAX_CHUNK = 2**20
MAX_CHUNK_BYTES = 256 * 2**20


#: Bytes of one default chunk of a stream of more than 32,768 dimensions (a chunk is drawn whole and cached)
DEFAULT_LARGE_CHUNK_BYTES = 16 * 2**20


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
    chunk : int, optional
        Steps per independently seeded chunk, in ``[1, 2**20]``, and small
        enough that one chunk of one batch row (``chunk * dim`` values) fits
        in 256 MiB. Default: 1024 up to 32,768 dimensions; above, as many
        steps as fit in 16 MiB (a chunk is drawn whole: 10^5 inputs draw 20
        steps at a time, not 335).
    """

    def __init__(self, dim: int, seed: int = 0, chunk: int | None = None) -> None:
        self.dim = check_int("dim", dim, low=1)
        self.seed = check_int("seed", seed, low=0)
        # a chunk is drawn whole and cached: bound its memory rather than fail in the allocator
        most = max(1, min(MAX_CHUNK, MAX_CHUNK_BYTES // (8 * self.dim)))
        if chunk is None:
            chunk = min(1024, most) if self.dim <= 32768 else max(1, DEFAULT_LARGE_CHUNK_BYTES // (8 * self.dim))
        self.chunk = check_int("chunk", chunk, low=1, high=most)
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

    The stream keeps a read-only copy of ``data`` (``copy=True``, the
    default): what a run reads cannot change when the caller later edits
    ``data``, fills it with the next data set, or reuses its memory. For
    inputs too large to hold twice (a big data set, a
    :class:`numpy.memmap`), ``copy=False`` keeps ``data`` itself where it is
    already a C-contiguous float64 array (otherwise the conversion is a copy
    anyway); the caller then must not change it while the stream is in use:
    every later edit shows in the steps read after it, and a run reproduces
    only with the data as they were.

    Parameters
    ----------
    data : array_like, shape (T, dim) or (T, batch, dim)
        The inputs; step ``t`` (1-based) reads ``data[(t - 1) % T]``.
    copy : bool, optional
        Keep a private read-only copy (default) or, when no conversion is
        needed, ``data`` itself.

    Raises
    ------
    ValueError
        If ``data`` has another shape or holds NaN or Inf.
    TypeError
        If ``copy`` is not a bool.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim import ArrayStream
    >>> s = ArrayStream(np.arange(6.0).reshape(3, 2))
    >>> s.dim, s.block(2, 2)[:, 0].tolist()  # wraps around after 3 steps
    (2, [[4.0, 5.0], [0.0, 1.0]])

    The stream holds a copy: editing the array afterwards does not change it.

    >>> X = np.zeros((2, 2))
    >>> s = ArrayStream(X)
    >>> X[0] = 7.0
    >>> s.block(0, 1)[0].tolist()
    [[0.0, 0.0]]
    """

    def __init__(self, data: ArrayLike, copy: bool = True) -> None:
        copy = check_bool("copy", copy)
        arr = np.asarray(data, dtype=np.float64)
        if arr.ndim == 2:
            arr = arr[:, None, :]
        if arr.ndim != 3 or arr.shape[0] < 1 or arr.shape[2] < 1:
            raise ValueError(f"data must have shape (T, dim) or (T, batch, dim) with T, dim >= 1; got {np.shape(data)}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("data must be finite (no NaN or Inf)")
        if copy:
            arr = np.array(arr, order="C", copy=True)
            arr.flags.writeable = False  # nobody holds a writeable reference: the stream's data are fixed
        self.data = np.ascontiguousarray(arr)
        self.dim = arr.shape[2]

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        t0 = check_int("t0", t0, low=0)
        n = check_int("n", n, low=0)
        if self.data.shape[1] not in (1, batch):
            raise ValueError(f"batch must be 1 or {self.data.shape[1]} for this ArrayStream; got {batch}")
        T = self.data.shape[0]
        start = t0 % T
        if start + n <= T and self.data.shape[1] == batch:
            out = self.data[start : start + n]  # no wrap-around: a view, no copy
        else:
            idx = (start + np.arange(n)) % T
            out = np.ascontiguousarray(np.broadcast_to(self.data[idx], (n, batch, self.dim)))
        out = out.view()
        out.flags.writeable = False  # views share the user's data: never let a consumer write through
        return out

    def view_steps(self, t0: int, n: int, batch: int = 1) -> int:
        """Steps up to the end of the array (a block that wraps around, or broadcasts a batch of 1, is a copy).

        Parameters
        ----------
        t0 : int >= 0
            First step.
        n : int >= 0
            Number of steps asked for.
        batch : int >= 1, optional
            Samples per step.

        Returns
        -------
        int
            ``min(n, T - t0 % T)``, or ``n`` when the block is a copy anyway.
        """
        if self.data.shape[1] != batch:
            return n
        T = self.data.shape[0]
        return min(n, T - t0 % T)


class ObservedStream(Stream):
    """A data stream seen through a mask stream: entries the mask marks missing (0) read as 0.

    What a circuit with an observation-mask population needs from its data:
    values at missing entries are never used, so they may be anything,
    NaN included (a common way to mark them); observed entries pass
    unchanged (a NaN there still stops the run, naming the population).

    Parameters
    ----------
    data : Stream
        The values (missing entries may hold anything, NaN included).
    masks : Stream
        The same ``dim``; nonzero = observed.

    Raises
    ------
    TypeError
        If ``data`` or ``masks`` is not a Stream.
    ValueError
        If their dimensions differ.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.streams import ArrayStream, ObservedStream
    >>> data = ArrayStream(np.array([[1.0, 99.0, 3.0]]))
    >>> masks = ArrayStream(np.array([[1.0, 0.0, 1.0]]))
    >>> ObservedStream(data, masks).block(0, 1)[0].tolist()
    [[1.0, 0.0, 3.0]]
    """

    def __init__(self, data: Stream, masks: Stream) -> None:
        for name, s in (("data", data), ("masks", masks)):
            if not isinstance(s, Stream):
                raise TypeError(f"{name} must be a neurosim Stream; got {type(s).__name__}")
        if masks.dim != data.dim:
            raise ValueError(f"masks must have the dimension of the data ({data.dim}); got {masks.dim}")
        self.data, self.masks, self.dim = data, masks, data.dim

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        x = self.data.block(t0, n, batch)
        m = self.masks.block(t0, n, batch)
        out = np.where(m != 0.0, x, 0.0)
        out.flags.writeable = False
        return out

    def params(self) -> dict:
        return {"stream": "ObservedStream", "dim": int(self.dim),
                **{f"data_{k}": v for k, v in self.data.params().items()}}


class BernoulliMaskStream(ChunkedRandomStream):
    """Random observation masks: every coordinate missing independently.

    Step ``t`` is a 0/1 float vector ``m_t`` of length ``dim``; coordinate
    ``i`` is missing (``m_t[i] = 0.0``) with probability ``missing`` and
    observed (``1.0``) otherwise, independently over coordinates, steps and
    batch rows. ``diag(m_t)`` is the paper's ``Delta_t`` (paper 003,
    supplement Eqs. 12-14 and 19-25): the projection onto the observed set
    ``O_t``. The draws come from the chunked, step-addressable generators of
    :class:`ChunkedRandomStream`, so ``block(t0, n, batch)`` is reproducible
    and does not depend on how a run is cut into blocks. To replay given
    masks, use :class:`ArrayStream`.

    Parameters
    ----------
    dim : int
        Number of coordinates (>= 1).
    missing : float
        Probability that a coordinate is missing, in ``[0, 1)``; ``0`` gives
        full masks (every coordinate observed). ``1`` is refused: a sample
        with nothing observed carries no information and leaves the
        dictionary statistics of Eqs. (23)-(25) unchanged.
    seed : int
        Root seed (>= 0).
    chunk : int, optional
        Steps per independently seeded chunk (default as for
        :class:`ChunkedRandomStream`).
    """

    def __init__(self, dim: int, missing: float, seed: int = 0, chunk: int | None = None) -> None:
        self.missing = check_float("missing", missing, low=0.0, high=1.0, high_open=True)
        super().__init__(dim=dim, seed=seed, chunk=chunk)

    def _draw(self, rng, t0, n, batch):
        # uniform >= missing has probability exactly 1 - missing for the
        # generator's uniform doubles on [0, 1); missing = 0 never masks
        return (rng.random((n, batch, self.dim)) >= self.missing).astype(np.float64)

    def params(self) -> dict:
        return {**super().params(), "missing": self.missing}


class PoissonStream(ChunkedRandomStream):
    """Poisson spike trains: each unit spikes in a step with probability ``rate * dt``, independently.

    Step ``t`` is a 0/1 float vector (1.0: a spike), as Brian2's
    ``PoissonGroup`` draws it (``rand() < rates * dt``, one uniform per unit
    and step); feeding a population with it makes a population of Poisson
    inputs (``net.connect(PoissonStream(...), population)``) whose spikes
    projections carry like any other's. The draws come from the chunked,
    step-addressable generators of :class:`ChunkedRandomStream`, so a run
    cut into pieces, resumed from a checkpoint or replayed gives the same
    spikes. Brian2's own random numbers are not reproduced: to run the same
    spike trains in both, export them (``block``) and replay them with
    Brian2's ``SpikeGeneratorGroup``.

    Parameters
    ----------
    rates : float, array_like of float, callable or Stream
        Rates in Hz, one for every unit (a scalar: the same for all), each
        ``>= 0``, finite, with ``rate * dt <= 1``. A callable makes the rates
        scheduled: ``rates(t)`` gets the start times of a chunk's steps in
        seconds (a 1-D array, ``t = step dt`` from 0) and returns their rates,
        shape ``(len(t), dim)`` (or ``(len(t), 1)``: the same for every unit).
        A :class:`Stream` of ``dim`` (or 1) values a step gives the rates from
        a stream (its first batch row; e.g. an image per step as rates, or an
        :class:`ArrayStream` of a rate profile). A bad rate is refused when
        its chunk is drawn, naming its step.
    dt : float > 0
        The network's time step, seconds.
    dim : int, optional
        Number of units (needed when ``rates`` is a scalar or a callable).
    seed : int
        Root seed (>= 0).
    chunk : int, optional
        Steps per independently seeded chunk (default as for
        :class:`ChunkedRandomStream`).

    Raises
    ------
    ValueError
        A negative, NaN or infinite rate, ``rate * dt > 1``, ``dt <= 0``, or
        a scalar rate without ``dim``.

    Examples
    --------
    >>> from neurosim.streams import PoissonStream
    >>> s = PoissonStream(15.0, dt=1e-4, dim=1000, seed=0)
    >>> spikes = s.block(0, 10_000)        # 1 s of 1000 inputs
    >>> float(spikes.mean() / 1e-4)        # 15 Hz +- 0.12 (sampling error of 150,000 expected spikes)
    15.15
    """

    def __init__(self, rates, dt: float, dim: int | None = None, seed: int = 0, chunk: int | None = None) -> None:
        self.dt = check_float("dt", dt, low=0.0, low_open=True)
        if isinstance(rates, Stream):
            dim = rates.dim if dim is None else dim
            source = rates
            rates = lambda t: source.block(int(round(t[0] / self.dt)), t.size)[:, 0, :]  # noqa: E731
            rates.__name__ = f"{type(source).__name__} of rates"
        if callable(rates):
            if dim is None:
                raise ValueError("scheduled rates (a callable) need dim, the number of units")
            self.schedule = rates
            self.rates = None
            self._p = None
            super().__init__(dim=check_int("dim", dim, low=1), seed=seed, chunk=chunk)
            return
        self.schedule = None
        r = np.asarray(rates, dtype=np.float64) if not isinstance(rates, (str, bytes)) else None
        if r is None or r.ndim > 1:
            raise ValueError(f"rates must be a number or a 1-D array of numbers (Hz); got {rates!r}")
        if r.ndim == 0:
            if dim is None:
                raise ValueError("a scalar rates needs dim, the number of units")
            r = np.full(check_int("dim", dim, low=1), float(r))
        elif dim is not None and check_int("dim", dim, low=1) != r.size:
            raise ValueError(f"dim={dim} does not match the {r.size} rates given")
        if r.size == 0:
            raise ValueError("rates must hold at least one rate")
        if not np.isfinite(r).all() or (r < 0).any():
            raise ValueError(f"rates must be finite and >= 0 Hz; got {int(np.count_nonzero(~np.isfinite(r)))} not "
                             f"finite and {int(np.count_nonzero(r < 0))} negative")
        if (r * self.dt > 1.0).any():
            raise ValueError(f"rates must satisfy rate * dt <= 1 (at most one spike a step); the largest is "
                             f"{float(r.max())} Hz with dt={self.dt} s")
        self.rates = r
        self._p = r * self.dt  # Brian2's rates * dt, computed once
        super().__init__(dim=r.size, seed=seed, chunk=chunk)

    def _draw(self, rng, t0, n, batch):
        p = self._p if self.schedule is None else self._scheduled(t0, n)[:, None, :]
        return (rng.random((n, batch, self.dim)) < p).astype(np.float64)

    def _scheduled(self, t0: int, n: int) -> np.ndarray:
        """``rates(t) dt`` of steps ``t0 .. t0 + n - 1``, shape ``(n, dim)``, checked."""
        t = (t0 + np.arange(n)) * self.dt
        r = np.asarray(self.schedule(t), dtype=np.float64)
        if r.ndim != 2 or r.shape[0] != n or r.shape[1] not in (1, self.dim):
            raise ValueError(f"rates(t) must return shape ({n}, {self.dim}) or ({n}, 1) for {n} step times; got "
                             f"{r.shape}")
        bad = ~np.isfinite(r) | (r < 0) | (r * self.dt > 1.0)
        if bad.any():
            k = int(np.argmax(bad.any(axis=1)))
            raise ValueError(f"rates(t) must be finite, >= 0 Hz and at most 1 / dt; at step {t0 + k + 1} (t = "
                             f"{t[k]!r} s) it gave {float(r[k][bad[k]][0])!r} Hz")
        return np.broadcast_to(r * self.dt, (n, self.dim))

    def params(self) -> dict:
        rates = self.rates.tolist() if self.rates is not None else getattr(self.schedule, "__name__", repr(self.schedule))
        return {**super().params(), "dt": self.dt, "rates": rates}


class SpikeTimeStream(Stream):
    """Given spike times: unit ``units[k]`` spikes at ``times[k]`` (Brian2's ``SpikeGeneratorGroup``).

    A spike at time ``t`` is in the step that starts there, step ``round(t /
    dt)`` counted from 0 (the step whose activity the population shows after
    ``round(t / dt) + 1`` steps), as Brian2 places a generator's spikes.
    Only the events are kept (not a dense array of every step), so long and
    sparse trains cost little; with ``period`` the pattern repeats.

    Parameters
    ----------
    units : array_like of int
        The spiking units, each in ``[0, dim)``.
    times : array_like of float
        Their spike times, seconds, finite and ``>= 0``, as many as ``units``.
    dt : float > 0
        The network's time step, seconds.
    dim : int >= 1
        Number of units.
    period : float, optional
        Repeat the pattern every ``period`` seconds (a whole number of steps,
        longer than the last spike); default: no repetition.

    Raises
    ------
    ValueError
        A unit outside ``[0, dim)``, a time that is negative or not finite,
        ``units`` and ``times`` of different lengths, a unit spiking twice in
        one step, or a ``period`` not longer than the last spike.

    Examples
    --------
    >>> from neurosim.streams import SpikeTimeStream
    >>> s = SpikeTimeStream([0, 2, 0], [0.0, 0.0003, 0.0005], dt=1e-4, dim=3)
    >>> s.block(0, 6)[:, 0].nonzero()
    (array([0, 3, 5]), array([0, 2, 0]))
    """

    def __init__(self, units: ArrayLike, times: ArrayLike, dt: float, dim: int, period: float | None = None) -> None:
        self.dt = check_float("dt", dt, low=0.0, low_open=True)
        self.dim = check_int("dim", dim, low=1)
        u = np.asarray(units)
        t = np.asarray(times, dtype=np.float64)
        if u.ndim != 1 or t.ndim != 1 or u.shape != t.shape:
            raise ValueError(f"units and times must be 1-D and of one length; got shapes {u.shape} and {t.shape}")
        if u.size and (not np.issubdtype(u.dtype, np.integer) or u.min() < 0 or u.max() >= self.dim):
            raise ValueError(f"units must be integers in [0, dim={self.dim}); got {u.min() if u.size else ''}.."
                             f"{u.max() if u.size else ''} ({u.dtype})")
        if not np.isfinite(t).all() or (t < 0).any():
            raise ValueError("times must be finite and >= 0 seconds")
        steps = np.rint(t / self.dt).astype(np.int64)
        order = np.lexsort((u, steps))
        self._steps, self._units = steps[order], u[order].astype(np.int64)
        if np.any((np.diff(self._steps) == 0) & (np.diff(self._units) == 0)):
            raise ValueError("a unit spikes twice in one step (times closer than dt): at most one spike per step")
        self.period_steps = None
        if period is not None:
            n = int(round(check_float("period", period, low=0.0, low_open=True) / self.dt))
            if self._steps.size and n <= self._steps[-1]:
                raise ValueError(f"period={period!r} s must be longer than the last spike (step {self._steps[-1]})")
            self.period_steps = n

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        out = np.zeros((n, batch, self.dim))
        if self.period_steps is None:
            lo, hi = np.searchsorted(self._steps, [t0, t0 + n])
            out[self._steps[lo:hi] - t0, :, self._units[lo:hi]] = 1.0
            return out
        first, last = t0 // self.period_steps, (t0 + n - 1) // self.period_steps
        for c in range(first, last + 1):
            base = c * self.period_steps
            lo, hi = np.searchsorted(self._steps, [t0 - base, t0 + n - base])
            out[self._steps[lo:hi] + base - t0, :, self._units[lo:hi]] = 1.0
        return out

    def params(self) -> dict:
        return {**super().params(), "dt": self.dt, "spikes": int(self._steps.size),
                "period_steps": self.period_steps}


# --------------------------------------------------------------------------- #
# Gaussian streams with a prescribed spectrum (paper 002, Section VI)
# --------------------------------------------------------------------------- #
def random_orthonormal(n: int, rng: np.random.Generator) -> np.ndarray:
    """Haar-distributed ``n x n`` orthogonal matrix (QR of a Gaussian matrix).

    The signs of ``R``'s diagonal are folded into ``Q`` so that the result is
    uniformly (Haar) distributed rather than biased by the QR convention.
    """
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def paper002_spectrum(rng_or_seed: int | np.random.Generator = 0) -> np.ndarray:
    """Input spectrum of paper 002, Section VI: n = 64 eigenvalues.

    ``{6, 5, 4, 2}`` followed by 60 values drawn uniformly from ``[0, 0.2]``
    (the paper writes "lambda_5..60" but also n = 64, so 60 noise values), in
    descending order.

    Parameters
    ----------
    rng_or_seed : int or numpy.random.Generator
        Source of the 60 uniform draws.

    Returns
    -------
    numpy.ndarray, shape (64,)
        The eigenvalues in descending order.
    """
    if isinstance(rng_or_seed, np.random.Generator):
        rng = rng_or_seed
    else:
        rng = np.random.default_rng(check_int("rng_or_seed", rng_or_seed, low=0))
    noise = np.sort(rng.uniform(0.0, 0.2, size=60))[::-1]
    return np.concatenate([[6.0, 5.0, 4.0, 2.0], noise])


#: Fig. 6 of paper 002: eigenvalues doubled at step 1000, restored at step 6000.
PAPER002_SWITCHES = ((1000, 2.0), (6000, 1.0))


class GaussianStream(ChunkedRandomStream):
    """Zero-mean Gaussian inputs with covariance ``V diag(lambda) V^T``.

    ``x_t = V (sqrt(lambda) * z_t)`` with ``z_t ~ N(0, I_n)`` i.i.d.; the
    ``z_t`` come from the chunked, step-addressable generators of
    :class:`ChunkedRandomStream` (seeded by ``SeedSequence(seed,
    spawn_key=(chunk,))``), so ``block`` is reproducible and independent of how
    a run is cut into blocks.

    Parameters
    ----------
    eigenvalues : array_like, shape (n,)
        Finite, non-negative covariance eigenvalues (``n >= 1``), any order;
        stored as given, column ``i`` of ``eigenvectors`` belongs to
        ``eigenvalues[i]``.
    seed : int
        Seed of the samples (``>= 0``).
    eigenvectors : None, "random" or array_like, shape (n, n)
        ``None``: the identity (axis-aligned covariance).  ``"random"``: a
        Haar-random orthonormal matrix drawn from
        ``numpy.random.default_rng(eigvec_seed)`` -- the root
        ``SeedSequence(eigvec_seed)``, never one of the per-chunk children
        used for the samples, so the basis is independent of the samples even
        when ``eigvec_seed == seed``.  An array must be orthogonal (columns
        orthonormal to 1e-8).
    eigvec_seed : int, optional
        Seed of the random eigenvectors; defaults to ``seed``.  Fix it and vary
        ``seed`` to draw new samples from the same covariance.
    chunk : int, optional
        Steps per independently seeded chunk (default as for
        :class:`ChunkedRandomStream`).

    Attributes
    ----------
    eigenvalues : numpy.ndarray, shape (n,)
    eigenvectors : numpy.ndarray, shape (n, n)
    covariance : numpy.ndarray, shape (n, n)
        ``V diag(lambda) V^T``.

    Raises
    ------
    ValueError
        If an eigenvalue is negative or not finite, or ``eigenvectors`` is not
        orthogonal of shape ``(n, n)``.

    Examples
    --------
    Random access: a block does not depend on how a run is cut into blocks.

    >>> import numpy as np
    >>> from neurosim import GaussianStream
    >>> s = GaussianStream([4.0, 1.0], seed=0, eigenvectors="random")
    >>> whole = s.block(0, 10)
    >>> bool(np.array_equal(whole[5:], s.block(5, 5)))
    True
    >>> v = s.eigenvectors[:, 0]  # the eigenvector of eigenvalue 4
    >>> bool(np.allclose(s.covariance @ v, 4.0 * v, rtol=1e-12, atol=1e-12))
    True
    """

    def __init__(self, eigenvalues: ArrayLike, seed: int = 0, eigenvectors: str | ArrayLike | None = None,
                 eigvec_seed: int | None = None, chunk: int | None = None) -> None:
        lam = check_array("eigenvalues", eigenvalues, ndim=1)
        if lam.size < 1:
            raise ValueError("eigenvalues must contain at least one value")
        if np.any(lam < 0):
            raise ValueError(f"eigenvalues must be non-negative; got min {lam.min()!r}")
        super().__init__(dim=lam.size, seed=seed, chunk=chunk)
        n = lam.size
        self.eigvec_seed = self.seed if eigvec_seed is None else check_int("eigvec_seed", eigvec_seed, low=0)
        V: np.ndarray | None
        if eigenvectors is None:
            V = None
            self._basis = "identity"
        elif isinstance(eigenvectors, str):
            if eigenvectors != "random":
                raise ValueError(f"eigenvectors must be None, 'random' or an (n, n) orthogonal array; got {eigenvectors!r}")
            V = random_orthonormal(n, np.random.default_rng(self.eigvec_seed))
            self._basis = "random"
        else:
            V = check_array("eigenvectors", eigenvectors, ndim=2, shape=(n, n))
            if not np.allclose(V.T @ V, np.eye(n), rtol=0.0, atol=1e-8):
                raise ValueError("eigenvectors must be orthogonal (V^T V = I to 1e-8)")
            self._basis = "given"
        self.eigenvalues = lam
        with np.errstate(over="ignore", invalid="ignore"):
            total = lam.sum()
            # the identity basis (the default) needs no n x n matrix: a 10^5-dimensional stream would take
            # 80 GB and minutes of matrix products to build, and its draws are the scaled normals themselves
            cov = None if V is None else (V * lam) @ V.T
        if not (np.isfinite(total) and (cov is None or np.all(np.isfinite(cov)))
                and np.all(np.isfinite(np.sqrt(lam)))):
            # the total variance Tr C = sum(lambda) is used downstream (e.g. ||x||^2 in the XY rule)
            raise ValueError("eigenvalues are too large: the covariance or its trace overflows float64")
        self._scale = np.sqrt(lam)
        self._eigenvectors = None if self._basis == "identity" else V
        self._covariance = cov
        # x = z @ (V diag(sqrt(lambda)))^T, i.e. x_t = V (sqrt(lambda) * z_t); for the identity basis the
        # product with the diagonal matrix is the elementwise scaling (the same bits: the other terms are 0)
        self._mix = None if V is None else np.ascontiguousarray((V * self._scale).T)

    @property
    def eigenvectors(self) -> np.ndarray:
        """The covariance's eigenvectors, columns ``(n, n)`` (the identity is made when first asked for)."""
        if self._eigenvectors is None:
            self._eigenvectors = np.eye(self.dim)
        return self._eigenvectors

    @property
    def covariance(self) -> np.ndarray:
        """The covariance matrix ``V diag(eigenvalues) V^T``, ``(n, n)`` (made when first asked for)."""
        if self._covariance is None:
            self._covariance = np.diag(self.eigenvalues) if self._basis == "identity" else \
                (self.eigenvectors * self.eigenvalues) @ self.eigenvectors.T
        return self._covariance

    def _draw(self, rng, t0, n, batch):
        # one (n * batch, dim) matrix product: a 3-D ``@`` would loop over n small products
        z = rng.standard_normal((n * batch, self.dim))
        if self._mix is None:
            z *= self._scale
            return z.reshape(n, batch, self.dim)
        return (z @ self._mix).reshape(n, batch, self.dim)

    def params(self) -> dict:
        return {
            **super().params(),
            "eigenvalues": self.eigenvalues.tolist(),
            "eigenvectors": self._basis,
            "eigvec_seed": self.eigvec_seed,
        }


class SwitchingStream(Stream):
    """A stream whose covariance eigenvalues are rescaled at given steps.

    ``x_t = sqrt(s(t)) * base_x_t`` where ``s(t)`` is the scale of the last
    switch at or before ``t`` (1 before the first switch), so the covariance
    is ``s(t) C_base`` with the same eigenvectors: the non-stationary input of
    paper 002, Fig. 6 (``switches = PAPER002_SWITCHES``: x2 from step 1000, x1
    again from step 6000).  Because it rescales the base stream's samples,
    it shares the base's eigenvectors and randomness, and inherits
    block-splitting invariance.

    Parameters
    ----------
    base : Stream
        Typically a :class:`GaussianStream`; :meth:`eigenvalues_at` and
        :meth:`covariance_at` need ``base.eigenvalues`` / ``base.covariance``.
    switches : sequence of (int, float)
        ``(step, scale)`` pairs with steps ``>= 0`` in non-decreasing order and
        finite scales ``> 0``.  Of several switches at one step the last
        wins.
    """

    def __init__(self, base: Stream, switches: Sequence[tuple[int, float]] = PAPER002_SWITCHES) -> None:
        if not isinstance(base, Stream):
            raise TypeError(f"base must be a Stream; got {type(base).__name__}")
        if isinstance(switches, (str, bytes)) or not hasattr(switches, "__iter__"):
            raise TypeError(f"switches must be a sequence of (step, scale) pairs; got {type(switches).__name__}")
        steps, scales = [], []
        for i, sw in enumerate(switches):
            if isinstance(sw, (str, bytes)) or not hasattr(sw, "__len__") or len(sw) != 2:
                raise TypeError(f"switches[{i}] must be a (step, scale) pair; got {sw!r}")
            steps.append(check_int(f"switches[{i}] step", sw[0], low=0))
            scales.append(check_float(f"switches[{i}] scale", sw[1], low=0.0, low_open=True))
            if i and steps[i] < steps[i - 1]:
                raise ValueError(f"switch steps must be non-decreasing; switches[{i}] step {steps[i]} < {steps[i - 1]}")
        self.base = base
        self.dim = base.dim
        self.switches = tuple(zip(steps, scales))
        self._steps = np.asarray(steps, dtype=np.int64)
        self._scales = np.concatenate([[1.0], np.asarray(scales, dtype=float)])

    def scale_at(self, t: int | ArrayLike) -> float | np.ndarray:
        """Eigenvalue scale ``s(t)`` at step(s) ``t`` (array-valued for arrays).

        Parameters
        ----------
        t : int or array_like of int
            Steps, ``>= 0``.

        Returns
        -------
        float or numpy.ndarray
            The scale of the last switch at or before each step (1 before
            the first).

        Raises
        ------
        ValueError
            If a step is negative or not an integer.

        Examples
        --------
        >>> from neurosim import GaussianStream, SwitchingStream
        >>> s = SwitchingStream(GaussianStream([1.0, 0.5]), switches=[(10, 2.0), (20, 0.5)])
        >>> s.scale_at(9), s.scale_at(10), s.scale_at([0, 15, 25]).tolist()
        (1.0, 2.0, [1.0, 2.0, 0.5])
        """
        t_arr = np.asarray(t)
        if not np.issubdtype(t_arr.dtype, np.integer) or np.any(t_arr < 0):
            raise ValueError(f"t must be a non-negative integer step or array of steps; got {t!r}")
        s = self._scales[np.searchsorted(self._steps, t_arr, side="right")]
        return float(s) if s.ndim == 0 else s

    def eigenvalues_at(self, t: int) -> np.ndarray:
        """Covariance eigenvalues at step ``t``: ``s(t) * base.eigenvalues``.

        Parameters
        ----------
        t : int >= 0
            The step.

        Returns
        -------
        numpy.ndarray, shape (dim,)
            The eigenvalues (the base stream must have ``eigenvalues``).
        """
        t = check_int("t", t, low=0)
        return self.scale_at(t) * np.asarray(self.base.eigenvalues)  # type: ignore[attr-defined, operator]  # documented need

    def covariance_at(self, t: int) -> np.ndarray:
        """Covariance at step ``t``: ``s(t) * base.covariance``.

        Parameters
        ----------
        t : int >= 0
            The step.

        Returns
        -------
        numpy.ndarray, shape (dim, dim)
            The covariance (the base stream must have ``covariance``).
        """
        t = check_int("t", t, low=0)
        return self.scale_at(t) * np.asarray(self.base.covariance)  # type: ignore[attr-defined, operator]  # documented need

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        t0 = check_int("t0", t0, low=0)
        n = check_int("n", n, low=0)
        x = self.base.block(t0, n, batch)
        return x * np.sqrt(self.scale_at(np.arange(t0, t0 + n, dtype=np.int64)))[:, None, None]

    def params(self) -> dict:
        base = {f"base_{k}": v for k, v in self.base.params().items()}
        return {
            **super().params(),
            **base,
            "switch_steps": [s for s, _ in self.switches],
            "switch_scales": [c for _, c in self.switches],
        }
