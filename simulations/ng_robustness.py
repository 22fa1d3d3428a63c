"""Garg et al. (2017), App. E.9 / Figs. 22-27: robustness of NODL vs ODL to its tuning parameters.

The setting of Fig. 3 (urban images, then natural images; 32x32 grayscale
full images as samples), with one parameter varied at a time around the
defaults: the batch size (Fig. 22), ``c_k`` (Fig. 23), ``lambda_g``
(Fig. 24), ``beta_c`` (Fig. 25), ``beta_d`` (Fig. 26) and ``gamma``
(Fig. 27). For every setting NODL and ODL learn the urban training images
and then the natural ones (animals and plants, randomly permuted); the final
dictionary is scored by the mean test Pearson correlation between samples
and their reconstructions (codes with ``beta_c`` nonzeros by Alg. 2) on the
old (urban) and the new (natural) domain, and its final size is kept.
ODL has no births and no deaths, so ``c_k``, ``lambda_g`` and ``gamma`` do
not act on it: it is run once for those rows (drawn as a flat line).

The paper's figures give no list of the values varied; the values here
(:data:`SWEEP`) span the ranges its text discusses (``gamma`` close to 1,
``lambda_g`` in ``[0, 1]``, ``c_k`` below the batch size, Mairal et al.'s
batch sizes). Scaled down for a laptop core (see :data:`DEFAULTS`):

* 600 training and 600 test images per class (the paper: 1900), from
  :func:`neurosim.data.domains.load_image_domains` (crops of the offline
  photographs; the paper's Oxford/Flowers/Pets images are not available);
  the image size stays 32x32;
* batch 50 instead of 200, so ``c_k = 12`` keeps the paper's births per
  sample (50 per 200);
* 50 initial elements, ``beta_c = 20`` (the paper: 200, with up to 1000
  elements), ``beta_d = 50`` (the paper: 5; with the soft ``beta_d``-prox of
  step 15 followed by the ``lambda_g = 0.03`` shrink, NODL's 5-nonzero
  elements are zeroed within a few batches: 13 nonzero elements and test
  Pearson 0.15 at the end, see the ``beta_d`` row);
* at most 10 sweeps of the dictionary update per batch (Alg. 1 loops to
  convergence; Mairal et al. 2009 report one sweep with warm start suffices);
* samples centred and scaled to unit norm (``center=True, normalize=True``;
  the paper mentions neither; on raw ``[0, 1]`` images, in a trial with 200
  images per class, NODL zeroed all but a few elements in the first
  batches and ended at batch Pearson 0.13). Pearson scoring ignores each
  sample's offset and scale, but the learning does not.

Codes are computed against centred, unit-norm elements while learning and
when scoring (``normalize="center_unit"``, :data:`NORMALIZE`, a setting of
every point): images are dense data, for which the authors' released code
codes against ``normalize(D)``; ``normalize="none"`` is Alg. 1 as printed.
The whole sweep is repeated on ``n_seeds`` seeds ``seed + r`` (crops,
initial elements, newborns); the results have a ``seed`` dimension and the
figure shows the mean and sd over seeds.

Every run is one dict of :func:`points`, computed by :func:`run_point`, so a
sweep layer can farm them out. Outputs ``<out>/ng_robustness.nc`` (one entry
per run) and ``<out>/ng_robustness.png`` (one row per parameter: old-domain
accuracy, new-domain accuracy, final size).
"""

from __future__ import annotations

import functools
import pathlib
import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim._validation import check_int  # noqa: E402
from neurosim.data.domains import load_image_domains  # noqa: E402
from neurosim.models.neurogenesis import build_network  # noqa: E402
from neurosim.simulations._harness import save_figure  # noqa: E402

NAME = "ng_robustness"
DESCRIPTION = "Garg et al. 2017 App. E.9 / Figs. 22-27: NODL vs ODL vs batch, c_k, lambda_g, beta_c, beta_d, gamma"
#: mini-batches of the urban domain at the default batch size (the natural domain has twice as many);
#: ``steps * DEFAULTS["batch"]`` training and as many test images per class (urban; animals; plants)
DEFAULT_STEPS = 12
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 2, "sweep": {"c_k": [3, 25], "lambda_g": [0.03, 1.0], "beta_c": [5, 20]}}
SIZE = 32
VARIANTS = ("NODL", "ODL")
#: the scaled-down defaults around which one parameter at a time is varied (module docstring)
DEFAULTS = dict(batch=50, c_k=12, lambda_g=0.03, beta_c=20, beta_d=50, gamma=0.9)
N_COMPONENTS = 50
MAX_SWEEPS = 10
#: values tried per parameter (``beta_d = 0``: dense elements, plotted at the image size)
SWEEP = {
    "batch": [25, 50, 100],
    "c_k": [3, 6, 12, 25, 50],
    "lambda_g": [0.0, 0.01, 0.03, 0.1, 0.3],
    "beta_c": [5, 10, 20, 40],
    "beta_d": [5, 20, 50, 200, 0],
    "gamma": [0.5, 0.7, 0.8, 0.9, 0.95, 1.0],
}
#: parameters ODL does not use (it has no births and no deaths)
NOT_ODL = ("c_k", "lambda_g", "gamma")
#: seeds per run (the whole sweep is repeated)
DEFAULT_SEEDS = 3
#: the atoms codes are computed against, learning and scoring: images are dense data, and the authors' code
#: codes dense data against centred unit-norm elements (``normalize(D)`` in their sparse_coding.m)
NORMALIZE = "center_unit"


