"""A new structure's first steps: interpreted kernels while a second process compiles them (issue 40).

A segment whose machine code is not ready runs its Python form (the
generated loop, run by the interpreter; see :data:`neurosim.engine.PYTHON_TIER_SECONDS`),
which calls the compiled kernels: their first calls compile them, about two
seconds for the README's network before its first step. For a small network
whose kernels all have an interpreted form with their compiled bits
(:mod:`neurosim.kernels._interpreted`), :class:`KernelWarmup` runs the
Python form with those forms instead:

1. the first segment is one step; it records the signature of every kernel
   it calls;
2. a second process compiles those signatures into numba's disk cache
   (:mod:`neurosim.kernels._background`); meanwhile the engine runs short
   segments (about :data:`POLL_SECONDS` each) with the interpreted kernels;
3. when that process has ended, the Python form calls the compiled kernels,
   whose first calls load the machine code from the cache.

The numbers are the same whichever kernels ran which steps. The steps run
here are not the Python form's cost (:data:`neurosim.engine.PYTHON_TIER_SECONDS`
counts from the first segment with compiled kernels).
"""

from __future__ import annotations

import logging
import os
import threading
import types

from typing import TYPE_CHECKING

import numpy as np
from numba.core.registry import CPUDispatcher

if TYPE_CHECKING:
    from neurosim.kernels._background import BackgroundCompile

__all__ = ["KernelWarmup", "warmup_for", "MAX_ELEMENTS", "POLL_SECONDS"]

#: networks with more array elements than this (weights, activities, parameters) compile their kernels before
#: their first step: interpreted, a step of theirs would cost more than the compile saves
MAX_ELEMENTS = 4096
#: the interpreted segments last about this long, so the switch to machine code follows the second process
POLL_SECONDS = 0.1

log = logging.getLogger("neurosim.engine")

#: the warm-up of each segment (a numba dispatcher) in this process, shared by every network of its structure
_warmups: dict = {}
_lock = threading.Lock()


def warmup_for(segment, arrays) -> KernelWarmup | None:
    """The warm-up a segment's Python form runs now, or None (it calls the compiled kernels).

    Parameters
    ----------
    segment : numba dispatcher
        The generated segment (:func:`neurosim.codegen.compile_segment`).
    arrays : list of arrays
        The segment's array arguments (weights, activities, parameters).

    Returns
    -------
    KernelWarmup or None
        None when the warm-up is over or was never possible: a kernel without
        an interpreted form or that another process cannot import, every
        kernel compiled or in numba's disk cache already, a large network
        (``arrays`` hold more than :data:`MAX_ELEMENTS` elements), or
        background compiles off (``NEUROSIM_BACKGROUND_COMPILE=0``, one CPU).
    """
    if sum(a.size for a in arrays if isinstance(a, np.ndarray)) > MAX_ELEMENTS:
        return None  # checked for every network: a large one of a structure a small one is warming up too
    with _lock:
        if segment in _warmups:
            warmup = _warmups[segment]
            return None if warmup is None or warmup.finished() else warmup
        warmup = _warmups[segment] = _new_warmup(segment)
        return warmup


def _new_warmup(segment) -> KernelWarmup | None:
    from neurosim.kernels._background import enabled, importable
    from neurosim.kernels._interpreted import INTERPRETABLE

    if not enabled():
        return None
    kernels = {name: value for name, value in segment.py_func.__globals__.items()
               if isinstance(value, CPUDispatcher) and value is not segment}
    if not all(k in INTERPRETABLE and importable(k) for k in kernels.values()):
        return None
    if all(k.overloads or _cached(k) for k in kernels.values()):
        return None  # machine code at hand: loading it takes milliseconds (else the first step tells which is not)
    return KernelWarmup(segment, kernels)


def _cached(kernel) -> bool:
    """Whether numba's disk cache holds machine code of ``kernel`` (for some signature)."""
    try:
        return os.path.exists(kernel._cache._cache_file._index_path)
    except AttributeError:
        return False


class KernelWarmup:
    """A segment's Python form with interpreted kernels, until a second process has compiled them.

    Parameters
    ----------
    segment : numba dispatcher
        The generated segment.
    kernels : dict
        The kernels its module calls, by their names there.
    """

    def __init__(self, segment, kernels: dict):
        from neurosim.kernels._interpreted import interpreted, machine_errors

        self.signatures: dict = {}  # kernel -> the signature its first call had
        self._names = {kernel: name for name, kernel in kernels.items()}
        self._namespace = namespace = dict(segment.py_func.__globals__)
        for name, kernel in kernels.items():
            namespace[name] = self._recording(kernel, interpreted(kernel))
        py = segment.py_func
        form = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__)

        def function(*args):
            try:
                with machine_errors():
                    return form(*args)
            except FloatingPointError as exc:  # NumPy's word for what the machine code raises
                raise ZeroDivisionError("division by zero") from exc

        #: the segment's Python form calling the interpreted kernels
        self.function = function
        self.seconds_per_step: float | None = None
        self._job: BackgroundCompile | None = None
        self._finished = False
        self._lock = threading.Lock()

    def _recording(self, kernel, form):
        signatures = self.signatures

        def call(*args):
            if kernel not in signatures:
                from neurosim.kernels._interpreted import signature
                signatures[kernel] = signature(kernel, args)
            return form(*args)

        return call

    def span(self, n: int) -> int:
        """How many of ``n`` steps the next interpreted segment runs.

        Parameters
        ----------
        n : int
            The steps the engine would run.

        Returns
        -------
        int
            One before the second process starts, then about :data:`POLL_SECONDS` of steps.
        """
        if self._job is None or self.seconds_per_step is None:
            return min(n, 1)  # the first step gives the signatures the second process needs
        return min(n, max(1, int(POLL_SECONDS / self.seconds_per_step)))

    def after_segment(self, seconds: float, steps: int):
        """Note an interpreted segment's time; start the second process after the first.

        Parameters
        ----------
        seconds : float
            The segment's wall time.
        steps : int
            The steps it ran.
        """
        if steps:
            self.seconds_per_step = seconds / steps
        with self._lock:
            if self._job is None and self.signatures:
                from neurosim.kernels._background import BackgroundCompile
                from neurosim.kernels._interpreted import code_size
                seen = dict(self.signatures)  # a copy: networks of this structure in other threads may add to it
                jobs = sorted(((k, sig) for k, sig in seen.items()
                               if sig not in k.overloads and not _cached(k)), key=lambda job: -code_size(job[0]))
                if len(jobs) < 2:
                    self._finished = True  # one kernel: compiling it here is as quick
                    return
                # The largest kernel compiles here, at its next call, while the second process compiles the
                # others (it first spends about a second importing numba and neurosim): the two share the
                # compiling, and the steps after that call run its machine code with the others interpreted.
                own = jobs[0][0]
                self._namespace[self._names[own]] = own
                log.info("compiling %s here and %d kernels in a second process; the steps in between run "
                         "interpreted", own.__name__, len(jobs) - 1)
                try:
                    self._job = BackgroundCompile(jobs[1:])
                except OSError as exc:  # no process to start (no interpreter, no temporary file): compile here
                    log.warning("could not start a process to compile kernels (%s); they compile here", exc)
                    self._finished = True

    def finished(self) -> bool:
        """Whether the compiled kernels are to be called now.

        Returns
        -------
        bool
            True once the second process has ended (or was not needed).
        """
        with self._lock:
            if not self._finished and self._job is not None and self._job.done():
                self._finished = True
                log.info("the second process has compiled the kernels; the Python form calls them from now on")
            return self._finished
