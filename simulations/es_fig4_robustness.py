"""Paper 004 (Tsuchida & Cottrell 2015), Fig. 4: robustness of example selection on the Gabor dictionary.

Starting from the settings of Fig. 3 (Gabor, LARS, SNR 6 dB, ``k = 5``,
``n / N = 1 %``, ``K = 100``), one parameter at a time is varied:

* the SNR of the examples (dB; our per-example definition, see
  :mod:`neurosim.data.dictionaries`),
* ``k``, the nonzero activations per example,
* ``n / N``, the fraction selected (``N = 10,000``),
* ``K``, the number of elements (the Gabor dictionary generated with ``K``
  elements; the learner has ``K`` too),

and every selection algorithm learns for ``steps`` epochs (default 100; the
paper: 1000). Fig. 4 shows ``D*`` at the last epoch against each parameter.
Claim checked: good selectors (ByElement with SUN, SNR, Grad) stay better
than Uniform across the ranges; the advantage is largest near a complete
dictionary (``K`` close to ``P = 64``).

Outputs: ``es_fig4_robustness.nc``, ``fig4_robustness.png``.
"""

from __future__ import annotations

import pathlib

import numpy as np

from neurosim._validation import check_choice
from neurosim.simulations._es_common import ALGORITHM_ORDER, check_learn, learn

NAME = "es_fig4_robustness"
DESCRIPTION = ("Tsuchida & Cottrell (paper 004) Fig. 4: D* on the Gabor dictionary with LARS when the SNR, k, n/N "
               "or K is varied one at a time, for 9 selection algorithms")
DEFAULT_STEPS = 100
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1, "n_examples": 300, "workers": 1}
N_EXAMPLES = 10_000
#: the base setting of Fig. 3 and the values each parameter takes in turn
BASE = {"snr_db": 6.0, "k": 5, "fraction": 0.01, "n_components": 100}
VALUES = {"snr_db": [2.0, 6.0, 10.0], "k": [2, 5, 8], "fraction": [0.01, 0.05, 0.2], "n_components": [16, 64, 100, 196]}
TITLES = {"snr_db": "SNR [dB]", "k": "k", "fraction": "n / N", "n_components": "K"}

#: the sweep parameters of this simulation and their default values (``neurosim sweep``)
GRID = {"parameter": list(VALUES), "level": [0, 1, 2], "algorithm": list(ALGORITHM_ORDER)}


def setting(parameter: str, level: int) -> dict:
    """The base setting with ``parameter`` at its ``level``-th value (``None`` past the last value)."""
    parameter = check_choice("parameter", parameter, set(VALUES))
    if not 0 <= level < len(VALUES[parameter]):
        return None
    return {**BASE, parameter: VALUES[parameter][level]}


def check_point(parameter: str, level: int, algorithm: str, steps: int | None = None, n_examples: int = N_EXAMPLES):
    """Refuse, before any run, a point :func:`point` would refuse."""
    s = setting(parameter, level)
    if s is None:
        raise ValueError(f"level must be in [0, {len(VALUES[parameter]) - 1}] for {parameter}; got {level}")
    check_learn("gabor", "lars", algorithm, steps, n_examples, max(1, round(s["fraction"] * n_examples)),
                s["snr_db"], s["k"], s["n_components"])


def point(parameter: str, level: int, algorithm: str, seed: int, steps: int | None = None,
          n_examples: int = N_EXAMPLES):
    """One run: ``D*`` at the last epoch (with the Fig.-5 measures) for one setting and algorithm."""
    check_point(parameter, level, algorithm, steps, n_examples)
    s = setting(parameter, level)
    steps = DEFAULT_STEPS if steps is None else steps
    ds = learn("gabor", "lars", algorithm, seed, steps, n_examples=n_examples,
               n_selected=max(1, round(s["fraction"] * n_examples)), snr_db=s["snr_db"], k=s["k"],
               n_components=s["n_components"], record_every=steps)
    return ds.isel(epoch=-1, drop=True).assign(value=float(s[parameter]))


