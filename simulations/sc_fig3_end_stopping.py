"""Lee et al. (2006) Fig. 3 (left): end-stopping of overcomplete sparse-coding bases.

Protocol (reconstructed; details in :mod:`neurosim.analysis.receptive_fields`):

1. take the 1,024 learned 14x14 bases of ``sc_fig2_bases`` (from its cache,
   or learn them with the same parameters);
2. encode a bank of bars (every centre >= 2 px from the border, 12
   orientations, lengths 3/6/10 px, both contrasts) with feature-sign search
   on the whole dictionary; a unit's response is its coefficient;
3. keep the *significantly activated* units: at their optimal bar the unit
   is among the 3 largest coefficients and has at least 25 % of the largest;
4. for each kept unit vary the length of its optimal bar from 1 px to the
   patch diagonal (20 px for 14x14) at the optimal centre, orientation and
   contrast, and record its coefficient relative to its maximum over lengths.

A unit is counted as *end-stopped* when its response to the longest bar is
more than 10 % (and, more strictly, 30 %) below its peak; the paper shows
the curves without giving a count.
"""

from __future__ import annotations

import pathlib
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from neurosim.models.sparse_coding import FULL_STEPS  # noqa: E402
from neurosim.simulations._harness import progress_printer, write_dataset  # noqa: E402
from neurosim.simulations._sc_common import (BAR_PROTOCOL, PAPER, bar_test_attrs, bases_and_bars,  # noqa: E402
                                             bases_histogram, save_png)

NAME = "sc_fig3_end_stopping"
DESCRIPTION = "Lee et al. 2006 Fig. 3 left: bar-length tuning (end-stopping) of sparse-coding bases"
#: Learning iterations of the bases (shared with sc_fig2_bases, whose cache is reused).
DEFAULT_STEPS = FULL_STEPS
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 30, "n_atoms": 64, "patch_size": 8, "batch": 1000}
#: ``neurosim reproduce`` runs it after these, for the same seed: it reads their bases (``bases_dir``)
REPRODUCE_AFTER = ("sc_fig2_bases",)

#: Selection of "significantly activated" units (the paper gives no number).
TOP_K = 3
MIN_REL = 0.25


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_atoms=None, patch_size=None, lam=None,
        batch=None, bases_dir=None) -> dict[str, pathlib.Path]:
    """Run the end-stopping test on learned natural-image bases.

    Parameters
    ----------
    steps, n_atoms, patch_size, lam, batch, bases_dir : optional
        The bases whose bar-length tuning is measured (their learning iterations, by default
        :data:`DEFAULT_STEPS`, and configuration) and their cache: see
        :func:`~neurosim.simulations._sc_common.bases_and_bars`.
    out : str or path
        Output folder.
    seed : int
        Seed of the bases (patches and initial dictionary).
    progress : bool
        Print progress.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset`` (netCDF) and ``curves`` (PNG).
    """
    from neurosim.analysis.receptive_fields import length_tuning

    setup, out = bases_and_bars(NAME, out, bases_dir, steps=steps, n_atoms=n_atoms, patch_size=patch_size, lam=lam,
                                batch=batch, seed=seed, progress=progress)
    say = progress_printer(NAME, progress)
    D, p, bars = setup.D, setup.patch_size, setup.bars

    t1 = time.perf_counter()
    active = (bars["rank"] <= TOP_K) & (bars["rel"] >= MIN_REL) & (bars["response"] > 0)
    units = np.flatnonzero(active)
    lengths, resp = length_tuning(D, setup.lam, units, bars, patch_size=p)
    t_test = setup.bar_seconds + time.perf_counter() - t1

    peak = resp.max(axis=1)
    rel = resp / np.where(peak > 0, peak, 1.0)[:, None]
    esi = 1.0 - rel[:, -1]  # end-stopping index: drop from peak at the longest bar
    opt_len = lengths[resp.argmax(axis=1)]
    n10, n30 = int(np.sum(esi > 0.1)), int(np.sum(esi > 0.3))
    say(f"{len(units)}/{D.shape[0]} units significantly activated by a bar (bank of {bars['n_stimuli']}); "
        f"end-stopped: {n10} drop > 10 %, {n30} drop > 30 %; median optimal length "
        f"{np.median(opt_len) if len(units) else float('nan'):.0f} px; bases {setup.learn_seconds:.0f} s "
        f"({'cached' if setup.cached else 'learned'}), test {t_test:.0f} s")

    ds = xr.Dataset(
        {
            "response": (("unit", "length"), resp),
            "relative_response": (("unit", "length"), rel),
            "end_stopping_index": (("unit",), esi),
            "optimal_length": (("unit",), opt_len),
            "bar_orientation": (("unit",), bars["orientation"][units]),
            "bar_cx": (("unit",), bars["cx"][units]),
            "bar_cy": (("unit",), bars["cy"][units]),
            "bar_polarity": (("unit",), bars["polarity"][units]),
            "atom_best_response": (("atom",), bars["response"]),
            "atom_best_rank": (("atom",), bars["rank"]),
        },
        coords={"unit": units, "length": lengths, "atom": np.arange(D.shape[0])},
        attrs={
            "paper": f"{PAPER}, Fig. 3 left",
            "protocol": BAR_PROTOCOL,
            "selection": f"rank <= {TOP_K} and response >= {MIN_REL} of the code's largest |coefficient|",
            "n_active": len(units),
            "n_end_stopped_10pct": n10,
            "n_end_stopped_30pct": n30,
            **bar_test_attrs(setup, seed, t_test),
        },
    )
    paths = write_dataset(ds, out, NAME)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rng = np.random.default_rng(seed)
    show = rng.permutation(len(units))[:80]  # the paper's figure shows a subset of lines too
    for i in show:
        axes[0].plot(lengths, rel[i], lw=0.7, alpha=0.7)
    axes[0].set_xlabel("bar length (pixels)")
    axes[0].set_ylabel("coefficient / max coefficient")
    axes[0].set_ylim(-0.05, 1.05)
    axes[0].set_title(f"{len(show)} of {len(units)} significantly activated bases")
    bases_histogram(axes[1], esi, np.linspace(0, 1, 21), 0.1, "end-stopping index 1 - r(longest) / r(peak)",
                    f"{n10} drop > 10 %, {n30} drop > 30 %")
    fig.tight_layout()
    paths["curves"] = save_png(fig, out / f"{NAME}_curves.png")
    return paths


