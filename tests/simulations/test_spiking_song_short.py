"""The Song et al. (2000) reproduction script, shortened (issue 42): its dataset, table and figures agree."""

import numpy as np
import pytest
import xarray as xr

from neurosim.models.stdp_song import G_MAX, song_network, song_run
from neurosim.simulations import spiking_song_stdp as sim


@pytest.mark.slow  # 36 short runs (4 s); the quick reproduction in CI runs the script too
def test_the_script_records_what_its_dataset_and_table_say(tmp_path):
    files = sim.run(steps=2000, out=tmp_path, seed=2, progress=False, n_seeds=1)
    with xr.open_dataset(files["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert files["weights"].is_file() and files["rates"].is_file()
    assert ds.rule.values.tolist() == list(sim.RULES) and ds.seed.values.tolist() == [2]
    # one point recomputed from the model: the sweep ran what it says
    one = song_run(seconds=0.2, rate_hz=20.0, rule="additive", seed=2, bin_seconds=0.02)
    np.testing.assert_array_equal(ds.weights.sel(rule="additive", rate_hz=20.0, seed=2).values, one.weights.values)
    np.testing.assert_array_equal(ds.output_rate_hz.sel(rule="additive", rate_hz=20.0, seed=2).values,
                                  one.output_rate_hz.values)
    # fixed weights stay where they started; the plastic ones moved
    w = ds.weights.sel(rate_hz=20.0, seed=2)
    start = song_network(20.0, "none", seed=2).projections["S"].weights.reshape(-1) / G_MAX
    np.testing.assert_array_equal(w.sel(rule="none").values, start)
    assert not np.array_equal(start, w.sel(rule="additive").values)
    last = ds.output_rate_hz.isel(bin=slice(-2, None)).mean("bin")
    np.testing.assert_allclose(ds.final_rate_hz.values, last.values, rtol=1e-12)
    (table,) = sim.tables(ds)
    assert table.name == "spiking_song_stdp/summary" and len(table.rows) == len(sim.RULES) * len(sim.RATES_HZ)
    assert [r[0] for r in table.rows[:3]] == ["none"] * 3
