"""The paper-000 image reproductions (Fig. 3/20, Fig. 7/15), shortened: bookkeeping that holds at any scale.

The paper's accuracy claims need the full runs; these tests check what is
true of any run: sizes from the event log equal the learned dictionaries,
each variant's births/deaths are those its definition allows, the block
numbers equal a direct recomputation from ``A``, units are ordered by age.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.events import EventLog
from neurosim.simulations import ng_images_two_domains as images
from neurosim.simulations import ng_memory_matrix as memory

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def test_size_history_from_a_hand_made_log():
    log = EventLog()
    log.add(1, "birth", "code", [10, 11, 12])
    log.add(1, "death", "code", [0])
    log.add(3, "death", "code", [10, 11])
    log.add(2, "birth", "other", [5])  # another population: ignored
    size, b, d = images.size_history(log, "code", 4, 4)
    assert size.tolist() == [6, 6, 4, 4]
    assert b.tolist() == [3, 0, 0, 0] and d.tolist() == [1, 0, 2, 0]


def test_pearson_accuracy_oracles():
    rng = np.random.default_rng(0)
    X = np.zeros((6, 24))
    for i in range(6):  # disjoint supports: a sample's own element is the only one that correlates with it
        X[i, 4 * i: 4 * i + 4] = rng.random(4) + 0.1
    # each sample is an element (scaled): one nonzero reconstructs it exactly (centring an element supported
    # on 4 of 24 entries leaves it correlated 1 with the sample: Pearson ignores the constant offset)
    for how in ("none", "unit", "center_unit"):
        assert images.pearson_accuracy(3.0 * X, X, 1, how) == pytest.approx(1.0, abs=1e-9)
    assert images.pearson_accuracy(np.zeros((4, 24)), X, 2) == 0.0
    # a constant element codes nothing once centred
    assert images.pearson_accuracy(np.ones((1, 24)), X, 1, "center_unit") == 0.0


def test_two_domains_short(tmp_path, monkeypatch):
    monkeypatch.setattr(images, "BATCH", 50)  # 200 images a mini-batch were half the test's time
    sizes = (8, 24)
    paths = images.run(steps=1, out=tmp_path, progress=False, sizes=sizes, n_test=20, n_seeds=2)
    assert set(paths) == {"dataset", "figure", "sizes_figure"}
    assert all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    steps = 3  # one urban mini-batch, then two natural ones
    assert ds.accuracy.shape == (2, 2, 5, 2, 2) and ds.dictionary_size.shape == (2, 2, 5, 2, steps)
    assert ds.attrs["steps_domain1"] == 1 and ds.attrs["normalize"] == images.NORMALIZE == "center_unit"
    assert ds.seed.values.tolist() == [0, 1]
    # the matched ODL started from NODL's final number of active elements; margin = NODL - matched ODL
    np.testing.assert_array_equal(ds.odl_matched_size, np.maximum(1, ds.active_size.sel(variant="NODL")))
    np.testing.assert_allclose(ds.margin, ds.accuracy.sel(variant="NODL") - ds.odl_matched_accuracy, rtol=1e-15)
    # seeds differ (other crops and elements)
    assert not np.array_equal(ds.accuracy.isel(seed=0), ds.accuracy.isel(seed=1))
    ds = ds.isel(seed=0)
    acc = ds.accuracy.values
    assert np.all(np.isfinite(acc)) and np.all(np.abs(acc) <= 1.0 + 1e-12)
    k0 = np.array(sizes)
    # the size after the last batch, counted from the event log, is the learned dictionary's size
    np.testing.assert_array_equal(ds.dictionary_size.isel(step=-1), ds.final_size)
    np.testing.assert_array_equal(ds.final_size - k0, ds.births.sum("step") - ds.deaths.sum("step"))
    assert np.all(ds.active_size <= ds.final_size)
    for e in ds.elements.values:
        sel = ds.sel(elements=e)
        # ODL: fixed size, no events; NODL+: no deaths; NODL-: no births
        np.testing.assert_array_equal(sel.final_size.sel(variant="ODL"), k0)
        assert int(sel.births.sel(variant="ODL").sum()) == int(sel.deaths.sel(variant="ODL").sum()) == 0
        assert int(sel.deaths.sel(variant="NODL+").sum()) == 0
        assert int(sel.births.sel(variant="NODL-").sum()) == 0
        # a random dictionary of <= 24 elements is far from 0.9 Pearson on images: NODL grows at batch 1
        for v in ("NODL", "NODL+"):
            assert np.all(sel.births.sel(variant=v).isel(step=0) > 0)
        assert np.all(sel.final_size.sel(variant="NODL+") > k0)
        # ODL* differs from ODL only by re-initialising dead elements: without deaths it is the same run
        for i in range(len(sizes)):
            if int(sel.deaths.sel(variant="ODL*").isel(initial_size=i).sum()) == 0:
                np.testing.assert_array_equal(sel.accuracy.sel(variant="ODL*").isel(initial_size=i),
                                              sel.accuracy.sel(variant="ODL").isel(initial_size=i))


def _direct_ratio_mean(A, rows, cols):
    """|a_jk|/a_jj averaged over j in rows (a_jj > 0), k in cols, j != k: plain loops."""
    vals = [abs(A[j, k]) / A[j, j] for j in rows if A[j, j] > 0 for k in cols if k != j]
    return vals


def test_memory_matrix_short(tmp_path):
    paths = memory.run(steps=1, out=tmp_path, progress=False, size=10, n_seeds=2)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert ds.attrs["normalize"] == memory.NORMALIZE == "center_unit"
    assert list(ds.seed.values) == [0, 1] and ds.tie_strength.dims == ("seed", "run", "block")
    # other crops, initial elements and newborns: the seeds' matrices differ
    assert not np.allclose(ds.A.isel(seed=0).sel(run="ODL dense").values[:10, :10],
                           ds.A.isel(seed=1).sel(run="ODL dense").values[:10, :10])
    steps1, steps = ds.attrs["steps_domain1"], ds.attrs["steps"]
    for s, name in ((s, name) for s in range(ds.sizes["seed"]) for name in ds.run.values):
        r = ds.isel(seed=s).sel(run=name)
        k = int(r.n_old) + int(r.n_new)
        A = r.A.values[:k, :k]
        assert not np.isnan(A).any() and np.isnan(r.A.values[k:, k:]).all()
        np.testing.assert_allclose(A, A.T, rtol=1e-12, atol=1e-12 * np.abs(A).max())
        assert np.all(np.diag(A) >= 0)
        born, old = r.birth_step.values[:k], r.old.values[:k]
        # ordered by age; old = alive before domain 2, i.e. born at or before its first step
        assert np.all(np.diff(born) >= 0)
        np.testing.assert_array_equal(old, born <= steps1)
        assert born.min() >= 0 and born.max() <= steps
        o, w = np.flatnonzero(old), np.flatnonzero(~old)
        every = np.arange(k)
        for block, rows, cols in (("all", every, every), ("old-old", o, o), ("new-new", w, w),
                                  ("old-new", o, w), ("new-old", w, o)):
            vals = _direct_ratio_mean(A, rows, cols)
            got = float(r.tie_strength.sel(block=block))
            if vals:
                assert got == pytest.approx(np.mean(vals), rel=1e-12)
            else:
                assert np.isnan(got)
        cross = _direct_ratio_mean(A, o, w) + _direct_ratio_mean(A, w, o)
        got = float(r.tie_strength.sel(block="across"))
        assert (got == pytest.approx(np.mean(cross), rel=1e-12)) if cross else np.isnan(got)
        k1 = int(np.sum(~np.isnan(np.diag(r.A_domain1.values))))
        assert float(r.tie_strength.sel(block="all (domain 1 end)")) == pytest.approx(
            np.mean(_direct_ratio_mean(r.A_domain1.values[:k1, :k1], np.arange(k1), np.arange(k1))), rel=1e-12)
    # ODL never adds units: all old, all initial
    for name in ("ODL sparse", "ODL dense"):
        assert np.all(ds.n_new.sel(run=name).values == 0) and np.all(ds.n_old.sel(run=name).values == 10)
    # NODL gives birth on the new domain: newborn units exist after domain 2
    assert np.all(ds.n_new.sel(run="NODL dense").values > 0) and np.all(ds.n_new.sel(run="NODL sparse").values > 0)
