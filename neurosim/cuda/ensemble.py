"""Many similarity-matching networks on one GPU: one CUDA block per member, a chunk of steps per launch.

:meth:`neurosim.Ensemble.run` with ``backend="cuda"`` runs here. Members are
independent, so a block steps its member through a whole chunk of steps
(input, drive, signal, Jacobi, ``mu``, both weight updates, record) with
only block-level synchronisation: one launch per chunk for the whole
ensemble. The threads of a block share the member's units and weights.

Supported: the circuit of :func:`neurosim.models.similarity_matching.build_network`
(any regularizer): an input population, a population with ``Jacobi`` dynamics
in its fixed-iterations mode (``tol=0``), the feed-forward projection and an
optional inhibitory lateral one, both with ``NormalizedHebbian`` (no masks),
``CumulativeActivity``, batch 1, recorders of the output's ``activity``.
Per-member values of ``eta``, the rules' and ``mu``'s ``alpha`` and ``beta``
are honoured; schedules are not (refused). Anything else is refused naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from neurosim.cuda import check_device_memory, require_cuda
from neurosim.errors import SimulationDiverged

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["run_ensemble_on_gpu"]

_NEVER = np.iinfo(np.int64).max
#: the largest chunk of pre-drawn inputs uploaded at once
CHUNK_BYTES = 256 * 2**20


def _describe(net):
    """The member's circuit as arrays and flags, or a ValueError naming what is not supported."""
    from neurosim.dynamics import Jacobi
    from neurosim.rules import CumulativeActivity, NormalizedHebbian
    from neurosim.schedules import Schedule
    from neurosim.signals import SquaredNorm, Unity

    why = []
    if net.batch != 1:
        why.append(f"batch {net.batch} (only 1)")
    if net.callbacks or net.triggers:
        why.append("callbacks or triggers")
    if len(net.inputs) != 1:
        why.append(f"{len(net.inputs)} input streams (exactly 1)")
    pops = list(net.populations.values())
    ys = [p for p in pops if isinstance(p.dynamics, Jacobi)]
    if len(pops) != 2 or len(ys) != 1:
        why.append("populations other than one input and one Jacobi population")
    if why:
        raise ValueError(_refusal(net, why))
    y = ys[0]
    x = net.inputs[0].population
    jac = y.dynamics
    if jac.tol > 0:
        why.append("Jacobi with tol > 0 (only the fixed-iterations mode, tol=0)")
    ff = [p for p in net.projections.values() if p.pre is x and p.post is y]
    lat = [p for p in net.projections.values() if p.pre is y and p.post is y]
    if len(ff) != 1 or len(lat) > 1 or len(net.projections) != len(ff) + len(lat):
        why.append("projections other than one feed-forward x -> y and at most one lateral")
    for p in ff + lat:
        if not isinstance(p.rule, NormalizedHebbian) or p.mask is not None:
            why.append(f"projection {p.name!r} without NormalizedHebbian or with a mask")
    if lat and lat[0].sign != -1:
        why.append("an excitatory lateral projection (only sign -1)")
    units = [c for c in net.unit_rules if isinstance(c, CumulativeActivity)]
    if len(units) != 1 or len(net.unit_rules) != 1:
        why.append("unit rules other than one CumulativeActivity")
    for rec in net.recorders.values():
        if rec.target is not y or tuple(rec.variables) != ("activity",):
            why.append(f"recorder {rec.name!r} (only the output's activity)")
    if why:
        raise ValueError(_refusal(net, why))
    signal = units[0].signal
    kind = 0 if isinstance(signal, Unity) else (1 if signal.population is x else 2) if isinstance(signal, SquaredNorm) \
        else -1
    if kind < 0:
        raise ValueError(_refusal(net, [f"signal {signal!r}"]))
    comps = [jac, units[0], ff[0].rule] + ([lat[0].rule] if lat else [])
    for comp in comps:
        for name, value in comp.params().items():
            if isinstance(getattr(comp, name, None), Schedule):
                raise ValueError(_refusal(net, [f"the schedule of {comp.label}.{name} (constants only)"]))
    t = net.t + 1
    params = [jac.eta, units[0].value("alpha", t), units[0].beta ** 2, ff[0].rule.value("alpha", t),
              lat[0].rule.value("alpha", t) if lat else 0.0]
    return dict(x=x, y=y, W=ff[0], M=lat[0] if lat else None, mu=units[0].variable, kind=kind, params=params,
                n_iter=int(jac.max_iter), zero_start=bool(jac.zero_start))


def _refusal(net, why):
    return (f"Ensemble backend='cuda' cannot run network {net.name!r}: " + "; ".join(why)
            + ". It runs the similarity-matching circuit (neurosim.models.similarity_matching.build_network); "
              "use backend='cpu' for anything else")


