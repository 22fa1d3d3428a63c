"""Every numeric range a docstring states is the range the code accepts.

numpydoc type lines state ranges (``tol : float in (0, 1)``, ``max_iter : int >= 1``). For each public
function and class of the library (``neurosim.models`` apart: its builders run simulations) whose other
required arguments this test can supply, each documented bound is tried from both sides: a value just
inside is accepted, a value just outside (or on an open bound) is refused with a ValueError or TypeError
naming the parameter, and NaN is refused for every float. Estimators follow scikit-learn's contract:
the constructor stores the value and ``fit`` validates it, so they are fitted on a small matrix. A bound the code checks differently from the
documentation (``low=0`` written ``low=1``, an open bound made closed) fails here.
"""

import inspect
import math
import re
import warnings

import numpy as np
import pytest

docscrape = pytest.importorskip("numpydoc.docscrape", reason="numpydoc is not installed (the `test` extra has it)")

import neurosim as ns  # noqa: E402

from test_documented_defaults import _callables  # noqa: E402

_INTERVAL = re.compile(r"^(?P<kind>float|int)\s+in\s+(?P<lo_br>[(\[])\s*(?P<lo>[^,]+?)\s*,\s*(?P<hi>[^\])]+?)\s*"
                       r"(?P<hi_br>[)\]])")
_HALF = re.compile(r"^(?P<kind>float|int)\s*(?P<op>>=|>|<=|<)\s*(?P<bound>[-+0-9.eE]+|inf)\b")

_RNG = np.random.default_rng(0)
_X = _RNG.standard_normal((5, 4))
_D = _RNG.standard_normal((3, 4))


def _fixtures():
    """Values for the required arguments the walk can fill: small problems that run in milliseconds."""
    return {"X": _X, "D": _D, "W": _D, "A": _RNG.standard_normal((5, 3)), "codes": _RNG.standard_normal((5, 3)),
            "n_atoms": 3, "n_components": 3, "n": 3, "k": 1, "n_nonzero": 1, "lam": 0.1, "size": 3, "dim": 4,
            "n_units": 3, "population": ns.Population("p", 3), "target": ns.Population("p", 3), "alpha": 0.1,
            "start": 1.0, "stop": 0.5, "steps": 10, "factor": 0.5, "half_life": 10.0, "batch": 1, "rows": 3,
            "cols": 3, "depth": 2, "branching": 1, "sets": [[0]], "kind": "linear_to_zero",
            "condition": lambda net: False, "action": lambda net: None}


#: fixtures of callables whose argument of a shared name means something else (OnPre's target is a variable name)
_FIXTURES_FOR = {"OnPre": {"target": "ge"}}


def _fixtures_for(where):
    return {**_fixtures(), **_FIXTURES_FOR.get(where.rsplit(".", 1)[-1], {})}


def _number(text):
    text = text.strip().strip("`")
    return math.inf if text in ("inf", "+inf") else -math.inf if text == "-inf" else float(text)


def _bounds(type_line):
    """(kind, lo, lo_closed, hi, hi_closed) of a documented range, or None."""
    m = _INTERVAL.match(type_line)
    if m:
        try:
            lo, hi = _number(m["lo"]), _number(m["hi"])
        except ValueError:
            return None
        return m["kind"], lo, m["lo_br"] == "[", hi, m["hi_br"] == "]"
    m = _HALF.match(type_line)
    if m:
        b = _number(m["bound"])
        if m["op"] in (">=", ">"):
            return m["kind"], b, m["op"] == ">=", math.inf, False
        return m["kind"], -math.inf, False, b, m["op"] == "<="
    return None


def _trials(kind, lo, lo_closed, hi, hi_closed):
    """(value, accepted?) pairs on both sides of each finite bound."""
    out = []
    if kind == "int":
        if math.isfinite(lo):
            first = int(lo) if lo_closed else int(lo) + 1
            out += [(first, True), (first - 1, False)]
        if math.isfinite(hi):
            last = int(hi) if hi_closed else int(hi) - 1
            out += [(last, True), (last + 1, False)]
        return out
    width = (hi - lo) if math.isfinite(lo) and math.isfinite(hi) else 1.0
    step = 1e-3 * min(width, 1.0) * max(1.0, abs(lo) if math.isfinite(lo) else 1.0)
    if math.isfinite(lo):
        out += [(lo, lo_closed), (lo + step, True), (lo - step, False)]
    if math.isfinite(hi):
        step_hi = 1e-3 * min(width, 1.0) * max(1.0, abs(hi))
        out += [(hi, hi_closed), (hi - step_hi, True), (hi + step_hi, False)]
    out.append((math.nan, False))
    return out


def _needs_an_instance(obj):
    """A method reached through its class (``Network.run``); classmethods come bound and classes are called."""
    return not inspect.isclass(obj) and not inspect.ismethod(obj) and "." in obj.__qualname__


def _cases():
    fixtures = _fixtures()
    cases = []
    for where, obj in _callables():
        if where.startswith("neurosim.models") or _needs_an_instance(obj):
            continue  # the builders of neurosim.models run simulations
        try:
            doc = docscrape.ClassDoc(obj) if inspect.isclass(obj) else docscrape.FunctionDoc(obj)
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        required = [n for n, p in signature.parameters.items() if p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if any(n not in fixtures for n in required):
            continue
        for parameter in doc["Parameters"]:
            if parameter.name not in signature.parameters or "Schedule" in parameter.type:
                continue
            bounds = _bounds(parameter.type)
            if bounds is None:
                continue
            for value, accepted in _trials(*bounds):
                cases.append((where, parameter.name, parameter.type, value, accepted))
    return cases


CASES = _cases()
_BY_NAME = {where: obj for where, obj in _callables()}


def test_the_walk_finds_documented_ranges():
    """The walk reaches enough of the API for the next test to mean something."""
    names = {(where, name) for where, name, *_ in CASES}
    assert len(names) >= 40, sorted(names)
    assert any(where.endswith("feature_sign") for where, _ in names)


def _params():
    # an estimator's case fits a small network: it compiles one, which is seconds of numba per class
    return [pytest.param(*case, id=f"{case[0]}:{case[1]}={case[3]!r}",
                         marks=[pytest.mark.slow] if hasattr(_BY_NAME[case[0]], "fit") else [])
            for case in CASES]


@pytest.mark.parametrize("where, name, type_line, value, accepted", _params())
def test_documented_range_is_the_accepted_range(where, name, type_line, value, accepted):
    obj = _BY_NAME[where]
    signature = inspect.signature(obj)
    fixtures = _fixtures_for(where)
    kwargs = {n: fixtures[n] for n, p in signature.parameters.items() if p.default is inspect.Parameter.empty
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    kwargs[name] = value
    try:
        with np.errstate(all="ignore"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                made = obj(**kwargs)
                if inspect.isclass(obj) and hasattr(obj, "fit"):
                    # scikit-learn's contract: an estimator's constructor stores, fit validates
                    made.fit(_X)
    except (ValueError, TypeError) as exc:
        named = name in str(exc)
        assert not (accepted and named), f"{where}: {name}={value!r} is inside {type_line!r} but refused: {exc}"
        if not accepted:
            assert named, f"{where}: {name}={value!r} is outside {type_line!r}; the error does not name it: {exc}"
        return
    assert accepted, f"{where}: {name}={value!r} is outside the documented {type_line!r} but was accepted"
