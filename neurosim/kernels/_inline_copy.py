"""One copy of a callee's variables per inlining, instead of one per block (numba compile time).

numba inlines a function marked ``inline="always"`` by deep-copying its IR,
block by block (``InlineWorker.inline_ir``'s ``copy_ir``), each block with a
fresh ``copy.deepcopy`` memo. Every variable of a block refers to the
function's scope, which holds every variable of the function, so each block's
copy copies the whole scope again: the cost is blocks x variables. For
``jacobi_relax`` (its measured and unmeasured loops and the lateral product,
inlined) that was about half of its compilation, and the same holds for
every compiled segment, into which the step's kernels are inlined.

Here the blocks copied within one inlining share one memo per source scope,
which is exactly what a single ``copy.deepcopy`` of all the blocks would
give: the same blocks, with one copy of the scope they all share, as the
original IR has. Nothing else changes: the IR numba inlines, types and lowers
is the same, so the machine code and the numbers are the same
(``tests/engine/test_inline_copy.py``).

The hook replaces ``inline_closurecall.copy`` (the module's only use of
``copy`` is that ``deepcopy``) and wraps ``InlineWorker.inline_ir`` to
delimit one inlining; neither is a public API (the same in numba 0.59 and
0.68). If a numba release changes them, :func:`install` leaves numba as it
is: compilation is slower, never different. :func:`install_on_first_compile`
puts it in place when numba starts its first compilation, so that ``import
neurosim`` does not import numba's inliner (30 ms) for a run that loads
every kernel from the cache.
"""

from __future__ import annotations

import copy
import threading
import types

from numba.core import event as numba_event

_state = threading.local()


def _shared_memo_deepcopy(x, memo=None):
    """``copy.deepcopy``; a block copied within one inlining shares the memo of its scope's other blocks."""
    stack = getattr(_state, "inlinings", None)
    if memo is None and stack and isinstance(x, _Block):
        memo = stack[-1].setdefault(id(x.scope), {})
    return copy.deepcopy(x, memo)


def install() -> bool:
    """Install the shared-memo copy into numba's inliner; True when installed (or already)."""
    try:
        from numba.core import inline_closurecall as icc
        from numba.core import ir
    except ImportError:  # pragma: no cover - numba without that module: leave it alone
        return False
    worker = getattr(icc, "InlineWorker", None)
    inline_ir = getattr(worker, "inline_ir", None)
    if inline_ir is None or getattr(icc, "copy", None) is not copy:
        return getattr(inline_ir, "_neurosim_shared_memo", False)
    global _Block
    _Block = ir.Block

    def inline_ir_shared(self, *args, **kwargs):
        stack = _state.__dict__.setdefault("inlinings", [])
        stack.append({})  # one inlining: its copies of the callee (and of that copy) each get their memo
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            stack.pop()

    inline_ir_shared._neurosim_shared_memo = True  # type: ignore[attr-defined]
    inline_ir_shared.__wrapped__ = inline_ir  # type: ignore[attr-defined]
    shim = types.ModuleType("copy")
    shim.__dict__.update({k: v for k, v in vars(copy).items() if not k.startswith("__")})
    shim.__dict__["deepcopy"] = _shared_memo_deepcopy
    icc.copy = shim
    setattr(worker, "inline_ir", inline_ir_shared)
    return True


_Block: type = type(None)


class _InstallOnCompile(numba_event.Listener):
    """Installs the shared-memo copy when numba starts its first compilation, then does nothing."""

    done = False

    def on_start(self, event) -> None:
        if not self.done:
            self.done = True
            install()

    def on_end(self, event) -> None:
        pass


def install_on_first_compile() -> None:
    """Install the shared-memo copy at numba's first compilation in this process."""
    numba_event.register("numba:compile", _InstallOnCompile())
