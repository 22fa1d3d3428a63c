"""Schedules: parameters that change with the step number (annealing).

Assign a schedule to any live numeric parameter, at construction or later::

    rule = ns.Oja(rate=ns.schedules.InverseTime(0.05, half_life=2_000))
    code.dynamics.lam = ns.schedules.Piecewise({0: 0.5, 5_000: 0.2, 20_000: 0.1})

Step ``t`` (1-based: the step that completes with ``network.t == t``) uses
the value ``schedule(t)``. Schedules are pure functions of ``t``, like input
streams, so a checkpoint needs only ``t`` to restore them, a run cut into
pieces equals an uncut run, and compiled segments, which receive every
step's value as an array drawn before the segment starts, give the same
numbers as the per-step path. Values are validated against the parameter's
declared range as they are drawn; a value out of range stops the run with
an error naming the parameter and the step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_float, check_int

if TYPE_CHECKING:
    from neurosim.params import Param

__all__ = ["Schedule", "ExponentialDecay", "InverseTime", "Piecewise", "LinearRamp", "Function", "Mairal2010",
           "AsymptoticDecay", "GeometricDecay", "MiniSomDecay"]


class Schedule:
    """Base class: ``values(t0, n)`` returns the values of steps ``t0`` to ``t0 + n - 1``.

    A subclass implements ``_at(t)`` on a float64 array of steps; calling a
    schedule, ``schedule(t)``, gives the value of one step.
    """

    name = "schedule"

    def __init__(self) -> None:
        self.param: Param | None = None

    def bind(self, param: Param) -> None:
        """Called when assigned to a declared parameter; a first value is validated at once.

        Parameters
        ----------
        param : neurosim.params.Param
            The declared parameter the schedule stands for.

        Raises
        ------
        neurosim.params.ScheduleOutOfRange
            If the value at step 1 is outside the parameter's range.
        """
        param.check_values(self.values(1, 1), 1)
        self.param = param

    def values(self, t0: int, n: int) -> np.ndarray:
        """The values of steps ``t0 .. t0 + n - 1``.

        Parameters
        ----------
        t0 : int
            First step (1-based, as ``network.t`` after the step).
        n : int >= 0
            Number of steps.

        Returns
        -------
        numpy.ndarray of float64, shape (n,)
            One value per step (not checked against a range here).
        """
        return np.asarray(self._at(np.arange(t0, t0 + n, dtype=np.float64)), dtype=np.float64)

    def __call__(self, t: int) -> float:
        return float(self.values(int(t), 1)[0])

    def _at(self, t: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if k != "param")
        return f"{type(self).__name__}({args})"


class ExponentialDecay(Schedule):
    """``max(floor, start * factor ** t)``.

    Parameters
    ----------
    start : float
        Value at step 0.
    factor : float in (0, 1]
        Multiplier per step.
    floor : float, default=0.0
        Lower bound of the value.

    Examples
    --------
    >>> from neurosim.schedules import ExponentialDecay
    >>> ExponentialDecay(1.0, 0.5, floor=0.2).values(1, 4).tolist()
    [0.5, 0.25, 0.2, 0.2]
    """

    def __init__(self, start: float, factor: float, floor: float = 0.0) -> None:
        super().__init__()
        self.start = check_float("start", start)
        self.factor = check_float("factor", factor, low=0.0, high=1.0, low_open=True)
        self.floor = check_float("floor", floor)

    def _at(self, t):
        return np.maximum(self.floor, self.start * self.factor ** t)


class InverseTime(Schedule):
    """``start / (1 + t / half_life) + floor``: the Robbins-Monro ``1/t`` decay, halved after ``half_life`` steps.

    With ``floor > 0`` the rate is ``Theta(1/t + c)`` (Tsuchida & Cottrell 2015,
    Eq. 8): it decays like ``1/t`` and then levels off at ``floor``.

    Parameters
    ----------
    start : float
        Value at step 0 (without ``floor``).
    half_life : float > 0
        Steps after which the decaying part is halved.
    floor : float, default=0.0
        Added constant.

    Examples
    --------
    A learning rate that halves after 100 steps, assigned to a rule:

    >>> import neurosim as ns
    >>> from neurosim.schedules import InverseTime
    >>> rule = ns.Oja(rate=InverseTime(0.1, half_life=100))
    >>> round(rule.rate(100), 12), round(rule.rate(300), 12)
    (0.05, 0.025)
    >>> rule.value("rate", 100)
    0.05
    """

    def __init__(self, start: float, half_life: float, floor: float = 0.0) -> None:
        super().__init__()
        self.start = check_float("start", start)
        self.half_life = check_float("half_life", half_life, low=0.0, low_open=True)
        self.floor = check_float("floor", floor)

    def _at(self, t):
        return self.start / (1.0 + t / self.half_life) + self.floor


class LinearRamp(Schedule):
    """From ``start`` at step 0 linearly to ``stop`` at step ``steps``, constant afterwards.

    Parameters
    ----------
    start : float
        Value at step 0.
    stop : float
        Value from step ``steps`` on.
    steps : int >= 1
        Length of the ramp.
    """

    def __init__(self, start: float, stop: float, steps: int) -> None:
        super().__init__()
        self.start = check_float("start", start)
        self.stop = check_float("stop", stop)
        self.steps = check_int("steps", steps, low=1)

    def _at(self, t):
        frac = np.minimum(t / self.steps, 1.0)
        return self.start + (self.stop - self.start) * frac


class Piecewise(Schedule):
    """Piecewise constant: ``{first step: value}``; the value of the latest key ``<= t``.

    The first key must be 0 (so every step has a value).

    Parameters
    ----------
    values : dict of int -> float
        ``{first step: value}``; keys ``>= 0``, one of them 0.

    Raises
    ------
    TypeError
        If ``values`` is not a non-empty dict.
    ValueError
        If no key is 0, a key is negative or a value not finite.

    Examples
    --------
    >>> from neurosim.schedules import Piecewise
    >>> Piecewise({0: 0.5, 3: 0.1}).values(1, 4).tolist()
    [0.5, 0.5, 0.1, 0.1]
    """

    def __init__(self, values: dict) -> None:
        super().__init__()
        if not isinstance(values, dict) or not values:
            raise TypeError("values must be a non-empty dict {first step: value}")
        steps = sorted(check_int("step", k, low=0) for k in values)
        if steps[0] != 0:
            raise ValueError(f"the first step of a Piecewise schedule must be 0; got {steps[0]}")
        self.table = {s: check_float(f"value at step {s}", values[s]) for s in steps}

    def _at(self, t):
        keys = np.array(list(self.table), dtype=np.float64)
        vals = np.array(list(self.table.values()), dtype=np.float64)
        return vals[np.searchsorted(keys, t, side="right") - 1]


class Mairal2010(Schedule):
    """The weight of the past in online dictionary learning with mini-batches (Mairal et al. 2010, Sec. 3.4).

    For :class:`~neurosim.rules.dictionary.DictionaryMemory`'s ``decay``:
    before mini-batch ``t`` (1-based) the statistics ``A`` and ``B`` are
    scaled by ``beta_t = (theta + 1 - batch) / (theta + 1)`` with ``theta =
    t batch`` while ``t < batch`` and ``theta = batch^2 + t - batch``
    afterwards, so that the codes of early mini-batches, made with early
    dictionaries, weigh less (``rho = 1``). This is the schedule of
    scikit-learn's ``MiniBatchDictionaryLearning`` (``_update_inner_stats``,
    with its ``step = t - 1``); its extra ``1 / batch`` on the new terms scales
    ``A`` and ``B`` alike and does not change the dictionary update.

    Parameters
    ----------
    batch : int >= 1
        Mini-batch size (``Network(batch=...)``).
    """

    def __init__(self, batch: int) -> None:
        super().__init__()
        self.batch = check_int("batch", batch, low=1)

    def _at(self, t):
        b = float(self.batch)
        theta = np.where(t < b, t * b, b * b + t - b)
        return (theta + 1.0 - b) / (theta + 1.0)


class AsymptoticDecay(Schedule):
    """MiniSom's default decay of the learning rate and radius: ``start / (1 + i / (steps / 2))``, ``i = t - 1``.

    ``i`` counts the inputs seen before step ``t`` (MiniSom's iteration
    index, 0 at the first input), so step 1 uses ``start`` and the value
    falls to a third of it after ``steps`` inputs (``asymptotic_decay`` in
    ``minisom.py``, with ``max_iter = steps``; the same floating-point
    expression, hence the same values).

    Parameters
    ----------
    start : float
        Value at step 1 (MiniSom's ``learning_rate`` or ``sigma``).
    steps : int >= 1
        MiniSom's ``num_iteration`` (``max_iter``).

    Raises
    ------
    TypeError, ValueError
        ``start`` not a finite float, or ``steps`` not an int >= 1.
    """

    def __init__(self, start: float, steps: int):
        super().__init__()
        self.start = check_float("start", start)
        self.steps = check_int("steps", steps, low=1)

    def _at(self, t):
        return self.start / (1 + (t - 1) / (self.steps / 2))


class GeometricDecay(Schedule):
    """``start (stop / start)^(i / steps)``, ``i = t - 1``: Neural Gas's annealing from ``start`` to ``stop``.

    Martinetz, Berkovich & Schulten (1993): ``lambda(t) = lambda_i
    (lambda_f / lambda_i)^(t / t_max)`` and the same for ``epsilon``, with
    ``t`` the inputs seen before (0 at the first), so step 1 uses ``start``
    and step ``steps + 1`` would use ``stop``. Past ``steps`` the value keeps
    falling geometrically.

    Parameters
    ----------
    start : float > 0
        Value at step 1 (``lambda_i``, ``epsilon_i``).
    stop : float > 0
        Value at step ``steps + 1`` (``lambda_f``, ``epsilon_f``).
    steps : int >= 1
        ``t_max``.

    Raises
    ------
    TypeError, ValueError
        ``start`` or ``stop`` not a float > 0, or ``steps`` not an int >= 1.
    """

    def __init__(self, start: float, stop: float, steps: int):
        super().__init__()
        self.start = check_float("start", start, low=0.0, low_open=True)
        self.stop = check_float("stop", stop, low=0.0, low_open=True)
        self.steps = check_int("steps", steps, low=1)

    def _at(self, t):
        return self.start * (self.stop / self.start) ** ((t - 1) / self.steps)


class MiniSomDecay(Schedule):
    """MiniSom's other decays of the learning rate and the radius, of ``i = t - 1`` inputs seen, ``T = steps``.

    ``kind`` (MiniSom's function, same floating-point expression):

    * ``"inverse_to_zero"``: ``start C / (C + i)``, ``C = T / 100`` (``inverse_decay_to_zero``);
    * ``"linear_to_zero"``: ``start (1 - i / T)`` (``linear_decay_to_zero``; 0 after ``T`` inputs,
      negative beyond, which a rate refuses);
    * ``"inverse_to_one"``: ``start / (1 + i C)``, ``C = (start - 1) / T`` (``inverse_decay_to_one``, for sigma);
    * ``"linear_to_one"``: ``start + i (1 - start) / T`` (``linear_decay_to_one``, for sigma).

    :class:`AsymptoticDecay` is MiniSom's default for both.

    Parameters
    ----------
    start : float
        Value at step 1 (MiniSom's ``learning_rate`` or ``sigma``).
    steps : int >= 1
        ``T``, MiniSom's ``num_iteration`` (``max_iter``).
    kind : {"inverse_to_zero", "linear_to_zero", "inverse_to_one", "linear_to_one"}
        Which of MiniSom's decay functions.

    Raises
    ------
    TypeError, ValueError
        A parameter of the wrong type or outside its range, naming it.
    """

    KINDS = ("inverse_to_zero", "linear_to_zero", "inverse_to_one", "linear_to_one")

    def __init__(self, start: float, steps: int, kind: str):
        super().__init__()
        from neurosim._validation import check_choice

        self.start = check_float("start", start)
        self.steps = check_int("steps", steps, low=1)
        self.kind = check_choice("kind", kind, set(self.KINDS))

    def _at(self, t):
        i, T, x = t - 1, self.steps, self.start
        if self.kind == "inverse_to_zero":
            C = T / 100.0
            return x * C / (C + i)
        if self.kind == "linear_to_zero":
            return x * (1 - i / T)
        if self.kind == "inverse_to_one":
            C = (x - 1) / T
            return x / (1 + (i * C))
        return x + (i * (1 - x) / T)


class Function(Schedule):
    """A user function ``f(t) -> value``, vectorized over an array of steps.

    ``f`` receives a float64 array of step numbers and must return an array
    of the same shape; it must be a pure function of ``t`` (no state), so
    runs cut into pieces equal uncut runs.

    Parameters
    ----------
    fn : callable
        ``fn(t_array) -> values``.
    name : str, optional
        Shown in the repr and in parameters (default: the function's name).

    Raises
    ------
    TypeError
        If ``fn`` is not callable.
    """

    def __init__(self, fn: Callable[[np.ndarray], ArrayLike], name: str | None = None) -> None:
        super().__init__()
        if not callable(fn):
            raise TypeError(f"fn must be callable as fn(t_array) -> values; got {type(fn).__name__}")
        self.fn = fn
        self.label = name or getattr(fn, "__name__", "function")

    def _at(self, t):
        out = np.asarray(self.fn(t), dtype=np.float64)
        if out.shape != t.shape:
            out = np.broadcast_to(out, t.shape)
        return out

    def __repr__(self):
        return f"Function({self.label})"
