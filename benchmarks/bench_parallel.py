"""One large network on every core: engine vs PyTorch CPU, against a measured memory-bandwidth limit.

The workload of issue 12 (the paper-002 similarity-matching network, XY
regularizer, exactly 30 Jacobi iterations from ``y = 0``, float64, batch 1,
inputs pre-drawn and read through an ``ArrayStream``, ``y`` recorded every
step), run by

1. **engine**: ``build_network(...).run(steps)`` after ``ns.set_num_threads(t)``
   (numba's pool and BLAS together);
2. **torch**: the same step in PyTorch (CPU, float64, in-place updates,
   ``torch.set_num_threads(t)``), if ``torch`` imports; its final weights
   are compared with the engine's (relative max difference, must be < 1e-9).

**Bandwidth limit.** A STREAM-like probe (numba ``prange`` triad
``a = b + s c``, 24 bytes per element, best of several passes) measures the
bandwidth for each thread count over arrays the size of ``W`` and the size
of ``M`` (either may sit in a cache), and over arrays far larger than any
cache (DRAM). A step streams ``W`` three times (read by the drive, read and
written by its rule) and ``M`` ``I + 1`` times (read by the ``I - 1``
lateral products, read and written by its rule), ``24 n k + 8 (I + 1) k^2``
bytes; the limit is the time those streams take at the probed bandwidths,
``24 n k / BW(W) + 8 (I + 1) k^2 / BW(M)``, and the report gives
``engine / limit`` (it ignores the vectors and the per-step Python, so 1 is
out of reach). The issue's ~100 MB per step counts ``M``'s products as
cached.

Usage::

    python benchmarks/bench_parallel.py                    # sizes of the issue, 1..all threads
    python benchmarks/bench_parallel.py --quick            # smoke test, seconds
    python benchmarks/bench_parallel.py --sizes 4096x1024 --threads 1,2 --json out.json
    python benchmarks/bench_parallel.py --thresholds        # single kernels: where row-parallel pays
"""

from __future__ import annotations

import argparse
import json
import os
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")
import platform
import statistics
import time

import numba
import numpy as np
from numba import njit, prange

import neurosim as ns
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream

ALPHA, BETA, ETA, N_ITER = 0.1, 0.999, 0.1, 30


