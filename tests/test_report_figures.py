"""Every figure of the reports says where it came from (issue 41).

A figure in ``docs/reports/figures`` is one of three kinds:

* copied from a reproduction by ``neurosim tables`` (a simulation's
  ``REPORT_FIGURES``), with its run recorded in ``figures/provenance.json``
  (simulation, commit, seeds, arguments, wall seconds, finished date, and
  the SHA-256 of the copy, so that a figure replaced by hand is caught);
* drawn by a script that is not a simulation: :data:`MADE_ELSEWHERE`
  names the script;
* pending: drawn by an earlier run, before figures had provenance, and not
  yet published from a full reproduction: :data:`PENDING` says what will
  publish it. The suite warns about each (``pytest -rw`` lists them) so the
  list is seen; a figure leaves it when ``neurosim tables`` publishes it
  (the test then insists that it does).

``docs/reports/README.md`` describes the procedure.
"""

import hashlib
import re
import warnings
from pathlib import Path

import pytest

from neurosim import report_tables as rt

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "docs" / "reports"
FIGURES = REPORTS / rt.FIGURES

#: figures drawn by scripts that are not simulations (no reproduction makes them): figure -> the script
MADE_ELSEWHERE = {
    # from the timings that benchmarks/bench_odl_peers.py prints (docs/performance.md has the commands)
    "ng_odl_peers.png": "benchmarks/plot_odl_peers.py",
    # its plot_sweep, by `neurosim sweep sm_fig6_nonstationary --seeds 0-7` (a sweep over 8 seeds, not a
    # reproduction): re-drawn 2026-11-29 at b7467af, 48 runs, the same counts as the report's table on every seed
    "paper002_fig6_sweep.png": "simulations/sm_fig6_nonstationary.py",
}

#: figures drawn before figures had provenance, not yet published from a full reproduction: figure -> what will
#: publish it. Remove a line when `neurosim tables --out REPRODUCTION --only SIMULATION` has copied the figure.
PENDING: dict = {}  # none left (2026-11-29: every report figure is published from a run or made by a named command)


@pytest.fixture(scope="module")
def recorded():
    return rt.figure_provenance(REPORTS)


@pytest.fixture(scope="module")
def declared():
    """``{report figure: (simulation, source)}`` of every simulation's ``REPORT_FIGURES``."""
    from neurosim.cli import available

    out = {}
    for name, module in available().items():
        for source, target in (getattr(module, "REPORT_FIGURES", None) or {}).items():
            assert target not in out, f"{target} is claimed by {out[target][0]} and {name}"
            out[target] = (name, source)
    return out


def test_every_report_figure_has_provenance_or_is_made_elsewhere_or_pending(recorded):
    pngs = sorted(p.name for p in FIGURES.glob("*.png"))
    kinds = {name: [kind for kind, names in (("provenance.json", recorded), ("MADE_ELSEWHERE", MADE_ELSEWHERE),
                                             ("PENDING", PENDING)) if name in names] for name in pngs}
    assert [n for n, k in kinds.items() if not k] == [], "figures with no provenance, no script and not pending"
    both = {n: k for n, k in kinds.items() if len(k) > 1}
    assert both == {}, "a published figure stays listed elsewhere: remove it from MADE_ELSEWHERE / PENDING"
    gone = sorted((set(MADE_ELSEWHERE) | set(PENDING) | set(recorded)) - set(pngs))
    assert gone == [], "listed figures that are not in docs/reports/figures"
    pending = [n for n, k in kinds.items() if k == ["PENDING"]]
    if pending:
        warnings.warn(f"{len(pending)} of {len(pngs)} report figures are pending (drawn before figures had "
                      f"provenance; see tests/test_report_figures.py): {', '.join(pending)}", stacklevel=1)


def test_published_figures_are_the_files_their_records_describe(recorded, declared):
    assert recorded, "docs/reports/figures/provenance.json records no figure"
    for name, rec in recorded.items():
        data = (FIGURES / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == rec["sha256"], f"{name} differs from the copy neurosim tables made"
        assert declared.get(name) == (rec["simulation"], rec["source"]), \
            f"{name}: {rec['simulation']}'s REPORT_FIGURES does not map {rec['source']!r} to it"
        assert re.fullmatch(r"[0-9a-f]{40}", rec["commit"] or "") and rec["tree_changed"] is False, \
            f"{name}: drawn by a run without a clean commit"
        assert rec["seeds"] and rec["wall_seconds"] > 0 and rec["finished"], name


def test_a_figure_a_simulation_declares_is_published_or_pending(recorded, declared):
    unpublished = sorted(set(declared) - set(recorded) - set(PENDING))
    assert unpublished == [], "REPORT_FIGURES names figures that neurosim tables has not published and PENDING lacks"


def test_figures_made_elsewhere_name_scripts_that_exist():
    for name, script in MADE_ELSEWHERE.items():
        assert (ROOT / script).is_file(), f"{name}: {script} does not exist"


def test_every_figure_a_report_shows_exists():
    missing = []
    for md in sorted(REPORTS.glob("*.md")):
        for link in re.findall(r"\]\(figures/([^)]+)\)", md.read_text()):
            if not (FIGURES / link).is_file():
                missing.append(f"{md.name}: figures/{link}")
    assert missing == []
