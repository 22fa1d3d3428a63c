"""Offline data sources: natural images, whitening and patch streams."""

from neurosim.data.images import (
    AVAILABLE_IMAGES,
    DEFAULT_IMAGES,
    TEST_IMAGES,
    TRAIN_IMAGES,
    ImagePatchStream,
    load_natural_images,
    sample_patches,
    whiten_image,
)

__all__ = [
    "AVAILABLE_IMAGES",
    "DEFAULT_IMAGES",
    "TRAIN_IMAGES",
    "TEST_IMAGES",
    "load_natural_images",
    "whiten_image",
    "ImagePatchStream",
    "sample_patches",
]
