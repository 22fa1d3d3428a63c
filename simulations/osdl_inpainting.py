"""Inpainting with OSDL dictionaries learned from incomplete natural-image patches (paper 003).

The OSDL circuit (:func:`neurosim.models.osdl.build_network`; masks from
:class:`~neurosim.streams.BernoulliMaskStream`) learns a dictionary of 8x8
grey patches (pixels in [0, 1]) of the nine training photographs with 0 %,
25 %, 50 % or 75 % of the pixels of every training patch missing: only the
observed pixels enter the codes and the statistics. Three variants
(``GRID["variant"]``):

* ``lasso`` (the reproduction's default): no group structure, i.e. lasso
  codes (the ODL/lasso dictionary of the comparison), on patches with their
  *observed* mean removed (:class:`~neurosim.analysis.inpainting.ObservedMeanRemovedStream`
  in training, ``inpaint(remove_mean=True)`` at test), as dictionary-learning
  inpainting is done in practice (Mairal et al. 2009);
* ``lasso_raw``: the same on raw pixels (no mean removal), the protocol of
  the first version of this reproduction, kept to show the difference;
* ``torus``: OSDL's group structure, a 3x3 neighbourhood per unit on an
  8x16 torus (``eta = 1``), mean removed, the same ``kappa`` (not tuned).

Each dictionary inpaints fixed test crops of the held-out photographs
(``CROPS``: one 64x64 crop of coffee, gravel and ascent, never seen in
training) with 25 %, 50 % and 75 % of their pixels missing (masks drawn
from the run's seed: the same masks for every dictionary and baseline of a
seed): every overlapping patch (stride ``STRIDE``) is coded on its observed
pixels (Table 2 with the masked dictionary), reconstructed from the whole
dictionary, the reconstructions averaged, the observed pixels kept
(:func:`neurosim.analysis.inpainting.inpaint`).

Scores: PSNR (peak 1) on the missing pixels only (``psnr_missing``, the
estimate proper) and on the whole crop (``psnr_whole``, observed pixels
included, as they are kept). Baselines on the same crops and masks:
``patch_mean`` (every patch's observed mean, the overlapping patches
averaged: ``inpaint`` with zero codes and ``remove_mean=True``),
``biharmonic`` (:func:`skimage.restoration.inpaint_biharmonic`) and
``crop_mean`` (one mean of the crop's observed pixels).

Table 2's iteration count: ``CODE_ITER = 50`` iterations *including* the
ridge start (``z^G = 1``), i.e. the paper's ``T_alpha = 49`` re-weightings
after it (``code_iter = T = T_alpha + 1``).

Seeds: ``n_seeds`` (default 3) seeds ``seed, seed + 1, ...`` through the
sweep layer, each its own training patches, masks, initial dictionary and
test masks.

Outputs: ``<out>/osdl_inpainting.nc`` (PSNR per seed, variant, training
fraction, test fraction and crop; the baselines; the dictionaries) and
``.png`` (PSNR on the missing pixels, mean ± sd over seeds; an example).
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

from neurosim.simulations._osdl_common import SOLVER

NAME = "osdl_inpainting"
DESCRIPTION = "Szabo et al. 2011 (OSDL): inpainting held-out images with dictionaries learned from 0-75 % missing pixels"
DEFAULT_STEPS = 500
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 3, "grid": {"train_missing": [0.0, 0.5], "variant": ["lasso", "torus"]}}
GRID = {"train_missing": [0.0, 0.25, 0.5, 0.75], "variant": ["lasso", "lasso_raw", "torus"]}
TEST_MISSING = (0.25, 0.5, 0.75)
PATCH, BATCH, N_COMPONENTS, KAPPA, CODE_ITER = 8, 32, 128, 0.01, 50
TORUS = (8, 16)
CROP, STRIDE = 64, 2
#: the test crops: (photograph, top-left row, top-left column), fixed for every seed
CROPS = (("coffee", 150, 250), ("gravel", 200, 200), ("ascent", 250, 150))
BASELINES = ("patch_mean", "biharmonic", "crop_mean")


def check_point(train_missing: float, variant: str = "lasso", steps: int | None = None):
    from neurosim._validation import check_choice, check_float, check_int

    check_float("train_missing", train_missing, low=0.0, high=1.0, high_open=True)
    check_choice("variant", variant, {"lasso", "lasso_raw", "torus"})
    if steps is not None:
        check_int("steps", steps, low=1)


def test_crops(crop: int | None = None) -> np.ndarray:
    """The fixed test crops ``(len(CROPS), crop, crop)`` of :data:`CROPS` (held-out photographs, pixels in [0, 1])."""
    from neurosim.data.images import TRAIN_IMAGES, _load_one

    crop = CROP if crop is None else crop
    out = []
    for name, r, c in CROPS:
        if name in TRAIN_IMAGES:
            raise ValueError(f"test photograph {name!r} is a training photograph")
        im = _load_one(name, True)
        out.append(np.array(im[r : r + crop, c : c + crop], dtype=np.float64))
    return np.stack(out)


def baselines(img, obs) -> dict[str, np.ndarray]:
    """The baselines' estimates of ``img`` from its observed pixels ``obs`` (observed pixels kept)."""
    from skimage.restoration import inpaint_biharmonic

    from neurosim.analysis.inpainting import inpaint

    zero = lambda X, M: np.zeros((X.shape[0], 1))  # noqa: E731
    return {
        "patch_mean": inpaint(img, obs, zero, np.zeros((1, PATCH * PATCH)), size=PATCH, step=STRIDE,
                              remove_mean=True),
        "biharmonic": np.where(obs, img, inpaint_biharmonic(np.where(obs, img, 0.0), ~obs)),
        "crop_mean": np.where(obs, img, img[obs].mean()),
    }


