"""
Structured online dictionary learning with missing pixels (paper 003)
=====================================================================

Online group-structured dictionary learning (Szabó et al., OSDL): codes with
overlapping group sparsity on a torus of code units give a topographic
dictionary, learned from patches of which half the pixels are missing.
Full reproductions: ``neurosim run osdl_inpainting``, ``osdl_topographic``
(:doc:`/reports/paper003`).
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
import neurosim.plot
from neurosim.analysis.inpainting import InpaintingPatchStream
from neurosim.models.osdl import build_network

stream = InpaintingPatchStream(8, seed=0)                # 8x8 patches of the training photographs
masks = ns.BernoulliMaskStream(64, missing=0.5, seed=1)  # half of every patch's pixels missing
groups = ns.GroupStructure.torus(8, 8)                   # 3x3 neighbourhoods on an 8x8 torus of code units
circuit = build_network(stream, 64, groups=groups, kappa=0.01, masks=masks, batch=32, rho=4.0,
                        code_iter=20, code_tol=0.0)
circuit.run(60)
print(circuit.network.schedule())

# %%
# Filling in: fresh patches with half their pixels hidden are reconstructed
# from the observed half by the learned dictionary.
patches = stream.block(10_000, 1, 200)[0]
observed = ns.BernoulliMaskStream(64, missing=0.5, seed=2).block(0, 1, 200)[0]
filled = circuit.reconstruct(patches, observed)
hidden = observed == 0
print(f"mean absolute error on the hidden pixels: {np.abs(filled - patches)[hidden].mean():.3f} "
      f"(predicting the patch mean: {np.abs(patches - patches.mean(1, keepdims=True))[hidden].mean():.3f})")

# %%
# Neighbouring atoms on the torus are alike: the group structure makes the
# dictionary topographic.
fig, ax = plt.subplots(figsize=(5, 5), constrained_layout=True)
neurosim.plot.plot_topographic_map(circuit.network[circuit.dictionary.name].weights, groups, ax=ax)
ax.set_title("dictionary on the 8x8 torus")
