"""Helpers shared by the paper-000 domain-shift reproductions (not a simulation itself).

The MNIST, classification and text scripts all train the circuit of
:mod:`neurosim.models.neurogenesis` on a two-domain stream and then score
the final dictionary on held-out samples with the circuit's own encoder
(the lasso with ``beta_c`` nonzeros of Alg. 1 step 4 / Alg. 2). The
functions here do exactly that and nothing more, so each script keeps only
its data and its figure.
"""

from __future__ import annotations

import pathlib
import warnings

import numpy as np

import neurosim as ns
from neurosim._validation import check_choice, check_int
from neurosim.coding import NORMALIZATIONS, lambda_for_count, normalized_atoms
from neurosim.models.neurogenesis import VARIANTS, build_network
from neurosim.simulations._harness import MIN_DPI, save_figure, seed_count

__all__ = ["check_run_arguments", "check_algorithms", "train", "encode", "pearson_accuracy", "sizes_from_log",
           "learn_all", "fig3_dataset", "write_fig3", "plot_fig3", "odl_at_size", "fig3_tables"]


def check_run_arguments(steps, default_steps: int, seed, n_seeds, default_seeds: int, normalize,
                        max_steps: int | None = None):
    """Check the arguments every domain-shift script takes, in the order the scripts have always checked them.

    Parameters
    ----------
    steps : int or None
        Mini-batches (per domain); ``default_steps`` when None, else in ``[1, max_steps]``.
    default_steps : int
    seed : int >= 0
        The first seed.
    n_seeds : int >= 1 or None
        Repetitions; ``default_seeds`` when None.
    default_seeds : int
    normalize : {"none", "unit", "center_unit"}
        The atoms codes are computed against (:data:`neurosim.coding.NORMALIZATIONS`).
    max_steps : int, optional
        No upper bound when None.

    Returns
    -------
    steps, seed, n_seeds : int
    normalize : str
    """
    steps = check_int("steps", default_steps if steps is None else steps, low=1, high=max_steps)
    seed = check_int("seed", seed, low=0)
    n_seeds = seed_count(n_seeds, default_seeds)
    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    return steps, seed, n_seeds, normalize


def check_algorithms(initial_sizes, default_sizes, variants) -> tuple[list[int], list[str]]:
    """The initial dictionary sizes (at least one, each >= 1) and the algorithms (of :data:`VARIANTS`) of a Fig. 3 run.

    Parameters
    ----------
    initial_sizes : sequence of int or None
        ``default_sizes`` when None.
    default_sizes : sequence of int
    variants : sequence of str or None
        Every algorithm of :data:`~neurosim.models.neurogenesis.VARIANTS` when None.

    Returns
    -------
    initial_sizes : list of int
    variants : list of str
    """
    sizes0 = [check_int("initial_sizes", k, low=1) for k in (default_sizes if initial_sizes is None else initial_sizes)]
    if not sizes0:
        raise ValueError("initial_sizes must name at least one size")
    variants = list(VARIANTS) if variants is None else list(variants)
    for v in variants:
        if v not in VARIANTS:
            raise ValueError(f"variants: unknown algorithm {v!r}; available: {', '.join(VARIANTS)}")
    return sizes0, variants


def sizes_from_log(log, k0: int, steps: int) -> np.ndarray:
    """Dictionary size after every step, rebuilt from the event log (births +1, deaths -1)."""
    delta = np.zeros(steps + 1, dtype=np.int64)
    for s, kind in zip(log.step, log.kind):
        delta[s] += 1 if kind == "birth" else -1
    return k0 + np.cumsum(delta)[1:]


def train(X: np.ndarray, batch: int, k0: int, variant: str, *, seed: int, progress: bool = False,
          normalize: str = "none", **settings):
    """Run Alg. 1 (``variant``) once over the rows of ``X`` in order, ``batch`` rows per step.

    ``normalize`` (``"none"``, ``"unit"``, ``"center_unit"``) is passed to
    :func:`~neurosim.models.neurogenesis.build_network`: the atoms the
    circuit codes against (see :func:`neurosim.coding.normalized_atoms`).

    ``X`` holds the whole stream (first domain, then second); its row count
    must be a multiple of ``batch``. ``lambda_g`` in ``settings`` is used
    only by the variants with death (NODL, NODL-); the others get 0, as in
    the paper (ODL, ODL* and NODL+ have no group-sparsity term).

    Returns
    -------
    W : ndarray, shape (k_final, n_features)
        The final dictionary, elements as rows (zeroed, inactive elements included).
    sizes : ndarray of int, shape (steps,)
        Dictionary size after every step, from the event log.
    """
    steps = X.shape[0] // batch
    stream = ns.ArrayStream(np.ascontiguousarray(X[: steps * batch]).reshape(steps, batch, X.shape[1]))
    settings = dict(settings)
    if variant not in ("NODL", "NODL-"):
        settings["lambda_g"] = 0.0
    c = build_network(stream, k0, variant, batch=batch, seed=seed, normalize=normalize, **settings)
    with warnings.catch_warnings():
        # missed code counts (Alg. 2 cannot always hit beta_c exactly) are expected and harmless here
        warnings.simplefilter("ignore")
        c.network.run(steps, progress=progress)
    return c.dictionary.weights.copy(), sizes_from_log(c.network.event_log, k0, steps)


