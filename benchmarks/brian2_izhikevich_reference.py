"""Brian2's raster and trajectories of Izhikevich's (2003) network: the oracle of tests/spiking/test_izhikevich_brian2.py.

Runs in an environment with Brian2 (``/work/venvs/brian2/bin/python
benchmarks/brian2_izhikevich_reference.py [OUT.npz]``). The network is the
paper's 800 excitatory and 200 inhibitory units with per-unit ``a, b, c, d``,
made sparse with constant input currents (:mod:`neurosim.models.izhikevich`,
whose :func:`izhikevich_inputs` draws every number; imported by path, it
needs only NumPy), in the model as Brian2 users write it::

    dv/dt = (0.04/ms/mV)*v**2 + (5/ms)*v + 140*mV/ms - u + I : volt
    du/dt = a*(b*v - u) : volt/second
    threshold: v >= 30*mV      reset: v = c; u += d      method: euler
    synapses: on_pre="v_post += w" (excitatory, then inhibitory)

C++ standalone, one thread, compiled with ``-ffp-contract=off`` (see
``brian2_cuba_reference.py``: Brian2's default flags let the compiler fuse
multiply-adds). 1 s at dt = 0.1 ms: long enough that the raster itself
tells arithmetics apart (the same model in another expression order, e.g.
``v + dt*(0.04e6*v*v + 5000*v + 140 - u + I)``, gives the same spikes for
the first 5,588 steps, then others), besides ``v`` and ``u``, which differ
from step 4 on (0-based).

Writes ``i``, ``step`` (the spikes, by time then unit); ``units`` and ``v``
of those units at the end of every step (after the resets: a
``StateMonitor`` with ``when="end"``, shape ``(steps, len(units))``);
``snapshot_steps`` (999, 1999, ..., 9999) and ``snapshot_v``,
``snapshot_u`` of every unit at the end of those steps (shape
``(len(snapshot_steps), n)``); the lines of
Brian2's generated state update that compute ``_v`` and ``_u`` (the
arithmetic neurosim's kernel copies); the Brian2 and sympy versions.
"""

from __future__ import annotations

import pathlib
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))
from izhikevich import N_EXCITATORY, izhikevich_inputs  # noqa: E402

sys.path.pop(0)
SEED = 2003
#: 1 s at dt = 0.1 ms
STEPS = 10000
#: every unit's v and u are kept every SNAPSHOT steps: at the end of steps SNAPSHOT - 1, 2 SNAPSHOT - 1, ...
#: (0-based), which neurosim's ``record(..., every=SNAPSHOT)`` samples
SNAPSHOT = 1000
#: the units whose v and u are kept at every step (excitatory, regular spiking to chattering; inhibitory)
UNITS = [0, 400, 900]


def generated_lines(build: str) -> tuple[str, str]:
    """The lines of Brian2's generated state updater that compute ``_v`` and ``_u``."""
    code = (pathlib.Path(build) / "code_objects" / "neurongroup_stateupdater_codeobject.cpp").read_text()
    found = [re.search(rf"const double {name} = .*;", code) for name in ("_v", "_u")]
    return tuple(m.group(0) if m else "" for m in found)  # type: ignore[return-value]


def main(out: str) -> None:
    import brian2
    import sympy
    from brian2 import (NeuronGroup, SpikeMonitor, StateMonitor, Synapses, defaultclock, device, mV, ms, prefs,
                        run, second, set_device, volt)

    x = izhikevich_inputs(SEED)
    with tempfile.TemporaryDirectory() as build:
        set_device("cpp_standalone", directory=build, build_on_run=False)
        prefs.devices.cpp_standalone.openmp_threads = 0
        prefs.devices.cpp_standalone.extra_make_args_unix = ["-j1"]
        prefs.codegen.cpp.extra_compile_args_gcc = ["-w", "-O3", "-std=c++11", "-ffp-contract=off"]
        defaultclock.dt = 0.1 * ms
        eqs = """
        dv/dt = (0.04/ms/mV)*v**2 + (5/ms)*v + 140*mV/ms - u + I : volt
        du/dt = a*(b*v - u) : volt/second
        a : 1/second
        b : 1/second
        c : volt
        d : volt/second
        I : volt/second
        """
        P = NeuronGroup(x["a"].size, eqs, threshold="v >= 30*mV", reset="v = c; u += d", method="euler")
        P.a = x["a"] / second
        P.b = x["b"] / second
        P.c = x["c"] * volt
        P.d = x["d"] * volt / second
        P.I = x["I"] * volt / second
        P.v = x["v0"] * volt
        P.u = x["u0"] * volt / second
        pre, post, weights = x["pre"], x["post"], x["w"]
        e = pre < N_EXCITATORY
        # named so that Brian2 runs them in this order (same slot and order: by name), as neurosim adds them
        Se = Synapses(P, P, "w : volt", on_pre="v_post += w", name="se")
        Si = Synapses(P, P, "w : volt", on_pre="v_post += w", name="si")
        Se.connect(i=pre[e], j=post[e])
        Si.connect(i=pre[~e], j=post[~e])
        Se.w = weights[e] * volt
        Si.w = -weights[~e] * volt
        spikes = SpikeMonitor(P)
        trace = StateMonitor(P, "v", record=UNITS, when="end")
        # at the start of steps 0, SNAPSHOT, ...: the state after steps SNAPSHOT - 1, ... (the first is the initial
        # state, dropped; the state after the last step is read after the run)
        snapshots = StateMonitor(P, ["v", "u"], record=True, when="start", dt=SNAPSHOT * 0.1 * ms)
        run(STEPS * 0.1 * ms)
        device.build(directory=build, compile=True, run=True, with_output=False)
        line_v, line_u = generated_lines(build)
        dt = 0.1 * 0.001
        t = np.asarray(spikes.t_[:])
        step = np.rint(t / dt).astype(np.int32)
        assert np.array_equal(t, step * dt), "Brian2's spike times are not n * dt"
        v = np.asarray(trace.v_[:]).T
        started = np.rint(np.asarray(snapshots.t_[:]) / dt).astype(np.int32)
        assert np.array_equal(started, np.arange(0, STEPS, SNAPSHOT))
        snapshot_steps = np.append(started[1:], STEPS) - 1
        snapshot_v = np.vstack([np.asarray(snapshots.v_[:]).T[1:], np.asarray(P.v_[:])])
        snapshot_u = np.vstack([np.asarray(snapshots.u_[:]).T[1:], np.asarray(P.u_[:])])
        assert np.array_equal(snapshot_v[:, UNITS], v[snapshot_steps]), "the snapshots are not at the ends of steps"
        np.savez_compressed(out, i=np.asarray(spikes.i[:], dtype=np.int32), step=step, units=np.array(UNITS), v=v,
                            snapshot_steps=snapshot_steps, snapshot_v=snapshot_v, snapshot_u=snapshot_u,
                            line_v=line_v, line_u=line_u, seed=SEED, steps=STEPS, brian2=brian2.__version__,
                            sympy=sympy.__version__)
    print(f"{out}: {step.size} spikes in {STEPS} steps (Brian2 {brian2.__version__}, sympy {sympy.__version__})")
    print(line_v)
    print(line_u)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/spiking/data/brian2_izhikevich_1s.npz")
