"""A growing network streamed to a zarr store: chunks of different unit sets are written in batches (issue 38, item 6).

A structural event seals the recorder's buffer into a chunk (its unit ids
change) but writes nothing: the chunks are held, within one buffer's
bytes, and written together -- one zarr commit per batch instead of one
per event (0.2 s each). The store holds exactly what an in-memory
recorder holds.
"""

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim import store as store_module
from neurosim.models.self_organizing import build_gng
from neurosim.store import open_store

pytest.importorskip("zarr")

#: a growing neural gas whose ring jumps halfway: units are born every 10 inputs, and die in the old region
FAST = dict(lam=10, a_max=2, eps_b=0.2, eps_n=0.01, alpha=0.5, d=0.99)


def moving(n=500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[np.cos(a), np.sin(a)] * rng.uniform(0.6, 1.0, n)[:, None]
    X[n // 2:] += 4.0
    return X


def gng(X, folder=None, buffer=None, every=7, names=("W", "E")):
    """The prototypes (``W``) and the edges (``E``) recorded every ``every`` inputs, in memory or to ``folder``."""
    c = build_gng(ns.ArrayStream(X), **FAST)
    net = c.network
    for name, proj in (("W", c.prototypes), ("E", c.edges)):
        if name not in names:
            continue
        net.record(proj, "weights", every=every, name=name, buffer=buffer,
                   store=None if folder is None else folder / f"{name}.zarr")
    return c


def assert_store_holds(store, mem):
    """The store's slot layout is the in-memory one, its extra slots (widened by doubling) empty; dense alike.

    The prototypes are a dense projection (slots of units); the edges a sparse one (slots of synapses, each
    named by its two units' ids).
    """
    a = mem.to_dataset(layout="slots")
    b = open_store(store)
    n_slot, n_pre = a.sizes["slot"], a.sizes["pre_slot"]
    np.testing.assert_array_equal(b.time.values, a.time.values)
    np.testing.assert_array_equal(b.unit_id.values[:, :n_slot], a.unit_id.values)
    np.testing.assert_array_equal(b.pre_unit_id.values[:, :n_pre], a.pre_unit_id.values)
    assert (b.unit_id.values[:, n_slot:] == -1).all() and (b.pre_unit_id.values[:, n_pre:] == -1).all()
    if "synapse_slot" in a.dims:
        n_syn = a.sizes["synapse_slot"]
        for v in ("post_id", "pre_id"):
            np.testing.assert_array_equal(b[v].values[:, :n_syn], a[v].values, err_msg=v)
            assert (b[v].values[:, n_syn:] == -1).all()
        np.testing.assert_array_equal(b.weights.values[:, :n_syn], a.weights.values)  # NaN where NaN
        assert np.isnan(b.weights.values[:, n_syn:]).all()
    else:
        np.testing.assert_array_equal(b.weights.values[:, :n_slot, :n_pre], a.weights.values)  # NaN where NaN
        assert np.isnan(b.weights.values[:, n_slot:]).all() and np.isnan(b.weights.values[:, :, n_pre:]).all()
    da, db = mem.to_dataset(layout="dense"), open_store(store, layout="dense")
    np.testing.assert_array_equal(db.weights.values, da.weights.values)
    np.testing.assert_array_equal(db.unit.values, da.unit.values)
    np.testing.assert_array_equal(db.pre_unit.values, da.pre_unit.values)
    if "synapse" in da.dims:
        np.testing.assert_array_equal(db.post.values, da.post.values)
        np.testing.assert_array_equal(db.pre.values, da.pre.values)
    for v in ("event_step", "event_kind", "event_population", "event_unit", "event_partner"):
        np.testing.assert_array_equal(b[v].values, a[v].values, err_msg=v)


def test_structural_events_write_nothing_and_the_store_equals_the_in_memory_recording(tmp_path, monkeypatch):
    X = moving()
    mem = gng(X)
    mem.run(len(X))
    log = mem.network.event_log
    births, deaths = log.kind.count("birth"), log.kind.count("death")
    assert births >= 45 and deaths >= 2  # every birth and death changes the unit set a chunk holds
    commits = []
    real = store_module._commit
    monkeypatch.setattr(store_module, "_commit", lambda path: (commits.append(path), real(path))[1])
    disk = gng(X, tmp_path)
    disk.run(len(X))
    # each store is written once, at the end of the run (its creation writes its consolidated metadata
    # itself): the events forced no write (one commit per event and per chunk before, about 2 x 50 per store)
    assert sorted(map(str, commits)) == [str(tmp_path / "E.zarr"), str(tmp_path / "W.zarr")]
    for name in ("W", "E"):
        assert_store_holds(tmp_path / f"{name}.zarr", mem.network.recorders[name])
    # the prototypes' input axis (the stream's 2 dimensions) is not widened with the units
    with xr.open_zarr(tmp_path / "W.zarr") as z:
        assert z.sizes["pre_slot"] == 2 and z.sizes["slot"] == mem.network.recorders["W"].to_dataset(
            layout="slots").sizes["slot"]


def test_held_chunks_and_the_buffer_share_one_buffer_and_batches_reach_the_store(tmp_path, monkeypatch):
    # a buffer of 40 samples, a birth every 10: the chunks sealed at births (10 samples each) are written in
    # batches of at least half the buffer, and what the recorder holds (sealed chunks and its buffer) never
    # exceeds the bytes of the buffer (of the largest samples: held chunks of fewer units take less)
    X = moving(300)
    mem = gng(X, every=1, names=("W",))
    mem.run(len(X))
    disk = gng(X, tmp_path, buffer=40, every=1, names=("W",))
    rec = disk.network.recorders["W"]
    held, per, written = [], [], []
    real = ns.Recorder.prepare

    def watched(self):
        real(self)
        if self is rec:  # after every prepare (between segments and at every event): what the recorder holds
            sample = rec.target.weights.nbytes + 8  # a sample's values and its step
            held.append(sum(c[0].nbytes + c[2]["weights"].nbytes for c in rec._chunks) + rec._tbuf.size * sample)
            per.append(sample)
            written.append(rec._sink.n_time)

    monkeypatch.setattr(ns.Recorder, "prepare", watched)
    disk.run(len(X))
    # + 1 sample: a buffer of one sample when the held chunks fill it, until the next write
    assert max(h / p for h, p in zip(held, np.maximum.accumulate(per))) <= 40 + 1
    assert not rec._chunks  # all written
    batches = np.diff(sorted(set(written + [rec._sink.n_time])))
    # batches, none but the last below half the buffer (one write per birth before: 10 samples each)
    assert len(batches) >= 10 and batches[:-1].min() >= 20
    assert_store_holds(tmp_path / "W.zarr", mem.network.recorders["W"])


def turnover(folder=None):
    """x (3) -> h (Linear, Oja): two units born every 7 steps, the two oldest killed every 11 (compiled triggers)."""
    from neurosim.triggers import every_step

    net = ns.Network(seed=4)
    x, h = ns.Population("x", 3), ns.Population("h", 4, dynamics=ns.Linear())
    net.add(x, h, ns.Projection("W", x, h, init=ns.Normal(0.3), rule=ns.Oja(0.01)))
    net.connect(ns.GaussianStream([1.0, 0.6, 0.3], seed=5), x)
    net.add(ns.Trigger(every_step(), lambda n: ns.Birth(h, 2), every=7, name="grow"))
    net.add(ns.Trigger(every_step(), lambda n: ns.Death(h, h.ids[:2]) if h.size > 3 else None, every=11,
                       name="kill"))
    net.record(h, "activity", store=None if folder is None else folder / "h.zarr")
    net.record(net["W"], "weights", every=5, name="W", store=None if folder is None else folder / "W.zarr")
    return net


@pytest.mark.slow  # compiles its own segment, writes checkpoints
def test_a_growing_network_resumed_from_its_checkpoint_finishes_its_store_bit_identically(tmp_path):
    whole = turnover()
    whole.run(300)
    first = turnover(tmp_path)
    first.run(170, checkpoint=tmp_path / "ck", checkpoint_every=50)
    assert open_store(tmp_path / "h.zarr").time.values[-1] == 170  # the run's end wrote every held chunk
    # a new process builds the network again and resumes from step 150: the samples after it are dropped
    # and taken again, and the stores finish as an uninterrupted run's
    again = turnover(tmp_path)
    again.run(300, checkpoint=tmp_path / "ck", checkpoint_every=50, resume=True)
    a, b = whole.recorders["h"].to_dataset(layout="dense"), open_store(tmp_path / "h.zarr", layout="dense")
    np.testing.assert_array_equal(b.activity.values, a.activity.values)
    np.testing.assert_array_equal(b.unit.values, a.unit.values)
    np.testing.assert_array_equal(b.time.values, np.arange(1, 301))
    np.testing.assert_array_equal(b.event_unit.values, a.event_unit.values)
    assert_store_holds(tmp_path / "W.zarr", whole.recorders["W"])
