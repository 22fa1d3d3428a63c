"""Recordings streamed to a zarr store while a run goes on.

A recorder with a ``store`` (``net.record(pop, store="run.zarr")``) writes
its chunks of samples to the store in batches: a structural change seals
its buffer into a chunk (other units) and writes nothing; the chunks held
and the buffer share one buffer's bytes, and are written together
(:meth:`ZarrSink.append_chunks`, one commit) once they fill half of it,
and at every run's end and checkpoint. So a run whose recording exceeds
memory completes with memory bounded by the buffer, and a growing network
costs a few zarr writes per batch rather than per birth.

The store holds the *slot layout* of :meth:`neurosim.Recorder.to_dataset`:
dims ``(time, [batch,] slot)`` (``(time, slot, pre_slot)`` for weights),
``unit_id(time, slot)`` (-1 for an empty slot), the step count as the
``time`` coordinate, the event log along ``event``
(``event_step``, ``event_kind``, ``event_population``, ``event_unit``, ``event_partner``) and
the network's parameters as attributes. ``xarray.open_zarr(path)`` reads
it; :func:`open_store` also turns it into the dense layout. A sparse
projection's store holds ``weights(time, synapse_slot)`` with the synapses'
ends ``post_id`` and ``pre_id`` per slot and the units alive as
``unit_id``/``pre_unit_id`` (:mod:`neurosim.synapse_recording`).

A batch of chunks is appended in this order: events, then the data (every
array resized, then written, time last), then a *commit*: the consolidated
metadata (one small file) is rewritten with the new shapes. Readers that
use it (``xarray.open_zarr``'s default, :func:`open_store`) see the store
as of the last commit, so a process killed mid-chunk (``kill -9``) leaves a
store that ``xarray.open_zarr`` reads with every chunk committed before the
kill; only a kill during the commit's own small write can spoil it.
:func:`repair` (run when a resumed run takes the store up) cuts the arrays
back to the committed shapes and deletes the temporary files zarr's own
interrupted writes left (``<key>.<uuid>.partial``). Widening the slots
(more units alive than ever before) rewrites nothing already written but
the padding.

Ownership: a store carries the identity of the recorder that wrote it (the
group attribute ``neurosim_store``: recorder name, target, variables,
``every``, ``time_dim``). A recorder deletes or rewrites only a store of its
own identity (starting it afresh on a run from the beginning, continuing
it on a resumed run), an empty folder, or a path that does not exist; a
file, a folder that is not a neurosim store, another recorder's store, a
store holding other files besides (zarr's write residue is the store's
own) or, for a run from the beginning, a store holding the samples of a
network with other parameters (another seed: another run's recording) is
refused (:func:`claim_store`, :class:`StoreOwnershipError`, a
``ValueError``) before anything is written, unless the recorder was given
``overwrite=True``.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import shutil
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

if TYPE_CHECKING:
    from neurosim.events import EventLog

__all__ = ["ZarrSink", "open_store", "slots_to_dense", "repair", "claim_store", "StoreOwnershipError"]

#: group attribute marking a store neurosim wrote, with the identity of the recorder that wrote it (JSON)
MARKER = "neurosim_store"

#: top-level entries of a zarr group that are zarr's own (version 2 and 3 metadata files)
_ZARR_FILES = {"zarr.json", ".zgroup", ".zattrs", ".zmetadata", ".zarray"}

#: the temporary file zarr writes a key to before renaming it into place (zarr 2: ``<key>.<uuid4 hex>.partial``;
#: zarr 3: the key with its suffix replaced, ``zarr.<hex>.partial`` for ``zarr.json``); ``kill -9`` during
#: the write leaves it behind
_WRITE_RESIDUE = re.compile(r"^(?P<key>.*)\.[0-9a-f]{32}\.partial$")


def _is_write_residue(name: str, own: set[str]) -> bool:
    """Whether ``name`` is what an interrupted zarr write of one of the store's ``own`` entries left."""
    m = _WRITE_RESIDUE.match(name)
    if m is None:
        return False
    key = m.group("key")
    return key in own or any(pathlib.PurePath(o).stem == key and pathlib.PurePath(o).suffix for o in own)

#: identity fields a store written before the marker existed carries as plain attributes
_LEGACY = ("recorder", "target", "every", "time_dim")

#: the sink writing each store in this process: resolved path -> that sink's token (ZarrSink.owns)
_WRITERS: dict = {}

#: a zarr chunk of a sample array holds about this many bytes (uncompressed) along time: a batch of chunks
#: rewrites few partly filled ones, whatever the row size (one unit or a thousand units squared)
CHUNK_BYTES = 2**20
#: a unit axis that births may widen gets chunks of at least this many slots: a store widened from 2 to
#: 1,000 slots then writes 16 chunk files per row block, not 500 (ZarrSink's ``slot_chunks``)
SLOT_CHUNK = 64
#: events per zarr chunk of the event log's arrays (zarr's guess for an empty array is one event per file)
EVENT_CHUNK = 8192

