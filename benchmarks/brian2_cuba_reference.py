"""Brian2's spike raster of the CUBA network (Brette et al. 2007), the oracle of tests/spiking/test_cuba_brian2.py.

Runs in an environment with Brian2 (it pins its own numpy; this repository
keeps one in a venv of its own: ``/work/venvs/brian2/bin/python
benchmarks/brian2_cuba_reference.py OUT.npz``). The network is Brian2's
``examples/CUBA.py`` with the connectivity and initial potentials drawn by
:func:`cuba_inputs` (NumPy's PCG64, the same numbers on every machine), so
that neurosim's test rebuilds the same network without Brian2. Brian2 runs
as C++ standalone, one thread, compiled with ``-ffp-contract=off``: its
default flags (``-ffast-math -march=native``) let the compiler fuse
multiply-adds, which changes the last bits of ``v`` (3e-16 V in 100 ms
here); the reference is the IEEE arithmetic of Brian2's generated code.

Writes ``i``, ``step`` (the spikes, in Brian2's order: by time, then unit),
``v012`` (``v`` of units 0-2 at the start of every step) and the Brian2 and
sympy versions. With ``--seeds S1 S2 ... --steps 10000`` it writes instead,
for each seed, the raster of 1 s (``i_S``, ``step_S``) for the statistics
test (population rate and CV of the inter-spike intervals, :func:`raster_stats`).
With ``--delays`` it writes the 100 ms raster of seed 1234 with a delay per
synapse (:func:`cuba_delays`, 0-3 ms, set as ``S.delay``), the oracle of
neurosim's per-synapse delays (``i``, ``step``).
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import numpy as np

# the inputs and statistics are neurosim.models.spiking's, imported by path: that module needs only NumPy at
# import, so this script runs in Brian2's environment without neurosim installed
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))
from spiking import N, N_EXCITATORY, P_CONNECT, cuba_delays, cuba_inputs, raster_stats  # noqa: E402

sys.path.pop(0)
SEED = 1234
#: 100 ms at dt = 0.1 ms
STEPS = 1000


def brian2_raster(seed: int, steps: int, build: str, delays: bool = False):
    """Brian2's CUBA raster ``(i, step)`` on :func:`cuba_inputs` of ``seed`` for ``steps`` steps (C++ standalone).

    With ``delays`` each synapse has the delay :func:`cuba_delays` gives it.
    """
    from brian2 import NeuronGroup, SpikeMonitor, Synapses, device, mV, ms, prefs, run, second, set_device, volt

    v0, pre, post = cuba_inputs(seed)
    device.reinit()
    device.activate()
    set_device("cpp_standalone", directory=build, build_on_run=False)
    prefs.devices.cpp_standalone.openmp_threads = 0
    prefs.devices.cpp_standalone.extra_make_args_unix = ["-j1"]
    prefs.codegen.cpp.extra_compile_args_gcc = ["-w", "-O3", "-std=c++11", "-ffp-contract=off"]
    taum, taue, taui = 20 * ms, 5 * ms, 10 * ms  # noqa: F841
    Vt, Vr, El = -50 * mV, -60 * mV, -49 * mV  # noqa: F841
    eqs = """
    dv/dt  = (ge+gi-(v-El))/taum : volt (unless refractory)
    dge/dt = -ge/taue : volt
    dgi/dt = -gi/taui : volt
    """
    P = NeuronGroup(N, eqs, threshold="v>Vt", reset="v = Vr", refractory=5 * ms, method="exact")
    P.v = v0 * volt
    we, wi = (60 * 0.27 / 10) * mV, (-20 * 4.5 / 10) * mV  # noqa: F841
    Ce = Synapses(P, P, on_pre="ge += we")
    Ci = Synapses(P, P, on_pre="gi += wi")
    e = pre < N_EXCITATORY
    Ce.connect(i=pre[e], j=post[e])
    Ci.connect(i=pre[~e], j=post[~e])
    if delays:
        Ce.delay = cuba_delays(post[e], pre[e]) * second
        Ci.delay = cuba_delays(post[~e], pre[~e]) * second
    spikes = SpikeMonitor(P)
    run(steps * 0.1 * ms)
    device.build(directory=build, compile=True, run=True, with_output=False)
    return np.asarray(spikes.i[:], dtype=np.int32), np.rint(np.asarray(spikes.t_[:]) / 1e-4).astype(np.int32)


def main_seeds(out: str, seeds: list[int], steps: int) -> None:
    data = {}
    for seed in seeds:
        with tempfile.TemporaryDirectory() as build:
            i, step = brian2_raster(seed, steps, build)
        data[f"i_{seed}"], data[f"step_{seed}"] = i, step
        print(seed, raster_stats(i, step, steps=steps))
    np.savez_compressed(out, seeds=np.array(seeds), steps=steps, **data)


def main(out: str) -> None:
    import brian2
    import sympy
    from brian2 import (NeuronGroup, SpikeMonitor, StateMonitor, Synapses, device, mV, ms, prefs, run,
                        set_device, volt)

    v0, pre, post = cuba_inputs()
    with tempfile.TemporaryDirectory() as build:
        set_device("cpp_standalone", directory=build, build_on_run=False)
        prefs.devices.cpp_standalone.openmp_threads = 0
        prefs.devices.cpp_standalone.extra_make_args_unix = ["-j1"]
        prefs.codegen.cpp.extra_compile_args_gcc = ["-w", "-O3", "-std=c++11", "-ffp-contract=off"]
        taum, taue, taui = 20 * ms, 5 * ms, 10 * ms  # noqa: F841 (read by Brian2's equations)
        Vt, Vr, El = -50 * mV, -60 * mV, -49 * mV  # noqa: F841
        eqs = """
        dv/dt  = (ge+gi-(v-El))/taum : volt (unless refractory)
        dge/dt = -ge/taue : volt
        dgi/dt = -gi/taui : volt
        """
        P = NeuronGroup(N, eqs, threshold="v>Vt", reset="v = Vr", refractory=5 * ms, method="exact")
        P.v = v0 * volt
        we, wi = (60 * 0.27 / 10) * mV, (-20 * 4.5 / 10) * mV  # noqa: F841
        Ce = Synapses(P, P, on_pre="ge += we")
        Ci = Synapses(P, P, on_pre="gi += wi")
        e = pre < N_EXCITATORY
        Ce.connect(i=pre[e], j=post[e])
        Ci.connect(i=pre[~e], j=post[~e])
        spikes = SpikeMonitor(P)
        state = StateMonitor(P, "v", record=[0, 1, 2])
        run(STEPS * 0.1 * ms)
        device.build(directory=build, compile=True, run=True, with_output=False)
        dt = 0.1 * 0.001
        step = np.rint(np.asarray(spikes.t_[:]) / dt).astype(np.int32)
        assert np.array_equal(np.asarray(spikes.t_[:]), step * dt), "Brian2's spike times are not n * dt"
        np.savez_compressed(out, i=np.asarray(spikes.i[:], dtype=np.int32), step=step,
                            v012=np.asarray(state.v_[:]), brian2=brian2.__version__, sympy=sympy.__version__)
    print(f"{out}: {step.size} spikes in {STEPS} steps (Brian2 {brian2.__version__}, sympy {sympy.__version__})")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="tests/spiking/data/brian2_cuba_100ms.npz")
    parser.add_argument("--seeds", type=int, nargs="+", help="rasters of these seeds (the statistics test)")
    parser.add_argument("--steps", type=int, default=10 * STEPS, help="steps of the --seeds runs (default 1 s)")
    parser.add_argument("--delays", action="store_true", help="the 100 ms raster with a delay per synapse")
    args = parser.parse_args()
    if args.delays:
        with tempfile.TemporaryDirectory() as build:
            i, step = brian2_raster(SEED, STEPS, build, delays=True)
        out = args.out if args.out != parser.get_default("out") else "tests/spiking/data/brian2_cuba_delays_100ms.npz"
        np.savez_compressed(out, i=i, step=step)
        print(f"{out}: {i.size} spikes in {STEPS} steps with per-synapse delays")
    elif args.seeds:
        main_seeds(args.out, args.seeds, args.steps)
    else:
        main(args.out)
