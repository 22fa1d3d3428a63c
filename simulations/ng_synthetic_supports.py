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

NAME = "ng_synthetic_supports"
DESCRIPTION = "Garg et al. 2017 Sec. C.2 / Fig. 6, 8: disjoint-support domains, ODL vs NODL (Lemma 1)"
#: mini-batches per domain
DEFAULT_STEPS = 50

M, BATCH, K0 = 40, 20, 8
SETTINGS = dict(beta_c=3, beta_d=10, gamma=0.9, c_k=8)
LAMBDA_G = 0.05


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


def _accuracy(D, X, beta_c):
    """Mean Pearson correlation of samples and their reconstructions (Alg. 2 codes with beta_c nonzeros)."""
    from neurosim.coding import lambda_for_count

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


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True) -> dict[str, pathlib.Path]:
    """Learn domain 1 then domain 2 (``steps`` mini-batches each) with the five algorithms; evaluate both.

    Returns the paths written: ``{"dataset", "figure"}``.
    """
    steps = check_int("steps", DEFAULT_STEPS if steps is None else steps, low=1)
    seed = check_int("seed", seed, low=0)
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
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
        c = build_network(stream, K0, variant, batch=BATCH, lambda_g=lam, seed=seed, **SETTINGS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c.network.run(2 * steps, progress=progress)
        W = c.dictionary.weights
        acc[variant] = [_accuracy(W, test["domain1"], SETTINGS["beta_c"]),
                        _accuracy(W, test["domain2"], SETTINGS["beta_c"])]
        log = c.network.event_log
        delta = np.zeros(2 * steps + 1, dtype=int)
        for s, kind in zip(log.step, log.kind):
            delta[s] += 1 if kind == "birth" else -1
        sizes[variant] = K0 + np.cumsum(delta)[1:]
        dicts[variant] = W
    variants = list(VARIANTS)
    kmax = max(d.shape[0] for d in dicts.values())
    padded = np.full((len(variants), kmax, M), np.nan)
    for i, v in enumerate(variants):
        padded[i, : dicts[v].shape[0]] = dicts[v]
    ds = xr.Dataset(
        {"accuracy": (("variant", "domain"), np.array([acc[v] for v in variants])),
         "dictionary_size": (("variant", "step"), np.array([sizes[v] for v in variants])),
         "dictionary": (("variant", "element", "feature"), padded)},
        coords={"variant": variants, "domain": ["domain1", "domain2"], "step": np.arange(1, 2 * steps + 1)},
        attrs={"steps_per_domain": steps, "batch": BATCH, "n_features": M, "initial_size": K0,
               "lambda_g": LAMBDA_G, "seed": seed, **{k: v for k, v in SETTINGS.items()}},
    )
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    x = np.arange(len(variants))
    axes[0].bar(x - 0.2, ds.accuracy.sel(domain="domain1"), 0.4, label="domain 1 (P)")
    axes[0].bar(x + 0.2, ds.accuracy.sel(domain="domain2"), 0.4, label="domain 2 (Q)")
    axes[0].set_xticks(x, variants)
    axes[0].set_ylabel("test Pearson correlation")
    axes[0].legend()
    for v in variants:
        axes[1].plot(ds.step, ds.dictionary_size.sel(variant=v), label=v)
    axes[1].axvline(steps + 0.5, color="k", lw=0.5)
    axes[1].set_xlabel("mini-batch")
    axes[1].set_ylabel("dictionary size")
    axes[1].legend()
    both = np.concatenate([np.abs(dicts["ODL"]), np.full((1, M), np.nan), np.abs(dicts["NODL"])])
    axes[2].imshow(both.T, aspect="auto", cmap="magma")
    axes[2].set_title("|elements|: ODL (left), NODL (right)")
    axes[2].set_ylabel("coordinate (P above, Q below)")
    fig.tight_layout()
    fig.savefig(paths["figure"], dpi=100)
    plt.close(fig)
    return paths