def learn_all(stream, tests, variants, sizes0, steps: int, batch: int, beta_c_max: int, *, seed: int,
              progress: bool = False, normalize: str = "none", **settings):
    """Every variant from every initial size on ``stream``, scored on the test sets of both domains (Fig. 3 style).

    Codes have ``min(beta_c_max, k0)`` nonzeros and are computed against the
    atoms normalised by ``normalize``, learning and scoring alike. Returns ``acc`` (variant,
    size, domain), the final and the active (nonzero) sizes (variant, size),
    and the units alive after each of the ``2 * steps`` mini-batches.
    """
    acc = np.zeros((len(variants), len(sizes0), len(tests)))
    final = np.zeros((len(variants), len(sizes0)), dtype=np.int64)
    active = np.zeros_like(final)
    history = np.zeros((len(variants), len(sizes0), 2 * steps), dtype=np.int64)
    for i, v in enumerate(variants):
        for j, k0 in enumerate(sizes0):
            beta_c = min(beta_c_max, k0)
            W, sizes = train(stream, batch, k0, v, seed=seed, progress=progress, beta_c=beta_c, normalize=normalize,
                             **settings)
            history[i, j] = sizes
            final[i, j] = W.shape[0]
            active[i, j] = int(np.any(W != 0, axis=1).sum())
            for d, X in enumerate(tests):
                acc[i, j, d] = pearson_accuracy(W, X, beta_c, normalize=normalize)
    return acc, final, active, history


def fig3_dataset(results, seeds, variants, initial_sizes, domains, steps: int, attrs: dict):
    """The Dataset of a Fig. 3-style run: :func:`learn_all`'s results of every seed, stacked along ``seed``.

    Parameters
    ----------
    results : list of tuple
        :func:`learn_all`'s ``(acc, final, active, history)`` of each seed, in seed order.
    seeds : array_like of int
        The seeds (the ``seed`` coordinate).
    variants : list of str
    initial_sizes : list of int
    domains : sequence of str
        The names of the two domains.
    steps : int
        Mini-batches per domain.
    attrs : dict
        The script's attributes; ``attrs["normalize"]`` names the atoms the accuracy was computed against.

    Returns
    -------
    xarray.Dataset
        ``accuracy`` (seed, variant, initial_size, domain), ``final_size`` and ``active_size`` (seed, variant,
        initial_size) and ``dictionary_size`` after every mini-batch (..., step).
    """
    import xarray as xr

    acc, final, active, history = (np.stack([res[i] for res in results]) for i in range(4))
    dims = ("seed", "variant", "initial_size")
    ds = xr.Dataset(
        {"accuracy": (dims + ("domain",), acc),
         "final_size": (dims, final),
         "active_size": (dims, active),
         "dictionary_size": (dims + ("step",), history)},
        coords={"seed": seeds, "variant": variants, "initial_size": initial_sizes,
                "domain": list(domains), "step": np.arange(1, 2 * steps + 1)},
        attrs=attrs,
    )
    ds.accuracy.attrs["description"] = (f"codes against the atoms normalised as {attrs['normalize']!r} (as while "
                                        f"learning), reconstruction with those atoms")
    return ds


def write_fig3(ds, out: pathlib.Path, name: str, titles) -> dict[str, pathlib.Path]:
    """Write a Fig. 3-style run: ``ds`` to ``out/<name>.nc`` and its figure (:func:`plot_fig3`) to ``out/<name>.png``.

    Parameters
    ----------
    ds : xarray.Dataset
        What :func:`fig3_dataset` returned.
    out : pathlib.Path
        Output folder.
    name : str
        The simulation's name.
    titles : sequence of str
        The accuracy panels' titles, one per domain.

    Returns
    -------
    dict of str to pathlib.Path
        ``{"dataset", "figure"}``.
    """
    paths = {"dataset": out / f"{name}.nc", "figure": out / f"{name}.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")
    plot_fig3(paths["figure"], list(ds.variant.values), list(ds.initial_size.values), ds.final_size.values,
              ds.accuracy.values, titles, note=f"codes against {ds.attrs['normalize']!r} atoms")
    return paths


