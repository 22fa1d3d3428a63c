"""Tests of neurosim.analysis.receptive_fields."""

import numpy as np
import pytest

from neurosim.analysis import (
    GaborParams,
    bar_image,
    encode_stimuli,
    find_optimal_bars,
    fit_gabor,
    fit_gabors,
    gabor,
    gratings,
    length_tuning,
    surround_stimulus,
    surround_suppression,
    tile_bases,
)


def angle_diff(a, b, period=np.pi):
    d = (a - b) % period
    return min(d, period - d)


TRUE = GaborParams(x0=6.3, y0=7.1, theta=0.7, freq=0.18, phase=1.1, sigma_x=1.8, sigma_y=2.9, amp=1.0)


def test_fit_gabor_recovers_exact_parameters():
    params, r2 = fit_gabor(gabor(TRUE, 14))
    assert r2 > 0.9999
    np.testing.assert_allclose(params.as_array(), TRUE.as_array(), atol=1e-4)


def test_fit_gabor_with_noise_and_equivalent_parameterisation():
    rng = np.random.default_rng(0)
    # (theta + pi, -phase) and (-amp, phase + pi) describe the same function;
    # the fit must return the canonical form (amp >= 0, theta in [0, pi)).
    alt = np.array([6.3, 7.1, 0.7 + np.pi, 0.18, -1.1 + np.pi, 1.8, 2.9, -1.0])
    img = gabor(alt, 14)
    np.testing.assert_allclose(img, gabor(TRUE, 14), atol=1e-12)
    noisy = img + 0.05 * rng.standard_normal(img.shape)
    params, r2 = fit_gabor(noisy)
    assert r2 > 0.9
    assert abs(params.x0 - TRUE.x0) < 0.3 and abs(params.y0 - TRUE.y0) < 0.3
    assert angle_diff(params.theta, TRUE.theta) < 0.05
    assert abs(params.freq - TRUE.freq) < 0.01
    assert angle_diff(params.phase, TRUE.phase, 2 * np.pi) < 0.2


def test_fit_gabor_rejects_noise():
    rng = np.random.default_rng(1)
    _, r2 = fit_gabor(rng.standard_normal((12, 12)))
    assert r2 < 0.5  # 8 parameters cannot explain 144 independent pixels
    _, r2 = fit_gabor(np.zeros((6, 6)))
    assert r2 == 0.0


def test_fit_gabors_on_rows():
    D = np.stack([gabor(GaborParams(4.0, 4.0, th, 0.2, 0.0, 1.5, 2.0, 1.0), 9).ravel() for th in (0.2, 1.0, 2.0)])
    params, r2 = fit_gabors(D)
    assert params.shape == (3, 8) and np.all(r2 > 0.999)
    np.testing.assert_allclose(params[:, 2], [0.2, 1.0, 2.0], atol=1e-3)
    with pytest.raises(ValueError, match="perfect square"):
        fit_gabors(np.ones((2, 10)))


def test_gratings_orientation_frequency_and_apertures():
    g = gratings(16, [0.0, np.pi / 2], [0.25], [0.0, np.pi / 2])
    assert g.shape == (2, 1, 2, 16, 16)
    # theta = 0: wave vector along x, so rows are identical and columns vary.
    assert np.allclose(g[0, 0, 0], g[0, 0, 0][:1])
    assert np.allclose(g[1, 0, 0], g[1, 0, 0][:, :1])
    # Period 4 pixels: shifting by 4 columns leaves the grating unchanged.
    np.testing.assert_allclose(g[0, 0, 0][:, 4:], g[0, 0, 0][:, :-4], atol=1e-12)
    ann = gratings(16, 0.3, 0.1, center=(7.5, 7.5), radius=7, inner_radius=3, square=True)[0, 0, 0]
    yy, xx = np.mgrid[0:16, 0:16]
    d = np.hypot(xx - 7.5, yy - 7.5)
    assert np.all(ann[d < 3] == 0) and np.all(ann[d >= 7] == 0)
    assert set(np.unique(np.abs(ann[(d >= 3) & (d < 7)]))) <= {1.0}
    with pytest.raises(ValueError, match="frequencies"):
        gratings(8, 0.0, 0.7)


def test_bar_image_geometry():
    b = bar_image(15, 0.0, 7, (7, 7), contrast=2.0)
    assert b.sum() == pytest.approx(2.0 * 7 * 1, rel=1e-9)  # area * contrast
    assert np.count_nonzero(b.sum(axis=1)) == 1  # horizontal: one row
    v = bar_image(15, np.pi / 2, 5, (3, 9))
    assert np.count_nonzero(v.sum(axis=0)) == 1 and v[:, 3].sum() == pytest.approx(5)
    d = bar_image(15, np.pi / 4, 6, supersample=8)
    assert d.sum() == pytest.approx(6, rel=0.05)  # oblique: area conserved up to sampling
    with pytest.raises(ValueError):
        bar_image(15, 0.0, 0.0)


