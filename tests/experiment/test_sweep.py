"""Sweeps: one Dataset from many runs, the same bits on every executor, failures kept, resumable."""

import json
import re
import warnings

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.experiment import Sweep
from neurosim.models.neurogenesis import build_network as build_ng
from neurosim.models.similarity_matching import build_network as build_sm

#: slow tier: networks swept on threads, processes and dask, each structure compiled (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

M, K = 6, 2


def sm_model(regularizer, eta, seed):
    """A small similarity-matching network (module level: picklable for the process executors)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, M)) * np.linspace(2.0, 0.2, M)
    c = build_sm(ns.ArrayStream(X), K, regularizer, 0.1, eta=eta, seed=seed)
    return c


def ng_model(variant, seed):
    """The paper-000 circuit on two disjoint-support domains: births and deaths differ between runs."""
    rng = np.random.default_rng(seed)
    m, half, batch = 12, 6, 10
    parts = []
    for q in (0, 1):
        basis = np.zeros((m, 4))
        basis[q * half:(q + 1) * half] = rng.standard_normal((half, 4))
        parts.append((basis @ (rng.standard_normal((4, 60)) * (rng.random((4, 60)) < 0.6))).T)
    X = np.concatenate(parts)
    X[np.all(X == 0, axis=1), 0] = 1.0
    c = build_ng(ns.ArrayStream(X.reshape(-1, batch, m)), 3, variant, batch=batch, beta_c=2, gamma=0.95, c_k=4,
                 lambda_g=0.5, seed=seed)
    return c


def measure(a, b, seed):
    """A model that returns results, not a network."""
    if a < 0:
        raise ArithmeticError(f"a = {a} is refused")
    rng = np.random.default_rng(seed)
    return {"value": a * rng.standard_normal(3) + b, "total": a + b + seed}


def test_grid_dims_coordinates_and_values():
    sweep = Sweep(measure, grid={"a": [1.0, 2.0], "b": [0, 10, 20]}, seeds=[3, 4])
    assert len(sweep) == 12
    ds = sweep.run(progress=False)
    assert ds.total.dims == ("a", "b", "seed")
    assert ds.value.dims[:3] == ("a", "b", "seed")
    assert list(ds.b.values) == [0, 10, 20] and list(ds.seed.values) == [3, 4]
    # every cell holds its own run
    for a in (1.0, 2.0):
        for b in (0, 10, 20):
            for s in (3, 4):
                expect = measure(a, b, s)
                np.testing.assert_array_equal(ds.value.sel(a=a, b=b, seed=s).values, expect["value"])
                assert float(ds.total.sel(a=a, b=b, seed=s)) == a + b + s
    assert (ds.error == "").all()
    assert ds.attrs["sweep_runs"] == 12 and ds.attrs["sweep_failed"] == 0


def test_points_give_a_run_dimension():
    pts = [{"a": 1.0, "b": 0}, {"a": 3.0, "b": 5}]
    ds = Sweep(measure, points=pts, seeds=[0]).run(progress=False)
    assert ds.total.dims == ("run",)
    np.testing.assert_array_equal(ds.a.values, [1.0, 3.0])
    np.testing.assert_array_equal(ds.total.values, [1.0, 8.0])


def test_a_failing_run_is_kept_with_its_error_and_the_others_complete():
    ds = Sweep(measure, grid={"a": [-1.0, 1.0], "b": [0]}, seeds=[0, 1]).run(progress=False)
    err = ds.error.sel(a=-1.0, b=0)
    assert all("ArithmeticError: a = -1.0 is refused" in str(e) for e in err.values)
    assert (ds.error.sel(a=1.0) == "").all()
    assert np.isnan(ds.total.sel(a=-1.0)).all() and np.isfinite(ds.total.sel(a=1.0)).all()
    assert ds.attrs["sweep_failed"] == 2


def test_network_runs_record_and_align_units_by_stable_id():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = Sweep(ng_model, grid={"variant": ["ODL", "NODL"]}, seeds=[0, 1], steps=12).run(progress=False)
        direct = {}
        for variant in ("ODL", "NODL"):
            for seed in (0, 1):
                c = ng_model(variant, seed)
                c.network.run(12)
                direct[variant, seed] = c
    # NODL gives birth in these runs, ODL does not: unit sets differ and are aligned by id
    assert ds.sizes["unit"] > 3
    for (variant, seed), c in direct.items():
        (ref,) = [r.to_dataset(layout="dense") for r in c.network.recorders.values()]
        got = ds.activity.sel(variant=variant, seed=seed)
        # the run's own units hold its recording; the units it never had are NaN
        np.testing.assert_array_equal(got.sel(unit=ref.unit.values).values, ref.activity.values)
        others = np.setdiff1d(ds.unit.values, ref.unit.values)
        assert np.isnan(got.sel(unit=others).values).all()
        log = c.network.event_log
        n = len(log)
        row = ds.sel(variant=variant, seed=seed)
        np.testing.assert_array_equal(row.event_step.values[:n], log.step)
        np.testing.assert_array_equal(row.event_unit.values[:n], log.unit)
        assert list(row.event_kind.values[:n]) == log.kind
        assert (row.event_step.values[n:] == -1).all() and (row.event_kind.values[n:] == "").all()
    assert (ds.compile_seconds >= 0).all() and (ds.wall_seconds > 0).all()


def _same(a: xr.Dataset, b: xr.Dataset):
    """Identical data, coordinates and variable attributes; the sweep's timings and descriptions aside."""
    a = a.drop_vars(["wall_seconds", "compile_seconds"])
    b = b.drop_vars(["wall_seconds", "compile_seconds"])
    a.attrs, b.attrs = {}, {}
    xr.testing.assert_identical(a, b)