_EVENTS = ("event_step", "event_kind", "event_population", "event_unit")
#: the event log's arrays: the four an earlier version's store is known by, and the partner of synapse events
#: (the pre id of a link/unlink, -1 for units' births and deaths), absent from stores written before it existed
_EVENT_ARRAYS = _EVENTS + ("event_partner",)


class StoreOwnershipError(ValueError):
    """A recorder was refused a store path that holds data it did not write (nothing was changed on disk)."""


def store_identity(path: str | os.PathLike) -> tuple[str, Any, list[str]]:
    """What is at ``path``: ``(kind, identity, foreign)``.

    ``kind`` is ``"absent"``, ``"empty"`` (an empty folder), ``"file"``,
    ``"neurosim"`` (a zarr group carrying neurosim's marker, or the
    attributes stores had before it) or ``"foreign"`` (anything else);
    ``identity`` is the writing recorder's (neurosim stores only) and
    ``foreign`` the top-level entries that are not the store's own.
    """
    path = pathlib.Path(path)
    if not path.exists() and not path.is_symlink():
        return "absent", None, []
    if not path.is_dir():
        return "file", None, [path.name]
    entries = sorted(e.name for e in path.iterdir())
    if not entries:
        return "empty", None, []
    try:
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr warns about each entry that is not its own: those are reported
            g = _group(path, "r")
            attrs = dict(g.attrs)
            own = set(g.array_keys()) | set(g.group_keys()) | _ZARR_FILES
    except Exception:  # noqa: BLE001 -- not a zarr group at all
        return "foreign", None, entries
    foreign = [e for e in entries if e not in own and not _is_write_residue(e, own)]
    if not foreign and not own - _ZARR_FILES:
        return "empty", None, []  # a group without arrays (a store whose creation was cut short): nothing to lose
    if MARKER in attrs:
        try:
            ident = json.loads(attrs[MARKER])
        except (TypeError, ValueError):
            return "foreign", None, entries
        return ("neurosim", ident, foreign) if isinstance(ident, dict) else ("foreign", None, entries)
    # a store of an earlier version: no marker, and after its first chunk not even its attributes (appending
    # replaced them); it is known by its arrays, the event log's four and the samples'
    arrays = sorted(g.array_keys())
    if set(_EVENTS) <= set(arrays):
        legacy = {k: attrs[k] for k in _LEGACY if k in attrs}
        legacy["arrays"] = arrays
        return "neurosim", legacy, foreign
    return "foreign", None, entries


def _same_identity(stored: dict, ident: dict) -> bool:
    if "arrays" not in stored:
        return all(json.dumps(stored.get(k)) == json.dumps(ident.get(k)) for k in ident)
    # an earlier version's store: its attributes where it kept them, and arrays this recorder would write
    if any(json.dumps(stored[k]) != json.dumps(ident.get(k)) for k in _LEGACY if k in stored):
        return False
    samples = {ident["time_dim"], "unit_id", *ident["variables"]}
    if ident["kind"] == "projection":
        samples.add("pre_unit_id")
    return set(stored["arrays"]) - set(_EVENT_ARRAYS) in (set(), samples)


def _describe_identity(ident: dict) -> str:
    if "arrays" in ident:
        return f"an earlier neurosim version's store of arrays {ident['arrays']}"
    parts = [f"recorder {ident.get('recorder')!r}", f"target {ident.get('target')!r}"]
    parts += [f"variables {ident.get('variables')}", f"every {ident.get('every')}", f"time_dim {ident.get('time_dim')!r}"]
    return ", ".join(parts)


