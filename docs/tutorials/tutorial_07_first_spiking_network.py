"""
7. Your first spiking network
=============================

Spiking units run on the same engine as rate units: a population's
dynamics integrate the membrane and emit spikes (its ``activity`` is 1.0
where a unit spiked in the step), projections carry the spikes with
:class:`~neurosim.OnPre`, and spike-timing rules such as
:class:`~neurosim.STDP` learn from them. Time is in seconds and potentials
in volts, as Brian2 computes them; ``Network(dt=...)`` sets the step.
"""

# %%
# Poisson inputs onto leaky integrate-and-fire units
# --------------------------------------------------
# 200 Poisson inputs at 20 Hz drive 50 current-based LIF units through a
# sparse projection (each input reaches each unit with probability 0.2). A
# spike adds the synapse's weight (volts) to the unit's excitatory current
# ``ge``, which decays with ``tau_e``.
import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
from neurosim.analysis import firing_rates, isi_cv, spike_events


def poisson_onto_lif(rule):
    """200 Poisson inputs at 20 Hz onto 50 LIF units through synapses that follow ``rule``; the network and ``S``."""
    net = ns.Network(dt=1e-4, seed=0)
    inputs = ns.Population("inputs", 200)
    units = ns.Population("units", 50, dynamics=ns.LIF(v_rest=-0.06, refractory=0.002))
    net.add(inputs, units)
    net.connect(ns.PoissonStream(20.0, dt=1e-4, dim=200, seed=1), inputs)
    S = net.add(ns.Projection("S", inputs, units, connectivity=ns.FixedProbability(0.2),
                              init=ns.Uniform(0.0, 0.004), rule=rule))
    return net, S


net, S = poisson_onto_lif(ns.OnPre("ge"))
units = net.populations["units"]
net.record(units, ["activity"])
net.run(5000)  # 0.5 s

# %%
# A recording of spiking activity becomes a list of spike events (unit id,
# step and time), from which the usual statistics follow.
events = spike_events(net.recorders["units"].to_dataset())
rates = firing_rates(events, units=units.ids)
print(f"{events.sizes['spike']} spikes, mean rate {float(rates.mean()):.1f} Hz, "
      f"mean CV of the ISIs {float(isi_cv(events).mean()):.2f}")
ax = ns.plot.raster(events)
ax.set_title("50 LIF units driven by 200 Poisson inputs")
plt.show()

# %%
# Learning with STDP
# ------------------
# The same circuit with pair-based STDP on the input synapses
# (Song et al. 2000; ``ns.STDP("ge")`` transmits into ``ge`` and learns).
# Its traces live per synapse, so STDP needs sparse storage, which
# ``connectivity=`` gives. Causal pairs (input before output) strengthen a
# synapse, the others weaken it; depression is 5 % stronger.
net, S = poisson_onto_lif(ns.STDP("ge", d_pre=4e-5, d_post=-4.2e-5, w_max=0.004))
w0 = S.weights.copy()
net.run(20_000)  # 2 s
fig, ax = plt.subplots()
ax.hist(w0 / 0.004, bins=20, histtype="step", label="start")
ax.hist(S.weights / 0.004, bins=20, histtype="step", label="after 2 s of STDP")
ax.set_xlabel("weight / w_max")
ax.legend()
plt.show()

# %%
# Your own spike-timing rule
# --------------------------
# :func:`neurosim.trace_rule` turns two plain functions into a compiled rule:
# what a synapse does on a pre spike and on a post spike, with its traces
# decayed to the spike's time. Each function takes the weight, the traces in
# the declared order, then any declared parameters by name, and returns the
# new weight and traces. This one potentiates on post spikes by the pre
# trace and depresses on pre spikes by a constant, a simple rule that keeps
# the weights of inputs that do not help the unit fire low.
from neurosim.params import Float


def pre_spike(w, x, a_minus, w_max):
    return min(max(w - a_minus, 0.0), w_max), x + 1.0


def post_spike(w, x, a_plus, w_max):
    return min(max(w + a_plus * x, 0.0), w_max), x


Potentiate = ns.trace_rule(pre_spike, post_spike, traces={"x": "tau_x"},
                           params={"tau_x": Float(0.02, low=0.0, low_open=True), "a_plus": Float(4e-5, low=0.0),
                                   "a_minus": Float(1e-5, low=0.0), "w_max": Float(0.004, low=0.0, low_open=True)},
                           name="Potentiate")
net, S = poisson_onto_lif(Potentiate("ge"))
net.run(10_000)
print(S.rule)
print(f"mean weight {S.weights.mean() / 0.004:.3f} w_max (it started at 0.5)")

# %%
# Where to go next: :class:`~neurosim.LIFConductance` (conductance-based
# units), :class:`~neurosim.Izhikevich`, :class:`~neurosim.TripletSTDP`,
# transmission delays (``OnPre("ge", delay=...)``), and the reproductions
# in ``simulations/spiking_cuba.py`` and ``simulations/spiking_song_stdp.py``,
# which match Brian2 bit for bit where the same arithmetic is run.
