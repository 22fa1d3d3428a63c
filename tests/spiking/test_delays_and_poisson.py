"""Transmission delays (a ring of past spikes) and Poisson spike trains (issue 42)."""

import numpy as np
import pytest

import neurosim as ns


def _net(spikes, delay, shift=0, backend="compiled"):
    """Input spike trains onto 5 LIF units through a sparse projection; returns ge after every step."""
    T, n_pre = spikes.shape
    shifted = np.zeros_like(spikes)
    shifted[shift:] = spikes[:T - shift]
    net = ns.Network(dt=1e-4)
    a = ns.Population("a", n_pre)
    b = ns.Population("b", 5, dynamics=ns.LIF())
    net.add(a, b)
    net.connect(ns.ArrayStream(shifted[:, None, :]), a)
    rng = np.random.default_rng(0)
    w = ns.Projection("W", a, b, connectivity=ns.FixedProbability(0.5), init=ns.Uniform(0.0, 0.002),
                      rule=ns.OnPre("ge", delay=delay))
    net.add(w)
    del rng
    net.record(b, ["ge"])
    net.run(T, backend=backend)
    return net.recorders["b"].to_dataset().ge.values[:, 0, :]


@pytest.mark.parametrize("backend", ["compiled", "python"])
# 0.15 ms is 1.4999999999999998 steps in floating point: int(q + 0.5) gives 1, as in Brian2's queue
@pytest.mark.parametrize("delay, steps", [(0.002, 20), (0.0002, 2), (0.00015, 1), (1e-4, 1)])
def test_a_delay_delivers_every_spike_that_many_steps_later(backend, delay, steps):
    spikes = (np.random.default_rng(1).random((200, 12)) < 0.05).astype(float)
    delayed = _net(spikes, delay, backend=backend)
    shifted = _net(spikes, 0.0, shift=steps, backend=backend)
    np.testing.assert_array_equal(delayed, shifted)
    assert np.abs(delayed).max() > 0


def test_delays_shorter_than_a_step_or_negative_are_refused_by_name():
    with pytest.raises(ValueError, match="delay"):
        ns.OnPre("ge", delay=-1e-3)
    with pytest.raises(ValueError, match="delay"):
        ns.OnPre("ge", delay=float("nan"))
    net = ns.Network(dt=1e-4)
    a, b = ns.Population("a", 2, dynamics=ns.LIF()), ns.Population("b", 2, dynamics=ns.LIF())
    net.add(a, b, ns.Projection("W", a, b, connectivity=ns.AllToAll(), rule=ns.OnPre("ge", delay=5e-5)))
    with pytest.raises(ValueError, match="shorter than one step"):
        net.run(1)
    assert net.t == 0


def test_a_delayed_run_cut_by_a_checkpoint_delivers_the_spikes_in_flight(tmp_path):
    spikes = (np.random.default_rng(2).random((120, 12)) < 0.1).astype(float)

    def build():
        net = ns.Network(dt=1e-4)
        a, b = ns.Population("a", 12), ns.Population("b", 5, dynamics=ns.LIF())
        net.add(a, b)
        net.connect(ns.ArrayStream(spikes[:, None, :]), a)
        net.add(ns.Projection("W", a, b, connectivity=ns.FixedProbability(0.5), init=ns.Constant(0.001),
                              rule=ns.OnPre("ge", delay=0.001)))
        return net

    whole = build()
    whole.run(120)
    cut = build()
    cut.run(55)
    cut.save(tmp_path / "c")
    resumed = build()
    resumed.load(tmp_path / "c")
    resumed.run(65)
    np.testing.assert_array_equal(resumed.populations["b"].state["ge"], whole.populations["b"].state["ge"])


def test_poisson_trains_have_their_rates_and_are_the_same_however_the_run_is_cut():
    s = ns.PoissonStream([5.0, 50.0, 0.0], dt=1e-4, seed=3)
    x = s.block(0, 200_000)[:, 0, :]  # 20 s
    rates = x.mean(0) / 1e-4
    # binomial sampling error: sd = sqrt(r / 20 s) Hz, 0.5 Hz at 5 Hz and 1.6 Hz at 50 Hz; 4 sd bounds
    assert abs(rates[0] - 5.0) < 2.0 and abs(rates[1] - 50.0) < 6.4 and rates[2] == 0.0
    np.testing.assert_array_equal(s.block(0, 5000), np.concatenate([s.block(0, 1234), s.block(1234, 3766)]))
    assert set(np.unique(x)) <= {0.0, 1.0}


@pytest.mark.parametrize("rates, kw, match", [
    (-1.0, dict(dim=3), "rates"), (float("nan"), dict(dim=3), "rates"), ([1.0, np.inf], {}, "rates"),
    (20_000.0, dict(dim=2), r"rate \* dt"), (5.0, {}, "dim"), ([[1.0]], {}, "rates"),
])
def test_bad_rates_are_refused_by_name(rates, kw, match):
    with pytest.raises(ValueError, match=match):
        ns.PoissonStream(rates, dt=1e-4, **kw)
