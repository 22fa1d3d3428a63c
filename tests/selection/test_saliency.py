"""Single-scale Itti-Koch-Niebur saliency used by SalMap (Tsuchida & Cottrell 2015, Eq. 13)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples

from neurosim.kernels import selection as K
from neurosim.selection_functions import saliency, saliency_maps


def _edge(side=8):
    e = np.zeros((side, side))
    e[:, side // 2:] = 1.0
    return e - 0.5


def test_blank_scores_zero_and_below_oriented_edge():
    e = _edge()
    s = saliency(np.stack([np.zeros(64), e.ravel(), np.rot90(e).ravel()]))
    assert s[0] == 0.0
    assert s[1] > 0.05 and s[2] > 0.05  # an edge is far from blank, not just above rounding


def test_constant_patch_has_no_intensity_contrast():
    # the centre-surround window is clipped to the patch, so a constant patch has none anywhere;
    # the zero-mean Gabors respond only where zero padding cuts them (the patch border)
    M, s = saliency_maps(np.full((1, 64), 3.0))
    np.testing.assert_array_equal(M[0, 0], 0.0)
    assert np.isfinite(s[0]) and s[0] > 0.0
    inner = M[0, 1:5, 3:5, 3:5]
    assert np.abs(inner).max() < 1e-12 * np.abs(M[0, 1:5]).max()


def test_rotation_permutes_orientation_maps_and_keeps_score():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 8))
    M, s = saliency_maps(x.ravel()[None])
    Mr, sr = saliency_maps(np.rot90(x).ravel()[None])
    # rotating by +90 degrees maps orientation t (0, 45, 90, 135 deg) to t + 90 deg
    for t in range(4):
        np.testing.assert_allclose(Mr[0, 1 + t], np.rot90(M[0, 1 + (t + 2) % 4]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Mr[0, 0], np.rot90(M[0, 0]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Mr[0, 5], np.rot90(M[0, 5]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sr, s, rtol=1e-10)
    # and the maps really differ between orientations (the permutation is not trivial)
    assert np.abs(M[0, 1] - M[0, 3]).max() > 1e-3


def test_gabor_bank_properties():
    g = np.empty((4, 7, 7))
    K.gabor_bank(g)
    np.testing.assert_allclose(g.sum(axis=(1, 2)), 0.0, atol=1e-12)
    np.testing.assert_allclose((g**2).sum(axis=(1, 2)), 1.0, rtol=1e-12)
    # filter t + 2 (t + 90 deg) is filter t rotated on the grid
    np.testing.assert_allclose(np.rot90(g[0]), g[2], atol=1e-12)
    np.testing.assert_allclose(np.rot90(g[1]), g[3], atol=1e-12)


def test_vertical_edge_prefers_vertical_filter():
    # a vertical edge varies along the columns: the 0-degree carrier responds most
    e = _edge()
    M, _ = saliency_maps(e.ravel()[None])
    # orientation maps after N(.), compared by their largest response
    peaks = M[0, 1:5].max(axis=(1, 2))
    assert np.argmax(peaks) == 0


def test_homogeneous_degree_one_and_sign():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 36))
    s = saliency(X, 6)
    np.testing.assert_allclose(saliency(4.0 * X, 6), 4.0 * s, rtol=1e-10)
    np.testing.assert_allclose(saliency(-X, 6), s, rtol=1e-10)  # |x| and |Gabor response|
    assert (s > 0).all()


def test_maps_consistent_with_scores_and_shapes():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3, 25))
    M, s = saliency_maps(X)
    assert M.shape == (3, 6, 5, 5) and s.shape == (3,)
    np.testing.assert_array_equal(s, saliency(X, 5))
    np.testing.assert_array_equal(s, M[:, 5].max(axis=(1, 2)))
    # saliency map = (N(intensity) + orientation conspicuity) / 2 >= N(intensity) / 2
    assert (M[:, 5] >= 0.5 * M[:, 0] - 1e-15).all()


def test_itti_normalization_promotes_single_peak():
    one = np.zeros((6, 6))
    one[2, 3] = 1.0
    two = one.copy()
    two[5, 0] = 0.5
    flag = np.empty(36, dtype=np.int64)
    stack = np.empty(36, dtype=np.int64)
    a = one.copy()
    K._itti_normalize(a, flag, stack)
    np.testing.assert_array_equal(a, one)  # no other maximum: weight 1
    b = two.copy()
    K._itti_normalize(b, flag, stack)
    np.testing.assert_allclose(b, two * 0.25, rtol=1e-15)  # (1 - 0.5 / 1)^2
    ridge = np.zeros((6, 6))
    ridge[:, 2] = 1.0  # one plateau: counted once
    c = ridge.copy()
    K._itti_normalize(c, flag, stack)
    np.testing.assert_array_equal(c, ridge)


@pytest.mark.parametrize(
    "X, side, err, match",
    [
        (np.zeros((2, 10)), None, ValueError, "perfect square"),
        (np.zeros((2, 16)), 3, ValueError, "side"),
        (np.zeros((2, 16)), 0, ValueError, "side must be in"),
        (np.zeros((2, 16)), 4.0, TypeError, "side must be an integer"),
        (np.zeros(16), 4, ValueError, "X must have 2 dimensions"),
        (np.full((1, 4), np.nan), 2, ValueError, "finite"),
        (np.full((1, 4), 1e200), 2, ValueError, "too large"),
    ],
)
def test_saliency_validation(X, side, err, match):
    with pytest.raises(err, match=match):
        saliency(X, side)


def test_kernel_guards_side():
    with pytest.raises(ValueError, match="side"):
        K.saliency_map(np.zeros((1, 10)), 3, np.empty(1))


@pytest.mark.parametrize("side", [-2, 0])
def test_kernels_refuse_a_side_below_one_even_when_its_square_is_the_patch_length(side):
    # (-2)^2 = 4 and 0^2 = 0: a side must also be >= 1 (the kernels index maps of shape (side, side))
    P = side * side
    with pytest.raises(ValueError, match="side must be >= 1"):
        K.saliency_map(np.zeros((1, P)), side, np.empty(1))
    with pytest.raises(ValueError, match="side must be >= 1"):
        K.saliency_maps(np.zeros((1, P)), side, np.empty((1, K.N_MAPS, 1, 1)), np.empty(1))


@settings(max_examples=examples(50), deadline=None)
@given(X=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=9),
                    elements=st.floats(allow_nan=True, allow_infinity=True, width=64)),
       side=st.none() | st.integers(-2, 4))
def test_saliency_hostile(X, side):
    try:
        s = saliency(X, side)
    except (ValueError, TypeError) as exc:
        assert str(exc)
        return
    assert s.shape == (X.shape[0],) and np.isfinite(s).all() and (s >= 0).all()


def test_itti_normalization_counts_8_connected_plateaus_by_hand():
    # Global maximum 1 at a corner; local maxima 0.5 at (2,2) and (4,2), two rows apart (not 8-connected:
    # two plateaus), and 0.2 at (2,5). mbar = (0.5 + 0.5 + 0.2) / 3 = 0.4, so the map is scaled by
    # (1 - 0.4)^2 = 0.36; joining the two 0.5s into one plateau would give (1 - 0.35)^2 instead.
    from neurosim.kernels.selection import _itti_normalize

    M = np.zeros((6, 6))
    M[0, 0], M[2, 2], M[4, 2], M[2, 5] = 1.0, 0.5, 0.5, 0.2
    before = M.copy()
    flag, stack = np.zeros(36, dtype=np.int64), np.zeros(36, dtype=np.int64)
    _itti_normalize(M, flag, stack)
    np.testing.assert_allclose(M, before * 0.36, rtol=1e-14, atol=0.0)
    # one row closer, (2,2) and (3,2) are neighbours: one plateau of 0.5, mbar = 0.35
    M = np.zeros((6, 6))
    M[0, 0], M[2, 2], M[3, 2], M[2, 5] = 1.0, 0.5, 0.5, 0.2
    before = M.copy()
    _itti_normalize(M, flag, stack)
    np.testing.assert_allclose(M, before * (1 - 0.35) ** 2, rtol=1e-14, atol=0.0)


def test_one_pixel_patches_are_valid_and_scale_with_their_value():
    # side = 1 is the smallest patch the documentation allows (side * side = P >= 1); the score is
    # 0 for a blank pixel and positively homogeneous, saliency(c X) = c saliency(X), for either sign
    s = saliency(np.array([[0.0], [2.0], [-1.5]]), side=1)
    assert s[0] == 0.0 and s[1] > 0.0
    np.testing.assert_allclose(s[2] / s[1], 0.75, rtol=1e-12)
