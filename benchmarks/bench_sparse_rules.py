"""A rule written per synapse against the built-in kernel: Oja's rule on a large sparse projection.

The per-synapse user rule (``local_rule(per_synapse=True)``) is mapped over
the stored synapses by a loop generated for it, with the function inlined
(:mod:`neurosim.rules.synapse_map`); the built-in ``Oja`` runs the
hand-written ``csr_oja``. Both compute the same bits. Prints the time of one
update (best of ``--repeats``) of each, serial on one thread and
row-parallel on two, and their ratios (the two kernels' calls interleaved);
then the time per step of two whole networks (drive plus rule) that differ
only in the rule. BLAS is pinned to one thread.

Usage::

    python benchmarks/bench_sparse_rules.py [--n 10000] [--p 0.01] [--batch 1] [--repeats 30] [--steps 50]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

import argparse  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.kernels import sparse as ks  # noqa: E402
from neurosim.params import Float  # noqa: E402


@ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)}, per_synapse=True)
def UserOja(w, post, pre, rate):
    """Oja's rule for one synapse, written as a user would (the built-in kernel's arithmetic)."""
    batch = post.shape[0]
    hebb = 0.0
    yy = 0.0
    for b in range(batch):
        hebb += post[b] * pre[b]
        yy += post[b] * post[b]
    return w + rate / batch * (hebb - yy * w)


def best(calls, repeats):
    """Best time of each ``(fn, args)``, the calls interleaved (a busy machine slows both alike)."""
    for fn, args in calls:
        fn(*args)  # compile
    times = [[] for _ in calls]
    for _ in range(repeats):
        for k, (fn, args) in enumerate(calls):
            t0 = time.perf_counter()
            fn(*args)
            times[k].append(time.perf_counter() - t0)
    return [min(t) for t in times]


def kernels(n, p, batch, repeats):
    rng = np.random.default_rng(0)
    index = ns.FixedProbability(p).draw(rng, n, n, False)
    w = rng.normal(0.0, 0.1, index.size)
    y, x = rng.normal(size=(batch, n)) * 0.1, rng.normal(size=(batch, n))
    y_t, x_t = np.zeros((n, batch)), np.zeros((n, batch))
    print(f"{n} x {n}, p = {p}: {index.size} synapses, batch {batch}")
    w1, w2 = w.copy(), w.copy()
    ks.csr_oja(w1, index.indptr, index.indices, y, x, 1e-4)
    UserOja.maps["sparse", False].compiled()(w2, index.indptr, index.indices, y, x, y_t, x_t, 1e-4)
    assert np.array_equal(w1, w2), "the per-synapse rule must give the built-in kernel's bits"
    for threads, rows in ((1, False), (2, True)):
        if threads > numba.config.NUMBA_NUM_THREADS:
            continue
        numba.set_num_threads(threads)
        builtin = ks.csr_oja_rows if rows else ks.csr_oja
        user = UserOja.maps["sparse", rows].compiled()
        a, b = best([(builtin, (w1, index.indptr, index.indices, y, x, 1e-4)),
                     (user, (w2, index.indptr, index.indices, y, x, y_t, x_t, 1e-4))], repeats)
        name = "row-parallel" if rows else "serial"
        print(f"  {name:12s} {threads} thread(s): built-in {a * 1e3:7.2f} ms, per-synapse {b * 1e3:7.2f} ms, "
              f"ratio {b / a:.2f}")
    numba.set_num_threads(1)


def network(n, p, batch, steps, rule):
    net = ns.Network(seed=0, batch=batch)
    x, y = ns.Population("x", n), ns.Population("y", n, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, connectivity=ns.FixedProbability(p), init=ns.Normal(0.01), rule=rule))
    net.connect(ns.ArrayStream(np.random.default_rng(1).normal(size=(64, batch, n))), x)
    net.run(2)  # compile
    return net


def networks(n, p, batch, steps, repeats=3):
    """Seconds per step of two networks that differ only in the rule, runs interleaved (best of ``repeats``)."""
    a, b = network(n, p, batch, steps, ns.Oja(1e-3)), network(n, p, batch, steps, UserOja(1e-3))
    times = best([(a.run, (steps,)), (b.run, (steps,))], repeats)
    assert np.array_equal(a["W"].weights, b["W"].weights)
    return [t / steps for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--p", type=float, default=0.01)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    ns.set_num_threads(1)
    kernels(args.n, args.p, args.batch, args.repeats)
    if args.steps:
        a, b = networks(args.n, args.p, args.batch, args.steps)
        print(f"  network step (drive + rule), 1 thread: Oja {a * 1e3:.2f} ms, per-synapse {b * 1e3:.2f} ms, "
              f"ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
