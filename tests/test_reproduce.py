"""``neurosim reproduce`` (neurosim/reproduce.py): tasks, worker processes, provenance, resuming, failures.

The simulations here are small modules written into ``tmp_path`` (on the
workers' ``PYTHONPATH``): each writes a file of its arguments and counts its
calls, so a test sees which tasks ran, with what, and how often.
"""

import json
import sys
import textwrap
import types

import pytest

from neurosim import reproduce
from neurosim.cli import available, main

SIM = textwrap.dedent("""
    import json, pathlib, time
    NAME = "{name}"
    DESCRIPTION = "a test simulation"
    DEFAULT_STEPS = 5
    QUICK = {{"steps": 2}}

    def run(steps=None, out="out", seed=0, progress=True, {extra}):
        out = pathlib.Path(out)
        calls = out / "calls.txt"
        calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
        {body}
        path = out / "result.json"
        path.write_text(json.dumps({{"steps": steps, "seed": seed, {fields}}}))
        return {{"result": path}}
""")


def _simulation(root, name, extra="n_seeds=None", fields='"n_seeds": n_seeds', body="pass"):
    (root / f"{name}.py").write_text(SIM.format(name=name, extra=extra, fields=fields, body=body))
    sys.path.insert(0, str(root))
    try:
        module = __import__(name)
    finally:
        sys.path.remove(str(root))
    return module


@pytest.fixture
def sims(tmp_path, monkeypatch):
    root = tmp_path / "sims"
    root.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(root))
    yield root
    for name in ("with_seeds", "per_seed", "broken", "slow", "resumable", "reader"):
        sys.modules.pop(name, None)


def test_a_simulation_with_n_seeds_runs_them_itself_and_another_once_per_seed(sims):
    a = _simulation(sims, "with_seeds")
    b = _simulation(sims, "per_seed", extra="", fields='"n_seeds": None')
    tasks = reproduce.plan({"a": a, "b": b}, seeds=3)
    assert [(t.name, t.kwargs, t.folder) for t in tasks] == [
        ("a", {"n_seeds": 3}, "a"),
        ("b", {"seed": 0}, "seed-0/b"), ("b", {"seed": 1}, "seed-1/b"), ("b", {"seed": 2}, "seed-2/b")]
    quick = reproduce.plan({"a": a}, seeds=4, quick=True)
    assert quick[0].kwargs == {"steps": 2, "n_seeds": 4}
    with pytest.raises(ValueError, match="seeds must be"):
        reproduce.plan({"a": a}, seeds=2)
    bare = types.SimpleNamespace(__name__="bare", run=a.run)
    with pytest.raises(ValueError, match="'bare' defines no QUICK"):
        reproduce.plan({"bare": bare}, quick=True)


@pytest.mark.slow  # worker processes, each importing neurosim
def test_each_task_writes_its_files_and_provenance_and_a_second_reproduction_keeps_them(sims, tmp_path):
    tasks = reproduce.plan({"a": _simulation(sims, "with_seeds"), "b": _simulation(sims, "per_seed", extra="",
                                                                                   fields='"n_seeds": None')},
                           seeds=3, quick=True)
    out = tmp_path / "out"
    summary = reproduce.reproduce(tasks, out, workers=2)
    assert {k: v["status"] for k, v in summary.items()} == {"a": "done", "seed-0/b": "done", "seed-1/b": "done",
                                                            "seed-2/b": "done"}
    assert json.loads((out / "summary.json").read_text()) == summary
    assert json.loads((out / "a" / "result.json").read_text()) == {"steps": 2, "seed": 0, "n_seeds": 3}
    assert json.loads((out / "seed-2/b" / "result.json").read_text())["seed"] == 2
    record = json.loads((out / "seed-1/b" / "provenance.json").read_text())
    assert record["simulation"] == "b" and record["kwargs"] == {"steps": 2, "seed": 1}
    assert record["files"] == {"result": str(out / "seed-1/b" / "result.json")}
    assert record["versions"]["numpy"] and record["versions"]["python"]
    assert record["wall_seconds"] > 0 and record["cpu_seconds"] >= 0
    assert set(record["code"]) == {"commit", "tree_changed"}
    again = reproduce.reproduce(tasks, out, workers=2)
    code = record["code"]
    if code["commit"] is not None and not code["tree_changed"]:  # the same code: nothing runs again
        assert {v["status"] for v in again.values()} == {"kept"}
        assert (out / "a" / "calls.txt").read_text() == "x"
    else:  # changed or unknown code: every task runs again, as it must
        assert {v["status"] for v in again.values()} == {"done"}
        assert (out / "a" / "calls.txt").read_text() == "xx"


