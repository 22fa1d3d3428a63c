"""Recordings round-trip through netCDF; checkpoints restore runs bit for bit in a new process."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from sm_helpers import make_sm, state_of

HERE = Path(__file__).parent


def test_every_k_sampling_times_and_attrs():
    net = make_sm("XY", every=4)
    net.run(50)
    ds = net.recorders["y"].to_dataset()
    assert ds.time.values.tolist() == list(range(4, 51, 4))
    assert ds.activity.dims == ("time", "batch", "unit") and ds.mu.dims == ("time", "unit")
    assert ds.attrs["W.rule.alpha"] == 0.08 and ds.attrs["unit_rule0.beta"] == 0.99
    # the recorded activity at step 48 is the activity the network had at that step
    net2 = make_sm("XY", every=4)
    net2.run(48)
    assert np.array_equal(ds.activity.sel(time=48).values, net2.populations["y"].activity)


def test_netcdf_round_trip_is_lossless(tmp_path):
    from test_events import growing_network

    net = growing_network("compiled")
    net.run(120)
    ds = net.recorders["h"].to_dataset()
    path = tmp_path / "h.nc"
    ds.to_netcdf(path, engine="h5netcdf")
    back = xr.open_dataset(path, engine="h5netcdf").load()
    xr.testing.assert_identical(ds, back)
    assert set(back.attrs) == set(ds.attrs)  # values compared by assert_identical above


SCRIPT = textwrap.dedent(
    """
    import sys, numpy as np
    sys.path.insert(0, {here!r})
    from sm_helpers import make_sm, state_of
    net = make_sm("YY")
    net.load({ckpt!r})
    net.run({n})
    np.savez({out!r}, **state_of(net))
    """
)


@pytest.mark.slow
def test_checkpoint_restored_in_new_process_is_bit_identical(tmp_path):
    n = 150
    full = make_sm("YY")
    full.run(2 * n)
    half = make_sm("YY")
    half.run(n)
    ckpt = half.save(tmp_path / "ckpt")
    assert ckpt.suffix == ".npz"
    with np.load(ckpt, allow_pickle=False) as f:  # no pickle anywhere
        meta = json.loads(str(f["__meta__"]))
    assert meta["t"] == n
    out = tmp_path / "resumed.npz"
    code = SCRIPT.format(here=str(HERE), ckpt=str(ckpt), n=n, out=str(out))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
    with np.load(out) as f:
        resumed = {k: f[k] for k in f.files}
    expected = state_of(full)
    assert set(resumed) == set(expected)
    for key in expected:
        assert np.array_equal(resumed[key], expected[key]), key


def test_checkpoint_restores_rng_structure_and_events(tmp_path):
    from test_events import growing_network

    a = growing_network("python")
    a.run(130)
    path = a.save(tmp_path / "g.npz")
    b = growing_network("python")
    b.load(path)
    assert b.t == 130 and b.populations["h"].ids.tolist() == a.populations["h"].ids.tolist()
    assert b.event_log.to_dict() == a.event_log.to_dict()
    a.run(100)
    b.run(100)
    assert np.array_equal(a.projections["W"].weights, b.projections["W"].weights)
    assert a.rng.bit_generator.state == b.rng.bit_generator.state


def test_checkpoint_into_other_circuit_is_refused(tmp_path):
    path = make_sm("XY").save(tmp_path / "x.npz")
    other = make_sm("XY", k=4)
    other.populations.pop("y")
    with pytest.raises(ValueError, match="structure"):
        other.load(path)
    with pytest.raises(FileNotFoundError):
        make_sm().load(tmp_path / "missing.npz")


def test_checkpoint_of_another_regularizer_is_refused(sm, tmp_path):
    a = sm("XY")
    a.run(5)
    path = a.save(tmp_path / "xy")
    with pytest.raises(ValueError, match="structure"):
        sm("YY").load(path)


def test_checkpoints_fall_on_multiples_of_checkpoint_every_and_at_the_end(tmp_path, monkeypatch):
    # Network.run: a checkpoint "every checkpoint_every steps (at steps that are multiples of it) and
    # at the end"; a run that starts at t = 7 saves at 10, 20, 30 and 37
    import neurosim as ns

    net = ns.Network(seed=0)
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(np.ones((64, 3))), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.3), rule=ns.Oja(0.01)))
    net.run(7)
    saved = []
    monkeypatch.setattr(net, "save", lambda path: saved.append(net.t))
    net.run(30, checkpoint=tmp_path / "ck", checkpoint_every=10)
    assert saved == [10, 20, 30, 37]
    assert net.t == 37


def test_checkpoint_every_is_validated_and_resume_goes_forward_only(tmp_path):
    # run(): checkpoint_every is an int >= 1; resume=True loads the checkpoint and runs the steps left,
    # and refuses a checkpoint past the end of this run (it cannot go back)
    import neurosim as ns

    def make():
        net = ns.Network(seed=0)
        x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
        net.add(x, y)
        net.connect(ns.ArrayStream(np.ones((64, 3))), x)
        net.add(ns.Projection("W", x, y, init=ns.Normal(0.3), rule=ns.Oja(0.01)))
        return net

    with pytest.raises(ValueError, match="checkpoint_every"):
        make().run(10, checkpoint=tmp_path / "c0", checkpoint_every=0)
    ck = tmp_path / "ck"
    make().run(20, checkpoint=ck)
    again = make()
    again.run(30, checkpoint=ck, resume=True)  # from the checkpoint of step 20: 10 more steps
    assert again.t == 30
    ref = make()
    ref.run(30)
    np.testing.assert_array_equal(again.projections["W"].weights, ref.projections["W"].weights)
    with pytest.raises(ValueError, match="past the end of this run"):
        make().run(10, checkpoint=ck, resume=True)
    # the finished run of 30 steps resumed with the same length (a script run again): the checkpoint is at
    # the end, so it is loaded and no step is left to run
    done = make()
    done.run(30, checkpoint=ck, resume=True)
    assert done.t == 30
    np.testing.assert_array_equal(done.projections["W"].weights, ref.projections["W"].weights)


def test_a_missing_recorder_says_which_exist_and_how_to_record():
    # issue 23: a bare KeyError: 'y' said neither what is recorded nor how to record
    net = make_sm()
    net.recorders.clear()
    with pytest.raises(KeyError, match=r"no recorder named 'y' \(nothing is recorded yet\).*net\.record\(population"):
        net.recorders["y"]
    net.record(net.populations["x"], "activity")
    with pytest.raises(KeyError, match=r"no recorder named 'y' \(recorders: \['x'\]\).*net\.record\("):
        net.recorders["y"]
    assert net.recorders.get("y") is None and "y" not in net.recorders
    net.run(3)
    assert net.recorders["x"].to_dataset().sizes["time"] == 3
