"""Checkpoints: the full state of a network as arrays plus JSON metadata.

A checkpoint is one ``.npz`` file (loaded with ``allow_pickle=False``) whose
entry ``__meta__`` is a JSON document: the step counter, the network's RNG
state, each population's next id, the event log and a structural summary
used to check that the checkpoint is restored into the same circuit. Every
state array (unit ids, population variables, weights, masks, per-dynamics
counters) is an entry of its own. Recordings are not part of the state:
save them with ``Recorder.to_dataset().to_netcdf(...)``.

Inputs need no state of their own: streams are functions of the step index
(:mod:`neurosim.streams`), so restoring ``t`` restores them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from neurosim.events import EventLog

__all__ = ["save_checkpoint", "load_checkpoint"]

FORMAT = "neurosim-checkpoint-1"


def _structure(net) -> dict:
    return {
        "populations": sorted(net.populations),
        "projections": {n: [p.pre.name, p.post.name] for n, p in sorted(net.projections.items())},
        "unit_rules": [type(r).__name__ for r in net.unit_rules],
        "rules": {n: type(p.rule).__name__ if p.rule is not None else None for n, p in sorted(net.projections.items())},
        "inputs": {i.population.name: int(i.stream.dim) for i in net.inputs},
        "signals": [s.name for s in net.signals()],
        "batch": net.batch,
    }


def save_checkpoint(net, path) -> Path:
    """Write ``net``'s state to ``path`` (``.npz`` appended if missing); return the path."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(path.suffix + ".npz")
    arrays = {}
    for name, pop in net.populations.items():
        arrays[f"pop/{name}/ids"] = pop.ids
        for var, a in pop.state.items():
            arrays[f"pop/{name}/var/{var}"] = a
        if pop.dynamics is not None and hasattr(pop.dynamics, "info"):
            arrays[f"pop/{name}/dynamics_info"] = pop.dynamics.info
    for name, proj in net.projections.items():
        arrays[f"proj/{name}/weights"] = proj.weights
        if proj.mask is not None:
            arrays[f"proj/{name}/mask"] = proj.mask
    meta = {
        "format": FORMAT,
        "t": net.t,
        "seed": net.seed,
        "rng": net.rng.bit_generator.state,
        "next_id": {n: int(p.next_id) for n, p in net.populations.items()},
        "event_log": net.event_log.to_dict(),
        "structure": _structure(net),
    }
    arrays["__meta__"] = np.array(json.dumps(meta))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return path


def load_checkpoint(net, path):
    """Restore a checkpoint into ``net``, built by the same code that built the saved one."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    meta = json.loads(str(data.pop("__meta__")))
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} file (format={meta.get('format')!r})")
    if meta["structure"] != _structure(net):
        raise ValueError(
            f"checkpoint structure {meta['structure']} does not match this network {_structure(net)}; "
            "restore into a network built by the same code"
        )
    for name, pop in net.populations.items():
        pop.ids = data[f"pop/{name}/ids"].astype(np.int64)
        pop.next_id = int(meta["next_id"][name])
        for var in list(pop.state):
            key = f"pop/{name}/var/{var}"
            if key not in data:
                raise ValueError(f"checkpoint lacks variable {var!r} of population {name!r}")
            pop.state[var] = np.ascontiguousarray(data[key])
        key = f"pop/{name}/dynamics_info"
        if key in data and pop.dynamics is not None:
            pop.dynamics.info[:] = data[key]
    for name, proj in net.projections.items():
        proj.weights = np.ascontiguousarray(data[f"proj/{name}/weights"])
        key = f"proj/{name}/mask"
        proj.mask = np.ascontiguousarray(data[key]) if key in data else None
    net.t = int(meta["t"])
    net.rng.bit_generator.state = meta["rng"]
    net.event_log = EventLog.from_dict(meta["event_log"])
    for rec in net.recorders.values():
        rec.prepare()
    net._changed()
    return net
