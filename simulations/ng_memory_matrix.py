"""Garg et al. (2017), Sec. D / Fig. 7 and 15: the memory matrix ``A`` after learning urban then natural images.

``A = sum_t alpha_t alpha_t^T`` is the code population's pair variable kept
by :class:`~neurosim.rules.dictionary.DictionaryMemory`. Its row ``j``
enters the dictionary update ``u_j = (b_j - sum_{k != j} d_k a_jk) / a_jj``
(eq. 4): a large ``|a_jk| / a_jj`` ties element ``j`` to element ``k``.

The paper's claims (Sec. D, "Non-sparse data, sparse dictionary"; App. E.4):

* ODL with *sparse* elements gives an ``A`` with many large off-diagonal
  entries (Fig. 7(b)): sparse elements are used jointly; with *dense*
  elements ``A`` is almost diagonally dominant (Fig. 15(a)).
* NODL's ``A`` (sparse elements), units ordered by age, is block diagonal:
  the old elements are tied to each other (Fig. 15(b)), the new ones more
  weakly to each other (15(d)) and not to the old ones (15(c)).

Run here: the stream of :mod:`neurosim.simulations.ng_images_two_domains`
(32x32 images; the paper's Fig. 7 uses 100x100), ODL and NODL with sparse
and with dense elements from the same initial size (the paper: 50).
``A`` is kept at the end of domain 1 and at the end of domain 2; every
unit's birth step comes from ``network.event_log`` (0 for the initial
units). Numbers (:func:`tie_strength`): the mean of ``|a_jk| / a_jj``
over ``j != k`` in the whole matrix and, after domain 2, within the
old-old block, the new-new block and across the two (old = units alive
before domain 2 starts).

Codes are computed against centred, unit-norm elements
(``normalize="center_unit"``, :data:`NORMALIZE`), as in
:mod:`~neurosim.simulations.ng_images_two_domains`: images are dense data,
for which the authors' released code codes against ``normalize(D)``;
``A`` is then the sum of those codes' outer products.
``normalize="none"`` is Alg. 1 as printed. Every run is repeated on
``n_seeds`` seeds ``seed + r`` (crops, initial elements, newborns); the
dataset has a ``seed`` dimension, the figure shows the first seed's
matrices with the tie strengths' mean ± sd over seeds.

Outputs: ``<out>/ng_memory_matrix.nc`` and ``.png``.
"""

from __future__ import annotations

import pathlib
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from neurosim._validation import check_int  # noqa: E402
from neurosim.models.neurogenesis import build_network  # noqa: E402
from neurosim.simulations import ng_images_two_domains as images  # noqa: E402
from neurosim.simulations._harness import save_figure  # noqa: E402

NAME = "ng_memory_matrix"
DESCRIPTION = "Garg et al. 2017 Sec. D / Fig. 7, 15: the memory matrix A of ODL (dense vs sparse) and NODL (by age)"
#: mini-batches of urban images, then twice as many natural ones, as in ng_images_two_domains
DEFAULT_STEPS = images.DEFAULT_STEPS
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1, "size": 10}
#: initial dictionary size (the paper's Fig. 15(b): "the old 50 elements")
DEFAULT_SIZE = 50

RUNS = (("ODL", "sparse"), ("ODL", "dense"), ("NODL", "sparse"), ("NODL", "dense"))
#: seeds per run
DEFAULT_SEEDS = 3
#: the atoms codes are computed against: images are dense data, and the authors' code codes dense data
#: against centred unit-norm elements (``normalize(D)`` in their sparse_coding.m), as ng_images_two_domains
NORMALIZE = "center_unit"
BLOCKS = ("all (domain 1 end)", "all", "old-old", "new-new", "old-new", "new-old", "across")


def tie_strength(A: np.ndarray, rows=None, cols=None) -> float:
    """Mean ``|a_jk| / a_jj`` over ``j`` in ``rows``, ``k`` in ``cols``, ``j != k`` (eq. 4's coupling).

    Rows with ``a_jj = 0`` (units never used: they have no data term) are
    left out. ``rows``/``cols`` are index arrays into ``A`` (default: all).
    Returns NaN when no pair is left.
    """
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    cols = np.arange(n) if cols is None else np.asarray(cols, dtype=np.int64)
    diag = np.diag(A)[rows]
    rows = rows[diag > 0]
    if rows.size == 0 or cols.size == 0:
        return float("nan")
    R = np.abs(A[np.ix_(rows, cols)]) / np.diag(A)[rows][:, None]
    off = rows[:, None] != cols[None, :]
    return float(R[off].mean()) if off.any() else float("nan")


