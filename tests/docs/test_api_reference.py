"""Every public name has a page in the API reference (docs/api/*.rst).

The public names are ``neurosim.__all__``, the ``__all__`` of every public
submodule of ``neurosim`` and ``neurosim.models`` (a package without
``__all__``: the names it re-exports from its own submodules), collected by
walking the packages, so a new public name or module without a page fails here
rather than being silently missing from the site. Each object has one page,
under the shortest path it is exported from; a name re-exported elsewhere
(``neurosim.network.Network`` for ``neurosim.Network``) counts as documented
when the same object is. Fast: imports only, no Sphinx.
"""

import importlib
import inspect
import pathlib
import pkgutil
import re
import sys

import pytest

import neurosim
import neurosim.models

API = pathlib.Path(__file__).resolve().parents[2] / "docs" / "api"


def _public_modules():
    names = []
    for root in (neurosim, neurosim.models):
        names.append(root.__name__)
        for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            if info.name.startswith("neurosim.simulations"):  # scripts, documented by the reports
                continue
            names.append(info.name)
    return names


def _public_names(module):
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name in dir(module) if not name.startswith("_")
            and not inspect.ismodule(getattr(module, name))
            and str(getattr(getattr(module, name), "__module__", "")).startswith(module.__name__ + ".")]


def _documented():
    """(full names, module names) listed in docs/api/*.rst by autosummary and automodule."""
    names, modules = set(), set()
    for path in sorted(API.glob("*.rst")):
        current = None
        in_summary = False
        for line in path.read_text().splitlines():
            directive = re.match(r"\.\. (automodule|currentmodule|module):: (\S+)", line)
            if directive:
                current = directive.group(2)
                if directive.group(1) != "currentmodule":
                    modules.add(current)
                in_summary = False
            elif line.startswith(".. autosummary::"):
                in_summary = True
            elif in_summary and re.match(r"   [A-Za-z_]\w*$", line):
                names.add(f"{current}.{line.strip()}")
            elif in_summary and line and not line.startswith(" "):
                in_summary = False
    return names, modules


def _resolve(full):
    module, _, name = full.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _key(name, obj):
    # constants are matched by name and value (small ints are shared objects)
    if inspect.isclass(obj) or callable(obj) or inspect.ismodule(obj):
        return id(obj)
    return (name, id(obj))


MODULES = _public_modules()


def test_the_walk_finds_the_renamed_modules():
    for name in ("neurosim.selection_functions", "neurosim.example_selector", "neurosim.reconstruction_accuracy",
                 "neurosim.models.similarity_matching", "neurosim.kernels.selection"):
        assert name in MODULES


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_has_a_page(module_name):
    documented, modules = _documented()
    keys = {_key(full.rpartition(".")[2], _resolve(full)) for full in documented}
    module = importlib.import_module(module_name)
    missing = []
    for name in _public_names(module):
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            if obj.__name__ not in modules:
                missing.append(name)
        elif f"{module_name}.{name}" not in documented and _key(name, obj) not in keys:
            missing.append(name)
    assert not missing, (f"{module_name}: public names without a page in docs/api/*.rst: {missing}; add each to "
                         "the autosummary list of the group it belongs to")


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_module_has_a_section(module_name):
    documented, modules = _documented()
    assert module_name in modules | {"neurosim"}, f"docs/api/*.rst has no '.. automodule:: {module_name}'"


def test_every_listed_name_exists():
    documented, modules = _documented()
    for module in modules:
        importlib.import_module(module)
    for full in documented:
        _resolve(full)  # AttributeError names a page for a name that is gone


def _export_paths():
    """Key of each public object -> every public path it is exported from (``neurosim.BCM``, ``neurosim.rules.BCM``)."""
    paths = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in _public_names(module):
            obj = getattr(module, name)
            if not inspect.ismodule(obj):
                paths.setdefault(_key(name, obj), []).append(f"{module_name}.{name}")
    return paths


def _canonical(paths):
    """The path a reader is told to use: the shortest (``ns.BCM`` over ``neurosim.rules.BCM``)."""
    return min(paths, key=lambda path: (path.count("."), path))


def test_one_page_per_object_under_its_shortest_path():
    """``ns.BCM`` and ``ns.Oja`` are both documented as ``neurosim.X``, each object once."""
    documented, _ = _documented()
    paths = _export_paths()
    pages, wrong = {}, []
    for full in sorted(documented):
        key = _key(full.rpartition(".")[2], _resolve(full))
        pages.setdefault(key, []).append(full)
        if key in paths and full.count(".") > _canonical(paths[key]).count("."):
            wrong.append(f"{full} (use {_canonical(paths[key])})")
    twice = [names for names in pages.values() if len(names) > 1]
    assert not wrong, f"documented under a longer path than the one exported: {wrong}"
    assert not twice, f"objects with more than one page: {twice}"


def test_the_check_sees_a_longer_path(monkeypatch):
    """Listing a top-level name under its submodule fails the canonical-path check."""
    documented, modules = _documented()
    moved = (documented - {"neurosim.BCM"}) | {"neurosim.rules.BCM"}
    monkeypatch.setattr(sys.modules[__name__], "_documented", lambda: (moved, modules))
    with pytest.raises(AssertionError, match=r"neurosim\.rules\.BCM \(use neurosim\.BCM\)"):
        test_one_page_per_object_under_its_shortest_path()


def test_the_check_sees_a_missing_name(monkeypatch):
    """The collection would notice a new public name that has no page."""
    monkeypatch.setattr(neurosim, "__all__", [*neurosim.__all__, "brand_new"], raising=True)
    monkeypatch.setattr(neurosim, "brand_new", lambda: None, raising=False)
    with pytest.raises(AssertionError, match="brand_new"):
        test_every_public_name_has_a_page("neurosim")
