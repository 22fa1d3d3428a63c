"""Which mutants sit on lines that no test mapped to their module runs (the coverage map of docs/testing.md).

    python -m pip install coverage
    python benchmarks/mutation_coverage.py            # runs the mapped tests under coverage (a few minutes)
    python benchmarks/mutation_coverage.py --reuse    # only the report, from the last run's data

Runs the union of the test files ``benchmarks/mutation.py`` maps (``TESTS``) under coverage, one context per
test, through the suite's xdist workers; then, for every mutant outside an ``@njit`` function (coverage does
not see compiled code), asks whether a test of the mutant's own mapping executes its line. Lines run only at
import time are counted as run. Prints the not-run mutants per module and function.
"""

from __future__ import annotations

import argparse
import ast
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import mutation as M  # noqa: E402

DATA = Path(tempfile.gettempdir()) / "neurosim-mutation-coverage"


def run_tests():
    DATA.mkdir(exist_ok=True)
    for old in DATA.glob(".coverage*"):
        old.unlink()
    rc = DATA / "coveragerc"
    rc.write_text(f"[run]\ndynamic_context = test_function\nsource = {ROOT / 'neurosim'}\n"
                  f"data_file = {DATA / '.coverage'}\nparallel = True\npatch = subprocess\n")
    tests = sorted({t.split("::")[0] for _, ts in M.TESTS for t in ts})
    env = dict(os.environ, COVERAGE_RCFILE=str(rc))
    r = subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest", "-q",
                        "-p", "no:cacheprovider", *tests], cwd=ROOT, env=env)
    if r.returncode:
        sys.exit(f"the mapped tests failed (pytest exit {r.returncode}); no report")
    subprocess.run([sys.executable, "-m", "coverage", "combine", f"--rcfile={rc}", "-q"], cwd=ROOT, env=env,
                   check=True)


def report():
    import coverage

    data = coverage.CoverageData(str(DATA / ".coverage"))
    data.read()
    total = not_run = 0
    for f in M.target_files():
        mapped = {Path(t.split("::")[0]).stem for t in M.tests_for(f)}
        contexts = data.contexts_by_lineno(str(ROOT / f))
        tree = ast.parse((ROOT / f).read_text())
        compiled, owner = set(), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for line in range(node.lineno, node.end_lineno + 1):
                    if owner.get(line, (0, ""))[0] < node.lineno:
                        owner[line] = (node.lineno, node.name)
                if M._is_njit(node):
                    compiled.update(range(node.lineno, node.end_lineno + 1))
        missed = []
        for m in M.generate(f):
            total += 1
            seen = contexts.get(m.line, [])
            if m.line in compiled or seen == [""]:  # compiled code, or run at import time
                continue
            if not any(part in mapped for c in seen for part in c.split(".")):
                missed.append((owner.get(m.line, (0, "<module>"))[1], m.line, bool(seen)))
        not_run += len(missed)
        if missed:
            print(f"== {f}: {len(missed)} mutants on lines its mapped tests do not run")
            by = collections.defaultdict(set)
            for fn, line, elsewhere in missed:
                by[(fn, elsewhere)].add(line)
            for (fn, elsewhere), lines in sorted(by.items(), key=lambda kv: -len(kv[1])):
                where = "run by unmapped tests" if elsewhere else "run by no test"
                print(f"   {fn:36s} {where:22s} lines {sorted(lines)[:12]}")
    print(f"{not_run} of {total} mutants ({100 * not_run / total:.1f} %) sit on lines no mapped test runs")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reuse", action="store_true", help="report from the last run's coverage data")
    args = ap.parse_args(argv)
    try:
        import coverage  # noqa: F401
    except ImportError:
        sys.exit("needs coverage: python -m pip install coverage")
    if not args.reuse:
        run_tests()
    report()


if __name__ == "__main__":
    main()
