"""Similarity-matching models of adaptive dimensionality reduction (paper 002: Chen, Pehlevan & Chklovskii)."""

from .offline import *  # noqa: F401,F403
from .network import *  # noqa: F401,F403
