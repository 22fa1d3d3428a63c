"""Engine vs a hand-fused numba loop vs plain NumPy: the similarity-matching network (paper 002).

The network of ``models/similarity_matching/network.py``: regularizer ``XY``
(input-output), forgetting ``beta = 0.999``, exactly 30 Jacobi iterations per
step (``tol=0, max_iter=30, eta=0.1``, starting from ``y = 0``), ``y``'s
activity recorded every step. Three implementations run in the same process on
identical inputs and initial weights:

1. **engine**: ``build_network(...).run(steps)`` reading the pre-drawn inputs
   through an ``ArrayStream`` (compiled segments; the timing includes the
   per-segment Python work, the input checks and the recorder flushes). This
   is the same work as the fused loop, and ``engine/fused`` is the ratio the
   engine's 0.8x performance target refers to;
2. **engine + draws**: the same network drawing its inputs from the
   ``GaussianStream`` as it runs (what a user of the model pays; drawing
   64..1024 correlated Gaussians per step is a matrix product of its own,
   which the fused loop does not do);
3. **fused**: one ``@njit(cache=True)`` function that runs the whole model
   over the pre-drawn input array -- the practical limit on this CPU;
4. **numpy**: a plain NumPy per-step loop over the same inputs.

Each is warmed up (compilation excluded), then timed ``--repeats`` times on a
fresh network; the median is reported as steps/s with the ratios
engine/fused and engine/numpy. The final weights of the three are compared
(relative max difference; must be <= 1e-9). A fresh subprocess measures the
engine's first-run compilation time with empty ``NEUROSIM_CACHE_DIR`` and
``NUMBA_CACHE_DIR``, and a second subprocess the time with the warm cache.

BLAS and neurosim's kernels are pinned to one thread before NumPy is imported
(``NEUROSIM_NUM_THREADS=2`` measures the engine's row-parallel kernels against
the single-threaded fused loop).

Usage::

    python benchmarks/bench_engine.py                 # full run, ~3-5 min
    python benchmarks/bench_engine.py --quick         # smoke test, a few seconds
    python benchmarks/bench_engine.py --sizes 64x8,256x64
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")
# one thread, as the fused loop: with numba's default (every core) the engine's row-parallel kernels at
# 1024 x 256 waited for any other work on the second core (engine/fused 0.68 with a reproduction running,
# 1.08 on one thread, the same hour); the row-parallel kernels have their own benchmark (bench_parallel.py)
os.environ.setdefault("NEUROSIM_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from neurosim.streams import ArrayStream, GaussianStream  # noqa: E402
from neurosim.models.similarity_matching import build_network  # noqa: E402

# -- the model -------------------------------------------------------------------------
REGULARIZER = "XY"
ALPHA = 0.1
BETA = 0.999
ETA = 0.1
N_ITER = 30
MU_INIT = 1.0
NET_SEED = 0
STREAM_SEED = 1
RTOL = 1e-9
#: up to this many output units the fused loop's lateral product is a hand loop (faster than a BLAS call)
SMALL_K = 16

#: largest pre-drawn input array (bytes) the fused loop may use; bounds the steps at small sizes
MAX_INPUT_BYTES = 160 * 2**20


def make_stream(n: int) -> GaussianStream:
    """Paper-002-like spectrum: four signal directions {6, 5, 4, 2} and n - 4 noise values in [0, 0.2]."""
    rng = np.random.default_rng(12345)
    lam = np.concatenate([[6.0, 5.0, 4.0, 2.0], np.sort(rng.uniform(0.0, 0.2, n - 4))[::-1]])
    return GaussianStream(lam, seed=STREAM_SEED, eigenvectors="random", eigvec_seed=7)


def make_circuit(n: int, k: int, stream=None):
    return build_network(make_stream(n) if stream is None else stream, k, REGULARIZER, ALPHA, beta=BETA, eta=ETA, tol=0.0, max_iter=N_ITER,
                         zero_start=True, mu_init=MU_INIT, seed=NET_SEED, record=("activity",), record_every=1)


def initial_state(n: int, k: int):
    """Initial (W, M, mu) of the engine's network, copied."""
    c = make_circuit(n, k)
    return (c.feedforward.weights.copy(), c.lateral.weights.copy(), c.y.state["mu"].copy())


