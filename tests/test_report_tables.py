"""Report tables generated from data (``neurosim.report_tables``, ``neurosim tables``; issue 41).

The first test is the one that guards the reports: every generated table in
``docs/reports`` shows exactly the numbers of its data file.
"""

import json
import math
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from neurosim import report_tables as rt

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "docs" / "reports"


def test_every_report_table_shows_its_data_exactly():
    assert rt.check_reports(REPORTS) == []
    assert rt.load_data(REPORTS), "no generated tables: docs/reports/data is empty"


def test_a_number_typed_over_a_generated_table_is_caught(tmp_path):
    copy = tmp_path / "reports"
    shutil.copytree(REPORTS, copy)
    name, _ = next((n, b) for md in sorted(copy.glob("*.md")) for n, b in rt.blocks(md.read_text()))
    md = next(md for md in sorted(copy.glob("*.md")) if any(n == name for n, _ in rt.blocks(md.read_text())))
    text = md.read_text()
    body = dict(rt.blocks(text))[name]
    lines = body.splitlines()
    cells = lines[2].split(" | ")
    cells[-2] = cells[-2] + "1"  # one digit more in one cell of the first row
    lines[2] = " | ".join(cells)
    md.write_text(text.replace(body, "\n".join(lines) + "\n"))
    problems = rt.check_reports(copy)
    assert len(problems) == 1 and name in problems[0] and "differs from its data" in problems[0]


def test_render_formats_numbers_by_column_and_composite_cells_by_their_own_format():
    t = rt.Table("sim/key", ["name", "x", "mean ± sd"],
                 [["a", 0.123456, rt.cell("{m:.3f} ± {s:.3f} ({n}/3)", m=1.0, s=0.25, n=2)],
                  ["b|c", float("inf"), None]],
                 formats=[None, ".3g", None])
    assert rt.render(t) == ("| name | x | mean ± sd |\n|---|---:|---|\n"
                            "| a | 0.123 | 1.000 ± 0.250 (2/3) |\n| b\\|c | inf |  |\n")
    assert rt.render(rt.Table("sim/h", ["max |w|"], [[1.0]])).startswith("| max \\|w\\| |\n")  # headers too
    numeric = rt.Table("sim/n", ["k", "v"], [[1, 2.5], [2, 0.5]])
    assert rt.render(numeric).splitlines()[1] == "|---:|---:|"  # numbers right-aligned by default


@pytest.mark.parametrize("bad", [
    dict(name="no-slash", columns=["a"], rows=[[1]]),
    dict(name="s/k", columns=["a", "b"], rows=[[1]]),
    dict(name="s/k", columns=["a"], rows=[[1]], formats=[".3g", ".3g"]),
])
def test_malformed_tables_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="table|name"):
        rt.Table(**bad)


def test_a_composite_cell_whose_format_does_not_fit_is_refused_when_made():
    with pytest.raises(KeyError):
        rt.cell("{mean:.3f} ± {sd:.3f}", mean=1.0)


def test_data_files_keep_floats_exactly(tmp_path):
    values = [0.1 + 0.2, 1e-300, 123456789.123456789, -0.0, math.pi]
    t = rt.Table("sim/exact", ["v"], [[v] for v in values], formats=[".17g"])
    rt.write_data(tmp_path, "sim", [t], {"code": {"commit": "abc"}})
    back = rt.load_data(tmp_path)["sim/exact"]
    assert [r[0] for r in back.rows] == values
    assert rt.render(back) == rt.render(t)
    with pytest.raises(ValueError, match="does not belong"):
        rt.write_data(tmp_path, "other", [t], {})


def test_fill_rewrites_named_blocks_only_and_keeps_the_rest_of_the_report():
    text = ("intro\n<!-- table: s/a -->\nold\n<!-- end table -->\nmiddle\n"
            "<!-- table: s/b -->\nkept\n<!-- end table -->\nend\n")
    t = rt.Table("s/a", ["x"], [[1.5]])
    out = rt.fill(text, {"s/a": t})
    assert out == ("intro\n<!-- table: s/a -->\n" + rt.render(t) + "<!-- end table -->\nmiddle\n"
                   "<!-- table: s/b -->\nkept\n<!-- end table -->\nend\n")
    assert rt.fill(out, {"s/a": t}) == out  # idempotent


