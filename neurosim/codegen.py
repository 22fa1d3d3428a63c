"""Compiled segments: many steps of a whole network inside one numba call.

Components that can run compiled describe each of their per-step operations
as a :class:`KernelCall`: a module-level ``@njit`` function plus its
arguments, where an argument is either an :class:`ArrayRef` (state, looked
up afresh at the start of every segment because structural events reallocate
arrays) or a plain scalar parameter.

The engine turns the phase-ordered list of calls into the source of one
function, ``segment``, which loops over steps and calls the kernels in order.
Generating source (rather than composing dispatchers at run time) lets LLVM
inline the kernels into one loop, which is what makes the engine run at the
speed of a hand-fused loop. The source depends only on the network's
structure, not on parameter values or sizes, so it is written once to a file
named by its hash, imported, and compiled with ``cache=True``: later runs and
later processes load the machine code from numba's cache.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import textwrap
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from neurosim.params import ParamRef

__all__ = ["ArrayRef", "KernelCall", "SegmentPlan", "compile_segment", "cache_dir", "divergence_labels"]

# Status codes returned by a segment.
RAN_OUT = 0
DIVERGED = 1
TRIGGERED = 2
#: a trigger evaluated after the dynamics phase fired; the step stopped there
MIDSTEP = 3


@dataclass(frozen=True)
class ArrayRef:
    """A state array resolved when a segment starts.

    Parameters
    ----------
    get : callable
        Called with no arguments, returns the current array (arrays are
        replaced by structural events, so a segment looks them up afresh).
    label : str
        Names the array in error messages (e.g. ``"y.activity"``).
    """

    # called with no arguments; getters made in loops bind their loop variables as defaulted parameters
    get: Callable[..., np.ndarray]
    label: str


@dataclass
class KernelCall:
    """One compiled operation: ``func(*args)``; arrays are ArrayRefs, the rest scalars.

    Parameters
    ----------
    func : callable
        A numba-compiled kernel.
    args : tuple
        Its arguments: :class:`ArrayRef`, :class:`~neurosim.params.ParamRef`
        (declared parameters, read when a segment starts) or constants.
    label : str, optional
        Names the call in schedules and error messages.
    finite : str, optional
        When given, names the state the kernel writes (e.g. ``"W.weights"``)
        and says that the kernel returns whether everything it wrote is
        finite; a segment then stops at the step that state diverges.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.codegen import ArrayRef, KernelCall
    >>> a = np.array([1.0, 2.0])
    >>> call = KernelCall(np.sum, (ArrayRef(lambda: a, "a"),), label="sum of a")
    >>> float(call())
    3.0
    """

    func: Callable
    args: tuple
    label: str = ""
    finite: str | None = None

    def resolve(self, t: int | None = None) -> tuple:
        """The arguments now: arrays looked up, declared parameters read (a schedule at step ``t``).

        Parameters
        ----------
        t : int, optional
            The step a schedule is evaluated at (needed only for schedules).

        Returns
        -------
        tuple
            The arguments ``func`` is called with.
        """
        return tuple(a.get() if isinstance(a, ArrayRef) else a.at(t) if isinstance(a, ParamRef) else a
                     for a in self.args)

    def __call__(self, t: int | None = None) -> Any:
        return self.func(*self.resolve(t))


@dataclass
class SegmentPlan:
    """Everything a segment does in one step, in phase order.

    Parameters
    ----------
    inputs : list of ArrayRef
        The activity each input stream fills, one per stream.
    calls : list of KernelCall
        Dynamics, signals, plasticity, in order.
    checks : list of ArrayRef
        Tested for NaN/Inf every step (inputs are tested as they are loaded).
    triggers : list of KernelCall
        Conditions returning bool, evaluated on their own due steps.
    records : list of ArrayRef
        Sampled into the recorders' buffers.
    n_dynamics : int, optional
        The first ``n_dynamics`` calls form the dynamics phase.
    trigger_when : list of str, optional
        Per trigger: ``"events"`` or ``"dynamics"``.
    arrays : list of ArrayRef, optional
        Filled by :func:`compile_segment`: the distinct arrays in argument order.
    """

    inputs: list  # [(ArrayRef of the activity to fill)] one per input stream
    calls: list  # [KernelCall] dynamics, signals, plasticity, in order
    checks: list  # [ArrayRef] tested for NaN/Inf every step (inputs are tested as they are loaded)
    triggers: list  # [KernelCall] returning bool, evaluated on their own due steps (Trigger.every)
    records: list  # [ArrayRef] sampled into buffers
    n_dynamics: int = 0  # the first n_dynamics calls form the dynamics phase
    trigger_when: list = field(default_factory=list)  # per trigger: "events" or "dynamics"
    arrays: list = field(default_factory=list)  # filled by compile_segment: distinct ArrayRefs in argument order


def cache_dir() -> Path:
    """Where generated segment sources (and numba's cache next to them) live.

    ``NEUROSIM_CACHE_DIR`` overrides the default ``~/.cache/neurosim``
    (``$XDG_CACHE_HOME/neurosim`` when that is set). A cold cache costs
    the numba compilation of every segment on the first run; the files may
    be deleted at any time.

    Returns
    -------
    pathlib.Path
        The ``segments`` folder, created if missing.
    """
    root = os.environ.get("NEUROSIM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "neurosim"
    )
    path = Path(root) / "segments"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _func_ref(func) -> tuple[str, str]:
    """``(module, attribute path)`` under which the segment's module can import ``func``."""
    py = getattr(func, "py_func", func)
    module, qualname = py.__module__, py.__qualname__
    owner = getattr(sys.modules.get(module), qualname, None) if "." not in qualname else None
    if owner is not None and owner is not func and getattr(owner, "kernel", None) is func:
        # decorated by local_rule: the module's name now holds the rule class, which holds the kernel
        return module, f"{qualname}.kernel"
    if "<" in qualname:
        raise TypeError(
            f"kernel {qualname} must be a module-level function (not nested or a lambda) "
            "to run in a compiled segment"
        )
    return module, qualname


#: compile options a kernel keeps when the segment compiles it anew (see :func:`_rewrap_options`)
_KEPT_OPTIONS = ("nogil", "boundscheck", "fastmath", "error_model")


def _options_text(func, cache: bool) -> str:
    """``njit`` keyword arguments reproducing ``func``'s own compile options (bounds checks of user kernels)."""
    opts = {"cache": cache, "nogil": True}
    opts.update({k: v for k, v in getattr(func, "targetoptions", {}).items() if k in _KEPT_OPTIONS})
    return ", ".join(f"{k}={v!r}" for k, v in opts.items())


def _rewrap_options(func, ref: tuple) -> str | None:
    """Options to compile ``func`` with in the segment, when its module's name is not ``func`` itself; else None.

    ``local_rule(f, ...)`` called as a function leaves the module's name
    ``f`` bound to the plain function (or to the user's own ``@njit``
    dispatcher, compiled without bounds checks), while the rule holds a
    dispatcher of its own. Importing the name would hand numba a plain
    function ("Untyped global name"), or drop the bounds checks: the segment
    imports it and compiles its Python function with ``func``'s options.
    Not cached: ``f``'s cache file would be shared with the user's own
    dispatcher, whose options numba's cache index does not record.
    """
    module, qualname = ref
    obj = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if obj is func or not hasattr(func, "py_func"):
        return None
    if getattr(obj, "py_func", obj) is not func.py_func:
        return None  # some other object under that name: import it as before (numba says what is wrong)
    return _options_text(func, cache=False)


def _importable(ref: tuple) -> bool:
    module, qualname = ref
    mod = sys.modules.get(module)
    if mod is None:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            return False
    return hasattr(mod, qualname.partition(".")[0])


def _embedded_source(func, name: str) -> str:
    """The source of a kernel defined in a script (``__main__``, a notebook), renamed ``name``, compiled in the segment.

    A script cannot be imported by the segment's module, so its kernel's text
    is copied into the segment; it may use ``np`` (numpy) and ``math`` and its
    arguments, nothing else from the script.
    """
    py = getattr(func, "py_func", func)
    try:
        lines = inspect.getsource(py).splitlines()
    except (OSError, TypeError):
        raise TypeError(f"kernel {py.__qualname__} is defined in __main__ without retrievable source "
                        "(e.g. typed at an interactive prompt); define it in a .py file") from None
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    body = textwrap.dedent("\n".join(lines[start:]))
    body = body.replace(f"def {py.__name__}(", f"def {name}_py(", 1)
    return f"{body}\n\n\n{name} = njit({_options_text(func, cache=True)})({name}_py)\n"


#: per-step copies by number of dimensions (explicit loops; the generic copy reshapes and is slower)
_COPY = {1: "_copy1", 2: "_copy2"}

_digests: dict[tuple, str] = {}


def _kernel_digest(modules: tuple) -> str:
    """Hash of the source files the segment's kernels come from.

    numba's cache checks only the segment file's own time stamp, not the
    functions it calls; naming the kernels' source in the segment's text
    (hence in its file name) makes an edited or upgraded kernel compile anew
    instead of running stale machine code. All of ``neurosim.kernels`` is
    included because kernels call each other across its modules, and so is
    whether they are inlined (``NEUROSIM_INLINE_KERNELS``): the two builds are
    different machine code and keep apart in numba's cache.
    """
    key = tuple(sorted(set(modules)))
    if key not in _digests:
        from neurosim.kernels._build import INLINE

        files = {Path(f) for f in Path(__file__).with_name("kernels").glob("*.py")}
        for module in key:
            mod = sys.modules.get(module) or importlib.import_module(module)
            if file := getattr(mod, "__file__", None):
                files.add(Path(file))
        h = hashlib.sha1(f"inline={INLINE}".encode())
        for f in sorted(files):
            h.update(f.name.encode())
            h.update(f.read_bytes())
        _digests[key] = h.hexdigest()[:16]
    return _digests[key]


def divergence_labels(plan: SegmentPlan) -> list[str]:
    """What a segment's divergence index refers to: per-step checks, inputs, then checked kernel outputs.

    Parameters
    ----------
    plan : SegmentPlan
        The segment's plan.

    Returns
    -------
    list of str
        Labels, indexed as the segment reports a divergence.
    """
    labels = [c.label for c in plan.checks] + [r.label for r in plan.inputs]
    for call in plan.calls:
        if call.finite is not None and call.finite not in labels:
            labels.append(call.finite)
    return labels


def _generate(plan: SegmentPlan) -> tuple[str, list, list]:
    """Source of the segment function and the distinct arrays in argument order."""
    arrays: list[ArrayRef] = []
    index: dict[int, int] = {}

    def arr(ref: ArrayRef) -> str:
        key = id(ref.get())
        if key not in index:
            index[key] = len(arrays)
            arrays.append(ref)
        return f"a{index[key]}"

    funcs: dict[tuple, str] = {}
    embedded: dict[tuple, str] = {}
    rewrapped: dict[tuple, str] = {}
    scalars: list = []

    def fname(func) -> str:
        ref = _func_ref(func)
        if ref not in funcs:
            funcs[ref] = f"_k{len(funcs)}"
            if ref[0] == "__main__" or not _importable(ref):
                embedded[ref] = _embedded_source(func, funcs[ref])
            else:
                opts = _rewrap_options(func, ref)
                if opts is not None:
                    rewrapped[ref] = opts
        return funcs[ref]

    def call_src(call: KernelCall) -> str:
        parts = []
        for a in call.args:
            if isinstance(a, ArrayRef):
                parts.append(arr(a))
            elif isinstance(a, ParamRef) and a.is_schedule():
                # a scheduled parameter arrives as the segment's values, one per step
                parts.append(f"s{len(scalars)}[s]")
                scalars.append(a)
            else:
                parts.append(f"s{len(scalars)}")
                scalars.append(a)
        return f"{fname(call.func)}({', '.join(parts)})"

    body = []
    for k, ref in enumerate(plan.inputs):
        # a non-finite input is reported like diverged state: check index len(checks) + k
        body.append(f"        if not _load({arr(ref)}, in{k}[s]):")
        body.append(f"            return s + 1, 1, {len(plan.checks) + k}")
    labels = divergence_labels(plan)
    when = plan.trigger_when or ["events"] * len(plan.triggers)

    def trigger_src(g, call, code):
        # t_due[g]: the next s at which trigger g is evaluated (its own every, like a recorder's)
        body.append(f"        if s == t_due[{g}]:")
        body.append(f"            t_due[{g}] += t_every[{g}]")
        body.append(f"            if {call_src(call)}:")
        body.append(f"                return s + 1, {code}, {g}")

    for k, call in enumerate(plan.calls):
        if k == plan.n_dynamics:
            for g, tcall in enumerate(plan.triggers):
                if when[g] == "dynamics":
                    trigger_src(g, tcall, MIDSTEP)
        if call.finite is None:
            body.append(f"        {call_src(call)}")
        else:
            body.append(f"        if not {call_src(call)}:")
            body.append(f"            return s + 1, 1, {labels.index(call.finite)}")
    for c, ref in enumerate(plan.checks):
        body.append(f"        if not _finite({arr(ref)}):")
        body.append(f"            return s + 1, 1, {c}")
    if plan.n_dynamics >= len(plan.calls):
        for g, tcall in enumerate(plan.triggers):
            if when[g] == "dynamics":
                trigger_src(g, tcall, MIDSTEP)
    for g, call in enumerate(plan.triggers):
        if when[g] == "events":
            trigger_src(g, call, TRIGGERED)
    for r, ref in enumerate(plan.records):
        # due[r]: the next s at which recorder slot r samples (a compare, not a modulo, per step)
        body.append(f"        if s == due[{r}]:")
        body.append(f"            {_COPY.get(ref.get().ndim, '_copy')}(rb{r}[counts[{r}]], {arr(ref)})")
        body.append(f"            counts[{r}] += 1")
        body.append(f"            due[{r}] += every[{r}]")

    inputs = [f"in{k}" for k in range(len(plan.inputs))]
    recs = [f"rb{r}" for r in range(len(plan.records))]
    arrs = [f"a{i}" for i in range(len(arrays))]
    scal = [f"s{i}" for i in range(len(scalars))]
    sig = ", ".join(["n_steps", "due", "every", "counts", "t_due", "t_every"] + inputs + recs + arrs + scal)
    head = ["# generated by neurosim.codegen: one compiled segment",
            f"# kernel sources: {_kernel_digest(tuple(m for (m, q) in funcs if (m, q) not in embedded))}",
            "# user kernels (local_rule) keep their bounds checks",
            "import math  # noqa: F401  (for kernels embedded from scripts)", "import numpy as np  # noqa: F401",
            "from numba import njit",
            "from neurosim.kernels.dense import all_finite as _finite",
            "from neurosim.kernels.dense import copy_into as _copy",
            "from neurosim.kernels.dense import copy_1d as _copy1",
            "from neurosim.kernels.dense import copy_2d as _copy2",
            "from neurosim.kernels.dense import copy_2d_finite as _load"]
    for (module, qualname), name in funcs.items():
        if (module, qualname) in embedded:
            continue
        first, _, rest = qualname.partition(".")
        if (module, qualname) in rewrapped:
            head.append(f"from {module} import {first} as {name}_py")
            if rest:
                head.append(f"{name}_py = {name}_py.{rest}")
            head.append(f"{name} = njit({rewrapped[(module, qualname)]})(getattr({name}_py, 'py_func', {name}_py))")
        elif rest:
            head.append(f"from {module} import {first} as {name}_owner")
            head.append(f"{name} = {name}_owner.{rest}")
        else:
            head.append(f"from {module} import {qualname} as {name}")
    for text in embedded.values():
        head.append("\n\n" + text)
    src = "\n".join(head) + "\n\n\n@njit(cache=True, nogil=True)\ndef segment(" + sig + "):\n"
    src += "    for s in range(n_steps):\n" + ("\n".join(body) if body else "        pass") + "\n"
    src += "    return n_steps, 0, 0\n"
    return src, arrays, scalars


_loaded: dict[str, Callable] = {}
# One lock per process: threads building networks of one structure at once
# must not import the same segment module twice or see it half initialized.
_load_lock = threading.Lock()


def compile_segment(plan: SegmentPlan) -> tuple[Any, list, list, str]:
    """Return ``(segment_function, arrays, scalars, source)`` for a plan.

    The source is generated, written to :func:`cache_dir` and imported once
    per process; numba compiles it on the first call (or loads it from its
    cache).

    Parameters
    ----------
    plan : SegmentPlan
        What one step does; its ``arrays`` are filled here.

    Returns
    -------
    tuple
        ``(segment_function, arrays, scalars, source)``, the function a numba
        dispatcher; ``scalars`` are the
        scalar arguments in order: constants, or
        :class:`~neurosim.params.ParamRef` read when a segment starts (see
        :func:`resolve_scalars`).
    """
    src, arrays, scalars = _generate(plan)
    plan.arrays = arrays
    seg = _loaded.get(src)
    if seg is None:
        with _load_lock:
            seg = _loaded.get(src)
            if seg is None:
                seg = _load(src)
                _loaded[src] = seg
    return seg, arrays, scalars, src


def _load(src: str):
    digest = hashlib.sha1(src.encode()).hexdigest()[:16]
    path = cache_dir() / f"segment_{digest}.py"
    if not path.exists() or path.read_text() != src:
        # a name unique to this process and thread: concurrent writers never share a temporary file,
        # and os.replace is atomic, so no reader imports half a file
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)
    name = f"neurosim_segment_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # registered only once complete (numba's cache locates the function through its module)
    sys.modules[name] = module
    return module.segment


def resolve_scalars(scalars: list, t0: int, n: int) -> list:
    """Scalar arguments of a segment covering steps ``t0 .. t0 + n - 1``: parameters read now, schedules drawn."""
    out = []
    for a in scalars:
        if isinstance(a, ParamRef):
            out.append(a.over(t0, n) if a.is_schedule() else a.current())
        else:
            out.append(a)
    return out
