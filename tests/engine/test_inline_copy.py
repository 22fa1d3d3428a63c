"""numba's inliner with neurosim's shared-memo copy (``neurosim/kernels/_inline_copy.py``).

The hook only makes numba copy a callee's variables once per inlining rather
than once per block. These tests check that it is in place after a compile,
that inlined code computes the same bits with and without it, and that it
does copy less (the reason it exists).
"""

import contextlib
import copy

import numpy as np
from numba import njit
from numba.core import inline_closurecall as icc
from numba.core import ir

import neurosim  # noqa: F401  (installs the hook at the first compile)
from neurosim.kernels import _inline_copy


@contextlib.contextmanager
def _without_hook():
    """numba's own inliner for the duration (the hook's wrapped method and the real ``copy``)."""
    shim, wrapped = icc.copy, icc.InlineWorker.inline_ir
    icc.copy, icc.InlineWorker.inline_ir = copy, wrapped.__wrapped__
    try:
        yield
    finally:
        icc.copy, icc.InlineWorker.inline_ir = shim, wrapped


@contextlib.contextmanager
def _counting_variable_copies(counter):
    original = ir.Var.__deepcopy__

    def counted(self, memo):
        counter[0] += 1
        return original(self, memo)

    ir.Var.__deepcopy__ = counted
    try:
        yield
    finally:
        ir.Var.__deepcopy__ = original


def _callee_source():
    """A callee with many blocks and variables (loops, branches), as the Jacobi kernels have."""
    @njit(inline="always")
    def callee(y, d, m, eta, n_iter):
        n = y.shape[0]
        c = 1.0 - eta
        big = 0.0
        for it in range(n_iter):
            for i in range(n):
                acc = 0.0
                for j in range(n):
                    acc += m[i, j] * y[j]
                v = c * y[i] + eta * (d[i] - acc)
                if abs(v) > big:
                    big = abs(v)
                elif v != v:
                    big = v
                y[i] = v
        return big

    @njit
    def caller(y, d, m, eta, n_iter):
        return callee(y, d, m, eta, n_iter) + callee(y, d, m, eta, 1)

    return caller


def _run(caller):
    rng = np.random.default_rng(0)
    n = 7
    m = rng.normal(size=(n, n)) * 0.1
    y, d = rng.normal(size=n), rng.normal(size=n)
    out = caller(y, d, m, 0.3, 11)
    return out, y


def test_the_hook_is_in_place_after_a_compile():
    njit(lambda x: x + 1)(1)  # any compilation installs it
    assert getattr(icc.InlineWorker.inline_ir, "_neurosim_shared_memo", False)
    assert icc.copy.deepcopy is _inline_copy._shared_memo_deepcopy
    assert _inline_copy.install()  # idempotent: already installed


def test_inlined_code_gives_the_same_bits_and_copies_less():
    njit(lambda x: x + 1)(1)
    with_hook, without = [0], [0]
    with _counting_variable_copies(with_hook):
        out_hook, y_hook = _run(_callee_source())
    with _without_hook(), _counting_variable_copies(without):
        out_plain, y_plain = _run(_callee_source())
    assert out_hook == out_plain and np.array_equal(y_hook, y_plain)
    # one copy of the callee's variables per copy of it (two per inlining), not one per block
    assert 0 < with_hook[0] < without[0] / 3, (with_hook[0], without[0])


def test_blocks_copied_in_one_inlining_share_one_scope():
    njit(lambda x: x + 1)(1)
    seen = []
    original = icc.InlineWorker.inline_ir

    def spy(self, caller_ir, block, i, callee_ir, *args, **kwargs):
        result = original(self, caller_ir, block, i, callee_ir, *args, **kwargs)
        seen.append(result)
        return result

    icc.InlineWorker.inline_ir = spy
    try:
        _run(_callee_source())
    finally:
        icc.InlineWorker.inline_ir = original
    assert seen, "nothing was inlined"
    for result in seen:
        callee_copy = result[0]  # the unmutated copy inline_ir returns
        scopes = {id(b.scope) for b in callee_copy.blocks.values()}
        assert len(scopes) == 1


def test_a_numba_without_the_hook_points_is_left_alone(monkeypatch):
    # a numba whose inliner has no InlineWorker.inline_ir: install() changes nothing and says so
    monkeypatch.setattr(icc, "InlineWorker", type("InlineWorker", (), {}))
    before = icc.copy
    assert _inline_copy.install() is False
    assert icc.copy is before