def claim_store(path: str | os.PathLike, identity: dict, overwrite: bool = False,
                params: dict | None = None) -> str:
    """Whether a recorder of ``identity`` may use ``path``: ``"create"`` (a new store), or ``"ours"``.

    ``"create"``: nothing is there, an empty folder, or (``overwrite``) anything,
    which the recorder then replaces. ``"ours"``: a store this recorder wrote
    (same name, target, variables, ``every`` and ``time_dim``), which it may
    continue (a resumed run) or start afresh (a run from the beginning). With
    ``params`` (the recorder would start the store afresh), a store of its
    own that holds samples or events is ``"ours"`` only if the network that
    wrote it had these parameters (seed included): the same run started
    again, not another network's finished recording.

    Parameters
    ----------
    path : str or path-like
        The store's folder.
    identity : dict
        The recorder's :meth:`~neurosim.recording.Recorder.identity`.
    overwrite : bool, optional
        Accept whatever is there (it will be replaced).
    params : dict, optional
        The network's :meth:`~neurosim.Network.flat_params`, when the
        recorder would start the store afresh; ``None`` when it continues it
        (a checkpoint was loaded, which checks the parameters itself) or has
        no network yet.

    Returns
    -------
    str
        ``"create"`` or ``"ours"``.

    Raises
    ------
    StoreOwnershipError
        Without ``overwrite``: a file, a folder that is not a neurosim
        store, a neurosim store written by another recorder, a store
        holding other files besides, or (``params``) a store holding the
        samples of a network with other parameters; nothing is touched.
    """
    kind, stored, foreign = store_identity(path)
    if kind in ("absent", "empty"):
        return "create"
    if overwrite:
        return "ours" if kind == "neurosim" and _same_identity(stored, identity) and not foreign else "create"
    who = f"recorder {identity.get('recorder')!r}"
    fix = "record to another path (or an empty folder), or pass overwrite=True to replace it"
    if kind == "file":
        raise StoreOwnershipError(f"{who}: the store path {path} is a file, not a recording store; {who} would "
                                  f"delete it: {fix}")
    if kind == "foreign":
        raise StoreOwnershipError(f"{who}: {path} exists and is not a neurosim recording store (it holds "
                                  f"{foreign[:5]}{' ...' if len(foreign) > 5 else ''}); {who} would delete it: {fix}")
    if not _same_identity(stored, identity):
        raise StoreOwnershipError(f"{who}: {path} is a neurosim store written by another recorder "
                                  f"({_describe_identity(stored)}), not by this one ({_describe_identity(identity)}); "
                                  f"{who} would replace its samples: {fix}")
    if foreign:
        raise StoreOwnershipError(f"{who}: the store {path} also holds files neurosim did not write "
                                  f"({foreign[:5]}); {who} would delete them when it starts afresh: move them, "
                                  "or pass overwrite=True")
    if params is not None:
        held, diffs = _other_run(path, params)
        if diffs:
            listed = "; ".join(diffs[:5]) + (f"; and {len(diffs) - 5} more" if len(diffs) > 5 else "")
            raise StoreOwnershipError(
                f"{who}: the store {path} holds the recording of another run ({held}) by a network with other "
                f"parameters ({listed}); starting this run from its beginning would replace it. Resume the run "
                "that wrote it (run(..., checkpoint=its checkpoint, resume=True)), record to another path, or pass "
                "overwrite=True to replace it")
    return "ours"


def _same_value(a, b) -> bool:
    """Whether a parameter read back from a store's attributes equals the network's (numbers by value, NaN == NaN)."""
    numbers = (int, float, np.integer, np.floating)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return bool(a == b or (np.isnan(a) and np.isnan(b)))
    return str(a) == str(b)


def _other_run(path, params: dict) -> tuple[str, list[str]]:
    """What the store holds and how the network that wrote it differs from ``params`` (empty: the same run).

    A store without samples or events holds nothing to lose. Parameters are
    compared as the store keeps them: the scalar entries of
    ``flat_params()`` (``"entity.key"``) written when the store was created.
    """
    with _quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = _group(path, "r")
        keys = set(g.array_keys())
        attrs = dict(g.attrs)
        tdim = attrs.get("time_dim", "time")
        n_time = int(g[tdim].shape[0]) if tdim in keys else 0
        n_events = int(g["event_step"].shape[0]) if "event_step" in keys else 0
    if not n_time and not n_events:
        return "", []
    held = f"{n_time} sample(s), {n_events} event(s)"
    scalar = (int, float, str, bool, np.number)
    ours = {k: v for k, v in params.items() if isinstance(v, scalar)}
    stored = {k: v for k, v in attrs.items() if "." in k and k != MARKER}
    if not stored:
        return held, ["the store keeps no parameters to compare (written by an earlier neurosim version)"]
    diffs = []
    for k in sorted(set(ours) | set(stored)):
        if k not in stored:
            diffs.append(f"{k}: absent from the store, {ours[k]!r} here")
        elif k not in ours:
            diffs.append(f"{k}: {stored[k]!r} in the store, absent here")
        elif not _same_value(stored[k], ours[k]):
            diffs.append(f"{k}: {stored[k]!r} in the store, {ours[k]!r} here")
    # the network's seed first: the usual difference, and the one a reader looks for
    diffs.sort(key=lambda d: not d.startswith("network.seed:"))
    return held, diffs


def _remove(path):
    """Delete what a recorder may replace (``claim_store`` said so)."""
    path = pathlib.Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _zarr():
    try:
        import zarr
    except ImportError as err:  # pragma: no cover - zarr is in the test extra
        raise ImportError("streaming recordings to disk needs zarr: pip install zarr, or from the neurosim checkout: python -m pip install -e '.[zarr]'") from err
    return zarr


def _group(path, mode: str):
    """The store's root group as it is on disk (zarr 3 would otherwise read shapes from the consolidated metadata)."""
    zarr = _zarr()
    if int(zarr.__version__.split(".")[0]) >= 3:
        return zarr.open_group(str(path), mode=mode, use_consolidated=False)
    return zarr.open_group(str(path), mode=mode)


def _commit(path):
    """Publish what has been written: the consolidated metadata (one file) now holds every array's new shape.

    Readers that use it (``xarray.open_zarr``'s default, :func:`open_store`)
    see the store as of the last commit, so a process killed between two
    commits leaves a consistent store of every chunk committed before.
    """
    with _quiet():
        _zarr().consolidate_metadata(str(path))


