"""The test build that tests/conftest.py chooses is the one numba compiles with.

numba reads ``NUMBA_OPT`` and ``NUMBA_BOUNDSCHECK`` once, at import. Stop 35
named neurosim's warning classes in pyproject.toml's ``filterwarnings``;
pytest imports those classes while it reads the file, so numba came in
before tests/conftest.py and the quick build was silently skipped: the
oldest-pins stage of CI went from 166 s to 538 s, and no index was
bounds-checked.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_this_process_runs_the_build_it_was_asked_for():
    import numba

    from neurosim.kernels import _build

    if os.environ.get("NEUROSIM_TEST_BUILD", "quick") == "quick":
        assert numba.config.OPT == 1 and numba.config.BOUNDSCHECK and _build.INLINE == "never"
        assert os.environ["NUMBA_CACHE_DIR"].endswith("numba-test-build-O1-boundscheck1")
    else:
        assert numba.config.OPT == 3 and not numba.config.BOUNDSCHECK and _build.INLINE == "always"


@pytest.mark.slow
@pytest.mark.parametrize("build", ["quick", "production"])
def test_a_fresh_pytest_process_runs_the_build_it_is_asked_for(tmp_path, build):
    # as a contributor (quick) and CI's newest stage (production) start the suite: a new interpreter
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_", "PYTEST_XDIST", "NEUROSIM_INLINE")) and k != "PYTEST_ADDOPTS"}
    env.update(NEUROSIM_TEST_BUILD=build, NEUROSIM_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider",
                           "tests/test_test_build.py::test_this_process_runs_the_build_it_was_asked_for"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr
