"""Checkpoints: the full state of a network as arrays plus JSON metadata.

A checkpoint is one ``.npz`` file (loaded with ``allow_pickle=False``) whose
entry ``__meta__`` is a JSON document: the step counter, the network's RNG
state, each population's next id, the event log, a structural summary and
the network's parameters (``network.flat_params()`` without the population
sizes, which events change), used to check that the checkpoint is restored
into the same circuit with the same parameters. Every state array (unit
ids, population variables, weights, masks, per-dynamics counters) is an
entry of its own.

The fingerprint a checkpoint is compared against covers everything that
changes the numbers of the next step: the structure, every parameter
(a schedule by its kind and its own parameters, e.g.
``InverseTime(start=0.02, half_life=50.0, floor=0.0)``, not just the word
"schedule"), a fixed group family (by a digest of its groups) and the
masks (whether a projection has one, and its entries between the units
alive both in the checkpoint and in the network).

Paths: :func:`save_checkpoint` and :func:`load_checkpoint` take the same
path, with or without the ``.npz`` suffix (``"out/a"`` and ``"out/a.npz"``
name the same file). Saving replaces a file at the path only when it is a
checkpoint of the same circuit (or with ``overwrite=True``): a user's file
there is refused, never overwritten.

Loading is all or none: every array and every metadata field is read and
checked (presence, shape, dtype, consistency with the saved ids, finite
values, the zero diagonal of a lateral projection and zero weights outside
a mask, the invariants the engine keeps) before the first one is assigned,
so a damaged (truncated, hand-edited) or mismatched checkpoint raises
``ValueError`` naming the file and what is wrong, with the network
untouched.

Recordings roll back with the state: after :func:`load_checkpoint` the
network's recorders keep only the samples taken at steps ``<= t`` of the
checkpoint, and the event log is the checkpoint's, so save at ``t``, run,
load, run again gives the recordings of an uninterrupted run (the samples
after ``t`` of the abandoned continuation are dropped; a recorder of a
network freshly built for the load starts empty at ``t``). Recordings
themselves are not stored in the checkpoint: save them with
``Recorder.to_dataset().to_netcdf(...)``.

Inputs need no state of their own: streams are functions of the step index
(:mod:`neurosim.streams`), so restoring ``t`` restores them.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim._validation import check_bool
from neurosim.events import EventLog

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["save_checkpoint", "load_checkpoint", "checkpoint_path", "check_checkpoint_target",
           "CheckpointParamsWarning"]

FORMAT = "neurosim-checkpoint-2"
_OLD_FORMATS = ("neurosim-checkpoint-1",)


class CheckpointParamsWarning(UserWarning):
    """A checkpoint was loaded with ``strict=False`` into a network whose parameters differ from the saved ones."""


def checkpoint_path(path: str | os.PathLike) -> Path:
    """The file a checkpoint path names: ``path`` with ``.npz`` appended unless it already ends so.

    Parameters
    ----------
    path : str or path-like
        As given to :meth:`neurosim.Network.save`.

    Returns
    -------
    pathlib.Path
        The file.

    Examples
    --------
    >>> from neurosim.io import checkpoint_path
    >>> checkpoint_path("run/ckpt").name, checkpoint_path("run/ckpt.npz").name
    ('ckpt.npz', 'ckpt.npz')
    """
    path = Path(path)
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def _structure(net) -> dict:
    return {
        "populations": sorted(net.populations),
        "projections": {n: [p.pre.name, p.post.name] + (["sparse"] if p.sparse else [])
                        for n, p in sorted(net.projections.items())},
        "unit_rules": [type(r).__name__ for r in net.unit_rules],
        "rules": {n: type(p.rule).__name__ if p.rule is not None else None for n, p in sorted(net.projections.items())},
        "inputs": {i.population.name: int(i.stream.dim) for i in net.inputs},
        "signals": [s.name for s in net.signals()],
        "batch": net.batch,
    }


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _parametrized(net):
    """``(flat_params prefix, component)`` of every component with declared parameters."""
    for pop in net.populations.values():
        if pop.dynamics is not None:
            yield f"{pop.name}.dynamics.", pop.dynamics
    for proj in net.projections.values():
        if proj.rule is not None:
            yield f"{proj.name}.rule.", proj.rule
    for i, rule in enumerate(net.unit_rules):
        yield f"unit_rule{i}.", rule
    for i, comp in enumerate(net.components):
        yield f"component{i}.", comp


def _describe(value):
    """A schedule in full (its kind and parameters), or None for a value ``flat_params`` already gives exactly."""
    from neurosim.schedules import Function, Schedule

    if isinstance(value, Function):
        fn = value.fn
        return f"Function({getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', repr(fn))})"
    if isinstance(value, Schedule):
        return repr(value)
    return None


def _params(net) -> dict:
    """The network's parameters as JSON values, without the population sizes (state that events change)."""
    sizes = {f"{name}.size" for name in net.populations}
    flat = {k: _jsonable(v) for k, v in net.flat_params().items() if k not in sizes}
    # flat_params names every schedule by the word "schedule": a checkpoint of InverseTime(0.02, 50) would load
    # silently into a network following LinearRamp(0.5, 0, 10); the fingerprint describes schedules in full
    for prefix, comp in _parametrized(net):
        for name in getattr(type(comp), "declared", dict)():
            described = _describe(comp.__dict__.get(name))
            if described is not None:
                flat[prefix + name] = described
        groups = _groups_digest(comp)
        if groups is not None:
            # params() gives a group family by its kind and counts only: two families of equal counts differ
            flat[prefix + "groups_digest"] = groups
    return json.loads(json.dumps(flat))


