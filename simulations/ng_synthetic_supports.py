"""Garg et al. (2017), Sec. C.2 / Fig. 6 and 8: two domains with disjoint supports, ODL vs NODL.

Synthetic data as in the paper's simulated setting (Sec. C.2, Lemma 1):
domain 1 lives on the first half of the coordinates ``P``, domain 2 on the
second half ``Q``; each sample is a sparse combination of sparse
ground-truth atoms of its domain. The five algorithms (ODL, ODL*, NODL,
NODL+, NODL-) learn the domains one after the other with sparse dictionary
elements (``beta_d`` nonzeros, at most ``|P|``) and the same initial size;
afterwards each dictionary reconstructs held-out samples of both domains.

The paper's claim (Lemma 1): ODL cannot put any weight on ``Q`` once it has
learned domain 1 (its codes of domain-2 samples are all zero), so it cannot
represent domain 2 at all; NODL adds elements supported in ``Q`` and
represents both. Outputs: the test Pearson accuracy per algorithm and
domain, the dictionary size over time from the event log, and pictures of
the final dictionaries (``<out>/ng_synthetic_supports.nc``, ``.png``).

Codes are computed against the learned elements themselves
(``normalize="none"``, :data:`NORMALIZE`), learning and scoring: this is
Lemma 1's setting (Alg. 1 as printed; the samples are sparse, and the
authors' code codes sparse data against ``D`` itself). Under
``normalize="center_unit"`` the Lemma's premise fails: a centred element
has nonzeros on every coordinate, Q included, so ODL's codes of domain-2
samples need not vanish and ODL adapts a little (the paper's Sec. 4
remark). Every run is repeated on ``n_seeds`` seeds ``seed + r`` (data,
initial elements, newborns); the dataset has a ``seed`` dimension and the
figure shows the mean and sd over seeds (dictionary pictures: first seed).

Lemma 1 also needs every element to be supported in ``P`` after domain 1.
An initial element that no domain-1 sample uses (``a_jj = 0``) keeps its
random initial entries, ``Q`` included, under ``unused="keep"`` (the
default, :data:`UNUSED`, as before), and ODL can then code domain 2 with it
(it happens on some seeds); the authors' code zeroes such elements
(``unused="zero"``), and then ODL's domain-2 accuracy is 0 on every seed.
``max_weight_on_Q`` records which case each run is in.
"""

from __future__ import annotations

import pathlib
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim._validation import check_int  # noqa: E402
from neurosim.models.neurogenesis import VARIANTS, build_network  # noqa: E402
from neurosim.simulations._harness import save_figure  # noqa: E402

NAME = "ng_synthetic_supports"
DESCRIPTION = "Garg et al. 2017 Sec. C.2 / Fig. 6, 8: disjoint-support domains, ODL vs NODL (Lemma 1)"
#: mini-batches per domain
DEFAULT_STEPS = 50
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 6}

M, BATCH, K0 = 40, 20, 8
SETTINGS = dict(beta_c=3, beta_d=10, gamma=0.9, c_k=8)
LAMBDA_G = 0.05
#: seeds per run
DEFAULT_SEEDS = 3
#: the atoms codes are computed against, learning and scoring: the elements themselves, Lemma 1's setting
#: (under "center_unit" the Lemma's premise fails, see the module docstring)
NORMALIZE = "none"
#: never-used elements (a_jj = 0) are kept as drawn (the printed algorithm); "zero": the authors' code
UNUSED = "keep"


def _domain(rng, dims, n, n_atoms=6, atom_nnz=5, per=2):
    """Samples = ``per`` of ``n_atoms`` sparse ground-truth atoms supported in ``dims``."""
    atoms = np.zeros((M, n_atoms))
    for j in range(n_atoms):
        atoms[rng.choice(dims, atom_nnz, replace=False), j] = rng.standard_normal(atom_nnz)
    C = np.zeros((n_atoms, n))
    for i in range(n):
        s = rng.choice(n_atoms, per, replace=False)
        C[s, i] = rng.uniform(0.5, 1.5, per) * rng.choice([-1, 1], per)
    return (atoms @ C).T, atoms


