"""Song, Miller & Abbott (2000): STDP makes the weights bimodal and the output rate nearly independent of the input rate.

One conductance-based LIF unit driven by 1,000 Poisson inputs
(:mod:`neurosim.models.stdp_song`, Brian2's ``examples/synapses/STDP.py``
circuit) for 100 s, at input rates of 15, 20 and 30 Hz, with four kinds of
synapse, in one :class:`~neurosim.Sweep` on the same inputs (the seed draws
the initial weights and the input spikes, so every rule sees the same spike
trains at a rate and seed):

* ``none``: fixed weights (uniform in ``[0, g_max)``), the baseline;
* ``additive``: Song et al.'s rule (hard bounds);
* ``multiplicative``: soft bounds (van Rossum et al. 2000), the same amplitudes;
* ``triplet``: Pfister & Gerstner's (2006) visual-cortex rule, amplitudes scaled to ``g_max``.

Outputs: ``spiking_song_stdp.nc`` (per rule, rate and seed: the final
weights in units of ``g_max`` and the output rate in 1 s bins),
``song_weights.png`` (final weight histograms at 20 Hz) and ``song_rates.png``
(output rate against input rate).
"""

from __future__ import annotations

import pathlib

import numpy as np

NAME = "spiking_song_stdp"
DESCRIPTION = ("Song, Miller & Abbott (2000): 1,000 Poisson inputs onto one LIF unit; additive, multiplicative and "
               "triplet STDP against fixed weights in one Sweep (issue 42)")
DT = 1e-4
DEFAULT_STEPS = 1_000_000  # 100 s, Song et al.'s and Brian2's example's length
DEFAULT_SEEDS = 3
#: the shortened arguments of ``neurosim reproduce --quick``: 1 s
QUICK = {"steps": 10_000}
#: the figures the report shows (docs/reports/spiking.md): what this run writes -> its name there
REPORT_FIGURES = {"song_rates.png": "song_rates.png", "song_weights.png": "song_weights.png"}
RATES_HZ = (15.0, 20.0, 30.0)
RULES = ("none", "additive", "multiplicative", "triplet")
#: the output rate at the end: the mean over the last fifth of the run
FINAL_FRACTION = 0.2
#: a weight counts as at a bound within a tenth of g_max of it
BOUND_MARGIN = 0.1


def song_point(rate_hz: float, rule: str, seed: int, seconds: float):
    """One run of the sweep (module level, so the processes executor can import it)."""
    from neurosim.models.stdp_song import song_run

    return song_run(seconds=seconds, rate_hz=rate_hz, rule=rule, seed=seed, bin_seconds=min(1.0, seconds / 10))


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, n_seeds=None, resume=False) -> dict[str, pathlib.Path]:
    """Run the sweep on ``n_seeds`` seeds; write the dataset and the two figures.

    Parameters
    ----------
    steps : int, optional
        Steps of 0.1 ms (default ``DEFAULT_STEPS``, 100 s; at least 1,000).
    out : str or path
    seed : int
        The first seed.
    progress : bool
    n_seeds : int, optional
        Default ``DEFAULT_SEEDS``.
    resume : bool
        Keep the finished runs in ``out/runs`` and run only the rest.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``weights``, ``rates``.
    """
    from neurosim.experiment import Sweep
    from neurosim.simulations._harness import check_runs_succeeded, prepare_seeded, runs_folder, write_dataset

    steps, seed, n_seeds, out, say = prepare_seeded(NAME, steps, DEFAULT_STEPS, 1000, out, seed, progress, n_seeds,
                                                    DEFAULT_SEEDS)
    seconds = steps * DT
    seeds = [seed + r for r in range(n_seeds)]
    say(f"{len(RULES) * len(RATES_HZ) * n_seeds} runs of {seconds:g} s")
    ds = Sweep(song_point, grid={"rule": list(RULES), "rate_hz": list(RATES_HZ)}, seeds=seeds,
               fixed={"seconds": seconds}, name=NAME).run(progress=progress, out=runs_folder(out, resume))
    check_runs_succeeded(ds, "runs")
    ds = ds.drop_vars([v for v in ("error", "wall_seconds", "compile_seconds") if v in ds])
    n_final = max(1, int(round(ds.sizes["bin"] * FINAL_FRACTION)))
    ds["final_rate_hz"] = ds.output_rate_hz.isel(bin=slice(-n_final, None)).mean("bin")
    ds["low_fraction"] = (ds.weights < BOUND_MARGIN).mean("synapse")
    ds["high_fraction"] = (ds.weights > 1.0 - BOUND_MARGIN).mean("synapse")
    ds.attrs.update(simulation=NAME, steps=steps, dt_s=DT, seconds=seconds, final_fraction=FINAL_FRACTION,
                    bound_margin=BOUND_MARGIN, reference="Song, Miller & Abbott 2000; Brian2 examples/synapses/STDP.py")
    for rule in RULES:
        rates = ", ".join(f"{r:g} Hz -> {float(ds.final_rate_hz.sel(rule=rule, rate_hz=r).mean()):.1f} Hz"
                          for r in RATES_HZ)
        say(f"{rule}: output rate {rates}")
    paths = write_dataset(ds, out, NAME)
    paths["weights"] = _weights_figure(ds, out / "song_weights.png")
    paths["rates"] = _rates_figure(ds, out / "song_rates.png")
    say(f"wrote {', '.join(str(p) for p in paths.values())}")
    return paths


