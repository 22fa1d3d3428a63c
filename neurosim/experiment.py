"""Parameter sweeps: many runs of one model, one :class:`xarray.Dataset`.

A :class:`Sweep` is a *model* function and the points it is run at: a grid
(every combination of some parameter values) or an explicit list of points,
each run once per seed. The model is called as ``model(**point, seed=seed)``
and returns either

* a :class:`~neurosim.Network` (or an object with a ``.network``, such as the
  circuits of :mod:`neurosim.models`): the sweep runs it for ``steps`` and
  keeps what its recorders recorded (``layout="dense"``, units by stable id)
  and its event log; or
* an :class:`xarray.Dataset` (or a mapping of names to arrays or scalars):
  whatever the model measured itself.

:meth:`Sweep.run` executes the runs serially, on local processes, or on a
``dask.distributed`` cluster and returns one Dataset whose dimensions are the
sweep's (for a grid: one dimension per parameter and ``seed``; for a list of
points: a ``run`` dimension with the parameters as coordinates) followed by
each run's own. Runs are aligned by coordinate with ``join="outer"``: unit
ids that exist in one run and not another (births, deaths) get NaN, and each
run's event log lies along its own ``event`` dimension, padded with
``event_step = -1`` and empty strings. A run that raises (any exception, in
the model, in ``check`` or while its network is built for validation) is
kept, with its message in the ``error`` variable and, when it diverged, what
it recorded before; it does not stop the others. Only a ValueError or
TypeError while validating is a refusal of the values, which stops the sweep
before anything runs. On the ``processes`` and ``dask`` executors a worker
process that dies while running a point (``os._exit``, a segfault, the OOM
killer) makes that run an error row naming its exit code or signal ("worker
died (exit code 1)", "worker killed by signal SIGKILL"); the other runs go
on and give what a clean sweep gives.

The sweep adds the variables ``error``, ``wall_seconds`` and
``compile_seconds`` and the coordinates ``seed`` (and ``run``) and one per
parameter: a model result with one of these names would be overwritten, so
such a run is an error row asking to rename it. Parameter values must be
distinct as coordinates (``1`` and ``1.0``, ``-0.0`` and ``0.0``, or ``"1"``
and ``1`` among text, are one value) and integers must fit 64 bits; both are
refused when the Sweep is made, not after the runs.

The ``processes`` and ``dask`` executors start worker processes that import
the script that started the sweep: in a script, run the sweep under
``if __name__ == "__main__":``. Without the guard the sweep stops at once
with that advice.

Every run is a function of its point and seed only (the model's random
numbers must come from ``seed``), and runs use one BLAS thread in every
executor, so the executors give the same bits.

With ``out=DIR`` each finished run is written to ``DIR/runs/`` as it
completes (atomically: a run killed mid-write leaves no file) and the sweep's
description to ``DIR/sweep.json``; running the same sweep again with the same
``out`` (after Ctrl-C or ``kill -9``) loads the finished runs and runs only
the rest. Nothing is written to ``DIR`` before the sweep has passed every
check and its validation: a refused sweep leaves no folder and no
``sweep.json`` behind. A folder written by a different sweep is refused
before anything runs. A stored run file that cannot be read (truncated by a
full disk, say) is named in a :class:`SweepStoreWarning` and run again. Each
run file records a fingerprint of the model's source (and of the functions
and classes of its module that it uses): a resume after an edit of that code
is refused unless ``model_changed="rerun"`` (run the old runs again) or
``"keep"`` says what to do with them. ``timeout=`` stops a run that takes too
long on the ``processes`` and ``dask`` executors (its worker is killed and
replaced; the run is an error row).

Stored runs keep every value whole: text is written as variable-length
strings (never in the width of the first run stored), and attributes netCDF
cannot hold (dicts, None, booleans, lists) are stored as JSON, listed in a
``sweep_json_attrs`` attribute, and decoded when the run is loaded. A run
whose data no netCDF file holds (an object array) becomes an error row.

Example::

    import neurosim as ns
    from neurosim.models.similarity_matching import build_network

    def model(regularizer, eta, seed):
        ...  # build and return a Network that records what you want

    sweep = ns.Sweep(model, grid={"regularizer": ["TY", "XY"], "eta": [0.01, 0.1]}, seeds=range(4), steps=2000)
    if __name__ == "__main__":  # the worker processes import this script
        ds = sweep.run(executor="processes", workers=2, out="out/my_sweep")
        ds.activity.mean("time").sel(regularizer="TY")
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import hashlib
import inspect
import itertools
import json
import math
import os
import pathlib
import sys
import signal
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim._lazy import lazy_module
from neurosim._validation import check_choice, check_float, check_int
from neurosim.errors import SimulationDiverged

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_module("xarray")  # imported on first use (neurosim/_lazy.py)

__all__ = ["Sweep", "RunResult", "EXECUTORS", "MAX_RUNS", "SweepStoreWarning", "shutdown"]

EXECUTORS = ("serial", "processes", "dask")
#: environment variables that set the thread count of BLAS/OpenMP libraries and numba
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS", "NEUROSIM_NUM_THREADS")
_RESERVED = ("seed", "run", "event", "error")
#: the per-run variables a sweep adds to every result (model results may not use these names)
_BOOKKEEPING = ("error", "wall_seconds", "compile_seconds")
#: the most runs one sweep may have: listing, storing and combining each run costs memory and time of its own
MAX_RUNS = 1_000_000
_EVENT_FILL = {"event_step": -1, "event_kind": "", "event_population": "", "event_unit": -1, "event_partner": -1}


class SweepStoreWarning(UserWarning):
    """A stored run in a sweep's ``out`` folder could not be read; the sweep runs that point again.

    Issued by :meth:`Sweep.run` when it resumes from a folder
    holding a damaged run file (truncated by a full disk or an interrupted
    copy, say). The message names the file; the run is redone and its file
    replaced when the new run finishes.
    """


@dataclass
class RunResult:
    """What one run of a sweep gave: its point, its data (possibly partial) and its error, if any.

    Parameters
    ----------
    index : int
        The run's position in :meth:`Sweep.runs`.
    point : dict
        The parameter values of the run.
    seed : int
        Its seed.
    dataset : xarray.Dataset
        What it recorded or returned (empty when it failed before anything).
    error : str, optional
        The error's traceback summary; empty for a run that succeeded.
    wall_seconds : float, optional
        Time the run took.
    compile_seconds : float, optional
        Part of it spent compiling segments (or loading them from numba's cache).
    """

    index: int
    point: dict
    seed: int
    dataset: xr.Dataset = field(repr=False)
    error: str = ""
    wall_seconds: float = 0.0
    compile_seconds: float = 0.0


def _check_values(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray | range):
        raise TypeError(f"grid[{name!r}] must be a list of values; got {type(values).__name__}")
    values = list(values)
    if not values:
        raise ValueError(f"grid[{name!r}] is empty: give at least one value")
    if len({_key(v) for v in values}) != len(values):
        raise ValueError(f"grid[{name!r}] repeats a value: {values}")
    coordinate = _checked_coordinate(f"grid[{name!r}]", values)
    # values that differ as Python objects can still be one coordinate (1 and 1.0, -0.0 and 0.0, "1" and 1
    # among text): the runs would all succeed and unstack would then fail on the duplicates, after all the work
    seen: dict = {}
    for value, coord in zip(values, coordinate.tolist()):
        seen.setdefault(coord, []).append(value)
    same = [group for group in seen.values() if len(group) > 1]
    if same:
        shown = "; ".join(", ".join(_show(v) for v in group) for group in same)
        raise ValueError(f"grid[{name!r}] repeats a value: {shown} are the same coordinate of the result; "
                         "give each value once")
    return values


def _check_sweep_name(name) -> str:
    """The sweep's name, refused unless it is one file name: the combined result is written as ``out/<name>.nc``."""
    text = str(name)
    # both separators on every system (os.sep and os.altsep are among them): a folder moves between systems
    if not text or text in (".", "..") or any(c in text for c in ("/", "\\", "\0")):
        raise ValueError(f"name must be a file name (the sweep writes out/<name>.nc): not empty, not '.' or '..', "
                         f"without '/', '\\' or NUL; got {text!r}")
    return text


def _check_run_count(factors: list[tuple[int, str]], seeds) -> None:
    """Refuse, before the runs are listed, a sweep of more than :data:`MAX_RUNS` runs (naming what multiplies)."""
    n_seeds = len(seeds) if isinstance(seeds, Sized) else 1
    total = math.prod(n for n, _ in factors) * n_seeds
    if total > MAX_RUNS:
        parts = [f"{n} {what}" for n, what in [*factors, (n_seeds, "seeds")]]
        raise ValueError(f"the sweep would have {total} runs ({' x '.join(parts)}); at most {MAX_RUNS} are "
                         "allowed (each run is a file and a Dataset to combine): split it into several sweeps")


def _show(value) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def _checked_coordinate(where: str, values: list) -> np.ndarray:
    """``_coordinate(values)``, refusing integers that no 64-bit coordinate holds (before any run, not after)."""
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values):
        for v in values:
            if not -(2**63) <= int(v) < 2**63:
                raise ValueError(f"{where} value {int(v)} does not fit a 64-bit integer coordinate; "
                                 "give it as a float or as text")
    return _coordinate(values)