DEFAULT_SEEDS = 3


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_examples=N_EXAMPLES,
        workers=None, n_seeds=None) -> dict[str, pathlib.Path]:
    """Run every setting x algorithm (a :class:`neurosim.Sweep` over explicit points) and write Fig. 4.

    ``n_examples`` is ``N`` (``n = fraction * N``); ``workers`` the processes
    running the sweep (default: every core); ``n_seeds`` (default 3) seeds
    ``seed, seed + 1, ...`` per point: the figure shows means over seeds and the
    Dataset keeps a ``seed`` dimension.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``fig4``.
    """
    from neurosim.experiment import Sweep
    from neurosim.simulations._es_common import run_sweep
    from neurosim.simulations._harness import mean_sd, prepare_seeded, pyplot, save_final_figure, write_dataset

    steps, seed, n_seeds, out, say = prepare_seeded(NAME, steps, DEFAULT_STEPS, 1, out, seed, progress, n_seeds,
                                                    DEFAULT_SEEDS)
    plt = pyplot()
    points = [{"parameter": p, "level": lv, "algorithm": a}
              for p in VALUES for lv in range(len(VALUES[p])) for a in ALGORITHM_ORDER]
    sweep = Sweep(point, points=points, seeds=[seed + r for r in range(n_seeds)],
                  fixed={"steps": steps, "n_examples": n_examples}, name=NAME)
    runs = run_sweep(sweep, out, resume, workers, progress)
    ds = runs[["distance", "value", "selected_snr_db", "histogram_distance", "seconds"]]
    ds.attrs = {"simulation": NAME, "paper": "004", "epochs": steps, "seed": seed, "n_seeds": n_seeds,
                "n_examples": n_examples, "encoder": "lars", "dictionary": "gabor", **{f"base_{k}": v for k, v in BASE.items()}}
    paths = write_dataset(ds, out, NAME)

    # one row per (point, seed) along "run"; the figure and the printed lines use the means over seeds
    grid = ds.set_index(run=["parameter", "level", "algorithm", "seed"]).unstack("run")
    algorithms = [a for a in ALGORITHM_ORDER if a in grid.algorithm.values]
    colors = {a: plt.cm.tab10(i) for i, a in enumerate(ALGORITHM_ORDER)}
    fig, axes = plt.subplots(1, len(VALUES), figsize=(14.0, 3.6), sharey=False)
    for ax, p in zip(axes, VALUES):
        levels = list(range(len(VALUES[p])))
        for a in algorithms:
            d = grid.distance.sel(parameter=p, algorithm=a).isel(level=levels)
            ax.errorbar(VALUES[p], d.mean("seed"), yerr=d.std("seed", ddof=1) if n_seeds > 1 else None, marker="o",
                        ms=3, capsize=2, color=colors[a],
                        ls="-" if "ByElement" in a else "--" if "BySum" in a else ":", label=a)
        if p == "fraction":
            ax.set_xscale("log")
        for lv, v in enumerate(VALUES[p]):
            d = grid.distance.sel(parameter=p, level=lv)
            best = str(d.algorithm.values[int(np.argmin(d.mean("seed").values))])
            say(f"{p}={v} ({n_seeds} seeds, mean ± sd): best {best}; " + ", ".join(
                f"{a} {mean_sd(d.sel(algorithm=a), '.5f')}" for a in algorithms))
        ax.set_xlabel(TITLES[p])
    axes[0].set_ylabel(f"$D^*$ at epoch {steps}")
    axes[-1].legend(fontsize=6)
    fig.suptitle(f"Fig. 4: robustness on the Gabor dictionary (LARS, N={n_examples}, {steps} epochs, mean over {n_seeds} seeds)", fontsize=10)
    fig.tight_layout()
    return save_final_figure(fig, out / "fig4_robustness.png", "fig4", paths, say)


def _label(parameter: str, level: int) -> str:
    """A setting's row label: the varied parameter at its value, ``(base)`` where it is the base value."""
    value = VALUES[parameter][level]
    text = {"snr_db": f"SNR {value:g} dB", "k": f"k = {value}", "fraction": f"n/N = {value:.0%}",
            "n_components": f"K = {value}"}[parameter]
    return text + (" (base)" if value == BASE[parameter] else "")


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {"fig4_robustness.png": "paper004_fig4.png"}


def tables(ds) -> list:
    """The report's table (:mod:`neurosim.report_tables`): ``D*`` at the last epoch per setting and algorithm.

    One row per setting (one parameter varied from the base at a time, the base once); Uniform's ``D*`` as
    mean ± sd over
    seeds, every other algorithm as its mean relative difference to Uniform seed by seed and the seeds on
    which it is below Uniform. The headings do not name the run's length (the report says it).
    """
    from neurosim.report_tables import Table, cell

    grid = ds.set_index(run=["parameter", "level", "algorithm", "seed"]).unstack("run")
    n_seeds = grid.sizes["seed"]
    others = [a for a in ALGORITHM_ORDER if a != "Uniform" and a in grid.algorithm.values]
    rows, base_shown = [], False
    for p in VALUES:
        for lv in range(len(VALUES[p])):
            if VALUES[p][lv] == BASE[p]:
                if base_shown:
                    continue  # the base setting, reached from every parameter, runs the same: shown once
                base_shown = True
            d = grid.distance.sel(parameter=p, level=lv)
            uni = d.sel(algorithm="Uniform")
            row = [_label(p, lv), cell("{mean:.5f} ± {sd:.5f}", mean=float(uni.mean()),
                                       sd=float(uni.std(ddof=1)) if n_seeds > 1 else 0.0)]
            for a in others:
                x = d.sel(algorithm=a)
                row.append(cell("{rel:+.0%}, {below}/{n}", rel=float((x / uni - 1.0).mean()),
                                below=int((x < uni).sum()), n=n_seeds))
            rows.append(row)
    return [Table(f"{NAME}/distance", ["setting", "Uniform D*, mean ± sd"] + others, rows,
                  align=["l", "r"] + ["r"] * len(others))]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
