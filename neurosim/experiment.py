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
``event_step = -1`` and empty strings. A run that raises is kept, with its
message in the ``error`` variable and, when it diverged, what it recorded
before; it does not stop the others.

Every run is a function of its point and seed only (the model's random
numbers must come from ``seed``), and runs use one BLAS thread in every
executor, so the executors give the same bits.

With ``out=DIR`` each finished run is written to ``DIR/runs/`` as it
completes (atomically: a run killed mid-write leaves no file) and the sweep's
description to ``DIR/sweep.json``; running the same sweep again with the same
``out`` (after Ctrl-C or ``kill -9``) loads the finished runs and runs only
the rest. A folder written by a different sweep is refused before anything
runs.

Example::

    import neurosim as ns
    from neurosim.models.similarity_matching import build_network

    def model(regularizer, eta, seed):
        ...  # build and return a Network that records what you want

    sweep = ns.Sweep(model, grid={"regularizer": ["TY", "XY"], "eta": [0.01, 0.1]}, seeds=range(4), steps=2000)
    ds = sweep.run(executor="processes", workers=2, out="out/my_sweep")
    ds.activity.mean("time").sel(regularizer="TY")
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import inspect
import itertools
import json
import os
import pathlib
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from neurosim._validation import check_choice, check_int
from neurosim.errors import SimulationDiverged

__all__ = ["Sweep", "RunResult", "EXECUTORS", "shutdown"]

EXECUTORS = ("serial", "processes", "dask")
#: environment variables that set the thread count of BLAS/OpenMP libraries and numba
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS", "NEUROSIM_NUM_THREADS")
_RESERVED = ("seed", "run", "event", "error")
_EVENT_FILL = {"event_step": -1, "event_kind": "", "event_population": "", "event_unit": -1}


@dataclass
class RunResult:
    """What one run of a sweep gave: its point, its data (possibly partial) and its error, if any."""

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
    return values


