"""Paper 002 (Chen, Pehlevan & Chklovskii), Section VI-B: non-stationary input, Fig. 6.

Input: the stationary stream of Section VI-A (64 dims, eigenvalues
``{6, 5, 4, 2}`` + 60 uniform in ``[0, 0.2]``, random eigenvectors) whose
covariance eigenvalues are multiplied by 2 from step 1000 and restored from
step 6000 (:class:`neurosim.streams.SwitchingStream` with
``PAPER002_SWITCHES``).  One network with forgetting per regularizer (Eqs.
26, 28, 30), ``k = 4`` outputs, ``eta = 0.1``, and ``alpha`` chosen for the
*original* statistics so that the top three modes are soft-thresholded by 2.

Choice of the forgetting factor (not given in the paper): the rules decay
``mu`` by ``beta^2`` per step, i.e. the cost (Eqs. 25, 27, 29) weights sample
``t`` by ``beta^{2(T-t)}``, so the memory of the learning rates is
``1 / (1 - beta^2)`` steps.  We take ``MEMORY = 200`` steps
(``beta = sqrt(1 - 1/200) = 0.99750``; the paper's "time scale"
``-1/ln beta`` is 400 steps): short compared with the 5000-step middle phase
and the 1000-step window of the figure, long enough to average the noise of
the learning rules.  The script also runs every regularizer without
forgetting (``beta = 1``) for comparison.

Figure: eigenvalues of ``(1/T0) X^T X`` and ``(1/T0) Y^T Y`` over the sliding
window of the last ``T0 = 1000`` steps (``min(T, T0)`` before step 1000)
against ``T``.  Summary: the number of output eigenvalues above
``POWER_THRESHOLD = 0.1`` (output variance along an output principal axis)
in the last ``T0`` steps of each phase (windows ending at ``T = 1000, 6000,
steps``).  Expected (paper): TY 3, 4, 3; XY and YY 3, 3, 3.

Deviation from the paper: the Jacobi dynamics are run to convergence
(``tol = 1e-10``, at most 3000 iterations, zero start).

Outputs: ``sm_fig6_nonstationary.nc`` (xarray/h5netcdf),
``fig6_nonstationary.png`` (with forgetting), ``fig6_no_forgetting.png``
(``beta = 1``).
"""

from __future__ import annotations

import pathlib

import numpy as np

from neurosim._validation import check_int
from neurosim.models.similarity_matching.online_experiments import (
    K,
    REGULARIZER_TITLES,
    experiment_attrs,
    shrinkage_network,
    stationary_input,
)

NAME = "sm_fig6_nonstationary"
DESCRIPTION = "Chen, Pehlevan & Chklovskii (paper 002) Section VI-B: TY/XY/YY networks with forgetting on input whose eigenvalues double at step 1000 and return at 6000 (Fig. 6)"
DEFAULT_STEPS = 12_000
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1500}

#: Memory of the learning rates, ``1 / (1 - beta^2)`` steps.
MEMORY = 200.0
BETA = float(np.sqrt(1.0 - 1.0 / MEMORY))
#: Sliding window of the figure (paper: T0 = 1000).
T0 = 1000
#: Spacing of the evaluated window ends.
STRIDE = 20
#: An output eigenvalue above this counts as an active output.
POWER_THRESHOLD = 0.1


def window_covariances(Z: np.ndarray, ends: np.ndarray, T0: int = T0) -> np.ndarray:
    """``(1/w) sum_{t in [T - w, T)} z_t z_t^T`` with ``w = min(T, T0)`` for every ``T`` in ``ends``.

    ``ends`` must be sorted and multiples of a common stride that divides ``T0``.
    """
    d = Z.shape[1]
    bounds = np.unique(np.concatenate([[0], ends, np.maximum(ends - T0, 0)]))
    cum = np.zeros((bounds.size, d, d))
    for i in range(1, bounds.size):
        seg = Z[bounds[i - 1]:bounds[i]]
        cum[i] = cum[i - 1] + seg.T @ seg
    idx = {int(b): i for i, b in enumerate(bounds)}
    out = np.empty((ends.size, d, d))
    for j, T in enumerate(ends):
        lo = max(int(T) - T0, 0)
        out[j] = (cum[idx[int(T)]] - cum[idx[lo]]) / (int(T) - lo)
    return out


