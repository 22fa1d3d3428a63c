"""Declared parameters: each component states its parameters once.

A component class lists its parameters as class attributes, as Nengo's
``nengo/params.py`` descriptors and scikit-learn's ``_parameter_constraints``
do::

    class Oja(Rule):
        rate = Float(0.01, low=0.0, high=1.0, low_open=True)

Everything else derives from that one table: validation on construction and
on every later assignment (``TypeError``/``ValueError`` naming the parameter
and the allowed range), ``params()`` (hence the Dataset ``attrs`` of every
recording and the fingerprint a checkpoint is compared against),
``repr``, and the property-based tests that hammer every public constructor.

**Live and fixed parameters.** A *live* parameter (the default) may be
reassigned at any time, also between runs and from a callback, and takes
effect from the next step on both run paths: the engine reads parameter
values afresh at the start of every compiled segment and every per-step
step. A *fixed* parameter (``live=False``) shapes the network's structure
(a variable name, a signal) and refuses assignment after construction with
an ``AttributeError``.

**Schedules.** A live numeric parameter may hold a
:class:`~neurosim.schedules.Schedule` (a function of the step number:
annealed learning rates, lambda schedules). Its value at step ``t`` is used
in step ``t``; compiled segments receive the values of all their steps as an
array drawn before the segment starts, so both paths see the same numbers.
"""

from __future__ import annotations

import numbers

import numpy as np

from neurosim._validation import check_bool, check_choice, check_float, check_int, check_name_or_none

__all__ = ["Param", "Float", "Int", "Bool", "Choice", "Name", "Instance", "Parametrized", "ParamRef", "REQUIRED",
           "ScheduleOutOfRange"]


class _Required:
    def __repr__(self):
        return "REQUIRED"


#: marks a parameter without a default
REQUIRED = _Required()


class Param:
    """A declared parameter (a data descriptor).

    Parameters
    ----------
    default : object
        Value used when the constructor is not given one; ``REQUIRED`` for none.
    live : bool
        Whether the parameter may be reassigned after construction (it then
        takes effect from the next step). Fixed parameters refuse assignment.
    optional : bool
        Whether ``None`` is allowed (meaning "not set" / "automatic").
    doc : str
        One line for ``describe()``.
    schedulable : bool, optional
        Whether a :class:`~neurosim.schedules.Schedule` may stand for the
        value (default: numeric live parameters can).
    """

    #: whether a Schedule may stand for the value
    schedulable = False
    kind = "object"

    def __init__(self, default=REQUIRED, *, live: bool = True, optional: bool = False, doc: str = "",
                 schedulable: bool | None = None):
        if schedulable is not None:
            self.schedulable = bool(schedulable)
        self.default = default
        self.live = bool(live)
        self.optional = bool(optional)
        self.doc = doc
        self.name = None

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__}.{self.name} has not been set") from None

    def __set__(self, obj, value):
        if not self.live and self.name in obj.__dict__:
            raise AttributeError(f"{type(obj).__name__}.{self.name} is fixed once the {type(obj).__name__} is built "
                                 f"(it shapes the network's structure); build a new {type(obj).__name__} instead")
        obj.__dict__[self.name] = self.validate(value)
        bump()

    def validate(self, value):
        """Return the value converted to its canonical type, or raise naming the parameter."""
        if value is None:
            if self.optional:
                return None
            raise TypeError(f"{self.name} must be {self.describe_range()}; got None")
        from neurosim.schedules import Schedule

        if isinstance(value, Schedule):
            if not self.schedulable or not self.live:
                raise TypeError(f"{self.name} cannot follow a schedule (only live numeric parameters can)")
            value.bind(self)
            return value
        return self.check(value)

    def check(self, value):
        return value

    def check_values(self, values: np.ndarray, t0: int) -> np.ndarray:
        """Validate a schedule's values for steps ``t0, t0 + 1, ...``; return them as float64."""
        return np.asarray(values, dtype=np.float64)

    def describe_range(self) -> str:
        return self.kind

    def __repr__(self):
        return f"{type(self).__name__}({self.default!r})"


class ScheduleOutOfRange(ValueError):
    """A schedule's value is outside its parameter's range (or not finite) at step ``step``.

    A ``ValueError``; the step lets a compiled segment, which draws a whole
    segment's values before it starts, run every step before ``step`` and
    stop where the per-step path stops.
    """

    def __init__(self, message: str, step: int):
        super().__init__(message)
        self.step = int(step)


class Float(Param):
    """A finite real number in an interval."""

    schedulable = True
    kind = "float"

    def __init__(self, default=REQUIRED, *, low=None, high=None, low_open=False, high_open=False, **kw):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        super().__init__(default, **kw)

    def check(self, value):
        return check_float(self.name, value, low=self.low, high=self.high, low_open=self.low_open,
                           high_open=self.high_open)

    def check_values(self, values, t0):
        values = np.asarray(values, dtype=np.float64)
        bad = ~np.isfinite(values)
        if self.low is not None:
            bad |= (values <= self.low) if self.low_open else (values < self.low)
        if self.high is not None:
            bad |= (values >= self.high) if self.high_open else (values > self.high)
        if bad.any():
            k = int(np.argmax(bad))
            # the scalar check words the error exactly as a plain assignment would
            try:
                self.check(float(values[k]))
            except ValueError as exc:
                raise ScheduleOutOfRange(f"the schedule of {self.name} gives {float(values[k])!r} at step {t0 + k}: "
                                         f"{exc}", t0 + k) from None
        return values

    def describe_range(self):
        from neurosim._validation import _range_text

        return f"a float in {_range_text(self.low, self.high, not self.low_open, not self.high_open)}"


