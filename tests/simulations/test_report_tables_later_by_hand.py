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


def test_online_exact_finds_how_long_the_exact_form_leads():
    from neurosim.simulations import osdl_online_exact

    steps = np.array([10, 20, 30, 40])
    assert osdl_online_exact.exact_ahead_until(np.array([-1, -1, 1, -1]), steps) == 20
    assert osdl_online_exact.exact_ahead_until(np.array([1, -1, -1, -1]), steps) == 0
    assert osdl_online_exact.exact_ahead_until(np.array([-1, -1, -1, -1]), steps) == 40
    err = np.zeros((2, 2, 2, 4))  # (missing, e_form, seed, step)
    err[:, 1] = np.array([-0.01, -0.01, 0.01, 0.02])  # exact ahead for 20 mini-batches, behind at the end
    err[1, 1, 1] = np.array([-0.01, -0.01, -0.01, -0.01])  # with masks, seed 1: exact ahead throughout
    dist = np.array([[[0.1] * 4, [0.3] * 4], [[0.2] * 4, [0.1] * 4]])  # (seed, missing, step)
    ds = xr.Dataset({"rel_error": (("missing", "e_form", "seed", "step"), err),
                     "distance": (("seed", "missing", "step"), dist)},
                    coords={"missing": [0.0, 0.5], "e_form": ["online", "exact"], "seed": [0, 1], "step": steps})
    summary, claims = osdl_online_exact.tables(ds)
    assert render(summary).splitlines()[3].endswith("| +0.0050 ± 0.0212 (1/2) | 20, 40 |")
    assert _values(claims.rows[0][1])["k"] == 1  # more apart with masks on seed 0 only
    assert _values(claims.rows[2][1])["k"] == 2  # online ahead at the end without masks on both seeds
    assert _values(claims.rows[3][1])["k"] == 2  # ... and at every evaluation after the exact form's lead
    assert _values(claims.rows[6][1])["k"] == 1  # with masks seed 1's exact form leads throughout: no change


def test_topographic_claims_count_seeds_below_zero_and_significant():
    from neurosim.simulations import osdl_topographic

    def per_groups(torus, none):
        return (("groups", "seed"), np.array([torus, none], dtype=float))

    ds = xr.Dataset({"n_included": per_groups([140, 139], [120, 110]),
                     "neighbour_orientation_mean": per_groups(np.radians([20, 30]), np.radians([44, 44.5])),
                     "random_orientation_mean": per_groups(np.radians([45, 45]), np.radians([45, 45])),
                     "orientation_p": per_groups([1e-30, 0.2], [0.3, 0.6]),
                     "neighbour_distance_mean": per_groups([4.0, 4.2], [5.0, 5.4]),
                     "random_distance_mean": per_groups([5.0, 5.0], [5.2, 5.2]),
                     "distance_p": per_groups([1e-10, 1e-5], [0.7, 0.9])},
                    coords={"groups": ["torus", "none"], "seed": [0, 1], "unit": np.arange(144)})
    maps, claims = osdl_topographic.tables(ds)
    assert render(maps).splitlines()[2] == ("| torus 3x3 | 140, 139 of 144 | 25.0 ± 7.1° / 45.0 ± 0.0° "
                                           "| 1e-30, 0.2 | 4.10 ± 0.14 / 5.00 ± 0.00 | 1e-10, 1e-05 |")
    torus_orientation, _, none_orientation, none_distance = (_values(r[1]) for r in claims.rows)
    assert (torus_orientation["k"], torus_orientation["mean"]) == (2, pytest.approx(-20.0))
    assert _values(claims.rows[0][2])["k"] == 1  # p < 0.05 on seed 0 only
    assert none_orientation["k"] == 2 and none_distance["k"] == 1  # below random, but never significant
    assert _values(claims.rows[3][2])["k"] == 0


