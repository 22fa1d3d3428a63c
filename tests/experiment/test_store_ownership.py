"""A recorder's store never deletes what the recorder did not write (issue 23); one store holds one recorder."""

import numpy as np
import pytest
import xarray as xr

import neurosim as ns
from neurosim.store import StoreOwnershipError, open_store

pytest.importorskip("zarr")


def tiny(steps=40, seed=0):
    """Six inputs, three similarity-matching outputs, nothing recorded yet."""
    from neurosim.models.similarity_matching import build_network

    X = np.random.default_rng(seed).standard_normal((steps, 6))
    return build_network(ns.ArrayStream(X), 3, "TY", 0.1, seed=seed, record=()).network


def user_folder(path):
    path.mkdir()
    (path / "thesis.txt").write_text("four years of work")
    (path / "figures").mkdir()
    (path / "figures" / "fig1.png").write_bytes(b"\x89PNG")
    return path


def assert_untouched(path):
    assert (path / "thesis.txt").read_text() == "four years of work"
    assert (path / "figures" / "fig1.png").read_bytes() == b"\x89PNG"


def test_a_folder_that_is_not_a_store_is_never_deleted(tmp_path):
    results = user_folder(tmp_path / "results")
    net = tiny()
    with pytest.raises(ValueError, match=r"(?s)results exists and is not a neurosim recording store.*thesis\.txt.*"
                                         r"overwrite=True"):
        net.record(net["y"], "activity", store=results)
    assert "y" not in net.recorders
    net.run(10)  # the run goes on without it
    assert_untouched(results)


def test_a_file_at_the_store_path_is_refused(tmp_path):
    (tmp_path / "notes.zarr").write_text("not a store")
    with pytest.raises(StoreOwnershipError, match="is a file"):
        ns.Recorder(tiny()["y"], store=tmp_path / "notes.zarr")
    assert (tmp_path / "notes.zarr").read_text() == "not a store"


def test_a_refused_store_is_refused_when_a_checkpoint_is_loaded_too(tmp_path):
    # the folder appears after the recorder was made: the load refuses it before the state is touched
    a = tiny()
    a.run(10, checkpoint=tmp_path / "ck")
    b = tiny()
    rec = b.record(b["y"], "activity", store=tmp_path / "results")
    user_folder(tmp_path / "results")
    w = b["W"].weights.copy()
    with pytest.raises(ValueError, match="not a neurosim recording store"):
        b.run(20, checkpoint=tmp_path / "ck", resume=True)
    assert b.t == 0 and np.array_equal(b["W"].weights, w) and rec._sink is None
    assert_untouched(tmp_path / "results")


def test_overwrite_true_replaces_what_is_there(tmp_path):
    results = user_folder(tmp_path / "results")
    net = tiny()
    net.record(net["y"], "activity", store=results, overwrite=True)
    net.run(10)
    assert not (results / "thesis.txt").exists()
    assert open_store(results).sizes["time"] == 10


def test_an_empty_folder_becomes_the_store(tmp_path):
    (tmp_path / "empty").mkdir()
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "empty")
    net.run(5)
    assert open_store(tmp_path / "empty").sizes["time"] == 5


def test_another_recorders_store_is_refused_and_kept(tmp_path):
    a = tiny()
    a.record(a["y"], "activity", store=tmp_path / "y.zarr")
    a.run(10)
    kept = open_store(tmp_path / "y.zarr")
    b = tiny()
    with pytest.raises(ValueError, match=r"(?s)neurosim store written by another recorder.*recorder 'y'.*"
                                         r"recorder 'x'"):
        b.record(b["x"], "activity", store=tmp_path / "y.zarr")
    with pytest.raises(ValueError, match="another recorder"):
        b.record(b["y"], "activity", every=2, store=tmp_path / "y.zarr")
    assert open_store(tmp_path / "y.zarr").identical(kept)


def test_the_same_recorder_starts_its_own_store_afresh(tmp_path):
    # rerunning a script from the start (no resume) replaces the store it wrote, as before
    for steps in (12, 7):
        net = tiny()
        net.record(net["y"], "activity", store=tmp_path / "y.zarr")
        net.run(steps)
        ds = open_store(tmp_path / "y.zarr")
        assert ds.sizes["time"] == steps
    assert ds.attrs["recorder"] == "y" and "W.rule.alpha" in ds.attrs  # the attributes survive appending


