"""Command line: ``neurosim list``, ``run NAME``, ``sweep NAME``, ``reproduce``, ``tables`` and ``--version``.

Simulations are the modules of the package ``neurosim.simulations`` (the
repository's ``simulations/`` folder). Each defines ``NAME``,
``DESCRIPTION``, ``DEFAULT_STEPS`` and ``run(steps, out, seed, progress)``
returning the files it wrote. A simulation that can be swept also defines
``point(**params, seed, steps)`` (one run, returning a Dataset), ``GRID``
(the default values of its sweep parameters) and optionally
``check_point(**params, steps)`` (refuses bad values before any run) and
``plot_sweep(ds, out)`` (figures of a whole sweep, returning the files).
``neurosim reproduce`` (:mod:`neurosim.reproduce`) reads ``QUICK``, the
shortened ``run`` arguments of ``--quick``, and ``REPRODUCE_AFTER``.
``neurosim tables`` (:mod:`neurosim.report_tables`) reads ``tables(ds)``,
the report tables a simulation's dataset makes, and ``REPORT_FIGURES``, the
figures of its run that the reports show (copied to ``docs/reports/figures``
with their provenance).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import json
import os
import pkgutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "script_main", "available"]


def available() -> dict:
    """``{NAME: module}`` of every simulation module."""
    import neurosim.simulations as pkg

    out = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"neurosim.simulations.{info.name}")
        if hasattr(mod, "run") and hasattr(mod, "NAME"):
            out[mod.NAME] = mod
    return dict(sorted(out.items()))


def _positive(kind):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be an integer; got {text!r}") from None
        low = 0 if kind == "seed" else 1
        if value < low:
            raise argparse.ArgumentTypeError(f"{kind} must be >= {low}; got {value}")
        return value

    return parse


def _add_run_args(p: argparse.ArgumentParser, default_out: str | None):
    p.add_argument("--steps", type=_positive("steps"), default=None, help="steps (or iterations); default: the simulation's own")
    p.add_argument("--out", default=default_out, help="output folder (default: out/NAME)")
    p.add_argument("--seed", type=_positive("seed"), default=0, help="root seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.add_argument("--resume", action="store_true",
                   help="continue a run killed before it ended (simulations that store their runs)")


def _usage_error(command: str, name: str, err: Exception) -> int:
    """Bad arguments or an unwritable --out: one line, as argparse gives for its own checks (exit 2)."""
    if os.environ.get("NEUROSIM_DEBUG"):
        raise err
    print(f"{' '.join(filter(None, ('neurosim', command, name)))}: error: {type(err).__name__}: {err} "
          "(NEUROSIM_DEBUG=1 shows the traceback)",
          file=sys.stderr)
    return 2


def _execute(run, name: str, args) -> int:
    out = Path(args.out or Path("out") / name)
    start = time.perf_counter()
    try:
        extra = {}
        if getattr(args, "resume", False):
            if "resume" not in inspect.signature(run).parameters:
                raise ValueError(f"{name} cannot resume (it stores no runs); run it again without --resume")
            extra["resume"] = True
        files = run(steps=args.steps, out=out, seed=args.seed, progress=not args.no_progress, **extra)
    except (ValueError, TypeError, OSError) as err:  # e.g. --steps below a simulation's own minimum
        return _usage_error("run", name, err)
    took = time.perf_counter() - start
    print(f"{name}: done in {took:.1f} s")
    for key, path in (files or {}).items():
        print(f"  {key}: {path}")
    return 0


def script_main(run: Callable[..., Any], name: str, argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python simulations/<name>.py`` (same flags as ``neurosim run``)."""
    parser = argparse.ArgumentParser(prog=name, description=f"run the {name} simulation")
    _add_run_args(parser, None)
    args = parser.parse_args(argv)
    return _execute(run, name, args)


