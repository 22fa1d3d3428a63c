"""A growing network recorded to a zarr store against the same recording in memory (issue 38, item 6).

A growing neural gas (Fritzke's parameters, ``lambda = 10``: a unit is born
every 10 inputs, about 1000 units after 10,000 inputs) records its
prototypes (``W.weights``, units x 2) every 7 inputs, in memory or streamed
to a zarr store (``store=``); then, over fewer inputs (the slot layout of a
units x units matrix grows with the square), the prototypes and the edges
(``edges.weights``: 1 on an edge). Every structural event changes the units
a recorder's chunk holds; before, each forced a zarr write and commit
(about 0.2 s each: 400 inputs cost 17.6 s CPU streamed against 0.06 s in
memory). Each variant runs after a warm-up (compiled segment, zarr
imported); the times are the best of ``--repeats`` runs, CPU (every thread
of the process: zarr compresses on its own) and wall. Each streamed run is
checked against the in-memory one (the store's slot layout, its extra
slots empty, equals the in-memory recording exactly).

Usage::

    python benchmarks/bench_store_growing.py                  # 10,000 inputs; edges over 3,000
    python benchmarks/bench_store_growing.py --quick          # 400 and 400 inputs, a few seconds
    python benchmarks/bench_store_growing.py --inputs 20000 --edge-inputs 5000 --repeats 3

Prints one line per recording with the seconds in memory and streamed and
``ratio store/memory``.
"""

from __future__ import annotations

import os
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NEUROSIM_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import pathlib  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.models.self_organizing import build_gng  # noqa: E402
from neurosim.store import open_store  # noqa: E402


def data(n: int) -> np.ndarray:
    """Two rings in the plane, one input per step."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[np.cos(a), np.sin(a)] * rng.uniform(0.7, 1.0, n)[:, None]
    X[:, 0] += np.where(rng.random(n) < 0.5, 0.0, 3.0)
    return X


def run(X, folder: pathlib.Path | None, edges: bool, every: int):
    c = build_gng(ns.ArrayStream(X), lam=10)
    targets = [("W", c.prototypes)] + ([("E", c.edges)] if edges else [])
    for name, proj in targets:
        c.network.record(proj, "weights", every=every, name=name,
                         store=None if folder is None else folder / f"{name}.zarr")
    cpu, wall = time.process_time(), time.perf_counter()
    c.run(len(X))  # its end writes what the recorders hold to the stores
    return time.process_time() - cpu, time.perf_counter() - wall, c


def same(folder: pathlib.Path, c) -> bool:
    """The store's slot layout (extra slots empty) is the in-memory recording's, bit for bit."""
    for name, rec in c.network.recorders.items():
        a, b = rec.to_dataset(layout="slots"), open_store(folder / f"{name}.zarr")
        if "synapse_slot" in a.dims:  # the edges: a sparse projection, one value per synapse named by its units
            k = a.sizes["synapse_slot"]
            if not (np.array_equal(a.weights.values, b.weights.values[:, :k], equal_nan=True)
                    and all(np.array_equal(a[v].values, b[v].values[:, :k]) for v in ("post_id", "pre_id"))
                    and np.array_equal(a.time.values, b.time.values) and np.isnan(b.weights.values[:, k:]).all()):
                return False
            continue
        n, p = a.sizes["slot"], a.sizes["pre_slot"]
        if not (np.array_equal(a.weights.values, b.weights.values[:, :n, :p], equal_nan=True)
                and np.array_equal(a.unit_id.values, b.unit_id.values[:, :n])
                and np.array_equal(a.time.values, b.time.values)
                and np.isnan(b.weights.values[:, n:]).all() and np.isnan(b.weights.values[:, :, p:]).all()):
            return False
    return True


def bench(n: int, edges: bool, every: int, repeats: int):
    X = data(n)
    best = {"memory": (np.inf, np.inf), "store": (np.inf, np.inf)}
    agree = True
    for _ in range(repeats):
        cpu, wall, mem = run(X, None, edges, every)
        best["memory"] = tuple(min(a, b) for a, b in zip(best["memory"], (cpu, wall)))
        with tempfile.TemporaryDirectory() as tmp:
            cpu, wall, disk = run(X, pathlib.Path(tmp), edges, every)
            best["store"] = tuple(min(a, b) for a, b in zip(best["store"], (cpu, wall)))
            mem_recs = mem.network.recorders
            agree &= same(pathlib.Path(tmp), mem) and all(
                mem_recs[k].n_samples == r.n_samples for k, r in disk.network.recorders.items())
    return best, agree, mem.map.size


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=10_000, help="inputs of the prototypes-only runs")
    ap.add_argument("--edge-inputs", type=int, default=3_000, help="inputs of the runs recording the edges too")
    ap.add_argument("--every", type=int, default=7, help="record every so many inputs")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="400 inputs each, one repeat (smoke test)")
    args = ap.parse_args(argv)
    if args.quick:
        args.inputs, args.edge_inputs, args.repeats = 400, 400, 1
    for edges in (False, True):  # warm-up: both segments (one per set of recorded arrays) compiled, zarr imported
        with tempfile.TemporaryDirectory() as tmp:
            run(data(50), pathlib.Path(tmp), edges, args.every)
    print(f"one thread; GNG lambda = 10, recorded every {args.every} inputs; best of {args.repeats}; "
          "CPU seconds (all threads) and wall seconds")
    for n, edges in ((args.inputs, False), (args.edge_inputs, True)):
        best, agree, units = bench(n, edges, args.every, args.repeats)
        (mc, mw), (sc, sw) = best["memory"], best["store"]
        what = "prototypes + edges" if edges else "prototypes"
        print(f"{what:<18} {n:>6} inputs ({units} units): memory {mc:.2f} s CPU / {mw:.2f} s wall, "
              f"store {sc:.2f} s CPU / {sw:.2f} s wall, ratio store/memory = {sc / mc:.2f} CPU, {sw / mw:.2f} wall "
              f"(store == memory: {agree})")


if __name__ == "__main__":
    main()
