"""The paper-000 robustness sweep (App. E.9, Figs. 22-27), shortened: the parameters act as the paper says."""

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import ng_robustness as sim

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def test_points_cover_each_parameter_once_and_odl_only_where_it_acts():
    pts = sim.points(n_per_class=10)
    keys = [(p["variant"], p["param"], p["value"]) for p in pts]
    assert len(set(map(str, keys))) == len(keys)  # every setting run once
    for p in pts:
        changed = {k for k, v in sim.DEFAULTS.items() if p[k] != v}
        assert changed == (set() if p["param"] == "default" else {p["param"]})
    assert not [p for p in pts if p["variant"] == "ODL" and p["param"] in sim.NOT_ODL]
    # the coding normalisation is a setting of every point, never swept
    assert {p["normalize"] for p in pts} == {sim.NORMALIZE}
    assert {p["normalize"] for p in sim.points(n_per_class=10, normalize="none")} == {"none"}


def test_robustness_short(tmp_path):
    sweep = {"c_k": [3, 25], "lambda_g": [0.03, 1.0], "beta_c": [5, 20]}
    paths = sim.run(steps=2, out=tmp_path, progress=False, sweep=sweep, n_seeds=2)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert ds.sizes["run"] == len(sim.points(100, 0, sweep))
    assert ds.attrs["normalize"] == sim.NORMALIZE and list(ds.seed.values) == [0, 1]
    for name in ("acc_old", "acc_new", "final_size", "nonzero_elements", "seconds"):
        assert ds[name].dims == ("seed", "run")
    assert ds.variant.dims == ("run",)
    # other crops, initial elements and newborns: the seeds' scores differ
    assert not np.allclose(ds.acc_new.isel(seed=0).values, ds.acc_new.isel(seed=1).values)
    acc = np.concatenate([ds.acc_old.values, ds.acc_new.values])
    assert np.all(np.isfinite(acc)) and np.all(np.abs(acc) <= 1)

    def one(variant, param, value=None):
        sel = (ds.variant == variant) & (ds.param == param)
        if value is not None:
            sel &= ds.value == value
        return ds.isel(run=np.flatnonzero(sel.values)[0])

    # ODL neither adds nor removes elements (Mairal et al. 2009)
    assert set(ds.final_size.values[:, ds.variant.values == "ODL"].ravel()) == {sim.N_COMPONENTS}
    # every seed:
    # c_k bounds the births per batch (Alg. 1 step 6): a larger bound gives a larger dictionary
    assert np.all(one("NODL", "c_k", 25).final_size.values > one("NODL", "c_k", 3).final_size.values)
    # lambda_g = 1, the top of the paper's range (App. B: lambda_g in [0, 1]), kills every element here (step 16):
    # all but beta_c die (deaths stop there), the rest are all-zero and code nothing
    dead = one("NODL", "lambda_g", 1.0)
    assert np.all(dead.final_size.values == sim.DEFAULTS["beta_c"]) and np.all(dead.nonzero_elements.values == 0)
    assert np.all(dead.acc_new.values == 0.0) and np.all(one("NODL", "default").acc_new.values > 0)
    # denser codes reconstruct better (Fig. 25), for both algorithms
    for v in ("NODL", "ODL"):
        assert np.all(one(v, "beta_c", 5).acc_new.values < one(v, "default").acc_new.values)
