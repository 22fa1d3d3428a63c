"""Recordings streamed to a zarr store; checkpoints during a run; resume after kill -9."""

import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.store import open_store, slots_to_dense

#: slow tier: runs streamed to zarr, kill -9 of a subprocess (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

zarr = pytest.importorskip("zarr")


def sm_network(store=None, buffer=None, steps=300, seed=0):
    from neurosim.models.similarity_matching import build_network

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((steps, 6)) * np.linspace(2.0, 0.2, 6)
    c = build_network(ns.ArrayStream(X), 3, "TY", 0.1, seed=seed, record=())
    c.network.record(c.network["y"], ["activity", "mu"], store=store, buffer=buffer)
    c.network.record(c.network["W"], "weights", every=10, name="weights", store=None if store is None else
                     str(store) + "-weights", buffer=buffer)
    return c.network


def ng_network(store=None, buffer=None):
    """The paper-000 circuit: units born and killed while the recording streams."""
    from neurosim.models.neurogenesis import build_network

    rng = np.random.default_rng(1)
    m, half = 12, 6
    parts = []
    for q in (0, 1):
        basis = np.zeros((m, 4))
        basis[q * half:(q + 1) * half] = rng.standard_normal((half, 4))
        parts.append((basis @ (rng.standard_normal((4, 100)) * (rng.random((4, 100)) < 0.6))).T)
    X = np.concatenate(parts)
    X[np.all(X == 0, axis=1), 0] = 1.0
    c = build_network(ns.ArrayStream(X.reshape(-1, 10, m)), 3, "NODL", batch=10, beta_c=2, gamma=0.95, c_k=4,
                      lambda_g=0.5, seed=0)
    net = c.network
    net.recorders.clear() if hasattr(net.recorders, "clear") else None
    net.record(net["code"], "activity", name="codes", store=store, buffer=buffer)
    net.record(net["D"], "weights", name="dict", store=None if store is None else str(store) + "-dict", buffer=buffer)
    return net


def test_streamed_recording_equals_the_in_memory_one(tmp_path):
    mem, disk = sm_network(), sm_network(tmp_path / "y.zarr", buffer=16)
    mem.run(300)
    disk.run(300)
    for name in ("y", "weights"):
        a, b = mem.recorders[name].to_dataset(layout="dense"), disk.recorders[name].to_dataset(layout="dense")
        for v in a.data_vars:
            np.testing.assert_array_equal(a[v].values, b[v].values)
        np.testing.assert_array_equal(a.time.values, b.time.values)
    # the store on disk is what xarray reads
    with xr.open_zarr(tmp_path / "y.zarr") as z:
        assert z.sizes["time"] == 300 and z.activity.dims == ("time", "batch", "slot")


