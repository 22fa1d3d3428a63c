"""Lee et al. (2006) nCRF test: surround suppression of sparse-coding bases.

Paper: "We found the optimal bar stimuli for 50 random bases and checked that
these bases were among the most strongly activated ones for the optimal
stimulus. [...] we measured the response with its optimal bar stimulus with
and without the aligned bar stimulus in the surround region [...] 42 out of
50 bases showed suppression [...] and 13 bases among them showed more than
10 % suppression."

Protocol (reconstructed; details in :mod:`neurosim.analysis.receptive_fields`):

1. bases of ``sc_fig2_bases`` (cache reused), optimal bars from the same bar
   bank as the end-stopping test;
2. 50 units drawn at random (``seed``) among those that are among the 3
   largest coefficients of their optimal bar's code;
3. centre stimulus: the optimal bar; surround: an iso-oriented grating of
   1-pixel bars with the unit's preferred period (from its Gabor fit),
   aligned with (in phase with, same orientation and contrast as) the centre
   bar, shown only outside the unit's classical receptive field (its Gabor
   envelope out to 2 sigma) and beyond 2 px from the centre bar;
4. suppression ``1 - r(centre + surround) / r(centre)`` with ``r`` the unit's
   feature-sign coefficient on the whole dictionary.
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
from neurosim.simulations._sc_common import BAR_PROTOCOL, PAPER, bar_test_attrs, bases_and_bars, save_png  # noqa: E402

NAME = "sc_ncrf_suppression"
DESCRIPTION = "Lee et al. 2006 nCRF test: aligned-surround suppression of 50 sparse-coding bases (paper: 42/50, 13 > 10%)"
#: Learning iterations of the bases (shared with sc_fig2_bases, whose cache is reused).
DEFAULT_STEPS = FULL_STEPS
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 30, "n_atoms": 64, "patch_size": 8, "batch": 1000}
#: ``neurosim reproduce`` runs it after these, for the same seed: it reads their bases (``bases_dir``)
REPRODUCE_AFTER = ("sc_fig2_bases",)

N_UNITS = 50
TOP_K = 3
GAP = 2.0
CRF_SIGMAS = 2.0


def preferred_period(params_row, r2, patch_size, default=4.0) -> float:
    """Surround-bar spacing from a Gabor fit: ``1/freq`` rounded, clipped to ``3 .. min(7, p//2)`` px.

    Falls back to ``default`` for a poor fit (R^2 < 0.5). The lower clip never
    lets a surround bar touch the centre bar (spacing >= 3 with a 1-pixel bar
    and a 2-pixel gap); the upper clip keeps surround bars on both sides of a
    central bar inside the patch.
    """
    hi = min(7, patch_size // 2)
    if r2 < 0.5 or params_row[3] <= 0:
        return float(np.clip(default, 3, hi))
    return float(np.clip(np.round(1.0 / params_row[3]), 3, hi))


def _gabor_fits(bases_dir, D, units, p, fit_gabor):
    """Gabor fits of ``units``: from ``sc_fig2_bases``' dataset when it holds these bases, else fitted here."""
    from neurosim.simulations.sc_fig2_bases import NAME as BASES_NAME

    path = pathlib.Path(bases_dir) / f"{BASES_NAME}.nc"
    if path.exists():
        try:
            with xr.open_dataset(path, engine="h5netcdf") as ds:
                if ds.bases.shape == (D.shape[0], p, p) and np.array_equal(ds.bases.values.reshape(D.shape), D):
                    return ds.gabor_params.values[units], ds.gabor_r2.values[units]
        except (OSError, ValueError, KeyError, AttributeError):  # unreadable or foreign file: refit
            pass
    fits = [fit_gabor(D[u].reshape(p, p)) for u in units]
    return np.array([g.as_array() for g, _ in fits]), np.array([r2 for _, r2 in fits])


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_atoms=None, patch_size=None, lam=None,
        batch=None, n_units=N_UNITS, bases_dir=None) -> dict[str, pathlib.Path]:
    """Run the nCRF surround-suppression test on learned natural-image bases.

    Parameters
    ----------
    steps, n_atoms, patch_size, lam, batch, bases_dir : optional
        The bases whose units are tested (learning iterations, by default :data:`DEFAULT_STEPS`, and
        configuration) and their cache: see :func:`~neurosim.simulations._sc_common.bases_and_bars`.
    out : str or path
        Output folder.
    seed : int
        Seed of the bases and of the random choice of units.
    progress : bool
        Print progress.
    n_units : int
        Units tested (paper: 50); fewer if fewer qualify.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset`` (netCDF), ``suppression`` and ``stimuli`` (PNG).
    """
    from neurosim.analysis.receptive_fields import fit_gabor, surround_suppression

    setup, out = bases_and_bars(NAME, out, bases_dir, steps=steps, n_atoms=n_atoms, patch_size=patch_size, lam=lam,
                                batch=batch, seed=seed, progress=progress)
    say = progress_printer(NAME, progress)
    D, p, bars = setup.D, setup.patch_size, setup.bars

    t1 = time.perf_counter()
    eligible = np.flatnonzero((bars["rank"] <= TOP_K) & (bars["response"] > 0))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(50,)))
    units = np.sort(rng.choice(eligible, size=min(n_units, len(eligible)), replace=False))
    params, r2s = _gabor_fits(setup.bases_dir, D, units, p, fit_gabor)
    periods = np.array([preferred_period(g, r2, p) for g, r2 in zip(params, r2s)])
    # Surround only outside each unit's CRF (2-sigma Gabor envelope); poorly
    # fitted units (R^2 < 0.5) have no reliable envelope and use the gap alone.
    crf = np.where((r2s >= 0.5)[:, None], params, np.nan)
    sup = surround_suppression(
        D, setup.lam, units, bars, periods, patch_size=p, gap=GAP, crf_params=crf,
        crf_sigmas=CRF_SIGMAS,
    )
    t_test = setup.bar_seconds + time.perf_counter() - t1

    s = sup["suppression"]
    n_sup = int(np.sum(s > 0))
    n_sup10 = int(np.sum(s > 0.1))
    n_fac = int(np.sum(s < 0))
    say(f"{len(units)} units (of {len(eligible)} eligible): {n_sup} suppressed by the aligned surround, {n_sup10} "
        f"by > 10 %, {n_fac} facilitated; median suppression {np.nanmedian(s):.1%} (paper: 42/50 and 13/50); "
        f"test {t_test:.0f} s")

    ds = xr.Dataset(
        {
            "response_center": (("unit",), sup["center"]),
            "response_center_surround": (("unit",), sup["center_surround"]),
            "suppression": (("unit",), s),
            "surround_period": (("unit",), periods),
            "gabor_r2": (("unit",), r2s),
            "stimulus_center": (("unit", "row", "col"), sup["x_center"]),
            "stimulus_surround": (("unit", "row", "col"), sup["x_surround"]),
            "bar_orientation": (("unit",), bars["orientation"][units]),
            "bar_length": (("unit",), bars["length"][units]),
            "bar_rank": (("unit",), bars["rank"][units]),
        },
        coords={"unit": units},
        attrs={
            "paper": f"{PAPER}, Section 5.3 nCRF test",
            "paper_result": "42 of 50 suppressed, 13 by more than 10 %",
            "protocol": BAR_PROTOCOL,
            "n_tested": len(units),
            "n_eligible": len(eligible),
            "n_suppressed": n_sup,
            "n_suppressed_10pct": n_sup10,
            "n_facilitated": n_fac,
            "gap_pixels": GAP,
            "crf_sigmas": CRF_SIGMAS,
            **bar_test_attrs(setup, seed, t_test),
        },
    )
    paths = write_dataset(ds, out, NAME)

    fig, ax = plt.subplots(figsize=(8, 3.5))
    order = np.argsort(-np.nan_to_num(s, nan=-np.inf))
    ax.bar(np.arange(len(s)), 100 * s[order], color=np.where(s[order] > 0.1, "C3", "C0"))
    ax.axhline(0, color="k", lw=0.8)
    ax.axhline(10, color="k", ls="--", lw=0.8)
    ax.set_xlabel("basis (sorted)")
    ax.set_ylabel("suppression by aligned surround (%)")
    ax.set_title(f"{n_sup}/{len(s)} suppressed, {n_sup10} by > 10 % (paper: 42/50, 13)")
    fig.tight_layout()
    paths["suppression"] = save_png(fig, out / f"{NAME}_suppression.png")

    # Like the paper's Fig. 3 right: example stimuli next to the bases they test.
    k = min(6, len(units))
    fig, axes = plt.subplots(2, k, figsize=(1.8 * k, 3.8), squeeze=False)
    for i, j in enumerate(order[:k]):
        u = units[j]
        b = D[u].reshape(p, p)
        axes[0, i].imshow(b, cmap="gray", vmin=-np.abs(b).max(), vmax=np.abs(b).max())
        axes[0, i].set_title(f"basis {u}", fontsize=8)
        stim = sup["x_center"][j] + sup["x_surround"][j]
        axes[1, i].imshow(stim, cmap="gray", vmin=-1, vmax=1)
        axes[1, i].set_title(f"supp. {100 * s[j]:.0f} %", fontsize=8)
        for a in axes[:, i]:
            a.set_axis_off()
    fig.tight_layout()
    paths["stimuli"] = save_png(fig, out / f"{NAME}_stimuli.png")
    return paths


