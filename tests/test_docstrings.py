"""numpydoc validation of the public API (issue 26): every public object has a docstring whose
Parameters section names exactly the parameters of its signature, each with a description, and a
Returns section where it returns a value.

The public API is ``neurosim.__all__``, the ``__all__`` of every public submodule of ``neurosim``
and ``neurosim.models`` (modules whose dotted name has no part starting with ``_``; the numba
kernels in ``neurosim.kernels`` and the GPU kernels are implementation, not API), and the public
methods and properties that public classes define themselves.
"""

import importlib
import inspect
import pkgutil

import pytest

validate = pytest.importorskip("numpydoc.validate", reason="numpydoc is not installed (the `test` extra has it)")

import neurosim  # noqa: E402

# GL08: no docstring; PR01: a parameter is not documented; PR02: a documented parameter is not in the
# signature; PR07: a parameter has no description; RT01: no Returns section though the function returns.
CHECKED = {"GL08", "PR01", "PR02", "PR07", "RT01"}

# Modules that are not API: numba kernels (pure array functions the components call), the GPU
# kernels (need numba-cuda), the command line and the script that regenerates shipped data.
NOT_API = ("neurosim.kernels", "neurosim.cuda.kernels", "neurosim.cuda.backend", "neurosim.cuda.ensemble",
           "neurosim.simulations", "neurosim.cli", "neurosim.__main__", "neurosim.data.make_text_domains")


def _public_modules():
    names = ["neurosim"]
    for package in ("neurosim", "neurosim.models"):
        module = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            names.append(info.name)
    names = sorted(set(names))
    return [n for n in names
            if not any(part.startswith("_") for part in n.split("."))
            and not any(n == m or n.startswith(m + ".") for m in NOT_API)]


def _function(value):
    if isinstance(value, property):
        return value.fget
    if isinstance(value, (classmethod, staticmethod)):
        return value.__func__
    return value if inspect.isfunction(value) else None


def _inherited_from(cls, name):
    """The documented member of a base class that ``cls.name`` overrides without a docstring of its own."""
    for base in cls.__mro__[1:]:
        value = vars(base).get(name)
        if value is not None and (func := _function(value)) is not None and func.__doc__:
            return base, func
    return None


def _parameters(func):
    return [p for p in inspect.signature(func).parameters if p not in ("self", "cls")]


def _own_members(cls):
    """Public methods and properties that ``cls`` itself defines with a docstring of its own, or
    undocumented ones that override nothing documented.

    An override without a docstring inherits the docstring of the member it overrides (as
    Sphinx's autodoc shows it, ``autodoc_inherit_docstrings``); that docstring is validated on the
    base class, and ``test_undocumented_overrides_keep_the_signature`` checks that it still fits.
    """
    for name, value in vars(cls).items():
        if name.startswith("_") or (func := _function(value)) is None:
            continue
        if not func.__doc__ and _inherited_from(cls, name) is not None:
            continue
        yield name


def public_objects():
    """Dotted names of every public object, each once, as ``numpydoc.validate`` imports them."""
    seen = {}
    for modname in _public_modules():
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            home = getattr(obj, "__module__", None)
            # where it is defined, so a name re-exported by a package is checked once, in its own module
            qualname = getattr(obj, "__qualname__", name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or home is None:
                continue
            if home.split(".")[0] != "neurosim" or "<locals>" in qualname:
                # made by a factory (local_rule): checked under the name it is exported as
                home, qualname = modname, name
            key = id(obj)
            if key in seen:
                continue
            seen[key] = f"{home}.{qualname}"
            if inspect.isclass(obj):
                for member in _own_members(obj):
                    seen[(key, member)] = f"{home}.{qualname}.{member}"
    return sorted(set(seen.values()))


def _public_classes():
    for modname in _public_modules():
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            if inspect.isclass(obj := getattr(module, name)):
                yield obj


def _failures(name):
    try:
        result = validate.validate(name)
    except Exception as exc:  # pragma: no cover - a name numpydoc cannot import is itself a failure
        return [("IMPORT", repr(exc))]
    return [(code, msg) for code, msg in result["errors"] if code in CHECKED]


def test_the_walk_finds_the_public_api():
    names = set(public_objects())
    # spot checks: the objects the issue names, a factory-made rule, a models entry point, a property
    for name in ["neurosim.network.Network.summary", "neurosim.recording.Recorder.flush",
                 "neurosim.network.Network.record", "neurosim.rules.standard.Sanger",
                 "neurosim.models.neurogenesis.build_network", "neurosim.synapses.Projection.weights"]:
        assert name in names, name
    assert not any(".kernels." in n for n in names)
    assert len(names) > 300


def test_numpydoc_validation_of_the_public_api():
    # the rule classes local_rule makes (Sanger, BCM, ...) are checked like any other: they have real
    # signatures (issue 26, item 4), so their documented parameters must match them
    failures = {name: errs for name in public_objects() if (errs := _failures(name))}
    report = "\n".join(f"{name}: {code} {msg}" for name, errs in sorted(failures.items()) for code, msg in errs)
    assert not failures, f"{len(failures)} public objects fail numpydoc validation:\n{report}"


def test_undocumented_overrides_keep_the_signature():
    # an override shown with its base's docstring must take the parameters that docstring documents
    mismatches = []
    for cls in set(_public_classes()):
        for name, value in vars(cls).items():
            if name.startswith("_") or (func := _function(value)) is None or func.__doc__:
                continue
            if (found := _inherited_from(cls, name)) is not None:
                base, base_func = found
                if _parameters(func) != _parameters(base_func):
                    mismatches.append(f"{cls.__module__}.{cls.__qualname__}.{name}{_parameters(func)} "
                                      f"inherits the docstring of {base.__qualname__}.{name}{_parameters(base_func)}")
    assert not mismatches, "\n".join(sorted(mismatches))