def points(n_per_class=DEFAULT_STEPS * DEFAULTS["batch"], seed=0, sweep=None, size=SIZE,
           normalize=NORMALIZE) -> list[dict]:
    """The runs, one dict each: ``variant``, the swept ``param`` ("default"), its ``value`` and every setting.

    ``normalize`` (the atoms codes are computed against) is a setting of
    every point, never swept.

    Each (variant, setting) is run once: the default point serves every row,
    and ODL is not repeated over parameters it does not use.
    """
    sweep = SWEEP if sweep is None else sweep
    base = dict(n_per_class=n_per_class, size=size, seed=seed, n_components=N_COMPONENTS, max_sweeps=MAX_SWEEPS,
                normalize=normalize, **DEFAULTS)
    out = []
    for variant in VARIANTS:
        out.append(dict(base, variant=variant, param="default", value=np.nan))
        for param, values in sweep.items():
            if variant == "ODL" and param in NOT_ODL:
                continue
            for v in values:
                if v != DEFAULTS[param]:
                    out.append(dict(base, variant=variant, param=param, value=float(v), **{param: v}))
    return out


@functools.lru_cache(maxsize=4)
def _data(n_per_class, size, seed):
    return load_image_domains(n_per_class=n_per_class, size=size, seed=seed, center=True, normalize=True)


def _accuracy(W, X, beta_c, normalize=NORMALIZE):
    """Mean Pearson correlation of samples and reconstructions, codes with ``beta_c`` nonzeros (Alg. 2).

    Codes and reconstructions use ``normalized_atoms(W, normalize)``, the
    atoms the circuit codes against. Only elements that are not all zero
    take part; a sample whose correlation is undefined (constant
    reconstruction) counts as 0.
    """
    from neurosim.coding import lambda_for_count, normalized_atoms

    W = normalized_atoms(W, normalize)
    active = np.flatnonzero(np.any(W != 0, axis=1))
    if active.size == 0:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Alg. 2 may end with fewer nonzeros for a few samples
        _, A = lambda_for_count(X, W[active], min(beta_c, active.size, X.shape[1]), return_codes=True)
    R = np.asarray(A) @ W[active]
    xc, rc = X - X.mean(1, keepdims=True), R - R.mean(1, keepdims=True)
    den = np.sqrt((xc * xc).sum(1) * (rc * rc).sum(1))
    return float(np.where(den > 0, (xc * rc).sum(1) / np.where(den > 0, den, 1), 0.0).mean())


