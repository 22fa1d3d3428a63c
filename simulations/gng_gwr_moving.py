"""Grow When Required vs Growing Neural Gas on an input whose support moves (Marsland et al. 2002, Sec. 1, 5).

The input is uniform on a ring (an annulus of radii 0.5 and 1) centred at
the origin for the first half of the run, then on the same ring centred at
``(3, 0)``: the old region receives no more inputs. GNG (Fritzke's
parameters) can only add a unit every ``lambda = 100`` inputs; GWR
(Marsland et al.'s parameters, ``a_T = 0.9``) adds one whenever the winner
matches the input badly although it has fired enough. Both remove edges
older than ``a_max`` and units left without edges, as network events.
From the event log and the recorded prototypes the script counts, per
model and seed, the units born in the new region and the units killed in
the old one (a unit's region is where its prototype was at its last
recording before the event; births use the first recording after), and it
measures the quantisation error on the current distribution over time.
Outputs (``<out>/gng_gwr_moving.nc``, ``.png``): those counts, units alive
over time, the error over time (median and range over seeds), and both
networks drawn over the data before and after the move (first seed).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

import neurosim as ns
from neurosim import plot
from neurosim.models.self_organizing import build_gng, build_gwr, quantization_error
from neurosim.simulations._harness import prepare, pyplot, save_figure

NAME = "gng_gwr_moving"
DESCRIPTION = "GWR vs GNG on a ring that moves halfway: units born in the new region, killed in the old, QE over time"
DEFAULT_STEPS = 20_000
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1000}
DEFAULT_SEEDS = 3
MODELS = ("GNG", "GWR")
#: GWR's activity threshold: a unit is added where the nearest prototype is farther than -ln(0.9) = 0.105
A_T = 0.9
#: where the ring is centred before and after the move
CENTRES = ((0.0, 0.0), (3.0, 0.0))
N_TEST = 1000


def ring(n: int, rng: np.random.Generator, centre) -> np.ndarray:
    angle = rng.uniform(0, 2 * np.pi, n)
    radius = np.sqrt(rng.uniform(0.5 ** 2, 1.0, n))
    return np.c_[centre[0] + radius * np.cos(angle), centre[1] + radius * np.sin(angle)]


def _region(points: np.ndarray) -> np.ndarray:
    """0 nearer the first centre, 1 nearer the second."""
    c = np.asarray(CENTRES)
    return np.argmin(((points[:, None, :] - c[None]) ** 2).sum(-1), axis=1)


def _one(model: str, steps: int, seed: int, every: int):
    rng = np.random.default_rng(seed)
    half = steps // 2
    X = np.concatenate([ring(half, rng, CENTRES[0]), ring(steps - half, rng, CENTRES[1])])
    tests = [ring(N_TEST, rng, c) for c in CENTRES]
    build = build_gng if model == "GNG" else (lambda s, **kw: build_gwr(s, a_T=A_T, **kw))
    c = build(ns.ArrayStream(X), seed=seed, record_every=every)
    c.run(steps)
    net = c.network
    recs = {r.target.name: r.to_dataset(layout="dense") for r in net.recorders.values()}
    W, E = recs["W"], recs["edges"]
    times = W["time"].values
    weights = W["weights"].values  # (time, unit id, coordinate), NaN where absent
    uid = W["unit"].values
    qe = np.array([quantization_error(tests[int(t > half)], w[np.all(np.isfinite(w), axis=1)])
                   for t, w in zip(times, weights)])
    log = net.event_log
    counts = {"born_new": 0, "born_old": 0, "killed_new": 0, "killed_old": 0}
    for s, kind, u in zip(log.step, log.kind, log.unit):
        if kind not in ("birth", "death") or s <= half:
            continue
        col = int(np.flatnonzero(uid == u)[0])
        k = np.searchsorted(times, s, side="left" if kind == "birth" else "right")
        k = min(k, times.size - 1) if kind == "birth" else max(k - 1, 0)
        p = weights[k, col]
        if not np.all(np.isfinite(p)):
            continue  # born and dead between two recordings
        where = "new" if _region(p[None])[0] == 1 else "old"
        counts[("born_" if kind == "birth" else "killed_") + where] += 1
    t = np.arange(1, steps + 1)
    _, alive, _, _ = plot.alive_counts(W, 2, t, population="map")
    return dict(X=X, W=W, E=E, times=times, qe=qe, alive=alive, counts=counts, half=half)


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_seeds=None) -> dict:
    """Both models, ``n_seeds`` seeds ``seed + r``, ``steps`` inputs (the ring moves after half); ``{"dataset", "figure"}``."""
    from neurosim._validation import check_int

    steps, seed, out, say = prepare(NAME, steps, DEFAULT_STEPS, 20, out, seed, progress)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    every = max(1, steps // 40)
    runs = {m: [] for m in MODELS}
    for m in MODELS:
        for r in range(n_seeds):
            say(f"{m}, seed {seed + r}: {steps} inputs")
            runs[m].append(_one(m, steps, seed + r, every))
    seeds = np.arange(seed, seed + n_seeds)
    keys = ("born_new", "born_old", "killed_new", "killed_old")
    times = runs[MODELS[0]][0]["times"]
    ds = xr.Dataset(
        {
            "units": (("model", "seed", "step"), np.array([[r["alive"] for r in runs[m]] for m in MODELS])),
            "quantization_error": (("model", "seed", "recorded_step"),
                                   np.array([[r["qe"] for r in runs[m]] for m in MODELS])),
            **{k: (("model", "seed"), np.array([[r["counts"][k] for r in runs[m]] for m in MODELS])) for k in keys},
        },
        coords={"model": list(MODELS), "seed": seeds, "step": np.arange(1, steps + 1), "recorded_step": times},
        attrs={"move_after": steps // 2, "a_T": A_T, "centres": str(CENTRES), "n_test": N_TEST},
    )
    path = out / f"{NAME}.nc"
    ds.to_netcdf(path, engine="h5netcdf")
    plt = pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for row, m in enumerate(MODELS):
        first = runs[m][0]
        k_before = int(np.searchsorted(first["times"], first["half"], side="right") - 1)
        for ax, k, label in ((axes[row, 0], k_before, "before the move"), (axes[row, 1], -1, "at the end")):
            plot.graph_at(first["W"], first["E"], step=k, data=first["X"][::7], ax=ax)
            ax.set_title(f"{m}, seed {seed}, {label} ({int(first['times'][k])} inputs)", fontsize=9)
    ax = axes[0, 2]
    for m in MODELS:
        plot.band(ax, ds.step.values, ds.units.sel(model=m).values, quantiles=(0.0, 1.0), label=m)
    ax.axvline(steps // 2, color="0.5", lw=0.5)
    ax.set_ylabel("units alive")
    ax.legend(fontsize=7)
    ax = axes[1, 2]
    for m in MODELS:
        plot.band(ax, times, ds.quantization_error.sel(model=m).values, quantiles=(0.0, 1.0), label=m)
    ax.axvline(steps // 2, color="0.5", lw=0.5)
    ax.set_yscale("log")
    ax.set_xlabel("input")
    ax.set_ylabel("QE on the current distribution")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig_path = save_figure(fig, out / f"{NAME}.png")
    for m in MODELS:
        say(f"{m}: " + ", ".join(f"{k} {ds[k].sel(model=m).values.tolist()}" for k in keys))
    return {"dataset": path, "figure": fig_path}


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}
#: "recovered": the median QE over seeds back within this factor of its last value before the move
RECOVERED = 1.1


def tables(ds) -> list:
    """The report's table (:mod:`neurosim.report_tables`): per model, units born and killed, QE around the move.

    Units born in the new region and killed in the old one after the move
    and units alive at the end, per seed; the quantisation error on the
    current distribution, median over seeds, at the last recording before
    the move and the first after it; and the inputs after the move until
    that median is back within :data:`RECOVERED` times its value before
    the move (at the recordings' resolution).
    """
    from neurosim.report_tables import Table, cell, per_seed

    move = int(ds.attrs["move_after"])
    rec = ds.recorded_step.values
    before, after = int(np.flatnonzero(rec <= move)[-1]), int(np.flatnonzero(rec > move)[0])
    rows = []
    for m in ds.model.values:
        qe = ds.quantization_error.sel(model=m).median("seed").values
        back = np.flatnonzero((rec > move) & (qe <= RECOVERED * qe[before]))
        rows.append([str(m), per_seed(ds.born_new.sel(model=m).values, "d"),
                     per_seed(ds.killed_old.sel(model=m).values, "d"),
                     per_seed(ds.units.sel(model=m).isel(step=-1).values, "d"),
                     cell("{a:.3f} ({ta}) -> {b:.3f} ({tb})", a=float(qe[before]), ta=int(rec[before]),
                          b=float(qe[after]), tb=int(rec[after])),
                     cell("{n}", n=int(rec[back[0]] - move)) if back.size else "not within the run"])
    return [Table(f"{NAME}/summary", ["model", "born in the new region (per seed)", "killed in the old region",
                                      "units at the end", "QE, median (input): last before the move -> first after",
                                      f"inputs until the median QE is within {RECOVERED:g}x its pre-move value"],
                  rows, align=["l", "r", "r", "r", "r", "r"])]