def _grid_values(text: str):
    """``key=v1,v2,...`` -> ``(key, [values])``; values parse as int, then float, else stay text."""
    key, sep, values = text.partition("=")
    if not sep or not key or not values:
        raise argparse.ArgumentTypeError(f"--grid takes KEY=V1,V2,...; got {text!r}")
    if any(not v.strip() for v in values.split(",")):
        # "1,,2" would pass '' to the model as a value, and "," two of them ("repeats a value")
        raise argparse.ArgumentTypeError(f"--grid {key.strip()}: an empty value in {values!r} (two commas in a row, "
                                         "or one at either end); give KEY=V1,V2,... with every value written")

    def parse(v):
        for kind in (int, float):
            try:
                return kind(v)
            except ValueError:
                pass
        return v

    return key.strip(), [parse(v.strip()) for v in values.split(",")]


def _seed_list(text: str) -> list:
    """``0,1,5`` or ``0-7`` (inclusive) -> list of seeds (at most :data:`neurosim.experiment.MAX_RUNS`)."""
    from neurosim.experiment import MAX_RUNS

    try:
        if "-" in text:
            lo, hi = (int(v) for v in text.split("-", 1))
            if hi < lo:
                raise argparse.ArgumentTypeError(f"--seeds FIRST-LAST needs FIRST <= LAST; got {text!r}")
            # counted before the list is made: 0-99999999999 would otherwise end in a bare MemoryError
            if hi - lo + 1 > MAX_RUNS:
                raise argparse.ArgumentTypeError(f"--seeds {text} names {hi - lo + 1} seeds; a sweep has at most "
                                                 f"{MAX_RUNS} runs")
            seeds = list(range(lo, hi + 1))
        else:
            seeds = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds takes S1,S2,... or FIRST-LAST; got {text!r}") from None
    if not seeds or min(seeds) < 0:
        raise argparse.ArgumentTypeError(f"--seeds must name seeds >= 0; got {text!r}")
    return seeds


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout takes seconds (a number > 0); got {text!r}") from None
    if not 0.0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"--timeout must be a finite number of seconds > 0; got {text!r}")
    return value


def _default_out(sweep) -> Path:
    """``out/NAME_sweep/ID``, ``ID`` a digest of what identifies the sweep (grid, seeds, steps).

    Each distinct sweep of a simulation gets its own folder: a second sweep
    with other values does not meet the first one's folder (which would be
    refused as holding another sweep), and the same command again finds its
    own runs and resumes. The model's source is not part of the digest, so
    a sweep after an edit of the simulation meets its earlier runs and is
    asked what to do with them (``--model-changed``).
    """
    text = json.dumps(sweep.description(), sort_keys=True)
    return Path("out") / f"{sweep.name}_sweep" / hashlib.sha256(text.encode()).hexdigest()[:10]


def _sweep(mod, args) -> int:

    from neurosim.experiment import Sweep

    name = mod.NAME
    if not hasattr(mod, "point"):
        sweepable = [n for n, m in available().items() if hasattr(m, "point")]
        print(f"neurosim sweep: {name!r} cannot be swept (it defines no point()); sweepable: {', '.join(sweepable)}",
              file=sys.stderr)
        return 2
    grid = {k: list(v) for k, v in getattr(mod, "GRID", {}).items()}
    given = set()
    for key, values in args.grid or []:
        if key in given:  # the last would silently win: say so rather than sweep what was not asked for
            print(f"neurosim sweep {name}: error: --grid {key} is given twice; give all its values once "
                  f"(--grid {key}=V1,V2,...)", file=sys.stderr)
            return 2
        given.add(key)
        grid[key] = values
    fixed = {}
    if args.steps is not None:
        if "steps" not in inspect.signature(mod.point).parameters:
            print(f"neurosim sweep {name}: error: this simulation takes no --steps", file=sys.stderr)
            return 2
        fixed["steps"] = args.steps
    start = time.perf_counter()
    try:
        sweep = Sweep(mod.point, grid=grid, seeds=args.seeds or [0], fixed=fixed, name=name,
                      check=getattr(mod, "check_point", None))
        out = Path(args.out) if args.out else _default_out(sweep)
        ds = sweep.run(executor=args.executor, workers=args.workers, out=out, progress=not args.no_progress,
                       timeout=args.timeout, model_changed=args.model_changed)
        files = {"dataset": out / f"{name}.nc"}
        if hasattr(mod, "plot_sweep"):
            files.update(mod.plot_sweep(ds, out) or {})
    except (ValueError, TypeError, OSError) as err:
        return _usage_error("sweep", name, err)
    failed = int(ds.attrs.get("sweep_failed", 0))
    print(f"{name}: {len(sweep)} runs ({failed} failed) in {time.perf_counter() - start:.1f} s")
    for key, path in files.items():
        print(f"  {key}: {path}")
    return 1 if failed else 0