def phase_ends(stream, steps: int) -> np.ndarray:
    """Ends of the phases: each switch step below ``steps``, then ``steps``."""
    return np.array([s for s, _ in stream.switches if 0 < s < steps] + [steps], dtype=np.int64)


def simulate(regularizer, lam, stream, steps, beta, seed=0, k=K):
    """Run one network on ``stream``; return outputs ``(steps, k)`` and ``alpha``."""
    c = shrinkage_network(stream, lam, regularizer, beta=beta, seed=seed, k=k)
    c.run(steps)
    return c.network.recorders["y"].to_dataset()["activity"].values[:, 0, :], c.alpha


def count_active(eigenvalues, threshold=POWER_THRESHOLD) -> np.ndarray:
    """Number of output eigenvalues above ``threshold`` (last axis)."""
    return np.sum(np.asarray(eigenvalues) > threshold, axis=-1)


#: the sweep parameters of this simulation and their default values (``neurosim sweep``)
GRID = {"regularizer": ["TY", "XY", "YY"], "beta": [BETA, 1.0]}


def _check_steps(steps) -> int:
    return DEFAULT_STEPS if steps is None else check_int("steps", steps, low=STRIDE)


def _ends(stream, steps):
    ends = np.arange(STRIDE, steps + 1, STRIDE, dtype=np.int64)
    if ends[-1] != steps:
        ends = np.append(ends, steps)
    pends = phase_ends(stream, steps)
    return np.unique(np.concatenate([ends, pends])), pends


def check_point(regularizer: str, beta: float, steps: int | None = None):
    """Refuse, before any run, a point :func:`point` would refuse (``neurosim sweep`` calls it for every point)."""
    from neurosim._validation import check_float
    from neurosim.models.similarity_matching import REGULARIZERS

    _check_steps(steps)
    if regularizer not in REGULARIZERS:
        raise ValueError(f"regularizer must be one of {list(REGULARIZERS)}; got {regularizer!r}")
    check_float("beta", beta, low=0.0, high=1.0, low_open=True)


def point(regularizer: str, beta: float, seed: int, steps: int | None = None):
    """One network of the figure: ``regularizer`` with forgetting factor ``beta`` on the switching input of ``seed``.

    Returns an :class:`xarray.Dataset` with ``output_eigenvalues`` (``T``,
    ``component``), the same at the phase ends with their offline targets
    (Eqs. 4, 7, 10 for each phase's population spectrum), ``active_outputs``
    per phase, ``input_eigenvalues`` and ``alpha``. This is the unit of
    ``neurosim sweep sm_fig6_nonstationary`` (see :class:`neurosim.Sweep`).
    """
    import xarray as xr

    from neurosim.models.similarity_matching import offline_output_eigenvalues
    from neurosim.streams import SwitchingStream

    check_point(regularizer, beta, steps)
    steps = _check_steps(steps)
    seed = check_int("seed", seed, low=0)
    lam, stationary = stationary_input(seed)
    stream = SwitchingStream(stationary)
    ends, pends = _ends(stream, steps)
    X = stream.block(0, steps, 1)[:, 0, :]
    x_eig = np.clip(np.linalg.eigvalsh(window_covariances(X, ends))[:, ::-1], 0.0, None)
    y, alpha = simulate(regularizer, lam, stream, steps, float(beta), seed=seed)
    y_eig = np.linalg.eigvalsh(window_covariances(y, ends))[:, ::-1]
    phase_eig = y_eig[np.searchsorted(ends, pends)]
    scales = np.array([stream.scale_at(int(T) - 1) for T in pends])
    targets = np.stack([offline_output_eigenvalues(sc * lam, K, regularizer, alpha) for sc in scales])
    return xr.Dataset(
        {
            "output_eigenvalues": (("T", "component"), y_eig),
            "input_eigenvalues": (("T", "input_component"), x_eig),
            "phase_output_eigenvalues": (("phase", "component"), phase_eig),
            "phase_target_eigenvalues": (("phase", "component"), targets),
            "active_outputs": ("phase", count_active(phase_eig)),
            "phase_end": ("phase", pends),
            "phase_scale": ("phase", scales),
            "population_eigenvalues": ("input_component", lam),
            "alpha": alpha,
        },
        coords={"T": ends, "component": np.arange(1, K + 1), "phase": np.arange(pends.size),
                "input_component": np.arange(1, lam.size + 1)},
    )


