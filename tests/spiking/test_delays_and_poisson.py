"""Transmission delays (a ring of past spikes) and Poisson spike trains (issue 42)."""

import pathlib

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


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
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


@pytest.mark.parametrize("per_synapse", [False, True])
def test_a_delayed_run_cut_by_a_checkpoint_delivers_the_spikes_in_flight(tmp_path, per_synapse):
    spikes = (np.random.default_rng(2).random((120, 12)) < 0.1).astype(float)
    rule = (lambda: ns.OnPre("ge", delays=lambda post, pre: ((pre + 2 * post) % 9) * 1e-4)) if per_synapse else \
        (lambda: ns.OnPre("ge", delay=0.001))

    def build():
        net = ns.Network(dt=1e-4)
        a, b = ns.Population("a", 12), ns.Population("b", 5, dynamics=ns.LIF())
        net.add(a, b)
        net.connect(ns.ArrayStream(spikes[:, None, :]), a)
        net.add(ns.Projection("W", a, b, connectivity=ns.FixedProbability(0.5), init=ns.Constant(0.001),
                              rule=rule()))
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


DELAYED = pathlib.Path(__file__).parent / "data" / "brian2_cuba_delays_100ms.npz"


@pytest.mark.parametrize("backend", ["compiled", pytest.param("python", marks=pytest.mark.slow)])
def test_per_synapse_delays_give_brian2s_raster(backend):
    # the CUBA network with a delay of 0-3 ms per synapse (cuba_delays, every value from 0 to 30 steps):
    # Brian2's spike queue delivers the spikes queued earliest first; the same spikes, bit for bit
    from neurosim.models.spiking import cuba_delays, cuba_inputs, cuba_network

    v0, pre, post = cuba_inputs(1234)
    net = cuba_network(v0, pre, post, delays=cuba_delays)
    net.run(1000, backend=backend)
    step, unit = np.nonzero(net.recorders["P"].to_dataset().activity.values[:, 0, :])
    ref = np.load(DELAYED)
    order = np.lexsort((unit, step))
    assert ref["i"].size > 2000
    np.testing.assert_array_equal(step[order], ref["step"])
    np.testing.assert_array_equal(unit[order], ref["i"])
    undelayed = np.load(pathlib.Path(__file__).parent / "data" / "brian2_cuba_100ms.npz")
    assert ref["i"].size != undelayed["i"].size  # the delays change the raster: the check has teeth


def test_a_delay_per_synapse_delivers_each_spike_that_many_steps_later():
    net = ns.Network(dt=1e-4)
    a, b = ns.Population("a", 2), ns.Population("b", 3, dynamics=ns.LIF(tau_e=1e9, v_rest=-0.07, method="euler"))
    net.add(a, b)
    spikes = np.zeros((12, 1, 2))
    spikes[0, 0, 0] = spikes[1, 0, 1] = 1.0
    net.connect(ns.ArrayStream(spikes), a)
    table = {(0, 0): 0, (1, 0): 3e-4, (2, 0): 5e-4, (0, 1): 1e-4, (1, 1): 2e-4, (2, 1): 0}
    w = net.add(ns.Projection("W", a, b, connectivity=ns.AllToAll(), init=ns.Constant(1.0),
                              rule=ns.OnPre("ge", delays=lambda post, pre: np.array([table[int(i), int(j)]
                                                                                     for i, j in zip(post, pre)]))))
    net.record(b, ["ge"])
    net.run(12)
    ge = net.recorders["b"].to_dataset().ge.values[:, 0, :]
    arrival = {(i, j): (0 if j == 0 else 1) + round(table[i, j] / 1e-4) for (i, j) in table}
    for i in range(3):
        expected = np.zeros(12)
        for j in range(2):
            expected[arrival[i, j]:] += 1.0
        np.testing.assert_allclose(ge[:, i], expected, rtol=1e-9, atol=0)  # tau_e = 1e9 s: decay below 1e-11
    np.testing.assert_array_equal(w.arrays["delay_steps"], [round(table[i, j] / 1e-4) for i in range(3)
                                                              for j in range(2)])


@pytest.mark.parametrize("delay, match", [(-1e-4, "negative"), (5e-5, "one step"), (np.nan, "finite")])
def test_bad_per_synapse_delays_are_refused_naming_the_synapse(delay, match):
    net = ns.Network(dt=1e-4)
    a, b = ns.Population("a", 2, dynamics=ns.LIF()), ns.Population("b", 2, dynamics=ns.LIF())
    net.add(a, b, ns.Projection("W", a, b, connectivity=ns.AllToAll(), init=ns.Constant(0.001),
                                rule=ns.OnPre("ge", delays=lambda post, pre: np.where(pre == 1, delay, 0.0))))
    with pytest.raises(ValueError, match=f"{match}.*from unit 1 to unit 0"):
        net.run(1)
    assert net.t == 0


def test_per_synapse_delays_on_a_dense_projection_are_refused():
    net = ns.Network(dt=1e-4)
    a, b = ns.Population("a", 2, dynamics=ns.LIF()), ns.Population("b", 2, dynamics=ns.LIF())
    net.add(a, b, ns.Projection("W", a, b, rule=ns.OnPre("ge", delays=lambda post, pre: 0.0 * post)))
    with pytest.raises(ValueError, match="sparse storage"):
        net.run(1)


