"""Smoke test of benchmarks/mutation.py's mutant generator (it runs no mutant: that takes an hour)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "benchmarks" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _doctest_modules():
    spec = importlib.util.spec_from_file_location("doctests_of_the_suite", ROOT / "tests" / "test_doctests.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return set(mod.MODULES)


def test_every_target_has_tests_and_mutants_are_small_valid_changes():
    tool = _tool()
    files = tool.target_files()
    assert "neurosim/kernels/plasticity.py" in files and "neurosim/engine.py" in files
    doctest_modules = _doctest_modules()
    for f in files:
        for t in tool.tests_for(f):
            path, _, node = t.partition("::")
            assert (ROOT / path).is_file(), (f, t)
            if node:
                # a module's doctests, by node id: the id must name a module tests/test_doctests.py runs
                assert node.startswith("test_examples_run[") and node.endswith("]"), (f, t)
                assert node[len("test_examples_run["):-1] in doctest_modules, (f, t)
    mutants = tool.generate("neurosim/kernels/triggers.py")
    src = (ROOT / "neurosim/kernels/triggers.py").read_text()
    kinds = {m.kind for m in mutants}
    assert {"compare-boundary", "const-bool", "range-stop"} <= kinds, kinds
    seen = set()
    for m in mutants:
        new = tool.apply(m, src)
        assert new != src and new not in seen
        seen.add(new)
        compile(new, m.path, "exec")
        # one hunk, touching the mutated line only
        d = tool.diff(m).splitlines()
        assert sum(line.startswith("@@") for line in d) == 1, d
    # the mean_below comparison the trigger tests pin down is among them
    assert any(m.before == "acc / flat.size < threshold" and "<=" in m.after for m in mutants)


def test_ids_select_a_line_and_a_rerun_finds_a_mutant_whose_line_moved():
    tool = _tool()
    path = "neurosim/kernels/triggers.py"
    mutants = tool.generate(path)
    m = next(m for m in mutants if m.before == "acc / flat.size < threshold" and "<=" in m.after)
    line_hits, missing = tool.select(mutants, [f"triggers.py:{m.line}"])
    assert m in line_hits and not missing
    assert all(h.line == m.line for h in line_hits)
    one, _ = tool.select(mutants, [m.ident])
    assert m in one and all(h.kind == m.kind for h in one)
    assert tool.select(mutants, ["triggers.py:100000"]) == ([], ["triggers.py:100000"])
    # a --json record of the same change two lines further down (code inserted above it since)
    old = dict(vars(m), line=m.line - 2, start=[m.start[0] - 2, m.start[1]], end=[m.end[0] - 2, m.end[1]])
    assert tool.relocate(mutants, old) == m
    assert tool.relocate(mutants, dict(old, before="gone")) is None


def test_the_quick_tier_stage_reads_failed_nodes_and_copies_what_the_suite_reads():
    tool = _tool()
    out = ("...F\n=== short test summary info ===\n"
           "FAILED tests/a/test_x.py::test_one[a - b] - AssertionError: 1 != 2\n"
           "ERROR tests/b.py::test_two - RuntimeError\n"
           "FAILED tests/c.py::test_three\n"
           "!!!!! stopping after 1 failures !!!!!\n")
    assert tool._failed_nodes(out) == ["tests/a/test_x.py::test_one[a - b]", "tests/c.py::test_three"]
    assert tool._failed_nodes("2 passed in 0.1s\n") == []
    assert [tool._status(rc, "") for rc in (None, 0, 1, 2, 4)] == ["timeout", "survived", "killed", "error", "error"]
    assert tool._status(1, "E   numba.core.errors.TypingError: ...") == "error"
    assert tool.SUITE[-1] == "tests" and "not slow" in tool.SUITE
    # every pattern a worker copies names something tracked here (a pattern matching nothing hides a typo)
    for pattern in tool.COPY:
        assert list(ROOT.glob(pattern)), pattern
