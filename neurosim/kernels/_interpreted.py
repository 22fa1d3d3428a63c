"""neurosim's kernels run by the Python interpreter, with the bits of their compiled form (issue 40).

A structure's first steps need its kernels compiled: about two seconds of
numba for the README's network before its first step, most of it for
kernels whose first steps take microseconds. Run by the interpreter instead
(the Python function numba compiles, ``dispatcher.py_func``), a kernel gives
the same numbers as its machine code when every operation it does is one
IEEE operation on float64 scalars in the same order: ``+ - * /``,
comparisons, ``abs``, ``max`` and ``min`` on array elements, loops, views.
The one array operation the kernels below do, the BLAS product ``np.dot``,
goes to a small compiled function that makes numba's own BLAS call with the
same argument types, so it is the same product, not NumPy's (which may link
another BLAS). :data:`INTERPRETABLE` lists the kernels for which this holds;
``tests/engine/test_interpreted_kernels.py`` checks each against its
machine code bit for bit, on every branch.

:func:`interpreted` builds the interpreted form of such a kernel: its Python
function with the kernels it calls interpreted too, and numba's
``@overload`` functions (which pick an implementation by the arguments'
numba types) resolved the way numba resolves them, from ``numba.typeof``
of the arguments at each call. It is about 100 times slower than the
machine code: the engine runs it only for the first steps of a small
network, while the machine code compiles in a second process
(:mod:`neurosim.kernels._background`).
"""

from __future__ import annotations

import inspect
import types
from typing import Callable

import numba
import numpy as np
from numba import njit
from numba.core.registry import CPUDispatcher

from neurosim.kernels import dense, plasticity

__all__ = ["INTERPRETABLE", "interpreted", "signature", "code_size", "machine_errors"]

#: the kernels a segment calls whose interpreted form gives their compiled bits (checked by the tests)
INTERPRETABLE = frozenset({
    dense.synaptic_drive, dense.jacobi_fixed, dense.jacobi_tolerance, dense.jacobi_relax, dense.all_finite,
    dense.copy_into, dense.copy_1d, dense.copy_2d, dense.copy_2d_finite,
    plasticity.squared_norm, plasticity.cumulative_activity, plasticity.normalized_hebbian,
})

#: numba ``@overload`` functions the kernels above call: the function and its typing function
_OVERLOADS = {dense._lateral: dense._lateral_typed, dense._relax_small: dense._relax_small_typed}


@njit(cache=True, nogil=True)
def _blas_dot(a, b, out):
    """``np.dot(a, b, out)`` as the kernels call it: numba's BLAS call for these argument types."""
    np.dot(a, b, out)


class _NumPy:
    """The ``np`` an interpreted kernel sees: NumPy, except that ``np.dot`` is numba's BLAS call."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def dot(a, b, out=None):
        if out is None:  # the kernels above always pass ``out``
            raise NotImplementedError("an interpreted kernel's np.dot needs out=")
        _blas_dot(a, b, out)
        return out


_NP = _NumPy()
_forms: dict = {}


def interpreted(kernel) -> Callable:
    """The interpreted form of ``kernel`` (a numba dispatcher in :data:`INTERPRETABLE`, or a kernel they call).

    Raises
    ------
    ValueError
        If ``kernel`` is not in :data:`INTERPRETABLE`.
    """
    if kernel not in INTERPRETABLE:
        raise ValueError(f"{getattr(kernel, '__name__', kernel)!r} has no interpreted form with its compiled bits")
    return _form(kernel)


def _form(func) -> Callable:
    """``func``'s Python function, its globals (and closure) pointing at the interpreted forms of its callees."""
    form = _forms.get(func)
    if form is not None:
        return form
    py = func.py_func if isinstance(func, CPUDispatcher) else func
    namespace = dict(py.__globals__)
    form = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, py.__closure__)
    _forms[func] = form  # before the callees: a kernel may reach itself again
    for name in py.__code__.co_names:
        if name in namespace:  # a global (co_names also holds attribute names and builtins)
            namespace[name] = _callee(namespace[name])
    if py.__closure__:  # an overload's implementation is a closure over the kernels it calls
        cells = tuple(types.CellType(_callee(c.cell_contents)) for c in py.__closure__)
        form = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, cells)
        _forms[func] = form
    return form


def _callee(value):
    """What an interpreted kernel calls in place of ``value`` (a global or a closure's cell)."""
    if isinstance(value, CPUDispatcher):
        return _form(value)
    if value is np:
        return _NP
    if callable(value) and not isinstance(value, type) and value in _OVERLOADS:
        return _overloaded(value)
    return value


def _overloaded(func) -> Callable:
    """An ``@overload`` function, interpreted: the implementation numba's typing picks for the arguments."""
    typing = _OVERLOADS[func]
    chosen: dict = {}

    def call(*args):
        key = tuple(numba.typeof(a) for a in args)
        impl = chosen.get(key)
        if impl is None:
            impl = chosen[key] = _form(typing(*key))
        return impl(*args)

    return call


def machine_errors():
    """NumPy's floating-point errors set as the machine code has them: NaN and Inf silently, x / 0 an error.

    (numba's error model raises ``ZeroDivisionError`` where NumPy would warn and give Inf.)
    """
    return np.errstate(divide="raise", over="ignore", under="ignore", invalid="ignore")


def signature(kernel, args) -> tuple:
    """The numba signature a call ``kernel(*args)`` compiles (omitted defaults as numba folds them)."""
    params = list(inspect.signature(kernel.py_func).parameters.values())
    return tuple(numba.typeof(a) for a in args) + tuple(numba.types.Omitted(p.default) for p in params[len(args):])


def code_size(kernel) -> int:
    """Bytes of Python bytecode numba compiles for ``kernel``: its own and every kernel it calls (once each).

    A rough measure of its compile time, to share the compiling between two processes.
    """
    seen: set = set()
    todo = [kernel]
    size = 0
    while todo:
        func = todo.pop()
        py = func.py_func if isinstance(func, CPUDispatcher) else func
        if py in seen:
            continue
        seen.add(py)
        size += len(py.__code__.co_code)
        for name in py.__code__.co_names:
            value = py.__globals__.get(name)
            if isinstance(value, CPUDispatcher):
                todo.append(value)
            elif callable(value) and not isinstance(value, type) and value in _OVERLOADS:
                todo.append(value)
    return size
