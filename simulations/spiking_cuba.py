"""The CUBA benchmark network (Brette et al. 2007): population rate, CV of the inter-spike intervals, raster.

4,000 current-based LIF units (80 % excitatory, p = 0.02, dt = 0.1 ms; Brian2's
``examples/CUBA.py``, :mod:`neurosim.models.spiking`), each seed drawing its
own connectivity and initial potentials. The network settles into the
asynchronous irregular state this benchmark is known for: low rates (about
5 Hz) and irregular firing (CV of the ISIs about 0.5). Brian2 on the same
draws gives the same spikes (``tests/spiking/test_cuba_brian2.py``).

Outputs: ``spiking_cuba.nc`` (per seed: rate, mean CV of the ISIs, spikes,
the population rate in 1 ms bins; the raster of the first seed's first
200 ms), ``cuba_raster.png``.
"""

from __future__ import annotations

import pathlib

import numpy as np

NAME = "spiking_cuba"
DESCRIPTION = "Brette et al. (2007) CUBA network: 4,000 LIF units, population rate, CV of the ISIs, raster (issue 42)"
DEFAULT_STEPS = 10_000  # 1 s
DEFAULT_SEEDS = 3
#: the shortened arguments of ``neurosim reproduce --quick``: 100 ms
QUICK = {"steps": 1000}
#: the figures the report shows (docs/reports/spiking.md): what this run writes -> its name there
REPORT_FIGURES = {"cuba_raster.png": "spiking_cuba.png"}
#: steps recorded at a time (the dense 0/1 recording of 4,000 units is 32 MB per 1,000 steps)
CHUNK = 1000
#: the raster kept in the dataset and drawn: the first seed's first 200 ms
RASTER_STEPS = 2000
#: population-rate bins, steps (1 ms)
BIN = 10


def _spikes_of(net, steps: int):
    """Run ``steps`` steps, recording in chunks; the spikes as (unit, step) arrays, steps counted from 0."""
    from neurosim.analysis import spike_events

    units, when, done = [], [], 0
    while done < steps:
        n = min(CHUNK, steps - done)
        rec = net.record(net.populations["P"], ["activity"], name=f"chunk{done}")
        net.run(n, progress=False)
        ev = spike_events(net.recorders[rec.name].to_dataset())
        del net.recorders[rec.name]
        units.append(ev.unit.values)
        when.append(ev.step.values - 1)  # the step the spike happened in (Brian2's label)
        done += n
    return np.concatenate(units), np.concatenate(when)


def build(seed: int):
    """The CUBA network of one seed (its connectivity and initial potentials), not recording."""
    from neurosim.models.spiking import cuba_inputs, cuba_network

    return cuba_network(*cuba_inputs(seed), record=False)


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, n_seeds=None) -> dict[str, pathlib.Path]:
    """Run the CUBA network on ``n_seeds`` seeds for ``steps`` steps; write the dataset and the raster figure.

    Parameters
    ----------
    steps : int, optional
        Steps of 0.1 ms (default ``DEFAULT_STEPS``, 1 s; at least 100).
    out : str or path
    seed : int
        The first seed; seeds ``seed, ..., seed + n_seeds - 1`` draw the connectivity and initial potentials.
    progress : bool
    n_seeds : int, optional
        Default ``DEFAULT_SEEDS``.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``raster``.
    """
    return run_benchmark(NAME, build, "CUBA", "Brette et al. 2007, benchmark 2 (CUBA); Brian2 examples/CUBA.py",
                         steps, out, seed, progress, n_seeds)


