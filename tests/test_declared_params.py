"""Property tests derived from every component's declared parameters.

Each public component declares its parameters once (``neurosim.params``);
these tests read the declarations and check, for every parameter, that any
value inside the declared range is accepted on assignment and reported by
``params()``, and that values outside it, or of the wrong type, raise an
error naming the parameter -- so a new component or parameter is covered
without a new test.
"""

import math
import sys

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import neurosim as ns
from neurosim import rules
from neurosim.reconstruction_accuracy import ReconstructionAccuracy
from neurosim.rules.dictionary import BlockCoordinateDescent, DictionaryMemory
from neurosim.rules.example_sgd import ExampleSGD
from neurosim.rules.osdl import OSDLDictionary, OSDLStatistics
from neurosim.example_selector import ExampleSelector
from neurosim.params import Bool, Choice, Float, Int, Parametrized

def _edges():
    units = ns.Population("m", 2)
    return ns.Projection("E", units, units, connectivity=ns.FromIndices([0, 1], [1, 0]), storage="sparse")


def _projection():
    return ns.Projection("D", ns.Population("x", 3), ns.Population("a", 2))


FACTORIES = {
    ns.Jacobi: lambda: ns.Jacobi(),
    ns.Linear: lambda: ns.Linear(),
    ns.SparseCode: lambda: ns.SparseCode("feature_sign", lam=0.1),
    ns.NormalizedHebbian: lambda: ns.NormalizedHebbian(0.1),
    ns.Hebbian: lambda: ns.Hebbian(),
    ns.Oja: lambda: ns.Oja(),
    ns.CumulativeActivity: lambda: ns.CumulativeActivity(ns.Population("p", 2), alpha=0.1),
    rules.Sanger: lambda: rules.Sanger(),
    rules.OjaSubspace: lambda: rules.OjaSubspace(),
    rules.BCM: lambda: rules.BCM(),
    rules.Foldiak: lambda: rules.Foldiak(),
    rules.Delta: lambda: rules.Delta(),
    BlockCoordinateDescent: lambda: BlockCoordinateDescent(),
    DictionaryMemory: lambda: DictionaryMemory(_projection()),
    ReconstructionAccuracy: lambda: ReconstructionAccuracy(_projection()),
    ExampleSelector: lambda: ExampleSelector(_projection(), ns.Population("s", 2)),
    ExampleSGD: lambda: ExampleSGD(),
    ns.StructuredSparseCode: lambda: ns.StructuredSparseCode(),
    OSDLStatistics: lambda: OSDLStatistics(_projection()),
    OSDLDictionary: lambda: OSDLDictionary(),
    rules.Kohonen: lambda: rules.Kohonen(3, 2),
    rules.NeuralGas: lambda: rules.NeuralGas(),
    rules.GrowingNeuralGas: lambda: rules.GrowingNeuralGas(_edges()),
    rules.GrowWhenRequired: lambda: rules.GrowWhenRequired(_edges()),
    ns.LIF: lambda: ns.LIF(),
    ns.LIFConductance: lambda: ns.LIFConductance(),
    ns.Izhikevich: lambda: ns.Izhikevich(),
    ns.OnPre: lambda: ns.OnPre("ge"),
    ns.STDP: lambda: ns.STDP(),
    ns.TripletSTDP: lambda: ns.TripletSTDP(),
}


def _public_components():
    seen, todo = set(), [Parametrized]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    # public: named in its module (not a class a factory such as trace_rule made in an example), not a base
    return {c for c in seen if c.__module__.startswith("neurosim.") and c.declared()
            and not c.__name__.startswith("_") and c.__name__ not in ("LocalRule", "TraceRule")
            and getattr(sys.modules.get(c.__module__), c.__name__, None) is c}


def _cases():
    for cls, make in FACTORIES.items():
        for name, p in cls.declared().items():
            yield pytest.param(cls, make, name, p, id=f"{cls.__name__}.{name}")


def test_every_public_component_with_parameters_is_covered():
    missing = {c.__name__ for c in _public_components()} - {c.__name__ for c in FACTORIES}
    assert not missing, f"add factories for {sorted(missing)}"


def _inside(p):
    if isinstance(p, Float):
        lo = -1e6 if p.low is None else p.low
        hi = 1e6 if p.high is None else p.high
        return st.floats(lo, hi, allow_nan=False, exclude_min=p.low_open, exclude_max=p.high_open)
    if isinstance(p, Int):
        return st.integers(-10**6 if p.low is None else p.low, 10**6 if p.high is None else p.high)
    if isinstance(p, Bool):
        return st.booleans()
    if isinstance(p, Choice):
        return st.sampled_from(p.options)
    return st.nothing()


@pytest.mark.parametrize("cls,make,name,p", list(_cases()))
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_values_inside_the_declared_range_are_accepted(cls, make, name, p, data):
    obj = make()
    if not p.live:
        with pytest.raises(AttributeError, match=f"{name} is fixed"):
            setattr(obj, name, getattr(obj, name))
        return
    strat = _inside(p)
    if strat.is_empty:
        return
    value = data.draw(strat)
    setattr(obj, name, value)
    got = obj.params()[name]
    assert got == value and type(got) is type(p.check(value))


