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
from types import MappingProxyType
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

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
    live : bool, default=True
        Whether the parameter may be reassigned after construction (it then
        takes effect from the next step). Fixed parameters refuse assignment.
    optional : bool, default=False
        Whether ``None`` is allowed (meaning "not set" / "automatic").
    doc : str, default=""
        One line for ``describe()``.
    schedulable : bool, optional
        Whether a :class:`~neurosim.schedules.Schedule` may stand for the
        value (default: numeric live parameters can).

    Examples
    --------
    >>> from neurosim.params import Float, Parametrized
    >>> class Decay(Parametrized):
    ...     rate = Float(0.1, low=0.0, high=1.0, low_open=True, doc="decay per step")
    ...     def __init__(self, rate=0.1):
    ...         self.set_params(rate=rate)
    >>> d = Decay(0.5)
    >>> d.params()
    {'component': 'Decay', 'rate': 0.5}
    >>> d.rate = 2.0
    Traceback (most recent call last):
    ...
    ValueError: rate must be in (0.0, 1.0]; got 2.0
    """

    #: whether a Schedule may stand for the value
    schedulable = False
    kind = "object"

    def __init__(self, default: Any = REQUIRED, *, live: bool = True, optional: bool = False, doc: str = "",
                 schedulable: bool | None = None) -> None:
        if schedulable is not None:
            self.schedulable = bool(schedulable)
        self.default = default
        self.live = bool(live)
        self.optional = bool(optional)
        self.doc = doc
        # set by __set_name__ when the owning class is made, before any value is checked
        self.name: str = None  # type: ignore[assignment]

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

    def validate(self, value: Any) -> Any:
        """Return the value converted to its canonical type, or raise naming the parameter.

        Parameters
        ----------
        value : object
            A candidate value: ``None`` (if ``optional``), a
            :class:`~neurosim.schedules.Schedule` (if schedulable), or a value
            :meth:`check` accepts.

        Returns
        -------
        object
            The canonical value (a float for :class:`Float`, ...), or the
            schedule, bound to this parameter.

        Raises
        ------
        TypeError, ValueError
            Naming the parameter and the allowed range.
        """
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

    def check(self, value: Any) -> Any:
        """Check one plain value (not ``None``, not a schedule) and return it in canonical form.

        Parameters
        ----------
        value : object
            The candidate.

        Returns
        -------
        object
            The value, converted (the base class returns it as it is).

        Raises
        ------
        TypeError, ValueError
            In subclasses, naming the parameter and the allowed range.
        """
        return value

    def check_values(self, values: ArrayLike, t0: int) -> np.ndarray:
        """Validate a schedule's values for steps ``t0, t0 + 1, ...``; return them as float64.

        Parameters
        ----------
        values : array_like of float
            One value per step.
        t0 : int
            The step of ``values[0]`` (named in the error).

        Returns
        -------
        numpy.ndarray of float64
            The values.

        Raises
        ------
        ScheduleOutOfRange
            In :class:`Float`, at the first value outside the range.
        """
        return np.asarray(values, dtype=np.float64)

    def describe_range(self) -> str:
        """What the parameter accepts, in words (used in error messages).

        Returns
        -------
        str
            E.g. ``"a float in (0, 1]"``.
        """
        return self.kind

    def __repr__(self):
        return f"{type(self).__name__}({self.default!r})"


class ScheduleOutOfRange(ValueError):
    """A schedule's value is outside its parameter's range (or not finite) at step ``step``.

    A ``ValueError``; the step lets a compiled segment, which draws a whole
    segment's values before it starts, run every step before ``step`` and
    stop where the per-step path stops.

    Parameters
    ----------
    message : str
        The error message.
    step : int
        The first step whose value is out of range.
    """

    def __init__(self, message: str, step: int) -> None:
        super().__init__(message)
        self.step = int(step)


class Float(Param):
    """A finite real number in an interval.

    Parameters
    ----------
    default : float or REQUIRED, optional
        Value when the constructor is not given one.
    low, high : float, optional
        Bounds of the interval (``None``: unbounded).
    low_open, high_open : bool, optional
        Whether the bound itself is excluded.
    **kw
        ``live``, ``optional``, ``doc``, ``schedulable`` of :class:`Param`.
    """

    schedulable = True
    kind = "float"

    def __init__(self, default: Any = REQUIRED, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, **kw: Any) -> None:
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        super().__init__(default, **kw)

    def check(self, value: Any) -> float:
        return check_float(self.name, value, low=self.low, high=self.high, low_open=self.low_open,
                           high_open=self.high_open)

    def check_values(self, values: ArrayLike, t0: int) -> np.ndarray:
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

    def describe_range(self) -> str:
        from neurosim._validation import _range_text

        return f"a float in {_range_text(self.low, self.high, not self.low_open, not self.high_open)}"


class Int(Param):
    """An integer in a closed interval.

    Parameters
    ----------
    default : int or REQUIRED, optional
        Value when the constructor is not given one.
    low, high : int, optional
        Inclusive bounds (``None``: unbounded).
    **kw
        ``live``, ``optional``, ``doc``, ``schedulable`` of :class:`Param`.
    """

    kind = "int"

    def __init__(self, default: Any = REQUIRED, *, low: int | None = None, high: int | None = None,
                 **kw: Any) -> None:
        self.low, self.high = low, high
        super().__init__(default, **kw)

    def check(self, value: Any) -> int:
        return check_int(self.name, value, low=self.low, high=self.high)

    def describe_range(self) -> str:
        from neurosim._validation import _range_text

        return f"an int in {_range_text(self.low, self.high, True, True)}"


class Bool(Param):
    """A boolean (``True``/``False``, numpy booleans accepted).

    Parameters
    ----------
    default : bool or REQUIRED, optional
        Value when the constructor is not given one.
    **kw
        ``live``, ``optional``, ``doc`` of :class:`Param`.
    """

    kind = "bool"

    def __init__(self, default: Any = REQUIRED, **kw: Any) -> None:
        super().__init__(default, **kw)

    def check(self, value: Any) -> bool:
        return check_bool(self.name, value)


class Choice(Param):
    """One string of a fixed set.

    Parameters
    ----------
    default : str or REQUIRED, optional
        Value when the constructor is not given one.
    options : iterable of str
        The allowed strings.
    **kw
        ``live``, ``optional``, ``doc`` of :class:`Param`.
    """

    kind = "str"

    def __init__(self, default: Any = REQUIRED, *, options: Iterable[str], **kw: Any) -> None:
        self.options = tuple(options)
        super().__init__(default, **kw)

    def check(self, value: Any) -> str:
        return check_choice(self.name, value, set(self.options))

    def describe_range(self) -> str:
        return f"one of {list(self.options)}"


class Name(Param):
    """An identifier (a variable name).

    Parameters
    ----------
    default : str or REQUIRED, optional
        Value when the constructor is not given one.
    **kw
        ``live``, ``optional``, ``doc`` of :class:`Param`.
    """

    kind = "name"

    def __init__(self, default: Any = REQUIRED, **kw: Any) -> None:
        super().__init__(default, **kw)

    def check(self, value: Any) -> str | None:
        return check_name_or_none(self.name, value)


class Instance(Param):
    """An instance of a class (e.g. a Signal).

    Parameters
    ----------
    default : object or REQUIRED, optional
        Value when the constructor is not given one.
    cls : type
        The class every value must be an instance of.
    **kw
        ``live``, ``optional``, ``doc`` of :class:`Param`.
    """

    def __init__(self, default: Any = REQUIRED, *, cls: type, **kw: Any) -> None:
        self.cls = cls
        super().__init__(default, **kw)

    def check(self, value: Any) -> Any:
        if not isinstance(value, self.cls):
            raise TypeError(f"{self.name} must be a {self.cls.__name__}; got {type(value).__name__}")
        return value

    def describe_range(self) -> str:
        return f"a {self.cls.__name__}"


# -- change tracking -----------------------------------------------------------------
# A counter every assignment bumps, so the engine can tell cheaply whether any
# parameter changed since it last planned a segment.
_generation = [0]


def bump() -> None:
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
    def declared(cls) -> Mapping[str, Param]:
        """``{name: Param}`` of every declared parameter, base classes first (a read-only view)."""
        # computed once per class: segments are planned afresh many times a second when triggers fire
        # often (a growing network's structural steps), and every ParamRef asks for it
        cached = cls.__dict__.get("_declared_params")
        if cached is None:
            out = {}
            for klass in reversed(cls.__mro__):
                for name, value in vars(klass).items():
                    if isinstance(value, Param):
                        out[name] = value
            cached = MappingProxyType(out)
            setattr(cls, "_declared_params", cached)
        return cached

    def set_params(self, **values: Any) -> None:
        """Assign every declared parameter: given values, else defaults (missing required ones raise).

        Parameters
        ----------
        **values
            ``name=value`` for declared parameters.

        Raises
        ------
        TypeError
            If a name is not declared or a required parameter is missing.
        ValueError
            If a value is outside its parameter's range.
        """
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

    def params(self) -> dict[str, Any]:
        """``{type key: class name, parameter: value}``; signals and schedules appear by name/repr.

        Returns
        -------
        dict
            Plain values, recorded in Dataset attrs and checkpoint fingerprints.
        """
        out: dict[str, Any] = {self.params_key: type(self).__name__}
        for name in self.declared():
            out[name] = export_value(getattr(self, name))
        return out

    def ref(self, name: str) -> ParamRef:
        """A kernel argument that reads the parameter's current value when a segment or step starts.

        Parameters
        ----------
        name : str
            A declared parameter.

        Returns
        -------
        ParamRef
            Resolved by the engine (a schedule: one value per step).

        Raises
        ------
        KeyError
            If ``name`` is not declared.
        """
        if name not in self.declared():
            raise KeyError(f"{type(self).__name__} declares no parameter {name!r}")
        return ParamRef(self, name)

    def value(self, name: str, t: int | None) -> Any:
        """The parameter's value in step ``t`` (a schedule evaluated there).

        Parameters
        ----------
        name : str
            A declared parameter.
        t : int or None
            The step; ``None`` only for parameters that hold no schedule.

        Returns
        -------
        object
            The value (a float for a schedule, checked against the range).

        Raises
        ------
        RuntimeError
            If the parameter follows a schedule and ``t`` is ``None``.
        """
        return resolve_value(self, name, t)

    def __repr__(self):
        args = ", ".join(f"{k}={export_value(getattr(self, k))!r}" for k in self.declared())
        return f"{type(self).__name__}({args})"


def export_value(v: Any) -> Any:
    """A value as it appears in ``params()``: plain numbers and strings; objects by name or repr."""
    if v is None or isinstance(v, (bool, numbers.Number, str)):
        return v
    name = getattr(v, "name", None)
    if isinstance(name, str):
        return name
    return repr(v)


class ParamRef:
    """A scalar kernel argument read from a declared parameter when a segment or step starts.

    Made by :meth:`Parametrized.ref`.

    Parameters
    ----------
    owner : Parametrized
        The component declaring the parameter.
    name : str
        The parameter's name.
    """

    __slots__ = ("owner", "name")

    def __init__(self, owner: Parametrized, name: str) -> None:
        self.owner, self.name = owner, name

    @property
    def label(self) -> str:
        """``"<owner class>.<name>"``, for error messages."""
        return f"{type(self.owner).__name__}.{self.name}"

    def current(self) -> Any:
        """The value held now (a number or a schedule).

        Returns
        -------
        object
            ``getattr(owner, name)``.
        """
        return getattr(self.owner, self.name)

    def is_schedule(self) -> bool:
        """Whether the parameter holds a schedule now.

        Returns
        -------
        bool
            True for a :class:`~neurosim.schedules.Schedule`.
        """
        from neurosim.schedules import Schedule

        return isinstance(self.current(), Schedule)

    def at(self, t: int | None) -> Any:
        """The value in step ``t`` (see :meth:`Parametrized.value`).

        Parameters
        ----------
        t : int or None
            The step; ``None`` only for a plain value.

        Returns
        -------
        object
            The value.
        """
        return resolve_value(self.owner, self.name, t)

    def over(self, t0: int, n: int) -> np.ndarray:
        """Values for steps ``t0 .. t0 + n - 1`` (validated against the declared range).

        Parameters
        ----------
        t0 : int
            First step.
        n : int
            Number of steps.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            The schedule's values, C-contiguous.

        Raises
        ------
        ScheduleOutOfRange
            At the first step whose value is outside the range.
        """
        sched = self.current()
        p = type(self.owner).declared()[self.name]
        return np.ascontiguousarray(p.check_values(sched.values(t0, n), t0))


def resolve_value(owner: Parametrized, name: str, t: int | None) -> Any:
    from neurosim.schedules import Schedule

    v = getattr(owner, name)
    if isinstance(v, Schedule):
        if t is None:
            raise RuntimeError(f"{type(owner).__name__}.{name} follows a schedule; its value needs a step number")
        p = type(owner).declared()[name]
        return float(p.check_values(v.values(int(t), 1), int(t))[0])
    return v
