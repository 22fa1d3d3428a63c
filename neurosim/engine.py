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

Both paths also fail alike: they stop before the same step, with the same
recordings and the same error, when a schedule leaves its parameter's range
(a segment draws its schedules' values up front and runs only the steps
before the failing one), when the state diverges, and when a user kernel
indexes out of bounds (user kernels are compiled with bounds checks; a
segment in which one raised is replayed step by step from its start).
Inputs drawn for a segment that a trigger cut short are kept for the next
segments, so no step's input is drawn twice.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numba.core import event as numba_event
from numba.core.errors import NumbaError

from neurosim._validation import check_bool, check_choice, check_int
from neurosim.codegen import (DIVERGED, MIDSTEP, TRIGGERED, ArrayRef, SegmentPlan, cache_dir, compile_segment,
                              divergence_labels, resolve_scalars)
from neurosim.dynamics.base import Dynamics
from neurosim.errors import SimulationDiverged
from neurosim.first_steps import warmup_for
from neurosim.fusion import fuse_linear_rules
from neurosim.input_blocks import checked_block
from neurosim.params import ScheduleOutOfRange
from neurosim.progress import resolve as resolve_progress

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["Engine", "PerStepWarning"]

#: longest segment, in steps
MAX_SEGMENT = 65536
#: shortest cap the input memory may impose; long enough to amortize Python's share
MIN_SEGMENT = 256
#: a segment's pre-drawn inputs take at most about this many bytes
SEGMENT_INPUT_BYTES = 8 * 2**20
#: hard bound on a segment's pre-drawn inputs, above MIN_SEGMENT's floor (large batches: one epoch per step)
SEGMENT_INPUT_MAX_BYTES = 256 * 2**20
#: a segment lasts about this long once the step cost is known, so the progress
#: bar moves and Ctrl-C (seen only between segments) is honoured promptly
SEGMENT_SECONDS = 0.5
#: cap on segments before the step cost has been measured
FIRST_SEGMENT = 128
#: a segment ends where an input stream stops serving a view of its data (``Stream.view_steps``, e.g. where
#: an ArrayStream wraps around) when the steps before it hold at least this many bytes of input: copying a
#: block that size (and first-touching fresh memory for it) costs more than the Python of one more segment
VIEW_SPLIT_BYTES = 2**20


def _python_tier_seconds(value: str | None) -> float:
    """``NEUROSIM_PYTHON_TIER_SECONDS`` as a number of seconds (default 2; 0 compiles every segment at once)."""
    if value is None or value == "":
        return 2.0
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (0.0 <= seconds < float("inf")):
        raise ValueError(f"NEUROSIM_PYTHON_TIER_SECONDS must be a number of seconds >= 0 (0: compile every "
                         f"segment before its first step); got {value!r}")
    return seconds


#: A structure whose segment is not compiled yet (nor in numba's disk cache) first runs the segment's Python
#: form: the generated loop, run by the interpreter, calling the same compiled kernels (the same numbers). It
#: is compiled once its steps, at the rate measured there, would have cost more than this many seconds in all
#: (what a segment typically takes to compile): a short run of a new structure does not wait for a compile
#: it would not earn back, and a long one loses at most this much before it runs compiled. ``backend="auto"``
#: only; ``backend="compiled"`` compiles before its first step. Set by ``NEUROSIM_PYTHON_TIER_SECONDS``
#: (benchmarks of the steady state set 0).
PYTHON_TIER_SECONDS = _python_tier_seconds(os.environ.get("NEUROSIM_PYTHON_TIER_SECONDS"))

#: progress-bar layout while no step cost has been measured: no rate and no remaining time, which before
#: the first measured segment would be numba's compile time divided by the steps (an ETA of an hour)
NO_ETA_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}]"

log = logging.getLogger(__name__)