def point(train_missing: float, variant: str, seed: int, steps: int | None = None) -> xr.Dataset:
    """Learn one dictionary (``variant`` at ``train_missing``) and inpaint the test crops at every test fraction."""
    import neurosim as ns
    from neurosim.analysis.inpainting import (InpaintingPatchStream, ObservedMeanRemovedStream, inpaint, psnr,
                                              random_pixel_mask)
    from neurosim.models.osdl import build_network
    from neurosim.streams import BernoulliMaskStream

    check_point(train_missing, variant, steps)
    steps = DEFAULT_STEPS if steps is None else steps
    centred = variant != "lasso_raw"
    stream = InpaintingPatchStream(PATCH, seed=seed)
    masks = BernoulliMaskStream(PATCH * PATCH, train_missing, seed=seed + 1) if train_missing > 0 else None
    init = np.array(stream.block(10 ** 6, 1, N_COMPONENTS)[0])  # patches far from the training steps
    data = stream
    if centred:
        data = ObservedMeanRemovedStream(stream, masks)
        init -= init.mean(axis=1, keepdims=True)
    groups = ns.GroupStructure.torus(*TORUS) if variant == "torus" else None
    circuit = build_network(data, N_COMPONENTS, groups=groups, kappa=KAPPA, batch=BATCH, masks=masks,
                            code_iter=CODE_ITER, init=init, seed=seed, solver=SOLVER)
    circuit.run(steps)
    images = test_crops(CROP)
    n_test = len(images)
    rng = np.random.default_rng(seed + 3)
    shape = (len(TEST_MISSING), n_test)
    scores = {k: np.zeros(shape) for k in ("missing", "whole")}
    base = {k: np.zeros((len(BASELINES),) + shape) for k in ("missing", "whole")}
    example = np.zeros((3, CROP, CROP))
    encode = lambda X, M: circuit.encode(X, M)  # noqa: E731
    for i, miss in enumerate(TEST_MISSING):
        for j, img in enumerate(images):
            obs = random_pixel_mask(img.shape, miss, rng)
            filled = inpaint(np.where(obs, img, np.nan), obs, encode, circuit.W, size=PATCH, step=STRIDE,
                             remove_mean=centred)
            scores["missing"][i, j] = psnr(img, filled, mask=~obs)
            scores["whole"][i, j] = psnr(img, filled)
            for b, est in enumerate(baselines(img, obs).values()):
                base["missing"][b, i, j] = psnr(img, est, mask=~obs)
                base["whole"][b, i, j] = psnr(img, est)
            if j == 0 and miss == 0.5:
                example[:] = img, np.where(obs, img, np.nan), filled
    dims = ("test_missing", "image")
    return xr.Dataset({"psnr_missing": (dims, scores["missing"]), "psnr_whole": (dims, scores["whole"]),
                       "baseline_missing": (("baseline",) + dims, base["missing"]),
                       "baseline_whole": (("baseline",) + dims, base["whole"]),
                       "dictionary": (("unit", "pixel"), circuit.W.copy()),
                       "example": (("panel", "row", "col"), example)},
                      coords={"test_missing": list(TEST_MISSING), "image": [c[0] for c in CROPS],
                              "baseline": list(BASELINES), "panel": ["original", "observed", "inpainted"]})