def _key(value) -> str:
    """A stable text form of a parameter value (for fingerprints and duplicate checks)."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return json.dumps(value)
    return repr(value)


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
        Name of the sweep (default: the model's name).
    check : callable, optional
        Called as ``check(**point, **fixed)`` for every point before any run
        (:meth:`validate`); raises ValueError/TypeError for a point the model
        would refuse. For models that return networks, building them is the
        check and this is optional.
    """

    def __init__(self, model, grid: Mapping | None = None, *, points: Sequence[Mapping] | None = None,
                 seeds=(0,), steps: int | None = None, fixed: Mapping | None = None, name: str | None = None,
                 check=None):
        if not callable(model):
            raise TypeError(f"model must be callable; got {type(model).__name__}")
        self.model = model
        self.name = str(name or getattr(model, "__name__", "sweep"))
        if (grid is None) == (points is None):
            raise ValueError("give exactly one of grid (a mapping of value lists) or points (a list of mappings)")
        if grid is not None:
            if not isinstance(grid, Mapping):
                raise TypeError(f"grid must be a mapping of parameter name to values; got {type(grid).__name__}")
            if not grid:
                raise ValueError("grid is empty: give at least one parameter and its values")
            self.dims = [self._check_name(k) for k in grid]
            values = [_check_values(k, v) for k, v in grid.items()]
            self.grid = dict(zip(self.dims, values))
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
        if isinstance(seeds, (int, np.integer)):
            seeds = [seeds]
        self.seeds = [check_int("seeds", s, low=0) for s in seeds]
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
        """``(index, point, seed)`` of every run, seeds varying fastest."""
        return [(i * len(self.seeds) + j, p, s) for i, p in enumerate(self.points) for j, s in enumerate(self.seeds)]

    def description(self) -> dict:
        """What identifies this sweep (stored as ``sweep.json`` next to its runs)."""
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
    def validate(self, build: bool = True):
        """Check every point before any run: ``check`` each point; with ``build`` and ``steps`` set, build every network.

        Raises
        ------
        ValueError
            Naming every point whose model refused it (and why).
        """
        bad = []
        if self.check is not None:
            for point in self.points:
                try:
                    self.check(**point, **self.fixed)
                except (ValueError, TypeError) as err:
                    bad.extend(f"{point} seed={seed}: {type(err).__name__}: {err}" for seed in self.seeds)
        if build and self.steps is not None and not bad:
            for _, point, seed in self.runs():
                try:
                    net = _network_of(self.model(**point, **self.fixed, seed=seed))
                    if net is None:
                        raise TypeError("with steps set, the model must return a Network (or an object with .network)")
                    net.validate()
                except (ValueError, TypeError) as err:
                    bad.append(f"{point} seed={seed}: {type(err).__name__}: {err}")
        if bad:
            more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
            raise ValueError(f"sweep {self.name!r}: the model refuses {len(bad)} of {len(self)} runs; "
                             f"nothing was run:\n  " + "\n  ".join(bad[:5]) + more)

    # -- running --------------------------------------------------------------------------
    def run(self, executor: str = "serial", workers: int | None = None, out=None, progress: bool = True,
            client=None, validate: bool = True, retry_failed: bool = False) -> xr.Dataset:
        """Run every run not yet done and return the combined Dataset.

        Parameters
        ----------
        executor : {"serial", "processes", "dask"}
            Where runs execute: this process; a pool of ``workers`` local
            processes (forked from a server that has imported neurosim; one BLAS thread each); a ``dask.distributed``
            cluster (``client``, or a ``LocalCluster`` of ``workers``
            single-threaded processes started for the sweep).
        workers : int >= 1, optional
            Default: the number of cores (``os.cpu_count()``).
        out : path, optional
            Folder for the runs as they finish, ``sweep.json`` and the
            combined ``<name>.nc``; finished runs found there are loaded, not
            rerun.
        progress : bool
            A progress bar over runs.
        client : dask.distributed.Client or str, optional
            A client or a scheduler address (``executor="dask"`` only).
        validate : bool
            Build every point's network before any run (see :meth:`validate`).
        retry_failed : bool
            Rerun runs stored in ``out`` with an error (default: keep them).

        Returns
        -------
        xarray.Dataset
            The sweep's dimensions, then the runs' own; ``error`` (empty for a
            run that succeeded), ``wall_seconds`` and ``compile_seconds`` per
            run; the sweep's description in the attributes.
        """
        executor = check_choice("executor", executor, set(EXECUTORS))
        workers = os.cpu_count() or 1 if workers is None else check_int("workers", workers, low=1)
        if client is not None and executor != "dask":
            raise ValueError("client is only used with executor='dask'")
        out = None if out is None else self._prepare_out(pathlib.Path(out))
        if validate:
            self.validate()

        results: dict[int, RunResult] = {}
        todo = []
        for index, point, seed in self.runs():
            stored = None if out is None else self._load_run(out, index, point, seed)
            if stored is not None and not (retry_failed and stored.error):
                results[index] = stored
            else:
                todo.append((index, point, seed))

        from tqdm.auto import tqdm

        with tqdm(total=len(self), initial=len(results), disable=not progress, desc=self.name, unit="run") as bar:
            def done(res: RunResult):
                results[res.index] = res
                if out is not None:
                    self._store_run(out, res)
                bar.update(1)
                if res.error:
                    bar.write(f"[{self.name}] run {res.point} seed={res.seed} failed: {res.error.splitlines()[-1]}")

            jobs = [(self.model, point, self.fixed, seed, self.steps, index) for index, point, seed in todo]
            if executor == "serial" or not jobs:
                with _one_thread():
                    for job in jobs:
                        done(_execute(*job))
            elif executor == "processes":
                _run_processes(jobs, workers, done)
            else:
                _run_dask(jobs, workers, client, done)

        ds = self.combine([results[i] for i in sorted(results)])
        if out is not None:
            _write_atomically(ds, out / f"{self.name}.nc")
        return ds

    def _prepare_out(self, out: pathlib.Path) -> pathlib.Path:
        try:
            (out / "runs").mkdir(parents=True, exist_ok=True)
            probe = out / f".probe-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
        except OSError as err:
            raise ValueError(f"out={str(out)!r} is not a writable folder: {err}") from None
        manifest = out / "sweep.json"
        mine = self.description()
        if manifest.exists():
            try:
                theirs = json.loads(manifest.read_text())
            except (OSError, ValueError) as err:
                raise ValueError(f"out={str(out)!r}: sweep.json is unreadable ({err}); use another folder") from None
            if theirs != mine:
                diff = [k for k in mine if mine.get(k) != theirs.get(k)]
                raise ValueError(f"out={str(out)!r} holds another sweep (it differs in {', '.join(diff)}); "
                                 "use another folder or remove it")
        else:
            tmp = manifest.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(mine, indent=1))
            os.replace(tmp, manifest)
        return out

    def _load_run(self, out, index, point, seed) -> RunResult | None:
        path = self._run_file(out, point, seed)
        if not path.exists():
            return None
        with xr.open_dataset(path, engine="h5netcdf") as f:
            ds = f.load()
        attrs = dict(ds.attrs)
        ds.attrs = {k: v for k, v in attrs.items() if not k.startswith("sweep_")}
        return RunResult(index, point, seed, ds, str(attrs.get("sweep_error", "")),
                         float(attrs.get("sweep_wall_seconds", np.nan)), float(attrs.get("sweep_compile_seconds", np.nan)))

    def _store_run(self, out, res: RunResult):
        ds = res.dataset.copy()
        ds.attrs.update(sweep_error=res.error, sweep_wall_seconds=res.wall_seconds,
                        sweep_compile_seconds=res.compile_seconds, sweep_seed=res.seed,
                        sweep_point=json.dumps({k: _key(v) for k, v in res.point.items()}))
        _write_atomically(ds, self._run_file(out, res.point, res.seed))

    # -- combining ------------------------------------------------------------------------
    def combine(self, results: list[RunResult]) -> xr.Dataset:
        """One Dataset from the runs' results (outer join on every coordinate; see the module docs)."""
        parts = []
        template = _failure_template(results)
        for res in results:
            ds = res.dataset.copy()
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
        combined = xr.concat(parts, dim="run", join="outer", fill_value=_fill_values(parts, fill),
                             data_vars="all", coords="different", compat="equals", combine_attrs="drop")
        # every run's own coordinates (e.g. unit ids) are aligned; the sweep's become dimensions
        for d in [*self.dims, "seed"]:
            combined.coords[d] = ("run", _coordinate([r.point[d] if d != "seed" else r.seed for r in results]))
        if self.grid is not None:
            combined = combined.set_index(run=[*self.dims, "seed"]).unstack("run")
            combined = combined.reindex({d: _coordinate(v) for d, v in self.grid.items()} | {"seed": self.seeds})
            combined = combined.transpose(*self.dims, "seed", ...)
        combined.attrs.update(
            sweep_name=self.name, sweep_model=self.description()["model"], sweep_dims=json.dumps(self.dims),
            sweep_steps=-1 if self.steps is None else self.steps,
            sweep_fixed=json.dumps({k: _key(v) for k, v in self.fixed.items()}),
            sweep_runs=len(results), sweep_failed=int(sum(bool(r.error) for r in results)),
            wall_seconds_total=float(np.nansum([r.wall_seconds for r in results])),
            compile_seconds_total=float(np.nansum([r.compile_seconds for r in results])),
        )
        return combined


