"""The paths a differential test runs its networks on, each in the tier it belongs to."""

import pytest

#: The NumPy reference (``"python"``); the segments' Python form, which a short run with ``backend="auto"`` takes
#: (the compiled kernels in the compiled segment's order: its bits, tests/engine/test_python_tier.py); and the
#: compiled segment itself, whose compile of a structure of its own costs seconds with empty caches, so it runs
#: in the slow tier (docs/testing.md). The quick tier keeps a compiled test of each family elsewhere.
PATHS = ["python", "auto", pytest.param("compiled", marks=pytest.mark.slow)]