def _attrs(steps, seed, n):
    from neurosim.streams import SwitchingStream

    switches = SwitchingStream(stationary_input(seed)[1]).switches
    return {
        **experiment_attrs(NAME, steps, seed, n),
        "memory_steps": MEMORY, "beta_forgetting": BETA, "window_T0": T0, "stride": STRIDE,
        "power_threshold": POWER_THRESHOLD,
        "switch_steps": np.array([sw for sw, _ in switches]),
        "switch_scales": np.array([c for _, c in switches]),
        "output_eigenvalues": "eigenvalues of (1/w) Y^T Y over the last w = min(T, T0) steps, descending",
        "input_eigenvalues": "eigenvalues of (1/w) X^T X over the same window",
        "active_outputs": "number of phase_output_eigenvalues above power_threshold",
        "phase_output_eigenvalues": "output_eigenvalues at T = phase_end (the last T0 steps of each phase)",
        "phase_target_eigenvalues": "offline optimum (Eqs. 4, 7, 10) of the population spectrum of each phase",
    }


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, resume=False) -> dict[str, pathlib.Path]:
    """Run the switching-input experiment and write data and Fig. 6 to ``out``.

    The six networks (3 regularizers x 2 forgetting factors) are the points
    of a :class:`neurosim.Sweep` over :data:`GRID` at one seed; ``neurosim
    sweep sm_fig6_nonstationary --seeds 0-7`` runs the same over many seeds.

    Parameters
    ----------
    steps : int, optional
        Total number of steps (default ``DEFAULT_STEPS`` = 12000; the switches
        are at 1000 and 6000, so runs shorter than 6000 steps only see the
        first switch).
    out : str or path
        Output folder (created).
    seed : int
        Seed of the spectrum, eigenvectors, samples and initial weights.
    progress : bool
        Print progress lines.
    resume : bool
        Run only the networks (regularizer x forgetting factor) that ``out/runs``
        does not hold yet, left by a call killed before it ended; without, clear
        it first (:func:`~neurosim.simulations._harness.runs_folder`).

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``fig6``, ``fig6_no_forgetting``.
    """
    from neurosim.simulations._harness import prepare, pyplot, report_written, run_grid, save_figure, write_dataset

    steps, seed, out, say = prepare(NAME, steps, DEFAULT_STEPS, STRIDE, out, seed, progress)
    plt = pyplot()

    runs = run_grid(NAME, point, GRID, seed, steps, out, resume)
    regs, betas = list(runs.regularizer.values), list(runs.beta.values)
    first = runs.isel(regularizer=0, beta=0)
    ends, pends = runs["T"].values, first.phase_end.values.astype(np.int64)
    lam = first.population_eigenvalues.values
    counts = runs.active_outputs.values.astype(np.int64)
    for reg in regs:
        for beta in betas:
            r = runs.sel(regularizer=reg, beta=beta)
            say(f"{reg} beta={beta:.5f} ({float(r.wall_seconds):.1f} s): active outputs per phase "
                f"{r.active_outputs.values.astype(int).tolist()}; "
                + "; ".join(f"T={T}: {np.round(r.phase_output_eigenvalues.values[q], 3).tolist()} "
                            f"(offline {np.round(r.phase_target_eigenvalues.values[q], 3).tolist()})"
                            for q, T in enumerate(pends)))

    ds = runs[["output_eigenvalues", "phase_output_eigenvalues", "alpha"]].transpose("regularizer", "beta", ...)
    ds = ds.assign(
        input_eigenvalues=first.input_eigenvalues,
        phase_target_eigenvalues=runs.phase_target_eigenvalues.isel(beta=0, drop=True),
        active_outputs=(("regularizer", "beta", "phase"), counts),
        phase_end=("phase", pends), phase_scale=first.phase_scale,
        population_eigenvalues=first.population_eigenvalues,
        alpha=runs.alpha.isel(beta=0, drop=True),
        run_seconds=runs.wall_seconds,
    )
    ds.attrs = _attrs(steps, seed, int(lam.size))
    paths = write_dataset(ds, out, NAME)

    x_eig, y_eig = ds.input_eigenvalues.values, ds.output_eigenvalues.values
    from neurosim.streams import SwitchingStream

    switches = SwitchingStream(stationary_input(seed)[1]).switches
    for j, (key, fname) in enumerate((("fig6", "fig6_nonstationary.png"), ("fig6_no_forgetting", "fig6_no_forgetting.png"))):
        fig, axes = plt.subplots(1, 3, figsize=(12.0, 4.4), sharey=True)
        for i, (ax, reg) in enumerate(zip(axes, regs)):
            for c in range(K):
                ax.plot(ends, x_eig[:, c], "-", color="tab:blue", lw=1.0,
                        label=r"top 4 eig. of $\frac{1}{T_0}X^\top X$" if c == 0 else None)
                ax.plot(ends, y_eig[i, j, :, c], "-", color="tab:red", lw=1.4,
                        label=r"eig. of $\frac{1}{T_0}Y^\top Y$" if c == 0 else None)
            for sw, _ in switches:
                if sw < steps:
                    ax.axvline(sw, color="0.6", ls="--", lw=0.8)
            ax.axhline(POWER_THRESHOLD, color="0.3", ls=":", lw=0.8)
            ax.set_xlabel("T (iterations)")
            ax.set_title(f"{REGULARIZER_TITLES[reg]}: active {counts[i, j].tolist()}", fontsize=10)
        axes[0].set_ylabel(f"eigenvalue (window T0={T0})")
        axes[0].legend(fontsize=7, loc="upper right")
        beta = betas[j]
        mem = f"memory 1/(1-beta^2) = {MEMORY:g} steps" if beta < 1 else "no forgetting"
        fig.suptitle(f"Fig. 6: eigenvalues x2 at T=1000, back at T=6000; beta={beta:.5f} ({mem}); "
                     f"active = outputs with eigenvalue > {POWER_THRESHOLD:g} at the end of each phase", fontsize=9)
        fig.tight_layout()
        paths[key] = out / fname
        save_figure(fig, paths[key])
    return report_written(say, paths)


