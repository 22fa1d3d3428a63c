"""The time-step engine.

One step runs five phases in a fixed order::

    input -> dynamics -> plasticity -> events -> record

* **input**: every input stream writes its population's activity.
* **dynamics**: populations with dynamics, in topological order of the
  feed-forward graph, compute their activity.
* **plasticity**: global signals, then unit rules (e.g. ``mu``), then
  projection rules, each in the order they were added. Then every
  population variable is checked for NaN/Inf.
* **events**: triggers due this step are evaluated in order; the events of
  those that hold are applied at once.
* **record**: recorders due this step take a sample.

User callbacks run before or after any phase (``Network.add_callback``).

Two paths run these phases. The **per-step path** walks the phases in
Python, calling each component's NumPy reference (``backend="python"``) or
its compiled kernel (``backend="compiled"``, one kernel call at a time). The
**compiled path** runs *segments*: many whole steps inside one generated
numba function (:mod:`neurosim.codegen`), leaving it only when a trigger
fires, a recording buffer fills, a callback or a Python trigger is due, or
the run ends. The compiled path and the per-step path with kernels give
bit-identical numbers; the NumPy path agrees to rounding.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import warnings

import numpy as np
from tqdm.auto import tqdm

from neurosim._validation import check_bool, check_choice, check_int
from neurosim.codegen import DIVERGED, TRIGGERED, ArrayRef, SegmentPlan, compile_segment, divergence_labels
from neurosim.errors import SimulationDiverged
from neurosim.signals import Unity

__all__ = ["Engine"]

#: longest segment, in steps
MAX_SEGMENT = 65536
#: shortest cap the input memory may impose; long enough to amortize Python's share
MIN_SEGMENT = 256
#: a segment's pre-drawn inputs take at most about this many bytes
SEGMENT_INPUT_BYTES = 8 * 2**20
#: a segment lasts about this long once the step cost is known, so the progress
#: bar moves and Ctrl-C (seen only between segments) is honoured promptly
SEGMENT_SECONDS = 0.5
#: cap on segments before the step cost has been measured
FIRST_SEGMENT = 128


class Engine:
    """Runs a :class:`~neurosim.network.Network`. Built lazily by ``Network.run``."""

    def __init__(self, network):
        self.net = network
        self.order = network.validate()
        self.signals = network.signals()
        self.rules = [p.rule for p in network.projections.values() if p.rule is not None]
        self._segment = None
        self._seconds_per_step = None  # measured on segments that did not compile
        self.missing = self._missing_kernels()

    # -- capability -------------------------------------------------------------------
    def _missing_kernels(self) -> list:
        miss = []
        for pop in self.order:
            if pop.dynamics.kernel_calls() is None:
                miss.append(f"dynamics of {pop.name!r} ({type(pop.dynamics).__name__})")
        for s in self.signals:
            if s.kernel_call() is None and not isinstance(s, Unity):
                miss.append(f"signal {s.name!r}")
        for r in self.net.unit_rules:
            if r.kernel_call() is None:
                miss.append(f"unit rule {type(r).__name__} on {r.population.name!r}")
        for r in self.rules:
            if r.kernel_call() is None:
                miss.append(f"rule {type(r).__name__} on projection {r.projection.name!r}")
        return miss

    def _calls(self) -> list:
        calls = []
        for pop in self.order:
            calls += pop.dynamics.kernel_calls()
        for s in self.signals:
            c = s.kernel_call()
            if c is not None:
                calls.append(c)
        calls += [r.kernel_call() for r in self.net.unit_rules]
        calls += [r.kernel_call() for r in self.rules]
        return calls

    def _checks(self) -> list:
        # A stream-driven population without dynamics only ever holds its stream's
        # values, which the segment tests as it loads them (codegen's ``_load``).
        fed = {id(i.population) for i in self.net.inputs if i.population.dynamics is None}
        return [ArrayRef(lambda p=p, v=v: p.state[v], f"{p.name}.{v}")
                for p in self.net.populations.values() for v in p.state
                if not (v == "activity" and id(p) in fed)]

    def _plan(self) -> SegmentPlan:
        net = self.net
        records = []
        for rec in net.recorders.values():
            for v in rec.variables:
                records.append(ArrayRef(lambda rec=rec, v=v: rec.value(v), f"{rec.name}.{v}"))
        return SegmentPlan(
            inputs=[ArrayRef(lambda i=i: i.population.activity, f"{i.population.name}.activity") for i in net.inputs],
            calls=self._calls(),
            checks=self._checks(),
            triggers=[t.condition for t in net.triggers if t.compiled],
            records=records,
        )

    # -- run --------------------------------------------------------------------------
    def run(self, steps: int, progress: bool = False, backend: str = "auto"):
        steps = check_int("steps", steps, low=0)
        progress = check_bool("progress", progress)
        backend = check_choice("backend", backend, {"auto", "compiled", "python"})
        if backend == "compiled" and self.missing:
            raise ValueError(f"backend='compiled' needs a kernel for every component; missing: {', '.join(self.missing)}")
        compiled = backend == "compiled" or (backend == "auto" and not self.missing)
        end = self.net.t + steps
        try:
            self._run_until(end, steps, progress, compiled)
        finally:
            self._report_unconverged()
        return self.net

    def _report_unconverged(self):
        for pop in self.order:
            text = pop.dynamics.take_unconverged()
            if text:
                warnings.warn(text, pop.dynamics.unconverged_warning, stacklevel=4)

    def _run_until(self, end: int, steps: int, progress: bool, compiled: bool):
        with tqdm(total=steps, disable=not progress, desc=self.net.name, unit="step", leave=False) as bar, \
                _deferred_interrupt() as interrupted, _flushing(self.net.recorders.values()):
            while self.net.t < end:
                t0 = self.net.t
                if compiled:
                    n = self._compiled_span(end)
                    if n > 0:
                        self._run_segment(n)
                    else:
                        self._step(kernels=True)
                else:
                    # overflow surfaces as SimulationDiverged, naming step and variable
                    with np.errstate(over="ignore", invalid="ignore"):
                        self._step(kernels=False)
                bar.update(self.net.t - t0)
                if interrupted:
                    raise KeyboardInterrupt(f"run interrupted after step {self.net.t}; the network is consistent "
                                            f"(state, recordings, step counter) and run() continues from there")

    def _hook_due(self, t: int) -> bool:
        """Whether step ``t`` needs the per-step path (a callback or a Python trigger is due)."""
        if any(t % every == 0 for (_, _, _, every) in self.net.callbacks):
            return True
        return any((not g.compiled) and t % g.every == 0 for g in self.net.triggers)

    def _compiled_span(self, end: int) -> int:
        """Steps the next segment may run before a hook step, a full buffer, or the end."""
        t = self.net.t
        per_step = 8 * self.net.batch * sum(inp.stream.dim for inp in self.net.inputs)
        cap = MAX_SEGMENT if per_step == 0 else max(MIN_SEGMENT, min(MAX_SEGMENT, SEGMENT_INPUT_BYTES // per_step))
        if self._seconds_per_step:
            cap = min(cap, max(1, int(SEGMENT_SECONDS / self._seconds_per_step)))
        else:
            cap = min(cap, FIRST_SEGMENT)  # the step cost is unknown yet: measure on a short segment
        n = min(end - t, cap)
        for rec in self.net.recorders.values():
            rec.prepare()
            # last step whose sample still fits in the buffer
            last = ((t // rec.every) + rec.free) * rec.every + rec.every - 1
            n = min(n, last - t)
        if self.net.callbacks or any(not g.compiled for g in self.net.triggers):
            for k in range(1, n + 1):
                if self._hook_due(t + k):
                    return k - 1
        return n

    # -- compiled path ----------------------------------------------------------------
    def _run_segment(self, n: int):
        net = self.net
        fresh = self._segment is None
        if fresh:
            self._plan_cache = self._plan()
            self._segment, self._arrays, self._scalars, _ = compile_segment(self._plan_cache)
            fresh = not self._segment.signatures  # numba compiles on the first call
        plan = self._plan_cache
        t0 = net.t
        inputs = [_checked_block(inp, t0, n, net.batch) for inp in net.inputs]
        slots = [(rec, v) for rec in net.recorders.values() for v in rec.variables]
        bufs = [rec._buf[v] for rec, v in slots]
        counts = np.array([rec.count for rec, _ in slots], dtype=np.int64)
        every = np.array([rec.every for rec, _ in slots], dtype=np.int64)
        due = (every - (t0 + 1) % every) % every  # first s with (t0 + s + 1) % every == 0
        arrays = [ref.get() for ref in self._arrays]
        started = time.perf_counter()
        done, status, which = self._segment(n, due, every, counts, *inputs, *bufs, *arrays, *self._scalars)
        done = int(done)
        if not fresh and done >= 8:
            self._seconds_per_step = (time.perf_counter() - started) / done
        # the step that stopped the segment did not reach its record phase
        recorded_to = t0 + done - (1 if status in (DIVERGED, TRIGGERED) else 0)
        k = 0
        for rec in net.recorders.values():
            rec.after_segment(int(counts[k]), t0, recorded_to)
            k += len(rec.variables)
        net.t = t0 + done
        if status == DIVERGED:
            self._diverged(divergence_labels(plan)[which])
        if status == TRIGGERED:
            compiled = [g for g in net.triggers if g.compiled]
            fired = compiled[which]
            start = net.triggers.index(fired)
            self._events(first=start, assume_holds=fired)
            self._callbacks("events", "after")
            self._record()
            self._callbacks("record", "after")
        elif not all(np.isfinite(p.weights).all() for p in net.projections.values()):
            self._check_all()

    # -- per-step path ------------------------------------------------------------------
    def _callbacks(self, phase: str, when: str):
        t = self.net.t
        for fn, ph, wh, every in self.net.callbacks:
            if ph == phase and wh == when and t % every == 0:
                fn(self.net)

    def _step(self, kernels: bool):
        net = self.net
        t = net.t + 1
        net.t = t  # callbacks and triggers of this step see its number
        self._callbacks("input", "before")
        for inp in net.inputs:
            inp.population.activity[:] = _checked_block(inp, t - 1, 1, net.batch)[0]
        self._callbacks("input", "after")
        self._callbacks("dynamics", "before")
        for pop in self.order:
            # a solver's own failure (its KernelCall's ``finite`` label, or the label step_numpy
            # returns) stops the step as a compiled segment does
            failed = None
            if kernels:
                for call in pop.dynamics.kernel_calls():
                    if not call() and call.finite is not None:
                        failed = call.finite
                        break
            else:
                failed = pop.dynamics.step_numpy()
            if isinstance(failed, str):  # other return values of a user's step_numpy stay ignored
                self._diverged(failed)
        self._callbacks("dynamics", "after")
        self._callbacks("plasticity", "before")
        for s in self.signals:
            c = s.kernel_call() if kernels else None
            c() if c is not None else s.compute_numpy()
        for r in net.unit_rules:
            r.kernel_call()() if kernels else r.update_numpy()
        for r in self.rules:
            r.kernel_call()() if kernels else r.update_numpy()
        self._check_all()
        self._callbacks("plasticity", "after")
        self._callbacks("events", "before")
        self._events(first=0)
        self._callbacks("events", "after")
        self._callbacks("record", "before")
        self._record()
        self._callbacks("record", "after")

    def _events(self, first: int, assume_holds=None):
        net = self.net
        pending = []
        for g in net.triggers[first:]:
            if net.t % g.every:
                continue
            if g is assume_holds or g.holds(net):
                pending += g.events(net)
        for e in pending:
            net.apply(e)
        if pending:
            self._segment = None  # arrays were reallocated; the plan re-resolves them

    def _record(self):
        t = self.net.t
        for rec in self.net.recorders.values():
            if t % rec.every == 0:
                rec.sample(t)

    # -- divergence ---------------------------------------------------------------------
    def _bad(self) -> list:
        net = self.net
        bad = [f"{p.name}.{v}" for p in net.populations.values() for v, a in p.state.items() if not np.isfinite(a).all()]
        bad += [f"{p.name}.weights" for p in net.projections.values() if not np.isfinite(p.weights).all()]
        return bad

    def _check_all(self):
        bad = self._bad()
        if bad:
            self._raise(bad[0], bad[1:])

    def _diverged(self, label: str):
        # name the first non-finite variable in the per-step path's order, so both paths say the same
        bad = self._bad()
        if not bad:  # all state finite: a kernel reported a failure of its own, which its label names
            self._raise(label, [], nonfinite=False)
        self._raise(bad[0], bad[1:])

    def _raise(self, label, others, nonfinite=True):
        for rec in self.net.recorders.values():
            rec.flush()  # the error hands out the recordings
        raise SimulationDiverged(self.net.t, label, self.net, others, nonfinite=nonfinite)


def _checked_block(inp, t0: int, n: int, batch: int) -> np.ndarray:
    """``inp.stream.block(t0, n, batch)``, refused unless it fits the population (a segment copies without bounds checks)."""
    x = inp.stream.block(t0, n, batch)
    want = (n,) + inp.population.activity.shape
    if x.shape != want or x.dtype != np.float64:
        raise ValueError(f"input stream {type(inp.stream).__name__} of population {inp.population.name!r} gave a block of "
                         f"shape {x.shape} and dtype {x.dtype}; the population needs float64 of shape {want} "
                         f"(steps, batch, size)")
    return x


@contextlib.contextmanager
def _flushing(recorders):
    """Flush the recorders however the run ends, so what was recorded is in their chunks."""
    try:
        yield
    finally:
        for rec in recorders:
            rec.flush()


@contextlib.contextmanager
def _deferred_interrupt():
    """Hold Ctrl-C until the current step or segment is complete.

    A KeyboardInterrupt raised between a segment's return and the engine's
    bookkeeping would leave the arrays a segment ahead of ``network.t`` and the
    recorders; instead SIGINT sets a flag that ``run`` checks at a consistent
    point. A second SIGINT raises at once. Only the main thread can install
    signal handlers; elsewhere this is a no-op.
    """
    flag: list = []
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    previous = signal.getsignal(signal.SIGINT)

    def defer(signum, frame):
        if flag:  # a second Ctrl-C (e.g. a callback that never returns) interrupts at once
            raise KeyboardInterrupt
        flag.append(signum)

    signal.signal(signal.SIGINT, defer)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
