"""Garg et al. (2017), Sec. C.1 / Fig. 3 and 20: urban then natural images, the five algorithms.

Grayscale 32x32 full images (:func:`neurosim.data.domains.load_image_domains`:
crops of the offline photographs, train and test split by source photo)
arrive in mini-batches of 200: first the urban domain, then the natural
domain (animals and plants, permuted). ODL, ODL*, NODL, NODL+ and NODL-
(:mod:`neurosim.models.neurogenesis`) learn from the same stream for a
range of initial dictionary sizes, with *sparse* dictionary elements
(``beta_d = 5`` nonzeros of 1024, as in Sec. C.1 / Fig. 3) and with *dense*
elements (as in the paper's Fig. 9, sparse codes with 50 nonzeros). The
final dictionaries reconstruct held-out images of both domains; the score is
the mean Pearson correlation of an image and its reconstruction (codes with
``beta_c`` nonzeros, Alg. 2), plotted, as in the paper, against the FINAL
dictionary size (NODL's size changes; ODL's does not).

The paper's claim (Sec. C.1, Fig. 3, 20): NODL is at least as good as ODL
(and ODL*) on both the old (urban) and the new (natural) domain, the gain
largest for small dictionaries with sparse elements; with dense elements the
two are about equal.

The dictionary size over time comes from the event log
(``network.event_log``): the units alive after each mini-batch, and the
births and deaths of each mini-batch, for every run.

Codes are computed against centred, unit-norm elements while learning and
when scoring (``normalize="center_unit"``, :mod:`neurosim.coding.normalization`):
the authors' released code does so, and Sec. 4 / App. E.5 explain ODL's
small adaptation by it. With codes against the learned elements themselves
(Alg. 1 as printed, ``normalize="none"``) both algorithms collapse on these
images (see ``docs/reports/paper000.md``). Every run is repeated on
``n_seeds`` seeds (other crops, initial elements and newborns), and NODL is
compared with ODL *at its own final size*: for each seed, element setting
and initial size, ODL is run again from as many elements as NODL ended with
(``odl_matched``); ``margin`` is NODL minus that ODL, per domain.

Scaled down from the paper so that one seed takes a few minutes of CPU on
one core (see ``DEFAULT_*`` and ``MAX_SWEEPS``): fewer training images (the
paper: 1900 urban then 3800 natural), fewer test images, fewer initial sizes
(the paper: 5 to 1000), and at most ``MAX_SWEEPS`` block-coordinate sweeps
per mini-batch (the paper: until convergence).

Outputs: ``<out>/ng_images_two_domains.nc`` (accuracy, final size,
matched-size ODL and margins per seed, dictionary size / births / deaths per
step), ``.png`` (Fig. 3 / 20, mean and spread over seeds, and the margins)
and ``_sizes.png`` (dictionary size over time, births and deaths per batch,
first seed).
"""

from __future__ import annotations

import pathlib
import warnings

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim._validation import check_int  # noqa: E402
from neurosim.data.domains import load_image_domains  # noqa: E402
from neurosim.models.neurogenesis import VARIANTS, build_network  # noqa: E402
from neurosim.simulations._harness import save_figure  # noqa: E402

NAME = "ng_images_two_domains"
DESCRIPTION = "Garg et al. 2017 Sec. C.1 / Fig. 3, 20: urban then natural 32x32 images, NODL vs ODL over initial sizes"
#: mini-batches of 200 urban images; then twice as many natural ones (the paper: 1900 urban, 3800 natural images)
DEFAULT_STEPS = 3
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1, "sizes": [8, 24], "n_test": 20}
#: test images per class (urban: this many; natural: twice as many); the paper: 1900
DEFAULT_N_TEST = 100
#: initial dictionary sizes; the paper: 5 to 1000
DEFAULT_SIZES = (20, 100, 250)