def run_ensemble_on_gpu(networks: Sequence[Network], steps: int, precision: str = "float64") -> None:
    """Advance every member ``steps`` steps on the GPU (see the module docstring)."""
    if steps == 0:
        return
    cuda = require_cuda()
    from neurosim.cuda.kernels import TPB as tpb
    from neurosim.cuda.kernels import sm_ensemble_chunk as kernel

    dt = np.float64 if precision == "float64" else np.float32
    desc = [_describe(n) for n in networks]
    d0 = desc[0]
    shared = [(d["n_iter"], d["zero_start"], d["kind"], d["M"] is None) for d in desc]
    if len(set(shared)) != 1:
        i = next(i for i, s in enumerate(shared) if s != shared[0])
        raise ValueError(f"networks[{i}] differs from networks[0] in max_iter, zero_start, signal or lateral wiring")
    E, k, n = len(networks), d0["y"].size, d0["x"].size
    step_bytes = E * n * np.dtype(dt).itemsize
    chunk = int(max(1, min(steps, CHUNK_BYTES // step_bytes)))
    item = np.dtype(dt).itemsize
    need = item * E * (k * n + k * k + 4 * k + chunk * (n + k)) + 16 * E
    check_device_memory(int(need), f"an ensemble of {E} networks")
    W = cuda.to_device(np.stack([d["W"].weights for d in desc]).astype(dt))  # noqa: N806
    M = cuda.to_device(np.stack([d["M"].weights if d["M"] is not None else np.zeros((1, 1)) for d in desc]).astype(dt))
    mu = cuda.to_device(np.stack([d["y"].state[d["mu"]] for d in desc]).astype(dt))
    Y = cuda.to_device(np.stack([d["y"].activity[0] for d in desc]).astype(dt))
    U, Z = cuda.device_array((E, k), dtype=dt), cuda.device_array((E, k), dtype=dt)
    params = cuda.to_device(np.array([d["params"] for d in desc], dtype=np.float64))
    status = cuda.to_device(np.full((E, 2), _NEVER, dtype=np.int64))
    t0 = networks[0].t
    if any(net.t != t0 for net in networks):
        raise ValueError("an ensemble's members must be at the same step to run on the GPU; run them to one step first")
    recorders = [list(net.recorders.values()) for net in networks]
    every = recorders[0][0].every if recorders[0] else 0
    if any(len(r) != len(recorders[0]) or (r and r[0].every != every) or len(r) > 1 for r in recorders):
        raise ValueError("on the GPU every member records its output's activity with one recorder of one `every`")
    frozen: dict[int, tuple[int, int]] = {}  # member -> (step, kind): stopped at that step
    done = 0
    try:
        while done < steps and len(frozen) < E:
            m = min(chunk, steps - done)
            for rs in recorders:
                for rec in rs:
                    rec.spill()  # between chunks: what a store's recorder holds goes to it in batches
                    rec.prepare()
                    last = ((t0 + done) // rec.every + rec.free) * rec.every + rec.every - 1
                    m = min(m, max(1, last - (t0 + done)))
            X = np.stack([net.inputs[0].stream.block(t0 + done, m, 1)[:, 0, :] for net in networks])
            finite = np.isfinite(X).all(axis=2)
            stop_at = np.where(finite.all(axis=1), _NEVER, t0 + done + np.argmin(finite, axis=1) + 1)
            rows = np.full(m, -1, dtype=np.int64)
            if every:
                due = [s for s in range(m) if (t0 + done + s + 1) % every == 0]
                rows[due] = np.arange(len(due))
            rec_dev = cuda.device_array((E, max(1, int((rows >= 0).sum())), k), dtype=dt)
            kernel[E, tpb](cuda.to_device(np.nan_to_num(X).astype(dt)), W, M, mu, U, Y, Z, rec_dev,
                           cuda.to_device(rows), params, d0["kind"], d0["M"] is not None, d0["n_iter"],
                           d0["zero_start"], t0 + done, status, cuda.to_device(stop_at.astype(np.int64)))
            cuda.synchronize()
            st = status.copy_to_host()
            recorded = rec_dev.copy_to_host() if every else None
            steps_t = t0 + done + np.arange(m) + 1
            for e, net in enumerate(networks):
                if e in frozen:
                    continue
                failed_here = st[e, 0] != _NEVER
                end_e = int(st[e, 0]) if failed_here else t0 + done + m
                recorded_to = end_e - 1 if failed_here else end_e
                for rec in recorders[e]:
                    assert recorded is not None  # a member has a recorder only when every > 0
                    n_ok = int(((rows >= 0) & (steps_t <= recorded_to)).sum())
                    rec._buf["activity"][rec.count:rec.count + n_ok, 0, :] = recorded[e, :n_ok]
                    rec.after_segment(rec.count + n_ok, t0 + done, recorded_to)
                net.t = end_e
                if failed_here:
                    frozen[e] = (end_e, int(st[e, 1]))
            done += m
    finally:
        Wh, Mh, muh, Yh = (a.copy_to_host().astype(np.float64) for a in (W, M, mu, Y))
        for e, d in enumerate(desc):
            d["W"].weights[...] = Wh[e]
            if d["M"] is not None:
                d["M"].weights[...] = Mh[e]
            d["y"].state[d["mu"]][...] = muh[e]
            d["y"].activity[0] = Yh[e]
    failed = None
    if frozen:
        e = min(frozen)
        failed = (e,) + frozen[e]
    if failed is not None:
        e, step, kind = failed
        for net in networks:
            for rec in net.recorders.values():
                rec.flush()
        if kind == 3:
            label = f"{desc[e]['x'].name}.activity"
        else:
            label = f"{desc[e]['y'].name}.activity" + (" (Jacobi iteration not contracting)" if kind == 2 else "")
        err = SimulationDiverged(step, label, networks[e], nonfinite=kind != 2)
        err.member = e
        raise err
