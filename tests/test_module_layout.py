"""The package layout: no import circles between the engine and the GPU path, no confusing module pairs."""

import ast
import pathlib
import pydoc
import re

import neurosim

ROOT = pathlib.Path(neurosim.__file__).parent


def _imported_modules(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_gpu_path_does_not_import_the_engine():
    # engine.py imports neurosim.cuda.backend (lazily, for backend="cuda"); the reverse edge made a circle.
    for path in (ROOT / "cuda").glob("*.py"):
        assert "neurosim.engine" not in set(_imported_modules(path)), path.name


def test_engine_and_gpu_path_share_the_input_block_check():
    from neurosim import engine, input_blocks
    from neurosim.cuda import backend
    assert engine.checked_block is input_blocks.checked_block
    assert backend.checked_block is input_blocks.checked_block


def test_no_module_pairs_that_differ_only_by_suffix():
    # selection.py/selector.py and measures.py/metrics.py sat side by side; the names now say what each is.
    names = {p.stem for p in ROOT.glob("*.py")}
    assert not {"selection", "selector", "measures"} & names
    assert {"selection_functions", "example_selector", "reconstruction_accuracy", "metrics"} <= names


def test_no_two_test_modules_share_a_name():
    # pytest imports test modules by basename (rootdir mode, no packages): two test_x.py in different folders
    # stop the whole suite at collection
    tests = pathlib.Path(__file__).parent
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_help_shows_the_public_names_and_says_which_listed_modules_are_internal():
    # issue 40: help(neurosim) lists private modules. pydoc lists every module file of a package under PACKAGE
    # CONTENTS (pkgutil.iter_modules; a package cannot hide one), so the package's docstring, which help() shows
    # first, names the internal ones; CLASSES and FUNCTIONS follow __all__.
    text = pydoc.render_doc(neurosim, renderer=pydoc.plaintext)
    sections = dict(re.findall(r"^([A-Z][A-Z ]+)\n((?:(?: {4}.*)?\n)*)", text, flags=re.M))
    listed = [line.split()[0] for line in sections["PACKAGE CONTENTS"].splitlines() if line.strip()]
    internal = [name for name in listed if name.startswith("_")]
    assert "_validation" in internal and "__main__" in internal and "network" in listed
    for name in internal:
        assert f"``{name}``" in sections["DESCRIPTION"], name
    shown = (re.findall(r"^ {4}class (\w+)", sections["CLASSES"], flags=re.M)
             + re.findall(r"^ {4}(\w+)\(", sections["FUNCTIONS"], flags=re.M))
    # and the module's PEP 562 hook, which imports a submodule on first access (issue 40): pydoc shows every
    # dunder function of a module
    assert shown and not [name for name in shown if name not in neurosim.__all__ and name != "__getattr__"]
    assert {"Network", "Projection", "local_rule", "set_num_threads"} <= set(shown)