def _groups_digest(comp):
    """A digest of a fixed group family (``StructuredSparseCode(groups=...)``); None when there is none.

    A family left to ``None`` follows the population's size (singletons),
    which events change: the size is state, so it is not compared.
    """
    from neurosim.groups import GroupStructure, as_groups

    given = comp.__dict__.get("_groups_given")
    if given is None:
        return None
    try:
        groups = comp.__dict__.get("groups")
        if not isinstance(groups, GroupStructure):
            groups = as_groups(given, comp.population.size)
    except Exception:  # noqa: BLE001 -- a family that does not fit is refused when the network runs
        return f"unresolved {type(given).__name__}"
    digest = hashlib.sha256()
    for arr in (groups.indptr, groups.indices, groups.weights):
        digest.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return f"{groups.kind} family of {groups.n_groups} groups over {groups.n_units} units, sha256 {digest.hexdigest()[:16]}"


def _mask_differences(net, state: dict) -> list:
    """Masks of the checkpoint against the network's: presence, and entries between units alive in both.

    A mask grows with births (newborn units are connected) and shrinks with
    deaths, so a checkpoint of a later step has other shapes than a freshly
    built network; the units alive in both must agree synapse by synapse.
    """
    out = []
    for name, proj in net.projections.items():
        if proj.sparse:
            continue  # its synapses are state, drawn from the seed and changed by events, like its weights
        saved, live = state["projs"][name][1], proj.mask
        if saved is None and live is None:
            continue
        if saved is None or live is None:
            what = lambda m: "none" if m is None else f"a {m.shape[0]} x {m.shape[1]} mask"  # noqa: E731
            out.append(f"{name}.mask: checkpoint {what(saved)}, this network {what(live)}")
            continue
        post_s, pre_s = state["pops"][proj.post.name][0], state["pops"][proj.pre.name][0]
        post_ids, i_post_s, i_post = np.intersect1d(post_s, proj.post.ids, return_indices=True)
        pre_ids, i_pre_s, i_pre = np.intersect1d(pre_s, proj.pre.ids, return_indices=True)
        differ = saved[np.ix_(i_post_s, i_pre_s)] != live[np.ix_(i_post, i_pre)]
        if differ.any():
            r, c = np.argwhere(differ)[0]
            out.append(f"{name}.mask: {int(differ.sum())} synapse(s) between units alive in both differ "
                       f"(first: post unit {int(post_ids[r])}, pre unit {int(pre_ids[c])}: checkpoint "
                       f"{bool(saved[i_post_s[r], i_pre_s[c]])}, this network {bool(live[i_post[r], i_pre[c]])})")
    return out