def _weights_figure(ds, path):
    from neurosim.simulations._harness import pyplot, save_figure

    plt = pyplot()
    rate = RATES_HZ[len(RATES_HZ) // 2]
    fig, axes = plt.subplots(1, len(RULES), figsize=(12.0, 3.2), sharex=True)
    bins = np.linspace(0.0, 1.0, 26)
    for ax, rule in zip(axes, RULES):
        for s in ds.seed.values:
            ax.hist(ds.weights.sel(rule=rule, rate_hz=rate, seed=s).values, bins=bins, histtype="step",
                    label=f"seed {s}")
        ax.set_title(rule, fontsize=9)
        ax.set_xlabel("final weight / g_max")
    axes[0].set_ylabel("synapses")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Weights after {ds.attrs['seconds']:g} s, 1,000 inputs at {rate:g} Hz", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def _rates_figure(ds, path):
    from neurosim.simulations._harness import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    for rule in RULES:
        r = ds.final_rate_hz.sel(rule=rule)
        ax.errorbar(RATES_HZ, r.mean("seed"), yerr=r.std("seed", ddof=1) if ds.sizes["seed"] > 1 else None,
                    marker="o", capsize=3, label=rule)
    ax.set_xlabel("input rate (Hz)")
    ax.set_ylabel(f"output rate, last {FINAL_FRACTION:.0%} of the run (Hz)")
    ax.legend(fontsize=8)
    ax.set_title(f"Output rate after {ds.attrs['seconds']:g} s (mean ± sd, {ds.sizes['seed']} seeds)", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def tables(ds) -> list:
    """The report's table: per rule and input rate, the final output rate and the weights at the bounds (mean ± sd)."""
    from neurosim.report_tables import Table, cell

    n = ds.sizes["seed"]

    def mean_sd(var, rule, rate, fmt):
        v = ds[var].sel(rule=rule, rate_hz=rate).values
        return cell(fmt, m=float(v.mean()), s=float(v.std(ddof=1)) if n > 1 else 0.0)

    rows = [[rule, f"{rate:g}", mean_sd("final_rate_hz", rule, rate, "{m:.2f} ± {s:.2f}"),
             mean_sd("low_fraction", rule, rate, "{m:.3f} ± {s:.3f}"),
             mean_sd("high_fraction", rule, rate, "{m:.3f} ± {s:.3f}")]
            for rule in ds.rule.values.tolist() for rate in ds.rate_hz.values.tolist()]
    return [Table(f"{NAME}/summary", ["rule", "input rate (Hz)", f"output rate, last {FINAL_FRACTION:.0%} (Hz)",
                                      f"weights < {BOUND_MARGIN:g} g_max", f"weights > {1 - BOUND_MARGIN:g} g_max"],
                  rows, align=["l", "r", "r", "r", "r"])]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
