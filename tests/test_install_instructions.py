"""No install instruction in the repository names a package that is not this project.

The distribution is ``neurosim-circuits`` (pyproject.toml); ``neurosim`` on the
public package index is an unrelated project, so ``pip install neurosim`` or
an extra spelled ``neurosim[...]`` would install somebody else's code. Every
instruction must install from the checkout (``pip install -e ".[extra]"``).
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".rst", ".txt", ".toml", ".cfg"}
SKIP_PARTS = {"__pycache__", "_build", ".git", "build", "dist", "out"}

# `pip install neurosim` / `pip install "neurosim"` / `pip install -U neurosim-circuits`: a name from the index.
# From a checkout the target is a path (`.`, `".[cuda]"`), never the project's name.
BAD_PIP = re.compile(r"""pip\s+install\s+(?:-{1,2}[\w-]+\s+)*["']?neurosim\b""", re.IGNORECASE)
# `neurosim[cuda]`, `neurosim-circuits[dask]`: an extra requested by name from the index
BAD_EXTRA = re.compile(r"""\bneurosim(?:[-_]circuits)?\[""", re.IGNORECASE)


def _text_files():
    files = [ROOT / "README.md", *[ROOT / n for n in ("CONTRIBUTING.md", "CHANGELOG.md") if (ROOT / n).exists()]]
    for folder in ("docs", "neurosim", "models", "simulations", "benchmarks"):
        for f in sorted((ROOT / folder).rglob("*")):
            if f.is_file() and f.suffix in SUFFIXES and not SKIP_PARTS & set(f.relative_to(ROOT).parts):
                files.append(f)
    return files


def offending_lines(text):
    """Lines of ``text`` with an install instruction naming a package from the index as this project."""
    return [line for line in text.splitlines() if BAD_PIP.search(line) or BAD_EXTRA.search(line)]


@pytest.mark.parametrize("line", [
    'pip install "neurosim[cuda]"', "pip install neurosim", "python -m pip install -U neurosim-circuits",
    "install the optional extra neurosim[sklearn]", "pip install 'neurosim_circuits[dask]'",
])
def test_the_check_catches_instructions_for_the_wrong_package(line):
    assert offending_lines(line) == [line]


@pytest.mark.parametrize("line", [
    'python -m pip install -e ".[cuda]"', "python -m pip install -e .", "pip install scikit-learn",
    "pip install spams-bin", "import neurosim", "neurosim.models[0]",
])
def test_the_check_lets_checkout_installs_through(line):
    assert offending_lines(line) == []


def test_the_walk_reads_the_package_and_the_docs():
    names = {f.relative_to(ROOT).as_posix() for f in _text_files()}
    assert {"README.md", "neurosim/cuda/__init__.py", "docs/architecture.md"} <= names


def test_no_install_instruction_names_another_package():
    bad = [f"{f.relative_to(ROOT)}: {line.strip()}" for f in _text_files()
           for line in offending_lines(f.read_text(errors="replace"))]
    assert bad == []


def test_the_distribution_is_ours_and_the_console_script_stays():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "neurosim-circuits"
    assert meta["scripts"]["neurosim"] == "neurosim.cli:main"