def test_sparse_coding_tables_count_per_seed_on_the_units_each_seed_tested():
    from neurosim.simulations import sc_fig2_bases, sc_fig3_end_stopping, sc_ncrf_suppression

    params = np.zeros((2, 4, 8))
    params[:, :, 3] = [[0.1, 0.4, 0.5, 0.2], [0.1, 0.1, 0.35, 0.1]]  # Gabor frequencies: 2 and 1 above 0.3
    bases = xr.Dataset({"gabor_r2": (("seed", "atom"), [[0.9, 0.7, 0.85, 0.5], [0.95, 0.9, 0.65, 0.81]]),
                        "gabor_params": (("seed", "atom", "gabor_param"), params),
                        "objective": (("seed", "iteration"), [[2.0, 1.5], [2.0, 1.7]]),
                        "nonzeros": (("seed", "iteration"), [[30.0, 20.0], [30.0, 24.0]])},
                       coords={"seed": [0, 1], "atom": np.arange(4), "iteration": [1, 2],
                               "gabor_param": ["x0", "y0", "theta", "freq", "phase", "sigma_x", "sigma_y", "amp"]})
    (table,) = sc_fig2_bases.tables(bases)
    shown = render(table).splitlines()
    assert shown[2] == "| 0 | 4 | 2 | 3 | 0.775 | 2 | 1 | 1.500 | 20.0 |"
    assert shown[3] == "| 1 | 4 | 3 | 4 | 0.855 | 1 | 1 | 1.700 | 24.0 |"
    assert shown[4].startswith("| mean ± sd | 4 ± 0 | 2 ± 1 | 4 ± 1 | 0.815 ± 0.057 |")

    # the datasets of two seeds joined on their units: NaN where a seed did not test a unit
    nan = np.nan
    ends = xr.Dataset({"end_stopping_index": (("seed", "unit"), [[0.05, 0.2, 0.5, nan], [nan, 0.15, 0.0, 0.4]]),
                       "optimal_length": (("seed", "unit"), [[4.0, 6.0, 8.0, nan], [nan, 10.0, 12.0, 14.0]])},
                      coords={"seed": [0, 1], "unit": [1, 3, 5, 7], "atom": np.arange(8)})
    (table,) = sc_fig3_end_stopping.tables(ends)
    shown = render(table).splitlines()
    assert shown[2] == "| 0 | 8 | 3 | 2 | 1 | 67% | 6.0 |"
    assert shown[3] == "| 1 | 8 | 3 | 2 | 1 | 67% | 12.0 |"

    ncrf = xr.Dataset({"suppression": (("seed", "unit"), [[0.05, 0.3, -0.1, nan], [nan, 0.2, 0.5, nan]]),
                       "bar_rank": (("seed", "unit"), [[1.0, 2.0, 1.0, nan], [nan, 1.0, 3.0, 1.0]])},
                      coords={"seed": [0, 1], "unit": [2, 4, 6, 8]})
    (table,) = sc_ncrf_suppression.tables(ncrf)
    shown = render(table).splitlines()
    assert shown[2] == "| 0 | 3 | 2 | 1 | 1 | 5% |"
    assert shown[3] == "| 1 | 3 | 2 | 2 | 0 | 35% |"  # a tested unit whose suppression is undefined counts as tested
    assert shown[5] == "| paper | 50 | 42 | 13 |  |  |"


def test_som_minisom_table_shows_both_maps_per_seed():
    from neurosim.simulations import som_minisom

    qe = np.array([[[0.2, 0.05], [0.2, 0.05]], [[0.2, 0.07], [0.2, 0.07]]])  # (seed, implementation, step)
    te = np.array([[[0.1, 0.01], [0.1, 0.01]], [[0.1, 0.03], [0.1, 0.03]]])
    ds = xr.Dataset({"quantization_error": (("seed", "implementation", "step"), qe),
                     "topographic_error": (("seed", "implementation", "step"), te),
                     "max_weight_difference": ("seed", [1e-16, 0.0])},
                    coords={"seed": [0, 1], "implementation": ["ours", "minisom"], "step": [500, 1000]})
    (table,) = som_minisom.tables(ds)
    shown = render(table).splitlines()
    assert shown[0].startswith("| seed | inputs | held-out QE, ours | held-out QE, MiniSom |")
    assert shown[2] == "| 0 | 1000 | 0.0500 | 0.0500 | 0.0100 | 0.0100 | 1e-16 |"
    assert shown[4] == ("| mean ± sd |  | 0.0600 ± 0.0141 | 0.0600 ± 0.0141 | 0.0200 ± 0.0141 | 0.0200 ± 0.0141 "
                        "|  |")


