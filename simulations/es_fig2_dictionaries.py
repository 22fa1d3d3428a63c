"""Paper 004, Fig. 2: the two ground-truth dictionaries and their coherences.

The dictionaries every example-selection simulation learns back
(:func:`neurosim.simulations._es_common.ground_truth`): 100 Gabor patches
of 8x8 pixels (5 centres x 2 frequencies x 2 phases x 5 orientations) and
64 glyphs ``0-9 A-Z a-z ? &`` rendered with DejaVu Sans (bundled with
matplotlib), element ``j`` rotated by ``90 (j mod 4)`` degrees and
multiplied by ``(-1)^j``, zero-mean, unit norm
(:mod:`neurosim.data.dictionaries`). The paper gives their coherence
``mu = max_{i != j} |a_i . a_j|`` and average coherence ``mu-bar`` (mean
over the ``K (K - 1) / 2`` pairs): 0.97 / 0.13 and 0.95 / 0.34.

The dictionaries are constructed, not drawn: nothing here depends on a
seed. ``seed`` and ``n_seeds`` are the arguments every simulation takes
(``neurosim run``, ``neurosim reproduce``); they are recorded and change
nothing. Outputs: ``<out>/es_fig2_dictionaries.nc`` (both dictionaries and
their coherences) and ``.png`` (Fig. 2).
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

NAME = "es_fig2_dictionaries"
DESCRIPTION = "paper 004 Fig. 2: the Gabor and alphanumeric ground-truth dictionaries and their coherences"
#: the same run: it takes a second
QUICK: dict = {}
#: the figure the report shows (docs/reports/paper004.md): what this run writes -> its name there
REPORT_FIGURES = {"es_fig2_dictionaries.png": "paper004_fig2_dictionaries.png"}
#: the paper's coherences (Sec. 4.1): (mu, mu-bar)
PAPER = {"gabor": (0.97, 0.13), "alphanumeric": (0.95, 0.34)}
TITLES = {"gabor": "100 Gabor patches, 8x8 (5 centres x 2 frequencies x 2 phases x 5 orientations)",
          "alphanumeric": "64 glyphs `0-9 A-Z a-z ? &`, DejaVu Sans (bundled with matplotlib), element `j` rotated "
                          "by `90 (j mod 4)` degrees and multiplied by `(-1)^j`, zero-mean, unit norm"}


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, n_seeds=None) -> dict[str, pathlib.Path]:
    """Build both dictionaries, measure their coherences, draw Fig. 2.

    Parameters
    ----------
    steps : None
        The dictionaries are constructed: there are no steps (anything but None is refused).
    out : path
        Output folder.
    seed, n_seeds : int, optional
        Recorded in the dataset's attributes; the dictionaries do not depend on them.
    progress : bool
        Say what was written.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset`` and ``figure``.
    """
    from neurosim.analysis import average_coherence, coherence
    from neurosim.simulations._es_common import DICTIONARIES, ground_truth
    from neurosim.simulations._harness import output_folder, progress_printer, pyplot, save_final_figure, write_dataset

    if steps is not None:
        raise ValueError(f"{NAME} constructs its dictionaries: it has no steps (steps must be None); got {steps!r}")
    out = output_folder(out)
    say = progress_printer(NAME, progress)
    atoms = {name: ground_truth(name) for name in DICTIONARIES}
    ds = xr.Dataset(
        {f"{name}_atoms": ((f"{name}_pixel", f"{name}_element"), A) for name, A in atoms.items()}
        | {"mu": ("dictionary", [coherence(A) for A in atoms.values()]),
           "mu_bar": ("dictionary", [average_coherence(A) for A in atoms.values()])},
        coords={"dictionary": list(atoms)},
        attrs={"seed": int(seed), "n_seeds": int(n_seeds or 1),
               "seeds": "not used: the dictionaries are constructed, not drawn"})
    paths = write_dataset(ds, out, NAME)
    for name in atoms:
        say(f"{name}: mu = {float(ds.mu.sel(dictionary=name)):.3f}, mu-bar = {float(ds.mu_bar.sel(dictionary=name)):.3f}"
            f" (paper {PAPER[name][0]} / {PAPER[name][1]})")

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 5.2))
    for ax, (name, A) in zip(axes, atoms.items()):
        ax.imshow(_tiles(A), cmap="gray", vmin=0.0, vmax=1.0, interpolation="nearest")
        ax.set_title(f"{'Gabor' if name == 'gabor' else 'Alphanumeric'} (K={A.shape[1]})")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return save_final_figure(fig, out / f"{NAME}.png", "figure", paths, say)


def _tiles(A: np.ndarray, gap: int = 1) -> np.ndarray:
    """The elements of ``A`` (P = side^2, K) as a grid of side x side tiles on one scale (0 is mid-grey, so signs show)."""
    side = int(round(np.sqrt(A.shape[0])))
    k = A.shape[1]
    cols = int(np.ceil(np.sqrt(k)))
    rows = int(np.ceil(k / cols))
    grid = np.ones((rows * (side + gap) + gap, cols * (side + gap) + gap))
    scale = 2 * np.abs(A).max()
    for j in range(k):
        r, c = divmod(j, cols)
        y, x = gap + r * (side + gap), gap + c * (side + gap)
        grid[y:y + side, x:x + side] = 0.5 + A[:, j].reshape(side, side) / scale
    return grid


def tables(ds) -> list:
    """The report's coherence table: ours against the paper's, per dictionary."""
    from neurosim.report_tables import Table

    rows = [[TITLES[name], float(ds.mu.sel(dictionary=name)), float(ds.mu_bar.sel(dictionary=name)),
             f"{PAPER[name][0]} / {PAPER[name][1]}"] for name in ds.dictionary.values.tolist()]
    return [Table(f"{NAME}/coherence", ["dictionary", "mu (ours)", "mu-bar (ours)", "paper"], rows,
                  formats=[None, ".3f", ".3f", None], align=["l", "r", "r", "l"])]


if __name__ == "__main__":
    from neurosim.cli import script_main

    raise SystemExit(script_main(run, NAME))