def _committed_shapes(path) -> dict:
    """``{array: shape}`` as of the last commit."""
    zarr = _zarr()
    with _quiet():
        g = zarr.open_consolidated(str(path), mode="r")
        return {name: tuple(g[name].shape) for name in g.array_keys()}


@contextlib.contextmanager
def _quiet():
    """zarr 3 warns about consolidated metadata and string dtypes with no v3 spec; neither matters here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Cc]onsolidated.*")
        warnings.filterwarnings("ignore", message=".*does not have a Zarr V3 specification.*")
        warnings.filterwarnings("ignore", category=FutureWarning, module="zarr")
        yield


class ZarrSink:
    """Appends a recorder's chunks (slot layout) and the network's new events to a zarr store.

    Parameters
    ----------
    path : path
        The store (a directory). :meth:`create` replaces what is there:
        a recorder asks :func:`claim_store` first.
    time_dim : str
        Name of the time dimension.
    is_projection : bool
        Whether the recorder samples weights (two unit axes).
    per_sample : dict of str to bool
        For each variable, whether it has a ``batch`` axis.
    rows : int
        At most this many samples per zarr chunk along time (a recorder
        passes its buffer size; zarr's own guess gives small chunks and
        thousands of files); fewer when a chunk would exceed
        ``CHUNK_BYTES`` (1 MiB).
    var_attrs : dict of str to dict, optional
        Attributes of each variable (``units``, ``long_name``), written with
        its array.
    slot_chunks : tuple of int, optional
        Slots per zarr chunk along each unit axis (post, and pre for a
        projection), fixed when the arrays are created: a recorder passes
        the axis's size where it cannot change (a population fed by an
        input stream) and at least ``SLOT_CHUNK`` (64) where births may widen
        it. Default: the slots of the first chunk written.
    synapses : bool, default=False
        Whether the recorder samples a sparse projection: one value per
        synapse, chunks' ids as :func:`~neurosim.synapse_recording.synapse_ids`
        gives them, slot widths ``(slot, pre_slot, synapse_slot,
        synapse_slot)``.
    """

    def __init__(self, path: str | os.PathLike, time_dim: str, is_projection: bool, per_sample: dict,
                 rows: int = 1024, var_attrs: dict | None = None, slot_chunks: tuple[int, ...] | None = None,
                 synapses: bool = False) -> None:
        self.path = pathlib.Path(path)
        self.rows = max(1, int(rows))  # at most this many samples per zarr chunk along time (the recorder's buffer)
        self.slot_chunks = None if slot_chunks is None else tuple(max(1, int(c)) for c in slot_chunks)
        self.tdim = time_dim
        self.is_proj = bool(is_projection)
        self.per_sample = dict(per_sample)
        self.var_attrs = {k: dict(v) for k, v in (var_attrs or {}).items()}
        self.synapses = bool(synapses)
        self.widths: tuple[int, ...] | None = None  # slots (and pre slots) the store has
        self.n_time = 0
        self.n_events = 0
        self._token = object()
        self._key = str(pathlib.Path(os.path.abspath(os.fspath(path))).resolve())

    # -- which sink writes a store ---------------------------------------------------------
    def _take(self):
        """This sink now writes the store; one that wrote it before may no longer (see :meth:`owns`)."""
        _WRITERS[self._key] = self._token

    def owns(self) -> bool:
        """Whether no other sink of this process took the store up since this one did.

        Two Network objects recording to one store (a rerun in the same
        process while the first network is still alive, say) would otherwise
        interleave their chunks; the later one wins and the earlier one is
        refused.

        Returns
        -------
        bool
            True while this sink is the store's writer.
        """
        return _WRITERS.get(self._key) is self._token

    def _check_owner(self):
        if not self.owns():
            raise StoreOwnershipError(f"the store {self.path} was taken up by another recorder (of another Network "
                                      "object) after this one opened it; writing on would mix their samples: give "
                                      "each network's recorders a store of their own")

    # -- writing ---------------------------------------------------------------------------
    def _dims(self, var):
        if self.is_proj:
            return (self.tdim, "slot", "pre_slot")
        return (self.tdim, "batch", "slot") if self.per_sample[var] else (self.tdim, "slot")

    def _batch_dataset(self, chunks, widths) -> xr.Dataset:
        """Chunks of different unit sets as one block of rows in the slot layout (``widths`` slots, NaN / -1 after)."""
        if self.synapses:
            return xr.concat([self._synapse_chunk_dataset(t, ids, data, widths) for t, ids, data in chunks],
                             dim=self.tdim, data_vars="minimal", coords="minimal", compat="override")
        n = sum(int(c[0].size) for c in chunks)
        out: dict[str, Any] = {}
        names = ("unit_id", "pre_unit_id")
        slot_dims = ("slot", "pre_slot")
        n_axes = 2 if self.is_proj else 1
        for v in chunks[0][2]:
            first = chunks[0][2][v]
            shape = (n,) + tuple(first.shape[1:-2 if self.is_proj else -1]) + tuple(widths)
            full = np.full(shape, np.nan)
            row = 0
            for times, _, data in chunks:
                arr, k = data[v], int(times.size)
                if self.is_proj:
                    full[row:row + k, : arr.shape[1], : arr.shape[2]] = arr
                else:
                    full[row:row + k, ..., : arr.shape[-1]] = arr
                row += k
            out[v] = (self._dims(v), full, self.var_attrs.get(v, {}))
        coords: dict[str, Any] = {self.tdim: (self.tdim, np.concatenate([np.asarray(c[0], dtype=np.int64)
                                                                         for c in chunks]))}
        for a in range(n_axes):
            at = np.full((n, widths[a]), -1, dtype=np.int64)
            row = 0
            for times, ids, _ in chunks:
                at[row:row + times.size, : ids[a].size] = ids[a]
                row += times.size
            coords[names[a]] = ((self.tdim, slot_dims[a]), at)
        return xr.Dataset(out, coords=coords)

    def _encoding(self, ds: xr.Dataset, widths) -> dict:
        """zarr chunks of the sample arrays: whole slot chunks (``slot_chunks``), about CHUNK_BYTES along time."""
        slots = self.slot_chunks if self.slot_chunks is not None else tuple(max(1, w) for w in widths)
        per_dim: dict[Any, int] = {"slot": slots[0], "pre_slot": slots[-1]}
        if "synapse_slot" in ds.dims:  # a sparse projection's synapses: links widen them too
            per_dim["synapse_slot"] = max(int(ds.sizes["synapse_slot"]), SLOT_CHUNK)
        out = {}
        for name, var in ds.variables.items():
            if not var.dims or var.dims[0] != self.tdim:
                continue
            inner = tuple(per_dim.get(d, size) for d, size in zip(var.dims[1:], var.shape[1:]))
            row = int(np.prod(inner, dtype=np.int64)) * var.dtype.itemsize
            out[name] = {"chunks": (max(1, min(self.rows, CHUNK_BYTES // max(1, row))),) + inner}
        return out

    def _synapse_chunk_dataset(self, times, ids, data, widths) -> xr.Dataset:
        """A sparse projection's chunk in the store's slot layout, padded to ``widths`` (see :class:`ZarrSink`)."""
        from neurosim.synapse_recording import synapse_dataset

        chunk = (np.asarray(times, dtype=np.int64), ids, data)
        ds = synapse_dataset([chunk], list(data), self.var_attrs | {v: {} for v in data if v not in self.var_attrs},
                             self.tdim, "slots")
        pad = {"slot": widths[0], "pre_slot": widths[1], "synapse_slot": widths[2]}
        ds = ds.pad({d: (0, pad[d] - ds.sizes[d]) for d in pad}, constant_values=np.nan)
        for name in ("unit_id", "pre_unit_id", "post_id", "pre_id"):
            ds[name] = ds[name].fillna(-1).astype(np.int64)
        return ds.assign_coords({self.tdim: (self.tdim, chunk[0])})

    def _events(self, log, start: int) -> xr.Dataset:
        sl = slice(start, len(log))
        return xr.Dataset({
            "event_step": ("event", np.asarray(log.step[sl], dtype=np.int64)),
            "event_kind": ("event", np.asarray(log.kind[sl], dtype="U8")),
            "event_population": ("event", np.asarray(log.population[sl], dtype="U64")),
            "event_unit": ("event", np.asarray(log.unit[sl], dtype=np.int64)),
            "event_partner": ("event", np.asarray(log.partner[sl], dtype=np.int64)),
        })

    def create(self, attrs: dict, log: EventLog, identity: dict | None = None) -> None:
        """Start an empty store, with the network's parameters and its event log so far.

        Whatever is at the path is deleted first: callers ask
        :func:`claim_store` before (a recorder does), which refuses what the
        recorder did not write.

        Parameters
        ----------
        attrs : dict
            Attributes of the store (plain numbers and strings are kept).
        log : neurosim.EventLog
            The network's event log so far.
        identity : dict, optional
            The recorder's identity, kept as the attribute ``neurosim_store``
            so a later run can tell its own store.
        """
        ds = self._events(log, 0)
        ds.attrs.update({k: v for k, v in attrs.items() if isinstance(v, (int, float, str, bool, np.number))})
        ds.attrs["time_dim"] = self.tdim
        if identity is not None:
            ds.attrs[MARKER] = json.dumps(identity)
        _remove(self.path)
        self._take()
        with _quiet():
            ds.to_zarr(self.path, mode="w", consolidated=True,
                       encoding={name: {"chunks": (EVENT_CHUNK,)} for name in _EVENT_ARRAYS})
        self.widths, self.n_time, self.n_events = None, 0, len(log)

    def sync_events(self, log: EventLog) -> None:
        """Write the events logged since the last write.

        Parameters
        ----------
        log : neurosim.EventLog
            The network's event log.
        """
        self._check_owner()
        if self._write_events(log):
            _commit(self.path)

    def _write_events(self, log: EventLog) -> bool:
        """Append the events logged since the last write (no commit); whether there were any."""
        if len(log) <= self.n_events:
            return False
        ev = self._events(log, self.n_events)
        with _quiet():
            g = _group(self.path, "r+")
            # a store begun before partners were logged goes on without them
            names = [n for n in _EVENT_ARRAYS if n in _EVENTS or n in g.array_keys()]
            _append_rows(g, {name: ev[name].values for name in names}, self.n_events)
        self.n_events = len(log)
        return True

    def append(self, times: np.ndarray, ids: tuple[np.ndarray, ...], data: dict, log: EventLog) -> None:
        """Append one chunk and the events since the last call.

        Parameters
        ----------
        times : numpy.ndarray of int64
            The steps of the chunk's samples.
        ids : tuple of numpy.ndarray
            The unit ids alive (post, and pre for a projection).
        data : dict of str to numpy.ndarray
            ``{variable: samples}``, time first.
        log : neurosim.EventLog
            The network's event log.
        """
        self.append_chunks([(times, ids, data)], log)

    def append_chunks(self, chunks: list, log: EventLog) -> None:
        """Append chunks of samples, each with its own unit ids, and the events since the last call; commit once.

        The chunks are laid out as one block of rows (slot layout: each
        row's units in the first slots, NaN / -1 after them), so a batch
        costs a few zarr writes whatever the number of structural changes
        between its chunks: the events, then every sample array resized and
        written (time last), then one commit. A process killed before the
        commit leaves the store as of the previous one (:func:`repair`).

        Parameters
        ----------
        chunks : list of (times, ids, data)
            As :meth:`append` takes them, in time order.
        log : neurosim.EventLog
            The network's event log.
        """
        self._check_owner()
        if not chunks:
            self.sync_events(log)
            return
        zarr = _zarr()
        self._write_events(log)
        # the widths each chunk's ids need: (slot,), (slot, pre_slot), or a sparse projection's (slot, pre_slot,
        # synapse_slot, synapse_slot)
        need = tuple(max(int(c[1][a].size) for c in chunks) for a in range(len(chunks[0][1])))
        with _quiet():
            if self.widths is None:
                self.widths = need
                ds = self._batch_dataset(chunks, need)
                # appending a Dataset replaces the group's attributes with its own: keep the store's (the
                # network's parameters and the neurosim_store marker that tells a later run its own store)
                ds.attrs = dict(_group(self.path, "r").attrs)
                ds.to_zarr(self.path, mode="a", consolidated=False, encoding=self._encoding(ds, need))
            else:
                if any(a > b for a, b in zip(need, self.widths)):
                    self._widen(zarr, need)
                ds = self._batch_dataset(chunks, self.widths)
                rows = {name: var.values for name, var in ds.variables.items() if name != self.tdim}
                rows[self.tdim] = ds[self.tdim].values  # last: a sample's time says it is complete
                _append_rows(_group(self.path, "r+"), rows, self.n_time)
        self.n_time += int(ds.sizes[self.tdim])
        _commit(self.path)

    def _widen(self, zarr, need):
        """More slots on the axes that need them (doubling, so this is rare); fill the new columns."""
        # an axis that does not grow keeps its width (a projection's fixed input axis stays as it is)
        widths = tuple(max(w, 2 * old) if w > old else old for w, old in zip(need, self.widths))
        g = _group(self.path, "r+")
        if self.synapses:
            self._widen_synapses(g, widths)
            return
        names = {"unit_id": 0, "pre_unit_id": 1}
        grown = [w > old for w, old in zip(widths, self.widths)]
        for name in list(g.array_keys()):
            if name in _EVENT_ARRAYS or name == self.tdim:
                continue
            arr = g[name]
            old = arr.shape
            if name in names:
                k = names[name]
                if grown[k]:
                    arr.resize((old[0], widths[k]))
                    if old[0]:
                        arr[:, self.widths[k]:] = -1
                continue
            if self.is_proj:
                arr.resize((old[0], widths[0], widths[1]))
                if old[0] and grown[0]:
                    arr[:, self.widths[0]:, :] = np.nan
                if old[0] and grown[1]:
                    arr[:, :, self.widths[1]:] = np.nan
            else:
                arr.resize(old[:-1] + (widths[0],))
                if old[0]:
                    arr[..., self.widths[0]:] = np.nan
        self.widths = widths

    def _widen_synapses(self, g, widths):
        """:meth:`_widen` of a sparse projection's store: the unit slots and the synapse slots (one width)."""
        widths = widths[:3] + (widths[2],)  # post_id and pre_id share the synapse slots
        which = {"unit_id": 0, "pre_unit_id": 1, "post_id": 2, "pre_id": 3}
        for name in list(g.array_keys()):
            if name in _EVENT_ARRAYS or name == self.tdim:
                continue
            arr = g[name]
            k = which.get(name, 2)  # a recorded variable lies along the synapse slots
            old = arr.shape
            arr.resize((old[0], widths[k]))
            arr[:, self.widths[k]:] = -1 if name in which else np.nan
        self.widths = widths

    def _stored_widths(self, g, keys) -> tuple[int, ...] | None:
        """The slot widths of a store on disk (None before its first chunk)."""
        if "unit_id" not in keys:
            return None
        if self.synapses:
            return (int(g["unit_id"].shape[1]), int(g["pre_unit_id"].shape[1]), int(g["post_id"].shape[1]),
                    int(g["pre_id"].shape[1]))
        return (int(g["unit_id"].shape[1]),) + ((int(g["pre_unit_id"].shape[1]),) if "pre_unit_id" in keys else ())

    def truncate(self, t: int, n_events: int) -> None:
        """Keep the samples of steps ``<= t`` and the first ``n_events`` events (a checkpoint of step ``t`` was loaded).

        Parameters
        ----------
        t : int
            Last step kept.
        n_events : int
            Events kept.
        """
        self._check_owner()
        if not self.path.exists():
            return
        with _quiet():
            self._truncate(_zarr(), t, n_events)
        _commit(self.path)

    def _truncate(self, zarr, t, n_events):
        g = _group(self.path, "r+")
        keys = set(g.array_keys())
        if self.tdim in keys:
            times = np.asarray(g[self.tdim][:])
            # rows of a chunk cut short by a kill read time 0 (the fill value; samples are at steps >= 1)
            ok = (times >= 1) & (times <= t)
            keep = int(times.size if ok.all() else np.argmin(ok))
            for name in keys:
                arr = g[name]
                if name not in _EVENT_ARRAYS and arr.shape and arr.shape[0] == times.size:
                    arr.resize((keep,) + tuple(arr.shape[1:]))
            self.n_time = keep
            ids = np.asarray(g["unit_id"][:]) if "unit_id" in keys else None
            if ids is not None and self.widths is None and ids.size:
                self.widths = self._stored_widths(g, keys)
        for name in _EVENT_ARRAYS:
            if name in keys:
                g[name].resize((min(n_events, g[name].shape[0]),))
        self.n_events = min(n_events, self.n_events) if self.n_events else n_events

    def attach_existing(self) -> None:
        """Take up a store written by an earlier process (to resume into it)."""
        self._take()
        repair(self.path, self.tdim)
        with _quiet():
            g = _group(self.path, "r")
            keys = set(g.array_keys())
        self.n_time = int(g[self.tdim].shape[0]) if self.tdim in keys else 0
        self.n_events = int(g["event_step"].shape[0]) if "event_step" in keys else 0
        if "unit_id" in keys and self.n_time:
            self.widths = self._stored_widths(g, keys)


def _append_rows(g, rows: dict, start: int):
    """Append ``rows`` (arrays sharing their first axis) at ``start``: every array resized first, then written.

    Resizing is a small metadata write per array; the data follow, in the
    order given. A process killed while the data are written leaves every
    array the same length (the unwritten rows read as the fill value), so
    ``xarray.open_zarr`` reads the store; only a kill within the resizes
    leaves lengths that differ, which :func:`repair` (and a resumed run)
    cuts back to the shortest.
    """
    n = next(iter(rows.values())).shape[0]
    for name, values in rows.items():
        g[name].resize((start + n,) + tuple(values.shape[1:]))
    for name, values in rows.items():
        g[name][start:start + n] = values


def repair(path: str | os.PathLike, time_dim: str = "time") -> None:
    """Cut every array back to its shape at the last commit (what a process killed mid-chunk left beyond it).

    Without consolidated metadata (a store written by an older version, or
    killed before its first commit), cut the time and event axes to their
    shortest array. The temporary files of zarr writes that ``kill -9``
    interrupted (``<key>.<uuid4 hex>.partial``) are deleted first.

    Parameters
    ----------
    path : str or path-like
        The store's folder.
    time_dim : str, optional
        Name of its time dimension.
    """
    try:
        committed = _committed_shapes(path)
    except Exception:  # noqa: BLE001 -- no (readable) consolidated metadata: fall back to the shortest
        committed = None
    _remove_write_residue(path)  # before zarr lists the group (zarr 3 warns about each entry it cannot read)
    with _quiet():
        g = _group(path, "r+")
        keys = set(g.array_keys())
        if committed is not None:
            for k in keys:
                if k in committed and tuple(g[k].shape) != committed[k]:
                    g[k].resize(committed[k])
        else:
            for dim_arrays in ([k for k in keys if k not in _EVENT_ARRAYS], [k for k in keys if k in _EVENT_ARRAYS]):
                along = [k for k in dim_arrays if g[k].shape and (k == time_dim or k in _EVENT_ARRAYS or
                                                                (time_dim in keys and g[k].ndim >= 1 and
                                                                 _first_dim(g[k]) == time_dim))]
                if not along:
                    continue
                n = min(g[k].shape[0] for k in along)
                for k in along:
                    if g[k].shape[0] != n:
                        g[k].resize((n,) + tuple(g[k].shape[1:]))
    _commit(path)


def _remove_write_residue(path) -> None:
    """Delete the temporary files interrupted zarr writes left: beside the store's metadata, and in its arrays."""
    root = pathlib.Path(path)
    own = _ZARR_FILES | {e.name for e in root.iterdir() if e.is_dir()}
    for entry in root.iterdir():
        if entry.is_file() and _is_write_residue(entry.name, own):
            entry.unlink()
        elif entry.is_dir() and entry.name in own:
            for f in entry.rglob("*.partial"):
                if f.is_file() and _WRITE_RESIDUE.match(f.name):
                    f.unlink()


def _first_dim(arr) -> str | None:
    """The name of an array's first dimension, from zarr 3 metadata or xarray's zarr 2 attribute."""
    names = getattr(getattr(arr, "metadata", None), "dimension_names", None)
    if names:
        return names[0]
    dims = arr.attrs.get("_ARRAY_DIMENSIONS")
    return dims[0] if dims else None


def open_store(path: str | os.PathLike, layout: str = "slots", dt: float | None = None) -> xr.Dataset:
    """Read a recording store (in memory); ``layout="dense"`` aligns units by stable id (see :func:`slots_to_dense`).

    Parameters
    ----------
    path : str or path-like
        The store's folder.
    layout : {"slots", "dense"}, optional
        As stored, or dense by unit id.
    dt : float, optional
        Accepted and not used: time is read as stored.

    Returns
    -------
    xarray.Dataset
        The recording, loaded into memory.

    Raises
    ------
    ValueError
        If ``layout`` is neither.
    """
    with _quiet():
        with xr.open_zarr(path, consolidated=True) as ds:
            ds = ds.load()
    # the store keeps event arrays from its creation on (they are appended to); a recording in which no unit
    # was born or killed shows none, as Recorder.to_dataset does (also for stores written before this)
    empty = [name for name in _EVENT_ARRAYS if name in ds and ds[name].size == 0]
    ds = ds.drop_vars(empty)
    if "event" in ds.coords and "event" not in ds.dims:
        ds = ds.drop_vars("event")
    if layout == "dense":
        ds = slots_to_dense(ds)
    elif layout != "slots":
        raise ValueError(f"layout must be 'slots' or 'dense'; got {layout!r}")
    return ds


def slots_to_dense(ds: xr.Dataset) -> xr.Dataset:
    """The dense layout of a slot-layout recording: dims ``unit`` (and ``pre_unit``) over every id seen, NaN where absent.

    Parameters
    ----------
    ds : xarray.Dataset
        A recording in the slot layout (``unit_id`` coordinate); any other
        Dataset is returned as it is.

    Returns
    -------
    xarray.Dataset
        The dense layout.

    Raises
    ------
    ValueError
        If a variable has a ``pre_slot`` dimension without ``pre_unit_id``.
    """
    if "synapse_slot" in ds.dims:  # a sparse projection's synapses
        from neurosim.synapse_recording import synapse_slots_to_dense

        return synapse_slots_to_dense(ds)
    if "unit_id" not in ds.coords and "unit_id" not in ds:
        return ds
    ids = np.asarray(ds["unit_id"].values)
    units = np.unique(ids[ids >= 0])
    pre_ids = np.asarray(ds["pre_unit_id"].values) if "pre_unit_id" in ds.coords else None
    pre_units = np.unique(pre_ids[pre_ids >= 0]) if pre_ids is not None else None
    tdim = ds["unit_id"].dims[0]
    out: dict[Any, Any] = {}
    rows, slots = np.nonzero(ids >= 0)
    cols = np.searchsorted(units, ids[rows, slots])
    for name, var in ds.data_vars.items():
        if "slot" not in var.dims:
            out[name] = var
            continue
        vals = np.asarray(var.values)
        if "pre_slot" in var.dims:
            if pre_ids is None or pre_units is None:
                raise ValueError(f"variable {name!r} has a pre_slot dimension but the recording has no pre_unit_id coordinate")
            prow, pslot = np.nonzero(pre_ids >= 0)
            dense = np.full((vals.shape[0], units.size, pre_units.size), np.nan)
            pcols = np.full(pre_ids.shape, -1)
            pcols[prow, pslot] = np.searchsorted(pre_units, pre_ids[prow, pslot])
            for t in range(vals.shape[0]):
                r = np.flatnonzero(ids[t] >= 0)
                c = np.flatnonzero(pre_ids[t] >= 0)
                dense[t][np.ix_(np.searchsorted(units, ids[t, r]), pcols[t, c])] = vals[t][np.ix_(r, c)]
            out[name] = ((tdim, "unit", "pre_unit"), dense, var.attrs)
        else:
            moved = np.moveaxis(vals, var.dims.index("slot"), -1)
            dense = np.full(moved.shape[:-1] + (units.size,), np.nan)
            dense[rows, ..., cols] = moved[rows, ..., slots]
            dims = tuple(d for d in var.dims if d != "slot") + ("unit",)
            out[name] = (dims, dense, var.attrs)
    coords: dict[Any, Any] = {tdim: ds[tdim], "unit": units}
    if pre_units is not None:
        coords["pre_unit"] = pre_units
    res = xr.Dataset(out, coords=coords, attrs=dict(ds.attrs))
    res.attrs["layout"] = "dense"
    return res