def _chosen(grid) -> dict:
    """:data:`GRID` restricted to ``grid``'s values (in GRID's order); refuses values GRID does not hold."""
    if grid is None:
        return GRID
    if not isinstance(grid, dict) or not set(grid) <= set(GRID):
        raise ValueError(f"grid must be a dict whose keys are among {sorted(GRID)}; got {grid!r}")
    chosen = dict(GRID)
    for key, values in grid.items():
        unknown = [v for v in values if v not in GRID[key]]
        if unknown or not values:
            raise ValueError(f"grid[{key!r}] must be a non-empty subset of {GRID[key]}; got {values!r}")
        chosen[key] = [v for v in GRID[key] if v in values]
    if "lasso" not in chosen["variant"]:
        raise ValueError(f"grid['variant'] must include 'lasso' (the figure's curves); got {grid['variant']!r}")
    return chosen


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_seeds=None,
        grid=None) -> dict[str, pathlib.Path]:
    """Learn the dictionaries on ``n_seeds`` seeds, inpaint, write the table and figure.

    Parameters
    ----------
    grid : dict, optional
        Some of :data:`GRID`'s values to run (default: all of them): for each
        parameter named, a non-empty subset of its values, ``"lasso"`` among
        the variants (the figure's curves). The quick reproduction runs two
        training fractions of two variants.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``: PSNR per seed, variant, training and test fraction and crop, the baselines, the dictionaries;
        ``figure``: PSNR on the missing pixels (mean ± sd over seeds) and an example.
    """
    from neurosim.simulations._harness import mean_sd, pyplot, save_final_figure
    from neurosim.simulations._osdl_common import run_seeds, write_osdl_dataset

    runs, steps, seed, n_seeds, out, say = run_seeds(NAME, point, _chosen(grid), steps, DEFAULT_STEPS, 1, out, seed,
                                                     progress, resume, n_seeds)
    ds = runs[["psnr_missing", "psnr_whole", "baseline_missing", "baseline_whole", "dictionary", "example"]]
    # the baselines do not depend on the dictionary: the same crops and masks (same seed) for every grid point
    first = {"train_missing": 0, "variant": 0}
    for v in ("baseline_missing", "baseline_whole"):
        ds[v] = ds[v].isel(first, drop=True)
    crops = "; ".join(f"{n} rows {r}-{r + CROP} cols {c}-{c + CROP}" for n, r, c in CROPS)
    paths = write_osdl_dataset(ds, NAME, out, steps, seed, n_seeds, n_components=N_COMPONENTS, kappa=KAPPA,
                               batch=BATCH, patch=PATCH, stride=STRIDE, code_iter=CODE_ITER,
                               code_iter_convention="code_iter = T = T_alpha + 1 (ridge start counted)",
                               torus=f"{TORUS[0]}x{TORUS[1]}", crops=crops)
    miss = ds.psnr_missing.mean("image")
    bmiss = ds.baseline_missing.mean("image")
    say(f"PSNR on the missing pixels, mean ± sd over {n_seeds} seeds of the mean over {len(CROPS)} crops")
    for b in ds.baseline.values:
        say(f"{b:>28s}: " + ", ".join(f"{mean_sd(bmiss.sel(baseline=b, test_missing=m))} dB at {m:.0%}"
                                      for m in ds.test_missing.values))
    for var in ds.variant.values:
        for tm in ds.train_missing.values:
            say(f"{var:>9s} learned at {tm:4.0%}: " + ", ".join(
                f"{mean_sd(miss.sel(variant=var, train_missing=tm, test_missing=m))} dB at {m:.0%}"
                for m in ds.test_missing.values))

    plt = pyplot()
    fig = plt.figure(figsize=(11, 3.8))
    ax = fig.add_axes([0.06, 0.14, 0.36, 0.76])
    x = 100 * ds.test_missing.values

    def curve(da, **kw):
        sd = da.std("seed", ddof=1) if n_seeds > 1 else 0 * da.mean("seed")
        ax.errorbar(x, da.mean("seed"), yerr=sd, capsize=2, **kw)

    for i, tm in enumerate(ds.train_missing.values):
        curve(miss.sel(variant=ds.variant.values[0], train_missing=tm), fmt="o-", color=plt.cm.viridis(i / 3),
              label=f"lasso, centred, learned at {tm:.0%} missing")
    tm0 = ds.train_missing.values[0]
    for var, style, color, label in (("lasso_raw", "s--", "C3", "lasso, raw pixels"),
                                     ("torus", "^-.", "C1", "torus groups, centred")):
        if var in ds.variant.values:
            curve(miss.sel(variant=var, train_missing=tm0), fmt=style, color=color, label=f"{label}, {tm0:.0%}")
    for b, style in zip(ds.baseline.values, ("k:", "k-.", "k--")):
        curve(bmiss.sel(baseline=b), fmt=style, label=f"baseline: {b}")
    ax.set_xlabel("pixels missing in the test crop (%)")
    ax.set_ylabel("PSNR on the missing pixels (dB)")
    ax.set_title(f"mean ± sd over {n_seeds} seeds", fontsize=8)
    ax.legend(fontsize=6)
    ex = ds.example.sel(variant=ds.variant.values[0], train_missing=tm0).isel(seed=0)
    for i, panel in enumerate(ex.panel.values):
        a = fig.add_axes([0.47 + 0.175 * i, 0.12, 0.16, 0.76])
        a.imshow(ex.sel(panel=panel), cmap="gray", vmin=0, vmax=1)
        a.set_title(f"{panel}" + (" (50 % missing)" if panel == "observed" else ""), fontsize=8)
        a.axis("off")
    return save_final_figure(fig, out / f"{NAME}.png", "figure", paths, say)


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": "paper003_inpainting.png"}

