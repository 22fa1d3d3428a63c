"""Inpainting tools: patches, assembly, masks, PSNR, inpaint, data split."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from scipy.fft import idctn
from skimage.metrics import peak_signal_noise_ratio
from sklearn.feature_extraction.image import extract_patches_2d

from neurosim.analysis.inpainting import (
    InpaintingPatchStream,
    assemble_patches,
    image_patches,
    inpaint,
    inpainting_images,
    patch_positions,
    psnr,
    random_pixel_mask,
)
from neurosim.data.images import TEST_IMAGES, TRAIN_IMAGES, load_natural_images


# --------------------------------------------------------------------------- patches
def test_patch_positions_cover_the_border():
    r, c = patch_positions((10, 7), 4, 3)
    np.testing.assert_array_equal(r, [0, 3, 6])  # 6 = 10 - 4 reached by the steps
    np.testing.assert_array_equal(c, [0, 3])  # 3 = 7 - 4
    r, c = patch_positions((11, 5), 4, 3)
    np.testing.assert_array_equal(r, [0, 3, 6, 7])  # last patch flush with the border
    np.testing.assert_array_equal(c, [0, 1])


def test_image_patches_hand_case():
    img = np.arange(12.0).reshape(3, 4)
    P = image_patches(img, 2, step=2)
    # corners rows (0, 1), cols (0, 2): four patches, row-major
    np.testing.assert_array_equal(P, [[0, 1, 4, 5], [2, 3, 6, 7], [4, 5, 8, 9], [6, 7, 10, 11]])


def test_image_patches_step1_matches_sklearn():
    img = np.random.default_rng(0).random((9, 13))
    np.testing.assert_array_equal(image_patches(img, 4), extract_patches_2d(img, (4, 4)).reshape(-1, 16))


def test_assemble_averages_overlaps_hand_case():
    # 3x3 image, 2x2 patches, step 1: four patches, patch k filled with k
    P = np.repeat(np.arange(4.0)[:, None], 4, axis=1)
    out = assemble_patches(P, (3, 3), 2, 1)
    expect = np.array([[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]])
    np.testing.assert_allclose(out, expect, rtol=0, atol=1e-15)


@settings(max_examples=examples(60), deadline=None)
@given(h=st.integers(1, 20), w=st.integers(1, 20), size=st.integers(1, 8), step=st.integers(1, 9),
       seed=st.integers(0, 10))
def test_assemble_inverts_image_patches(h, w, size, step, seed):
    size = min(size, h, w)
    step = min(step, size)
    img = np.random.default_rng(seed).normal(size=(h, w))
    P = image_patches(img, size, step)
    r, c = patch_positions((h, w), size, step)
    assert P.shape == (r.size * c.size, size * size)
    np.testing.assert_allclose(assemble_patches(P, (h, w), size, step), img, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("call, exc, name", [
    (lambda: image_patches(np.ones((4, 4)), 5), ValueError, "size"),
    (lambda: image_patches(np.ones((4, 4)), 0), ValueError, "size"),
    (lambda: image_patches(np.ones((4, 4)), 2, step=0), ValueError, "step"),
    (lambda: image_patches(np.ones((4, 4)), 2, step=3), ValueError, "step"),  # gaps between patches
    (lambda: image_patches(np.ones(4), 2), ValueError, "img"),
    (lambda: image_patches(np.array([[1.0, np.nan]]), 1), ValueError, "img"),
    (lambda: image_patches(np.ones((4, 4)), 2.0), TypeError, "size"),
    (lambda: assemble_patches(np.ones((3, 4)), (3, 3), 2), ValueError, "patches"),
    (lambda: assemble_patches(np.ones((4, 4)), (3,), 2), TypeError, "shape"),
    (lambda: assemble_patches(np.ones((4, 4)), (3, 0), 2), ValueError, r"shape\[1\]"),
])
def test_patch_functions_reject_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# --------------------------------------------------------------------------- masks and PSNR
def test_random_pixel_mask():
    m = random_pixel_mask((200, 300), 0.7, 3)
    assert m.dtype == bool and m.shape == (200, 300)
    assert abs((~m).mean() - 0.7) < 5 * np.sqrt(0.7 * 0.3 / m.size)
    np.testing.assert_array_equal(m, random_pixel_mask((200, 300), 0.7, np.random.default_rng(3)))
    assert random_pixel_mask((5, 5), 0.0, 1).all()
    with pytest.raises(ValueError, match="missing"):
        random_pixel_mask((5, 5), 1.0)
    with pytest.raises(ValueError, match="rng"):
        random_pixel_mask((5, 5), 0.5, -2)


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 1000), rng_=st.floats(0.1, 300.0), noise=st.floats(1e-6, 1.0))
def test_psnr_matches_skimage(seed, rng_, noise):
    gen = np.random.default_rng(seed)
    ref = gen.random((7, 9)) * rng_
    est = ref + noise * rng_ * gen.normal(size=ref.shape)
    ours = psnr(ref, est, data_range=rng_)
    theirs = peak_signal_noise_ratio(ref, est, data_range=rng_)
    assert ours == pytest.approx(theirs, rel=1e-12)


def test_psnr_hand_case_mask_and_perfect():
    ref = np.zeros((2, 2))
    est = np.array([[0.1, 0.0], [0.0, 0.0]])
    # MSE over all pixels = 0.01 / 4 -> 10 log10(400) dB
    assert psnr(ref, est) == pytest.approx(10 * np.log10(400.0), rel=1e-12)
    # only the first pixel: MSE 0.01 -> 20 dB
    assert psnr(ref, est, mask=[[True, False], [False, False]]) == pytest.approx(20.0, rel=1e-12)
    assert psnr(ref, est, mask=[[False, True], [True, True]]) == float("inf")
    assert psnr(ref, ref) == float("inf")
    assert psnr(ref, est, data_range=2.0) == pytest.approx(10 * np.log10(1600.0), rel=1e-12)


@pytest.mark.parametrize("kw, exc, name", [
    ({"estimate": np.zeros((2, 3))}, ValueError, "estimate"),
    ({"data_range": 0.0}, ValueError, "data_range"),
    ({"data_range": np.inf}, ValueError, "data_range"),
    ({"mask": np.zeros((2, 2), bool)}, ValueError, "mask"),
    ({"mask": np.ones(4, bool)}, ValueError, "mask"),
    ({"mask": np.array([["a", "b"], ["c", "d"]])}, TypeError, "mask"),
    ({"reference": np.full((2, 2), np.nan)}, ValueError, "reference"),
])
def test_psnr_rejects_bad_input(kw, exc, name):
    args = {"reference": np.zeros((2, 2)), "estimate": np.ones((2, 2)), **kw}
    with pytest.raises(exc, match=name):
        psnr(**args)


# --------------------------------------------------------------------------- inpaint
def _nearest_atom_encoder(W):
    """One-hot code of the atom closest to each patch on its observed pixels."""
    def encode(X, M):
        assert np.all(X[M == 0] == 0.0)  # the encoder never sees a missing pixel
        err = (M[:, None, :] * (X[:, None, :] - W[None, :, :]) ** 2).sum(axis=2)
        codes = np.zeros((X.shape[0], W.shape[0]))
        codes[np.arange(X.shape[0]), err.argmin(axis=1)] = 1.0
        return codes
    return encode


def test_inpaint_with_the_images_own_patches_reproduces_it():
    img = np.random.default_rng(1).random((20, 24))  # white noise: every patch unique
    observed = random_pixel_mask(img.shape, 0.5, 2)
    W = image_patches(img, 5, 1)
    out = inpaint(np.where(observed, img, -7.0), observed, _nearest_atom_encoder(W), W, size=5, step=1)
    np.testing.assert_allclose(out, img, rtol=1e-13, atol=1e-13)
    assert psnr(img, out, mask=~observed) > 250  # rounding only


def _dct_dictionary(size, n_freq):
    atoms = []
    for u in range(n_freq):
        for v in range(n_freq):
            c = np.zeros((size, size))
            c[u, v] = 1.0
            atoms.append(idctn(c, norm="ortho").ravel())
    return np.array(atoms)


def _least_squares_encoder(W):
    def encode(X, M):
        out = np.empty((X.shape[0], W.shape[0]))
        for i, (x, m) in enumerate(zip(X, M)):
            o = m > 0
            out[i] = np.linalg.lstsq(W[:, o].T, x[o], rcond=None)[0]
        return out
    return encode


def test_inpaint_smooth_image_with_low_frequency_dct():
    yy, xx = np.mgrid[0:48, 0:48] / 48.0
    img = 0.5 + 0.3 * np.sin(2 * np.pi * xx * 0.7) * np.cos(2 * np.pi * yy * 0.5) + 0.1 * xx
    observed = random_pixel_mask(img.shape, 0.6, 0)
    # 9 smooth atoms, ~25 observed pixels per 8x8 patch: a well-posed least-squares fit
    # (16 atoms make some randomly masked patches ill-conditioned)
    W = _dct_dictionary(8, 3)
    out = inpaint(img, observed, _least_squares_encoder(W), W, size=8, step=2)
    np.testing.assert_array_equal(out[observed], img[observed])
    filled = psnr(img, out, mask=~observed)
    mean_fill = psnr(img, np.where(observed, img, img[observed].mean()), mask=~observed)
    # measured over mask seeds 0-3: 48.6 to 50.3 dB, against 16.5 to 16.8 dB for mean filling
    assert filled > 40.0 and mean_fill < 20.0


def test_inpaint_full_mask_returns_image_and_plain_reconstruction():
    img = np.random.default_rng(4).random((10, 10))
    W = _dct_dictionary(4, 4)  # complete orthonormal basis of 4x4 patches
    full = np.ones(img.shape, bool)
    enc = lambda X, M: X @ W.T  # noqa: E731 - exact analysis coefficients for an orthonormal basis
    np.testing.assert_array_equal(inpaint(img, full, enc, W, size=4), img)
    np.testing.assert_allclose(inpaint(img, full, enc, W, size=4, keep_observed=False), img, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kw, exc, name", [
    ({"observed": np.ones((5, 5), bool)}, ValueError, "observed"),
    ({"W": np.ones((3, 9))}, ValueError, "W"),
    ({"W": np.ones((0, 16))}, ValueError, "W"),
    ({"encode": "lasso"}, TypeError, "encode"),
    ({"encode": lambda X, M: np.ones((X.shape[0], 2))}, ValueError, "codes"),
    ({"encode": lambda X, M: np.full((X.shape[0], 3), np.nan)}, ValueError, "codes"),
    ({"size": 7}, ValueError, "size"),
    ({"step": 0}, ValueError, "step"),
    ({"keep_observed": 1}, TypeError, "keep_observed"),
    ({"W": np.full((3, 16), 1e308)}, ValueError, "overflow"),
])
def test_inpaint_rejects_bad_input(kw, exc, name):
    args = {"img": np.zeros((6, 6)), "observed": np.ones((6, 6), bool), "encode": lambda X, M: np.ones((len(X), 3)),
            "W": np.ones((3, 16)), "size": 4, "step": 1, **kw}
    with pytest.raises(exc, match=name):
        inpaint(**args)


def test_inpaint_ignores_missing_pixels_even_nan_and_refuses_nonfinite_observed_ones():
    rng = np.random.default_rng(5)
    img = rng.random((10, 10))
    observed = random_pixel_mask(img.shape, 0.5, 2)
    W = rng.standard_normal((6, 16))
    enc = _least_squares_encoder(W)
    ref = inpaint(np.where(observed, img, 0.3), observed, enc, W, size=4)
    for fill in (np.nan, np.inf, -1e300):
        np.testing.assert_array_equal(inpaint(np.where(observed, img, fill), observed, enc, W, size=4), ref)
    bad = img.copy()
    bad[np.argwhere(observed)[0][0], np.argwhere(observed)[0][1]] = np.nan
    with pytest.raises(ValueError, match="img must be finite at observed pixels"):
        inpaint(bad, observed, enc, W, size=4)


def test_inpaint_refuses_a_mask_with_nothing_observed_and_pixels_no_observed_patch_covers():
    W = np.ones((2, 9))
    zero = lambda X, M: np.zeros((len(X), 2))  # noqa: E731
    with pytest.raises(ValueError, match="observed must mark at least one observed pixel"):
        inpaint(np.ones((6, 6)), np.zeros((6, 6), bool), zero, W, size=3)
    observed = np.zeros((9, 9), bool)
    observed[0, 0] = True  # pixel (8, 8) lies in no 3x3 patch with an observed pixel
    with pytest.raises(ValueError, match=r"lie in no 3x3 patch with an observed pixel"):
        inpaint(np.ones((9, 9)), observed, zero, W, size=3)


@pytest.mark.parametrize("step", [1, 2])
def test_inpaint_with_mean_removal_by_hand(step):
    """Codes of 0: each missing pixel is the mean, over the patches covering it that observe a pixel, of their
    observed means (patches observing nothing are left out) -- plain loops as the oracle."""
    rng = np.random.default_rng(1)
    H, Wd, size = 7, 8, 3
    img = rng.random((H, Wd)) + 2.0
    observed = rng.random((H, Wd)) < 0.35
    observed[::3, ::3] = True
    W = rng.standard_normal((4, size * size))
    seen_X = []

    def zero(X, M):
        seen_X.append((X.copy(), M.copy()))
        return np.zeros((len(X), 4))

    out = inpaint(img, observed, zero, W, size=size, step=step, remove_mean=True)
    X, M = seen_X[0]
    rows, cols = patch_positions(img.shape, size, step)
    total, count = np.zeros(img.shape), np.zeros(img.shape)
    p = 0
    for r in rows:
        for c in cols:
            o = observed[r:r + size, c:c + size]
            if o.any():
                mu = img[r:r + size, c:c + size][o].mean()
                # what the encoder saw: observed pixels minus the patch's observed mean, 0 elsewhere
                np.testing.assert_allclose(X[p].reshape(size, size), np.where(o, img[r:r + size, c:c + size] - mu,
                                                                              0.0), rtol=0, atol=1e-12)
                total[r:r + size, c:c + size] += mu
                count[r:r + size, c:c + size] += 1
            p += 1
    expected = np.where(observed, img, total / np.maximum(count, 1))
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    # without mean removal, the same zero codes fill 0
    plain = inpaint(img, observed, lambda X, M: np.zeros((len(X), 4)), W, size=size, step=step)
    assert np.all(plain[~observed] == 0.0)


@settings(max_examples=examples(40), deadline=None)
@given(h=st.integers(1, 12), w=st.integers(1, 12), size=st.integers(0, 13), step=st.integers(-1, 14),
       missing=st.floats(0.0, 0.99), fill=st.sampled_from([0.0, np.nan, np.inf, 1e308]))
def test_inpaint_hostile_shapes(h, w, size, step, missing, fill):
    img = np.random.default_rng(0).random((h, w))
    img[0, 0] = fill
    observed = random_pixel_mask((h, w), missing, 1)
    W = np.ones((2, max(size, 1) ** 2))
    try:
        out = inpaint(img, observed, lambda X, M: np.zeros((len(X), 2)), W, size=size, step=step)
    except ValueError as exc:
        assert any(n in str(exc) for n in ("size", "step", "img", "observed"))
        return
    assert out.shape == (h, w) and np.all(np.isfinite(out))


# --------------------------------------------------------------------------- data
def test_inpainting_images_split_by_photograph():
    d = inpainting_images(n_train=2, n_test=4, crop=32, seed=3)
    assert d["train_names"] == TRAIN_IMAGES[:2]
    assert not set(d["train_names"]) & set(TEST_IMAGES)
    assert set(d["test_names"]) <= set(TEST_IMAGES) and d["test_names"][:3] == TEST_IMAGES
    assert d["test"].shape == (4, 32, 32) and d["test"].min() >= 0.0 and d["test"].max() <= 1.0
    photos = dict(zip(TEST_IMAGES, load_natural_images(TEST_IMAGES)))
    for crop, name, (r, c) in zip(d["test"], d["test_names"], d["test_corners"]):
        np.testing.assert_array_equal(crop, photos[name][r:r + 32, c:c + 32])
    np.testing.assert_array_equal(d["train"][0], load_natural_images(TRAIN_IMAGES[0])[0])
    again = inpainting_images(n_train=2, n_test=4, crop=32, seed=3)
    np.testing.assert_array_equal(again["test"], d["test"])
    assert not np.array_equal(inpainting_images(n_train=1, n_test=4, crop=32, seed=4)["test"], d["test"])
    for kw, name in [({"n_train": 10}, "n_train"), ({"n_test": 0}, "n_test"), ({"crop": 401}, "crop"),
                     ({"crop": 7}, "crop"), ({"seed": -1}, "seed")]:
        with pytest.raises(ValueError, match=name):
            inpainting_images(**kw)


def test_inpainting_patch_stream_gives_raw_patches_of_the_photographs():
    s = InpaintingPatchStream(6, images="camera", seed=1, chunk=64)
    P = s.block(0, 20)[:, 0, :]
    cam = load_natural_images("camera")[0]
    windows = np.lib.stride_tricks.sliding_window_view(cam, (6, 6)).reshape(-1, 36)
    for p in P:  # every patch is a window of the raw photograph, values in [0, 1]
        assert np.any(np.all(windows == p, axis=1))
    fresh = InpaintingPatchStream(6, images="camera", seed=1, chunk=64)
    np.testing.assert_array_equal(P[5:15], fresh.block(5, 10)[:, 0])  # reproducible, random access
    default = InpaintingPatchStream(8)
    assert default.names == TRAIN_IMAGES and default.dim == 64
    assert default.params()["whiten"] == 0 and default.params()["remove_mean"] == 0


def test_observed_mean_removed_stream_centres_on_observed_pixels_only():
    from neurosim.analysis.inpainting import InpaintingPatchStream, ObservedMeanRemovedStream
    from neurosim.streams import BernoulliMaskStream

    data = InpaintingPatchStream(4, seed=3)
    masks = BernoulliMaskStream(16, 0.5, seed=4)
    x, m = data.block(5, 3, 7), masks.block(5, 3, 7) != 0
    y = ObservedMeanRemovedStream(data, masks).block(5, 3, 7)
    assert y.shape == (3, 7, 16) and not y.flags.writeable
    np.testing.assert_array_equal(y[~m], 0.0)
    for i, j in zip(*np.nonzero(m.any(axis=-1))):
        o = m[i, j]
        np.testing.assert_allclose(y[i, j, o], x[i, j, o] - x[i, j, o].mean(), atol=1e-12)
    # missing values are never read, not even through the mean
    class Poisoned(type(data)):
        def block(self, t0, n, batch=1):
            return np.where(masks.block(t0, n, batch) != 0, super().block(t0, n, batch), np.nan)
    np.testing.assert_array_equal(ObservedMeanRemovedStream(Poisoned(4, seed=3), masks).block(5, 3, 7), y)
    # no masks: the plain per-patch mean removal
    full = ObservedMeanRemovedStream(data).block(5, 3, 7)
    np.testing.assert_allclose(full, x - x.mean(axis=-1, keepdims=True), atol=1e-12)
    with pytest.raises(ValueError, match="dimension"):
        ObservedMeanRemovedStream(data, BernoulliMaskStream(9, 0.5))
