"""Tests of neurosim.data.images: offline images, whitening and patch streams."""

import numpy as np
import pytest

from neurosim.data import (
    AVAILABLE_IMAGES,
    DEFAULT_IMAGES,
    TEST_IMAGES,
    TRAIN_IMAGES,
    ImagePatchStream,
    load_natural_images,
    sample_patches,
    whiten_image,
)
from neurosim.streams import ChunkedRandomStream


def spectrum_slope(img, band=(0.02, 0.2)):
    """Log-log slope of the radially averaged power spectrum over ``band`` (cycles/pixel).

    A Hann window suppresses the boundary discontinuity, which would
    otherwise add a spurious 1/f^2 component.
    """
    h, w = img.shape
    win = np.outer(np.hanning(h), np.hanning(w))
    power = np.abs(np.fft.fft2((img - img.mean()) * win)) ** 2
    r = np.hypot(np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :])
    edges = np.geomspace(*band, 11)
    mids = np.sqrt(edges[1:] * edges[:-1])
    p = [power[(r >= a) & (r < b)].mean() for a, b in zip(edges[:-1], edges[1:])]
    return np.polyfit(np.log(mids), np.log(p), 1)[0]


def test_default_images_load_as_gray_unit_floats():
    imgs = load_natural_images()
    assert len(imgs) == len(DEFAULT_IMAGES) == 12
    for img in imgs:
        assert img.ndim == 2 and img.dtype == np.float64
        assert img.min() >= 0.0 and img.max() <= 1.0
        assert img.std() > 0.05  # real photographs, not blank
        assert min(img.shape) >= 256


def test_every_available_image_loads_and_colour_keeps_channels():
    assert set(DEFAULT_IMAGES) <= set(AVAILABLE_IMAGES)
    (rgb,) = load_natural_images("astronaut", gray=False)
    assert rgb.shape == (512, 512, 3)
    (gray,) = load_natural_images(["astronaut"])
    assert gray.shape == (512, 512)
    # Returned arrays are copies: editing one must not change the cache.
    gray[:] = 0
    assert load_natural_images("astronaut")[0].std() > 0


def test_unknown_image_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown image 'lena'.*available images: astronaut"):
        load_natural_images(["camera", "lena"])
    with pytest.raises(ValueError, match="at least one"):
        load_natural_images([])
    with pytest.raises(TypeError):
        load_natural_images([3])


def test_whitening_flattens_the_power_spectrum():
    # Natural images have power ~ 1/f^2 (slope about -2 on log-log axes, up to
    # -3 for smooth, compressed photos); the |f| ramp of the Olshausen-Field
    # filter multiplies power by f^2. Measure: mean log-log slope of the
    # radially averaged power over 0.02-0.2 cycles/pixel across the default
    # images is <= -2 before whitening and within 0.8 of flat after.
    imgs = load_natural_images()
    raw = np.mean([spectrum_slope(im) for im in imgs])
    white = np.mean([spectrum_slope(whiten_image(im)) for im in imgs])
    assert raw <= -2.0
    assert abs(white) < 0.8
    assert white - raw > 1.5


def test_whitening_cutoff_removes_high_frequencies():
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((128, 128))
    out = whiten_image(noise, f0_frac=0.2)
    power = np.abs(np.fft.fft2(out)) ** 2
    r = np.hypot(np.fft.fftfreq(128)[:, None], np.fft.fftfreq(128)[None, :])
    # exp(-(f/f0)^4) is e^-16 at f = 2 f0; cropping the mirror-padded result
    # back to 128x128 leaks some power, so require only a 100-fold drop of the
    # mean power above 0.4 cyc/px relative to the pass band around f0.
    assert power[r > 0.4].mean() < 1e-2 * power[(r > 0.15) & (r < 0.25)].mean()
    assert abs(out.mean()) < 1e-12 * np.abs(out).max()  # zero DC; the crop is a mirror quarter
    with pytest.raises(ValueError):
        whiten_image(noise, f0_frac=0.6)
    with pytest.raises(ValueError):
        whiten_image(np.ones(5))


@pytest.mark.parametrize("splits", [[350], [1, 349], [99, 1, 150, 100], [100, 100, 100, 50]])
def test_patch_stream_is_deterministic_under_any_block_split(splits):
    s = ImagePatchStream(8, seed=3, chunk=100)
    whole = s.block(0, 350, 2)
    fresh = ImagePatchStream(8, seed=3, chunk=100)  # new object: no shared cache
    parts, t = [], 0
    for n in splits:
        parts.append(fresh.block(t, n, 2))
        t += n
    assert isinstance(s, ChunkedRandomStream)
    assert whole.shape == (350, 2, 64)
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    # A later window read alone equals the same window inside the whole run.
    np.testing.assert_array_equal(ImagePatchStream(8, seed=3, chunk=100).block(123, 45, 2), whole[123:168])


def test_patch_stream_seeds_and_statistics():
    a = ImagePatchStream(10, seed=0).block(0, 4000, 1)[:, 0]
    b = ImagePatchStream(10, seed=1).block(0, 4000, 1)[:, 0]
    assert not np.allclose(a[:10], b[:10])
    np.testing.assert_allclose(a.mean(axis=1), 0.0, atol=1e-12)  # patch means removed
    # Images are scaled to pixel variance 0.1; removing each patch's mean takes
    # away the between-patch part, so the pooled variance is a bit below 0.1.
    assert 0.06 < a.var() < 0.1
    # Whitened patches are heavy-tailed (sparse structure): excess kurtosis > 1.
    z = a.ravel() / a.std()
    assert np.mean(z**4) - 3 > 1.0
    p = ImagePatchStream(10, seed=0, normalize="patch").block(0, 500, 1)[:, 0]
    np.testing.assert_allclose(p.std(axis=1), 1.0, rtol=1e-9)


def test_sample_patches_is_a_prefix_of_the_stream_and_splits_are_disjoint():
    x = sample_patches(300, 6, seed=5, images=TRAIN_IMAGES)
    y = sample_patches(1500, 6, seed=5, images=TRAIN_IMAGES)
    assert x.shape == (300, 36)
    np.testing.assert_array_equal(x, y[:300])
    assert set(TRAIN_IMAGES).isdisjoint(TEST_IMAGES)
    assert set(TRAIN_IMAGES) | set(TEST_IMAGES) == set(DEFAULT_IMAGES)
    t = sample_patches(300, 6, seed=5, images=TEST_IMAGES)
    assert not np.allclose(t, x)


def test_unwhitened_patches_and_params():
    s = ImagePatchStream(5, images=["camera"], whiten=False, normalize="none", remove_mean=False)
    x = s.block(0, 200, 1)[:, 0]
    (cam,) = load_natural_images("camera")
    # Without whitening or scaling a patch is the raw image minus its global mean.
    assert x.min() >= -1.0 and x.max() <= 1.0
    assert abs(x.mean() - 0.0) < 0.2
    assert s.params()["images"] == "camera" and s.params()["dim"] == 25
    assert cam.shape == (512, 512)


def test_patch_stream_validation():
    with pytest.raises(ValueError, match="patch_size"):
        ImagePatchStream(400, images=["chelsea"])  # chelsea is 300 pixels high
    with pytest.raises(ValueError, match="normalize"):
        ImagePatchStream(8, normalize="zscore")
    with pytest.raises(TypeError, match="patch_size"):
        ImagePatchStream(8.0)
    with pytest.raises(ValueError, match="n"):
        sample_patches(0)
