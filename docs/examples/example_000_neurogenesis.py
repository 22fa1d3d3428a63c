"""
Neurogenesis: a dictionary that grows when the data change (paper 000)
======================================================================

Online dictionary learning whose atoms are born when the reconstruction
accuracy drops and die when the group-sparsity shrink zeroes them
(Garg et al., NODL). :class:`~neurosim.estimators.NeurogenesisDictionaryLearner`
wraps the circuit of :mod:`neurosim.models.neurogenesis` as a scikit-learn
estimator. Full reproduction: ``neurosim run ng_images_two_domains`` and the
others of :doc:`/reports/paper000`.
"""

import matplotlib.pyplot as plt
import numpy as np

from neurosim.estimators import NeurogenesisDictionaryLearner

# %%
# Two domains: 32-dimensional data on two different random 6-dimensional
# subspaces. The dictionary starts with 8 atoms, learns the first domain,
# then sees the second.
rng = np.random.default_rng(0)
X1 = rng.standard_normal((400, 6)) @ rng.standard_normal((6, 32))
X2 = rng.standard_normal((400, 6)) @ rng.standard_normal((6, 32))
est = NeurogenesisDictionaryLearner(n_components=8, batch_size=50, n_nonzero_coefs=4, random_state=0)
est.fit(X1)
size_after_first = est.n_components_
score_before = est.score(X2)
est.partial_fit(X2)
print(f"atoms: 8 at the start, {size_after_first} after domain 1, {est.n_components_} after domain 2")
print(f"Pearson accuracy on domain 2: {score_before:.3f} before learning it, {est.score(X2):.3f} after")
print(f"accuracy on domain 1 after domain 2: {est.score(X1):.3f}")

# %%
# Eight atoms cannot reconstruct 6-dimensional data with 4 nonzeros each
# well enough: while the batch accuracy ``p_c`` is below the threshold,
# new random atoms are born (NODL's ``k_n = (1 - p_c) c_k`` per step), and
# the group-sparsity shrink kills the atoms that end up unused, so the size
# settles where the data are reconstructed (27 here). The second
# domain lies in another subspace: its accuracy starts low, more atoms are
# born, and the first domain is still reconstructed afterwards because its
# atoms were kept -- the point of the paper.
#
# Every birth and death is an event of the network, with its step.
log = est.event_log_
steps = np.asarray(log["step"])
change = np.where(np.asarray(log["kind"]) == "birth", 1, -1)
order = np.argsort(steps, kind="stable")
n_steps = (len(X1) + len(X2)) // 50                  # one step per mini-batch of 50
fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
ax.step(np.r_[0, steps[order], n_steps], 8 + np.r_[0, np.cumsum(change[order]), change.sum()], where="post")
ax.axvline(len(X1) // 50 + 0.5, color="k", ls="--", lw=0.8, label="domain 2 starts")
ax.set(xlabel="mini-batch (step)", ylabel="atoms alive", title="dictionary size", xlim=(0, n_steps))
ax.legend(loc="lower right")

# %%
# The births and deaths happen in the first mini-batch of each domain, where
# the accuracy is low (the newborn atoms are used at once: the batch is
# re-encoded with them in the same step); afterwards the size stays put.
