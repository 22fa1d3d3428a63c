"""Command line: ``neurosim list`` and ``neurosim run NAME``.

Simulations are the modules of the package ``neurosim.simulations`` (the
repository's ``simulations/`` folder). Each defines ``NAME``,
``DESCRIPTION``, ``DEFAULT_STEPS`` and ``run(steps, out, seed, progress)``
returning the files it wrote.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import time
from pathlib import Path

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
        if value < (1 if kind == "steps" else 0):
            raise argparse.ArgumentTypeError(f"{kind} must be >= {1 if kind == 'steps' else 0}; got {value}")
        return value

    return parse


def _add_run_args(p: argparse.ArgumentParser, default_out: str | None):
    p.add_argument("--steps", type=_positive("steps"), default=None, help="steps (or iterations); default: the simulation's own")
    p.add_argument("--out", default=default_out, help="output folder (default: out/NAME)")
    p.add_argument("--seed", type=_positive("seed"), default=0, help="root seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _execute(run, name: str, args) -> int:
    out = Path(args.out or Path("out") / name)
    start = time.perf_counter()
    try:
        files = run(steps=args.steps, out=out, seed=args.seed, progress=not args.no_progress)
    except (ValueError, TypeError, OSError) as err:
        # bad arguments (e.g. --steps below a simulation's own minimum) or an unwritable --out:
        # a one-line error, as argparse gives for its own checks
        if os.environ.get("NEUROSIM_DEBUG"):
            raise
        print(f"neurosim run {name}: error: {type(err).__name__}: {err} (NEUROSIM_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 2
    took = time.perf_counter() - start
    print(f"{name}: done in {took:.1f} s")
    for key, path in (files or {}).items():
        print(f"  {key}: {path}")
    return 0


def script_main(run, name: str, argv=None) -> int:
    """Entry point of ``python simulations/<name>.py`` (same flags as ``neurosim run``)."""
    parser = argparse.ArgumentParser(prog=name, description=f"run the {name} simulation")
    _add_run_args(parser, None)
    args = parser.parse_args(argv)
    return _execute(run, name, args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="neurosim", description="Run neurosim's reproductions of the papers.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the simulations")
    run_p = sub.add_parser("run", help="run one simulation")
    run_p.add_argument("name", help="simulation name (see `neurosim list`)")
    _add_run_args(run_p, None)
    args = parser.parse_args(argv)
    sims = available()
    if args.command == "list":
        width = max(map(len, sims), default=0)
        for name, mod in sims.items():
            steps = getattr(mod, "DEFAULT_STEPS", None)
            print(f"{name:<{width}}  {getattr(mod, 'DESCRIPTION', '')}" + (f"  [default steps: {steps}]" if steps else ""))
        return 0
    if args.name not in sims:
        print(f"neurosim: unknown simulation {args.name!r}; available: {', '.join(sims)}", file=sys.stderr)
        return 2
    return _execute(sims[args.name].run, args.name, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
