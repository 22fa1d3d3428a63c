"""Ground-truth dictionaries and the sparse example generator of paper 004.

Tsuchida & Cottrell (2015), "Example selection for dictionary learning",
Sec. 2 (Eq. 1) and Sec. 4 (Fig. 2): examples are generated from a known
dictionary ``A*`` with exactly ``k`` positive, exponentially distributed
activations and white Gaussian noise, and learning is scored against ``A*``.

Layout
------
Dictionaries are returned in the PAPER's layout: ``A`` of shape ``(P, K)``,
one unit-norm element per COLUMN (``P = side * side`` pixels of a patch,
row-major, ``K`` elements). The framework's circuits hold atoms as rows, so
they use ``A.T``. Samples are ROWS everywhere here: ``X`` of shape
``(N, P)``, activations ``S`` of shape ``(N, K)``, noise of shape ``(N, P)``;
sample ``i`` is ``X[i] = A @ S[i] + noise[i]`` (Eq. 1).

Both dictionaries are deterministic, offline and bit-identical across runs.
"""

from __future__ import annotations

import string
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_float, check_int
from neurosim.streams import ChunkedRandomStream

__all__ = [
    "gabor_dictionary",
    "alphanumeric_dictionary",
    "ALPHANUMERIC_GLYPHS",
    "noise_variance",
    "sparse_examples",
    "SparseDictionaryStream",
]

# --------------------------------------------------------------------------- #
# Gabor dictionary (paper 004, Sec. 4, Fig. 2a)
# --------------------------------------------------------------------------- #
#: spatial frequencies of the Gabor grid, cycles per pixel
GABOR_FREQUENCIES = (0.15, 0.30)
#: carrier phases (cosine and sine Gabors)
GABOR_PHASES = (0.0, np.pi / 2)
#: envelope standard deviation times frequency: sigma = 0.6 / f pixels
GABOR_SIGMA_CYCLES = 0.6
#: the number of carrier orientations is max(this, ceil(n_elements / 20))
GABOR_MIN_ORIENTATIONS = 4


def _gabor_patch(side: int, x0: float, y0: float, theta: float, freq: float, phase: float, sigma: float) -> np.ndarray:
    y, x = np.mgrid[0:side, 0:side].astype(np.float64)
    xr = (x - x0) * np.cos(theta) + (y - y0) * np.sin(theta)
    yr = -(x - x0) * np.sin(theta) + (y - y0) * np.cos(theta)
    g = np.exp(-(xr * xr + yr * yr) / (2.0 * sigma * sigma)) * np.cos(2.0 * np.pi * freq * xr + phase)
    g = g - g.mean()
    return g.ravel() / np.linalg.norm(g)


