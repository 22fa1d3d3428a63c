"""A compiled segment is re-generated when the source of a kernel it calls changes.

numba's on-disk cache keys a function on its own file's time stamp only, so
a segment that kept its text after a kernel edit would silently run the old
machine code.
"""

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
