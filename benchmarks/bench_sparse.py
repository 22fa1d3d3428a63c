"""Sparse synapses: neurosim against scipy.sparse CSR + a NumPy loop and Brian2 (runtime, C++ standalone).

The model (issue 39): a rate network of ``n -> n`` units, each pair joined
with probability ``p`` (about ``p n^2`` synapses), initial weights
``N(0, 1 / (n p))``, linear output units ``y = W x`` and Oja's rule
``w_ij += rate * y_i (x_j - y_i w_ij)`` on every stored synapse, one sample
per step, with ``rate = 0.1 / (n p)`` (a unit sums about ``n p`` inputs, and
Oja's rule is stable while ``rate * |x|^2 < 2``; a fixed rate would make the
large networks diverge). The inputs ``x ~ N(0, I)`` are drawn before timing (``T`` steps,
replayed cyclically) and are the same in every implementation:

1. **neurosim**: ``Projection(x, y, connectivity=FixedProbability(p),
   rule=Oja(rate))``, ``Linear`` dynamics, an ``ArrayStream`` input,
   ``network.run(steps)`` (compiled segments; the timing includes the
   per-segment work). Drive only: the same projection without a rule.
2. **scipy**: a ``csr_array`` and a NumPy loop: ``y = W @ x``, then per
   stored synapse ``w += rate * (y_i x_j - y_i^2 w)``, vectorized with
   NumPy over chunks of rows (``--chunk`` synapses at a time, buffers
   allocated once: the fastest NumPy form we found, and it needs no
   per-synapse temporaries of the whole matrix). Same arithmetic, in the
   same order, as neurosim's kernel.
3. **Brian2 runtime** (Cython code objects) and 4. **Brian2 C++
   standalone** (one thread): ``benchmarks/_brian2_sparse.py``, run in an
   interpreter that has Brian2 (``--brian2-python`` or the environment
   variable ``NEUROSIM_BRIAN2_PYTHON``; skipped with a message otherwise).
   Brian2's connectivity is its own ``connect(p=p)``, the same statistics.

Each implementation runs in a subprocess of its own, so its peak RSS is its
own (``ru_maxrss``; the Brian2 standalone binary's from ``/usr/bin/time``):
it builds the network (drawing the synapses), runs once untimed (compilation,
first touch), then ``--repeats`` timed runs of the drive alone and as many
with Oja's rule; the median per step is kept. The implementations take turns
in ``--rounds`` rounds (load changes hit all alike) and the median over
rounds is reported, wall clock and CPU time. BLAS and numba run one thread;
neurosim also runs with two (``ns.set_num_threads(2)``) at 10^5 units.

Two checks print ``agree: yes/no``: neurosim and the NumPy loop on the same
synapses, initial weights and inputs (their weights after 20 steps), and the
Brian2 standalone model given neurosim's synapses, initial weights and inputs
(an oracle of both: weights after 10 steps to 1e-10).

Usage::

    python benchmarks/bench_sparse.py --brian2-python /work/venvs/brian2/bin/python   # full run, ~30-60 min
    python benchmarks/bench_sparse.py --quick         # smoke test: 2000 units, no Brian2 unless given
    python benchmarks/bench_sparse.py --sizes 10000:0.01 --no-brian2
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")
os.environ.pop("NEUROSIM_NUM_THREADS", None)  # the worker sets its threads itself

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
BRIAN2_HELPER = HERE / "_brian2_sparse.py"
#: rate * (inputs per unit): Oja's rule is stable for rate * |x|^2 < 2
RATE_X_INPUTS = 0.1
NET_SEED = 0
STREAM_SEED = 1
#: the pre-drawn inputs of a timed run take at most this many bytes (they cycle)
MAX_INPUT_BYTES = 32 * 2**20
#: rough cost of a step with Oja per synapse, to pick the steps of a timed run
SECONDS_PER_SYNAPSE = 6e-9
#: the targets of issue 39 (this machine kind, one thread)
TARGET_SCIPY, TARGET_BRIAN2, TARGET_THREADS = 0.5, 1.0, 1.6
GIB = 2**30
MIB = 2**20


def oja_rate(n_pre: int, p: float) -> float:
    """The learning rate of Oja's rule: ``RATE_X_INPUTS`` over the expected inputs of a unit, ``n_pre p``."""
    return RATE_X_INPUTS / (n_pre * p)