#: the figures of a run (seed 0's in a reproduction) that the report shows (``neurosim tables`` copies them)
REPORT_FIGURES = {f"{NAME}_suppression.png": "paper001_ncrf_suppression.png",
                  f"{NAME}_stimuli.png": "paper001_ncrf_stimuli.png"}
#: the paper's counts (of 50 bases): suppressed by the aligned surround, and by more than 10 %
PAPER_COUNTS = (42, 13)


def tables(ds: xr.Dataset) -> list:
    """The report's table (:mod:`neurosim.report_tables`) from the seeds' datasets (joined along ``seed``).

    ``suppression``: per seed, the bases tested (the units of its dataset: a
    unit of another seed only is NaN here), how many the aligned surround
    suppresses, by more than 10 %, and facilitates, and the median
    suppression; then mean ± sd over the seeds, and the paper's counts.
    """
    from neurosim.report_tables import Table, mean_sd

    tested = np.isfinite(ds.bar_rank.transpose("seed", "unit").values)
    s = ds.suppression.transpose("seed", "unit").values
    cols = {"tested": tested.sum(1), "sup": (s > 0).sum(1), "sup10": (s > 0.1).sum(1), "fac": (s < 0).sum(1),
            "median": np.array([np.nanmedian(x[t]) if np.isfinite(x[t]).any() else np.nan
                                for x, t in zip(s, tested)])}
    rows = [[int(seed)] + [float(cols[k][i]) if k == "median" else int(cols[k][i]) for k in cols]
            for i, seed in enumerate(ds.seed.values)]
    mean_row = ["mean ± sd"] + [mean_sd(cols[k], ".1f") for k in ("tested", "sup", "sup10", "fac")]
    med = mean_sd(100 * cols["median"], ".0f")
    if med is not None:
        med = {**med, "fmt": med["fmt"].replace(" ± ", " % ± ") + " %"}
    rows += [mean_row + [med], ["paper", 50, PAPER_COUNTS[0], PAPER_COUNTS[1], None, None]]
    table = Table(f"{NAME}/suppression", ["seed", "bases tested", "suppressed by the aligned surround",
                                          "suppressed by > 10 %", "facilitated", "median suppression"], rows,
                  formats=[None, None, None, None, None, ".0%"], align=["l"] + ["r"] * 5)
    return [table]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
