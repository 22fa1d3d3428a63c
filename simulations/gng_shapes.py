"""Fritzke (1995), Sec. 4 / Fig. 1: Growing Neural Gas learns the topology of a 2-D distribution of mixed dimensionality.

The input is a mixture, a third of the samples each, of a filled square
(2-D), a line segment (1-D) and a ring (an annulus), the kind of shape the
paper's figures use. GNG starts from two units with the paper's parameters
(``eps_b = 0.2``, ``eps_n = 0.006``, ``lambda = 100``, ``a_max = 50``,
``alpha = 0.5``, ``d = 0.995``) and grows one unit every 100 inputs; units
and edges are born and removed as network events. Outputs
(``<out>/gng_shapes.nc``, ``.png``): per seed, the units alive and the edges
after every step (from the event log), the quantisation error on held-out
samples at the recorded steps, the final prototypes and edges; the figure
draws the network over the data at four stages (first seed), the units
over time, and the quantisation error over time (median and range over
seeds).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

import neurosim as ns
from neurosim import plot
from neurosim.models.self_organizing import build_gng, quantization_error
from neurosim.simulations._harness import prepare, pyplot, save_figure

NAME = "gng_shapes"
DESCRIPTION = "Fritzke 1995 Fig. 1: Growing Neural Gas on a square, a line and a ring (units, edges, QE)"
#: inputs (one per step)
DEFAULT_STEPS = 20_000
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 600}
#: seeds per run
DEFAULT_SEEDS = 3
#: samples for the quantisation error
N_TEST = 2000


def shapes(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples: a filled square, a horizontal line and a ring, one third each (uniform on each)."""
    part = rng.integers(0, 3, n)
    X = np.empty((n, 2))
    sq = part == 0
    X[sq] = rng.uniform(0.0, 1.0, (sq.sum(), 2))
    ln = part == 1
    X[ln] = np.c_[rng.uniform(1.4, 3.0, ln.sum()), np.full(ln.sum(), 1.5)]
    rg = part == 2
    angle = rng.uniform(0, 2 * np.pi, rg.sum())
    radius = np.sqrt(rng.uniform(0.3 ** 2, 0.5 ** 2, rg.sum()))  # uniform on the annulus' area
    X[rg] = np.c_[2.2 + radius * np.cos(angle), 0.5 + radius * np.sin(angle)]
    return X


