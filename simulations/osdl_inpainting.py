"""Inpainting with OSDL dictionaries learned from incomplete natural-image patches (paper 003).

The OSDL circuit (:func:`neurosim.models.osdl.build_network`; no group
structure, i.e. lasso codes; masks from :class:`~neurosim.streams.BernoulliMaskStream`)
learns a dictionary of 8x8 raw grey patches (pixels in [0, 1]) of the
training photographs with 0 %, 25 %, 50 % or 75 % of the pixels of every
training patch missing: only the observed pixels enter the codes and the
statistics. Each dictionary then inpaints held-out crops (photographs never
seen in training) with 25 %, 50 % and 75 % of their pixels missing: every
overlapping patch (stride ``STRIDE``) is coded on its observed pixels
(Table 2 with the masked dictionary), reconstructed from the whole
dictionary, the reconstructions averaged, the observed pixels kept
(:func:`neurosim.analysis.inpainting.inpaint`).

The score is the PSNR of the whole crop (peak 1); the baseline fills every
missing pixel with the mean of the crop's observed pixels. Learning from complete
data is the 0 % dictionary; the comparison the paper makes is how little is
lost when the dictionary itself was learned from incomplete data.

Outputs: ``<out>/osdl_inpainting.nc`` (PSNR per training fraction, test
fraction and crop; the dictionaries) and ``.png`` (PSNR curves, an example).
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

NAME = "osdl_inpainting"
DESCRIPTION = "Szabo et al. 2011 (OSDL): inpainting held-out images with dictionaries learned from 0-75 % missing pixels"
DEFAULT_STEPS = 500
GRID = {"train_missing": [0.0, 0.25, 0.5, 0.75]}
TEST_MISSING = (0.25, 0.5, 0.75)
PATCH, BATCH, N_COMPONENTS, KAPPA, CODE_ITER = 8, 32, 128, 0.01, 50
N_TEST, CROP, STRIDE = 3, 64, 2


def check_point(train_missing: float, steps: int | None = None):
    from neurosim._validation import check_float, check_int

    check_float("train_missing", train_missing, low=0.0, high=1.0, high_open=True)
    if steps is not None:
        check_int("steps", steps, low=1)


def _encoder(circuit):
    return lambda X, M: circuit.encode(X, M)


def point(train_missing: float, seed: int, steps: int | None = None) -> xr.Dataset:
    """Learn one dictionary at ``train_missing`` and inpaint the ``N_TEST`` test crops at every test fraction."""
    from neurosim.analysis.inpainting import InpaintingPatchStream, inpaint, inpainting_images, psnr, random_pixel_mask
    from neurosim.models.osdl import build_network
    from neurosim.streams import BernoulliMaskStream

    check_point(train_missing, steps)
    steps = DEFAULT_STEPS if steps is None else steps
    stream = InpaintingPatchStream(PATCH, seed=seed)
    masks = BernoulliMaskStream(PATCH * PATCH, train_missing, seed=seed + 1) if train_missing > 0 else None
    init = stream.block(10 ** 6, 1, N_COMPONENTS)[0]  # patches far from the training steps
    circuit = build_network(stream, N_COMPONENTS, kappa=KAPPA, batch=BATCH, masks=masks, code_iter=CODE_ITER,
                            init=init, seed=seed)
    circuit.run(steps)
    n_test, crop = N_TEST, CROP
    images = inpainting_images(n_test=n_test, crop=crop, seed=seed + 2)["test"]
    rng = np.random.default_rng(seed + 3)
    scores = np.zeros((len(TEST_MISSING), n_test))
    baseline = np.zeros((len(TEST_MISSING), n_test))
    example = np.zeros((3, crop, crop))
    for i, miss in enumerate(TEST_MISSING):
        for j, img in enumerate(images):
            obs = random_pixel_mask(img.shape, miss, rng)
            filled = inpaint(img, obs, _encoder(circuit), circuit.W, size=PATCH, step=STRIDE)
            scores[i, j] = psnr(img, filled)
            baseline[i, j] = psnr(img, np.where(obs, img, img[obs].mean()))
            if j == 0 and miss == 0.5:
                example[:] = img, np.where(obs, img, np.nan), filled
    return xr.Dataset({"psnr": (("test_missing", "image"), scores),
                       "psnr_mean_fill": (("test_missing", "image"), baseline),
                       "dictionary": (("unit", "pixel"), circuit.W.copy()),
                       "example": (("panel", "row", "col"), example)},
                      coords={"test_missing": list(TEST_MISSING), "image": np.arange(n_test),
                              "panel": ["original", "observed", "inpainted"]})


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False) -> dict[str, pathlib.Path]:
    """Learn the four dictionaries, inpaint, write the table and figure.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``figure``.
    """
    from neurosim.simulations._harness import prepare, pyplot, run_grid, save_figure

    steps, seed, out, say = prepare(NAME, steps, DEFAULT_STEPS, 1, out, seed, progress)
    plt = pyplot()
    runs = run_grid(NAME, point, GRID, seed, steps, out, resume)
    ds = runs[["psnr", "psnr_mean_fill", "dictionary", "example"]]
    # the baseline does not depend on the dictionary: the same masks (same seed) for every training fraction
    ds["psnr_mean_fill"] = ds.psnr_mean_fill.isel(train_missing=0, drop=True)
    ds.attrs = {"simulation": NAME, "paper": "003", "steps": steps, "seed": seed, "n_components": N_COMPONENTS,
                "kappa": KAPPA, "batch": BATCH, "patch": PATCH, "stride": STRIDE, "code_iter": CODE_ITER}
    paths = {"dataset": out / f"{NAME}.nc"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")
    mean = ds.psnr.mean("image")
    say("mean fill: PSNR " + ", ".join(f"{float(ds.psnr_mean_fill.mean('image').sel(test_missing=m)):.2f} dB at "
                                         f"{m:.0%}" for m in ds.test_missing.values))
    for tm in ds.train_missing.values:
        say(f"learned with {tm:.0%} missing: PSNR " + ", ".join(
            f"{float(mean.sel(train_missing=tm, test_missing=m)):.2f} dB at {m:.0%}" for m in ds.test_missing.values))

    fig = plt.figure(figsize=(11, 3.6))
    ax = fig.add_axes([0.06, 0.14, 0.36, 0.76])
    for i, tm in enumerate(ds.train_missing.values):
        ax.plot(100 * ds.test_missing, mean.sel(train_missing=tm), "o-", color=plt.cm.viridis(i / 3),
                label=f"learned with {tm:.0%} missing")
    ax.plot(100 * ds.test_missing, ds.psnr_mean_fill.mean("image"), "k:", label="mean fill")
    ax.set_xlabel("pixels missing in the test image (%)")
    ax.set_ylabel("PSNR (dB)")
    ax.legend(fontsize=7)
    ex = ds.example.sel(train_missing=ds.train_missing.values[-2])
    for i, panel in enumerate(ex.panel.values):
        a = fig.add_axes([0.47 + 0.175 * i, 0.12, 0.16, 0.76])
        a.imshow(ex.sel(panel=panel), cmap="gray", vmin=0, vmax=1)
        a.set_title(f"{panel}" + (" (50 % missing)" if panel == "observed" else ""), fontsize=8)
        a.axis("off")
    paths["figure"] = save_figure(fig, out / f"{NAME}.png")
    say(f"wrote {', '.join(str(p) for p in paths.values())}")
    return paths


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
