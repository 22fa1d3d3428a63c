"""Suite-wide set-up: the test build, the CUDA simulator, hypothesis profiles, BLAS threads, timings.

``NEUROSIM_TEST_BUILD`` chooses how numba compiles: ``quick`` (default;
``NUMBA_OPT=1``, kernels called rather than inlined into segments, every array
index bounds-checked, a numba cache of its own under ``NEUROSIM_CACHE_DIR``) or ``production`` (what users run).
Subprocesses that tests start inherit the choice.

The GPU kernels are tested without a GPU under numba's CUDA simulator, which
numba reads from the environment when ``numba.cuda`` is first imported. Set
``NEUROSIM_TEST_REAL_GPU=1`` to run those tests on a real GPU instead.

Hypothesis budgets come from ``hypothesis_profiles.examples`` (a test's own
count times the profile's scale); the profile is chosen by
``NEUROSIM_HYPOTHESIS_PROFILE`` (``ci``, the default, or ``dev``).

Where ``PYTHONDONTWRITEBYTECODE`` is set (and ``PYTHONPYCACHEPREFIX`` is
not), bytecode goes to ``<NEUROSIM_CACHE_DIR>/pycache`` for the suite and
the processes it starts, so that they do not each compile neurosim's sources
and rewrite the test modules again; installed packages keep reading theirs
from where pip wrote it (``tests/bytecode_prefix/sitecustomize.py``).

With ``NEUROSIM_TEST_TIMINGS=PREFIX`` each test's wall time and the part of it
numba spent compiling are written to ``PREFIX.<worker>.json``
(``benchmarks/suite_timings.py`` turns them into the table in
``docs/testing.md``).
"""

import importlib.util
import json
import os
import pathlib
import re
import sys
import time

import pytest

