"""Peak memory of a long recording: kept in memory vs streamed to a zarr store.

A similarity-matching network (256 inputs, 64 outputs) runs ``steps`` steps
recording the output activity every step: ``steps x 64 x 8`` bytes (100 MB
at the default 200,000 steps). Each variant runs in its own fresh process
and reports its peak resident set size (``ru_maxrss``) and wall time:

* **memory**: the default recorder (32 MiB chunks, all kept);
* **stream**: ``store=...zarr, buffer=N`` with ``N`` a tenth of the
  recording or less (default 10,000 samples, 5 MB), so the recording is
  ten or more times the buffer.

It also checks that both give the same samples.

Usage::

    python benchmarks/bench_streaming.py                 # 200,000 steps, buffer 10,000
    python benchmarks/bench_streaming.py --steps 50000 --buffer 2000
"""

from __future__ import annotations

import argparse
import json
import os
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, resource, sys, time
import numpy as np
import neurosim as ns
from neurosim.models.similarity_matching import build_network

steps, buffer, store = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
stream = ns.GaussianStream(np.linspace(3.0, 0.1, 256), seed=0, eigenvectors="random")
c = build_network(stream, 64, "TY", 0.5, max_iter=5, seed=0, record=())
net = c.network
rec = net.record(net["y"], "activity", store=None if store == "-" else store, buffer=None if store == "-" else buffer)
net.run(10)  # compile (or load) before measuring the baseline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
net.run(steps - 10)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if store == "-":
    ds = rec.to_dataset()
    checksum = float(np.nansum(ds.activity.values[-1000:]))
else:
    rec.flush()
    from neurosim.store import open_store
    checksum = float(np.nansum(open_store(store).activity.values[-1000:]))
print(json.dumps({"base_kib": base, "peak_kib": peak, "wall": wall, "checksum": checksum}))
"""


def child(steps, buffer, store):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, str(steps), str(buffer), store], capture_output=True,
                         text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--buffer", type=int, default=10_000)
    args = p.parse_args()
    mb = args.steps * 64 * 8 / 2**20
    print(f"recording {args.steps} samples x 64 units = {mb:.0f} MiB; stream buffer {args.buffer} samples "
          f"= {args.buffer * 64 * 8 / 2**20:.1f} MiB ({args.steps / args.buffer:.0f}x smaller)")
    with tempfile.TemporaryDirectory() as tmp:
        mem = child(args.steps, args.buffer, "-")
        disk = child(args.steps, args.buffer, os.path.join(tmp, "y.zarr"))
    for name, r in (("in memory", mem), ("streamed", disk)):
        grew = (r["peak_kib"] - r["base_kib"]) / 1024
        print(f"  {name:<10} peak RSS {r['peak_kib'] / 1024:8.1f} MiB (+{grew:7.1f} MiB during the run), "
              f"{r['wall']:.1f} s")
    if abs(mem["checksum"] - disk["checksum"]) > 1e-9 * max(1.0, abs(mem["checksum"])):
        raise AssertionError("streamed samples differ from the in-memory ones")
    print(f"  same samples; streaming grew the peak by {(disk['peak_kib'] - disk['base_kib']) / 1024:.1f} MiB "
          f"vs {(mem['peak_kib'] - mem['base_kib']) / 1024:.1f} MiB in memory")


if __name__ == "__main__":
    main()
