"""How far the paper's online ``e_j`` (Eq. 25) drifts from the exact one (Eq. 21) on natural-image patches (paper 003).

The supplement keeps ``e_j`` online, each mini-batch's term formed with the
dictionary *of that step*, an approximation of Eq. 21, which sums over all
past samples with the *current* dictionary. Two OSDL circuits
(:func:`neurosim.models.osdl.build_network`) learn from the same stream of
8x8 whitened patches, with the same codes at the start and ``e_form``
"online" or "exact", with full observations and with ``MISSING`` of the
pixels missing. Every ``EVAL_EVERY`` steps: the distance between the two
dictionaries (mean over atoms of ``1 - |cos|`` of matched atoms: the same
unit in both circuits) and each one's relative reconstruction error on
held-out patches.

Outputs: ``<out>/osdl_online_exact.nc`` and ``.png``.
"""

from __future__ import annotations

import pathlib

import numpy as np
import xarray as xr

from neurosim.simulations._osdl_common import SOLVER

NAME = "osdl_online_exact"
DESCRIPTION = "Szabo et al. 2011 (OSDL) supplement Eq. 25 vs Eq. 21: online and exact e_j on natural patches"
DEFAULT_STEPS = 300
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 6}
GRID = {"missing": [0.0, 0.5], "e_form": ["online", "exact"]}
PATCH, BATCH, N_COMPONENTS, KAPPA, N_TEST, EVAL_EVERY = 8, 32, 96, 0.15, 500, 10


def check_point(missing: float, e_form: str, steps: int | None = None):
    from neurosim._validation import check_choice, check_float, check_int

    check_float("missing", missing, low=0.0, high=1.0, high_open=True)
    check_choice("e_form", e_form, ("online", "exact"))
    if steps is not None:
        check_int("steps", steps, low=1)


def point(missing: float, e_form: str, seed: int, steps: int | None = None) -> xr.Dataset:
    """One circuit: its dictionary and held-out error every ``EVAL_EVERY`` steps."""
    from neurosim.data.images import TEST_IMAGES, TRAIN_IMAGES, ImagePatchStream, sample_patches
    from neurosim.models.osdl import build_network
    from neurosim.streams import BernoulliMaskStream

    check_point(missing, e_form, steps)
    steps = DEFAULT_STEPS if steps is None else steps
    stream = ImagePatchStream(PATCH, images=TRAIN_IMAGES, seed=seed)
    masks = BernoulliMaskStream(PATCH * PATCH, missing, seed=seed + 1) if missing > 0 else None
    circuit = build_network(stream, N_COMPONENTS, kappa=KAPPA, batch=BATCH, masks=masks, e_form=e_form, seed=seed,
                            solver=SOLVER)
    test = sample_patches(N_TEST, PATCH, seed=seed + 2, images=TEST_IMAGES)
    evals = list(range(EVAL_EVERY, steps + 1, EVAL_EVERY)) or [steps]
    W = np.zeros((len(evals), N_COMPONENTS, PATCH * PATCH))
    err = np.zeros(len(evals))
    done = 0
    for i, s in enumerate(evals):
        circuit.run(s - done)
        done = s
        W[i] = circuit.W
        r = test - circuit.reconstruct(test)
        err[i] = float(((r ** 2).sum(1) / (test ** 2).sum(1)).mean())
    return xr.Dataset({"dictionary": (("step", "unit", "pixel"), W), "rel_error": ("step", err)},
                      coords={"step": evals})


def atom_distance(W1: np.ndarray, W2: np.ndarray) -> np.ndarray:
    """Mean over units of ``1 - |cos(angle)|`` between the same unit's atoms (0: the same directions)."""
    n1 = np.linalg.norm(W1, axis=-1)
    n2 = np.linalg.norm(W2, axis=-1)
    cos = np.abs((W1 * W2).sum(-1)) / np.where((n1 > 0) & (n2 > 0), n1 * n2, 1.0)
    return (1.0 - cos).mean(axis=-1)


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False, n_seeds=None) -> dict[str, pathlib.Path]:
    """Run both forms with and without missing pixels on ``n_seeds`` seeds (default 3); write distance and errors.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``: held-out errors and the online-exact atom distance per seed, missing fraction and step;
        ``figure``: both over the mini-batches.
    """
    from neurosim.simulations._harness import mean_sd, pyplot, save_final_figure
    from neurosim.simulations._osdl_common import run_seeds, write_osdl_dataset

    runs, steps, seed, n_seeds, out, say = run_seeds(NAME, point, GRID, steps, DEFAULT_STEPS, 1, out, seed, progress,
                                                     resume, n_seeds)
    d = runs.dictionary.transpose("seed", "missing", "e_form", "step", "unit", "pixel")
    dist = xr.DataArray(atom_distance(d.sel(e_form="online").values, d.sel(e_form="exact").values),
                        dims=("seed", "missing", "step"),
                        coords={"seed": runs.seed, "missing": runs.missing, "step": runs.step})
    ds = xr.Dataset({"rel_error": runs.rel_error, "distance": dist})
    paths = write_osdl_dataset(ds, NAME, out, steps, seed, n_seeds, n_components=N_COMPONENTS, kappa=KAPPA,
                               batch=BATCH, patch=PATCH)
    for m in ds.missing.values:
        last = ds.isel(step=-1).sel(missing=m)
        say(f"missing {m:.0%} ({n_seeds} seeds, mean ± sd): 1 - |cos| online vs exact at step {steps}: "
            f"{mean_sd(last.distance, '.4f')}; held-out error online {mean_sd(last.rel_error.sel(e_form='online'), '.4f')}, "
            f"exact {mean_sd(last.rel_error.sel(e_form='exact'), '.4f')}, exact - online "
            f"{mean_sd(last.rel_error.sel(e_form='exact') - last.rel_error.sel(e_form='online'), '.4f')}")
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for i, m in enumerate(ds.missing.values):
        axes[0].plot(ds.step, ds.distance.sel(missing=m).mean("seed"), color=f"C{i}", label=f"{m:.0%} missing")
        for form, ls in (("online", "-"), ("exact", "--")):
            axes[1].plot(ds.step, ds.rel_error.sel(missing=m, e_form=form).mean("seed"), color=f"C{i}", ls=ls,
                         label=f"{form}, {m:.0%} missing")
    axes[0].set_title(f"mean over {n_seeds} seeds", fontsize=8)
    axes[0].set_ylabel("mean 1 - |cos| (online vs exact atoms)")
    axes[1].set_ylabel("held-out relative error")
    for ax in axes:
        ax.set_xlabel("mini-batch")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save_final_figure(fig, out / f"{NAME}.png", "figure", paths, say)


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": "paper003_online_exact.png"}


