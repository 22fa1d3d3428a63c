"""Growing maps of one unit, and of none, on both paths.

A Growing Neural Gas map of one unit: with one unit there is no second winner (Fritzke's ``s2``), so no
edge is made, no edge ages and no unit can be inserted (an insertion needs the neighbour ``f`` of the unit
``q``). The unit never had an edge, so the "units left without an edge" removal does not apply. Fritzke's
steps 2-4 then reduce to the closed form checked here: ``E <- d E + ||x - w||^2`` and
``w <- w + eps_b (x - w)`` at every input.

A map whose units all died (a user's ``Death``; events.py allows a population to lose every unit): no
winner and nothing to insert.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.dynamics.competitive import BestMatchingUnit
from neurosim.rules.competitive import GrowingNeuralGas, GrowWhenRequired


def _growing_map(X, W0, rule_class, **params):
    """The circuit of ``models.self_organizing._growing`` with the given starting prototypes."""
    net = ns.Network(seed=0, batch=1)
    x = ns.Population("x", X.shape[1])
    units = ns.Population("map", len(W0), dynamics=BestMatchingUnit())
    units.add_variable("distance", 0.0, per_sample=True)
    net.add(x, units)
    net.connect(ns.ArrayStream(X), x)
    edges = ns.Projection("edges", units, units, init=ns.Constant(1.0), connectivity=ns.FromIndices([], []),
                          storage="sparse")
    rule = rule_class(edges, **params)
    W = ns.Projection("W", x, units, init=np.array(W0, dtype=float), rule=rule)
    net.add(edges, W)
    net.add(rule.trigger())
    return net, units, edges, W, rule


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_one_unit_map_adapts_its_only_unit_and_never_changes_structure(backend):
    X = np.random.default_rng(0).random((20, 2))
    # insertions due at steps 7 and 14
    net, units, edges, W, _ = _growing_map(X, [[0.5, 0.5]], GrowingNeuralGas, lam=7, eps_b=0.2, d=0.995)
    net.run(15, backend=backend)
    w, err = np.array([0.5, 0.5]), 0.0
    for t in range(15):
        err = 0.995 * err + float(np.sum((X[t] - w) ** 2))
        w = w + 0.2 * (X[t] - w)
    assert units.size == 1 and edges.n_synapses == 0
    assert len(net.event_log.to_dict()["step"]) == 0
    np.testing.assert_allclose(W.weights[0], w, rtol=1e-14)
    np.testing.assert_allclose(units.state["error"][0], err, rtol=1e-13)


@pytest.mark.parametrize("rule_class", [GrowingNeuralGas, GrowWhenRequired])
def test_a_map_whose_units_all_died_runs_on_with_no_winner(rule_class):
    """The rules then have no winner (``s1 = s2 = -1`` in their saved state) and nothing to insert: GNG's
    insertion at every ``lam``-th input needs a unit ``q`` (it raised numpy's "argmax of an empty
    sequence" before). Both paths keep the same state."""
    X = np.random.default_rng(0).random((400, 2))
    states = []
    for backend in ("python", "compiled"):
        net, units, _, _, rule = _growing_map(X, [[0.5, 0.5], [0.2, 0.1]], rule_class)
        net.run(5, backend=backend)
        net.apply(ns.Death(units, units.ids))
        logged = len(net.event_log.to_dict()["step"])
        net.run(200, backend=backend)  # past GNG's insertion steps 100 and 200
        assert units.size == 0 and net.t == 205
        assert len(net.event_log.to_dict()["step"]) == logged  # no event after the deaths
        assert rule._state[0] == 205 and rule._state[1] == rule._state[2] == -1
        states.append(rule._state.copy())
    np.testing.assert_array_equal(states[0], states[1])
