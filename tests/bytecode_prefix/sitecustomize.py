"""Bytecode that an installer wrote is read where it is; the rest goes to the suite's cache.

Where ``PYTHONDONTWRITEBYTECODE`` is set, ``tests/conftest.py`` sends bytecode to a prefix of the suite's
own (``PYTHONPYCACHEPREFIX``) and puts this directory on ``PYTHONPATH``, so that Python runs this module at
the start of every process the suite starts (xdist workers, README examples, sweep workers, the CLI).

A bytecode prefix applies to every module: Python then looks for bytecode only under the prefix. Without
this module each of those processes, on a cold cache, would compile numpy, scipy, pandas, xarray, numba and
the rest again (about 2,000 modules, 4.6 s) although pip wrote their bytecode beside them at install. Here a
module whose ``__pycache__`` holds its bytecode reads it from there (Python still checks it against the
source); the others (the repository's neurosim and tests, packages installed without bytecode) use the
prefix. The import system looks the function up at each import, so replacing it in its own module is
enough. A ``sitecustomize`` that this one shadows still runs.
"""

import importlib.machinery
import os
import sys


def read_installed_bytecode_in_place():
    """Make ``cache_from_source`` name ``__pycache__/<name>.pyc`` beside a source where that file exists."""
    import _frozen_importlib_external as bootstrap

    prefixed = bootstrap.cache_from_source
    if getattr(prefixed, "reads_installed_bytecode", False):
        return

    def cache_from_source(path, debug_override=None, *, optimization=None):
        cached = prefixed(path, debug_override, optimization=optimization)
        beside = os.path.join(os.path.dirname(path), "__pycache__", os.path.basename(cached))
        return beside if os.path.exists(beside) else cached

    cache_from_source.reads_installed_bytecode = True
    bootstrap.cache_from_source = cache_from_source


def _run_the_shadowed_sitecustomize():
    here = os.path.realpath(os.path.dirname(__file__))
    path = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None:
        spec.loader.exec_module(sys.modules[__name__])


if __name__ == "sitecustomize":
    if sys.pycache_prefix:
        read_installed_bytecode_in_place()
    _run_the_shadowed_sitecustomize()
