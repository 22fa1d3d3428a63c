"""Every circuit of neurosim.models has the same verbs (models/circuit.py): run, recordings, save, load."""

import inspect
import pkgutil

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.models import example_selection, neurogenesis, osdl, self_organizing, similarity_matching
from neurosim.models.circuit import Circuit

CIRCUITS = [example_selection.ExampleSelectionCircuit, neurogenesis.NeurogenesisCircuit, osdl.OSDLCircuit,
            self_organizing.SelfOrganizingCircuit, self_organizing.GrowingCircuit,
            similarity_matching.SimilarityMatchingCircuit]


@pytest.mark.parametrize("circuit", CIRCUITS, ids=lambda c: c.__name__)
def test_every_circuit_is_a_circuit_and_keeps_its_verbs(circuit):
    assert issubclass(circuit, Circuit)
    for verb in ("run", "recordings", "save", "load"):  # one definition, not one per circuit
        assert getattr(circuit, verb) is getattr(Circuit, verb), (circuit.__name__, verb)


def test_every_circuit_class_in_the_models_is_listed_here():
    import neurosim.models as models

    found = set()
    for info in pkgutil.walk_packages(models.__path__, "neurosim.models."):
        module = __import__(info.name, fromlist=["_"])
        found |= {obj for name, obj in inspect.getmembers(module, inspect.isclass)
                  if name.endswith("Circuit") and obj.__module__ == module.__name__
                  and obj not in (Circuit, self_organizing.PrototypeCircuit)}
    assert found == set(CIRCUITS)


def _som(seed=0):
    X = np.random.default_rng(seed).normal(size=(40, 3))
    return self_organizing.build_som(ns.ArrayStream(X), 3, 3, steps=40, seed=seed, record_every=2), X


def test_run_records_and_a_checkpoint_resumes_the_same_run(tmp_path):
    som, X = _som()
    assert som.run(10) is som.network and som.network.t == 10
    recordings = som.recordings()
    assert set(recordings) == set(som.network.recorders)
    for name, ds in recordings.items():
        assert isinstance(ds, xr.Dataset)
        xr.testing.assert_identical(ds, som.network.recorders[name].to_dataset())
    path = som.save(tmp_path / "som")
    som.run(10)
    after = som.weights.copy()
    assert som.load(path) is som and som.network.t == 10
    som.run(10)
    assert np.array_equal(som.weights, after)  # resumed from step 10: the same 10 steps again
    fresh, _ = _som()
    fresh.run(20)
    assert np.array_equal(fresh.weights, after)
    assert som.quantization_error(X) == self_organizing.quantization_error(X, som.weights)
