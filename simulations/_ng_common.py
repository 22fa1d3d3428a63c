"""Helpers shared by the paper-000 domain-shift reproductions (not a simulation itself).

The MNIST, classification and text scripts all train the circuit of
:mod:`neurosim.models.neurogenesis` on a two-domain stream and then score
the final dictionary on held-out samples with the circuit's own encoder
(the lasso with ``beta_c`` nonzeros of Alg. 1 step 4 / Alg. 2). The
functions here do exactly that and nothing more, so each script keeps only
its data and its figure.
"""

from __future__ import annotations

import warnings

import numpy as np

import neurosim as ns
from neurosim.coding import lambda_for_count, normalized_atoms
from neurosim.models.neurogenesis import build_network
from neurosim.simulations._harness import MIN_DPI, save_figure

__all__ = ["train", "encode", "pearson_accuracy", "sizes_from_log", "learn_all", "plot_fig3"]


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
