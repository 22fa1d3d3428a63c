"""Sweeps as scripts run them (issue 38): refusals that leave no trace, resumes that notice, runs that time out.

Each test writes a small script and runs it in a fresh interpreter, as a
user runs a sweep, and every subprocess has a deadline, so that an old
behaviour that hangs fails instead. Each failed before its fix:

* a sweep refused by its validation still wrote ``out/sweep.json``, and the
  corrected sweep was then refused as "holds another sweep";
* ``name="../x"`` wrote the combined file outside ``out``;
* a truncated run file aborted the resume with h5py's bare OSError;
* a resume after an edit of the model's code silently reused the old runs;
* a model that never returns stalled the sweep for ever (no ``timeout=``).

The models return results directly (no network, nothing to compile).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr

#: slow tier: every test starts interpreters (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow


def _script(tmp_path, text, name="sweep_script.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _run(script, *args, timeout=120):
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=script.parent)


REFUSED_THEN_CORRECTED = """
    import os
    import sys

    from neurosim.experiment import Sweep


    def check(rho):
        if rho < 0:
            raise ValueError(f"rho must be >= 0; got {rho}")


    def model(rho, seed):
        return {"y": 2.0 * rho + seed}


    if __name__ == "__main__":
        out = sys.argv[1]
        try:
            Sweep(model, grid={"rho": [-1.0, 2.0]}, check=check).run(out=out, progress=False)  # the typo
        except ValueError as err:
            print("refused:", str(err).splitlines()[0])
        print("left behind:", sorted(os.listdir(out)) if os.path.isdir(out) else None)
        ds = Sweep(model, grid={"rho": [1.0, 2.0]}, check=check).run(out=out, progress=False)
        print("ran:", ds.y.values.ravel().tolist())
"""


def test_a_refused_sweep_writes_nothing_and_the_corrected_one_runs(tmp_path):
    script = _script(tmp_path, REFUSED_THEN_CORRECTED)
    # a folder that does not exist yet is not made; one the user made stays as it was
    (tmp_path / "mine").mkdir()
    for out, before in [("new/out", None), ("mine", [])]:
        proc = _run(script, out)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("refused: sweep 'model': the model refuses 1 of 2 runs; nothing was run")
        assert lines[1] == f"left behind: {before}"
        assert lines[2] == "ran: [2.0, 4.0]"


PATH_NAME = """
    import sys

    from neurosim.experiment import Sweep


    def model(rho, seed):
        return {"y": rho}


    if __name__ == "__main__":
        for name in sys.argv[1:]:
            try:
                Sweep(model, grid={"rho": [1.0]}, name=name).run(out="out", progress=False)
                print("ran", name)
            except ValueError as err:
                print("refused:", err)
"""


def test_a_sweep_name_with_a_path_in_it_is_refused_before_anything(tmp_path):
    names = ["../x", "a/b", "..", ""]
    proc = _run(_script(tmp_path, PATH_NAME), *names)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(names)
    for name, line in zip(names, lines):
        assert line.startswith("refused: name must be a file name") and line.endswith(f"got {name!r}")
    assert sorted(os.listdir(tmp_path)) == ["sweep_script.py"]  # no out/, no x.nc beside it


STORED = """
    import sys

    from neurosim.experiment import Sweep


    def model(rho, seed):
        with open("calls.txt", "a") as f:
            f.write(f"{rho}\\n")
        return {"y": 10.0 * rho + seed}


    if __name__ == "__main__":
        ds = Sweep(model, grid={"rho": [1.0, 2.0, 3.0]}, seeds=[0, 1]).run(out="out", progress=False)
        print(ds.y.values.ravel().tolist())
