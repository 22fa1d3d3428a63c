"""Brian2's spike raster of the COBA network (Brette et al. 2007, benchmark 1): the oracle of tests/spiking/test_coba_brian2.py.

Runs in an environment with Brian2 (``/path/to/brian2-venv/bin/python
benchmarks/brian2_coba_reference.py OUT.npz``). Brian2 has no LIF COBA
example; this is Brette's benchmark in Brian2's syntax with absolute
potentials (``dv/dt = (ge*(Ee-v)+gi*(Ei-v)-(v-El))/taum``, forward Euler,
which is what Brian2 chooses since ``method="exact"`` cannot solve it), on
the initial state and connectivity of :func:`neurosim.models.spiking.coba_inputs`
(imported by path: it needs only NumPy). C++ standalone, one thread,
``-ffp-contract=off`` (see ``brian2_cuba_reference.py``). Writes ``i`` and
``step`` of every spike in 100 ms.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "models"))
from spiking import N, N_EXCITATORY, coba_inputs  # noqa: E402

sys.path.pop(0)
STEPS = 1000


def main(out: str) -> None:
    import brian2
    from brian2 import NeuronGroup, SpikeMonitor, Synapses, device, mV, ms, prefs, run, set_device, volt

    v0, ge0, gi0, pre, post = coba_inputs()
    with tempfile.TemporaryDirectory() as build:
        set_device("cpp_standalone", directory=build, build_on_run=False)
        prefs.devices.cpp_standalone.openmp_threads = 0
        prefs.devices.cpp_standalone.extra_make_args_unix = ["-j1"]
        prefs.codegen.cpp.extra_compile_args_gcc = ["-w", "-O3", "-std=c++11", "-ffp-contract=off"]
        taum, taue, taui = 20 * ms, 5 * ms, 10 * ms  # noqa: F841
        Vt, Vr, El, Ee, Ei = -50 * mV, -60 * mV, -60 * mV, 0 * mV, -80 * mV  # noqa: F841
        eqs = """
        dv/dt  = (ge*(Ee-v)+gi*(Ei-v)-(v-El))/taum : volt (unless refractory)
        dge/dt = -ge/taue : 1
        dgi/dt = -gi/taui : 1
        """
        P = NeuronGroup(N, eqs, threshold="v>Vt", reset="v = Vr", refractory=5 * ms, method="euler")
        P.v = v0 * volt
        P.ge = ge0
        P.gi = gi0
        Ce = Synapses(P, P, on_pre="ge += 6/10")
        Ci = Synapses(P, P, on_pre="gi += 67/10")
        e = pre < N_EXCITATORY
        Ce.connect(i=pre[e], j=post[e])
        Ci.connect(i=pre[~e], j=post[~e])
        spikes = SpikeMonitor(P)
        run(STEPS * 0.1 * ms)
        device.build(directory=build, compile=True, run=True, with_output=False)
        step = np.rint(np.asarray(spikes.t_[:]) / 1e-4).astype(np.int32)
        np.savez_compressed(out, i=np.asarray(spikes.i[:], dtype=np.int32), step=step, brian2=brian2.__version__)
    print(f"{out}: {step.size} spikes in {STEPS} steps (Brian2 {brian2.__version__})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/spiking/data/brian2_coba_100ms.npz")