def birth_steps(event_log, population: str, ids: np.ndarray) -> np.ndarray:
    """Step at which each unit of ``ids`` was born (0: an initial unit), from the event log."""
    born = {u: s for s, kind, pop, u in zip(event_log.step, event_log.kind, event_log.population, event_log.unit)
            if kind == "birth" and pop == population}
    return np.array([born.get(int(u), 0) for u in ids], dtype=np.int64)


def _learn(stream, steps1, variant, kind, k0, seed, normalize=NORMALIZE):
    beta_d, beta_c = images.ELEMENTS[kind]
    lam = images.LAMBDA_G if variant in ("NODL", "NODL-") else 0.0
    c = build_network(stream, k0, variant, batch=images.BATCH, beta_c=min(beta_c, k0), beta_d=beta_d,
                      gamma=images.GAMMA, c_k=images.C_K, lambda_g=lam, max_sweeps=images.MAX_SWEEPS, seed=seed,
                      normalize=normalize)
    steps = stream.data.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c.network.run(steps1)
        A1 = c.code.state["A"].copy()
        old_ids = c.code.ids.copy()
        c.network.run(steps - steps1)
    ids = c.code.ids.copy()
    A2 = c.code.state["A"].copy()
    born = birth_steps(c.network.event_log, c.code.name, ids)
    order = np.lexsort((ids, born))  # by age, oldest first; ties by id
    return A1, A2[np.ix_(order, order)], ids[order], born[order], np.isin(ids[order], old_ids)


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, size=None, *, n_seeds=None,
        normalize=NORMALIZE) -> dict[str, pathlib.Path]:
    """Learn urban then natural images with ODL and NODL (sparse and dense elements); analyse ``A``.

    Parameters
    ----------
    steps : int >= 1, optional
        Mini-batches of 200 urban images (default :data:`DEFAULT_STEPS`),
        followed by ``2 * steps`` of natural images.
    size : int >= 1, optional
        Initial dictionary size (default :data:`DEFAULT_SIZE`).
    n_seeds : int >= 1, optional
        Repetitions, seeds ``seed + r`` (default :data:`DEFAULT_SEEDS`).
    normalize : {"none", "unit", "center_unit"}
        The atoms codes are computed against (default :data:`NORMALIZE`).

    Returns the paths written: ``{"dataset", "figure"}``.
    """
    from neurosim._validation import check_choice
    from neurosim.coding import NORMALIZATIONS

    size = check_int("size", DEFAULT_SIZE if size is None else size, low=1)
    n_train = images.BATCH * check_int("steps", DEFAULT_STEPS if steps is None else steps, low=1)
    seed = check_int("seed", seed, low=0)
    n_seeds = check_int("n_seeds", DEFAULT_SEEDS if n_seeds is None else n_seeds, low=1)
    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)

    results = []
    steps1 = n_steps = 0
    for r in range(n_seeds):
        stream, steps1, _, _ = images.image_stream(n_train, 1, seed + r)
        n_steps = stream.data.shape[0]
        res = {}
        for variant, kind in RUNS:
            res[variant, kind] = _learn(stream, steps1, variant, kind, size, seed + r, normalize)
            if progress:
                print(f"seed {seed + r} {variant} {kind}: final size {res[variant, kind][1].shape[0]}", flush=True)
        results.append(res)

    kmax1 = max(x[0].shape[0] for res in results for x in res.values())
    kmax2 = max(x[1].shape[0] for res in results for x in res.values())
    names = [f"{v} {k}" for v, k in RUNS]
    shape = (n_seeds, len(RUNS))
    A1 = np.full(shape + (kmax1, kmax1), np.nan)
    A2 = np.full(shape + (kmax2, kmax2), np.nan)
    unit = np.full(shape + (kmax2,), -1, dtype=np.int64)
    born = np.full(shape + (kmax2,), -1, dtype=np.int64)
    old = np.zeros(shape + (kmax2,), dtype=bool)
    ties = np.full(shape + (len(BLOCKS),), np.nan)
    n_old = np.zeros(shape, dtype=np.int64)
    n_new = np.zeros(shape, dtype=np.int64)
    for s, res in enumerate(results):
        for r, key in enumerate(RUNS):
            a1, a2, ids, b, is_old = res[key]
            k1, k2 = a1.shape[0], a2.shape[0]
            A1[s, r, :k1, :k1], A2[s, r, :k2, :k2] = a1, a2
            unit[s, r, :k2], born[s, r, :k2], old[s, r, :k2] = ids, b, is_old
            o, w = np.flatnonzero(is_old), np.flatnonzero(~is_old)
            n_old[s, r], n_new[s, r] = o.size, w.size
            ties[s, r] = [tie_strength(a1), tie_strength(a2), tie_strength(a2, o, o), tie_strength(a2, w, w),
                          tie_strength(a2, o, w), tie_strength(a2, w, o), _across(a2, o, w)]

    ds = xr.Dataset(
        {"A_domain1": (("seed", "run", "row1", "col1"), A1),
         "A": (("seed", "run", "row", "col"), A2),
         "unit": (("seed", "run", "row"), unit),
         "birth_step": (("seed", "run", "row"), born),
         "old": (("seed", "run", "row"), old),
         "tie_strength": (("seed", "run", "block"), ties),
         "n_old": (("seed", "run"), n_old),
         "n_new": (("seed", "run"), n_new)},
        coords={"seed": seed + np.arange(n_seeds), "run": names, "block": list(BLOCKS)},
        attrs={"initial_size": size, "n_train_per_class": n_train, "steps_domain1": steps1,
               "steps": n_steps, "seed": seed, "first_seed": seed, "n_seeds": n_seeds, "normalize": normalize,
               "gamma": images.GAMMA, "c_k": images.C_K,
               "lambda_g": images.LAMBDA_G, "beta_d_sparse": images.BETA_D_SPARSE,
               "beta_c_sparse": images.BETA_C_SPARSE, "beta_c_dense": images.BETA_C_DENSE,
               "max_sweeps": images.MAX_SWEEPS},
    )
    ds.A.attrs["description"] = "A after domain 2, rows/cols ordered by birth step (oldest first), NaN-padded"
    ds.A_domain1.attrs["description"] = "A after domain 1, rows/cols in unit order, NaN-padded"
    ds.tie_strength.attrs["description"] = ("mean |a_jk|/a_jj over j != k (j: row block, k: column block; "
                                            "across: all pairs with j, k in different blocks)")
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")
    _plot(ds, paths["figure"])
    return paths


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}

