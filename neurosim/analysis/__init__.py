"""Analysis of learned representations (receptive fields, V1-style tests)."""

from neurosim.analysis import receptive_fields
from neurosim.analysis.receptive_fields import *  # noqa: F403

# The package exports what the submodule does; its __all__ is the one list.
__all__ = receptive_fields.__all__
