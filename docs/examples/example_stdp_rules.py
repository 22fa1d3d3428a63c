"""
Three STDP rules on the same inputs, in one sweep
=================================================

Song, Miller & Abbott's (2000) circuit (:mod:`neurosim.models.stdp_song`):
1,000 Poisson inputs at 20 Hz onto one conductance-based LIF unit, with
additive STDP (hard bounds), multiplicative STDP (soft bounds) or
Pfister & Gerstner's triplet rule, compared in one :class:`~neurosim.Sweep`.
The seed draws the initial weights and the input spikes, so the three rules
learn from the same spike trains. 5 s here; the full comparison (100 s, three
input rates, three seeds) is ``simulations/spiking_song_stdp.py``.
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
from neurosim.models.stdp_song import song_run

sweep = ns.Sweep(song_run, grid={"rule": ["additive", "multiplicative", "triplet"]}, seeds=[0],
                 fixed={"seconds": 5.0, "rate_hz": 20.0, "bin_seconds": 0.5})
ds = sweep.run(progress=False)

# %%
# Additive STDP pushes the weights towards the bounds (the bimodal
# distribution Song et al. found) and lowers the output rate; soft bounds
# keep one mode in the middle; the triplet rule, without the homeostasis
# Pfister & Gerstner add to it, potentiates every synapse at these rates.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
for rule in ds.rule.values:
    ax1.hist(ds.weights.sel(rule=rule, seed=0), bins=np.linspace(0, 1, 21), histtype="step", label=str(rule))
    ax2.plot(ds.bin_start_s, ds.output_rate_hz.sel(rule=rule, seed=0), marker=".", label=str(rule))
ax1.set_xlabel("weight / g_max after 5 s")
ax1.set_ylabel("synapses")
ax2.set_xlabel("time (s)")
ax2.set_ylabel("output rate (Hz)")
ax2.legend()
fig.tight_layout()
plt.show()
