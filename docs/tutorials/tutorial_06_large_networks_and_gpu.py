"""
6. Large networks: sparse synapses, every core, and a GPU
=========================================================

A large network stores only the synapses it has (sparse projections); one
large network can use every core of the machine; many small networks can
run at once as an :class:`~neurosim.Ensemble`; and the rate-based circuits
can run on an NVIDIA GPU with ``backend="cuda"``. This page runs on any
machine: it shows the CPU path and what the GPU call is.
"""

# %%
# Sparse synapses
# ---------------
# A projection built with a ``connectivity`` stores one weight per synapse
# that exists, as Brian2 and NEST do, so memory grows with the synapses and
# not with ``post x pre``: 20,000 inputs onto 20,000 outputs with 50
# synapses each is a million weights (12 MB with their indices), where the
# dense matrix would take 3.2 GB. The descriptions are in
# :mod:`neurosim.connectivity` (``FixedProbability(p)``, ``FixedInDegree(k)``,
# ``FixedOutDegree(k)``, ``Gaussian`` receptive fields on grids,
# ``FromIndices`` or a ``scipy.sparse`` matrix); they are drawn from the
# network's seed.
import numpy as np

import neurosim as ns

net = ns.Network(seed=0)
x = ns.Population("x", 20_000)
y = ns.Population("y", 20_000, dynamics=ns.Linear())
W = ns.Projection("W", x, y, connectivity=ns.FixedInDegree(50), init=ns.Uniform(-0.2, 0.2),
                  rule=ns.Oja(rate=0.005))
net.add(x, y, W)
net.connect(ns.GaussianStream(np.ones(20_000), seed=1), x)      # i.i.d. unit-variance inputs
print(W)
print("weights and indices:", (W.weights.nbytes + W.synapse_index.nbytes()) // 2**20, "MiB")
print("weights of post unit 0 come from pre units", W.synapse_index.indices[:W.synapse_index.indptr[1]][:8], "...")

# %%
# Synapses can also be created and removed while the network runs
# (structural plasticity, as network events in the log): here every 50
# steps the synapses whose weight is below 0.02 in magnitude are pruned,
# and each output unit is grown back to 50 synapses with new random ones.
net.add(ns.PruneSynapses(W, threshold=0.02, every=50),
        ns.GrowSynapses(W, fan_in=50, init=ns.Uniform(-0.2, 0.2), every=50))
net.run(200)
log = net.event_log.to_dict()
print("unlinked:", log["kind"].count("unlink"), "linked:", log["kind"].count("link"),
      "synapses now:", W.n_synapses)

# %%
# Every rule that works synapse by synapse runs on sparse synapses (the
# drive, ``Hebbian``, ``Oja``, ``NormalizedHebbian``, ``Sanger``,
# ``OjaSubspace``, ``BCM``, ``Foldiak``, ``Delta``, the self-organising
# maps) and so do your own rules written for one synapse
# (``local_rule(..., per_synapse=True)``, :doc:`/rules`); recorders keep one
# value per synapse. The gallery example
# :doc:`/auto_examples/example_sparse_receptive_fields` learns local
# receptive fields in a network of 100,000 units.

# %%
# Threads
# -------
# ``ns.set_num_threads`` sets numba's thread pool and the BLAS libraries'
# threads together (or set ``NEUROSIM_NUM_THREADS`` before Python starts).
# Populations from about 512 x 512 weights up split their products and
# rules by rows over the threads; smaller ones keep the single-thread
# kernels.
from neurosim.cuda import CUDAUnavailableError
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream

print("cores available:", ns.max_threads())
X = np.random.default_rng(0).normal(size=(20, 1024))      # 20 samples of 1024 inputs, replayed in order


def make(seed=0):
    # paper 002's circuit, 1024 inputs -> 512 outputs; a fixed 30 Jacobi iterations per step
    return build_network(ArrayStream(X), 512, "XY", 0.1, tol=0.0, max_iter=30, seed=seed)


weights = {}
for threads in sorted({1, ns.max_threads()}):
    circuit = make()
    with ns.num_threads(threads):              # a block of code on this many threads
        circuit.run(40)                        # the first run of each kernel choice compiles, then it is cached
    weights[threads] = circuit.feedforward.weights.copy()
    print(f"ran 40 steps on {threads} thread(s)")

# %%
# The numbers do not depend on the thread count: any count >= 2 gives the
# same bits, and one thread agrees with them to rounding (each row is one
# thread's work, summed in the same order).
#
# :doc:`/performance` has the measured speed-ups (1.8-2x on two cores for a
# 4096 x 1024 network); this page does not time anything, because the build
# machine's load would make such numbers meaningless.
if len(weights) == 2:
    W1, W2 = weights[1], weights[ns.max_threads()]
    print("largest relative difference, 1 thread vs all:", float(np.abs(W1 - W2).max() / np.abs(W1).max()))

# %%
# Many networks at once
# ---------------------
# An :class:`~neurosim.Ensemble` runs networks of one structure (any
# parameters, any seeds) together and stacks their recordings along a
# ``network`` dimension.
small = lambda seed: build_network(ArrayStream(X[:, :64]), 8, "XY", 0.1, tol=0.0, max_iter=30, seed=seed,
                                   record=("activity",))
ensemble = ns.Ensemble([small(seed).network for seed in range(4)])
ensemble.run(50)
print(ensemble.recording("y").dims, ensemble.recording("y").shape)

# %%
# The GPU
# -------
# ``backend="cuda"`` runs the rate family (drive, Jacobi with a fixed
# number of iterations, the similarity-matching signals and rules; on sparse
# projections the drive, Hebbian, Oja and NormalizedHebbian) on an NVIDIA
# GPU and refuses anything else by name. It needs the optional
# ``cuda`` extra -- numba-cuda and the CUDA 12 runtime wheels -- installed
# from a checkout of neurosim::
#
#     python -m pip install -e ".[cuda]"
#
# Where the extra or a GPU is missing, the call raises
# :class:`~neurosim.cuda.CUDAUnavailableError` saying which:
circuit = small(0)
try:
    circuit.network.run(10, backend="cuda")                  # precision="float32" where asked for
    print("ran on the GPU")
except CUDAUnavailableError as err:
    print("CUDAUnavailableError:", err)

# %%
# On a machine with a GPU the same lines run there, and so does a whole
# ensemble, one GPU block per member::
#
#     circuit.network.run(10_000, backend="cuda", precision="float32")
#     ensemble.run(10_000, backend="cuda")
#
# Without a GPU, ``NUMBA_ENABLE_CUDASIM=1`` (set before Python starts) runs
# the same kernels in numba's CUDA simulator -- slowly, for tiny networks
# and tests. :doc:`/performance` has the measured CPU speeds and how the GPU
# speed is measured.
