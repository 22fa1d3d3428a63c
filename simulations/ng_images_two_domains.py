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

Scaled down from the paper so that the default run takes about 11 minutes
of CPU on one core (see ``DEFAULT_*`` and ``MAX_SWEEPS``): fewer training
images (the paper: 1900 urban then 3800 natural), fewer test images, fewer
initial sizes (the paper: 5 to 1000), and at most ``MAX_SWEEPS``
block-coordinate sweeps per mini-batch (the paper: until convergence).
Codes are scored over unit-norm elements, as the paper's implementation
computes codes (see :func:`pearson_accuracy`); the unnormalised score is
kept too.

Outputs: ``<out>/ng_images_two_domains.nc`` (accuracy, final size,
dictionary size / births / deaths per step), ``.png`` (Fig. 3 / 20) and
``_sizes.png`` (dictionary size over time, births and deaths per batch).
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

NAME = "ng_images_two_domains"
DESCRIPTION = "Garg et al. 2017 Sec. C.1 / Fig. 3, 20: urban then natural 32x32 images, NODL vs ODL over initial sizes"
#: mini-batches of 200 urban images; then twice as many natural ones (the paper: 1900 urban, 3800 natural images)
DEFAULT_STEPS = 3
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


def pearson_accuracy(D: np.ndarray, X: np.ndarray, beta_c: int, normalize: bool = True) -> float:
    """Mean Pearson correlation of test samples and their reconstructions (Sec. C.1 "Evaluation").

    Codes are lasso solutions with ``beta_c`` nonzeros (Alg. 2, per-sample
    lambda by bisection) over the dictionary's nonzero elements (rows of
    ``D``), scaled to unit norm when ``normalize``; with fewer nonzero
    elements than ``beta_c`` every element may be used. A sample or
    reconstruction that is constant counts as 0.

    The paper's implementation normalises the elements "when computing
    codes" (App. E.5, Fig. 16 vs 17). It matters for sparse elements: the
    prox of Alg. 1 step 15 subtracts the ``(beta_d + 1)``-th largest
    ``|u_j|``, which on smooth images leaves elements of norm ~1e-3 whose
    norms differ by orders of magnitude, and a count-targeted lasso then
    prefers the largest ones whatever their fit.
    """
    from neurosim.coding import lambda_for_count

    active = np.flatnonzero(np.any(D != 0, axis=1))
    if active.size == 0:
        return 0.0
    D = D[active]
    if normalize:
        D = D / np.linalg.norm(D, axis=1, keepdims=True)
    active = np.arange(D.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, codes = lambda_for_count(X, D[active], min(beta_c, active.size, X.shape[1]), return_codes=True)
    R = np.asarray(codes) @ D[active]
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


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, sizes=None, n_test=None,
        elements=("sparse", "dense")) -> dict[str, pathlib.Path]:
    """Learn urban then natural images with the five algorithms for each initial size; evaluate both domains.

    Parameters
    ----------
    steps : int >= 1, optional
        Mini-batches of urban images (default :data:`DEFAULT_STEPS`); the
        natural domain follows with ``2 * steps`` mini-batches (animals and
        plants, 200 each per urban batch, as the paper's 1900 + 3800).
    sizes : sequence of int >= 1, optional
        Initial dictionary sizes (default :data:`DEFAULT_SIZES`).
    n_test : int >= 1, optional
        Test images per class (default :data:`DEFAULT_N_TEST`).
    elements : sequence of {"sparse", "dense"}
        The element settings to run.

    Returns the paths written: ``{"dataset", "figure", "sizes_figure"}``.
    """
    sizes = tuple(check_int("sizes", s, low=1) for s in (DEFAULT_SIZES if sizes is None else sizes))
    if not sizes:
        raise ValueError("sizes must name at least one initial size")
    n_train = BATCH * check_int("steps", DEFAULT_STEPS if steps is None else steps, low=1)
    n_test = check_int("n_test", DEFAULT_N_TEST if n_test is None else n_test, low=1)
    seed = check_int("seed", seed, low=0)
    elements = tuple(elements)
    for e in elements:
        if e not in ELEMENTS:
            raise ValueError(f"elements must be among {sorted(ELEMENTS)}; got {e!r}")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)

    stream, steps1, X_old, X_new = image_stream(n_train, n_test, seed)
    steps = stream.data.shape[0]
    variants = list(VARIANTS)
    shape = (len(elements), len(variants), len(sizes))
    acc = np.zeros(shape + (2,))
    acc_raw = np.zeros(shape + (2,))
    final = np.zeros(shape, dtype=np.int64)
    active = np.zeros(shape, dtype=np.int64)
    size_t = np.zeros(shape + (steps,), dtype=np.int64)
    births = np.zeros_like(size_t)
    deaths = np.zeros_like(size_t)
    for e, kind in enumerate(elements):
        beta_d, beta_c = ELEMENTS[kind]
        for v, variant in enumerate(variants):
            lam = LAMBDA_G if variant in ("NODL", "NODL-") else 0.0
            for i, k0 in enumerate(sizes):
                # "at most beta_c nonzeros out of k": codes are dense while k <= beta_c (Sec. C.1)
                c = build_network(stream, k0, variant, batch=BATCH, beta_c=min(beta_c, k0), beta_d=beta_d,
                                  gamma=GAMMA, c_k=C_K, lambda_g=lam, max_sweeps=MAX_SWEEPS, seed=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c.network.run(steps, progress=progress)
                W = c.dictionary.weights
                acc[e, v, i] = pearson_accuracy(W, X_old, beta_c), pearson_accuracy(W, X_new, beta_c)
                acc_raw[e, v, i] = (pearson_accuracy(W, X_old, beta_c, normalize=False),
                                    pearson_accuracy(W, X_new, beta_c, normalize=False))
                final[e, v, i] = W.shape[0]
                active[e, v, i] = int(np.any(W != 0, axis=1).sum())
                size_t[e, v, i], births[e, v, i], deaths[e, v, i] = size_history(
                    c.network.event_log, c.code.name, k0, steps)
                if progress:
                    print(f"{kind:6s} {variant:5s} k0={k0:4d}: final size {final[e, v, i]:4d}, "
                          f"old {acc[e, v, i, 0]:.3f}, new {acc[e, v, i, 1]:.3f}", flush=True)

    dims = ("elements", "variant", "initial_size")
    ds = xr.Dataset(
        {"accuracy": (dims + ("domain",), acc),
         "accuracy_unnormalized": (dims + ("domain",), acc_raw),
         "final_size": (dims, final),
         "active_size": (dims, active),
         "dictionary_size": (dims + ("step",), size_t),
         "births": (dims + ("step",), births),
         "deaths": (dims + ("step",), deaths)},
        coords={"elements": list(elements), "variant": variants, "initial_size": list(sizes),
                "domain": ["old (urban)", "new (natural)"], "step": np.arange(1, steps + 1)},
        attrs={"n_train_per_class": n_train, "n_test_per_class": n_test, "batch": BATCH, "image_size": SIZE,
               "steps_domain1": steps1, "gamma": GAMMA, "c_k": C_K, "lambda_g": LAMBDA_G,
               "beta_d_sparse": BETA_D_SPARSE, "beta_c_sparse": BETA_C_SPARSE, "beta_c_dense": BETA_C_DENSE,
               "max_sweeps": MAX_SWEEPS, "seed": seed},
    )
    ds.accuracy.attrs["description"] = ("mean test Pearson correlation of images and reconstructions, codes over "
                                        "unit-norm elements (as the paper's implementation)")
    ds.accuracy_unnormalized.attrs["description"] = "as accuracy, codes over the elements as learned"
    ds.dictionary_size.attrs["description"] = "units alive after each mini-batch (event log)"
    ds.active_size.attrs["description"] = "final elements with a nonzero entry"
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png", "sizes_figure": out / f"{NAME}_sizes.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")
    _plot_accuracy(ds, paths["figure"])
    _plot_sizes(ds, paths["sizes_figure"])
    return paths


_STYLE = {"NODL": ("C3", "o"), "NODL+": ("C1", "^"), "NODL-": ("C2", "v"), "ODL": ("C0", "s"), "ODL*": ("C9", "x")}


def _plot_accuracy(ds, path):
    """Fig. 3 / 20: test accuracy against the final dictionary size, per domain and element setting."""
    n_e = ds.sizes["elements"]
    fig, axes = plt.subplots(n_e, 2, figsize=(10, 3.6 * n_e), squeeze=False)
    for e, kind in enumerate(ds.elements.values):
        for d, dom in enumerate(ds.domain.values):
            ax = axes[e, d]
            for v in ds.variant.values:
                color, marker = _STYLE[str(v)]
                x = ds.final_size.sel(elements=kind, variant=v)
                ax.plot(x, ds.accuracy.sel(elements=kind, variant=v, domain=dom), marker=marker, color=color,
                        label=str(v), alpha=0.85)
            ax.set_title(f"{dom} domain, {kind} elements")
            ax.set_xlabel("final dictionary size")
            ax.set_ylabel("test Pearson correlation")
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


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
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
