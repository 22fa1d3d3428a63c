"""
Sparse coding of natural images (paper 001)
===========================================

Efficient sparse coding (Lee et al.): feature-sign search for exact lasso
codes, and bases learned by alternating codes and a constrained least
squares step. :class:`~neurosim.estimators.DictionaryLearner` follows
scikit-learn's estimator contract. Full reproduction: ``neurosim run
sc_fig2_bases`` (:doc:`/reports/paper001`).
"""

import matplotlib.pyplot as plt
import numpy as np

import neurosim.plot
from neurosim.coding.encoders import feature_sign, omp
from neurosim.data.images import sample_patches
from neurosim.estimators import DictionaryLearner

# %%
# 2000 whitened 8x8 patches of natural images (shipped with scikit-image),
# 64 atoms, 15 alternations.
X = sample_patches(2000, 8, seed=0)
learner = DictionaryLearner(n_components=64, alpha=0.2, max_iter=15, random_state=0).fit(X)
D = learner.components_
print("dictionary:", D.shape, "largest atom norm:", round(float(np.linalg.norm(D, axis=1).max()), 3))

# %%
# Codes: the exact lasso solution has few nonzeros; OMP with 5 atoms per
# patch reconstructs the patch from exactly 5.
A = feature_sign(X[:100], D, lam=0.2)
A5 = omp(X[:100], D, n_nonzero=5)
print(f"lasso codes: {(A != 0).mean():.1%} nonzero")
print(f"OMP, 5 atoms: relative reconstruction error {np.linalg.norm(X[:100] - A5 @ D) / np.linalg.norm(X[:100]):.2f}")

# %%
# The atoms are localized, oriented edges (Gabor-like), as in the paper's
# Fig. 2.
fig, ax = plt.subplots(figsize=(5, 5), constrained_layout=True)
neurosim.plot.tiles(D, ax=ax)
ax.set_title("64 learned bases (8x8)")
