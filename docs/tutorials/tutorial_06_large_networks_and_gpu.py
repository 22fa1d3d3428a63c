"""
6. Large networks: every core, and a GPU
========================================

One large network can use every core of the machine; many small networks
can run at once as an :class:`~neurosim.Ensemble`; and the dense
rate-based circuits can run on an NVIDIA GPU with ``backend="cuda"``. This
page runs on any machine: it shows the CPU path and what the GPU call is.
"""

# %%
# Threads
# -------
# ``ns.set_num_threads`` sets numba's thread pool and the BLAS libraries'
# threads together (or set ``NEUROSIM_NUM_THREADS`` before Python starts).
# Populations from about 512 x 512 weights up split their products and
# rules by rows over the threads; smaller ones keep the single-thread
# kernels.
import numpy as np

import neurosim as ns
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
# ``backend="cuda"`` runs the dense rate family (drive, Jacobi with a fixed
# number of iterations, the similarity-matching signals and rules) on an
# NVIDIA GPU and refuses anything else by name. It needs the optional
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