def _key(value) -> str:
    """A stable text form of a parameter value (for fingerprints and duplicate checks)."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return json.dumps(value)
    return repr(value)


def _model_fingerprint(model) -> str:
    """A digest of the model's source and of the functions and classes of its module that it uses; ``""`` if unknown.

    Names the model's code refers to (``co_names``, in nested functions too)
    that are functions or classes defined in the model's own module are
    followed, transitively: an edit to a helper the model calls changes the
    fingerprint, an edit to unrelated code of the module (a plot at the end
    of the script) does not. Code in other modules (neurosim itself, a
    library) is not followed. The source is the file's text as it is now
    (what :func:`inspect.getsource` reads); a model without source (a
    builtin, a function typed at an interactive prompt) has no fingerprint.
    """
    import functools

    while isinstance(model, functools.partial):
        model = model.func
    if inspect.ismethod(model):
        model = model.__func__
    if not (inspect.isfunction(model) or inspect.isclass(model)):
        model = type(model)  # a callable object: its class holds its code
    sources: dict[str, str] = {}
    todo, seen = [model], set()
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        try:
            sources[f"{obj.__module__}.{obj.__qualname__}"] = inspect.getsource(obj)
        except (OSError, TypeError):
            if obj is model:
                return ""
            continue
        if inspect.isclass(obj):
            functions = [f for f in vars(obj).values() if inspect.isfunction(f)]
            namespace = vars(sys.modules.get(obj.__module__, obj))
        else:
            functions, namespace = [obj], obj.__globals__
        names: set[str] = set()
        codes = [f.__code__ for f in functions]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes.extend(c for c in code.co_consts if inspect.iscode(c))
        for name in sorted(names):
            used = namespace.get(name)
            if ((inspect.isfunction(used) or inspect.isclass(used))
                    and getattr(used, "__module__", None) == obj.__module__):
                todo.append(used)
    text = json.dumps(sorted(sources.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _coordinate(values: list) -> np.ndarray:
    """Coordinate values for a sweep dimension: numbers stay numbers, anything else becomes its text."""
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array([v if isinstance(v, str) else repr(v) for v in values], dtype=str)


class Sweep:
    """Runs of one model over parameter points and seeds, collected in one Dataset.

    Parameters
    ----------
    model : callable
        Called as ``model(**point, seed=seed)``; returns a
        :class:`~neurosim.Network` (or an object with a ``.network``) to be
        run for ``steps``, or an :class:`xarray.Dataset` / mapping of results.
        For the ``processes`` and ``dask`` executors it must be importable
        by name (a module-level function), as :mod:`pickle` requires.
    grid : mapping of str to list, optional
        Every combination of these values is a point; the result has one
        dimension per key, in this order, then ``seed``.
    points : list of mappings, optional
        Explicit points instead of a grid (all with the same keys); the
        result has a ``run`` dimension with the keys as coordinates.
    seeds : iterable of int >= 0
        Each point runs once per seed (default: seed 0 only).
    steps : int >= 1, optional
        Steps to run a model that returns a network; must be None for one
        that returns results.
    fixed : mapping, optional
        Further keyword arguments passed to every call (not sweep dimensions;
        stored in the result's attributes).
    name : str, optional
        Name of the sweep (default: the model's name); a file name (the
        combined result is ``out/<name>.nc``): no ``/`` or ``\\``, not ``.``
        or ``..``, not empty.
    check : callable, optional
        Called as ``check(**point, **fixed)`` for every point before any run
        (:meth:`validate`); raises ValueError/TypeError for a point the model
        would refuse (any other exception is kept as those runs' error). For
        models that return networks, building them is the check and this is
        optional.

    Raises
    ------
    ValueError
        For a grid value given twice, even spelled differently (``1`` and
        ``1.0``: one coordinate), an integer beyond 64 bits, a parameter the
        model does not take, one of the sweep's own names (``seed``,
        ``run``, ``event``, ``error``), a ``name`` that is not a file name,
        or more than :data:`MAX_RUNS` runs (counted before they are listed).
    TypeError
        If ``model`` or ``check`` is not callable, or ``grid``/``points`` are
        not mappings/lists of mappings.

    Examples
    --------
    A model that returns results directly (no network), over a grid of two
    values and two seeds:

    >>> import neurosim as ns
    >>> def model(a, seed):
    ...     return {"y": 10.0 * a + seed}
    >>> sweep = ns.Sweep(model, grid={"a": [1, 2]}, seeds=[0, 1])
    >>> len(sweep), sweep.runs()[1]
    (4, (1, {'a': 1}, 1))
    >>> ds = sweep.run(progress=False)
    >>> dict(ds.sizes), ds.y.values.tolist()
    ({'a': 2, 'seed': 2}, [[10.0, 11.0], [20.0, 21.0]])
    """

    def __init__(self, model: Callable[..., Any], grid: Mapping | None = None, *,
                 points: Sequence[Mapping] | None = None, seeds: int | Iterable[int] = (0,), steps: int | None = None,
                 fixed: Mapping | None = None, name: str | None = None,
                 check: Callable[..., Any] | None = None) -> None:
        if not callable(model):
            raise TypeError(f"model must be callable; got {type(model).__name__}")
        self.model = model
        self.name = _check_sweep_name(name if name is not None else getattr(model, "__name__", "sweep"))
        if (grid is None) == (points is None):
            raise ValueError("give exactly one of grid (a mapping of value lists) or points (a list of mappings)")
        if grid is not None:
            if not isinstance(grid, Mapping):
                raise TypeError(f"grid must be a mapping of parameter name to values; got {type(grid).__name__}")
            if not grid:
                raise ValueError("grid is empty: give at least one parameter and its values")
            self.dims = [self._check_name(k) for k in grid]
            values = [_check_values(k, v) for k, v in grid.items()]
            _check_run_count([(len(v), f"values of grid[{k!r}]") for k, v in zip(self.dims, values)], seeds)
            self.grid: dict[str, list] | None = dict(zip(self.dims, values))
            self.points = [dict(zip(self.dims, combo)) for combo in itertools.product(*values)]
        else:
            if isinstance(points, Mapping) or not isinstance(points, Sequence):
                raise TypeError(f"points must be a list of mappings; got {type(points).__name__}")
            if not points:
                raise ValueError("points is empty: give at least one point")
            for i, p in enumerate(points):
                if not isinstance(p, Mapping):
                    raise TypeError(f"points[{i}] must be a mapping of parameter name to value; got {type(p).__name__}")
            self.dims = [self._check_name(k) for k in points[0]]
            for i, p in enumerate(points):
                if list(p) != self.dims:
                    raise ValueError(f"points[{i}] has keys {list(p)}; every point needs the keys {self.dims}, in that order")
            self.grid = None
            self.points = [dict(p) for p in points]
            keys = [tuple(_key(v) for v in p.values()) for p in self.points]
            if len(set(keys)) != len(keys):
                raise ValueError("points repeats a point")
            # as for a grid: points that differ only in spelling (1 and 1.0) are one coordinate of the result
            columns = [_checked_coordinate(f"points: {d!r}", [p[d] for p in self.points]).tolist() for d in self.dims]
            rows = list(zip(*columns))
            if len(set(rows)) != len(rows):
                first = next(i for i, r in enumerate(rows) if rows.index(r) != i)
                raise ValueError(f"points repeats a point: points[{rows.index(rows[first])}] and points[{first}] "
                                 "are the same coordinates of the result; give each point once")
        if isinstance(seeds, (int, np.integer)):
            seeds = [seeds]
        _check_run_count([(len(self.points), "points")], seeds)
        # seeds are a coordinate of the result: beyond 64 bits it could not hold them (after every run)
        self.seeds = [check_int("seeds", s, low=0, high=2**63 - 1) for s in seeds]
        if not self.seeds:
            raise ValueError("seeds is empty: give at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds repeats a seed: {self.seeds}")
        self.steps = None if steps is None else check_int("steps", steps, low=1)
        self.fixed = dict(fixed or {})
        clash = set(self.fixed) & set(self.dims)
        if clash:
            raise ValueError(f"fixed and the sweep both set {sorted(clash)}")
        if check is not None and not callable(check):
            raise TypeError(f"check must be callable; got {type(check).__name__}")
        self.check = check
        self._check_signature()

    @staticmethod
    def _check_name(name) -> str:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"sweep parameter names must be identifiers; got {name!r}")
        if name in _RESERVED:
            raise ValueError(f"{name!r} cannot be a sweep parameter (reserved: {', '.join(_RESERVED)}); "
                             "seeds are given by seeds=")
        return name

    def _check_signature(self):
        try:
            sig = inspect.signature(self.model)
        except (TypeError, ValueError):
            return
        params = sig.parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        accepted = {n for n, p in params.items() if p.kind in named}
        unknown = [n for n in [*self.dims, *self.fixed, "seed"] if n not in accepted]
        if unknown:
            raise ValueError(f"model {self.name!r} has no parameter {', '.join(map(repr, unknown))}; "
                             f"it accepts {', '.join(sorted(accepted)) or 'nothing'}")

    # -- description ---------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.points) * len(self.seeds)

    def runs(self) -> list[tuple[int, dict, int]]:
        """``(index, point, seed)`` of every run, seeds varying fastest.

        Returns
        -------
        list of tuple
            ``len(self)`` entries ``(index, point, seed)``.
        """
        return [(i * len(self.seeds) + j, p, s) for i, p in enumerate(self.points) for j, s in enumerate(self.seeds)]

    def description(self) -> dict[str, Any]:
        """What identifies this sweep (stored as ``sweep.json`` next to its runs).

        Returns
        -------
        dict
            Name, model, dimensions, points (as text), seeds, steps and the
            fixed arguments: a stored sweep is resumed only by a sweep with
            the same description.
        """
        model = f"{getattr(self.model, '__module__', '?')}.{getattr(self.model, '__qualname__', self.name)}"
        return {"name": self.name, "model": model, "dims": self.dims,
                "points": [[_key(v) for v in p.values()] for p in self.points],
                "seeds": self.seeds, "steps": self.steps, "fixed": {k: _key(v) for k, v in self.fixed.items()}}

    def _run_file(self, out: pathlib.Path, point: dict, seed: int) -> pathlib.Path:
        text = json.dumps([[_key(v) for v in point.values()], seed])
        return out / "runs" / f"run-{hashlib.sha1(text.encode()).hexdigest()[:16]}.nc"

    def __repr__(self):
        shape = " x ".join(f"{d}:{len(self.grid[d])}" for d in self.dims) if self.grid else f"{len(self.points)} points"
        return f"<Sweep {self.name!r}: {shape} x seed:{len(self.seeds)} = {len(self)} runs>"

    # -- validation ----------------------------------------------------------------------
    def validate(self, build: bool = True) -> None:
        """Check every point before any run: ``check`` each point; with ``build`` and ``steps`` set, build every network.

        A ValueError or TypeError from ``check`` or from building is a
        refusal of the point's values. Any other exception is not a verdict
        on the values (a bug, a missing file, a server down): it does not stop
        the sweep; :meth:`run` keeps it as those runs' ``error``.

        Parameters
        ----------
        build : bool, optional
            Also build (and validate) every run's network when ``steps`` is set.

        Raises
        ------
        ValueError
            Naming every point whose model refused it (and why).
        """
        self._validate(build)

    def _validate(self, build: bool = True) -> dict[int, str]:
        """:meth:`validate`; returns ``{run index: error}`` of the runs that failed otherwise than by a refusal."""
        bad: list[str] = []
        failed: dict[int, str] = {}

        def failure(err):
            return "".join(traceback.format_exception_only(type(err), err)).strip()

        if self.check is not None:
            for i, point in enumerate(self.points):
                try:
                    self.check(**point, **self.fixed)
                except (ValueError, TypeError) as err:
                    bad.extend(f"{point} seed={seed}: {type(err).__name__}: {err}" for seed in self.seeds)
                except Exception as err:  # noqa: BLE001 -- a failing run is a result; the sweep goes on
                    failed.update({i * len(self.seeds) + j: f"check: {failure(err)}" for j in range(len(self.seeds))})
        if build and self.steps is not None and not bad:
            for index, point, seed in self.runs():
                if index in failed:
                    continue
                try:
                    net = _network_of(self.model(**point, **self.fixed, seed=seed))
                    if net is None:
                        raise TypeError("with steps set, the model must return a Network (or an object with .network)")
                    net.validate()
                except (ValueError, TypeError) as err:
                    bad.append(f"{point} seed={seed}: {type(err).__name__}: {err}")
                except Exception as err:  # noqa: BLE001 -- as a run would fail: kept as its error
                    failed[index] = failure(err)
        if bad:
            more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
            raise ValueError(f"sweep {self.name!r}: the model refuses {len(bad)} of {len(self)} runs; "
                             f"nothing was run:\n  " + "\n  ".join(bad[:5]) + more)
        return failed

    # -- running --------------------------------------------------------------------------
    def run(self, executor: str = "serial", workers: int | None = None, out: str | os.PathLike | None = None,
            progress: bool | None = None, client: Any = None, validate: bool = True,
            retry_failed: bool = False, timeout: float | None = None,
            model_changed: str = "refuse") -> xr.Dataset:
        """Run every run not yet done and return the combined Dataset.

        Parameters
        ----------
        executor : {"serial", "processes", "dask"}
            Where runs execute: this process; ``workers`` supervised local
            processes, one run at a time each (forked from a server that has
            imported neurosim; one BLAS thread each; kept for the next sweep;
            one that dies is its run's error and is replaced); a
            ``dask.distributed`` cluster (``client``, or a ``LocalCluster`` of
            ``workers`` single-threaded processes started for the sweep, in
            which a run whose worker dies is not retried).
        workers : int >= 1, optional
            Default: the number of cores (``os.cpu_count()``).
        out : path, optional
            Folder for the runs as they finish, ``sweep.json`` and the
            combined ``<name>.nc``; finished runs found there are loaded, not
            rerun. Nothing is written to it before every check and the
            validation have passed: a refused sweep leaves no folder and no
            ``sweep.json`` behind. A stored run file that cannot be read
            (truncated, say) is named in a :class:`SweepStoreWarning` and run
            again.
        progress : bool, optional
            A progress bar over runs. Default: when someone is watching
            (standard error is a terminal, or a notebook), unless
            ``NEUROSIM_PROGRESS`` says otherwise (:mod:`neurosim.progress`).
        client : dask.distributed.Client or str, optional
            A client or a scheduler address (``executor="dask"`` only).
        validate : bool
            Build every point's network before any run (see :meth:`validate`).
        retry_failed : bool
            Rerun runs stored in ``out`` with an error (default: keep them).
        timeout : float > 0, optional
            Seconds one run may take; a run past it becomes an error row
            (``TimeoutError: ...``) and the others go on. Only on worker
            processes, which can be stopped whatever they run:

            * ``"processes"``: the worker is killed (SIGKILL, which also stops
              a compiled numba loop or a BLAS call) and replaced; the time
              counts from when the worker took the run.
            * ``"dask"``: the task is cancelled. On the cluster the sweep
              starts itself, the worker that holds it is restarted (its
              nanny kills the process and starts a fresh one). On your own
              ``client`` the sweep does not restart your workers: dask
              cannot interrupt a running task, so it keeps its thread until
              it returns. The time counts from submission (dask does not
              report when a task starts; the sweep submits no more runs
              than the cluster has threads).
            * ``"serial"``: refused. Nothing can stop a run in the sweep's
              own process safely: Python's signals reach a compiled numba
              loop or a BLAS call only when it returns, and a thread cannot
              be killed. ``executor="processes", workers=1`` runs one run at
              a time with the timeout.

            The validation (:meth:`validate`) builds the networks in this
            process, without a timeout: for a model whose building may
            hang, pass ``validate=False``.
        model_changed : {"refuse", "rerun", "keep"}
            What to do with stored runs that an earlier version of the model
            made: each run file records a fingerprint of the model's source
            and of the functions and classes of its module that it calls (not
            of other modules, neurosim included). ``"refuse"`` (default):
            raise before anything runs; ``"rerun"``: run them again with this
            code; ``"keep"``: keep them and record in ``sweep.json`` that
            the version of the model that made them as this one (later
            resumes with this code do not ask again; an edit after that
            asks again).

        Returns
        -------
        xarray.Dataset
            The sweep's dimensions, then the runs' own; ``error`` (empty for a
            run that succeeded), ``wall_seconds`` and ``compile_seconds`` per
            run; the sweep's description in the attributes. A variable keeps
            the attributes its runs agree on.

        Raises
        ------
        ValueError
            For bad arguments (``timeout`` with ``executor="serial"``), an
            ``out`` that is not a writable folder or holds another sweep,
            points the model refuses (:meth:`validate`), or stored runs of
            an edited model with ``model_changed="refuse"``; nothing has
            been run or written then.
        RuntimeError
            When called while a worker process imports the main script (a
            sweep without ``if __name__ == "__main__":``), and in the sweep's
            process when its workers die before they are ready.
        """
        _refuse_in_bootstrapping_worker()
        from neurosim.progress import resolve as resolve_progress

        progress = resolve_progress(progress)
        executor = check_choice("executor", executor, set(EXECUTORS))
        workers = os.cpu_count() or 1 if workers is None else check_int("workers", workers, low=1)
        if client is not None and executor != "dask":
            raise ValueError("client is only used with executor='dask'")
        if timeout is not None:
            timeout = check_float("timeout", timeout, low=0.0, low_open=True)
            if executor == "serial":
                raise ValueError(f"timeout={timeout:g} needs runs in worker processes (executor='processes' or "
                                 "'dask'): a run in the sweep's own process cannot be stopped (a compiled numba loop "
                                 "or a BLAS call sees no signal until it returns); executor='processes', workers=1 "
                                 "runs one run at a time with the timeout")
        model_changed = check_choice("model_changed", model_changed, {"refuse", "rerun", "keep"})
        if executor == "processes" or (executor == "dask" and client is None):
            _refuse_unguarded_script()
        # nothing is written before every refusal has had its chance: a refused sweep leaves no trace in out
        out = None if out is None else self._check_out(pathlib.Path(out))
        failed = self._validate() if validate else {}
        fingerprint = _model_fingerprint(self.model)
        stored: dict[int, RunResult] = {}
        if out is not None:
            stored, accepted = self._stored_runs(out, fingerprint, model_changed)
            self._open_out(out, accepted)

        results: dict[int, RunResult] = {}
        todo, known = [], []
        for index, point, seed in self.runs():
            found = stored.get(index)
            if found is not None and not (retry_failed and found.error):
                results[index] = found
            elif index in failed:
                # its check or build already failed (not a refusal): that is its result, like any run's error
                known.append(RunResult(index, dict(point), int(seed), xr.Dataset(), failed[index]))
            else:
                todo.append((index, point, seed))

        from tqdm.auto import tqdm

        with tqdm(total=len(self), initial=len(results), disable=not progress, desc=self.name, unit="run") as bar:
            def done(res: RunResult):
                if out is not None:
                    res = self._store_run(out, res, fingerprint)
                results[res.index] = res
                bar.update(1)
                if res.error:
                    bar.write(f"[{self.name}] run {res.point} seed={res.seed} failed: {res.error.splitlines()[-1]}")

            for res in known:
                done(res)
            jobs = [(self.model, point, self.fixed, seed, self.steps, index) for index, point, seed in todo]
            if executor == "serial" or not jobs:
                with _one_thread():
                    for job in jobs:
                        done(_execute(*job))
            elif executor == "processes":
                _run_processes(jobs, workers, done, timeout)
            else:
                _run_dask(jobs, workers, client, done, timeout)

        ds = self.combine([results[i] for i in sorted(results)])
        if out is not None:
            _write_atomically(ds, out / f"{self.name}.nc")
        return ds

    def _check_out(self, out: pathlib.Path) -> pathlib.Path:
        """Refuse an ``out`` the sweep cannot use (not a writable folder, another sweep's), writing nothing to it.

        A folder that does not exist yet is judged by its nearest existing
        parent (a probe file is written and removed there); it is made by
        :meth:`_open_out` once the sweep has passed its validation.
        """
        existing = out
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        try:
            if not existing.is_dir():
                raise NotADirectoryError(f"{str(existing)!r} is a file")
            probe = existing / f".neurosim-probe-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
        except OSError as err:
            raise ValueError(f"out={str(out)!r} is not a writable folder: {err}") from None
        manifest = out / "sweep.json"
        if manifest.exists():
            mine = self.description()
            try:
                theirs = json.loads(manifest.read_text())
                if not isinstance(theirs, dict):
                    raise ValueError("not a JSON object")
            except (OSError, ValueError) as err:
                raise ValueError(f"out={str(out)!r}: sweep.json is unreadable ({err}); use another folder") from None
            diff = [k for k in mine if mine[k] != theirs.get(k)]
            if diff:
                stored = len(list((out / "runs").glob("run-*.nc")))
                raise ValueError(f"out={str(out)!r} holds another sweep: {theirs.get('name')!r} with {stored} stored "
                                 f"run(s), which differs from this one in {', '.join(diff)}; give another out folder "
                                 "(or remove that one if its runs are no longer wanted)")
        return out

    def _open_out(self, out: pathlib.Path, accepted: dict[str, str]) -> None:
        """Make ``out/runs`` and write ``sweep.json`` (with ``accepted`` added to its accepted fingerprints), after validation.

        ``sweep.json``'s ``accepted_model_sources`` maps the fingerprint of a
        model version whose stored runs were kept (``model_changed="keep"``)
        to the fingerprint of the version that kept them: those runs count
        as made by the latter.
        """
        try:
            (out / "runs").mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"out={str(out)!r} is not a writable folder: {err}") from None
        manifest = out / "sweep.json"
        known = self._accepted(out)
        if manifest.exists() and not accepted:
            return
        text = dict(self.description(), accepted_model_sources=dict(sorted({**known, **accepted}.items())))
        tmp = manifest.with_name(f".sweep.json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(text, indent=1))
        os.replace(tmp, manifest)

    @staticmethod
    def _accepted(out: pathlib.Path) -> dict[str, str]:
        """``sweep.json``'s ``accepted_model_sources`` (see :meth:`_open_out`); ``{}`` when there is none."""
        try:
            accepted = json.loads((out / "sweep.json").read_text()).get("accepted_model_sources", {})
        except (OSError, ValueError, AttributeError):
            return {}
        return accepted if isinstance(accepted, dict) else {}

    def _stored_runs(self, out: pathlib.Path, fingerprint: str, model_changed: str) -> tuple[dict, dict]:
        """``{run index: RunResult}`` of the runs stored in ``out`` to keep, and the model fingerprints to accept.

        A file that cannot be read is named in a warning and left out (the
        run is redone and its file replaced). Runs made by another version
        of the model are refused, left out (``"rerun"``) or kept
        (``"keep"``), by ``model_changed``; nothing is written here.
        """
        found: dict[int, RunResult] = {}
        if not (out / "runs").is_dir():
            return found, {}
        accepted = self._accepted(out)
        unreadable, stale = [], {}
        for index, point, seed in self.runs():
            path = self._run_file(out, point, seed)
            if not path.exists():
                continue
            try:
                res, source = self._load_run(path, index, point, seed)
            except Exception as err:  # noqa: BLE001 -- h5py's OSError, a file xarray cannot decode: redo the run
                unreadable.append(f"{path}: {type(err).__name__}: {err}".splitlines()[0])
                continue
            if fingerprint and source and accepted.get(source, source) != fingerprint:
                stale[index] = (res, source)
                continue
            found[index] = res
        if stale and model_changed == "refuse":
            raise ValueError(
                f"out={str(out)!r}: {len(stale)} of its stored runs were made by another version of model "
                f"{self.name!r} (its source, or that of a function or class of its module that it uses, has changed "
                "since); model_changed='rerun' runs them again with this code, model_changed='keep' keeps them "
                "(neurosim sweep: --model-changed rerun|keep), or give another out folder")
        if model_changed == "keep":
            found.update({i: res for i, (res, _) in stale.items()})
        for why in unreadable:
            warnings.warn(f"sweep {self.name!r}: the stored run {why}; that run is done again and its file replaced",
                          SweepStoreWarning, stacklevel=3)
        return found, {source: fingerprint for _, source in stale.values()} if model_changed == "keep" else {}

    def _load_run(self, path: pathlib.Path, index, point, seed) -> tuple[RunResult, str]:
        """The run stored at ``path`` and the fingerprint of the model that made it (``""`` if not recorded)."""
        with xr.open_dataset(path, engine="h5netcdf") as f:
            ds = _from_storage(f.load())
        attrs = dict(ds.attrs)
        ds.attrs = {k: v for k, v in attrs.items() if not k.startswith("sweep_")}
        res = RunResult(index, point, seed, ds, str(attrs.get("sweep_error", "")),
                        float(attrs.get("sweep_wall_seconds", np.nan)),
                        float(attrs.get("sweep_compile_seconds", np.nan)))
        return res, str(attrs.get("sweep_model_source", ""))

    def _store_run(self, out, res: RunResult, fingerprint: str = "") -> RunResult:
        """Write one run to ``out/runs``; returns it, or, when its data cannot be stored, it as an error row.

        A disk that refuses (OSError) stops the sweep: every later run would
        be lost the same way. Data no netCDF file holds (an object array, say)
        is this run's problem only: it becomes the run's error, as in a
        sweep that does not store, and the sweep goes on. ``fingerprint``
        (of the model's source) is recorded with the run.
        """
        def write(res):
            ds = res.dataset.copy()
            ds.attrs.update(sweep_error=res.error, sweep_wall_seconds=res.wall_seconds,
                            sweep_compile_seconds=res.compile_seconds, sweep_seed=res.seed,
                            sweep_point=json.dumps({k: _key(v) for k, v in res.point.items()}),
                            sweep_model_source=fingerprint)
            _write_atomically(ds, self._run_file(out, res.point, res.seed))

        try:
            write(res)
        except OSError:
            raise
        except Exception as err:  # noqa: BLE001 -- one run's unstorable data is that run's error
            why = "".join(traceback.format_exception_only(type(err), err)).strip()
            res = RunResult(res.index, res.point, res.seed, xr.Dataset(),
                            "\n".join(filter(None, [res.error, f"its results cannot be stored in out=: {why}"])),
                            res.wall_seconds, res.compile_seconds)
            write(res)
        return res

    # -- combining ------------------------------------------------------------------------
    def combine(self, results: list[RunResult]) -> xr.Dataset:
        """One Dataset from the runs' results (outer join on every coordinate; see the module docs).

        Parameters
        ----------
        results : list of RunResult
            One per run, in any order.

        Returns
        -------
        xarray.Dataset
            One dimension per sweep parameter (a grid) or ``run`` (points),
            then ``seed``; ``error``, ``wall_seconds`` and
            ``compile_seconds`` per run; NaN where a run recorded nothing.
        """
        parts = []
        template = _failure_template(results)
        for res in results:
            ds = _without_encoding(res.dataset)
            if template is not None and not _has_data(ds):
                # a run that failed before recording anything: NaN in the shape the others have
                ds = template.merge(ds[[v for v in _EVENT_FILL if v in ds]]) if any(v in ds for v in _EVENT_FILL) \
                    else template
            ds.attrs = {}
            ds = ds.expand_dims(run=[res.index])
            ds["error"] = ("run", np.array([res.error], dtype=str))
            ds["wall_seconds"] = ("run", [res.wall_seconds])
            ds["compile_seconds"] = ("run", [res.compile_seconds])
            coords = {d: ("run", _coordinate([res.point[d]])) for d in self.dims}
            coords["seed"] = ("run", np.array([res.seed], dtype=np.int64))
            parts.append(ds.assign_coords(coords))
        fill = {k: v for k, v in _EVENT_FILL.items() if any(k in p for p in parts)}
        fill["error"] = ""
        parts, synapse_dims = _index_synapses(parts)
        fill |= {name: False for p in parts for name, c in p.coords.items() if c.dtype.kind == "b"}
        concat = dict(dim="run", join="outer", fill_value=_fill_values(parts, fill), data_vars="all",
                      coords="different", compat="equals")
        try:  # a variable keeps the attributes its runs agree on
            combined = xr.concat(parts, combine_attrs="drop_conflicts", **concat)
        except (ValueError, TypeError):  # attributes that older xarray cannot compare (arrays inside dicts)
            combined = xr.concat(parts, combine_attrs="drop", **concat)
        # every run's own coordinates (e.g. unit ids) are aligned; the sweep's become dimensions
        for d in [*self.dims, "seed"]:
            combined.coords[d] = ("run", _coordinate([r.point[d] if d != "seed" else r.seed for r in results]))
        if self.grid is not None:
            combined = combined.set_index(run=[*self.dims, "seed"]).unstack("run")
            combined = combined.reindex({d: _coordinate(v) for d, v in self.grid.items()} | {"seed": self.seeds})
            combined = combined.transpose(*self.dims, "seed", ...)
        combined = _unindex_synapses(combined, synapse_dims)
        combined.attrs.update(
            sweep_name=self.name, sweep_model=self.description()["model"], sweep_dims=json.dumps(self.dims),
            sweep_steps=-1 if self.steps is None else self.steps,
            sweep_fixed=json.dumps({k: _key(v) for k, v in self.fixed.items()}),
            sweep_runs=len(results), sweep_failed=int(sum(bool(r.error) for r in results)),
            wall_seconds_total=float(np.nansum([r.wall_seconds for r in results])),
            compile_seconds_total=float(np.nansum([r.compile_seconds for r in results])),
        )
        return combined


def _refuse_in_bootstrapping_worker():
    """Refuse to run a sweep while a worker process imports the main script (an unguarded sweep).

    Spawn and forkserver workers import the script that started them; a
    sweep at its top level, without ``if __name__ == "__main__":``, would
    run again inside every worker (which then dies, and a pool replaces it
    forever). Multiprocessing marks that import with ``_inheriting``, the
    flag it checks itself before starting processes.
    """
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise RuntimeError(f"Sweep.run was called while a worker process imports the main script: {_GUARD_HINT}, "
                           "as in\n\n    if __name__ == \"__main__\":\n        ds = sweep.run(...)\n")


def _is_main_guard(test) -> bool:
    """Whether an ``if`` test is ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def _refuse_unguarded_script():
    """Refuse, before any worker starts, a parallel sweep started from an unguarded line of the main script.

    Worker processes (multiprocessing's forkserver and spawn, dask's nannies)
    import the script that started the sweep; a sweep reached from its top
    level without ``if __name__ == "__main__":`` runs again in every worker.
    What then happens depends on the library and its version (a pool that
    restarts dying workers for ever, a dask nanny that waits), so the parent
    decides from the script's own text: the line of the script's top level
    that is running now (a ``main()`` call, or the sweep itself) must lie
    inside such an ``if``. Without a script file (an interactive session, a
    notebook, ``python -c``) nothing is checked.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or not str(path).endswith(".py"):
        return
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__"):
        frame = frame.f_back
    if frame is None:
        return
    try:
        tree = ast.parse(pathlib.Path(path).read_text(), filename=str(path))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return
    line = frame.f_lineno
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_guard(node.test) and node.lineno <= line <= node.end_lineno:
            return
    raise RuntimeError(f"this sweep runs on worker processes, which import {path}; {_GUARD_HINT} (line {line} is "
                       "not), as in\n\n    if __name__ == \"__main__\":\n        ds = sweep.run(...)\n")


def _has_data(ds: xr.Dataset) -> bool:
    return any(v not in _EVENT_FILL for v in ds.data_vars)


def _index_synapses(parts: list) -> tuple[list, dict]:
    """The runs with each recorded sparse projection's synapse dim indexed by (post, pre, multapse) ids.

    A sparse projection's recording (:mod:`neurosim.synapse_recording`) keys
    its ``synapse`` dim (``<recorder>_synapse`` beside other recorders) by
    the coordinates ``post`` and ``pre``; runs with other synapses (another
    seed, other turnover) align on them, as runs with other units align on
    unit ids. Returns the indexed runs and ``{dim: level names}``.
    """
    dims: dict = {}
    for p in parts:
        for d in p.dims:
            prefix = str(d)[: -len("synapse")]
            names = [prefix + n for n in ("post", "pre", "multapse")]
            if str(d).endswith("synapse") and d not in p.indexes and names[0] in p.coords and names[1] in p.coords:
                dims[d] = names
    out = []
    for p in parts:
        for d, names in dims.items():
            if d in p.dims:
                if names[2] not in p.coords:  # runs without multapses: every synapse is its pair's first
                    p = p.assign_coords({names[2]: (d, np.zeros(p.sizes[d], dtype=np.int64))})
                p = p.set_index({d: names})
        out.append(p)
    return out, dims


def _unindex_synapses(ds: xr.Dataset, dims: dict) -> xr.Dataset:
    """The inverse of :func:`_index_synapses` on the combined runs (plain coordinates netCDF can hold)."""
    for d, names in dims.items():
        ds = ds.reset_index(d)
        # xarray before 2024.2 keeps the levels backed by the MultiIndex after reset_index, which netCDF refuses
        ds = ds.assign_coords({n: (ds[n].dims, np.array(ds[n].values)) for n in names if n in ds.coords})
        if names[2] in ds.coords and not ds[names[2]].values.any():
            ds = ds.drop_vars(names[2])
    return ds


def _failure_template(results) -> xr.Dataset | None:
    """The first complete run's variables, all missing (NaN, or "" for text), without its event log."""
    for res in results:
        if not res.error and _has_data(res.dataset):
            ds = res.dataset.drop_vars([v for v in _EVENT_FILL if v in res.dataset])
            out = {}
            for name, var in ds.data_vars.items():
                out[name] = xr.full_like(var, "") if var.dtype.kind in "US" else var.where(False)
            return xr.Dataset(out, coords=ds.coords)
    return None


def _fill_values(parts, fill):
    """``xr.concat`` fill values: the event log's and ``error``'s defaults, NaN (or NaT) elsewhere."""
    out = dict(fill)
    for p in parts:
        for name, var in p.data_vars.items():
            if name in out:
                continue
            if var.dtype.kind in "US" or (var.dtype.kind == "O" and all(isinstance(v, str) for v in var.values.flat)):
                out[name] = ""
            elif var.dtype.kind == "b":
                out[name] = False
    return out


# -- executing one run -------------------------------------------------------------------------
def _network_of(obj):
    from neurosim.network import Network

    if isinstance(obj, Network):
        return obj
    net = getattr(obj, "network", None)
    return net if isinstance(net, Network) else None


def _recordings(net) -> xr.Dataset:
    """The network's recordings (dense layout) and event log as one Dataset."""
    recs = net.recorders
    parts = []
    for name, rec in recs.items():
        ds = rec.to_dataset(layout="dense")
        ds = ds.drop_vars([v for v in _EVENT_FILL if v in ds], errors="ignore")  # the log is added once, below
        ds.attrs = {}
        if len(recs) > 1:
            rename = {v: f"{name}_{v}" for v in [*ds.data_vars, *ds.coords, *ds.dims] if v != "batch"}
            ds = ds.rename(rename)
        parts.append(ds)
    ds = xr.merge(parts, compat="equals", join="outer", combine_attrs="drop") if parts else xr.Dataset()
    log = net.event_log
    n = len(log)
    ds = ds.assign({
        "event_step": ("event", np.array(log.step, dtype=np.int64)),
        "event_kind": ("event", np.array(log.kind, dtype=str) if n else np.array([], dtype="<U1")),
        "event_population": ("event", np.array(log.population, dtype=str) if n else np.array([], dtype="<U1")),
        "event_unit": ("event", np.array(log.unit, dtype=np.int64)),
        "event_partner": ("event", np.array(log.partner, dtype=np.int64)),
    })
    return ds.assign_coords(event=np.arange(n, dtype=np.int64))


def _as_dataset(obj) -> xr.Dataset:
    if isinstance(obj, xr.Dataset):
        return obj
    if isinstance(obj, Mapping):
        return xr.Dataset({k: (v if isinstance(v, xr.DataArray) else xr.DataArray(np.asarray(v)))
                           for k, v in obj.items()})
    raise TypeError(f"the model returned {type(obj).__name__}; expected a Network (with steps=), "
                    "an xarray.Dataset or a mapping of results")


def _clashes(ds: xr.Dataset, point) -> str:
    """The error for result names that the sweep's own variables and coordinates would overwrite, or ``""``."""
    taken = {**{n: "variable" for n in _BOOKKEEPING}, "seed": "coordinate", "run": "dimension",
             **{d: "parameter" for d in point}}
    names = [n for n in [*ds.variables, *ds.dims] if n in taken]
    if not names:
        return ""
    name = names[0]
    return (f"ValueError: the model's result {name!r} has the name of the sweep's own {taken[name]}; rename it "
            f"(a sweep adds the variables {', '.join(_BOOKKEEPING)} and the coordinates seed, run and "
            "its parameters)")


def _execute(model, point, fixed, seed, steps, index) -> RunResult:
    """One run: build, run, collect; any exception becomes the run's error."""
    started = time.perf_counter()
    ds, error, compile_seconds = xr.Dataset(), "", 0.0
    net = None
    try:
        from neurosim.progress import quiet

        with quiet():  # one bar per sweep (over its runs), none per run inside it
            obj = model(**point, **fixed, seed=seed)
            net = _network_of(obj)
            if steps is not None:
                if net is None:
                    raise TypeError("with steps set, the model must return a Network (or an object with .network)")
                net.run(steps)
        if steps is not None:
            ds = _recordings(net)
        elif net is not None:
            raise TypeError("the model returned a network but the sweep has no steps= to run it for")
        else:
            ds = _as_dataset(obj)
    except KeyboardInterrupt:
        raise
    except SimulationDiverged as err:
        error = f"{type(err).__name__}: {err}"
        if err.network is not None:
            ds = _recordings(err.network)
    except Exception as err:  # noqa: BLE001 -- a failing run is a result; the sweep goes on
        error = "".join(traceback.format_exception_only(type(err), err)).strip()
        if net is not None:
            with contextlib.suppress(Exception):
                ds = _recordings(net)
    if net is not None:
        compile_seconds = float(getattr(net, "timings", {}).get("compile_seconds", 0.0))
    clash = _clashes(ds, point)
    if clash:
        # combine would overwrite the model's variable with the sweep's own without a word: refuse the run instead
        error = "\n".join(filter(None, [error, clash]))
        ds = xr.Dataset()
    return RunResult(index, dict(point), int(seed), ds, error, time.perf_counter() - started, compile_seconds)


@contextlib.contextmanager
def _one_thread():
    """BLAS (and numba's parallel kernels) on one thread in this process while the block runs."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(1)
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with limits:
            yield
    finally:
        numba.set_num_threads(before)


@contextlib.contextmanager
def _thread_environment():
    """Child processes started inside the block see one thread for every library."""
    saved = {v: os.environ.get(v) for v in THREAD_VARIABLES}
    os.environ.update({v: "1" for v in THREAD_VARIABLES})
    try:
        yield
    finally:
        for v, old in saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old


def _worker_init():
    """Each worker process: one thread for BLAS and numba, whatever its environment said.

    A sweep's parallelism is its processes; threads inside them would only
    compete for the same cores (and the serial kernels are the fastest on one).
    """
    from tqdm import tqdm

    from neurosim.threads import set_num_threads

    set_num_threads(1)
    # tqdm's default write lock holds a multiprocessing RLock, a named semaphore that a process started by the fork
    # server registers with multiprocessing's resource tracker and removes only when it exits normally: a worker
    # killed at its timeout (or by the OOM killer) would leave it behind, and the tracker reports "leaked semaphore
    # objects" when the sweep's process ends. The lock guards nothing across processes here (no worker shares it
    # with another), so a thread lock does the same job.
    tqdm.set_lock(threading.RLock())


def _process_context():
    """A fork server that has imported neurosim once; workers fork from it (no fork of a threaded parent).

    Spawned workers would each import numpy, numba, xarray and neurosim anew
    (seconds per worker); plain fork would copy this process's BLAS and
    numba thread pools mid-state. Where there is no fork server (Windows),
    spawn.
    """
    import multiprocessing

    _stop_workers_at_exit()
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["neurosim", "neurosim.experiment"])
    return ctx


def _worker_main(conn):
    """A worker's life: say it is ready, then run one job at a time until told to stop (None) or orphaned."""
    _worker_init()
    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):  # the sweep's process is gone
            return
        except Exception as err:  # noqa: BLE001 -- e.g. a model this process cannot import: that run's error
            conn.send(("unreadable", "".join(traceback.format_exception_only(type(err), err)).strip()))
            continue
        if job is None:
            return
        try:
            conn.send(("started", None))
            res = _execute(*job)
            conn.send(("result", res))
        except (EOFError, OSError):  # the sweep's process is gone (killed): nobody to answer
            return
        except Exception as err:  # noqa: BLE001 -- e.g. a result that cannot be pickled: still an answer
            why = "".join(traceback.format_exception_only(type(err), err)).strip()
            error = "\n".join(filter(None, [res.error, f"its result cannot be sent back: {why}"]))
            conn.send(("result", RunResult(res.index, res.point, res.seed, xr.Dataset(), error,
                                           res.wall_seconds, res.compile_seconds)))


class _Worker:
    """One supervised worker process and its end of a pipe; it holds at most one job."""

    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child,), daemon=True, name="neurosim-sweep-worker")
        with _thread_environment():
            self.process.start()
        child.close()
        self.ready = False  # it has started (imported what it needs); a death before this is a start-up failure
        self.started = False  # it has begun its job; a death before this is not the job's doing
        self.job = None
        self.since = 0.0  # time.monotonic() when it was sent its job, or began it (for a timeout)

    def death(self) -> str:
        """Why the process ended: its exit code or the signal that killed it."""
        self.process.join(5)
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                return f"worker killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"worker killed by signal {-code}"
        return f"worker died (exit code {code})"

    def tell_to_stop(self):
        """Ask the worker to end after its current job (it holds none when idle)."""
        with contextlib.suppress(OSError):
            self.conn.send(None)

    def stop(self, kill: bool = False):
        """End the process: told to stop, or killed; then :meth:`finish`."""
        if kill:
            self.process.kill()
        else:
            self.tell_to_stop()
        self.finish()

    def finish(self):
        """Wait up to 5 s for the process to end (then kill it) and close the pipe."""
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


