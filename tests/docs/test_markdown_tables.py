"""Every row of every markdown table has as many cells as its header.

In a GitHub-flavoured markdown table (MyST on the site, GitHub on the
repository) an unescaped ``|`` ends a cell even inside a code span, so a
norm written ``||x - w||^2`` splits a row; the cells past the header's
count are dropped without a warning (the self-organising report lost the
end of its GNG and GWR rows this way). A literal ``|`` in a table is written
``\\|``. Fast: reads the files, no Sphinx.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md")])
PAGES = [p for p in PAGES if "_build" not in p.parts]
DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
FENCE = re.compile(r"^\s*(```|~~~)")


def _cells(line):
    """The cells of a table row: split at every ``|`` not escaped by a backslash."""
    text = line.strip()
    parts = re.split(r"(?<!\\)\|", text)
    if text.startswith("|"):
        parts = parts[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        parts = parts[:-1]
    return len(parts)


def _bad_rows(text):
    """(line number, cells, header's cells) of each row whose cell count differs from its table's header."""
    lines, bad, fenced = text.splitlines(), [], False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        if fenced or i == 0 or not DELIMITER.match(line.strip()) or not lines[i - 1].lstrip().startswith("|"):
            continue
        header = _cells(lines[i - 1])
        for j in range(i + 1, len(lines)):
            if not lines[j].lstrip().startswith("|"):
                break
            if _cells(lines[j]) != header:
                bad.append((j + 1, _cells(lines[j]), header))
    return bad


def test_the_pages_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "CONTRIBUTING.md", "docs/architecture.md", "docs/reports/self_organizing.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_table_rows_keep_their_cells(page):
    bad = _bad_rows(page.read_text(encoding="utf-8"))
    assert not bad, (f"{page.relative_to(ROOT)}: table rows with another number of cells than their header "
                     f"(line, cells, header): {bad}; escape a literal '|' as '\\|', in code spans too")


def test_the_check_sees_a_norm_in_a_cell():
    table = "| rule | update |\n|---|---|\n| GNG | error `+= ||x - w||^2` |\n| GWR | `\\|x\\|` |\n"
    assert _bad_rows(table) == [(3, 6, 2)]
    assert _bad_rows("```\n" + table + "```\n") == []
