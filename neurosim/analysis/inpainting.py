"""Image inpainting with a learned dictionary (paper 003's natural-image experiment).

An image with missing pixels is cut into overlapping ``size x size``
patches; each patch is encoded on its *observed* pixels only (the encoder
sees ``x_{O}`` and the mask, the paper's ``Delta = diag(m)``; supplement
Eq. 12: ``x_O - D_O alpha = Delta (x - D alpha)``), reconstructed from the
whole dictionary as ``codes @ W`` (which fills in the missing pixels),
overlapping reconstructions are averaged, and finally the observed pixels
are put back as they were.

Layout: a dictionary ``W`` has atoms as rows, shape ``(n_atoms, size*size)``
(the paper's ``D = W.T``); patches are flattened row-major
(``patch.reshape(size, size)`` restores them), one per row; masks are
``True`` (or nonzero) where a pixel is observed.

Data: :func:`inpainting_images` splits the offline natural photographs of
:mod:`neurosim.data.images` by photograph into training photographs (for
:class:`InpaintingPatchStream`) and small held-out test crops.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_float, check_int
from neurosim.streams import Stream
from neurosim.data.images import TEST_IMAGES, TRAIN_IMAGES, ImagePatchStream, _load_one

__all__ = [
    "patch_positions",
    "image_patches",
    "assemble_patches",
    "random_pixel_mask",
    "psnr",
    "inpaint",
    "inpainting_images",
    "InpaintingPatchStream",
    "ObservedMeanRemovedStream",
]


def _check_image(name, img) -> np.ndarray:
    img = check_array(name, img, ndim=2)
    if img.shape[0] < 1 or img.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D image; got shape {img.shape}")
    return img


def _check_shape(shape) -> tuple[int, int]:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__") or len(shape) != 2:
        raise TypeError(f"shape must be a pair (rows, cols); got {shape!r}")
    return check_int("shape[0]", shape[0], low=1), check_int("shape[1]", shape[1], low=1)


def _axis_positions(length: int, size: int, step: int) -> np.ndarray:
    pos = np.arange(0, length - size + 1, step, dtype=np.int64)
    if pos[-1] != length - size:
        # a last patch flush with the border, so that every pixel is covered
        pos = np.append(pos, length - size)
    return pos


def patch_positions(shape: tuple[int, int], size: int, step: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Top-left corners of the patches :func:`image_patches` cuts.

    Along each axis the corners are ``0, step, 2 step, ...`` up to
    ``length - size``, plus ``length - size`` itself when the steps miss it,
    so the patches cover every pixel.

    Parameters
    ----------
    shape : (int, int)
        Image shape ``(rows, cols)``.
    size : int
        Patch side, in ``[1, min(rows, cols)]``.
    step : int
        Stride between corners, in ``[1, size]`` (a longer stride would
        leave pixels that no patch covers).

    Returns
    -------
    rows, cols : numpy.ndarray of int64
        The corner rows and columns; the patches are all pairs, row-major.
    """
    h, w = _check_shape(shape)
    size = check_int("size", size, low=1, high=min(h, w))
    # a stride longer than the patch would leave pixels no patch covers
    step = check_int("step", step, low=1, high=size)
    return _axis_positions(h, size, step), _axis_positions(w, size, step)


def image_patches(img: ArrayLike, size: int, step: int = 1) -> np.ndarray:
    """Cut an image into overlapping square patches.

    Parameters
    ----------
    img : array_like, shape (H, W)
        Grey image.
    size : int
        Patch side, in ``[1, min(H, W)]``.
    step : int
        Stride between patch corners, in ``[1, size]``; see
        :func:`patch_positions`.

    Returns
    -------
    numpy.ndarray, shape (n_patches, size*size)
        One flattened (row-major) patch per row, patches in row-major order
        of their corners. ``step=1`` gives every patch, as
        ``sklearn.feature_extraction.image.extract_patches_2d`` does.
    """
    img = _check_image("img", img)
    rows, cols = patch_positions(img.shape, size, step)
    windows = np.lib.stride_tricks.sliding_window_view(img, (size, size))
    return np.ascontiguousarray(windows[np.ix_(rows, cols)].reshape(rows.size * cols.size, size * size))