class Int(Param):
    """An integer in a closed interval."""

    kind = "int"

    def __init__(self, default=REQUIRED, *, low=None, high=None, **kw):
        self.low, self.high = low, high
        super().__init__(default, **kw)

    def check(self, value):
        return check_int(self.name, value, low=self.low, high=self.high)

    def describe_range(self):
        from neurosim._validation import _range_text

        return f"an int in {_range_text(self.low, self.high, True, True)}"


class Bool(Param):
    kind = "bool"

    def check(self, value):
        return check_bool(self.name, value)


class Choice(Param):
    """One string of a fixed set."""

    kind = "str"

    def __init__(self, default=REQUIRED, *, options, **kw):
        self.options = tuple(options)
        super().__init__(default, **kw)

    def check(self, value):
        return check_choice(self.name, value, set(self.options))

    def describe_range(self):
        return f"one of {list(self.options)}"


class Name(Param):
    """An identifier (a variable name)."""

    kind = "name"

    def check(self, value):
        return check_name_or_none(self.name, value)


class Instance(Param):
    """An instance of a class (e.g. a Signal)."""

    def __init__(self, default=REQUIRED, *, cls, **kw):
        self.cls = cls
        super().__init__(default, **kw)

    def check(self, value):
        if not isinstance(value, self.cls):
            raise TypeError(f"{self.name} must be a {self.cls.__name__}; got {type(value).__name__}")
        return value

    def describe_range(self):
        return f"a {self.cls.__name__}"


# -- change tracking -----------------------------------------------------------------
# A counter every assignment bumps, so the engine can tell cheaply whether any
# parameter changed since it last planned a segment.
_generation = [0]


def bump():
    _generation[0] += 1


def generation() -> int:
    return _generation[0]


class Parametrized:
    """Mixin for components with declared parameters.

    Subclasses declare :class:`Param` class attributes and call
    :meth:`set_params` from ``__init__`` with the constructor's arguments.
    """

    #: key of the component's type in ``params()`` ("rule", "dynamics", ...)
    params_key = "component"

    @classmethod
    def declared(cls) -> dict:
        """``{name: Param}`` of every declared parameter, base classes first."""
        out = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Param):
                    out[name] = value
        return out

    def set_params(self, **values):
        """Assign every declared parameter: given values, else defaults (missing required ones raise)."""
        declared = self.declared()
        unknown = set(values) - set(declared)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no parameters {sorted(unknown)}; it has {sorted(declared)}")
        for name, p in declared.items():
            if name in values:
                setattr(self, name, values[name])
            elif p.default is REQUIRED:
                raise TypeError(f"{type(self).__name__} needs the parameter {name!r}")
            else:
                setattr(self, name, p.default)

    def params(self) -> dict:
        """``{type key: class name, parameter: value}``; signals and schedules appear by name/repr."""
        out = {self.params_key: type(self).__name__}
        for name in self.declared():
            out[name] = export_value(getattr(self, name))
        return out

    def ref(self, name: str) -> "ParamRef":
        """A kernel argument that reads the parameter's current value when a segment or step starts."""
        if name not in self.declared():
            raise KeyError(f"{type(self).__name__} declares no parameter {name!r}")
        return ParamRef(self, name)

    def value(self, name: str, t: int):
        """The parameter's value in step ``t`` (a schedule evaluated there)."""
        return resolve_value(self, name, t)

    def __repr__(self):
        args = ", ".join(f"{k}={export_value(getattr(self, k))!r}" for k in self.declared())
        return f"{type(self).__name__}({args})"


def export_value(v):
    """A value as it appears in ``params()``: plain numbers and strings; objects by name or repr."""
    if v is None or isinstance(v, (bool, numbers.Number, str)):
        return v
    name = getattr(v, "name", None)
    if isinstance(name, str):
        return name
    return repr(v)


class ParamRef:
    """A scalar kernel argument read from a declared parameter when a segment or step starts."""

    __slots__ = ("owner", "name")

    def __init__(self, owner, name):
        self.owner, self.name = owner, name

    @property
    def label(self) -> str:
        return f"{type(self.owner).__name__}.{self.name}"

    def current(self):
        return getattr(self.owner, self.name)

    def is_schedule(self) -> bool:
        from neurosim.schedules import Schedule

        return isinstance(self.current(), Schedule)

    def at(self, t: int | None):
        return resolve_value(self.owner, self.name, t)

    def over(self, t0: int, n: int) -> np.ndarray:
        """Values for steps ``t0 .. t0 + n - 1`` (validated against the declared range)."""
        sched = self.current()
        p = type(self.owner).declared()[self.name]
        return np.ascontiguousarray(p.check_values(sched.values(t0, n), t0))


def resolve_value(owner, name, t):
    from neurosim.schedules import Schedule

    v = getattr(owner, name)
    if isinstance(v, Schedule):
        if t is None:
            raise RuntimeError(f"{type(owner).__name__}.{name} follows a schedule; its value needs a step number")
        p = type(owner).declared()[name]
        return float(p.check_values(v.values(int(t), 1), int(t))[0])
    return v