def test_a_store_holding_other_files_is_not_restarted(tmp_path):
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(5)
    (tmp_path / "y.zarr" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"also holds files neurosim did not write \(\['notes.txt'\]\)"):
        tiny().record(tiny()["y"], "activity", store=tmp_path / "y.zarr")
    assert (tmp_path / "y.zarr" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("second", ["same", "spelled", "inside"])
def test_two_recorders_of_one_network_cannot_share_a_store(tmp_path, monkeypatch, second):
    # they used to replace each other's samples: KeyError 'weights' at t = 10, and every later run the same
    monkeypatch.chdir(tmp_path)
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "shared.zarr")
    path = {"same": tmp_path / "shared.zarr", "spelled": "./out/../shared.zarr/",
            "inside": tmp_path / "shared.zarr" / "w"}[second]
    (tmp_path / "out").mkdir()
    with pytest.raises(ValueError, match=r"recorders 'y' and 'W' would both write the store .*shared\.zarr"):
        net.record(net["W"], "weights", every=10, store=path)
    assert list(net.recorders) == ["y"]
    net.run(20)
    with xr.open_zarr(tmp_path / "shared.zarr") as z:
        assert z.sizes["time"] == 20 and "weights" not in z


def test_ensemble_members_cannot_share_a_store(tmp_path):
    a, b = tiny(seed=0), tiny(seed=1)
    for net in (a, b):
        net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    with pytest.raises(ValueError, match=r"networks\[0\] and networks\[1\].*recorders 'y' and 'y'.*y\.zarr"):
        ns.Ensemble([a, b])


def test_a_store_taken_up_by_another_network_is_refused_to_the_first(tmp_path):
    # a rerun in the same process while the first network lives: the two used to interleave their chunks
    first = tiny()
    first.record(first["y"], "activity", store=tmp_path / "y.zarr", buffer=4)
    first.run(6)
    second = tiny()
    second.record(second["y"], "activity", store=tmp_path / "y.zarr", buffer=4)
    second.run(10)
    with pytest.raises(ValueError, match=r"y\.zarr was taken up by another recorder"):
        first.run(6)
    assert first.t == 6
    with pytest.raises(ValueError, match="taken up by another recorder"):
        first.load(second.save(tmp_path / "ck"))
    assert first.t == 6
    second.run(5)
    ds = open_store(tmp_path / "y.zarr")
    np.testing.assert_array_equal(ds.time.values, np.arange(1, 16))


def test_a_store_cut_short_while_it_was_created_is_taken_up(tmp_path):
    # kill -9 between the group's first metadata write and its attributes leaves an empty zarr group
    import zarr

    zarr.open_group(str(tmp_path / "y.zarr"), mode="w")
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(3)
    assert open_store(tmp_path / "y.zarr").sizes["time"] == 3


def _plant_write_residue(store):
    """What ``kill -9`` during zarr's own writes leaves: a key's temporary file beside it (zarr 2 and zarr 3 names)."""
    hexes = iter(f"{i:032x}" for i in range(1, 10))
    planted = [store / f".zmetadata.{next(hexes)}.partial", store / f"zarr.{next(hexes)}.partial",
               store / f".zattrs.{next(hexes)}.partial"]
    array_dir = next(p for p in store.iterdir() if p.is_dir())
    planted.append(array_dir / f"0.{next(hexes)}.partial")
    for p in planted:
        p.write_bytes(b"half a write")
    return planted


def test_residue_of_an_interrupted_zarr_write_is_the_stores_own(tmp_path):
    # kill -9 during the commit left `.zmetadata.<uuid>.partial` (CI, zarr 2.18): a resumed run takes the store up
    # and clears the residue; the samples are those of an uninterrupted run
    ref = tiny(steps=30)
    ref.record(ref["y"], "activity", store=tmp_path / "ref.zarr")
    ref.run(30)
    net = tiny(steps=30)
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(12, checkpoint=tmp_path / "ck")
    planted = _plant_write_residue(tmp_path / "y.zarr")
    again = tiny(steps=30)
    again.record(again["y"], "activity", store=tmp_path / "y.zarr")
    again.run(30, checkpoint=tmp_path / "ck", resume=True)
    assert not any(p.exists() for p in planted)
    a, b = open_store(tmp_path / "y.zarr"), open_store(tmp_path / "ref.zarr")
    np.testing.assert_array_equal(a.activity.values, b.activity.values)
    np.testing.assert_array_equal(a.time.values, np.arange(1, 31))


