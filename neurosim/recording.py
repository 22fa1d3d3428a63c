"""Recorders: sampled state variables as ``xarray.Dataset``.

A :class:`Recorder` samples variables of one population (``activity`` and
per-unit variables) or one projection (``weights``) every ``every`` steps
into preallocated buffers, which a compiled segment fills without leaving
compiled code. Buffers are flushed into chunks whenever they fill or the
structure changes (a birth or death), each chunk remembering the unit ids
alive while it was taken. :meth:`Recorder.to_dataset` either aligns the
chunks on the union of ids (``layout="dense"``: column ``unit=u`` always
belongs to unit ``u`` and is NaN where that unit was not alive) or keeps
each sample's units in slots with their ids as a coordinate
(``layout="slots"``, whose size stays proportional to what was sampled
under any turnover); the default picks the dense layout only while it is
small.

With a ``store``, the chunks go to a zarr store in batches instead of
staying in memory (:mod:`neurosim.store`): a structural change only seals
the buffer into a chunk, held until the held chunks fill half the buffer
(:meth:`Recorder.spill`, between steps) or the run ends (:meth:`Recorder.flush`);
memory stays bounded by the buffer (``buffer`` samples) whatever the
length of the run.

A sparse projection's weights are recorded one value per synapse, with the
synapses named by the stable ids of their two units
(:mod:`neurosim.synapse_recording`: the layouts, and
:func:`synapses_to_dense` and :func:`synapses_to_scipy`, which turn a sample
into a matrix).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim._lazy import lazy_module
from neurosim._validation import check_bool, check_choice, check_int
from neurosim.population import Population, check_name
from neurosim.synapse_recording import SYNAPSE_NAMES, synapse_cells, synapse_dataset, synapse_ids
from neurosim.synapse_recording import synapses_to_dense, synapses_to_scipy
from neurosim.synapses import Projection

if TYPE_CHECKING:
    import xarray as xr

    from neurosim.network import Network
    from neurosim.store import ZarrSink
else:
    xr = lazy_module("xarray")  # imported on first use (neurosim/_lazy.py)

__all__ = ["Recorder", "RecorderDict", "synapses_to_dense", "synapses_to_scipy"]

_BUFFER_BYTES = 32 * 2**20

#: ``to_dataset(layout="auto")`` gives the dense-by-id layout when it holds at most this many times
#: the values of the slot layout
AUTO_DENSE_FACTOR = 4

#: dims a recorder's Dataset uses besides its time dim
_OTHER_DIMS = ("unit", "pre_unit", "slot", "pre_slot", "batch", "event")


def _chunk_bytes(chunk) -> int:
    """Bytes of a chunk ``(times, ids, data)``'s samples."""
    return chunk[0].nbytes + sum(a.nbytes for a in chunk[2].values())


class RecorderDict(dict):
    """``network.recorders``: a dict whose missing key says which recorders exist and how to record."""

    def __missing__(self, key):
        have = f"recorders: {sorted(self)}" if self else "nothing is recorded yet"
        raise KeyError(f"no recorder named {key!r} ({have}); record with net.record(population, [variables]) "
                       f"(e.g. net.record(net.populations[{key!r}], ['activity'])) or net.record(projection, "
                       "'weights') before the run; a recorder's name defaults to its target's")


