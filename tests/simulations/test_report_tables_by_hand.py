"""The report tables of paper 000's, the self-organising and the forgetting simulations, on datasets made by hand.

Each simulation's ``tables(ds)`` (issue 41) turns the dataset of a full
reproduction into the tables of its report; here each one gets a small
dataset whose numbers are known, so that every count of seeds, every
paired margin and every interpolation is checked against a value worked out
by hand. The report check (``tests/test_report_tables.py``) compares the
reports with the data those functions made from the real reproduction.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.report_tables import render
from neurosim.simulations import (gng_gwr_moving, gng_shapes, ng_classification, ng_images_two_domains,
                                  ng_memory_matrix, ng_mnist_split, ng_robustness, ng_synthetic_supports,
                                  ng_text_domains, osdl_forgetting)


def _values(c):
    return c["values"]


def _fig3(domains):
    """ODL at 10 and 1000 elements (0.5, 0.7 on both domains), NODL from each; two seeds."""
    variants, sizes = ["ODL", "NODL"], [10, 1000]
    acc = np.zeros((2, 2, 2, 2))
    acc[:, 0, 0], acc[:, 0, 1] = 0.5, 0.7
    acc[0, 1, 0], acc[1, 1, 0] = 0.65, 0.55  # NODL from 10, ends at 100 elements: ODL there is 0.6
    acc[:, 1, 1] = 0.75  # NODL from 1000 ends at 1200: beyond ODL's sizes
    final = np.array([[[10, 1000], [100, 1200]]] * 2)
    active = final.copy()
    active[1, 1, 1] = 1100
    return xr.Dataset({"accuracy": (("seed", "variant", "initial_size", "domain"), acc),
                       "final_size": (("seed", "variant", "initial_size"), final),
                       "active_size": (("seed", "variant", "initial_size"), active)},
                      coords={"seed": [0, 1], "variant": variants, "initial_size": sizes, "domain": list(domains)})


@pytest.mark.parametrize("sim", [ng_mnist_split, ng_text_domains])
def test_fig3_tables_pair_seeds_and_interpolate_odl_in_log_size(sim):
    ds = _fig3(sim.DOMAINS)
    accuracy, margins = sim.tables(ds)
    assert accuracy.name == f"{sim.NAME}/accuracy" and margins.name == f"{sim.NAME}/margins"
    nodl_1000 = accuracy.rows[3]
    assert nodl_1000[:2] == ["NODL", 1000] and _values(nodl_1000[2]) == {"lo": 1200, "alo": 1100, "ahi": 1200}
    assert "1200 (1100–1200 active)" in render(accuracy)
    from_10 = margins.rows[0]
    same = _values(from_10[1])
    assert same["k"] == 2 and same["n"] == 2 and same["mean"] == pytest.approx(0.1)
    at_size = _values(from_10[4])  # ODL at 100 elements: 0.5 + (0.7 - 0.5) * log(100/10) / log(1000/10) = 0.6
    assert at_size["mean"] == pytest.approx(0.0, abs=1e-12) and at_size["k"] == 1
    assert at_size["sd"] == pytest.approx(np.std([0.05, -0.05], ddof=1))
    assert margins.rows[1][4] == "beyond ODL's sizes"


def test_images_tables_margins_per_seed_and_events():
    seeds, domains = [0, 1, 2], ["old (urban)", "new (natural)"]
    margin = np.array([0.05, -0.01, 0.02])[:, None, None, None] * np.ones((3, 1, 1, 2))
    margin[..., 1] *= -1
    births = np.zeros((3, 1, 2, 1, 4), dtype=int)
    births[:, 0, 1, 0] = [[30, 20, 10, 5], [31, 22, 11, 5], [30, 21, 12, 6]]
    deaths = np.zeros_like(births)
    deaths[:, 0, 1, 0, 0] = [40, 50, 45]
    size = np.cumsum(births - deaths, axis=-1) + 100
    run, per_step, matched = (("seed", "elements", "variant", "initial_size"),
                              ("seed", "elements", "variant", "initial_size", "step"),
                              ("seed", "elements", "initial_size"))
    zeroed = np.array([0, 1, 0, 0, 0, 3]).reshape(3, 1, 2, 1)  # NODL's all-zero elements on seeds 0 and 2
    ds = xr.Dataset({"accuracy": (run + ("domain",), np.full((3, 1, 2, 1, 2), 0.5)),
                     "final_size": (run, size[..., -1]),
                     "active_size": (run, size[..., -1] - zeroed),
                     "births": (per_step, births), "deaths": (per_step, deaths), "dictionary_size": (per_step, size),
                     "odl_matched_accuracy": (matched + ("domain",), np.full((3, 1, 1, 2), 0.4)),
                     "odl_matched_size": (matched, size[:, :, 1, :, -1]),
                     "margin": (matched + ("domain",), margin)},
                    coords={"seed": seeds, "elements": ["sparse"], "variant": ["ODL", "NODL"], "initial_size": [100],
                            "domain": domains, "step": [1, 2, 3, 4]})
    accuracy, margins, events = ng_images_two_domains.tables(ds)
    assert [r[1] for r in accuracy.rows] == ["ODL", "NODL", "ODL at NODL's size"]
    shown = render(accuracy).splitlines()
    assert shown[2] == "| sparse | ODL | 100 | 100 | 0.500 ± 0.000 | 0.500 ± 0.000 |"
    # NODL ends at 125, 119, 124 units, of which 1, 0 and 3 are all-zero
    assert shown[3] == "| sparse | NODL | 100 | 123 (119–124 active) | 0.500 ± 0.000 | 0.500 ± 0.000 |"
    assert shown[4] == "| sparse | ODL at NODL's size | 100 | 123 | 0.400 ± 0.000 | 0.400 ± 0.000 |"
    row = margins.rows[0]
    assert render(margins).splitlines()[2] == ("| sparse | 100 | +0.050, -0.010, +0.020 | +0.020 ± 0.030 (2/3) "
                                               "| -0.050, +0.010, -0.020 | -0.020 ± 0.030 (1/3) |")
    assert _values(row[3])["k"] == 2 and _values(row[5])["k"] == 1
    ev = events.rows[0]
    assert _values(ev[3]) == {"lo": 30, "hi": 31} and _values(ev[4]) == {"lo": 5, "hi": 6}
    assert _values(ev[5]) == {"lo": 5, "hi": 22} and _values(ev[6]) == {"lo": 40, "hi": 50}
    assert _values(ev[7]) == {"lo": 0}


def test_memory_matrix_claims_count_positive_differences_and_leave_undefined_blocks_out():
    blocks = list(ng_memory_matrix.BLOCKS)
    runs = [f"{v} {k}" for v, k in ng_memory_matrix.RUNS]
    ties = np.full((3, 4, len(blocks)), np.nan)
    ties[:, 0, :3] = 0.3  # ODL sparse
    ties[:, 1, :3] = [[0.1] * 3, [0.2] * 3, [0.4] * 3]  # ODL dense: above sparse on seed 2
    ties[:, 2] = 0.1  # NODL sparse: every block 0.1 ...
    ties[:, 2, blocks.index("old-old")] = [0.2, np.nan, 0.05]  # ... old-old undefined on seed 1
    ties[:, 3] = 0.1
    ds = xr.Dataset({"tie_strength": (("seed", "run", "block"), ties),
                     "n_old": (("seed", "run"), np.full((3, 4), 50)), "n_new": (("seed", "run"), np.zeros((3, 4)))},
                    coords={"seed": [0, 1, 2], "run": runs, "block": blocks})
    table, claims = ng_memory_matrix.tables(ds)
    assert table.rows[0][blocks.index("new-new") + 1] is None  # no pairs on any seed: an empty cell
    first = _values(claims.rows[0][1])
    assert (first["k"], first["n"]) == (2, 3) and first["mean"] == pytest.approx(0.3 - 0.7 / 3)
    old_across = claims.rows[2][1]
    assert _values(old_across)["k"] == 1 and _values(old_across)["n"] == 2 and _values(old_across)["undefined"] == 1
    assert "(1/2) (1 undefined)" in render(claims)


def test_classification_claims_compare_nodl_with_both_controls_per_protocol():
    features, protocols = list(ng_classification.FEATURES), list(ng_classification.PROTOCOLS)
    acc = np.zeros((3, len(features), 2))
    acc[:, features.index("pixels")] = [[0.7, 0.45], [0.7, 0.55], [0.7, 0.4]]
    acc[:, features.index("ODL")] = [[0.6, 0.5], [0.62, 0.48], [0.64, 0.46]]
    acc[:, features.index("NODL")] = [[0.7, 0.45], [0.7, 0.5], [0.7, 0.47]]
    acc[:, features.index("ODL same size")] = [[0.71, 0.45], [0.69, 0.5], [0.7, 0.5]]
    ds = xr.Dataset({"accuracy": (("seed", "features", "protocol"), acc),
                     "active_size": (("seed", "algorithm"), [[50, 80, 80], [50, 90, 89], [50, 85, 85]])},
                    coords={"seed": [0, 1, 2], "features": features, "protocol": protocols,
                            "algorithm": ["ODL", "NODL", ng_classification.SAME_SIZE]}, attrs={"chance": 0.5})
    accuracy, claims = ng_classification.tables(ds)
    assert accuracy.rows[2][1]["fmt"].format(**_values(accuracy.rows[2][1])) == "80, 90, 85"
    cv, transfer = (_values(c) for c in claims.rows[0][1:])
    assert cv["k"] == 3 and cv["mean"] == pytest.approx(0.08)
    assert transfer["k"] == 2 and transfer["mean"] == pytest.approx((-0.05 + 0.02 + 0.01) / 3)
    same_cv = _values(claims.rows[1][1])
    assert same_cv["k"] == 2  # 0.7 - 0.71 < 0 on seed 0 only
    below = {r[0].split(" below")[0]: r[2]["fmt"].format(**r[2]["values"]) for r in claims.rows[2:]}
    assert below == {"pixels": "2/3", "ODL": "2/3", "NODL": "2/3", "ODL same size": "1/3"}


def test_synthetic_supports_counts_exact_zeros_for_lemma_1():
    variants = ["ODL", "NODL"]
    acc = np.array([[[0.96, 0.0], [0.97, 0.99]], [[0.98, 0.4], [0.97, 0.98]], [[0.95, 0.0], [0.99, 0.97]]])
    sizes = np.array([[[8, 8], [8, 20]], [[8, 8], [8, 17]], [[8, 8], [8, 8]]])
    ds = xr.Dataset({"accuracy": (("seed", "variant", "domain"), acc),
                     "dictionary_size": (("seed", "variant", "step"), sizes),
                     "max_weight_on_Q": (("seed", "variant"), [[0.0, 0.9], [0.6, 0.8], [0.0, 0.9]])},
                    coords={"seed": [0, 1, 2], "variant": variants, "domain": ["domain1", "domain2"], "step": [1, 2]},
                    attrs={"initial_size": 8})
    accuracy, claims = ng_synthetic_supports.tables(ds)
    shown = render(claims).splitlines()
    assert shown[2] == "| Lemma 1: ODL's domain-2 accuracy exactly 0 | 2/3 | 0.000, 0.400, 0.000 |"
    assert shown[3].startswith("| Lemma 1: ODL puts no weight on Q | 2/3 |")
    assert _values(claims.rows[2][1])["k"] == 3  # NODL > ODL on domain 2
    assert _values(claims.rows[3][1])["k"] == 2  # NODL >= ODL on domain 1: below on seed 1
    growth = _values(claims.rows[4][1])
    assert (growth["k"], growth["mean"]) == (2, 7.0)  # +12, +9, +0: no growth on seed 2
    assert render(accuracy).splitlines()[3].startswith("| NODL | 0.977 ± 0.012 | 0.980 ± 0.010 | 15.0 ± 6.2 |")


def test_robustness_pairs_each_setting_with_its_odl_run_and_finds_runs_equal_to_the_defaults():
    sweep = {"c_k": [3, 12], "beta_c": [5, 20]}
    pts = ng_robustness.points(sweep=sweep)
    runs = [(p["variant"], p["param"], p["value"]) for p in pts]
    assert runs == [("NODL", "default", pytest.approx(np.nan, nan_ok=True)), ("NODL", "c_k", 3.0),
                    ("NODL", "beta_c", 5.0), ("ODL", "default", pytest.approx(np.nan, nan_ok=True)),
                    ("ODL", "beta_c", 5.0)]
    new = np.array([[0.76, 0.76, 0.51, 0.75, 0.52],
                    [0.77, 0.77, 0.53, 0.75, 0.52],
                    [0.75, 0.75, 0.50, 0.74, 0.51]])
    ds = xr.Dataset({"variant": ("run", [r[0] for r in runs]), "param": ("run", [r[1] for r in runs]),
                     "value": ("run", [r[2] for r in runs]), "acc_old": (("seed", "run"), new - 0.03),
                     "acc_new": (("seed", "run"), new),
                     "final_size": (("seed", "run"), [[140, 140, 70, 50, 50]] * 3)},
                    coords={"seed": [0, 1, 2], "run": np.arange(5)},
                    attrs={"new_domain": "natural (animals + plants)", "old_domain": "urban"})
    assert [ng_robustness._odl_partner(ds, r) for r in range(3)] == [3, 3, 4]
    settings, summary = ng_robustness.tables(ds)
    assert [r[:2] for r in settings.rows] == [["default", ""], ["c_k", "3"], ["beta_c", "5"]]
    beta_c = _values(settings.rows[2][7])  # 0.51 - 0.52, 0.53 - 0.52, 0.50 - 0.51
    assert beta_c["k"] == 1 and beta_c["mean"] == pytest.approx(-1 / 300)
    shown = render(summary).splitlines()
    assert shown[2] == "| new (natural) | 7/9 | 2/3 |"  # beta_c = 5 below ODL's on seeds 0 and 2
    assert shown[4].startswith("| NODL runs equal to the defaults' run on every seed (accuracies and size) | c_k = 3 |")


def test_gng_shapes_counts_births_and_deaths_from_the_units_alive():
    units = np.array([[2, 2, 3, 3, 4, 3], [2, 3, 3, 4, 4, 5]])
    ds = xr.Dataset({"units": (("seed", "step"), units), "edges": (("seed", "step"), units + 1),
                     "quantization_error": (("seed", "recorded_step"), [[0.1, 0.031], [0.1, 0.032]])},
                    coords={"seed": [0, 1], "step": np.arange(1, 7), "recorded_step": [3, 6]})
    (table,) = gng_shapes.tables(ds)
    assert table.rows == [[0, 3, 4, 2, 1, 0.031], [1, 5, 6, 3, 0, 0.032]]


def test_gng_gwr_moving_reads_the_error_around_the_move_and_its_recovery():
    qe = np.array([[[0.1, 0.06, 0.2, 0.1, 0.065]] * 3, [[0.1, 0.05, 0.09, 0.054, 0.05]] * 3])
    ds = xr.Dataset({"units": (("model", "seed", "step"), np.full((2, 3, 4), 10)),
                     "quantization_error": (("model", "seed", "recorded_step"), qe),
                     **{k: (("model", "seed"), np.array([[100] * 3, [180, 181, 182]]) if k == "born_new"
                            else np.zeros((2, 3), dtype=int))
                        for k in ("born_new", "born_old", "killed_new", "killed_old")}},
                    coords={"model": ["GNG", "GWR"], "seed": [0, 1, 2], "step": [1, 2, 3, 4],
                            "recorded_step": [50, 100, 150, 200, 250]}, attrs={"move_after": 100})
    (table,) = gng_gwr_moving.tables(ds)
    shown = render(table).splitlines()
    assert shown[2] == "| GNG | 100, 100, 100 | 0, 0, 0 | 10, 10, 10 | 0.060 (100) -> 0.200 (150) | 150 |"  # 0.065 <= 0.066
    assert shown[3] == "| GWR | 180, 181, 182 | 0, 0, 0 | 10, 10, 10 | 0.050 (100) -> 0.090 (150) | 100 |"  # 0.054 <= 0.055


def test_forgetting_tables_rank_rho_per_seed():
    rhos, steps = [0.0, 1.0, 4.0], [0, 8, 16, 24]
    err = np.zeros((3, 2, 2, 4))
    err[:, :, 0] = np.array([0.3, 0.2, 0.25, 0.5])  # grass: evaluations at 8 and 16 (switch) are "before"
    err[2, :, 0, 1:3] += 0.02  # rho = 4 is worse on grass before the switch
    ds = xr.Dataset({"rel_error": (("rho", "seed", "domain", "step"), err),
                     "adaptation": (("rho", "seed"), [[0.99, 0.98], [0.97, 0.99], [0.95, 0.96]]),
                     "memory": (("rho", "seed"), [[1.0, 1.1], [1.2, 1.3], [1.4, 1.2]])},
                    coords={"rho": rhos, "seed": [0, 1], "domain": list(osdl_forgetting.DOMAINS), "step": steps},
                    attrs={"switch": 16, "adapt_step": 24})
    summary, claims = osdl_forgetting.tables(ds)
    assert _values(summary.rows[0][4])["mean"] == pytest.approx(0.225)
    assert _values(summary.rows[2][4])["mean"] == pytest.approx(0.245)
    assert [r[1] for r in summary.rows] == [8, 8, 8]  # mini-batches from the switch to the adaptation step
    shown = render(claims).splitlines()
    assert shown[2].endswith("| 1/2 | -1, -0.5 |")  # Spearman of adaptation with rho, per seed
    assert _values(claims.rows[1][1])["k"] == 2  # rho = 4 adapts further than rho = 0 on both seeds
    assert _values(claims.rows[4][1])["k"] == 1  # memory: rho = 4 above rho = 1 on seed 0 only
