"""Neural Gas on the engine against an independent NumPy transcription of Martinetz et al. (1993), step by step."""

import numpy as np
import pytest
from reference_gas import NeuralGasReference

import neurosim as ns
from neurosim.models.self_organizing import build_neural_gas, quantization_error
from neurosim.schedules import GeometricDecay

#: slow tier: the whole Neural Gas circuit against a transcription, on every path (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

N, DIM = 12, 2


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, 2 * np.pi, n)  # a ring: a distribution a gas covers and a bad init does not
    # centred away from the initial prototypes (random unit vectors), which must travel there
    return 3.0 + np.c_[np.cos(angle), np.sin(angle)] * rng.uniform(0.8, 1.0, n)[:, None]


@pytest.mark.parametrize("path", ["compiled", "per_step", "python"])
def test_matches_the_transcription_at_every_step(path):
    X = _data()
    t_max = 300
    c = build_neural_gas(ns.ArrayStream(X), N, steps=t_max, seed=4)
    if path == "per_step":
        c.network.add_callback(lambda n: None)
    ref = NeuralGasReference(c.weights, t_max=t_max)  # the paper's defaults but t_max
    backend = "python" if path == "python" else "auto"
    for t in range(t_max):
        c.run(1, backend=backend)
        k = ref.step(X[t % len(X)])
        np.testing.assert_allclose(c.weights, ref.w, rtol=1e-12, atol=1e-15)
        assert np.argmax(c.map.activity[0]) == np.argmin(k)
    w0 = build_neural_gas(ns.ArrayStream(X), N, steps=t_max, seed=4).weights
    assert quantization_error(X, c.weights) < 0.1 * quantization_error(X, w0)


# a compiled run stays compiled: a rule falling back to NumPy every step would warn PerStepWarning
@pytest.mark.filterwarnings("error::neurosim.PerStepWarning")
def test_long_compiled_run_matches_the_transcription():
    # one segment of many steps (no per-step exits); schedules drawn up front must give the same numbers
    X = _data(seed=1)
    t_max = 2000
    c = build_neural_gas(ns.ArrayStream(X), N, steps=t_max, seed=5, eps_i=0.3, eps_f=0.01, lam_i=4.0, lam_f=0.1)
    ref = NeuralGasReference(c.weights, eps_i=0.3, eps_f=0.01, lam_i=4.0, lam_f=0.1, t_max=t_max)
    c.run(t_max)
    for t in range(t_max):
        ref.step(X[t % len(X)])
    np.testing.assert_allclose(c.weights, ref.w, rtol=1e-11, atol=1e-14)


def test_one_step_by_hand():
    # three units on a line, x nearest unit 2, then 0, then 1: ranks 1, 2, 0
    w0 = np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]])
    x = np.array([[0.8, 0.0]])
    c = build_neural_gas(ns.ArrayStream(x), 3, steps=10, eps_i=0.5, lam_i=2.0, init=w0)
    c.run(1)
    g = 0.5 * np.exp(-np.array([1.0, 2.0, 0.0]) / 2.0)
    np.testing.assert_allclose(c.weights[:, 0], w0[:, 0] + g * (0.8 - w0[:, 0]), rtol=1e-15)
    np.testing.assert_array_equal(c.weights[:, 1], 0.0)


def test_geometric_decay_is_the_papers_schedule():
    s = GeometricDecay(10.0, 0.01, 40_000)
    assert s(1) == 10.0  # t = 0 before the first input
    assert s(40_001) == pytest.approx(0.01, rel=1e-12)
    assert s(20_001) == pytest.approx(np.sqrt(10.0 * 0.01), rel=1e-12)


def test_checkpoint_round_trip_equals_an_uninterrupted_run(tmp_path):
    X = _data()
    whole = build_neural_gas(ns.ArrayStream(X), N, steps=300, seed=1)
    whole.run(300)
    first = build_neural_gas(ns.ArrayStream(X), N, steps=300, seed=1)
    first.run(120)
    path = first.network.save(tmp_path / "gas")
    second = build_neural_gas(ns.ArrayStream(X), N, steps=300, seed=1)
    second.network.load(path)
    second.run(180)
    np.testing.assert_array_equal(second.weights, whole.weights)
