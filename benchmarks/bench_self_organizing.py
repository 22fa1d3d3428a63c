"""Per-input cost of the self-organising circuits against MiniSom (SOM) and minigng (GNG), one thread.

SOM: a ``rows x cols`` map on 3-D inputs (colours), MiniSom's defaults
(gaussian, asymptotic decay), the same initial weights and input order;
after a warm-up run that compiles the segment, ``T`` inputs are timed on
both, and the weights are compared (they must agree to rounding).

GNG: both start from the same two samples and see the same inputs in the
same order (two rings in the plane), grow to ``N`` units with ``lambda =
10`` (``10 N`` inputs; insertions stop at ``max_units = N``), then ``T``
more inputs at that size (Fritzke's other parameters). Both phases are
timed, growth included: the line gives the seconds per input over the
whole run, of the growth and of the inputs at full size, wall clock and
(in brackets) the process's CPU time, which a machine shared with other
jobs inflates less. minigng links its two first units, Fritzke does not;
it is unlinked so both run the same algorithm, and the networks are
compared. Our peak memory is measured on a second run of ours under
``tracemalloc`` (NumPy's arrays are traced), apart from the timed one.

Usage::

    python benchmarks/bench_self_organizing.py            # SOM 100, 1024, 10000 units; GNG 100, 1000, 10000
    python benchmarks/bench_self_organizing.py --gng 1000 10000 --no-som
    python benchmarks/bench_self_organizing.py --quick    # small sizes, a few seconds

Prints one line per model and size with the seconds per input and
``ratio ours/peer``.
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


def _rings(n_units: int, T: int) -> np.ndarray:
    """``10 n_units + T`` samples on two rings of radius 0.7 to 1 centred 3 apart, in a fixed order."""
    rng = np.random.default_rng(0)
    total = 10 * n_units + T
    a = rng.uniform(0, 2 * np.pi, total)
    X = np.c_[np.cos(a), np.sin(a)] * rng.uniform(0.7, 1.0, total)[:, None]
    X[:, :1] += np.where(rng.random(total) < 0.5, 0.0, 3.0)[:, None]
    return X


def _clocks():
    return time.perf_counter(), time.process_time()


def _per_input(t0, t1, n):
    return (t1[0] - t0[0]) / n, (t1[1] - t0[1]) / n


def _ours(X, n_units: int):
    """Our GNG on ``X``: ``(network, clock readings at start, end of growth, end)``."""
    ours = build_gng(ns.ArrayStream(X), init=X[:2], lam=10, max_units=n_units)
    t0 = _clocks()
    ours.run(10 * n_units)
    t1 = _clocks()
    ours.run(len(X) - 10 * n_units)
    return ours, (t0, t1, _clocks())


def bench_gng(n_units: int, T: int, repeats: int):
    import tracemalloc

    import minigng

    X = _rings(n_units, T)
    grow = 10 * n_units
    build_gng(ns.ArrayStream(X), init=X[:2], lam=10).run(50)  # compiles (or loads) the segments
    best = {side: {phase: (np.inf, np.inf) for phase in ("growth", "size", "all")} for side in ("ours", "minigng")}
    agree = True

    def keep(side, clocks):
        t0, t1, t2 = clocks
        for phase, (a, b, n) in {"growth": (t0, t1, grow), "size": (t1, t2, T), "all": (t0, t2, grow + T)}.items():
            best[side][phase] = min(best[side][phase], _per_input(a, b, n))

    for _ in range(repeats):
        ours, clocks = _ours(X, n_units)
        keep("ours", clocks)
        choice = np.random.choice
        np.random.choice = lambda *args, **kw: np.array([0, 1])
        try:
            theirs = minigng.MiniGNG(shuffle=False, max_units=n_units, sigma=10)
            theirs.init_model(X)
        finally:
            np.random.choice = choice
        for u in theirs.units:
            u.neighbors.clear()
        theirs.edges = []
        t0 = _clocks()
        theirs.partial_fit(X[:grow])
        t1 = _clocks()
        theirs.partial_fit(X[grow:])
        keep("minigng", (t0, t1, _clocks()))
        P = np.array([u.prototype for u in theirs.units])
        agree &= P.shape == ours.weights.shape and np.allclose(P, ours.weights, rtol=1e-9, atol=1e-12)
    units, edges = ours.map.size, len(ours.edge_list())
    del ours, theirs
    tracemalloc.start()
    ours, _ = _ours(X, n_units)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, agree, units, edges, peak


def _gng_line(n_units, T, best, agree, units, edges, peak) -> str:
    o, m = best["ours"], best["minigng"]

    def pair(t):
        return f"{t[0]:.2e} ({t[1]:.2e})"

    def ratio(a, b):
        return f"{a[0] / b[0]:.2f} ({a[1] / b[1]:.2f})"

    return (f"GNG {units} units, {edges} edges ({10 * n_units} inputs growing from 2, then {T}): "
            f"ours {pair(o['all'])} s/input [growth {pair(o['growth'])}, at size {pair(o['size'])}], "
            f"minigng {pair(m['all'])} [growth {pair(m['growth'])}, at size {pair(m['size'])}], "
            f"ratio ours/peer = {ratio(o['all'], m['all'])} [growth {ratio(o['growth'], m['growth'])}, "
            f"at size {ratio(o['size'], m['size'])}]; ours peak {peak / 2**20:.1f} MiB traced  (agreement: {agree})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--repeats", type=int, default=3, help="best of this many runs (GNG above 1000 units: one)")
    ap.add_argument("--gng", type=int, nargs="*", default=None, metavar="UNITS",
                    help="GNG sizes (default 100 1000 10000)")
    ap.add_argument("--no-som", action="store_true", help="skip the SOM")
    args = ap.parse_args(argv)
    som_sizes = [(5, 400), (10, 400)] if args.quick else [(10, 5000), (32, 2000), (100, 300)]
    at_size = {20: 300, 50: 300, 100: 5000, 300: 3000, 1000: 2000}
    gng_units = [20, 50] if args.quick else (args.gng if args.gng is not None else [100, 1000, 10000])
    repeats = 1 if args.quick else args.repeats
    print("one thread; seconds per input, best of", repeats, "(GNG: wall clock, CPU time in brackets)")
    for side, T in ([] if args.no_som else som_sizes):
        best, agree = bench_som(side, T, repeats)
        print(f"SOM {side}x{side} = {side * side} units: ours {best['ours']:.3e} s, MiniSom {best['minisom']:.3e} s, "
              f"ratio ours/peer = {best['ours'] / best['minisom']:.3f}  (agreement: {agree})")
    for n in gng_units:
        T = at_size.get(n, 2000)
        result = bench_gng(n, T, repeats if n <= 1000 else 1)
        print(_gng_line(n, T, *result), flush=True)


if __name__ == "__main__":
    main()