class Engine:
    """Runs a :class:`~neurosim.network.Network`. Built lazily by ``Network.run``.

    The engine sorts the network's components once (:meth:`Network.schedule`)
    and re-reads them whenever the network changes, also in the middle of a
    run (a callback that adds a recorder or a rule). Parameters are read at
    the start of every compiled segment and every per-step step, so an
    assignment takes effect from the next step on both paths.

    Parameters
    ----------
    network : neurosim.Network
        The network to run; it is validated here.
    """

    def __init__(self, network: Network) -> None:
        self.net = network
        self._refresh()
        self._seconds_per_step: float | None = None  # measured on segments that did not compile
        self._progress = _Progress(None, network.name)  # replaced by each run's bar
        # Inputs drawn for a segment that stopped early (a trigger fired): (version, t0, n, [(input,
        # stream, block)]). The next segments use the rest instead of drawing it again (see _input_blocks).
        self._kept: tuple | None = None
        # seconds per step of each segment's Python form on this network, compile time excluded
        self._python_rate: dict = {}
        self._warmed: set = set()  # segments whose Python form has run on this network (the first run warms up)
        self._end = 0  # the step the current run ends at

    def _refresh(self):
        net = self.net
        self.schedule = net.schedule()  # validates the network once
        self.components = self.schedule.components
        self.order = [c.population for c in self.components if isinstance(c, Dynamics)]  # topological order
        self.signals = net.signals()
        self.rules = [p.rule for p in net.projections.values() if p.rule is not None]
        self.missing = [c for c in self.components if c.kernel_calls() is None]
        self._version = net._version

    def _sync(self):
        """Follow structural changes made since the last step (callbacks may add entities mid-run)."""
        if self.net._version != self._version:
            self._refresh()
        else:
            for c in self.components:
                c.validate(self.net)
                c.check_structure()

    def _calls(self, phase: str) -> list:
        calls = []
        for c in self.components:
            if c.phase == phase:
                calls += c.kernel_calls()
        return calls

    def _checks(self) -> list:
        # A stream-driven population without dynamics only ever holds its stream's
        # values, which the segment tests as it loads them (codegen's ``_load``).
        fed = {id(i.population) for i in self.net.inputs if i.population.dynamics is None}
        # A population without dynamics or input (one whose variables a component writes, e.g. a
        # selection) never changes its activity: testing it every step would only cost a pass over
        # (batch, size) values (a 200 MB array for paper 004's selection at N = 50,000, n = 500).
        inputs = {id(i.population) for i in self.net.inputs}
        still = {id(p) for p in self.net.populations.values() if p.dynamics is None and id(p) not in inputs}
        # variables whose dynamics test them as they write them (e.g. a LIF population's v, ge, gi)
        own = {(id(p), v) for p in self.net.populations.values() if p.dynamics is not None
               for v in p.dynamics.self_checked}
        return [ArrayRef(lambda p=p, v=v: p.state[v], f"{p.name}.{v}")
                for p in self.net.populations.values() for v in p.state
                if not (v == "activity" and (id(p) in fed or id(p) in still)) and (id(p), v) not in own]

    def _plan(self, fuse: bool = True) -> SegmentPlan:
        """What one step of a compiled segment does; ``fuse``: with :mod:`neurosim.fusion`'s exact fusions (CPU)."""
        net = self.net
        records = []
        for rec in net.recorders.values():
            for v in rec.variables:
                records.append(ArrayRef(lambda rec=rec, v=v: rec.value(v), f"{rec.name}.{v}"))
        dynamics = self._calls("dynamics")
        compiled = [t for t in net.triggers if t.compiled]
        plan = SegmentPlan(
            inputs=[ArrayRef(lambda i=i: i.population.activity, f"{i.population.name}.activity") for i in net.inputs],
            calls=dynamics + self._calls("plasticity"),
            checks=self._checks(),
            triggers=[t.condition for t in compiled],
            records=records,
            n_dynamics=len(dynamics),
            trigger_when=[t.when for t in compiled],
        )
        if fuse:
            plan = fuse_linear_rules(plan, midstep_triggers=any(t.when == "dynamics" for t in compiled))
        return plan

    # -- run --------------------------------------------------------------------------
    def run(self, steps: int, progress: bool | None = None, backend: str = "auto", leave: bool = False,
            precision: str = "float64") -> Network:
        """Advance the network ``steps`` steps (what :meth:`neurosim.Network.run` calls).

        Parameters
        ----------
        steps : int >= 0
            Number of steps.
        progress : bool, optional
            Show a progress bar; default: :func:`neurosim.progress.resolve`.
        backend : {"auto", "compiled", "python", "cuda"}, default="auto"
            See :meth:`neurosim.Network.run`.
        leave : bool, default=False
            Keep the progress bar on screen afterwards.
        precision : {"float64", "float32"}, default="float64"
            GPU arithmetic (``backend="cuda"`` only).

        Returns
        -------
        neurosim.Network
            The network, at its new step.
        """
        steps = check_int("steps", steps, low=0)
        progress = resolve_progress(progress)
        leave = check_bool("leave", leave)
        backend = check_choice("backend", backend, {"auto", "compiled", "python", "cuda"})
        precision = check_choice("precision", precision, {"float64", "float32"})
        if precision != "float64" and backend != "cuda":
            raise ValueError(f"precision={precision!r} needs backend='cuda'; the CPU paths run in float64")
        self._sync()
        if backend == "cuda":
            from neurosim.cuda.backend import run_on_gpu

            self.backend = "compiled"
            with _flushing(self.net.recorders):
                run_on_gpu(self, steps, precision)
            return self.net
        if backend == "compiled" and self.missing:
            raise ValueError("backend='compiled' needs a kernel for every component; missing: "
                             + ", ".join(c.label for c in self.missing))
        self.backend = backend
        end = self._end = self.net.t + steps
        self._kept = None  # streams may have been changed between runs
        try:
            self._run_until(end, steps, progress, leave)
        finally:
            self._kept = None  # up to SEGMENT_INPUT_MAX_BYTES per input: not held between runs
            self._report_unconverged()
        return self.net

    def _mode(self) -> str:
        """"compiled" (segments), "kernels" (per step, kernels where they exist) or "python"."""
        if self.backend == "python":
            return "python"
        if self.missing:
            names = ", ".join(c.label for c in self.missing)
            if names not in self.net._warned_per_step:  # once per network and set of components
                self.net._warned_per_step.add(names)
                warnings.warn(f"{names} has no compiled kernel (only a NumPy reference), so the network runs step by "
                              "step: that component runs its NumPy reference, the others their kernels. Give it a "
                              "kernel (see neurosim.rules.local_rule) to run compiled segments.",
                              PerStepWarning, stacklevel=5)
            return "kernels"
        return "compiled"

    def _report_unconverged(self):
        for pop in self.order:
            text = pop.dynamics.take_unconverged()
            if text:
                warnings.warn(text, pop.dynamics.unconverged_warning, stacklevel=4)

    def _run_until(self, end: int, steps: int, progress: bool, leave: bool):
        from tqdm.auto import tqdm  # here, not at import: import neurosim does not pay for it (issue 40)

        # no ETA before a step has been timed (see _Progress)
        with tqdm(total=steps, disable=not progress, desc=self.net.name, unit="step", leave=leave,
                  bar_format=NO_ETA_FORMAT) as bar, \
                _deferred_interrupt() as interrupted, _flushing(self.net.recorders):
            self._progress = _Progress(bar, self.net.name)
            while self.net.t < end:
                t0 = self.net.t
                self._sync()
                mode = self._mode()
                n = self._compiled_span(end) if mode == "compiled" else 0
                if n > 0:
                    fresh = self._run_segment(n)
                else:
                    fresh = False
                    self._kept = None  # a callback may change a stream; per-step steps draw their own inputs
                    for rec in self.net.recorders.values():
                        rec.spill()  # between steps: a step that fails is undone, a write to a store is not
                    self._guarded_step(kernels=mode != "python")
                self._progress.advance(self.net.t - t0, fresh)
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
        if per_step:
            cap = min(cap, max(1, SEGMENT_INPUT_MAX_BYTES // per_step))
        if self._seconds_per_step:
            cap = min(cap, max(1, int(SEGMENT_SECONDS / self._seconds_per_step)))
        else:
            cap = min(cap, FIRST_SEGMENT)  # the step cost is unknown yet: measure on a short segment
        n = min(end - t, cap)
        for inp in self.net.inputs:
            view = inp.stream.view_steps(t, n, self.net.batch)
            if 0 < view < n and view * 8 * self.net.batch * inp.stream.dim >= VIEW_SPLIT_BYTES:
                n = view
        for rec in self.net.recorders.values():
            rec.spill()  # between segments: chunks held for a store go to it in batches (Recorder.spill)
            rec.prepare()
            # last step whose sample still fits in the buffer
            last = ((t // rec.every) + rec.free) * rec.every + rec.every - 1
            n = min(n, last - t)
        kept = self._kept
        if kept is not None and kept[0] == self.net._version and kept[1] <= t < kept[1] + kept[2]:
            # the rest of the inputs drawn for a segment a trigger cut short: use them up before drawing
            # more (a segment is bit-identical however the run is cut into segments)
            n = min(n, kept[1] + kept[2] - t)
        if self.net.callbacks or any(not g.compiled for g in self.net.triggers):
            for k in range(1, n + 1):
                if self._hook_due(t + k):
                    return k - 1
        return n

    def _input_blocks(self, t0: int, n: int) -> list:
        """Every input's values for steps ``t0 + 1 .. t0 + n``: the rest of the last draw where it covers them.

        A compiled trigger ends its segment when it fires, up to ``MAX_SEGMENT``
        steps before the planned end; drawing the whole next segment afresh
        would throw away what was drawn for those steps (with ``every=10000``
        over 100,000 steps, 3.4 times the steps run were drawn, doubling the
        run time of a cheap network). Streams are functions of the step, so
        the kept rows are the ones a new draw would give.
        """
        net = self.net
        kept = self._kept
        if kept is not None and kept[0] == net._version and kept[1] <= t0 and t0 + n <= kept[1] + kept[2] \
                and [(id(inp), id(inp.stream)) for inp in net.inputs] == [(id(i), id(s)) for i, s, _ in kept[3]]:
            k = t0 - kept[1]
            return [block[k:k + n] for _, _, block in kept[3]]  # row slices of C-contiguous blocks: contiguous
        self._kept = None  # released before the next draw: at most one segment's inputs are held
        blocks = [checked_block(inp, t0, n, net.batch) for inp in net.inputs]
        self._kept = (net._version, t0, n, [(inp, inp.stream, b) for inp, b in zip(net.inputs, blocks)])
        return blocks

    # -- compiled path ----------------------------------------------------------------
    def _interpreted(self, segment) -> bool:
        """Whether the next segment runs in its Python form (see :data:`PYTHON_TIER_SECONDS`)."""
        if self.backend != "auto" or segment.signatures or _in_disk_cache(segment):
            return False
        spent = _python_seconds.get(segment, 0.0)  # by every network of this structure in this process
        if spent >= PYTHON_TIER_SECONDS:
            return False
        rate = self._python_rate.get(segment)
        if rate is None:
            return True  # the first segments on this network warm up, then measure the rate
        return spent + rate * (self._end - self.net.t) <= PYTHON_TIER_SECONDS

    def _run_segment(self, n: int):
        net = self.net
        # Planned afresh for every segment: parameters, masks and arrays may have
        # changed since the last one (a few microseconds of Python per component;
        # the generated source, hence the compiled function, is reused).
        plan = self._plan()
        segment, arrays, scalars, _ = compile_segment(plan)
        interpreted = self._interpreted(segment)
        # a small new structure's first steps: interpreted kernels while a second process compiles them
        warmup = warmup_for(segment, [ref.get() for ref in arrays]) if interpreted else None
        if warmup is not None:
            n = warmup.span(n)
        fresh = not interpreted and not segment.signatures  # numba compiles on the first call
        if fresh:
            self._progress.compiling(_in_disk_cache(segment))
        triggers = [g for g in net.triggers if g.compiled]
        # a failing Python action after a compiled trigger fired must leave the network at the
        # last completed step: keep what is needed to get back there
        # so must a bounds-checked user kernel raising in the middle of a segment (see below); the calls of
        # compiled triggers need no look, since any compiled trigger makes the snapshot
        checked = any(getattr(c.func, "targetoptions", {}).get("boundscheck") for c in plan.calls)
        snapshot = _Snapshot(net) if triggers or checked else None
        t0 = net.t
        try:
            scalar_values = resolve_scalars(scalars, t0 + 1, n)
        except ScheduleOutOfRange as exc:
            # Drawn for the whole segment before it starts, a schedule may fail at a later step: run the
            # steps before that one, as the per-step path does, and let the next segment (which then
            # starts at the failing step) raise, with the network at the last completed step.
            if exc.step <= t0 + 1:
                raise
            n = exc.step - (t0 + 1)
            scalar_values = resolve_scalars(scalars, t0 + 1, n)
        inputs = self._input_blocks(t0, n)
        slots = [(rec, v) for rec in net.recorders.values() for v in rec.variables]
        bufs = [rec._buf[v] for rec, v in slots]
        counts = np.array([rec.count for rec, _ in slots], dtype=np.int64)
        every = np.array([rec.every for rec, _ in slots], dtype=np.int64)
        due = (every - (t0 + 1) % every) % every  # first s with (t0 + s + 1) % every == 0
        t_every = np.array([g.every for g in triggers], dtype=np.int64)
        t_due = (t_every - (t0 + 1) % t_every) % t_every
        values = [ref.get() for ref in arrays]
        compiled_before = _numba_clock.seconds
        started = time.perf_counter()
        try:
            # the Python form calls the kernels the compiled form calls, in its order: the same numbers
            form = segment if not interpreted else segment.py_func if warmup is None else warmup.function
            done, status, which = form(n, due, every, counts, t_due, t_every, *inputs, *bufs, *values, *scalar_values)
        except Exception as exc:
            if snapshot is None or isinstance(exc, NumbaError):
                raise  # a compile error: no step ran
            # A user kernel raised (e.g. IndexError from its bounds checks) at some step inside the
            # segment, after the steps before it had updated the arrays in place. Go back to the
            # segment's start and replay it step by step with the same kernels (bit-identical): the
            # per-step path stops at the failing step, with the network at the step before it and the
            # same error the NumPy path gives.
            snapshot.restore()
            for _ in range(n):
                self._guarded_step(kernels=True)
            return fresh
        done = int(done)
        elapsed = time.perf_counter() - started
        if warmup is not None:
            warmup.after_segment(elapsed, done)  # not the Python form's cost: its kernels were interpreted
            self._seconds_per_step = None
        elif interpreted:
            # A network's first segment in this form is its warm-up (first calls of every kernel from Python),
            # so the rate, and the seconds the form has cost, are measured from its second segment on; numba's
            # compiles, cache loads and saves (a kernel first used later) are not counted either.
            if segment in self._warmed:
                spent = max(0.0, elapsed - (_numba_clock.seconds - compiled_before))
                _python_seconds[segment] = _python_seconds.get(segment, 0.0) + spent
                if done:
                    # the rate also sizes the next segments (SEGMENT_SECONDS), in either form
                    self._python_rate[segment] = self._seconds_per_step = spent / done
            self._warmed.add(segment)
        elif fresh:
            # numba compiled (or loaded from its cache) on this call; its few steps are counted too
            net.timings["compile_seconds"] = net.timings.get("compile_seconds", 0.0) + elapsed
            log.info("%s: segment %d ready in %.1f s (numba compiled it or loaded it from the cache in %s)",
                     net.name, self._progress.compiles, elapsed, cache_dir())
            # a rate measured on the Python form would size the compiled segments (a compiled step costs
            # less): the next segment is short and measures the compiled form afresh
            self._seconds_per_step = None
        elif done >= 8:
            self._seconds_per_step = elapsed / done
        # the step that stopped the segment did not reach its record phase
        recorded_to = t0 + done - (1 if status in (DIVERGED, TRIGGERED, MIDSTEP) else 0)
        k = 0
        for rec in net.recorders.values():
            rec.after_segment(int(counts[k]), t0, recorded_to)
            k += len(rec.variables)
        net.t = t0 + done
        if status == DIVERGED:
            self._diverged(divergence_labels(plan)[which])
        if status in (TRIGGERED, MIDSTEP):
            fired = triggers[which]
            finish = self._finish_triggered_step if status == TRIGGERED else self._finish_midstep
            # only compiled triggers end a segment TRIGGERED or MIDSTEP, and they made a snapshot
            assert snapshot is not None
            try:
                finish(fired)
            except SimulationDiverged:
                # as on the per-step path (_guarded_step): the diverged state is kept for inspection, at the
                # step that diverged, not rolled back to the step before
                raise
            except BaseException:
                snapshot.restore()
                if done > 1:
                    self._run_segment(done - 1)  # bit-identical: streams and kernels are functions of the step
                raise
        elif not all(np.isfinite(p.weights).all() for p in self._unchecked_weights(plan)):
            self._check_all()
        return fresh

    def _unchecked_weights(self, plan: SegmentPlan) -> list:
        """The projections whose weights a segment may have made non-finite unnoticed (scanned after it).

        Only the plasticity phase writes weights (the dynamics read them). A
        projection whose weights no plasticity call takes (one without a rule)
        still has the finite weights it started with; one whose every such
        call tests the weights as it writes them (``finite="<name>.weights"``)
        stopped the segment at the step they diverged. Scanning every
        projection after every segment would read each weight once more per
        segment: with 10^8 synapses a segment is a step or two, and the scan
        cost two thirds of a drive's memory traffic.
        """
        by_array = {id(p.weights): p for p in self.net.projections.values()}
        unchecked: dict = {}
        for call in plan.calls[plan.n_dynamics:]:
            for a in call.args:
                p = by_array.get(id(a.get())) if isinstance(a, ArrayRef) else None
                if p is not None and call.finite != f"{p.name}.weights":
                    unchecked[p.name] = p
        return list(unchecked.values())

    def _finish_triggered_step(self, fired):
        self._events(first=self.net.triggers.index(fired), assume_holds=fired)
        self._callbacks("events", "after")
        self._callbacks("record", "before")
        self._record()
        self._callbacks("record", "after")

    def _finish_midstep(self, fired):
        """The rest of a step a segment stopped after its dynamics phase, because ``fired`` held."""
        self._events(first=self.net.triggers.index(fired), assume_holds=fired, when="dynamics")
        self._sync()
        self._run_phase("dynamics", True)  # again, with the new structure
        self._rest_of_step(True)

    # -- per-step path ------------------------------------------------------------------
    def _callbacks(self, phase: str, when: str):
        t = self.net.t
        for fn, ph, wh, every in list(self.net.callbacks):
            if ph == phase and wh == when and t % every == 0:
                fn(self.net)

    def _guarded_step(self, kernels: bool):
        """One step; if anything in it raises, the network is put back at the last completed step."""
        snapshot = _Snapshot(self.net)
        try:
            # overflow surfaces as SimulationDiverged, naming step and variable
            with np.errstate(over="ignore", invalid="ignore"):
                self._step(kernels)
        except SimulationDiverged:
            raise  # the diverged state is kept for inspection, at the step that diverged
        except BaseException:
            snapshot.restore()
            raise

    def _run_phase(self, phase: str, kernels: bool):
        t = self.net.t
        for c in self.components:
            if c.phase != phase:
                continue
            try:
                self._run_component(c, kernels)
            except IndexError as exc:
                # NumPy and a bounds-checked kernel word it differently; both paths say this instead
                raise IndexError(f"{c.label} indexed an array out of bounds at step {t}; the network is left at "
                                 f"step {t - 1}") from exc

    def _run_component(self, c, kernels: bool):
        t = self.net.t
        calls = c.kernel_calls() if kernels else None
        if calls is None:
            # a reference may return a label naming its own failure (as a kernel's ``finite`` does)
            failed = c.step_numpy()
            if isinstance(failed, str):
                self._diverged(failed)
        else:
            for call in calls:
                # a kernel reporting failure stops the step where a compiled segment would stop
                if not call(t) and call.finite is not None:
                    self._diverged(call.finite)

    def _step(self, kernels: bool):
        net = self.net
        t = net.t + 1
        net.t = t  # callbacks and triggers of this step see its number
        self._callbacks("input", "before")
        for inp in net.inputs:
            inp.population.activity[:] = checked_block(inp, t - 1, 1, net.batch)[0]
        self._callbacks("input", "after")
        self._callbacks("dynamics", "before")
        self._run_phase("dynamics", kernels)
        if self._events(first=0, when="dynamics"):
            self._sync()
            self._run_phase("dynamics", kernels)  # again, with the new structure
        self._rest_of_step(kernels)

    def _rest_of_step(self, kernels: bool):
        """Everything after the dynamics phase of the current step."""
        self._callbacks("dynamics", "after")
        self._callbacks("plasticity", "before")
        self._run_phase("plasticity", kernels)
        self._check_all()
        self._callbacks("plasticity", "after")
        self._callbacks("events", "before")
        self._events(first=0)
        self._callbacks("events", "after")
        self._callbacks("record", "before")
        self._record()
        self._callbacks("record", "after")

    def _events(self, first: int, assume_holds=None, when: str = "events") -> bool:
        """Evaluate the triggers of one evaluation point; apply their events at once. Whether any were applied."""
        net = self.net
        pending = []
        for g in net.triggers[first:]:
            if g.when != when or net.t % g.every:
                continue
            if g is assume_holds or g.holds(net):
                pending += g.events(net)
        if pending:
            net.apply(*pending)  # validated together, applied all or none
        return bool(pending)

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


class PerStepWarning(RuntimeWarning):
    """A component without a compiled kernel makes the network run step by step (warned once per network)."""


class _Snapshot:
    """Everything a step changes, kept so that a failed step or segment can be undone.

    State arrays are copied (kernels update them in place). A sparse
    projection's SynapseIndex is immutable (events make new ones): kept, not
    copied. The event log only grows (``Network.apply`` appends rows): its
    length is kept, and a restore drops the rows after it, so a snapshot
    costs nothing for the log however long the run (a copy of the log made
    a growing network's run quadratic in its length). Recorder buffers are
    kept by reference, because a step only ever writes the rows after the
    current count, and a structural change allocates new buffers.
    """

    def __init__(self, net):
        self.net = net
        self.t = net.t
        self.rng = net.rng.bit_generator.state
        self.log, self.log_rows = net.event_log, len(net.event_log)
        self.pops = {n: (p.ids.copy(), p.next_id, {v: a.copy() for v, a in p.state.items()},
                         None if p.dynamics is None else _dynamics_state(p.dynamics))
                     for n, p in net.populations.items()}
        # a sparse projection's SynapseIndex is immutable (events make new ones): kept, not copied
        self.projs = {n: (p.weights.copy(), p._stage()[1] if p.sparse else None if p.mask is None else p.mask.copy(),
                          {k: a.copy() for k, a in p.arrays.items()})
                      for n, p in net.projections.items()}
        self.recs = {n: (list(r._chunks), r._held, r._buf, r._tbuf, r._ids, r.count) for n, r in net.recorders.items()}
        from neurosim.io import _component_state

        self.comps = {k: a.copy() for k, a in _component_state(net).items()}

    def restore(self):
        net = self.net
        net.t = self.t
        net.rng.bit_generator.state = self.rng
        log = net.event_log = self.log
        for rows in (log.step, log.kind, log.population, log.unit, log.partner):
            del rows[self.log_rows:]
        for n, (ids, next_id, state, dyn) in self.pops.items():
            pop = net.populations.get(n)
            if pop is None:
                continue
            pop.ids, pop.next_id, pop.state = ids, next_id, state
            if dyn is not None and pop.dynamics is not None:
                _restore_dynamics(pop.dynamics, dyn)
        for n, (w, mask, arrays) in self.projs.items():
            proj = net.projections.get(n)
            if proj is not None:
                proj._restore(w, mask, arrays)
        for n, (chunks, held, buf, tbuf, ids, count) in self.recs.items():
            rec = net.recorders.get(n)
            if rec is not None:
                rec._chunks, rec._held, rec._buf, rec._tbuf, rec._ids, rec.count = chunks, held, buf, tbuf, ids, count
        from neurosim.io import _component_state

        live = _component_state(net)
        for k, a in self.comps.items():
            if k in live and live[k].shape == a.shape:
                live[k][...] = a


def _dynamics_state(dyn):
    info = getattr(dyn, "info", None)
    return (None if info is None else info.copy(), {k: b.copy() for k, b in dyn._buffers.items()})


def _restore_dynamics(dyn, saved):
    info, buffers = saved
    if info is not None:
        dyn.info[:] = info
    dyn._buffers = buffers


@contextlib.contextmanager
def _flushing(recorders: dict):
    """Flush the recorders however the run ends, so what was recorded is in their chunks."""
    try:
        yield
    finally:
        for rec in list(recorders.values()):
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


class _NumbaClock(numba_event.Listener):
    """Seconds spent inside one kind of numba event in this process (outermost events only; thread-safe).

    Parameters
    ----------
    kind : str
        ``"numba:compiler_lock"``: numba holding its compiler lock -- compiling, loading machine code from
        its cache and saving it there; ``"numba:compile"``: compiling only.
    """

    def __init__(self, kind: str):
        self.depth, self.started, self.seconds = 0, 0.0, 0.0
        self.lock = threading.Lock()
        numba_event.register(kind, self)

    def on_start(self, event):
        with self.lock:
            if self.depth == 0:
                self.started = time.perf_counter()
            self.depth += 1

    def on_end(self, event):
        with self.lock:
            self.depth -= 1
            if self.depth == 0:
                self.seconds += time.perf_counter() - self.started


#: what the Python form of a segment does not count as its own cost: kernels compiled, loaded or saved
_numba_clock = _NumbaClock("numba:compiler_lock")
#: seconds each segment (a numba dispatcher) has run in its Python form in this process, over all networks
_python_seconds: dict = {}


def _in_disk_cache(segment) -> bool:
    """Whether numba's on-disk cache holds machine code of ``segment`` (then its first call loads, not compiles).

    Read from numba's cache index file; should numba's internals change, the
    answer is False and the progress bar says "compiling" either way.
    """
    try:
        return os.path.exists(segment._cache._cache_file._index_path)
    except AttributeError:
        return False


class _Progress:
    """The run's progress bar, with a compile phase.

    A segment's first call compiles it (seconds to a minute, once per
    structure; later runs load it from the cache in :func:`~neurosim.codegen.cache_dir`).
    tqdm would count that time as the steps' and show an ETA of an hour, so
    while a segment compiles the bar says so (and a log line on the
    ``neurosim.engine`` logger), shows no ETA until a segment has run
    without compiling, and the compiled segment's steps are counted without
    entering tqdm's rate estimate.
    """

    def __init__(self, bar, name: str):
        self.bar, self.name = bar, name
        self.compiles = 0  # segments compiled (or loaded from numba's cache) in this run
        self.measured = False  # whether a segment that did not compile has been timed

    def compiling(self, cached: bool = False):
        self.compiles += 1
        if cached:
            what = f"loading segment {self.compiles}"
            log.info("%s: loading segment %d from numba's cache in %s", self.name, self.compiles, cache_dir())
        else:
            what = f"compiling segment {self.compiles}"
            log.info("%s: compiling segment %d with numba (the first run of this structure; cached in %s for "
                     "later runs)", self.name, self.compiles, cache_dir())
        bar = self.bar
        if bar is None or bar.disable:
            return
        self.measured = False
        bar.bar_format = NO_ETA_FORMAT  # the run's bar starts so; a compile mid-run goes back to it
        bar.set_description_str(f"{self.name}: {what}\N{HORIZONTAL ELLIPSIS}", refresh=True)

    def advance(self, steps: int, fresh: bool):
        bar = self.bar
        if bar is None or bar.disable:
            return
        if fresh:
            # counted, but kept out of the rate: the next update's interval starts now
            bar.n += steps
            bar.last_print_n = bar.n
            bar.last_print_t = bar._time()
            bar.set_description_str(self.name, refresh=True)
            return
        if not self.measured and steps:
            self.measured = True
            bar.bar_format = None
        bar.update(steps)