@pytest.mark.parametrize("backend", [pytest.param("compiled", marks=pytest.mark.slow), "python"])
def test_a_uniform_delay_on_a_dense_projection_equals_the_sparse_one(backend):
    runs = {}
    for storage in ("dense", "sparse"):
        net = ns.Network(dt=1e-4, seed=3)
        a, b = ns.Population("a", 30, dynamics=ns.LIF(v_rest=-0.045)), ns.Population("b", 20, dynamics=ns.LIF())
        net.add(a, b)
        a.state["v"][0] = np.linspace(-0.06, -0.05, 30)
        net.add(ns.Projection("W", a, b, storage=storage, init=ns.Uniform(0, 0.004), rule=ns.OnPre("ge", delay=7e-4)))
        net.record(b, ["ge"])
        net.run(400, backend=backend)
        runs[storage] = net.recorders["b"].to_dataset().ge.values
    assert runs["dense"].max() > 0
    np.testing.assert_array_equal(runs["dense"], runs["sparse"])


def test_spike_times_drive_stdp_as_brian2s_spike_generator_does():
    # the STDP oracle's trains given as spike times (Brian2's SpikeGeneratorGroup input) instead of dense arrays
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
    from brian2_stdp_reference import G_MAX, N, T, TAU_POST, TAU_PRE, stdp_constants, stdp_inputs

    sys.path.pop(0)
    pn, pi, qn, w0 = stdp_inputs()
    net = ns.Network(dt=1e-4)
    pre, post = ns.Population("pre", N), ns.Population("post", 1)
    net.add(pre, post)
    net.connect(ns.SpikeTimeStream(pi, pn * 1e-4, dt=1e-4, dim=N), pre)
    net.connect(ns.SpikeTimeStream(np.zeros(qn.size, dtype=int), qn * 1e-4, dt=1e-4, dim=1), post)
    d_pre, d_post = stdp_constants()
    S = net.add(ns.Projection("S", pre, post, connectivity=ns.AllToAll(), init=w0[None, :],
                              rule=ns.STDP(tau_pre=TAU_PRE, tau_post=TAU_POST, d_pre=d_pre, d_post=d_post, w_max=G_MAX)))
    net.run(T)
    brian = np.load(pathlib.Path(__file__).parent / "data" / "brian2_stdp_trajectory.npz")["w"]
    np.testing.assert_array_equal(S.weights, brian[:, -1])


def test_spike_times_repeat_with_their_period_and_bad_ones_are_refused():
    s = ns.SpikeTimeStream([1, 0], [0.0002, 0.0], dt=1e-4, dim=2, period=5e-4)
    x = s.block(3, 9)[:, 0]
    steps, units = np.nonzero(x)
    np.testing.assert_array_equal(steps + 3, [5, 7, 10])  # unit 0 at steps 0, 5, 10; unit 1 at 2, 7, 12
    np.testing.assert_array_equal(units, [0, 1, 0])
    for kw, match in [(dict(units=[2], times=[0.0]), "units"), (dict(units=[0], times=[-1e-4]), "times"),
                      (dict(units=[0, 0], times=[0.0, 0.00004]), "twice"),
                      (dict(units=[0], times=[0.001], period=0.001), "period")]:
        with pytest.raises(ValueError, match=match):
            ns.SpikeTimeStream(dt=1e-4, dim=2, **kw)


def test_scheduled_poisson_rates_follow_their_schedule_and_refuse_bad_rates():
    # 0 Hz for the first 0.5 s, then 100 Hz: no spike before, about 100 Hz after
    s = ns.PoissonStream(lambda t: np.where(t < 0.5, 0.0, 100.0)[:, None], dt=1e-4, dim=200, seed=1)
    x = s.block(0, 10_000)[:, 0, :]
    assert x[:5000].sum() == 0
    rate = x[5000:].mean() / 1e-4
    assert abs(rate - 100.0) < 5 * np.sqrt(100.0 / (0.5 * 200))  # 5 sd of the estimate
    np.testing.assert_array_equal(s.block(4990, 30), ns.PoissonStream(lambda t: np.where(t < 0.5, 0.0, 100.0)[:, None],
                                                                      dt=1e-4, dim=200, seed=1).block(4990, 30))
    bad = ns.PoissonStream(lambda t: np.where(t < 0.01, 5.0, -1.0)[:, None], dt=1e-4, dim=3)
    with pytest.raises(ValueError, match="step 101"):
        bad.block(0, 200)
    with pytest.raises(ValueError, match="dim"):
        ns.PoissonStream(lambda t: t[:, None], dt=1e-4)


def test_poisson_rates_from_a_stream_follow_it_step_by_step():
    # a rate profile as an ArrayStream: unit 0 at 0 Hz then 200 Hz, unit 1 always 50 Hz; the spikes follow
    profile = np.zeros((20_000, 2))
    profile[:, 1] = 50.0
    profile[10_000:, 0] = 200.0
    s = ns.PoissonStream(ns.ArrayStream(profile), dt=1e-4, seed=4)
    assert s.dim == 2
    x = s.block(0, 20_000)[:, 0, :]
    assert x[:10_000, 0].sum() == 0
    for rate, spikes in [(200.0, x[10_000:, 0]), (50.0, x[:, 1])]:
        seconds = spikes.size * 1e-4
        assert abs(spikes.sum() / seconds - rate) < 5 * np.sqrt(rate / seconds)  # 5 sd of a Poisson count