def test_tile_bases_layout():
    D = np.arange(5 * 9, dtype=float).reshape(5, 9) + 1
    t = tile_bases(D, 3, ncols=3, pad=1)
    assert t.shape == (2 * 4 + 1, 3 * 4 + 1)
    np.testing.assert_allclose(t[1:4, 1:4], D[0].reshape(3, 3) / D[0].max())
    assert t[0, 0] == -1.0


@pytest.mark.slow  # compiles the whole sparse-coding circuit (8 s of a cold quick tier)
def test_encode_stimuli_is_soft_threshold_for_orthonormal_dictionary():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 16))
    A = encode_stimuli(X, np.eye(16), 0.5, remove_mean=False)
    np.testing.assert_allclose(A, np.sign(X) * np.maximum(np.abs(X) - 0.5, 0), atol=1e-9)


def gabor_bank(p=11, n_ori=6):
    """Gabor dictionary with known preferred bar orientation theta + pi/2."""
    thetas = np.arange(n_ori) * np.pi / n_ori
    rows = []
    for th in thetas:
        for ph in (0.0, np.pi / 2):
            g = gabor(GaborParams((p - 1) / 2, (p - 1) / 2, th, 0.2, ph, 1.5, 2.5, 1.0), p).ravel()
            rows.append(g / np.linalg.norm(g))
    return np.array(rows), np.repeat(thetas, 2)


@pytest.mark.slow  # 6 s cold (a bar search per Gabor)
def test_optimal_bar_matches_gabor_orientation_and_length_tuning():
    D, thetas = gabor_bank()
    bars = find_optimal_bars(D, 0.1, orientations=12, lengths=(3, 7))
    assert bars["n_stimuli"] == 12 * 2 * 7 * 7
    # Even-phase units (cos carrier: a bright stripe through the centre) must
    # prefer a bar along their stripes, i.e. perpendicular to the wave vector.
    for j in range(0, len(D), 2):
        assert angle_diff(bars["orientation"][j], thetas[j] + np.pi / 2) <= np.pi / 12 + 1e-9
        assert bars["response"][j] > 0 and bars["rank"][j] >= 1
    lengths, resp = length_tuning(D, 0.1, [0, 2], bars, lengths=[1, 3, 5, 7, 9, 11])
    assert resp.shape == (2, 6)
    # A bar of the preferred contrast: responses are positive for long bars.
    assert np.all(resp[:, -1] > 0)


def test_surround_stimulus_leaves_gap_and_is_aligned():
    s = surround_stimulus(15, 0.0, 5, (7, 7), period=4, gap=2)
    c = bar_image(15, 0.0, 5, (7, 7))
    assert np.all(s[c > 0] == 0)  # nothing on or near the centre bar
    assert np.all(s[5:10, 4:11][2] == 0)
    rows = np.flatnonzero(s.sum(axis=1))
    assert set(rows) <= {7 - 4, 7 + 4, 7 - 8, 7 + 8, 7}  # parallel bars every 4 px, in phase
    assert s[7].sum() > 0  # collinear continuation beyond the gap


def test_surround_suppresses_when_another_atom_explains_the_whole_pattern():
    # Atom 0: the centre bar alone. Atom 1: centre bar + aligned surround. With
    # the surround present, atom 1 explains the centre too, so atom 0's
    # coefficient drops: the explaining-away mechanism of the paper.
    p = 15
    c = bar_image(p, 0.0, 5, (7, 7))
    s = surround_stimulus(p, 0.0, 5, (7, 7), period=4)
    rng = np.random.default_rng(3)
    D = np.stack([c.ravel(), (c + s).ravel(), *rng.standard_normal((6, p * p))])
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    bars = {"orientation": np.zeros(8), "length": np.full(8, 5.0), "cx": np.full(8, 7.0),
            "cy": np.full(8, 7.0), "polarity": np.ones(8)}
    out = surround_suppression(D, 0.05, [0], bars, 4.0)
    assert out["center"][0] > 0
    assert out["suppression"][0] > 0.5
    np.testing.assert_allclose(out["x_surround"][0], s)


def test_surround_is_blanked_inside_the_crf_ellipse():
    crf = GaborParams(7.0, 7.0, 0.0, 0.2, 0.0, 1.5, 3.0, 1.0)
    s = surround_stimulus(15, np.pi / 2, 3, (7, 7), period=3, gap=0.5, crf=crf, crf_sigmas=2.0, supersample=1)
    yy, xx = np.mgrid[0:15, 0:15]
    inside = ((xx - 7) / 1.5) ** 2 + ((yy - 7) / 3.0) ** 2 <= 4.0
    assert np.all(s[inside] == 0) and s[~inside].sum() > 0
    # NaN rows in crf_params mean "no mask": same as passing no CRF at all.
    D = np.eye(225)
    bars = {"orientation": np.full(225, np.pi / 2), "length": np.full(225, 3.0), "cx": np.full(225, 7.0),
            "cy": np.full(225, 7.0), "polarity": np.ones(225)}
    a = surround_suppression(D, 0.01, [112], bars, 3.0, crf_params=np.full((1, 8), np.nan))
    b = surround_suppression(D, 0.01, [112], bars, 3.0)
    np.testing.assert_array_equal(a["x_surround"], b["x_surround"])