#: the figure of a run (seed 0's in a reproduction) that the report shows (``neurosim tables`` copies it)
REPORT_FIGURES = {f"{NAME}_curves.png": "paper001_fig3_end_stopping.png"}


def tables(ds: xr.Dataset) -> list:
    """The report's table (:mod:`neurosim.report_tables`) from the seeds' datasets (joined along ``seed``).

    ``end_stopping``: per seed, the bases significantly activated by a bar
    (the units of its dataset: a unit of another seed only is NaN here), those
    whose response at the longest bar is more than 10 % and more than 30 %
    below their peak, that share of the activated bases, and the median
    optimal length; then mean ± sd over the seeds.
    """
    from neurosim.report_tables import Table, mean_sd

    esi = ds.end_stopping_index.transpose("seed", "unit").values
    opt = ds.optimal_length.transpose("seed", "unit").values
    active = np.isfinite(esi)
    cols = {"bases": np.full(ds.sizes["seed"], ds.sizes["atom"]), "active": active.sum(1),
            "drop10": (esi > 0.1).sum(1), "drop30": (esi > 0.3).sum(1)}
    cols["share"] = cols["drop10"] / np.maximum(cols["active"], 1)
    cols["length"] = np.array([np.median(o[a]) if a.any() else np.nan for o, a in zip(opt, active)])
    fmts = {"share": ".0%", "length": ".1f"}
    rows = [[int(s)] + [float(cols[k][i]) if k in fmts else int(cols[k][i]) for k in cols]
            for i, s in enumerate(ds.seed.values)]
    rows.append(["mean ± sd"] + [mean_sd(cols[k] * (100 if k == "share" else 1), ".0f" if k != "length" else ".1f")
                                 for k in cols])
    rows[-1][5] = None if rows[-1][5] is None else {**rows[-1][5], "fmt": rows[-1][5]["fmt"].replace(" ± ", " % ± ")
                                                    + " %"}
    table = Table(f"{NAME}/end_stopping", ["seed", "bases", "significantly activated by a bar",
                                           "drop > 10 % at the longest bar", "drop > 30 %",
                                           "drop > 10 %, share of the activated", "median optimal length (px)"],
                  rows, formats=[None, None, None, None, None, ".0%", ".1f"], align=["l"] + ["r"] * 6)
    return [table]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
