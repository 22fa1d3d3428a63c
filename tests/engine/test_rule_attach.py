"""A rule's ``attach`` hook: the network calls it once, when the rule's projection joins it.

``Component.attach`` is documented as the place to declare the variables and arrays a component needs;
a rule is a component, and its projection's arrays exist only once the network has drawn the weights.
"""

import numpy as np

import neurosim as ns


class TracedHebbian(ns.Rule):
    """Hebbian learning through a per-synapse trace declared in ``attach`` (a user's rule)."""

    def __init__(self):
        super().__init__()
        self.attached = []

    def attach(self, network):
        self.attached.append(network)
        self.projection.add_array("trace", 0.5)

    def update_numpy(self):
        p = self.projection
        p.arrays["trace"] += 1.0
        p.weights += 0.125 * p.arrays["trace"] * (p.post.activity.T @ p.pre.activity)


def test_the_network_attaches_a_projections_rule_once_when_the_projection_joins():
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 2), ns.Population("y", 1, dynamics=ns.Linear())
    rule = TracedHebbian()
    W = ns.Projection("W", x, y, init=ns.Constant(0.25), rule=rule)
    net.add(x, y)
    assert rule.attached == []
    net.add(W)
    assert rule.attached == [net]
    assert np.array_equal(W.arrays["trace"], np.full((1, 2), 0.5))
    net.connect(ns.ArrayStream(np.array([[1.0, 2.0]])), x)
    net.run(1, backend="python")
    # by hand: y = 0.25 * 1 + 0.25 * 2 = 0.75; trace 1.5; dW = 0.125 * 1.5 * 0.75 * (1, 2)
    assert np.array_equal(W.weights, [[0.25 + 0.140625, 0.25 + 0.28125]])
    assert rule.attached == [net]
