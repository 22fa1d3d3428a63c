"""Analysis of learned representations (receptive fields, V1-style tests),
of dictionaries (coherence, distance to a ground truth, paper 004), the
inpainting and topographic-map tools of paper 003, and spike trains."""

from neurosim.analysis import dictionaries, inpainting, receptive_fields, spikes, topography
from neurosim.analysis.dictionaries import *  # noqa: F403
from neurosim.analysis.inpainting import *  # noqa: F403
from neurosim.analysis.receptive_fields import *  # noqa: F403
from neurosim.analysis.spikes import *  # noqa: F403
from neurosim.analysis.topography import *  # noqa: F403

# The package exports what the submodules do; their __all__ are the lists.
__all__ = receptive_fields.__all__ + dictionaries.__all__ + inpainting.__all__ + topography.__all__ + spikes.__all__
