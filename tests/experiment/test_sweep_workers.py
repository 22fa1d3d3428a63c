"""Supervised sweep workers (issue 23): a worker that dies is its run's error, and an unguarded script ends at once.

Before, a model that ended its process (``os._exit``, ``sys.exit``, SIGKILL:
also what the OOM killer and a segfault do) hung the sweep for ever on both
parallel executors, and a script running a sweep without a ``__main__``
guard restarted dying workers for ever. Each test has a deadline, so that
the old behaviour fails instead of hanging the suite.
"""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import xarray as xr

from neurosim.experiment import Sweep


@contextlib.contextmanager
def deadline(seconds):
    """Fail with TimeoutError (rather than hang) if the block runs longer than ``seconds``.

    SIGALRM reaches only the main thread; where the test runs in another, the block runs without a deadline.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    before = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def fragile(how, a, seed):
    """A model that ends its own process in the ways a run can die, or returns its result."""
    if how == "exit":
        os._exit(1)
    if how == "sys.exit":
        sys.exit(3)
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"x": a * np.random.default_rng(seed).standard_normal(3)}


DEATHS = {"exit": "worker died (exit code 1)", "sys.exit": "worker died (exit code 3)",
          "kill": "worker killed by signal SIGKILL"}


def _check(ds, hows, seeds):
    clean = Sweep(fragile, grid={"how": ["none"], "a": [1.0, 2.0]}, seeds=seeds).run(progress=False)
    xr.testing.assert_identical(ds.x.sel(how=["none"]), clean.x)
    assert (ds.error.sel(how="none") == "").all()
    for how in hows:
        for err in np.asarray(ds.error.sel(how=how).values).ravel():
            assert DEATHS[how] in str(err)
        assert np.isnan(ds.x.sel(how=how)).all()
    assert ds.attrs["sweep_failed"] == len(hows) * 2 * len(seeds)


@pytest.mark.slow
def test_a_worker_that_dies_is_its_runs_error_on_processes(tmp_path):
    hows = ["exit", "sys.exit", "kill"]
    sweep = Sweep(fragile, grid={"how": ["none", *hows], "a": [1.0, 2.0]}, seeds=[0, 1])
    with deadline(60):
        ds = sweep.run(executor="processes", workers=2, out=tmp_path, progress=False)
    _check(ds, hows, [0, 1])
    # the workers that are left serve the next sweep, and it gives the same bits
    with deadline(60):
        again = sweep.run(executor="processes", workers=2, out=tmp_path / "again", progress=False)
    xr.testing.assert_identical(again.x, ds.x)
    xr.testing.assert_identical(again.error, ds.error)


@pytest.mark.slow
def test_a_worker_that_dies_is_its_runs_error_on_dask():
    pytest.importorskip("dask.distributed")
    points = [{"how": "none", "a": 1.0}, {"how": "exit", "a": 1.0}, {"how": "kill", "a": 1.0},
              {"how": "none", "a": 2.0}]
    with deadline(90):
        ds = Sweep(fragile, points=points).run(executor="dask", workers=2, progress=False)
    errors = [str(e) for e in ds.error.values.ravel()]
    assert errors[0] == errors[3] == ""
    for err in errors[1:3]:
        assert "worker died" in err and "KilledWorker" in err
    clean = Sweep(fragile, points=[points[0], points[3]]).run(progress=False)
    np.testing.assert_array_equal(ds.x.isel(run=[0, 3]).values, clean.x.values)
    assert np.isnan(ds.x.isel(run=[1, 2])).all() and ds.attrs["sweep_failed"] == 2


UNGUARDED = """
import numpy as np
from neurosim.experiment import Sweep

def model(a, seed):
    return {"x": a + seed}