def _reproduce(args) -> int:
    from neurosim import reproduce

    sims = available()
    unknown = [name for name in args.only or [] if name not in sims]
    if unknown:
        print(f"neurosim reproduce: unknown simulation(s) {', '.join(unknown)}; available: {', '.join(sims)}",
              file=sys.stderr)
        return 2
    chosen = {name: sims[name] for name in (args.only or sims)}
    out = Path(args.out or ("out/reproduce-quick" if args.quick else "out/reproduce"))
    start = time.perf_counter()
    try:
        tasks = reproduce.plan(chosen, seeds=args.seeds, quick=args.quick)
        say = None if args.no_progress else (lambda text: print(f"[reproduce] {text}", flush=True))
        summary = reproduce.reproduce(tasks, out, workers=args.workers or 1, say=say, timeout=args.timeout)
    except (ValueError, TypeError, OSError) as err:
        return _usage_error("reproduce", "", err)
    failed = [folder for folder, entry in summary.items() if entry["status"] == "failed"]
    print(f"reproduce: {len(summary)} tasks ({len(failed)} failed) in {time.perf_counter() - start:.1f} s; "
          f"summary: {out / 'summary.json'}")
    return 1 if failed else 0


def _tables(args) -> int:
    from neurosim import report_tables

    sims = available()
    out = Path(args.out or ("out/reproduce-quick" if args.quick else "out/reproduce"))
    reports = Path(args.reports)
    try:
        if not reports.is_dir():
            raise ValueError(f"--reports {reports} is not a folder")
        chosen = {name: mod for name, mod in sims.items() if not args.only or name in args.only}
        result = report_tables.publish(out, reports, chosen, check_only=args.check)
    except (ValueError, TypeError, OSError) as err:
        return _usage_error("tables", "", err)
    for problem in result["problems"]:
        print(f"tables: {problem}", file=sys.stderr)
    verb = "checked" if args.check else "written"
    print(f"tables: {len(result['tables'])} {verb} from {out}" +
          (f"; reports rewritten: {', '.join(result['reports'])}" if result["reports"] else "") +
          (f"; figures copied: {', '.join(result['figures'])}" if result.get("figures") else ""))
    return 1 if result["problems"] else 0


