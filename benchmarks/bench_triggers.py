"""Cost of a compiled trigger: the same run with and without ``Trigger(every=...)``.

A compiled trigger ends the segment it fires in; the engine then continues in
a new segment. Before issue 23 that new segment drew its whole span of inputs
afresh, throwing away those drawn for the rest of the cut segment (up to
65,536 steps each time): with ``every=10000`` over 100,000 steps 343,216
steps of input were drawn for 100,000 run, and a cheap network ran at about
half speed. Now the engine keeps the rest and uses it up first.

The network is paper 002's similarity-matching network (regularizer ``XY``,
30 Jacobi iterations per step) at ``n`` inputs and ``k`` outputs, drawing its
inputs from a ``GaussianStream`` as it runs: a small network, where drawing
inputs is a large share of a step. The trigger is ``every_step()`` (always
holds) with an action that returns no event, so it measures only the cost of
ending segments. Each configuration is warmed up (compilation excluded), then
timed ``--repeats`` times on fresh networks, alternating; printed: the
seconds of every repeat, the medians, the ratio trigger/no-trigger of the
medians (target <= 1.2) and of the fastest runs (less sensitive to other
load on a shared machine), and the input rows drawn (must equal the steps
run). The final
weights of the two runs must be identical.

BLAS is pinned to one thread before NumPy is imported.

Usage::

    python benchmarks/bench_triggers.py                    # 100,000 steps, every=10000, 7 repeats
    python benchmarks/bench_triggers.py --quick            # a few seconds
    python benchmarks/bench_triggers.py --every 1000 --n 64 --k 8
    python benchmarks/bench_triggers.py --discard          # also the engine before issue 23, for comparison
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.models.similarity_matching import build_network  # noqa: E402
from neurosim.streams import GaussianStream  # noqa: E402
from neurosim.triggers import every_step  # noqa: E402


def make_circuit(n: int, k: int, every: int | None):
    """The network, with a compiled trigger due every ``every`` steps (None: no trigger); counts drawn rows."""
    lam = np.concatenate([[6.0, 5.0, 4.0, 2.0], np.linspace(0.2, 0.0, n - 4)])
    stream = GaussianStream(lam, seed=1, eigenvectors="random", eigvec_seed=7)
    drawn = [0]
    original = stream.block

    def block(t0, steps, batch=1):
        drawn[0] += steps
        return original(t0, steps, batch)

    stream.block = block
    c = build_network(stream, k, "XY", 0.1, beta=0.999, eta=0.1, tol=0.0, max_iter=30, zero_start=True,
                      seed=0, record=("activity",), record_every=100)
    if every is not None:
        c.network.add(ns.Trigger(every_step(), lambda net: [], every=every, name="bench"))
    return c, drawn


def timed(n, k, every, steps, discard=False):
    """Seconds, input rows drawn and final weights of one run.

    ``discard``: the engine before issue 23, which threw away the inputs
    drawn for the rest of a segment a trigger cut short (emulated by
    forgetting the kept rows before every segment).
    """
    c, drawn = make_circuit(n, k, every)
    if discard:
        c.network.run(0)  # builds the engine
        engine = c.network._engine
        run_segment = engine._run_segment

        def forgetful(n_steps):
            engine._kept = None
            return run_segment(n_steps)

        engine._run_segment = forgetful
    t0 = time.perf_counter()
    c.run(steps)
    return time.perf_counter() - t0, drawn[0], c.feedforward.weights.copy()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--every", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=12, help="inputs")
    ap.add_argument("--k", type=int, default=3, help="outputs")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="10,000 steps, every=1000, 2 repeats")
    ap.add_argument("--discard", action="store_true",
                    help="also time the trigger run as the engine before issue 23 ran it (drawn rows thrown away)")
    args = ap.parse_args(argv)
    if args.quick:
        args.steps, args.every, args.repeats = 10_000, 1_000, 2
    print(f"similarity matching n={args.n} k={args.k}, {args.steps} steps, trigger every={args.every}, "
          f"{args.repeats} repeats (1 BLAS thread)")
    timed(args.n, args.k, None, 1000)  # warm-up: compile (or load from numba's cache)
    timed(args.n, args.k, args.every, 1000)
    plain, trig, old = [], [], []
    for _ in range(args.repeats):
        dt0, d0, w0 = timed(args.n, args.k, None, args.steps)
        dt1, d1, w1 = timed(args.n, args.k, args.every, args.steps)
        plain.append(dt0)
        trig.append(dt1)
        line = (f"  no trigger {dt0:.3f} s ({d0} rows drawn)   trigger {dt1:.3f} s ({d1} rows drawn)   "
                f"ratio {dt1 / dt0:.2f}")
        if args.discard:
            dt2, d2, w2 = timed(args.n, args.k, args.every, args.steps, discard=True)
            old.append(dt2)
            line += f"   discarding {dt2:.3f} s ({d2} rows drawn) ratio {dt2 / dt0:.2f}"
            if not np.array_equal(w0, w2):
                print("DISAGREEMENT: discarding changed the weights")
        print(line)
        if not np.array_equal(w0, w1):
            print("DISAGREEMENT: the trigger changed the weights")
    m0, m1 = statistics.median(plain), statistics.median(trig)
    print(f"median no trigger {m0:.3f} s ({args.steps / m0:,.0f} steps/s), trigger {m1:.3f} s "
          f"({args.steps / m1:,.0f} steps/s)")
    print(f"ratio trigger/no-trigger = {m1 / m0:.2f} (target <= 1.2); fastest runs: {min(trig) / min(plain):.2f}; "
          f"input rows drawn with the trigger: {d1} for {args.steps} steps")
    if args.discard:
        m2 = statistics.median(old)
        print(f"ratio discarding/no-trigger = {m2 / m0:.2f}; fastest runs: {min(old) / min(plain):.2f} "
              f"(the engine before issue 23; {d2} rows drawn)")


if __name__ == "__main__":
    main()