def run_benchmark(name: str, build, label: str, reference: str, steps, out, seed, progress, n_seeds):
    """Run a Brette et al. benchmark network (``build(seed)``) on several seeds; its dataset and raster figure.

    Shared by :mod:`spiking_cuba` and :mod:`spiking_coba`: per seed the rate,
    the mean CV of the ISIs, the spikes and the population rate in 1 ms bins;
    the raster of the first seed's first 200 ms.
    """
    import xarray as xr

    from neurosim.models.spiking import DT, N, raster_stats
    from neurosim.simulations._harness import prepare_seeded, pyplot, save_final_figure, write_dataset

    steps, seed, n_seeds, out, say = prepare_seeded(name, steps, DEFAULT_STEPS, 100, out, seed, progress, n_seeds,
                                                    DEFAULT_SEEDS)
    seeds = [seed + r for r in range(n_seeds)]
    n_bins = steps // BIN
    rows, rates, raster = [], np.zeros((n_seeds, n_bins)), None
    for k, s in enumerate(seeds):
        unit, when = _spikes_of(build(s), steps)
        stats = raster_stats(unit, when, n=N, steps=steps, dt=DT)
        rows.append((stats["rate_hz"], stats["cv_isi"], unit.size, stats["units_with_isi"]))
        rates[k] = np.bincount(when // BIN, minlength=n_bins)[:n_bins] / (N * BIN * DT)
        if raster is None:
            keep = when < RASTER_STEPS
            raster = (unit[keep], when[keep])
        say(f"seed {s}: {unit.size} spikes, rate {stats['rate_hz']:.2f} Hz, CV of the ISIs {stats['cv_isi']:.3f}")
    rows = np.array(rows)
    ds = xr.Dataset(
        {"rate_hz": ("seed", rows[:, 0]), "cv_isi": ("seed", rows[:, 1]), "spikes": ("seed", rows[:, 2].astype(int)),
         "units_with_isi": ("seed", rows[:, 3].astype(int)),
         "population_rate": (("seed", "bin"), rates),
         "raster_unit": ("spike", raster[0]), "raster_step": ("spike", raster[1])},
        coords={"seed": seeds, "bin_start_s": ("bin", np.arange(n_bins) * BIN * DT)},
        attrs={"simulation": name, "steps": steps, "dt_s": DT, "units": N, "bin_steps": BIN,
               "raster": f"seed {seeds[0]}, steps 0-{RASTER_STEPS - 1} (the step each spike happened in)",
               "reference": reference})
    paths = write_dataset(ds, out, name)

    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9.0, 6.0), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    ax1.scatter(raster[1] * DT * 1e3, raster[0], s=0.5, c="k", marker=".", linewidths=0)
    ax1.set_ylabel("unit")
    ax1.set_title(f"{label}, seed {seeds[0]}: the first {RASTER_STEPS * DT * 1e3:.0f} ms (units 0-3199 excitatory)",
                  fontsize=9)
    shown = int(min(n_bins, RASTER_STEPS // BIN))
    t_ms = np.arange(shown) * BIN * DT * 1e3
    for k, s in enumerate(seeds):
        ax2.plot(t_ms, rates[k, :shown], lw=0.8, label=f"seed {s}")
    ax2.set_xlabel("time (ms)")
    ax2.set_ylabel("rate (Hz, 1 ms bins)")
    ax2.legend(fontsize=7, ncol=len(seeds))
    fig.suptitle(f"Brette et al. (2007) {label} network: {ds.rate_hz.mean().item():.2f} Hz, CV of the ISIs "
                 f"{ds.cv_isi.mean().item():.2f} (mean of {n_seeds} seeds, {steps * DT:g} s)", fontsize=10)
    fig.tight_layout()
    return save_final_figure(fig, out / f"{label.lower()}_raster.png", "raster", paths, say)


def tables(ds) -> list:
    """The report's table: rate, CV of the ISIs and spikes per seed, and their mean ± sd (:mod:`neurosim.report_tables`)."""
    return statistics_tables(ds, NAME)


def statistics_tables(ds, name: str) -> list:
    """:func:`tables` for the benchmark ``name`` (its table is ``name/statistics``)."""
    from neurosim.report_tables import Table, cell

    rows = [[int(s), float(ds.rate_hz.sel(seed=s)), float(ds.cv_isi.sel(seed=s)), int(ds.spikes.sel(seed=s))]
            for s in ds.seed.values]
    n = ds.sizes["seed"]
    sd = (lambda v: float(ds[v].std(ddof=1))) if n > 1 else (lambda v: 0.0)
    rows.append([f"mean ± sd ({n} seeds)", cell("{m:.3f} ± {s:.3f}", m=float(ds.rate_hz.mean()), s=sd("rate_hz")),
                 cell("{m:.4f} ± {s:.4f}", m=float(ds.cv_isi.mean()), s=sd("cv_isi")),
                 cell("{m:.0f} ± {s:.0f}", m=float(ds.spikes.mean()), s=sd("spikes"))])
    return [Table(f"{name}/statistics", ["seed", "rate (Hz)", "CV of the ISIs", "spikes"], rows,
                  formats=[None, ".3f", ".4f", None], align=["l", "r", "r", "r"])]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
