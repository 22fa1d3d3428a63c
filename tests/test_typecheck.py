"""The type check of the package (issue 26): ``python -m mypy`` with the ``[tool.mypy]`` settings of
pyproject.toml (``files = ["neurosim"]``) reports no error."""

import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is not installed (the `test` extra has it)")

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow  # about 25 s cold (mypy builds its cache), a few seconds warm
def test_mypy_reports_no_error(tmp_path):
    if not (ROOT / "pyproject.toml").exists() or not (ROOT / "neurosim").is_dir():
        pytest.skip("needs a source checkout (pyproject.toml beside neurosim/)")
    # a cache of its own: the test must not write into the checkout, and a stale cache cannot hide an error
    env = dict(os.environ, MYPY_CACHE_DIR=str(tmp_path / "mypy_cache"))
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert proc.returncode == 0 and not errors, proc.stdout + proc.stderr