def exact_ahead_until(diff: np.ndarray, steps: np.ndarray) -> int:
    """The last evaluation step of the first run of evaluations where exact is ahead (``diff`` = exact − online < 0).

    0 when the exact form is not ahead at the first evaluation.
    """
    behind = np.flatnonzero(~(np.asarray(diff) < 0))
    last = behind[0] if behind.size else len(steps)
    return int(steps[last - 1]) if last > 0 else 0


def _masks(m: float) -> str:
    return "full" if m == 0 else f"{m:.0%} missing"


def tables(ds: xr.Dataset) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``summary``: per mask fraction, at the last evaluation: the online-exact
    atom distance and both forms' held-out errors (mean ± sd over seeds),
    exact − online paired seed by seed (seeds where the online form is
    ahead), and per seed the last mini-batch up to which the exact form is
    ahead at every evaluation from the first (:func:`exact_ahead_until`).
    ``claims``: the same seed by seed: distance with masks − without, the
    exact form ahead at the first evaluation, the online form ahead at the
    end, and ahead at every evaluation after the exact form's lead (the lead
    changes once).
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    last = ds.isel(step=-1)
    steps = ds.step.values
    n = ds.sizes["seed"]
    rows, claims = [], []
    for m in ds.missing.values:
        one = last.sel(missing=m)
        on, ex = one.rel_error.sel(e_form="online").values, one.rel_error.sel(e_form="exact").values
        diff = ds.rel_error.sel(missing=m, e_form="exact") - ds.rel_error.sel(missing=m, e_form="online")
        until = [exact_ahead_until(diff.sel(seed=s).values, steps) for s in ds.seed.values]
        rows.append([_masks(m), mean_sd(one.distance.values), mean_sd(on, ".4f"), mean_sd(ex, ".4f"),
                     paired(ex - on, "+.4f", holds=">"), per_seed(until, "d")])
        first = diff.isel(step=0).values
        once = [bool(u < steps[-1] and np.all(diff.sel(seed=s).values[steps > u] > 0))
                for s, u in zip(ds.seed.values, until)]
        claims += [[f"{_masks(m)}: the exact form ahead at the first evaluation (mini-batch {int(steps[0])})",
                    cell("{k}/{n}", k=int((first < 0).sum()), n=n), per_seed(first, "+.4f")],
                   [f"{_masks(m)}: the online form ahead at the end (exact − online > 0)",
                    paired(ex - on, "+.4f", ">"),
                    per_seed(ex - on, "+.4f")],
                   [f"{_masks(m)}: after the exact form's lead the online form is ahead at every evaluation",
                    cell("{k}/{n}", k=int(sum(once)), n=n), None]]
    if ds.sizes["missing"] > 1:
        lo, hi = ds.missing.values.min(), ds.missing.values.max()
        d = last.distance.sel(missing=hi).values - last.distance.sel(missing=lo).values
        claims.insert(0, [f"atom distance, {_masks(hi)} − {_masks(lo)} (> 0: more apart with masks)",
                          paired(d, holds=">"), per_seed(d)])
    summary = Table(f"{NAME}/summary", ["masks", "mean 1 - abs(cos) between the same unit's atoms",
                                        "held-out relative error, online", "exact",
                                        "exact − online (seeds where online is ahead)",
                                        "exact ahead until mini-batch (per seed)"], rows,
                    align=["l", "r", "r", "r", "r", "l"])
    claims = Table(f"{NAME}/claims", ["claim", "seeds that agree (mean ± sd)", "per seed"], claims,
                   align=["l", "r", "l"])
    return [summary, claims]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
