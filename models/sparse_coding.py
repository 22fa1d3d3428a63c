"""Sparse-coding bases of natural images (paper 001: Lee, Battle, Raina & Ng 2006).

What the paper-001 simulations share:

* the full-run learning configuration (:data:`FULL`, :data:`FULL_STEPS`)
  and :func:`bases_config`, which fills in what a run does not override;
* :func:`learn_natural_bases`, learning on a fresh batch of whitened
  patches at every iteration (the paper's footnote 14);
* :func:`load_or_learn_bases`, the on-disk cache through which
  ``sc_fig3_end_stopping`` and ``sc_ncrf_suppression`` reuse the bases that
  ``sc_fig2_bases`` learned;
* :func:`bases_with_optimal_bars`, the start of both bar tests: the cached
  (or newly learned) bases and each basis' optimal bar.
"""

from __future__ import annotations

import pathlib
import time
from dataclasses import dataclass

import numpy as np

from neurosim._validation import check_float, check_int

__all__ = [
    "BASES_SIMULATION",
    "FULL",
    "FULL_STEPS",
    "bases_config",
    "learn_natural_bases",
    "load_or_learn_bases",
    "BarTestBases",
    "bases_with_optimal_bars",
]

#: The simulation that learns and caches the bases; the bar tests look for
#: its output folder next to their own.
BASES_SIMULATION = "sc_fig2_bases"

#: Full-run learning parameters. The paper gives 1,024 bases of 14x14 and
#: 4,000 fresh patches per iteration (footnote 14) but not the sparsity
#: weight; lam = 0.4 on images of pixel variance 0.1 corresponds to beta = 0.4,
#: sigma = 1, which we believe is the default of the authors' released MATLAB
#: demo (not verifiable offline). It gives ~20 non-zeros per 196-pixel patch.
FULL = {"n_atoms": 1024, "patch_size": 14, "lam": 0.4, "batch": 4000}
#: Learning iterations of the full run (each on a fresh batch of patches).
FULL_STEPS = 300


def bases_config(steps, n_atoms, patch_size, lam, batch) -> dict:
    """Resolve ``None`` arguments to the full-run configuration.

    Parameters
    ----------
    steps : int or None
        Learning iterations; ``None`` gives :data:`FULL_STEPS`.
    n_atoms, patch_size, lam, batch : int, int, float, int or None
        ``None`` gives the value in :data:`FULL`.

    Returns
    -------
    dict
        ``steps``, ``n_atoms``, ``patch_size``, ``lam`` and ``batch``.
    """
    return {
        "steps": FULL_STEPS if steps is None else check_int("steps", steps, low=1),
        "n_atoms": FULL["n_atoms"] if n_atoms is None else n_atoms,
        "patch_size": FULL["patch_size"] if patch_size is None else patch_size,
        "lam": FULL["lam"] if lam is None else lam,
        "batch": FULL["batch"] if batch is None else batch,
    }


def learn_natural_bases(
    n_atoms: int,
    patch_size: int,
    lam: float,
    steps: int,
    batch: int,
    seed: int = 0,
    c: float = 1.0,
    progress: bool = False,
) -> dict:
    """Learn sparse-coding bases on freshly sampled whitened patches.

    Each iteration is one coefficient solve (feature-sign search) and one
    basis solve (Lagrange dual, warm-started from the previous duals) on a
    new batch. (:func:`neurosim.coding.basis.learn_bases` alternates on one
    fixed training set and cannot resample.)

    Parameters
    ----------
    n_atoms, patch_size : int
        Number of bases and patch side.
    lam : float
        L1 weight of ``0.5 ||x - D^T a||^2 + lam ||a||_1``.
    steps : int
        Learning iterations; iteration ``t`` uses patches
        ``t*batch .. (t+1)*batch - 1`` of an ``ImagePatchStream`` over
        :data:`neurosim.data.TRAIN_IMAGES`.
    batch : int
        Patches per iteration.
    seed : int
        Seeds the patch stream and the random initial bases.
    c : float
        Squared-norm bound of the bases.
    progress : bool
        Show a progress bar with the current objective and sparsity.

    Returns
    -------
    dict
        ``D`` (n_atoms, p*p), ``objective`` (per-patch objective of each
        iteration's batch, measured with the codes *before* the basis update,
        i.e. how well the current bases code new data), ``sparsity`` (mean
        non-zeros per patch), ``seconds`` (cumulative wall time).
    """
    from tqdm.auto import tqdm

    from neurosim.coding.basis import lagrange_dual_bases
    from neurosim.coding.encoders import feature_sign
    from neurosim.data import TRAIN_IMAGES, ImagePatchStream

    n_atoms = check_int("n_atoms", n_atoms, low=1)
    steps = check_int("steps", steps, low=1)
    batch = check_int("batch", batch, low=1)
    lam = check_float("lam", lam, low=0.0, low_open=True)
    stream = ImagePatchStream(patch_size, images=TRAIN_IMAGES, seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
    D = rng.standard_normal((n_atoms, stream.dim))
    D *= np.sqrt(c) / np.linalg.norm(D, axis=1, keepdims=True)
    dual = None
    objective, sparsity, seconds = [], [], []
    t0 = time.perf_counter()
    bar = tqdm(range(steps), desc=f"{BASES_SIMULATION} learning", disable=not progress, mininterval=2.0)
    for t in bar:
        X = stream.block(t * batch, batch, 1)[:, 0, :]
        A = feature_sign(X, D, lam)
        R = X - A @ D
        objective.append((0.5 * np.sum(R * R) + lam * np.abs(A).sum()) / batch)
        sparsity.append(np.count_nonzero(A) / batch)
        D, dual = lagrange_dual_bases(X, A, c, dual_init=dual, D_init=D)
        seconds.append(time.perf_counter() - t0)
        bar.set_postfix(objective=f"{objective[-1]:.3f}", nonzeros=f"{sparsity[-1]:.1f}", refresh=False)
    return {
        "D": D,
        "objective": np.array(objective),
        "sparsity": np.array(sparsity),
        "seconds": np.array(seconds),
    }


def _cache_key(n_atoms, patch_size, lam, batch, steps, seed) -> str:
    """Part of the cache file name that tells apart every learning configuration."""
    return f"a{n_atoms}_p{patch_size}_l{lam:g}_b{batch}_s{steps}_seed{seed}"


def load_or_learn_bases(
    out_dir,
    *,
    n_atoms: int,
    patch_size: int,
    lam: float,
    steps: int,
    batch: int,
    seed: int = 0,
    progress: bool = False,
) -> tuple[dict, pathlib.Path, bool]:
    """Return learned bases from the cache in ``out_dir`` or learn and cache them.

    Parameters
    ----------
    out_dir : str or path
        Folder of the cache file ``bases_<key>.npz`` (created).
    n_atoms, patch_size, lam, steps, batch, seed, progress
        As for :func:`learn_natural_bases`; all but ``progress`` are part of
        the cache key.

    Returns
    -------
    result : dict
        As :func:`learn_natural_bases`.
    path : pathlib.Path
        The cache file.
    cached : bool
        Whether the bases came from the cache.
    """
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bases_{_cache_key(n_atoms, patch_size, lam, batch, steps, seed)}.npz"
    if path.exists():
        with np.load(path) as z:
            return {k: z[k] for k in z.files}, path, True
    res = learn_natural_bases(n_atoms, patch_size, lam, steps, batch, seed=seed, progress=progress)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **res)
    tmp.replace(path)  # atomic: a concurrent reader never sees half a file
    return res, path, False


