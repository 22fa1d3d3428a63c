"""``neurosim list`` / ``neurosim run`` / ``neurosim sweep``: listing, running, and clear errors for bad arguments."""

import pathlib
import subprocess
import sys

import pytest
import xarray as xr

from neurosim.cli import available, main


def test_list_names_every_simulation_with_its_description(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in available():
        assert name in out
    assert "sm_fig6_nonstationary" in available()


def test_version_prints_the_packages_version_and_exits_0(capsys):
    import neurosim

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"neurosim {neurosim.__version__}\n"


@pytest.mark.slow  # subprocesses
def test_version_from_the_console_script_and_python_m():
    import neurosim

    script = pathlib.Path(sys.executable).parent / "neurosim"  # installed beside this interpreter by pip install
    commands = [[sys.executable, "-m", "neurosim", "--version"]] + ([[str(script), "--version"]] if script.exists() else [])
    for command in commands:
        r = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert (r.returncode, r.stdout, r.stderr) == (0, f"neurosim {neurosim.__version__}\n", ""), command


def test_unknown_simulation_is_a_usage_error(capsys):
    assert main(["run", "no_such_sim"]) == 2
    assert "unknown simulation 'no_such_sim'" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["run", "sm_fig4_fig5_stationary", "--steps", "1"], "steps must be in [2, inf)"),
    (["run", "sm_offline_table1", "--out", "/proc/neurosim_cannot_write_here"], "FileNotFoundError"),
])
def test_arguments_a_simulation_refuses_give_one_line_and_exit_2(argv, message, capsys, monkeypatch):
    monkeypatch.delenv("NEUROSIM_DEBUG", raising=False)
    assert main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.slow  # subprocesses
def test_argparse_rejects_negative_steps_and_seed():
    for flag in ("--steps", "--seed"):
        r = subprocess.run([sys.executable, "-m", "neurosim", "run", "sm_offline_table1", flag, "-3"],
                           capture_output=True, text=True)
        assert r.returncode == 2 and "Traceback" not in r.stderr and flag.strip("-") in r.stderr


def test_run_writes_and_reports_its_files(tmp_path, capsys):
    assert main(["run", "sm_offline_table1", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "done in" in out and str(tmp_path) in out
    assert any(p.suffix == ".nc" for p in tmp_path.iterdir())


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("argv, message", [
    # a bare MemoryError before: the range was listed before it was counted
    (["--seeds", "0-99999999999"], "--seeds 0-99999999999 names 100000000000 seeds; a sweep has at most"),
    (["--seeds", "7-3"], "--seeds FIRST-LAST needs FIRST <= LAST"),
    # '' was passed to the model as a value
    (["--grid", "regularizer=TY,,YY"], "--grid regularizer: an empty value in 'TY,,YY'"),
    # said "repeats a value" (two empty ones)
    (["--grid", "regularizer=,"], "--grid regularizer: an empty value in ','"),
])
def test_sweep_arguments_that_name_nothing_are_refused_by_name(argv, message, tmp_path):
    r = subprocess.run([sys.executable, "-m", "neurosim", "sweep", "sm_fig6_nonstationary", "--steps", "40",
                        "--executor", "serial", "--no-progress", *argv], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and message in r.stderr, r.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was written


@pytest.mark.slow  # runs the sweep command four times
def test_a_refused_sweep_blocks_no_later_sweep_and_each_sweep_has_its_own_default_folder(tmp_path):
    def sweep(regularizers):
        return subprocess.run([sys.executable, "-m", "neurosim", "sweep", "sm_fig6_nonstationary", "--steps", "40",
                               "--grid", f"regularizer={regularizers}", "--grid", "beta=1.0", "--executor", "serial",
                               "--no-progress"], capture_output=True, text=True, timeout=300, cwd=tmp_path)

    def dataset(proc):
        assert proc.returncode == 0, proc.stderr[-2000:]
        return tmp_path / next(line.split()[1] for line in proc.stdout.splitlines() if "dataset:" in line)

    typo = sweep("TY,bogus")
    assert typo.returncode == 2 and "the model refuses 1 of 2 runs" in typo.stderr
    assert list(tmp_path.iterdir()) == []  # before: out/sm_fig6_nonstationary_sweep/sweep.json, refusing what follows
    ty = dataset(sweep("TY"))
    yy = dataset(sweep("YY"))  # another sweep of the same simulation, with the default --out: before, refused
    assert ty.parent != yy.parent and ty.parent.parent == yy.parent.parent == tmp_path / "out" / "sm_fig6_nonstationary_sweep"
    for path, value in [(ty, "TY"), (yy, "YY")]:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            assert list(ds.regularizer.values) == [value]
    # the same command again finds its own folder and its run there: nothing runs again
    (run_file,) = ty.parent.glob("runs/run-*.nc")
    stamp = run_file.stat().st_mtime_ns
    assert dataset(sweep("TY")) == ty and run_file.stat().st_mtime_ns == stamp


@pytest.mark.slow  # starts two worker processes
def test_the_sweep_command_runs_on_worker_processes(tmp_path):
    # `python -m neurosim sweep` defaults to processes; its own __main__ was an unguarded script, so the check that
    # protects users' scripts refused every such sweep
    r = subprocess.run([sys.executable, "-m", "neurosim", "sweep", "sm_fig6_nonstationary", "--steps", "40",
                        "--grid", "regularizer=TY", "--grid", "beta=1.0", "--seeds", "0-1", "--executor", "processes",
                        "--workers", "2", "--no-progress"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "dataset:" in r.stdout
