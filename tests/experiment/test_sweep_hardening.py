"""Sweeps under hostile inputs (issue 23): nothing is lost, truncated or overwritten, and nothing fails late.

Every test here failed before the fix it names: a run's text cut to the first
stored run's width, attributes netCDF cannot hold aborting a stored sweep
half-way, model results silently overwritten by the sweep's bookkeeping,
grid values equal as numbers crashing after every run, and a model's
RuntimeError stopping the whole sweep in validation.
"""

import json
import pathlib

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.cli import main
from neurosim.experiment import Sweep

#: slow tier: sweeps in worker processes under hostile inputs (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow


def words(a, seed):
    """Text results whose width depends on the point: a = 1 gives the narrowest."""
    if a == 0:
        raise RuntimeError("no words for a = 0")
    kinds = np.array(["birth", "death"][:a - 1], dtype=str) if a > 1 else np.array([], dtype=str)
    return xr.Dataset({"word": "s" if a == 1 else "longer", "event_kind": ("event", kinds),
                       "event_step": ("event", np.arange(len(kinds), dtype=np.int64))},
                      coords={"event": np.arange(len(kinds))})


def _text(ds, name):
    return [str(v) for v in np.asarray(ds[name].values).ravel()]


@pytest.mark.parametrize("grid", [[1, 3], [3, 1], [0, 1, 3], [2, 1, 3]])
def test_stored_text_is_never_cut_to_the_first_runs_width(grid, tmp_path):
    sweep = Sweep(words, grid={"a": grid})
    clean = sweep.run(progress=False)
    out = tmp_path / "out"
    sweep.run(out=out, progress=False)
    files = sorted((out / "runs").glob("run-*.nc"))
    # every run loaded; then each run lost in turn (finishing after the loaded ones), as a resume does
    for lost in [None, *files]:
        if lost is not None:
            lost.unlink()
        got = sweep.run(out=out, progress=False)
        with xr.open_dataset(out / "words.nc", engine="h5netcdf") as f:
            stored = f.load()
        for ds in (got, stored):
            assert _text(ds, "word") == _text(clean, "word")
            assert _text(ds, "event_kind") == _text(clean, "event_kind")
            assert _text(ds, "error") == _text(clean, "error")
        # what the sweep returns writes back whole, too (no narrow encoding inherited from a run file)
        again = tmp_path / "again.nc"
        got.to_netcdf(again, engine="h5netcdf")
        with xr.open_dataset(again, engine="h5netcdf") as f:
            assert _text(f, "word") == _text(clean, "word")
        again.unlink()


def slow_words(a, seed):
    """``words``, the narrowest first to start and the last to finish."""
    import time

    time.sleep(0.6 if a == 1 else 0.0)
    return words(a, seed)


@pytest.mark.slow
def test_stored_text_stays_whole_when_runs_finish_out_of_order_on_processes(tmp_path):
    sweep = Sweep(slow_words, grid={"a": [1, 3, 2]}, seeds=[0, 1])
    clean = sweep.run(progress=False)
    got = sweep.run(executor="processes", workers=2, out=tmp_path, progress=False)
    resumed = sweep.run(executor="processes", workers=2, out=tmp_path, progress=False)
    with xr.open_dataset(tmp_path / "slow_words.nc", engine="h5netcdf") as f:
        stored = f.load()
    for ds in (got, resumed, stored):
        for name in ("word", "event_kind"):
            assert _text(ds, name) == _text(clean, name)


def with_attrs(a, seed):
    ds = xr.Dataset({"x": ("i", np.arange(3.0) * a)})
    ds.attrs["config"] = {"a": a, "nested": [1, 2]}
    ds.attrs["ok"] = "plain"
    ds.x.attrs.update(meta={"units": "Hz"}, flag=True, missing=None, units="Hz")
    return ds


def test_attributes_netcdf_cannot_hold_are_stored_as_json_and_come_back(tmp_path):
    sweep = Sweep(with_attrs, grid={"a": [1, 2]}, seeds=[0, 1])
    clean = sweep.run(progress=False)
    first = sweep.run(out=tmp_path, progress=False)  # aborted on the first run before the fix
    assert first.x.attrs == clean.x.attrs
    resumed = sweep.run(out=tmp_path, progress=False)  # every run loaded from its file
    assert resumed.x.attrs == clean.x.attrs == {"meta": {"units": "Hz"}, "flag": True, "missing": None,
                                                 "units": "Hz"}
    np.testing.assert_array_equal(resumed.x.values, clean.x.values)
    with xr.open_dataset(tmp_path / "with_attrs.nc", engine="h5netcdf") as f:
        assert json.loads(f.x.attrs["meta"]) == {"units": "Hz"} and f.x.attrs["units"] == "Hz"
        assert "meta" in json.loads(f.x.attrs["sweep_json_attrs"])