def _one_seed(steps: int, seed: int, record_every: int):
    rng = np.random.default_rng(seed)
    X = shapes(steps, rng)
    test = shapes(N_TEST, rng)
    c = build_gng(ns.ArrayStream(X), seed=seed, record_every=record_every)
    c.run(steps)
    net = c.network
    recs = {r.target.name: r.to_dataset(layout="dense") for r in net.recorders.values()}
    W, E = recs["W"], recs["edges"]
    qe = [quantization_error(test, w[np.all(np.isfinite(w), axis=1)]) for w in W["weights"].values]
    t = np.arange(1, steps + 1)
    _, alive, _, _ = plot.alive_counts(W, 2, t, population="map")
    _, edges, _, _ = plot.edge_counts(W, t, projection="edges")
    return dict(X=X, W=W, E=E, qe=np.array(qe), rec_steps=W["time"].values, alive=alive, edges=edges,
                final=c.weights.copy(), final_edges=c.edge_list(), ids=c.ids.copy(), n_events=len(net.event_log))


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_seeds=None) -> dict:
    """GNG on the mixed shape for ``steps`` inputs, ``n_seeds`` seeds ``seed + r``; returns ``{"dataset", "figure"}``."""
    from neurosim._validation import check_int

    steps, seed, out, say = prepare(NAME, steps, DEFAULT_STEPS, 8, out, seed, progress)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    record_every = max(1, steps // 8)
    runs = []
    for r in range(n_seeds):
        say(f"seed {seed + r}: {steps} inputs")
        runs.append(_one_seed(steps, seed + r, record_every))
    kmax = max(res["final"].shape[0] for res in runs)
    emax = max(len(res["final_edges"]) for res in runs)
    final = np.full((n_seeds, kmax, 2), np.nan)
    edges = np.full((n_seeds, emax, 2), -1, dtype=np.int64)
    ages = np.full((n_seeds, emax), np.nan)
    ids = np.full((n_seeds, kmax), -1, dtype=np.int64)
    for r, res in enumerate(runs):
        final[r, : res["final"].shape[0]] = res["final"]
        ids[r, : res["ids"].size] = res["ids"]
        for k, (a, b, g) in enumerate(res["final_edges"]):
            edges[r, k], ages[r, k] = (a, b), g
    seeds = np.arange(seed, seed + n_seeds)
    ds = xr.Dataset(
        {
            "units": (("seed", "step"), np.stack([res["alive"] for res in runs])),
            "edges": (("seed", "step"), np.stack([res["edges"] for res in runs])),
            "quantization_error": (("seed", "recorded_step"), np.stack([res["qe"] for res in runs])),
            "prototypes": (("seed", "slot", "coordinate"), final),
            "unit_id": (("seed", "slot"), ids),
            "edge": (("seed", "edge_slot", "end"), edges),
            "edge_age": (("seed", "edge_slot"), ages),
        },
        coords={"seed": seeds, "step": np.arange(1, steps + 1), "recorded_step": runs[0]["rec_steps"]},
        attrs={"model": "Growing Neural Gas (Fritzke 1995)", "eps_b": 0.2, "eps_n": 0.006, "lam": 100, "a_max": 50.0,
               "alpha": 0.5, "d": 0.995, "n_test": N_TEST},
    )
    path = out / f"{NAME}.nc"
    ds.to_netcdf(path, engine="h5netcdf")
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(12, 7))
    first = runs[0]
    picks = np.unique(np.linspace(0, first["W"].sizes["time"] - 1, 4).round().astype(int))
    for ax, k in zip(axes.ravel()[:4], picks):
        plot.graph_at(first["W"], first["E"], step=int(k), data=first["X"][:3000], ax=ax)
        ax.set_title(f"seed {seed}, after {int(first['rec_steps'][k])} inputs")
    ax = axes.ravel()[4]
    for r, res in enumerate(runs):
        ax.plot(ds.step, res["alive"], lw=1, label=f"units, seed {seeds[r]}")
        ax.plot(ds.step, res["edges"], lw=1, ls="--", label=f"edges, seed {seeds[r]}")
    ax.set_xlabel("input")
    ax.legend(fontsize=6)
    ax = axes.ravel()[5]
    plot.band(ax, ds.recorded_step.values, ds.quantization_error.values, label="median, range over seeds",
              quantiles=(0.0, 1.0))
    ax.set_xlabel("input")
    ax.set_ylabel("quantisation error (held out)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig_path = save_figure(fig, out / f"{NAME}.png")
    say(f"units {[int(r['alive'][-1]) for r in runs]}, QE {[round(float(r['qe'][-1]), 4) for r in runs]} -> {path}")
    return {"dataset": path, "figure": fig_path}


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}


def tables(ds) -> list:
    """The report's table (:mod:`neurosim.report_tables`): per seed, units, edges, births, deaths and held-out QE.

    Births and deaths are the steps on which the units alive rose or fell
    (one event per step: GNG inserts one unit every ``lam`` inputs and
    removes isolated units one input at a time); the QE is the last
    recording's.
    """
    from neurosim.report_tables import Table

    rows = []
    for s in ds.seed.values:
        u = ds.units.sel(seed=s).values
        step = np.diff(u)
        rows.append([int(s), int(u[-1]), int(ds.edges.sel(seed=s).values[-1]), int(step.clip(min=0).sum()),
                     int((-step).clip(min=0).sum()), float(ds.quantization_error.sel(seed=s).values[-1])])
    return [Table(f"{NAME}/summary", ["seed", "units at the end", "edges at the end", "births", "deaths",
                                      "held-out QE at the end"], rows, formats=[None, None, None, None, None, ".4f"])]