def plot_sweep(ds, out) -> dict[str, pathlib.Path]:
    """Figure of a sweep over seeds (``neurosim sweep sm_fig6_nonstationary --seeds 0-7``).

    Top row: the output eigenvalues over ``T``, median over seeds with the
    10-90 % band, one panel per regularizer (with forgetting, first ``beta``).
    Bottom row: the active outputs at the end of each phase, every seed as a
    dot and the mean as a bar, for each forgetting factor.
    """
    from neurosim.plot import band
    from neurosim.simulations._harness import pyplot, save_figure

    plt = pyplot()

    out = pathlib.Path(out)
    regs, betas = list(ds.regularizer.values), list(ds.beta.values)
    fig, axes = plt.subplots(2, len(regs), figsize=(4.0 * len(regs), 6.4), squeeze=False, sharey="row")
    T = ds["T"].values
    for i, reg in enumerate(regs):
        ax = axes[0, i]
        eig = ds.output_eigenvalues.sel(regularizer=reg).isel(beta=0)
        for c in range(eig.sizes["component"]):
            band(ax, T, eig.isel(component=c).transpose("seed", "T").values, color="tab:red")
        ax.axhline(POWER_THRESHOLD, color="0.3", ls=":", lw=0.8)
        ax.set_title(f"{REGULARIZER_TITLES.get(reg, reg)}, beta={betas[0]:.5f}", fontsize=9)
        ax.set_xlabel("T (iterations)")
        ax = axes[1, i]
        phases = ds.phase.values
        width = 0.8 / len(betas)
        for j, beta in enumerate(betas):
            act = ds.active_outputs.sel(regularizer=reg, beta=beta).transpose("phase", "seed").values
            x = phases + (j - (len(betas) - 1) / 2) * width
            ax.bar(x, np.nanmean(act, axis=1), width=width * 0.9, alpha=0.4, label=f"beta={beta:.5f}")
            for q in range(act.shape[0]):
                ax.plot(np.full(act.shape[1], x[q]), act[q], "k.", ms=3)
        ax.set_xticks(phases, [f"phase {q + 1}" for q in phases])
        ax.set_ylabel("active outputs")
    axes[0, 0].set_ylabel("output eigenvalue (median, 10-90 %)")
    axes[1, 0].legend(fontsize=7)
    fig.suptitle(f"Fig. 6 over {ds.sizes['seed']} seeds (paper: TY 3, 4, 3; XY and YY 3, 3, 3 active outputs)",
                 fontsize=9)
    fig.tight_layout()
    path = out / "fig6_sweep.png"
    save_figure(fig, path)
    return {"figure": path}


