"""Recordings under unit turnover stay proportional to what was sampled; named time dims; physical time."""

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from sm_helpers import make_sm
from neurosim.streams import GaussianStream
from neurosim.triggers import every_step


def turnover(steps, size=8):
    """h keeps ``size`` units; every 10 steps its oldest unit dies and a new one is born."""
    net = ns.Network(seed=0)
    x = ns.Population("x", 6)
    h = ns.Population("h", size, dynamics=ns.Jacobi(eta=0.2, max_iter=10))
    net.add(x, h)
    net.connect(GaussianStream(np.linspace(2, 0.5, 6), seed=1), x)
    net.add(ns.Projection("W", x, h, init=ns.Normal(0.3), rule=ns.Oja(0.01)))
    net.add(ns.Projection("M", h, h, sign=-1, init=ns.Normal(0.05)))
    net.record(h)
    net.record(net.projections["M"], "weights", name="M")

    def swap(n):
        pop = n.populations["h"]
        return [ns.Birth(pop, 1), ns.Death(pop, pop.ids[:1])]

    net.add(ns.Trigger(every_step(), swap, every=10, name="swap"))
    net.run(steps)
    return net


@pytest.mark.parametrize("steps", [200, 400])
def test_weights_recorded_under_turnover_stay_proportional_to_the_samples(steps):
    net = turnover(steps)
    rec = net.recorders["M"]
    ds = rec.to_dataset()
    assert ds.attrs["layout"] == "slots"
    # exactly the values sampled: steps samples of an 8 x 8 matrix, whatever the run length
    assert ds.weights.shape == (steps, 8, 8)
    assert ds.unit_id.shape == (steps, 8) and ds.pre_unit_id.shape == (steps, 8)
    assert ds.weights.nbytes == steps * 8 * 8 * 8
    # the dense layout spans every id ever alive: 8 + steps / 10 of them
    ids = 8 + steps // 10
    assert rec.dataset_cells("dense") == steps * ids * ids
    assert rec.dataset_cells("slots") == steps * 8 * 8


def test_slot_values_agree_with_the_dense_layout_by_id():
    net = turnover(120)
    for name in ("M", "h"):
        rec = net.recorders[name]
        slots, dense = rec.to_dataset(layout="slots"), rec.to_dataset(layout="dense")
        assert dense.attrs["layout"] == "dense" and slots.attrs["layout"] == "slots"
        assert np.array_equal(slots.time.values, dense.time.values)
        for ti in (0, 9, 10, 11, 55, 119):
            uid = slots.unit_id.values[ti]
            assert (uid >= 0).all(), "the population keeps 8 units: every slot is filled"
            if name == "M":
                pid = slots.pre_unit_id.values[ti]
                want = dense.weights.isel(time=ti).sel(unit=uid, pre_unit=pid).values
                assert np.array_equal(slots.weights.values[ti], want)
                assert np.all(np.diag(want) == 0.0)
            else:
                want = dense.activity.isel(time=ti).sel(unit=uid).values
                assert np.array_equal(slots.activity.values[ti], want)
                # every id alive at that sample, and no other, has values in the dense layout
                alive = dense.unit.values[np.isfinite(dense.activity.isel(time=ti, batch=0).values)]
                assert sorted(alive.tolist()) == sorted(uid.tolist())
    # ids alive at the first sample: 0..7; after the swap at step 10: 1..8
    ds = net.recorders["h"].to_dataset(layout="slots")
    assert ds.unit_id.sel(time=9).values.tolist() == list(range(8))
    assert ds.unit_id.sel(time=10).values.tolist() == list(range(1, 9))


def test_empty_slots_hold_nan_and_id_minus_one():
    net = ns.Network(seed=0)
    x, h = ns.Population("x", 3), ns.Population("h", 2, dynamics=ns.Linear())
    net.add(x, h, ns.Projection("W", x, h))
    net.connect(GaussianStream(np.ones(3), seed=0), x)
    net.record(h)
    net.run(2)
    net.apply(ns.Birth(h, 3))
    net.run(2)
    ds = net.recorders["h"].to_dataset(layout="slots")
    assert ds.unit_id.values.tolist() == [[0, 1, -1, -1, -1]] * 2 + [[0, 1, 2, 3, 4]] * 2
    assert np.isnan(ds.activity.values[:2, 0, 2:]).all() and np.isfinite(ds.activity.values[2:]).all()
    assert net.recorders["h"].to_dataset().attrs["layout"] == "dense", "small enough for the dense layout"


