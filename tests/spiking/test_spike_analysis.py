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