def main(argv: Sequence[str] | None = None) -> int:
    from neurosim import __version__

    parser = argparse.ArgumentParser(prog="neurosim", description="Run neurosim's reproductions of the papers.")
    parser.add_argument("--version", action="version", version=f"neurosim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the simulations")
    run_p = sub.add_parser("run", help="run one simulation")
    run_p.add_argument("name", help="simulation name (see `neurosim list`)")
    _add_run_args(run_p, None)
    sweep_p = sub.add_parser("sweep", help="run one simulation over a grid of parameters and seeds")
    sweep_p.add_argument("name", help="simulation name (see `neurosim list`; those marked [sweepable])")
    sweep_p.add_argument("--grid", action="append", type=_grid_values, metavar="KEY=V1,V2",
                         help="values of one sweep parameter (repeatable, once per parameter; "
                         "default: the simulation's GRID)")
    sweep_p.add_argument("--seeds", type=_seed_list, default=None, help="seeds: S1,S2,... or FIRST-LAST (default 0)")
    sweep_p.add_argument("--steps", type=_positive("steps"), default=None, help="steps of every run")
    sweep_p.add_argument("--executor", choices=["serial", "processes", "dask"], default="processes")
    sweep_p.add_argument("--workers", type=_positive("workers"), default=None, help="default: every core")
    sweep_p.add_argument("--out", default=None,
                         help="output folder; resumes a sweep there (default: out/NAME_sweep/ID, ID a digest of the "
                         "grid, seeds and steps: each distinct sweep has its own folder, the same command resumes it)")
    sweep_p.add_argument("--timeout", type=_timeout, default=None, metavar="SECONDS",
                         help="stop a run after this long: it becomes an error row, its worker is replaced "
                         "(processes and dask executors)")
    sweep_p.add_argument("--model-changed", choices=["refuse", "rerun", "keep"], default="refuse",
                         help="stored runs of an edited simulation: refuse (default), run them again, or keep them")
    sweep_p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    repro_p = sub.add_parser("reproduce", help="run every simulation on several seeds, with provenance (resumable)")
    repro_p.add_argument("--quick", action="store_true",
                         help="each simulation's shortened arguments (QUICK; what CI runs) instead of its full length")
    repro_p.add_argument("--only", nargs="+", metavar="NAME", help="these simulations only (default: all)")
    repro_p.add_argument("--seeds", type=_positive("seeds"), default=3, help="seeds of every simulation (>= 3; default 3)")
    repro_p.add_argument("--workers", type=_positive("workers"), default=None,
                         help="simulations running at once, each in a process of its own (default 1)")
    repro_p.add_argument("--out", default=None, help="output folder; a reproduction there continues where it stopped "
                         "(default: out/reproduce, or out/reproduce-quick with --quick)")
    repro_p.add_argument("--timeout", type=_timeout, default=None, metavar="SECONDS",
                         help="stop a simulation after this long: it is reported as failed")
    repro_p.add_argument("--no-progress", action="store_true", help="hide the progress lines")
    tables_p = sub.add_parser("tables", help="write the reports' tables from a reproduction's data (docs/reports/data) "
                              "and copy its figures (docs/reports/figures, with provenance.json)")
    tables_p.add_argument("--out", default=None, help="the reproduction's folder (default: out/reproduce, or "
                          "out/reproduce-quick with --quick)")
    tables_p.add_argument("--quick", action="store_true", help="read the quick reproduction's folder")
    tables_p.add_argument("--reports", default="docs/reports", help="the reports' folder (default: docs/reports)")
    tables_p.add_argument("--only", nargs="+", metavar="NAME", help="these simulations only (default: all)")
    tables_p.add_argument("--check", action="store_true",
                          help="make the tables and check that every report table is among them, with the same "
                          "columns; write nothing (CI, on a quick reproduction)")
    args = parser.parse_args(argv)
    if args.command == "reproduce":
        return _reproduce(args)
    if args.command == "tables":
        return _tables(args)
    sims = available()
    if args.command == "list":
        width = max(map(len, sims), default=0)
        for name, mod in sims.items():
            steps = getattr(mod, "DEFAULT_STEPS", None)
            print(f"{name:<{width}}  {getattr(mod, 'DESCRIPTION', '')}" + (f"  [default steps: {steps}]" if steps else "")
                  + ("  [sweepable]" if hasattr(mod, "point") else ""))
        return 0
    if args.name not in sims:
        print(f"neurosim: unknown simulation {args.name!r}; available: {', '.join(sims)}", file=sys.stderr)
        return 2
    if args.command == "sweep":
        return _sweep(sims[args.name], args)
    return _execute(sims[args.name].run, args.name, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
