"""``neurosim reproduce``: every simulation, on several seeds, each in a process of its own, with provenance.

One *task* is one simulation (``neurosim.simulations.NAME.run``) with its
keyword arguments: at full length (its defaults), or shortened with
``quick=True`` (its ``QUICK`` arguments, what CI runs). A simulation whose
``run`` takes ``n_seeds`` runs its seeds itself (``n_seeds`` at least
``seeds``) into ``out/NAME``; one that does not runs once per seed, ``seed =
0, 1, ...``, each into ``out/seed-S/NAME``, beside the other simulations of
that seed: a simulation that reads another's output (``REPRODUCE_AFTER``, the
names of those simulations; the sparse-coding bar tests read the bases that
``sc_fig2_bases`` learned) finds it in its own folder's parent, and starts
after it has finished. Tasks run in worker processes (``python -m
neurosim.reproduce TASK.json``), at most ``workers`` at a time, so that a
crash, a segfault or an exhausted memory ends one task with its error, not
the reproduction.

Each finished task writes ``provenance.json`` into its folder, last and
atomically: the simulation, its arguments, the files it wrote, the commit
and whether the tree had changes, the versions of Python and of the
packages that compute the numbers, the machine, and the wall and CPU time.
A reproduction run again skips the tasks whose provenance shows the same
arguments and code (commit and tree state): a stopped reproduction continues
where it stopped, and one whose code changed runs again. ``out/summary.json``
lists every task's outcome.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import inspect
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

__all__ = ["Task", "plan", "provenance", "reproduce", "MIN_SEEDS"]

#: a claim is reproduced or not on several seeds: fewer are refused
MIN_SEEDS = 3
#: the distributions whose versions a provenance records (what computes and stores the numbers)
PACKAGES = ("neurosim-circuits", "numpy", "numba", "llvmlite", "scipy", "scikit-learn", "xarray", "networkx",
            "matplotlib", "pandas", "h5netcdf", "zarr")
_ROOT = Path(__file__).resolve().parents[1]
#: written first into a reproduction's folder: a folder that holds files and not this one is someone else's
MARKER = "reproduction.json"


@dataclasses.dataclass(frozen=True)
class Task:
    """One simulation run of a reproduction.

    Parameters
    ----------
    name : str
        The simulation (``neurosim list``).
    module : str
        The module that defines its ``run`` (imported by the worker process).
    kwargs : dict
        Keyword arguments of its ``run`` besides ``out`` and ``progress``.
    folder : str
        Where it writes, relative to the reproduction's folder.
    after : tuple of str
        Folders of tasks that must finish first (what it reads of theirs).
    """

    name: str
    module: str
    kwargs: dict
    folder: str
    after: tuple = ()

    def key(self) -> dict:
        """What identifies the task's result besides the code.

        Returns
        -------
        dict
            ``{"simulation": name, "kwargs": kwargs}``.
        """
        return {"simulation": self.name, "kwargs": self.kwargs}


def plan(simulations: dict, seeds: int = MIN_SEEDS, quick: bool = False) -> list[Task]:
    """The tasks that reproduce ``simulations`` (``{NAME: module}``) on ``seeds`` seeds.

    Parameters
    ----------
    simulations : dict of str to module
        Simulation modules, as :func:`neurosim.cli.available` gives them.
    seeds : int >= MIN_SEEDS
        Seeds of every simulation.
    quick : bool
        Each simulation's ``QUICK`` arguments (shortened runs) instead of its
        defaults (the paper's length).

    Returns
    -------
    list of Task
        In the order of ``simulations``; a simulation named in another's
        ``REPRODUCE_AFTER`` must come before it to be waited for.

    Raises
    ------
    ValueError
        If ``seeds < MIN_SEEDS``, or ``quick`` and a simulation has no
        ``QUICK``.
    """
    from neurosim._validation import check_int

    seeds = check_int("seeds", seeds, low=MIN_SEEDS)
    tasks, folders = [], {}
    for name, module in simulations.items():
        kwargs = {}
        if quick:
            if not isinstance(getattr(module, "QUICK", None), dict):
                raise ValueError(f"simulation {name!r} defines no QUICK arguments (a dict of shortened run "
                                 "arguments): it cannot run in a quick reproduction")
            kwargs = dict(module.QUICK)
        runs: list[tuple[int | None, dict, str]]
        if "n_seeds" in inspect.signature(module.run).parameters:
            kwargs["n_seeds"] = max(seeds, kwargs.get("n_seeds") or 0)
            runs = [(None, kwargs, name)]
        else:
            runs = [(seed, {**kwargs, "seed": seed}, f"seed-{seed}/{name}") for seed in range(seeds)]
        for seed, run_kwargs, folder in runs:
            folders[name, seed] = folder
            after = tuple(folders[dep, seed] for dep in getattr(module, "REPRODUCE_AFTER", ()) if (dep, seed) in folders)
            tasks.append(Task(name, module.__name__, run_kwargs, folder, after))
    return tasks


def _commit() -> dict:
    """The git commit of neurosim's source tree and whether it had changes (``None`` outside a checkout)."""
    def git(*args):
        proc = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=60)
        return proc.stdout.strip() if proc.returncode == 0 else None

    try:
        head = git("rev-parse", "HEAD")
        status = git("status", "--porcelain", "--untracked-files=no") if head else None
    except (OSError, subprocess.SubprocessError):
        head = status = None
    return {"commit": head, "tree_changed": bool(status) if head else None}


