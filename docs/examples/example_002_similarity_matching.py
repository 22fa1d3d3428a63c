"""
Self-calibrating similarity matching (paper 002)
================================================

Hebbian/anti-Hebbian networks that reduce dimensionality and set their own
output power (Chen, Pehlevan & Chklovskii), for the three regularizers.
Each learns online; its output spectrum is compared with the offline
optimum. Full reproductions: ``neurosim run sm_fig4_fig5_stationary`` and
``sm_fig6_nonstationary`` (:doc:`/reports/paper002`).
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim as ns
from neurosim.metrics import output_covariance
from neurosim.models.similarity_matching import build_network, offline_output_eigenvalues

spectrum = np.r_[5.0, 4.0, 3.0, np.full(13, 0.1)]
fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
for i, regularizer in enumerate(["TY", "XY", "YY"]):
    alpha = {"TY": 1.0, "XY": 0.1, "YY": 0.1}[regularizer]
    stream = ns.GaussianStream(spectrum, seed=1, eigenvectors="random")
    circuit = build_network(stream, 4, regularizer, alpha, tol=1e-8, max_iter=500, record_every=10, seed=0)
    circuit.run(20_000)
    Y = circuit.network.recorders["y"].to_dataset().activity.isel(batch=0).values[1000:]
    learned = np.sort(np.linalg.eigvalsh(output_covariance(Y)))[::-1]
    expected = offline_output_eigenvalues(spectrum, 4, regularizer, alpha)
    print(f"{regularizer}: learned {np.round(learned, 2)}  offline optimum {np.round(expected, 2)}")
    ax.plot(np.arange(4) + 0.1 * (i - 1), learned, "o", color=f"C{i}", label=f"{regularizer} learned")
    ax.plot(np.arange(4) + 0.1 * (i - 1), expected, "_", ms=14, color=f"C{i}")
ax.set(xticks=range(4), xlabel="output eigenvalue index", ylabel="eigenvalue",
       title="learned (dots) and offline optimum (bars)")
ax.legend(loc="upper right")

# %%
# ``TY`` subtracts ``alpha`` from each input eigenvalue, ``XY`` subtracts
# ``alpha`` times the total input power, ``YY`` shares the shrinkage among
# the active outputs; each sets how many outputs stay active (paper 002,
# Eqs. 4, 7, 10).
