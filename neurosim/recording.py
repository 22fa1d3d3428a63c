"""Recorders: sampled state variables as ``xarray.Dataset``.

A :class:`Recorder` samples variables of one population (``activity`` and
per-unit variables) or one projection (``weights``) every ``every`` steps
into preallocated buffers, which a compiled segment fills without leaving
compiled code. Buffers are flushed into chunks whenever they fill or the
structure changes (a birth or death), each chunk remembering the unit ids
alive while it was taken. :meth:`Recorder.to_dataset` aligns the chunks on
the union of ids, so column ``unit=u`` always belongs to unit ``u`` and is
NaN where that unit was not alive.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from neurosim._validation import check_int
from neurosim.population import Population, check_name
from neurosim.synapses import Projection

__all__ = ["Recorder"]

_BUFFER_BYTES = 32 * 2**20


class Recorder:
    """Sample variables of a population or projection every ``every`` steps.

    Parameters
    ----------
    target : Population or Projection
    variables : str or list of str
        For a population: ``"activity"`` and/or names of its per-unit
        variables; for a projection: ``"weights"``.
    every : int >= 1
        Sample at steps ``t`` (1-based count of completed steps) with ``t % every == 0``.
    name : str, optional
        Key in ``network.recorders``; defaults to the target's name.
    """

    def __init__(self, target, variables="activity", every: int = 1, name: str | None = None):
        if not isinstance(target, (Population, Projection)):
            raise TypeError(f"target must be a Population or Projection; got {type(target).__name__}")
        self.target = target
        variables = [variables] if isinstance(variables, str) else list(variables)
        if not variables:
            raise ValueError("variables must name at least one variable")
        for v in variables:
            if not isinstance(v, str):
                raise TypeError(f"variables must be strings; got {type(v).__name__}")
        self.variables = variables
        self.every = check_int("every", every, low=1)
        self.name = check_name("recorder", name or target.name)
        self.network = None
        self._chunks: list = []
        self._buf: dict[str, np.ndarray] = {}
        self._tbuf = np.zeros(0, dtype=np.int64)
        self._ids = None
        self.count = 0

    def validate(self):
        if isinstance(self.target, Population):
            unknown = [v for v in self.variables if v not in self.target.state]
            allowed = sorted(self.target.state)
        else:
            unknown = [v for v in self.variables if v != "weights"]
            allowed = ["weights"]
        if unknown:
            raise ValueError(f"recorder {self.name!r}: unknown variables {unknown} of {self.target.name!r}; allowed: {allowed}")

    # -- values ---------------------------------------------------------------------
    def value(self, var: str) -> np.ndarray:
        return self.target.weights if isinstance(self.target, Projection) else self.target.state[var]

    def _current_ids(self):
        t = self.target
        return (t.post.ids.copy(), t.pre.ids.copy()) if isinstance(t, Projection) else (t.ids.copy(),)

    def _capacity(self) -> int:
        per = sum(self.value(v).nbytes for v in self.variables) + 8
        return int(max(1, min(65536, _BUFFER_BYTES // per)))

    def prepare(self):
        """Make the buffers match the current shapes (flushing on a structural change)."""
        ids = self._current_ids()
        same = self._ids is not None and all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(ids, self._ids))
        shapes_ok = all(v in self._buf and self._buf[v].shape[1:] == self.value(v).shape for v in self.variables)
        if same and shapes_ok and self.count < self._tbuf.size:
            return
        self.flush()
        cap = self._capacity()
        self._buf = {v: np.empty((cap,) + self.value(v).shape) for v in self.variables}
        self._tbuf = np.zeros(cap, dtype=np.int64)
        self._ids = ids

    @property
    def free(self) -> int:
        return self._tbuf.size - self.count

    def sample(self, t: int):
        """Take one sample now (the per-step path)."""
        self.prepare()
        for v in self.variables:
            self._buf[v][self.count] = self.value(v)
        self._tbuf[self.count] = t
        self.count += 1

    def after_segment(self, new_count: int, t0: int, t1: int):
        """Account for samples a compiled segment wrote for steps ``t0+1 .. t1``."""
        first = (t0 // self.every + 1) * self.every
        times = np.arange(first, t1 + 1, self.every, dtype=np.int64)
        if times.size != new_count - self.count:
            raise RuntimeError(f"recorder {self.name!r}: segment wrote {new_count - self.count} samples, expected {times.size}")
        self._tbuf[self.count:new_count] = times
        self.count = new_count

    def flush(self):
        if self.count and self.count == self._tbuf.size:
            # a full buffer becomes the chunk itself: no copy, and the next prepare() allocates afresh
            self._chunks.append((self._tbuf, self._ids, self._buf))
            self._buf, self._tbuf = {}, np.zeros(0, dtype=np.int64)
        elif self.count:
            self._chunks.append((self._tbuf[: self.count].copy(), self._ids,
                                 {v: self._buf[v][: self.count].copy() for v in self.variables}))
        self.count = 0

    def reset(self):
        """Discard everything recorded."""
        self._chunks, self.count, self._ids = [], 0, None

    # -- output ---------------------------------------------------------------------
    def _all_chunks(self):
        chunks = list(self._chunks)
        if self.count:
            chunks.append((self._tbuf[: self.count], self._ids, {v: self._buf[v][: self.count] for v in self.variables}))
        return chunks

    def to_dataset(self) -> xr.Dataset:
        """Everything recorded so far as an ``xarray.Dataset``.

        Dims: ``time`` (step count at the sample), ``unit`` (stable ids of
        the target population, or the post population of a projection),
        ``pre_unit`` (pre ids, projections only) and ``batch`` (activity and
        other per-sample variables). Units not alive at a sample are NaN.
        The network's parameters are in ``attrs``; its event log is the
        ``event_*`` variables along dim ``event``.
        """
        chunks = self._all_chunks()
        is_proj = isinstance(self.target, Projection)
        n_ids = 2 if is_proj else 1
        if chunks:
            times = np.concatenate([c[0] for c in chunks])
            all_ids = [np.unique(np.concatenate([c[1][k] for c in chunks])) for k in range(n_ids)]
        else:
            times = np.zeros(0, dtype=np.int64)
            all_ids = list(self._current_ids())
        data_vars = {}
        for v in self.variables:
            per_sample = (not is_proj) and self.target.is_per_sample(v)
            if is_proj:
                dims = ("time", "unit", "pre_unit")
                shape = (times.size, all_ids[0].size, all_ids[1].size)
            elif per_sample:
                dims = ("time", "batch", "unit")
                shape = (times.size, self.target.batch, all_ids[0].size)
            else:
                dims = ("time", "unit")
                shape = (times.size, all_ids[0].size)
            out = np.full(shape, np.nan)
            row = 0
            for t, ids, data in chunks:
                n = t.size
                cols = [np.searchsorted(all_ids[k], ids[k]) for k in range(n_ids)]
                if is_proj:
                    out[row: row + n][:, cols[0][:, None], cols[1][None, :]] = data[v]
                else:
                    out[row: row + n, ..., cols[0]] = data[v]
                row += n
            data_vars[v] = (dims, out)
        coords = {"time": times, "unit": all_ids[0]}
        if is_proj:
            coords["pre_unit"] = all_ids[1]
        ds = xr.Dataset(data_vars, coords=coords)
        ds["time"].attrs["long_name"] = "completed steps"
        ds["unit"].attrs["long_name"] = "stable unit id" + (" (post)" if is_proj else "")
        ds.attrs["recorder"] = self.name
        ds.attrs["target"] = self.target.name
        ds.attrs["every"] = self.every
        if self.network is not None:
            ds.attrs.update(self.network.flat_params())
            log = self.network.event_log
            ds["event_step"] = ("event", np.asarray(log.step, dtype=np.int64))
            ds["event_kind"] = ("event", np.asarray(log.kind, dtype=str))
            ds["event_population"] = ("event", np.asarray(log.population, dtype=str))
            ds["event_unit"] = ("event", np.asarray(log.unit, dtype=np.int64))
        return ds