def assemble_patches(patches: ArrayLike, shape: tuple[int, int], size: int, step: int = 1) -> np.ndarray:
    """Put patches back into an image, averaging where they overlap.

    The inverse of :func:`image_patches`: every pixel is the mean of the
    values the patches covering it give it, so patches cut from one image
    give that image back (to rounding of the mean).

    Parameters
    ----------
    patches : array_like, shape (n_patches, size*size)
        Flattened patches in the order of :func:`image_patches` with the same
        ``shape``, ``size`` and ``step``.
    shape : (int, int)
        Shape ``(H, W)`` of the image.
    size, step : int
        As for :func:`image_patches`.

    Returns
    -------
    numpy.ndarray, shape (H, W)
    """
    rows, cols = patch_positions(shape, size, step)
    patches = check_array("patches", patches, ndim=2, shape=(rows.size * cols.size, size * size))
    out = np.zeros(_check_shape(shape))
    count = np.zeros_like(out)
    grid = patches.reshape(rows.size, cols.size, size, size)
    # One pass per pixel offset inside a patch: at a fixed offset the
    # patches hit distinct pixels, so plain fancy-index addition is exact
    # (no np.add.at), and there are only size^2 passes.
    for di in range(size):
        for dj in range(size):
            sel = np.ix_(rows + di, cols + dj)
            out[sel] += grid[:, :, di, dj]
            count[sel] += 1.0
    return out / count


def random_pixel_mask(shape: tuple[int, ...], missing: float, rng: int | np.random.Generator = 0) -> np.ndarray:
    """Random observation mask of an image: each pixel missing independently.

    Parameters
    ----------
    shape : (int, int)
        Image shape.
    missing : float
        Probability that a pixel is missing, in ``[0, 1)``.
    rng : int or numpy.random.Generator
        Seed (>= 0) or generator.

    Returns
    -------
    numpy.ndarray of bool, shape ``shape``
        ``True`` where the pixel is observed.
    """
    shape = _check_shape(shape)
    missing = check_float("missing", missing, low=0.0, high=1.0, high_open=True)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(check_int("rng", rng, low=0))
    return rng.random(shape) >= missing


def _check_mask(name, mask, shape) -> np.ndarray:
    try:
        arr = np.asarray(mask)
    except Exception as exc:
        raise TypeError(f"{name} must be array-like; {exc}") from None
    if arr.dtype == object or not (arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.number)):
        raise TypeError(f"{name} must be a boolean (or 0/1) array; got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real; got a complex array")
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have the image's shape {tuple(shape)}; got {arr.shape}")
    if arr.dtype != np.bool_ and arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or Inf)")
    return arr.astype(bool)


def psnr(reference: ArrayLike, estimate: ArrayLike, data_range: float = 1.0, mask: ArrayLike | None = None) -> float:
    """Peak signal-to-noise ratio ``10 log10(data_range^2 / MSE)`` in dB.

    Parameters
    ----------
    reference, estimate : array_like, same shape
        The true image and its estimate.
    data_range : float
        Peak-to-peak range of the pixel values (> 0); 1 for images in
        ``[0, 1]``.
    mask : array_like of bool, optional
        Pixels over which the squared error is averaged (``True`` =
        included); e.g. ``~observed`` scores only the pixels an inpainting
        filled in. Default: every pixel. Must select at least one pixel.

    Returns
    -------
    float
        ``inf`` for a perfect estimate (zero error). Equals
        ``skimage.metrics.peak_signal_noise_ratio(reference, estimate,
        data_range=data_range)`` without a mask.
    """
    ref = check_array("reference", reference)
    if ref.size == 0:
        raise ValueError("reference must contain at least one value")
    est = check_array("estimate", estimate, shape=ref.shape)
    data_range = check_float("data_range", data_range, low=0.0, low_open=True)
    err = (ref - est) ** 2
    if mask is not None:
        m = _check_mask("mask", mask, ref.shape)
        if not m.any():
            raise ValueError("mask must select at least one pixel (all entries are False)")
        err = err[m]
    with np.errstate(over="ignore"):
        mse = float(np.mean(err))
    if mse == 0.0:
        return float("inf")
    if not np.isfinite(mse):
        raise ValueError("reference and estimate differ too much: the mean squared error overflows float64")
    return float(10.0 * np.log10(data_range**2 / mse))