def _fake_reproduction(root: Path, per_seed: bool, values: dict[int, float]):
    """A reproduction folder as `neurosim reproduce` leaves it, for a simulation called ``fake``."""
    def write(folder: Path, ds):
        folder.mkdir(parents=True)
        ds.to_netcdf(folder / "fake.nc", engine="h5netcdf")
        (folder / "provenance.json").write_text(json.dumps({
            "simulation": "fake", "kwargs": {}, "code": {"commit": "c0ffee", "tree_changed": False},
            "files": {"dataset": str(folder / "fake.nc")}, "wall_seconds": 1.0, "cpu_seconds": 1.0}))
    if per_seed:
        for seed, v in values.items():
            write(root / f"seed-{seed}" / "fake", xr.Dataset({"score": ((), v)}))
    else:
        seeds = sorted(values)
        write(root / "fake", xr.Dataset({"score": ("seed", [values[s] for s in seeds])}, coords={"seed": seeds}))


def _fake_module(figures=None):
    def tables(ds):
        return [rt.Table("fake/scores", ["seed", "score"],
                         [[int(s), float(ds.score.sel(seed=s))] for s in ds.seed.values], formats=[None, ".4f"])]
    return types.SimpleNamespace(tables=tables, **({"REPORT_FIGURES": figures} if figures else {}))


@pytest.mark.parametrize("per_seed", [False, True])
def test_publish_writes_the_data_and_fills_the_report_from_a_reproduction(tmp_path, per_seed):
    _fake_reproduction(tmp_path / "repro", per_seed, {0: 0.5, 1: 0.25, 2: 0.125})
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "r.md").write_text("# R\n<!-- table: fake/scores -->\n| typed |\n<!-- end table -->\nafter\n")
    sims = {"fake": _fake_module()}
    checked = rt.publish(tmp_path / "repro", reports, sims, check_only=True)
    assert checked["problems"] == [] and not (reports / "data").exists()  # --check writes nothing
    result = rt.publish(tmp_path / "repro", reports, sims)
    assert result["tables"] == ["fake/scores"] and result["problems"] == []
    text = (reports / "r.md").read_text()
    assert "| 0 | 0.5000 |\n| 1 | 0.2500 |\n| 2 | 0.1250 |\n" in text and text.endswith("after\n")
    data = json.loads((reports / "data" / "fake.json").read_text())
    assert data["provenance"]["code"]["commit"] == "c0ffee"
    assert rt.check_reports(reports) == []


def test_publish_names_a_report_table_the_simulation_does_not_make(tmp_path):
    _fake_reproduction(tmp_path / "repro", False, {0: 1.0, 1: 2.0, 2: 3.0})
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "r.md").write_text("<!-- table: fake/gone -->\nx\n<!-- end table -->\n")
    result = rt.publish(tmp_path / "repro", reports, {"fake": _fake_module()}, check_only=True)
    assert result["problems"] == ["r.md: table 'fake/gone' is not among fake's tables"]


def _with_figure(repro: Path, data: bytes = b"\x89PNG fake"):
    """Give the fake run a figure, listed among its files as a simulation's run lists it."""
    folder = repro / "fake"
    (folder / "fake.png").write_bytes(data)
    record = json.loads((folder / "provenance.json").read_text())
    record["files"]["figure"] = str(folder / "fake.png")
    record.update(kwargs={"n_seeds": 3}, finished="2026-11-29T10:00:00+00:00")
    (folder / "provenance.json").write_text(json.dumps(record))


def test_publish_copies_the_figures_a_simulation_names_and_records_their_run(tmp_path):
    _fake_reproduction(tmp_path / "repro", False, {0: 0.5, 1: 0.25, 2: 0.125})
    _with_figure(tmp_path / "repro")
    reports = tmp_path / "reports"
    (reports / "figures").mkdir(parents=True)
    (reports / "r.md").write_text("<!-- table: fake/scores -->\n<!-- end table -->\n")
    other = {"other.png": {"simulation": "other", "commit": "1" * 40}}
    (reports / "figures" / "provenance.json").write_text(json.dumps({"figures": other}))
    sims = {"fake": _fake_module({"fake.png": "paper999_fake.png"})}
    assert rt.publish(tmp_path / "repro", reports, sims, check_only=True)["problems"] == []
    assert not (reports / "figures" / "paper999_fake.png").exists()  # --check copies nothing
    result = rt.publish(tmp_path / "repro", reports, sims)
    assert result["figures"] == ["paper999_fake.png"]
    assert (reports / "figures" / "paper999_fake.png").read_bytes() == b"\x89PNG fake"
    records = rt.figure_provenance(reports)
    assert records["other.png"] == other["other.png"]  # the records of other figures stay
    rec = records["paper999_fake.png"]
    assert (rec["simulation"], rec["source"], rec["commit"], rec["seeds"]) == ("fake", "fake.png", "c0ffee", [0, 1, 2])
    assert rec["kwargs"] == {"n_seeds": 3} and rec["wall_seconds"] == 1.0 and rec["finished"].startswith("2026-11-29")
    assert rec["sha256"] == __import__("hashlib").sha256(b"\x89PNG fake").hexdigest()
    _with_figure(tmp_path / "repro", b"\x89PNG redrawn")  # a later reproduction replaces the copy and its record
    rt.publish(tmp_path / "repro", reports, sims)
    assert (reports / "figures" / "paper999_fake.png").read_bytes() == b"\x89PNG redrawn"
    assert rt.figure_provenance(reports)["paper999_fake.png"]["sha256"] != rec["sha256"]