def encode(W: np.ndarray, X, beta_c: int, normalize: str = "none") -> np.ndarray:
    """Codes of the rows of ``X`` under ``W`` with ``beta_c`` nonzeros (Alg. 2), one column per element of ``W``.

    The codes are computed against ``normalized_atoms(W, normalize)``, as the
    circuit codes while learning. All-zero elements (after normalisation: a
    constant element is all-zero once centred) are inactive (code 0), as in
    the circuit's encoder; with fewer active elements than ``beta_c`` every
    active one may be used.
    """
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    W = normalized_atoms(W, normalize)
    codes = np.zeros((X.shape[0], W.shape[0]))
    active = np.flatnonzero(np.any(W != 0, axis=1))
    if active.size == 0:
        return codes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, A = lambda_for_count(X, W[active], min(beta_c, active.size, W.shape[1]), return_codes=True)
    codes[:, active] = np.asarray(A)
    return codes


def pearson_accuracy(W: np.ndarray, X, beta_c: int, codes: np.ndarray | None = None,
                     normalize: str = "none") -> float:
    """Mean Pearson correlation of samples and their reconstructions (the paper's accuracy).

    The reconstruction is ``codes @ normalized_atoms(W, normalize)``: the
    atoms the codes were computed against (``codes``, if given, must come
    from :func:`encode` with the same ``normalize``). A sample whose correlation is undefined (constant sample or constant
    reconstruction) counts as 0, as in the circuit's ``ReconstructionAccuracy``.
    """
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    if codes is None:
        codes = encode(W, X, beta_c, normalize)
    R = codes @ normalized_atoms(W, normalize)
    xc, rc = X - X.mean(1, keepdims=True), R - R.mean(1, keepdims=True)
    den = np.sqrt((xc * xc).sum(1) * (rc * rc).sum(1))
    return float(np.where(den > 0, (xc * rc).sum(1) / np.where(den > 0, den, 1.0), 0.0).mean())


def plot_fig3(path, variants, initial_sizes, final, acc, titles, dpi: int = MIN_DPI, note: str | None = None):
    """The layout of the paper's Fig. 3 / Fig. 5: (a) final vs initial size, then accuracy vs final size per domain.

    ``final`` has shape (variant, initial size) or (seed, variant, initial
    size); ``acc`` (variant, initial size, domain), or with a leading seed
    axis. With seeds, the points are the means over seeds and the error bars
    one standard deviation (ddof 1; none for a single seed). ``note`` is
    added as the figure's title.
    """
    import matplotlib.pyplot as plt

    final = np.asarray(final, dtype=float)
    acc = np.asarray(acc, dtype=float)
    if final.ndim == 2:
        final, acc = final[None], acc[None]
    n_seeds = final.shape[0]

    def _sd(a):
        return a.std(0, ddof=1) if n_seeds > 1 else None

    fmean, amean = final.mean(0), acc.mean(0)
    fig, axes = plt.subplots(1, 1 + len(titles), figsize=(5 * (1 + len(titles)), 4))
    # a dictionary whose elements all died scores 0 and would squash the axis: clip such points
    # to the lower edge (open markers) so the differences between the living ones stay visible
    good = amean[np.isfinite(amean) & (amean > 0.05)]
    low = max(0.0, float(good.min()) - 0.05) if good.size else 0.0
    for i, v in enumerate(variants):
        line = axes[0].errorbar(initial_sizes, fmean[i], yerr=_sd(final[:, i]), fmt="o-", capsize=3, label=v)
        color = line[0].get_color()
        for d in range(len(titles)):
            y = amean[i, :, d]
            axes[1 + d].errorbar(fmean[i], np.maximum(y, low), xerr=_sd(final[:, i]), yerr=_sd(acc[:, i, :, d]),
                                 fmt="o-", capsize=3, color=color, label=v)
            below = y < low
            if below.any():
                axes[1 + d].plot(fmean[i][below], np.full(below.sum(), low), "v", ms=10, mfc="none", clip_on=False,
                                 color=color)
    for d in range(len(titles)):
        axes[1 + d].set_ylim(bottom=low)
        if (amean[:, :, d] < low).any():
            axes[1 + d].annotate(f"open triangles: accuracy < {low:.2f} (0: no element left)",
                                 (0.02, 0.02), xycoords="axes fraction", fontsize=7)
    axes[0].set_xlabel("initial dictionary size")
    axes[0].set_ylabel("final dictionary size")
    axes[0].set_title("(a) dictionary size")
    for d, name in enumerate(titles):
        axes[1 + d].set_xlabel("final dictionary size")
        axes[1 + d].set_ylabel("test Pearson correlation")
        axes[1 + d].set_title(f"({chr(ord('b') + d)}) {name}")
    for ax in axes:
        ax.legend(fontsize=8)
    spread = f"mean ± sd over {n_seeds} seeds" if n_seeds > 1 else "1 seed"
    fig.suptitle(f"{note}; {spread}" if note else spread, fontsize=9)
    fig.tight_layout()
    save_figure(fig, path, dpi=dpi)
    return path


