"""``neurosim sweep`` and the plot functions on sweep and recording Datasets."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from neurosim import plot  # noqa: E402
from neurosim.cli import main  # noqa: E402
from neurosim.simulations import sm_fig6_nonstationary as fig6  # noqa: E402


@pytest.mark.slow
def test_cli_sweeps_fig6_over_seeds_into_one_dataset_and_a_figure(tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = ["sweep", "sm_fig6_nonstationary", "--steps", "1200", "--seeds", "0-1", "--grid", "regularizer=TY,YY",
            "--executor", "serial", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "8 runs (0 failed)" in text
    with xr.open_dataset(out / "sm_fig6_nonstationary.nc", engine="h5netcdf") as ds:
        assert ds.active_outputs.dims == ("regularizer", "beta", "seed", "phase")
        assert list(ds.regularizer.values) == ["TY", "YY"] and list(ds.seed.values) == [0, 1]
        # each cell is the run fig6.point gives for it (with one BLAS thread, as the sweep's runs have)
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            one = fig6.point("YY", fig6.BETA, seed=1, steps=1200)
        np.testing.assert_array_equal(ds.output_eigenvalues.sel(regularizer="YY", beta=fig6.BETA, seed=1).values,
                                      one.output_eigenvalues.values)
    assert (out / "fig6_sweep.png").stat().st_size > 0
    # the same command again finds every run done
    assert main(argv) == 0


@pytest.mark.parametrize("argv, message", [
    (["--grid", "regularizer"], "--grid takes KEY=V1,V2"),
    (["--seeds", "a-b"], "--seeds takes"),
    (["--grid", "nope=1,2"], "no parameter 'nope'"),
    (["--grid", "regularizer=TY,bogus"], "refuses 2 of 4 runs"),
])
def test_cli_sweep_refuses_bad_grids_with_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NEUROSIM_DEBUG", raising=False)
    full = ["sweep", "sm_fig6_nonstationary", "--steps", "40", "--executor", "serial", "--out", str(tmp_path),
            "--no-progress", *argv]
    try:
        code = main(full)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_refuses_to_sweep_a_simulation_without_points(capsys):
    assert main(["sweep", "sm_offline_table1", "--no-progress"]) == 2
    assert "cannot be swept" in capsys.readouterr().err


def _recording():
    act = np.arange(24, dtype=float).reshape(6, 4)
    act[:2, 3] = np.nan  # unit 7 born at step 3
    act[4:, 0] = np.nan  # unit 0 died after step 4
    return xr.Dataset({"activity": (("time", "unit"), act),
                       "event_step": ("event", [3, 5]), "event_kind": ("event", ["birth", "death"]),
                       "event_population": ("event", ["y", "y"])},
                      coords={"time": np.arange(1, 7), "unit": [0, 1, 2, 7]})


def test_alive_counts_follow_the_event_log():
    steps, alive, births, deaths = plot.alive_counts(_recording(), initial=3, steps=np.arange(1, 7))
    np.testing.assert_array_equal(alive, [3, 3, 4, 4, 3, 3])
    np.testing.assert_array_equal(births, [0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(deaths, [0, 0, 0, 0, 1, 0])
    # padding rows of a sweep (event_step = -1) are not events; another population's are filtered out
    padded = _recording().assign(event_step=("event", [3, -1]), event_kind=("event", ["birth", ""]))
    assert plot.alive_counts(padded, 3, steps=[6])[1].tolist() == [4]
    assert plot.alive_counts(_recording(), 3, steps=[6], population="x")[1].tolist() == [3]


def test_activity_heatmap_leaves_absent_units_blank():
    ax = plot.activity(_recording())
    mesh = ax.collections[0]
    data = mesh.get_array()
    assert np.ma.count_masked(data) == 4  # the NaN cells: unit 7 before birth, unit 0 after death
    plt.close(ax.figure)


def test_tiles_draw_each_row_and_refuse_bad_shapes():
    W = np.random.default_rng(0).standard_normal((5, 16))
    W[2] = 0.0
    ax = plot.tiles(W)
    img = ax.images[0].get_array()
    assert img.shape == (2 * 5 + 1, 3 * 5 + 1)  # 5 tiles of 4x4 in 3 columns, 1-pixel gaps
    assert np.ma.count_masked(img[1:5, 11:15]) == 16  # the dead unit (row 2 -> third tile) is blank
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="not a square"):
        plot.tiles(np.ones((2, 15)))
    with pytest.raises(ValueError, match="does not hold"):
        plot.tiles(np.ones((2, 15)), shape=(4, 4))


def test_facet_draws_a_panel_per_value_and_a_band_over_seeds():
    rng = np.random.default_rng(1)
    da = xr.DataArray(rng.standard_normal((2, 3, 4, 10)), dims=("rule", "eta", "seed", "time"),
                      coords={"rule": ["a", "b"], "eta": [0.1, 0.2, 0.3], "time": np.arange(10)}, name="error")
    fig = plot.facet(da, x="time", col="rule", hue="eta")
    axes = [a for a in fig.axes if a.get_visible()]
    assert len(axes) == 2 and len(axes[0].lines) == 3
    np.testing.assert_allclose(axes[0].lines[1].get_ydata(), np.median(da.sel(rule="a", eta=0.2).values, axis=0))
    plt.close(fig)
    with pytest.raises(ValueError, match="select or reduce"):
        plot.facet(da, x="time", col="rule")


def test_a_title_added_to_a_facet_figure_leaves_the_panel_titles_visible():
    """Tutorial 5 adds ``fig.suptitle`` after ``facet``: the title must not cover the panels' own titles."""
    rng = np.random.default_rng(2)
    da = xr.DataArray(rng.standard_normal((3, 2, 4, 10)), dims=("rate", "rule", "seed", "step"),
                      coords={"rate": [0.01, 0.1, 1.0], "rule": ["oja", "sanger"], "step": np.arange(10)},
                      name="subspace_error")
    fig = plot.facet(da, x="step", col="rate", hue="rule")
    title = fig.suptitle("subspace error (band: the seeds' 10-90 % range)")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    top = title.get_window_extent(renderer)
    panels = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 3 and all(p.width > 0 for p in panels)
    assert all(top.y0 >= p.y1 for p in panels), f"suptitle {top} overlaps a panel title {panels}"
    assert top.y1 <= fig.bbox.y1 + 0.5, "the title is cut off at the top of the figure"
    plt.close(fig)


