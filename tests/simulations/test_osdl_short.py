"""The paper-003 reproductions, shortened: they run, write their files and hold what is certain at any length.

The full runs and their numbers are in ``simulations/osdl_*.py`` and ``docs/reports/paper003.md``.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import osdl_forgetting, osdl_hierarchical, osdl_inpainting, osdl_online_exact
from neurosim.simulations import osdl_topographic

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning")]


@pytest.mark.parametrize("grid, match", [
    ({"variant": ["torus"]}, "must include 'lasso'"),
    ({"variant": ["lasso", "ridge"]}, r"grid\['variant'\] must be a non-empty subset"),
    ({"train_missing": []}, r"grid\['train_missing'\] must be a non-empty subset"),
    ({"kappa": [0.1]}, "keys are among"),
    ([("variant", ["lasso"])], "must be a dict"),
])
def test_inpainting_refuses_a_grid_outside_its_own_before_running(tmp_path, grid, match):
    with pytest.raises(ValueError, match=match):
        osdl_inpainting.run(steps=3, out=tmp_path / "o", progress=False, grid=grid)
    assert not (tmp_path / "o").exists()


def _open(path):
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return ds.load()


def test_inpainting_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_inpainting, "CROP", 24)
    paths = osdl_inpainting.run(steps=3, out=tmp_path, progress=False, seed=4, n_seeds=2,
                                grid={"variant": ["lasso_raw", "lasso"], "train_missing": [0.5, 0.0]})
    assert all(p.stat().st_size > 0 for p in paths.values())
    ds = _open(paths["dataset"])
    assert dict(ds.psnr_missing.sizes) == {"seed": 2, "train_missing": 2, "variant": 2, "test_missing": 3,
                                           "image": 3}
    assert list(ds.seed.values) == [4, 5] and list(ds.image.values) == ["coffee", "gravel", "ascent"]
    # the values asked for, in GRID's order
    assert list(ds.variant.values) == ["lasso", "lasso_raw"] and list(ds.train_missing.values) == [0.0, 0.5]
    assert dict(ds.baseline_missing.sizes) == {"seed": 2, "baseline": 3, "test_missing": 3, "image": 3}
    # seeds differ: their own masks (baselines) and their own dictionaries
    assert np.all(ds.baseline_missing.isel(seed=0).values != ds.baseline_missing.isel(seed=1).values)
    assert not np.allclose(ds.dictionary.isel(seed=0).values, ds.dictionary.isel(seed=1).values)
    # observed pixels are kept, so the whole crop scores at least as well as its missing pixels (finite: not all
    # pixels are perfectly estimated), and for every method
    assert np.all(ds.psnr_whole >= ds.psnr_missing) and np.all(ds.baseline_whole >= ds.baseline_missing)
    # errors only at missing pixels: whole-crop PSNR = missing-pixel PSNR + 10 log10(1 / fraction missing), up to
    # the sampled fraction (Bernoulli masks on 24x24 crops)
    gap = ds.psnr_whole - ds.psnr_missing
    np.testing.assert_allclose((gap + 10 * np.log10(ds.test_missing)).values, 0.0, atol=1.0)
    # per-patch mean fill beats one mean for the whole crop
    b = ds.baseline_missing.mean("image")
    assert np.all(b.sel(baseline="patch_mean") > b.sel(baseline="crop_mean"))
    # fewer missing pixels, better reconstruction (every variant, every seed)
    assert np.all(ds.psnr_missing.mean("image").diff("test_missing") < 0)
    # observed pixels are kept: the example's inpainted panel equals the original where observed
    ex = ds.example.isel(train_missing=0, variant=0, seed=0)
    obs = np.isfinite(ex.sel(panel="observed").values)
    np.testing.assert_array_equal(ex.sel(panel="inpainted").values[obs], ex.sel(panel="original").values[obs])


def test_inpainting_baselines_use_the_given_mask():
    img = osdl_inpainting.test_crops(16)[1]
    obs = np.random.default_rng(0).random(img.shape) > 0.5
    for name, est in osdl_inpainting.baselines(img, obs).items():
        np.testing.assert_array_equal(est[obs], img[obs])
        assert np.all(np.isfinite(est)), name
    # the per-patch mean fill with one patch covering the image is the observed mean
    one = osdl_inpainting.baselines(img[:8, :8], obs[:8, :8])["patch_mean"]
    np.testing.assert_allclose(one[~obs[:8, :8]], img[:8, :8][obs[:8, :8]].mean())


def test_forgetting_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_forgetting, "N_TEST", 60)  # 300 test patches per evaluation: 3/4 of the time
    paths = osdl_forgetting.run(steps=9, out=tmp_path, progress=False, n_seeds=2)
    ds = _open(paths["dataset"])
    assert dict(ds.rel_error.sizes) == {"seed": 2, "rho": 4, "domain": 2, "step": len(ds.step)}
    assert list(ds.seed.values) == [0, 1] and dict(ds.adaptation.sizes) == {"seed": 2, "rho": 4}
    assert int(ds.switch) == 3 and list(ds.step.values) == sorted(set(ds.step.values))
    e = ds.rel_error.transpose("seed", "rho", "domain", "step").values
    assert np.all(np.isfinite(e)) and np.all((e > 0) & (e < 1.5))
    # at step 0 nothing was learned yet: every rho starts from the same dictionary (per seed), the seeds differ
    np.testing.assert_array_equal(e[:, :, :, 0], e[:, :1, :, 0].repeat(4, axis=1))
    assert np.all(e[0, :, :, 0] != e[1, :, :, 0])


def test_hierarchical_short(tmp_path):
    paths = osdl_hierarchical.run(steps=10, out=tmp_path, progress=False, n_seeds=2)
    ds = _open(paths["dataset"])
    assert list(np.bincount(ds.depth.values)) == [1, 4, 16]
    assert (ds.parent.values[1:] < np.arange(1, 21)).all() and ds.parent.values[0] == -1
    assert dict(ds.elements.sizes) == {"seed": 2, "unit": 21, "pixel": 64}
    assert not np.allclose(ds.elements.isel(seed=0).values, ds.elements.isel(seed=1).values)
    # the root's group holds every unit: it is used whenever anything is (on every seed)
    assert np.all(ds.usage.isel(unit=0) >= ds.usage.max("unit") - 1e-12)
    assert np.all((ds.violations >= 0) & (ds.violations < 0.05))
    assert np.all((ds.relative_error > 0) & (ds.relative_error < 1))


def test_topographic_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_topographic, "ROWS", 6)
    paths = osdl_topographic.run(steps=4, out=tmp_path, progress=False, n_seeds=2)
    ds = _open(paths["dataset"])
    assert dict(ds.dictionary.sizes) == {"seed": 2, "groups": 2, "unit": 36, "pixel": 64}
    assert not np.allclose(ds.dictionary.isel(seed=0).values, ds.dictionary.isel(seed=1).values)
    assert np.all(np.linalg.norm(ds.dictionary.values, axis=-1) <= 1 + 1e-12)


def test_online_exact_short(tmp_path, monkeypatch):
    monkeypatch.setattr(osdl_online_exact, "N_COMPONENTS", 24)
    monkeypatch.setattr(osdl_online_exact, "EVAL_EVERY", 2)
    paths = osdl_online_exact.run(steps=6, out=tmp_path, progress=False, n_seeds=2)
    ds = _open(paths["dataset"])
    assert ds.distance.dims == ("seed", "missing", "step") and list(ds.seed.values) == [0, 1]
    d = ds.distance.values
    # same start, same data: the forms coincide after batch 1 and part from then on (every seed)
    assert np.all(d >= 0) and np.all(d[:, :, -1] > 1e-6)
    assert np.all(ds.rel_error.isel(seed=0).values != ds.rel_error.isel(seed=1).values)
    assert np.all(np.isfinite(ds.rel_error.values))
