"""Suite-wide set-up.

The GPU kernels are tested without a GPU under numba's CUDA simulator, which
numba reads from the environment when ``numba.cuda`` is first imported. Set
``NEUROSIM_TEST_REAL_GPU=1`` to run those tests on a real GPU instead.
"""

import os

if os.environ.get("NEUROSIM_TEST_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
