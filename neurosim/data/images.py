"""Natural images that load offline, Olshausen-Field whitening and patch streams.

Only images shipped inside installed Python packages are used (scikit-image,
PyWavelets and scikit-learn), so nothing is downloaded at run
time. The preprocessing follows the sparse-coding literature:

1. convert to grayscale floats in ``[0, 1]``;
2. whiten each image with the Olshausen & Field (1996, 1997) zero-phase
   filter ``R(f) = |f| exp(-(|f| / f0)^4)`` with ``f0 = 0.4 N`` cycles per
   image (:func:`whiten_image`), which is how the ``IMAGES.mat`` set used by
   Lee et al. (2006) was prepared;
3. scale every whitened image to pixel variance 0.1 (the ``IMAGES.mat``
   convention, which sets the scale on which the sparsity weight ``lam`` of
   the sparse-coding papers is meaningful);
4. cut square patches at uniformly random positions of uniformly random
   images and remove each patch's mean (the DC component carries no edge
   structure and would otherwise take one basis).

:class:`ImagePatchStream` makes step ``t`` of a run a random patch that does
not depend on how the run is cut into blocks (see :mod:`neurosim.streams`);
:func:`sample_patches` returns a fixed ``(n, p*p)`` training matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_bool, check_choice, check_float, check_int
from neurosim.streams import ChunkedRandomStream

__all__ = [
    "AVAILABLE_IMAGES",
    "DEFAULT_IMAGES",
    "TRAIN_IMAGES",
    "TEST_IMAGES",
    "load_natural_images",
    "whiten_image",
    "ImagePatchStream",
    "sample_patches",
]


def _skimage(name, index=None):
    def load():
        import skimage.data

        img = getattr(skimage.data, name)()
        return img[index] if index is not None else img  # e.g. one view of a stereo pair

    return load


def _pywt(name):
    def load():
        import pywt.data

        return getattr(pywt.data, name)()

    return load


def _sklearn(index):
    def load():
        from sklearn.datasets import load_sample_images

        return load_sample_images().images[index]

    return load


#: Every image this module can load, with its source package.
_LOADERS = {
    "astronaut": _skimage("astronaut"),  # portrait outdoors, 512x512 colour
    "camera": _skimage("camera"),  # cameraman on a lawn, 512x512
    "coffee": _skimage("coffee"),  # cup on a table, 400x600 colour
    "chelsea": _skimage("chelsea"),  # cat (fur, whiskers), 300x451 colour
    "grass": _skimage("grass"),  # texture, 512x512
    "gravel": _skimage("gravel"),  # texture, 512x512
    "brick": _skimage("brick"),  # brick wall, 512x512
    "rocket": _skimage("rocket"),  # launch pad and sky, 427x640 colour
    "moon": _skimage("moon"),  # lunar surface, low contrast, 512x512
    "china": _sklearn(0),  # Chinese temple and trees, 427x640 colour
    "flower": _sklearn(1),  # flower close-up, 427x640 colour
    "aero": _pywt("aero"),  # aerial view of a city, 512x512
    "ascent": _pywt("ascent"),  # people on a staircase, 512x512
}

AVAILABLE_IMAGES: tuple[str, ...] = tuple(_LOADERS)

#: Default natural photographs: every available photo except ``moon``, whose
#: low contrast and heavy compression make it nearly empty after whitening.
#: No text, document or synthetic images are included.
DEFAULT_IMAGES: tuple[str, ...] = (
    "astronaut", "camera", "coffee", "chelsea", "grass", "gravel",
    "brick", "rocket", "china", "flower", "aero", "ascent",
)  # fmt: skip

#: Train / test split by *source image*, so that test patches never share a
#: photograph with training patches. Each side mixes textures, natural and
#: man-made scenes.
TEST_IMAGES: tuple[str, ...] = ("coffee", "gravel", "ascent")
TRAIN_IMAGES: tuple[str, ...] = tuple(n for n in DEFAULT_IMAGES if n not in TEST_IMAGES)


def _resolve_names(names) -> tuple[str, ...]:
    if names is None:
        return DEFAULT_IMAGES
    if isinstance(names, str):
        names = (names,)
    try:
        names = tuple(names)
    except TypeError:
        raise TypeError(f"names must be a string or a sequence of strings; got {type(names).__name__}") from None
    if not names:
        raise ValueError("names must name at least one image")
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"image names must be strings; got {type(n).__name__} {n!r}")
        if n not in _LOADERS:
            raise ValueError(f"unknown image {n!r}; available images: {', '.join(AVAILABLE_IMAGES)}")
    return names


@lru_cache(maxsize=None)
def _load_one(name: str, gray: bool) -> np.ndarray:
    return _unit_image(_LOADERS[name](), gray)


def _unit_image(raw: ArrayLike, gray: bool) -> np.ndarray:
    """A loaded photograph as read-only float64 in [0, 1]; an RGB(A) one in luma (``gray``) or its RGB channels."""
    raw = np.asarray(raw)
    img = raw.astype(np.float64)
    # All sources are 8-bit; scale by the dtype range, not the image maximum,
    # so that an image's own contrast is kept.
    if np.issubdtype(raw.dtype, np.integer):
        img /= float(np.iinfo(raw.dtype).max)
    elif img.max() > 1.0:
        img /= 255.0
    if img.ndim == 3:
        img = img[..., :3]
        if gray:
            # ITU-R 601 luma weights, the same as skimage.color.rgb2gray.
            img = img @ np.array([0.2125, 0.7154, 0.0721])
    img = np.clip(img, 0.0, 1.0)
    img.setflags(write=False)
    return img


def load_natural_images(names: str | Sequence[str] | None = None, gray: bool = True) -> list[np.ndarray]:
    """Load natural photographs shipped inside installed packages.

    Parameters
    ----------
    names : str or sequence of str, optional
        Image names from :data:`AVAILABLE_IMAGES`. ``None`` loads
        :data:`DEFAULT_IMAGES` (12 natural, non-text photographs from
        scikit-image, scikit-learn and PyWavelets).
    gray : bool
        Convert colour images to luminance (ITU-R 601 weights). With
        ``False`` colour images keep their 3 channels.

    Returns
    -------
    list of numpy.ndarray
        Float64 images with values in ``[0, 1]``, in the order of ``names``;
        each is a fresh writable copy.

    Raises
    ------
    ValueError
        For an unknown image name (the message lists the available ones).
    """
    names = _resolve_names(names)
    gray = check_bool("gray", gray)
    return [_load_one(n, gray).copy() for n in names]


def whiten_image(img: ArrayLike, f0_frac: float = 0.4) -> np.ndarray:
    """Whiten an image with the Olshausen & Field zero-phase 1/f filter.

    The filter, applied in the Fourier domain, is

    ``R(f) = |f| * exp(-(|f| / f0)^4)``,

    where ``|f|`` is the radial spatial frequency. The ``|f|`` ramp flattens
    the ``1/f`` amplitude spectrum of natural images; the quartic exponential
    is a low-pass cutoff at ``f0 = f0_frac * N`` cycles per image that removes
    the highest frequencies, where noise and the rectangular sampling lattice
    dominate. Olshausen & Field (1996, 1997) used ``f0 = 0.4 N``
    (``f0_frac = 0.4``), and Lee et al. (2006) learned their bases from those
    whitened images. For a non-square ``H x W`` image the frequencies are
    expressed in cycles per pixel, so the cutoff is ``f0_frac`` cycles per
    pixel along every direction (``0.4 N`` cycles per image on each side).

    The image is mirror-padded by half its size on each side before the FFT
    and cropped afterwards, so the periodic boundary of the FFT does not
    produce the bright edge artefacts of a plain circular filter.

    Parameters
    ----------
    img : array_like, shape (H, W)
        Grayscale image (H, W >= 2).
    f0_frac : float
        Cutoff as a fraction of the sampling rate, in ``(0, 0.5]`` cycles per
        pixel (0.5 is the Nyquist frequency).

    Returns
    -------
    numpy.ndarray, shape (H, W)
        Whitened image with zero mean (the ``|f|`` factor removes DC). Its
        overall scale is arbitrary; :class:`ImagePatchStream` rescales it.
    """
    img = check_array("img", img, ndim=2)
    if min(img.shape) < 2:
        raise ValueError(f"img must be at least 2x2; got shape {img.shape}")
    f0 = check_float("f0_frac", f0_frac, low=0.0, high=0.5, low_open=True)
    h, w = img.shape
    ph, pw = h // 2, w // 2
    padded = np.pad(img - img.mean(), ((ph, ph), (pw, pw)), mode="symmetric")
    fy = np.fft.fftfreq(padded.shape[0])[:, None]
    fx = np.fft.rfftfreq(padded.shape[1])[None, :]
    rho = np.hypot(fy, fx)
    filt = rho * np.exp(-((rho / f0) ** 4))
    out = np.fft.irfft2(np.fft.rfft2(padded) * filt, s=padded.shape)
    return np.ascontiguousarray(out[ph : ph + h, pw : pw + w])


_NORMALIZE = ("image", "patch", "none")

#: Pixel variance of every whitened image with ``normalize="image"``; the
#: value of Olshausen's IMAGES.mat that Lee et al. trained on.
IMAGE_VARIANCE = 0.1


@lru_cache(maxsize=32)
def _prepared(names: tuple[str, ...], whiten: bool, f0_frac: float, scale_image: bool) -> tuple[np.ndarray, ...]:
    out = []
    for n in names:
        img = _load_one(n, True)
        img = whiten_image(img, f0_frac) if whiten else img - img.mean()
        if scale_image:
            img = img * np.sqrt(IMAGE_VARIANCE / img.var())
        img = np.ascontiguousarray(img)
        img.setflags(write=False)
        out.append(img)
    return tuple(out)


class ImagePatchStream(ChunkedRandomStream):
    """A reproducible stream of random (whitened) natural-image patches.

    Step ``t`` of the stream is one flattened ``patch_size x patch_size``
    patch (row-major, so ``x.reshape(p, p)`` restores it). Each patch comes
    from an image chosen uniformly at random (as in Olshausen's and Lee's
    sampling code, regardless of image size), at a uniformly random position
    fully inside the image. Random numbers are drawn per chunk of ``chunk``
    steps (see :class:`neurosim.streams.ChunkedRandomStream`), so
    ``block(t0, n, batch)`` returns the same patches however a run is split.

    Parameters
    ----------
    patch_size : int
        Side of the square patches, ``p`` (2 .. smallest image side).
    images : str or sequence of str, optional
        Source images (names from :data:`AVAILABLE_IMAGES`); default
        :data:`DEFAULT_IMAGES`. Use :data:`TRAIN_IMAGES` / :data:`TEST_IMAGES`
        for a split by source photograph.
    whiten : bool
        Apply :func:`whiten_image` to each image before cutting patches.
    seed : int
        Root seed (>= 0).
    normalize : {"image", "patch", "none"}
        ``"image"`` (default): scale every (whitened) image to pixel variance
        0.1, the IMAGES.mat convention used by Olshausen and by Lee et al.,
        so patches keep their natural contrast differences (sparse coding
        relies on them). ``"patch"``: divide each mean-removed patch by its
        own standard deviation (unit pixel variance; flat patches with
        standard deviation below 1e-8 are left as they are) — contrast
        normalisation. ``"none"``: no scaling.
    chunk : int
        Steps per independently seeded chunk.
    f0_frac : float
        Whitening cutoff (see :func:`whiten_image`).
    remove_mean : bool
        Subtract each patch's mean (default ``True``).
    """

    def __init__(
        self,
        patch_size: int = 14,
        images=None,
        whiten: bool = True,
        seed: int = 0,
        normalize: str = "image",
        chunk: int = 1024,
        f0_frac: float = 0.4,
        remove_mean: bool = True,
    ):
        self.names = _resolve_names(images)
        self.whiten = check_bool("whiten", whiten)
        self.normalize = check_choice("normalize", normalize, _NORMALIZE)
        self.f0_frac = check_float("f0_frac", f0_frac, low=0.0, high=0.5, low_open=True)
        self.remove_mean = check_bool("remove_mean", remove_mean)
        self._images = _prepared(self.names, self.whiten, self.f0_frac, self.normalize == "image")
        smallest = min(min(im.shape) for im in self._images)
        self.patch_size = check_int("patch_size", patch_size, low=2, high=smallest)
        super().__init__(self.patch_size**2, seed=seed, chunk=chunk)
        # Offsets of a patch's pixels relative to its top-left corner, per image
        # (row strides differ), so a whole chunk is gathered with one fancy index.
        p = self.patch_size
        self._offsets = [
            (np.arange(p)[:, None] * im.shape[1] + np.arange(p)[None, :]).ravel() for im in self._images
        ]

    def _draw(self, rng: np.random.Generator, t0: int, n: int, batch: int) -> np.ndarray:
        total = n * batch
        p = self.patch_size
        which = rng.integers(0, len(self._images), size=total)
        u = rng.random((total, 2))  # position as fractions, mapped per image below
        out = np.empty((total, self.dim))
        for k, im in enumerate(self._images):
            sel = np.flatnonzero(which == k)
            if sel.size == 0:
                continue
            rows = (u[sel, 0] * (im.shape[0] - p + 1)).astype(np.int64)
            cols = (u[sel, 1] * (im.shape[1] - p + 1)).astype(np.int64)
            start = rows * im.shape[1] + cols
            out[sel] = im.ravel()[start[:, None] + self._offsets[k][None, :]]
        if self.remove_mean:
            out -= out.mean(axis=1, keepdims=True)
        if self.normalize == "patch":
            sd = out.std(axis=1, keepdims=True)
            out /= np.where(sd > 1e-8, sd, 1.0)
        return out.reshape(n, batch, self.dim)

    def params(self) -> dict:
        return {
            **super().params(),
            "patch_size": self.patch_size,
            "images": ",".join(self.names),
            "whiten": int(self.whiten),
            "f0_frac": self.f0_frac,
            "normalize": self.normalize,
            "remove_mean": int(self.remove_mean),
        }


def sample_patches(
    n: int,
    patch_size: int = 14,
    seed: int = 0,
    images: str | Sequence[str] | None = None,
    whiten: bool = True,
    normalize: str = "image",
    f0_frac: float = 0.4,
) -> np.ndarray:
    """Draw a fixed training matrix of random natural-image patches.

    The patches are steps ``0 .. n-1`` of
    ``ImagePatchStream(patch_size, images, whiten, seed, normalize)``, so a
    larger ``n`` with the same seed extends a smaller draw.

    Parameters
    ----------
    n : int
        Number of patches (>= 1).
    patch_size, seed, images, whiten, normalize, f0_frac
        As for :class:`ImagePatchStream`.

    Returns
    -------
    numpy.ndarray, shape (n, patch_size**2)
        One flattened, mean-removed patch per row (the ``X`` layout of
        :mod:`neurosim.coding`).
    """
    n = check_int("n", n, low=1)
    stream = ImagePatchStream(patch_size, images=images, whiten=whiten, seed=seed, normalize=normalize, f0_frac=f0_frac)
    return stream.block(0, n, 1)[:, 0, :]
