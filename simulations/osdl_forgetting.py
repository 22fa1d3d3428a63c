"""OSDL's forgetting factor on a non-stationary stream (paper 003, Lemma 1; domain switch as in paper 000).

8x8 grey patches (mean removed, :class:`neurosim.data.images.ImagePatchStream`)
arrive in mini-batches: the first third of the steps from the photograph of
*grass* (a fine, isotropic texture), the rest from the photograph of a
*brick* wall (long oriented edges) -- a stronger switch than paper 000's
urban/natural crops, which at 8x8 pixels hardly differ (a first version of
this script used them: no forgetting effect was visible). Test patches come
from the same two photographs at other random positions. The OSDL circuit
(:func:`neurosim.models.osdl.build_network`; singleton groups, i.e. lasso
codes, full masks) learns with the forgetting exponent ``rho`` in {0, 1, 4,
16}: by Lemma 1 mini-batch ``i`` weighs ``(i/t)^rho`` at time ``t``, so a
larger ``rho`` forgets the first domain faster.

Every ``EVAL_EVERY`` steps the current dictionary reconstructs held-out
patches of both domains (codes by the circuit's own encoder); the score is
the mean relative squared error ``||x - D alpha||^2 / ||x||^2``.

Measured: *adaptation* -- the brick-domain error ``ADAPT_AFTER`` steps
after the switch, relative to its value at the switch; *memory* -- the
grass-domain error at the end relative to its value at the switch (1: kept,
above 1: forgotten).

Outputs: ``<out>/osdl_forgetting.nc`` (errors per rho, domain, step) and
``.png`` (errors over time, the switch marked).
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

from neurosim.simulations._osdl_common import SOLVER

NAME = "osdl_forgetting"
DESCRIPTION = "Szabo et al. 2011 (OSDL) forgetting factor: grass then brick 8x8 patches, rho in {0, 1, 4, 16}"
DEFAULT_STEPS = 240
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 9}
GRID = {"rho": [0.0, 1.0, 4.0, 16.0]}
PATCH, BATCH, N_COMPONENTS, KAPPA = 8, 32, 64, 0.1
#: the two domains: a fine isotropic texture, then a wall of oriented edges (skimage photographs)
DOMAINS = ("grass", "brick")
N_TEST, EVAL_EVERY, ADAPT_AFTER = 300, 8, 16


def domains(steps: int, seed: int):
    """Training patches in stream order (grass for the first third of the steps, then brick) and test patches of each."""
    from neurosim.data.images import ImagePatchStream

    def patches(image, n, s):
        return ImagePatchStream(PATCH, images=image, whiten=False, seed=s).block(0, n, 1)[:, 0]

    switch = max(1, steps // 3)
    first = patches(DOMAINS[0], switch * BATCH, seed)
    second = patches(DOMAINS[1], (steps - switch) * BATCH, seed)
    X = np.concatenate([first, second])
    scale = float(np.sqrt((X ** 2).sum(axis=1).mean()))  # unit mean norm, so kappa means the same for any data
    test_first = patches(DOMAINS[0], N_TEST, seed + 10 ** 4)
    test_second = patches(DOMAINS[1], N_TEST, seed + 10 ** 4)
    return X / scale, test_first / scale, test_second / scale, switch


def relative_error(X: np.ndarray, recon: np.ndarray) -> float:
    num = ((X - recon) ** 2).sum(axis=1)
    den = (X ** 2).sum(axis=1)
    keep = den > 0
    return float((num[keep] / den[keep]).mean())


def check_point(rho: float, steps: int | None = None):
    from neurosim._validation import check_float, check_int

    check_float("rho", rho, low=0.0)
    if steps is not None:
        check_int("steps", steps, low=6)


def point(rho: float, seed: int, steps: int | None = None) -> xr.Dataset:
    """One run: test errors of both domains every ``EVAL_EVERY`` steps for one ``rho``."""
    import neurosim as ns
    from neurosim.models.osdl import build_network

    check_point(rho, steps)
    steps = DEFAULT_STEPS if steps is None else steps
    X, test_u, test_n, switch = domains(steps, seed)
    circuit = build_network(ns.ArrayStream(X.reshape(steps, BATCH, -1)), N_COMPONENTS, kappa=KAPPA, batch=BATCH,
                            rho=float(rho), init=X[np.random.default_rng(seed).choice(len(X) // 3, N_COMPONENTS,
                                                                                          replace=False)],
                            seed=seed, solver=SOLVER)
    evals = sorted(set(range(0, steps + 1, EVAL_EVERY)) | {switch, steps})
    err = np.zeros((2, len(evals)))
    done = 0
    for i, s in enumerate(evals):
        circuit.run(s - done)
        done = s
        err[0, i] = relative_error(test_u, circuit.reconstruct(test_u))
        err[1, i] = relative_error(test_n, circuit.reconstruct(test_n))
    return xr.Dataset({"rel_error": (("domain", "step"), err)},
                      coords={"domain": list(DOMAINS), "step": evals},
                      attrs={"switch": switch})


def summary(ds: xr.Dataset, switch: int) -> xr.Dataset:
    """Adaptation and memory per rho (see the module docstring)."""
    after = ds.rel_error.sel(domain=DOMAINS[1])
    at_switch = ds.rel_error.sel(step=switch)
    later = [int(s) for s in ds.step.values if s >= switch + ADAPT_AFTER]
    target = min(later) if later else int(ds.step.values[-1])
    drop = ["domain", "step"]
    return xr.Dataset({
        "adaptation": (after.sel(step=target) / at_switch.sel(domain=DOMAINS[1])).drop_vars(drop, errors="ignore"),
        "memory": (ds.rel_error.sel(domain=DOMAINS[0]).isel(step=-1)
                   / at_switch.sel(domain=DOMAINS[0])).drop_vars(drop, errors="ignore"),
    }, attrs={"adapt_step": target})


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_seeds=None) -> dict[str, pathlib.Path]:
    """Run the four forgetting exponents on ``n_seeds`` seeds (default 3) and write the figure (mean ± sd).

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``: the test errors per seed, rho, domain and step, with adaptation and memory per rho;
        ``figure``: the errors over the mini-batches, the switch marked.
    """
    from neurosim.simulations._harness import mean_sd, pyplot, save_final_figure
    from neurosim.simulations._osdl_common import run_seeds, write_osdl_dataset

    runs, steps, seed, n_seeds, out, say = run_seeds(NAME, point, GRID, steps, DEFAULT_STEPS, 6, out, seed, progress,
                                                     resume, n_seeds)
    switch = max(1, steps // 3)
    ds = runs[["rel_error"]]
    summ = summary(ds, switch)
    ds = ds.assign(adaptation=summ.adaptation, memory=summ.memory)
    paths = write_osdl_dataset(ds, NAME, out, steps, seed, n_seeds, switch=switch,
                               adapt_step=summ.attrs["adapt_step"], batch=BATCH, n_components=N_COMPONENTS,
                               kappa=KAPPA, patch=PATCH)
    for rho in ds.rho.values:
        say(f"rho={rho:g} ({n_seeds} seeds, mean ± sd): {DOMAINS[1]} error {mean_sd(ds.adaptation.sel(rho=rho), '.3f')} "
            f"of its value at the switch after {summ.attrs['adapt_step'] - switch} steps; {DOMAINS[0]} error at the "
            f"end {mean_sd(ds.memory.sel(rho=rho), '.3f')} of its value at the switch")

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, dom in zip(axes, DOMAINS):
        for i, rho in enumerate(ds.rho.values):
            e = ds.rel_error.sel(rho=rho, domain=dom)
            ax.plot(ds.step, e.mean("seed"), color=plt.cm.viridis(i / 3), label=f"rho = {rho:g}")
            if n_seeds > 1:
                sd = e.std("seed", ddof=1)
                ax.fill_between(ds.step, e.mean("seed") - sd, e.mean("seed") + sd, color=plt.cm.viridis(i / 3),
                                alpha=0.15, lw=0)
        ax.axvline(switch, color="k", ls=":", lw=1)
        ax.set_title(f"held-out {dom} patches")
        ax.set_xlabel("mini-batch")
    axes[0].set_ylabel("relative reconstruction error")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"OSDL forgetting: {DOMAINS[0]}, then {DOMAINS[1]} patches (switch dotted); mean ± sd over {n_seeds} seeds",
                 fontsize=10)
    fig.tight_layout()
    return save_final_figure(fig, out / f"{NAME}.png", "figure", paths, say)


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": "paper003_forgetting.png"}


def before_switch(ds: xr.Dataset) -> xr.DataArray:
    """The first domain's error before the switch: the mean of the evaluations after step 0 up to the switch."""
    steps = ds.step.values
    keep = (steps > 0) & (steps <= int(ds.attrs["switch"]))
    return ds.rel_error.sel(domain=DOMAINS[0]).isel(step=np.flatnonzero(keep)).mean("step")


