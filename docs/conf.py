"""Sphinx configuration of neurosim's documentation site.

Build (from the repository root)::

    python -m pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors and references are nitpicky: the build is the check that
every docstring is valid reST and every cross-reference resolves.
"""

import importlib.util
import json
import os
import shutil
import sys
import warnings
from pathlib import Path

import neurosim

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

# The tutorials and examples run during the build; compile them once into the
# reader's cache, not into the package tree, and never open windows.
os.environ.setdefault("MPLBACKEND", "Agg")
# one thread per process keeps gallery timings comparable with the 30 s budget
os.environ.setdefault("NEUROSIM_NUM_THREADS", "1")

project = "neurosim"
author = "the neurosim developers"
copyright = "the neurosim developers"  # noqa: A001  (Sphinx's name)
version = release = neurosim.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "**/README.rst", "sg_execution_times.rst", "auto_*/sg_execution_times.rst",
                    "tutorials/*.py", "examples/*.py"]

# --- references ------------------------------------------------------------
# nitpicky: an unresolved reference to a neurosim object is an error.
nitpicky = True
# No intersphinx: the build must work offline (CI and developer machines
# cannot reach the inventories of docs.python.org, numpy or xarray), so
# references to objects of other packages cannot resolve; they are not errors.
# Only outside packages are listed here; a neurosim name never is.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|xarray|xr|scipy|sklearn|networkx|nx|matplotlib|mpl|plt|numba|dask|distributed|zarr|"
               r"h5py|h5netcdf|pandas|pathlib|os|typing|collections|concurrent|threading|multiprocessing|"
               r"warnings|datetime|abc|enum|io|json|contextlib|functools|tqdm|skimage|pywt|mlxtend)(\..*)?"),
    # Python's own types and exceptions
    (r"py:.*", r"(int|float|bool|str|bytes|dict|list|tuple|set|frozenset|object|type|callable|None|"
               r"Exception|ValueError|TypeError|RuntimeError|KeyError|IndexError|Warning|UserWarning|"
               r"RuntimeWarning|FileNotFoundError|FileExistsError|OSError|ImportError|NotImplementedError|"
               r"AttributeError|ArithmeticError|FloatingPointError|MemoryError)"),
]

# --- autodoc / autosummary / numpydoc ----------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
# Annotations are left out of signatures: without intersphinx their outside
# types (numpy.ndarray, xarray.Dataset, ...) cannot link, and numpydoc's
# Parameters section already gives every type in words.
autodoc_typehints = "none"
autoclass_content = "class"
numpydoc_show_class_members = False   # the class template lists members with autodoc
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False      # types are prose ("array of shape (n, k)"), not references
numpydoc_validation_checks = set()    # numpydoc validation runs in the suite, not here

