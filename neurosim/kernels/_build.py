"""How the kernels that segments call are built: inlined into the segment (the default) or called.

``inline="always"`` makes numba copy a kernel's IR into each compiled segment
that calls it, so LLVM optimises the step as one loop: 3-7 % faster small
networks (docs/performance.md), paid for with a longer compile of every new
network structure (numba deep-copies the kernel's IR into each segment; about
40 % of a segment's compile in a profile of ``tests/engine``). Setting the
environment variable ``NEUROSIM_INLINE_KERNELS=0`` before neurosim is
imported calls the kernels instead: the same arithmetic, hence the same
numbers, compiled faster. The test suite does this (``tests/conftest.py``)
unless ``NEUROSIM_TEST_BUILD=production``.
"""

import os

_VALUE = os.environ.get("NEUROSIM_INLINE_KERNELS", "1")
if _VALUE not in ("0", "1"):
    raise ValueError(f"NEUROSIM_INLINE_KERNELS must be 0 or 1; got {_VALUE!r}")

#: numba's ``inline=`` option for the kernels called from segments
INLINE = "always" if _VALUE == "1" else "never"
