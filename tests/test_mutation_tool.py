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


def test_every_target_has_tests_and_mutants_are_small_valid_changes():
    tool = _tool()
    files = tool.target_files()
    assert "neurosim/kernels/plasticity.py" in files and "neurosim/engine.py" in files
    for f in files:
        for t in tool.tests_for(f):
            assert (ROOT / t).is_file(), (f, t)
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
