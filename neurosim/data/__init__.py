"""Offline data sources: natural images, whitening and patch streams,
two-domain data sets (images, MNIST digits, text) for domain-shift
experiments, and the ground-truth dictionaries and sparse example streams of
paper 004."""

from neurosim.data import dictionaries, domains, images
from neurosim.data.dictionaries import *  # noqa: F403
from neurosim.data.domains import *  # noqa: F403
from neurosim.data.images import *  # noqa: F403

# The package exports what the submodules do; their __all__ are the lists.
__all__ = images.__all__ + domains.__all__ + dictionaries.__all__
