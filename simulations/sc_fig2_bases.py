"""Lee et al. (2006) Fig. 2 (left): 1,024 overcomplete 14x14 bases of natural images.

Bases are learned by alternating feature-sign search (L1 coefficients,
:func:`neurosim.coding.encoders.feature_sign`) and the Lagrange-dual basis
update (:func:`neurosim.coding.basis.lagrange_dual_bases`) on whitened natural
image patches (:mod:`neurosim.data.images`). As in the paper's footnote 14, a
fresh batch of random patches is drawn at every iteration (4,000 in the
paper; ``batch`` here), so each iteration is one coefficient solve and one
basis solve on new data; the Lagrange duals are carried over between
iterations as a warm start
(:func:`neurosim.models.sparse_coding.learn_natural_bases`, shared with the
other paper-001 simulations). (:func:`neurosim.coding.basis.learn_bases`
alternates on one fixed training set and is the right tool for the Table 2
timing; it cannot resample.)

Every learned basis is fitted with a 2-D Gabor function
(:func:`neurosim.analysis.receptive_fields.fit_gabor`); the output reports how
many fit with R^2 > 0.8.

The learned bases are cached in ``<out>/bases_<key>.npz`` (``key`` encodes
every learning parameter) and reused by ``sc_fig3_end_stopping`` and
``sc_ncrf_suppression``, which look for the cache in the sibling folder
``<out>/../sc_fig2_bases``.
"""

from __future__ import annotations

import pathlib
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from neurosim.models.sparse_coding import FULL_STEPS, bases_config, load_or_learn_bases  # noqa: E402
from neurosim.simulations._harness import output_folder, progress_printer, write_dataset  # noqa: E402
from neurosim.simulations._sc_common import PAPER, bases_histogram, save_png  # noqa: E402

NAME = "sc_fig2_bases"
DESCRIPTION = "Lee et al. 2006 Fig. 2 left: learn 1,024 overcomplete 14x14 natural-image bases, Gabor-fit them"
#: Learning iterations of the full run (each on a fresh batch of patches).
DEFAULT_STEPS = FULL_STEPS
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 30, "n_atoms": 64, "patch_size": 8, "batch": 1000}

GOOD_R2 = 0.8


