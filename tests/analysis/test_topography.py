"""Topographic-map statistics: torus neighbours versus random pairs of Gabor fits."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from neurosim.analysis.topography import neighbour_differences, orientation_difference, torus_neighbour_pairs
from neurosim.groups import GroupStructure


def _smooth_params(rows=8, cols=8):
    """Gabor parameters that vary smoothly (and periodically) over the torus."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    P = np.zeros((rows * cols, 8))
    P[:, 0] = 6 + 3 * np.cos(2 * np.pi * c / cols)
    P[:, 1] = 6 + 3 * np.sin(2 * np.pi * r / rows)
    P[:, 2] = np.pi * c / cols  # orientation turns once around the torus' columns
    P[:, 3:] = [0.2, 0.0, 1.5, 2.0, 1.0]
    return P


def test_orientation_difference_hand_cases():
    a = [0.1, 0.0, 0.0, 3.0, 0.3]
    b = [np.pi - 0.1, np.pi / 2, np.pi, 3.0 + 2 * np.pi, -0.2]
    np.testing.assert_allclose(orientation_difference(a, b), [0.2, np.pi / 2, 0.0, 0.0, 0.5], rtol=0, atol=1e-12)
    assert np.shape(orientation_difference(0.0, 1.0)) == ()


@settings(max_examples=examples(50), deadline=None)
@given(a=st.floats(-50, 50), b=st.floats(-50, 50))
def test_orientation_difference_range_and_symmetry(a, b):
    d = orientation_difference(a, b)
    assert 0.0 <= d <= np.pi / 2 + 1e-12
    assert d == pytest.approx(float(orientation_difference(b, a)), abs=1e-12)
    # invariant to adding pi to either orientation
    assert d == pytest.approx(float(orientation_difference(a + np.pi, b)), abs=1e-9)


def test_torus_pairs_hand_cases():
    np.testing.assert_array_equal(torus_neighbour_pairs((1, 5)), [[0, 1], [0, 4], [1, 2], [2, 3], [3, 4]])
    assert len(torus_neighbour_pairs((2, 2))) == 6  # every pair: offsets wrap onto the same partner
    assert len(torus_neighbour_pairs((3, 3))) == 36
    assert len(torus_neighbour_pairs((8, 8))) == 64 * 8 // 2


@pytest.mark.parametrize("rows, cols, radius", [(5, 5, 1), (4, 7, 1), (7, 9, 2), (6, 6, 2)])
def test_torus_pairs_match_the_torus_groups(rows, cols, radius):
    """Brute force: k is a neighbour of j when k is in the torus group centred on j."""
    groups = GroupStructure.torus(rows, cols, radius)
    expect = {(min(j, k), max(j, k)) for j in range(rows * cols) for k in groups.group(j) if k != j}
    got = {tuple(p) for p in torus_neighbour_pairs((rows, cols), radius)}
    assert got == expect
    np.testing.assert_array_equal(torus_neighbour_pairs(groups, radius), torus_neighbour_pairs((rows, cols), radius))


def test_smooth_map_neighbours_are_similar():
    out = neighbour_differences(_smooth_params(), (8, 8), seed=1)
    s = out["summary"]
    assert s["n_neighbour_pairs"] == 256 and s["n_random_pairs"] == 256 and s["n_included"] == 64
    # 3 of every unit's 4 neighbour pairs step one column (pi/8), the vertical one none
    assert s["neighbour_orientation_mean"] == pytest.approx(3 * np.pi / 32, rel=1e-12)
    assert s["random_orientation_mean"] > 2 * s["neighbour_orientation_mean"]
    assert s["neighbour_distance_mean"] < 0.5 * s["random_distance_mean"]
    assert s["orientation_p"] < 1e-10 and s["distance_p"] < 1e-10
    # distances by hand for one horizontal pair
    P = _smooth_params()
    i = next(i for i, (j, k) in enumerate(out["neighbour_pairs"]) if (j, k) == (0, 1))
    assert out["neighbour_distance"][i] == pytest.approx(np.hypot(P[0, 0] - P[1, 0], P[0, 1] - P[1, 1]), rel=1e-12)