@pytest.mark.slow
def test_processes_give_the_same_bits_as_serial():
    sweep = Sweep(sm_model, grid={"regularizer": ["TY", "XY"], "eta": [0.05, 0.1]}, seeds=[0, 1], steps=30)
    serial = sweep.run(progress=False)
    procs = sweep.run(executor="processes", workers=2, progress=False)
    _same(serial, procs)
    assert serial.activity.dims[:3] == ("regularizer", "eta", "seed")
    assert np.isfinite(serial.activity).all()


@pytest.mark.slow
def test_dask_gives_the_same_bits_as_serial():
    distributed = pytest.importorskip("dask.distributed")
    sweep = Sweep(sm_model, grid={"regularizer": ["TY"], "eta": [0.05, 0.1]}, seeds=[0, 1], steps=30)
    serial = sweep.run(progress=False)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.Client(cluster) as client:
        got = sweep.run(executor="dask", client=client, progress=False)
    cluster.close()
    _same(serial, got)


def test_finished_runs_are_stored_and_not_rerun(tmp_path):
    calls = tmp_path / "calls.txt"

    sweep = Sweep(counted, grid={"a": [1, 2, 3]}, seeds=[0], fixed={"log": str(calls)})
    first = sweep.run(out=tmp_path / "out", progress=False)
    assert calls.read_text().count("\n") == 3
    # a run's file lost (as if killed before it finished): only that one runs again
    files = sorted((tmp_path / "out" / "runs").glob("run-*.nc"))
    assert len(files) == 3
    files[0].unlink()
    again = sweep.run(out=tmp_path / "out", progress=False)
    assert calls.read_text().count("\n") == 4
    _same(first, again)
    assert (tmp_path / "out" / "counted.nc").exists()
    assert json.loads((tmp_path / "out" / "sweep.json").read_text())["dims"] == ["a"]


def counted(a, seed, log):
    with open(log, "a") as f:
        f.write(f"{a}\n")
    return {"x": float(a * 10 + seed)}


