"""A hierarchical dictionary: OSDL with tree-structured groups on natural-image patches (paper 003).

The code units form a complete rooted tree (``GRID['depth']`` levels, ``BRANCHING``
children per node); every node's group holds the node and all its
descendants (:meth:`neurosim.groups.GroupStructure.tree`, Jenatton et al.
2010), so a unit can be active only where its ancestors are. The OSDL
circuit (:func:`neurosim.models.osdl.build_network`) learns from 8x8
mean-removed natural-image patches (:class:`neurosim.data.images.ImagePatchStream`,
not whitened).

Measured on held-out patches (images of the test split):

* *coarse to fine*: the mean radial spatial frequency of each element's
  power spectrum, per depth (the root should be the coarsest);
* *usage* per depth: the fraction of patches whose code uses an element
  (the root most, the leaves least);
* *tree consistency*: the fraction of (patch, unit) pairs where a unit is
  active (``|alpha| > ACTIVE`` times the code's largest entry) while its
  parent is not -- 0 for an exact solution of the tree-structured problem.

Outputs: ``<out>/osdl_hierarchical.nc`` and ``.png`` (the elements drawn as
a tree, coarse to fine, and frequency per depth).
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

from neurosim.simulations._osdl_common import SOLVER

NAME = "osdl_hierarchical"
DESCRIPTION = "Szabo et al. 2011 (OSDL) with tree-structured groups: a hierarchical dictionary of 8x8 patches"
DEFAULT_STEPS = 2000
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 10}
PATCH, BATCH, BRANCHING, KAPPA = 8, 64, 4, 0.05
GRID = {"depth": [3]}
N_TEST, ACTIVE = 1000, 1e-3


def radial_frequency(W: np.ndarray, patch: int) -> np.ndarray:
    """Mean radial spatial frequency (cycles/pixel) of each row's power spectrum, the DC term excluded."""
    F = np.abs(np.fft.fft2(W.reshape(-1, patch, patch))) ** 2
    f = np.fft.fftfreq(patch)
    r = np.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    F[:, 0, 0] = 0.0
    tot = F.sum(axis=(1, 2))
    return np.where(tot > 0, (F * r).sum(axis=(1, 2)) / np.where(tot > 0, tot, 1.0), np.nan)


def tree_violations(codes: np.ndarray, parent: np.ndarray, active: float = ACTIVE) -> float:
    """Fraction of (sample, non-root unit) pairs active while the parent is not (relative threshold ``active``)."""
    scale = np.abs(codes).max(axis=1, keepdims=True)
    on = np.abs(codes) > active * np.where(scale > 0, scale, 1.0)
    child = np.flatnonzero(parent >= 0)
    return float((on[:, child] & ~on[:, parent[child]]).mean())


def check_point(depth: int, steps: int | None = None):
    from neurosim._validation import check_int

    check_int("depth", depth, low=1, high=6)
    if steps is not None:
        check_int("steps", steps, low=1)


def point(depth: int, seed: int, steps: int | None = None) -> xr.Dataset:
    """Learn the tree dictionary and measure it on held-out patches."""
    import neurosim as ns
    from neurosim.data.images import TEST_IMAGES, TRAIN_IMAGES, ImagePatchStream, sample_patches
    from neurosim.models.osdl import build_network

    check_point(depth, steps)
    steps = DEFAULT_STEPS if steps is None else steps
    groups = ns.GroupStructure.tree(depth, BRANCHING)
    stream = ImagePatchStream(PATCH, images=TRAIN_IMAGES, whiten=False, seed=seed)
    circuit = build_network(stream, groups.n_units, groups=groups, kappa=KAPPA, batch=BATCH, seed=seed,
                            solver=SOLVER)
    circuit.run(steps)
    test = sample_patches(N_TEST, PATCH, seed=seed + 1, images=TEST_IMAGES, whiten=False)
    codes = circuit.encode(test)
    W = circuit.W.copy()
    depth = np.zeros(groups.n_units, dtype=np.int64)
    for j in range(1, groups.n_units):
        depth[j] = depth[groups.parent[j]] + 1
    norms = (test ** 2).sum(axis=1)
    keep = norms > 0  # flat patches are all zero once their mean is removed
    err = ((test[keep] - codes[keep] @ W) ** 2).sum(axis=1) / norms[keep]
    return xr.Dataset(
        {"elements": (("unit", "pixel"), W), "parent": ("unit", groups.parent), "unit_depth": ("unit", depth),
         "frequency": ("unit", radial_frequency(W, PATCH)),
         "usage": ("unit", (np.abs(codes) > ACTIVE * np.abs(codes).max(axis=1, keepdims=True).clip(1e-300)).mean(0)),
         "violations": tree_violations(codes, groups.parent), "relative_error": float(err.mean())},
        coords={"unit": np.arange(groups.n_units)})


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_seeds=None) -> dict[str, pathlib.Path]:
    """Learn the tree dictionary on ``n_seeds`` seeds (default 3), measure it (mean ± sd over seeds), draw seed 1's.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``: the elements with their depth, frequency and usage, tree violations and error per seed;
        ``figure``: the first seed's elements drawn as a tree, and the frequency per depth.
    """
    from neurosim.plot import plot_tree_dictionary
    from neurosim.simulations._harness import mean_sd, pyplot, save_final_figure
    from neurosim.simulations._osdl_common import run_seeds, write_osdl_dataset

    runs, steps, seed, n_seeds, out, say = run_seeds(NAME, point, GRID, steps, DEFAULT_STEPS, 1, out, seed, progress,
                                                     resume, n_seeds)
    ds = runs.isel(depth=0)
    depth_levels = int(ds.depth.values) if ds.depth.ndim == 0 else GRID["depth"][0]
    ds = ds.drop_vars([v for v in ("error", "seconds", "depth") if v in ds or v in ds.coords])
    ds = ds.rename({"unit_depth": "depth"})
    # the tree is the same on every seed
    ds = ds.assign(depth=ds.depth.isel(seed=0, drop=True), parent=ds.parent.isel(seed=0, drop=True))
    paths = write_osdl_dataset(ds, NAME, out, steps, seed, n_seeds, levels=depth_levels, branching=BRANCHING,
                               kappa=KAPPA, batch=BATCH, patch=PATCH)
    freq = ds.frequency.groupby(ds.depth).mean()
    use = ds.usage.groupby(ds.depth).mean()
    for d in freq.depth.values:
        say(f"depth {d} ({n_seeds} seeds, mean ± sd): mean radial frequency {mean_sd(freq.sel(depth=d), '.3f')} "
            f"cycles/pixel, usage {mean_sd(use.sel(depth=d), '.3f')}")
    say(f"tree violations {mean_sd(ds.violations, '.2e')}, relative error {mean_sd(ds.relative_error, '.3f')}")

    plt = pyplot()
    fig = plt.figure(figsize=(11, 4.2))
    ax = fig.add_axes([0.07, 0.08, 0.66, 0.84])
    plot_tree_dictionary(ds.elements.isel(seed=0).values, ds.parent.values, PATCH, ax=ax)
    ax.set_title(f"tree-structured OSDL dictionary ({depth_levels} levels, branching {BRANCHING})", fontsize=9)
    ax2 = fig.add_axes([0.8, 0.15, 0.18, 0.7])
    ax2.errorbar(freq.depth, freq.mean("seed"), yerr=freq.std("seed", ddof=1) if n_seeds > 1 else None, fmt="o-",
                 capsize=2, label=f"frequency, mean ± sd over {n_seeds} seeds")
    ax2.set_xlabel("depth")
    ax2.set_ylabel("mean radial frequency (cycles/pixel)")
    ax2.set_xticks(freq.depth.values)
    return save_final_figure(fig, out / f"{NAME}.png", "figure", paths, say)


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": "paper003_hierarchical.png"}