def run_point(point: dict) -> dict:
    """Train one dictionary on urban then natural images and score it.

    ``point`` is one entry of :func:`points`. Each domain's training images
    are cut to a whole number of batches (the rest is dropped). Returns
    ``{"acc_old", "acc_new", "size", "nonzero", "seconds"}``: test accuracies,
    the elements held at the end (the paper's dictionary size), those of
    them not all zero (deaths stop at ``beta_c`` elements, so zeroed ones may
    stay), and the wall time.
    """
    started = time.perf_counter()
    urban, natural = _data(point["n_per_class"], point["size"], point["seed"])
    batch = point["batch"]
    parts = [d.X_train[: (len(d.X_train) // batch) * batch] for d in (urban, natural)]
    X = np.concatenate(parts)
    steps = X.shape[0] // batch
    stream = ns.ArrayStream(X.reshape(steps, batch, X.shape[1]))
    c = build_network(stream, point["n_components"], point["variant"], batch=batch, beta_c=point["beta_c"],
                      beta_d=point["beta_d"], gamma=point["gamma"], c_k=point["c_k"], lambda_g=point["lambda_g"],
                      newborn="dense", max_sweeps=point["max_sweeps"], seed=point["seed"], record_every=10**9,
                      normalize=point.get("normalize", "none"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.network.run(steps, progress=False)
    W = c.dictionary.weights
    normalize = point.get("normalize", "none")
    return {"acc_old": _accuracy(W, urban.X_test, point["beta_c"], normalize),
            "acc_new": _accuracy(W, natural.X_test, point["beta_c"], normalize),
            "size": int(c.code.size),
            "nonzero": int(np.count_nonzero(np.any(W != 0, axis=1))),
            "seconds": time.perf_counter() - started}


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, sweep=None, *, n_seeds=None,
        normalize=NORMALIZE) -> dict[str, pathlib.Path]:
    """Run every point of :func:`points` for every seed and plot the trends.

    ``steps`` (default :data:`DEFAULT_STEPS`) sets the data size:
    ``steps * DEFAULTS["batch"]`` training and test images per class.
    ``sweep`` (a dict like :data:`SWEEP`, default all of it) selects the
    parameters and values. The sweep is repeated for seeds ``seed + r``,
    ``r < n_seeds`` (default :data:`DEFAULT_SEEDS`); ``normalize`` (default
    :data:`NORMALIZE`) selects the atoms codes are computed against.
    Returns the paths written: ``{"dataset", "figure"}``.
    """
    from neurosim._validation import check_choice
    from neurosim.coding import NORMALIZATIONS

    steps = check_int("steps", DEFAULT_STEPS if steps is None else steps, low=1)
    n_per_class = steps * DEFAULTS["batch"]
    seed = check_int("seed", seed, low=0)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    sweep = SWEEP if sweep is None else sweep
    unknown = sorted(set(sweep) - set(SWEEP))
    if unknown:
        raise ValueError(f"sweep keys must be among {sorted(SWEEP)}; got {unknown}")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    todo = points(n_per_class, seed, sweep, normalize=normalize)
    results = []
    for r in range(n_seeds):
        row = []
        for i, p in enumerate(points(n_per_class, seed + r, sweep, normalize=normalize)):
            row.append(run_point(p))
            if progress:
                q = row[-1]
                print(f"seed {seed + r} [{i + 1}/{len(todo)}] {p['variant']} {p['param']}={p['value']:g}: "
                      f"old {q['acc_old']:.3f} new {q['acc_new']:.3f} size {q['size']} ({q['seconds']:.1f} s)",
                      flush=True)
        results.append(row)
        _data.cache_clear()

    def field(key, dtype=float):
        return (("seed", "run"), np.array([[q[key] for q in row] for row in results], dtype=dtype))

    ds = xr.Dataset(
        {"variant": ("run", [p["variant"] for p in todo]),
         "param": ("run", [p["param"] for p in todo]),
         "value": ("run", np.array([p["value"] for p in todo], dtype=float)),
         "acc_old": field("acc_old"),
         "acc_new": field("acc_new"),
         "final_size": field("size", np.int64),
         "nonzero_elements": field("nonzero", np.int64),
         "seconds": field("seconds")},
        coords={"seed": seed + np.arange(n_seeds), "run": np.arange(len(todo))},
        attrs={"steps": steps, "n_per_class": n_per_class, "image_size": SIZE, "n_components": N_COMPONENTS,
               "max_sweeps": MAX_SWEEPS, "seed": seed, "first_seed": seed, "n_seeds": n_seeds,
               "normalize": normalize, "old_domain": "urban", "new_domain": "natural (animals + plants)",
               "preprocessing": "per-sample centring and unit norm",
               **{f"default_{k}": v for k, v in DEFAULTS.items()}},
    )
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")
    _plot(ds, list(sweep), paths["figure"])
    return paths


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}


def _odl_partner(ds, run: int) -> int:
    """The ODL run a NODL run is compared with: the same setting, or ODL's default where ODL ignores the parameter."""
    param, value = ds.param.values[run], ds.value.values[run]
    odl = ds.variant.values == "ODL"
    same = odl & (ds.param.values == param) & ((ds.value.values == value) | (param == "default"))
    if not same.any():
        same = odl & (ds.param.values == "default")
    return int(np.flatnonzero(same)[0])


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``settings``: per NODL setting (the defaults first, then one parameter
    varied at a time), NODL's and ODL's test accuracy on both domains and
    NODL's final size, mean ± sd over seeds, and NODL minus ODL paired by
    seed with the seeds on which NODL >= ODL (ODL's default run where ODL
    does not use the parameter: ``c_k``, ``lambda_g``, ``gamma``).
    ``summary``: over all settings and seeds, how often NODL >= ODL.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired

    rows = []
    counts = {"new": [0, 0, 0], "old": [0, 0, 0]}  # setting-seeds that agree, setting-seeds, settings on every seed
    for run in np.flatnonzero(ds.variant.values == "NODL"):
        odl = _odl_partner(ds, run)
        param, value = str(ds.param.values[run]), float(ds.value.values[run])
        shown = "" if param == "default" else ("0 (dense)" if param == "beta_d" and value == 0 else f"{value:g}")
        diffs = {}
        for dom in ("new", "old"):
            d = ds[f"acc_{dom}"].isel(run=run).values - ds[f"acc_{dom}"].isel(run=odl).values
            diffs[dom] = paired(d)
            counts[dom][0] += int((d >= 0).sum())
            counts[dom][1] += d.size
            counts[dom][2] += int((d >= 0).all())
        rows.append([param, shown, mean_sd(ds.acc_old.isel(run=run).values), mean_sd(ds.acc_old.isel(run=odl).values),
                     mean_sd(ds.acc_new.isel(run=run).values), mean_sd(ds.acc_new.isel(run=odl).values),
                     mean_sd(ds.final_size.isel(run=run).values, ".1f"), diffs["new"], diffs["old"]])
    settings = Table(f"{NAME}/settings", ["parameter", "value", "NODL old", "ODL old", "NODL new", "ODL new",
                                          "NODL size", "new: NODL − ODL (seeds ≥ 0)",
                                          "old: NODL − ODL (seeds ≥ 0)"], rows, align=["l", "r"] + ["r"] * 7)
    n_settings = len(rows)
    same = []  # NODL settings whose runs equal the defaults' on every seed (both accuracies and the size)
    default = int(np.flatnonzero((ds.variant.values == "NODL") & (ds.param.values == "default"))[0])
    for run in np.flatnonzero((ds.variant.values == "NODL") & (ds.param.values != "default")):
        if all(np.array_equal(ds[k].isel(run=run).values, ds[k].isel(run=default).values)
               for k in ("acc_old", "acc_new", "final_size")):
            same.append(f"{ds.param.values[run]} = {float(ds.value.values[run]):g}")
    summary = Table(f"{NAME}/summary", ["domain", "setting-seeds with NODL ≥ ODL",
                                        "settings with NODL ≥ ODL on every seed"],
                    [[f"{dom} ({str(ds.attrs.get(dom + '_domain', '')).split(' (')[0]})",
                      cell("{k}/{n}", k=c[0], n=c[1]), cell("{k}/{n}", k=c[2], n=n_settings)]
                     for dom, c in counts.items()]
                    + [["NODL runs equal to the defaults' run on every seed (accuracies and size)",
                        ", ".join(same) or "none", None]], align=["l", "r", "r"])
    return [settings, summary]


def _row(ds, variant, param):
    """(values, acc_old, acc_new, size) of one variant along one parameter, the default point included, sorted.

    The three results have shape (seed, value).
    """
    sel = (ds.variant.values == variant) & ((ds.param.values == param) | (ds.param.values == "default"))
    vals = np.where(ds.param.values[sel] == "default", DEFAULTS[param], ds.value.values[sel])
    if param == "beta_d":
        vals = np.where(vals == 0, SIZE * SIZE, vals)  # dense elements: all pixels
    order = np.argsort(vals, kind="stable")

    def pick(name):
        return np.atleast_2d(ds[name].values)[:, sel][:, order]

    return vals[order], pick("acc_old"), pick("acc_new"), pick("final_size")


def _plot(ds, params, path):
    n_s = ds.sizes.get("seed", 1)
    fig, axes = plt.subplots(len(params), 3, figsize=(12, 2.6 * len(params)), squeeze=False)
    colors = {"NODL": "tab:blue", "ODL": "tab:purple"}
    for i, param in enumerate(params):
        for variant in VARIANTS:
            vals, old, new, size = _row(ds, variant, param)
            if variant == "ODL" and param in NOT_ODL:
                xs = _row(ds, "NODL", param)[0]
                vals = np.array([xs.min(), xs.max()]) if xs.size else vals
                old, new, size = (np.repeat(a[:, :1], vals.size, axis=1) for a in (old, new, size))
                style = dict(ls="--")
            else:
                style = dict(marker="o")
            for ax, y in zip(axes[i], (old, new, size)):
                y = y.astype(float)
                ax.errorbar(vals, y.mean(0), yerr=y.std(0, ddof=1) if n_s > 1 else None, color=colors[variant],
                            label=variant, capsize=3, **style)
        label = "beta_d (dense plotted at %d)" % (SIZE * SIZE) if param == "beta_d" else param
        for ax, title in zip(axes[i], ("old domain (urban): test Pearson", "new domain (natural): test Pearson",
                                       "final dictionary size")):
            ax.set_xlabel(label)
            ax.set_title(title, fontsize=9)
            if param in ("beta_d", "c_k", "batch"):
                ax.set_xscale("log")
                ticks = sorted(set(_row(ds, "NODL", param)[0].tolist()))
                ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
                ax.minorticks_off()
        for ax, ylabel in zip(axes[i], ("Pearson accuracy", "Pearson accuracy", "atoms")):
            ax.set_ylabel(ylabel, fontsize=8)
        axes[i][0].legend(fontsize=8)
    fig.suptitle(f"codes against {ds.attrs.get('normalize', 'none')!r} atoms; mean ± sd over {n_s} seeds",
                 fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)
