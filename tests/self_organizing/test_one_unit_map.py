"""A Growing Neural Gas map of one unit: the winner alone adapts, on every path.

With one unit there is no second winner (Fritzke's ``s2``), so no edge is made, no edge ages and no unit
can be inserted (an insertion needs the neighbour ``f`` of the unit ``q``). The unit never had an edge, so
the "units left without an edge" removal does not apply. Fritzke's steps 2-4 then reduce to the closed
form checked here: ``E <- d E + ||x - w||^2`` and ``w <- w + eps_b (x - w)`` at every input.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.dynamics.competitive import BestMatchingUnit
from neurosim.rules.competitive import GrowingNeuralGas


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_one_unit_map_adapts_its_only_unit_and_never_changes_structure(backend):
    X = np.random.default_rng(0).random((20, 2))
    net = ns.Network(seed=0, batch=1)
    x = ns.Population("x", 2)
    units = ns.Population("map", 1, dynamics=BestMatchingUnit())
    units.add_variable("distance", 0.0, per_sample=True)
    net.add(x, units)
    net.connect(ns.ArrayStream(X), x)
    edges = ns.Projection("edges", units, units, init=ns.Constant(0.0), mask=np.zeros((1, 1), dtype=bool))
    rule = GrowingNeuralGas(edges, lam=7, eps_b=0.2, d=0.995)  # insertions due at steps 7 and 14
    W = ns.Projection("W", x, units, init=np.array([[0.5, 0.5]]), rule=rule)
    net.add(edges, W)
    net.add(rule.trigger())
    net.run(15, backend=backend)
    w, err = np.array([0.5, 0.5]), 0.0
    for t in range(15):
        err = 0.995 * err + float(np.sum((X[t] - w) ** 2))
        w = w + 0.2 * (X[t] - w)
    assert units.size == 1 and not edges.mask.any()
    assert len(net.event_log.to_dict()["step"]) == 0
    np.testing.assert_allclose(W.weights[0], w, rtol=1e-14)
    np.testing.assert_allclose(units.state["error"][0], err, rtol=1e-13)
