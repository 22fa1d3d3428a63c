"""Local plasticity rules."""

from neurosim.rules.activity import CumulativeActivity
from neurosim.rules.base import Rule, UnitRule
from neurosim.rules.hebbian import Hebbian, NormalizedHebbian, Oja

__all__ = ["Rule", "UnitRule", "Hebbian", "Oja", "NormalizedHebbian", "CumulativeActivity"]