def test_without_turnover_the_default_stays_dense():
    net = make_sm()
    net.run(20)
    ds = net.recorders["y"].to_dataset()
    assert ds.attrs["layout"] == "dense" and ds.unit.values.tolist() == [0, 1, 2]


def test_recorders_name_their_time_dim_so_datasets_merge():
    net = make_sm()
    y = net.populations["y"]
    net.record(y, "mu", every=5, name="slow", time_dim="t5")
    with pytest.raises(ValueError, match="time_dim must not be one of"):
        ns.Recorder(y, "mu", time_dim="unit")
    net.run(50)
    fast, slow = net.recorders["y"].to_dataset(), net.recorders["slow"].to_dataset()
    assert slow.mu.dims == ("t5", "unit") and slow.t5.values.tolist() == list(range(5, 51, 5))
    merged = xr.merge([fast.drop_vars("mu"), slow], compat="no_conflicts", join="outer", combine_attrs="override")
    assert merged.sizes["time"] == 50 and merged.sizes["t5"] == 10
    np.testing.assert_array_equal(merged.mu.values, fast.mu.values[4::5])


def test_dt_gives_a_physical_time_index_that_resamples():
    with pytest.raises(ValueError, match=r"dt must be in \(0.0, inf\)"):
        ns.Network(dt=0.0)
    with pytest.raises(TypeError, match="dt must be a real number"):
        ns.Network(dt="1ms")
    nets = []
    for dt in (None, 1e-3):
        net = ns.Network(seed=0, dt=dt)
        x, h = ns.Population("x", 3), ns.Population("h", 2, dynamics=ns.Linear())
        net.add(x, h, ns.Projection("W", x, h))
        net.connect(GaussianStream(np.ones(3), seed=0), x)
        net.record(h)
        net.record(h, every=4, name="slow", time_dim="t4")
        net.run(100)
        nets.append(net)
    plain, timed = (n.recorders["h"].to_dataset() for n in nets)
    assert plain.time.dtype == np.int64 and "step" not in plain.coords
    assert timed.time.dtype == "timedelta64[ns]"
    assert timed.time.values[0] == np.timedelta64(1, "ms") and timed.time.values[-1] == np.timedelta64(100, "ms")
    assert timed.step.values.tolist() == list(range(1, 101))
    assert timed.attrs["network.dt"] == 1e-3
    np.testing.assert_array_equal(timed.activity.values, plain.activity.values)
    means = timed.resample(time="10ms", origin="start").mean()
    # bins [1, 11) ms, [11, 21) ms, ...: ten consecutive steps each
    assert means.time.values[1] == np.timedelta64(11, "ms")
    want = plain.activity.values[:, 0, :].reshape(10, 10, 2).mean(axis=1)
    np.testing.assert_allclose(means.activity.values[:, 0, :], want, rtol=1e-12)
    slow = nets[1].recorders["slow"].to_dataset()
    assert slow.t4.dtype == "timedelta64[ns]" and slow.t4_step.values.tolist() == list(range(4, 101, 4))


def test_slot_and_physical_time_datasets_round_trip_through_netcdf(tmp_path):
    net = turnover(40)
    ds = net.recorders["M"].to_dataset(layout="slots")
    ds.to_netcdf(tmp_path / "m.nc", engine="h5netcdf")
    with xr.open_dataset(tmp_path / "m.nc", engine="h5netcdf") as back:
        assert back.load().identical(ds)
    timed = ns.Network(seed=0, dt=2.5e-3)
    x, h = ns.Population("x", 3), ns.Population("h", 2, dynamics=ns.Linear())
    timed.add(x, h, ns.Projection("W", x, h))
    timed.connect(GaussianStream(np.ones(3), seed=0), x)
    timed.record(h)
    timed.run(8)
    ds = timed.recorders["h"].to_dataset()
    assert ds.time.values[-1] == np.timedelta64(20, "ms")
    ds.to_netcdf(tmp_path / "t.nc", engine="h5netcdf")
    with xr.open_dataset(tmp_path / "t.nc", engine="h5netcdf") as back:
        back = back.load()
    assert back.time.dtype == "timedelta64[ns]" and np.array_equal(back.time.values, ds.time.values)
    assert np.array_equal(back.step.values, ds.step.values) and np.array_equal(back.activity.values, ds.activity.values)