@pytest.mark.slow  # worker processes, each importing neurosim
def test_a_finished_task_with_other_arguments_runs_again(sims, tmp_path, monkeypatch):
    monkeypatch.setattr(reproduce, "_commit", lambda: {"commit": "abc", "tree_changed": False})
    module = _simulation(sims, "with_seeds")
    out = tmp_path / "out"
    reproduce.reproduce(reproduce.plan({"a": module}, seeds=3, quick=True), out)
    assert reproduce.reproduce(reproduce.plan({"a": module}, seeds=3, quick=True), out)["a"]["status"] == "kept"
    assert reproduce.reproduce(reproduce.plan({"a": module}, seeds=4, quick=True), out)["a"]["status"] == "done"
    assert json.loads((out / "a" / "result.json").read_text())["n_seeds"] == 4
    monkeypatch.setattr(reproduce, "_commit", lambda: {"commit": "def", "tree_changed": False})
    assert reproduce.reproduce(reproduce.plan({"a": module}, seeds=4, quick=True), out)["a"]["status"] == "done"
    assert (out / "a" / "calls.txt").read_text() == "xxx"


@pytest.mark.slow  # worker processes, each importing neurosim
def test_a_failing_or_hanging_task_is_reported_and_the_others_finish(sims, tmp_path):
    good = _simulation(sims, "with_seeds")
    broken = _simulation(sims, "broken", body='raise RuntimeError("the model diverged at step 3")')
    slow = _simulation(sims, "slow", body="time.sleep(60)")
    out = tmp_path / "out"
    summary = reproduce.reproduce(reproduce.plan({"broken": broken, "slow": slow, "good": good}, quick=True), out,
                                  workers=3, timeout=6.0)
    assert summary["good"]["status"] == "done"
    assert summary["broken"]["status"] == "failed" and "exit status 1" in summary["broken"]["why"]
    assert "the model diverged at step 3" in summary["broken"]["log_tail"]
    assert summary["slow"]["status"] == "failed" and "timeout" in summary["slow"]["why"]
    assert not (out / "broken" / "provenance.json").exists()


@pytest.mark.slow  # worker processes, each importing neurosim
def test_a_stopped_task_resumes_in_the_simulation(sims, tmp_path, monkeypatch):
    monkeypatch.setattr(reproduce, "_commit", lambda: {"commit": "abc", "tree_changed": False})
    module = _simulation(sims, "resumable", extra="resume=False, n_seeds=None",
                         fields='"n_seeds": n_seeds, "resume": resume')
    out = tmp_path / "out"
    task = reproduce.plan({"r": module}, quick=True)
    reproduce.reproduce(task, out)
    assert json.loads((out / "r" / "result.json").read_text())["resume"] is False
    (out / "r" / "provenance.json").unlink()  # as if stopped before its end: the spec is there, no provenance
    reproduce.reproduce(task, out)
    assert json.loads((out / "r" / "result.json").read_text())["resume"] is True


@pytest.mark.slow  # worker processes, each importing neurosim
def test_a_simulation_reading_anothers_output_starts_after_it_beside_it(sims, tmp_path):
    first = _simulation(sims, "per_seed", extra="", fields='"n_seeds": None', body="time.sleep(1.0)")
    # reads the first's result of its seed from its sibling folder: present only if it ran first
    second = _simulation(sims, "reader", extra="", fields='"read": json.loads((out.parent / "a" / "result.json")'
                                                         '.read_text())["seed"]')
    second.REPRODUCE_AFTER = ("a",)
    tasks = reproduce.plan({"a": first, "b": second}, quick=True)
    assert [t.after for t in tasks] == [(), (), (), ("seed-0/a",), ("seed-1/a",), ("seed-2/a",)]
    summary = reproduce.reproduce(tasks, tmp_path / "out", workers=3)
    assert {v["status"] for v in summary.values()} == {"done"}
    for seed in range(3):
        assert json.loads((tmp_path / "out" / f"seed-{seed}" / "b" / "result.json").read_text())["read"] == seed
    broken = _simulation(sims, "broken", extra="", fields='"n_seeds": None', body='raise RuntimeError("no")')
    tasks = reproduce.plan({"a": broken, "b": second}, quick=True)
    summary = reproduce.reproduce(tasks, tmp_path / "out2", workers=2)
    assert summary["seed-1/b"] == {"status": "failed", "why": "needs seed-1/a, which failed"}
    backwards = reproduce.plan({"b": second, "a": first}, quick=True)  # the reader planned first: never waits
    assert all(t.after == () for t in backwards)


def test_a_folder_of_someone_elses_is_refused_and_left_alone(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "summary.json").write_text("my notes")
    with pytest.raises(ValueError, match="not a reproduction's folder"):
        reproduce.reproduce([], theirs)
    assert (theirs / "summary.json").read_text() == "my notes"
    assert sorted(p.name for p in theirs.iterdir()) == ["summary.json"]


def test_every_simulation_has_quick_arguments_its_run_takes():
    for name, module in available().items():
        assert isinstance(getattr(module, "QUICK", None), dict), name
        unknown = set(module.QUICK) - set(__import__("inspect").signature(module.run).parameters)
        assert not unknown, (name, unknown)


def test_the_command_line_refuses_unknown_simulations_and_too_few_seeds(capsys, tmp_path):
    assert main(["reproduce", "--only", "no_such_simulation", "--out", str(tmp_path / "o")]) == 2
    assert "unknown simulation(s) no_such_simulation" in capsys.readouterr().err
    assert main(["reproduce", "--seeds", "2", "--out", str(tmp_path / "o")]) == 2
    assert "seeds must be" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
