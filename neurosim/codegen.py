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

__all__ = ["ArrayRef", "KernelCall", "GeneratedKernel", "SegmentPlan", "compile_segment", "cache_dir",
           "divergence_labels"]

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


class GeneratedKernel:
    """A kernel a component writes as source text, compiled inside every segment that calls it.

    For kernels whose shape depends on the component (how many per-unit
    variables and parameters a per-synapse rule takes, see
    :func:`neurosim.rules.local_rule`), so that no fixed module-level
    function can be written. The segment embeds the text, with the kernels
    it calls resolved like any other kernel of the segment (imported from
    their module, or their source embedded when they live in a script), and
    compiles it with the segment (cached with it). Outside a segment (the
    per-step path, tests) it is compiled on its first call.

    Parameters
    ----------
    name : str
        Names the kernel in messages (e.g. ``"MyRule.sparse_rows"``).
    source : str
        One function, ``def {name}(...)``: ``{name}`` becomes the segment's
        name for it, and ``{key}`` for each key of ``calls`` the segment's
        name of that kernel. ``np``, ``math`` and ``prange`` are available.
    calls : dict of str -> callable
        The numba kernels it calls, by the names used in ``source``.
    options : dict, optional
        ``njit`` options besides ``cache`` and ``nogil`` (e.g. ``parallel``).
    serial : GeneratedKernel, optional
        A form giving the same bits without threads, run instead of this
        one when called outside a segment: an exception raised inside
        numba's thread pool (a user kernel's bounds check) reaches Python
        as a ``SystemError``; the per-step path, which a failed segment
        replays, then raises the kernel's own ``IndexError``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim.codegen import GeneratedKernel
    >>> from neurosim.kernels.parallel import dot
    >>> norms = GeneratedKernel("norms", "def {name}(out, a):\\n    for i in range(a.shape[0]):\\n"
    ...                         "        out[i] = {dot}(a[i], a[i])\\n", {"dot": dot})
    >>> out = np.zeros(2)
    >>> norms(out, np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> out.tolist()
    [5.0, 25.0]
    """

    def __init__(self, name: str, source: str, calls: dict, options: dict | None = None,
                 serial: GeneratedKernel | None = None) -> None:
        self.__name__ = name
        self.source = source
        self.calls = dict(calls)
        self.options = dict(options or {})
        self.serial = serial
        self._compiled: Any = None
        checked = any(getattr(f, "targetoptions", {}).get("boundscheck") for f in self.calls.values())
        #: read by the engine: a kernel that may raise (a bounds-checked callee) makes a segment keep a snapshot
        self.targetoptions = {**self.options, "boundscheck": checked or self.options.get("boundscheck", False)}

    def text(self, name: str, names: dict) -> str:
        """The decorated source, the function called ``name`` and its callees ``names[key]``.

        Parameters
        ----------
        name : str
            The function's name in the segment.
        names : dict of str -> str
            The segment's name of each kernel in ``calls``.

        Returns
        -------
        str
        """
        opts = ", ".join(f"{k}={v!r}" for k, v in {"cache": True, "nogil": True, **self.options}.items())
        return f"@njit({opts})\n" + self.source.format(name=name, **names)

    def compiled(self) -> Any:
        """This kernel compiled on its own, outside any segment (a module of its own, cached like a segment).

        Returns
        -------
        numba dispatcher
            The compiled function (row-parallel if ``options`` say so, even
            where calling the kernel runs ``serial``).
        """
        if self._compiled is None:
            kernels = _Kernels()
            name = kernels.name(self)
            src = "\n".join(kernels.head("one generated kernel")) + f"\n\n\nkernel = {name}\n"
            self._compiled = _load(src, "kernel").kernel
        return self._compiled

    def __call__(self, *args: Any) -> Any:
        return (self if self.serial is None else self.serial).compiled()(*args)

    def __repr__(self) -> str:
        return f"GeneratedKernel({self.__name__!r})"


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


#: compile options a kernel keeps when the segment compiles it anew (see :func:`_rewrap_options`); ``inline``:
#: a per-synapse rule's function is inlined into the generated loop that maps it (numba IR inlining)
_KEPT_OPTIONS = ("nogil", "boundscheck", "fastmath", "error_model", "inline")


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


_rewraps: dict = {}
_rewraps_lock = threading.Lock()  # not _load_lock: a segment module calls this while it is being loaded


