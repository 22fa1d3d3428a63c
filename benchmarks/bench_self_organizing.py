"""Per-input cost of the self-organising circuits against MiniSom (SOM) and minigng (GNG), one thread.

SOM: a ``rows x cols`` map on 3-D inputs (colours), MiniSom's defaults
(gaussian, asymptotic decay), the same initial weights and input order;
after a warm-up run that compiles the segment, ``T`` inputs are timed on
both, and the weights are compared (they must agree to rounding).

GNG: both start from the same two samples and see the same inputs in the
same order, grow to ``N`` units with ``lambda = 10`` (insertions stop at
``max_units = N``), then ``T`` more inputs at that size are timed (Fritzke's
other parameters). minigng links its two first units, Fritzke does not; it
is unlinked so both run the same algorithm, and the networks are compared.

Usage::

    python benchmarks/bench_self_organizing.py            # SOM 100, 1024, 10000 units; GNG 100, 300, 1000
    python benchmarks/bench_self_organizing.py --quick    # small sizes, a few seconds

Prints one line per model and size with the seconds per input and
``ratio ours/peer``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NEUROSIM_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.models.self_organizing import build_gng, build_som  # noqa: E402


def bench_som(side: int, T: int, repeats: int):
    from minisom import MiniSom

    rng = np.random.default_rng(0)
    X = rng.random((5000, 3))
    best = {"ours": np.inf, "minisom": np.inf}
    agree = True
    for _ in range(repeats):
        som = MiniSom(side, side, 3, sigma=max(1.0, side / 4), learning_rate=0.5, random_seed=1)
        w0 = som.get_weights().copy()
        c = build_som(ns.ArrayStream(X), side, side, steps=T, sigma=som._sigma, init=w0)
        warm = build_som(ns.ArrayStream(X), side, side, steps=T, sigma=som._sigma, init=w0)
        warm.run(20)  # compiles (or loads) the segment
        t0 = time.perf_counter()
        c.run(T)
        best["ours"] = min(best["ours"], (time.perf_counter() - t0) / T)
        t0 = time.perf_counter()
        som.train(X, T)
        best["minisom"] = min(best["minisom"], (time.perf_counter() - t0) / T)
        agree &= np.allclose(c.weights, som.get_weights().reshape(-1, 3), rtol=1e-10, atol=1e-13)
    return best, agree


def bench_gng(n_units: int, T: int, repeats: int):
    import minigng

    rng = np.random.default_rng(0)
    grow = 10 * n_units
    a = rng.uniform(0, 2 * np.pi, grow + T)
    X = np.c_[np.cos(a), np.sin(a)] * rng.uniform(0.7, 1.0, grow + T)[:, None]
    X[:, :1] += np.where(rng.random(grow + T) < 0.5, 0.0, 3.0)[:, None]  # two rings
    start = np.array([0, 1])
    best = {"ours": np.inf, "minigng": np.inf}
    agree = True
    for _ in range(repeats):
        ours = build_gng(ns.ArrayStream(X), init=X[start], lam=10, max_units=n_units)
        ours.run(grow)
        t0 = time.perf_counter()
        ours.run(T)
        best["ours"] = min(best["ours"], (time.perf_counter() - t0) / T)
        choice = np.random.choice
        np.random.choice = lambda *args, **kw: start
        try:
            theirs = minigng.MiniGNG(shuffle=False, max_units=n_units, sigma=10)
            theirs.init_model(X)
        finally:
            np.random.choice = choice
        for u in theirs.units:
            u.neighbors.clear()
        theirs.edges = []
        theirs.partial_fit(X[:grow])
        t0 = time.perf_counter()
        theirs.partial_fit(X[grow:])
        best["minigng"] = min(best["minigng"], (time.perf_counter() - t0) / T)
        P = np.array([u.prototype for u in theirs.units])
        agree &= P.shape == ours.weights.shape and np.allclose(P, ours.weights, rtol=1e-9, atol=1e-12)
    return best, agree, ours.map.size, len(ours.edge_list())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    som_sizes = [(5, 400), (10, 400)] if args.quick else [(10, 5000), (32, 2000), (100, 300)]
    gng_sizes = [(20, 300), (50, 300)] if args.quick else [(100, 5000), (300, 3000), (1000, 1000)]
    repeats = 1 if args.quick else args.repeats
    print("one thread; seconds per input, best of", repeats)
    for side, T in som_sizes:
        best, agree = bench_som(side, T, repeats)
        print(f"SOM {side}x{side} = {side * side} units: ours {best['ours']:.3e} s, MiniSom {best['minisom']:.3e} s, "
              f"ratio ours/peer = {best['ours'] / best['minisom']:.3f}  (agreement: {agree})")
    for n, T in gng_sizes:
        best, agree, units, edges = bench_gng(n, T, repeats)
        print(f"GNG {units} units, {edges} edges: ours {best['ours']:.3e} s, minigng {best['minigng']:.3e} s, "
              f"ratio ours/peer = {best['ours'] / best['minigng']:.3f}  (agreement: {agree})")


if __name__ == "__main__":
    main()