def _depth_label(d: int, deepest: int) -> str:
    return f"{d} (root)" if d == 0 else f"{d} (leaves)" if d == deepest else str(d)


def tables(ds: xr.Dataset) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``depths``: per depth of the tree, the mean radial frequency and the
    usage of its elements (each seed's mean over the depth's elements), mean
    ± sd over seeds and per seed. ``claims``: per seed, whether usage falls
    at every step down the tree, the leaves' frequency above every upper
    level's, depth 1's above the root's (each with the seeds that agree),
    the tree violations (0 for an exact solution of the tree-structured
    problem; seeds with none) and the held-out relative error.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    freq = ds.frequency.groupby(ds.depth).mean().transpose("seed", "depth")
    use = ds.usage.groupby(ds.depth).mean().transpose("seed", "depth")
    depths = [int(d) for d in freq.depth.values]
    deepest, n = max(depths), ds.sizes["seed"]
    rows = [[_depth_label(d, deepest), mean_sd(freq.sel(depth=d).values), per_seed(freq.sel(depth=d).values, ".3f"),
             mean_sd(use.sel(depth=d).values), per_seed(use.sel(depth=d).values, ".3f")] for d in depths]
    by_depth = Table(f"{NAME}/depths", ["depth", "mean radial frequency (cycles/pixel), mean ± sd", "per seed",
                                        "usage (fraction of patches), mean ± sd", "per seed"],
                     rows, align=["l", "r", "l", "r", "l"])
    u, f = use.values, freq.values
    falls = np.all(np.diff(u, axis=1) < 0, axis=1)
    chain = cell(" / ".join("{s%d}" % i for i in range(n)),
                 **{f"s{i}": " > ".join(f"{x:.3f}" for x in u[i]) for i in range(n)}) if n else None
    upper = f[:, [j for j, d in enumerate(depths) if d != deepest]].max(axis=1)
    leaves = f[:, depths.index(deepest)]
    v = ds.violations.values * 100
    rows = [["usage falls at every step down the tree (the root used most)",
             cell("{k}/{n}", k=int(falls.sum()), n=n), chain],
            ["coarse to fine: the leaves' frequency − the highest of the upper levels' (> 0)",
             paired(leaves - upper, holds=">"), per_seed(leaves - upper)]]
    if 1 in depths and deepest > 1:
        rows.append(["coarse to fine: depth 1's frequency − the root's (> 0)",
                     paired(f[:, depths.index(1)] - f[:, 0], holds=">"), per_seed(f[:, depths.index(1)] - f[:, 0])])
    rows += [["tree violations, % of (patch, unit) pairs (0 for an exact solution; seeds with none)",
              cell("{k}/{n}: {mean:.3f} ± {sd:.3f}", k=int((v == 0).sum()), n=n, mean=float(v.mean()),
                   sd=float(v.std(ddof=1)) if n > 1 else 0.0), per_seed(v, ".3f")],
             ["relative reconstruction error of the held-out patches", mean_sd(ds.relative_error.values),
              per_seed(ds.relative_error.values, ".3f")]]
    claims = Table(f"{NAME}/claims", ["claim (the project's own)", "seeds that agree (mean ± sd)", "per seed"], rows,
                   align=["l", "r", "l"])
    return [by_depth, claims]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
