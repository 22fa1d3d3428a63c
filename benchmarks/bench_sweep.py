"""Sweep throughput: many small networks on one core, on every core (processes), on a dask LocalCluster.

The workload is the issue's: ``runs`` (default ``4 x cores``) similarity-matching
networks of 64 inputs and 8 outputs (R_TY, 30 Jacobi iterations, batch 1),
``steps`` steps each (default 20,000), inputs drawn by the network's stream.
Each executor runs the same :class:`neurosim.Sweep`; the benchmark checks
that every executor gives the same bits, and prints network-steps per
second and the speed-up over one core (target: >= 0.85 N on N cores).

Start-up costs are printed apart: the fork server (one import of neurosim,
once per session), a new pool (each worker loads the cached kernels on its
first run; the "new pool" line) and a warm one (the pool kept from the
previous sweep). Per-run overhead: the same sweep with ``steps=1`` on the
warm pool, so each run is build + one step + the transfer of its result.

Usage::

    python benchmarks/bench_sweep.py                   # 4 x cores runs of 20,000 steps
    python benchmarks/bench_sweep.py --runs 4 --steps 2000 --no-dask
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.experiment import Sweep  # noqa: E402

N_IN, N_OUT = 64, 8


def network(eta: float, seed: int):
    """R_TY similarity matching, 64 -> 8, on a Gaussian stream with the paper-002 style spectrum."""
    from neurosim.models.similarity_matching import build_network

    spectrum = np.concatenate([[6.0, 5.0, 4.0, 2.0], np.linspace(0.2, 0.0, N_IN - 4)])
    stream = ns.GaussianStream(spectrum, seed=seed, eigenvectors="random")
    c = build_network(stream, N_OUT, "TY", 0.1, eta=eta, max_iter=30, seed=seed, record=())
    # a sweep keeps recordings; record the final weights' scale cheaply, once per 1000 steps
    c.network.record(c.network["y"], "activity", every=1000)
    return c


def timed(sweep: Sweep, **kwargs) -> tuple[float, xr.Dataset]:
    t0 = time.perf_counter()
    ds = sweep.run(progress=False, validate=False, **kwargs)
    return time.perf_counter() - t0, ds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    p.add_argument("--runs", type=int, default=None, help="default 4 x cores")
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--no-dask", action="store_true")
    args = p.parse_args()
    runs = args.runs or 4 * args.cores
    seeds = list(range(runs))
    sweep = Sweep(network, grid={"eta": [0.1]}, seeds=seeds, steps=args.steps)
    total = runs * args.steps
    # warm numba's cache in this process (the workers load it from disk)
    Sweep(network, grid={"eta": [0.1]}, seeds=[0], steps=10).run(progress=False)

    results = {}
    print(f"sweep of {runs} networks {N_IN}x{N_OUT}, {args.steps} steps each, {args.cores} cores")
    secs, ref = timed(sweep, executor="serial")
    results["serial (1 core)"] = secs
    # start-up costs, once per sweep session: the fork server (one import of neurosim) and a dask cluster
    t0 = time.perf_counter()
    Sweep(network, grid={"eta": [0.1]}, seeds=[0], steps=1).run(executor="processes", workers=1, progress=False)
    print(f"  fork server start (first process sweep in a session): {time.perf_counter() - t0:.2f} s")
    secs, ds = timed(sweep, executor="processes", workers=args.cores)
    results[f"processes ({args.cores}), new pool"] = secs
    _same(ref, ds, "processes")
    secs, ds = timed(sweep, executor="processes", workers=args.cores)
    results[f"processes ({args.cores}), warm pool"] = secs
    _same(ref, ds, "processes")
    if not args.no_dask:
        from dask.distributed import Client, LocalCluster

        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=args.cores, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        print(f"  dask LocalCluster start: {time.perf_counter() - t0:.2f} s")
        secs, ds = timed(sweep, executor="dask", client=client)
        results[f"dask LocalCluster ({args.cores}), 1st"] = secs
        _same(ref, ds, "dask")
        secs, ds = timed(sweep, executor="dask", client=client)
        results[f"dask LocalCluster ({args.cores}), 2nd"] = secs
        _same(ref, ds, "dask")
        client.close()
        cluster.close()
    base = results["serial (1 core)"]
    for name, secs in results.items():
        print(f"  {name:<34} {secs:8.2f} s  {total / secs:12,.0f} network-steps/s  speed-up {base / secs:5.2f}"
              + ("" if name.startswith("serial") else f"  ({base / secs / args.cores:.2f} N)"))

    # per-run overhead on the pool: build + 1 step + the result's transfer (the pool's own start, fork
    # from the server and loading the cached kernels, is the "new pool" line above)
    one = Sweep(network, grid={"eta": [0.1]}, seeds=list(range(4 * args.cores)), steps=1)
    secs, _ = timed(one, executor="processes", workers=args.cores)
    print(f"  per-run overhead (processes, 1-step runs, warm pool): {secs * args.cores / len(one):.3f} s per run")


def _same(a: xr.Dataset, b: xr.Dataset, what: str):
    a = a.drop_vars(["wall_seconds", "compile_seconds"])
    b = b.drop_vars(["wall_seconds", "compile_seconds"])
    for name in a.data_vars:
        if not np.array_equal(a[name].values, b[name].values, equal_nan=a[name].dtype.kind == "f"):
            raise AssertionError(f"{what} differs from serial in {name}")


if __name__ == "__main__":
    main()