def _size_range(values) -> dict:
    """A size over seeds as one cell: ``"284"`` when every seed agrees, ``"282–286"`` otherwise."""
    from neurosim.report_tables import cell

    v = np.asarray(values).astype(np.int64)
    lo, hi = int(v.min()), int(v.max())
    return cell("{lo}", lo=lo) if lo == hi else cell("{lo}–{hi}", lo=lo, hi=hi)


def odl_at_size(ds, size, seed):
    """ODL's accuracy per domain at dictionary size ``size`` on ``seed``, interpolated linearly in log size.

    ODL's dictionaries never change size, so its runs from the initial
    sizes give its accuracy at those sizes; between two of them the
    accuracy is interpolated linearly in ``log(size)``. Outside ODL's
    sizes: NaN (no extrapolation).
    """
    sizes = ds.initial_size.values.astype(np.float64)
    acc = ds.accuracy.sel(variant="ODL", seed=seed).transpose("initial_size", "domain").values
    if not sizes.min() <= size <= sizes.max():
        return np.full(acc.shape[1], np.nan)
    return np.array([np.interp(np.log(size), np.log(sizes), acc[:, d]) for d in range(acc.shape[1])])


def fig3_tables(ds, name: str) -> list:
    """The report tables of a Fig. 3-style run (:func:`fig3_dataset`): accuracy per run, NODL against ODL.

    ``NAME/accuracy``: per variant and initial size, the final size (range
    over seeds; active elements when some are all-zero) and the test
    accuracy on each domain, mean ± sd over seeds. ``NAME/margins``: per
    initial size, NODL minus ODL paired by seed (same data and initial
    dictionary) from the same initial size, and at NODL's final size (ODL
    interpolated in log size between its initial sizes, :func:`odl_at_size`;
    empty where a seed's NODL size lies outside ODL's sizes): mean ± sd and
    the seeds on which NODL >= ODL.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired

    domains = [str(d) for d in ds.domain.values]
    seeds = ds.seed.values
    rows = []
    for v in ds.variant.values:
        for k in ds.initial_size.values:
            r = ds.sel(variant=v, initial_size=k)
            size = _size_range(r.final_size.values)
            if np.any(r.active_size.values != r.final_size.values):
                active = np.asarray(r.active_size.values)
                size = cell(size["fmt"] + " ({alo}–{ahi} active)" if active.min() != active.max()
                            else size["fmt"] + " ({alo} active)", **size["values"], alo=int(active.min()),
                            ahi=int(active.max()))
            rows.append([str(v), int(k), size] + [mean_sd(r.accuracy.sel(domain=d).values) for d in domains])
    accuracy = Table(f"{name}/accuracy", ["variant", "k0", "final size (seeds' range)"]
                     + [f"{d}, mean ± sd" for d in domains], rows, align=["l", "r", "r"] + ["r"] * len(domains))
    rows = []
    for k in ds.initial_size.values:
        nodl = ds.accuracy.sel(variant="NODL", initial_size=k).transpose("seed", "domain").values
        odl = ds.accuracy.sel(variant="ODL", initial_size=k).transpose("seed", "domain").values
        final = ds.final_size.sel(variant="NODL", initial_size=k).values
        at = np.array([odl_at_size(ds, f, s) for f, s in zip(final, seeds)])
        same_size = (["beyond ODL's sizes"] * len(domains) if np.isnan(at).any()
                     else [paired(nodl[:, d] - at[:, d]) for d in range(len(domains))])
        rows.append([int(k)] + [paired(nodl[:, d] - odl[:, d]) for d in range(len(domains))]
                    + [_size_range(final)] + same_size)
    margins = Table(f"{name}/margins", ["k0"] + [f"{d}: from the same k0" for d in domains]
                    + ["NODL's final size"] + [f"{d}: at NODL's final size" for d in domains], rows,
                    align=["r"] * (2 + 2 * len(domains)))
    return [accuracy, margins]