# -- 1. the engine ------------------------------------------------------------------------
def run_engine(n, k, steps, X=None):
    """Build a fresh network (untimed), run it (timed); return (seconds, W, M, circuit).

    ``X`` given: the network reads these pre-drawn inputs through an ``ArrayStream``
    (isolates the engine from the cost of drawing the Gaussian inputs).
    """
    c = make_circuit(n, k, None if X is None else ArrayStream(X))
    t0 = time.perf_counter()
    c.run(steps)
    dt = time.perf_counter() - t0
    return dt, c.feedforward.weights.copy(), c.lateral.weights.copy(), c


# -- 2. the hand-fused loop ----------------------------------------------------------------
@njit(cache=True, nogil=True)
def fused_loop(X, W, M, mu, Y, alpha, beta2, eta, n_iter):
    """Run ``X.shape[0]`` steps of the XY network in place on W, M, mu; y of step t -> Y[t]."""
    steps, n = X.shape
    k = W.shape[0]
    u = np.empty(k)
    y = np.empty(k)
    z = np.empty(k)
    c = 1.0 - eta
    small = k <= SMALL_K
    for t in range(steps):
        x = X[t]
        # feed-forward drive u = W x (BLAS gemv)
        np.dot(W, x, u)
        # Jacobi from y = 0: the first iteration is exactly eta * u (M @ 0 = 0)
        for i in range(k):
            y[i] = eta * u[i]
        for it in range(1, n_iter):
            if small:  # z = M y; BLAS call overhead dominates an 8 x 8 product
                for i in range(k):
                    acc = 0.0
                    for j in range(k):
                        acc += M[i, j] * y[j]
                    z[i] = acc
            else:
                np.dot(y, M.T, z)  # z = M y (BLAS gemv)
            for i in range(k):
                y[i] = c * y[i] + eta * (u[i] - z[i])
        # global signal s = ||x||^2, cumulative activity and both weight updates, one pass per row
        s = 0.0
        for j in range(n):
            s += x[j] * x[j]
        a_s = alpha * s
        for i in range(k):
            yi = y[i]
            d = a_s + yi * yi
            m = beta2 * mu[i] + d
            mu[i] = m
            inv = 1.0 / m
            for j in range(n):
                W[i, j] += (yi * x[j] - d * W[i, j]) * inv
            for j in range(k):
                M[i, j] += (yi * y[j] - d * M[i, j]) * inv
            M[i, i] = 0.0
            Y[t, i] = yi


def run_fused(X, W0, M0, mu0):
    W, M, mu = W0.copy(), M0.copy(), mu0.copy()
    Y = np.empty((X.shape[0], W.shape[0]))
    t0 = time.perf_counter()
    fused_loop(X, W, M, mu, Y, ALPHA, BETA**2, ETA, N_ITER)
    return time.perf_counter() - t0, W, M, Y


# -- 3. plain NumPy ------------------------------------------------------------------------
def run_numpy(X, W0, M0, mu0):
    W, M, mu = W0.copy(), M0.copy(), mu0.copy()
    steps = X.shape[0]
    k = W.shape[0]
    Y = np.empty((steps, k))
    diag = np.arange(k)
    beta2, c = BETA**2, 1.0 - ETA
    t0 = time.perf_counter()
    for t in range(steps):
        x = X[t]
        u = W @ x
        y = np.zeros(k)
        for _ in range(N_ITER):
            y = c * y + ETA * (u - M @ y)
        d = ALPHA * (x @ x) + y * y
        mu *= beta2
        mu += d
        inv = (1.0 / mu)[:, None]
        W += (np.outer(y, x) - d[:, None] * W) * inv
        M += (np.outer(y, y) - d[:, None] * M) * inv
        M[diag, diag] = 0.0
        Y[t] = y
    return time.perf_counter() - t0, W, M, Y


