"""Figures of the reproductions print: >= 150 dpi through one writer, axis labels, no "nan" in captions (issue 26).

Quick tests: the files are read as text, and the memory-matrix figure is drawn
from a dataset built by hand (no simulation runs). The shortened runs in this
folder draw every figure end to end (slow tier).
"""

import pathlib
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from neurosim.simulations import _harness  # noqa: E402
from neurosim.simulations import ng_memory_matrix as memory  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "simulations").glob("*.py"))


def test_every_script_writes_figures_through_save_figure_at_print_resolution():
    assert len(SCRIPTS) > 20
    for path in SCRIPTS:
        text = path.read_text()
        if path.name != "_harness.py":
            assert ".savefig(" not in text, f"{path.name}: write figures with _harness.save_figure"
        for dpi in re.findall(r"\bdpi\s*=\s*(\d+)", text):
            assert int(dpi) >= _harness.MIN_DPI, f"{path.name}: dpi={dpi}"
    assert _harness.MIN_DPI >= 150


def test_save_figure_refuses_low_dpi_and_writes_figsize_times_dpi_pixels(tmp_path):
    fig, ax = plt.subplots(figsize=(4.0, 2.0))
    ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match="dpi must be at least 150"):
        _harness.save_figure(fig, tmp_path / "low.png", dpi=80)
    path = _harness.save_figure(fig, tmp_path / "f.png")
    assert plt.imread(path).shape[:2] == (300, 600)  # 2 x 4 inches at 150 dpi
    assert not plt.fignum_exists(fig.number)  # closed after writing


def _memory_dataset(n_seeds=2):
    """What ng_memory_matrix.run stores, by hand: ODL without births (no new units), NODL with 3 old and 2 new."""
    runs = ["ODL sparse", "NODL sparse"]
    rng = np.random.default_rng(0)

    def spd(k):
        a = rng.random((k, k))
        return a @ a.T

    A1 = np.full((n_seeds, 2, 4, 4), np.nan)
    A2 = np.full((n_seeds, 2, 5, 5), np.nan)
    ties = np.full((n_seeds, 2, len(memory.BLOCKS)), np.nan)
    n_old = np.array([[4, 3]] * n_seeds)
    for s in range(n_seeds):
        A1[s, 0], A1[s, 1, :3, :3] = spd(4), spd(3)
        A2[s, 0, :4, :4], A2[s, 1] = spd(4), spd(5)
        for r, (a2, o, w) in enumerate(((A2[s, 0, :4, :4], np.arange(4), np.arange(0)),
                                        (A2[s, 1], np.arange(3), np.arange(3, 5)))):
            ties[s, r] = [memory.tie_strength(A1[s, r][~np.isnan(A1[s, r][:, 0])][:, ~np.isnan(A1[s, r][0])]),
                          memory.tie_strength(a2), memory.tie_strength(a2, o, o), memory.tie_strength(a2, w, w),
                          memory.tie_strength(a2, o, w), memory.tie_strength(a2, w, o), memory._across(a2, o, w)]
    return xr.Dataset(
        {"A_domain1": (("seed", "run", "row1", "col1"), A1), "A": (("seed", "run", "row", "col"), A2),
         "tie_strength": (("seed", "run", "block"), ties), "n_old": (("seed", "run"), n_old)},
        coords={"seed": np.arange(n_seeds), "run": runs, "block": list(memory.BLOCKS)},
        attrs={"normalize": "center_unit"})


def _texts(fig):
    out = [fig._suptitle.get_text()] if fig._suptitle is not None else []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
    return out


@pytest.mark.parametrize("n_seeds", [1, 2])
def test_memory_matrix_figure_has_axis_labels_and_no_nan(monkeypatch, tmp_path, n_seeds):
    ds = _memory_dataset(n_seeds)
    # ODL has no new units: its new-new and across statistics are over empty sets (NaN in the dataset)
    assert np.isnan(ds.tie_strength.sel(run="ODL sparse", block="new-new")).all()
    figs = []
    monkeypatch.setattr(memory, "save_figure", lambda fig, path: figs.append(fig))
    memory._plot(ds, tmp_path / "m.png")
    (fig,) = figs
    texts = _texts(fig)
    assert not any("nan" in t.lower() for t in texts), texts
    images = [ax for ax in fig.axes if ax.images]
    assert len(images) == 4
    for ax in images:
        assert ax.get_xlabel().startswith("element k") and ax.get_ylabel() == "element j"
    titles = [ax.get_title() for ax in images]
    assert "new-new none (no unit born)" in titles[2] and "across none (no unit born)" in titles[2]
    assert "new-new none" not in titles[3] and "across " in titles[3]
    assert ("±" in titles[3]) == (n_seeds > 1)
    plt.close(fig)
