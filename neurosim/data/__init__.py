"""Offline data sources: natural images, whitening and patch streams."""

from neurosim.data import images
from neurosim.data.images import *  # noqa: F403

# The package exports what the submodule does; its __all__ is the one list.
__all__ = images.__all__
