"""Paper 002 (Chen, Pehlevan & Chklovskii), Section VI-A: stationary input, Figs. 4 and 5.

Input: ``n = 64`` dimensional zero-mean Gaussian stream whose covariance has
eigenvalues ``{6, 5, 4, 2}`` plus 60 values uniform in ``[0, 0.2]``
(:func:`neurosim.streams.paper002_spectrum`) and Haar-random orthonormal
eigenvectors.  One network per regularizer -- scale-dependent ``TY``
(Eq. 19), input-output ``XY`` (Eq. 21), squared-output ``YY`` (Eq. 24) --
with ``k = 4`` output neurons (the paper's Fig. 4 shows four output
eigenvalues), ``eta = 0.1`` and ``alpha`` chosen from the *population*
spectrum so that the top three modes are soft-thresholded by 2
(:func:`~neurosim.models.similarity_matching.alpha_for_shrinkage`); the
fourth mode (eigenvalue 2) then lies exactly at the threshold and its
offline output is 0.

* **Fig. 4**: eigenvalues of the *cumulative* output covariance
  ``(1/T) Y^T Y`` (all steps ``1..T``) against ``T``, with the paper's blue
  lines (top four eigenvalues of ``(1/T) X^T X`` minus 2) and the exact
  offline optimum of each regularizer for the same data
  (:func:`~neurosim.models.similarity_matching.offline_output_eigenvalues`
  of the spectrum of ``(1/T) X^T X``).
* **Fig. 5**: eigenvalue error (sum of squared differences between the
  spectrum of ``(1/T) Y^T Y`` and that offline optimum,
  :func:`neurosim.metrics.eigenvalue_error`) and subspace error between the
  row space of the network's filter ``(I + W^YY)^{-1} W^YX`` and the top-``p``
  principal subspace of ``(1/T) X X^T`` (:func:`neurosim.metrics.subspace_error`,
  ``p`` = number of modes the offline optimum transmits) against ``T``.

Deviation from the paper: the Jacobi dynamics (Eq. 17, ``eta = 0.1``) are
iterated to convergence (``tol = 1e-10``, at most 3000 iterations, started
from zero) -- the paper says "iterate until convergence" but gives no
stopping rule; a fixed 30 iterations leaves ``0.9^30 ~ 4 %`` of the
transient and biases the outputs low.

Outputs: ``sm_fig4_fig5_stationary.nc`` (xarray/h5netcdf),
``fig4_eigenvalues.png``, ``fig5_errors.png``.
"""

from __future__ import annotations

import pathlib

import numpy as np

from neurosim._validation import check_int
from neurosim.models.similarity_matching.online_experiments import (
    ETA,
    K,
    MAX_ITER,
    REGULARIZER_TITLES,
    SHRINKAGE,
    TOL,
    experiment_attrs,
    shrinkage_network,
    stationary_input,
)

NAME = "sm_fig4_fig5_stationary"
DESCRIPTION = "Chen, Pehlevan & Chklovskii (paper 002) Section VI-A: online TY/XY/YY networks on stationary 64-dim input, Fig. 4 eigenvalues and Fig. 5 errors vs T"
DEFAULT_STEPS = 100_000
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1500}

#: Number of log-spaced checkpoints at which the filter and errors are evaluated.
N_CHECKPOINTS = 80
#: First checkpoint.
T_MIN = 10
#: An output counts as "on" in the subspace error when its filter singular
#: value exceeds this fraction of the largest (output variance > 1 % of the top).
SUBSPACE_RTOL = 0.1


def checkpoints(steps: int, n: int = N_CHECKPOINTS, t_min: int = T_MIN) -> np.ndarray:
    """Log-spaced integer checkpoints ``t_min .. steps`` (always including ``steps``)."""
    t_min = min(t_min, steps)
    return np.unique(np.round(np.logspace(np.log10(t_min), np.log10(steps), n)).astype(np.int64))