#: the figures of a run (seed 0's in a reproduction) that the report shows (``neurosim tables`` copies them)
REPORT_FIGURES = {"fig6_nonstationary.png": "paper002_fig6_nonstationary.png",
                  "fig6_no_forgetting.png": "paper002_fig6_no_forgetting.png"}
#: the paper's active outputs at the end of the three phases, with forgetting
PAPER_ACTIVE = {"TY": (3, 4, 3), "XY": (3, 3, 3), "YY": (3, 3, 3)}
#: the paper's phases (the report's table has a column for each)
N_PHASES = 3


def tables(ds) -> list:
    """The report's table (:mod:`neurosim.report_tables`) from the seeds' datasets (joined along ``seed``).

    ``active``: per regularizer and forgetting factor, the active outputs
    at the end of each phase on every seed, the seeds that give the paper's
    counts (:data:`PAPER_ACTIVE`), and the fourth output's window
    eigenvalue at the end of each phase (mean ± sd over seeds).
    """
    from neurosim.report_tables import Table, cell, mean_sd

    n = ds.sizes["seed"]
    rows = []
    for b in ds.beta.values:
        for r in ds.regularizer.values:
            act = ds.active_outputs.sel(regularizer=r, beta=b).transpose("seed", "phase").values
            paper = PAPER_ACTIVE.get(str(r))
            agree = None if paper is None else cell("{k}/{n}", k=int(sum(tuple(a) == paper for a in act)), n=n)
            fourth = ds.phase_output_eigenvalues.sel(regularizer=r, beta=b).isel(component=-1)
            # one column per phase of the paper, empty where a shortened run ends before it: the headings do not
            # depend on the run's length (the quick reproduction's tables are checked against the report's)
            ends = [mean_sd(fourth.sel(phase=p).values) for p in ds.phase.values][:N_PHASES]
            rows.append([str(r), f"{float(b):.5f}", " / ".join(", ".join(str(int(x)) for x in a) for a in act),
                         agree] + ends + [None] * (N_PHASES - len(ends)))
    return [Table(f"{NAME}/active", ["reg", "beta", "active per phase (per seed)",
                                     "seeds with the paper's counts (3, 4, 3 for TY, 3, 3, 3 for XY and YY)"]
                  + [f"4th output, end of phase {q + 1}" for q in range(N_PHASES)], rows,
                  align=["l", "l", "l"] + ["r"] * (1 + N_PHASES))]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