@dataclass(frozen=True)
class BarTestBases:
    """Learned bases with each basis' optimal bar: where the bar tests start.

    Parameters
    ----------
    config : dict
        Learning configuration, as :func:`bases_config` returns it.
    D : numpy.ndarray, shape (n_atoms, patch_size**2)
        The bases.
    bases_dir : pathlib.Path
        Folder of the bases cache.
    cache : pathlib.Path
        The cache file.
    cached : bool
        Whether the bases came from the cache (else they were learned now).
    learn_seconds : float
        Wall time of loading or learning the bases.
    bars : dict
        :func:`neurosim.analysis.receptive_fields.find_optimal_bars` of ``D``.
    bar_seconds : float
        Wall time of the bar search.
    """

    config: dict
    D: np.ndarray
    bases_dir: pathlib.Path
    cache: pathlib.Path
    cached: bool
    learn_seconds: float
    bars: dict
    bar_seconds: float

    @property
    def patch_size(self) -> int:
        """Side of the square patches (and bar images), in pixels."""
        return self.config["patch_size"]

    @property
    def lam(self) -> float:
        """Sparsity weight the bases were learned with, also used to encode the bars."""
        return self.config["lam"]


def bases_with_optimal_bars(
    out,
    bases_dir=None,
    *,
    steps=None,
    n_atoms=None,
    patch_size=None,
    lam=None,
    batch=None,
    seed: int = 0,
    progress: bool = False,
    desc: str = "bar search",
) -> BarTestBases:
    """Load (or learn and cache) the bases and find each basis' optimal bar.

    Parameters
    ----------
    out : str or path
        Output folder of the calling simulation; only locates the default
        ``bases_dir``.
    bases_dir : str or path, optional
        Folder of the bases cache; default ``<out>/../sc_fig2_bases``
        (:data:`BASES_SIMULATION`), where ``sc_fig2_bases`` caches them.
    steps, n_atoms, patch_size, lam, batch : optional
        Learning configuration; ``None`` takes the full run's
        (:func:`bases_config`).
    seed : int
        Seed of the bases (patches and initial dictionary).
    progress : bool
        Show progress bars.
    desc : str
        Label of the bar-search progress bar.

    Returns
    -------
    BarTestBases
    """
    from tqdm.auto import tqdm

    from neurosim.analysis.receptive_fields import find_optimal_bars

    config = bases_config(steps, n_atoms, patch_size, lam, batch)
    bases_dir = pathlib.Path(out).parent / BASES_SIMULATION if bases_dir is None else pathlib.Path(bases_dir)
    t0 = time.perf_counter()
    res, cache, cached = load_or_learn_bases(bases_dir, seed=seed, progress=progress, **config)
    learn_seconds = time.perf_counter() - t0

    t1 = time.perf_counter()
    with tqdm(desc=desc, disable=not progress, mininterval=2.0) as pbar:

        def tick(done, total):
            pbar.total = total
            pbar.n = done
            pbar.refresh()

        bars = find_optimal_bars(res["D"], config["lam"], patch_size=config["patch_size"], progress=tick)
    return BarTestBases(
        config=config,
        D=res["D"],
        bases_dir=bases_dir,
        cache=cache,
        cached=cached,
        learn_seconds=learn_seconds,
        bars=bars,
        bar_seconds=time.perf_counter() - t1,
    )