SIZE, BATCH = 32, 200
#: Sec. C.1: gamma, c_k and lambda_g for 32x32 images
GAMMA, C_K, LAMBDA_G = 0.9, 50, 0.03
#: sparse elements: 5 nonzeros of 1024, codes with at most 200 nonzeros (Sec. C.1)
BETA_D_SPARSE, BETA_C_SPARSE = 5, 200
#: dense elements, sparse codes with 50 nonzeros (the paper's Fig. 9 setting)
BETA_C_DENSE = 50
ELEMENTS = {"sparse": (BETA_D_SPARSE, BETA_C_SPARSE), "dense": (0, BETA_C_DENSE)}
#: block-coordinate sweeps per mini-batch: with sparse elements the sweeps rarely reach tol, and 100 sweeps
#: cost 8x the encoding; 10 keeps the default run within budget
MAX_SWEEPS = 10
#: seeds per run (data crops, initial elements, newborns)
DEFAULT_SEEDS = 3
#: the atoms codes are computed against, learning and scoring: the authors' code (see the module docstring)
NORMALIZE = "center_unit"


def pearson_accuracy(D: np.ndarray, X: np.ndarray, beta_c: int, normalize: str = NORMALIZE) -> float:
    """Mean Pearson correlation of test samples and their reconstructions (Sec. C.1 "Evaluation").

    Codes are lasso solutions with ``beta_c`` nonzeros (Alg. 2, per-sample
    lambda by bisection) against the dictionary's atoms normalised as the
    circuit codes with them (``normalize``, see
    :func:`neurosim.coding.normalized_atoms`), and the reconstruction uses
    those atoms; all-zero atoms are inactive. With fewer active atoms than
    ``beta_c`` every atom may be used. A sample or reconstruction that is
    constant counts as 0.
    """
    from neurosim.coding import lambda_for_count, normalized_atoms

    D = normalized_atoms(D, normalize)
    D = D[np.any(D != 0, axis=1)]
    if D.shape[0] == 0:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, codes = lambda_for_count(X, D, min(beta_c, D.shape[0], X.shape[1]), return_codes=True)
    R = np.asarray(codes) @ D
    xc, rc = X - X.mean(1, keepdims=True), R - R.mean(1, keepdims=True)
    den = np.sqrt((xc * xc).sum(1) * (rc * rc).sum(1))
    return float(np.where(den > 0, (xc * rc).sum(1) / np.where(den > 0, den, 1), 0.0).mean())


def size_history(event_log, population: str, initial: int, steps: int):
    """Units alive after each step, and births and deaths per step, from an event log.

    The log's ``step`` of an event is the 1-based mini-batch in which it
    happened, so the size after batch ``s`` is ``initial`` plus the births
    minus the deaths logged at steps ``1..s``.

    Returns
    -------
    size, births, deaths : ndarray of int, shape (steps,)
    """
    births = np.zeros(steps + 1, dtype=np.int64)
    deaths = np.zeros(steps + 1, dtype=np.int64)
    for s, kind, pop in zip(event_log.step, event_log.kind, event_log.population):
        if pop == population:
            (births if kind == "birth" else deaths)[s] += 1
    size = initial + np.cumsum(births - deaths)
    return size[1:], births[1:], deaths[1:]


def image_stream(n_train: int, n_test: int, seed: int):
    """The two-domain stream and test sets: ``(stream, steps_domain1, X_test_old, X_test_new)``."""
    urban, natural = load_image_domains(n_per_class=max(n_train, n_test), size=SIZE, seed=seed)
    X1, X2 = urban.X_train[:n_train], natural.X_train[: 2 * n_train]
    train = np.concatenate([X1, X2])
    steps1 = X1.shape[0] // BATCH
    stream = ns.ArrayStream(train.reshape(-1, BATCH, SIZE * SIZE))
    return stream, steps1, urban.X_test[:n_test], natural.X_test[: 2 * n_test]


