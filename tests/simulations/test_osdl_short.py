"""The paper-003 reproductions, shortened: they run, write their files and hold what is certain at any length.

The full runs and their numbers are in ``simulations/osdl_*.py`` and ``docs/reports/paper003.md``.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import osdl_forgetting, osdl_hierarchical, osdl_inpainting, osdl_online_exact
from neurosim.simulations import osdl_topographic

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")]


def _open(path):
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return ds.load()


def test_inpainting_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_inpainting, "GRID", {"train_missing": [0.0, 0.5]})
    monkeypatch.setattr(osdl_inpainting, "N_TEST", 1)
    monkeypatch.setattr(osdl_inpainting, "CROP", 24)
    paths = osdl_inpainting.run(steps=3, out=tmp_path, progress=False)
    assert all(p.stat().st_size > 0 for p in paths.values())
    ds = _open(paths["dataset"])
    assert dict(ds.psnr.sizes) == {"train_missing": 2, "test_missing": 3, "image": 1}
    # a dictionary fit on the observed pixels beats filling with their mean, at every fraction missing
    assert np.all(ds.psnr > ds.psnr_mean_fill)
    # fewer missing pixels, better reconstruction
    assert np.all(np.diff(ds.psnr.mean("image").values, axis=1) < 0)
    # observed pixels are kept: the example's inpainted panel equals the original where observed
    ex = ds.example.isel(train_missing=0)
    obs = np.isfinite(ex.sel(panel="observed").values)
    np.testing.assert_array_equal(ex.sel(panel="inpainted").values[obs], ex.sel(panel="original").values[obs])


def test_forgetting_short(tmp_path):
    paths = osdl_forgetting.run(steps=9, out=tmp_path, progress=False)
    ds = _open(paths["dataset"])
    assert dict(ds.rel_error.sizes) == {"rho": 4, "domain": 2, "step": len(ds.step)}
    assert int(ds.switch) == 3 and list(ds.step.values) == sorted(set(ds.step.values))
    e = ds.rel_error.values
    assert np.all(np.isfinite(e)) and np.all((e > 0) & (e < 1.5))
    # at step 0 nothing was learned yet: every rho starts from the same dictionary
    np.testing.assert_array_equal(e[:, :, 0], e[:1, :, 0].repeat(4, axis=0))


def test_hierarchical_short(tmp_path):
    paths = osdl_hierarchical.run(steps=10, out=tmp_path, progress=False)
    ds = _open(paths["dataset"])
    assert list(np.bincount(ds.depth.values)) == [1, 4, 16]
    assert (ds.parent.values[1:] < np.arange(1, 21)).all() and ds.parent.values[0] == -1
    # the root's group holds every unit: it is used whenever anything is
    assert float(ds.usage.isel(unit=0)) >= float(ds.usage.max()) - 1e-12
    assert 0 <= float(ds.violations) < 0.05
    assert 0 < float(ds.relative_error) < 1


def test_topographic_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_topographic, "ROWS", 6)
    paths = osdl_topographic.run(steps=4, out=tmp_path, progress=False)
    ds = _open(paths["dataset"])
    assert dict(ds.dictionary.sizes) == {"groups": 2, "unit": 36, "pixel": 64}
    assert np.all(np.linalg.norm(ds.dictionary.values, axis=-1) <= 1 + 1e-12)


def test_online_exact_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_online_exact, "N_COMPONENTS", 24)
    monkeypatch.setattr(osdl_online_exact, "EVAL_EVERY", 2)
    paths = osdl_online_exact.run(steps=6, out=tmp_path, progress=False)
    ds = _open(paths["dataset"])
    d = ds.distance.values
    # same start, same data: the forms coincide after batch 1 and part from then on
    assert np.all(d >= 0) and np.all(d[:, -1] > 1e-6)
    assert np.all(np.isfinite(ds.rel_error.values))
