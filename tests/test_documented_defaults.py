"""Every default a docstring states is the default the signature has.

numpydoc writes a parameter's default in its type line (``tol : float,
default=1e-6``). A default changed in the code but not in the docstring (or
the other way round) is a silent change of behaviour for every user who reads
the documentation; this test reads each public object's Parameters section
(the API that ``tests/test_docstrings.py`` validates) and compares each
stated default, parsed as a Python literal, with ``inspect.signature``.
"""

import ast
import importlib
import inspect
import re

import pytest

docscrape = pytest.importorskip("numpydoc.docscrape", reason="numpydoc is not installed (the `test` extra has it)")

from test_docstrings import _own_members, _public_modules  # noqa: E402

# "default=1e-6", "default: 1e-6", "default 1e-6" at the end of the type line, or "(default 1e-6)" inside it
_DEFAULT = re.compile(r"\(default\s*[=:]?\s*(?P<inner>[^)]+?)\)|default\s*[=:]?\s*(?P<tail>[^,;()]+?)\s*$", re.I)


def _callables():
    seen = set()
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if id(obj) in seen or not callable(obj):
                continue
            seen.add(id(obj))
            yield f"{module_name}.{name}", obj
            if inspect.isclass(obj):
                for member in _own_members(obj):
                    value = inspect.getattr_static(obj, member)
                    if not isinstance(value, property) and callable(getattr(obj, member)):
                        yield f"{module_name}.{name}.{member}", getattr(obj, member)


def _stated_defaults():
    """(where, parameter, stated text, the signature's default) for every default a docstring states."""
    rows = []
    for where, obj in _callables():
        try:
            doc = docscrape.ClassDoc(obj) if inspect.isclass(obj) else docscrape.FunctionDoc(obj)
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            continue  # builtins and objects without a signature or a parseable docstring
        for parameter in doc["Parameters"]:
            match = _DEFAULT.search(parameter.type)
            if match is None or parameter.name not in signature.parameters:
                continue  # unknown names are numpydoc validation's PR02 (tests/test_docstrings.py)
            stated = (match.group("inner") or match.group("tail")).strip()
            rows.append((where, parameter.name, stated, signature.parameters[parameter.name].default))
    return rows


STATED = _stated_defaults()


def test_defaults_are_stated_somewhere():
    """The walk finds the documented defaults (a walk that finds none would make the next test vacuous)."""
    assert len(STATED) >= 50
    assert any(where.endswith("lagrange_dual_bases") for where, *_ in STATED)


@pytest.mark.parametrize("where, name, stated, actual", STATED, ids=[f"{w}:{n}" for w, n, *_ in STATED])
def test_stated_default_is_the_signatures(where, name, stated, actual):
    """The docstring's ``default=...`` is the signature's default, value and kind (1 is not True)."""
    assert actual is not inspect.Parameter.empty, f"{where}: {name} is documented with a default but has none"
    try:
        value = ast.literal_eval(stated)
    except (ValueError, SyntaxError):
        pytest.fail(f"{where}: {name}'s stated default {stated!r} is not a Python literal; write it as one")
    assert type(value) is type(actual) or {type(value), type(actual)} <= {int, float}, (where, name, stated, actual)
    assert value == actual, f"{where}: {name} is documented as default={stated} but defaults to {actual!r}"