def inpaint(img: ArrayLike, observed: ArrayLike, encode: Callable, W: ArrayLike, size: int = 8, step: int = 1,
            keep_observed: bool = True,
            remove_mean: bool = False) -> np.ndarray:
    """Fill in the missing pixels of an image from a dictionary.

    1. Cut the image and its mask into patches (:func:`image_patches`);
       missing pixels are set to 0 in the patches handed to the encoder, so
       it cannot read them. With ``remove_mean``, each patch's observed
       mean is subtracted from its observed pixels first.
    2. ``codes = encode(X, M)``: a representation of every patch computed on
       its observed pixels (e.g. Table 2 of paper 003 with the masked
       dictionary ``D_O``; any callable with this signature).
    3. Reconstruct every patch from the whole dictionary, ``codes @ W``
       (plus the patch's observed mean with ``remove_mean``).
    4. Average the overlapping reconstructions (:func:`assemble_patches`),
       over the patches that observe at least one pixel: a patch with none
       has no code to speak of (and no mean).
    5. Put back the observed pixels as they were (``keep_observed``), the
       standard inpainting convention: only missing pixels are estimated.

    Parameters
    ----------
    img : array_like, shape (H, W)
        The image; values at missing pixels are ignored (they may be NaN or
        Inf); observed pixels must be finite: the rule of
        :func:`neurosim.coding.structured.structured_sparse_code` for its
        unobserved coordinates.
    observed : array_like of bool, shape (H, W)
        ``True`` (or nonzero) where the pixel is observed; at least one.
    encode : callable
        ``encode(X, M) -> codes`` with ``X`` of shape ``(n_patches,
        size*size)`` (zeros at missing pixels), ``M`` the 0/1 float masks of
        the same shape, and ``codes`` of shape ``(n_patches, n_atoms)``.
    W : array_like, shape (n_atoms, size*size)
        Dictionary, atoms as rows.
    size : int
        Patch side.
    step : int
        Stride between patches; 1 (every overlapping patch) averages the
        most estimates per pixel and costs the most encodings.
    keep_observed : bool
        Return observed pixels unchanged (default); ``False`` returns the
        plain averaged reconstruction.
    remove_mean : bool
        Code each patch with its observed mean removed and add the mean back
        to its reconstruction: what dictionary-learning inpainting usually
        does (e.g. Mairal et al. 2009, and scikit-learn's image denoising
        example), so the atoms model texture, not brightness. Use it with a
        dictionary learned from mean-removed patches.

    Returns
    -------
    numpy.ndarray, shape (H, W)
        The inpainted image. A missing pixel that no patch with an observed
        pixel covers cannot be estimated: ``ValueError`` (use a larger
        ``size``).
    """
    img = check_array("img", img, ndim=2, finite=False)
    if img.shape[0] < 1 or img.shape[1] < 1:
        raise ValueError(f"img must be a non-empty 2-D image; got shape {img.shape}")
    obs = _check_mask("observed", observed, img.shape)
    if not obs.any():
        raise ValueError("observed must mark at least one observed pixel; got an all-False mask (nothing to "
                         "inpaint from)")
    bad = obs & ~np.isfinite(img)
    if bad.any():
        raise ValueError(f"img must be finite at observed pixels; NaN/Inf at {np.argwhere(bad)[:5].tolist()} "
                         f"(mark such pixels as not observed)")
    img = np.where(obs, img, 0.0)
    size = check_int("size", size, low=1, high=min(img.shape))
    W = check_array("W", W, ndim=2, shape=(None, size * size))
    if W.shape[0] < 1:
        raise ValueError("W must hold at least one atom (row)")
    if not callable(encode):
        raise TypeError(f"encode must be a callable encode(X, M) -> codes; got {type(encode).__name__}")
    for name, flag in (("keep_observed", keep_observed), ("remove_mean", remove_mean)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool; got {type(flag).__name__}")
    M = image_patches(obs.astype(np.float64), size, step)
    X = image_patches(img, size, step)
    n_obs = M.sum(axis=1)
    seen = n_obs > 0
    mean = np.zeros(X.shape[0])
    if remove_mean:
        mean[seen] = X[seen].sum(axis=1) / n_obs[seen]
        X = (X - mean[:, None]) * M
    codes = check_array("codes returned by encode", encode(X, M), ndim=2, shape=(X.shape[0], W.shape[0]))
    with np.errstate(over="ignore", invalid="ignore"):
        patches = codes @ W + mean[:, None]
    if not np.all(np.isfinite(patches)):
        raise ValueError("the reconstruction codes @ W overflows float64; check the codes and W")
    weight = np.repeat(seen.astype(np.float64)[:, None], X.shape[1], axis=1)
    total = assemble_patches(patches * weight, img.shape, size, step)
    covered = assemble_patches(weight, img.shape, size, step)
    blind = (covered == 0.0) & ~obs
    if blind.any():
        raise ValueError(f"{int(blind.sum())} missing pixel(s) (e.g. {np.argwhere(blind)[:3].tolist()}) lie in no "
                         f"{size}x{size} patch with an observed pixel: nothing to estimate them from; use a "
                         f"larger size")
    rec = np.where(covered > 0, total / np.where(covered > 0, covered, 1.0), 0.0)
    return np.where(obs, img, rec) if keep_observed else rec


# --------------------------------------------------------------------------- data


def inpainting_images(n_train: int | None = None, n_test: int = 6, crop: int = 64, seed: int = 0) -> dict:
    """Natural grey images for inpainting: training photographs and held-out crops.

    The split is by photograph (:data:`neurosim.data.images.TRAIN_IMAGES` /
    :data:`~neurosim.data.images.TEST_IMAGES`): training uses astronaut,
    camera, chelsea, grass, brick, rocket, china, flower and aero; the test
    crops come from coffee, gravel and ascent, so no test pixel was ever in a
    training patch. Pixels are the 8-bit grey levels scaled to ``[0, 1]``
    (luminance of colour photographs, ITU-R 601 weights), with no whitening
    or mean removal.

    Parameters
    ----------
    n_train : int, optional
        Number of training photographs, the first ``n_train`` of
        ``TRAIN_IMAGES`` (in ``[1, 9]``); default all 9.
    n_test : int
        Number of test crops (>= 1); crop ``i`` comes from
        ``TEST_IMAGES[i % 3]`` at a uniformly random position.
    crop : int
        Side of the square test crops, in ``[8, 400]`` (400 is the smallest
        side of a test photograph); small crops keep reconstruction fast.
    seed : int
        Seed of the crop positions (>= 0).

    Returns
    -------
    dict
        ``train``: list of training photographs (2-D float arrays in
        ``[0, 1]``); ``train_names``; ``test``: array ``(n_test, crop,
        crop)``; ``test_names``: the photograph of each crop;
        ``test_corners``: ``(n_test, 2)`` top-left ``(row, col)`` of each
        crop in its photograph.
    """
    n_train = len(TRAIN_IMAGES) if n_train is None else check_int("n_train", n_train, low=1, high=len(TRAIN_IMAGES))
    n_test = check_int("n_test", n_test, low=1)
    sources = [_load_one(n, True) for n in TEST_IMAGES]
    crop = check_int("crop", crop, low=8, high=min(min(im.shape) for im in sources))
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    train_names = TRAIN_IMAGES[:n_train]
    test, names, corners = np.empty((n_test, crop, crop)), [], np.empty((n_test, 2), dtype=np.int64)
    for i in range(n_test):
        k = i % len(TEST_IMAGES)
        im = sources[k]
        r = int(rng.integers(0, im.shape[0] - crop + 1))
        c = int(rng.integers(0, im.shape[1] - crop + 1))
        test[i] = im[r : r + crop, c : c + crop]
        names.append(TEST_IMAGES[k])
        corners[i] = (r, c)
    return {
        "train": [_load_one(n, True).copy() for n in train_names],
        "train_names": tuple(train_names),
        "test": test,
        "test_names": tuple(names),
        "test_corners": corners,
    }


class InpaintingPatchStream(ImagePatchStream):
    """Random raw patches of natural photographs, pixels in ``[0, 1]``.

    :class:`~neurosim.data.images.ImagePatchStream` (same sampling: a
    uniformly random photograph, a uniformly random position inside it,
    reproducible per step) on the unprocessed grey images: no whitening, no
    mean removal and no scaling, the data an inpainting dictionary is
    learned from (the test crops of :func:`inpainting_images` are on the
    same scale).

    Parameters
    ----------
    patch_size : int
        Side of the patches.
    images : str or sequence of str, optional
        Source photographs; default :data:`~neurosim.data.images.TRAIN_IMAGES`
        (disjoint from the photographs of the test crops).
    seed : int
        Root seed (>= 0).
    chunk : int
        Steps per independently seeded chunk.
    """

    def __init__(self, patch_size: int = 8, images=None, seed: int = 0, chunk: int = 1024):
        super().__init__(patch_size, images=TRAIN_IMAGES if images is None else images, whiten=False, seed=seed,
                         normalize="none", chunk=chunk, remove_mean=False)
        # The parent prepares images by subtracting each image's mean; the
        # raw [0, 1] photographs have the same shapes, so the parent's
        # sampling (per-image offsets, positions) applies unchanged.
        self._images = tuple(_load_one(n, True) for n in self.names)

    def params(self) -> dict:
        return {**super().params(), "pixels": "raw [0, 1]"}


class ObservedMeanRemovedStream(Stream):
    """A patch stream with each patch's *observed* mean removed: the training side of ``inpaint(remove_mean=True)``.

    Step ``t``'s patch ``x`` and mask ``m`` (nonzero = observed) give
    ``(x - mean of x over the observed pixels)`` at observed pixels and 0 at
    missing ones, so a dictionary learned from incomplete patches never
    reads a missing pixel, not even through the mean; without ``masks``
    every pixel is observed and this is the plain per-patch mean removal.
    A patch observing no pixel reads as all zeros. Feed the circuit the
    same ``masks`` stream (same seed) as its mask population, so that the
    masks agree step by step.

    Parameters
    ----------
    data : Stream
        E.g. :class:`InpaintingPatchStream`.
    masks : Stream, optional
        Observation masks of the same ``dim`` (e.g.
        :class:`~neurosim.streams.BernoulliMaskStream`).
    """

    def __init__(self, data: Stream, masks: Stream | None = None):
        if not isinstance(data, Stream):
            raise TypeError(f"data must be a neurosim Stream; got {type(data).__name__}")
        if masks is not None:
            if not isinstance(masks, Stream):
                raise TypeError(f"masks must be a neurosim Stream or None; got {type(masks).__name__}")
            if masks.dim != data.dim:
                raise ValueError(f"masks must have the dimension of the data ({data.dim}); got {masks.dim}")
        self.data, self.masks, self.dim = data, masks, data.dim

    def block(self, t0: int, n: int, batch: int = 1) -> np.ndarray:
        x = np.asarray(self.data.block(t0, n, batch), dtype=np.float64)
        if self.masks is None:
            m = np.ones_like(x)
        else:
            m = (np.asarray(self.masks.block(t0, n, batch)) != 0.0).astype(np.float64)
        x = np.where(m > 0, x, 0.0)
        count = m.sum(axis=-1, keepdims=True)
        mean = x.sum(axis=-1, keepdims=True) / np.where(count > 0, count, 1.0)
        out = (x - mean) * m
        out.flags.writeable = False
        return out

    def params(self) -> dict:
        return {"stream": "ObservedMeanRemovedStream", "dim": int(self.dim), "masked": int(self.masks is not None),
                **{f"data_{k}": v for k, v in self.data.params().items()}}
