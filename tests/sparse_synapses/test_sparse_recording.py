"""Recordings of sparse weights (issue 39, item 5): one value per synapse, named by stable ids, in memory and in zarr.

Oracles: the projection's own weights, ``to_dense()`` and ``to_scipy()`` copied at every sampled step (a
callback on the per-step path), the recording of the masked dense projection on the same synapses, the
in-memory recording for the store, and each run's own recording for a sweep.
"""

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.recording import synapses_to_dense, synapses_to_scipy
from neurosim.store import _group


def circuit(storage="sparse", turnover=True, store=None, every=2, seed=0, conn=None, steps=61):
    """x (one-hot) -> y through W: pruned and grown every 4 steps; y loses its oldest unit and gains an unlinked one every 6."""
    net = ns.Network(seed=seed)
    x, y = ns.Population("x", 6), ns.Population("y", 4, dynamics=ns.Linear())
    W = ns.Projection("W", x, y, connectivity=conn or ns.FixedInDegree(3), storage=storage, init=ns.Uniform(0.2, 1.0),
                      rule=ns.Hebbian(0.1, decay=0.05))
    net.add(x, y, W)
    rng = np.random.default_rng(7)
    net.connect(ns.ArrayStream(np.eye(6)[rng.integers(0, 6, steps)]), x)
    if turnover:
        net.add(ns.PruneSynapses(W, 0.3, every=4), ns.GrowSynapses(W, fan_in=3, init=ns.Uniform(0.2, 0.6), every=4),
                ns.Trigger(lambda n: True, lambda n: [ns.Death(y, [y.ids[0]]), ns.Birth(y, 1, unlinked=[W])],
                           every=6, name="turnover"))
    net.record(W, "weights", every=every, store=store)
    return net


def snapshots(net, every=2):
    """What the projection holds at every sampled step, copied by a callback (forces the per-step path there)."""
    seen = {}

    def copy(n):
        W = n["W"]
        seen[n.t] = (W.synapses(), W.weights.copy(), W.to_dense(), W.to_scipy(), W.post.ids.copy(), W.pre.ids.copy())

    net.add_callback(copy, phase="record", every=every)
    return seen


@pytest.fixture(scope="module")
def runs():
    """The circuit run on the per-step NumPy path (with snapshots), compiled, and as a masked dense projection."""
    python = circuit()
    seen = snapshots(python)
    python.run(60, backend="python")
    compiled = circuit()
    compiled.run(60)
    dense = circuit("dense")
    dense.run(60)
    return seen, python, compiled, dense


@pytest.mark.parametrize("which", ["python", "compiled"])
def test_the_recorded_weights_are_the_projections_at_every_sample(runs, which):
    seen, python, compiled, _ = runs
    rec = (python if which == "python" else compiled).recorders["W"]
    dense, slots = rec.to_dataset("dense"), rec.to_dataset("slots")
    assert dense.weights.dims == ("time", "synapse") and slots.weights.dims == ("time", "synapse_slot")
    assert list(dense.time.values) == sorted(seen) == list(range(2, 61, 2))
    changed = {int(s) for s in python.event_log.step}
    assert len(changed) >= 10  # the synapses changed all along the recording
    for t, ((post, pre), w, matrix, csr, alive_post, alive_pre) in seen.items():
        # dense layout: the synapses present at t, in the union's order, are the projection's, in synapse order
        row = dense.weights.sel(time=t).values
        there = ~np.isnan(row)
        assert np.array_equal(dense.post.values[there], post) and np.array_equal(dense.pre.values[there], pre)
        assert np.array_equal(row[there], w)
        # slot layout: the first slots, in synapse order
        s = slots.sel(time=t)
        n = w.size
        assert np.array_equal(s.weights.values[:n], w) and np.isnan(s.weights.values[n:]).all()
        assert np.array_equal(s.post_id.values[:n], post) and np.array_equal(s.pre_id.values[:n], pre)
        assert (s.post_id.values[n:] == -1).all()
        for ds in (dense, slots):
            m = synapses_to_dense(ds, time=t)
            assert np.array_equal(m.values, matrix)
            assert np.array_equal(m.unit.values, alive_post) and np.array_equal(m.pre_unit.values, alive_pre)
            got = synapses_to_scipy(ds, time=t)
            assert got.shape == csr.shape and (got != csr).nnz == 0
            assert np.array_equal(got.data, csr.data) and np.array_equal(got.indices, csr.indices)


