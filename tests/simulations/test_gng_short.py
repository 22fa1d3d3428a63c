"""The Growing Neural Gas / Grow When Required reproductions, shortened: they run, write their files and hold what is certain."""

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import gng_shapes

# end-to-end reproductions: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def test_gng_shapes_short(tmp_path):
    paths = gng_shapes.run(steps=600, out=tmp_path, progress=False, n_seeds=3, seed=4)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert list(ds.seed.values) == [4, 5, 6]
    # one birth every lambda = 100 inputs from two units, and no death this early (edges live 50 inputs of their units)
    units = ds.units.values
    assert np.all(units[:, -1] == 2 + 600 // 100) and np.all(np.diff(units, axis=1) >= 0)
    assert np.all(units[:, 99] == 3) and np.all(units[:, 98] == 2)
    # the final network: as many prototypes as units, edges between living ids
    for r in range(3):
        ids = ds.unit_id.values[r]
        ids = ids[ids >= 0]
        assert ids.size == units[r, -1] and np.isfinite(ds.prototypes.values[r, : ids.size]).all()
        e = ds.edge.values[r]
        e = e[e[:, 0] >= 0]
        assert e.shape[0] == ds.edges.values[r, -1] and np.isin(e, ids).all()
    qe = ds.quantization_error.values
    assert np.all(qe[:, -1] < qe[:, 0])  # the network spreads over the data


def test_gng_gwr_moving_short(tmp_path):
    from neurosim.simulations import gng_gwr_moving

    paths = gng_gwr_moving.run(steps=1000, out=tmp_path, progress=False, n_seeds=3, seed=1)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert list(ds.model.values) == ["GNG", "GWR"] and list(ds.seed.values) == [1, 2, 3]
    gng, gwr = ds.sel(model="GNG"), ds.sel(model="GWR")
    # GNG: a birth every 100 inputs, 5 of them after the move; GWR grows where it is needed, faster
    assert np.all(gng.units.values[:, -1] == 2 + 10)
    assert np.all(gng.born_new.values + gng.born_old.values <= 5)
    assert np.all(gwr.born_new.values > gng.born_new.values)
    # the move makes the error jump; GWR's error on the new ring is smaller than GNG's at the end
    qe = ds.quantization_error
    assert np.all(qe.sel(model="GWR").values[:, -1] < qe.sel(model="GNG").values[:, -1])


def test_som_minisom_short(tmp_path):
    pytest.importorskip("minisom")
    from neurosim.simulations import som_minisom

    paths = som_minisom.run(steps=400, out=tmp_path, progress=False, n_seeds=3)
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert list(ds.implementation.values) == ["ours", "minisom"] and ds.sizes["seed"] == 3
    assert float(ds.max_weight_difference.max()) < 1e-12  # MiniSom's weights to rounding
    np.testing.assert_allclose(ds.quantization_error.sel(implementation="ours"),
                               ds.quantization_error.sel(implementation="minisom"), rtol=1e-9)
    np.testing.assert_array_equal(ds.topographic_error.sel(implementation="ours"),
                                  ds.topographic_error.sel(implementation="minisom"))
    qe = ds.quantization_error.sel(implementation="ours").values
    assert np.all(qe[:, -1] < qe[:, 0])