def inputs(n: int, steps: int) -> np.ndarray:
    """The inputs of a timed run: ``steps x n`` standard normal values, the same in every implementation."""
    return np.random.default_rng(STREAM_SEED).standard_normal((steps, n))


# -- 1. neurosim -------------------------------------------------------------------------------------------
def neurosim_network(n_pre: int, n_post: int, p: float, X: np.ndarray, rule: bool):
    import neurosim as ns

    net = ns.Network(seed=NET_SEED)
    x, y = ns.Population("x", n_pre), ns.Population("y", n_post, dynamics=ns.Linear())
    W = ns.Projection("W", x, y, connectivity=ns.FixedProbability(p), init=ns.Normal(1.0 / np.sqrt(n_pre * p)),
                      rule=ns.Oja(oja_rate(n_pre, p)) if rule else None)
    net.add(x, y, W)
    net.connect(ns.ArrayStream(X), x)
    return net, W


def worker_neurosim(args) -> dict:
    import neurosim as ns

    ns.set_num_threads(args.threads)
    X = inputs(args.n, args.steps)
    out: dict = {}
    for mode, rule in (("drive", False), ("oja", True)):
        t0 = time.perf_counter()
        net, W = neurosim_network(args.n, args.n, args.p, X, rule)
        out[f"build_s_{mode}"] = time.perf_counter() - t0
        net.run(min(args.steps, 3))  # compiles the segment (or loads it from the cache), first touch
        out[mode], out[mode + "_cpu"] = timed(lambda: net.run(args.steps), args.steps, args.repeats)
        out.update(n_synapses=W.n_synapses, weights_bytes=W.weights.nbytes, index_bytes=W.synapse_index.nbytes(),
                   index_dtype=str(W.synapse_index.indices.dtype))
        del net, W
        gc.collect()
    out["build_s"] = out["build_s_oja"]
    return out


def timed(fn, steps: int, repeats: int):
    """Per-step wall-clock and CPU seconds of ``repeats`` calls of ``fn`` (each ``steps`` steps)."""
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w0) / steps)
        cpu.append((time.process_time() - c0) / steps)
    return wall, cpu


# -- 2. scipy.sparse + NumPy ----------------------------------------------------------------------------------
def draw_csr(n_post: int, n_pre: int, p: float, rng: np.random.Generator):
    """``(indptr, indices)`` of each pair with probability ``p``: binomial row counts, distinct sorted columns."""
    counts = rng.binomial(n_pre, p, size=n_post)
    dtype = np.int32 if max(int(counts.sum()), n_pre) < 2**31 - 1 else np.int64
    indptr = np.zeros(n_post + 1, dtype=dtype)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=dtype)
    for i in range(n_post):
        if counts[i]:
            indices[indptr[i]:indptr[i + 1]] = np.sort(rng.choice(n_pre, counts[i], replace=False))
    return indptr, indices


class NumpyOja:
    """The NumPy loop: ``y = W @ x`` (scipy's CSR product), then Oja's rule per stored synapse, chunk by chunk.

    Per synapse ``s = (i, j)``: ``w_s <- w_s + rate * (y_i x_j - y_i^2 w_s)``,
    the expression of neurosim's kernel in its order, so both give the same
    weights from the same synapses and inputs.
    """

    def __init__(self, A, chunk: int):
        import scipy.sparse as sp

        assert sp.issparse(A) and A.format == "csr"
        self.A = A
        self.post = np.repeat(np.arange(A.shape[0], dtype=A.indices.dtype), np.diff(A.indptr))
        self.chunk = max(1, min(chunk, A.nnz)) if chunk > 0 else max(A.nnz, 1)
        self.b1, self.b2 = np.empty(self.chunk), np.empty(self.chunk)

    def drive(self, x):
        return self.A @ x

    def step(self, x, rate):
        y = self.A @ x
        yy = y * y
        w, pre, post = self.A.data, self.A.indices, self.post
        for lo in range(0, w.size, self.chunk):
            hi = min(lo + self.chunk, w.size)
            b1, b2 = self.b1[:hi - lo], self.b2[:hi - lo]
            # mode="clip": the indices are in range, and the default mode="raise" buffers ``out`` (5x slower)
            np.take(y, post[lo:hi], out=b1, mode="clip")
            np.take(x, pre[lo:hi], out=b2, mode="clip")
            b2 *= b1  # y_i x_j
            np.take(yy, post[lo:hi], out=b1, mode="clip")
            b1 *= w[lo:hi]  # y_i^2 w
            b2 -= b1
            b2 *= rate
            w[lo:hi] += b2
        return y