if os.environ.get("NEUROSIM_TEST_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

#: "quick" (default): kernels compiled at LLVM -O1 and called rather than inlined into segments, in a numba
#: cache of their own; "production": numba's and neurosim's defaults (-O3, inlined), what users run.
TEST_BUILD = os.environ.get("NEUROSIM_TEST_BUILD", "quick")
if TEST_BUILD not in ("quick", "production"):
    raise ValueError(f"NEUROSIM_TEST_BUILD must be 'quick' or 'production'; got {TEST_BUILD!r}")
if TEST_BUILD == "quick" and "numba" in sys.modules:
    # numba reads NUMBA_OPT and NUMBA_BOUNDSCHECK once, when it is imported: the quick build can no longer be
    # chosen, and the suite would run the production build without bounds checks and without saying so
    # (a filterwarnings entry naming a neurosim warning class in pyproject.toml did exactly that)
    raise RuntimeError("tests/conftest.py: numba was imported before the test build could be chosen (by a plugin, "
                       "an ini option naming a neurosim class, or the calling process); run pytest in a fresh "
                       "process, or set NEUROSIM_TEST_BUILD=production")
#: neurosim's cache root, as neurosim.codegen.cache_dir finds it (not imported: that would import numba)
_CACHE_ROOT = os.environ.get("NEUROSIM_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "neurosim")
if TEST_BUILD == "quick":
    # Compilation is most of the suite's time (docs/testing.md: a new network structure's segment
    # costs seconds, numba's deep copies of inlined kernels and LLVM -O3 most of it). The quick build
    # computes the same numbers (no fast-math in the segment kernels; the feature-sign and row-parallel
    # kernels that use it are tested against oracles with tolerances). Its machine code is kept out of
    # the caches of normal runs: numba's cache index does not record the optimisation level.
    os.environ.setdefault("NUMBA_OPT", "1")
    os.environ.setdefault("NEUROSIM_INLINE_KERNELS", "0")
    # Every index checked, as the interpreter would: numba does not bounds-check by default, so a kernel
    # writing one slot past a work array (a workspace sized one short, a slice cut early) corrupts memory
    # and may still give plausible numbers. With the check it raises IndexError in the test that runs it
    # (about 10 % more time in the quick tier; docs/testing.md).
    os.environ.setdefault("NUMBA_BOUNDSCHECK", "1")
    # numba's cache index records neither flag, so the directory's name does: machine code compiled
    # without the bounds checks must not be handed back to a run that asks for them
    _build = f"numba-test-build-O{os.environ['NUMBA_OPT']}-boundscheck{os.environ['NUMBA_BOUNDSCHECK']}"
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(os.environ.get("NUMBA_CACHE_DIR") or _CACHE_ROOT, _build)

# A small new structure's first steps run interpreted kernels while a second process compiles them
# (neurosim.first_steps). Across a suite that is a process per new kernel signature next to pytest's own, and
# steps whose timing depends on it: the suite compiles in its own process, and the tests of that path
# (tests/engine/test_first_steps.py) turn it on where they need it.
os.environ.setdefault("NEUROSIM_BACKGROUND_COMPILE", "0")

if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    # With bytecode writing off (as on this project's machines), every process the suite starts (README
    # examples, sweep workers, the CLI, benchmarks: about a hundred) compiles neurosim's sources again, about
    # 0.45 s each, and every later pytest run rewrites the test modules' asserts again. Bytecode goes to a
    # cache of the suite's own instead, outside the source tree, which is what the setting protects; the
    # installed packages' bytecode is still read where pip wrote it (tests/bytecode_prefix/sitecustomize.py,
    # which every process the suite starts runs).
    _prefix = os.path.join(_CACHE_ROOT, "pycache")
    os.environ["PYTHONPYCACHEPREFIX"] = _prefix
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    sys.pycache_prefix, sys.dont_write_bytecode = _prefix, False
    _hook = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bytecode_prefix")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_hook, os.environ.get("PYTHONPATH")]))
    # this process started without it: load it under a name of its own (a "sitecustomize" may be loaded)
    _spec = importlib.util.spec_from_file_location("bytecode_prefix", os.path.join(_hook, "sitecustomize.py"))
    _bytecode_prefix = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_bytecode_prefix)
    _bytecode_prefix.read_installed_bytecode_in_place()

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Each xdist worker is one of as many processes as there are cores: BLAS threads inside them would
    # only oversubscribe the cores. (numba's pool is left alone: the thread tests set counts up to it.)
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import hypothesis_profiles  # noqa: E402  (after the environment above: it imports hypothesis only)

hypothesis_profiles.load()

#: what marks a test module as using dask's, zarr's or scikit-learn's APIs (directly or through neurosim's
#: sweeps on dask, zarr stores and the scikit-learn oracles): those modules run on the oldest pins too
_DEPS_API = re.compile(r"^\s*(import|from)\s+(dask|distributed|zarr|sklearn)\b|importorskip\([\"'](dask|distributed|zarr|"
                       r"sklearn)|executor=\"dask\"|store=|open_store", re.M)
_deps_api_modules: dict = {}


#: the library's own warnings fail a test that did not ask for them (pytest.warns or a filterwarnings mark): a
#: warning where none is due (a wrong count, a spurious non-convergence) is a defect, not noise. Added here,
#: after the test build is chosen: naming them in pyproject.toml would import neurosim, and numba, first.
LIBRARY_WARNINGS = (
    "neurosim.coding.encoders.NonConvergenceWarning",
    "neurosim.engine.PerStepWarning",
    "neurosim.estimators.UnobservedFeatureWarning",
    "neurosim.io.CheckpointParamsWarning",
    "neurosim.selection_functions.DegenerateSelectionWarning",
    "neurosim.dynamics.jacobi.JacobiNotConverged",
    "neurosim.experiment.SweepStoreWarning",
)


def pytest_configure(config):
    for category in LIBRARY_WARNINGS:
        config.addinivalue_line("filterwarnings", f"error::{category}")


def pytest_collection_modifyitems(config, items):
    """Tiers: property-based (hypothesis) tests are ``slow``; modules using dask, zarr or scikit-learn ``deps_api``.

    Hypothesis tests hammer constructors and kernels with hundreds of generated inputs: the slow tier
    runs them at their full count (``NEUROSIM_HYPOTHESIS_PROFILE=dev`` for a fifth); the quick tier
    keeps the hand-computed and oracle cases of the same code.
    """
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.slow)
        path = pathlib.Path(str(item.fspath))
        if path not in _deps_api_modules:
            _deps_api_modules[path] = bool(_DEPS_API.search(path.read_text()))
        if _deps_api_modules[path]:
            item.add_marker(pytest.mark.deps_api)


_TIMINGS = os.environ.get("NEUROSIM_TEST_TIMINGS")
if _TIMINGS:
    # numba's compile time (outermost ``numba:compile`` events; cache loads are not compiles), with the
    # engine's clock; imported here, after the test build is chosen
    from neurosim.engine import _NumbaClock

    _clock = _NumbaClock("numba:compile")

    _rows: dict = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        compiled, started = _clock.seconds, time.perf_counter()
        yield
        _rows[item.nodeid] = [time.perf_counter() - started, _clock.seconds - compiled]

    def pytest_sessionfinish(session):
        if _rows:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            pathlib.Path(f"{_TIMINGS}.{worker}.json").write_text(json.dumps(_rows))