#: idle workers kept for the next sweep of this session (their loaded kernels stay warm)
_IDLE: list[_Worker] = []

_GUARD_HINT = ("a script that runs a sweep on processes or dask must start it under `if __name__ == \"__main__\":` "
               "(every worker imports the script, and an unguarded sweep runs again in each)")


def shutdown() -> None:
    """Stop the worker processes kept between sweeps (also done at exit).

    Every worker is told to stop before any is waited for, so they wind down
    together; each gets up to 5 s to exit on its own (its exit handlers run:
    multiprocessing's finalizers release what it holds) before it is killed.
    """
    workers = _IDLE[:]
    _IDLE.clear()
    for w in workers:
        w.tell_to_stop()
    for w in workers:
        w.finish()


_AT_EXIT = False  # whether shutdown is registered with atexit


def _stop_workers_at_exit() -> None:
    """Register :func:`shutdown` with atexit once, after multiprocessing's own exit handler.

    Exit handlers run last registered first. multiprocessing's handler
    (registered when ``multiprocessing.util`` is first imported) terminates
    every daemonic child still alive with SIGTERM, which ends it without
    running its exit handlers: a worker's semaphores then stay registered
    with the resource tracker, which reports "leaked semaphore objects" at
    exit. Registered at neurosim's import, which usually precedes that one,
    shutdown ran after it; registered here, before the first worker starts,
    it runs first and the workers exit on their own.
    """
    global _AT_EXIT
    if not _AT_EXIT:
        import multiprocessing.util  # noqa: F401 -- its exit handler is registered on import: before ours

        atexit.register(shutdown)
        _AT_EXIT = True


