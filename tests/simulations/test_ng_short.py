"""The paper-000 synthetic-supports reproduction, shortened: Lemma 1's claims hold in it."""

import pytest
import xarray as xr

from neurosim.simulations import ng_synthetic_supports as sim

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def test_disjoint_supports_short(tmp_path):
    paths = sim.run(steps=6, out=tmp_path, progress=False)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        acc = ds.accuracy
        # ODL cannot leave P: domain 2 is not represented at all
        assert float(acc.sel(variant="ODL", domain="domain2")) == 0.0
        # NODL grows into Q and represents both domains
        assert float(acc.sel(variant="NODL", domain="domain2")) > 0.8
        assert float(acc.sel(variant="NODL", domain="domain1")) > 0.8
        assert int(ds.dictionary_size.sel(variant="NODL")[-1]) > sim.K0
        assert int(ds.dictionary_size.sel(variant="ODL")[-1]) == sim.K0