# --- HTML -------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"neurosim {release}"
html_static_path = ["_static"]
html_css_files = ["neurosim.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 5,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
html_sidebars = {"index": [], "changelog": [], "cite": []}

# --- math, offline -----------------------------------------------------------
# MathJax is served by the site itself, never by a CDN, so every page renders
# its math with no network (offline readers, CI; tests/docs/test_site_browser.py
# checks it with Chromium's network off). The files come from the
# django-static-mathjax wheel (the docs extra): MathJax 3.2.2 as its authors
# publish it (the npm package mathjax-full, whose package.json and LICENSE,
# Apache-2.0, are copied along); the wheel has no dependencies and no Django
# code. _copy_mathjax copies its browser build into the site's _static.
MATHJAX_ENTRY = "tex-mml-chtml.js"   # TeX and MathML in, HTML-CSS out: what Sphinx's CDN default loads
mathjax_path = f"mathjax/{MATHJAX_ENTRY}"   # relative to _static

# --- markdown pages (myst-parser) -------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3     # links such as [x](testing.md#ci-and-its-budget) resolve
suppress_warnings = ["myst.header"]  # report pages may start below level 1 in included fragments

# --- gallery (sphinx-gallery) -----------------------------------------------
# NEUROSIM_DOCS_EXECUTE: a regular expression of the scripts to run (default:
# all of them), or ``none`` to run none: the quick build, which shows every
# script's code without its output and figures (README "Building the docs").
# The browser test (tests/docs/test_site_browser.py) runs two, to keep CI
# short; the others are shown with their code and no output.
EXECUTE = os.environ.get("NEUROSIM_DOCS_EXECUTE") or r"/(tutorial_|example_)"
if EXECUTE.strip().lower() == "none":
    EXECUTE = r"(?!)"    # matches no file name
sphinx_gallery_conf = {
    "examples_dirs": ["tutorials", "examples"],
    "gallery_dirs": ["auto_tutorials", "auto_examples"],
    "filename_pattern": EXECUTE,
    "ignore_pattern": r"__init__\.py|_common\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,   # a failing example is a build error (-W) listing every failure
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reference_url": {"neurosim": None},
    # "Examples using X" on each API page (the autosummary templates' minigallery): the scripts
    # that name X, found by reading their code (executed or not), keyed by X's shortest import
    # path, the path its page has (tests/docs/test_api_reference.py)
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("neurosim",),
    "show_memory": False,
    "capture_repr": (),      # only what a script prints is shown, not the value of its last expression
    "min_reported_time": 1,
}

warnings.filterwarnings("ignore", category=UserWarning, message="Matplotlib is currently using agg")
warnings.filterwarnings("ignore", category=DeprecationWarning)


# --- references by any import path -------------------------------------------
# Each object has one page, under the shortest path it is exported from
# (``neurosim.Network``, not ``neurosim.network.Network``), but docstrings name
# objects by whichever path their author used (``neurosim.network.Network.apply``,
# ``GroupStructure.from_graph`` inside ``neurosim.groups``).  A reference that
# Sphinx cannot find is resolved here by importing what it names and linking to
# the page of the same object.  A reference to an object that exists but has no
# page (a private helper, a module constant outside ``__all__``) is shown as
# code without a link; a reference to nothing at all stays an error.
import importlib
import inspect

from docutils import nodes
from sphinx.pycode import ModuleAnalyzer

_MISSING = object()


def _import_path(path):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001  (a module failing to import is reported by autodoc)
            return _MISSING
        for attr in parts[cut:]:
            obj = inspect.getattr_static(obj, attr, _MISSING) if inspect.isclass(obj) else getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def _documented(env):
    """id(object) -> the documented full name, rebuilt when the domain grows."""
    domain = env.get_domain("py")
    key = (len(domain.objects), len(domain.modules))
    cache = getattr(env, "_neurosim_alias_index", None)
    if cache is None or cache[0] != key:
        index = {}
        for name in list(domain.modules) + list(domain.objects):
            obj = _import_path(name)
            if obj is not _MISSING and not isinstance(obj, (int, float, str, bool, tuple, type(None))):
                index.setdefault(id(obj), name)
        cache = (key, index)
        env._neurosim_alias_index = cache
    return cache[1]


def _candidates(node):
    target = node["reftarget"].lstrip("~.")
    module, cls = node.get("py:module"), node.get("py:class")
    out = []
    if module and cls:
        out.append(f"{module}.{cls}.{target}")
    if module:
        out.append(f"{module}.{target}")
        # a name relative to the package that holds the module
        out.append(f"{module.rsplit('.', 1)[0]}.{target}")
    # the module that defines the object whose docstring holds the reference
    # (documented as neurosim.data.gabor_dictionary, written in neurosim.data.dictionaries)
    source = None
    parent = node
    while parent is not None and source is None:
        source = parent.source if parent.source and "docstring of " in parent.source else None
        parent = parent.parent
    if source:
        owner = _import_path(source.rsplit("docstring of ", 1)[1].strip())
        home = getattr(owner, "__module__", None) or getattr(owner, "__name__", None)
        if isinstance(home, str):
            out.append(f"{home}.{target}")
            qual = getattr(owner, "__qualname__", "")
            if inspect.isclass(owner):
                out.append(f"{home}.{qual}.{target}")
            elif "." in qual:
                out.append(f"{home}.{qual.rsplit('.', 1)[0]}.{target}")
    out += [target, f"neurosim.{target}"]
    return out


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    index = _documented(env)
    exists = False
    for path in _candidates(node):
        obj = _import_path(path)
        if obj is _MISSING:
            continue
        exists = True
        name = index.get(id(obj))
        if name is not None:
            return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name, node, contnode)
    if exists:
        return contnode if isinstance(contnode, nodes.literal) else nodes.literal("", contnode.astext())
    return None