#: the report's names of the variants
VARIANT_TITLES = {"lasso": "lasso, centred", "lasso_raw": "lasso, raw pixels", "torus": "torus groups, centred"}
BASELINE_TITLES = {"crop_mean": "baseline: one crop mean", "patch_mean": "baseline: per-patch observed mean",
                   "biharmonic": "baseline: biharmonic (scikit-image)"}


def _paired_p(diff) -> dict | None:
    """A per-seed difference (dB) as mean ± sd, the seeds above 0 and the paired t-test's p (one-sample on ``diff``)."""
    from scipy.stats import ttest_1samp

    from neurosim.report_tables import cell

    x = np.asarray(diff, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    sd = float(x.std(ddof=1)) if x.size > 1 else 0.0
    values = {"mean": float(x.mean()), "sd": sd, "k": int((x > 0).sum()), "n": int(x.size)}
    if x.size > 1 and sd > 0:
        return cell("{mean:+.2f} ± {sd:.2f} ({k}/{n}, p = {p:.2g})", p=float(ttest_1samp(x, 0.0).pvalue), **values)
    return cell("{mean:+.2f} ± {sd:.2f} ({k}/{n})", **values)


def tables(ds: xr.Dataset) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``psnr_missing`` and ``psnr_whole``: PSNR (dB) on the missing pixels and
    on the whole crop, each seed's mean over the crops, mean ± sd over seeds,
    per baseline and per dictionary (variant, training fraction), per test
    fraction. ``per_crop``: the centred lasso dictionary learned from
    complete patches against biharmonic inpainting per crop (mean ± sd over
    seeds, and their difference paired seed by seed). ``claims``: the
    differences the report's claims rest on, paired seed by seed (same
    seed: same crops, masks and training patches), on the missing pixels:
    mean ± sd, the seeds above 0 and the paired t-test's p.
    """
    from neurosim.report_tables import Table, mean_sd

    fracs = [float(m) for m in ds.test_missing.values]
    heads = [f"{m:.0%} missing" for m in fracs]
    variants = [str(v) for v in ds.variant.values]
    trains = [float(t) for t in ds.train_missing.values]
    t0 = trains[0]

    def dictionary(kind, var, tm):
        return ds[f"psnr_{kind}"].sel(variant=var, train_missing=tm).mean("image")

    def base(kind, b):
        return ds[f"baseline_{kind}"].sel(baseline=b).mean("image")

    def score_table(kind, title):
        rows = [[BASELINE_TITLES.get(str(b), str(b))] + [mean_sd(base(kind, b).sel(test_missing=m).values, ".2f")
                                                           for m in fracs]
                for b in ("crop_mean", "patch_mean", "biharmonic") if b in ds.baseline.values]
        for var in variants:
            for tm in trains:
                d = dictionary(kind, var, tm)
                rows.append([f"{VARIANT_TITLES.get(var, var)}, learned at {tm:.0%} missing"]
                            + [mean_sd(d.sel(test_missing=m).values, ".2f") for m in fracs])
        return Table(f"{NAME}/{title}", ["method"] + heads, rows, align=["l"] + ["r"] * len(fracs))

    per_crop = []
    for img in ds.image.values:
        lasso = ds.psnr_missing.sel(variant=variants[0], train_missing=t0, image=img)
        bih = ds.baseline_missing.sel(baseline="biharmonic", image=img)
        per_crop += [[str(img), f"{VARIANT_TITLES.get(variants[0])}, learned at {t0:.0%}"]
                     + [mean_sd(lasso.sel(test_missing=m).values, ".2f") for m in fracs],
                     [str(img), "biharmonic"] + [mean_sd(bih.sel(test_missing=m).values, ".2f") for m in fracs],
                     [str(img), "difference (per seed)"]
                     + [_paired_p(lasso.sel(test_missing=m).values - bih.sel(test_missing=m).values) for m in fracs]]
    crops = Table(f"{NAME}/per_crop", ["crop", "PSNR on the missing pixels (dB)"] + heads, per_crop,
                  align=["l", "l"] + ["r"] * len(fracs))

    def row(label, a, b):
        return [label] + [_paired_p(a.sel(test_missing=m).values - b.sel(test_missing=m).values) for m in fracs]

    claims = []
    for var in variants:
        for tm in trains[1:]:
            claims.append(row(f"{VARIANT_TITLES.get(var, var)}: learned at {tm:.0%} − at {t0:.0%} missing",
                              dictionary("missing", var, tm), dictionary("missing", var, t0)))
    if "lasso_raw" in variants and "lasso" in variants:
        claims.append(row(f"centred − raw pixels (lasso, learned at {t0:.0%})", dictionary("missing", "lasso", t0),
                          dictionary("missing", "lasso_raw", t0)))
        claims.append(row(f"lasso, raw pixels, learned at {t0:.0%} − per-patch observed mean",
                          dictionary("missing", "lasso_raw", t0), base("missing", "patch_mean")))
    for b in ("patch_mean", "biharmonic"):
        claims.append(row(f"{VARIANT_TITLES.get(variants[0])}, learned at {t0:.0%} − "
                          f"{BASELINE_TITLES[b].split(': ', 1)[1]}", dictionary("missing", variants[0], t0),
                          base("missing", b)))
    if "torus" in variants and "lasso" in variants:
        for tm in trains:
            claims.append(row(f"torus groups − lasso (both centred), learned at {tm:.0%} missing",
                              dictionary("missing", "torus", tm), dictionary("missing", "lasso", tm)))
    claims = Table(f"{NAME}/claims", ["difference on the missing pixels, dB (per seed: mean ± sd, seeds above 0, "
                                      "paired t-test p)"] + heads, claims, align=["l"] + ["r"] * len(fracs))
    return [score_table("missing", "psnr_missing"), score_table("whole", "psnr_whole"), crops, claims]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
