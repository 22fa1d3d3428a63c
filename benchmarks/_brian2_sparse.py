"""Brian2's side of benchmarks/bench_sparse.py: the sparse rate network with Oja's rule, run in Brian2's interpreter.

Brian2 needs a NumPy it supports (2.9 does not import with NumPy 2.4), so it
lives in a virtual environment of its own and bench_sparse.py runs this
script there (``--brian2-python``); it imports neither neurosim nor anything
of the benchmark. The model is the one of bench_sparse.py::

    x = NeuronGroup(n, "x : 1")           # the input, redrawn every step (a TimedArray of N(0, 1) values)
    y = NeuronGroup(n, "y : 1")
    S = Synapses(x, y, '''w : 1
                          y_post = w * x_pre : 1 (summed)''')    # y = W x, every step
    S.connect(p=p)                         # each pair with probability p (Brian2's sample(N_post, p=p))
    S.w = "sigma * randn()"
    S.run_regularly("w = w + rate * (y_post * x_pre - (y_post * y_post) * w)", when="end")   # Oja

In each step ``x`` is loaded (``when="start"``), the summed variable ``y``
is updated from it (``groups``), then Oja's rule updates every synapse from
that ``y`` and ``x`` (``end``): the order of a neurosim step (dynamics, then
plasticity).

Modes (the result is one JSON line on stdout):

``time``
    Build the model at ``--n``, ``--p``; one warm-up run, then ``--repeats``
    runs of ``--steps`` steps with the rule switched off (drive only) and as
    many with it on. ``--target runtime`` runs Brian2's runtime mode (Cython
    code objects, timed with ``time.perf_counter``/``time.process_time``;
    peak RSS of this process). ``--target standalone`` builds one C++
    standalone binary (one thread) that times each run itself (wall clock and
    ``std::clock`` around ``Network::run``) and runs it under
    ``/usr/bin/time`` for its peak RSS.
``oracle``
    Read the synapses ``(pre, post)``, initial weights and inputs from
    ``--data`` (an ``.npz`` from bench_sparse.py), run ``steps`` steps in C++
    standalone mode, write the final weights with their ``(i, j)`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time

import numpy as np

OJA = "w = w + rate * (y_post * x_pre - (y_post * y_post) * w)"


def model(b2, n_pre, n_post, X, rate, sigma=0.0):
    """Groups and synapses of the rate network (not yet connected); ``X`` (T, n_pre) cycles with period T steps."""
    dt = b2.defaultclock.dt
    namespace = {"ta": b2.TimedArray(X, dt=dt), "period": X.shape[0] * dt, "rate": rate, "sigma": sigma}
    x = b2.NeuronGroup(n_pre, "x : 1", name="x", namespace=namespace)
    x.run_regularly("x = ta(t % period, i)", when="start", name="load_x")
    y = b2.NeuronGroup(n_post, "y : 1", name="y", namespace=namespace)
    S = b2.Synapses(x, y, "w : 1\ny_post = w * x_pre : 1 (summed)", name="S", namespace=namespace)
    return x, y, S


def peak_rss_bytes() -> int:
    """Peak resident set of this process (``VmHWM``: unlike ``ru_maxrss`` it does not keep the parent's at fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def time_runtime(b2, args, X):
    b2.prefs.codegen.target = "cython"
    t0 = time.perf_counter()
    x, y, S = model(b2, args.n, args.n, X, args.rate, 1.0 / np.sqrt(args.n * args.p))
    S.connect(p=args.p)
    S.w = "sigma * randn()"
    oja = S.run_regularly(OJA, when="end", name="oja")
    net = b2.Network(x, y, S, oja)
    build = time.perf_counter() - t0
    dt = b2.defaultclock.dt
    oja.active = True
    net.run(2 * dt)  # compiles every code object
    out = {"build_s": build, "n_synapses": int(len(S)), "drive": [], "oja": [], "drive_cpu": [], "oja_cpu": []}
    for mode, active in (("drive", False), ("oja", True)):
        oja.active = active
        for _ in range(args.repeats):
            w0, c0 = time.perf_counter(), time.process_time()
            net.run(args.steps * dt)
            out[mode].append((time.perf_counter() - w0) / args.steps)
            out[mode + "_cpu"].append((time.process_time() - c0) / args.steps)
    out["peak_rss"] = peak_rss_bytes()
    return out


def _timer(b2, k):
    b2.device.insert_code("main", f"auto _w{k} = std::chrono::steady_clock::now(); std::clock_t _c{k} = std::clock();")


def _report(b2, k, label):
    b2.device.insert_code("main", (
        f'{{ std::ofstream _f("timings.txt", std::ios::app); _f << "{label} " << '
        f"std::chrono::duration<double>(std::chrono::steady_clock::now() - _w{k}).count() << \" \" << "
        f"double(std::clock() - _c{k}) / CLOCKS_PER_SEC << std::endl; }}"))


def standalone(b2, directory):
    b2.set_device("cpp_standalone", directory=directory, build_on_run=False)
    b2.prefs.devices.cpp_standalone.openmp_threads = 0  # one thread
    b2.prefs.codegen.cpp.headers += ["<chrono>"]


def time_standalone(b2, args, X):
    if args.workdir:
        # one project per size, kept for the next round: make recompiles only what changed (nothing)
        directory = os.path.join(args.workdir, f"standalone_{args.n}_{args.p}_{args.steps}_{args.repeats}")
        os.makedirs(directory, exist_ok=True)
    else:
        directory = tempfile.mkdtemp(prefix="brian2_sparse_")
    for stale in ("timings.txt", "rss.txt"):
        if os.path.exists(os.path.join(directory, stale)):
            os.remove(os.path.join(directory, stale))
    try:
        standalone(b2, directory)
        k = 0
        _timer(b2, k)  # main() makes the synapses and the weights where connect and the assignment stand
        x, y, S = model(b2, args.n, args.n, X, args.rate, 1.0 / np.sqrt(args.n * args.p))
        S.connect(p=args.p)
        S.w = "sigma * randn()"
        _report(b2, k, "build")
        oja = S.run_regularly(OJA, when="end", name="oja")
        net = b2.Network(x, y, S, oja)
        dt = b2.defaultclock.dt
        net.run(2 * dt)  # first touch of every array
        for mode, active in (("drive", False), ("oja", True)):
            oja.active = active
            for _ in range(args.repeats):
                k += 1
                _timer(b2, k)
                net.run(args.steps * dt)
                _report(b2, k, mode)
        rss_file = os.path.join(directory, "rss.txt")
        b2.prefs.devices.cpp_standalone.run_cmd_unix = ["/usr/bin/time", "-f", "%M", "-o", rss_file, "./main"]
        t0 = time.perf_counter()
        b2.device.build(directory=directory, compile=True, run=False)
        compile_s = time.perf_counter() - t0
        b2.device.run(directory=directory, with_output=False)
        out = {"compile_s": compile_s, "drive": [], "oja": [], "drive_cpu": [], "oja_cpu": []}
        with open(os.path.join(directory, "timings.txt")) as f:
            for line in f:
                label, wall, cpu = line.split()
                if label == "build":
                    out["build_s"] = float(wall)
                else:
                    out[label].append(float(wall) / args.steps)
                    out[label + "_cpu"].append(float(cpu) / args.steps)
        with open(rss_file) as f:
            out["peak_rss"] = int(f.read().split()[-1]) * 1024  # GNU time's %M: maximum resident set in KiB
        out["n_synapses"] = int(len(S))
        return out
    finally:
        # the results (every array, written at the end) can be gigabytes; the compiled project is kept if asked
        shutil.rmtree(os.path.join(directory, "results") if args.workdir else directory, ignore_errors=True)


def oracle(b2, args):
    d = np.load(args.data)
    pre, post, w0, X, rate = d["pre"], d["post"], d["w0"], d["X"], float(d["rate"])
    directory = tempfile.mkdtemp(prefix="brian2_oracle_")
    try:
        standalone(b2, directory)
        x, y, S = model(b2, int(d["n_pre"]), int(d["n_post"]), X, rate)
        S.connect(i=pre, j=post)
        S.w = w0
        oja = S.run_regularly(OJA, when="end", name="oja")
        net = b2.Network(x, y, S, oja)
        net.run(X.shape[0] * b2.defaultclock.dt)
        b2.device.build(directory=directory, compile=True, run=True, with_output=False)
        np.savez(args.out, i=np.asarray(S.i[:]), j=np.asarray(S.j[:]), w=np.asarray(S.w[:]), y=np.asarray(y.y[:]))
        return {"written": args.out}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("time", "oracle"))
    ap.add_argument("--target", choices=("runtime", "standalone"), default="standalone")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--p", type=float, default=0.01)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rate", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1, help="seed of the inputs (numpy's default_rng)")
    ap.add_argument("--workdir", help="time, standalone: keep the compiled project here (reused by later rounds)")
    ap.add_argument("--data", help="oracle: the .npz of synapses, initial weights and inputs")
    ap.add_argument("--out", help="oracle: where to write the final weights (.npz)")
    args = ap.parse_args(argv)
    import brian2 as b2

    b2.prefs.logging.console_log_level = "WARNING"
    b2.defaultclock.dt = 1 * b2.ms
    b2.seed(args.seed)
    if args.mode == "oracle":
        out = oracle(b2, args)
    else:
        X = np.random.default_rng(args.seed).standard_normal((args.steps, args.n))
        out = time_runtime(b2, args, X) if args.target == "runtime" else time_standalone(b2, args, X)
        out["brian2"] = b2.__version__
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