class Recorder:
    """Sample variables of a population or projection every ``every`` steps.

    Usually made by :meth:`neurosim.Network.record`.

    Parameters
    ----------
    target : Population or Projection
        What to sample.
    variables : str or list of str
        For a population: ``"activity"`` and/or names of its per-unit
        variables; for a projection: ``"weights"``.
    every : int >= 1
        Sample at steps ``t`` (1-based count of completed steps) with ``t % every == 0``.
    name : str, optional
        Key in ``network.recorders``; defaults to the target's name.
    time_dim : str
        Name of the Dataset's time dimension (and coordinate). Recorders
        sampling at different rates need different names for their
        Datasets to merge with ``xarray.merge``.
    store : path, optional
        A zarr store (directory) the samples are streamed to while the run
        goes on (see :mod:`neurosim.store`); started afresh when the network
        runs from a fresh start, truncated to the checkpoint's step when a
        checkpoint is loaded (so a resumed run appends where it stopped).
        Only a store this recorder wrote (same name, target, variables,
        ``every`` and ``time_dim``, kept in the store), an empty folder or a
        new path is used: anything else there (a file, a folder of other
        files, another recorder's store) is refused with a ``ValueError``
        when the recorder is created, and nothing is deleted; a store of
        this recorder holding the samples of a network with other
        parameters (another seed: another run's recording) is refused when
        a run would start it afresh (a resumed run continues it). One store
        holds one recorder: two recorders of a network may not share one.
    overwrite : bool
        Replace whatever is at ``store`` (deleting it) instead of refusing
        what this recorder did not write. Default ``False``.
    buffer : int >= 1, optional
        Samples kept in memory before they are written (with a store: the
        chunks sealed at structural changes and the buffer together, in
        bytes of the current samples; they are written once the chunks
        fill half of it), or, without a store, the size of each in-memory
        chunk; default: what fits in 32 MiB, at most 65,536.

    Raises
    ------
    TypeError
        If ``target`` is not a Population or Projection.
    ValueError
        If ``every < 1``, a name is not an identifier, or ``store`` holds
        something this recorder did not write (and ``overwrite`` is false).

    See Also
    --------
    neurosim.Network.record, neurosim.store.open_store

    Examples
    --------
    One sample of an input population, taken at step 1:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network()
    >>> x = ns.Population("x", 2)
    >>> _ = net.add(x)
    >>> _ = net.connect(ns.ArrayStream(np.ones((1, 2))), x)
    >>> rec = ns.Recorder(x, "activity")
    >>> _ = net.add(rec)
    >>> _ = net.run(1)
    >>> rec.to_dataset().activity.isel(batch=0).values.tolist()
    [[1.0, 1.0]]
    """

    def __init__(self, target: Population | Projection, variables: str | Sequence[str] = "activity", every: int = 1,
                 name: str | None = None, time_dim: str = "time", store: str | os.PathLike | None = None,
                 buffer: int | None = None, overwrite: bool = False) -> None:
        if not isinstance(target, (Population, Projection)):
            raise TypeError(f"target must be a Population or Projection; got {type(target).__name__}")
        self.target = target
        #: whether the target is a sparse projection: samples are one value per synapse (neurosim.synapse_recording)
        self._synapses = isinstance(target, Projection) and target.sparse
        variables = [variables] if isinstance(variables, str) else list(variables)
        if not variables:
            raise ValueError("variables must name at least one variable")
        for v in variables:
            if not isinstance(v, str):
                raise TypeError(f"variables must be strings; got {type(v).__name__}")
        self.variables = variables
        self.every = check_int("every", every, low=1)
        self.name = check_name("recorder", name or target.name)
        self.time_dim = check_name("time_dim", time_dim)
        if self.time_dim in _OTHER_DIMS + SYNAPSE_NAMES or self.time_dim in ("unit_id", "pre_unit_id"):
            taken = list(_OTHER_DIMS) + ["unit_id", "pre_unit_id"] + list(SYNAPSE_NAMES)
            raise ValueError(f"time_dim must not be one of the Dataset's other names {taken}; got {time_dim!r}")
        if store is not None and not isinstance(store, (str, pathlib.Path)):
            raise TypeError(f"store must be a path; got {type(store).__name__}")
        self.store = None if store is None else pathlib.Path(store)
        self.buffer = None if buffer is None else check_int("buffer", buffer, low=1)
        self.overwrite = check_bool("overwrite", overwrite)
        self._sink: ZarrSink | None = None
        self.network: Network | None = None
        self._chunks: list = []
        self._held = 0  # bytes of the chunks in _chunks (with a store: sealed and not yet written)
        self._buf: dict[str, np.ndarray] = {}
        self._tbuf = np.zeros(0, dtype=np.int64)
        self._ids = None
        self._synapse_key: tuple | None = None  # (SynapseIndex, post ids, pre ids) objects _ids were taken from
        self.count = 0
        # refused here, before any run: a user's folder (or another recorder's store) at the path is never deleted
        self.check_store()

    def identity(self) -> dict[str, Any]:
        """What identifies this recorder's store as its own (kept in the store as ``neurosim_store``).

        Returns
        -------
        dict
            Recorder name, target name and kind, variables, ``every`` and
            ``time_dim``.
        """
        return {"recorder": self.name, "target": self.target.name,
                "kind": "projection" if isinstance(self.target, Projection) else "population",
                "variables": list(self.variables), "every": self.every, "time_dim": self.time_dim}

    def check_store(self, fresh: bool = True) -> str | None:
        """Raise ``ValueError`` (:class:`~neurosim.store.StoreOwnershipError`) unless this recorder may use its store.

        Parameters
        ----------
        fresh : bool, optional
            Whether the recorder would start the store afresh (a run from
            its beginning) rather than continue it (a checkpoint loaded).
            Starting afresh, a store holding the samples of a network with
            other parameters (another seed, say) is refused too, once the
            recorder belongs to a network: only the same run may start its
            store again.

        Returns
        -------
        str or None
            :func:`~neurosim.store.claim_store`'s answer (``"create"`` or
            ``"resume"``); ``None`` without a store, or when the store is
            open already.

        Raises
        ------
        neurosim.store.StoreOwnershipError
            A ``ValueError``: something else is at the store's path.
        """
        if self.store is None or self._sink is not None:
            return None
        from neurosim.store import claim_store

        params = self.network.flat_params() if fresh and self.network is not None else None
        return claim_store(self.store, self.identity(), overwrite=self.overwrite, params=params)

    def check_writer(self) -> None:
        """Raise ``ValueError`` if another recorder (of another Network object) took this one's store up since."""
        if self._sink is not None and not self._sink.owns():
            self._sink._check_owner()

    def validate(self) -> None:
        """Raise ``ValueError`` unless every variable exists on the target and can be recorded.

        A population's variables must be declared (pair variables cannot be
        recorded); a projection records only ``"weights"``.
        """
        if isinstance(self.target, Population):
            unknown = [v for v in self.variables if v not in self.target.state]
            allowed = sorted(self.target.state)
            pairs = [v for v in self.variables if v in self.target.state and self.target.is_pair(v)]
            if pairs:
                raise ValueError(f"recorder {self.name!r}: {pairs} of {self.target.name!r} are pair variables "
                                 "(size x size); read them from population.state (e.g. in a callback) instead")
        else:
            unknown = [v for v in self.variables if v != "weights"]
            allowed = ["weights"]
        if unknown:
            raise ValueError(f"recorder {self.name!r}: unknown variables {unknown} of {self.target.name!r}; allowed: {allowed}")

    # -- values ---------------------------------------------------------------------
    def value(self, var: str) -> np.ndarray:
        """The current array of variable ``var`` of the target.

        Parameters
        ----------
        var : str
            A recorded variable.

        Returns
        -------
        numpy.ndarray
            The target's array itself (not a copy).
        """
        return self.target.weights if isinstance(self.target, Projection) else self.target.state[var]

    def _current_ids(self):
        t = self.target
        if self._synapses:
            # a link or unlink changes the synapses, not the units: a new chunk too. The index and the ids
            # arrays are replaced, never edited, by every structural change, so while they are the same
            # objects the ids are those of the current chunk (computing them costs a pass over the synapses)
            key = (t.synapse_index, t.post.ids, t.pre.ids)
            if self._ids is not None and self._synapse_key is not None and all(
                    a is b for a, b in zip(key, self._synapse_key)):
                return self._ids
            self._synapse_key = key
            return synapse_ids(t)
        return (t.post.ids.copy(), t.pre.ids.copy()) if isinstance(t, Projection) else (t.ids.copy(),)

    def _sample_bytes(self) -> int:
        return sum(self.value(v).nbytes for v in self.variables) + 8

    def _capacity(self) -> int:
        """Samples of one buffer at the current shapes (``buffer``, or what fits in 32 MiB, at most 65,536)."""
        if self.buffer is not None:
            return self.buffer
        return int(max(1, min(65536, _BUFFER_BYTES // self._sample_bytes())))

    def _slot_chunks(self) -> tuple[int, ...]:
        """Slots per zarr chunk along each unit axis of the store (see :class:`~neurosim.store.ZarrSink`)."""
        from neurosim.store import SLOT_CHUNK

        t = self.target
        pops = (t.post, t.pre) if isinstance(t, Projection) else (t,)
        fed = {id(i.population) for i in self.network.inputs} if self.network is not None else set()
        out = []
        for pop in pops:
            n = max(1, pop.size)
            if id(pop) not in fed:
                # births may widen this axis: room for them in each chunk (a stream-fed population's size is fixed)
                n = max(n, SLOT_CHUNK if pop.max_size is None else max(1, min(SLOT_CHUNK, pop.max_size)))
            out.append(n)
        return tuple(out)

    def _open_sink(self, fresh: bool):
        """The store's writer: a new store (``fresh``), or the one an earlier process left."""
        from neurosim.store import ZarrSink

        target, store = self.target, self.store
        assert store is not None  # only recorders with a store have a sink
        is_proj = isinstance(target, Projection)
        per_sample = {v: isinstance(target, Population) and target.is_per_sample(v) for v in self.variables}
        claim = self.check_store(fresh)  # checked again: the folder may have changed since the recorder was made
        sink = self._sink = ZarrSink(store, self.time_dim, is_proj, per_sample, rows=self._capacity(),
                                     var_attrs={v: self.variable_attrs(v) for v in self.variables},
                                     slot_chunks=self._slot_chunks(), synapses=self._synapses)
        if fresh or claim == "create":
            store.parent.mkdir(parents=True, exist_ok=True)
            attrs = {"recorder": self.name, "target": self.target.name, "every": self.every, "layout": "slots"}
            if self.network is not None:
                attrs.update(self.network.flat_params())
                if self.network.dt is not None:
                    attrs["dt"] = self.network.dt
            try:
                sink.create(attrs, self._log(), identity=self.identity())
            except BaseException:
                self._sink = None
                raise
        else:
            sink.attach_existing()

    def _log(self):
        from neurosim.events import EventLog

        return self.network.event_log if self.network is not None else EventLog()

    def prepare(self) -> None:
        """Make the buffers match the current shapes.

        On a structural change (other unit ids) or a full buffer, the
        samples taken so far become a chunk: kept in memory, or, with a
        store, held with the store's other unwritten chunks and written in
        one batch by :meth:`spill` (between steps, once they fill half the
        buffer) or :meth:`flush` (end of a run, checkpoint, divergence). The
        held chunks and the new buffer share one buffer's bytes, so memory
        stays bounded by the buffer.
        """
        if self.store is not None and self._sink is None:
            self._open_sink(fresh=True)
        ids = self._current_ids()
        same = self._ids is not None and (ids is self._ids or all(
            a.shape == b.shape and np.array_equal(a, b) for a, b in zip(ids, self._ids)))
        shapes_ok = all(v in self._buf and self._buf[v].shape[1:] == self.value(v).shape for v in self.variables)
        if same and shapes_ok and self.count < self._tbuf.size:
            return
        self._seal()
        cap = self._capacity()
        if self._sink is not None and self._held:
            per = self._sample_bytes()
            cap = int(max(1, min(cap, (cap * per - self._held) // per)))
        self._buf = {v: np.empty((cap,) + self.value(v).shape) for v in self.variables}
        self._tbuf = np.zeros(cap, dtype=np.int64)
        self._ids = ids

    @property
    def free(self) -> int:
        """Samples the in-memory buffer can take before it is full."""
        return self._tbuf.size - self.count

    def sample(self, t: int) -> None:
        """Take one sample now (the per-step path).

        Parameters
        ----------
        t : int
            The step the sample belongs to.
        """
        self.prepare()
        for v in self.variables:
            self._buf[v][self.count] = self.value(v)
        self._tbuf[self.count] = t
        self.count += 1

    def after_segment(self, new_count: int, t0: int, t1: int) -> None:
        """Account for samples a compiled segment wrote for steps ``t0+1 .. t1``.

        Parameters
        ----------
        new_count : int
            Samples in the buffer after the segment.
        t0 : int
            The step before the segment's first.
        t1 : int
            The segment's last completed step.

        Raises
        ------
        RuntimeError
            If the segment wrote another number of samples than due.
        """
        first = (t0 // self.every + 1) * self.every
        times = np.arange(first, t1 + 1, self.every, dtype=np.int64)
        if times.size != new_count - self.count:
            raise RuntimeError(f"recorder {self.name!r}: segment wrote {new_count - self.count} samples, expected {times.size}")
        self._tbuf[self.count:new_count] = times
        self.count = new_count

    def flush(self) -> None:
        """Move buffered samples into the recorded chunks, and write them to the store if there is one.

        Called after every run, before a checkpoint is saved and when a run
        diverges, so a store and a checkpoint agree; with a store, every
        chunk held since the last write goes to it in one batch (one commit).
        """
        self._seal()
        if self._sink is not None:
            self._write()

    def spill(self) -> None:
        """With a store: write the held chunks once they fill half the buffer (the engine calls it between steps).

        Structural events only seal the buffer into a chunk (:meth:`prepare`);
        writing each chunk at once cost a zarr commit per event (0.2 s), so
        chunks of different unit sets are held and written together. Never
        called inside a step, which a failure may undo.
        """
        if self._sink is None:
            return
        if self.count and self.count == self._tbuf.size:
            self._seal()
        if self._held and 2 * self._held >= self._capacity() * self._sample_bytes():
            self._write()

    def _seal(self) -> None:
        """The buffered samples become a chunk (with a store: held until written)."""
        if self.count and self.count == self._tbuf.size:
            # a full buffer becomes the chunk itself: no copy, and the next prepare() allocates afresh
            chunk = (self._tbuf, self._ids, self._buf)
            self._buf, self._tbuf = {}, np.zeros(0, dtype=np.int64)
        elif self.count:
            chunk = (self._tbuf[: self.count].copy(), self._ids,
                     {v: self._buf[v][: self.count].copy() for v in self.variables})
        else:
            return
        self._chunks.append(chunk)
        self._held += _chunk_bytes(chunk)
        self.count = 0

    def _write(self) -> None:
        """Write the held chunks and the events logged since the last write to the store, in one batch."""
        assert self._sink is not None  # only recorders with a store write
        self._sink.append_chunks(self._chunks, self._log())
        self._chunks, self._held = [], 0

    def reset(self) -> None:
        """Discard everything recorded (a store is started afresh at the next sample)."""
        self._chunks, self._held, self.count, self._ids = [], 0, 0, None
        self._sink = None

    # -- output ---------------------------------------------------------------------
    def _all_chunks(self):
        chunks = list(self._chunks)
        if self.count:
            chunks.append((self._tbuf[: self.count], self._ids, {v: self._buf[v][: self.count] for v in self.variables}))
        return chunks

    def discard_after(self, t: int) -> None:
        """Drop the samples taken at steps later than ``t`` (a checkpoint of step ``t`` was loaded).

        Parameters
        ----------
        t : int >= 0
            The step to keep samples up to (inclusive).
        """
        t = check_int("t", t, low=0)
        if self.store is not None:
            if self._sink is None:
                self._open_sink(fresh=False)
            assert self._sink is not None  # _open_sink set it
            # samples not yet written (buffered or held) are of steps after the checkpoint's or lost with it
            self.count, self._chunks, self._held = 0, [], 0
            self._sink.truncate(t, len(self._log()))
            return
        self.flush()
        kept = []
        for times, ids, data in self._chunks:
            keep = times <= t
            if keep.all():
                kept.append((times, ids, data))
            elif keep.any():
                kept.append((times[keep].copy(), ids, {v: a[keep].copy() for v, a in data.items()}))
        self._chunks, self._held = kept, sum(_chunk_bytes(c) for c in kept)

    def dataset_cells(self, layout: str) -> int:
        """Number of values per variable that :meth:`to_dataset` would hold in ``layout``.

        Parameters
        ----------
        layout : {"dense", "slots"}
            The layout to size.

        Returns
        -------
        int
            Samples times units (times pre units for a projection).
        """
        layout = check_choice("layout", layout, {"dense", "slots"})
        chunks = self._all_chunks()
        if self._synapses:
            return synapse_cells(chunks, layout)
        n_time = sum(c[0].size for c in chunks)
        widths = [max([c[1][k].size for c in chunks], default=0) if layout == "slots"
                  else np.unique(np.concatenate([c[1][k] for c in chunks])).size if chunks else 0
                  for k in range(2 if isinstance(self.target, Projection) else 1)]
        return int(n_time * np.prod(widths))

    def to_dataset(self, layout: str = "auto") -> xr.Dataset:
        """Everything recorded so far as an ``xarray.Dataset``.

        Parameters
        ----------
        layout : {"auto", "dense", "slots"}
            How units are laid out when the recorded units change over time
            (births and deaths).

            * ``"dense"``: dims ``unit`` (stable ids of the target
              population, or the post population of a projection) and
              ``pre_unit`` (pre ids, projections only) over the union of
              every id ever recorded; values are NaN where a unit was not
              alive. Convenient (``ds.sel(unit=7)``), but its size is the
              number of samples times the number of ids *ever* seen, which
              under steady turnover grows with the run length, so the size
              grows quadratically with the run.
            * ``"slots"``: dims ``slot`` (and ``pre_slot``); sample ``s``
              holds the units alive when it was taken in their column order
              in the first slots, NaN after them, and the coordinates
              ``unit_id(time, slot)`` and ``pre_unit_id(time, pre_slot)``
              (int64, -1 for an empty slot) say which unit each value
              belongs to. Its size is the number of samples times the
              largest number of units (times the largest number of pre
              units) alive at any sample: for a population whose size stays
              within ``[s_min, s_max]`` that is at most ``s_max / s_min``
              times the values actually sampled (``(s_max / s_min)^2`` for
              weights), whatever the run length and the turnover.
            * ``"auto"`` (default): ``"dense"`` when it holds at most
              :data:`AUTO_DENSE_FACTOR` (4) times as many values as
              ``"slots"`` (always when no unit was born or killed), else
              ``"slots"``; so the default is never larger than 4 times the
              slot layout. Check ``ds.attrs["layout"]``.

            A sparse projection's weights are laid out by synapse instead:
            ``"dense"`` has dims ``(time, synapse)`` with the coordinates
            ``post(synapse)`` and ``pre(synapse)`` (stable ids; NaN where a
            synapse did not exist), ``"slots"`` has dims ``(time,
            synapse_slot)`` with ``post_id`` and ``pre_id`` per slot; both
            say which units were alive (:mod:`neurosim.synapse_recording`).

        Returns
        -------
        xarray.Dataset
            Dims: the recorder's ``time_dim`` (default ``time``), the unit
            dims of the layout, and ``batch`` (activity and other per-sample
            variables). The time coordinate is the number of completed steps
            at each sample, or, when the network has a time step ``dt``, the
            elapsed time ``step * dt`` as ``timedelta64[ns]`` (so
            ``ds.resample(time="10ms")`` works) with the step count kept as
            the coordinate ``step`` (``<time_dim>_step`` for another
            ``time_dim``). The network's parameters are in ``attrs``; its
            event log is the ``event_*`` variables along dim ``event``
            (absent when no unit was born or killed). Each recorded
            variable carries ``units`` and ``long_name`` attributes
            (:meth:`variable_attrs`).
        """
        layout = check_choice("layout", layout, {"auto", "dense", "slots"})
        if self.store is not None:
            return self._stored_dataset(layout)
        if layout == "auto":
            dense = self.dataset_cells("dense")
            layout = "dense" if dense <= AUTO_DENSE_FACTOR * self.dataset_cells("slots") else "slots"
        chunks = self._all_chunks()
        if self._synapses:
            times = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0, dtype=np.int64)
            ds = synapse_dataset(chunks, self.variables, {v: self.variable_attrs(v) for v in self.variables},
                                 self.time_dim, layout)
            return self._described(ds.assign_coords(self._time_coords(times)), layout)
        is_proj = isinstance(self.target, Projection)
        n_ids = 2 if is_proj else 1
        times = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0, dtype=np.int64)
        tdim = self.time_dim
        if layout == "dense":
            if chunks:
                axes = [np.unique(np.concatenate([c[1][k] for c in chunks])) for k in range(n_ids)]
            else:
                axes = list(self._current_ids())
            cols_of = lambda ids: [np.searchsorted(axes[k], ids[k]) for k in range(n_ids)]  # noqa: E731
            unit_dims = ("unit", "pre_unit")
        else:
            axes = [np.arange(max([c[1][k].size for c in chunks], default=0)) for k in range(n_ids)]
            cols_of = lambda ids: [np.arange(ids[k].size) for k in range(n_ids)]  # noqa: E731
            unit_dims = ("slot", "pre_slot")
        data_vars = {}
        for v in self.variables:
            target = self.target
            per_sample = isinstance(target, Population) and target.is_per_sample(v)
            dims: tuple[str, ...]
            shape: tuple[int, ...]
            if is_proj:
                dims = (tdim, unit_dims[0], unit_dims[1])
                shape = (times.size, axes[0].size, axes[1].size)
            elif per_sample:
                dims = (tdim, "batch", unit_dims[0])
                shape = (times.size, target.batch, axes[0].size)  # type: ignore[union-attr]  # per_sample: a Population
            else:
                dims = (tdim, unit_dims[0])
                shape = (times.size, axes[0].size)
            out = np.full(shape, np.nan)
            row = 0
            for t, ids, data in chunks:
                n = t.size
                cols = cols_of(ids)
                if is_proj:
                    out[row: row + n][:, cols[0][:, None], cols[1][None, :]] = data[v]
                else:
                    out[row: row + n, ..., cols[0]] = data[v]
                row += n
            data_vars[v] = (dims, out, self.variable_attrs(v))
        coords = self._time_coords(times)
        if layout == "dense":
            coords["unit"] = axes[0]
            if is_proj:
                coords["pre_unit"] = axes[1]
        else:
            names = ("unit_id", "pre_unit_id")
            for k in range(n_ids):
                ids_at = np.full((times.size, axes[k].size), -1, dtype=np.int64)
                row = 0
                for t, ids, _ in chunks:
                    ids_at[row: row + t.size, : ids[k].size] = ids[k]
                    row += t.size
                coords[names[k]] = ((tdim, unit_dims[k]), ids_at)
        ds = xr.Dataset(data_vars, coords=coords)
        if layout == "dense":
            ds["unit"].attrs["long_name"] = "stable unit id" + (" (post)" if is_proj else "")
        else:
            ds["unit_id"].attrs["long_name"] = "stable id of the unit in each slot (-1: empty)" + (" (post)" if is_proj else "")
        return self._described(ds, layout)

    def _described(self, ds: xr.Dataset, layout: str) -> xr.Dataset:
        """``ds`` with the recorder's and the network's attributes and the event log."""
        ds.attrs["recorder"] = self.name
        ds.attrs["target"] = self.target.name
        ds.attrs["every"] = self.every
        ds.attrs["layout"] = layout
        if self.network is not None:
            ds.attrs.update(self.network.flat_params())
            log = self.network.event_log
            if len(log):  # no empty event_* variables where nothing was born or killed
                ds["event_step"] = ("event", np.asarray(log.step, dtype=np.int64))
                ds["event_kind"] = ("event", np.asarray(log.kind, dtype=str))
                ds["event_population"] = ("event", np.asarray(log.population, dtype=str))
                ds["event_unit"] = ("event", np.asarray(log.unit, dtype=np.int64))
                # the pre unit of a synapse event (link/unlink), -1 for units' births and deaths
                ds["event_partner"] = ("event", np.asarray(log.partner, dtype=np.int64))
        return ds

    @property
    def n_samples(self) -> int:
        """Samples taken so far (in memory, or written to the store and buffered)."""
        n = self.count + sum(int(c[0].size) for c in self._chunks)
        if self._sink is not None:
            n += self._sink.n_time
        return n

    def describe(self) -> str:
        """One line: what is sampled, how often, how much so far, and where it goes.

        Returns
        -------
        str
            E.g. ``"y.activity, y.mu every 10 (samples: 2000)"``.
        """
        target = self.target.name
        what = ", ".join(f"{target}.{v}" for v in self.variables)
        where = f", store={str(self.store)!r}" if self.store is not None else ""
        name = "" if self.name == target else f"{self.name}: "
        return f"{name}{what} every {self.every} (samples: {self.n_samples}{where})"

    def __repr__(self) -> str:
        kind = "Projection" if isinstance(self.target, Projection) else "Population"
        out = (f"Recorder({self.name!r}, {kind.lower()} {self.target.name!r}, variables={self.variables}, "
               f"every={self.every}, samples={self.n_samples}")
        if self.time_dim != "time":
            out += f", time_dim={self.time_dim!r}"
        if self.store is not None:
            out += f", store={str(self.store)!r}"
        if self.network is None:
            out += ", not in a network"
        return out + ")"

    def variable_attrs(self, var: str) -> dict:
        """``{"units", "long_name"}`` that recordings of ``var`` carry (declared on the target, or its defaults).

        Parameters
        ----------
        var : str
            One of this recorder's variables.

        Returns
        -------
        dict
            ``{"units": str, "long_name": str}``, as
            :meth:`neurosim.population.Population.variable_attrs` or
            :meth:`neurosim.synapses.Projection.variable_attrs` give them.
        """
        return dict(self.target.variable_attrs(var))

    def _stored_dataset(self, layout: str) -> xr.Dataset:
        """What the store holds (after writing what is buffered), in ``layout``."""
        from neurosim.store import open_store, slots_to_dense

        self.flush()
        if self._sink is None or self.store is None or not self.store.exists():
            return xr.Dataset(attrs={"recorder": self.name, "layout": "slots"})
        ds = open_store(self.store)
        if layout == "auto" and self._synapses:
            # synapses: the union of every synapse against the most at one time (the store's slots)
            union = slots_to_dense(ds).sizes.get("synapse", 0)
            layout = "dense" if union <= AUTO_DENSE_FACTOR * ds.sizes.get("synapse_slot", 0) else "slots"
        elif layout == "auto":
            ids = ds["unit_id"].values if "unit_id" in ds.coords else np.zeros((0, 0))
            dense = ids.shape[0] * np.unique(ids[ids >= 0]).size
            layout = "dense" if dense <= AUTO_DENSE_FACTOR * ids.size else "slots"
        if layout == "dense":
            ds = slots_to_dense(ds)
        steps = ds[self.time_dim].values.astype(np.int64)
        ds = ds.assign_coords(self._time_coords(steps))
        ds.attrs["layout"] = layout
        ds.attrs["store"] = str(self.store)
        return ds

    def _time_coords(self, steps: np.ndarray) -> dict:
        tdim = self.time_dim
        dt = getattr(self.network, "dt", None)
        if dt is None:
            return {tdim: xr.Variable(tdim, steps, {"long_name": "completed steps"})}
        ns = np.rint(steps.astype(np.float64) * (dt * 1e9)).astype(np.int64).astype("timedelta64[ns]")
        step_name = "step" if tdim == "time" else f"{tdim}_step"
        return {tdim: xr.Variable(tdim, ns, {"long_name": f"elapsed time (completed steps x dt = {dt:g} s)"}),
                step_name: xr.Variable(tdim, steps, {"long_name": "completed steps"})}
