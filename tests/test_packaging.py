"""What gets installed: the wheel holds every package, and CI's oldest-dependency
run pins exactly the lower bounds that pyproject.toml declares."""

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# folder on disk -> the package it installs as (see setup.py)
ROOTS = {"neurosim": "neurosim", "models": "neurosim.models", "simulations": "neurosim.simulations"}


def _packages_on_disk():
    """Every folder under the three roots that holds Python code, as a module name."""
    names = []
    for folder, package in ROOTS.items():
        for d in sorted((ROOT / folder).rglob("*")):
            if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")):
                names.append(".".join([package, *d.relative_to(ROOT / folder).parts]))
        names.append(package)
    return sorted(names)


def test_packages_on_disk_cover_the_known_ones():
    # guards the walk above: if it found nothing, the wheel test would pass vacuously
    found = _packages_on_disk()
    for name in ("neurosim", "neurosim.coding", "neurosim.kernels", "neurosim.models",
                 "neurosim.models.similarity_matching", "neurosim.simulations"):
        assert name in found


@pytest.mark.slow
def test_wheel_contains_and_imports_every_package(tmp_path):
    # Build from a copy so that setuptools' build/ folder, which can keep
    # modules deleted from the source, does not leak into the wheel.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache",
        ".venv", ".ci-venv*", ".ci-cache", "out", "tests", "docs", "benchmarks"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "-w", str(wheels), str(src)], check=True, timeout=180, capture_output=True)
    (wheel,) = wheels.glob("neurosim_circuits-*.whl")
    target = tmp_path / "target"
    zipfile.ZipFile(wheel).extractall(target)  # a pure wheel: unzipping is installing
    # what `pip show` prints: it printed an empty Author (issue 40)
    (metadata,) = target.glob("neurosim_circuits-*.dist-info/METADATA")
    assert "Author: the neurosim developers" in metadata.read_text().splitlines()

    modules = _packages_on_disk()
    code = (
        "import importlib, pathlib, sys\n"
        f"target = pathlib.Path({str(target)!r}).resolve()\n"
        f"for name in {modules!r}:\n"
        "    m = importlib.import_module(name)\n"
        "    assert target in pathlib.Path(m.__file__).resolve().parents, (name, m.__file__)\n"
        "print(len(sys.modules))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr


def _lower_bounds():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    from packaging.requirements import Requirement

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(meta["build-system"]["requires"]) + list(meta["project"]["dependencies"])
    for name, group in meta["project"]["optional-dependencies"].items():
        if name == "cuda":  # the GPU extra: CI has no GPU and never installs it, so nothing pins it there
            continue
        if name == "docs":  # the site's build tools: installed on the newest run only (the browser test is slow tier)
            continue
        if name == "peers":  # minigng needs numpy >= 2.2, above the oldest pin: installed on the newest run only
            continue
        reqs += group
    bounds = {}
    for text in reqs:
        r = Requirement(text)
        for spec in r.specifier:
            if spec.operator == ">=":
                bounds.setdefault(_normalize(r.name), set()).add(spec.version)
    return bounds


def _normalize(name):
    return name.lower().replace("_", "-").replace(".", "-")


def test_oldest_constraints_pin_exactly_the_lower_bounds():
    from packaging.requirements import Requirement
    from packaging.version import Version

    bounds = _lower_bounds()
    assert {"numpy", "numba", "scikit-learn", "pytest", "hypothesis", "setuptools"} <= set(bounds)
    pins = {}
    for line in (ROOT / ".ci" / "oldest-constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            r = Requirement(line)
            (spec,) = r.specifier
            assert spec.operator == "==", line
            pins[_normalize(r.name)] = spec.version
    assert set(pins) == set(bounds)
    for name, lows in bounds.items():
        assert len(lows) == 1, f"{name} has different lower bounds in pyproject.toml: {lows}"
        assert Version(pins[name]) == Version(lows.pop()), name


def test_ci_runs_the_oldest_constraints():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci
    assert ".ci/oldest-constraints.txt" in ci
