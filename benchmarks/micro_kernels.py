"""Per-kernel timings of one similarity-matching step at 64x8, next to the fused loop's Jacobi.

Each kernel a segment calls is run 2e6 times from an ``@njit`` loop (so no
Python call overhead is measured) on arrays of the 64-input, 8-output
network of ``bench_engine.py``; prints nanoseconds per call. The sum against
the engine's measured time per step shows what calling separate kernels costs.
BLAS is pinned to one thread.

Usage::

    python benchmarks/micro_kernels.py [--calls 2000000]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from neurosim.kernels.dense import all_finite, copy_2d, copy_2d_finite, jacobi_relax, synaptic_drive  # noqa: E402
from neurosim.kernels.plasticity import cumulative_activity, normalized_hebbian, squared_norm  # noqa: E402


@njit
def _load(N, a, b):
    for _ in range(N):
        copy_2d_finite(a, b)


@njit
def _drive(N, d, x, W):
    for _ in range(N):
        synaptic_drive(d, x, W, 1.0, False)


@njit
def _jacobi(N, y, d, M, s, info):
    for _ in range(N):
        jacobi_relax(y, d, M, -1.0, 0.1, 0.0, 30, True, s, info)


@njit
def _sqnorm(N, sig, x):
    for _ in range(N):
        squared_norm(sig, x)


@njit
def _mu(N, mu, y, sig):
    for _ in range(N):
        cumulative_activity(mu, y, 0.998, 0.1, sig)
        for i in range(mu.size):
            mu[i] = 10.0


@njit
def _hebbian(N, W, y, x, mu, sig, mask):
    for _ in range(N):
        normalized_hebbian(W, y, x, mu, 0.1, sig, False, mask, False)


@njit
def _finite(N, a):
    c = 0
    for _ in range(N):
        c += all_finite(a)
    return c


@njit
def _copy(N, a, b):
    for _ in range(N):
        copy_2d(a, b)


@njit
def _fused_jacobi(N, y, u, M, z):
    """The fused loop's Jacobi (bench_engine.fused_loop): 29 iterations of a hand 8x8 product and update."""
    k = y.size
    for _ in range(N):
        for i in range(k):
            y[i] = 0.1 * u[i]
        for _it in range(1, 30):
            for i in range(k):
                acc = 0.0
                for j in range(k):
                    acc += M[i, j] * y[j]
                z[i] = acc
            for i in range(k):
                y[i] = 0.9 * y[i] + 0.1 * (u[i] - z[i])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2_000_000)
    N = ap.parse_args(argv).calls
    n, k = 64, 8
    rng = np.random.default_rng(0)
    x, xin = rng.standard_normal((1, n)), rng.standard_normal((1, n))
    W = rng.standard_normal((k, n)) * 0.1
    M = rng.standard_normal((k, k)) * 0.05
    np.fill_diagonal(M, 0.0)
    y, drive, scratch, rb = np.zeros((1, k)), np.ones((1, k)), np.zeros((1, k)), np.zeros((1, k))
    mu, sig, info, mask = np.full(k, 10.0), np.ones(1), np.zeros(2, np.int64), np.ones((1, 1), np.bool_)
    cases = [("load input", _load, (x, xin)), ("drive", _drive, (drive, x, W)),
             ("jacobi (engine)", _jacobi, (y, drive, M, scratch, info)),
             ("jacobi (fused loop)", _fused_jacobi, (np.zeros(k), np.ones(k), M.copy(), np.zeros(k))),
             ("||x||^2", _sqnorm, (sig, x)), ("mu", _mu, (mu, y, sig)),
             ("hebbian W (8x64)", _hebbian, (W, y, x, mu, sig, mask)),
             ("hebbian M (8x8)", _hebbian, (M.copy(), y, y, mu, sig, mask)),
             ("finite check", _finite, (y,)), ("record copy", _copy, (rb, y))]
    for name, f, args in cases:
        f(10, *args)
        t = time.perf_counter()
        f(N, *args)
        print(f"{name:22s} {(time.perf_counter() - t) / N * 1e9:8.1f} ns/call")


if __name__ == "__main__":
    main()
