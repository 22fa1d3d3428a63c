"""The CUBA reproduction script, shortened (issue 42): its dataset, its table and its agreement with the model."""

import numpy as np
import pytest
import xarray as xr

from neurosim.models.spiking import cuba_inputs, cuba_network, raster_stats
from neurosim.simulations import spiking_cuba as sim


@pytest.mark.slow  # the quick reproduction in CI runs the script too
def test_the_script_records_what_its_dataset_and_table_say(tmp_path):
    files = sim.run(steps=1000, out=tmp_path, seed=4, progress=False, n_seeds=2)
    with xr.open_dataset(files["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert files["raster"].is_file() and ds.seed.values.tolist() == [4, 5]
    # seed 4 recomputed from the model directly: the chunked recording loses no spike
    v0, pre, post = cuba_inputs(4)
    net = cuba_network(v0, pre, post)
    net.run(1000)
    step, unit = np.nonzero(net.recorders["P"].to_dataset().activity.values[:, 0, :])
    assert int(ds.spikes.sel(seed=4)) == unit.size
    stats = raster_stats(unit, step, steps=1000)
    assert stats["units_with_isi"] > 30
    assert float(ds.rate_hz.sel(seed=4)) == stats["rate_hz"] and float(ds.cv_isi.sel(seed=4)) == stats["cv_isi"]
    counts = ds.population_rate.sel(seed=4).values * (4000 * 10 * 1e-4)  # the 1 ms bins count every spike
    np.testing.assert_allclose(counts.sum(), unit.size, rtol=1e-12)
    np.testing.assert_array_equal(ds.raster_unit.values, unit[np.argsort(step, kind="stable")])
    (table,) = sim.tables(ds)
    assert table.name == "spiking_cuba/statistics" and [r[0] for r in table.rows[:2]] == [4, 5]


@pytest.mark.slow  # the CUBA script's test covers the shared runner in the quick tier
def test_the_coba_script_records_what_the_model_gives(tmp_path):
    from neurosim.models.spiking import coba_inputs, coba_network
    from neurosim.simulations import spiking_coba

    files = spiking_coba.run(steps=300, out=tmp_path, seed=7, progress=False, n_seeds=1)
    with xr.open_dataset(files["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert files["raster"].name == "coba_raster.png" and files["raster"].is_file()
    net = coba_network(*coba_inputs(7))
    net.run(300)
    step, unit = np.nonzero(net.recorders["P"].to_dataset().activity.values[:, 0, :])
    assert unit.size > 100 and int(ds.spikes.sel(seed=7)) == unit.size
    (table,) = spiking_coba.tables(ds)
    assert table.name == "spiking_coba/statistics"