def unstorable(a, seed):
    """A result no netCDF file holds (an object array): the run is an error row, the sweep goes on."""
    if a == 2:
        return {"x": np.array([{"a": 1}, None], dtype=object)}
    return {"x": np.arange(2.0) * a}


def test_a_result_that_cannot_be_stored_is_that_runs_error_not_the_sweeps(tmp_path):
    ds = Sweep(unstorable, grid={"a": [1, 2, 3]}).run(out=tmp_path, progress=False)
    assert "cannot be stored" in str(ds.error.sel(a=2, seed=0).values)
    assert _text(ds.sel(a=[1, 3]), "error") == ["", ""]
    np.testing.assert_array_equal(ds.x.sel(a=3, seed=0).values, [0.0, 3.0])


@pytest.mark.parametrize("name", ["error", "wall_seconds", "compile_seconds", "seed", "a", "run"])
def test_results_named_like_the_sweeps_bookkeeping_are_refused_by_name(name):
    def clash(a, seed):
        return {name: np.float64(a + 100), "other": np.float64(a)}

    ds = Sweep(clash, grid={"a": [1, 2]}).run(progress=False)
    for err in _text(ds, "error"):
        assert "ValueError" in err and repr(name) in err and "rename" in err
    # the sweep's own bookkeeping is untouched and was not overwritten by the model
    assert (ds.wall_seconds >= 0).all() and list(ds.a.values) == [1, 2] and list(ds.seed.values) == [0]


@pytest.mark.parametrize("values, shown", [
    ([1, 1.0], "1, 1.0"),
    ([-0.0, 0.0], "-0.0, 0.0"),
    (["1", 1], "'1', 1"),
    ([np.int64(2), 2.0], "2, 2.0"),
    ([1, 2, 1.0], "1, 1.0"),
])
def test_grid_values_equal_as_coordinates_are_refused_at_construction(values, shown):
    with pytest.raises(ValueError, match=rf"grid\['a'\] repeats a value.*{shown}") as info:
        Sweep(measure, grid={"a": values, "b": [0]})
    assert "coordinate" in str(info.value)


def test_points_equal_as_coordinates_are_refused_at_construction():
    with pytest.raises(ValueError, match="points repeats a point"):
        Sweep(measure, points=[{"a": 1, "b": 0}, {"a": 1.0, "b": 0}])


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30])
def test_grid_values_out_of_range_are_refused_at_construction(value):
    with pytest.raises(ValueError, match=rf"grid\['a'\].*{value}.*64-bit"):
        Sweep(measure, grid={"a": [1, value], "b": [0]})
    with pytest.raises(ValueError, match=rf"points.*'a'.*{value}.*64-bit"):
        Sweep(measure, points=[{"a": value, "b": 0}])


def measure(a, b, seed):
    return {"total": float(a) + b + seed}


@pytest.mark.parametrize("argv, message", [
    (["--grid", "beta=1,1.0"], "repeats a value"),
    (["--grid", "regularizer=TY", "--grid", "regularizer=YY"], "--grid regularizer is given twice"),
])
def test_cli_refuses_duplicate_grid_values_and_repeated_keys(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NEUROSIM_DEBUG", raising=False)
    code = main(["sweep", "sm_fig6_nonstationary", "--steps", "40", "--executor", "serial", "--out", str(tmp_path),
                 "--no-progress", *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not list(pathlib.Path(tmp_path).glob("runs/*.nc"))


def fragile(kind, seed):
    """A network model that fails to build for one point with an error that is not a refusal of its values."""
    if kind == "broken":
        raise RuntimeError("the lab's licence server is down")
    net = ns.Network(seed=seed)
    x = ns.Population("x", 2)
    net.add(x)
    net.connect(ns.ArrayStream(np.ones((10, 2))), x)
    net.record(x, ["activity"])
    return net


def test_a_model_raising_any_exception_is_a_run_error_not_a_stopped_sweep():
    ds = Sweep(fragile, grid={"kind": ["ok", "broken"]}, seeds=[0, 1], steps=3).run(progress=False)
    assert all("RuntimeError: the lab's licence server is down" in e for e in _text(ds.sel(kind="broken"), "error"))
    assert _text(ds.sel(kind="ok"), "error") == ["", ""]
    assert np.isfinite(ds.activity.sel(kind="ok")).all()


def test_a_check_raising_any_exception_is_a_run_error_not_a_stopped_sweep():
    def check(a, b):
        if a == 2:
            raise KeyError("no table entry for a = 2")

    ds = Sweep(measure, grid={"a": [1, 2], "b": [0]}, check=check).run(progress=False)
    assert "KeyError" in str(ds.error.sel(a=2, b=0, seed=0).values)
    assert str(ds.error.sel(a=1, b=0, seed=0).values) == "" and float(ds.total.sel(a=1, b=0, seed=0)) == 1.0