def _component_state(net) -> dict:
    """``{"comp/<k>/<class>/<name>": array}`` of every stateful rule and component (``Component.state``)."""
    comps = list(net.unit_rules) + list(net.components)
    comps += [p.rule for p in net.projections.values() if p.rule is not None]
    out = {}
    for k, comp in enumerate(comps):
        for name, arr in comp.state().items():
            out[f"comp/{k}/{type(comp).__name__}/{name}"] = arr
    return out


def check_checkpoint_target(net: Network, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """The file :func:`save_checkpoint` would write; ``ValueError`` if that would replace what it must not.

    A file already at the path is replaced only when it is a neurosim
    checkpoint of the same circuit (the structure :func:`load_checkpoint`
    compares: an earlier checkpoint of this run, or of a rerun of its
    script), or with ``overwrite=True``; anything else (a user's ``.npz``,
    another circuit's checkpoint, a file that cannot be read) is refused
    before anything is written.

    Parameters
    ----------
    net : neurosim.Network
        The network that would save.
    path : str or path-like
        The checkpoint path (``.npz`` optional).
    overwrite : bool, default=False
        Accept any file there.

    Returns
    -------
    pathlib.Path
        The file :func:`save_checkpoint` would write.

    Raises
    ------
    ValueError
        If the path is a folder, or a file there is not a checkpoint of the
        same circuit and ``overwrite`` is false.
    """
    path = checkpoint_path(path)
    if overwrite or not (path.exists() or path.is_symlink()):
        return path
    fix = "choose another path or delete it (Network.save(path, overwrite=True) replaces it)"
    if path.is_dir():
        raise ValueError(f"the checkpoint path {path} is a folder; {fix}")
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["__meta__"]))
        ours = isinstance(meta, dict) and (meta.get("format") == FORMAT or meta.get("format") in _OLD_FORMATS)
    except Exception:  # noqa: BLE001 -- whatever it is, it is not a checkpoint this library can read
        ours = False
    if not ours:
        raise ValueError(f"{path} exists and is not a neurosim checkpoint; saving a checkpoint there would "
                         f"replace it: {fix}")
    if meta.get("structure") != _structure(net):
        raise ValueError(f"{path} is a checkpoint of another circuit ({meta.get('structure')}); saving this "
                         f"network's there would replace it: {fix}")
    return path


