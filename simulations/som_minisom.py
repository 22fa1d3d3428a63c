"""Kohonen's self-organising map on the engine next to MiniSom: quantisation and topographic error over training.

A 10 x 10 map with MiniSom's defaults (``sigma = 1.5`` here, learning rate
0.5, gaussian neighbourhood, asymptotic decay of both over ``steps``
inputs) learns the mixed 2-D shape of :mod:`gng_shapes` (a square, a line,
a ring), from MiniSom's random initial weights, on ``steps`` independent
samples in the order drawn. When MiniSom is installed it trains on the same weights,
schedules and order and the script records both; the two must agree to
rounding (``max_weight_difference``); a map's fixed grid cannot follow the
shape's mixed dimensionality (units stretch between the parts), which a
growing network does (``gng_shapes``). Outputs (``<out>/som_minisom.nc``,
``.png``): held-out quantisation error and topographic error at ten points
of training per seed (three seeds), and the map drawn over the data (grid
neighbours linked).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

import neurosim as ns
from neurosim import plot
from neurosim.models.self_organizing import build_som, quantization_error, topographic_error
from neurosim.simulations._harness import prepare, pyplot, save_figure
from neurosim.simulations.gng_shapes import shapes

NAME = "som_minisom"
DESCRIPTION = "Kohonen SOM (10 x 10, MiniSom's defaults) vs MiniSom: QE and topographic error over training"
DEFAULT_STEPS = 10_000
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 400}
DEFAULT_SEEDS = 3
ROWS = COLS = 10
SIGMA = 1.5
N_TEST = 2000


def grid_adjacency(rows: int, cols: int) -> np.ndarray:
    """1 between units that are 4-neighbours on the grid (for drawing)."""
    i, j = np.divmod(np.arange(rows * cols), cols)
    d = np.abs(i[:, None] - i[None]) + np.abs(j[:, None] - j[None])
    return (d == 1).astype(float)


def _one_seed(steps: int, seed: int, points: np.ndarray):
    rng = np.random.default_rng(seed)
    X = shapes(steps, rng)
    test = shapes(N_TEST, rng)
    try:
        from minisom import MiniSom
    except ImportError:
        MiniSom = None
    w0 = (np.random.RandomState(seed).rand(ROWS * COLS, 2) * 2 - 1)
    w0 /= np.linalg.norm(w0, axis=1, keepdims=True)  # MiniSom's initialisation
    c = build_som(ns.ArrayStream(X), ROWS, COLS, steps=steps, sigma=SIGMA, init=w0, seed=seed)
    som = None
    if MiniSom is not None:
        som = MiniSom(ROWS, COLS, 2, sigma=SIGMA, random_seed=seed)
        som._weights = w0.reshape(ROWS, COLS, 2).copy()
    out = {"ours": [], "minisom": []}
    done = 0
    for p in points:
        c.run(int(p) - done)
        out["ours"].append((quantization_error(test, c.weights), topographic_error(test, c.weights, ROWS, COLS)))
        if som is not None:
            for t in range(done, int(p)):  # MiniSom's train() restarts its schedule: its update() steps on
                som.update(X[t], som.winner(X[t]), t, steps)
            out["minisom"].append((som.quantization_error(test), som.topographic_error(test)))
        done = int(p)
    diff = np.nan if som is None else float(np.abs(c.weights - som.get_weights().reshape(-1, 2)).max())
    return X, c.weights.copy(), out, diff


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_seeds=None) -> dict:
    """Ours (and MiniSom, when installed) on ``n_seeds`` seeds ``seed + r``; returns ``{"dataset", "figure"}``."""
    from neurosim._validation import check_int

    steps, seed, out, say = prepare(NAME, steps, DEFAULT_STEPS, 10, out, seed, progress)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    points = np.unique(np.linspace(steps / 10, steps, 10).round().astype(int))
    res = []
    for r in range(n_seeds):
        say(f"seed {seed + r}: {steps} inputs")
        res.append(_one_seed(steps, seed + r, points))
    impls = ["ours"] + (["minisom"] if res[0][2]["minisom"] else [])
    qe = np.array([[[v[0] for v in r[2][k]] for k in impls] for r in res])
    te = np.array([[[v[1] for v in r[2][k]] for k in impls] for r in res])
    seeds = np.arange(seed, seed + n_seeds)
    ds = xr.Dataset(
        {"quantization_error": (("seed", "implementation", "step"), qe),
         "topographic_error": (("seed", "implementation", "step"), te),
         "max_weight_difference": (("seed",), np.array([r[3] for r in res])),
         "prototypes": (("seed", "unit", "coordinate"), np.stack([r[1] for r in res]))},
        coords={"seed": seeds, "implementation": impls, "step": points},
        attrs={"rows": ROWS, "cols": COLS, "sigma": SIGMA, "learning_rate": 0.5, "decay": "asymptotic",
               "neighbourhood": "gaussian", "n_test": N_TEST},
    )
    path = out / f"{NAME}.nc"
    ds.to_netcdf(path, engine="h5netcdf")
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    plot.graph(res[0][1], grid_adjacency(ROWS, COLS), data=res[0][0][:3000], ax=axes[0])
    axes[0].set_title(f"10 x 10 map after {steps} inputs (seed {seed})", fontsize=9)
    for ax, var, label in ((axes[1], "quantization_error", "quantisation error"),
                           (axes[2], "topographic_error", "topographic error")):
        for k, impl in enumerate(impls):
            plot.band(ax, points, ds[var].sel(implementation=impl).values, quantiles=(0.0, 1.0),
                      label=impl, ls="-" if k == 0 else "--")
        ax.set_xlabel("input")
        ax.set_ylabel(f"{label} (held out)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig_path = save_figure(fig, out / f"{NAME}.png")
    say(f"QE {ds.quantization_error.isel(step=-1).values.round(4).tolist()}, TE "
        f"{ds.topographic_error.isel(step=-1).values.round(3).tolist()}, max |ours - MiniSom| "
        f"{ds.max_weight_difference.values.tolist()} -> {path}")
    return {"dataset": path, "figure": fig_path}


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}


def tables(ds) -> list:
    """The report's table (:mod:`neurosim.report_tables`): per seed, the final held-out errors of both maps.

    ``final``: per seed, the inputs, the held-out quantisation and
    topographic errors of ours and of MiniSom (when the run had it) after
    the last input, and the largest difference between the two maps'
    weights; then mean ± sd over the seeds.
    """
    from neurosim.report_tables import Table, mean_sd

    last = ds.isel(step=-1)
    impls = [str(i) for i in ds.implementation.values]
    cols = []
    for var in ("quantization_error", "topographic_error"):
        cols += [(last[var].sel(implementation=i).values, ".4f") for i in impls]
    cols.append((ds.max_weight_difference.values, ".2g"))
    rows = [[int(s), int(last.step)] + [float(c[k]) for c, _ in cols] for k, s in enumerate(ds.seed.values)]
    rows.append(["mean ± sd", None] + [mean_sd(c, f) for c, f in cols[:-1]] + [None])
    names = {"ours": "ours", "minisom": "MiniSom"}
    heads = ["seed", "inputs"] + [f"held-out {w}, {names.get(i, i)}" for w in ("QE", "topographic error")
                                  for i in impls] + ["max abs weight difference"]
    return [Table(f"{NAME}/final", heads, rows, formats=[None, None] + [f for _, f in cols],
                  align=["l"] + ["r"] * (len(heads) - 1))]