def rewrapped(func, **options):
    """``njit(**options)`` of ``func``'s Python function, one dispatcher per function and options in a process.

    Every segment module that calls a rewrapped kernel (:func:`_rewrap_options`)
    gets this dispatcher, so the kernel compiles once per process and
    signature, not once per network structure (a structure's first steps call
    it from Python, in the segment's Python form).
    """
    from numba import njit

    py = getattr(func, "py_func", func)
    key = (py, tuple(sorted(options.items())))
    with _rewraps_lock:
        dispatcher = _rewraps.get(key)
        if dispatcher is None:
            dispatcher = _rewraps[key] = njit(**options)(py)
    return dispatcher


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
    instead of running stale machine code. The digest starts from that of
    all of ``neurosim.kernels`` and the inlining choice
    (:func:`neurosim.kernels._cache.kernel_sources_digest`, which also stamps
    the kernels' own disk cache) and adds the other modules the segment
    imports kernels from (rules, a user's ``local_rule``).
    """
    key = tuple(sorted(set(modules)))
    if key not in _digests:
        from neurosim.kernels._cache import kernel_sources_digest

        files = set()
        for module in key:
            mod = sys.modules.get(module) or importlib.import_module(module)
            if file := getattr(mod, "__file__", None):
                files.add(Path(file))
        h = hashlib.sha1(kernel_sources_digest().encode())
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


class _Kernels:
    """The kernels a generated module calls, each under a name ``_k<n>``: imported, recompiled, or embedded.

    A kernel in an importable module is imported (a local_rule's through its
    class); one whose module's name holds another object is imported and
    compiled anew with its own options (:func:`_rewrap_options`); one from a
    script has its source embedded (:func:`_embedded_source`); a
    :class:`GeneratedKernel` is embedded with its callees named here.
    """

    def __init__(self) -> None:
        self.funcs: dict[tuple, str] = {}
        self.embedded: dict[tuple, str] = {}
        self.rewrapped: dict[tuple, str] = {}

    def name(self, func) -> str:
        """The module's name for ``func``, registering it (and what it calls) on first sight."""
        funcs = self.funcs
        if isinstance(func, GeneratedKernel):
            names = {key: self.name(callee) for key, callee in func.calls.items()}
            ref = ("<generated>", func.text("{name}", names))
            if ref not in funcs:
                funcs[ref] = f"_k{len(funcs)}"
                self.embedded[ref] = func.text(funcs[ref], names) + "\n"
            return funcs[ref]
        ref = _func_ref(func)
        if ref not in funcs:
            funcs[ref] = f"_k{len(funcs)}"
            if ref[0] == "__main__" or not _importable(ref):
                self.embedded[ref] = _embedded_source(func, funcs[ref])
            else:
                opts = _rewrap_options(func, ref)
                if opts is not None:
                    self.rewrapped[ref] = opts
        return funcs[ref]

    def head(self, what: str) -> list[str]:
        """The module's first lines: what it is, the digest of the kernels' sources, imports, embedded kernels."""
        imported = tuple(m for (m, q) in self.funcs if (m, q) not in self.embedded)
        head = [f"# generated by neurosim.codegen: {what}",
                f"# kernel sources: {_kernel_digest(imported)}",
                "# user kernels (local_rule) keep their bounds checks",
                "import math  # noqa: F401  (for kernels embedded from scripts)", "import numpy as np  # noqa: F401",
                "from numba import njit"]
        imports = []
        for (module, qualname), name in self.funcs.items():
            if (module, qualname) in self.embedded:
                continue
            first, _, rest = qualname.partition(".")
            if (module, qualname) in self.rewrapped:
                imports.append(f"from {module} import {first} as {name}_py")
                if rest:
                    imports.append(f"{name}_py = {name}_py.{rest}")
                imports.append(f"{name} = _rewrapped({name}_py, {self.rewrapped[(module, qualname)]})")
            elif rest:
                imports.append(f"from {module} import {first} as {name}_owner")
                imports.append(f"{name} = {name}_owner.{rest}")
            else:
                imports.append(f"from {module} import {qualname} as {name}")
        if self.rewrapped:
            imports.insert(0, "from neurosim.codegen import rewrapped as _rewrapped")
        if any(module == "<generated>" for module, _ in self.embedded):
            imports.append("from numba import prange  # noqa: F401  (for generated kernels)")
        return head + imports + ["\n\n" + text for text in self.embedded.values()]


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

    kernels = _Kernels()
    fname = kernels.name
    scalars: list = []

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
    head = kernels.head("one compiled segment")
    head[6:6] = ["from neurosim.kernels.dense import all_finite as _finite",  # after ``from numba import njit``
                 "from neurosim.kernels.dense import copy_into as _copy",
                 "from neurosim.kernels.dense import copy_1d as _copy1",
                 "from neurosim.kernels.dense import copy_2d as _copy2",
                 "from neurosim.kernels.dense import copy_2d_finite as _load"]
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
                seg = _load(src).segment
                _loaded[src] = seg
    return seg, arrays, scalars, src


def _load(src: str, kind: str = "segment"):
    """The module of generated source ``src``, written to :func:`cache_dir` under its hash and imported."""
    digest = hashlib.sha1(src.encode()).hexdigest()[:16]
    path = cache_dir() / f"{kind}_{digest}.py"
    if not path.exists() or path.read_text() != src:
        # a name unique to this process and thread: concurrent writers never share a temporary file,
        # and os.replace is atomic, so no reader imports half a file
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)
    name = f"neurosim_{kind}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py path always has a source loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # registered only once complete (numba's cache locates the function through its module)
    sys.modules[name] = module
    return module


def resolve_scalars(scalars: list, t0: int, n: int) -> list:
    """Scalar arguments of a segment covering steps ``t0 .. t0 + n - 1``: parameters read now, schedules drawn."""
    out = []
    for a in scalars:
        if isinstance(a, ParamRef):
            out.append(a.over(t0, n) if a.is_schedule() else a.current())
        else:
            out.append(a)
    return out