def _has_data(ds: xr.Dataset) -> bool:
    return any(v not in _EVENT_FILL for v in ds.data_vars)


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
            if var.dtype.kind in "US":
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


def _execute(model, point, fixed, seed, steps, index) -> RunResult:
    """One run: build, run, collect; any exception becomes the run's error."""
    started = time.perf_counter()
    ds, error, compile_seconds = xr.Dataset(), "", 0.0
    net = None
    try:
        obj = model(**point, **fixed, seed=seed)
        net = _network_of(obj)
        if steps is not None:
            if net is None:
                raise TypeError("with steps set, the model must return a Network (or an object with .network)")
            net.run(steps)
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


def _execute_packed(job):
    return _execute(*job)


def _worker_init():
    """Each worker process: one thread for BLAS and numba, whatever its environment said.

    A sweep's parallelism is its processes; threads inside them would only
    compete for the same cores (and the serial kernels are the fastest on one).
    """
    from neurosim.threads import set_num_threads

    set_num_threads(1)


def _process_context():
    """A fork server that has imported neurosim once; workers fork from it (no fork of a threaded parent).

    Spawned workers would each import numpy, numba, xarray and neurosim anew
    (seconds per worker); plain fork would copy this process's BLAS and
    numba thread pools mid-state. Where there is no fork server (Windows),
    spawn.
    """
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["neurosim", "neurosim.experiment"])
    return ctx


_POOLS: dict = {}


def _pool(workers: int):
    """A pool of ``workers`` processes, kept for the next sweep of this session (their loaded kernels stay warm)."""
    pool = _POOLS.get(workers)
    if pool is None:
        ctx = _process_context()
        with _thread_environment():
            pool = ctx.Pool(processes=workers, initializer=_worker_init)
        _POOLS[workers] = pool
    return pool


def shutdown():
    """Stop the worker processes kept between sweeps (also done at exit)."""
    while _POOLS:
        _, pool = _POOLS.popitem()
        pool.terminate()
        pool.join()


atexit.register(shutdown)


def _run_processes(jobs, workers, done):
    workers = min(workers, len(jobs))
    pool = _pool(workers)
    try:
        for res in pool.imap_unordered(_execute_packed, jobs):
            done(res)
    except BaseException:
        # Ctrl-C or a worker lost: this pool's state is unknown, start afresh next time
        _POOLS.pop(workers, None)
        pool.terminate()
        pool.join()
        raise


def _run_dask(jobs, workers, client, done):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as err:
        raise ImportError("executor='dask' needs dask.distributed: pip install 'neurosim[dask]'") from err
    own = client is None or isinstance(client, str)
    cluster = None
    if client is None:
        with _thread_environment():
            cluster = LocalCluster(n_workers=min(workers, len(jobs)), threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        client = Client(cluster)
        client.run(_worker_init)
    elif isinstance(client, str):
        client = Client(client)
    try:
        futures = [client.submit(_execute, *job, pure=False) for job in jobs]
        try:
            for fut in as_completed(futures):
                done(fut.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own:
            client.close()
        if cluster is not None:
            cluster.close()


def _write_atomically(ds: xr.Dataset, path: pathlib.Path):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    ds.to_netcdf(tmp, engine="h5netcdf")
    os.replace(tmp, path)
