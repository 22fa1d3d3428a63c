"""A kernel's disk cache is stale once any kernel it calls changes (neurosim/kernels/_cache.py).

numba stamps a cached function with its own file only: a caller whose file is unchanged loads its old machine
code, in which the old callee is linked. The package below stands in for ``neurosim/kernels``: two modules, a
caller and the callee it calls, each compiled with ``cache=True`` in a fresh process, the callee edited between
the two runs.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

RUN = textwrap.dedent("""
    import sys
    from pathlib import Path

    import numba.core.caching
    from neurosim.kernels import _cache

    package = Path(sys.argv[1])
    if sys.argv[2] == "stamped":  # the package stands in for neurosim's kernels
        _cache._PACKAGE = _cache._KERNELS = package
        _cache._KERNELS_PACKAGE = package.name
        _cache.kernel_sources_digest.cache_clear()
    else:  # numba's own stamp, as without neurosim's locator
        numba.core.caching.CacheImpl._locator_classes.remove(_cache.KernelSourcesLocator)
    sys.path.insert(0, str(package.parent))
    from kernels_under_test.caller import twice_the_next

    print(twice_the_next(1.0))
""")


def _run(package, stamp, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", RUN, str(package), stamp], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return float(proc.stdout.split()[-1])


def _package(root):
    """``kernels_under_test``: a caller, the callee it imports, and a module neither imports."""
    package = root / "kernels_under_test"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caller.py").write_text(textwrap.dedent("""
        from numba import njit

        from kernels_under_test.callee import next_of


        @njit(cache=True)
        def twice_the_next(x):
            return 2.0 * next_of(x)
    """))
    (package / "callee.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef next_of(x):\n    return x + 1.0\n")
    (package / "unrelated.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef half(x):\n    return x / 2\n")
    return package


@pytest.mark.slow  # two fresh interpreters per stamp, each importing neurosim and numba
@pytest.mark.parametrize("stamp, after_the_edit", [("stamped", 6.0), ("numba", 4.0)])
def test_an_edited_callee_recompiles_its_callers(tmp_path, stamp, after_the_edit):
    package = _package(tmp_path)
    callee = package / "callee.py"
    assert _run(package, stamp, tmp_path / "cache") == 4.0
    # a longer file: Python checks cached bytecode by size and whole-second mtime, so an edit of the same size
    # within the second of the first run would import the old callee's bytecode, whatever numba does
    callee.write_text(callee.read_text().replace("x + 1.0", "x + 2.0  # edited"))
    # numba's stamp hands back the caller's old machine code, the old callee inside it: the hazard, shown
    assert _run(package, stamp, tmp_path / "cache") == after_the_edit


def test_only_functions_in_neurosims_files_get_the_kernels_stamp(tmp_path):
    from neurosim.kernels import _cache, dense

    assert isinstance(dense.jacobi_relax._cache._impl.locator, _cache.KernelSourcesLocator)
    stamp = dense.jacobi_relax._cache._impl.locator.get_source_stamp()
    assert stamp[1] == _cache.kernel_sources_digest(pathlib.Path(dense.__file__).resolve())
    script = tmp_path / "user_kernel.py"
    script.write_text("def f(x):\n    return x\n")
    namespace = {}
    exec(compile(script.read_text(), str(script), "exec"), namespace)
    assert _cache.KernelSourcesLocator.from_function(namespace["f"], str(script)) is None
    assert _cache.KernelSourcesLocator.from_function(namespace["f"], "<string>") is None


def test_a_files_stamp_covers_the_kernel_modules_it_imports_and_no_others(tmp_path, monkeypatch):
    from neurosim.kernels import _cache

    package = _package(tmp_path)
    monkeypatch.setattr(_cache, "_KERNELS", package)
    monkeypatch.setattr(_cache, "_KERNELS_PACKAGE", package.name)
    def stamps():  # the caches hold nothing of neurosim's own that a later call could not recompute alike
        _cache._kernel_imports.cache_clear()
        _cache.kernel_sources_digest.cache_clear()
        return {name: _cache.kernel_sources_digest(package / f"{name}.py") for name in ("caller", "callee", "unrelated")}

    first = stamps()
    assert _cache._kernel_imports(package / "caller.py") == {package / "callee.py"}
    unrelated = package / "unrelated.py"
    unrelated.write_text(unrelated.read_text().replace("x / 2", "x / 3"))
    second = stamps()
    assert second["unrelated"] != first["unrelated"]
    assert (second["caller"], second["callee"]) == (first["caller"], first["callee"])
    callee = package / "callee.py"
    callee.write_text(callee.read_text().replace("x + 1.0", "x + 2.0"))
    third = stamps()
    assert third["caller"] != second["caller"] and third["callee"] != second["callee"]
    assert third["unrelated"] == second["unrelated"]


def test_the_locator_names_its_file_for_numbas_cannot_cache_warning():
    # numba's CacheImpl.check_cachable warns with locator._py_file when machine code cannot be cached (under
    # NUMBA_OPT=0 every segment): that raised AttributeError and stopped the run
    from neurosim.kernels import _cache, dense

    locator = _cache.KernelSourcesLocator.from_function(dense.copy_1d.py_func, dense.__file__)
    assert locator is not None and locator._py_file == dense.__file__
