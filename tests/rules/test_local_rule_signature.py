"""Rule classes made by local_rule show their declared parameters (issue 26): signature, __init__, help()."""

import inspect
import pydoc

import pytest

import neurosim as ns
from neurosim.params import Bool, Float, Int

P = inspect.Parameter


@ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True, doc="learning rate"),
                       "steps": Int(3, low=1, live=False), "clip": Bool(False)},
               post_variables={"theta": 0.5})
def documented_nowhere(weights, post, pre, theta, rate, steps, clip):
    """Decay every weight a little."""
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            weights[i, j] -= rate * steps * weights[i, j]


@ns.local_rule(params={"rate": Float(0.01, low=0.0), "gain": Float(low=0.0)})
def required_after_default(weights, post, pre, rate, gain):
    weights[0, 0] += rate * gain


def test_standard_rules_have_their_parameters_in_the_signature():
    sig = inspect.signature(ns.Sanger)
    assert list(sig.parameters) == ["rate"]
    assert sig.parameters["rate"].default == 0.01
    assert sig.parameters["rate"].kind is P.POSITIONAL_OR_KEYWORD
    bcm = inspect.signature(ns.BCM).parameters
    assert [(n, p.default, p.kind) for n, p in bcm.items()] == [
        ("rate", 0.01, P.POSITIONAL_OR_KEYWORD), ("tau_rate", 0.1, P.POSITIONAL_OR_KEYWORD),
        ("nonnegative", False, P.KEYWORD_ONLY)]  # a flag is always named at the call
    for cls in (ns.Sanger, ns.OjaSubspace, ns.BCM, ns.Foldiak, ns.Delta):
        assert set(inspect.signature(cls).parameters) == set(cls.param_names) == set(cls.declared())
        assert list(inspect.signature(cls.__init__).parameters)[0] == "self"


def test_help_shows_the_parameter_names():
    text = pydoc.render_doc(ns.Sanger, renderer=pydoc.plaintext)
    assert "Sanger(rate=0.01)" in text
    assert "__init__(self, rate=0.01)" in text
    assert "(**params)" not in text
    assert "rate : float" in text


def test_the_signature_is_what_the_constructor_takes():
    assert ns.Sanger(0.02).rate == 0.02 == ns.Sanger(rate=0.02).rate
    assert ns.Sanger().rate == 0.01
    rule = ns.BCM(0.02, 0.3, nonnegative=True)
    assert (rule.rate, rule.tau_rate, rule.nonnegative) == (0.02, 0.3, True)
    with pytest.raises(TypeError, match=r"BCM\(rate=0.01, tau_rate=0.1, \*, nonnegative=False\).*positional"):
        ns.BCM(0.02, 0.3, True)
    with pytest.raises(TypeError, match=r"Sanger has no parameters \['rat'\]; it has \['rate'\]"):
        ns.Sanger(rat=0.1)
    with pytest.raises(ValueError, match="rate"):  # values are still validated by the declaration
        ns.Sanger(2.0)


def test_a_required_parameter_after_a_default_is_keyword_only_and_required():
    sig = inspect.signature(required_after_default)
    assert str(sig) == "(rate=0.01, *, gain)"
    with pytest.raises(TypeError, match="gain"):
        required_after_default()
    assert required_after_default(gain=2.0).gain == 2.0


def test_a_docstring_without_parameters_gets_them_listed():
    doc = documented_nowhere.__doc__
    assert doc.startswith("Decay every weight a little.")
    assert "Parameters\n----------\n" in doc
    assert ("rate : float, default 0.01\n    Learning rate. A float in (0.0, 1.0]; live (may be assigned while "
            "running), schedulable.\n") in doc
    assert "steps : int, default 3\n    An int in [1, inf); fixed once built.\n" in doc
    assert "clip : bool, default False\n    True or False; live (may be assigned while running).\n" in doc
    assert "``theta`` (0.5)" in doc
    assert str(inspect.signature(documented_nowhere)) == "(rate=0.01, steps=3, *, clip=False)"
    # a docstring that has its own Parameters section is kept as written
    assert ns.Sanger.__doc__.count("Parameters\n----------") == 1
