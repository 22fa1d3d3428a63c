"""Where the test suite's time goes: the slowest tests, each directory's total, and numba's compile share.

Run the suite with ``NEUROSIM_TEST_TIMINGS=PREFIX`` (``tests/conftest.py`` then
writes each test's wall time and the seconds numba spent compiling during it
to ``PREFIX.<worker>.json``, one file per xdist worker), then::

    python benchmarks/suite_timings.py PREFIX [--top 25]

or, for a run without that plugin (no compile split), from pytest's own
report: ``python -m pytest --junitxml=run.xml`` and
``python benchmarks/suite_timings.py --junit run.xml``.

Times are per test (set-up, call and tear-down): their sum over workers is
CPU-side test time, larger than the wall time of a parallel run. Compilation
inside subprocesses that tests start is not seen (it counts as run time).
Prints Markdown tables (the ones in ``docs/testing.md``).
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import sys
import xml.etree.ElementTree as ET


def load_plugin(prefix: str) -> dict:
    rows = {}
    files = sorted(glob.glob(f"{prefix}.*.json"))
    if not files:
        raise SystemExit(f"no timing files {prefix}.*.json (run pytest with NEUROSIM_TEST_TIMINGS={prefix})")
    for f in files:
        rows.update({k: tuple(v) for k, v in json.load(open(f)).items()})
    return rows


def load_junit(path: str) -> dict:
    rows = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        rows[f"{module}.py::{case.get('name')}"] = (float(case.get("time", 0.0)), float("nan"))
    return rows


def directory(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    parts = path.split("/")
    return "/".join(parts[:2]) + "/" if len(parts) > 2 else parts[0] + " (top level)"


def report(rows: dict, top: int) -> str:
    out = []
    total = sum(t for t, _ in rows.values())
    compiled = sum(c for _, c in rows.values())
    split = compiled == compiled  # NaN when loaded from junit
    out.append(f"{len(rows)} tests, {total:.0f} s of test time"
               + (f", {compiled:.0f} s of it compiling ({compiled / total:.0%})" if split else ""))
    out.append("")
    out.append(f"| slowest {top} tests | s | compile s | compile share |" if split else f"| slowest {top} tests | s |")
    out.append("|---|---:|---:|---:|" if split else "|---|---:|")
    for node, (t, c) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:top]:
        out.append(f"| `{node}` | {t:.1f} | {c:.1f} | {c / t:.0%} |" if split and t else f"| `{node}` | {t:.1f} |")
    out.append("")
    per = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for node, (t, c) in rows.items():
        d = per[directory(node)]
        d[0] += 1
        d[1] += t
        d[2] += c
    out.append("| directory | tests | s | compile s | compile share |" if split else "| directory | tests | s |")
    out.append("|---|---:|---:|---:|---:|" if split else "|---|---:|---:|")
    for name, (n, t, c) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        out.append(f"| {name} | {n} | {t:.0f} | {c:.0f} | {c / t:.0%} |" if split and t else f"| {name} | {n} | {t:.0f} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefix", nargs="?", help="the NEUROSIM_TEST_TIMINGS prefix of a run")
    ap.add_argument("--junit", help="a pytest --junitxml file instead (no compile split)")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    if not args.prefix and not args.junit:
        ap.error("give a timings prefix or --junit FILE")
    rows = load_junit(args.junit) if args.junit else load_plugin(args.prefix)
    print(report(rows, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