def test_a_figure_the_run_did_not_write_is_named(tmp_path):
    _fake_reproduction(tmp_path / "repro", False, {0: 0.5, 1: 0.25, 2: 0.125})
    reports = tmp_path / "reports"
    reports.mkdir()
    sims = {"fake": _fake_module({"fake.png": "paper999_fake.png"})}
    checked = rt.publish(tmp_path / "repro", reports, sims, check_only=True)
    assert len(checked["problems"]) == 1 and "wrote no 'fake.png'" in checked["problems"][0]
    with pytest.raises(FileNotFoundError, match="wrote no 'fake.png'"):
        rt.publish_figures(tmp_path / "repro", reports, sims)
    assert not (reports / "figures").exists()


def test_cells_over_seeds_count_the_seeds_that_agree_and_leave_undefined_ones_out():
    def shown(c):
        return c["fmt"].format(**c["values"])

    assert shown(rt.mean_sd([0.25, 0.75])) == "0.500 ± 0.354"
    assert shown(rt.mean_sd([1.0, float("nan")], ".1f")) == "1.0 ± 0.0 (1 undefined)"
    assert rt.mean_sd([float("nan")] * 3) is None and rt.paired([float("nan")]) is None
    assert shown(rt.paired([0.01, -0.02, 0.0])) == "-0.003 ± 0.015 (2/3)"  # >= 0: a tie agrees
    assert shown(rt.paired([0.01, -0.02, 0.0], holds=">")) == "-0.003 ± 0.015 (1/3)"
    assert shown(rt.paired([-0.5, -0.25], ".2f", holds="<")) == "-0.38 ± 0.18 (2/2)"
    assert shown(rt.per_seed([1, -2, 3], "+d")) == "+1, -2, +3"
    with pytest.raises(ValueError, match="holds"):
        rt.paired([1.0], holds="=>")


def test_a_missing_run_is_an_error_that_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run of 'fake'"):
        rt.reproduction_dataset(tmp_path, "fake")


@pytest.mark.slow  # runs a simulation (2 s cold); CI's quick reproduction runs `neurosim tables --check` too
def test_the_offline_table_is_made_from_the_dataset_and_refuses_seeds_that_disagree(tmp_path):
    from neurosim.simulations import sm_offline_table1 as sim

    files = sim.run(out=tmp_path / "run", progress=False)
    with xr.open_dataset(files["dataset"], engine="h5netcdf") as ds:
        ds = ds.load()
    (table,) = sim.tables(ds)
    assert table.name == "sm_offline_table1/table1" and len(table.rows) == 15
    # Table I's closed forms, by hand, for a = 1, b = 0.5, n1 = 3, n2 = 61: TY [b, a), XY [b, a) / (n1 a + n2 b)
    ty, xy = table.rows[0], table.rows[1]
    assert (ty[2], ty[3], ty[5]) == ("TY", 0.5, 1.0)
    assert xy[2] == "XY" and xy[3] == pytest.approx(0.5 / 33.5, rel=1e-15) and xy[5] == pytest.approx(1 / 33.5, rel=1e-15)
    both = xr.concat([ds, ds], dim="seed").assign_coords(seed=[0, 1])
    assert sim.tables(both)[0].rows == table.rows
    changed = both.copy(deep=True)
    changed["table_lo"][1, 0, 0] = 0.7
    with pytest.raises(ValueError, match="differs between seeds"):
        sim.tables(changed)


@pytest.mark.slow  # runs a simulation (2 s cold)
def test_the_command_checks_a_reproduction_and_refuses_a_missing_reports_folder(tmp_path):
    run = subprocess.run([sys.executable, "-m", "neurosim", "tables", "--out", str(tmp_path), "--reports",
                          str(tmp_path / "nope")], capture_output=True, text=True)
    assert run.returncode == 2 and "--reports" in run.stderr and "is not a folder" in run.stderr
