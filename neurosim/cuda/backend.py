"""Running a network on a GPU: ``net.run(steps, backend="cuda")``.

The engine plans a step exactly as for a compiled CPU segment
(:meth:`neurosim.engine.Engine._plan`: the components' kernel calls in phase
order, the state checks, the inputs and the recorded variables); this module
replaces each CPU kernel by its CUDA form (:mod:`neurosim.cuda.kernels`,
:data:`GPU_KERNELS`) and runs the steps with device-resident state, one
launch per operation per step. The arrays are uploaded when the run starts
and downloaded when it ends, so the network is afterwards exactly as after
a CPU run (state, ``t``, recordings) and may go on on either device.

Per chunk of steps (the CPU segment's length: inputs, recorder buffers)
the inputs are drawn on the host and uploaded in one copy, recorded samples
go to device buffers copied back at the chunk's end, and state checks
(NaN/Inf, Jacobi's non-contraction test) lower a device status word to the
first failing step. Only then does the host synchronise: if a step failed,
the chunk is run again from a device copy of its starting state up to that
step, so the network stops at the failing step as on the CPU (kernels are
deterministic for a given device).

Supported: the kernels of the dense rate family (drive, ``Jacobi`` in its
fixed-iterations mode, ``Linear``, ``SquaredNorm``/``Unity``,
``CumulativeActivity``, ``NormalizedHebbian``), the same on sparse
projections (:mod:`neurosim.kernels.sparse`: the drive, Jacobi's lateral
product, ``Hebbian``, ``Oja`` and ``NormalizedHebbian``; one block per post
unit, its threads over the unit's synapses), input streams and
recorders. Anything else (other dynamics and rules, callbacks, triggers,
hence births and deaths) is refused before anything runs, naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neurosim.codegen import ArrayRef
from neurosim.cuda import check_device_memory, require_cuda
from neurosim.input_blocks import checked_block
from neurosim.kernels import dense as _dense
from neurosim.kernels import parallel as _parallel
from neurosim.kernels import plasticity as _plast
from neurosim.kernels import sparse as _sparse
from neurosim.params import ParamRef

__all__ = ["run_on_gpu", "GPU_KERNELS", "PRECISIONS"]

PRECISIONS = {"float64": np.float64, "float32": np.float32}
_NEVER = np.iinfo(np.int64).max


#: the CPU Jacobi kernels (one GPU form for all)
_JACOBI = (_dense.jacobi_relax, _dense.jacobi_fixed, _dense.jacobi_tolerance, _dense.jacobi_fixed_rows,
           _dense.jacobi_tolerance_rows)


def _cpu_kernels() -> dict:
    """CPU kernel -> name of its GPU form."""
    return {
        _dense.synaptic_drive: "drive", _parallel.drive_rows: "drive",
        _dense.zero_fill: "zero", _dense.copy_2d: "copy",
        **{k: "jacobi" for k in _JACOBI},
        _plast.squared_norm: "squared_norm", _plast.cumulative_activity: "cumulative_activity",
        _plast.normalized_hebbian: "normalized_hebbian", _plast.normalized_hebbian_rows: "normalized_hebbian",
        _sparse.csr_drive: "csr_drive", _sparse.csr_drive_rows: "csr_drive",
        _sparse.csr_hebbian: "csr_hebbian", _sparse.csr_hebbian_rows: "csr_hebbian",
        _sparse.csr_oja: "csr_oja", _sparse.csr_oja_rows: "csr_oja",
        _sparse.csr_normalized_hebbian: "csr_normalized_hebbian",
        _sparse.csr_normalized_hebbian_rows: "csr_normalized_hebbian",
    }


#: names of the CPU kernels that have a GPU form
GPU_KERNELS = sorted({getattr(f, "__name__", str(f)) for f in _cpu_kernels()})


def _as2d(a):
    return a.reshape(1, a.shape[0]) if a.ndim == 1 else a


class _GPURun:
    """The device side of one ``run``: arrays, launches, chunks."""

    def __init__(self, engine, precision: str):
        self.cuda = require_cuda()
        from neurosim.cuda import kernels as gk

        self.gk = gk
        self.engine, self.net = engine, engine.net
        self.dtype = PRECISIONS[precision]
        self.plan = engine._plan(fuse=False)  # the GPU maps each CPU kernel, not fused ones
        self._refuse_unsupported()

    # -- what can run -------------------------------------------------------------------------
    def _refuse_unsupported(self):
        net, plan, table = self.net, self.plan, _cpu_kernels()
        bad = [c.label or getattr(c.func, "__name__", "?") for c in plan.calls if c.func not in table]
        for c in plan.calls:
            if c.func in _JACOBI and c.resolve(net.t + 1)[5] > 0.0:
                bad.append(f"{c.label} with tol > 0 (the GPU runs Jacobi's fixed-iterations mode, tol=0)")
        if net.callbacks:
            bad.append("callbacks")
        if net.triggers:
            bad.append("triggers (" + ", ".join(getattr(t, "name", type(t).__name__) for t in net.triggers) + ")")
        if bad:
            raise ValueError("backend='cuda' cannot run " + "; ".join(bad) + ". It runs the rate family: "
                             "feed-forward drive, Jacobi (tol=0) and Linear dynamics, SquaredNorm/Unity signals, "
                             "CumulativeActivity and NormalizedHebbian, and on sparse projections the drive, Jacobi's "
                             "lateral product, Hebbian, Oja and NormalizedHebbian; inputs and recorders; use "
                             "backend='auto'")

    # -- arrays ---------------------------------------------------------------------------------
    def _host_arrays(self) -> dict:
        arrays: dict[int, tuple[np.ndarray, str]] = {}

        def add(ref):
            a = ref.get()
            arrays.setdefault(id(a), (a, ref.label))

        for c in self.plan.calls:
            for a in c.args:
                if isinstance(a, ArrayRef):
                    add(a)
        for ref in self.plan.inputs + self.plan.checks + self.plan.records:
            add(ref)
        return arrays

    def _upload(self, n_chunk: int):
        cuda, dt = self.cuda, self.dtype
        host = self._host_arrays()
        need = sum(a.size * (np.dtype(dt).itemsize if a.dtype.kind == "f" else a.itemsize) for a, _ in host.values())
        need += n_chunk * sum(r.get().size for r in self.plan.inputs) * np.dtype(dt).itemsize
        need += n_chunk * sum(r.get().size for r in self.plan.records) * np.dtype(dt).itemsize
        need *= 2  # the chunk's starting state is kept on the device too
        check_device_memory(int(need), f"network {self.net.name!r} on backend='cuda'")
        self.host = host
        self.dev = {k: cuda.to_device(np.ascontiguousarray(a, dtype=dt) if a.dtype.kind == "f" else a)
                    for k, (a, _) in host.items()}
        self.state_keys = list(host)

    def _download(self):
        for k in self.state_keys:
            a, _ = self.host[k]
            if a.flags.writeable:  # read-only arrays (a sparse projection's index) never change on the device
                a[...] = self.dev[k].copy_to_host().astype(a.dtype, copy=False)

    def _snapshot(self):
        return {k: self._copy(self.dev[k]) for k in self.state_keys}

    def _copy(self, d):
        out = self.cuda.device_array_like(d)
        out.copy_to_device(d)
        return out

    def _restore(self, snap):
        for k, d in snap.items():
            self.dev[k].copy_to_device(d)

    # -- one step -----------------------------------------------------------------------------------
    def _args(self, call, t):
        out = []
        for a in call.args:
            if isinstance(a, ArrayRef):
                out.append(self.dev[id(a.get())])
            elif isinstance(a, ParamRef):
                out.append(a.at(t))
            else:
                out.append(a)
        return out

    def _grid(self, shape):
        """The grid of ``GRID_TPB``-shaped blocks covering a 2-D array of ``shape``, and the block shape."""
        tpb = self.gk.GRID_TPB
        return ((shape[0] + tpb[0] - 1) // tpb[0], (shape[1] + tpb[1] - 1) // tpb[1]), tpb

    def _flat(self, n):
        """The number of ``FLAT_TPB``-thread blocks covering ``n`` elements."""
        return (n + self.gk.FLAT_TPB - 1) // self.gk.FLAT_TPB

    def _step(self, s: int, t: int, inputs, record_rows):
        gk, tpb = self.gk, self.gk.TPB
        for k, ref in enumerate(self.plan.inputs):
            d = self.dev[id(ref.get())]
            gk.copy2[self._grid(d.shape)](d, inputs[k][s])
        for call in self.plan.calls:
            kind = _cpu_kernels()[call.func]
            args = self._args(call, t)
            if kind == "drive":
                out, pre, w, sign, acc = args
                gk.drive[(w.shape[0], pre.shape[0]), tpb](out, pre, w, float(sign), bool(acc))
            elif kind == "zero":
                gk.zero[self._grid(_as2d(args[0]).shape)](_as2d(args[0]))
            elif kind == "copy":
                gk.copy2[self._grid(args[0].shape)](args[0], args[1])
            elif kind == "jacobi":
                self._jacobi(call, args, t)
            elif kind == "squared_norm":
                gk.squared_norm[args[1].shape[0], tpb](args[0], args[1])
            elif kind == "cumulative_activity":
                mu = args[0]
                gk.cumulative_activity[self._flat(mu.shape[0]), gk.FLAT_TPB](mu, args[1], float(args[2]),
                                                                             float(args[3]), args[4])
            elif kind == "normalized_hebbian":
                w = args[0]
                gk.normalized_hebbian[self._grid(w.shape)](w, args[1], args[2], args[3], float(args[4]), args[5],
                                                                 bool(args[6]), args[7], bool(args[8]))
            elif kind == "csr_drive":
                out, pre, indptr, indices, w, sign, acc = args
                gk.csr_drive[(indptr.shape[0] - 1, pre.shape[0]), tpb](out, pre, indptr, indices, w, float(sign),
                                                                        bool(acc))
            elif kind.startswith("csr_"):
                self._sparse_rule(kind, args, t)
        for c, ref in enumerate(self.plan.checks):
            d = _as2d(self.dev[id(ref.get())])
            gk.check_finite[self._grid(d.shape)](d, self.status, c, t)
        for r, row in record_rows:
            d = _as2d(self.dev[id(self.plan.records[r].get())])
            gk.record[self._grid(d.shape)](self.rec_dev[r].reshape((self.rec_dev[r].shape[0],) + d.shape), row, d)

    def _sparse_rule(self, kind, args, t):
        """A rule on a sparse projection: one block per post unit, its threads over the unit's synapses."""
        gk, tpb = self.gk, self.gk.TPB
        w, indptr = args[0], args[1]
        rows = max(indptr.shape[0] - 1, 1)
        if kind == "csr_normalized_hebbian":
            gk.csr_normalized_hebbian[rows, tpb](w, indptr, args[2], args[3], args[4], args[5], float(args[6]),
                                                 args[7])
            return
        if kind == "csr_hebbian":
            gk.csr_hebbian[rows, tpb](w, indptr, args[2], args[3], args[4], float(args[5]), float(args[6]))
        else:
            gk.csr_oja[rows, tpb](w, indptr, args[2], args[3], args[4], float(args[5]))
        # these rules can run away: their weights are tested as they are written, as the CPU kernels do
        if w.shape[0]:
            gk.check_finite_flat[self._flat(w.shape[0]), gk.FLAT_TPB](w, self.status, t)

    def _jacobi(self, call, args, t):
        gk, tpb = self.gk, self.gk.TPB
        y, drive, lat, sign, eta, tol, max_iter, zero_start, scratch, info = args[:10]
        sparse = args[10:12]  # a sparse lateral projection: indptr, indices (lat holds its weights)
        sign, eta, max_iter = float(sign), float(eta), int(max_iter)
        blocks = (y.shape[1], y.shape[0])
        grid = self._grid(y.shape)
        first = 0
        if zero_start:
            gk.zero[grid](scratch)
            gk.scaled[grid](y, drive, eta)
            gk.update_norms[1, tpb](self.norms, 0, y, scratch)
            first = 1
        for it in range(first, max_iter):
            if sparse:
                gk.csr_jacobi_iteration[blocks, tpb](scratch, y, drive, sparse[0], sparse[1], lat, sign, eta)
            else:
                gk.jacobi_iteration[blocks, tpb](scratch, y, drive, lat, sign, eta)
            if it == 0 or it == max_iter - 1:
                gk.update_norms[1, tpb](self.norms, 0 if it == 0 else 2, scratch, y)
            gk.copy2[grid](y, scratch)
        gk.contraction_test[1, 1](self.norms, info, max_iter, _dense.GROWTH_FLOOR ** 2, self.status, t)
        self.jacobi_labels[1] = call.finite

    # -- a run ------------------------------------------------------------------------------------------
    def run(self, end: int):
        eng, net, cuda = self.engine, self.net, self.cuda
        n_first = eng._compiled_span(end)
        self._upload(max(1, n_first))
        self.norms = cuda.to_device(np.zeros(4))
        self.jacobi_labels: dict = {}
        try:
            while net.t < end:
                n = n_first if n_first else eng._compiled_span(end)
                n_first = 0
                if n <= 0:
                    break
                self._chunk(n)
        finally:
            self._download()

    def _chunk(self, n: int):
        eng, net, cuda = self.engine, self.net, self.cuda
        t0 = net.t
        blocks = []
        bad_input = None
        for k, inp in enumerate(net.inputs):
            x = checked_block(inp, t0, n, net.batch)
            finite = np.isfinite(x).reshape(n, -1).all(axis=1)
            if not finite.all():
                s = int(np.argmin(finite))
                bad_input = s if bad_input is None else min(bad_input, s)
            blocks.append(x)
        if bad_input is not None:
            label = next(r.label for r, x in zip(self.plan.inputs, blocks)
                         if not np.isfinite(x[bad_input]).all())
            if bad_input:
                self._chunk(bad_input)
            net.t += 1
            eng._raise(label, [])
        inputs = [cuda.to_device(x.astype(self.dtype)) for x in blocks]
        snap = self._snapshot()
        self.status = cuda.to_device(np.full(2 + len(self.plan.checks), _NEVER, dtype=np.int64))
        slots, due = self._record_schedule(t0, n)
        self.rec_dev = [cuda.device_array((max(1, len(due[r])),) + r_ref.get().shape, dtype=self.dtype)
                        for r, r_ref in enumerate(self.plan.records)]
        done = self._steps(0, n, t0, inputs, due)
        status = self.status.copy_to_host()
        failed = int(status[:2].min())
        if failed != _NEVER:
            # stop at the failing step, as the CPU does: run again from the chunk's start up to it
            s_fail = failed - t0 - 1
            self._restore(snap)
            self.status = cuda.to_device(np.full_like(status, _NEVER))
            due = [[s for s in d if s < s_fail] for d in due]
            done = self._steps(0, s_fail + 1, t0, inputs, due)
        self._records_back(slots, due, t0, done, failed != _NEVER)
        net.t = t0 + done
        if failed != _NEVER:
            self._download()
            label = self.jacobi_labels.get(1) if status[1] == failed else None
            eng._diverged(label or "state")

    def _record_schedule(self, t0, n):
        slots = [(rec, v) for rec in self.net.recorders.values() for v in rec.variables]
        due = []
        for rec, _ in slots:
            due.append([s for s in range(n) if (t0 + s + 1) % rec.every == 0])
        return slots, due

    def _steps(self, s0, s1, t0, inputs, due):
        rows = {}
        for r, d in enumerate(due):
            for row, s in enumerate(d):
                rows.setdefault(s, []).append((r, row))
        for s in range(s0, s1):
            self._step(s, t0 + s + 1, inputs, rows.get(s, ()))
        self.cuda.synchronize()
        return s1 - s0

    def _records_back(self, slots, due, t0, done, failed):
        recorded_to = t0 + done - (1 if failed else 0)
        counts = {}
        for r, (rec, v) in enumerate(slots):
            k = len([s for s in due[r] if t0 + s + 1 <= recorded_to])
            if k:
                buf = self.rec_dev[r].copy_to_host()[:k]
                rec._buf[v][rec.count:rec.count + k] = buf
            counts[id(rec)] = rec.count + k
        for rec in self.net.recorders.values():
            rec.after_segment(counts.get(id(rec), rec.count), t0, recorded_to)


# engine: a neurosim.engine.Engine, not imported here (the GPU path must not import the engine module)
def run_on_gpu(engine: Any, steps: int, precision: str = "float64") -> None:
    """Run ``steps`` steps of ``engine``'s network on the GPU (see the module docstring)."""
    if steps == 0:
        return
    _GPURun(engine, precision).run(engine.net.t + steps)
