"""Paper 004 (Tsuchida & Cottrell 2015), Figs. 3 and 5: learning a known dictionary with example selection.

For each ground-truth dictionary (100 8x8 Gabor patches; 64 8x8
alphanumeric glyphs with alternating rotations and signs, Fig. 2), each
encoder (LARS, OMP, k-Sparse; Sec. 2.1) and each selection algorithm (the
paper's eight and Uniform; Sec. 3), one run of Alg. 1 on the circuit of
:mod:`neurosim.models.example_selection`: per epoch ``N`` fresh examples
(``k = 5`` Exp(1) activations, SNR 6 dB), ``n`` of them selected, 10
encode-equalize-update passes (gamma = 0.2).

Scale (see :mod:`neurosim.simulations._es_common`): ``N = 10,000``, ``n =
100`` (the paper: 50,000 and 500; ``n / N`` and ByElement's per-element
quantile kept), ``steps`` epochs (default 300; the paper: 1000).

Fig. 3: ``D*`` (Eq. 16) over the epochs with LARS (left), and at the last
epoch for the three encoders (right). Fig. 5: the true SNR of the last
epoch's selected examples and the histogram-intersection distance between
their activations and all examples' (the same runs).

Claims checked (printed and in the report): ByElement with Grad or SUN
beats Uniform, most clearly on the alphanumeric dictionary, where most
BySum selectors are worse than Uniform; SalMap helps on Gabor but not on
alphanumeric; every selector picks examples of higher SNR than Uniform;
ByElement's selected activations are closer to the full distribution than
BySum's.

Seeds: ``n_seeds`` (default 3) seeds through the sweep layer; rankings are of
the means over seeds, and every algorithm is compared with Uniform seed by
seed (relative difference, seeds below Uniform, paired t-test).

Outputs: ``es_fig3_fig5_selection.nc``, ``fig3_distance.png``,
``fig5_selected_sets.png``.
"""

from __future__ import annotations

import pathlib

import numpy as np

from neurosim.simulations._es_common import ALGORITHM_ORDER, DICTIONARIES, ENCODER_TITLES, check_learn, learn

NAME = "es_fig3_fig5_selection"
DESCRIPTION = ("Tsuchida & Cottrell (paper 004) Figs. 3 and 5: D* over epochs for 9 selection algorithms x "
               "3 encoders x 2 ground-truth dictionaries, and the SNR / spread of the selected examples")
DEFAULT_STEPS = 300
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 3, "n_examples": 400, "n_selected": 8, "workers": 1}
#: the dictionary is recorded (and D* computed) every this many epochs
RECORD_EVERY = 10

#: the sweep parameters of this simulation and their default values (``neurosim sweep``)
GRID = {"dictionary": list(DICTIONARIES), "encoder": ["lars", "omp", "k_sparse"], "algorithm": list(ALGORITHM_ORDER)}


def check_point(dictionary: str, encoder: str, algorithm: str, steps: int | None = None,
                n_examples: int = 10_000, n_selected: int = 100):
    """Refuse, before any run, a point :func:`point` would refuse."""
    check_learn(dictionary, encoder, algorithm, steps, n_examples, n_selected)


def point(dictionary: str, encoder: str, algorithm: str, seed: int, steps: int | None = None,
          n_examples: int = 10_000, n_selected: int = 100):
    """One run (the unit of ``neurosim sweep es_fig3_fig5_selection``); see :func:`~neurosim.simulations._es_common.learn`."""
    steps = DEFAULT_STEPS if steps is None else steps
    return learn(dictionary, encoder, algorithm, seed, steps, n_examples=n_examples, n_selected=n_selected,
                 record_every=min(RECORD_EVERY, steps))


def ranking(final) -> list[str]:
    """Algorithms from the worst (largest ``D*``) to the best, as the paper's legends order them."""
    order = np.argsort(-np.asarray(final.values), kind="stable")
    return [str(final.algorithm.values[i]) for i in order]


DEFAULT_SEEDS = 3


