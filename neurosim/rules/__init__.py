"""Local plasticity rules."""

from neurosim.rules.activity import CumulativeActivity
from neurosim.rules.base import Rule, UnitRule
from neurosim.rules.competitive import GrowingNeuralGas, GrowWhenRequired, Kohonen, NeuralGas
from neurosim.rules.hebbian import Hebbian, NormalizedHebbian, Oja
from neurosim.rules.local import LocalRule, local_rule
from neurosim.rules.standard import BCM, Delta, Foldiak, OjaSubspace, Sanger
from neurosim.rules.stdp import STDP, TripletSTDP
from neurosim.rules.trace import TraceRule, trace_rule
from neurosim.rules.transmission import OnPre

__all__ = ["Rule", "UnitRule", "Hebbian", "Oja", "NormalizedHebbian", "CumulativeActivity", "LocalRule", "local_rule",
           "Sanger", "OjaSubspace", "BCM", "Foldiak", "Delta", "Kohonen", "NeuralGas", "GrowingNeuralGas",
           "GrowWhenRequired", "OnPre", "STDP", "TripletSTDP", "TraceRule", "trace_rule"]
