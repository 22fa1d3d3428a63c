"""Smoke tests of the paper-002 online simulations (Figs. 4-6) on tiny runs."""

import pytest
import xarray as xr

from neurosim.simulations import sm_fig4_fig5_stationary as stat
from neurosim.simulations import sm_fig6_nonstationary as nonstat

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow


def _check_module(mod):
    assert isinstance(mod.NAME, str) and mod.NAME
    assert isinstance(mod.DESCRIPTION, str) and mod.DESCRIPTION
    assert isinstance(mod.DEFAULT_STEPS, int) and mod.DEFAULT_STEPS > 0


def test_stationary_smoke(tmp_path):
    _check_module(stat)
    paths = stat.run(steps=1500, out=tmp_path, progress=False)
    assert set(paths) == {"dataset", "fig4", "fig5"}
    for p in paths.values():
        assert p.exists() and p.stat().st_size > 0
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        for v in ("output_eigenvalues", "target_eigenvalues", "eigenvalue_error", "subspace_error",
                  "subspace_error_rank_p", "input_eigenvalues", "alpha"):
            assert v in ds
        assert list(ds.regularizer.values) == ["TY", "XY", "YY"]
        assert int(ds["T"].values[-1]) == 1500
        assert ds.output_eigenvalues.shape[-1] == stat.K
        assert ds.attrs["steps"] == 1500 and ds.attrs["eta"] == 0.1


def test_nonstationary_smoke(tmp_path):
    _check_module(nonstat)
    paths = nonstat.run(steps=1500, out=tmp_path, progress=False)
    assert set(paths) == {"dataset", "fig6", "fig6_no_forgetting"}
    for p in paths.values():
        assert p.exists() and p.stat().st_size > 0
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        for v in ("output_eigenvalues", "input_eigenvalues", "phase_output_eigenvalues", "active_outputs",
                  "phase_target_eigenvalues", "alpha"):
            assert v in ds
        assert ds.active_outputs.shape == (3, 2, 2)  # regularizer, beta, phases ending at 1000 and 1500
        assert list(ds.phase_end.values) == [1000, 1500]
        assert ds.attrs["window_T0"] == 1000