def versus_uniform(final) -> dict:
    """Per-seed relative difference of ``D*`` against Uniform (negative: better than Uniform), over ``algorithm``.

    ``final`` has dims ``(seed, algorithm)``; returns ``{"rel": DataArray (seed, algorithm), "better": number of
    seeds below Uniform, "p": two-sided paired t-test p-value of D* against Uniform (NaN for one seed)}``.
    """
    from scipy.stats import ttest_rel

    uni = final.sel(algorithm="Uniform")
    rel = final / uni - 1.0
    better = (final < uni).sum("seed")
    if final.sizes["seed"] > 1:
        p = [float(ttest_rel(final.sel(algorithm=a).values, uni.values).pvalue) if a != "Uniform" else np.nan
             for a in final.algorithm.values]
    else:
        p = [np.nan] * final.sizes["algorithm"]
    return {"rel": rel, "better": better, "p": dict(zip(map(str, final.algorithm.values), p))}


#: the figures of the run that the report shows (``neurosim tables`` copies them to docs/reports/figures)
REPORT_FIGURES = {"fig3_distance.png": "paper004_fig3.png", "fig5_selected_sets.png": "paper004_fig5.png"}


def tables(ds) -> list:
    """The report's tables from the dataset (:mod:`neurosim.report_tables`).

    The headings do not name the run's length (a quick run and a full one
    make tables of the same columns); the report says it.
    ``final_distance``: ``D*`` at the last epoch per dictionary and encoder,
    algorithms from the worst to the best by the mean over seeds, each with
    its mean ± sd, its mean relative difference to Uniform seed by seed, the
    seeds below Uniform and the paired t-test's p (:func:`versus_uniform`).
    ``selected_sets`` (Fig. 5, LARS): the true SNR of the selected examples
    and their histogram-intersection distance to all examples, mean ± sd
    over seeds, per algorithm. ``initial_distance``: ``D*`` of the initial
    dictionaries (epoch 0).
    """
    from neurosim.report_tables import Table, cell

    n_seeds = ds.sizes["seed"]
    final = ds.distance.isel(epoch=-1)
    rows = []
    for d in ds.dictionary.values:
        for e in ds.encoder.values:
            f = final.sel(dictionary=d, encoder=e)
            vs = versus_uniform(f)
            for a in ranking(f.mean("seed")):
                x = f.sel(algorithm=a)
                stat = cell("{mean:.5f} ± {sd:.5f}", mean=float(x.mean()), sd=_sd(x))
                if a == "Uniform":
                    rows.append([str(d), ENCODER_TITLES[str(e)], f"**{a}**", stat, None, None, None])
                    continue
                rows.append([str(d), ENCODER_TITLES[str(e)], a, stat, float(vs["rel"].sel(algorithm=a).mean()),
                             cell("{below}/{n}", below=int(vs["better"].sel(algorithm=a)), n=n_seeds),
                             vs["p"][a]])
    distance = Table(f"{NAME}/final_distance",
                     ["dictionary", "encoder", "algorithm (worst to best)", "D* at the last epoch, mean ± sd",
                      "vs Uniform (mean)", "seeds below Uniform", "paired t-test p"],
                     rows, formats=[None, None, None, None, "+.0%", None, ".2g"],
                     align=["l", "l", "l", "r", "r", "r", "r"])
    lars = ds.sel(encoder="lars").isel(epoch=-1) if "epoch" in ds.selected_snr_db.dims else ds.sel(encoder="lars")
    sel_rows = []
    for d in ds.dictionary.values:
        for v, label, fmt in (("selected_snr_db", "true SNR, dB", "{mean:.1f} ± {sd:.1f}"),
                              ("histogram_distance", "histogram distance", "{mean:.3f} ± {sd:.3f}")):
            sel_rows.append([f"{d}, {label}"] + [
                cell(fmt, mean=float(lars[v].sel(dictionary=d, algorithm=a).mean()),
                     sd=_sd(lars[v].sel(dictionary=d, algorithm=a))) for a in ALGORITHM_ORDER])
    selected = Table(f"{NAME}/selected_sets", ["last epoch, LARS"] + list(ALGORITHM_ORDER), sel_rows,
                     align=["l"] + ["r"] * len(ALGORITHM_ORDER))
    first = ds.distance.isel(epoch=0)
    initial = Table(f"{NAME}/initial_distance", ["dictionary", "D* at epoch 0, mean ± sd", "min", "max"],
                    [[str(d), cell("{mean:.4f} ± {sd:.4f}", mean=float(first.sel(dictionary=d).mean()),
                                   sd=_sd(first.sel(dictionary=d).isel(encoder=0, algorithm=0))),
                      float(first.sel(dictionary=d).min()), float(first.sel(dictionary=d).max())]
                     for d in ds.dictionary.values], formats=[None, None, ".4f", ".4f"])
    return [distance, selected, initial]


