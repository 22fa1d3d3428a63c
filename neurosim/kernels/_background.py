"""Compiling kernels in a second process, into numba's disk cache, while the first one goes on (issue 40).

numba compiles in the calling thread and holds the interpreter most of the
time (a compile in a thread took twice as long next to interpreted steps,
and slowed them), so the engine hands a structure's first kernels to a
second Python process: it imports them by name and compiles each signature
with ``cache=True``, which writes the machine code to numba's disk cache,
the one this process reads (the same ``NUMBA_CACHE_DIR``, and neurosim's
stamp of the kernels' sources, :mod:`neurosim.kernels._cache`). Meanwhile
this process runs the kernels' interpreted forms
(:mod:`neurosim.kernels._interpreted`). When the second process has ended,
the kernels' first calls here load their machine code from the cache.

Nothing waits on the second process: :meth:`BackgroundCompile.done` polls.
If it fails, or the cache holds nothing this process can load (another
build, a read-only cache), the first calls here compile as they would have
without it: the same machine code, later. It is stopped when this process
exits.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import weakref

__all__ = ["BackgroundCompile", "importable", "enabled"]

log = logging.getLogger("neurosim.engine")

_running: weakref.WeakSet = weakref.WeakSet()


def enabled() -> bool:
    """Whether structures compile their first kernels in a second process.

    Off with ``NEUROSIM_BACKGROUND_COMPILE=0`` (the test suite sets it: its
    dedicated tests turn it on) and on a machine with one CPU for this
    process, where the two processes would share it.
    """
    value = os.environ.get("NEUROSIM_BACKGROUND_COMPILE", "1")
    if value not in ("0", "1"):
        raise ValueError(f"NEUROSIM_BACKGROUND_COMPILE must be 0 or 1; got {value!r}")
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return value == "1" and cpus >= 2


def importable(kernel) -> tuple[str, str] | None:
    """``(module, name)`` under which another process imports ``kernel``, or None."""
    py = getattr(kernel, "py_func", None)
    if py is None:
        return None
    module, name = py.__module__, py.__qualname__
    try:
        if getattr(sys.modules[module], name) is not kernel:
            return None
    except (KeyError, AttributeError):
        return None
    return module, name


class BackgroundCompile:
    """A second process compiling ``jobs`` (``[(kernel, signature)]``) into numba's disk cache.

    Parameters
    ----------
    jobs : list of (numba dispatcher, tuple of numba types)
        Importable kernels (:func:`importable`) and the signatures to compile.
    """

    def __init__(self, jobs: list):
        specs = []
        for kernel, sig in jobs:
            where = importable(kernel)
            if where is None:
                raise ValueError(f"{kernel!r} cannot be imported by another process")
            specs.append((*where, sig))
        self._errors = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-m", "neurosim.kernels._background"],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._errors)
        stdin = self._process.stdin
        assert stdin is not None  # stdin=PIPE
        try:
            stdin.write(pickle.dumps(specs))
            stdin.close()
        except OSError:  # the process died before reading: done() reports it
            pass
        self.names = [name for _, name, _ in specs]
        _running.add(self)
        # reaps the process when it ends, whether or not anyone polls again (no zombie in a long session)
        threading.Thread(target=self._process.wait, daemon=True, name="neurosim-background-compile").start()

    def done(self) -> bool:
        """Whether the process has ended (successfully or not); never waits."""
        code = self._process.poll()
        if code is None:
            return False
        if code != 0:
            self._errors.seek(0)
            tail = self._errors.read().decode(errors="replace")[-2000:]
            log.warning("compiling %s in a second process failed (exit status %s); they compile here on first use:"
                        "\n%s", ", ".join(self.names), code, tail)
        self._errors.close()
        _running.discard(self)
        return True

    def stop(self):
        """End the process if it still runs."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        _running.discard(self)


@atexit.register
def _stop_all():
    for job in list(_running):
        job.stop()


def main():
    """The second process: compile every ``(module, name, signature)`` read (pickled) from stdin."""
    specs = pickle.loads(sys.stdin.buffer.read())
    for module, name, sig in specs:
        getattr(importlib.import_module(module), name).compile(sig)


if __name__ == "__main__":
    main()