def _learn(stream, k0, variant, kind, seed, normalize, progress):
    """One run of ``variant`` from ``k0`` elements over the whole stream; returns the circuit."""
    beta_d, beta_c = ELEMENTS[kind]
    lam = LAMBDA_G if variant in ("NODL", "NODL-") else 0.0
    # "at most beta_c nonzeros out of k": codes are dense while k <= beta_c (Sec. C.1)
    c = build_network(stream, k0, variant, batch=BATCH, beta_c=min(beta_c, k0), beta_d=beta_d, gamma=GAMMA, c_k=C_K,
                      lambda_g=lam, max_sweeps=MAX_SWEEPS, seed=seed, normalize=normalize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.network.run(stream.data.shape[0], progress=progress)
    return c


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, sizes=None, n_test=None,
        elements=("sparse", "dense"), n_seeds=None, normalize=NORMALIZE, variants=None) -> dict[str, pathlib.Path]:
    """Learn urban then natural images with the five algorithms for each initial size and seed; score both domains.

    Parameters
    ----------
    steps : int >= 1, optional
        Mini-batches of urban images (default :data:`DEFAULT_STEPS`); the
        natural domain follows with ``2 * steps`` mini-batches (animals and
        plants, 200 each per urban batch, as the paper's 1900 + 3800).
    seed : int >= 0
        First seed; seed ``seed + s`` draws the crops, the initial elements
        and the newborns of repetition ``s``.
    sizes : sequence of int >= 1, optional
        Initial dictionary sizes (default :data:`DEFAULT_SIZES`).
    n_test : int >= 1, optional
        Test images per class (default :data:`DEFAULT_N_TEST`).
    elements : sequence of {"sparse", "dense"}
        The element settings to run.
    n_seeds : int >= 1, optional
        Repetitions (default :data:`DEFAULT_SEEDS`).
    normalize : {"none", "unit", "center_unit"}
        The atoms codes are computed against, learning and scoring (default
        :data:`NORMALIZE`, the authors' code).
    variants : sequence of variant names, optional
        Default: all five; NODL must be among them (the matched ODL runs
        follow its final sizes).

    Returns the paths written: ``{"dataset", "figure", "sizes_figure"}``.
    """
    from neurosim.coding import NORMALIZATIONS
    from neurosim._validation import check_choice

    sizes = tuple(check_int("sizes", s, low=1) for s in (DEFAULT_SIZES if sizes is None else sizes))
    if not sizes:
        raise ValueError("sizes must name at least one initial size")
    n_train = BATCH * check_int("steps", DEFAULT_STEPS if steps is None else steps, low=1)
    n_test = check_int("n_test", DEFAULT_N_TEST if n_test is None else n_test, low=1)
    seed = check_int("seed", seed, low=0)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    elements = tuple(elements)
    for e in elements:
        if e not in ELEMENTS:
            raise ValueError(f"elements must be among {sorted(ELEMENTS)}; got {e!r}")
    variants = list(VARIANTS) if variants is None else list(variants)
    for v in variants:
        check_choice("variants", v, set(VARIANTS))
    if "NODL" not in variants:
        raise ValueError(f"variants must include 'NODL' (the matched ODL runs follow its sizes); got {variants}")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)

    steps = 3 * (n_train // BATCH)
    shape = (n_seeds, len(elements), len(variants), len(sizes))
    acc = np.zeros(shape + (2,))
    final = np.zeros(shape, dtype=np.int64)
    active = np.zeros(shape, dtype=np.int64)
    size_t = np.zeros(shape + (steps,), dtype=np.int64)
    births = np.zeros_like(size_t)
    deaths = np.zeros_like(size_t)
    matched = np.zeros((n_seeds, len(elements), len(sizes), 2))
    matched_size = np.zeros((n_seeds, len(elements), len(sizes)), dtype=np.int64)
    nodl = variants.index("NODL")
    steps1 = 0
    for r in range(n_seeds):
        stream, steps1, X_old, X_new = image_stream(n_train, n_test, seed + r)
        for e, kind in enumerate(elements):
            beta_c = ELEMENTS[kind][1]
            for v, variant in enumerate(variants):
                for i, k0 in enumerate(sizes):
                    c = _learn(stream, k0, variant, kind, seed + r, normalize, progress)
                    W = c.dictionary.weights
                    acc[r, e, v, i] = (pearson_accuracy(W, X_old, beta_c, normalize),
                                       pearson_accuracy(W, X_new, beta_c, normalize))
                    final[r, e, v, i] = W.shape[0]
                    active[r, e, v, i] = int(np.any(W != 0, axis=1).sum())
                    size_t[r, e, v, i], births[r, e, v, i], deaths[r, e, v, i] = size_history(
                        c.network.event_log, c.code.name, k0, steps)
                    if progress:
                        print(f"seed {seed + r} {kind:6s} {variant:5s} k0={k0:4d}: final size {final[r, e, v, i]:4d}, "
                              f"old {acc[r, e, v, i, 0]:.3f}, new {acc[r, e, v, i, 1]:.3f}", flush=True)
            for i, k0 in enumerate(sizes):
                # ODL at NODL's final size: as many (active) elements from the start, same seed and data
                k_same = max(1, int(active[r, e, nodl, i]))
                W = _learn(stream, k_same, "ODL", kind, seed + r, normalize, progress).dictionary.weights
                matched[r, e, i] = pearson_accuracy(W, X_old, beta_c, normalize), pearson_accuracy(W, X_new, beta_c,
                                                                                                  normalize)
                matched_size[r, e, i] = k_same
                if progress:
                    print(f"seed {seed + r} {kind:6s} ODL at NODL's size {k_same}: old {matched[r, e, i, 0]:.3f}, "
                          f"new {matched[r, e, i, 1]:.3f}", flush=True)

    dims = ("seed", "elements", "variant", "initial_size")
    mdims = ("seed", "elements", "initial_size")
    ds = xr.Dataset(
        {"accuracy": (dims + ("domain",), acc),
         "final_size": (dims, final),
         "active_size": (dims, active),
         "dictionary_size": (dims + ("step",), size_t),
         "births": (dims + ("step",), births),
         "deaths": (dims + ("step",), deaths),
         "odl_matched_accuracy": (mdims + ("domain",), matched),
         "odl_matched_size": (mdims, matched_size),
         "margin": (mdims + ("domain",), acc[:, :, nodl] - matched)},
        coords={"seed": seed + np.arange(n_seeds), "elements": list(elements), "variant": variants,
                "initial_size": list(sizes), "domain": ["old (urban)", "new (natural)"],
                "step": np.arange(1, steps + 1)},
        attrs={"n_train_per_class": n_train, "n_test_per_class": n_test, "batch": BATCH, "image_size": SIZE,
               "steps_domain1": steps1, "gamma": GAMMA, "c_k": C_K, "lambda_g": LAMBDA_G,
               "beta_d_sparse": BETA_D_SPARSE, "beta_c_sparse": BETA_C_SPARSE, "beta_c_dense": BETA_C_DENSE,
               "max_sweeps": MAX_SWEEPS, "first_seed": seed, "normalize": normalize},
    )
    ds.accuracy.attrs.update(long_name="test Pearson correlation", units="1",
                             description=f"mean test Pearson correlation of images and reconstructions, codes against "
                                         f"the atoms normalised as {normalize!r}, as while learning")
    ds.odl_matched_accuracy.attrs["description"] = "ODL started from as many elements as NODL ended with (active)"
    ds.margin.attrs["description"] = "NODL accuracy minus ODL's at NODL's final size (same seed, data, domain)"
    ds.dictionary_size.attrs["description"] = "units alive after each mini-batch (event log)"
    ds.active_size.attrs["description"] = "final elements with a nonzero entry"
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png", "sizes_figure": out / f"{NAME}_sizes.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")
    _plot_accuracy(ds, paths["figure"])
    _plot_sizes(ds.isel(seed=0), paths["sizes_figure"])
    return paths


#: the figures of the run that the report shows (``neurosim tables`` copies them to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png", f"{NAME}_sizes.png": f"{NAME}_sizes.png"}


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``accuracy``: per element setting, variant (and ODL started at NODL's
    final active size) and initial size, the mean final size (with the
    range over seeds of the active, i.e. not all-zero, elements where some
    are all-zero) and the test accuracy on each domain, mean ± sd over
    seeds.
    ``margins``: NODL minus ODL at NODL's final size (``margin``), per seed
    and as mean ± sd with the seeds on which NODL >= ODL. ``events``: NODL's
    units, births and deaths per mini-batch (the event log), as ranges over
    seeds.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    sizes = [int(k) for k in ds.initial_size.values]
    old, new = (str(d) for d in ds.domain.values)

    def size(final, active=None):
        if active is None or np.all(np.asarray(active) == np.asarray(final)):
            return cell("{final:.0f}", final=float(np.mean(final)))
        lo, hi = int(np.min(active)), int(np.max(active))  # some elements all-zero
        if lo == hi:
            return cell("{final:.0f} ({alo} active)", final=float(np.mean(final)), alo=lo)
        return cell("{final:.0f} ({alo}–{ahi} active)", final=float(np.mean(final)), alo=lo, ahi=hi)

    rows = []
    for kind in ds.elements.values:
        e = ds.sel(elements=kind)
        for v in list(ds.variant.values) + ["ODL at NODL's size"]:
            for k in sizes:
                if v == "ODL at NODL's size":
                    acc, cells = e.odl_matched_accuracy.sel(initial_size=k), size(e.odl_matched_size.sel(initial_size=k))
                else:
                    r = e.sel(variant=v, initial_size=k)
                    acc, cells = r.accuracy, size(r.final_size.values, r.active_size.values)
                rows.append([str(kind), str(v), k, cells, mean_sd(acc.sel(domain=old).values),
                             mean_sd(acc.sel(domain=new).values)])
    accuracy = Table(f"{NAME}/accuracy", ["elements", "variant", "k0", "final size, mean", f"{old}, mean ± sd",
                                          f"{new}, mean ± sd"], rows, align=["l", "l", "r", "r", "r", "r"])
    rows = []
    for kind in ds.elements.values:
        for k in sizes:
            m = ds.margin.sel(elements=kind, initial_size=k)
            rows.append([str(kind), k, per_seed(m.sel(domain=old).values), paired(m.sel(domain=old).values),
                         per_seed(m.sel(domain=new).values), paired(m.sel(domain=new).values)])
    margins = Table(f"{NAME}/margins", ["elements", "k0", "old (urban), per seed", "old: mean ± sd (NODL ≥ ODL)",
                                         "new (natural), per seed", "new: mean ± sd (NODL ≥ ODL)"], rows,
                    align=["l", "r", "l", "r", "l", "r"])

    def span(x):
        x = np.asarray(x)
        lo, hi = int(x.min()), int(x.max())
        return cell("{lo}", lo=lo) if lo == hi else cell("{lo}–{hi}", lo=lo, hi=hi)

    rows = []
    for kind in ds.elements.values:
        for k in sizes:
            r = ds.sel(elements=kind, variant="NODL", initial_size=k)
            b, d = r.births.transpose("seed", "step").values, r.deaths.transpose("seed", "step").values
            rows.append([str(kind), k, span(r.dictionary_size.isel(step=-1).values), span(b[:, 0]), span(b[:, -1]),
                         span(b[:, 1:]), span(d[:, 0]), span(d[:, 1:])])
    events = Table(f"{NAME}/events", ["elements", "k0", "NODL's units at the end", "births, batch 1",
                                      "births, last batch", "births per batch after the first", "deaths, batch 1",
                                      "deaths per batch after the first"], rows,
                   align=["l"] + ["r"] * 7)
    return [accuracy, margins, events]


_STYLE = {"NODL": ("C3", "o"), "NODL+": ("C1", "^"), "NODL-": ("C2", "v"), "ODL": ("C0", "s"), "ODL*": ("C9", "x")}


def _plot_accuracy(ds, path):
    """Fig. 3 / 20 (mean and sd over seeds against the mean final size), and NODL's margin over matched ODL."""
    n_e = ds.sizes["elements"]
    n_s = ds.sizes["seed"]
    fig, axes = plt.subplots(n_e, 3, figsize=(15, 4.2 * n_e), squeeze=False)
    for e, kind in enumerate(ds.elements.values):
        for d, dom in enumerate(ds.domain.values):
            ax = axes[e, d]
            for v in ds.variant.values:
                color, marker = _STYLE[str(v)]
                a = ds.accuracy.sel(elements=kind, variant=v, domain=dom)
                x = ds.final_size.sel(elements=kind, variant=v).mean("seed")
                ax.errorbar(x, a.mean("seed"), yerr=a.std("seed", ddof=1) if n_s > 1 else None, marker=marker,
                            color=color, label=str(v), alpha=0.85, capsize=3)
            m = ds.odl_matched_accuracy.sel(elements=kind, domain=dom)
            ax.errorbar(ds.odl_matched_size.sel(elements=kind).mean("seed"), m.mean("seed"),
                        yerr=m.std("seed", ddof=1) if n_s > 1 else None, marker="s", mfc="none", ls=":", color="C0",
                        label="ODL at NODL's size", capsize=3)
            ax.set_title(f"{dom} domain, {kind} elements")
            ax.set_xlabel("final dictionary size (mean over seeds)")
            ax.set_ylabel("test Pearson correlation")
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax = axes[e, 2]
        for d, dom in enumerate(ds.domain.values):
            mg = ds.margin.sel(elements=kind, domain=dom)
            for i, k0 in enumerate(ds.initial_size.values):
                xs = i + (d - 0.5) * 0.3 + np.linspace(-0.05, 0.05, n_s)
                ax.plot(xs, mg.sel(initial_size=k0), "o", color=f"C{d}", label=str(dom) if i == 0 else None)
        ax.axhline(0.0, color="k", lw=0.6)
        ax.set_xticks(range(ds.sizes["initial_size"]))
        ax.set_xticklabels([str(k) for k in ds.initial_size.values])
        ax.set_xlabel("NODL's initial size (one point per seed)")
        ax.set_ylabel("NODL minus ODL at NODL's final size")
        ax.set_title(f"margin at equal size, {kind} elements")
        ax.legend(fontsize=8)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"codes against {ds.attrs['normalize']!r} atoms; {n_s} seeds (error bars: sd)")
    fig.tight_layout()
    save_figure(fig, path)


