"""Schedules at every step against independent formulas: scikit-learn's own update for ``Mairal2010``."""

import numpy as np
import pytest

import neurosim as ns


def _sklearn_beta(batch, t):
    """scikit-learn's weight of the past before mini-batch t (1-based): run its update on A = 1, code = 0."""
    from sklearn.decomposition import MiniBatchDictionaryLearning
    est = MiniBatchDictionaryLearning()
    est._A, est._B = np.ones((1, 1)), np.ones((1, 1))
    est._update_inner_stats(np.zeros((batch, 1)), np.zeros((batch, 1)), batch, t - 1)
    return float(est._A[0, 0])


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_mairal2010_is_scikit_learns_weight_on_both_sides_of_t_equal_batch(batch):
    pytest.importorskip("sklearn")
    sched = ns.schedules.Mairal2010(batch)
    steps = np.arange(1, 4 * batch + 3)
    want = np.array([_sklearn_beta(batch, int(t)) for t in steps])
    np.testing.assert_allclose(sched.values(1, steps.size), want, rtol=1e-15, atol=0)
    for t in (1, batch, batch + 1, 4 * batch + 2):
        assert sched(t) == pytest.approx(_sklearn_beta(batch, t), rel=1e-15)


def test_mairal2010_by_hand():
    # batch 3: t = 2 < 3 gives theta = 6, beta = 4/7; t = 5 >= 3 gives theta = 9 + 5 - 3 = 11, beta = 9/12
    sched = ns.schedules.Mairal2010(3)
    assert sched(2) == pytest.approx(4 / 7, rel=1e-15)
    assert sched(3) == pytest.approx((9 + 3 - 3 + 1 - 3) / (9 + 3 - 3 + 1), rel=1e-15)
    assert sched(5) == pytest.approx(0.75, rel=1e-15)


# -- every schedule against its documented formula, by hand, at steps 0-9 -------------------------

T = np.arange(10, dtype=float)


@pytest.mark.parametrize("schedule, expected", [
    (ns.schedules.ExponentialDecay(2.0, 0.5), 2.0 * 0.5 ** T),
    (ns.schedules.ExponentialDecay(2.0, 0.5, floor=0.3), np.maximum(0.3, 2.0 * 0.5 ** T)),
    (ns.schedules.ExponentialDecay(1.0, 1.0), np.ones(10)),
    (ns.schedules.InverseTime(1.0, 4.0), 1.0 / (1.0 + T / 4.0)),
    (ns.schedules.InverseTime(1.0, 4.0, floor=0.1), 1.0 / (1.0 + T / 4.0) + 0.1),
    (ns.schedules.LinearRamp(1.0, 3.0, 4), np.r_[1.0, 1.5, 2.0, 2.5, np.full(6, 3.0)]),
    (ns.schedules.Piecewise({0: 0.5, 3: 0.1, 7: 0.0}), np.r_[np.full(3, 0.5), np.full(4, 0.1), np.zeros(3)]),
    (ns.schedules.Function(lambda t: t * t), T * T),
])
def test_schedule_values_are_the_documented_formula(schedule, expected):
    np.testing.assert_allclose(schedule.values(0, 10), expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose([schedule(t) for t in range(10)], expected, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(schedule.values(4, 3), schedule.values(0, 10)[4:7])  # any window


I20 = np.arange(10, dtype=float)  # i = t - 1 at steps t = 1..10, with T = 20 steps


@pytest.mark.parametrize("kind, start, expected", [
    ("inverse_to_zero", 0.7, 0.7 * 0.2 / (0.2 + I20)),  # C = T / 100
    ("linear_to_zero", 0.7, 0.7 * (1 - I20 / 20)),
    ("inverse_to_one", 3.5, 3.5 / (1 + I20 * 2.5 / 20)),  # C = (start - 1) / T
    ("inverse_to_one", 0.4, 0.4 / (1 - I20 * 0.6 / 20)),
    # start 2 would not tell i (1 - start) from i / (1 - start): 1 - start = -1
    ("linear_to_one", 3.5, 3.5 + I20 * (1 - 3.5) / 20),
    ("linear_to_one", 0.4, 0.4 + I20 * 0.6 / 20),
])
def test_minisom_decays_are_the_documented_formulas(kind, start, expected):
    schedule = ns.schedules.MiniSomDecay(start, 20, kind)
    np.testing.assert_allclose(schedule.values(1, 10), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([schedule(t) for t in range(1, 11)], expected, rtol=1e-12, atol=1e-15)


def test_exponential_decay_halves_each_step_by_hand():
    assert ns.schedules.ExponentialDecay(8.0, 0.5).values(0, 5).tolist() == [8.0, 4.0, 2.0, 1.0, 0.5]