def cumulative_covariances(Z: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """``(1/T) sum_{t<T} z_t z_t^T`` for every ``T`` in ``ts`` (``Z`` is ``(steps, d)``)."""
    out = np.empty((ts.size, Z.shape[1], Z.shape[1]))
    acc = np.zeros((Z.shape[1], Z.shape[1]))
    prev = 0
    for i, T in enumerate(ts):
        seg = Z[prev:T]
        acc += seg.T @ seg
        prev = T
        out[i] = acc / T
    return out


def simulate(regularizer, lam, stream, steps, ts, seed=0, k=K, eta=ETA, tol=TOL, max_iter=MAX_ITER):
    """Run one network, returning outputs ``(steps, k)``, filters at ``ts`` and ``alpha``."""
    c = shrinkage_network(stream, lam, regularizer, seed=seed, k=k, eta=eta, tol=tol, max_iter=max_iter)
    filters = np.empty((ts.size, k, stream.dim))
    done = 0
    for i, T in enumerate(ts):
        c.run(int(T - done))
        done = int(T)
        filters[i] = c.filter()
    y = c.network.recorders["y"].to_dataset()["activity"].values[:, 0, :]
    return y, filters, c.alpha


def analyse(y, filters, X_cov, ts, regularizer, alpha, k=K):
    """Output/target eigenvalues, eigenvalue error and subspace errors at ``ts``."""
    from neurosim.metrics import eigenvalue_error, principal_subspace, subspace_error
    from neurosim.models.similarity_matching import offline_output_eigenvalues

    Y_cov = cumulative_covariances(y, ts)
    out_eig = np.linalg.eigvalsh(Y_cov)[:, ::-1]
    in_eig = np.clip(np.linalg.eigvalsh(X_cov)[:, ::-1], 0.0, None)
    target = offline_output_eigenvalues(in_eig, k, regularizer, alpha)
    eig_err = np.array([eigenvalue_error(Y_cov[i], target[i], kind="covariance") for i in range(ts.size)])
    sub_err = np.empty(ts.size)
    sub_err_p = np.empty(ts.size)
    for i in range(ts.size):
        p = max(1, int(np.sum(target[i] > 0)))
        U = principal_subspace(X_cov[i], p)
        sub_err[i] = subspace_error(filters[i], U, rtol=SUBSPACE_RTOL)
        sub_err_p[i] = subspace_error(filters[i], U, rank=p)
    return out_eig, target, eig_err, sub_err, sub_err_p


#: the sweep parameters of this simulation and their default values (``neurosim sweep``)
GRID = {"regularizer": ["TY", "XY", "YY"]}


def check_point(regularizer: str, steps: int | None = None):
    """Refuse, before any run, a point :func:`point` would refuse."""
    from neurosim.models.similarity_matching import REGULARIZERS

    if steps is not None:
        check_int("steps", steps, low=2)
    if regularizer not in REGULARIZERS:
        raise ValueError(f"regularizer must be one of {list(REGULARIZERS)}; got {regularizer!r}")


def point(regularizer: str, seed: int, steps: int | None = None):
    """One network of Figs. 4-5: ``regularizer`` on the stationary input of ``seed``, analysed at the checkpoints.

    Returns an :class:`xarray.Dataset`: output and target eigenvalues and
    the errors against ``T``, the tail spectrum, the input spectrum and
    ``alpha`` (the unit of ``neurosim sweep sm_fig4_fig5_stationary``).
    """
    import xarray as xr

    check_point(regularizer, steps)
    steps = DEFAULT_STEPS if steps is None else int(steps)
    seed = check_int("seed", seed, low=0)
    lam, stream = stationary_input(seed)
    ts = checkpoints(steps)
    X = stream.block(0, steps, 1)[:, 0, :]
    X_cov = cumulative_covariances(X, ts)
    y, filters, alpha = simulate(regularizer, lam, stream, steps, ts, seed=seed)
    out_eig, target, eig_err, sub_err, sub_err_p = analyse(y, filters, X_cov, ts, regularizer, alpha)
    tail = y[-min(5000, steps // 2):]
    return xr.Dataset(
        {
            "output_eigenvalues": (("T", "component"), out_eig),
            "target_eigenvalues": (("T", "component"), target),
            "eigenvalue_error": ("T", eig_err),
            "subspace_error": ("T", sub_err),
            "subspace_error_rank_p": ("T", sub_err_p),
            "tail_output_eigenvalues": ("component", np.linalg.eigvalsh(tail.T @ tail / len(tail))[::-1]),
            "input_eigenvalues": (("T", "input_component"), np.clip(np.linalg.eigvalsh(X_cov)[:, ::-1], 0.0, None)),
            "population_eigenvalues": ("input_component", lam),
            "alpha": alpha,
        },
        coords={"T": ts, "component": np.arange(1, K + 1), "input_component": np.arange(1, lam.size + 1)},
    )


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False) -> dict[str, pathlib.Path]:
    """Run the three stationary-input networks and write data and Figs. 4-5 to ``out``.

    The three networks are the points of a :class:`neurosim.Sweep` over
    :data:`GRID` at one seed (``neurosim sweep sm_fig4_fig5_stationary
    --seeds 0-7`` runs many seeds).

    Parameters
    ----------
    steps : int, optional
        Number of input samples ``T`` (default ``DEFAULT_STEPS``).
    out : str or path
        Output folder (created).
    seed : int
        Seed of the input spectrum (noise eigenvalues), eigenvectors, samples
        and initial weights.
    progress : bool
        Print progress lines.
    resume : bool
        Keep the regularizers' networks already finished in ``out/runs`` (by a call
        killed before it ended) and run only the others; without, start afresh
        (:func:`~neurosim.simulations._harness.runs_folder`).

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``fig4``, ``fig5``.
    """
    from neurosim.simulations._harness import prepare, pyplot, run_grid, save_figure, save_final_figure, write_dataset

    steps, seed, out, say = prepare(NAME, steps, DEFAULT_STEPS, 2, out, seed, progress)
    plt = pyplot()
    runs = run_grid(NAME, point, GRID, seed, steps, out, resume)
    regs = list(runs.regularizer.values)
    ts = runs["T"].values
    first = runs.isel(regularizer=0)
    in_eig, lam = first.input_eigenvalues.values, first.population_eigenvalues.values
    for reg in regs:
        r = runs.sel(regularizer=reg)
        say(f"{reg}: alpha={float(r.alpha):.5g}, {steps} steps in {float(r.wall_seconds):.1f} s; "
            f"(1/T) Y^T Y eigenvalues {np.round(r.output_eigenvalues.values[-1], 3)} vs offline "
            f"{np.round(r.target_eigenvalues.values[-1], 3)}; eigenvalue error {float(r.eigenvalue_error[0]):.3g} -> "
            f"{float(r.eigenvalue_error[-1]):.3g}, subspace error {float(r.subspace_error[0]):.3g} -> "
            f"{float(r.subspace_error[-1]):.3g}")

    ds = runs[["output_eigenvalues", "target_eigenvalues", "eigenvalue_error", "subspace_error",
               "subspace_error_rank_p", "tail_output_eigenvalues", "alpha"]]
    ds = ds.assign(input_eigenvalues=first.input_eigenvalues, population_eigenvalues=first.population_eigenvalues,
                   run_seconds=runs.wall_seconds)
    ds.attrs = {
        **experiment_attrs(NAME, steps, seed, int(lam.size)),
        "beta": 1.0,
        "subspace_rtol": SUBSPACE_RTOL,
        "output_eigenvalues": "eigenvalues of the cumulative (1/T) Y^T Y, descending",
        "target_eigenvalues": "offline optimum (Eqs. 4, 7, 10) of the spectrum of (1/T) X^T X, same alpha",
        "tail_output_eigenvalues": "eigenvalues of (1/T0) Y^T Y over the last min(5000, steps/2) steps",
        "subspace_error": "Pehlevan-Chklovskii projector error, outputs with filter singular value > rtol * max",
        "subspace_error_rank_p": "same with exactly the top p filter directions",
    }
    paths = write_dataset(ds, out, NAME)

    # ---------------- figures ---------------- #
    fig, axes = plt.subplots(1, 3, figsize=(12.0, 3.8), sharey=True)
    for ax, reg in zip(axes, regs):
        r = ds.sel(regularizer=reg)
        for j in range(K):
            ax.plot(ts, in_eig[:, j] - SHRINKAGE, "-", color="tab:blue", lw=1.2,
                    label=r"top 4 eig. of $\frac{1}{T}X^\top X$ $-$ 2" if j == 0 else None)
            ax.plot(ts, r.target_eigenvalues.values[:, j], ":", color="k", lw=1.0,
                    label="offline optimum" if j == 0 else None)
            ax.plot(ts, r.output_eigenvalues.values[:, j], "-", color="tab:red", lw=1.5,
                    label=r"eig. of $\frac{1}{T}Y^\top Y$" if j == 0 else None)
        ax.set_xscale("log")
        ax.set_xlabel("T (iterations)")
        ax.set_title(f"{REGULARIZER_TITLES[reg]}, $\\alpha$={float(r.alpha):.4g}", fontsize=10)
        ax.set_ylim(-0.6, 5.0)
    axes[0].set_ylabel("eigenvalue")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Fig. 4: stationary input (n=64, k={K}, eta={ETA}, converged Jacobi)", fontsize=10)
    fig.tight_layout()
    paths["fig4"] = save_figure(fig, out / "fig4_eigenvalues.png")

    colors = {"TY": "tab:blue", "XY": "tab:orange", "YY": "tab:green"}
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6))
    for reg in regs:
        axes[0].loglog(ts, ds.eigenvalue_error.sel(regularizer=reg), color=colors[reg], label=REGULARIZER_TITLES[reg])
        axes[1].loglog(ts, ds.subspace_error.sel(regularizer=reg), color=colors[reg], label=REGULARIZER_TITLES[reg])
    axes[0].set_title("eigenvalue error", fontsize=10)
    axes[0].set_ylabel("eigenvalue error")
    axes[1].set_ylabel("subspace error")
    axes[1].set_title(f"subspace error (outputs with filter s.v. > {SUBSPACE_RTOL:g} max)", fontsize=10)
    for ax in axes:
        ax.set_xlabel("T (iterations)")
        ax.legend(fontsize=8)
    fig.suptitle("Fig. 5", fontsize=10)
    fig.tight_layout()
    return save_final_figure(fig, out / "fig5_errors.png", "fig5", paths, say)