# -- helpers -------------------------------------------------------------------------------
def rel_diff(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed; BLAS threads pinned by environment only"
    import scipy.linalg  # noqa: F401  (numba's np.dot calls scipy's BLAS)

    libs = [f"{i.get('internal_api')} {i.get('version')} threads={i.get('num_threads')} ({os.path.basename(i['filepath'])})"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    bad = [i for i in threadpool_info() if i.get("user_api") == "blas" and i.get("num_threads") != 1]
    if bad:
        raise SystemExit(f"BLAS is not pinned to one thread: {libs}")
    return "; ".join(libs)


def time_interleaved(fns: dict, repeats: int):
    """Run every method once per round, ``repeats`` rounds (load changes hit all methods alike).

    Returns ``{name: (median seconds, all seconds, last result)}``.
    """
    times = {m: [] for m in fns}
    last = {}
    for _ in range(repeats):
        for m, fn in fns.items():
            last[m] = fn()
            times[m].append(last[m][0])
    return {m: (statistics.median(times[m]), times[m], last[m]) for m in fns}


def pick_steps(per_step_s, target_s, lo, hi):
    return int(min(hi, max(lo, round(target_s / max(per_step_s, 1e-9), -2))))


COMPILE_SNIPPET = r"""
import os, sys, time, json
t0 = time.perf_counter()
import numpy as np
import neurosim as ns
from neurosim.models.similarity_matching import build_network
t1 = time.perf_counter()
from neurosim.streams import GaussianStream
stream = GaussianStream(np.linspace(1.0, 0.1, 16), seed=1)
c = build_network(stream, 4, "XY", 0.1, beta=0.999, eta=0.1, tol=0.0, max_iter=30, record=("activity",))
t2 = time.perf_counter()
c.run(10)
t3 = time.perf_counter()
c.run(10)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "build": t2 - t1, "first_run": t3 - t2, "second_run": t4 - t3}))
"""


def measure_compile():
    """First run in a fresh process with empty caches, then a second process with the warm caches."""
    out = []
    with tempfile.TemporaryDirectory(prefix="neurosim_cache_") as ncache, \
            tempfile.TemporaryDirectory(prefix="numba_cache_") as bcache:
        env = dict(os.environ, NEUROSIM_CACHE_DIR=ncache, NUMBA_CACHE_DIR=bcache)
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise RuntimeError(f"compile-time subprocess failed:\n{r.stderr}")
            out.append(json.loads(r.stdout.strip().splitlines()[-1]))
    return out


# -- main ----------------------------------------------------------------------------------
METHODS = ("engine", "engine_pre", "fused", "numpy")
LABELS = {"engine": "engine + draws (Gaussian)", "engine_pre": "engine", "fused": "fused numba", "numpy": "numpy loop"}


def bench_size(n, k, args):
    W0, M0, mu0 = initial_state(n, k)
    # warm-up: compilation (engine segment + kernels, fused loop) and first touch, excluded from timing
    Xw = make_stream(n).block(0, 300, 1)[:, 0, :].copy()
    run_engine(n, k, 300)
    run_engine(n, k, 300, Xw)
    run_fused(Xw, W0, M0, mu0)
    run_numpy(Xw[:50], W0, M0, mu0)

    # step counts: the engine's run takes ~target seconds (capped by the pre-drawn input's memory);
    # the much slower NumPy loop runs fewer steps
    max_steps = max(1000, MAX_INPUT_BYTES // (8 * n))
    if args.quick:
        steps_c = steps_np = args.quick_steps
    else:
        calib = 4096 if n * k < 50_000 else 1024
        Xc = make_stream(n).block(0, calib, 1)[:, 0, :].copy()
        per_e = min(run_engine(n, k, calib)[0], run_engine(n, k, calib)[0]) / calib
        per_f = run_fused(Xc, W0, M0, mu0)[0] / calib
        per_n = run_numpy(Xc[:100], W0, M0, mu0)[0] / 100
        steps_c = pick_steps(max(per_e, per_f), args.target, 1000, max_steps)
        steps_np = pick_steps(per_n, args.target, 100, steps_c)

    X = make_stream(n).block(0, steps_c, 1)[:, 0, :].copy()  # the engine's inputs, pre-drawn
    res = time_interleaved({
        "engine": lambda: run_engine(n, k, steps_c),
        "engine_pre": lambda: run_engine(n, k, steps_c, X),
        "fused": lambda: run_fused(X, W0, M0, mu0),
        "numpy": lambda: run_numpy(X[:steps_np], W0, M0, mu0),
    }, args.repeats)

    # agreement: both engines vs fused on the timed run; numpy vs fused over numpy's (shorter) run
    _, We, Me, circ = res["engine"][2]
    _, Wp, Mp, _ = res["engine_pre"][2]
    _, Wf, Mf, Yf = res["fused"][2]
    _, Wn, Mn, _ = res["numpy"][2]
    Ye = circ.network.recorders["y"].to_dataset()["activity"].values[:, 0, :]
    _, Wf2, Mf2, _ = run_fused(X[:steps_np], W0, M0, mu0)
    out = {"n": n, "k": k, "steps": steps_c, "steps_numpy": steps_np,
           "diff_engine_fused": max(rel_diff(We, Wf), rel_diff(Me, Mf)),
           "diff_y_engine_fused": rel_diff(Ye, Yf),
           "diff_pre_fused": max(rel_diff(Wp, Wf), rel_diff(Mp, Mf)),
           "diff_numpy_fused": max(rel_diff(Wn, Wf2), rel_diff(Mn, Mf2)),
           "times": {m: res[m][1] for m in METHODS}}
    for m in METHODS:
        out[m] = (steps_np if m == "numpy" else steps_c) / res[m][0]
    return out


def parse_sizes(text):
    sizes = []
    for part in text.split(","):
        a, b = part.lower().split("x")
        sizes.append((int(a), int(b)))
    return sizes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None, help="comma-separated NxK input x output sizes (default 64x8,256x64,1024x256)")
    ap.add_argument("--quick", action="store_true", help="smoke test: smallest size, a few hundred steps, one repeat, no compile subprocess")
    ap.add_argument("--quick-steps", type=int, default=300, help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=None, help="timed runs per method (median reported; default 5, --quick 1)")
    ap.add_argument("--target", type=float, default=2.5, help="seconds per timed run (default 2.5)")
    ap.add_argument("--no-compile", action="store_true", help="skip the compilation-time subprocesses")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = ap.parse_args(argv)
    sizes = parse_sizes(args.sizes) if args.sizes else ([(64, 8)] if args.quick else [(64, 8), (256, 64), (1024, 256)])
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5

    import numba
    import scipy

    print(f"# bench_engine: similarity matching {REGULARIZER}, beta={BETA}, {N_ITER} Jacobi iterations (eta={ETA}), "
          f"alpha={ALPHA}, batch 1, y recorded every step")
    print(f"# python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, scipy {scipy.__version__}")
    print(f"# BLAS: {blas_info()}")
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; median of {args.repeats} timed runs per method")

    results, ok = [], True
    for n, k in sizes:
        r = bench_size(n, k, args)
        results.append(r)
        print(f"\nn={n} k={k}: {r['steps']} steps (numpy {r['steps_numpy']})")
        for m in METHODS:
            print(f"  {LABELS[m]:24s} {r[m]:10.0f} steps/s   runs [s]: {' '.join(f'{t:.3f}' for t in r['times'][m])}")
        print(f"  ratio engine/fused = {r['engine_pre'] / r['fused']:.3f}   (target >= 0.8; engine + draws / fused = {r['engine'] / r['fused']:.3f})")
        print(f"  ratio engine/numpy = {r['engine_pre'] / r['numpy']:.2f}")
        print(f"  max rel diff of final W, M vs fused: engine {r['diff_engine_fused']:.2e} (recorded y {r['diff_y_engine_fused']:.2e}), "
              f"engine pre-drawn {r['diff_pre_fused']:.2e}, numpy {r['diff_numpy_fused']:.2e}")
        if max(r["diff_engine_fused"], r["diff_y_engine_fused"], r["diff_pre_fused"], r["diff_numpy_fused"]) > RTOL:
            print(f"  DISAGREEMENT above {RTOL:g}")
            ok = False

    print("\n| n | k | steps | engine | fused numba | numpy | engine/fused | engine/numpy | engine + draws | max rel diff W (engine, numpy vs fused) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['n']} | {r['k']} | {r['steps']} | {r['engine_pre']:.0f} | {r['fused']:.0f} | {r['numpy']:.0f} | "
              f"**{r['engine_pre'] / r['fused']:.2f}** | {r['engine_pre'] / r['numpy']:.1f} | {r['engine']:.0f} ({r['engine'] / r['fused']:.2f}) | "
              f"{r['diff_pre_fused']:.1e}, {r['diff_numpy_fused']:.1e} |")

    compile_times = None
    if not (args.quick or args.no_compile):
        compile_times = measure_compile()
        cold, warm = compile_times
        print(f"\ncompile (fresh process, empty NEUROSIM_CACHE_DIR and NUMBA_CACHE_DIR): first run(10) {cold['first_run']:.2f} s "
              f"(import {cold['import']:.2f} s, later run(10) {cold['second_run'] * 1e3:.1f} ms)")
        print(f"warm cache (second process): first run(10) {warm['first_run']:.2f} s (import {warm['import']:.2f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "compile": compile_times}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