def test_similarity_matching_tables_count_seeds_per_regularizer():
    from neurosim.simulations import sm_fig4_fig5_stationary, sm_fig6_nonstationary

    act = np.array([[[[3, 4, 3], [3, 3, 3]], [[3, 3, 3], [3, 3, 3]]],
                    [[[3, 4, 3], [3, 3, 3]], [[3, 3, 3], [3, 4, 3]]]])  # (seed, regularizer, beta, phase)
    fourth = np.zeros((2, 2, 2, 3, 4))
    fourth[:, 0, 0, 1, 3] = [1.0, 2.0]  # TY with forgetting, phase 2
    ds = xr.Dataset({"active_outputs": (("seed", "regularizer", "beta", "phase"), act),
                     "phase_output_eigenvalues": (("seed", "regularizer", "beta", "phase", "component"), fourth),
                     "phase_end": (("seed", "phase"), [[1000, 6000, 12000]] * 2)},
                    coords={"seed": [0, 1], "regularizer": ["TY", "YY"], "beta": [0.9975, 1.0],
                            "phase": [0, 1, 2], "component": [1, 2, 3, 4]})
    (table,) = sm_fig6_nonstationary.tables(ds)
    shown = render(table).splitlines()
    assert shown[0].endswith("| 4th output, end of phase 1 | 4th output, end of phase 2 | 4th output, end of phase 3 |")
    assert shown[2] == "| TY | 0.99750 | 3, 4, 3 / 3, 4, 3 | 2/2 | 0.000 ± 0.000 | 1.500 ± 0.707 | 0.000 ± 0.000 |"
    assert shown[5].startswith("| YY | 1.00000 | 3, 3, 3 / 3, 4, 3 | 1/2 |")
    # a shortened run that ends in phase 2 has the same columns, the third empty (the quick reproduction's check)
    (short,) = sm_fig6_nonstationary.tables(ds.isel(phase=slice(0, 2)))
    assert short.columns == table.columns and all(row[-1] is None for row in short.rows)

    out = np.zeros((2, 1, 2, 4))  # (seed, regularizer, T, component)
    out[:, 0, -1] = [[4.0, 3.0, 2.0, 0.0], [4.2, 3.0, 2.0, 0.0]]
    ds = xr.Dataset({"output_eigenvalues": (("seed", "regularizer", "T", "component"), out),
                     "target_eigenvalues": (("seed", "regularizer", "T", "component"), out),
                     "tail_output_eigenvalues": (("seed", "regularizer", "component"), [[[4, 3, 2, 0.0]],
                                                                                         [[4, 3, 2, 0.2]]]),
                     "eigenvalue_error": (("seed", "regularizer", "T"), np.full((2, 1, 2), 1e-3)),
                     "subspace_error": (("seed", "regularizer", "T"), [[[0.5, 2e-5]], [[0.5, 0.25]]]),
                     "subspace_error_rank_p": (("seed", "regularizer", "T"), np.full((2, 1, 2), 3e-5))},
                    coords={"seed": [0, 1], "regularizer": ["TY"], "T": [10, 100], "component": [1, 2, 3, 4]})
    (table,) = sm_fig4_fig5_stationary.tables(ds)
    row = render(table).splitlines()[2]
    assert row.startswith("| TY | 4.100 ± 0.141, 3.000 ± 0.000, 2.000 ± 0.000, 0.000 ± 0.000 |")
    assert row.endswith("| 1/2 | 1.0e-03, 1.0e-03 | 2.0e-05, 2.5e-01 | 3.0e-05, 3.0e-05 |")