@lru_cache(maxsize=16)
def _gabor_cached(n_elements: int, side: int) -> np.ndarray:
    n_theta = max(GABOR_MIN_ORIENTATIONS, -(-n_elements // 20))
    c = (side - 1) / 2.0
    off = side / 8.0
    centres = [(c, c), (c - off, c - off), (c + off, c - off), (c - off, c + off), (c + off, c + off)]
    cols = []
    # orientation varies fastest and position slowest, so that truncating the
    # grid (n_elements < 20 * n_theta) keeps every orientation and the centre
    for x0, y0 in centres:
        for f in GABOR_FREQUENCIES:
            for ph in GABOR_PHASES:
                for i in range(n_theta):
                    cols.append(_gabor_patch(side, x0, y0, np.pi * i / n_theta, f, ph, GABOR_SIGMA_CYCLES / f))
                    if len(cols) == n_elements:
                        A = np.ascontiguousarray(np.array(cols).T)
                        A.setflags(write=False)
                        return A
    raise AssertionError("unreachable: the grid has 20 * n_theta >= n_elements elements")


def gabor_dictionary(n_elements: int = 100, side: int = 8) -> np.ndarray:
    """The Gabor ground-truth dictionary of paper 004 (Sec. 4, Fig. 2a).

    A deterministic grid of ``side x side`` Gabor patches
    ``g(x, y) = exp(-(x'^2 + y'^2) / (2 sigma^2)) cos(2 pi f x' + phi)`` with
    ``x' = (x - x0) cos(theta) + (y - y0) sin(theta)`` (pixels indexed
    ``[y, x]``), each made zero-mean and then unit-norm. The grid is

    * 5 centres ``(x0, y0)``: the patch centre ``c = (side - 1) / 2`` and the
      four points ``c +- side / 8`` (one pixel for ``side = 8``),
    * 2 frequencies ``f`` in :data:`GABOR_FREQUENCIES` (0.15 and 0.30 cycles
      per pixel) with an isotropic envelope ``sigma = 0.6 / f`` (4 and 2
      pixels),
    * 2 phases ``phi`` (0 and pi/2: even and odd Gabors),
    * ``n_theta = max(4, ceil(n_elements / 20))`` orientations
      ``theta = pi i / n_theta``,

    enumerated with the orientation varying fastest, then phase, frequency
    and centre, and cut after ``n_elements``. For the paper's ``K = 100``
    this is the full 5 x 2 x 2 x 5 grid (orientations 36 degrees apart), with
    mutual coherence ``mu = 0.972`` and average coherence ``mu-bar = 0.120``
    (the paper reports 0.97 and 0.13). Other ``n_elements`` (the ``K`` sweep
    of Fig. 4) use more orientations, or fewer grid points.

    Parameters
    ----------
    n_elements : int
        ``K``, the number of elements, in ``[1, 1000]``.
    side : int
        Patch side in pixels, in ``[4, 64]``; ``P = side ** 2``.

    Returns
    -------
    numpy.ndarray, shape (P, K)
        The paper's layout: element ``j`` is column ``A[:, j]`` (unit norm,
        zero mean), a row-major ``side x side`` patch. A fresh writable copy.
    """
    n_elements = check_int("n_elements", n_elements, low=1, high=1000)
    side = check_int("side", side, low=4, high=64)
    return _gabor_cached(n_elements, side).copy()


# --------------------------------------------------------------------------- #
# Alphanumeric dictionary (paper 004, Sec. 4, Fig. 2b)
# --------------------------------------------------------------------------- #
#: the 64 glyphs, in element order: digits, upper case, lower case, '?', '&'
ALPHANUMERIC_GLYPHS = string.digits + string.ascii_uppercase + string.ascii_lowercase + "?&"
#: sub-samples per pixel along each axis when measuring glyph coverage
_SUPERSAMPLE = 16


def _glyph_polygons():
    from matplotlib.font_manager import FontProperties, findfont
    from matplotlib.path import Path
    from matplotlib.textpath import TextPath

    # matplotlib ships DejaVu Sans and resolves the family to its own file, so
    # no system font (which would differ between machines) is ever used
    fname = findfont(FontProperties(family="DejaVu Sans"), fallback_to_default=True)
    prop = FontProperties(fname=fname)
    return [
        [Path(p) for p in TextPath((0.0, 0.0), ch, size=1.0, prop=prop).to_polygons(closed_only=True)]
        for ch in ALPHANUMERIC_GLYPHS
    ]


def _render_glyphs(side: int) -> np.ndarray:
    polys = _glyph_polygons()
    boxes = []
    for ps in polys:
        v = np.concatenate([p.vertices for p in ps])
        boxes.append((v.min(axis=0), v.max(axis=0)))
    # one scale for all glyphs (the largest ink box fits the patch), so that
    # case pairs such as O/o or Z/z stay different sizes as in the font
    extent = max(float(np.max(hi - lo)) for lo, hi in boxes)
    scale = side / extent
    u = (np.arange(side * _SUPERSAMPLE) + 0.5) / _SUPERSAMPLE
    X, Y = np.meshgrid(u, u)
    out = np.empty((len(polys), side, side))
    for g, (ps, (lo, hi)) in enumerate(zip(polys, boxes)):
        cx, cy = (lo + hi) / 2.0
        pts = np.column_stack([((X - side / 2) / scale + cx).ravel(), (-(Y - side / 2) / scale + cy).ravel()])
        # even-odd rule over the glyph's contours: a counter (the hole of
        # 'O', 'A', '8') lies inside two contours and is left empty
        parity = np.zeros(pts.shape[0], dtype=bool)
        for p in ps:
            parity ^= p.contains_points(pts)
        cover = parity.reshape(side, _SUPERSAMPLE, side, _SUPERSAMPLE).mean(axis=(1, 3))
        out[g] = cover
    return out


@lru_cache(maxsize=8)
def _alphanumeric_cached(side: int) -> np.ndarray:
    glyphs = _render_glyphs(side)
    cols = []
    for j, img in enumerate(glyphs):
        g = (np.rot90(img, j % 4) * (-1.0) ** j).ravel()
        g = g - g.mean()
        cols.append(g / np.linalg.norm(g))
    A = np.ascontiguousarray(np.array(cols).T)
    A.setflags(write=False)
    return A


def alphanumeric_dictionary(side: int = 8) -> np.ndarray:
    """The alphanumeric ground-truth dictionary of paper 004 (Sec. 4, Fig. 2b).

    64 glyphs, :data:`ALPHANUMERIC_GLYPHS` in this order: ``0-9``, ``A-Z``,
    ``a-z`` (62) and the two extra glyphs ``'?'`` and ``'&'``, drawn from
    matplotlib's bundled DejaVu Sans outlines (``matplotlib.textpath``; no
    system font, no network). Rendering: all glyphs share one scale, at which
    the largest ink bounding box (width or height) of the 64 spans the
    ``side`` pixels; each glyph is centred on its own ink box; a pixel's
    value is the fraction of its ``16 x 16`` sub-pixel centres inside the
    outline (even-odd rule, so counters are holes).

    "Alternating rotations and signs": element ``j`` is the glyph image
    rotated by ``90 * (j mod 4)`` degrees counter-clockwise (``np.rot90(img,
    j % 4)``) and multiplied by ``(-1) ** j``. It is then made zero-mean and
    unit-norm. The paper does not say whether its glyphs are zero-mean;
    zero-mean elements have ``mu = 0.955``, ``mu-bar = 0.306`` and raw ones
    ``mu = 0.963``, ``mu-bar = 0.471`` (paper: 0.95 and 0.34), so the
    zero-mean reading is the one closer to the paper's pair.

    Parameters
    ----------
    side : int
        Patch side in pixels, in ``[4, 64]``; ``P = side ** 2``.

    Returns
    -------
    numpy.ndarray, shape (P, 64)
        The paper's layout: element ``j`` (glyph ``ALPHANUMERIC_GLYPHS[j]``)
        is column ``A[:, j]``, a row-major ``side x side`` patch, zero-mean
        and unit-norm. Bit-identical across calls; a fresh writable copy.
    """
    side = check_int("side", side, low=4, high=64)
    return _alphanumeric_cached(side).copy()


# --------------------------------------------------------------------------- #
# The generative model (paper 004, Eq. 1)
# --------------------------------------------------------------------------- #
_UNIT_NORM_TOL = 1e-8


def _check_dictionary(A) -> np.ndarray:
    A = check_array("A", A, ndim=2)
    if A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"A must have shape (P >= 1, K >= 1); got {A.shape}")
    norms = np.sqrt(np.einsum("pk,pk->k", A, A))
    bad = np.flatnonzero(~(np.abs(norms - 1.0) <= _UNIT_NORM_TOL))
    if bad.size:
        raise ValueError(
            f"A must have unit-norm columns (Eq. 1: A* in C_A, |  ||a_j|| - 1 | <= {_UNIT_NORM_TOL}); "
            f"columns {bad[:10].tolist()} have norms {norms[bad[:10]].tolist()}"
        )
    return A


def _check_model(A: Any, k: Any, snr_db: Any, rate: Any) -> tuple[np.ndarray, int, float, float]:
    A = _check_dictionary(A)
    k = check_int("k", k, low=1, high=A.shape[1])
    snr_db = check_float("snr_db", snr_db, low=-200.0, high=200.0)
    # bounded so that E s^2 = 2 / rate^2 and the noise variance stay finite and nonzero
    rate = check_float("rate", rate, low=1e-100, high=1e100)
    return A, k, snr_db, rate


def _signal_power(A: np.ndarray, k: int, rate: float) -> float:
    P, K = A.shape
    m1, m2 = 1.0 / rate, 2.0 / (rate * rate)  # E s and E s^2 of s ~ Exp(rate)
    sq = float(np.einsum("pk,pk->", A, A))  # sum_j ||a_j||^2
    col_sum = A.sum(axis=1)
    cross = float(col_sum @ col_sum) - sq  # sum_{i != j} a_i . a_j
    pair = k * (k - 1) / (K * (K - 1)) if K > 1 else 0.0
    return (k / K) * m2 * sq + pair * m1 * m1 * cross


def noise_variance(A: ArrayLike, k: int = 5, snr_db: float = 6.0, rate: float = 1.0) -> float:
    """Noise variance ``sigma_eps^2`` that gives examples the SNR ``snr_db``.

    The SNR is the ratio of expected signal to expected noise energy per
    example, ``10 log10(E||A s||^2 / E||eps||^2)`` with ``E||eps||^2 = P
    sigma^2``, so ``sigma^2 = E||A s||^2 / (P 10^(snr_db / 10))`` (the
    paper's "SNR of about 6 dB", Sec. 4). In closed form, for the support a
    uniformly random ``k``-subset of the ``K`` elements and the nonzero
    magnitudes i.i.d. ``Exp(rate)`` (Eq. 1; ``E s = 1/rate``, ``E s^2 =
    2/rate^2``)::

        E||A s||^2 = (k/K) (2/rate^2) sum_j ||a_j||^2
                     + k(k-1)/(K(K-1)) (1/rate^2) sum_{i != j} a_i . a_j

    since an element is active with probability ``k/K`` and a pair with
    probability ``k(k-1)/(K(K-1))``; ``sum_{i != j} a_i . a_j = ||A 1||^2 -
    sum_j ||a_j||^2``. (Sec. 4.2 of the paper writes the SNR as ``10
    log10(2 lambda^2 / sigma^2)``, which is not the same quantity; this
    function follows Sec. 4's per-example definition.)

    Parameters
    ----------
    A : array_like, shape (P, K)
        Dictionary in the paper's layout, columns unit-norm (to 1e-8).
    k : int
        Nonzero activations per example, in ``[1, K]``.
    snr_db : float
        Target SNR in dB, finite, in ``[-200, 200]``.
    rate : float
        ``lambda`` of ``Exp(lambda)``, in ``[1e-100, 1e100]``.

    Returns
    -------
    float
        ``sigma_eps^2`` (0 only when the expected signal energy is 0).
    """
    A, k, snr_db, rate = _check_model(A, k, snr_db, rate)
    return _signal_power(A, k, rate) / (A.shape[0] * 10.0 ** (snr_db / 10.0))


def _rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        raise TypeError("rng must be a numpy.random.Generator or a non-negative integer seed; got None")
    return np.random.default_rng(check_int("rng", rng, low=0))


def _draw(A, n_samples, k, sigma, rate, rng):
    N, (P, K) = n_samples, A.shape
    # the k smallest of K i.i.d. uniforms sit at a uniformly random k-subset
    support = np.argpartition(rng.random((N, K)), k - 1, axis=1)[:, :k] if k < K else np.tile(np.arange(K), (N, 1))
    S = np.zeros((N, K))
    np.put_along_axis(S, support, rng.exponential(1.0 / rate, size=(N, k)), axis=1)
    noise = rng.standard_normal((N, P)) * sigma
    X = S @ A.T + noise
    return X, S, noise


def sparse_examples(A: ArrayLike, n_samples: int, k: int = 5, snr_db: float = 6.0, rate: float = 1.0,
                    rng: np.random.Generator | int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw examples from the generative model of paper 004, Eq. 1.

    ``x = A s + eps``: each ``s`` has exactly ``k`` nonzero entries on a
    uniformly random support (``k`` distinct elements), their magnitudes
    i.i.d. ``Exp(rate)``; ``eps ~ N(0, sigma^2 I)`` with ``sigma^2 =``
    :func:`noise_variance` ``(A, k, snr_db, rate)``.

    Draw order from ``rng`` (fixed, so that a stream can regenerate a
    step): ``N x K`` uniforms for the supports, ``N x k`` exponentials
    (row-major, the supports' order), ``N x P`` standard normals.

    Parameters
    ----------
    A : array_like, shape (P, K)
        Dictionary in the paper's layout, columns unit-norm (to 1e-8).
    n_samples : int
        ``N >= 0``.
    k : int
        Nonzero activations per example, in ``[1, K]``.
    snr_db : float
        SNR in dB, see :func:`noise_variance`.
    rate : float
        ``lambda`` of ``Exp(lambda)``, in ``[1e-100, 1e100]``.
    rng : numpy.random.Generator or int
        The generator (advanced in place) or a seed ``>= 0``.

    Returns
    -------
    X : numpy.ndarray, shape (N, P)
        Examples as rows, ``X = S @ A.T + noise``.
    S : numpy.ndarray, shape (N, K)
        True activations.
    noise : numpy.ndarray, shape (N, P)
        The noise ``eps``.
    """
    A, k, snr_db, rate = _check_model(A, k, snr_db, rate)
    n_samples = check_int("n_samples", n_samples, low=0)
    rng = _rng(rng)
    sigma = np.sqrt(_signal_power(A, k, rate) / (A.shape[0] * 10.0 ** (snr_db / 10.0)))
    return _draw(A, n_samples, k, sigma, rate, rng)


class SparseDictionaryStream(ChunkedRandomStream):
    """Random-access stream of epochs of examples from Eq. 1 (paper 004).

    Step ``t`` is one epoch: ``block(t, 1, batch)[0]`` is the ``(batch, P)``
    training set ``X_N`` of epoch ``t`` with ``N = batch`` (Alg. 1, step 1),
    drawn by :func:`sparse_examples` from the generator
    ``default_rng(SeedSequence(seed, spawn_key=(t,)))`` (one step per chunk,
    since a step is already a whole epoch). So the examples of a step do not
    depend on how a run is cut into blocks, and :meth:`truth` regenerates
    the activations and noise behind them.

    Parameters
    ----------
    A : array_like, shape (P, K)
        Ground-truth dictionary in the paper's layout, columns unit-norm.
    k : int
        Nonzero activations per example, in ``[1, K]``.
    snr_db : float
        Per-example SNR in dB (:func:`noise_variance`).
    rate : float
        ``lambda`` of the activations' ``Exp(lambda)``, in ``[1e-100, 1e100]``.
    seed : int
        Root seed, ``>= 0``.

    Attributes
    ----------
    A : numpy.ndarray, shape (P, K)
        Read-only copy of the dictionary.
    noise_var : float
        ``sigma_eps^2``.
    """

    def __init__(self, A, k: int = 5, snr_db: float = 6.0, rate: float = 1.0, seed: int = 0):
        A, k, snr_db, rate = _check_model(A, k, snr_db, rate)
        super().__init__(dim=A.shape[0], seed=seed, chunk=1)
        self.A = A.copy()
        self.A.setflags(write=False)
        self.k, self.snr_db, self.rate = k, snr_db, rate
        self.noise_var = _signal_power(self.A, k, rate) / (self.A.shape[0] * 10.0 ** (snr_db / 10.0))
        self._sigma = float(np.sqrt(self.noise_var))

    def _rng_of(self, t: int) -> np.random.Generator:
        # the generator ChunkedRandomStream._chunk gives chunk t (chunk = 1)
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(t,)))

    def _draw(self, rng, t0, n, batch):
        X, _, _ = _draw(self.A, batch, self.k, self._sigma, self.rate, rng)
        return X[None]

    def truth(self, t: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
        """True activations and noise of step ``t`` (the draws behind ``block``).

        Parameters
        ----------
        t : int
            Step (epoch), ``>= 0``.
        batch : int
            Examples per step, ``>= 1``; must be the ``batch`` given to
            :meth:`block` for the result to match it.

        Returns
        -------
        S : numpy.ndarray, shape (batch, K)
        noise : numpy.ndarray, shape (batch, P)
            ``block(t, 1, batch)[0] == S @ A.T + noise``, bit for bit.
        """
        t = check_int("t", t, low=0)
        batch = check_int("batch", batch, low=1)
        _, S, noise = _draw(self.A, batch, self.k, self._sigma, self.rate, self._rng_of(t))
        return S, noise

    def params(self) -> dict:
        return {**super().params(), "n_elements": int(self.A.shape[1]), "k": self.k, "snr_db": self.snr_db,
                "rate": self.rate}
