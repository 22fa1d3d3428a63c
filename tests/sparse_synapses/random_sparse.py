"""Random sparse matrices for the tests, on every scipy the project supports.

``scipy.sparse.random_array`` (the newest API) is not in scipy 1.10, the
oldest pin (.ci/oldest-constraints.txt), and ``scipy.sparse.random`` is
moving its seed argument from ``random_state`` to ``rng``: one NumPy draw
serves both.
"""

import numpy as np
import scipy.sparse as sp


def random_csr(shape, density, rng, *, no_diagonal=False):
    """A ``csr_array`` whose entries are stored with probability ``density``, values uniform in ``[0.5, 1.5)``.

    Values stay away from 0, so every stored entry is a synapse (none is dropped as an explicit zero);
    ``no_diagonal`` leaves the diagonal empty (a lateral projection without self-connections).
    """
    stored = rng.random(shape) < density
    if no_diagonal:
        np.fill_diagonal(stored, False)
    values = 0.5 + rng.random(shape)
    W = sp.csr_array(np.where(stored, values, 0.0))
    W.sort_indices()
    return W


def csr_index(W):
    """``W``'s row pointers and column indices as a projection's ``SynapseIndex`` holds them: int32, read-only.

    The kernels are then called with the argument types the engine gives them (numba compiles a second
    machine code for writable index arrays, which no network passes).
    """
    indptr, indices = W.indptr.astype(np.int32), W.indices.astype(np.int32)
    indptr.flags.writeable = indices.flags.writeable = False
    return indptr, indices
