"""``neurosim list`` / ``neurosim run``: listing, running, and clear errors for bad arguments."""

import subprocess
import sys

import pytest

from neurosim.cli import available, main


def test_list_names_every_simulation_with_its_description(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in available():
        assert name in out
    assert "sm_fig6_nonstationary" in available()


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
