"""The cost of ``import neurosim``: median wall time over fresh processes, and where it goes (issue 40).

Each of ``--runs`` rounds starts three fresh interpreters, one after the
other, that time ``import numpy``, ``import numba`` and ``import neurosim``
(wall, ``time.perf_counter``, and CPU, ``time.process_time``: on a loaded
machine the wall time grows with the wait for a core, the CPU time much
less) -- numpy and numba because neurosim cannot import in less than they
take (every kernel is ``@njit``-decorated at import), so ``neurosim -
numba`` is what neurosim itself adds. Interleaving the three spreads a
loaded machine's noise over all of them. The medians are printed with that
difference and the ratio neurosim/numba.

One more interpreter runs ``python -X importtime -c "import neurosim"`` and
the self times are summed by top-level package (what a reader acts on: which
dependency costs what) and listed for neurosim's own modules, the largest
first. Last, the heavy dependencies the import loaded (``xarray``,
``pandas``, ``matplotlib``, ``zarr``, ``dask``, ``networkx``, ``scipy``
submodules, ``sklearn``, ``tqdm``, ``h5netcdf``): none, since they are
imported on first use (``neurosim/_lazy.py``); ``tests/test_lazy_imports.py``
asserts it, this script measures the seconds. The bare ``scipy`` package
(without submodules, ~10 ms) is numba's: its import checks SciPy's version.

Every interpreter reads bytecode from a cache of this run's own
(``PYTHONPYCACHEPREFIX``, a temporary folder; ``PYTHONDONTWRITEBYTECODE`` is
dropped), written by one untimed import first: an installed package has its
``.pyc`` files, and without them each import would also compile neurosim's
sources (0.45 s more, on a machine that sets ``PYTHONDONTWRITEBYTECODE``).

BLAS and numba are pinned to one thread (an import starts no threads, but
the pins keep the environment that of the other benchmarks). The load
average is printed: on a busy machine every number grows, the ranking less.

Usage::

    python benchmarks/bench_import.py                  # 5 rounds, ~15 s
    python benchmarks/bench_import.py --runs 9 --top 15
    python benchmarks/bench_import.py --path /tmp/old  # another checkout's neurosim/ (before/after)
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
MODULES = ("numpy", "numba", "neurosim")
#: what import neurosim must not load (tests/test_lazy_imports.py has the same list)
HEAVY = ("xarray", "pandas", "matplotlib", "zarr", "dask", "networkx", "scipy", "sklearn", "tqdm", "h5netcdf")
# wall and CPU seconds of the import: on a loaded machine the wall time grows with the wait for a core, the CPU
# time much less (an import is one thread; on a quiet machine the two agree)
_TIMED = ("import time; t, c = time.perf_counter(), time.process_time(); import {0}; "
          "print(time.perf_counter() - t, time.process_time() - c)")
# the heavy modules loaded by import neurosim and not by numba's own import (numba imports the bare scipy package)
_LOADED = ("import sys; import numba; before = set(sys.modules); import neurosim; "
           "print(' '.join(sorted({m.split('.')[0] for m in set(sys.modules) - before} & set(%r))))" % (HEAVY,))
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def _python(code: str, env: dict, *flags: str) -> subprocess.CompletedProcess:
    # run in an empty folder: ``-c`` puts the working directory first on sys.path, and a checkout's neurosim/
    # there would win over --path
    with tempfile.TemporaryDirectory() as cwd:
        r = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                           cwd=cwd)
    if r.returncode != 0:
        raise RuntimeError(f"{code!r} failed:\n{r.stderr[-3000:]}")
    return r


def import_seconds(runs: int, env: dict) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds each of ``MODULES`` takes to import in a fresh interpreter, ``runs`` times, interleaved."""
    wall: dict[str, list[float]] = {m: [] for m in MODULES}
    cpu: dict[str, list[float]] = {m: [] for m in MODULES}
    for _ in range(runs):
        for module in MODULES:
            w, c = _python(_TIMED.format(module), env).stdout.split()[-2:]
            wall[module].append(float(w))
            cpu[module].append(float(c))
    return wall, cpu


def self_times(env: dict) -> tuple[dict[str, float], dict[str, float]]:
    """``-X importtime``'s self times in seconds: summed by top-level package, and of each neurosim module."""
    lines = _python("import neurosim", env, "-X", "importtime").stderr.splitlines()
    packages: dict[str, float] = {}
    ours: dict[str, float] = {}
    for line in lines:
        m = _LINE.match(line)
        if m is None:
            continue
        seconds, name = int(m[1]) * 1e-6, m[4]
        packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0.0) + seconds
        if name.split(".")[0] == "neurosim":
            ours[name] = seconds
    return packages, ours


def _top(table: dict[str, float], n: int) -> list[tuple[str, float]]:
    return sorted(table.items(), key=lambda kv: -kv[1])[:n]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per module (default 5)")
    parser.add_argument("--top", type=int, default=10, help="rows of each importtime table (default 10)")
    parser.add_argument("--path", help="a folder holding another neurosim/ to measure (put first on PYTHONPATH)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.top < 1:
        parser.error(f"--runs and --top must be >= 1; got --runs {args.runs} --top {args.top}")
    with tempfile.TemporaryDirectory() as pycache:
        env = dict(os.environ, **THREADS, PYTHONPYCACHEPREFIX=pycache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if args.path:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(args.path), env.get("PYTHONPATH")) if p)
        report(args, env)


def report(args, env: dict):
    """Print the medians, the import-time tables and the heavy modules loaded (see the module docstring)."""
    # untimed: writes the bytecode of everything the timed imports read
    where = _python("import numpy, numba, neurosim; print(neurosim.__file__)", env).stdout.strip()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"neurosim from {where}; Python {sys.version.split()[0]}; {os.cpu_count()} cores; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")

    wall, cpu = import_seconds(args.runs, env)
    median = {m: statistics.median(s) for m, s in wall.items()}
    median_cpu = {m: statistics.median(s) for m, s in cpu.items()}
    print(f"\nimport time, median of {args.runs} fresh interpreters: wall (min-max), CPU")
    for m in MODULES:
        print(f"  import {m:<9} {median[m]:6.3f} s  ({min(wall[m]):.3f}-{max(wall[m]):.3f})  CPU {median_cpu[m]:6.3f} s")
    print(f"  neurosim - numba  {median['neurosim'] - median['numba']:6.3f} s  "
          f"CPU {median_cpu['neurosim'] - median_cpu['numba']:6.3f} s  (what neurosim adds to numba's import)")
    print(f"  ratio neurosim/numba = {median['neurosim'] / median['numba']:.2f} (wall), "
          f"{median_cpu['neurosim'] / median_cpu['numba']:.2f} (CPU)")

    packages, ours = self_times(env)
    print(f"\n-X importtime self time by top-level package (one run; importtime itself adds overhead), "
          f"total {sum(packages.values()):.3f} s:")
    for name, s in _top(packages, args.top):
        print(f"  {name:<40} {s * 1e3:7.1f} ms")
    print(f"neurosim's own modules ({len(ours)}, {sum(ours.values()) * 1e3:.1f} ms), the largest:")
    for name, s in _top(ours, args.top):
        print(f"  {name:<40} {s * 1e3:7.1f} ms")

    loaded = _python(_LOADED, env).stdout.split()
    print(f"\nheavy dependencies loaded by import neurosim: {', '.join(loaded) if loaded else 'none'}")


if __name__ == "__main__":
    main()