@pytest.mark.parametrize("cls,make,name,p", list(_cases()))
def test_values_outside_the_range_and_wrong_types_name_the_parameter(cls, make, name, p):
    obj = make()
    if not p.live:
        return
    bad = []
    if isinstance(p, Float):
        bad += [(math.nan, ValueError), (math.inf, ValueError), ("0.1", TypeError), (True, TypeError)]
        if p.low is not None:
            bad.append((p.low - 1.0 if not p.low_open else p.low, ValueError))
        if p.high is not None:
            bad.append((p.high + 1.0 if not p.high_open else p.high, ValueError))
    elif isinstance(p, Int):
        bad += [(1.5, TypeError), ("3", TypeError), (True, TypeError)]
        if p.low is not None:
            bad.append((p.low - 1, ValueError))
    elif isinstance(p, Bool):
        bad += [(1, TypeError), ("yes", TypeError)]
    elif isinstance(p, Choice):
        bad += [("no such option", ValueError), (3, TypeError)]
    for value, err in bad:
        before = obj.params()
        with pytest.raises(err, match=name):
            setattr(obj, name, value)
        assert obj.params() == before  # a refused assignment changes nothing
    if not p.optional:
        with pytest.raises(TypeError, match=name):
            setattr(obj, name, None)


def test_params_list_exactly_the_declared_parameters():
    for cls, make in FACTORIES.items():
        obj = make()
        keys = set(obj.params()) - {obj.params_key, "population"}
        assert keys == set(cls.declared()), cls.__name__
        assert repr(obj).startswith(cls.__name__ + "(")


def test_each_declared_default_is_the_constructors_default():
    """A parameter's declaration (what ``params()``, checkpoints and error messages describe) and the
    constructor's signature state the same default, value and type; a parameter declared required has none."""
    import inspect

    from neurosim.params import REQUIRED

    compared = 0
    for cls in FACTORIES:
        signature = inspect.signature(cls)
        for name, p in cls.declared().items():
            given = signature.parameters.get(name)
            if given is None or given.default is inspect.Parameter.empty or p.default is REQUIRED:
                continue
            compared += 1
            assert type(p.default) is type(given.default) and p.default == given.default, \
                (cls.__name__, name, p.default, given.default)
    assert compared >= 60


#: the parameters fixed at construction, written down independently of the declarations: each names a
#: variable, a signal, a solver or a structure the network is built around, so assigning it later must fail
#: rather than leave a built network half changed
FIXED = {
    "SparseCode": {"method", "normalize"},
    "NormalizedHebbian": {"signal", "rate_variable"},
    "CumulativeActivity": {"signal", "variable", "init"},
    "BlockCoordinateDescent": {"unused"},
    "ReconstructionAccuracy": {"normalize"},
    "ExampleSelector": {"measure", "selector", "seed", "side"},
    "StructuredSparseCode": {"solver"},
    "OSDLStatistics": {"e_form"},
    "Kohonen": {"rows", "cols", "neighbourhood", "topology"},
    "GrowingNeuralGas": {"edges"},
    "GrowWhenRequired": {"edges"},
}


@pytest.mark.parametrize("cls", list(FACTORIES), ids=lambda c: c.__name__)
def test_the_fixed_parameters_are_the_documented_ones_and_refuse_assignment(cls):
    declared = {name for name, p in cls.declared().items() if not p.live}
    assert declared == FIXED.get(cls.__name__, set())
    obj = FACTORIES[cls]()
    for name in declared:
        with pytest.raises(AttributeError, match=f"{cls.__name__}.{name} is fixed once"):
            setattr(obj, name, getattr(obj, name))


#: the numeric parameters that may follow a schedule (learning rates, neighbourhood widths, sparsity weights),
#: written down apart from the declarations; a tolerance, an iteration cap or a count stays a number, since the
#: compiled segments read it once per segment, not per step
SCHEDULABLE = {
    "SparseCode": {"lam"},
    "NormalizedHebbian": {"alpha"},
    "Hebbian": {"decay", "rate"},
    "Oja": {"rate"},
    "CumulativeActivity": {"alpha"},
    "Sanger": {"rate"},
    "OjaSubspace": {"rate"},
    "BCM": {"rate", "tau_rate"},
    "Foldiak": {"rate", "p"},
    "Delta": {"rate"},
    "DictionaryMemory": {"decay"},
    "ExampleSGD": {"eta"},
    "StructuredSparseCode": {"kappa"},
    "Kohonen": {"sigma", "rate"},
    "NeuralGas": {"lam", "rate"},
    "GrowingNeuralGas": {"a_max", "eps_b", "d", "eps_n", "alpha"},
    "GrowWhenRequired": {"alpha_n", "a_max", "tau_n", "eps_b", "tau_b", "alpha_b", "h_T", "eps_n", "a_T"},
}


@pytest.mark.parametrize("cls", list(FACTORIES), ids=lambda c: c.__name__)
def test_only_the_documented_parameters_follow_a_schedule(cls):
    from neurosim.schedules import Function

    declared = {name for name, p in cls.declared().items() if p.schedulable and p.live}
    assert declared == SCHEDULABLE.get(cls.__name__, set())
    obj = FACTORIES[cls]()
    for name, p in cls.declared().items():
        if not p.live:
            continue
        value = getattr(obj, name)
        schedule = Function(lambda t, v=value: np.full(t.shape, v), name="constant")
        if name in declared:
            setattr(obj, name, schedule)
            assert getattr(obj, name) is schedule
        elif isinstance(p, (Float, Int)):
            with pytest.raises(TypeError, match=f"{name} cannot follow a schedule"):
                setattr(obj, name, schedule)