def plot_diagnostics(iterations, objective, r2, path: pathlib.Path) -> pathlib.Path:
    """Write the learning curve (objective per patch of each fresh batch) and the histogram of the Gabor fits' R^2.

    Parameters
    ----------
    iterations, objective : array_like
        The learning iterations and the objective per patch at each.
    r2 : numpy.ndarray
        R^2 of each basis' Gabor fit.
    path : pathlib.Path
        The PNG to write.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    good = r2 > GOOD_R2
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    axes[0].plot(iterations, objective)
    axes[0].set_xlabel("iteration")
    axes[0].set_ylabel("objective per patch (fresh batch)")
    bases_histogram(axes[1], r2, np.linspace(min(0.0, r2.min()), 1, 41), GOOD_R2, "Gabor fit R$^2$",
                    f"{good.sum()}/{len(r2)} with R$^2$ > {GOOD_R2}")
    fig.tight_layout()
    return save_png(fig, path)


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_atoms=None, patch_size=None, lam=None,
        batch=None) -> dict[str, pathlib.Path]:
    """Learn (or load) the bases, tile them and Gabor-fit every one.

    Parameters
    ----------
    steps : int, optional
        Learning iterations (default :data:`DEFAULT_STEPS`).
    out : str or path
        Output folder.
    seed : int
        Seed of patches and initial bases.
    progress : bool
        Print progress.
    n_atoms, patch_size, lam, batch : optional
        Override the full-run configuration
        :data:`neurosim.models.sparse_coding.FULL` (tests use e.g. 64
        bases of 8x8).

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset`` (netCDF), ``bases`` and ``diagnostics`` (PNG), ``cache``.
    """
    from tqdm.auto import tqdm

    from neurosim.analysis.receptive_fields import fit_gabors, tile_bases

    cfg = bases_config(steps, n_atoms, patch_size, lam, batch)
    out = output_folder(out)
    say = progress_printer(NAME, progress)
    t0 = time.perf_counter()
    res, cache, cached = load_or_learn_bases(out, seed=seed, progress=progress, **cfg)
    t_learn = time.perf_counter() - t0
    D = res["D"]
    p = cfg["patch_size"]
    t1 = time.perf_counter()
    with tqdm(total=D.shape[0], desc=f"{NAME} Gabor fits", disable=not progress, mininterval=2.0) as bar:
        params, r2 = fit_gabors(D, p, progress=lambda j: bar.update())
    t_fit = time.perf_counter() - t1
    used = np.linalg.norm(D, axis=1) > 0
    good = r2 > GOOD_R2
    # "Localized": the envelope (2 sigma along its longer axis) is smaller than the patch.
    local = good & (2 * np.maximum(params[:, 5], params[:, 6]) < p)
    say(f"{D.shape[0]} bases: {good.sum()} with Gabor R^2 > {GOOD_R2} ({good.mean():.1%}), median R^2 "
        f"{np.median(r2):.3f}; learn {t_learn:.0f} s ({'cached' if cached else 'new'}), fits {t_fit:.0f} s")

    ds = xr.Dataset(
        {
            "bases": (("atom", "row", "col"), D.reshape(-1, p, p)),
            "gabor_params": (("atom", "gabor_param"), params),
            "gabor_r2": (("atom",), r2),
            "objective": (("iteration",), res["objective"]),
            "nonzeros": (("iteration",), res["sparsity"]),
            "seconds": (("iteration",), res["seconds"]),
        },
        coords={
            "atom": np.arange(D.shape[0]),
            "gabor_param": ["x0", "y0", "theta", "freq", "phase", "sigma_x", "sigma_y", "amp"],
            "iteration": np.arange(1, len(res["objective"]) + 1),
        },
        attrs={
            "paper": f"{PAPER}, Fig. 2 left",
            "images": "whitened (Olshausen-Field 1/f, f0=0.4N) neurosim.data.TRAIN_IMAGES, variance 0.1",
            "coder": "feature_sign",
            "basis_solver": "lagrange_dual",
            "seed": seed,
            "good_r2_threshold": GOOD_R2,
            "n_good_gabor": int(good.sum()),
            "n_localized_gabor": int(local.sum()),
            "n_used": int(used.sum()),
            "learn_seconds": float(res["seconds"][-1]),
            "cached_bases": int(cached),
            **{k: v for k, v in cfg.items()},
        },
    )
    paths = {**write_dataset(ds, out, NAME), "cache": cache}

    tiles = tile_bases(D, p)
    side = 10 if D.shape[0] > 256 else 6
    fig, ax = plt.subplots(figsize=(side, side))
    ax.imshow(tiles, cmap="gray", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_axis_off()
    ax.set_title(f"{D.shape[0]} learned bases ({p}x{p}), {cfg['steps']} iterations")
    paths["bases"] = save_png(fig, out / f"{NAME}_bases.png")

    paths["diagnostics"] = plot_diagnostics(ds.iteration, res["objective"], r2, out / f"{NAME}_diagnostics.png")
    return paths


#: the figures of a run (seed 0's in a reproduction) that the report shows (``neurosim tables`` copies them)
REPORT_FIGURES = {f"{NAME}_bases.png": "paper001_fig2_bases.png",
                  f"{NAME}_diagnostics.png": "paper001_fig2_diagnostics.png"}
#: "high frequency" in the report's account of the poorly fitted bases (cycles/pixel)
HIGH_FREQUENCY = 0.3


def tables(ds: xr.Dataset) -> list:
    """The report's table (:mod:`neurosim.report_tables`) from the seeds' datasets (joined along ``seed``).

    ``bases``: per seed, the bases, how many fit a Gabor with R^2 above
    :data:`GOOD_R2` and above 0.6, the median R^2, the bases of Gabor
    frequency above :data:`HIGH_FREQUENCY` and how many of them fit at most
    :data:`GOOD_R2`, and the objective and non-zeros per patch at the last
    iteration; then mean ± sd over the seeds.
    """
    from neurosim.report_tables import Table, mean_sd

    r2 = ds.gabor_r2.transpose("seed", "atom").values
    freq = ds.gabor_params.sel(gabor_param="freq").transpose("seed", "atom").values
    high = freq > HIGH_FREQUENCY
    cols = {"bases": np.isfinite(r2).sum(1), "good": (r2 > GOOD_R2).sum(1), "fair": (r2 > 0.6).sum(1),
            "median": np.nanmedian(r2, axis=1), "high": high.sum(1), "high_poor": (high & ~(r2 > GOOD_R2)).sum(1),
            "objective": ds.objective.isel(iteration=-1).values, "nonzeros": ds.nonzeros.isel(iteration=-1).values}
    fmts = {"median": ".3f", "objective": ".3f", "nonzeros": ".1f"}
    rows = [[int(s)] + [float(cols[k][i]) if k in fmts else int(cols[k][i]) for k in cols]
            for i, s in enumerate(ds.seed.values)]
    rows.append(["mean ± sd"] + [mean_sd(cols[k], fmts.get(k, ".0f")) for k in cols])
    table = Table(f"{NAME}/bases", ["seed", "bases", f"Gabor R² > {GOOD_R2:g}", "R² > 0.6", "median R²",
                                    f"Gabor frequency > {HIGH_FREQUENCY:g} cycles/px",
                                    f"of them R² ≤ {GOOD_R2:g}", "objective per patch, last iteration",
                                    "non-zeros per patch, last iteration"], rows,
                  formats=[None, None, None, None, ".3f", None, None, ".3f", ".1f"], align=["l"] + ["r"] * 8)
    return [table]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
