"""Spike events, rates, ISI statistics and the raster from recorded activity (issue 42)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.analysis import firing_rates, isi_cv, spike_events  # noqa: E402


def _recorded(spikes, dt_ns=100_000):
    T, n = spikes.shape
    return xr.DataArray(spikes[:, None, :], dims=("time", "batch", "unit"),
                        coords={"time": np.arange(1, T + 1) * np.timedelta64(dt_ns, "ns"),
                                "step": ("time", np.arange(1, T + 1)), "unit": np.array([7, 3, 11])},
                        name="activity")


def test_events_rates_and_cv_by_hand():
    spikes = np.zeros((100, 3))
    spikes[[9, 19, 39], 0] = 1  # unit 7: intervals 10, 20 -> CV = 5 / 15
    spikes[[4, 5], 1] = 1  # unit 3: one interval
    ev = spike_events(_recorded(spikes))
    assert ev.sizes["spike"] == 5
    assert ev.unit.values.tolist() == [3, 3, 7, 7, 7] and ev.step.values.tolist() == [5, 6, 10, 20, 40]
    np.testing.assert_allclose(ev.time.values, np.array([5, 6, 10, 20, 40]) * 1e-4)
    assert ev.attrs["duration"] == pytest.approx(0.01)
    rates = firing_rates(ev, units=[7, 3, 11])
    assert rates.sel(unit=7) == pytest.approx(300.0) and rates.sel(unit=3) == pytest.approx(200.0)
    assert rates.sel(unit=11) == 0.0
    cv = isi_cv(ev)
    assert cv.unit.values.tolist() == [7] and float(cv.sel(unit=7)) == pytest.approx(5 / 15)


def test_a_rate_activity_is_refused():
    with pytest.raises(ValueError, match="other than 0 and 1"):
        spike_events(_recorded(np.full((4, 3), 0.5)))
    with pytest.raises(ValueError, match="activity"):
        spike_events(xr.Dataset({"v": ("x", [1.0])}))


def test_the_raster_draws_one_dot_per_spike():
    spikes = (np.random.default_rng(0).random((200, 3)) < 0.05).astype(float)
    ax = ns.plot.raster(spike_events(_recorded(spikes)))
    assert ax.collections[0].get_offsets().shape[0] == int(spikes.sum())
    assert ax.get_xlabel() == "time (ms)"


def test_a_unit_born_or_removed_during_the_recording_is_rated_over_its_lifetime():
    spikes = np.zeros((100, 3))
    spikes[[9, 19], 0] = 1  # unit 7: alive throughout, 2 spikes in 100 samples of 0.1 ms -> 200 Hz
    spikes[:60, 1] = np.nan  # unit 3 born at sample 61: 4 spikes in its 40 samples -> 1000 Hz
    spikes[[69, 79, 89, 99], 1] = 1
    spikes[50:, 2] = np.nan  # unit 11 removed after sample 50: 1 spike in 50 samples -> 200 Hz
    spikes[24, 2] = 1
    ev = spike_events(_recorded(spikes))
    assert dict(zip(ev.unit_id.values.tolist(), ev.samples_alive.values.tolist())) == {7: 100, 3: 40, 11: 50}
    rates = firing_rates(ev, units=[7, 3, 11, 99])
    np.testing.assert_allclose(rates.values[:3], [200.0, 1000.0, 200.0])
    assert np.isnan(rates.sel(unit=99))  # never alive in the recording


def test_the_slot_layout_rates_each_id_over_the_samples_it_held_a_slot():
    # two slots; id 5 in slot 0 throughout, id 8 in slot 1 for 30 samples, then id 9 for 70
    T = 100
    act = np.zeros((T, 1, 2))
    act[[9, 49], 0, 0] = 1
    act[[4, 14, 24], 0, 1] = 1  # id 8: 3 spikes in 30 samples
    act[[59], 0, 1] = 1  # id 9: 1 spike in 70 samples
    ids = np.stack([np.full(T, 5), np.r_[np.full(30, 8), np.full(70, 9)]], axis=1)
    ds = xr.Dataset({"activity": (("time", "batch", "slot"), act), "unit_id": (("time", "slot"), ids)},
                    coords={"time": np.arange(1, T + 1) * np.timedelta64(100_000, "ns"),
                            "step": ("time", np.arange(1, T + 1))})
    rates = firing_rates(spike_events(ds), units=[5, 8, 9])
    np.testing.assert_allclose(rates.values, [2 / 0.01, 3 / 0.003, 1 / 0.007])