"""


def test_a_truncated_run_file_is_named_and_run_again(tmp_path):
    script = _script(tmp_path, STORED)
    first = _run(script)
    assert first.returncode == 0, first.stderr[-3000:]
    damaged = sorted((tmp_path / "out" / "runs").glob("run-*.nc"))[2]
    damaged.write_bytes(damaged.read_bytes()[:200])  # as a full disk or a cut copy leaves it
    again = _run(script)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout == first.stdout
    assert "SweepStoreWarning" in again.stderr and damaged.name in again.stderr and "done again" in again.stderr
    assert (tmp_path / "calls.txt").read_text().count("\n") == 6 + 1  # only the damaged run ran again
    with xr.open_dataset(damaged, engine="h5netcdf") as ds:  # replaced by a whole file
        assert float(ds.y) in (10.0, 11.0, 20.0, 21.0, 30.0, 31.0)


EDITED = """
    import sys

    from neurosim.experiment import Sweep


    def gain():
        return 2.0


    def model(rho, seed):
        return {"y": gain() * rho + seed}


    def plot(ds):
        return None


    if __name__ == "__main__":
        kwargs = {"model_changed": sys.argv[1]} if len(sys.argv) > 1 else {}
        try:
            ds = Sweep(model, grid={"rho": [1.0, 2.0]}).run(out="out", progress=False, **kwargs)
        except ValueError as err:
            print("refused:", err)
        else:
            print(ds.y.values.ravel().tolist())
"""


def test_resuming_after_an_edit_of_the_model_asks_what_to_do_with_the_old_runs(tmp_path):
    script = _script(tmp_path, EDITED)

    def edit(old, new):
        script.write_text(script.read_text().replace(old, new))

    def run(*args):
        proc = _run(script, *args)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.strip()

    assert run() == "[2.0, 4.0]"
    runs = sorted((tmp_path / "out" / "runs").glob("run-*.nc"))
    stamps = [f.stat().st_mtime_ns for f in runs]
    edit("return 2.0", "return 3.0")  # a helper the model calls
    refused = run()
    assert refused.startswith("refused: out='out': 2 of its stored runs were made by another version of model")
    assert "model_changed='rerun'" in refused and "model_changed='keep'" in refused
    assert [f.stat().st_mtime_ns for f in runs] == stamps  # refused: nothing touched
    assert run("keep") == "[2.0, 4.0]"
    edit("return None", "return ds")  # code the model does not use
    assert run() == "[2.0, 4.0]"  # kept once is kept: no question again, and the plot's edit is not the model's
    edit("return 3.0", "return 5.0")  # an edit after the one accepted: the kept runs are old again
    assert run("rerun") == "[5.0, 10.0]"


NEVER_RETURNS = """
    import sys
    import time

    from neurosim.experiment import Sweep


    def model(rho, seed):
        if rho == 1.0:
            while True:  # never returns (a loop in compiled code would be no different to the worker)
                pass
        if rho == 2.0:
            time.sleep(3600)
        return {"y": 10.0 * rho + seed}


    if __name__ == "__main__":
        sweep = Sweep(model, grid={"rho": [0.0, 1.0, 2.0, 3.0]})
        try:
            sweep.run(timeout=3.0, progress=False)
        except ValueError as err:
            print("serial:", err)
        start = time.monotonic()
        ds = sweep.run(executor=sys.argv[1], workers=2, timeout=3.0, progress=False)
        print("took", time.monotonic() - start)
        for e in ds.error.values.ravel():
            print("error:", e)
        print("y:", ds.y.values.ravel().tolist())
"""


def _check_timeouts(proc, what):
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("serial: timeout=3 needs runs in worker processes")
    errors = [line[len("error: "):] for line in lines if line.startswith("error:")]
    assert len(errors) == 4
    assert errors[0] == errors[3] == ""
    for e in errors[1:3]:
        assert e.startswith("TimeoutError: the run took longer than timeout=3 s;") and what in e
    y = [float(v) for v in next(line for line in lines if line.startswith("y: "))[3:].strip("[]").split(",")]
    np.testing.assert_array_equal(y, [0.0, np.nan, np.nan, 30.0])
    return float(next(line for line in lines if line.startswith("took ")).split()[1])


def test_a_run_past_its_timeout_is_an_error_row_and_its_worker_is_replaced_on_processes(tmp_path):
    proc = _run(_script(tmp_path, NEVER_RETURNS), "processes", timeout=90)
    took = _check_timeouts(proc, "its worker process was killed and replaced")
    # two runs that never return on two workers: three seconds, then a fresh worker for the last run
    assert took < 30


def test_a_run_past_its_timeout_is_an_error_row_and_its_worker_replaced_on_dask(tmp_path):
    pytest.importorskip("dask.distributed")
    proc = _run(_script(tmp_path, NEVER_RETURNS), "dask", timeout=150)
    # the dying worker is not handed the next run: the last run succeeds on a fresh one
    _check_timeouts(proc, "its dask worker was killed (its nanny starts a fresh one)")