def tables(ds: xr.Dataset) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``summary``: per ``rho``, adaptation and memory (see the module
    docstring) and the first domain's error before the switch
    (:func:`before_switch`), mean ± sd over seeds. ``claims``: per seed,
    Spearman's correlation of ``rho`` with adaptation and with memory, and
    the differences between the largest and the smallest ``rho`` (and
    between the two largest, for memory), with the seeds that agree.
    """
    from scipy.stats import spearmanr

    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    after = int(ds.attrs["adapt_step"]) - int(ds.attrs["switch"])
    before = before_switch(ds)
    rows = [[float(r), after, mean_sd(ds.adaptation.sel(rho=r).values), mean_sd(ds.memory.sel(rho=r).values),
             mean_sd(before.sel(rho=r).values)] for r in ds.rho.values]
    summary = Table(f"{NAME}/summary", ["rho", "mini-batches after the switch",
                                        f"{DOMAINS[1]} error then (relative to the switch)",
                                        f"{DOMAINS[0]} error at the end (relative to the switch)",
                                        f"{DOMAINS[0]} error before the switch (mean of the evaluations)"],
                    rows, formats=["g", None, None, None, None], align=["r"] * 5)
    rhos = ds.rho.values
    lo, hi, second = rhos.min(), rhos.max(), np.sort(rhos)[-2]
    n = ds.sizes["seed"]

    def spearman(var, sign):
        rs = np.array([spearmanr(rhos, ds[var].sel(seed=s).values)[0] for s in ds.seed.values])
        return [cell("{k}/{n}", k=int((rs == sign).sum()), n=n), per_seed(rs, "+.2g")]

    rows = [
        [f"{DOMAINS[1]}: adaptation falls with every step up in rho (Spearman = -1)"] + spearman("adaptation", -1),
        [f"{DOMAINS[1]}: adaptation, rho = {hi:g} − rho = {lo:g} (< 0)",
         paired(ds.adaptation.sel(rho=hi).values - ds.adaptation.sel(rho=lo).values, holds="<"),
         per_seed(ds.adaptation.sel(rho=hi).values - ds.adaptation.sel(rho=lo).values)],
        [f"{DOMAINS[0]}: memory rises with every step up in rho (Spearman = +1)"] + spearman("memory", 1),
        [f"{DOMAINS[0]}: memory, rho = {hi:g} − rho = {lo:g} (> 0)",
         paired(ds.memory.sel(rho=hi).values - ds.memory.sel(rho=lo).values, holds=">"),
         per_seed(ds.memory.sel(rho=hi).values - ds.memory.sel(rho=lo).values)],
        [f"{DOMAINS[0]}: memory, rho = {hi:g} − rho = {second:g} (> 0)",
         paired(ds.memory.sel(rho=hi).values - ds.memory.sel(rho=second).values, holds=">"),
         per_seed(ds.memory.sel(rho=hi).values - ds.memory.sel(rho=second).values)],
        [f"{DOMAINS[0]} before the switch, rho = {hi:g} − rho = {lo:g} (> 0)",
         paired(before.sel(rho=hi).values - before.sel(rho=lo).values, holds=">"),
         per_seed(before.sel(rho=hi).values - before.sel(rho=lo).values)],
    ]
    claims = Table(f"{NAME}/claims", ["claim", "seeds that agree (mean ± sd of the difference)",
                                      "per seed"], rows, align=["l", "r", "l"])
    return [summary, claims]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
