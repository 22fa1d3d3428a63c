"""What the paper-001 (efficient sparse coding) scripts share: the figures' writer, the bar tests' start and attributes.

Not a simulation (the leading underscore keeps it out of ``neurosim list``).

``sc_fig2_bases`` learns the bases; the two bar tests (``sc_fig3_end_stopping``,
``sc_ncrf_suppression``) start from the same bases (its cache) and each
basis' optimal bar (:func:`bases_and_bars`) and store the same description of
those bases with their results (:func:`bar_test_attrs`).
"""

from __future__ import annotations

import pathlib

from neurosim.simulations._harness import output_folder, save_figure

__all__ = ["PAPER", "BAR_PROTOCOL", "save_png", "bases_histogram", "bases_and_bars", "bar_test_attrs"]

#: the paper, as the datasets' ``paper`` attribute names it (followed by the figure or section)
PAPER = "Lee, Battle, Raina, Ng (2006) Efficient sparse coding algorithms"
#: where the bar tests' protocol is written down (the datasets' ``protocol`` attribute)
BAR_PROTOCOL = "see neurosim.analysis.receptive_fields module docstring"


def save_png(fig, path: pathlib.Path) -> pathlib.Path:
    """Write ``fig`` to ``path`` as PNG, cropped to what is drawn, close it and return ``path``."""
    return save_figure(fig, path, bbox_inches="tight")


def bases_histogram(ax, values, bins, threshold: float, xlabel: str, title: str) -> None:
    """Draw on ``ax`` the histogram of one value per basis, with the ``threshold`` that counts a basis dashed.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    values : array_like
        One value per basis (a fit's R^2, an end-stopping index).
    bins : array_like
        Bin edges.
    threshold : float
        The value a basis must exceed to be counted (a dashed vertical line).
    xlabel, title : str
        What the value is, and what the count is.
    """
    ax.hist(values, bins=bins)
    ax.axvline(threshold, color="k", ls="--")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("bases")
    ax.set_title(title)


def bases_and_bars(name: str, out, bases_dir=None, *, steps=None, n_atoms=None, patch_size=None, lam=None,
                   batch=None, seed: int = 0, progress: bool = False):
    """The bases of ``sc_fig2_bases`` (cached, or learned now) with each basis' optimal bar; then create ``out``.

    Parameters
    ----------
    name : str
        The bar test's name (labels the bar search's progress bar).
    out : str or path
        The bar test's output folder, created once the settings are checked.
    bases_dir : str or path, optional
        Where the cached bases live; default ``<out>/../sc_fig2_bases``.
    steps, n_atoms, patch_size, lam, batch : optional
        The bases' learning configuration; ``None`` takes the full run's
        (:data:`neurosim.models.sparse_coding.FULL`).
    seed : int
        Seed of the bases (patches and initial dictionary).
    progress : bool
        Show progress bars.

    Returns
    -------
    setup : neurosim.models.sparse_coding.BarTestBases
        The bases, their configuration and cache, and the optimal bars.
    out : pathlib.Path
        The output folder, created.
    """
    from neurosim.models.sparse_coding import bases_with_optimal_bars

    out = pathlib.Path(out)
    setup = bases_with_optimal_bars(
        out, bases_dir, steps=steps, n_atoms=n_atoms, patch_size=patch_size, lam=lam, batch=batch,
        seed=seed, progress=progress, desc=f"{name} bar search",
    )
    return setup, output_folder(out)  # after the settings are validated


def bar_test_attrs(setup, seed: int, test_seconds: float) -> dict:
    """The attributes that say which bases a bar test ran on: their cache, seed and configuration, and its time.

    Parameters
    ----------
    setup : neurosim.models.sparse_coding.BarTestBases
        What :func:`bases_and_bars` returned.
    seed : int
        Seed of the bases.
    test_seconds : float
        Wall time of the test (bar search included).

    Returns
    -------
    dict
        ``bases_cache``, ``seed``, ``test_seconds`` and the bases' configuration, in that order.
    """
    return {"bases_cache": str(setup.cache), "seed": seed, "test_seconds": test_seconds, **setup.config}