def test_a_rerun_from_the_start_replaces_a_store_with_write_residue(tmp_path):
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(9)
    _plant_write_residue(tmp_path / "y.zarr")
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(4)
    assert open_store(tmp_path / "y.zarr").sizes["time"] == 4
    assert not list((tmp_path / "y.zarr").rglob("*.partial"))


@pytest.mark.parametrize("name", ["notes.partial", f"thesis.{'a' * 32}.partial", f".zmetadata.{'a' * 31}.partial",
                                  f".zmetadata.{'A' * 32}.partial"])
def test_files_that_only_look_like_write_residue_are_the_users(tmp_path, name):
    # residue is zarr's exact name: one of the store's own keys, a 32-digit lowercase uuid, `.partial`
    net = tiny()
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(5)
    (tmp_path / "y.zarr" / name).write_text("mine")
    with pytest.raises(ValueError, match=r"also holds files neurosim did not write"):
        tiny().record(tiny()["y"], "activity", store=tmp_path / "y.zarr")
    assert (tmp_path / "y.zarr" / name).read_text() == "mine"


def test_another_runs_finished_store_is_refused_and_kept(tmp_path):
    # issue 38, item 16: a second network (another seed) recording to the same path under the same recorder
    # name silently replaced the finished store of the first
    first = tiny(seed=0)
    first.record(first["y"], "activity", store=tmp_path / "y.zarr")
    first.run(10)
    kept = open_store(tmp_path / "y.zarr")
    other = tiny(seed=1)
    other.record(other["y"], "activity", store=tmp_path / "y.zarr")
    W = other["W"].weights.copy()
    with pytest.raises(StoreOwnershipError, match=r"(?s)recorder 'y': the store .*y\.zarr holds the recording of "
                                                  r"another run \(10 sample\(s\), 0 event\(s\)\) by a network with "
                                                  r"other parameters \(network\.seed: 0 in the store, 1 here.*"
                                                  r"resume=True.*another path.*overwrite=True"):
        other.run(5)
    assert other.t == 0 and np.array_equal(other["W"].weights, W)  # refused before anything ran
    assert open_store(tmp_path / "y.zarr").identical(kept)
    # before a run, a structural event opens the store: refused before anything is applied
    with pytest.raises(StoreOwnershipError, match="holds the recording of another run"):
        other.apply(ns.Birth(other["y"], 1))
    assert other["y"].size == 3 and len(other.event_log) == 0
    assert open_store(tmp_path / "y.zarr").identical(kept)
    # overwrite=True replaces it, as asked
    again = tiny(seed=1)
    again.record(again["y"], "activity", store=tmp_path / "y.zarr", overwrite=True)
    again.run(5)
    ref = tiny(seed=1)
    ref.record(ref["y"], "activity")
    ref.run(5)
    np.testing.assert_array_equal(open_store(tmp_path / "y.zarr").activity.values,
                                  ref.recorders["y"].to_dataset(layout="slots").activity.values)


def test_the_same_run_resumes_its_store_and_a_resumed_other_seed_is_refused(tmp_path):
    ref = tiny(steps=30)
    ref.record(ref["y"], "activity")
    ref.run(30)
    net = tiny(steps=30)
    net.record(net["y"], "activity", store=tmp_path / "y.zarr")
    net.run(12, checkpoint=tmp_path / "ck")
    again = tiny(steps=30)  # the same run, resumed from its checkpoint in a new network object
    again.record(again["y"], "activity", store=tmp_path / "y.zarr")
    again.run(30, checkpoint=tmp_path / "ck", resume=True)
    np.testing.assert_array_equal(open_store(tmp_path / "y.zarr").activity.values,
                                  ref.recorders["y"].to_dataset(layout="slots").activity.values)
    kept = open_store(tmp_path / "y.zarr")
    other = tiny(steps=30, seed=1)  # resuming another seed's checkpoint is refused by the checkpoint's load
    other.record(other["y"], "activity", store=tmp_path / "y.zarr")
    with pytest.raises(ValueError, match=r"(?s)other parameters.*network\.seed"):
        other.run(30, checkpoint=tmp_path / "ck", resume=True)
    assert open_store(tmp_path / "y.zarr").identical(kept)