def _sd(x) -> float:
    """Sample standard deviation over seeds (0 for one seed)."""
    return float(x.std("seed", ddof=1)) if x.sizes.get("seed", 1) > 1 else 0.0


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_examples=10_000, n_selected=100,
        workers=None, n_seeds=None) -> dict[str, pathlib.Path]:
    """Run the learning runs (a :class:`neurosim.Sweep` over :data:`GRID` and ``n_seeds`` seeds), write Figs. 3, 5.

    Parameters
    ----------
    steps : int, optional
        Epochs per run (default ``DEFAULT_STEPS``).
    out : str or path
    seed : int
        The first seed; the seeds are ``seed, seed + 1, ..., seed + n_seeds - 1``. Each seeds the examples, the
        initial dictionaries and the uniform selector.
    progress : bool
    resume : bool
        Keep the runs already finished in ``out/runs`` and run only the others.
    n_examples, n_selected : int
        ``N`` and ``n`` per epoch.
    workers : int, optional
        Processes running the sweep (default: every core).
    n_seeds : int, optional
        Seeds per grid point (default ``DEFAULT_SEEDS``); the rankings are of the means over seeds, each
        algorithm is compared with Uniform seed by seed (paired).

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``fig3``, ``fig5``.
    """
    from neurosim.experiment import Sweep
    from neurosim.simulations._es_common import run_sweep
    from neurosim.simulations._harness import (mean_sd, prepare_seeded, pyplot, save_figure, save_final_figure,
                                               write_dataset)
    from matplotlib.ticker import MaxNLocator

    steps, seed, n_seeds, out, say = prepare_seeded(NAME, steps, DEFAULT_STEPS, 1, out, seed, progress, n_seeds,
                                                    DEFAULT_SEEDS)
    seeds = [seed + r for r in range(n_seeds)]
    for d in GRID["dictionary"]:
        check_point(d, "lars", "Uniform", steps, n_examples, n_selected)
    plt = pyplot()
    sweep = Sweep(point, grid=GRID, seeds=seeds, fixed={"steps": steps, "n_examples": n_examples,
                                                         "n_selected": n_selected}, name=NAME)
    runs = run_sweep(sweep, out, resume, workers, progress)
    ds = runs[["distance", "selected_snr_db", "all_snr_db", "estimated_snr_db", "histogram_distance", "seconds"]]
    ds.attrs = {"simulation": NAME, "paper": "004", "epochs": steps, "seed": seed, "n_seeds": n_seeds,
                "n_examples": n_examples, "n_selected": n_selected, "k": 5, "snr_db": 6.0, "gamma": 0.2,
                "passes": 10, "distance": "D* (Eq. 16), min over permutations of ||A P - A*||_F^2 / (K P); "
                                          "epoch 0 is the initial dictionary"}
    paths = write_dataset(ds, out, NAME)

    final = ds.distance.isel(epoch=-1)
    mean = final.mean("seed")
    for d in ds.dictionary.values:
        for e in ds.encoder.values:
            f = final.sel(dictionary=d, encoder=e)
            vs = versus_uniform(f)
            order = ranking(mean.sel(dictionary=d, encoder=e))
            say(f"{d:12s} {ENCODER_TITLES[str(e)]:8s} D* at epoch {steps}, mean ± sd over {n_seeds} seeds, worst -> "
                f"best: " + "; ".join(
                    f"{a} {mean_sd(f.sel(algorithm=a), '.5f')}" + (
                        "" if a == "Uniform" else f" ({100 * float(vs['rel'].sel(algorithm=a).mean()):+.0f} %, "
                                                  f"{int(vs['better'].sel(algorithm=a))}/{n_seeds} below Uniform)")
                    for a in order))
    say("initial D* (epoch 0): " + ", ".join(
        f"{d} {mean_sd(ds.distance.sel(dictionary=d).isel(epoch=0), '.4f')}" for d in ds.dictionary.values))

    # ---------------- Fig. 3 ---------------- #
    colors = {a: plt.cm.tab10(i) for i, a in enumerate(ALGORITHM_ORDER)}
    # constrained layout keeps the legends placed outside the axes (beside the curves, under the dots) in the figure
    fig, axes = plt.subplots(2, 2, figsize=(13.0, 8.5), gridspec_kw={"width_ratios": [2.2, 1]},
                             constrained_layout=True)
    for row, d in enumerate(ds.dictionary.values):
        ax = axes[row, 0]
        lars = ds.distance.sel(dictionary=d, encoder="lars")
        for a in reversed(ranking(lars.isel(epoch=-1).mean("seed"))):
            m = lars.sel(algorithm=a).mean("seed")
            ax.plot(ds.epoch, m, color=colors[a], lw=1.4,
                    ls="-" if "ByElement" in a else "--" if "BySum" in a else ":", label=a)
            if n_seeds > 1:
                sd = lars.sel(algorithm=a).std("seed", ddof=1)
                ax.fill_between(ds.epoch, m - sd, m + sd, color=colors[a], alpha=0.12, lw=0)
        ax.set_xlabel("epochs")
        ax.set_ylabel(r"$D^*(\hat A, A^*)$")
        ax.set_yscale("log")
        ax.set_title(f"({'ab'[row]}) {d} dictionary, LARS, mean ± sd over {n_seeds} seeds (legend: best first)",
                     fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        ax = axes[row, 1]
        x = np.arange(len(ALGORITHM_ORDER))
        for j, e in enumerate(ds.encoder.values):
            f = final.sel(dictionary=d, encoder=e).sel(algorithm=list(ALGORITHM_ORDER))
            sd = f.std("seed", ddof=1).values if n_seeds > 1 else None
            ax.errorbar(f.mean("seed").values, x + 0.15 * (j - 1), xerr=sd, fmt="o", ms=4, capsize=2,
                        label=ENCODER_TITLES[str(e)])
        ax.set_yticks(x)
        ax.set_yticklabels(ALGORITHM_ORDER, fontsize=7)
        ax.set_xlabel(f"$D^*$ at epoch {steps}")
        ax.xaxis.set_major_locator(MaxNLocator(4))  # D* tick labels are wide: a few, so they never overlap
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-2, 2))
        ax.grid(axis="x", lw=0.3, alpha=0.5)
        ax.set_title(f"({'ab'[row]}) {d}: all encoders", fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=len(ds.encoder.values),
                  borderaxespad=0.0)
    fig.suptitle(f"Fig. 3: distance from the true dictionaries (N={n_examples}, n={n_selected}, {steps} epochs, "
                 f"{n_seeds} seeds)", fontsize=10)
    paths["fig3"] = save_figure(fig, out / "fig3_distance.png")

    # ---------------- Fig. 5 ---------------- #
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 3.8))
    x = np.arange(len(ALGORITHM_ORDER))
    for row, d in enumerate(ds.dictionary.values):
        lars = ds.sel(dictionary=d, encoder="lars").sel(algorithm=list(ALGORITHM_ORDER))
        for ax, v in zip(axes, ("selected_snr_db", "histogram_distance")):
            sd = lars[v].std("seed", ddof=1) if n_seeds > 1 else None
            ax.errorbar(x + 0.15 * row, lars[v].mean("seed"), yerr=sd, fmt="o", capsize=2, label=f"{d}")
    axes[0].axhline(float(ds.all_snr_db.mean()), color="k", lw=0.8, ls=":", label="all examples")
    axes[0].set_ylabel("true SNR of the selected examples [dB]")
    axes[1].set_ylabel(r"$D(\mathcal{D}(X_n) \| \mathcal{D}(X_N))$ (histogram intersection)")
    for ax in axes:
        ax.set_xticks(x)
        ax.set_xticklabels(ALGORITHM_ORDER, rotation=60, ha="right", fontsize=7)
        ax.legend(fontsize=7)
    fig.suptitle(f"Fig. 5: the selected examples at epoch {steps} (LARS; mean ± sd over {n_seeds} seeds)",
                 fontsize=10)
    fig.tight_layout()
    return save_final_figure(fig, out / "fig5_selected_sets.png", "fig5", paths, say)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