def _send(worker):
    """Hand a worker its job; a worker that died meanwhile is found by its sentinel, not here."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        worker.conn.send(worker.job)


def _timed_out(job, timeout: float, seconds: float, what: str) -> RunResult:
    """The error row of a run stopped at its timeout."""
    _, point, _, seed, _, index = job
    return RunResult(index, dict(point), int(seed), xr.Dataset(),
                     f"TimeoutError: the run took longer than timeout={timeout:g} s; {what}", seconds)


def _run_processes(jobs, workers, done, timeout=None):
    """Run ``jobs`` on ``workers`` supervised processes, one job per worker at a time.

    A :class:`multiprocessing.pool.Pool` replaces a worker that dies but never
    answers for the job it held (``imap_unordered`` then waits forever), and
    :class:`concurrent.futures.ProcessPoolExecutor` fails every pending job
    at once. Here each worker's pipe and sentinel are watched together: a
    worker that dies while running a job (``os._exit``, a segfault, the OOM
    killer's SIGKILL) makes that job an error row naming its exit code or
    signal, a fresh worker takes its place, and the others go on. A worker
    that dies before it is ready (its start-up failed, typically because the
    script that runs the sweep has no ``__main__`` guard) stops the sweep at
    once with that advice, instead of a worker being restarted forever.

    With ``timeout`` (seconds), a worker still busy with a job that long
    after it began it (or after it was sent the job, if it never said it
    began) is killed and replaced, and the job is an error row.
    """
    from multiprocessing.connection import wait

    ctx = _process_context()
    pending = list(reversed(jobs))
    lost: dict[int, int] = {}  # run index -> times its worker died before starting it
    n = min(workers, len(jobs))
    crew = []

    def give(w, job):
        w.job, w.started = job, False
        w.since = time.monotonic()  # the clock restarts when the worker says it began the job
        _send(w)

    while _IDLE and len(crew) < n:
        w = _IDLE.pop()
        if w.process.is_alive():
            crew.append(w)
        else:
            w.stop(kill=True)
    try:
        while len(crew) < n:
            crew.append(_Worker(ctx))
        for w in crew:
            give(w, pending.pop())
        while any(w.job is not None for w in crew):
            busy = [w for w in crew if w.job is not None]
            left = None if timeout is None else max(0.0, min(w.since for w in busy) + timeout - time.monotonic())
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=left)
            for w in busy:
                message = None
                if w.conn in ready or w.process.sentinel in ready:
                    try:
                        if w.conn.poll():
                            message = w.conn.recv()
                    except (EOFError, OSError):
                        message = None
                if message is not None:
                    kind, value = message
                    if kind in ("ready", "started"):
                        w.ready = True
                        if kind == "started":
                            w.started, w.since = True, time.monotonic()
                        continue
                    if kind == "unreadable":
                        index, point, seed = w.job[5], w.job[1], w.job[3]
                        value = RunResult(index, dict(point), int(seed), xr.Dataset(),
                                          f"a worker process could not read this run's job: {value}")
                    w.job, w.started = None, False
                    done(value)
                    if pending:
                        give(w, pending.pop())
                elif w.process.sentinel in ready and not w.process.is_alive():
                    why = w.death()
                    if not w.ready:
                        raise RuntimeError(f"sweep worker processes die while starting: {why}, before running "
                                           f"anything; {_GUARD_HINT}. Otherwise the worker's own traceback, "
                                           "above, says why")
                    job, w.job = w.job, None
                    w.conn.close()
                    crew.remove(w)
                    index, point, seed = job[5], job[1], job[3]
                    if w.started or lost.get(index, 0) >= 1:
                        done(RunResult(index, dict(point), int(seed), xr.Dataset(),
                                       f"{why} while running this point (out of memory, a crash in compiled "
                                       "code, or os._exit/sys.exit in the model)"))
                    else:
                        # killed before it took the job (say, the OOM killer chose an idle worker): not the run's
                        # doing; it goes back in the queue, once
                        lost[index] = lost.get(index, 0) + 1
                        pending.append(job)
                    if pending:
                        fresh = _Worker(ctx)
                        give(fresh, pending.pop())
                        crew.append(fresh)
                elif timeout is not None and time.monotonic() - w.since >= timeout:
                    # no answer in time: SIGKILL stops it whatever it runs (a numba loop, a BLAS call, a sleep)
                    job, w.job = w.job, None
                    seconds = time.monotonic() - w.since
                    w.stop(kill=True)
                    crew.remove(w)
                    done(_timed_out(job, timeout, seconds, "its worker process was killed and replaced"
                                    if w.started else "its worker process had not begun it (reading its job took "
                                    "that long) and was killed and replaced"))
                    if pending:
                        fresh = _Worker(ctx)
                        give(fresh, pending.pop())
                        crew.append(fresh)
    except BaseException:
        # Ctrl-C, a start-up failure or a failing store: these workers' state is unknown, start afresh next time
        for w in crew:
            w.stop(kill=True)
        raise
    _IDLE.extend(crew)


def _run_dask(jobs, workers, client, done, timeout=None):
    """Run ``jobs`` on a dask cluster; a run whose worker dies is its error, the others go on.

    The scheduler blames every task a dying worker held, not only the one it
    was running, and retries them elsewhere (``allowed-failures``, default
    3), so a run that kills its worker would take up to four workers down
    and an innocent run queued beside it could be marked too. So: at most
    as many runs are in flight as the cluster has threads (a worker holds
    only what it runs); in the cluster this sweep starts a death is not
    retried (``allowed-failures`` 0; a client's own cluster keeps its
    settings, and KilledWorker only comes later); and a run whose worker died
    is run once more on its own before it is called the cause (a run that
    was only beside the killer then succeeds).

    With ``timeout``, a task still unfinished that many seconds after the
    scheduler handed it to a worker (polled with ``Client.processing``) is
    cancelled and an error row; on the cluster this sweep started, the
    worker process that holds it is killed and its nanny starts a fresh one
    (dask cannot interrupt a running task: only its process's end stops it).
    A given client's workers are left alone.
    """
    try:
        import asyncio

        from dask.distributed import Client, LocalCluster, wait
    except ImportError as err:
        raise ImportError("executor='dask' needs dask.distributed: pip install distributed, or from the neurosim checkout: python -m pip install -e '.[dask]'") from err
    own = client is None or isinstance(client, str)
    cluster = None
    if client is None:
        import dask

        width = min(workers, len(jobs))
        try:
            with _thread_environment(), dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                cluster = LocalCluster(n_workers=width, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
        except Exception as err:  # noqa: BLE001 -- "Nanny failed to start" alone does not say what to do
            raise RuntimeError(f"the dask cluster for the sweep did not start ({type(err).__name__}: {err}); if "
                               f"this is a script, {_GUARD_HINT}. Otherwise the workers' tracebacks, above, "
                               "say why") from err
        client = Client(cluster)
        client.run(_worker_init)
    else:
        if isinstance(client, str):
            client = Client(client)
        width = max(1, sum(client.nthreads().values()))
    live: dict = {}

    def overdue(fut, job, seconds):
        """Stop a task past the timeout: on the sweep's own cluster kill the worker holding it, else cancel it."""
        holders = [w for w, keys in client.processing().items() if fut.key in keys] if cluster is not None else []
        what = ("its task was cancelled; dask cannot stop a task that runs, so it keeps its worker's thread until "
                "it returns (the sweep kills no worker of a cluster it did not start)")
        if holders:
            # Client.restart_workers would wait for the worker to close cleanly, which a busy task prevents, and then
            # for it to come back; a SIGKILL stops it at once, and its nanny starts a fresh one by itself
            pids = client.run_on_scheduler(_worker_pids)
            for address in holders:
                with contextlib.suppress(KeyError, OSError):
                    os.kill(pids[address], getattr(signal, "SIGKILL", signal.SIGTERM))
            # The task is not cancelled (nor released) before the scheduler has seen its worker die (the task then
            # fails, allowed-failures being 0): a cancel frees the worker's slot at once, and the scheduler would
            # hand the next run to the dying worker
            with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                wait([fut], timeout=30)
            what = "its dask worker was killed (its nanny starts a fresh one)"
        client.cancel([fut])
        done(_timed_out(job, timeout, seconds, what))

    def attempt(batch, width, last):
        """Run ``batch``, ``width`` at a time; returns the jobs whose worker died (when not ``last``)."""
        # flight: future -> time.monotonic() when the scheduler was first seen to have handed it to a worker
        # (None until then: a task waiting for a worker, a restarting one say, is not yet running)
        queue, died, flight = list(reversed(batch)), [], {}

        def submit():
            job = queue.pop()
            fut = client.submit(_execute, *job, pure=False)
            live[fut] = job
            flight[fut] = None

        for _ in range(min(width, len(queue))):
            submit()
        while flight:
            left = None
            if timeout is not None:
                if any(t is None for t in flight.values()):
                    held = {key for keys in client.processing().values() for key in keys}
                    now = time.monotonic()
                    for f, t in flight.items():
                        if t is None and f.key in held:
                            flight[f] = now
                clocks = [t for t in flight.values() if t is not None]
                left = max(0.0, min(clocks) + timeout - time.monotonic()) if clocks else timeout
                if any(t is None for t in flight.values()):
                    left = min(left, 0.25)  # look again soon for the tasks not yet handed to a worker
            try:
                finished = wait(list(flight), timeout=left, return_when="FIRST_COMPLETED").done
            except (TimeoutError, asyncio.TimeoutError):  # nothing finished in time (distinct on Python 3.10)
                finished = set()
            for fut in [f for f in flight if f in finished]:
                del flight[fut]
                job = live.pop(fut)
                try:
                    res = fut.result()
                except Exception as err:  # noqa: BLE001 -- KilledWorker, a lost connection: that run's error
                    # _execute turns every exception of the model into a result, so what arrives here is the
                    # cluster's verdict on the task (its worker died while running it), not the model's
                    why = "".join(traceback.format_exception_only(type(err), err)).strip()
                    killed = type(err).__name__ == "KilledWorker"
                    if killed and not last:
                        died.append(job)
                        res = None
                    else:
                        _, point, _, seed, _, index = job
                        res = RunResult(index, dict(point), int(seed), xr.Dataset(),
                                        f"worker died: {why}" if killed else f"dask could not run it: {why}")
                fut.release()
                if res is not None:
                    done(res)
                if queue:
                    submit()
            if timeout is not None:
                now = time.monotonic()
                for fut in [f for f, t in flight.items() if t is not None and now - t >= timeout and not f.done()]:
                    seconds = now - flight.pop(fut)
                    overdue(fut, live.pop(fut), seconds)
                    fut.release()
                    if queue:
                        submit()
        return died

    try:
        try:
            for job in attempt(jobs, width, last=False):
                attempt([job], 1, last=True)  # alone on the cluster: if its worker dies now, the run is the cause
        except BaseException:
            client.cancel(list(live))
            raise
    finally:
        if own:
            client.close()
        if cluster is not None:
            cluster.close()


def _worker_pids(dask_scheduler) -> dict:
    """``{worker address: process id}``, run on the scheduler (it knows them without asking a busy worker)."""
    return {address: ws.pid for address, ws in dask_scheduler.workers.items()}


def _without_encoding(ds: xr.Dataset) -> xr.Dataset:
    """A shallow copy that forgets how its variables were stored.

    A Dataset read from a file remembers each variable's on-disk form: a run
    whose text was one character wide brings ``dtype <U1``, and xarray would
    write the whole sweep's column in that width (``"death"`` as ``"d"``).
    Without an encoding, text is written as variable-length strings.
    """
    ds = ds.copy()
    for var in ds.variables.values():
        var.encoding = {}
    return ds


def _netcdf_attr(value) -> bool:
    """Whether a netCDF file holds this attribute value as it is (else it is stored as JSON)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (str, bytes, float, np.floating)):
        return True
    if isinstance(value, (int, np.integer)):
        return -(2**63) <= int(value) < 2**63
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.size > 0 and value.dtype.kind in "iuf"
    return False


def _to_storage(ds: xr.Dataset) -> xr.Dataset:
    """A copy netCDF can hold: no inherited encodings; attributes it cannot hold (dicts, None, bools, lists) as JSON.

    The JSON-encoded keys are listed in each object's ``sweep_json_attrs``
    attribute, so :func:`_from_storage` gives back the values (lists for
    tuples). Checking attributes here, rather than letting ``to_netcdf``
    refuse them, keeps a stored sweep from aborting after its first run.
    """
    ds = _without_encoding(ds)
    objects: list[xr.Dataset | xr.Variable] = [ds, *ds.variables.values()]
    for obj in objects:
        encoded = [k for k, v in obj.attrs.items() if not _netcdf_attr(v)]
        if encoded:
            obj.attrs = {**obj.attrs, **{k: json.dumps(_plain(obj.attrs[k]), default=repr) for k in encoded},
                         "sweep_json_attrs": json.dumps(encoded)}
    return ds


def _plain(value):
    """numpy scalars and arrays inside an attribute as Python values, for JSON."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _from_storage(ds: xr.Dataset) -> xr.Dataset:
    """The inverse of :func:`_to_storage` on a loaded Dataset."""
    ds = _without_encoding(ds)
    objects: list[xr.Dataset | xr.Variable] = [ds, *ds.variables.values()]
    for obj in objects:
        if "sweep_json_attrs" in obj.attrs:
            attrs = dict(obj.attrs)
            for k in json.loads(attrs.pop("sweep_json_attrs")):
                attrs[k] = json.loads(attrs[k])
            obj.attrs = attrs
    return ds


def _write_atomically(ds: xr.Dataset, path: pathlib.Path):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        _to_storage(ds).to_netcdf(tmp, engine="h5netcdf")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