def test_a_store_from_another_sweep_is_refused_before_running(tmp_path):
    Sweep(measure, grid={"a": [1.0], "b": [0]}).run(out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="holds another sweep.*points"):
        Sweep(measure, grid={"a": [2.0], "b": [0]}).run(out=tmp_path, progress=False)


def test_an_unwritable_folder_is_refused(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ValueError, match="out=.*not a writable folder"):
        Sweep(measure, grid={"a": [1.0], "b": [0]}).run(out=blocker / "sub", progress=False)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(grid={"a": [1.0], "nope": [1]}), ValueError, "no parameter 'nope'"),
    (dict(grid={}), ValueError, "grid is empty"),
    (dict(grid={"a": [], "b": [0]}), ValueError, r"grid\['a'\] is empty"),
    (dict(grid={"a": 1.0, "b": [0]}), TypeError, r"grid\['a'\] must be a list"),
    (dict(grid={"a": [1.0, 1.0], "b": [0]}), ValueError, "repeats a value"),
    (dict(grid={"seed": [1], "a": [1.0]}), ValueError, "'seed' cannot be a sweep parameter"),
    (dict(points=[]), ValueError, "points is empty"),
    (dict(points=[{"a": 1.0, "b": 0}, {"a": 1.0}]), ValueError, r"points\[1\] has keys"),
    (dict(grid={"a": [1.0], "b": [0]}, points=[{"a": 1.0, "b": 0}]), ValueError, "exactly one of grid"),
    (dict(grid={"a": [1.0], "b": [0]}, seeds=[-1]), ValueError, "seeds"),
    (dict(grid={"a": [1.0], "b": [0]}, seeds=[]), ValueError, "seeds is empty"),
    (dict(grid={"a": [1.0], "b": [0]}, steps=0), ValueError, "steps"),
    # issue 38: counted before the runs are listed (range(10**11) seeds filled the memory, slowly, then failed)
    (dict(grid={"a": [1.0], "b": [0]}, seeds=range(2 * 10**6)), ValueError,
     r"2000000 runs \(1 values of grid\['a'\] x 1 values of grid\['b'\] x 2000000 seeds\); at most 1000000"),
    (dict(grid={"a": list(range(1001)), "b": list(range(1000))}), ValueError, r"1001000 runs .* at most 1000000"),
    (dict(grid={"a": [1.0], "b": [0]}, seeds=[2**63]), ValueError, r"seeds must be in \[0, 9223372036854775807\]"),
    # issue 38: the combined result is written as out/<name>.nc
    *[(dict(grid={"a": [1.0], "b": [0]}, name=name), ValueError, "name must be a file name.*got " + re.escape(repr(name)))
      for name in ["../x", "a/b", "a\\b", "..", ".", ""]],
])
def test_bad_sweeps_are_refused_by_name(kwargs, error, match):
    with pytest.raises(error, match=match):
        Sweep(measure, **kwargs)


def test_values_the_model_refuses_stop_the_sweep_before_any_run(tmp_path):
    sweep = Sweep(sm_model, grid={"regularizer": ["TY", "bogus"], "eta": [0.1]}, steps=5)
    with pytest.raises(ValueError, match="(?s)refuses 1 of 2 runs; nothing was run.*bogus"):
        sweep.run(out=tmp_path, progress=False)
    assert not list((tmp_path / "runs").glob("*.nc"))


def test_bad_executor_and_workers():
    sweep = Sweep(measure, grid={"a": [1.0], "b": [0]})
    with pytest.raises(ValueError, match="executor"):
        sweep.run(executor="threads", progress=False)
    with pytest.raises(ValueError, match="workers"):
        sweep.run(executor="processes", workers=0, progress=False)


