"""Recorded variables say what they are (units, long_name); no empty event log where nothing happened (issue 26)."""

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.params import Float
from neurosim.plot import alive_counts
from sm_helpers import make_sm

EVENTS = ("event_step", "event_kind", "event_population", "event_unit")


@ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)}, post_variables={"trace": 0.0})
def traced(weights, post, pre, trace, rate):
    for i in range(weights.shape[0]):
        trace[i] += rate * post[0, i]


def _net():
    net = make_sm(every=5)  # records y: activity (per sample) and mu (declared by CumulativeActivity)
    z = ns.Population("z", 2, dynamics=ns.Linear())
    net.add(z)
    net.add(ns.Projection("V", net.populations["y"], z, rule=traced(rate=0.1)))
    net.record(net.projections["W"], "weights", every=5)
    net.record(z, ["activity", "trace"], every=5)
    return net


def test_every_recorded_variable_has_units_and_long_name():
    net = _net()
    net.run(20)
    y, w, z = (net.recorders[n].to_dataset() for n in ("y", "W", "z"))
    assert y["activity"].attrs == {"units": "1", "long_name": "activity of population y"}
    # declared where the variable is declared (CumulativeActivity)
    assert y["mu"].attrs["units"] == "1" and y["mu"].attrs["long_name"].startswith("cumulative activity mu")
    assert w["weights"].attrs == {"units": "1", "long_name": "weights of projection W (x -> y, sign +1)"}
    # not declared: the default names the variable and its population
    assert z["trace"].attrs == {"units": "1", "long_name": "trace of population z"}
    assert net.recorders["y"].variable_attrs("mu") == dict(y["mu"].attrs)


def test_a_declared_description_is_kept_and_a_later_one_fills_in_only_what_is_missing():
    pop = ns.Population("p", 3)
    pop.add_variable("v", 0.0, units="mV")
    pop.add_variable("v", 0.0, units="V", long_name="membrane potential")
    assert pop.variable_attrs("v") == {"units": "mV", "long_name": "membrane potential"}
    with pytest.raises(TypeError, match="units must be a string"):
        pop.add_variable("u", 0.0, units=3)
    lateral = make_sm().projections["M"].variable_attrs()
    assert lateral["long_name"] == "lateral weights of projection M (y -> y, sign -1)"
    with pytest.raises(ValueError, match="only 'weights'"):
        make_sm().projections["M"].variable_attrs("B")


def test_no_event_variables_without_events_and_all_four_with_them():
    net = make_sm(every=5)
    net.run(10)
    ds = net.recorders["y"].to_dataset()
    assert not any(v in ds.variables for v in EVENTS) and "event" not in ds.dims
    y = net.populations["y"]
    net.apply(ns.Birth(y, 2))
    net.apply(ns.Death(y, [int(y.ids[0])]))
    net.run(10)
    ds = net.recorders["y"].to_dataset()
    assert list(ds["event_kind"].values) == ["birth", "birth", "death"]
    assert ds["event_step"].values.tolist() == [10, 10, 10]


def test_a_recording_in_the_old_format_with_empty_event_variables_still_reads(tmp_path):
    # written by hand as recordings were before: empty event_* variables along a zero-length event dim
    old = xr.Dataset(
        {"activity": (("time", "batch", "unit"), np.arange(6.0).reshape(3, 1, 2)),
         "event_step": ("event", np.zeros(0, dtype=np.int64)),
         "event_kind": ("event", np.zeros(0, dtype="<U1")),
         "event_population": ("event", np.zeros(0, dtype="<U1")),
         "event_unit": ("event", np.zeros(0, dtype=np.int64))},
        coords={"time": [5, 10, 15], "unit": [0, 1]}, attrs={"recorder": "y", "layout": "dense"})
    old.to_netcdf(tmp_path / "old.nc", engine="h5netcdf")
    new = _new_recording()
    new.to_netcdf(tmp_path / "new.nc", engine="h5netcdf")
    with xr.open_dataset(tmp_path / "old.nc", engine="h5netcdf") as a, \
            xr.open_dataset(tmp_path / "new.nc", engine="h5netcdf") as b:
        assert a["event_step"].size == 0
        # both read alike by the functions that use the event log: no births, no deaths, 2 units throughout
        for ds in (a, b):
            steps, alive, births, deaths = alive_counts(ds, 2, steps=[5, 10, 15])
            assert alive.tolist() == [2, 2, 2] and births.sum() == deaths.sum() == 0
        assert b["activity"].attrs["long_name"] == "activity of population y"


def _new_recording():
    net = make_sm(every=5, k=2)
    net.run(15)
    return net.recorders["y"].to_dataset()


def test_streamed_recordings_carry_the_attrs_and_no_empty_event_variables(tmp_path):
    pytest.importorskip("zarr")
    from neurosim.store import open_store

    net = make_sm(every=5)
    net.record(net.projections["W"], "weights", every=5, store=tmp_path / "w.zarr", buffer=2)
    net.run(20)
    for layout in ("slots", "dense"):
        ds = open_store(tmp_path / "w.zarr", layout=layout)
        assert ds["weights"].attrs["long_name"] == "weights of projection W (x -> y, sign +1)"
        assert ds["weights"].attrs["units"] == "1"
        assert not any(v in ds.variables for v in EVENTS)
    assert net.recorders["W"].to_dataset()["weights"].attrs["units"] == "1"