def worker_scipy(args) -> dict:
    import scipy.sparse as sp

    X = inputs(args.n, args.steps)
    rng = np.random.default_rng(NET_SEED)
    t0 = time.perf_counter()
    indptr, indices = draw_csr(args.n, args.n, args.p, rng)
    w = rng.normal(0.0, 1.0 / np.sqrt(args.n * args.p), indices.size)
    loop = NumpyOja(sp.csr_array((w, indices, indptr), shape=(args.n, args.n), copy=False), args.chunk)
    out: dict = {"build_s": time.perf_counter() - t0, "n_synapses": int(indices.size),
                 "weights_bytes": w.nbytes, "index_bytes": indptr.nbytes + indices.nbytes,
                 "index_dtype": str(indices.dtype)}
    steps = X.shape[0]

    def run(fn):
        for t in range(steps):
            fn(X[t])

    run(loop.drive)
    out["drive"], out["drive_cpu"] = timed(lambda: run(loop.drive), steps, args.repeats)
    rate = oja_rate(args.n, args.p)
    run(lambda x: loop.step(x, rate))
    out["oja"], out["oja_cpu"] = timed(lambda: run(lambda x: loop.step(x, rate)), steps, args.repeats)
    return out


# -- the orchestration ----------------------------------------------------------------------------------------
def worker_main(args) -> int:
    out = worker_neurosim(args) if args.worker == "neurosim" else worker_scipy(args)
    out["peak_rss"] = peak_rss()
    print(json.dumps(out))
    return 0