@pytest.mark.slow  # a zarr write at every birth (about 0.2 s each)
def test_streamed_recording_through_births_and_deaths(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem, disk = ng_network(), ng_network(tmp_path / "codes.zarr", buffer=3)
        mem.run(20)
        disk.run(20)
    assert any(k == "birth" for k in mem.event_log.kind) and any(k == "death" for k in mem.event_log.kind)
    for name in ("codes", "dict"):
        a, b = mem.recorders[name].to_dataset(layout="dense"), disk.recorders[name].to_dataset(layout="dense")
        for v in a.data_vars:
            np.testing.assert_array_equal(a[v].values, b[v].values)
        np.testing.assert_array_equal(a.unit.values, b.unit.values)
        s = disk.recorders[name].to_dataset(layout="slots")
        np.testing.assert_array_equal(slots_to_dense(s)[list(a.data_vars)[0]].values, a[list(a.data_vars)[0]].values)
    z = open_store(tmp_path / "codes.zarr")
    np.testing.assert_array_equal(z.event_step.values, mem.event_log.step)
    np.testing.assert_array_equal(z.event_unit.values, mem.event_log.unit)
    assert list(z.event_kind.values) == mem.event_log.kind


def test_memory_stays_bounded_by_the_buffer(tmp_path):
    """A recording 10x larger than the buffer: the recorder never holds more than one buffer."""
    net = sm_network(tmp_path / "y.zarr", buffer=30, steps=300)
    held, buffered = [], []

    def watch(n):
        rec = n.recorders["y"]
        held.append(sum(sum(a.nbytes for a in d.values()) for _, _, d in rec._chunks))
        buffered.append(rec._tbuf.size)

    net.add_callback(watch, phase="record", every=7)
    net.run(300, backend="python")
    assert max(held) == 0  # chunks go to the store as they are flushed
    assert max(buffered) == 30
    assert open_store(tmp_path / "y.zarr").sizes["time"] == 300


def test_checkpoints_during_a_run_and_resume_in_the_same_process(tmp_path):
    ref = sm_network(tmp_path / "ref.zarr")
    ref.run(300)
    ck = tmp_path / "ck"
    part = sm_network(tmp_path / "run.zarr")
    part.run(170, checkpoint=ck, checkpoint_every=50)
    assert part.t == 170
    # a fresh network resumes from the checkpoint of step 170 and finishes the 300 steps
    again = sm_network(tmp_path / "run.zarr")
    again.run(300, checkpoint=ck, checkpoint_every=50, resume=True)
    assert again.t == 300
    for name in ("y", "weights"):
        a, b = ref.recorders[name].to_dataset(), again.recorders[name].to_dataset()
        for v in a.data_vars:
            np.testing.assert_array_equal(a[v].values, b[v].values)
    np.testing.assert_array_equal(ref["W"].weights, again["W"].weights)


def test_resume_refuses_a_checkpoint_past_the_target(tmp_path):
    net = sm_network()
    net.run(60, checkpoint=tmp_path / "ck")
    with pytest.raises(ValueError, match="past the end of this run"):
        sm_network().run(40, checkpoint=tmp_path / "ck", resume=True)
    with pytest.raises(ValueError, match="need checkpoint="):
        sm_network().run(10, resume=True)
    with pytest.raises(ValueError, match="checkpoint_every"):
        sm_network().run(10, checkpoint=tmp_path / "c2", checkpoint_every=0)


SCRIPT = """
import sys, time
import numpy as np
import neurosim as ns
sys.path.insert(0, {here!r})
from test_streaming import sm_network

class Slow(ns.ArrayStream):
    pass

if __name__ == "__main__":
    net = sm_network(sys.argv[1], buffer=8, steps={steps})
    if sys.argv[3] == "slow":
        net.add_callback(lambda n: time.sleep(0.002), every=1)
    net.run({steps}, checkpoint=sys.argv[2], checkpoint_every=100, resume=True)
"""
#: long enough to be killed after its first checkpoint (100 steps of 2 ms), short because every 8 steps write a
#: chunk to each store (~20 ms each: 3000 steps were 30 s of the suite)
KILLED_RUN_STEPS = 1200


@pytest.mark.slow
def test_kill_9_then_resume_is_bit_identical(tmp_path):
    here = os.path.dirname(__file__)
    script = tmp_path / "run_script.py"
    script.write_text(SCRIPT.format(here=here, steps=KILLED_RUN_STEPS))
    store, ck = tmp_path / "y.zarr", tmp_path / "ck"
    proc = subprocess.Popen([sys.executable, str(script), str(store), str(ck), "slow"])
    deadline = time.monotonic() + 180
    while not (ck.with_suffix(".npz").exists() and (store / "time").exists()):
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # what kill -9 left is readable: every chunk but at most the last
    with xr.open_zarr(store) as z:  # as a user would open it
        n_killed = z.sizes["time"]
        assert 0 < n_killed < KILLED_RUN_STEPS
        # every committed chunk is complete: finite samples at consecutive steps from 1
        assert np.isfinite(z.activity.values).all() and np.isfinite(z.mu.values).all()
        np.testing.assert_array_equal(z.time.values, np.arange(1, n_killed + 1))
    subprocess.run([sys.executable, str(script), str(store), str(ck), "fast"], check=True)
    ref_store = tmp_path / "ref.zarr"
    # the uninterrupted reference runs here: the script's own run, without a process of its own to start
    sm_network(str(ref_store), buffer=8, steps=KILLED_RUN_STEPS).run(KILLED_RUN_STEPS, checkpoint=tmp_path / "ref_ck",
                                                                     checkpoint_every=100, resume=True)
    a, b = open_store(store), open_store(ref_store)
    assert a.sizes["time"] == KILLED_RUN_STEPS
    for v in ("activity", "mu", "unit_id"):
        np.testing.assert_array_equal(a[v].values, b[v].values)
    np.testing.assert_array_equal(a.time.values, b.time.values)
    for suffix in ("-weights",):
        wa, wb = open_store(str(store) + suffix), open_store(str(ref_store) + suffix)
        np.testing.assert_array_equal(wa.weights.values, wb.weights.values)
