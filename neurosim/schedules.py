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

import numpy as np

from neurosim._validation import check_float, check_int

__all__ = ["Schedule", "ExponentialDecay", "InverseTime", "Piecewise", "LinearRamp", "Function", "Mairal2010"]


class Schedule:
    """Base class: ``values(t0, n)`` returns the values of steps ``t0`` to ``t0 + n - 1``."""

    name = "schedule"

    def __init__(self):
        self.param = None

    def bind(self, param):
        """Called when assigned to a declared parameter; a first value is validated at once."""
        param.check_values(self.values(1, 1), 1)
        self.param = param

    def values(self, t0: int, n: int) -> np.ndarray:
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
    factor : float in (0, 1]
    floor : float, optional
    """

    def __init__(self, start: float, factor: float, floor: float = 0.0):
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
    """

    def __init__(self, start: float, half_life: float, floor: float = 0.0):
        super().__init__()
        self.start = check_float("start", start)
        self.half_life = check_float("half_life", half_life, low=0.0, low_open=True)
        self.floor = check_float("floor", floor)

    def _at(self, t):
        return self.start / (1.0 + t / self.half_life) + self.floor


class LinearRamp(Schedule):
    """From ``start`` at step 0 linearly to ``stop`` at step ``steps``, constant afterwards."""

    def __init__(self, start: float, stop: float, steps: int):
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
    """

    def __init__(self, values: dict):
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

    def __init__(self, batch: int):
        super().__init__()
        self.batch = check_int("batch", batch, low=1)

    def _at(self, t):
        b = float(self.batch)
        theta = np.where(t < b, t * b, b * b + t - b)
        return (theta + 1.0 - b) / (theta + 1.0)


class Function(Schedule):
    """A user function ``f(t) -> value``, vectorized over an array of steps.

    ``f`` receives a float64 array of step numbers and must return an array
    of the same shape; it must be a pure function of ``t`` (no state), so
    runs cut into pieces equal uncut runs.
    """

    def __init__(self, fn, name: str | None = None):
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