def save_checkpoint(net: Network, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write ``net``'s state to ``path`` (``.npz`` appended if missing); return the path written.

    Parameters
    ----------
    net : Network
        The network whose state is saved (populations, projections,
        component state, ``t``, RNG, next ids, event log, parameters).
    path : str or Path
        Where to write; the file is replaced atomically.
    overwrite : bool, default=False
        Replace whatever file is at the path. Default ``False``: only a
        checkpoint of the same circuit is replaced; anything else there is
        refused with ``ValueError`` (see :func:`check_checkpoint_target`).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    path = check_checkpoint_target(net, path, check_bool("overwrite", overwrite))
    arrays: dict[str, Any] = {}
    for name, pop in net.populations.items():
        arrays[f"pop/{name}/ids"] = pop.ids
        for var, a in pop.state.items():
            arrays[f"pop/{name}/var/{var}"] = a
        if pop.dynamics is not None and hasattr(pop.dynamics, "info"):
            arrays[f"pop/{name}/dynamics_info"] = pop.dynamics.info
    for name, proj in net.projections.items():
        arrays[f"proj/{name}/weights"] = proj.weights
        if proj.sparse:
            arrays[f"proj/{name}/indptr"] = proj.synapse_index.indptr
            arrays[f"proj/{name}/indices"] = proj.synapse_index.indices
        if proj.mask is not None:
            arrays[f"proj/{name}/mask"] = proj.mask
        for k, a in proj.arrays.items():
            arrays[f"proj/{name}/array/{k}"] = a
    for key, arr in _component_state(net).items():
        arrays[key] = arr
    meta = {
        "format": FORMAT,
        "t": net.t,
        "seed": net.seed,
        "rng": net.rng.bit_generator.state,
        "next_id": {n: int(p.next_id) for n, p in net.populations.items()},
        "event_log": net.event_log.to_dict(),
        "structure": _structure(net),
        "params": _params(net),
    }
    arrays["__meta__"] = np.array(json.dumps(meta))
    path.parent.mkdir(parents=True, exist_ok=True)
    # written beside and renamed: a process killed mid-write leaves the previous checkpoint intact
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path


def _param_differences(saved: dict, current: dict) -> list:
    out = []
    for key in sorted(set(saved) | set(current)):
        a, b = saved.get(key, "<absent>"), current.get(key, "<absent>")
        if json.dumps(a) != json.dumps(b):
            out.append(f"{key}: checkpoint {a!r}, this network {b!r}")
    return out


def load_checkpoint(net: Network, path: str | os.PathLike, strict: bool = True) -> Network:
    """Restore a checkpoint into ``net``, built by the same code with the same parameters.

    Parameters
    ----------
    net : Network
        The network to restore, built as the one that saved.
    path : str or Path
        The path given to :func:`save_checkpoint` (``.npz`` optional).
    strict : bool, default=True
        Refuse (``ValueError``) a checkpoint whose saved parameters differ
        from ``net.flat_params()`` (population sizes excepted; schedules
        compared by kind and parameters), or whose masks differ from the
        network's (module docstring); with
        ``False`` load anyway and warn :class:`CheckpointParamsWarning`
        with the list of differences. A checkpoint of the earlier format
        (``neurosim-checkpoint-1``) stores no parameters and loads only
        with ``strict=False``.

    Returns
    -------
    Network
        ``net``, with state, ``t``, RNG, next ids and event log of the
        checkpoint, and recordings rolled back to its step (module docstring).

    Raises
    ------
    FileNotFoundError
        No file at the path.
    ValueError
        Not a checkpoint (also a truncated or otherwise unreadable file),
        another structure, other parameters or masks (``strict``), a
        missing or malformed entry, or values the engine never produces
        (NaN/Inf, a nonzero diagonal of a lateral projection, nonzero
        weights outside a mask); the message names the file, and nothing
        is changed then.
    """
    _assign(net, _checked_load(net, path, strict))
    return net


def _checked_load(net, path, strict: bool = True) -> dict:
    """Read and check a checkpoint for ``net`` (raising as :func:`load_checkpoint` does); assign nothing.

    Returns the state :func:`_assign` puts in place, so a caller can refuse
    it for reasons of its own (``run(resume=True)``: a checkpoint past the
    run's end) with the network still untouched.
    """
    strict = check_bool("strict", strict)
    path = checkpoint_path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
        meta = json.loads(str(data.pop("__meta__")))
    except Exception as exc:  # noqa: BLE001 -- a truncated zip raises BadZipFile, EOFError, zlib.error, ...
        raise ValueError(f"{path} is not a neurosim checkpoint (unreadable: {type(exc).__name__}: {exc}); "
                         "nothing was loaded") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path} is not a neurosim checkpoint (its metadata is a JSON {type(meta).__name__}, "
                         "not an object); nothing was loaded")
    fmt = meta.get("format")
    if fmt != FORMAT and fmt not in _OLD_FORMATS:
        raise ValueError(f"{path} is not a {FORMAT} file (format={fmt!r})")
    if meta.get("structure") != _structure(net):
        raise ValueError(
            f"checkpoint structure {meta.get('structure')} does not match this network {_structure(net)}; "
            "restore into a network built by the same code"
        )
    state = _read_state(net, path, data, meta)
    if isinstance(meta.get("params"), dict):
        diffs = _param_differences(meta["params"], _params(net))
    else:
        diffs = [f"(the checkpoint, format {fmt!r}, stores no parameters to compare)"]
    diffs += _mask_differences(net, state)
    if diffs:
        text = f"checkpoint {path} was saved with other parameters than this network's:\n  " + "\n  ".join(diffs)
        if strict:
            raise ValueError(text + "\nbuild the network with the saved parameters, or load(path, strict=False) to "
                                    "load the state anyway")
        warnings.warn(text, CheckpointParamsWarning, stacklevel=4)
    for rec in net.recorders.values():
        # a recorder's store is taken up when the state is assigned: refuse one it may not write now
        rec.check_store(fresh=False)
        rec.check_writer()
    return state