def test_to_dense_equals_the_masked_dense_projections_recording(runs):
    _, _, compiled, dense = runs
    sparse_ds = compiled.recorders["W"].to_dataset("dense")
    dense_ds = dense.recorders["W"].to_dataset("dense")
    for t in dense_ds.time.values:
        m = synapses_to_dense(sparse_ds, time=t)
        want = dense_ds.weights.sel(time=t)
        assert np.array_equal(m.values, want.sel(unit=m.unit, pre_unit=m.pre_unit).values)
        # the units the dense recording shows NaN for are exactly those not alive at t
        alive = np.isin(dense_ds.unit.values, m.unit.values)
        assert np.isnan(want.values[~alive]).all() and not np.isnan(want.values[alive]).any()
    # the sparse recording holds one value per synapse ever seen, not post x pre
    assert sparse_ds.sizes["synapse"] < dense_ds.sizes["unit"] * dense_ds.sizes["pre_unit"]


def test_a_fixed_synapse_set_is_the_projections_weights_sample_by_sample():
    net = circuit(turnover=False)
    seen = snapshots(net)
    net.run(12)
    ds = net.recorders["W"].to_dataset()
    W = net["W"]
    assert ds.attrs["layout"] == "dense" and "multapse" not in ds.coords
    assert np.array_equal(ds.post.values, W.synapses()[0]) and np.array_equal(ds.pre.values, W.synapses()[1])
    assert np.array_equal(ds.weights.values, np.stack([seen[t][1] for t in ds.time.values]))
    assert ds.unit_alive.values.all() and ds.pre_unit_alive.values.all()
    assert ds.weights.attrs["units"] == "1" and "projection W" in ds.weights.attrs["long_name"]


def test_multapses_repeat_a_pair_and_sum_in_the_matrix():
    net = circuit(turnover=False, conn=ns.FixedInDegree(5, multapses=True))
    net.run(4)
    W = net["W"]
    assert W.synapse_index.has_multapses()
    ds = net.recorders["W"].to_dataset()
    pairs = list(zip(ds.post.values.tolist(), ds.pre.values.tolist()))
    assert len(set(pairs)) < len(pairs) and ds.multapse.values.max() >= 1
    assert np.array_equal(synapses_to_dense(ds, time=4).values, W.to_dense())
    got, want = synapses_to_scipy(net.recorders["W"].to_dataset("slots"), time=4), W.to_scipy()
    assert got.nnz == want.nnz < W.n_synapses  # one stored entry per pair
    assert np.array_equal(got.data, want.data) and np.array_equal(got.indices, want.indices)


@pytest.mark.parametrize("layout", ["dense", "slots"])
def test_netcdf_round_trip(runs, tmp_path, layout):
    ds = runs[2].recorders["W"].to_dataset(layout)
    ds.to_netcdf(tmp_path / "w.nc", engine="h5netcdf")
    with xr.open_dataset(tmp_path / "w.nc", engine="h5netcdf") as f:
        back = f.load()
    xr.testing.assert_identical(back, ds)
    assert np.array_equal(synapses_to_dense(back, time=40).values, synapses_to_dense(ds, time=40).values)


def _samples(ds):
    """The recording without its attributes and event log (a store keeps those its own way)."""
    ds = ds.drop_vars([v for v in ds.data_vars if v.startswith("event_")])
    ds.attrs = {}
    return ds