# -- the bandwidth probe ---------------------------------------------------------------------
@njit(parallel=True, cache=True)
def _triad(a, b, c, s):
    for i in prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def stream_bandwidth(n_bytes: int, passes: int = 10) -> float:
    """Best triad bandwidth (bytes/s) over arrays of ``n_bytes`` in all, with numba's current thread count."""
    n = max(1024, n_bytes // 24)
    a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
    _triad(a, b, c, 3.0)
    best = np.inf
    for _ in range(passes):
        t0 = time.perf_counter()
        _triad(a, b, c, 3.0)
        best = min(best, time.perf_counter() - t0)
    return 24 * n / best


def traffic_bytes(n: int, k: int, n_iter: int = N_ITER) -> tuple:
    """Bytes a step streams through ``W`` and through ``M`` (see the module docstring)."""
    return 24 * n * k, 8 * (n_iter + 1) * k * k


# -- the thresholds: single kernels, serial vs row-parallel ----------------------------------
@njit(cache=True)
def _blas_product(out, a, w):
    np.dot(a, w.T, out)


def _time_call(fn, *args, seconds=0.2):
    fn(*args)
    reps, total = 0, 0.0
    while total < seconds:
        t0 = time.perf_counter()
        fn(*args)
        total += time.perf_counter() - t0
        reps += 1
    return total / reps


def thresholds(threads: int, sizes=(64, 128, 256, 362, 512, 724, 1024)):
    """Per square size: BLAS product vs ``rows_product``, serial vs row-parallel normalized-Hebbian update (us)."""
    from neurosim.kernels.parallel import rows_product
    from neurosim.kernels.plasticity import normalized_hebbian, normalized_hebbian_rows

    ns.set_num_threads(threads)
    rng = np.random.default_rng(0)
    print(f"single kernels on {threads} threads (us): size | BLAS product | rows_product | ratio | "
          "rule serial | rule rows | ratio")
    for n in sizes:
        w = rng.normal(size=(n, n))
        y = rng.normal(size=(1, n))
        out = np.zeros((1, n))
        mu, sig, mask = np.full(n, 10.0), np.ones(1), np.ones((1, 1), bool)
        p_blas = _time_call(_blas_product, out, y, w) * 1e6
        p_rows = _time_call(rows_product, out, y, w) * 1e6
        r_ser = _time_call(normalized_hebbian, w, y, y, mu, 0.1, sig, True, mask, False) * 1e6
        r_rows = _time_call(normalized_hebbian_rows, w, y, y, mu, 0.1, sig, True, mask, False) * 1e6
        print(f"{n} x {n} | {p_blas:.1f} | {p_rows:.1f} | {p_blas / p_rows:.2f} | {r_ser:.1f} | {r_rows:.1f} | "
              f"{r_ser / r_rows:.2f}", flush=True)


# -- the engine --------------------------------------------------------------------------------
def make_circuit(X, k):
    return build_network(ArrayStream(X), k, "XY", ALPHA, beta=BETA, eta=ETA, tol=0.0, max_iter=N_ITER,
                         zero_start=True, seed=0, record=("activity",), record_every=1)


def run_engine(X, k):
    c = make_circuit(X, k)
    W0, M0, mu0 = c.feedforward.weights.copy(), c.lateral.weights.copy(), c.y.state["mu"].copy()
    t0 = time.perf_counter()
    c.run(X.shape[0])
    return time.perf_counter() - t0, c.feedforward.weights.copy(), (W0, M0, mu0)


# -- PyTorch --------------------------------------------------------------------------------------
def torch_steps(W, M, mu, Xt, Y, n_iter=N_ITER):
    """The engine's step in PyTorch, in place on tensors ``W, M, mu`` (any device); ``y`` of step t -> ``Y[t]``."""
    import torch

    c, beta2 = 1.0 - ETA, BETA**2
    with torch.no_grad():
        for t in range(Xt.shape[0]):
            x = Xt[t]
            u = W @ x
            y = ETA * u
            for _ in range(n_iter - 1):
                y = c * y + ETA * (u - M @ y)
            d = ALPHA * torch.dot(x, x) + y * y
            mu.mul_(beta2).add_(d)
            inv = 1.0 / mu
            W.mul_((1.0 - d * inv)[:, None]).add_(torch.outer(y * inv, x))
            M.mul_((1.0 - d * inv)[:, None]).add_(torch.outer(y * inv, y))
            M.fill_diagonal_(0.0)
            Y[t] = y


def run_torch(X, W0, M0, mu0):
    import torch

    W, M, mu = (torch.from_numpy(a.copy()) for a in (W0, M0, mu0))
    Y = torch.empty((X.shape[0], W.shape[0]), dtype=torch.float64)
    t0 = time.perf_counter()
    torch_steps(W, M, mu, torch.from_numpy(X), Y)
    return time.perf_counter() - t0, W.numpy()


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


# -- the table ---------------------------------------------------------------------------------------
def measure(n, k, threads, steps, repeats, use_torch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(steps, n)) * 0.3
    row = {"n": n, "k": k, "threads": threads, "steps": steps}
    ns.set_num_threads(threads)
    if use_torch:
        import torch

        torch.set_num_threads(threads)
    run_engine(X[:4], k)  # compile / load the segment for this thread count
    eng, tor = [], []
    for _ in range(repeats):  # interleaved, so load changes hit both alike
        dt, W, init = run_engine(X, k)
        eng.append(dt)
        if use_torch:
            tdt, Wt = run_torch(X, *init)
            tor.append(tdt)
            row["torch_vs_engine_rel_diff_W"] = float(np.abs(Wt - W).max() / np.abs(W).max())
    row["engine_steps_per_s"] = steps / statistics.median(eng)
    if use_torch:
        row["torch_steps_per_s"] = steps / statistics.median(tor)
    w_bytes, m_bytes = traffic_bytes(n, k)
    row["traffic_MB"] = (w_bytes + m_bytes) / 1e6
    row["bw_W_GBs"] = stream_bandwidth(max(8 * n * k, 3 * 2**16)) / 1e9
    row["bw_M_GBs"] = stream_bandwidth(max(8 * k * k, 3 * 2**16)) / 1e9
    row["limit_steps_per_s"] = 1.0 / (w_bytes / (row["bw_W_GBs"] * 1e9) + m_bytes / (row["bw_M_GBs"] * 1e9))
    row["engine_over_limit"] = row["engine_steps_per_s"] / row["limit_steps_per_s"]
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1024x256,2048x512,4096x1024", help="n x k list")
    ap.add_argument("--threads", default=None, help="comma list (default 1 and every core)")
    ap.add_argument("--seconds", type=float, default=1.0, help="about this long per timed run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dram-mb", type=int, default=1536, help="size of the DRAM probe (beyond the last-level cache)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (a smoke test)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--blas-only", action="store_true",
                    help="disable the row-parallel kernels: threads reach only BLAS (the alternative they replace)")
    ap.add_argument("--thresholds", action="store_true",
                    help="only time single kernels, serial vs row-parallel, on every core (how the thresholds were chosen)")
    args = ap.parse_args(argv)
    if args.thresholds:
        thresholds(numba.config.NUMBA_NUM_THREADS)
        return
    if args.blas_only:
        from neurosim.kernels import parallel

        # no row-parallel kernel: the serial kernels, with BLAS threaded by ns.set_num_threads
        parallel.MIN_ROWS_WORK = parallel.MIN_RULE_WORK = 1 << 62
    if args.quick:
        args.sizes, args.seconds, args.repeats, args.dram_mb = "64x8,256x128", 0.05, 1, 64
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    cores = numba.config.NUMBA_NUM_THREADS
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, cores})
    use_torch = torch_available() and not args.no_torch
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, numba pool {cores}; "
          f"torch: {'yes' if use_torch else 'not installed'}")
    dram = {}
    for t in threads:
        ns.set_num_threads(t)
        dram[t] = stream_bandwidth(args.dram_mb * 2**20, passes=3) / 1e9
    print("DRAM triad GB/s by threads: " + ", ".join(f"{t}: {dram[t]:.1f}" for t in threads))
    print(f"numba threading layer: {numba.threading_layer()}")
    rows = []
    header = ("n x k", "thr", "engine st/s", "torch st/s", "eng/torch", "MB/step", "BW(W) GB/s", "BW(M) GB/s",
              "limit st/s", "eng/limit")
    print(" | ".join(header))
    for n, k in sizes:
        ns.set_num_threads(threads[0])
        dt, _, _ = run_engine(np.zeros((16, n)), k)  # compiles; then a timed probe of the step cost
        dt, _, _ = run_engine(np.zeros((16, n)), k)
        steps = int(min(20000, max(20, args.seconds / (dt / 16))))
        for t in threads:
            r = measure(n, k, t, steps, args.repeats, use_torch)
            r["dram_GBs"] = dram[t]
            rows.append(r)
            ts = r.get("torch_steps_per_s")
            print(f"{n} x {k} | {t} | {r['engine_steps_per_s']:.1f} | {ts:.1f} | {r['engine_steps_per_s'] / ts:.2f}"
                  if ts else f"{n} x {k} | {t} | {r['engine_steps_per_s']:.1f} | - | -", end="")
            print(f" | {r['traffic_MB']:.1f} | {r['bw_W_GBs']:.1f} | {r['bw_M_GBs']:.1f} | {r['limit_steps_per_s']:.1f} | "
                  f"{r['engine_over_limit']:.2f}", flush=True)
            if ts and r["torch_vs_engine_rel_diff_W"] > 1e-9:
                raise SystemExit(f"torch and the engine disagree: {r['torch_vs_engine_rel_diff_W']:.2e}")
    for n, k in sizes:
        base = next(r for r in rows if (r["n"], r["k"], r["threads"]) == (n, k, threads[0]))
        for r in rows:
            if (r["n"], r["k"]) == (n, k) and r["threads"] != threads[0]:
                print(f"{n} x {k}: {r['threads']} threads / {threads[0]} = "
                      f"{r['engine_steps_per_s'] / base['engine_steps_per_s']:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "dram_GBs": dram, "machine": platform.platform()}, f, indent=1)


if __name__ == "__main__":
    main()
