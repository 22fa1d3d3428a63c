"""Brian2's weight trajectory of pair-based STDP on fixed spike trains: the oracle of tests/spiking/test_stdp_brian2.py.

Runs in an environment with Brian2 (``/path/to/brian2-venv/bin/python
benchmarks/brian2_stdp_reference.py OUT.npz``). ``N`` synapses from spike
generators onto one post unit driven by its own spike generator, with
Brian2's ``examples/synapses/STDP.py`` rule (traces per synapse, event-driven)
and without transmission; the spike trains and initial weights come from
:func:`stdp_inputs` (NumPy's PCG64: the same on every machine), including
steps where pre and post spike together. C++ standalone, one thread,
``-ffp-contract=off`` (see ``brian2_cuba_reference.py``). Writes ``w``, the
weights after every step (``StateMonitor(when="end")``), shape (N, T).
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np

N, T, SEED = 50, 5000, 7  # 0.5 s at 0.1 ms
TAU_PRE = TAU_POST = 20 * 0.001
G_MAX = 0.01


def stdp_constants():
    """``(d_pre, d_post)`` as the example computes them (``dApost = -dApre taupre / taupost 1.05``, both times gmax)."""
    d_pre = 0.01
    d_post = -d_pre * TAU_PRE / TAU_POST * 1.05
    return d_pre * G_MAX, d_post * G_MAX


def stdp_inputs(seed: int = SEED):
    """``(pre_steps, pre_units, post_steps, w0)``: 15 Hz pre trains, a 20 Hz post train with 20 forced coincidences."""
    rng = np.random.default_rng(seed)
    pre_mask = rng.random((T, N)) < 15 * 1e-4
    post_mask = rng.random(T) < 20 * 1e-4
    post_mask[np.nonzero(pre_mask.any(1))[0][:20]] = True
    pn, pi = np.nonzero(pre_mask)
    return pn, pi, np.nonzero(post_mask)[0], rng.random(N) * G_MAX


def main(out: str) -> None:
    import brian2
    from brian2 import (SpikeGeneratorGroup, StateMonitor, Synapses, defaultclock, device, ms, prefs, run,
                        set_device)

    pn, pi, qn, w0 = stdp_inputs()
    with tempfile.TemporaryDirectory() as build:
        set_device("cpp_standalone", directory=build, build_on_run=False)
        prefs.devices.cpp_standalone.openmp_threads = 0
        prefs.devices.cpp_standalone.extra_make_args_unix = ["-j1"]
        prefs.codegen.cpp.extra_compile_args_gcc = ["-w", "-O3", "-std=c++11", "-ffp-contract=off"]
        dt = defaultclock.dt
        taupre = taupost = 20 * ms  # noqa: F841 (read by Brian2's equations)
        gmax = G_MAX  # noqa: F841
        dApre, dApost = stdp_constants()  # noqa: F841
        inp = SpikeGeneratorGroup(N, pi, pn * dt)
        post = SpikeGeneratorGroup(1, np.zeros(len(qn), dtype=int), qn * dt)
        S = Synapses(inp, post, """w : 1
                        dApre/dt = -Apre / taupre : 1 (event-driven)
                        dApost/dt = -Apost / taupost : 1 (event-driven)""",
                     on_pre="""Apre += dApre
                            w = clip(w + Apost, 0, gmax)""",
                     on_post="""Apost += dApost
                             w = clip(w + Apre, 0, gmax)""")
        S.connect(i=np.arange(N), j=np.zeros(N, dtype=int))
        S.w = w0
        mon = StateMonitor(S, "w", record=True, when="end")
        run(T * dt)
        device.build(directory=build, compile=True, run=True, with_output=False)
        np.savez_compressed(out, w=np.asarray(mon.w[:]), brian2=brian2.__version__)
    print(f"{out}: {N} synapses, {T} steps (Brian2 {brian2.__version__})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/spiking/data/brian2_stdp_trajectory.npz")
