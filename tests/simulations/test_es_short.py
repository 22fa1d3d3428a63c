"""The paper-004 reproductions (Figs. 3, 4, 5), shortened: they run, write their files and hold what is certain.

The full runs (and the paper's claims about rankings) are in
``simulations/es_*.py`` and ``docs/reports/paper004.md``; here a few epochs on
small batches check the bookkeeping and the claims that hold at any length.
"""

import pathlib

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import es_fig3_fig5_selection as fig35
from neurosim.simulations import es_fig4_robustness as fig4
from neurosim.simulations._es_common import ALGORITHM_ORDER, learn

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def _overlaps(a, b):
    """Whether two display-space boxes overlap (by more than a pixel)."""
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


def _check_fig3_layout(fig):
    """Legends beside or under the axes, never over data; the right panels' tick labels apart (issue 26)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = fig.axes
    assert len(axes) == 4
    for ax in axes:
        legend = ax.get_legend()
        assert legend is not None
        box = legend.get_window_extent(renderer)
        for other in axes:
            assert not _overlaps(box, other.get_window_extent(renderer)), (ax.get_title(), other.get_title())
    for ax in axes[1::2]:  # the right column: D* at the last epoch per algorithm
        labels = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert len(boxes) >= 2
        assert not any(_overlaps(p, q) for i, p in enumerate(boxes) for q in boxes[i + 1:])
        ylabels = [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_text()]
        assert not any(_overlaps(p, q) for i, p in enumerate(ylabels) for q in ylabels[i + 1:])


def test_fig3_fig5_short(tmp_path, monkeypatch):
    from neurosim.simulations import _harness

    drawn = {}
    save = _harness.save_figure

    def keep(fig, path, **kw):
        drawn[pathlib.Path(path).name] = fig
        fig.canvas.draw()
        _check_fig3_layout(fig) if pathlib.Path(path).name == "fig3_distance.png" else None
        return save(fig, path, **kw)

    monkeypatch.setattr(_harness, "save_figure", keep)
    paths = fig35.run(steps=3, out=tmp_path, progress=False, n_examples=400, n_selected=8, workers=1, seed=5,
                      n_seeds=2)
    assert set(drawn) == {"fig3_distance.png", "fig5_selected_sets.png"}
    assert set(paths) == {"dataset", "fig3", "fig5"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    assert dict(ds.distance.sizes) == {"seed": 2, "dictionary": 2, "encoder": 3, "algorithm": 9, "epoch": 2}
    assert list(ds.seed.values) == [5, 6] and int(ds.n_seeds) == 2
    # epoch 0 is the initial dictionary, then every min(RECORD_EVERY, steps) epochs
    assert list(ds.epoch.values) == [0, 3]
    # the initial dictionary does not depend on the selector; it does on the seed
    d0 = ds.distance.isel(epoch=0)
    assert float(abs(d0 - d0.sel(algorithm="Uniform")).max()) == 0.0
    assert np.all(d0.isel(seed=0).values != d0.isel(seed=1).values)
    d = ds.distance.values
    # D* (Eq. 16) of unit-norm atoms lies in [0, 4 / P]; the dictionaries learn from examples, far from the bound
    assert np.all(np.isfinite(d)) and np.all((d >= 0) & (d < 4 / 64))
    # Fig. 5: the true SNR of a uniform draw is the stream's 6 dB; the others select examples of higher SNR (on
    # average over the 12 runs of each: with n = 8 of N = 400 a single uniform draw can reach 9 dB)
    uni = ds.selected_snr_db.sel(algorithm="Uniform")
    assert float(np.abs(ds.all_snr_db - 6.0).max()) < 0.5
    assert np.all(np.abs(uni - 6.0) < 4.0)
    for alg in ALGORITHM_ORDER:
        if alg != "Uniform":
            assert float(ds.selected_snr_db.sel(algorithm=alg).mean()) > float(uni.mean()) + 1.0, alg
    h = ds.histogram_distance.values
    assert np.all((h >= 0) & (h <= 1))


def test_versus_uniform_is_paired_by_seed():
    final = xr.DataArray([[1.0, 2.0], [2.0, 3.0], [4.0, 3.0]], coords={"seed": [0, 1, 2], "algorithm": ["Uniform", "a"]},
                         dims=("seed", "algorithm"))
    vs = fig35.versus_uniform(final)
    np.testing.assert_allclose(vs["rel"].sel(algorithm="a").values, [1.0, 0.5, -0.25])
    assert int(vs["better"].sel(algorithm="a")) == 1 and np.isnan(vs["p"]["Uniform"]) and 0 < vs["p"]["a"] < 1


def test_ranking_orders_worst_first():
    final = xr.DataArray([0.3, 0.1, 0.2], coords={"algorithm": ["a", "b", "c"]}, dims="algorithm")
    assert fig35.ranking(final) == ["a", "c", "b"]


def test_fig4_short(tmp_path):
    paths = fig4.run(steps=1, out=tmp_path, progress=False, n_examples=300, workers=1, n_seeds=2)
    assert set(paths) == {"dataset", "fig4"}
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    n_settings = sum(len(v) for v in fig4.VALUES.values())
    # one row per point and seed, the seed a coordinate of the rows
    assert ds.sizes["run"] == 2 * n_settings * len(ALGORITHM_ORDER) and sorted(set(ds.seed.values)) == [0, 1]
    d = ds.distance.values
    assert np.all(d[ds.seed.values == 0] != d[ds.seed.values == 1])
    for p, values in fig4.VALUES.items():
        got = sorted(set(ds.value.values[ds.parameter.values == p].tolist()))
        assert got == sorted(float(v) for v in values)
    assert np.all(np.isfinite(ds.distance.values))


def test_fig4_refuses_a_level_past_the_values():
    with pytest.raises(ValueError, match="level"):
        fig4.check_point("snr_db", 5, "Uniform")
    with pytest.raises(ValueError, match="algorithm"):
        fig4.check_point("k", 0, "Best")


def test_learn_is_reproducible_and_reports_the_last_epoch():
    a = learn("alphanumeric", "k_sparse", "SUNByElement", seed=4, steps=4, n_examples=300, n_selected=10,
              record_every=2)
    b = learn("alphanumeric", "k_sparse", "SUNByElement", seed=4, steps=4, n_examples=300, n_selected=10,
              record_every=2)
    assert list(a.epoch.values) == [0, 2, 4]
    np.testing.assert_array_equal(a.distance.values, b.distance.values)
    assert float(a.selected_snr_db) == float(b.selected_snr_db)


def test_fig4_table_by_hand():
    # two seeds, every setting: Uniform at 1.0 and 2.0, GradByElement at 0.5 and 3.0 (relative -50 % and +50 %:
    # mean 0 %, 1 of 2 seeds below); the base setting, reached from every parameter, appears once
    rows = []
    for p, values in fig4.VALUES.items():
        for lv in range(len(values)):
            for a in fig4.ALGORITHM_ORDER:
                for s, (u, g) in enumerate([(1.0, 0.5), (2.0, 3.0)]):
                    rows.append((p, lv, a, s, u if a == "Uniform" else g if a == "GradByElement" else u))
    p, lv, a, s, d = map(list, zip(*rows))
    ds = xr.Dataset({"distance": ("run", d)}, coords={"parameter": ("run", p), "level": ("run", lv),
                                                       "algorithm": ("run", a), "seed": ("run", s)})
    (table,) = fig4.tables(ds)
    labels = [r[0] for r in table.rows]
    assert len(labels) == sum(len(v) for v in fig4.VALUES.values()) - (len(fig4.VALUES) - 1)
    assert sum("(base)" in x for x in labels) == 1 and "K = 16" in labels
    grad = table.columns.index("GradByElement")
    cell = table.rows[0][grad]
    assert cell["values"] == {"rel": 0.0, "below": 1, "n": 2}
    uniform = table.rows[0][1]["values"]
    assert uniform["mean"] == 1.5 and abs(uniform["sd"] - np.sqrt(0.5)) < 1e-15