def peak_rss() -> int:
    """This process's peak resident set in bytes: ``VmHWM``, which (unlike ``ru_maxrss``) starts afresh at exec.

    ``ru_maxrss`` of a process started by fork and exec keeps the parent's
    resident set at the fork, which would count the benchmark's own memory.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # not Linux: KiB on Linux, bytes on macOS


def run_json(cmd: list[str], timeout: float) -> dict:
    """Run a worker, return its JSON line; ``{"error": ...}`` if it failed."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if r.returncode != 0:
        last = (r.stderr or r.stdout).strip().splitlines()[-1:]
        return {"error": f"failed (exit {r.returncode}): {last[0] if last else ''}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


#: rough peak bytes per synapse of each implementation (to skip what would not fit, rather than swap or die)
BYTES_PER_SYNAPSE = {"neurosim": 30, "scipy": 30, "brian2-runtime": 60, "brian2-standalone": 60}


def command(impl: str, threads: int, n: int, p: float, steps: int, args, brian2_python, workdir) -> list[str]:
    common = ["--n", str(n), "--p", str(p), "--steps", str(steps), "--repeats", str(args.repeats)]
    if impl.startswith("brian2"):
        return [brian2_python, str(BRIAN2_HELPER), "time", "--target", impl.split("-")[1], *common,
                "--rate", repr(oja_rate(n, p)), "--seed", str(STREAM_SEED), "--workdir", workdir]
    return [sys.executable, str(Path(__file__).resolve()), "--worker", impl, "--threads", str(threads),
            "--chunk", str(args.chunk), *common]


def pick_steps(n: int, p: float, args) -> int:
    if args.steps:
        return args.steps
    synapses = p * n * n
    cap = max(3, MAX_INPUT_BYTES // (8 * n))
    return int(min(cap, max(3, round(args.target / (SECONDS_PER_SYNAPSE * max(synapses, 1.0))))))


def label(impl: str, threads: int) -> str:
    names = {"neurosim": "neurosim", "scipy": "scipy CSR + NumPy", "brian2-runtime": "Brian2 runtime (Cython)",
             "brian2-standalone": "Brian2 C++ standalone"}
    return names[impl] + (f" ({threads} thread{'s' if threads > 1 else ''})" if impl == "neurosim" else "")


def bench_size(n: int, p: float, args, brian2_python, workdir) -> dict:
    steps = pick_steps(n, p, args)
    # (implementation, threads), in the order of each round
    runs = [("neurosim", 1)] + ([("neurosim", 2)] if n >= args.threads_from else []) + [("scipy", 1)]
    if brian2_python:
        runs += [("brian2-runtime", 1), ("brian2-standalone", 1)]
    per: dict = {label(i, t): [] for i, t in runs}
    expected = p * n * n
    for _ in range(args.rounds):
        for impl, threads in runs:
            avail = available_memory()
            need = BYTES_PER_SYNAPSE[impl] * expected + GIB
            if avail is not None and need > 0.9 * avail:
                per[label(impl, threads)].append({"error": f"skipped: needs about {need / GIB:.1f} GiB, "
                                                           f"{avail / GIB:.1f} GiB available"})
                continue
            cmd = command(impl, threads, n, p, steps, args, brian2_python, workdir)
            per[label(impl, threads)].append(run_json(cmd, args.timeout))
    out = {"n": n, "p": p, "steps": steps, "results": {}}
    for name, rounds in per.items():
        ok = [r for r in rounds if "error" not in r]
        if not ok:
            out["results"][name] = {"error": rounds[0]["error"] if rounds else "not run"}
            continue
        summary = {k: statistics.median(statistics.median(r[k]) for r in ok)
                   for k in ("drive", "oja", "drive_cpu", "oja_cpu")}
        summary["peak_rss"] = max(r["peak_rss"] for r in ok)
        summary["rounds"] = [{k: statistics.median(r[k]) for k in ("drive", "oja")} for r in ok]
        for k in ("n_synapses", "weights_bytes", "index_bytes", "index_dtype", "build_s", "compile_s"):
            if k in ok[-1]:
                summary[k] = ok[-1][k]
        out["results"][name] = summary
    return out


def ratio(a: dict, b: dict, key: str) -> float | None:
    if "error" in a or "error" in b:
        return None
    return a[key] / b[key]


def fmt_ratio(r: float | None, target: float | None = None, above: bool = False) -> str:
    if r is None:
        return "n/a"
    if target is None:
        return f"{r:.2f}"
    met = r >= target if above else r <= target
    return f"{r:.2f} ({'meets' if met else 'misses'} {'>=' if above else '<='} {target:g})"


def report_size(r: dict) -> None:
    res = r["results"]
    ours = res["neurosim (1 thread)"]
    n_syn = ours.get("n_synapses", r["p"] * r["n"] ** 2)
    print(f"\nn={r['n']} p={r['p']}: {n_syn} synapses, {r['steps']} steps per timed run")
    print(f"  {'implementation':28s} {'drive ms/step':>14s} {'(cpu)':>8s} {'drive+Oja ms/step':>18s} {'(cpu)':>8s} "
          f"{'peak RSS MiB':>13s} {'build s':>8s}")
    for name, s in res.items():
        if "error" in s:
            print(f"  {name:28s} {s['error']}")
            continue
        print(f"  {name:28s} {s['drive'] * 1e3:14.3f} {s['drive_cpu'] * 1e3:8.3f} {s['oja'] * 1e3:18.3f} "
              f"{s['oja_cpu'] * 1e3:8.3f} {s['peak_rss'] / MIB:13.0f} {s.get('build_s', float('nan')):8.1f}")
    sci = res.get("scipy CSR + NumPy", {"error": "not run"})
    b2 = res.get("Brian2 C++ standalone", {"error": "not run"})
    for key, what in (("drive", "drive"), ("oja", "drive+Oja")):
        print(f"  ratio neurosim/scipy ({what}) = {fmt_ratio(ratio(ours, sci, key), TARGET_SCIPY)}; "
              f"cpu {fmt_ratio(ratio(ours, sci, key + '_cpu'))}")
        print(f"  ratio neurosim/Brian2-standalone ({what}) = {fmt_ratio(ratio(ours, b2, key), TARGET_BRIAN2)}; "
              f"cpu {fmt_ratio(ratio(ours, b2, key + '_cpu'))}")
    if "error" not in ours:
        stored = ours["weights_bytes"] + ours["index_bytes"]
        bound = 2 * stored + GIB
        print(f"  peak RSS neurosim {ours['peak_rss'] / MIB:.0f} MiB; weights + indices {stored / MIB:.0f} MiB "
              f"({ours['index_dtype']} indices); bound 2 x that + 1 GiB = {bound / MIB:.0f} MiB: "
              f"{'within' if ours['peak_rss'] <= bound else 'ABOVE'}")
    two = res.get("neurosim (2 threads)")
    if two is not None and "error" not in two and "error" not in ours:
        print(f"  threads: speed-up 2 threads / 1 thread = drive {ours['drive'] / two['drive']:.2f}x, "
              f"drive+Oja {fmt_ratio(ours['oja'] / two['oja'], TARGET_THREADS, above=True)}x")


# -- agreement checks ---------------------------------------------------------------------------------------------
def check_scipy(n_pre=400, n_post=300, p=0.05, steps=20) -> bool:
    """neurosim and the NumPy loop on the same synapses, initial weights and inputs: the same weights."""
    import scipy.sparse as sp

    X = inputs(n_pre, steps)
    net, W = neurosim_network(n_pre, n_post, p, X, rule=True)
    idx = W.synapse_index
    loop = NumpyOja(sp.csr_array((W.weights.copy(), idx.indices.copy(), idx.indptr.copy()), shape=W.shape), 1000)
    net.run(steps)
    for t in range(steps):
        y = loop.step(X[t], oja_rate(n_pre, p))
    diff = rel_diff(loop.A.data, W.weights)
    diff_y = rel_diff(y, net["y"].activity[0])
    ok = max(diff, diff_y) <= 1e-12
    print(f"neurosim vs the NumPy loop (same {W.n_synapses} synapses, weights and inputs, {steps} steps): max rel diff "
          f"weights {diff:.1e}, y {diff_y:.1e} (agree: {'yes' if ok else 'no'})")
    return ok


def check_brian2(brian2_python: str, n_pre=300, n_post=200, p=0.05, steps=10) -> bool:
    """Brian2 standalone given neurosim's synapses, initial weights and inputs: the same weights after ``steps``."""
    X = inputs(n_pre, steps)
    net, W = neurosim_network(n_pre, n_post, p, X, rule=True)
    post, pre = W.synapse_index.pairs()
    with tempfile.TemporaryDirectory(prefix="bench_sparse_oracle_") as d:
        data, result = os.path.join(d, "in.npz"), os.path.join(d, "out.npz")
        np.savez(data, pre=pre, post=post, w0=W.weights, X=X, rate=oja_rate(n_pre, p), n_pre=n_pre, n_post=n_post)
        net.run(steps)
        r = run_json([brian2_python, str(BRIAN2_HELPER), "oracle", "--data", data, "--out", result], timeout=900)
        if "error" in r:
            print(f"Brian2 standalone oracle: failed ({r['error']}) (agree: no)")
            return False
        b = np.load(result)
        order = np.lexsort((b["i"], b["j"]))  # Brian2's synapses in neurosim's order: by post (j), then pre (i)
        same_pairs = np.array_equal(b["j"][order], post) and np.array_equal(b["i"][order], pre)
        diff = rel_diff(b["w"][order], W.weights)
        diff_y = rel_diff(b["y"], net["y"].activity[0])
    ok = same_pairs and max(diff, diff_y) <= 1e-10
    print(f"Brian2 C++ standalone vs neurosim (neurosim's {W.n_synapses} synapses, weights and inputs, {steps} steps): "
          f"same synapses {same_pairs}, max rel diff weights {diff:.1e}, y {diff_y:.1e} (agree: {'yes' if ok else 'no'})")
    return ok


def rel_diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(float(np.max(np.abs(b))), 1e-300))


def find_brian2(args) -> str | None:
    if args.no_brian2:
        return None
    py = args.brian2_python or os.environ.get("NEUROSIM_BRIAN2_PYTHON")
    candidates = [py] if py else [sys.executable]
    for c in candidates:
        r = subprocess.run([c, "-c", "import brian2; print(brian2.__version__)"], capture_output=True, text=True)
        if r.returncode == 0:
            return c
    return None


def parse_sizes(text: str):
    out = []
    for part in text.split(","):
        n, p = part.split(":")
        out.append((int(float(n)), float(p)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None,
                    help="comma-separated N:P (units, connection probability); default "
                         "10000:0.001,10000:0.01,100000:0.001,100000:0.01")
    ap.add_argument("--quick", action="store_true", help="smoke test: 2000 units, p = 0.01, one round, two repeats")
    ap.add_argument("--rounds", type=int, default=None, help="rounds of all implementations (median; default 3, --quick 1)")
    ap.add_argument("--repeats", type=int, default=None, help="timed runs per mode in each worker (default 3, --quick 2)")
    ap.add_argument("--steps", type=int, default=0, help="steps per timed run (default: about --target seconds)")
    ap.add_argument("--target", type=float, default=1.0, help="seconds per timed run, roughly (default 1)")
    ap.add_argument("--chunk", type=int, default=1 << 16, help="synapses per chunk of the NumPy loop (0: all at once)")
    ap.add_argument("--threads-from", type=int, default=100_000, help="also time neurosim on 2 threads from this many units")
    ap.add_argument("--brian2-python", default=None, help="Python interpreter that has Brian2 (or NEUROSIM_BRIAN2_PYTHON)")
    ap.add_argument("--no-brian2", action="store_true", help="skip Brian2")
    ap.add_argument("--no-checks", action="store_true", help="skip the agreement checks")
    ap.add_argument("--checks-only", action="store_true", help="only the agreement checks (no timing)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one worker may take")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    ap.add_argument("--worker", choices=("neurosim", "scipy"), help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--p", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main(args)
    sizes = parse_sizes(args.sizes) if args.sizes else (
        [(2000, 0.01)] if args.quick else [(10_000, 0.001), (10_000, 0.01), (100_000, 0.001), (100_000, 0.01)])
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.repeats = args.repeats or (2 if args.quick else 3)
    if args.quick and not args.steps:
        args.steps = 50

    import numba
    import scipy

    brian2_python = find_brian2(args)
    print(f"# bench_sparse: n -> n rate network, FixedProbability(p), Linear, Oja(rate = {RATE_X_INPUTS} / (n p)), "
          "batch 1")
    print(f"# python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"scipy {scipy.__version__}; {os.cpu_count()} cpus; load average {os.getloadavg()[0]:.2f}, "
          f"{os.getloadavg()[1]:.2f}, {os.getloadavg()[2]:.2f}")
    if brian2_python:
        v = subprocess.run([brian2_python, "-c", "import brian2, numpy; print(brian2.__version__, numpy.__version__)"],
                           capture_output=True, text=True).stdout.split()
        print(f"# Brian2 {v[0]} (numpy {v[1]}) from {brian2_python}")
    else:
        print("# Brian2: skipped (no interpreter with brian2: pass --brian2-python or set NEUROSIM_BRIAN2_PYTHON)")
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; {args.rounds} rounds x {args.repeats} timed runs; medians; "
          f"BLAS and numba one thread unless stated")

    ok = True
    if not args.no_checks:
        ok &= check_scipy()
        if brian2_python:
            ok &= check_brian2(brian2_python)
    if args.checks_only:
        return 0 if ok else 1

    results = []
    with tempfile.TemporaryDirectory(prefix="bench_sparse_") as workdir:
        for n, p in sizes:
            r = bench_size(n, p, args, brian2_python, workdir)
            results.append(r)
            report_size(r)

    print("\n| units | p | synapses | implementation | drive ms/step | drive+Oja ms/step | peak RSS MiB | "
          "neurosim / this (drive, drive+Oja) |")
    print("|---:|---:|---:|---|---:|---:|---:|---|")
    for r in results:
        res = r["results"]
        ours = res["neurosim (1 thread)"]
        for name, s in res.items():
            if "error" in s:
                print(f"| {r['n']} | {r['p']} | | {name} | {s['error']} | | | |")
                continue
            rel = "" if name.startswith("neurosim") else (
                f"{fmt_ratio(ratio(ours, s, 'drive'))}, **{fmt_ratio(ratio(ours, s, 'oja'))}**")
            print(f"| {r['n']} | {r['p']} | {s.get('n_synapses', '')} | {name} | {s['drive'] * 1e3:.3f} | "
                  f"{s['oja'] * 1e3:.3f} | {s['peak_rss'] / MIB:.0f} | {rel} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}, {os.getloadavg()[1]:.2f}, {os.getloadavg()[2]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "agree": ok}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