ds = Sweep(model, grid={"a": [1.0, 2.0]}, seeds=[0, 1]).run(executor="processes", workers=2, progress=False)
print("done", float(ds.x.sum()))
"""


@pytest.mark.slow
def test_an_unguarded_script_fails_at_once_with_the_guard_advice(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode != 0 and "done" not in proc.stdout
    assert 'if __name__ == "__main__":' in proc.stderr
    # the parent stops at the first worker that dies starting: no stream of restarted workers
    assert proc.stderr.count("Traceback") <= 4
    assert time.monotonic() - start < 60
    # guarded, the same script works
    guarded = UNGUARDED.replace("ds = Sweep", 'if __name__ == "__main__":\n    ds = Sweep').replace(
        'print("done"', '    print("done"')
    script.write_text(textwrap.dedent(guarded))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["done", "8.0"]


@pytest.mark.slow
def test_an_unguarded_script_on_dask_fails_at_once_with_the_guard_advice(tmp_path):
    pytest.importorskip("dask.distributed")
    script = tmp_path / "unguarded_dask.py"
    script.write_text(UNGUARDED.replace('executor="processes"', 'executor="dask"'))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode != 0 and "done" not in proc.stdout
    # refused in the sweep's process before any worker starts (old and new dask alike: before, the
    # cluster's failure to start was caught, and on distributed 2024.1 the nanny waited for ever)
    assert "RuntimeError: this sweep runs on worker processes" in proc.stderr
    assert 'if __name__ == "__main__":' in proc.stderr


GUARD_CASES = {
    # a main() called from the script's top level without the guard: refused before any worker starts
    "unguarded main()": ("def main():\n    run()\n\nmain()\n", False),
    "guarded main()": ("def main():\n    run()\n\nif __name__ == \"__main__\":\n    main()\n", True),
    "guarded, reversed": ("if \"__main__\" == __name__:\n    run()\n", True),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(GUARD_CASES))
def test_the_guard_is_read_from_the_line_of_the_script_that_runs(tmp_path, case):
    tail, runs = GUARD_CASES[case]
    script = tmp_path / "script.py"
    script.write_text("from neurosim.experiment import Sweep\n\n\ndef model(a, seed):\n    return {'x': a + seed}\n\n\n"
                      "def run():\n    ds = Sweep(model, grid={'a': [1.0, 2.0]}, seeds=[0]).run(executor='processes', "
                      "workers=2, progress=False)\n    print('done', float(ds.x.sum()))\n\n\n" + tail)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    if runs:
        assert proc.returncode == 0 and "done 3.0" in proc.stdout, proc.stderr[-2000:]
    else:
        assert proc.returncode != 0 and "done" not in proc.stdout
        assert "RuntimeError: this sweep runs on worker processes" in proc.stderr and "line 16 is not" in proc.stderr
        assert proc.stderr.count("Traceback") == 1  # the parent's own: no worker ever started


SEMAPHORES = """
import multiprocessing
import time

import numpy as np
import neurosim as ns

HELD = []


def model(a, seed):
    net = ns.Network(seed=seed)
    x = ns.Population("x", 2)
    net.add(x)
    net.connect(ns.GaussianStream(np.ones(2), seed=seed), x)
    net.run(2, backend="python")  # the engine's progress bar (off): tqdm's write lock, a named semaphore before
    if a == 1:
        time.sleep(60)  # stopped at the timeout: its worker is killed
    HELD.append(multiprocessing.Lock())  # a model's own semaphore, kept until its worker ends
    return {"x": float(a)}


if __name__ == "__main__":
    ds = ns.Sweep(model, grid={"a": [0, 1]}, seeds=[0]).run(executor="processes", workers=2, timeout=6,
                                                               progress=False)
    print("failed", ds.attrs["sweep_failed"])
"""


@pytest.mark.slow
def test_a_process_sweep_leaves_no_semaphore_behind(tmp_path):
    # Before, the script ended with multiprocessing's resource tracker warning "There appear to be 2 leaked
    # semaphore objects": at exit, multiprocessing's own handler ran before neurosim's shutdown and terminated the
    # idle workers (the kept one's semaphores stayed registered), and the worker killed at its timeout took tqdm's
    # lock with it.
    script = tmp_path / "semaphores.py"
    script.write_text(SEMAPHORES)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "failed 1", proc.stderr[-2000:]
    assert "TimeoutError" in proc.stdout  # the killed worker's run, reported
    assert "leaked semaphore" not in proc.stderr and "resource_tracker" not in proc.stderr, proc.stderr[-2000:]
