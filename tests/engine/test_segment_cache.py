"""A compiled segment is re-generated when the source of a kernel it calls changes.

numba's on-disk cache keys a function on its own file's time stamp only, so
a segment that kept its text after a kernel edit would silently run the old
machine code.
"""

import hashlib
import os
import sys
import textwrap

import numpy as np

from neurosim import codegen
from neurosim.codegen import ArrayRef, KernelCall, SegmentPlan


def _plan_with(module):
    a = np.zeros((1, 2))
    return SegmentPlan(inputs=[], calls=[KernelCall(module.bump, (ArrayRef(lambda: a, "a"),))], checks=[], triggers=[], records=[])


def _write(path, delta):
    path.write_text(textwrap.dedent(f"""
        from numba import njit

        @njit(cache=True)
        def bump(a):
            a[0, 0] += {delta}
    """))
    # an edit a few seconds after the last one: Python's bytecode cache (where bytecode is written) validates a
    # .pyc by the source's size and mtime in whole seconds, and the two versions have the same size
    stamp = 1_700_000_000 + 10 * int(delta)
    os.utime(path, (stamp, stamp))


def test_editing_a_kernel_changes_the_segment_and_its_result(tmp_path, monkeypatch):
    monkeypatch.setenv("NEUROSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    src = tmp_path / "user_kernels_for_cache_test.py"
    results, sources = [], []
    for delta in (1.0, 2.0):
        _write(src, delta)
        sys.modules.pop("user_kernels_for_cache_test", None)
        monkeypatch.setattr(codegen, "_digests", {})
        import user_kernels_for_cache_test as mod

        plan = _plan_with(mod)
        seg, arrays, scalars, text = codegen.compile_segment(plan)
        a = arrays[0].get()
        seg(3, np.zeros(0, np.int64), np.ones(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.ones(0, np.int64), *[r.get() for r in arrays], *scalars)
        results.append(a[0, 0])
        sources.append(text)
    assert sources[0] != sources[1]
    assert results == [3.0, 6.0]


def test_one_structure_compiles_once_whatever_stream_feeds_it(monkeypatch):
    # ArrayStream hands out read-only views of its data, GaussianStream fresh writable draws; numba
    # types the two differently, so before inputs were given one type the same structure compiled its
    # whole segment a second time (seconds) when a stream of the other kind fed it.
    import neurosim as ns
    from neurosim.streams import GaussianStream

    compiled = []
    real = codegen.compile_segment

    def spy(plan):
        out = real(plan)
        compiled.append(out[0])
        return out

    monkeypatch.setattr("neurosim.engine.compile_segment", spy)
    for stream in (GaussianStream(np.ones(3), chunk=4), ns.ArrayStream(np.ones((7, 1, 3)))):
        net = ns.Network(seed=0)
        x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.1, tol=0.0, max_iter=5))
        net.add(x, y)
        net.connect(stream, x)
        net.add(ns.Projection("W", x, y, rule=ns.Oja(0.01)))
        net.record(y, "activity")
        net.run(10, backend="compiled")  # compiled before its first step (not the Python form of a short run)
    assert len(compiled) == 2 and compiled[0] is compiled[1]  # one structure, one dispatcher
    assert len(compiled[0].signatures) == 1


def test_a_rewrapped_kernel_is_one_dispatcher_for_every_structure():
    # BCM's threshold kernel is compiled anew by the segments (its module's name holds the plain function);
    # each structure's module used to make a dispatcher of its own, compiling it again per structure
    import neurosim as ns
    from neurosim import rules

    def bcm_segment(record):
        net = ns.Network(seed=0)
        x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
        net.add(x, y)
        net.connect(ns.ArrayStream(np.ones((3, 1, 4))), x)
        net.add(ns.Projection("W", x, y, rule=rules.BCM(rate=0.1, tau_rate=0.5)))
        if record:
            net.record(y, "activity")
        net.run(1)
        src = codegen.compile_segment(net._engine._plan())[3]
        name = next(line.split(" = ")[0] for line in src.splitlines() if "= _rewrapped(" in line)
        return sys.modules[f"neurosim_segment_{hashlib.sha1(src.encode()).hexdigest()[:16]}"].__dict__[name], src

    (first, a), (second, b) = bcm_segment(False), bcm_segment(True)
    assert a != b  # two structures, two modules
    assert first is second
    assert codegen.rewrapped(first.py_func, cache=False, nogil=True) is codegen.rewrapped(first.py_func, nogil=True,
                                                                                            cache=False)
    assert codegen.rewrapped(first.py_func, cache=False) is not codegen.rewrapped(first.py_func, cache=False,
                                                                                   boundscheck=True)
