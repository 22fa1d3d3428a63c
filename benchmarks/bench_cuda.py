"""One large network on a GPU: ``backend="cuda"`` vs the CPU engine and PyTorch CUDA.

The workload of issue 12 (paper-002 similarity matching, XY, exactly 30
Jacobi iterations from ``y = 0``, batch 1, inputs pre-drawn through an
``ArrayStream``, ``y`` recorded every step), steps/s for

1. **cpu**: the engine on every core (``ns.set_num_threads(max)``);
2. **cuda float64** and **cuda float32**: ``net.run(steps, backend="cuda", precision=...)``;
3. **torch cuda** (if ``torch`` imports and sees a GPU): the same step in PyTorch,
   float64, on the device (no CUDA graph).

The final weights of every GPU run are compared with the CPU engine's over
the same steps (float64 must agree to 1e-10; float32's error is printed).
Without a GPU the script says so and exits 0; ``--quick`` runs a 6 x 3
network for 2 steps, which works under numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``) as a correctness smoke test, not a timing.

Usage::

    python benchmarks/bench_cuda.py                         # 1024x256, 2048x512, 4096x1024
    python benchmarks/bench_cuda.py --sizes 4096x1024 --seconds 5
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_cuda.py --quick
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

import numpy as np  # noqa: E402

import neurosim as ns
from neurosim import cuda as nscuda
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_parallel import ALPHA, BETA, ETA, N_ITER, torch_steps  # noqa: E402  (the same workload and PyTorch step)


def make(X, k, n_iter):
    return build_network(ArrayStream(X), k, "XY", ALPHA, beta=BETA, eta=ETA, tol=0.0, max_iter=n_iter,
                         zero_start=True, seed=0, record=("activity",), record_every=1)


def timed(X, k, n_iter, **run):
    c = make(X, k, n_iter)
    t0 = time.perf_counter()
    c.network.run(X.shape[0], **run)
    return time.perf_counter() - t0, c.feedforward.weights.copy()


def torch_cuda(X, k, n_iter):
    import torch

    c = make(X, k, n_iter)
    dev = torch.device("cuda")
    W, M = (torch.from_numpy(a.copy()).to(dev) for a in (c.feedforward.weights, c.lateral.weights))
    mu = torch.from_numpy(c.y.state["mu"].copy()).to(dev)
    Xt = torch.from_numpy(X).to(dev)
    Y = torch.empty((X.shape[0], k), dtype=torch.float64, device=dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    torch_steps(W, M, mu, Xt, Y, n_iter)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1024x256,2048x512,4096x1024")
    ap.add_argument("--seconds", type=float, default=2.0, help="about this long per GPU run")
    ap.add_argument("--quick", action="store_true", help="6 x 3, 2 steps, 4 iterations: a smoke test")
    args = ap.parse_args(argv)
    try:
        nscuda.require_cuda()
    except nscuda.CUDAUnavailableError as err:
        print(f"no GPU run: {err}")
        return 0
    sizes = [(6, 3)] if args.quick else [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    n_iter = 4 if args.quick else N_ITER
    ns.set_num_threads(ns.max_threads())
    try:
        import torch

        has_torch = torch.cuda.is_available() and not nscuda.simulator()
    except ImportError:
        has_torch = False
    print(f"# simulator: {nscuda.simulator()}; torch cuda: {has_torch}; CPU threads: {ns.get_num_threads()}")
    print("n x k | steps | cpu st/s | cuda f64 st/s | cuda f32 st/s | torch cuda st/s | f64/cpu | f64 err | f32 err")
    for n, k in sizes:
        rng = np.random.default_rng(1)
        probe = rng.normal(size=(1 if args.quick else 4, n)) * 0.3  # every simulated step costs ~1 s
        timed(probe, k, n_iter, backend="cuda")  # compile the kernels
        timed(probe, k, n_iter, backend="cuda", precision="float32")
        dt, _ = timed(probe, k, n_iter, backend="cuda")
        steps = 2 if args.quick else int(min(20000, max(20, args.seconds / (dt / probe.shape[0]))))
        X = rng.normal(size=(steps, n)) * 0.3
        t_cpu, w_cpu = timed(X, k, n_iter)
        t64, w64 = timed(X, k, n_iter, backend="cuda")
        t32, w32 = timed(X, k, n_iter, backend="cuda", precision="float32")
        t_torch = torch_cuda(X, k, n_iter) if has_torch else None
        scale = np.abs(w_cpu).max()
        e64, e32 = np.abs(w64 - w_cpu).max() / scale, np.abs(w32 - w_cpu).max() / scale
        torch_col = f"{steps / t_torch:.1f}" if t_torch else "-"
        print(f"{n} x {k} | {steps} | {steps / t_cpu:.1f} | {steps / t64:.1f} | {steps / t32:.1f} | {torch_col} | "
              f"{t_cpu / t64:.2f} | {e64:.1e} | {e32:.1e}", flush=True)
        if e64 > 1e-10:
            print(f"DISAGREEMENT: float64 GPU vs CPU {e64:.2e}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
