"""A topographic dictionary: OSDL with overlapping torus neighbourhoods on whitened patches (paper 003).

The code units sit on a ``ROWS x ROWS`` grid wrapped into a torus; every
unit's 3x3 neighbourhood is a group (:meth:`neurosim.groups.GroupStructure.torus`),
so units that are active together are pulled into the same neighbourhoods.
The OSDL circuit (:func:`neurosim.models.osdl.build_network`) learns from
8x8 whitened natural-image patches (:class:`neurosim.data.images.ImagePatchStream`,
training photographs). Every element gets a Gabor fit
(:func:`neurosim.analysis.receptive_fields.fit_gabors`); the map is
topographic when torus neighbours have more similar orientations and
positions than random pairs (:func:`neurosim.analysis.topography.neighbour_differences`,
one-sided Mann-Whitney U). The same circuit with singleton groups (the
lasso: no topography) is the control.

Outputs: ``<out>/osdl_topographic.nc`` (dictionaries, fits, pair
statistics) and ``.png`` (the two maps as tiles on the grid, orientation
differences of neighbours and random pairs).
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

from neurosim.simulations._osdl_common import SOLVER

NAME = "osdl_topographic"
DESCRIPTION = "Szabo et al. 2011 (OSDL) with torus-neighbourhood groups: a topographic dictionary of whitened patches"
DEFAULT_STEPS = 800
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 4}
GRID = {"groups": ["torus", "none"]}
PATCH, BATCH, ROWS, KAPPA, CODE_ITER = 8, 32, 12, 0.1, 30
MIN_R2 = 0.5


def check_point(groups: str, steps: int | None = None):
    from neurosim._validation import check_choice, check_int

    check_choice("groups", groups, GRID["groups"])
    if steps is not None:
        check_int("steps", steps, low=1)


def point(groups: str, seed: int, steps: int | None = None) -> xr.Dataset:
    """Learn one map and measure neighbour similarity."""
    import neurosim as ns
    from neurosim.analysis.receptive_fields import fit_gabors
    from neurosim.analysis.topography import neighbour_differences
    from neurosim.data.images import TRAIN_IMAGES, ImagePatchStream
    from neurosim.models.osdl import build_network

    check_point(groups, steps)
    steps = DEFAULT_STEPS if steps is None else steps
    structure = ns.GroupStructure.torus(ROWS, ROWS) if groups == "torus" else None
    circuit = build_network(ImagePatchStream(PATCH, images=TRAIN_IMAGES, seed=seed), ROWS * ROWS, groups=structure,
                            kappa=KAPPA, batch=BATCH, code_iter=CODE_ITER, seed=seed, solver=SOLVER)
    circuit.run(steps)
    W = circuit.W.copy()
    params, r2 = fit_gabors(W, PATCH)
    stats = neighbour_differences(params, (ROWS, ROWS), r2, min_r2=MIN_R2, seed=seed)
    s = stats["summary"]
    return xr.Dataset(
        {"dictionary": (("unit", "pixel"), W), "gabor": (("unit", "field"), params), "r2": ("unit", r2),
         **{k: float(v) for k, v in s.items()}},
        coords={"unit": np.arange(ROWS * ROWS),
                "field": ["x0", "y0", "theta", "freq", "phase", "sigma_x", "sigma_y", "amp"]})


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_seeds=None) -> dict[str, pathlib.Path]:
    """Learn the topographic map and its lasso control; measure; draw.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``: the dictionaries, their Gabor fits and the neighbour statistics per seed and group structure;
        ``figure``: both maps as tiles, and the orientation differences of neighbours and of random pairs.
    """
    from neurosim.analysis.topography import neighbour_differences
    from neurosim.plot import tiles
    from neurosim.simulations._harness import mean_sd, pyplot, save_final_figure
    from neurosim.simulations._osdl_common import run_seeds, write_osdl_dataset

    runs, steps, seed, n_seeds, out, say = run_seeds(NAME, point, GRID, steps, DEFAULT_STEPS, 1, out, seed, progress,
                                                     resume, n_seeds)
    ds = runs.drop_vars([v for v in ("error", "seconds") if v in runs])
    paths = write_osdl_dataset(ds, NAME, out, steps, seed, n_seeds, rows=ROWS, kappa=KAPPA, batch=BATCH, patch=PATCH,
                               min_r2=MIN_R2, code_iter=CODE_ITER)
    for g in ds.groups.values:
        one = ds.sel(groups=g)
        say(f"{g} ({n_seeds} seeds, mean ± sd): {mean_sd(one.n_included, '.0f')} of {ROWS * ROWS} elements fitted "
            f"(r2 >= {MIN_R2}); orientation difference neighbours "
            f"{mean_sd(np.degrees(one.neighbour_orientation_mean), '.1f')} deg vs random "
            f"{mean_sd(np.degrees(one.random_orientation_mean), '.1f')} deg (p per seed: "
            f"{', '.join(f'{p:.2g}' for p in one.orientation_p.values)}); centre distance "
            f"{mean_sd(one.neighbour_distance_mean)} vs {mean_sd(one.random_distance_mean)} px (p per seed: "
            f"{', '.join(f'{p:.2g}' for p in one.distance_p.values)})")
    ds0 = ds.isel(seed=0)

    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), gridspec_kw={"width_ratios": [1, 1, 0.8]})
    for ax, g in zip(axes[:2], ds.groups.values):
        tiles(ds0.dictionary.sel(groups=g).values, (PATCH, PATCH), ncols=ROWS, ax=ax)
        ax.set_title(f"{g} groups ({ROWS}x{ROWS} torus layout), seed {seed}", fontsize=9)
    bins = np.linspace(0, 90, 10)
    for g, color in zip(ds.groups.values, ("C0", "C1")):
        one = ds0.sel(groups=g)
        st = neighbour_differences(one.gabor.values, (ROWS, ROWS), one.r2.values, min_r2=MIN_R2, seed=seed)
        axes[2].hist(np.degrees(st["neighbour_orientation"]), bins=bins, density=True, histtype="step", color=color,
                     label=f"{g}: neighbours")
        axes[2].hist(np.degrees(st["random_orientation"]), bins=bins, density=True, histtype="step", color=color,
                     ls=":", label=f"{g}: random pairs")
    axes[2].set_xlabel("orientation difference (deg)")
    axes[2].set_ylabel("density (Gabor-fitted atoms)")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return save_final_figure(fig, out / f"{NAME}.png", "figure", paths, say)


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": "paper003_topographic.png"}


def tables(ds: xr.Dataset) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``maps``: per group structure, the elements fitted per seed, the mean
    orientation difference and centre distance of torus neighbours and of
    random pairs (mean ± sd over seeds) and each seed's one-sided
    Mann-Whitney p. ``claims``: per seed, neighbours − random pairs for
    orientation and distance (< 0: a map), with the seeds where it is below
    0 and the seeds where p < 0.05.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    n_units = ds.sizes["unit"]
    n = ds.sizes["seed"]
    titles = {"torus": "torus 3x3", "none": "none (lasso)"}
    rows, claims = [], []
    for g in ds.groups.values:
        one = ds.sel(groups=g)
        no, ro = np.degrees(one.neighbour_orientation_mean.values), np.degrees(one.random_orientation_mean.values)
        nd, rd = one.neighbour_distance_mean.values, one.random_distance_mean.values
        fitted = cell(", ".join("{s%d:.0f}" % i for i in range(n)) + " of {units}",
                      units=n_units, **{f"s{i}": v for i, v in enumerate(one.n_included.values)})
        rows.append([titles.get(str(g), str(g)), fitted,
                     cell("{a}° / {b}°", a=_fmt(mean_sd(no, ".1f")), b=_fmt(mean_sd(ro, ".1f"))),
                     per_seed(one.orientation_p.values, ".2g"),
                     cell("{a} / {b}", a=_fmt(mean_sd(nd, ".2f")), b=_fmt(mean_sd(rd, ".2f"))),
                     per_seed(one.distance_p.values, ".2g")])
        for what, a, b, p, unit in (("orientation difference", no, ro, one.orientation_p.values, "°"),
                                    ("centre distance", nd, rd, one.distance_p.values, " px")):
            claims.append([f"{titles.get(str(g), str(g))}: {what}, neighbours − random pairs ({unit.strip()}; < 0)",
                           paired(a - b, "+.2f", holds="<"), cell("{k}/{n}", k=int((p < 0.05).sum()), n=n),
                           per_seed(a - b, "+.2f")])
    maps = Table(f"{NAME}/maps", ["groups", "elements fitted (per seed)", "orientation difference, neighbours / random",
                                  "p per seed", "centre distance (px), neighbours / random", "p per seed"], rows,
                 align=["l", "l", "r", "l", "r", "l"])
    claims = Table(f"{NAME}/claims", ["difference (per seed)", "seeds below 0 (mean ± sd)", "seeds with p < 0.05",
                                      "per seed"], claims, align=["l", "r", "r", "l"])
    return [maps, claims]


def _fmt(c) -> str:
    return "" if c is None else c["fmt"].format(**c["values"])


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
