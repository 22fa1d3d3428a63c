"""Paper 002 (Chen, Pehlevan & Chklovskii), Section III offline: Table I, Figs. 1 and 2.

The normalized input spectrum has two degenerate levels, ``a`` (``n1``
signal modes) above ``b`` (``n2`` noise modes).  For each regularizer --
scale-dependent ``TY`` (Eq. 2), input-output ``XY`` (Eq. 5), squared-output
``YY`` (Eq. 8) -- we compute

* **Table I**: the range of ``alpha`` transmitting all signal and rejecting
  all noise, and the top output eigenvalue inside it.  The closed-form
  bounds of :func:`neurosim.models.similarity_matching.alpha_range` are
  checked against bounds found numerically by bisection on the *general*
  offline solution (Eqs. 4, 7, 9-10) of the full ``n``-dimensional spectrum,
  for a few example pairs ``(a, b)``.
* **Fig. 1**: over the 5050 pairs ``S = {(a, b) | a >= b}`` on the grid
  ``{0.01, ..., 1.00}`` (Appendix B), the fraction of pairs whose signal is
  transmitted against the fraction whose noise is transmitted, as ``alpha``
  sweeps ``[0, inf)``.  Also for the 4950 pairs with ``a > b``: the 100
  pairs with ``a == b`` cannot be separated by any method.
* **Fig. 2**: the phase diagram ``alpha`` vs ``b/a`` of the region where
  all signal and no noise is transmitted for ``XY`` and ``YY`` (both depend
  on ``b/a`` only; ``TY``'s range ``[b, a)`` depends on the absolute scale).

The paper does not state ``n1, n2``; we use ``n1 = 3, n2 = 61`` (the
``n = 64`` inputs and three transmitted modes of its Section VI experiments)
and report how the universal-``alpha`` result depends on that choice.

Outputs: ``sm_offline_table1.nc`` (xarray/h5netcdf), ``table1.md``,
``fig1_signal_vs_noise.png``, ``fig2_phase_diagram.png``.
"""

from __future__ import annotations

import pathlib

import numpy as np

from neurosim._validation import check_bool, check_int
from neurosim.simulations._harness import (output_folder, progress_printer, report_written, save_figure,
                                           write_dataset)

NAME = "sm_offline_table1"
DESCRIPTION = "Chen, Pehlevan & Chklovskii (paper 002) Section III offline: Table I alpha ranges, Fig. 1 signal/noise fractions, Fig. 2 phase diagram"
DEFAULT_STEPS = None  # offline: no simulation steps
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {}

#: Multiplicities of the signal and noise levels (not given in the paper).
N1, N2 = 3, 61
#: Other (n1, n2) used for the sensitivity check of the universal alpha.
SENSITIVITY = ((1, 1), (1, 63), (3, 3), (3, 61), (10, 54))
#: Example (a, b) pairs for the numerical Table I check.
EXAMPLES = ((1.0, 0.5), (0.6, 0.1), (0.3, 0.2), (1.0, 0.01), (0.05, 0.04))
#: Number of log-spaced alpha values in Fig. 1 (``steps`` overrides it).
N_ALPHA = 4001


def _full_spectrum(a, b, n1, n2):
    return np.concatenate([np.full(n1, a), np.full(n2, b)])


def _status(a, b, n1, n2, reg, alpha):
    """(all signal transmitted, any noise transmitted) from the general closed form."""
    from neurosim.models.similarity_matching import TRANSMIT_RTOL, offline_output_eigenvalues

    out = offline_output_eigenvalues(_full_spectrum(a, b, n1, n2), n1 + n2, reg, alpha)
    tol = TRANSMIT_RTOL * a
    return bool(np.all(out[:n1] > tol)), bool(np.any(out[n1:] > tol))


def _bisect(pred, lo, hi, iters=200):
    """Boundary of a monotone predicate with pred(lo) != pred(hi)."""
    p_lo = pred(lo)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if pred(mid) == p_lo:
            lo = mid
        else:
            hi = mid
    return lo, hi


