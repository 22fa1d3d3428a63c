"""The paper-000 synthetic-supports reproduction, shortened: Lemma 1's claims hold in it, on every seed."""

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import ng_synthetic_supports as sim

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def test_disjoint_supports_short(tmp_path):
    paths = sim.run(steps=6, out=tmp_path, progress=False, n_seeds=2)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert ds.attrs["normalize"] == sim.NORMALIZE == "none"
    assert ds.accuracy.dims == ("seed", "variant", "domain") and list(ds.seed.values) == [0, 1]
    assert ds.dictionary.sizes["seed"] == 2 and ds.dictionary_size.sizes["seed"] == 2
    # other data and elements: the seeds' scores differ
    assert not np.allclose(ds.accuracy.isel(seed=0).values, ds.accuracy.isel(seed=1).values)
    acc = ds.accuracy
    # ODL codes domain 2 exactly when one of its elements has weight on Q: under unused="keep" an element no
    # domain-1 sample used keeps its initial Q entries (seed 1 here), otherwise Lemma 1 holds
    odl_q = ds.max_weight_on_Q.sel(variant="ODL").values
    np.testing.assert_array_equal(acc.sel(variant="ODL", domain="domain2").values > 0, odl_q > 0)
    assert np.any(odl_q == 0)
    # NODL grows into Q and represents both domains
    assert np.all(acc.sel(variant="NODL", domain="domain2").values > 0.8)
    assert np.all(acc.sel(variant="NODL", domain="domain1").values > 0.8)
    assert np.all(ds.dictionary_size.sel(variant="NODL").isel(step=-1).values > sim.K0)
    assert np.all(ds.dictionary_size.sel(variant="ODL").isel(step=-1).values == sim.K0)


def test_disjoint_supports_unused_zeroed(tmp_path):
    # the authors' code zeroes never-used elements: then every element is supported in P after domain 1, and
    # ODL cannot leave P (Lemma 1): domain 2 is not represented at all, on every seed
    paths = sim.run(steps=6, out=tmp_path, progress=False, n_seeds=2, unused="zero")
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert ds.attrs["unused"] == "zero"
    assert np.all(ds.accuracy.sel(variant="ODL", domain="domain2").values == 0.0)
    assert np.all(ds.max_weight_on_Q.sel(variant="ODL").values == 0.0)
    assert np.all(ds.accuracy.sel(variant="NODL").values > 0.8)


def test_disjoint_supports_centred_atoms(tmp_path):
    # under "center_unit" a centred element has nonzeros on Q too: Lemma 1's premise fails, ODL's codes of
    # domain-2 samples need not vanish; NODL still represents both domains
    paths = sim.run(steps=6, out=tmp_path, progress=False, n_seeds=1, normalize="center_unit")
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert ds.attrs["normalize"] == "center_unit"
    acc = ds.accuracy.isel(seed=0)
    assert float(acc.sel(variant="ODL", domain="domain2")) > 0.0
    assert float(acc.sel(variant="NODL", domain="domain2")) > 0.8
    assert int(ds.dictionary_size.sel(variant="ODL").isel(seed=0, step=-1)) == sim.K0
