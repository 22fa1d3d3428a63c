"""Report tables generated from a reproduction's data, and the check that a report shows them (issue 41).

A simulation that backs a report table defines ``tables(ds)``: a pure
function of its dataset (the ``.nc`` file its ``run`` writes, with a ``seed``
dimension) returning :class:`Table` objects. The numbers of a table are kept
as numbers, with the format each is shown in, so that a table is data first
and text second.

* ``neurosim tables`` (:func:`publish`) computes every simulation's tables from
  a reproduction's folder (``neurosim reproduce``), writes them with the
  reproduction's provenance to ``docs/reports/data/NAME.json`` and rewrites
  the blocks of the reports that show them::

      <!-- table: sm_offline_table1/table1 -->
      | a | b | ... |
      <!-- end table -->

* :func:`check_reports` (run by the test suite) renders every block's table
  from its data file and compares it with the report's text: a number typed
  by hand, or left from an older run, fails it.

* Figures: a simulation whose figures a report shows names them in
  ``REPORT_FIGURES`` (the file its run wrote, as listed in its
  ``provenance.json``, to the name under ``docs/reports/figures/``);
  :func:`publish` copies them there and records, per figure, the run that
  drew it (simulation, commit, seeds, arguments, wall seconds, finished
  date, the copy's SHA-256) in ``docs/reports/figures/provenance.json``
  (:func:`publish_figures`). The test suite checks that every figure of the
  reports is recorded there, or made by a named script, or listed as
  pending.

:func:`mean_sd`, :func:`paired` and :func:`per_seed` are the cells of
summaries over seeds that the tables share.

Tables are small (a few kB of JSON); the datasets they come from stay in the
reproduction's folder.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["Table", "cell", "mean_sd", "paired", "per_seed", "render", "blocks", "fill", "check_reports", "load_data",
           "write_data", "publish", "publish_figures", "figure_provenance", "reproduction_dataset", "data_file",
           "FIGURES", "FIGURE_PROVENANCE"]

#: where the reports' figures are, under the reports' folder
FIGURES = "figures"
#: the record of the figures :func:`publish_figures` copied, under :data:`FIGURES`
FIGURE_PROVENANCE = "provenance.json"

#: a block of a report that shows a generated table (its body is replaced by :func:`fill`)
BLOCK = re.compile(r"<!-- table: (?P<name>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+) -->\n(?P<body>.*?)<!-- end table -->\n?",
                   re.S)


@dataclasses.dataclass(frozen=True)
class Table:
    """One generated table: columns, rows of cells and each column's number format.

    Parameters
    ----------
    name : str
        ``SIMULATION/KEY``, unique among the reports (the block's name).
    columns : sequence of str
        Column headings.
    rows : sequence of sequences
        Cells: a string, an int, a float (shown with its column's format),
        ``None`` (an empty cell) or a :func:`cell` (several numbers in one
        cell, shown with its own format).
    formats : sequence of str, optional
        A format spec per column for float cells (``".5f"``, ``".3g"``,
        ``"+.0%"``); ``None`` or ``""`` shows ``repr``-free ``g`` format.
    align : sequence of str, optional
        ``"l"`` or ``"r"`` per column (default: right for columns of numbers).
    """

    name: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    formats: Sequence[str | None] | None = None
    align: Sequence[str] | None = None

    def __post_init__(self):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", self.name):
            raise ValueError(f"a table's name is SIMULATION/KEY (letters, digits, _ . -); got {self.name!r}")
        n = len(self.columns)
        for what, seq in (("formats", self.formats), ("align", self.align)):
            if seq is not None and len(seq) != n:
                raise ValueError(f"table {self.name!r}: {what} has {len(seq)} entries for {n} columns")
        for i, row in enumerate(self.rows):
            if len(row) != n:
                raise ValueError(f"table {self.name!r}: row {i} has {len(row)} cells for {n} columns")

    def to_json(self) -> dict:
        """The table as JSON-ready data.

        Returns
        -------
        dict
            ``columns``, ``formats``, ``align`` and ``rows``; floats are kept
            exactly (``json`` writes their shortest repr).
        """
        return {"columns": list(self.columns), "formats": None if self.formats is None else list(self.formats),
                "align": None if self.align is None else list(self.align),
                "rows": [[_cell_json(c) for c in row] for row in self.rows]}

    @classmethod
    def from_json(cls, name: str, data: Mapping) -> "Table":
        """The table :meth:`to_json` wrote.

        Parameters
        ----------
        name : str
            ``SIMULATION/KEY``.
        data : mapping
            What :meth:`to_json` returned.

        Returns
        -------
        Table
        """
        return cls(name, data["columns"], [list(r) for r in data["rows"]], data.get("formats"), data.get("align"))


def cell(fmt: str, **values) -> dict:
    """A cell holding several numbers, shown as ``fmt.format(**values)``.

    Parameters
    ----------
    fmt : str
        A ``str.format`` template naming the values.
    **values : int or float
        The numbers.

    Returns
    -------
    dict
        ``{"fmt": fmt, "values": values}`` (JSON-ready).

    Raises
    ------
    KeyError
        When ``fmt`` names a value not given.

    Examples
    --------
    >>> from neurosim.report_tables import cell
    >>> cell("{mean:.3f} ± {sd:.3f}", mean=0.01249, sd=0.00037)["fmt"]
    '{mean:.3f} ± {sd:.3f}'
    """
    fmt.format(**values)  # a format that does not fit its values fails here, not when rendered
    return {"fmt": fmt, "values": {k: _number(v) for k, v in values.items()}}


def _finite(values):
    import numpy as np

    x = np.asarray(values, dtype=np.float64).ravel()
    return x[np.isfinite(x)], int(np.count_nonzero(~np.isfinite(x)))


def mean_sd(values, fmt: str = ".3f") -> dict | None:
    """Mean ± sd (``ddof = 1``; 0 for one value) over seeds, as a :func:`cell`.

    Parameters
    ----------
    values : array_like
        One number per seed; NaN (undefined on a seed) is left out and
        counted in the cell (``"(1 undefined)"``).
    fmt : str
        The format of both numbers (``".3f"``, ``"+.3f"``, ``".0f"``); the sd
        never carries a sign.

    Returns
    -------
    dict or None
        The cell; ``None`` (an empty cell) when no value is defined.

    Examples
    --------
    >>> from neurosim.report_tables import mean_sd
    >>> c = mean_sd([0.5, 0.7, 0.9])
    >>> c["fmt"].format(**c["values"])
    '0.700 ± 0.200'
    """
    x, undefined = _finite(values)
    if x.size == 0:
        return None
    sd_fmt = fmt.lstrip("+ ")
    text = "{mean:" + fmt + "} ± {sd:" + sd_fmt + "}" + (" ({undefined} undefined)" if undefined else "")
    extra = {"undefined": undefined} if undefined else {}
    return cell(text, mean=float(x.mean()), sd=float(x.std(ddof=1)) if x.size > 1 else 0.0, **extra)


def paired(diff, fmt: str = "+.3f", holds: str = ">=") -> dict | None:
    """A per-seed paired difference (same seed: same data and draws) as mean ± sd and the seeds that agree.

    Parameters
    ----------
    diff : array_like
        ``a - b`` per seed; NaN (undefined on a seed) is left out and
        counted.
    fmt : str
        The format of the mean (the sd drops the sign).
    holds : {">=", ">", "<=", "<"}
        The claim about ``a - b`` whose seeds are counted: ``">="`` for "a
        at least as good as b", ``">"`` for "a better", ``"<"`` for "a
        lower".

    Returns
    -------
    dict or None
        ``"MEAN ± SD (K/N)"``, ``K`` the seeds on which the claim holds,
        ``N`` the seeds on which ``diff`` is defined; ``None`` when none is.

    Examples
    --------
    >>> from neurosim.report_tables import paired
    >>> c = paired([0.02, -0.01, 0.03])
    >>> c["fmt"].format(**c["values"])
    '+0.013 ± 0.021 (2/3)'
    """
    import operator

    import numpy as np

    ops = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
    if holds not in ops:
        raise ValueError(f"holds must be one of {sorted(ops)}; got {holds!r}")
    x, undefined = _finite(diff)
    if x.size == 0:
        return None
    k = int(np.count_nonzero(ops[holds](x, 0)))
    sd_fmt = fmt.lstrip("+ ")
    text = "{mean:" + fmt + "} ± {sd:" + sd_fmt + "} ({k}/{n})" + (" ({undefined} undefined)" if undefined else "")
    extra = {"undefined": undefined} if undefined else {}
    return cell(text, mean=float(x.mean()), sd=float(x.std(ddof=1)) if x.size > 1 else 0.0, k=k, n=int(x.size),
                **extra)


def per_seed(values, fmt: str = "+.3f", sep: str = ", ") -> dict:
    """Every seed's value in one cell, in seed order (``"+0.048, +0.040, +0.066"``).

    Parameters
    ----------
    values : array_like
        One number per seed.
    fmt : str
        The format of each.
    sep : str
        Between values.

    Returns
    -------
    dict
        The cell (values named ``s0``, ``s1``, ... by position).
    """
    import numpy as np

    x = np.asarray(values).ravel()
    return cell(sep.join("{s%d:%s}" % (i, fmt) for i in range(x.size)), **{f"s{i}": v for i, v in enumerate(x)})


def _number(v):
    if isinstance(v, (bool, str)) or v is None:
        return v
    if isinstance(v, int) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu"):
        return int(v)
    return float(v)


def _cell_json(c):
    if isinstance(c, dict):
        return c
    return _number(c)


def _show(value, fmt: str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return value["fmt"].format(**value["values"])
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return format(value, fmt or "g")
    return str(value)


def render(table: Table) -> str:
    """The table as GitHub markdown.

    Parameters
    ----------
    table : Table
        The table to show.

    Returns
    -------
    str
        Header, alignment row and one line per row, each ending with a newline.
    """
    n = len(table.columns)
    formats = list(table.formats) if table.formats is not None else [None] * n
    if table.align is not None:
        align = list(table.align)
    else:
        align = ["r" if table.rows and all(isinstance(r[j], (int, float)) and not isinstance(r[j], bool)
                                           for r in table.rows) else "l" for j in range(n)]
    lines = ["| " + " | ".join(str(c).replace("|", "\\|") for c in table.columns) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    for row in table.rows:
        lines.append("| " + " | ".join(_show(c, formats[j]).replace("|", "\\|") for j, c in enumerate(row)) + " |")
    return "\n".join(lines) + "\n"


def blocks(text: str) -> list[tuple[str, str]]:
    """The generated-table blocks of a report.

    Parameters
    ----------
    text : str
        A report's markdown.

    Returns
    -------
    list of (str, str)
        ``(name, body)`` of every block, in order.
    """
    return [(m["name"], m["body"]) for m in BLOCK.finditer(text)]


def fill(text: str, tables: Mapping[str, Table]) -> str:
    """Rewrite the blocks of a report whose tables are given.

    Parameters
    ----------
    text : str
        A report's markdown.
    tables : mapping of str to Table
        Tables by name.

    Returns
    -------
    str
        ``text`` with every block whose table is in ``tables`` rendered from
        it; other blocks and all other text unchanged.
    """
    def sub(m):
        t = tables.get(m["name"])
        body = m["body"] if t is None else render(t)
        return f"<!-- table: {m['name']} -->\n{body}<!-- end table -->\n"
    return BLOCK.sub(sub, text)


def data_file(reports: Path, simulation: str) -> Path:
    """Where a simulation's tables are kept.

    Parameters
    ----------
    reports : path
        The reports' folder.
    simulation : str
        The simulation's name.

    Returns
    -------
    pathlib.Path
        ``REPORTS/data/SIMULATION.json``.
    """
    return Path(reports) / "data" / f"{simulation}.json"


def write_data(reports: Path, simulation: str, tables: Iterable[Table], provenance: Mapping) -> Path:
    """Write a simulation's tables and the provenance they came from.

    Parameters
    ----------
    reports : path
        The reports' folder; the file goes to its ``data/``.
    simulation : str
        The simulation's name.
    tables : iterable of Table
        Its tables (names ``SIMULATION/KEY``).
    provenance : mapping
        What made them (a reproduction's ``provenance.json``, summarised).

    Returns
    -------
    pathlib.Path
        The file written (atomically).

    Raises
    ------
    ValueError
        When a table's name does not start with ``simulation``.
    """
    tables = list(tables)
    for t in tables:
        if t.name.split("/")[0] != simulation:
            raise ValueError(f"table {t.name!r} does not belong to simulation {simulation!r}")
    path = data_file(reports, simulation)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"simulation": simulation, "provenance": dict(provenance),
            "tables": {t.name.split("/", 1)[1]: t.to_json() for t in tables}}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False, allow_nan=True) + "\n")
    tmp.replace(path)
    return path


def load_data(reports: Path) -> dict[str, Table]:
    """Every table kept under ``REPORTS/data``.

    Parameters
    ----------
    reports : path
        The reports' folder.

    Returns
    -------
    dict of str to Table
        By name ``SIMULATION/KEY``.
    """
    out = {}
    for path in sorted((Path(reports) / "data").glob("*.json")):
        data = json.loads(path.read_text())
        sim = data["simulation"]
        if path.stem != sim:
            raise ValueError(f"{path}: holds simulation {sim!r}, not {path.stem!r}")
        for key, t in data["tables"].items():
            out[f"{sim}/{key}"] = Table.from_json(f"{sim}/{key}", t)
    return out


def check_reports(reports: Path) -> list[str]:
    """What is wrong with the reports' generated tables (empty when every block shows its data exactly).

    Every block must name a table kept under ``REPORTS/data`` and show
    exactly what :func:`render` makes of it; every kept table must be shown
    somewhere.

    Parameters
    ----------
    reports : path
        The reports' folder.

    Returns
    -------
    list of str
        One line per problem.
    """
    reports = Path(reports)
    tables = load_data(reports)
    problems, shown = [], set()
    for md in sorted(reports.glob("*.md")):
        for name, body in blocks(md.read_text()):
            shown.add(name)
            if name not in tables:
                problems.append(f"{md.name}: table {name!r} has no data in {reports / 'data'}")
            elif body != render(tables[name]):
                problems.append(f"{md.name}: table {name!r} differs from its data ({data_file(reports, name.split('/')[0])})"
                                f"; regenerate with `neurosim tables`")
    for name in sorted(set(tables) - shown):
        problems.append(f"table {name!r} is kept in {reports / 'data'} but no report shows it")
    return problems


def reproduction_dataset(out: Path, simulation: str):
    """``simulation``'s dataset in a reproduction folder, with a ``seed`` dimension.

    A simulation run once over its seeds (``n_seeds``) has its own dataset;
    one run per seed (``seed-S/NAME``) has its datasets joined along a new
    ``seed`` dimension (an outer join: a coordinate value that only some
    seeds have, such as the units each seed tested, is NaN in the others).

    Parameters
    ----------
    out : path
        The reproduction's folder.
    simulation : str
        The simulation's name.

    Returns
    -------
    xarray.Dataset
        Loaded into memory.
    dict
        The run's provenance (with ``seeds`` and per-run times when joined).

    Raises
    ------
    FileNotFoundError
        When the reproduction has no finished run of ``simulation``.
    """
    import xarray as xr

    out = Path(out)

    def dataset_of(folder: Path):
        prov = folder / "provenance.json"
        if not prov.is_file():
            raise FileNotFoundError(f"{folder}: no finished run (no provenance.json); run `neurosim reproduce` first")
        record = json.loads(prov.read_text())
        path = (record.get("files") or {}).get("dataset")
        if path is None:
            raise FileNotFoundError(f"{folder}: the run wrote no dataset")
        path = Path(path)
        if not path.is_absolute():
            path = folder / path
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            return ds.load(), record

    if (out / simulation / "provenance.json").is_file():
        return dataset_of(out / simulation)
    folders = sorted(out.glob(f"seed-*/{simulation}"), key=lambda p: int(p.parent.name.split("-", 1)[1]))
    if not folders:
        raise FileNotFoundError(f"{out}: no run of {simulation!r} (neither {simulation}/ nor seed-*/{simulation}/)")
    loaded = [dataset_of(f) for f in folders]
    seeds = [int(f.parent.name.split("-", 1)[1]) for f in folders]
    # per-seed units (sc_*: the bases each seed tested) are joined: NaN where a seed has no such unit
    ds = xr.concat([d for d, _ in loaded], dim="seed", join="outer",
                   combine_attrs="drop_conflicts").assign_coords(seed=seeds)
    records = [r for _, r in loaded]
    return ds, {**records[0], "seeds": seeds, "runs": [{k: r.get(k) for k in ("kwargs", "wall_seconds", "cpu_seconds")}
                                                     for r in records]}


def _figure_runs(out: Path, simulation: str) -> list[tuple[Path, dict]]:
    """The finished runs of ``simulation`` in reproduction folder ``out`` that figures come from.

    A simulation run once over its seeds has one run (``out/NAME``); one
    run per seed has one per seed (``out/seed-S/NAME``), of which only the
    first seed's figures are used (each such figure shows one seed).
    """
    out = Path(out)
    if (out / simulation / "provenance.json").is_file():
        folders = [out / simulation]
    else:
        folders = sorted(out.glob(f"seed-*/{simulation}"), key=lambda p: int(p.parent.name.split("-", 1)[1]))[:1]
        folders = [f for f in folders if (f / "provenance.json").is_file()]
    if not folders:
        raise FileNotFoundError(f"{out}: no finished run of {simulation!r} to take its figures from")
    return [(f, json.loads((f / "provenance.json").read_text())) for f in folders]


def _seeds_of(record: Mapping) -> list[int]:
    """The seeds a run covered, from its arguments (``seed`` first, ``n_seeds`` of them; ``seed`` 0 by default)."""
    kwargs = record.get("kwargs") or {}
    first = int(kwargs.get("seed", 0))
    return list(range(first, first + int(kwargs.get("n_seeds", 1))))


def figure_provenance(reports: Path) -> dict[str, dict]:
    """The record of the reports' figures that :func:`publish_figures` copied (empty when there is none).

    Parameters
    ----------
    reports : path
        The reports' folder.

    Returns
    -------
    dict of str to dict
        By figure file name (under ``REPORTS/figures``): ``simulation``,
        ``source`` (the file the run wrote), ``commit``, ``tree_changed``,
        ``seeds``, ``kwargs``, ``wall_seconds``, ``finished`` and ``sha256``
        of the copy.
    """
    path = Path(reports) / FIGURES / FIGURE_PROVENANCE
    if not path.is_file():
        return {}
    return json.loads(path.read_text())["figures"]


def publish_figures(out: Path, reports: Path, simulations: Mapping[str, Any], write: bool = True) -> list[str]:
    """Copy the reports' figures of ``simulations`` from reproduction folder ``out`` and record where they came from.

    A simulation's ``REPORT_FIGURES`` maps the name of a file its run wrote
    (listed under ``files`` in the run's ``provenance.json``) to the name of
    the figure in ``REPORTS/figures``. Each copy's record (see
    :func:`figure_provenance`) replaces the figure's old one in
    ``REPORTS/figures/provenance.json``; the records of other figures stay.

    Parameters
    ----------
    out : path
        A reproduction's folder (``neurosim reproduce --out``).
    reports : path
        The reports' folder.
    simulations : dict of str to module
        Simulation modules; those without ``REPORT_FIGURES`` are skipped.
    write : bool
        Copy and record; with ``False`` only check that every figure named
        is there to copy (what ``neurosim tables --check`` does).

    Returns
    -------
    list of str
        The figures written, or that would be (names under ``REPORTS/figures``).

    Raises
    ------
    FileNotFoundError
        When the run did not write a figure that ``REPORT_FIGURES`` names
        (not among its files, or the file is missing).
    ValueError
        When two simulations claim the same report figure.
    """
    import hashlib
    import shutil

    folder = Path(reports) / FIGURES
    records = figure_provenance(reports)
    copies: list[tuple[Path, Path]] = []
    claimed: dict[str, str] = {}
    for name, module in simulations.items():
        mapping = getattr(module, "REPORT_FIGURES", None)
        if not mapping:
            continue
        (run_folder, record), = _figure_runs(out, name)
        written = {Path(p).name: (Path(p) if Path(p).is_absolute() else run_folder / p)
                   for p in (record.get("files") or {}).values()}
        for source, target in mapping.items():
            if target in claimed and claimed[target] != name:
                raise ValueError(f"report figure {target!r} is claimed by {claimed[target]!r} and {name!r}")
            claimed[target] = name
            path = written.get(source)
            if path is None or not path.is_file():
                raise FileNotFoundError(f"{run_folder}: the run of {name!r} wrote no {source!r} "
                                        f"(its files: {sorted(written)})")
            code = record.get("code") or {}
            records[target] = {"simulation": name, "source": source, "commit": code.get("commit"),
                               "tree_changed": code.get("tree_changed"), "seeds": _seeds_of(record),
                               "kwargs": record.get("kwargs") or {}, "wall_seconds": record.get("wall_seconds"),
                               "finished": record.get("finished"),
                               "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
            copies.append((path, folder / target))
    if not copies or not write:
        return [dst.name for _, dst in copies]
    folder.mkdir(parents=True, exist_ok=True)
    for src, dst in copies:
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.copyfile(src, tmp)
        tmp.replace(dst)
    path = folder / FIGURE_PROVENANCE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"figures": dict(sorted(records.items()))}, indent=1) + "\n")
    tmp.replace(path)
    return [dst.name for _, dst in copies]


def _provenance_summary(record: Mapping) -> dict:
    keep = ("simulation", "kwargs", "code", "versions", "machine", "wall_seconds", "cpu_seconds", "seeds", "runs",
            "finished")
    return {k: record[k] for k in keep if k in record}


def publish(out: Path, reports: Path, simulations: Mapping[str, Any], check_only: bool = False) -> dict:
    """Compute the tables of ``simulations`` from reproduction folder ``out``; keep them and fill the reports.

    Parameters
    ----------
    out : path
        A reproduction's folder (``neurosim reproduce --out``).
    reports : path
        The reports' folder (``docs/reports``); its ``data/`` receives the tables.
    simulations : dict of str to module
        Simulation modules; those without ``tables`` are skipped.
    check_only : bool
        Compute the tables and check that every report block has one of the
        same name and columns, but write nothing (what CI does with a quick
        reproduction, whose numbers are not the reports').

    Returns
    -------
    dict
        ``{"tables": [names], "reports": [files rewritten], "figures": [figures copied], "problems": [...]}``;
        the figures are those of the simulations' ``REPORT_FIGURES`` (:func:`publish_figures`; none with
        ``check_only``).
    """
    reports = Path(reports)
    made: dict[str, Table] = {}
    records = {}
    for name, module in simulations.items():
        if not hasattr(module, "tables"):
            continue
        ds, record = reproduction_dataset(out, name)
        tables = list(module.tables(ds))
        for t in tables:
            if t.name.split("/")[0] != name:
                raise ValueError(f"{name}.tables returned {t.name!r}: a table's name starts with its simulation")
            made[t.name] = t
        records[name] = (tables, record)
    problems = []
    for md in sorted(reports.glob("*.md")):
        for block, _ in blocks(md.read_text()):
            sim = block.split("/")[0]
            if sim in simulations and block not in made:
                problems.append(f"{md.name}: table {block!r} is not among {sim}'s tables")
    if check_only:
        kept = load_data(reports)
        for name, t in made.items():
            if name in kept and list(kept[name].columns) != list(t.columns):
                problems.append(f"table {name!r}: columns {list(t.columns)} differ from the kept {list(kept[name].columns)}")
        try:
            publish_figures(out, reports, simulations, write=False)
        except (FileNotFoundError, ValueError) as err:
            problems.append(str(err))
        return {"tables": sorted(made), "reports": [], "figures": [], "problems": problems}
    for name, (tables, record) in records.items():
        write_data(reports, name, tables, _provenance_summary(record))
    rewritten = []
    for md in sorted(reports.glob("*.md")):
        text = md.read_text()
        new = fill(text, made)
        if new != text:
            md.write_text(new)
            rewritten.append(str(md))
    figures = publish_figures(out, reports, simulations)
    return {"tables": sorted(made), "reports": rewritten, "figures": figures, "problems": problems}
