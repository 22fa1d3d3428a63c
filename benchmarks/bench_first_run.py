"""Cold and warm wall time of every README snippet and gallery script, run as a user runs them (issue 40).

Each script runs in a fresh interpreter (``python script.py`` in an empty
folder), first with empty ``NEUROSIM_CACHE_DIR`` and numba caches (cold: what
a new user's first run costs, compiling every kernel and segment), then again
with the caches that run left (warm: every later run). Bytecode comes from a
cache of this benchmark's own, written by one untimed ``import neurosim``
first, so that neither run pays for compiling neurosim's sources (an
installed package has its ``.pyc`` files).

For the README's 20-line network the script is also run instrumented: the
seconds ``import neurosim`` takes, the first step after the network is built
(``net.run(1)``, which compiles or loads the segment) and the remaining
19,999 steps, cold and warm. The issue's targets: import <= 0.5 s, first
step <= 2 s, whole script <= 6 s cold and <= 2.5 s warm.

BLAS and numba are pinned to one thread, ``MPLBACKEND=Agg``. The load
average is printed: on a busy machine every number grows.

Usage::

    python benchmarks/bench_first_run.py                     # README network, snippets and gallery (~6 min)
    python benchmarks/bench_first_run.py --only network --runs 3
    python benchmarks/bench_first_run.py --only readme gallery
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
#: the README network's run line, replaced by the instrumented one (a README edit that changes it fails loudly)
RUN_LINE = "net.run(20_000, progress=True)"
_PROBE_HEAD = "import time as _time\n_t0 = _time.perf_counter()\nimport neurosim as _ns\n_t_import = _time.perf_counter() - _t0\n"
_PROBE_RUN = ("_t1 = _time.perf_counter(); net.run(1); _t_first = _time.perf_counter() - _t1\n"
              "_t2 = _time.perf_counter(); net.run(19_999); _t_rest = _time.perf_counter() - _t2\n")
_PROBE_TAIL = "print('PROBE', _t_import, _t_first, _t_rest, _time.perf_counter() - _t0)\n"


def readme_blocks() -> list[str]:
    """The README's python blocks, in order."""
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def gallery_scripts() -> list[pathlib.Path]:
    """The sphinx-gallery scripts: tutorials, then examples."""
    return sorted((ROOT / "docs" / "tutorials").glob("tutorial_*.py")) + sorted((ROOT / "docs" / "examples").glob("*.py"))


def network_probe() -> str:
    """The README's 20-line network, timing its import, its first step and the rest."""
    block = readme_blocks()[0]
    if RUN_LINE not in block:
        raise SystemExit(f"the README's first python block no longer has {RUN_LINE!r}: update RUN_LINE")
    return _PROBE_HEAD + block.replace(RUN_LINE, _PROBE_RUN) + _PROBE_TAIL


def timed_script(source: str, name: str, env: dict, timeout: float) -> tuple[float, str]:
    """Run ``source`` as ``name`` in an empty folder with environment ``env``; wall seconds and stdout."""
    with tempfile.TemporaryDirectory() as cwd:
        path = pathlib.Path(cwd) / name
        path.write_text(source)
        start = time.perf_counter()
        r = subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
        wall = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{r.stderr[-3000:]}")
    return wall, r.stdout


def cold_and_warm(source: str, name: str, env: dict, runs: int, timeout: float) -> tuple[list, list, list]:
    """``runs`` pairs of (cold, warm) runs, each pair on caches of its own; walls and the runs' stdouts."""
    cold, warm, outs = [], [], []
    for _ in range(runs):
        caches = pathlib.Path(tempfile.mkdtemp(prefix="neurosim-first-run-"))
        run_env = dict(env, NEUROSIM_CACHE_DIR=str(caches / "neurosim"), NUMBA_CACHE_DIR=str(caches / "numba"))
        try:
            for walls in (cold, warm):
                wall, out = timed_script(source, name, run_env, timeout)
                walls.append(wall)
                outs.append(out)
        finally:
            shutil.rmtree(caches, ignore_errors=True)  # a folder this benchmark made
    return cold, warm, outs


def _med(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}" if len(values) == 1 else \
        f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=("network", "readme", "gallery"),
                        default=["network", "readme", "gallery"], help="what to time (default: all)")
    parser.add_argument("--runs", type=int, default=1, help="cold/warm pairs per script (default 1; medians)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per script run (default 900)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.timeout <= 0:
        parser.error(f"--runs must be >= 1 and --timeout > 0; got {args.runs} and {args.timeout}")
    with tempfile.TemporaryDirectory() as pycache:
        env = dict(os.environ, **THREADS, PYTHONPYCACHEPREFIX=pycache, MPLBACKEND="Agg")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for var in ("NEUROSIM_INLINE_KERNELS", "NUMBA_OPT", "NUMBA_BOUNDSCHECK"):
            env.pop(var, None)  # what a user runs (a test build's settings are not inherited)
        # untimed: writes the bytecode of everything the timed runs import
        subprocess.run([sys.executable, "-c", "import neurosim, neurosim.models, xarray, matplotlib.pyplot"],
                       env=env, check=True, cwd=pycache)
        load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
        print(f"Python {sys.version.split()[0]}; {os.cpu_count()} cores; load average "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {args.runs} cold/warm pair(s) per script")
        if "network" in args.only:
            report_network(env, args)
        rows = []
        if "readme" in args.only:
            rows += [(f"README block {i}", block, f"readme_block_{i}.py") for i, block in enumerate(readme_blocks())]
        if "gallery" in args.only:
            rows += [(f"{p.parent.name}/{p.name}", p.read_text(), p.name) for p in gallery_scripts()]
        if rows:
            print("\n| script | cold s | warm s |\n|---|---|---|")
            for label, source, name in rows:
                cold, warm, _ = cold_and_warm(source, name, env, args.runs, args.timeout)
                print(f"| {label} | {_med(cold)} | {_med(warm)} |", flush=True)


def report_network(env: dict, args) -> None:
    """The README network's import, first step, rest and whole script, cold and warm, against the targets."""
    cold, warm, outs = cold_and_warm(network_probe(), "readme_network.py", env, args.runs, args.timeout)
    probes = [[float(v) for v in line.split()[1:]] for out in outs for line in out.splitlines()
              if line.startswith("PROBE ")]
    cold_p, warm_p = probes[0::2], probes[1::2]
    print("\nREADME network (seconds; median and range):")
    print("| | import | first step | other 19,999 steps | script (wall, from the shell) | target |")
    print("|---|---|---|---|---|---|")
    for label, walls, p, target in (("cold", cold, cold_p, "<= 6"), ("warm", warm, warm_p, "<= 2.5")):
        cols = [_med([row[k] for row in p]) for k in range(3)]
        print(f"| {label} | {cols[0]} | {cols[1]} | {cols[2]} | {_med(walls)} | {target} |", flush=True)


if __name__ == "__main__":
    main()