@pytest.mark.slow  # a zarr commit at every structural change (about 0.2 s each)
def test_a_store_holds_the_in_memory_recording_and_survives_a_cut_chunk(runs, tmp_path):
    pytest.importorskip("zarr")
    _, _, compiled, _ = runs
    store = tmp_path / "w.zarr"
    disk = circuit(store=store)
    disk.run(60)
    for layout in ("dense", "slots"):
        xr.testing.assert_identical(_samples(disk.recorders["W"].to_dataset(layout)),
                                    _samples(compiled.recorders["W"].to_dataset(layout)))
    # a run checkpointed at step 30, then killed while writing a chunk: rows resized but never committed
    cut = tmp_path / "cut.zarr"
    part = circuit(store=cut)
    part.run(30, checkpoint=tmp_path / "ck")
    group = _group(cut, "r+")  # as the store opens itself, on zarr 2 and 3
    for name in group.array_keys():
        arr = group[name]
        if name.startswith("event_") or arr.shape[0] != 15:
            continue
        arr.resize((18,) + tuple(arr.shape[1:]))
        arr[15:] = -7 if arr.dtype.kind == "i" else 7.0
    with xr.open_zarr(cut) as z:  # as a reader sees it: every committed chunk, complete
        assert list(z.time.values) == list(range(2, 31, 2)) and z.sizes["time"] == 15
        assert not (z.post_id.values == -7).any()
    again = circuit(store=cut)
    again.run(60, checkpoint=tmp_path / "ck", resume=True)
    xr.testing.assert_identical(_samples(again.recorders["W"].to_dataset("slots")),
                                _samples(disk.recorders["W"].to_dataset("slots")))


def sweep_model(p, seed):
    """A sparse projection whose synapses differ between seeds (module level: a sweep may pickle it)."""
    net = ns.Network(seed=seed)
    x, y = ns.Population("x", 5), ns.Population("y", 3, dynamics=ns.Linear())
    W = ns.Projection("W", x, y, connectivity=ns.FixedProbability(p), rule=ns.Hebbian(0.05))
    net.add(x, y, W)
    net.connect(ns.GaussianStream(np.ones(5), seed=1), x)
    net.record(W, "weights")
    return net


def test_a_sweep_aligns_runs_with_other_synapses(tmp_path):
    ds = ns.Sweep(sweep_model, grid={"p": [0.5]}, seeds=[0, 1, 2], steps=3).run(progress=False, out=tmp_path / "out")
    assert (ds.error == "").all()
    sets = set()
    for seed in (0, 1, 2):
        net = sweep_model(0.5, seed)
        net.run(3)
        own = net.recorders["W"].to_dataset()
        got = ds.weights.sel(p=0.5, seed=seed)
        there = ~np.isnan(got.values[0])
        assert np.array_equal(got.post.values[there], own.post.values)
        assert np.array_equal(got.pre.values[there], own.pre.values)
        assert np.array_equal(got.values[:, there], own.weights.values)
        sets.add(tuple(zip(own.post.values.tolist(), own.pre.values.tolist())))
    assert len(sets) == 3  # the runs' synapses differ: the union aligns them
    ds.to_netcdf(tmp_path / "sweep.nc", engine="h5netcdf")  # plain coordinates, no MultiIndex


def test_bad_input_is_refused_by_name():
    net = circuit(turnover=False)
    with pytest.raises(ValueError, match="time_dim must not be one of"):
        net.record(net["W"], "weights", name="w2", time_dim="synapse")
    net.record(net["y"], "activity")
    net.run(4)
    ds = net.recorders["W"].to_dataset()
    with pytest.raises(TypeError, match="ds must be the xarray.Dataset"):
        synapses_to_dense(ds.weights, time=2)
    with pytest.raises(ValueError, match="'activity' is not a recording of a sparse projection"):
        synapses_to_scipy(net.recorders["y"].to_dataset(), time=2, variable="activity")
    with pytest.raises(ValueError, match="variable 'w' is not in the recording"):
        synapses_to_dense(ds, time=2, variable="w")
    with pytest.raises(ValueError, match="time must name one of the recording's 2 samples"):
        synapses_to_dense(ds)
    with pytest.raises(ValueError, match="time=3 is not a sample"):
        synapses_to_dense(ds, time=3)
    one = ds.sel(time=4)
    assert np.array_equal(synapses_to_dense(one).values, net["W"].to_dense())