def _no_type_docstring(app, what, name, obj, options, lines):
    """A constant without a docstring of its own would show its type's (numpy.ndarray's, tuple's).

    An instance's only docstring of its own is a ``#:`` comment or a string
    after the assignment, which the source analyser finds.
    """
    if what != "data" or not lines or isinstance(obj, type) or callable(obj):
        return
    module, _, attr = name.rpartition(".")
    try:  # a ``#:`` comment above the assignment is the constant's own docstring
        if ("", attr) in ModuleAnalyzer.for_module(module).find_attr_docs():
            return
    except Exception:  # noqa: BLE001  (no source to analyse: nothing of its own either)
        pass
    lines[:] = []


def _private(cls):
    return cls.__name__.startswith("_") and cls.__module__.split(".")[0] == "neurosim"


def _public_bases(cls):
    out = []
    for base in cls.__bases__:
        for b in (_public_bases(base) if _private(base) else [base]):
            if b not in out:
                out.append(b)
    return out


def _no_private_bases(app, name, obj, options, bases):
    """Show the public classes a private helper stands for ("Bases: Rule", not "Bases: _Growing").

    A reader cannot look up a private helper (it has no page); its own public
    bases are the classes whose documentation applies.
    """
    if any(_private(b) for b in bases):
        bases[:] = _public_bases(obj)


def _mathjax_source():
    """The MathJax release the docs extra installed: its folder and its package.json text."""
    spec = importlib.util.find_spec("mathjax")
    root = Path(spec.origin).parent / "static" / "mathjax" if spec and spec.origin else None
    manifest = root / "package.json" if root else None
    if manifest is None or not manifest.is_file() or json.loads(manifest.read_text())["name"] != "mathjax-full":
        raise RuntimeError("the docs need MathJax from the django-static-mathjax package, which is not installed: "
                           "python -m pip install -e '.[docs]'")
    return root, manifest.read_text()


def _copy_mathjax(app):
    """Copy MathJax's browser build into the site's ``_static/mathjax`` (HTML builders only).

    Copies the entry script and the folders it loads from (fonts, TeX
    extensions, the menu and its accessibility parts), not the release's other
    combined scripts nor its sources; skipped when the same release is there.
    """
    if app.builder.format != "html":
        return
    root, manifest = _mathjax_source()
    dest = Path(app.outdir) / "_static" / "mathjax"
    if (dest / "package.json").is_file() and (dest / "package.json").read_text() == manifest:
        return
    shutil.rmtree(dest, ignore_errors=True)
    es5 = root / "es5"
    for entry in es5.iterdir():
        if entry.is_dir():
            shutil.copytree(entry, dest / entry.name)
    shutil.copy2(es5 / MATHJAX_ENTRY, dest / MATHJAX_ENTRY)
    shutil.copy2(root / "LICENSE", dest / "LICENSE")
    (dest / "package.json").write_text(manifest)   # last: a copy cut short is made again next build


def setup(app):
    app.connect("builder-inited", _copy_mathjax)
    app.connect("missing-reference", _missing_reference)
    app.connect("autodoc-process-bases", _no_private_bases)
    app.connect("autodoc-process-docstring", _no_type_docstring, priority=1)