def plot_sweep(ds, out) -> dict[str, pathlib.Path]:
    """Fig. 5 over seeds (``neurosim sweep sm_fig4_fig5_stationary --seeds 0-7``): median and 10-90 % band."""
    from neurosim.plot import facet
    from neurosim.simulations._harness import pyplot, save_figure

    pyplot()
    out = pathlib.Path(out)
    paths = {}
    for var in ("eigenvalue_error", "subspace_error"):
        fig = facet(ds[var], x="T", hue="regularizer", over="seed")
        for ax in fig.axes:
            ax.set_xscale("log")
            ax.set_yscale("log")
        fig.suptitle(f"Fig. 5, {var.replace('_', ' ')} over {ds.sizes['seed']} seeds", fontsize=9)
        paths[var] = save_figure(fig, out / f"fig5_{var}_sweep.png")
    return paths


#: the figures of a run (seed 0's in a reproduction) that the report shows (``neurosim tables`` copies them)
REPORT_FIGURES = {"fig4_eigenvalues.png": "paper002_fig4_eigenvalues.png",
                  "fig5_errors.png": "paper002_fig5_errors.png"}


def tables(ds) -> list:
    """The report's table (:mod:`neurosim.report_tables`) from the seeds' datasets (joined along ``seed``).

    ``final``: per regularizer, the eigenvalues of the cumulative (1/T) Y^T Y
    at the last step, the offline optimum of the sample spectrum, and those
    of the last window, mean ± sd over seeds per component; the seeds whose
    fourth output stays below 0.1 in the last window; per seed, the
    eigenvalue error and both subspace errors at the last step.
    """
    from neurosim.report_tables import Table, cell, per_seed

    def comps(da):
        return cell(", ".join("{m%d:.3f} ± {s%d:.3f}" % (i, i) for i in range(da.shape[1])),
                    **{f"m{i}": float(da[:, i].mean()) for i in range(da.shape[1])},
                    **{f"s{i}": float(da[:, i].std(ddof=1)) if da.shape[0] > 1 else 0.0 for i in range(da.shape[1])})

    n = ds.sizes["seed"]
    last = ds.isel(T=-1)
    rows = []
    for r in ds.regularizer.values:
        one = last.sel(regularizer=r)
        tail = ds.tail_output_eigenvalues.sel(regularizer=r).transpose("seed", "component").values
        rows.append([str(r), comps(one.output_eigenvalues.transpose("seed", "component").values),
                     comps(one.target_eigenvalues.transpose("seed", "component").values), comps(tail),
                     cell("{k}/{n}", k=int((tail[:, -1] < 0.1).sum()), n=n),
                     per_seed(one.eigenvalue_error.values, ".1e"), per_seed(one.subspace_error.values, ".1e"),
                     per_seed(one.subspace_error_rank_p.values, ".1e")])
    return [Table(f"{NAME}/final", ["reg", "(1/T) Y^T Y at the last step", "offline optimum", "last window",
                                    "seeds with the 4th output < 0.1 (window)", "eigenvalue error (per seed)",
                                    "subspace error, outputs with filter > 0.1 max (per seed)",
                                    "subspace error, exactly p directions (per seed)"], rows,
                  align=["l", "r", "r", "r", "r", "l", "l", "l"])]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
