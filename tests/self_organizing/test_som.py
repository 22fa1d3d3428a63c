"""Kohonen's self-organising map on the engine against MiniSom (issue 27, step 1).

MiniSom (``minisom.py``, 2.3.x) is the oracle: a map built with its initial
weights, the same schedules (its default ``asymptotic_decay`` for the rate and
the radius) and its input order (``train(X, T)``: sample ``t % len(X)`` at
iteration ``t``) must learn its weights to rounding, for every neighbourhood
function and both topologies, on the compiled path, the per-step kernel path
and the NumPy path. Quantisation and topographic error are compared with
MiniSom's own functions.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models.self_organizing import build_som, quantization_error, topographic_error
from neurosim.rules.competitive import grid_positions
from neurosim.schedules import AsymptoticDecay

minisom = pytest.importorskip("minisom")

ROWS, COLS, DIM = 6, 5, 3


def _data(n=300, seed=0):
    return np.random.default_rng(seed).random((n, DIM))


def _per_step(c):
    c.network.add_callback(lambda n: None)  # a Python callback every step: the per-step path with kernels
    return c


def _pair(neighbourhood, topology, T, sigma, rate=0.5, X=None):
    import warnings

    X = _data() if X is None else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # MiniSom: triangle ignores the hexagonal topology
        som = minisom.MiniSom(ROWS, COLS, DIM, sigma=sigma, learning_rate=rate, neighborhood_function=neighbourhood,
                              topology=topology, random_seed=1)
    circuit = build_som(ns.ArrayStream(X), ROWS, COLS, steps=T, sigma=sigma, rate=rate, neighbourhood=neighbourhood,
                        topology=topology, init=som.get_weights().copy())
    return som, circuit, X


@pytest.mark.parametrize("path", ["compiled", "per_step", "python"])
@pytest.mark.parametrize("topology", ["rectangular", "hexagonal"])
@pytest.mark.parametrize("neighbourhood,sigma", [("gaussian", 1.5), ("mexican_hat", 1.5), ("bubble", 2.0),
                                                 ("triangle", 2.0)])
def test_same_weights_as_minisom(neighbourhood, sigma, topology, path):
    T = 400  # more than len(X): the input order wraps around as MiniSom's does
    som, c, X = _pair(neighbourhood, topology, T, sigma, X=_data(250))
    w0 = som.get_weights().reshape(-1, DIM).copy()
    np.testing.assert_array_equal(c.weights, w0)
    som.train(X, T)
    if path == "per_step":
        _per_step(c)
    c.run(T, backend="python" if path == "python" else "auto")
    assert c.network.t == T
    np.testing.assert_allclose(c.weights, som.get_weights().reshape(-1, DIM), rtol=1e-12, atol=1e-15)
    # the map learned something: the prototypes moved far from their initial unit vectors
    assert np.abs(c.weights - w0).max() > 0.1


def test_one_step_by_hand():
    # a 1 x 2 map, gaussian: the winner moves by rate, its neighbour (plane distance 1) by rate exp(-1/(2 sigma^2))
    w0 = np.array([[0.0, 0.0], [1.0, 0.0]])
    x = np.array([[0.2, 0.4]])
    c = build_som(ns.ArrayStream(x), 1, 2, rate=0.5, sigma=2.0, decay="constant", init=w0)
    c.run(1)
    h = np.exp(-1.0 / 8.0)
    np.testing.assert_allclose(c.weights, [[0.1, 0.2], [1.0 + 0.5 * h * (0.2 - 1.0), 0.5 * h * 0.4]], rtol=1e-15)
    np.testing.assert_array_equal(c.map.activity, [[1.0, 0.0]])
    np.testing.assert_allclose(c.map.state["distance"], [[0.2, 0.8 ** 2 + 0.4 ** 2]], rtol=1e-15)


def test_asymptotic_decay_is_minisoms_at_every_iteration():
    T = 37
    sched = AsymptoticDecay(0.7, T)
    som = minisom.MiniSom(2, 2, 1)
    expected = [som._asymptotic_decay(0.7, i, T) for i in range(3 * T)]
    np.testing.assert_array_equal(sched.values(1, 3 * T), expected)  # step t = iteration t - 1, same expression
    assert sched(1) == 0.7 and sched(T + 1) == pytest.approx(0.7 / 3)


@pytest.mark.parametrize("topology", ["rectangular", "hexagonal"])
def test_quantisation_and_topographic_error_are_minisoms(topology):
    som, c, X = _pair("gaussian", topology, 300, 1.5)
    som.train(X, 300)
    c.run(300)
    assert quantization_error(X, c.weights) == pytest.approx(som.quantization_error(X), rel=1e-12)
    assert c.topographic_error(X) == som.topographic_error(X)
    assert 0 < c.topographic_error(X) < 1  # a case where the grid test matters, not a trivial 0 or 1
    # by hand: two samples, the first nearest to units 0 and 1 (adjacent), the second to 0 and 29 (not adjacent)
    W = np.zeros((ROWS * COLS, DIM))
    W[1], W[29] = [1.0, 0, 0], [0, 1.0, 0]
    W[2:29] = 10.0
    Xh = np.array([[0.4, 0.0, 0.0], [0.0, 0.4, 0.0]])
    assert topographic_error(Xh, W, ROWS, COLS) == 0.5
    assert quantization_error(Xh, W) == pytest.approx(0.4)


def test_grid_positions_are_minisoms_plane_coordinates():
    for topology in ("rectangular", "hexagonal"):
        som = minisom.MiniSom(ROWS, COLS, DIM, topology=topology)
        xx, yy = som.get_euclidean_coordinates()
        gi, gj, gx, gy = grid_positions(ROWS, COLS, topology)
        np.testing.assert_array_equal(gx, xx.ravel())
        np.testing.assert_array_equal(gy, yy.ravel())
        np.testing.assert_array_equal(gi * COLS + gj, np.arange(ROWS * COLS))


def test_checkpoint_round_trip_equals_an_uninterrupted_run(tmp_path):
    X = _data()
    whole = build_som(ns.ArrayStream(X), ROWS, COLS, steps=200, seed=3)
    whole.run(200)
    first = build_som(ns.ArrayStream(X), ROWS, COLS, steps=200, seed=3)
    first.run(90)
    path = first.network.save(tmp_path / "som")
    second = build_som(ns.ArrayStream(X), ROWS, COLS, steps=200, seed=3)
    second.network.load(path)
    second.run(110)
    np.testing.assert_array_equal(second.weights, whole.weights)
    assert second.network.t == 200


# a compiled run stays compiled: a rule falling back to NumPy every step would warn PerStepWarning
@pytest.mark.filterwarnings("error::neurosim.PerStepWarning")
def test_compiled_and_per_step_paths_give_the_same_bits():
    X = _data()
    a = build_som(ns.ArrayStream(X), ROWS, COLS, steps=150, seed=2)
    b = _per_step(build_som(ns.ArrayStream(X), ROWS, COLS, steps=150, seed=2))
    a.run(150)
    b.run(150)
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.map.state["distance"], b.map.state["distance"])


@pytest.mark.parametrize("decay,sigma_decay", [("inverse_decay_to_zero", "inverse_decay_to_one"),
                                               ("linear_decay_to_zero", "linear_decay_to_one"),
                                               ("asymptotic_decay", "linear_decay_to_one")])
def test_minisoms_other_decays_give_minisoms_weights(decay, sigma_decay):
    T = 300
    som = minisom.MiniSom(ROWS, COLS, DIM, sigma=2.0, learning_rate=0.5, decay_function=decay,
                          sigma_decay_function=sigma_decay, random_seed=3)
    ours = {"inverse_decay_to_zero": "inverse_to_zero", "linear_decay_to_zero": "linear_to_zero",
            "asymptotic_decay": "asymptotic", "inverse_decay_to_one": "inverse_to_one",
            "linear_decay_to_one": "linear_to_one"}
    X = _data()
    c = build_som(ns.ArrayStream(X), ROWS, COLS, steps=T, sigma=2.0, decay=ours[decay],
                  sigma_decay=ours[sigma_decay], init=som.get_weights().copy())
    som.train(X, T)
    c.run(T)
    np.testing.assert_allclose(c.weights, som.get_weights().reshape(-1, DIM), rtol=1e-12, atol=1e-15)
    sched = c.prototypes.rule.rate
    fn = {"inverse_decay_to_zero": som._inverse_decay_to_zero, "linear_decay_to_zero": som._linear_decay_to_zero,
          "asymptotic_decay": som._asymptotic_decay}[decay]
    np.testing.assert_array_equal(sched.values(1, T), [fn(0.5, i, T) for i in range(T)])