@pytest.mark.slow  # runs the sweep CLI twice
def test_run_resume_reuses_the_finished_networks(tmp_path, capsys):
    out = tmp_path / "fig6"
    base = ["run", "sm_fig6_nonstationary", "--steps", "1100", "--out", str(out), "--no-progress"]
    assert main(base) == 0
    with xr.open_dataset(out / "sm_fig6_nonstationary.nc", engine="h5netcdf") as ds:
        first = ds.load()
    runs = sorted((out / "runs" / "runs").glob("run-*.nc"))
    assert len(runs) == 6
    kept = runs[1].stat().st_mtime_ns
    runs[0].unlink()  # as if killed before the first network finished
    assert main(base + ["--resume"]) == 0
    assert runs[1].stat().st_mtime_ns == kept and runs[0].exists()  # only the missing network ran again
    with xr.open_dataset(out / "sm_fig6_nonstationary.nc", engine="h5netcdf") as ds:
        for v in first.data_vars:
            if v != "run_seconds":
                np.testing.assert_array_equal(ds[v].values, first[v].values)
    capsys.readouterr()
    assert main(["run", "sm_offline_table1", "--resume", "--no-progress", "--out", str(tmp_path / "t")]) == 2
    assert "cannot resume" in capsys.readouterr().err


@pytest.mark.slow  # runs the sweep CLI over seeds
def test_cli_sweeps_fig4_fig5_over_seeds(tmp_path):
    out = tmp_path / "s45"
    assert main(["sweep", "sm_fig4_fig5_stationary", "--steps", "300", "--seeds", "0,1", "--executor", "serial",
                 "--out", str(out), "--no-progress"]) == 0
    with xr.open_dataset(out / "sm_fig4_fig5_stationary.nc", engine="h5netcdf") as ds:
        assert ds.eigenvalue_error.dims == ("regularizer", "seed", "T")
        assert np.isfinite(ds.eigenvalue_error).all()
    assert (out / "fig5_eigenvalue_error_sweep.png").stat().st_size > 0
