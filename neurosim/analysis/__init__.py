"""Analysis of learned representations (receptive fields, V1-style tests)."""

from neurosim.analysis.receptive_fields import (
    GaborParams,
    bar_image,
    encode_stimuli,
    find_optimal_bars,
    fit_gabor,
    fit_gabors,
    gabor,
    gratings,
    length_tuning,
    surround_stimulus,
    surround_suppression,
    tile_bases,
)

__all__ = [
    "GaborParams",
    "gabor",
    "fit_gabor",
    "fit_gabors",
    "gratings",
    "bar_image",
    "tile_bases",
    "encode_stimuli",
    "find_optimal_bars",
    "length_tuning",
    "surround_stimulus",
    "surround_suppression",
]
