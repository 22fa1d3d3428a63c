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

``--variants OUT.npz`` runs the other rules of :class:`neurosim.STDP` and
:class:`neurosim.TripletSTDP` on the same trains (one network, one build):
additive with nearest-spike pairing, multiplicative (soft bounds) with
all-to-all and nearest-spike pairing, and Pfister & Gerstner's triplet rule
all-to-all and nearest-spike, each written as a Brian2 user writes it
(:data:`VARIANTS`); one array per rule, shape (N, T).
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np

N, T, SEED = 50, 5000, 7  # 0.5 s at 0.1 ms
TAU_PRE = TAU_POST = 20 * 0.001
G_MAX = 0.01


#: Pfister & Gerstner's (2006) time constants (visual cortex fit) and test amplitudes scaled by ``G_MAX``
TRIPLET_TAUS = {"tau_plus": 16.8e-3, "tau_minus": 33.7e-3, "tau_x": 101e-3, "tau_y": 125e-3}
TRIPLET_AMPLITUDES = {"a2_plus": 0.005 * G_MAX, "a3_plus": 0.0062 * G_MAX, "a2_minus": 0.007 * G_MAX,
                      "a3_minus": 0.0023 * G_MAX}

_PAIR = """w : 1
dApre/dt = -Apre / taupre : 1 (event-driven)
dApost/dt = -Apost / taupost : 1 (event-driven)"""
_TRIPLET = """w : 1
dr1/dt = -r1 / tau_plus : 1 (event-driven)
dr2/dt = -r2 / tau_x : 1 (event-driven)
do1/dt = -o1 / tau_minus : 1 (event-driven)
do2/dt = -o2 / tau_y : 1 (event-driven)"""
_SOFT_PRE, _SOFT_POST = "w = clip(w + w * Apost / gmax, 0, gmax)", "w = clip(w + (gmax - w) * Apre / gmax, 0, gmax)"
_TRIPLET_PRE = "w = clip(w - o1 * (A2m + A3m * r2), 0, gmax)"
_TRIPLET_POST = "w = clip(w + r1 * (A2p + A3p * o2), 0, gmax)"
#: rule name -> (Brian2 model, on_pre, on_post); the names say neurosim's parameters
VARIANTS = {
    "additive_nearest": (_PAIR, "Apre = dApre\nw = clip(w + Apost, 0, gmax)", "Apost = dApost\nw = clip(w + Apre, 0, gmax)"),
    "multiplicative_all": (_PAIR, f"Apre += dApre\n{_SOFT_PRE}", f"Apost += dApost\n{_SOFT_POST}"),
    "multiplicative_nearest": (_PAIR, f"Apre = dApre\n{_SOFT_PRE}", f"Apost = dApost\n{_SOFT_POST}"),
    "triplet_all": (_TRIPLET, f"{_TRIPLET_PRE}\nr1 += 1\nr2 += 1", f"{_TRIPLET_POST}\no1 += 1\no2 += 1"),
    "triplet_nearest": (_TRIPLET, f"{_TRIPLET_PRE}\nr1 = 1\nr2 = 1", f"{_TRIPLET_POST}\no1 = 1\no2 = 1"),
}


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


def main(out: str, variants: bool = False) -> None:
    import brian2
    from brian2 import (Network, SpikeGeneratorGroup, StateMonitor, Synapses, defaultclock, device, ms, prefs, second,
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
        tau_plus, tau_minus, tau_x, tau_y = (TRIPLET_TAUS[k] * second for k in TRIPLET_TAUS)  # noqa: F841
        A2p, A3p, A2m, A3m = TRIPLET_AMPLITUDES.values()  # noqa: F841
        rules = VARIANTS if variants else {"w": (_PAIR, "Apre += dApre\nw = clip(w + Apost, 0, gmax)",
                                                 "Apost += dApost\nw = clip(w + Apre, 0, gmax)")}
        objects, monitors = [inp, post], {}
        for name, (model, on_pre, on_post) in rules.items():
            S = Synapses(inp, post, model, on_pre=on_pre, on_post=on_post, name=f"S_{name}")
            S.connect(i=np.arange(N), j=np.zeros(N, dtype=int))
            S.w = w0
            monitors[name] = StateMonitor(S, "w", record=True, when="end", name=f"M_{name}")
            objects += [S, monitors[name]]
        Network(*objects).run(T * dt)
        device.build(directory=build, compile=True, run=True, with_output=False)
        np.savez_compressed(out, **{k: np.asarray(m.w[:]) for k, m in monitors.items()}, brian2=brian2.__version__)
    print(f"{out}: {len(rules)} rules, {N} synapses, {T} steps (Brian2 {brian2.__version__})")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--variants"]
    variants = "--variants" in sys.argv[1:]
    default = "tests/spiking/data/brian2_stdp_variants.npz" if variants else "tests/spiking/data/brian2_stdp_trajectory.npz"
    main(args[0] if args else default, variants)