def numeric_alpha_range(a, b, n1, n2, reg, alpha_max=1e6):
    """Table I range found by bisection on the general offline solution.

    Returns ``(lo, hi)`` with ``lo`` the smallest ``alpha`` rejecting the
    noise and ``hi`` the smallest ``alpha`` at which the signal is no longer
    fully transmitted (``inf`` if it is still transmitted at ``alpha_max``).
    ``alpha_max`` stays well below ``1 / (n1 TRANSMIT_RTOL)``, where the
    ``YY`` signal output ``a / (1 + alpha n1)``, positive for every finite
    ``alpha``, would fall under the numerical transmission tolerance.
    """
    def noise_rejected(al):
        return not _status(a, b, n1, n2, reg, al)[1]

    def signal_passes(al):
        return _status(a, b, n1, n2, reg, al)[0]

    if noise_rejected(0.0):
        lo = 0.0
    else:
        _, lo = _bisect(noise_rejected, 0.0, alpha_max)  # first alpha where noise is rejected
    if signal_passes(alpha_max):
        hi = np.inf
    else:
        _, hi = _bisect(signal_passes, 0.0, alpha_max)  # first alpha where signal stops
    return lo, hi


def _table1(n1, n2):
    from neurosim.models.similarity_matching import (
        REGULARIZERS,
        alpha_range,
        offline_output_eigenvalues,
        top_output_eigenvalue,
    )

    rows = []
    for a, b in EXAMPLES:
        for reg in REGULARIZERS:
            lo, hi = (float(v) for v in alpha_range(a, b, n1, n2, reg))
            nlo, nhi = numeric_alpha_range(a, b, n1, n2, reg)
            mid = np.sqrt(lo * hi) if np.isfinite(hi) else 10.0 * lo
            out = offline_output_eigenvalues(_full_spectrum(a, b, n1, n2), n1 + n2, reg, mid)
            rows.append(
                dict(
                    a=a, b=b, regularizer=reg, lo=lo, hi=hi, lo_numeric=nlo, hi_numeric=nhi, alpha_mid=mid,
                    top_formula=float(top_output_eigenvalue(a, b, n1, n2, reg, mid)), top_closed_form=float(out[0]),
                    noise_out=float(out[n1:].max()),
                )
            )
    return rows


#: Table I's columns in the report (``tables``)
TABLE1_COLUMNS = ["a", "b", "reg", "lo", "lo*", "hi", "hi*", "α_mid", "top (Table I)", "top (Eqs. 4/7/10)", "noise out"]
#: the dataset's variable behind each numeric column of Table I
TABLE1_VARIABLES = ["table_lo", "table_lo_numeric", "table_hi", "table_hi_numeric", "table_alpha_mid",
                    "table_top_formula", "table_top_closed_form", "table_noise_out"]


#: the figures of a run (seed 0's in a reproduction) that the report shows (``neurosim tables`` copies them)
REPORT_FIGURES = {"fig1_signal_vs_noise.png": "paper002_fig1_signal_vs_noise.png",
                  "fig2_phase_diagram.png": "paper002_fig2_phase_diagram.png"}


def tables(ds) -> list:
    """The report's Table I from the dataset (:mod:`neurosim.report_tables`).

    The computation is deterministic: with a ``seed`` dimension (one run per
    seed in a reproduction) every seed must give the same numbers, and the
    first seed's are shown.
    """
    from neurosim.report_tables import Table

    if "seed" in ds.dims:
        for s in range(1, ds.sizes["seed"]):
            for v in TABLE1_VARIABLES:
                if not np.array_equal(ds[v].isel(seed=s).values, ds[v].isel(seed=0).values, equal_nan=True):
                    raise ValueError(f"{NAME}: {v} differs between seeds {int(ds.seed[0])} and {int(ds.seed[s])}")
        ds = ds.isel(seed=0)
    rows = []
    for e in ds.example.values:
        for reg in ds.regularizer.values:
            rows.append([float(ds.example_a.sel(example=e)), float(ds.example_b.sel(example=e)), str(reg)]
                        + [float(ds[v].sel(example=e, regularizer=reg)) for v in TABLE1_VARIABLES])
    formats = ["g", "g", None, ".6g", ".6g", ".6g", ".6g", ".4g", ".6g", ".6g", ".3g"]
    return [Table(f"{NAME}/table1", TABLE1_COLUMNS, rows, formats, align=["l"] * len(TABLE1_COLUMNS))]


