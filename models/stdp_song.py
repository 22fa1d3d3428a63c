"""Song, Miller & Abbott (2000): one conductance-based LIF unit learning from 1,000 Poisson inputs by STDP (issue 42).

The circuit of Brian2's ``examples/synapses/STDP.py``, which practitioners run
as the reference form of the paper's Fig. 1/2 experiment: ``N_INPUTS``
excitatory Poisson inputs at one rate onto one leaky integrate-and-fire unit
with an exponentially decaying excitatory conductance
(:class:`neurosim.LIFConductance`: ``tau_m`` = 10 ms, ``E_L`` = -74 mV,
threshold -54 mV, reset -60 mV, ``E_e`` = 0, ``tau_e`` = 5 ms, no refractory
period), synapses initialised uniformly in ``[0, g_max)`` and learning by
STDP (``g_max`` = 0.01, ``d_pre`` = 0.01 ``g_max``, ``d_post`` = -1.05
``d_pre``, 20 ms traces). Song et al. also had 200 inhibitory inputs and
``tau_m`` = 20 ms; the Brian2 example (and this circuit) leaves them out.

:func:`song_network` builds it with any of neurosim's STDP rules
(``rule="additive" | "multiplicative" | "triplet"``, the same amplitudes in
units of ``g_max``); :func:`song_run` runs it and returns what the paper
plots: the final weights and the output rate in time bins.

References
----------
S. Song, K. D. Miller, L. F. Abbott, "Competitive Hebbian learning through
spike-timing-dependent synaptic plasticity", Nature Neuroscience 3:919-926, 2000.
"""

from __future__ import annotations

import numpy as np

__all__ = ["N_INPUTS", "DT", "G_MAX", "RULES", "song_network", "song_run"]

#: Poisson inputs
N_INPUTS = 1000
#: time step, seconds
DT = 1e-4
#: the weights' upper bound (in units of the leak conductance)
G_MAX = 0.01
#: the plasticity rules :func:`song_network` builds
RULES = ("additive", "multiplicative", "triplet", "none")
#: the unit's parameters (Brian2's example), SI
NEURON = dict(tau_m=0.01, tau_e=0.005, v_threshold=-0.054, v_reset=-0.06, v_rest=-0.074, e_e=0.0, refractory=0.0)


def _rule(rule: str, g_max: float):
    import neurosim as ns

    d_pre = 0.01 * g_max
    if rule in ("additive", "multiplicative"):
        return ns.STDP("ge", tau_pre=0.02, tau_post=0.02, d_pre=d_pre, d_post=-1.05 * d_pre, w_max=g_max,
                       weight_dependence=rule)
    if rule == "triplet":
        # Pfister & Gerstner's visual-cortex amplitudes (weights in [0, 1]) scaled to [0, g_max)
        return ns.TripletSTDP("ge", a2_plus=5e-10 * g_max, a3_plus=6.2e-3 * g_max, a2_minus=7e-3 * g_max,
                              a3_minus=2.3e-4 * g_max, w_max=g_max)
    if rule == "none":
        return ns.OnPre("ge")
    raise ValueError(f"rule must be one of {RULES}; got {rule!r}")


def song_network(rate_hz: float = 15.0, rule: str = "additive", seed: int = 0, n_inputs: int = N_INPUTS,
                 g_max: float = G_MAX):
    """The circuit: ``inputs`` (Poisson) -> ``S`` (plastic) -> ``neuron`` (one conductance-based LIF unit).

    Parameters
    ----------
    rate_hz : float > 0
        Every input's rate, Hz.
    rule : {"additive", "multiplicative", "triplet", "none"}
        The plasticity of ``S`` (``"none"``: fixed weights, transmission only).
    seed : int >= 0
        Seeds the initial weights and the input spikes.
    n_inputs : int >= 1
        Poisson inputs (default 1,000).
    g_max : float > 0
        The weights' upper bound, in units of the leak conductance (default 0.01).

    Returns
    -------
    neurosim.Network
        With ``dt`` = 0.1 ms and the unit's spikes recorded (``"neuron"``).

    Raises
    ------
    ValueError
        An unknown ``rule`` or a bad rate (by :class:`neurosim.PoissonStream`).
    """
    import neurosim as ns

    rule_obj = _rule(rule, g_max)
    net = ns.Network(dt=DT, seed=seed)
    inputs = ns.Population("inputs", n_inputs)
    neuron = ns.Population("neuron", 1, dynamics=ns.LIFConductance(**NEURON))
    net.add(inputs, neuron)
    net.connect(ns.PoissonStream(rate_hz, dt=DT, dim=n_inputs, seed=seed), inputs)
    net.add(ns.Projection("S", inputs, neuron, connectivity=ns.AllToAll(), init=ns.Uniform(0.0, g_max),
                          rule=rule_obj))
    neuron.state["v"][:] = NEURON["v_rest"]
    net.record(neuron, ["activity"])
    return net


def song_run(seconds: float = 100.0, rate_hz: float = 15.0, rule: str = "additive", seed: int = 0,
             bin_seconds: float = 1.0, n_inputs: int = N_INPUTS, g_max: float = G_MAX):
    """Run the circuit; the final weights and the output rate per time bin.

    Parameters
    ----------
    seconds : float > 0
        Biological time (Song et al. and Brian2's example: 100 s).
    rate_hz, rule, seed, n_inputs, g_max
        As :func:`song_network`.
    bin_seconds : float > 0
        The output rate's bins.

    Returns
    -------
    xarray.Dataset
        ``weights`` (``synapse``), ``output_rate_hz`` (``bin``), attributes
        ``rate_hz``, ``rule``, ``seconds``.
    """
    import xarray as xr

    net = song_network(rate_hz, rule, seed, n_inputs, g_max)
    steps = int(round(seconds / DT))
    bin_steps = max(1, int(round(bin_seconds / DT)))
    net.run(steps, progress=False)
    spikes = net.recorders["neuron"].to_dataset().activity.values.reshape(-1)
    n_bins = steps // bin_steps
    rate = spikes[:n_bins * bin_steps].reshape(n_bins, bin_steps).sum(axis=1) / (bin_steps * DT)
    return xr.Dataset({"weights": ("synapse", np.asarray(net.projections["S"].weights, dtype=float).reshape(-1) / g_max),
                       "output_rate_hz": ("bin", rate)},
                      coords={"bin_start_s": ("bin", np.arange(n_bins) * bin_steps * DT)},
                      attrs={"rate_hz": float(rate_hz), "rule": rule, "seconds": float(seconds), "g_max": g_max,
                             "weights_units": "g_max"})
