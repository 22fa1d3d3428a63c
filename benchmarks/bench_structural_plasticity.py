"""Cost of structural plasticity of synapses: Prune/Grow events, and a run with their compiled triggers.

Two measurements on a sparse projection ``x (n_pre) -> y (n_post)`` of
``FixedInDegree(k)`` synapses, and on the masked dense projection with the
same synapses (the same connectivity with ``storage="dense"``):

1. **Events**: ``net.apply(Prune(W, threshold))`` with uniform weights in
   ``[0, 1)`` and ``threshold=0.1`` (about 10 % of the synapses removed),
   then ``net.apply(Grow(W, k))`` (as many grown back, drawn from the
   network's generator): seconds each, per synapse changed, and the ratio
   dense/sparse. Both storages must end with the same synapses.
2. **Run**: ``--steps`` compiled steps of one-hot inputs (the drive is one
   weight exactly) with a Hebbian rule with decay, with
   ``PruneSynapses(every=E)`` and ``GrowSynapses(every=E)`` against the same
   run without them: the ratio is what pruning and growing cost on top of
   the steps (conditions evaluated in the segments, segments cut where
   synapses change, the events applied, recorders none).

Each timing is the fastest of ``--repeats`` (after a warm-up that compiles).
BLAS and numba are pinned to one thread before NumPy is imported.

Usage::

    python benchmarks/bench_structural_plasticity.py             # n_post=4000, n_pre=2000, k=100 (400k synapses)
    python benchmarks/bench_structural_plasticity.py --quick     # a few seconds
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402


def projection_net(storage: str, n_post: int, n_pre: int, k: int, seed: int = 0):
    net = ns.Network(seed=seed)
    x, y = ns.Population("x", n_pre), ns.Population("y", n_post, dynamics=ns.Linear())
    W = ns.Projection("W", x, y, connectivity=ns.FixedInDegree(k), storage=storage, init=ns.Uniform(0.0, 1.0),
                      rule=ns.Hebbian(0.05, decay=0.002))
    net.add(x, y, W)
    return net, W


def time_events(storage, n_post, n_pre, k, repeats):
    best = [np.inf, np.inf]
    for _ in range(repeats):
        net, W = projection_net(storage, n_post, n_pre, k)
        t0 = time.perf_counter()
        net.apply(ns.Prune(W, 0.1))
        t1 = time.perf_counter()
        net.apply(ns.Grow(W, k, init=0.5))
        t2 = time.perf_counter()
        best = [min(best[0], t1 - t0), min(best[1], t2 - t1)]
    return best, len(net.event_log) // 2, W.synapses()


def time_run(n_post, n_pre, k, steps, every, structural, repeats):
    best = np.inf
    for _ in range(repeats + 1):  # the first compiles
        net, W = projection_net("sparse", n_post, n_pre, k)
        net.connect(ns.ArrayStream(np.eye(n_pre)[np.random.default_rng(1).integers(0, n_pre, 997)]), net["x"])
        if structural:
            net.add(ns.PruneSynapses(W, 0.1, every=every), ns.GrowSynapses(W, k, init=0.5, every=every))
        t0 = time.perf_counter()
        net.run(steps)
        best = min(best, time.perf_counter() - t0) if _ else best
    return best, len(net.event_log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-post", type=int, default=4000)
    ap.add_argument("--n-pre", type=int, default=2000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a small network (n_post=500, n_pre=400, k=20)")
    a = ap.parse_args()
    if a.quick:
        a.n_post, a.n_pre, a.k, a.steps, a.repeats = 500, 400, 20, 500, 1
    print(f"{a.n_post} post x {a.n_pre} pre, FixedInDegree({a.k}): {a.n_post * a.k} synapses")
    times = {}
    for storage in ("sparse", "dense"):
        (prune, grow), changed, synapses = time_events(storage, a.n_post, a.n_pre, a.k, a.repeats)
        times[storage] = (prune, grow, synapses)
        print(f"  {storage:6s}: Prune {prune:.3f} s, Grow {grow:.3f} s ({changed} synapses each; "
              f"{1e6 * prune / changed:.2f} / {1e6 * grow / changed:.2f} us per synapse)")
    same = all(np.array_equal(u, v) for u, v in zip(times["sparse"][2], times["dense"][2]))
    print(f"  same synapses in both storages: {same}")
    print(f"ratio dense/sparse = {times['dense'][0] / times['sparse'][0]:.2f} (Prune), "
          f"{times['dense'][1] / times['sparse'][1]:.2f} (Grow)")
    plain, _ = time_run(a.n_post, a.n_pre, a.k, a.steps, a.every, False, a.repeats)
    with_events, n = time_run(a.n_post, a.n_pre, a.k, a.steps, a.every, True, a.repeats)
    print(f"run of {a.steps} steps: {plain:.3f} s without, {with_events:.3f} s with PruneSynapses/GrowSynapses "
          f"every {a.every} ({n} synapse events)")
    print(f"ratio with/without = {with_events / plain:.2f}")


if __name__ == "__main__":
    main()