def _table1_markdown(ds, n1, n2) -> str:
    from neurosim.report_tables import render

    caption = (f"Table I reproduced for n1 = {n1}, n2 = {n2}. `lo`, `hi`: closed-form bounds (paper's Table I; "
               "the goal holds on [lo, hi)); `lo*`, `hi*`: bounds found by bisection on the general offline solution; "
               "top eigenvalue at alpha_mid (geometric mid-point, or 10 lo for YY) from Table I and from Eqs. 4/7/10.")
    return caption + "\n\n" + render(tables(ds)[0])


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True) -> dict[str, pathlib.Path]:
    """Compute Table I, Fig. 1 and Fig. 2 and write them to ``out``.

    Parameters
    ----------
    steps : int, optional
        Number of log-spaced ``alpha`` values (``1e-5 .. 1e5``) of the Fig. 1
        sweep; default ``N_ALPHA``.  (The computation is offline; there are
        no time steps.)
    out : str or path
        Output folder (created).
    seed : int
        Unused (deterministic computation); accepted for the common CLI.
    progress : bool
        Print progress lines.

    Returns
    -------
    dict of str to pathlib.Path
        ``dataset``, ``table``, ``fig1``, ``fig2``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import xarray as xr

    from neurosim.models.similarity_matching import (
        REGULARIZERS,
        alpha_range,
        pair_grid,
        transmission_curves,
        universal_alpha,
    )

    n_alpha = N_ALPHA if steps is None else check_int("steps", steps, low=2)
    check_int("seed", seed, low=0)
    say = progress_printer(NAME, check_bool("progress", progress))
    out = output_folder(out)
    n1, n2 = N1, N2

    # ---------------- Table I ---------------- #
    rows = _table1(n1, n2)
    say(f"Table I: {len(rows)} (a, b, regularizer) rows checked against bisection on the closed forms")

    # ---------------- Fig. 1 ---------------- #
    pair_sets = {"S": pair_grid(include_diagonal=True), "a>b": pair_grid(include_diagonal=False)}
    universal = {
        (reg, name): universal_alpha(a, b, n1, n2, reg) for reg in REGULARIZERS for name, (a, b) in pair_sets.items()
    }
    # log grid plus 0 and the exact best universal alphas (XY's window is only
    # ~1 % wide in alpha and would be missed by a coarse grid)
    extra = [al for al, _ in universal.values() if np.isfinite(al)]
    alphas = np.unique(np.concatenate([[0.0], np.logspace(-5, 5, n_alpha), extra]))
    sig = np.empty((len(REGULARIZERS), len(pair_sets), alphas.size))
    noi = np.empty_like(sig)
    goal = np.empty_like(sig)
    for i, reg in enumerate(REGULARIZERS):
        for j, (a, b) in enumerate(pair_sets.values()):
            c = transmission_curves(a, b, n1, n2, reg, alphas)
            sig[i, j], noi[i, j], goal[i, j] = c["signal"], c["noise"], c["goal"]
        say(f"Fig. 1 {reg}: best universal alpha {universal[(reg, 'S')][0]:.5g} -> "
            f"{universal[(reg, 'S')][1]:.4f} of S, {universal[(reg, 'a>b')][1]:.4f} of a>b")

    sens = np.array([[universal_alpha(*pair_sets["a>b"], m1, m2, reg)[1] for reg in REGULARIZERS] for m1, m2 in SENSITIVITY])

    # ---------------- Fig. 2 ---------------- #
    ratio = np.round(np.arange(0, 100) / 100.0, 2)  # b/a = 0, 0.01, ..., 0.99
    xy_lo, xy_hi = alpha_range(1.0, ratio, n1, n2, "XY")
    yy_lo, _ = alpha_range(1.0, ratio, n1, n2, "YY")

    # ---------------- dataset ---------------- #
    ex = np.arange(len(EXAMPLES))
    regs = list(REGULARIZERS)

    def tab(key):
        return (("example", "regularizer"), np.array([[r[key] for r in rows if (r["a"], r["b"]) == e] for e in EXAMPLES]))

    ds = xr.Dataset(
        {
            "signal_fraction": (("regularizer", "pair_set", "alpha"), sig),
            "noise_fraction": (("regularizer", "pair_set", "alpha"), noi),
            "goal_fraction": (("regularizer", "pair_set", "alpha"), goal),
            "universal_alpha": (("regularizer", "pair_set"), np.array([[universal[(r, s)][0] for s in pair_sets] for r in regs])),
            "universal_fraction": (("regularizer", "pair_set"), np.array([[universal[(r, s)][1] for s in pair_sets] for r in regs])),
            "xy_alpha_lo": ("ratio", xy_lo),
            "xy_alpha_hi": ("ratio", xy_hi),
            "yy_alpha_lo": ("ratio", yy_lo),
            "example_a": ("example", np.array([e[0] for e in EXAMPLES])),
            "example_b": ("example", np.array([e[1] for e in EXAMPLES])),
            "table_lo": tab("lo"),
            "table_hi": tab("hi"),
            "table_lo_numeric": tab("lo_numeric"),
            "table_hi_numeric": tab("hi_numeric"),
            "table_alpha_mid": tab("alpha_mid"),
            "table_top_formula": tab("top_formula"),
            "table_top_closed_form": tab("top_closed_form"),
            "table_noise_out": tab("noise_out"),
            "sensitivity_n1": ("case", np.array([c[0] for c in SENSITIVITY])),
            "sensitivity_n2": ("case", np.array([c[1] for c in SENSITIVITY])),
            "sensitivity_universal_fraction": (("case", "regularizer"), sens),
        },
        coords={"regularizer": regs, "pair_set": list(pair_sets), "alpha": alphas, "ratio": ratio, "example": ex,
                "case": np.arange(len(SENSITIVITY))},
        attrs={
            "simulation": NAME,
            "paper": "Chen, Pehlevan, Chklovskii - Self-calibrating neural networks for dimensionality reduction (paper 002)",
            "n1": n1,
            "n2": n2,
            "n_pairs_S": int(pair_sets["S"][0].size),
            "transmitted": "output eigenvalue > 1e-9 * a",
        },
    )
    paths = {**write_dataset(ds, out, NAME), "table": out / "table1.md"}
    paths["table"].write_text(_table1_markdown(ds, n1, n2))

    # ---------------- figures ---------------- #
    colors = {"TY": "tab:blue", "XY": "tab:orange", "YY": "tab:green"}
    labels = {"TY": r"scale-dependent $R_{TY}$", "XY": r"input-output $R_{XY}$", "YY": r"squared-output $R_{YY}$"}
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0))
    for i, reg in enumerate(regs):
        axes[0].plot(noi[i, 0], sig[i, 0], "-", color=colors[reg], label=labels[reg], lw=1.5)
        for j, (name, style) in enumerate((("S", "-"), ("a>b", "--"))):
            axes[1].plot(noi[i, j], sig[i, j], style, color=colors[reg], lw=1.5,
                         label=f"{reg}, {'all 5050 pairs' if name == 'S' else 'a > b (4950)'}")
    for ax in axes:
        ax.plot([0], [1], "k*", ms=10, zorder=5)
        ax.set_xlabel("fraction of (a, b) pairs with noise transmitted")
        ax.set_ylabel("fraction of pairs with all signal transmitted")
    axes[0].set_xlim(-0.02, 1.02)
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].set_title(f"Fig. 1: alpha from 0 to inf (n1={n1}, n2={n2})", fontsize=10)
    axes[0].legend(fontsize=8, loc="lower right")
    axes[1].set_xlim(-0.005, 0.1)
    axes[1].set_ylim(0.85, 1.005)
    axes[1].set_title("zoom near (0, 1)", fontsize=10)
    axes[1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    paths["fig1"] = out / "fig1_signal_vs_noise.png"
    save_figure(fig, paths["fig1"])

    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    top = 1e4
    floor = 1e-4
    ax.fill_between(ratio, np.maximum(xy_lo, floor), xy_hi, color=colors["XY"], alpha=0.8, label=labels["XY"], lw=0)
    ax.fill_between(ratio, np.maximum(yy_lo, floor), top, color=colors["YY"], alpha=0.35, label=labels["YY"], lw=0)
    # outline the XY band so that its overlap with the YY region stays visible
    ax.plot(ratio, np.maximum(xy_lo, floor), color="tab:red", lw=0.8)
    ax.plot(ratio, xy_hi, color="tab:red", lw=0.8)
    ax.plot(ratio, np.maximum(yy_lo, floor), color="darkgreen", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylim(floor, top)
    ax.set_xlim(0, 1)
    ax.set_xlabel("noise-to-signal ratio b/a")
    ax.set_ylabel(r"regularization coefficient $\alpha$")
    ax.set_title(f"Fig. 2: all signal, no noise (n1={n1}, n2={n2})", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    paths["fig2"] = out / "fig2_phase_diagram.png"
    save_figure(fig, paths["fig2"])
    return report_written(say, paths)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
