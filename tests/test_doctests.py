"""The Examples sections of the main public objects run as doctests (issue 26).

Outputs are printed with explicit rounding (or are exact), so they hold on any IEEE machine. The
modules are imported, not collected by ``--doctest-modules``: each runs in its own test, with
``NORMALIZE_WHITESPACE | ELLIPSIS``.
"""

import doctest
import importlib

import pytest

# slow tier: the Examples build and run about 30 small networks, and with empty caches compiling them takes
# most of a minute; the full suite (README command, CI) runs them
pytestmark = pytest.mark.slow

MODULES = [
    "neurosim.network",
    "neurosim.population",
    "neurosim.synapses",
    "neurosim.recording",
    "neurosim.signals",
    "neurosim.rules.hebbian",
    "neurosim.rules.activity",
    "neurosim.rules.local",
    "neurosim.rules.transmission",
    "neurosim.rules.stdp",
    "neurosim.rules.trace",
    "neurosim.dynamics.spiking",
    "neurosim.dynamics.jacobi",
    "neurosim.dynamics.sparse",
    "neurosim.dynamics.izhikevich",
    "neurosim.events",
    "neurosim.triggers",
    "neurosim.structural_plasticity",
    "neurosim.synapse_recording",
    "neurosim.streams",
    "neurosim.params",
    "neurosim.schedules",
    "neurosim.experiment",
    "neurosim.ensemble",
    "neurosim.metrics",
    "neurosim.threads",
    "neurosim.selection_functions",
    "neurosim.estimators",
    "neurosim.io",
    "neurosim.groups",
    "neurosim.codegen",
    "neurosim.plot",
    "neurosim.coding.encoders",
    "neurosim.coding.basis",
    "neurosim.coding.structured",
    "neurosim.coding.normalization",
    "neurosim.models.neurogenesis",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name} has no Examples to run"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see the output above)"
