"""
100,000 units with local receptive fields
=========================================

A retina of 224 x 224 input units projects onto a sheet of 224 x 224
output units through local receptive fields: each output unit is connected
to the inputs around its own position with probability
``exp(-d^2 / (2 sigma^2))`` (:class:`neurosim.connectivity.Gaussian`), so
the projection holds about 2 million synapses among 100,352 units --
stored sparsely (24 MB of weights and indices where a dense matrix would
take 20 GB).
The synapses learn by Oja's rule, a Hebbian rule whose decay term keeps each
unit's weight vector at unit norm, with a learning rate decaying as
``1/t`` (:class:`~neurosim.schedules.InverseTime`) so that the weights settle
(the largest local eigenvalue is about 30: the rate starts well below 1/30); the weights are recorded sparsely (one
value per synapse, ``synapse`` dimension) and plotted as images.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy import ndimage

import neurosim as ns
from neurosim.recording import synapses_to_scipy

SIDE = 224          # 224 x 224 = 50,176 inputs and as many outputs
SMOOTH = 2.0        # the input images are white noise blurred by a Gaussian of this width (pixels)


class BlurredNoise(ns.ChunkedRandomStream):
    """Images of white noise blurred by a Gaussian (wrapped at the borders), unit variance per pixel."""

    def __init__(self, seed=0):
        super().__init__(SIDE * SIDE, seed=seed, chunk=16)

    def _draw(self, rng, t0, n, batch):
        noise = rng.standard_normal((n * batch, SIDE, SIDE))
        blurred = ndimage.gaussian_filter(noise, sigma=(0, SMOOTH, SMOOTH), mode="wrap")
        blurred *= np.sqrt(4 * np.pi) * SMOOTH   # a 2-D Gaussian blur divides white noise's variance by 4 pi s^2
        return blurred.reshape(n, batch, SIDE * SIDE)


net = ns.Network(seed=0)
retina = ns.Population("retina", SIDE * SIDE)
sheet = ns.Population("sheet", SIDE * SIDE, dynamics=ns.Linear())
fields = ns.connectivity.Gaussian(2.5, pre_grid=(SIDE, SIDE), post_grid=(SIDE, SIDE), periodic=True, cutoff=2.5)
rate = ns.schedules.InverseTime(0.004, half_life=100)      # 0.004 / (1 + t / 100)
W = ns.Projection("W", retina, sheet, connectivity=fields, init=ns.Uniform(-0.05, 0.05), rule=ns.Oja(rate=rate))
net.add(retina, sheet, W)
net.connect(BlurredNoise(seed=1), retina)
net.record(W, "weights", every=250)
initial = W.to_scipy()                                       # the weights before learning, (post, pre)
print(W)
print(f"{W.n_synapses / sheet.size:.1f} synapses per output unit; weights and indices "
      f"{(W.weights.nbytes + W.synapse_index.nbytes()) / 2**20:.0f} MiB")

net.run(1000)
ds = net.recorders["W"].to_dataset()
print(ds.weights.dims, ds.weights.shape)

# %%
# Each unit's weights converge to the leading eigenvector of the input
# covariance restricted to its receptive field (Oja 1982). The blurred noise
# has the covariance ``exp(-d^2 / (4 s^2))`` between pixels ``d`` apart, so
# that eigenvector can be computed without the network: compare it with the
# learned weights of a few units.
post, pre = W.synapse_index.pairs()
rows, cols = np.divmod(np.arange(SIDE * SIDE), SIDE)


def local_principal_component(unit):
    mine = pre[post == unit]
    wrap = lambda d: (d + SIDE // 2) % SIDE - SIDE // 2  # noqa: E731  (distances on the torus)
    dy = wrap(rows[mine][:, None] - rows[mine][None, :])
    dx = wrap(cols[mine][:, None] - cols[mine][None, :])
    cov = np.exp(-(dy ** 2 + dx ** 2) / (4 * SMOOTH ** 2))
    return mine, np.linalg.eigh(cov)[1][:, -1]


last = synapses_to_scipy(ds, time=int(ds.time[-1]))        # (post, pre) csr_array at the last sample
units = [0, SIDE * SIDE // 2 + SIDE // 2, SIDE * SIDE - 1]
for unit in units:
    mine, v = local_principal_component(unit)
    w = last[[unit], :].toarray()[0, mine]
    print(f"unit {unit}: {mine.size} synapses, |w| = {np.linalg.norm(w):.4f}, "
          f"|cos(w, leading eigenvector)| = {abs(w @ v) / np.linalg.norm(w):.6f}")

# %%
# The receptive fields as images: the weights of a few units before
# learning and at the last recorded sample, each on the 15 x 15 patch of the
# retina around the unit (white: no synapse). They start as uniform noise and
# end as the smooth blob the eigenvector predicts (its sign is arbitrary:
# shown with a positive sum).


def field(weights, unit):
    image = np.full(SIDE * SIDE, np.nan)
    row = weights[[unit], :]
    image[row.indices] = row.data * np.sign(row.data.sum())
    r, c = divmod(unit, SIDE)
    return np.roll(image.reshape(SIDE, SIDE), (7 - r, 7 - c), axis=(0, 1))[:15, :15]


fig, axes = plt.subplots(2, len(units), figsize=(8, 5.5), constrained_layout=True)
for row, (label, weights) in enumerate([("before learning", initial), (f"step {int(ds.time[-1])}", last)]):
    for ax, unit in zip(axes[row], units):
        ax.imshow(field(weights, unit), cmap="RdBu_r", vmin=-0.4, vmax=0.4)
        ax.set(title=f"unit {unit}, {label}", xticks=[], yticks=[])
fig.suptitle("receptive fields (15 x 15 retina pixels around each unit)")

# %%
# The whole sheet at once: the distribution of the 50,176 weight norms at
# every recorded sample, from the recorded synapses (one value each) summed
# unit by unit. Oja's rule drives every norm to 1.
fig, ax = plt.subplots(figsize=(5, 3.2), constrained_layout=True)
for time in ds.time.values:
    sample = synapses_to_scipy(ds, time=int(time))
    norms = np.sqrt(np.asarray(sample.multiply(sample).sum(axis=1))).ravel()
    ax.hist(norms, bins=np.linspace(0.9, 1.1, 81), histtype="step", label=f"step {int(time)}")
    print(f"step {int(time)}: weight norms {norms.min():.4f} .. {norms.max():.4f}")
ax.set(xlabel="|w_i|", ylabel="units", title="weight norms of every output unit")
ax.legend()
