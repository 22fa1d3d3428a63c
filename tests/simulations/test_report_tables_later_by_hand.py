"""The report tables of the simulations published after the first batch (issue 41), on datasets made by hand.

Like ``test_report_tables_by_hand.py``: each ``tables(ds)`` gets a small
dataset whose numbers are known, so that every count of seeds and every
paired margin is checked against a value worked out by hand.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.report_tables import render
from neurosim.simulations import osdl_hierarchical


def _values(c):
    return c["values"]


def test_hierarchical_tables_average_each_depth_then_count_seeds():
    # a tree of 1 + 2 units: depth 0 (unit 0), depth 1 (units 1, 2); two seeds
    freq = np.array([[0.10, 0.20, 0.30], [0.30, 0.20, 0.20]])  # depth 1 mean: 0.25, 0.20
    usage = np.array([[0.9, 0.5, 0.7], [0.8, 0.9, 0.9]])  # falls on seed 0 only (0.9 > 0.6; 0.8 < 0.9)
    ds = xr.Dataset({"frequency": (("seed", "unit"), freq), "usage": (("seed", "unit"), usage),
                     "depth": ("unit", [0, 1, 1]), "parent": ("unit", [-1, 0, 0]),
                     "violations": ("seed", [0.0, 0.004]), "relative_error": ("seed", [0.3, 0.5])},
                    coords={"seed": [0, 1], "unit": [0, 1, 2]})
    depths, claims = osdl_hierarchical.tables(ds)
    shown = render(depths).splitlines()
    assert shown[2] == "| 0 (root) | 0.200 ± 0.141 | 0.100, 0.300 | 0.850 ± 0.071 | 0.900, 0.800 |"
    assert shown[3] == "| 1 (leaves) | 0.225 ± 0.035 | 0.250, 0.200 | 0.750 ± 0.212 | 0.600, 0.900 |"
    assert _values(claims.rows[0][1]) == {"k": 1, "n": 2}  # usage falls on seed 0 only
    assert _values(claims.rows[1][1])["k"] == 1  # leaves finer than the root: +0.15 on seed 0, -0.10 on seed 1
    assert _values(claims.rows[1][1])["mean"] == pytest.approx(0.025)
    assert len(claims.rows) == 4  # with two levels, no separate depth-1-against-root row
    assert render(claims).splitlines()[-2].endswith("| 1/2: 0.200 ± 0.283 | 0.000, 0.400 |")  # violations in %
    assert _values(claims.rows[3][1])["mean"] == pytest.approx(0.4)


def test_inpainting_claims_pair_each_seed_and_average_the_crops_first():
    from neurosim.simulations import osdl_inpainting

    seeds, tests, images = [0, 1, 2], [0.25, 0.75], ["a", "b"]
    # PSNR (train_missing, variant, seed, test_missing, image): lasso at 0 % is 30 dB everywhere; learned at 75 % it
    # loses 1, 2, 3 dB on seeds 0, 1, 2 (image a only: the crop mean halves it); torus adds 1 dB to the 75 % lasso
    psnr = np.full((2, 2, 3, 2, 2), 30.0)
    psnr[1, :, :, :, 0] -= np.array([2.0, 4.0, 6.0])[None, :, None]
    psnr[1, 1] += 1.0
    base = np.zeros((3, 3, 2, 2))
    base[:, 0] = 25.0  # patch_mean
    base[:, 1] = np.array([31.0, 32.0, 29.0])[:, None, None]  # biharmonic: above the dictionary on seeds 0 and 1
    base[:, 2] = 15.0
    ds = xr.Dataset({"psnr_missing": (("train_missing", "variant", "seed", "test_missing", "image"), psnr),
                     "psnr_whole": (("train_missing", "variant", "seed", "test_missing", "image"), psnr + 5),
                     "baseline_missing": (("seed", "baseline", "test_missing", "image"), base),
                     "baseline_whole": (("seed", "baseline", "test_missing", "image"), base + 5)},
                    coords={"train_missing": [0.0, 0.75], "variant": ["lasso", "torus"], "seed": seeds,
                            "test_missing": tests, "image": images, "baseline": list(osdl_inpainting.BASELINES)})
    missing, whole, per_crop, claims = osdl_inpainting.tables(ds)
    shown = render(missing).splitlines()
    assert shown[0] == "| method | 25% missing | 75% missing |"
    assert shown[4] == "| baseline: biharmonic (scikit-image) | 30.67 ± 1.53 | 30.67 ± 1.53 |"
    assert shown[6] == "| lasso, centred, learned at 75% missing | 28.00 ± 1.00 | 28.00 ± 1.00 |"
    assert render(whole).splitlines()[5] == "| lasso, centred, learned at 0% missing | 35.00 ± 0.00 | 35.00 ± 0.00 |"
    loss = _values(claims.rows[0][1])  # lasso: learned at 75 % − at 0 %
    assert (loss["mean"], loss["sd"], loss["k"], loss["n"]) == (pytest.approx(-2.0), pytest.approx(1.0), 0, 3)
    assert loss["p"] == pytest.approx(0.0742, abs=1e-3)  # t = -2 / (1 / sqrt 3), 2 degrees of freedom
    assert _values(claims.rows[2][1])["k"] == 3  # the dictionary above the per-patch mean on every seed
    assert _values(claims.rows[3][1])["k"] == 1  # ... above biharmonic on seed 2 only
    assert _values(claims.rows[5][1])["mean"] == pytest.approx(1.0)  # torus − lasso at 75 %: +1 on every seed
    assert "p =" not in claims.rows[5][1]["fmt"]  # no spread: no t-test
    assert [r[1] for r in per_crop.rows[:3]] == ["lasso, centred, learned at 0%", "biharmonic", "difference (per seed)"]