def _versions() -> dict:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def provenance(task: Task, files: dict, wall: float, cpu: float, code: dict | None = None) -> dict:
    """What made a task's files: arguments, code, versions, machine, time.

    Parameters
    ----------
    task : Task
        The task that ran.
    files : dict of str to path
        What the simulation's ``run`` returned.
    wall, cpu : float
        Seconds: elapsed, and CPU time of the process and its children.
    code : dict, optional
        ``{"commit", "tree_changed"}``; default: read from git now.

    Returns
    -------
    dict
        JSON-serialisable.
    """
    return {
        **task.key(),
        "code": code if code is not None else _commit(),
        "versions": _versions(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()},
        "files": {key: str(path) for key, path in (files or {}).items()},
        "wall_seconds": round(wall, 6),
        "cpu_seconds": round(cpu, 6),
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _write_json(path: Path, data: dict) -> None:
    """Write atomically: a stopped process leaves the old file or none, never half of one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(partial, path)


def run_task(task: Task, out: Path, code: dict, resume: bool = False) -> dict:
    """Run one task in this process and write its provenance; return the provenance.

    ``resume``: the simulation continues the runs it stored in an earlier,
    stopped attempt at the same task (simulations whose ``run`` takes
    ``resume``).
    """
    folder = Path(out) / task.folder
    folder.mkdir(parents=True, exist_ok=True)
    run = importlib.import_module(task.module).run
    extra = {"resume": True} if resume and "resume" in inspect.signature(run).parameters else {}
    start_wall, start_cpu = time.perf_counter(), _cpu_seconds()
    files = run(out=folder, progress=False, **task.kwargs, **extra)
    record = provenance(task, files, time.perf_counter() - start_wall, _cpu_seconds() - start_cpu, code)
    _write_json(folder / "provenance.json", record)
    return record


def _same_task(spec: Path, task: Task) -> bool:
    """Whether ``spec`` (an earlier attempt's ``task.json``) describes ``task``."""
    try:
        earlier = json.loads(spec.read_text())
    except (OSError, ValueError):
        return False
    return earlier.get("name") == task.name and earlier.get("kwargs") == json.loads(json.dumps(task.kwargs))


def _done(task: Task, out: Path, code: dict) -> bool:
    """Whether ``task`` finished before with the same arguments and code (its provenance says so)."""
    try:
        record = json.loads((Path(out) / task.folder / "provenance.json").read_text())
    except (OSError, ValueError):
        return False
    same_code = code["commit"] is not None and not code["tree_changed"] and record.get("code") == code
    return same_code and {k: record.get(k) for k in task.key()} == json.loads(json.dumps(task.key()))


def reproduce(tasks: Sequence[Task], out: str | os.PathLike, workers: int = 1,
              say: Callable[[str], None] | None = None, timeout: float | None = None) -> dict:
    """Run ``tasks`` in worker processes, ``workers`` at a time; skip those already done with the same code.

    Parameters
    ----------
    tasks : sequence of Task
        What to run, in this order (as :func:`plan` makes them).
    out : path-like
        The reproduction's folder (created).
    workers : int >= 1
        Tasks running at once.
    say : callable, optional
        Progress lines (``say(text)``).
    timeout : float, optional
        Seconds a task may take; a task past it is killed and reported.

    Returns
    -------
    dict
        ``{folder: {"status": "done" | "kept" | "failed", ...}}``, also
        written to ``out/summary.json``.
    """
    from neurosim._validation import check_int

    workers = check_int("workers", workers, low=1)
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise ValueError(f"out={str(out)!r} holds files and is not a reproduction's folder (no {MARKER}): "
                         "give an empty or new folder, or one an earlier reproduction wrote")
    out.mkdir(parents=True, exist_ok=True)
    if not (out / MARKER).is_file():
        _write_json(out / MARKER, {"neurosim_reproduction": 1})
    code = _commit()
    say = say or (lambda text: None)
    summary: dict = {}
    queue = []
    for task in tasks:
        if _done(task, out, code):
            summary[task.folder] = {"status": "kept"}
            say(f"{task.folder}: kept (finished before with the same arguments and code)")
        else:
            queue.append(task)
    running: dict = {}
    try:
        _drain(queue, running, out, code, workers, timeout, summary, say)
    finally:  # an interrupt (Ctrl-C) or an error here: no worker outlives the reproduction
        for proc, log, _ in running.values():
            proc.kill()
            proc.wait()
            log.close()
        _write_json(out / "summary.json", summary)
    return summary


def _drain(queue, running, out, code, workers, timeout, summary, say):
    """Start queued tasks while fewer than ``workers`` run; record each as it ends."""
    while queue or running:
        while queue and len(running) < workers:
            task = _next_ready(queue, summary, say)
            if task is None:
                if not running:  # waiting for tasks that will never run (not planned before it): say so, stop
                    for task in queue:
                        summary[task.folder] = {"status": "failed", "why": f"waits for {', '.join(task.after)}, "
                                                "which did not run before it"}
                    queue.clear()
                break
            (out / task.folder).mkdir(parents=True, exist_ok=True)
            spec = out / task.folder / "task.json"
            # the same task stopped before (its spec is there, its provenance not): the simulation resumes it
            resume = _same_task(spec, task)
            (out / task.folder / "provenance.json").unlink(missing_ok=True)  # an older code's: not this run's
            _write_json(spec, {**dataclasses.asdict(task), "out": str(out.resolve()), "code": code, "resume": resume})
            log = open(out / task.folder / "log.txt", "w")
            proc = subprocess.Popen([sys.executable, "-m", "neurosim.reproduce", str(spec)], stdout=log,
                                    stderr=subprocess.STDOUT)
            running[task.folder] = (proc, log, time.perf_counter())
            say(f"{task.folder}: started")
        time.sleep(0.2)
        for folder, (proc, log, started) in list(running.items()):
            late = timeout is not None and time.perf_counter() - started > timeout
            if proc.poll() is None and not late:
                continue
            if late and proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
            del running[folder]
            took = time.perf_counter() - started
            if proc.returncode == 0:
                summary[folder] = {"status": "done", "wall_seconds": round(took, 3)}
                say(f"{folder}: done in {took:.1f} s")
            else:
                tail = (out / folder / "log.txt").read_text(errors="replace")[-2000:]
                why = f"killed after {timeout:g} s (timeout)" if late else f"exit status {proc.returncode}"
                summary[folder] = {"status": "failed", "why": why, "log_tail": tail}
                say(f"{folder}: FAILED ({why}); see {out / folder / 'log.txt'}")


def _next_ready(queue: list, summary: dict, say) -> Task | None:
    """Take the first queued task whose ``after`` tasks have finished; fail those whose ``after`` failed."""
    for task in list(queue):
        failed = [dep for dep in task.after if summary.get(dep, {}).get("status") == "failed"]
        if failed:
            queue.remove(task)
            summary[task.folder] = {"status": "failed", "why": f"needs {', '.join(failed)}, which failed"}
            say(f"{task.folder}: FAILED (needs {', '.join(failed)}, which failed)")
        elif all(summary.get(dep, {}).get("status") in ("done", "kept") for dep in task.after):
            queue.remove(task)
            return task
    return None


def _worker(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    task = Task(spec["name"], spec["module"], spec["kwargs"], spec["folder"], tuple(spec["after"]))
    run_task(task, Path(spec["out"]), spec["code"], resume=spec.get("resume", False))
    return 0


if __name__ == "__main__":  # a worker process of reproduce()
    sys.exit(_worker(sys.argv[1]))