def _read_state(net, path, data, meta) -> dict:
    """Every value the load will assign, checked; raises ValueError naming the bad entry, assigning nothing."""
    def entry(key, what):
        if key not in data:
            raise ValueError(f"checkpoint {path} lacks {key!r} ({what}); nothing was loaded")
        return data[key]

    def shaped(key, what, arr, shape, kinds):
        if arr.shape != shape or arr.dtype.kind not in kinds:
            raise ValueError(f"checkpoint {path}: {key!r} ({what}) has shape {arr.shape} and dtype {arr.dtype}; "
                             f"expected shape {shape} and dtype kind {kinds!r}; nothing was loaded")
        return arr

    def finite(key, what, arr):
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[:5].tolist()
            raise ValueError(f"checkpoint {path}: {key!r} ({what}) holds NaN/Inf (at index {bad}); nothing was loaded")
        return arr

    for key, kind in (("t", int), ("rng", dict), ("next_id", dict), ("event_log", dict)):
        if not isinstance(meta.get(key), kind):
            raise ValueError(f"checkpoint {path} lacks metadata {key!r} (a JSON {kind.__name__}); nothing was loaded")
    out: dict[str, Any] = {"pops": {}, "projs": {}}
    sizes = {}
    for name, pop in net.populations.items():
        ids = entry(f"pop/{name}/ids", f"unit ids of population {name!r}")
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or np.unique(ids).size != ids.size:
            raise ValueError(f"checkpoint {path}: unit ids of population {name!r} must be distinct integers; "
                             f"got shape {ids.shape}, dtype {ids.dtype}; nothing was loaded")
        n = ids.size
        next_id = meta["next_id"].get(name)
        if not isinstance(next_id, int) or (n and next_id <= int(ids.max())):
            raise ValueError(f"checkpoint {path}: next id {next_id!r} of population {name!r} must be an integer "
                             f"above every saved id; nothing was loaded")
        state = {}
        for var in pop.state:
            key = f"pop/{name}/var/{var}"
            shape = pop.variable_shape(var, n)
            state[var] = finite(key, f"variable {var!r} of population {name!r}", np.ascontiguousarray(
                shaped(key, f"variable {var!r} of population {name!r}",
                       entry(key, f"variable {var!r} of population {name!r}"), shape, "f"), dtype=np.float64))
        info = None
        key = f"pop/{name}/dynamics_info"
        if key in data and pop.dynamics is not None and hasattr(pop.dynamics, "info"):
            info = shaped(key, f"solver counters of {name!r}", data[key], pop.dynamics.info.shape, "iu")
        out["pops"][name] = (ids.astype(np.int64), next_id, state, info)
        sizes[name] = n
    for name, proj in net.projections.items():
        shape = (sizes[proj.post.name], sizes[proj.pre.name])
        if proj.sparse:
            out["projs"][name] = _read_sparse_projection(path, data, name, proj, shape, entry, shaped, finite)
            continue
        key = f"proj/{name}/weights"
        w = shaped(key, f"weights of projection {name!r}", entry(key, f"weights of projection {name!r}"), shape, "f")
        finite(key, f"weights of projection {name!r}", w)
        wkey = key
        key = f"proj/{name}/mask"
        m = shaped(key, f"mask of projection {name!r}", data[key], shape, "b") if key in data else None
        # the invariants the engine keeps (neurosim.synapses): no self-synapses in a lateral projection, and
        # no weight outside the mask; a checkpoint breaking them was edited or damaged, and would run on wrongly
        if proj.lateral and (np.any(np.diagonal(w) != 0) or (m is not None and np.any(np.diagonal(m)))):
            raise ValueError(f"checkpoint {path}: {wkey!r} (weights of the lateral projection {name!r}) has "
                             f"self-synapses on its diagonal (nonzero weights or mask entries at "
                             f"{np.flatnonzero(np.diagonal(w) != 0)[:5].tolist()}); a lateral projection's diagonal "
                             "is zero; nothing was loaded")
        if m is not None and np.any(w[~m] != 0):
            raise ValueError(f"checkpoint {path}: {wkey!r} (weights of projection {name!r}) has "
                             f"{int(np.count_nonzero(w[~m]))} nonzero weight(s) outside its mask (first at (post, pre) "
                             f"index {np.argwhere((w != 0) & ~m)[0].tolist()}); nothing was loaded")
        extra = _read_projection_arrays(name, proj, shape, entry, shaped, finite)
        out["projs"][name] = (np.array(w, dtype=np.float64, order="C"), None if m is None else np.array(m, order="C"),
                              extra)
    out["comps"] = {}
    for key, arr in _component_state(net).items():
        got = shaped(key, f"state {key!r} of a component", entry(key, f"state {key!r} of a component"),
                     arr.shape, arr.dtype.kind)
        out["comps"][key] = got
    rng = type(net.rng.bit_generator)()
    try:
        rng.state = meta["rng"]
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"checkpoint {path}: RNG state does not fit this network's generator "
                         f"{type(net.rng.bit_generator).__name__} ({exc}); nothing was loaded") from None
    try:
        log = EventLog.from_dict(meta["event_log"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"checkpoint {path}: malformed event log ({exc}); nothing was loaded") from None
    if not isinstance(meta["t"], int) or meta["t"] < 0:
        raise ValueError(f"checkpoint {path}: step counter t must be an integer >= 0; got {meta['t']!r}")
    out.update(t=meta["t"], rng=meta["rng"], log=log)
    return out


def _read_sparse_projection(path, data, name, proj, shape, entry, shaped, finite) -> tuple:
    """``(weights, SynapseIndex, arrays)`` of a sparse projection's checkpoint entries, checked."""
    from neurosim.synapse_index import SynapseIndex

    what = f"synapse index of projection {name!r}"
    indptr = shaped(f"proj/{name}/indptr", what, entry(f"proj/{name}/indptr", what), (shape[0] + 1,), "iu")
    indices = entry(f"proj/{name}/indices", what)
    if indices.ndim != 1 or indices.dtype.kind not in "iu":
        raise ValueError(f"checkpoint {path}: 'proj/{name}/indices' ({what}) must be a 1-D integer array; got "
                         f"shape {indices.shape}, dtype {indices.dtype}; nothing was loaded")
    try:
        index = SynapseIndex(indptr, indices, shape[1])
    except ValueError as exc:
        raise ValueError(f"checkpoint {path}: {what} is damaged ({exc}); nothing was loaded") from None
    c = proj.connectivity
    if proj.lateral and not (c is not None and c.self_connections) and index.has_self_synapses():
        raise ValueError(f"checkpoint {path}: the lateral projection {name!r} has self-synapses, which its "
                         "connectivity does not allow; nothing was loaded")
    if not (c is not None and c.multapses) and index.has_multapses():
        raise ValueError(f"checkpoint {path}: projection {name!r} has multapses (a pair joined twice), which its "
                         "connectivity does not allow; nothing was loaded")
    n = (index.size,)
    key = f"proj/{name}/weights"
    w = finite(key, f"weights of projection {name!r}",
               shaped(key, f"weights of projection {name!r}", entry(key, f"weights of projection {name!r}"), n, "f"))
    extra = _read_projection_arrays(name, proj, n, entry, shaped, finite)
    return np.array(w, dtype=np.float64, order="C"), index, extra


def _read_projection_arrays(name, proj, shape, entry, shaped, finite) -> dict:
    """The per-synapse arrays of a projection's checkpoint entries (``shape``: the weights'), checked, as float64."""
    extra = {}
    for k in proj.arrays:
        key = f"proj/{name}/array/{k}"
        what = f"array {k!r} of projection {name!r}"
        extra[k] = finite(key, what, np.array(shaped(key, what, entry(key, what), shape, "f"), dtype=np.float64,
                                              order="C"))
    return extra


def _assign(net, s: dict):
    for name, (ids, next_id, state, info) in s["pops"].items():
        pop = net.populations[name]
        pop.ids, pop.next_id = ids, next_id
        for var, arr in state.items():
            pop.state[var] = arr
        if info is not None:
            pop.dynamics.info[:] = info
    for name, (w, m, extra) in s["projs"].items():
        net.projections[name]._commit([w, m, extra])
    live = _component_state(net)
    for key, arr in s["comps"].items():
        live[key][...] = arr
    net.t = s["t"]
    net.rng.bit_generator.state = s["rng"]
    net.event_log = s["log"]
    for rec in net.recorders.values():
        rec.discard_after(net.t)
        rec.prepare()
    net._changed()