def _accuracy(D, X, beta_c, normalize=NORMALIZE):
    """Mean Pearson correlation of samples and their reconstructions (Alg. 2 codes with beta_c nonzeros).

    Codes and reconstructions use ``normalized_atoms(D, normalize)``, the
    atoms the circuit codes against.
    """
    from neurosim.coding import lambda_for_count, normalized_atoms

    D = normalized_atoms(D, normalize)
    active = np.flatnonzero(np.any(D != 0, axis=1))
    if active.size == 0:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, A = lambda_for_count(X, D[active], min(beta_c, active.size), return_codes=True)
    R = np.asarray(A) @ D[active]
    xc, rc = X - X.mean(1, keepdims=True), R - R.mean(1, keepdims=True)
    den = np.sqrt((xc * xc).sum(1) * (rc * rc).sum(1))
    return float(np.where(den > 0, (xc * rc).sum(1) / np.where(den > 0, den, 1), 0.0).mean())


def _one_seed(steps, seed, normalize, progress, unused=UNUSED):
    """The five algorithms on one draw of the data: accuracies, sizes over time, final dictionaries, Q weight."""
    rng = np.random.default_rng(seed)
    P, Q = np.arange(M // 2), np.arange(M // 2, M)
    n = steps * BATCH
    X1, _ = _domain(rng, P, n + 200)
    X2, _ = _domain(rng, Q, n + 200)
    train = np.concatenate([X1[:n], X2[:n]])
    test = {"domain1": X1[n:], "domain2": X2[n:]}
    stream = ns.ArrayStream(train.reshape(2 * steps, BATCH, M))
    acc, sizes, dicts = {}, {}, {}
    for variant in VARIANTS:
        lam = LAMBDA_G if variant in ("NODL", "NODL-") else 0.0
        c = build_network(stream, K0, variant, batch=BATCH, lambda_g=lam, seed=seed, normalize=normalize,
                          unused=unused, **SETTINGS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c.network.run(2 * steps, progress=progress)
        W = c.dictionary.weights.copy()
        acc[variant] = [_accuracy(W, test["domain1"], SETTINGS["beta_c"], normalize),
                        _accuracy(W, test["domain2"], SETTINGS["beta_c"], normalize)]
        log = c.network.event_log
        delta = np.zeros(2 * steps + 1, dtype=int)
        for s, kind in zip(log.step, log.kind):
            delta[s] += 1 if kind == "birth" else -1
        sizes[variant] = K0 + np.cumsum(delta)[1:]
        dicts[variant] = W
    return acc, sizes, dicts


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_seeds=None,
        normalize=NORMALIZE, unused=UNUSED) -> dict[str, pathlib.Path]:
    """Learn domain 1 then domain 2 (``steps`` mini-batches each) with the five algorithms; evaluate both.

    ``seed + r`` draws the data, initial elements and newborns of repetition
    ``r < n_seeds`` (default :data:`DEFAULT_SEEDS`); ``normalize`` (default
    :data:`NORMALIZE`) selects the atoms codes are computed against, learning
    and scoring; ``unused`` (default :data:`UNUSED`) what happens to elements
    never used so far (see the module docstring). Returns the paths written: ``{"dataset", "figure"}``.
    """
    from neurosim._validation import check_choice
    from neurosim.coding import NORMALIZATIONS

    steps = check_int("steps", DEFAULT_STEPS if steps is None else steps, low=1)
    seed = check_int("seed", seed, low=0)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    unused = check_choice("unused", unused, {"keep", "zero"})
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = [_one_seed(steps, seed + r, normalize, progress, unused) for r in range(n_seeds)]
    variants = list(VARIANTS)
    kmax = max(d.shape[0] for _, _, dicts in runs for d in dicts.values())
    padded = np.full((n_seeds, len(variants), kmax, M), np.nan)
    for r, (_, _, dicts) in enumerate(runs):
        for i, v in enumerate(variants):
            padded[r, i, : dicts[v].shape[0]] = dicts[v]
    Q = slice(M // 2, M)
    # the largest |weight| any element puts on Q (domain 2's coordinates): 0 for ODL under Lemma 1
    q_weight = np.nanmax(np.abs(padded[..., Q]), axis=(2, 3))
    ds = xr.Dataset(
        {"accuracy": (("seed", "variant", "domain"), np.array([[acc[v] for v in variants] for acc, _, _ in runs])),
         "dictionary_size": (("seed", "variant", "step"),
                             np.array([[sizes[v] for v in variants] for _, sizes, _ in runs])),
         "dictionary": (("seed", "variant", "element", "feature"), padded),
         "max_weight_on_Q": (("seed", "variant"), q_weight)},
        coords={"seed": seed + np.arange(n_seeds), "variant": variants, "domain": ["domain1", "domain2"],
                "step": np.arange(1, 2 * steps + 1)},
        attrs={"steps_per_domain": steps, "batch": BATCH, "n_features": M, "initial_size": K0,
               "lambda_g": LAMBDA_G, "seed": seed, "first_seed": seed, "n_seeds": n_seeds, "normalize": normalize,
               "unused": unused, **{k: v for k, v in SETTINGS.items()}},
    )
    ds.max_weight_on_Q.attrs["description"] = "max |entry| of the final elements on domain 2's coordinates Q"
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    x = np.arange(len(variants))
    for d, (dom, label) in enumerate((("domain1", "domain 1 (P)"), ("domain2", "domain 2 (Q)"))):
        a = ds.accuracy.sel(domain=dom)
        axes[0].bar(x + (d - 0.5) * 0.4, a.mean("seed"), 0.4, yerr=a.std("seed", ddof=1) if n_seeds > 1 else None,
                    capsize=3, label=label)
        for r in range(n_seeds):
            axes[0].plot(x + (d - 0.5) * 0.4, a.isel(seed=r), "k.", ms=3)
    axes[0].set_xticks(x, variants)
    axes[0].set_ylabel("test Pearson correlation")
    axes[0].set_title(f"mean ± sd over {n_seeds} seeds (dots); codes against {normalize!r} atoms, unused {unused!r}", fontsize=8)
    axes[0].legend()
    for i, v in enumerate(variants):
        sz = ds.dictionary_size.sel(variant=v)
        axes[1].plot(ds.step, sz.mean("seed"), color=f"C{i}", label=v)
        axes[1].fill_between(ds.step, sz.min("seed"), sz.max("seed"), color=f"C{i}", alpha=0.2)
    axes[1].axvline(steps + 0.5, color="k", lw=0.5)
    axes[1].set_xlabel("mini-batch")
    axes[1].set_ylabel("dictionary size (mean, band: min-max over seeds)")
    axes[1].legend()
    dicts = runs[0][2]
    both = np.concatenate([np.abs(dicts["ODL"]), np.full((1, M), np.nan), np.abs(dicts["NODL"])])
    axes[2].imshow(both.T, aspect="auto", cmap="magma")
    axes[2].set_title(f"|elements|: ODL (left), NODL (right), seed {seed}")
    axes[2].set_ylabel("coordinate (P above, Q below)")
    fig.tight_layout()
    save_figure(fig, paths["figure"])
    return paths


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``accuracy``: per variant, the test accuracy on each domain, the final
    size and the largest weight on domain 2's coordinates, mean ± sd over
    seeds. ``claims``: Lemma 1 (ODL's domain-2 accuracy exactly 0, and no
    weight on Q) seed by seed, NODL against ODL on each domain paired by
    seed, and NODL's growth.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    rows = [[str(v), mean_sd(ds.accuracy.sel(variant=v, domain="domain1").values),
             mean_sd(ds.accuracy.sel(variant=v, domain="domain2").values),
             mean_sd(ds.dictionary_size.sel(variant=v).isel(step=-1).values, ".1f"),
             mean_sd(ds.max_weight_on_Q.sel(variant=v).values)] for v in ds.variant.values]
    accuracy = Table(f"{NAME}/accuracy", ["variant", "domain 1 (P)", "domain 2 (Q)", "final size", "max |w| on Q"],
                     rows, align=["l", "r", "r", "r", "r"])
    n = ds.sizes["seed"]
    odl_q = ds.accuracy.sel(variant="ODL", domain="domain2").values
    odl_w = ds.max_weight_on_Q.sel(variant="ODL").values
    diff = ds.accuracy.sel(variant="NODL") - ds.accuracy.sel(variant="ODL")
    growth = ds.dictionary_size.sel(variant="NODL").isel(step=-1).values - int(ds.attrs["initial_size"])
    rows = [
        ["Lemma 1: ODL's domain-2 accuracy exactly 0", cell("{k}/{n}", k=int((odl_q == 0).sum()), n=n),
         per_seed(odl_q, ".3f")],
        ["Lemma 1: ODL puts no weight on Q", cell("{k}/{n}", k=int((odl_w == 0).sum()), n=n), per_seed(odl_w, ".3f")],
        ["NODL > ODL on domain 2", paired(diff.sel(domain="domain2").values, holds=">"),
         per_seed(diff.sel(domain="domain2").values)],
        ["NODL ≥ ODL on domain 1", paired(diff.sel(domain="domain1").values),
         per_seed(diff.sel(domain="domain1").values)],
        ["NODL grows (final − initial size > 0)", paired(growth, "+.1f", holds=">"), per_seed(growth, "+d")],
    ]
    claims = Table(f"{NAME}/claims", ["claim", "seeds that agree (mean ± sd of a difference)", "per seed"], rows,
                   align=["l", "r", "l"])
    return [accuracy, claims]
