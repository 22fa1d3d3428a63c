"""LICENSE, CITATION.cff, CHANGELOG.md and CONTRIBUTING.md agree with pyproject.toml and README."""

import pathlib
import re

import pytest

import neurosim

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS_BUILD = 'python -m pip install -e ".[docs]" && python -m sphinx -W --keep-going -b html docs docs/_build/html'
#: the build that runs no gallery script (docs/conf.py reads NEUROSIM_DOCS_EXECUTE)
QUICK_DOCS_BUILD = "NEUROSIM_DOCS_EXECUTE=none python -m sphinx -W --keep-going -b html docs docs/_build/html"


def _project():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_license_file_is_the_licence_pyproject_declares():
    text = (ROOT / "LICENSE").read_text()
    assert _project()["license"]["text"] == "BSD-3-Clause"
    assert text.startswith("BSD 3-Clause License")
    assert "the neurosim developers" in text
    # the three clauses and the disclaimer of the SPDX text
    assert text.count("\n1. ") == text.count("\n2. ") == text.count("\n3. ") == 1
    assert "Neither the name of the copyright holder" in text
    assert 'PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"' in text


def test_citation_cites_this_version_and_the_five_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software"
    assert str(cff["version"]) == _project()["version"] == neurosim.__version__
    assert cff["license"] == "BSD-3-Clause"
    assert {"title", "authors", "message"} <= set(cff)
    firsts = sorted(ref["authors"][0]["family-names"] for ref in cff["references"])
    assert firsts == ["Chen", "Garg", "Lee", "Szabó", "Tsuchida"]
    assert all(ref["title"] and ref["year"] for ref in cff["references"])


def test_citation_and_pyproject_name_the_same_authors_release_date_and_address():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = _project()
    # `pip show` prints pyproject's authors (it printed an empty Author, issue 40)
    assert [a["name"] for a in project["authors"]] == [a["name"] for a in cff["authors"]] == ["the neurosim developers"]
    # the release of this version, as the changelog dates it
    dated = dict(re.findall(r"^## \[([^\]]+)\] - (\d{4}-\d{2}-\d{2})$", (ROOT / "CHANGELOG.md").read_text(), flags=re.M))
    assert str(cff["date-released"]) == dated[project["version"]]
    # the project's address, wherever one is given, is the same in both (it has none yet)
    addresses = set(project.get("urls", {}).values())
    assert {cff[key] for key in ("url", "repository-code") if key in cff} == addresses


def test_changelog_has_unreleased_and_this_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    heads = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert heads[0] == "Unreleased"
    assert _project()["version"] in heads


def test_contributing_and_readme_give_the_same_docs_build_and_the_quick_tier():
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert DOCS_BUILD in contributing and DOCS_BUILD in readme
    assert QUICK_DOCS_BUILD in contributing and QUICK_DOCS_BUILD in readme
    assert 'python -m pytest -m "not slow"' in contributing
    assert "benchmarks/mutation.py" in contributing
    # every docs link in CONTRIBUTING points at a file that exists
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", contributing):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def test_the_installation_page_lists_every_extra():
    """docs/installation.md's table of extras has one row per extra of pyproject.toml, no more."""
    extras = set(_project()["optional-dependencies"])
    page = (ROOT / "docs" / "installation.md").read_text()
    listed = re.findall(r"^\| `([\w-]+)` \|", page, flags=re.M)
    assert len(listed) == len(set(listed)) and set(listed) == extras, (sorted(listed), sorted(extras))