def _plot_sizes(ds, path):
    """Dictionary size over time (event log): every variant and initial size; NODL's births and deaths."""
    n_e = ds.sizes["elements"]
    steps1 = ds.attrs["steps_domain1"]
    fig, axes = plt.subplots(n_e, 2, figsize=(11, 3.6 * n_e), squeeze=False)
    k_mid = ds.initial_size.values[len(ds.initial_size) // 2]
    for e, kind in enumerate(ds.elements.values):
        ax = axes[e, 0]
        for v in ds.variant.values:
            color, _ = _STYLE[str(v)]
            for i, k0 in enumerate(ds.initial_size.values):
                y = np.concatenate([[k0], ds.dictionary_size.sel(elements=kind, variant=v, initial_size=k0)])
                ax.step(np.arange(y.size), y, where="post", color=color, alpha=0.8,
                        label=str(v) if i == 0 else None)
        ax.axvline(steps1, color="k", lw=0.6, ls="--")
        ax.set_yscale("log")
        lo = int(ds.dictionary_size.sel(elements=kind).min()) // 2
        hi = int(ds.dictionary_size.sel(elements=kind).max())
        ax.set_yticks([t for t in (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if lo <= t <= 1.5 * hi])
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("mini-batch (dashed: domain 2 starts)")
        ax.set_ylabel("units alive")
        ax.set_title(f"dictionary size over time, {kind} elements")
        ax.legend(fontsize=7)
        ax = axes[e, 1]
        b = ds.births.sel(elements=kind, variant="NODL", initial_size=k_mid)
        d = ds.deaths.sel(elements=kind, variant="NODL", initial_size=k_mid)
        ax.bar(ds.step - 0.2, b, 0.4, color="C2", label="births")
        ax.bar(ds.step + 0.2, -d, 0.4, color="C3", label="deaths (negative)")
        ax.axvline(steps1 + 0.5, color="k", lw=0.6, ls="--")
        ax.axhline(0, color="k", lw=0.4)
        ax.set_xlabel("mini-batch")
        ax.set_ylabel("units per batch")
        ax.set_title(f"NODL births and deaths, initial size {k_mid}, {kind} elements")
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
