"""CUBA (Brette et al. 2007), 1 s of biological time: neurosim against Brian2, side by side (issue 42).

The same network (4,000 LIF units, 80 % excitatory, p = 0.02, dt = 0.1 ms;
connectivity and initial potentials from ``brian2_cuba_reference.cuba_inputs``)
in neurosim's compiled segments and in Brian2's C++ standalone mode and its
runtime (Cython) mode, one thread each, BLAS and numba on one thread.
Compile and build times are reported apart from the run. The ratios are
neurosim's run time over Brian2's (issue 42's targets: <= 1.0 against
standalone, <= 0.5 against the runtime).

Brian2 runs in a Python of its own (it pins its numpy): ``--brian2-python``
or ``NEUROSIM_BRIAN2_PYTHON``; without one only neurosim is timed.

Usage::

    python benchmarks/bench_spiking.py --brian2-python /path/to/brian2-venv/bin/python [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
STEPS = 10_000  # 1 s at 0.1 ms

_BRIAN2 = r'''
import json, sys, time, tempfile
import numpy as np
sys.path.insert(0, sys.argv[1])
from brian2_cuba_reference import N, N_EXCITATORY, cuba_inputs
mode, steps = sys.argv[2], int(sys.argv[3])
from brian2 import (NeuronGroup, Synapses, SpikeMonitor, device, mV, ms, prefs, run, set_device, volt, Network,
                    collect, defaultclock)
v0, pre, post = cuba_inputs()
build = tempfile.mkdtemp()
if mode == "standalone":
    set_device("cpp_standalone", directory=build, build_on_run=False)
    prefs.devices.cpp_standalone.openmp_threads = 0
    prefs.devices.cpp_standalone.extra_make_args_unix = ["-j1"]
else:
    prefs.codegen.target = "cython"
prefs.codegen.cpp.extra_compile_args_gcc = ["-w", "-O3", "-std=c++11", "-ffp-contract=off"]
taum, taue, taui = 20 * ms, 5 * ms, 10 * ms
Vt, Vr, El = -50 * mV, -60 * mV, -49 * mV
eqs = """
dv/dt  = (ge+gi-(v-El))/taum : volt (unless refractory)
dge/dt = -ge/taue : volt
dgi/dt = -gi/taui : volt
"""
t0 = time.perf_counter()
P = NeuronGroup(N, eqs, threshold="v>Vt", reset="v = Vr", refractory=5 * ms, method="exact")
P.v = v0 * volt
we, wi = (60 * 0.27 / 10) * mV, (-20 * 4.5 / 10) * mV
Ce = Synapses(P, P, on_pre="ge += we"); Ci = Synapses(P, P, on_pre="gi += wi")
e = pre < N_EXCITATORY
Ce.connect(i=pre[e], j=post[e]); Ci.connect(i=pre[~e], j=post[~e])
mon = SpikeMonitor(P)
if mode == "standalone":
    run(steps * 0.1 * ms)
    t1 = time.perf_counter()
    device.build(directory=build, compile=True, run=False)
    t2 = time.perf_counter()
    device.run(directory=build, with_output=False)
    t3 = time.perf_counter()
    out = {"build_s": t2 - t0, "run_s": device._last_run_time, "binary_s": t3 - t2, "spikes": int(mon.num_spikes)}
else:
    net = Network(collect())
    net.run(0 * ms)  # code generation and Cython compilation (cached after the first time)
    t1 = time.perf_counter()
    net.run(steps * 0.1 * ms)
    t2 = time.perf_counter()
    out = {"build_s": t1 - t0, "run_s": t2 - t1, "spikes": int(mon.num_spikes)}
print("RESULT " + json.dumps(out))
'''


def neurosim_run(steps: int) -> dict:
    """neurosim's CUBA: seconds to build and compile (first 10 steps) and to run ``steps`` steps."""
    from neurosim.models.spiking import cuba_inputs, cuba_network  # the network of the oracle test

    v0, pre, post = cuba_inputs()
    t0 = time.perf_counter()
    net = cuba_network(v0, pre, post, record=False)  # no per-step raster: Brian2's SpikeMonitor is event-based
    net.run(10, backend="compiled")
    t1 = time.perf_counter()
    spikes = 0
    t2 = time.perf_counter()
    net.run(steps, backend="compiled")
    t3 = time.perf_counter()
    return {"build_s": t1 - t0, "run_s": t3 - t2, "spikes": spikes}


def brian2_run(python: str, mode: str, steps: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_BRIAN2)
    try:
        proc = subprocess.run([python, f.name, str(HERE), mode, str(steps)], capture_output=True, text=True,
                              env={**os.environ, **THREADS}, timeout=900)
    finally:
        os.unlink(f.name)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    if proc.returncode != 0 or not line:
        raise RuntimeError(f"Brian2 ({mode}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(line[-1][7:])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brian2-python", default=os.environ.get("NEUROSIM_BRIAN2_PYTHON"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args(argv)
    os.environ.update(THREADS)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.repeats} repeats; {args.steps} steps (dt = 0.1 ms)")
    rows = {"neurosim": [], "brian2 standalone": [], "brian2 runtime": []}
    for r in range(args.repeats):
        rows["neurosim"].append(neurosim_run(args.steps))
        if args.brian2_python:
            rows["brian2 standalone"].append(brian2_run(args.brian2_python, "standalone", args.steps))
            rows["brian2 runtime"].append(brian2_run(args.brian2_python, "runtime", args.steps))
    med = {k: (statistics.median(x["run_s"] for x in v), statistics.median(x["build_s"] for x in v)) for k, v in rows.items() if v}
    print("| simulator | run (median) | runs | build/compile (median) |")
    print("|---|---:|---|---:|")
    for k, v in rows.items():
        if v:
            runs = ", ".join(f"{x['run_s']:.3f}" for x in v)
            print(f"| {k} | {med[k][0]:.3f} s | {runs} | {med[k][1]:.1f} s |")
    if args.brian2_python:
        ns_run = med["neurosim"][0]
        print(f"neurosim / Brian2 standalone = {ns_run / med['brian2 standalone'][0]:.2f} (target <= 1.0); "
              f"neurosim / Brian2 runtime = {ns_run / med['brian2 runtime'][0]:.2f} (target <= 0.5)")


if __name__ == "__main__":
    main()