def diverging(bad_step, seed):
    """A network whose input overflows its squared norm from ``bad_step`` on (diverges at that step)."""
    data = np.ones((200, 3))
    data[bad_step - 1:] = 1e200
    net = ns.Network(seed=seed)
    x = ns.Population("x", 3)
    y = ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.5, max_iter=5))
    net.add(x, y)
    net.connect(ns.ArrayStream(data), x)
    sig = ns.SquaredNorm(x)
    net.add(ns.CumulativeActivity(y, alpha=0.1, signal=sig))
    net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, sig)))
    net.record(y, ["activity", "mu"])
    return net


def test_a_diverging_run_keeps_what_it_recorded_and_the_others_run():
    ds = Sweep(diverging, grid={"bad_step": [41, 150]}, seeds=[0], steps=100).run(progress=False)
    err = str(ds.error.sel(bad_step=41, seed=0).values)
    assert "SimulationDiverged" in err and "step 41" in err
    assert str(ds.error.sel(bad_step=150, seed=0).values) == ""
    mu = ds.mu.sel(bad_step=41, seed=0)
    # 40 finite steps recorded before the divergence, the rest of the time axis NaN
    assert np.isfinite(mu.sel(time=slice(1, 40))).all() and np.isnan(mu.sel(time=slice(41, None))).all()
    assert np.isfinite(ds.mu.sel(bad_step=150, seed=0)).all()


SCRIPT = """
import sys, time
import numpy as np
from neurosim.experiment import Sweep

def slow(a, seed, log):
    with open(log, "a") as f:
        f.write(f"{a} {seed}\\n")
    time.sleep(0.4)
    return {"x": np.random.default_rng(seed).standard_normal(4) * a}

if __name__ == "__main__":
    Sweep(slow, grid={"a": [1.0, 2.0, 3.0, 4.0]}, seeds=[0, 1], fixed={"log": sys.argv[2]}).run(out=sys.argv[1],
                                                                                              progress=False)
"""


@pytest.mark.slow
def test_a_sweep_killed_with_sigkill_resumes_where_it_stopped(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "sweep_script.py"
    script.write_text(SCRIPT)
    out, log = tmp_path / "out", tmp_path / "calls.txt"
    proc = subprocess.Popen([sys.executable, str(script), str(out), str(log)])
    deadline = time.monotonic() + 120
    while len(list((out / "runs").glob("run-*.nc"))) < 3:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(list((out / "runs").glob("run-*.nc")))
    assert 3 <= finished < 8 and not (out / "slow.nc").exists()
    calls_before = log.read_text().count("\n")
    subprocess.run([sys.executable, str(script), str(out), str(log)], check=True)
    # only the unfinished runs ran again (the killed one at most once more)
    assert log.read_text().count("\n") == calls_before + 8 - finished
    ref_out = tmp_path / "ref"
    subprocess.run([sys.executable, str(script), str(ref_out), str(tmp_path / "ref_calls.txt")], check=True)
    with xr.open_dataset(out / "slow.nc", engine="h5netcdf") as a, \
            xr.open_dataset(ref_out / "slow.nc", engine="h5netcdf") as b:
        _same(a.load(), b.load())


def test_a_check_refuses_points_before_any_run(tmp_path):
    def check(a, b):
        if a > 5:
            raise ValueError(f"a must be <= 5; got {a}")

    sweep = Sweep(counted, grid={"a": [1, 9]}, fixed={"log": str(tmp_path / "calls")}, check=lambda a, log: check(a, 0))
    with pytest.raises(ValueError, match="(?s)refuses 1 of 2 runs.*a must be <= 5; got 9"):
        sweep.run(progress=False)
    assert not (tmp_path / "calls").exists()


def test_runs_that_failed_before_recording_get_nan_in_the_shape_of_the_others():
    ds = Sweep(measure, grid={"a": [-1.0, 1.0, 2.0], "b": [0]}, seeds=[0]).run(progress=False)
    assert ds.value.shape == (3, 1, 1, 3)
    assert np.isnan(ds.value.sel(a=-1.0)).all() and np.isfinite(ds.value.sel(a=[1.0, 2.0])).all()
