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
import time

import numpy as np

from neurosim._validation import check_bool, check_int
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


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True) -> dict[str, pathlib.Path]:
    """Run the switching-input experiment and write data and Fig. 6 to ``out``.

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

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``fig6``, ``fig6_no_forgetting``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import xarray as xr

    from neurosim.models.similarity_matching import REGULARIZERS, offline_output_eigenvalues
    from neurosim.streams import SwitchingStream

    steps = DEFAULT_STEPS if steps is None else check_int("steps", steps, low=STRIDE)
    seed = check_int("seed", seed, low=0)
    progress = check_bool("progress", progress)
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def say(msg):
        if progress:
            print(f"[{NAME}] {msg}", flush=True)

    lam, stationary = stationary_input(seed)
    stream = SwitchingStream(stationary)
    ends = np.arange(STRIDE, steps + 1, STRIDE, dtype=np.int64)
    if ends[-1] != steps:
        ends = np.append(ends, steps)
    pends = phase_ends(stream, steps)
    ends = np.unique(np.concatenate([ends, pends]))
    X = stream.block(0, steps, 1)[:, 0, :]
    x_eig = np.clip(np.linalg.eigvalsh(window_covariances(X, ends))[:, ::-1], 0.0, None)

    regs = list(REGULARIZERS)
    betas = [BETA, 1.0]
    y_eig = np.empty((len(regs), len(betas), ends.size, K))
    seconds = np.empty((len(regs), len(betas)))
    alphas = np.empty(len(regs))
    for i, reg in enumerate(regs):
        for j, beta in enumerate(betas):
            t0 = time.perf_counter()
            y, alphas[i] = simulate(reg, lam, stream, steps, beta, seed=seed)
            seconds[i, j] = time.perf_counter() - t0
            y_eig[i, j] = np.linalg.eigvalsh(window_covariances(y, ends))[:, ::-1]
    phase_idx = np.searchsorted(ends, pends)
    phase_eig = y_eig[:, :, phase_idx, :]  # (reg, beta, phase, component)
    counts = count_active(phase_eig)
    # offline targets at the phase ends, for the population spectrum of each phase
    scales = np.array([stream.scale_at(int(T) - 1) for T in pends])
    targets = np.stack([
        np.stack([offline_output_eigenvalues(s * lam, K, reg, alphas[i]) for s in scales]) for i, reg in enumerate(regs)
    ])
    for i, reg in enumerate(regs):
        for j, beta in enumerate(betas):
            say(f"{reg} beta={beta:.5f} ({seconds[i, j]:.1f} s): active outputs per phase {counts[i, j].tolist()}; "
                + "; ".join(f"T={T}: {np.round(phase_eig[i, j, q], 3).tolist()} (offline {np.round(targets[i, q], 3).tolist()})"
                            for q, T in enumerate(pends)))

    comp = np.arange(1, K + 1)
    ds = xr.Dataset(
        {
            "output_eigenvalues": (("regularizer", "beta", "T", "component"), y_eig),
            "input_eigenvalues": (("T", "input_component"), x_eig),
            "phase_output_eigenvalues": (("regularizer", "beta", "phase", "component"), phase_eig),
            "phase_target_eigenvalues": (("regularizer", "phase", "component"), targets),
            "active_outputs": (("regularizer", "beta", "phase"), counts),
            "phase_end": ("phase", pends),
            "phase_scale": ("phase", scales),
            "population_eigenvalues": ("input_component", lam),
            "alpha": ("regularizer", alphas),
            "run_seconds": (("regularizer", "beta"), seconds),
        },
        coords={"regularizer": regs, "beta": betas, "T": ends, "component": comp, "phase": np.arange(pends.size),
                "input_component": np.arange(1, lam.size + 1)},
        attrs={
            **experiment_attrs(NAME, steps, seed, int(lam.size)),
            "memory_steps": MEMORY, "beta_forgetting": BETA, "window_T0": T0, "stride": STRIDE,
            "power_threshold": POWER_THRESHOLD,
            "switch_steps": np.array([s for s, _ in stream.switches]),
            "switch_scales": np.array([c for _, c in stream.switches]),
            "output_eigenvalues": "eigenvalues of (1/w) Y^T Y over the last w = min(T, T0) steps, descending",
            "input_eigenvalues": "eigenvalues of (1/w) X^T X over the same window",
            "active_outputs": "number of phase_output_eigenvalues above power_threshold",
            "phase_output_eigenvalues": "output_eigenvalues at T = phase_end (the last T0 steps of each phase)",
            "phase_target_eigenvalues": "offline optimum (Eqs. 4, 7, 10) of the population spectrum of each phase",
        },
    )
    paths = {"dataset": out / f"{NAME}.nc"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")

    for j, (key, fname) in enumerate((("fig6", "fig6_nonstationary.png"), ("fig6_no_forgetting", "fig6_no_forgetting.png"))):
        fig, axes = plt.subplots(1, 3, figsize=(12.0, 3.8), sharey=True)
        for i, (ax, reg) in enumerate(zip(axes, regs)):
            for c in range(K):
                ax.plot(ends, x_eig[:, c], "-", color="tab:blue", lw=1.0,
                        label=r"top 4 eig. of $\frac{1}{T_0}X^\top X$" if c == 0 else None)
                ax.plot(ends, y_eig[i, j, :, c], "-", color="tab:red", lw=1.4,
                        label=r"eig. of $\frac{1}{T_0}Y^\top Y$" if c == 0 else None)
            for s, _ in stream.switches:
                if s < steps:
                    ax.axvline(s, color="0.6", ls="--", lw=0.8)
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
        fig.savefig(paths[key], dpi=80)
        plt.close(fig)
    say(f"wrote {', '.join(str(p) for p in paths.values())}")
    return paths


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