#: the report's claims: (what, run, block, minus run, minus block), each ``a > b`` per seed
CLAIMS = (
    ("ODL: sparse elements tie more than dense (Fig. 7b, 15a), end of domain 1",
     "ODL sparse", "all (domain 1 end)", "ODL dense", "all (domain 1 end)"),
    ("the same at the end of domain 2", "ODL sparse", "all", "ODL dense", "all"),
    ("NODL sparse, old-old > across (Fig. 15)", "NODL sparse", "old-old", "NODL sparse", "across"),
    ("NODL sparse, new-new > across (Fig. 15)", "NODL sparse", "new-new", "NODL sparse", "across"),
    ("NODL sparse, old-old > new-new (Fig. 15b, d)", "NODL sparse", "old-old", "NODL sparse", "new-new"),
)


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``ties``: the tie strengths of every run and block, and the old and new
    units, mean ± sd over seeds (an empty cell where a block has no pairs on
    any seed). ``claims``: each of :data:`CLAIMS` as the per-seed difference,
    mean ± sd and the seeds on which it is positive.
    """
    from neurosim.report_tables import Table, mean_sd, paired

    ties = ds.tie_strength.transpose("run", "block", "seed")
    rows = [[str(r)] + [mean_sd(ties.sel(run=r, block=b).values) for b in ds.block.values]
            + [mean_sd(ds.n_old.sel(run=r).values, ".1f"), mean_sd(ds.n_new.sel(run=r).values, ".1f")]
            for r in ds.run.values]
    table = Table(f"{NAME}/ties", ["run"] + [str(b) for b in ds.block.values] + ["old units", "new units"], rows,
                  align=["l"] + ["r"] * (ds.sizes["block"] + 2))
    rows = [[what, paired(ties.sel(run=a, block=x).values - ties.sel(run=b, block=y).values, holds=">")]
            for what, a, x, b, y in CLAIMS]
    claims = Table(f"{NAME}/claims", ["claim", "difference, mean ± sd (seeds where > 0)"], rows, align=["l", "r"])
    return [table, claims]


def _pairs_mean(A, rows, cols):
    """(sum, count) of ``|a_jk| / a_jj`` over the pairs, for pooling blocks."""
    rows = rows[np.diag(A)[rows] > 0]
    if rows.size == 0 or cols.size == 0:
        return (0.0, 0)
    R = np.abs(A[np.ix_(rows, cols)]) / np.diag(A)[rows][:, None]
    off = rows[:, None] != cols[None, :]
    return (float(R[off].sum()), int(off.sum()))


def _across(A, old, new):
    """Mean ``|a_jk| / a_jj`` over all pairs with one unit old and the other new (both orders)."""
    s1, n1 = _pairs_mean(A, old, new)
    s2, n2 = _pairs_mean(A, new, old)
    return (s1 + s2) / (n1 + n2) if n1 + n2 else float("nan")


def _ratio_image(A):
    """``|a_jk| / a_jj`` (rows with ``a_jj = 0`` blank), the quantity of the paper's Fig. 7 / 15 discussion."""
    d = np.diag(A)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d[:, None] > 0, np.abs(A) / d[:, None], np.nan)


