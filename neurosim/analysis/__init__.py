"""Analysis of learned representations (receptive fields, V1-style tests) and
of dictionaries (coherence, distance to a ground truth, paper 004)."""

from neurosim.analysis import dictionaries, receptive_fields
from neurosim.analysis.dictionaries import *  # noqa: F403
from neurosim.analysis.receptive_fields import *  # noqa: F403

# The package exports what the submodules do; their __all__ are the lists.
__all__ = receptive_fields.__all__ + dictionaries.__all__
