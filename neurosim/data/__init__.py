"""Offline data sources: natural images, whitening and patch streams, and
two-domain data sets (images, MNIST digits, text) for domain-shift experiments."""

from neurosim.data import domains, images
from neurosim.data.domains import *  # noqa: F403
from neurosim.data.images import *  # noqa: F403

# The package exports what the submodules do; their __all__ are the lists.
__all__ = images.__all__ + domains.__all__
