"""A rule's ``update_numpy`` is its public NumPy reference, and it steps on a projection in no network.

Outside a network there is no step number: a plain parameter value needs none, so each rule reads
``p.network.t`` only when there is a network (``tests/engine/test_mutation_survivors_3.py`` checks the
same for ``local_rule``). Each case is checked against its update equation, written out here.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.rules.competitive import Kohonen, NeuralGas
from neurosim.rules.hebbian import Hebbian, Oja

RNG = np.random.default_rng(20261127)
W0 = RNG.normal(size=(2, 3))
X = np.array([[1.0, -0.5, 2.0]])
Y = np.array([[0.75, -1.25]])


def _bare(rule, n_pre, n_post, w0, x, y):
    pre, post = ns.Population("x", n_pre), ns.Population("y", n_post)
    p = ns.Projection("W", pre, post, rule=rule)
    p.weights[:] = w0
    pre.activity[:] = x
    post.activity[:] = y
    return p


@pytest.mark.parametrize("rule, expected", [
    # Hebb with weight decay: W <- (1 - decay) W + rate / B * y^T x
    (Hebbian(rate=0.1, decay=0.2), 0.8 * W0 + 0.1 * Y.T @ X),
    (Hebbian(rate=0.3), W0 + 0.3 * Y.T @ X),
    # Oja's subspace rule, row by row: W <- W + rate / B (y^T x - diag(y^2) W)
    (Oja(rate=0.1), W0 + 0.1 * (Y.T @ X - (Y[0] ** 2)[:, None] * W0)),
], ids=["hebbian-decay", "hebbian", "oja"])
def test_a_hebbian_rule_steps_on_a_projection_in_no_network(rule, expected):
    p = _bare(rule, 3, 2, W0, X, Y)
    rule.update_numpy()  # reading network.t of no network would raise AttributeError
    assert p.network is None
    np.testing.assert_allclose(p.weights, expected, rtol=1e-14, atol=1e-15)


def test_kohonen_steps_on_a_projection_in_no_network():
    # a 2 x 2 map, winner unit 1 at grid (0, 1): h = exp(-d^2 / (2 sigma^2)) with grid distances 1, 0, 2, 1
    w0 = RNG.normal(size=(4, 2))
    x = np.array([[1.0, -2.0]])
    rule = Kohonen(2, 2, rate=0.5, sigma=1.0)
    p = _bare(rule, 2, 4, w0, x, [[0.0, 1.0, 0.0, 0.0]])
    rule.update_numpy()
    h = np.exp(-np.array([1.0, 0.0, 2.0, 1.0]) / 2.0)
    np.testing.assert_allclose(p.weights, w0 + 0.5 * h[:, None] * (x - w0), rtol=1e-14, atol=1e-15)


def test_neural_gas_steps_on_a_projection_in_no_network():
    # ranks by distance: unit 2 nearest (rank 0), then 0, 3, 1; g = rate exp(-rank / lam)
    w0 = RNG.normal(size=(4, 2))
    x = np.array([[0.5, 0.25]])
    rule = NeuralGas(rate=0.4, lam=2.0)
    p = _bare(rule, 2, 4, w0, x, np.zeros((1, 4)))
    p.post.state["distance"] = np.array([[1.0, 3.0, 0.5, 2.0]])
    rule.update_numpy()
    g = 0.4 * np.exp(-np.array([1.0, 3.0, 0.0, 2.0]) / 2.0)
    np.testing.assert_allclose(p.weights, w0 + g[:, None] * (x - w0), rtol=1e-14, atol=1e-15)