def _plot(ds, path):
    """The first seed's ratio images; the tie strengths as mean ± sd over seeds."""
    runs = list(ds.run.values)
    n_s = ds.sizes["seed"]
    ties = ds.tie_strength
    tm = ties.mean("seed")
    ts = ties.std("seed", ddof=1) if n_s > 1 else xr.zeros_like(tm)

    def fmt(name, block):
        # a block is empty (its tie strength NaN) on a seed without such pairs: ODL, or NODL without births,
        # has no new units. Say so instead of printing "nan", and count the seeds a mean is over.
        vals = ties.sel(run=name, block=block).values
        have = np.isfinite(vals)
        if not have.any():
            return "none (no unit born)" if block in ("new-new", "across") else "none (no pairs)"
        text = f"{float(tm.sel(run=name, block=block)):.3f}"
        if have.sum() > 1:
            text += f"±{float(ts.sel(run=name, block=block)):.3f}"
        return text + (f" ({int(have.sum())} of {have.size} seeds)" if not have.all() else "")

    first = ds.isel(seed=0)
    fig, axes = plt.subplots(2, len(runs), figsize=(3.6 * len(runs), 7.6), squeeze=False,
                             constrained_layout=True)
    for r, name in enumerate(runs):
        a1 = first.A_domain1.sel(run=name).values
        k1 = int(np.sum(~np.isnan(np.diag(a1))))
        a2 = first.A.sel(run=name).values
        k2 = int(np.sum(~np.isnan(np.diag(a2))))
        for row, (a, k, when) in enumerate(((a1, k1, "end of domain 1"), (a2, k2, "end, oldest first"))):
            ax = axes[row, r]
            im = ax.imshow(_ratio_image(a[:k, :k]), cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xlabel("element k" + (" (by birth step)" if row == 1 else " (unit order)"), fontsize=8)
            ax.set_ylabel("element j", fontsize=8)
            ax.tick_params(labelsize=7)
            if row == 1:
                n_old = int(first.n_old.sel(run=name))
                if 0 < n_old < k:
                    ax.axhline(n_old - 0.5, color="r", lw=0.8)
                    ax.axvline(n_old - 0.5, color="r", lw=0.8)
                caption = (f"old-old {fmt(name, 'old-old')}\nnew-new {fmt(name, 'new-new')}\n"
                           f"across {fmt(name, 'across')}")
            else:
                caption = f"all j != k: {fmt(name, 'all (domain 1 end)')}"
            ax.set_title(f"{name}, {when} ({k} elements)\n{caption}", fontsize=8)
    fig.colorbar(im, ax=axes, shrink=0.6, label="|a_jk| / a_jj (clipped at 1)")
    fig.suptitle(f"Memory matrix A, codes against {ds.attrs['normalize']!r} atoms; matrices: seed "
                 f"{int(ds.seed[0])}; tie strengths: mean±sd over {n_s} seeds (red lines: old | new)", fontsize=9)
    save_figure(fig, path)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
