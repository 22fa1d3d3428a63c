"""Receptive-field analysis of learned bases: Gabor fits and V1-style tests.

Conventions
-----------
* Images and bases are ``p x p`` arrays indexed ``[row, col]``; positions are
  ``(x, y) = (col, row)`` in pixels, with ``y`` growing downwards.
* Angles are in radians. A Gabor's ``theta`` is the direction of its wave
  vector (the carrier varies along ``x' = (x-x0) cos(theta) + (y-y0) sin(theta)``),
  so its stripes - and its preferred bar - run along ``theta + pi/2``.
  A bar's ``orientation`` is the direction of its long axis.
* A dictionary ``D`` has shape ``(n_atoms, p*p)`` and stimuli ``X`` shape
  ``(n, p*p)``, as in :mod:`neurosim.coding`.

Responses as sparse-code coefficients
-------------------------------------
Following Lee et al. (2006, section 5.3), the *response of unit j* to a
stimulus ``x`` is the coefficient ``a_j`` of the sparse code of ``x`` on the
**whole** dictionary,
``a = argmin 0.5 ||x - D^T a||^2 + lam ||a||_1`` (feature-sign search by
default). Units interact only through this inference: a stimulus that is
better explained by other bases takes activation away from unit ``j``, which
is the mechanism the paper proposes for end-stopping and surround
suppression. Because the L1 code is odd (``a(-x) = -a(x)``), a bar of the
opposite contrast gives the opposite coefficient; every test therefore fixes
a unit's preferred *polarity* ``s`` (+1 bright bar, -1 dark bar) and reports
``s * a_j``.

Stimulus protocol reconstructed from the paper
----------------------------------------------
The paper's description is three sentences long; these are the choices made
here, each one a stated assumption.

1. **Bars** (:func:`bar_image`) are 1-pixel-wide anti-aliased line segments
   (pixel value = area fraction inside the rectangle, 4x4 supersampling) of
   amplitude ``contrast`` on a zero background, and, like the training
   patches, have their mean removed (the bases were learned on mean-free
   patches, so a DC offset is outside what the code was trained to explain).
   The default contrast 1.0 is about 3 standard deviations of a whitened
   pixel (image variance 0.1, see :mod:`neurosim.data.images`).
2. **Optimal bar** (:func:`find_optimal_bars`): "random bars with different
   orientations and lengths" is implemented as an exhaustive bank - every
   centre on the pixel grid at least 2 pixels from the border, 12
   orientations (15 degree steps) and lengths 3, 6 and 10 pixels, both
   polarities. The optimal bar of unit ``j`` maximises ``s * a_j``.
3. **Significantly activated**: a unit qualifies for the end-stopping test if
   its optimal-bar response is at least ``min_rel`` (default 0.25) of the
   largest coefficient in that stimulus' code and is among the ``top_k``
   (default 3) largest coefficients; the paper gives no number.
4. **Length tuning** (:func:`length_tuning`): at the optimal centre,
   orientation and polarity the length runs from 1 pixel to the patch
   diagonal ``ceil(p sqrt 2)`` (the bar is clipped by the patch), and responses are reported
   relative to the unit's maximum over lengths. A unit is *end-stopped* if its
   response at the longest bar is below ``1 - drop`` of its peak.
5. **nCRF surround** (:func:`surround_suppression`): the centre stimulus is
   the unit's optimal bar (as found in 2). The classical receptive field
   (CRF) is the unit's Gabor envelope out to 2 standard deviations (the
   ellipse ``(x'/sigma_x)^2 + (y'/sigma_y)^2 <= 4`` of its fit, the region
   holding ~86 % of a Gaussian's mass). The "aligned bar stimulus in the
   surround" is an iso-oriented grating of parallel 1-pixel bars of the same
   orientation and polarity, in phase with the centre bar, with the period
   of the unit's preferred spatial frequency (``1/freq`` of its Gabor fit,
   rounded and clipped to 3 .. 7 pixels), shown only outside the CRF and
   farther than ``gap`` (default 2) pixels from the centre bar - collinear
   continuations and parallel flanks both count as "aligned", as in the
   iso-oriented surround gratings of Cavanaugh et al. (2002). Suppression is
   ``1 - r(centre + surround) / r(centre)``; the paper counted units with
   any suppression and with more than 10 %.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_float, check_int

__all__ = [
    "GaborParams",
    "gabor",
    "fit_gabor",
    "fit_gabors",
    "gratings",
    "bar_image",
    "tile_bases",
    "encode_stimuli",
    "find_optimal_bars",
    "length_tuning",
    "surround_stimulus",
    "surround_suppression",
]


# --------------------------------------------------------------------------- Gabor model


@dataclass(frozen=True)
class GaborParams:
    """Parameters of a 2-D Gabor function (see :func:`gabor`).

    Parameters
    ----------
    x0, y0 : float
        Centre (column, row) in pixels.
    theta : float
        Direction of the wave vector, radians in ``[0, pi)``.
    freq : float
        Spatial frequency of the carrier, cycles per pixel.
    phase : float
        Carrier phase at the centre, radians in ``[0, 2 pi)``.
    sigma_x, sigma_y : float
        Envelope standard deviations across (along the wave vector) and
        along the stripes, in pixels.
    amp : float
        Peak amplitude (>= 0).
    """

    x0: float
    y0: float
    theta: float
    freq: float
    phase: float
    sigma_x: float
    sigma_y: float
    amp: float

    def as_array(self) -> np.ndarray:
        """The parameters as an array, in field order (``x0, y0, theta, freq, phase, sigma_x, sigma_y, amp``).

        Returns
        -------
        numpy.ndarray, shape (8,)
            One row of :func:`fit_gabors`' output.
        """
        return np.array([self.x0, self.y0, self.theta, self.freq, self.phase, self.sigma_x, self.sigma_y, self.amp])

    def asdict(self) -> dict[str, float]:
        """The parameters as ``{field: value}``.

        Returns
        -------
        dict
            Keys in field order.
        """
        return asdict(self)


_FIELDS = ("x0", "y0", "theta", "freq", "phase", "sigma_x", "sigma_y", "amp")


def _gabor_terms(v, xx, yy):
    """``x', y'`` of the pixels ``xx, yy`` (see :func:`gabor`), ``cos theta``, ``sin theta``, the envelope and the
    carrier's argument ``2 pi freq x' + phase``: what :func:`_gabor_flat` and :func:`_gabor_jac` share."""
    x0, y0, th, f, ph, sx, sy, _ = v
    dx, dy = xx - x0, yy - y0
    c, s = np.cos(th), np.sin(th)
    xr = dx * c + dy * s
    yr = -dx * s + dy * c
    return xr, yr, c, s, np.exp(-0.5 * ((xr / sx) ** 2 + (yr / sy) ** 2)), 2 * np.pi * f * xr + ph


def _gabor_flat(v, xx, yy):
    _, _, _, _, E, arg = _gabor_terms(v, xx, yy)
    return v[7] * E * np.cos(arg)


def _gabor_jac(v, xx, yy):
    """Analytic Jacobian of :func:`_gabor_flat` (columns in parameter order)."""
    _, _, _, f, _, sx, sy, a = v
    xr, yr, c, s, E, arg = _gabor_terms(v, xx, yy)
    EC, ES = E * np.cos(arg), E * np.sin(arg)
    d_xr = a * (-xr / sx**2 * EC - 2 * np.pi * f * ES)
    d_yr = a * (-yr / sy**2 * EC)
    J = np.empty((xx.size, 8))
    J[:, 0] = -c * d_xr + s * d_yr
    J[:, 1] = -s * d_xr - c * d_yr
    J[:, 2] = yr * d_xr - xr * d_yr
    J[:, 3] = -a * ES * 2 * np.pi * xr
    J[:, 4] = -a * ES
    J[:, 5] = a * EC * xr**2 / sx**3
    J[:, 6] = a * EC * yr**2 / sy**3
    J[:, 7] = EC
    return J


def gabor(params: GaborParams | ArrayLike, shape: tuple[int, int]) -> np.ndarray:
    """Evaluate a Gabor function on a pixel grid.

    ``g(x, y) = amp * exp(-x'^2 / (2 sigma_x^2) - y'^2 / (2 sigma_y^2)) * cos(2 pi freq x' + phase)``
    with ``x' = (x-x0) cos(theta) + (y-y0) sin(theta)``,
    ``y' = -(x-x0) sin(theta) + (y-y0) cos(theta)``.

    Parameters
    ----------
    params : GaborParams or sequence of 8 floats
        In the order of :class:`GaborParams`.
    shape : int or (int, int)
        Image shape ``(rows, cols)``; an int means square.

    Returns
    -------
    numpy.ndarray
        The Gabor image of the given shape.
    """
    v = params.as_array() if isinstance(params, GaborParams) else check_array("params", params, shape=(8,))
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape), int(shape))
    h, w = (check_int("shape", s, low=1) for s in shape)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    return _gabor_flat(v, xx, yy)


def _canonical(v) -> GaborParams:
    """Map equivalent Gabor parameters to one representative.

    ``(theta + pi, -phase)`` describes the same function, as does
    ``(amp, phase) -> (-amp, phase + pi)``; fix ``amp >= 0`` and
    ``theta in [0, pi)``.
    """
    x0, y0, th, f, ph, sx, sy, a = (float(t) for t in v)
    if a < 0:
        a, ph = -a, ph + np.pi
    th = th % (2 * np.pi)
    if th >= np.pi:
        th, ph = th - np.pi, -ph
    return GaborParams(x0, y0, th, f, ph % (2 * np.pi), abs(sx), abs(sy), a)


def fit_gabor(basis_2d: ArrayLike, n_init: int = 3) -> tuple[GaborParams, float]:
    """Least-squares fit of a 2-D Gabor function to a basis.

    Initial guesses come from the basis' Fourier transform: the ``n_init``
    largest peaks of the zero-padded amplitude spectrum (one per half-plane,
    at least 2 bins apart) give frequency and orientation; the centre is the
    energy-weighted centroid of the basis; the phase is the angle of the
    carrier's projection at that centre; each peak is tried with two envelope
    sizes. Every guess is refined by ``scipy.optimize.least_squares``
    (trust-region reflective, bounded: centre within one pixel of the patch,
    frequency in ``[0.02, 0.5]`` cycles/pixel, envelope widths in
    ``[0.4, 2p]`` pixels) and the best fit is kept. Several starts matter:
    a single start often locks onto a low-frequency blob or the wrong
    spectral peak.

    Parameters
    ----------
    basis_2d : array_like, shape (p, q)
        The basis as an image.
    n_init : int
        Number of spectral peaks used as starting frequencies (>= 1).

    Returns
    -------
    params : GaborParams
        Best-fitting parameters (canonical: ``amp >= 0``, ``theta in [0, pi)``).
    r2 : float
        Coefficient of determination ``1 - SS_res / SS_tot`` of the fit over
        the pixels (``SS_tot`` about the basis mean); 0 for a constant basis.
    """
    from scipy.optimize import least_squares

    b = check_array("basis_2d", basis_2d, ndim=2)
    n_init = check_int("n_init", n_init, low=1)
    h, w = b.shape
    ss_tot = float(np.sum((b - b.mean()) ** 2))
    if ss_tot <= 1e-300:
        return GaborParams((w - 1) / 2, (h - 1) / 2, 0.0, 0.1, 0.0, 1.0, 1.0, 0.0), 0.0
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    xf, yf, bf = xx.ravel(), yy.ravel(), b.ravel()

    # Spectral peaks of the zero-padded basis (4x padding for a fine grid).
    pad = 4 * max(h, w)
    spec = np.abs(np.fft.fft2(b - b.mean(), s=(pad, pad)))
    fy = np.fft.fftfreq(pad)[:, None] * np.ones((1, pad))
    fx = np.fft.fftfreq(pad)[None, :] * np.ones((pad, 1))
    half = (fx > 0) | ((fx == 0) & (fy > 0))  # one of each +-f pair
    spec_h = np.where(half, spec, 0.0)
    peaks: list[tuple[float, float]] = []
    for idx in np.argsort(spec_h.ravel())[::-1]:
        r, c = divmod(int(idx), pad)
        cand = (fx[r, c], fy[r, c])
        if all(np.hypot(cand[0] - p[0], cand[1] - p[1]) > 2.0 / pad * 4 for p in peaks):
            peaks.append(cand)
        if len(peaks) == n_init:
            break

    energy = b**2
    cx = float((energy * xx).sum() / energy.sum())
    cy = float((energy * yy).sum() / energy.sum())
    amp0 = float(np.abs(b).max())
    lo = [-1.0, -1.0, -4 * np.pi, 0.02, -8 * np.pi, 0.4, 0.4, 0.0]
    hi = [w, h, 4 * np.pi, 0.5, 8 * np.pi, 2.0 * max(h, w), 2.0 * max(h, w), 10 * amp0 + 1e-12]

    def resid(v):
        return _gabor_flat(v, xf, yf) - bf

    def jac(v):
        return _gabor_jac(v, xf, yf)

    best, best_cost = None, np.inf
    for pfx, pfy in peaks:
        f = float(np.clip(np.hypot(pfx, pfy), 0.03, 0.49))
        th = float(np.arctan2(pfy, pfx))
        xr = (xf - cx) * np.cos(th) + (yf - cy) * np.sin(th)
        ph = float(np.angle(np.sum(bf * np.exp(-2j * np.pi * f * xr))))
        for sig in (0.35 / f, 0.2 * max(h, w)):  # about one carrier period; a wide envelope
            sig = float(np.clip(sig, 0.6, max(h, w)))
            v0 = np.array([cx, cy, th, f, ph, sig, 1.5 * sig, amp0])
            v0 = np.clip(v0, np.array(lo) + 1e-9, np.array(hi) - 1e-9)
            try:
                res = least_squares(
                    resid, v0, jac=jac, bounds=(lo, hi), method="trf", max_nfev=100, x_scale="jac", ftol=1e-6, xtol=1e-6
                )
            except (ValueError, np.linalg.LinAlgError):  # degenerate start; others remain
                continue
            if res.cost < best_cost:
                best, best_cost = res.x, res.cost
        # R^2 > 0.9 from the strongest spectral peak: the other peaks are
        # side lobes of the same Gabor, and trying them only costs time.
        if best_cost < 0.05 * ss_tot:
            break
    if best is None:
        return GaborParams(cx, cy, 0.0, 0.1, 0.0, 1.0, 1.0, 0.0), 0.0
    r2 = 1.0 - 2.0 * best_cost / ss_tot
    return _canonical(best), float(r2)


def fit_gabors(D: ArrayLike, patch_size: int | None = None, n_init: int = 3,
               progress: Callable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fit a Gabor to every row of a dictionary.

    Parameters
    ----------
    D : array_like, shape (n_atoms, p*p)
        Bases as rows.
    patch_size : int, optional
        ``p``; inferred from the row length when it is a perfect square.
    n_init : int
        Passed to :func:`fit_gabor`.
    progress : callable, optional
        Called as ``progress(j)`` after each fit.

    Returns
    -------
    params : numpy.ndarray, shape (n_atoms, 8)
        One :class:`GaborParams` per row, in field order.
    r2 : numpy.ndarray, shape (n_atoms,)
    """
    D = check_array("D", D, ndim=2)
    p = _patch_side(D.shape[1], patch_size)
    params = np.empty((D.shape[0], 8))
    r2 = np.empty(D.shape[0])
    for j, row in enumerate(D):
        g, r2[j] = fit_gabor(row.reshape(p, p), n_init=n_init)
        params[j] = g.as_array()
        if progress is not None:
            progress(j)
    return params, r2


def _patch_side(n_features: int, patch_size) -> int:
    if patch_size is None:
        p = int(round(np.sqrt(n_features)))
        if p * p != n_features:
            raise ValueError(f"cannot infer patch_size: {n_features} features is not a perfect square")
        return p
    p = check_int("patch_size", patch_size, low=1)
    if p * p != n_features:
        raise ValueError(f"patch_size {p} does not match {n_features} features (need {p * p})")
    return p


# --------------------------------------------------------------------------- stimuli


def gratings(
    size: int,
    orientations: float | Sequence[float],
    frequencies: float | Sequence[float],
    phases: float | Sequence[float] = (0.0,),
    *,
    contrast: float = 1.0,
    square: bool = False,
    center: tuple[float, float] | None=None,
    radius: float | None = None,
    inner_radius: float | None = None,
) -> np.ndarray:
    """Sinusoidal (or square-wave) gratings, optionally in a disk or annulus.

    The grating is ``contrast * cos(2 pi f (x cos(o) + y sin(o)) + phase)``
    with ``(x, y)`` measured from ``center``; ``o`` is the direction of the
    wave vector (stripes run along ``o + pi/2``), like a Gabor's ``theta``.

    Parameters
    ----------
    size : int
        Side of the square image.
    orientations, frequencies, phases : float or sequence of float
        Wave-vector directions (radians), frequencies (cycles/pixel, in
        ``[0, 0.5]``) and phases (radians); all combinations are returned.
    contrast : float
        Amplitude (>= 0).
    square : bool
        Square wave ``contrast * sign(cos(...))`` instead of a sinusoid.
    center : (float, float), optional
        ``(x, y)`` of the phase origin and aperture; default the image centre.
    radius : float, optional
        Keep only pixels with distance < ``radius`` from ``center`` (a
        classical-receptive-field aperture).
    inner_radius : float, optional
        Blank pixels with distance < ``inner_radius`` (with ``radius`` this
        gives an annulus, i.e. a surround-only grating).

    Returns
    -------
    numpy.ndarray, shape (n_orientations, n_frequencies, n_phases, size, size)
    """
    size = check_int("size", size, low=1)
    contrast = check_float("contrast", contrast, low=0.0)
    ori = np.atleast_1d(check_array("orientations", orientations, ndim=(0, 1)))
    fr = np.atleast_1d(check_array("frequencies", frequencies, ndim=(0, 1)))
    ph = np.atleast_1d(check_array("phases", phases, ndim=(0, 1)))
    if np.any(fr < 0) or np.any(fr > 0.5):
        raise ValueError("frequencies must be in [0, 0.5] cycles per pixel")
    cx, cy = ((size - 1) / 2, (size - 1) / 2) if center is None else map(float, center)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    xx, yy = xx - cx, yy - cy
    proj = xx[None] * np.cos(ori)[:, None, None] + yy[None] * np.sin(ori)[:, None, None]  # (O, s, s)
    arg = 2 * np.pi * fr[None, :, None, None, None] * proj[:, None, None] + ph[None, None, :, None, None]
    g = np.cos(arg)
    if square:
        g = np.sign(g)
    g = contrast * g
    dist = np.hypot(xx, yy)
    mask = np.ones_like(dist, dtype=bool)
    if radius is not None:
        mask &= dist < check_float("radius", radius, low=0.0)
    if inner_radius is not None:
        mask &= dist >= check_float("inner_radius", inner_radius, low=0.0)
    return g * mask


def _segment_distance(xx, yy, cx, cy, orientation, length):
    """Distance of points to a line segment (length 0 gives a point)."""
    ux, uy = np.cos(orientation), np.sin(orientation)
    dx, dy = xx - cx, yy - cy
    along = dx * ux + dy * uy
    across = -dx * uy + dy * ux
    excess = np.maximum(np.abs(along) - length / 2.0, 0.0)
    return np.hypot(excess, across), along, across


def bar_image(
    size: int,
    orientation: float,
    length: float,
    center: tuple[float, float] | None=None,
    *,
    width: float = 1.0,
    contrast: float = 1.0,
    supersample: int = 4,
) -> np.ndarray:
    """An anti-aliased bar (filled rectangle) on a zero background.

    Each pixel's value is ``contrast`` times the fraction of its area inside
    the rectangle of the given length (along ``orientation``) and width,
    estimated on a ``supersample x supersample`` sub-grid. Anti-aliasing
    makes the response vary smoothly with orientation and length.

    Parameters
    ----------
    size : int
        Side of the square image.
    orientation : float
        Direction of the bar's long axis, radians.
    length, width : float
        Bar size in pixels (> 0).
    center : (float, float), optional
        ``(x, y)`` of the bar centre; default the image centre.
    contrast : float
        Bar amplitude; negative for a dark bar.
    supersample : int
        Sub-samples per pixel side.

    Returns
    -------
    numpy.ndarray, shape (size, size)
    """
    size = check_int("size", size, low=1)
    length = check_float("length", length, low=0.0, low_open=True)
    width = check_float("width", width, low=0.0, low_open=True)
    contrast = check_float("contrast", contrast)
    k = check_int("supersample", supersample, low=1)
    cx, cy = ((size - 1) / 2, (size - 1) / 2) if center is None else map(float, center)
    sub = (np.arange(k) + 0.5) / k - 0.5
    coords = (np.arange(size)[:, None] + sub[None, :]).ravel()
    yy, xx = np.meshgrid(coords, coords, indexing="ij")
    ux, uy = np.cos(orientation), np.sin(orientation)
    along = (xx - cx) * ux + (yy - cy) * uy
    across = -(xx - cx) * uy + (yy - cy) * ux
    inside = (np.abs(along) <= length / 2) & (np.abs(across) <= width / 2)
    return contrast * inside.reshape(size, k, size, k).mean(axis=(1, 3))


def tile_bases(D: ArrayLike, patch_size: int | None = None, ncols: int | None = None, pad: int = 1) -> np.ndarray:
    """Tile bases into one image for display, each scaled to its own max ``|value|``.

    Parameters
    ----------
    D : array_like, shape (n_atoms, p*p)
        Dictionary, one ``p x p`` atom per row.
    patch_size : int, optional
        ``p``; inferred when ``p*p`` equals the row length.
    ncols : int, optional
        Tiles per row; default ``ceil(sqrt(n_atoms))``.
    pad : int
        Pixels of separation (drawn at the minimum, -1).

    Returns
    -------
    numpy.ndarray
        Image in ``[-1, 1]`` with 0 as mid-grey.
    """
    D = check_array("D", D, ndim=2)
    p = _patch_side(D.shape[1], patch_size)
    n = D.shape[0]
    ncols = int(np.ceil(np.sqrt(n))) if ncols is None else check_int("ncols", ncols, low=1)
    pad = check_int("pad", pad, low=0)
    nrows = int(np.ceil(n / ncols))
    out = -np.ones((nrows * (p + pad) + pad, ncols * (p + pad) + pad))
    for j in range(n):
        r, c = divmod(j, ncols)
        tile = D[j].reshape(p, p)
        m = np.abs(tile).max()
        out[pad + r * (p + pad) : pad + r * (p + pad) + p, pad + c * (p + pad) : pad + c * (p + pad) + p] = (
            tile / m if m > 0 else tile
        )
    return out


# --------------------------------------------------------------------------- responses


def encode_stimuli(X: ArrayLike, D: ArrayLike, lam: float, *, encoder: Callable | None = None,
                   remove_mean: bool = True, max_iter: int | None = None) -> np.ndarray:
    """Sparse codes of stimuli on the whole dictionary (the units' responses).

    Parameters
    ----------
    X : array_like, shape (n, p*p)
        Stimuli, one flattened image per row.
    D : array_like, shape (n_atoms, p*p)
        Dictionary.
    lam : float
        L1 weight of ``0.5 ||x - D^T a||^2 + lam ||a||_1``.
    encoder : callable, optional
        ``encoder(X, D, lam) -> A``; default
        :func:`neurosim.coding.encoders.feature_sign`.
    remove_mean : bool
        Subtract each stimulus' mean first (the bases were learned on
        mean-free patches).
    max_iter : int
        Passed to feature-sign search when ``encoder`` is ``None``.

    Returns
    -------
    numpy.ndarray, shape (n, n_atoms)
    """
    D = check_array("D", D, ndim=2)
    X = check_array("X", X, ndim=2, shape=(None, D.shape[1]))
    lam = check_float("lam", lam, low=0.0, low_open=True)
    if remove_mean:
        X = X - X.mean(axis=1, keepdims=True)
    if encoder is None:
        from neurosim.coding.encoders import feature_sign

        return np.asarray(feature_sign(X, D, lam, max_iter=max_iter))
    return np.asarray(encoder(X, D, lam))


def _bar_bank(p, orientations, lengths, margin):
    ori = np.arange(orientations) * np.pi / orientations
    cs = np.arange(margin, p - margin, dtype=np.float64)
    rows = []
    for o in ori:
        for L in lengths:
            for cy in cs:
                for cx in cs:
                    rows.append((o, float(L), cx, cy))
    return np.array(rows)


def find_optimal_bars(
    D: ArrayLike,
    lam: float,
    *,
    patch_size: int | None = None,
    orientations: int = 12,
    lengths: ArrayLike = (3, 6, 10),
    margin: int = 2,
    contrast: float = 1.0,
    encoder: Callable | None = None,
    chunk: int = 512,
    progress: Callable | None = None,
) -> dict:
    """Search a bank of bars for each unit's optimal stimulus.

    The bank holds every centre on the pixel grid at least ``margin`` pixels
    from the border, ``orientations`` equally spaced orientations in
    ``[0, pi)`` and the given lengths; each bar is encoded once (both
    polarities follow from the odd symmetry of the L1 code).

    Parameters
    ----------
    D : array_like, shape (n_atoms, p*p)
        Dictionary, one ``p x p`` atom per row.
    lam : float
        Sparsity weight of the encoder.
    patch_size : int, optional
        ``p``; inferred from ``D``.
    orientations : int
        Number of bar orientations.
    lengths : sequence of float
        Bar lengths in the bank (pixels).
    margin : int
        Minimum distance of bar centres from the border.
    contrast : float
        Bar amplitude (> 0).
    encoder : callable, optional
        See :func:`encode_stimuli`.
    chunk : int
        Stimuli encoded per call (bounds memory).
    progress : callable, optional
        Called as ``progress(done, total)``.

    Returns
    -------
    dict
        Per unit (arrays of length ``n_atoms``): ``response`` (``s * a_j`` at
        the optimum, >= 0), ``orientation``, ``length``, ``cx``, ``cy``,
        ``polarity`` (+1 or -1), ``rank`` (1 = the largest ``|coefficient|`` of
        that stimulus' code), ``rel`` (response / largest ``|coefficient|`` of the
        code); and ``n_stimuli``.
    """
    D = check_array("D", D, ndim=2)
    p = _patch_side(D.shape[1], patch_size)
    orientations = check_int("orientations", orientations, low=1)
    margin = check_int("margin", margin, low=0, high=(p - 1) // 2)
    contrast = check_float("contrast", contrast, low=0.0, low_open=True)
    bank = _bar_bank(p, orientations, np.atleast_1d(lengths), margin)
    n_atoms = D.shape[0]
    best = np.full(n_atoms, -np.inf)
    best_idx = np.zeros(n_atoms, dtype=np.int64)
    best_pol = np.ones(n_atoms)
    best_rank = np.zeros(n_atoms, dtype=np.int64)
    best_rel = np.zeros(n_atoms)
    for start in range(0, len(bank), chunk):
        rows = bank[start : start + chunk]
        X = np.stack([bar_image(p, o, L, (cx, cy), contrast=contrast).ravel() for o, L, cx, cy in rows])
        A = encode_stimuli(X, D, lam, encoder=encoder)
        absA = np.abs(A)
        i = absA.argmax(axis=0)  # best stimulus in this chunk, per unit
        val = absA[i, np.arange(n_atoms)]
        better = val > best
        if np.any(better):
            j = np.flatnonzero(better)
            best[j] = val[j]
            best_idx[j] = start + i[j]
            best_pol[j] = np.sign(A[i[j], j])
            # Rank of unit j within its optimal stimulus' code.
            codes = absA[i[j]]
            best_rank[j] = 1 + (codes > val[j][:, None]).sum(axis=1)
            best_rel[j] = val[j] / np.maximum(codes.max(axis=1), 1e-300)
        if progress is not None:
            progress(min(start + chunk, len(bank)), len(bank))
    best = np.maximum(best, 0.0)
    best_pol[best == 0] = 1.0
    return {
        "response": best,
        "orientation": bank[best_idx, 0],
        "length": bank[best_idx, 1],
        "cx": bank[best_idx, 2],
        "cy": bank[best_idx, 3],
        "polarity": best_pol,
        "rank": best_rank,
        "rel": best_rel,
        "n_stimuli": len(bank),
    }


def length_tuning(
    D: ArrayLike,
    lam: float,
    units: Sequence[int] | ArrayLike,
    bars: dict,
    lengths: ArrayLike | None = None,
    *,
    patch_size: int | None = None,
    contrast: float = 1.0,
    encoder: Callable | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Responses of units to their optimal bar at varying length (end-stopping test).

    Parameters
    ----------
    D : array_like, shape (n_atoms, p*p)
        Dictionary, one ``p x p`` atom per row.
    lam : float
        Sparsity weight.
    units : sequence of int
        Units to test.
    bars : dict
        Output of :func:`find_optimal_bars` (centre, orientation, polarity).
    lengths : sequence of float, optional
        Bar lengths; default ``1, 2, ..., ceil(p sqrt(2))`` (the patch
        diagonal, the longest bar that still changes inside the patch).
    patch_size, contrast, encoder
        As for :func:`find_optimal_bars`.

    Returns
    -------
    lengths : numpy.ndarray, shape (n_lengths,)
    responses : numpy.ndarray, shape (n_units, n_lengths)
        ``a_j`` for bars drawn in the unit's preferred polarity (not normalised; divide by the row maximum for the
        paper's relative curves).
    """
    D = check_array("D", D, ndim=2)
    p = _patch_side(D.shape[1], patch_size)
    units = np.atleast_1d(np.asarray(units, dtype=np.int64))
    if lengths is None:
        # Up to the patch diagonal: an oblique bar is clipped by the patch only there.
        lengths = np.arange(1, int(np.ceil(p * np.sqrt(2))) + 1, dtype=np.float64)
    lengths = np.atleast_1d(np.asarray(lengths, dtype=np.float64))
    X = np.stack(
        [
            bar_image(
                p, bars["orientation"][u], L, (bars["cx"][u], bars["cy"][u]), contrast=contrast * bars["polarity"][u]
            ).ravel()
            for u in units
            for L in lengths
        ]
    )
    A = encode_stimuli(X, D, lam, encoder=encoder)
    resp = A.reshape(len(units), len(lengths), -1)[np.arange(len(units)), :, units]
    return lengths, resp


def surround_stimulus(
    size: int,
    orientation: float,
    length: float,
    center: tuple[float, float],
    period: float,
    *,
    gap: float = 2.0,
    contrast: float = 1.0,
    supersample: int = 4,
    crf: GaborParams | Sequence[float] | None = None,
    crf_sigmas: float = 2.0,
) -> np.ndarray:
    """Aligned surround: iso-oriented bar grating outside the centre bar.

    Parallel 1-pixel bars of the given orientation, spaced ``period`` pixels
    apart and in phase with the centre bar (one of them is the centre bar's
    line), drawn only at (sub)pixels farther than ``gap`` from the centre bar
    segment. The centre bar itself is not included.

    Parameters
    ----------
    size : int
        Side of the square image, in pixels.
    orientation, length : float
        The centre bar (as for :func:`bar_image`).
    center : (float, float)
        Centre bar position ``(x, y)``.
    period : float
        Spacing of the surround bars (> 1 pixel).
    gap : float
        Clear margin around the centre bar (>= 0).
    contrast : float
        Bar amplitude (sign = polarity).
    supersample : int
        Sub-samples per pixel side.
    crf : GaborParams or sequence of 8 floats, optional
        A Gabor fit of the unit; when given, the surround is also blanked
        inside its classical receptive field, the envelope ellipse
        ``(x'/sigma_x)^2 + (y'/sigma_y)^2 <= crf_sigmas^2``.
    crf_sigmas : float
        Radius of the CRF ellipse in envelope standard deviations.

    Returns
    -------
    numpy.ndarray, shape (size, size)
    """
    size = check_int("size", size, low=1)
    period = check_float("period", period, low=1.0, low_open=True)
    crf_sigmas = check_float("crf_sigmas", crf_sigmas, low=0.0)
    gap = check_float("gap", gap, low=0.0)
    k = check_int("supersample", supersample, low=1)
    cx, cy = map(float, center)
    sub = (np.arange(k) + 0.5) / k - 0.5
    coords = (np.arange(size)[:, None] + sub[None, :]).ravel()
    yy, xx = np.meshgrid(coords, coords, indexing="ij")
    dist, _, across = _segment_distance(xx, yy, cx, cy, orientation, length)
    # Distance across the bars to the nearest grating line (lines at k*period).
    off = np.abs((across + period / 2) % period - period / 2)
    on = (off <= 0.5) & (dist > gap)
    if crf is not None:
        x0, y0, th, _, _, sx, sy, _ = crf.as_array() if isinstance(crf, GaborParams) else np.asarray(crf, float)
        dx, dy = xx - x0, yy - y0
        xr = dx * np.cos(th) + dy * np.sin(th)
        yr = -dx * np.sin(th) + dy * np.cos(th)
        on &= (xr / sx) ** 2 + (yr / sy) ** 2 > crf_sigmas**2
    return contrast * on.reshape(size, k, size, k).mean(axis=(1, 3))


def surround_suppression(
    D: ArrayLike,
    lam: float,
    units: Sequence[int] | ArrayLike,
    bars: dict,
    periods: ArrayLike,
    *,
    patch_size: int | None = None,
    gap: float = 2.0,
    contrast: float = 1.0,
    encoder: Callable | None = None,
    crf_params: ArrayLike | None = None,
    crf_sigmas: float = 2.0,
) -> dict:
    """Responses to the optimal bar with and without the aligned surround (nCRF test).

    Parameters
    ----------
    D : array_like, shape (n_atoms, p*p)
        Dictionary, one ``p x p`` atom per row.
    lam : float
        Sparsity weight.
    units : sequence of int
        Units to test.
    bars : dict
        Output of :func:`find_optimal_bars`.
    periods : float or sequence of float
        Surround bar spacing per unit (pixels), e.g. ``1 / freq`` of the
        unit's Gabor fit.
    patch_size, contrast, encoder
        As for :func:`find_optimal_bars`.
    gap : float
        See :func:`surround_stimulus`.
    crf_params : array_like, shape (n_units, 8), optional
        Gabor fits of the units (rows in :class:`GaborParams` order); when
        given, each surround is restricted to outside the unit's CRF (see
        :func:`surround_stimulus`); a row containing NaN means "no CRF
        mask" for that unit.
    crf_sigmas : float
        CRF radius in envelope standard deviations.

    Returns
    -------
    dict
        ``center`` and ``center_surround`` responses (``a_j`` for stimuli
        drawn in the unit's preferred polarity),
        ``suppression = 1 - center_surround / center`` (positive =
        suppressed; NaN where the centre response is not positive), and the
        stimuli ``x_center`` and ``x_surround`` (``(n_units, p, p)``).
    """
    D = check_array("D", D, ndim=2)
    p = _patch_side(D.shape[1], patch_size)
    units = np.atleast_1d(np.asarray(units, dtype=np.int64))
    periods = np.broadcast_to(np.asarray(periods, dtype=np.float64), units.shape)
    if crf_params is not None:
        crf_params = check_array("crf_params", crf_params, shape=(len(units), 8), finite=False)
    centre_images, surround_images = [], []
    for i, (u, T) in enumerate(zip(units, periods)):
        args = (bars["orientation"][u], bars["length"][u], (bars["cx"][u], bars["cy"][u]))
        c = contrast * bars["polarity"][u]
        crf = None if crf_params is None or not np.all(np.isfinite(crf_params[i])) else crf_params[i]
        centre_images.append(bar_image(p, *args, contrast=c))
        surround_images.append(surround_stimulus(p, *args, period=T, gap=gap, contrast=c, crf=crf,
                                                 crf_sigmas=crf_sigmas))
    xc, xs = np.array(centre_images), np.array(surround_images)
    X = np.concatenate([xc.reshape(len(units), -1), (xc + xs).reshape(len(units), -1)])
    A = encode_stimuli(X, D, lam, encoder=encoder)
    n = len(units)
    # The stimuli already carry the preferred polarity, so a_j itself is the response.
    r_c = A[np.arange(n), units]
    r_cs = A[n + np.arange(n), units]
    with np.errstate(invalid="ignore", divide="ignore"):
        supp = np.where(r_c > 0, 1.0 - r_cs / r_c, np.nan)
    return {"center": r_c, "center_surround": r_cs, "suppression": supp, "x_center": xc, "x_surround": xs}
