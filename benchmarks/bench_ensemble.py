"""Many small networks at once: ``Ensemble.run`` on every core vs one after another.

E similarity-matching networks of 64 inputs x 8 outputs (XY, 30 fixed Jacobi
iterations, inputs pre-drawn through an ``ArrayStream``, nothing recorded),
different seeds, ``--steps`` steps each:

1. **loop**: ``net.run(steps)`` for each member in turn (one thread);
2. **ensemble, t threads**: ``Ensemble(members).run(steps, threads=t)``;
3. **ensemble cuda** (``--cuda``, when a GPU or the simulator is there): one block per member.

Prints network-steps/s and the ratios, and checks that every member's final
weights are bit-identical across the CPU variants.

Usage::

    python benchmarks/bench_ensemble.py                    # E = 64, 20,000 steps
    python benchmarks/bench_ensemble.py --networks 16384 --steps 1000 --cuda
"""

from __future__ import annotations

import argparse
import os
import time

# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

import numpy as np  # noqa: E402

import neurosim as ns
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream


def members(E, steps, n=64, k=8):
    X = np.random.default_rng(0).normal(size=(min(steps, 4096), n)) * 0.3
    return [build_network(ArrayStream(X), k, "XY", 0.1, beta=0.999, eta=0.1, tol=0.0, max_iter=30, zero_start=True,
                          seed=s, record=()).network for s in range(E)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--networks", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--cuda", action="store_true")
    args = ap.parse_args(argv)
    E, steps = args.networks, args.steps
    ns.Ensemble(members(2, 8)).run(8, threads=1)  # compile
    results, finals = {}, {}
    nets = members(E, steps)
    t0 = time.perf_counter()
    with ns.num_threads(1):
        for net in nets:
            net.run(steps)
    results["loop, 1 thread"] = time.perf_counter() - t0
    finals["loop"] = [n.projections["W"].weights.copy() for n in nets]
    for t in sorted({1, ns.max_threads()}):
        ens = ns.Ensemble(members(E, steps))
        t0 = time.perf_counter()
        ens.run(steps, threads=t)
        results[f"ensemble, {t} thread(s)"] = time.perf_counter() - t0
        finals[t] = [n.projections["W"].weights.copy() for n in ens.networks]
    same = all(np.array_equal(a, b) for v in finals.values() for a, b in zip(v, finals["loop"]))
    if args.cuda:
        from neurosim import cuda as nscuda

        try:
            nscuda.require_cuda()
        except nscuda.CUDAUnavailableError as err:
            print(f"no GPU run: {err}")
        else:
            ens = ns.Ensemble(members(E, steps))
            ens.run(2, backend="cuda")  # compile
            ens = ns.Ensemble(members(E, steps))
            t0 = time.perf_counter()
            ens.run(steps, backend="cuda")
            results["ensemble, cuda"] = time.perf_counter() - t0
            w = [n.projections["W"].weights for n in ens.networks]
            err = max(np.abs(a - b).max() / np.abs(b).max() for a, b in zip(w, finals["loop"]))
            print(f"cuda vs CPU, max relative difference of W: {err:.1e}")
    base = results["loop, 1 thread"]
    print(f"{E} networks of 64 x 8, {steps} steps each; CPU variants bit-identical: {same}")
    for name, sec in results.items():
        print(f"{name:>24}: {sec:8.2f} s  {E * steps / sec:12,.0f} network-steps/s  {base / sec:5.2f}x the loop")


if __name__ == "__main__":
    main()