def test_shuffled_map_is_not_topographic():
    P = _smooth_params()[np.random.default_rng(5).permutation(64)]
    s = neighbour_differences(P, GroupStructure.torus(8, 8), seed=1)["summary"]
    assert s["neighbour_orientation_mean"] > 0.5  # about pi/4 for unrelated orientations
    assert s["orientation_p"] > 1e-3 and s["distance_p"] > 1e-3


def test_poor_fits_are_excluded():
    P = _smooth_params()
    r2 = np.full(64, 0.9)
    r2[[0, 9]] = 0.2
    r2[17] = np.nan  # a failed fit
    out = neighbour_differences(P, (8, 8), r2, min_r2=0.5, n_random=500, seed=2)
    assert out["summary"]["n_included"] == 61
    assert not np.isin(out["neighbour_pairs"], [0, 9, 17]).any()
    assert not np.isin(out["random_pairs"], [0, 9, 17]).any()
    assert np.all(out["random_pairs"][:, 0] != out["random_pairs"][:, 1])
    # pairs dropped: the 8 of each excluded unit, less the two counted twice
    # (0 = (0, 0) and 9 = (1, 1) are diagonal neighbours, 9 and 17 = (2, 1) vertical ones)
    assert out["summary"]["n_neighbour_pairs"] == 256 - 3 * 8 + 2
    assert len(out["random_orientation"]) == 500
    again = neighbour_differences(P, (8, 8), r2, min_r2=0.5, n_random=500, seed=2)
    np.testing.assert_array_equal(again["random_pairs"], out["random_pairs"])


def test_random_pairs_cover_all_distinct_pairs():
    out = neighbour_differences(_smooth_params(2, 2), (2, 2), n_random=4000, seed=0)
    seen = {tuple(sorted(p)) for p in out["random_pairs"]}
    assert seen == set(itertools.combinations(range(4), 2))


@pytest.mark.parametrize("kw, exc, name", [
    ({"params": np.zeros((63, 8))}, ValueError, "params"),
    ({"params": np.full((64, 8), np.nan)}, ValueError, "params"),
    ({"shape": (8,)}, TypeError, "shape"),
    ({"shape": (0, 8)}, ValueError, "rows"),
    ({"shape": GroupStructure.singletons(64)}, ValueError, "shape"),
    ({"r2": np.ones(5)}, ValueError, "r2"),
    ({"r2": np.zeros(64)}, ValueError, "at least 2"),
    ({"min_r2": 1.5}, ValueError, "min_r2"),
    ({"min_r2": float("nan")}, ValueError, "min_r2"),
    ({"radius": 0}, ValueError, "radius"),
    ({"n_random": 0}, ValueError, "n_random"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": 1.5}, TypeError, "seed"),
])
def test_bad_input(kw, exc, name):
    args = {"params": _smooth_params(), "shape": (8, 8), **kw}
    with pytest.raises(exc, match=name):
        neighbour_differences(**args)


@settings(max_examples=examples(40), deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), radius=st.integers(1, 3), seed=st.integers(0, 5),
       r2=st.lists(st.floats(allow_nan=True), min_size=36, max_size=36), min_r2=st.floats(-2, 1))
def test_hostile_inputs(rows, cols, radius, seed, r2, min_r2):
    n = rows * cols
    P = np.random.default_rng(seed).normal(size=(n, 8))
    try:
        out = neighbour_differences(P, (rows, cols), np.array(r2[:n]), min_r2=min_r2, radius=radius, seed=seed)
    except ValueError as exc:
        assert "at least 2" in str(exc)
        return
    for key in ("neighbour_orientation", "random_orientation"):
        assert np.all((out[key] >= 0) & (out[key] <= np.pi / 2))
    assert np.all(out["neighbour_pairs"][:, 0] < out["neighbour_pairs"][:, 1])
    assert out["included"].sum() == out["summary"]["n_included"] >= 2
