"""Spike-timing rules with per-synapse traces, from two plain functions: :func:`trace_rule` (issue 42).

Brian2 users write STDP as per-synapse traces that decay between events and
two pathways run at the events, ``on_pre`` and ``on_post``. A
:class:`TraceRule` is that form on neurosim's engine::

    from neurosim.params import Float

    def on_pre(w, x, y, d, w_max):       # a pre spike: the traces x, y decayed to now
        x += d
        return min(max(w - y, 0.0), w_max), x, y

    def on_post(w, x, y, d, w_max):      # a post spike
        y += d
        return min(max(w + x, 0.0), w_max), x, y

    MySTDP = ns.trace_rule(on_pre, on_post, traces={"x": "tau_x", "y": "tau_y"},
                           params={"tau_x": Float(0.02, low=0.0, low_open=True), "tau_y": Float(0.02, low=0.0, low_open=True),
                                   "d": Float(1e-4), "w_max": Float(0.01, low=0.0, low_open=True)})
    net.add(ns.Projection("S", pre, post, connectivity=ns.FixedProbability(0.1), rule=MySTDP("ge", d=2e-4)))

Each pathway function takes the synapse's weight, then its traces in the
declared order (decayed to the event's time), then any of the declared
parameters by name, and returns the new weight and the new traces. What
happens in a step, in Brian2's order (its default schedule and its
event-driven variables): for each pre unit that spiked (ascending), each of
its synapses (by post unit) decays every trace by ``exp(-(t - last) /
tau)`` since the synapse's last event, adds its weight to the post unit's
``target`` (when the rule has one) and runs ``on_pre``; then for each post
unit that spiked, each of its synapses (by pre unit) decays its traces and
runs ``on_post``. A pre and a post spike in the same step therefore meet
the pre pathway first. Time is ``t = step dt`` from the network's start.

The loops are generated for each pair of functions
(:class:`~neurosim.codegen.GeneratedKernel`), the functions inlined into
them. The NumPy path runs the same source uncompiled with the functions
uncompiled, so both paths compute the same arithmetic; the built-in rules
(:class:`~neurosim.STDP`, :class:`~neurosim.TripletSTDP`) are trace rules
and give Brian2's weights bit for bit (``tests/spiking/test_stdp_brian2.py``).
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim.codegen import ArrayRef, GeneratedKernel, KernelCall
from neurosim.params import Name, Param
from neurosim.rules.local import _compiled
from neurosim.rules.transmission import OnPre

if TYPE_CHECKING:
    from neurosim.network import Network

__all__ = ["TraceRule", "trace_rule", "event_loop"]

_TEMPLATE = '''\
def {{name}}(weights, {traces}, last, pre_spikes, post_spikes, pre_ptr, by_pre, post_by_pre, indptr, target,
             transmit, sign, step, dt, {inv_taus}, {params}):
    """One step of a trace rule: the pre pathway, then the post pathway (Brian2's order)."""
    t = step[0] * dt
    bad = 0
    for j in range(pre_spikes.shape[1]):
        if pre_spikes[0, j] != 0.0:
            for k in range(pre_ptr[j], pre_ptr[j + 1]):
                s = by_pre[k]
{decay}                if transmit:
                    target[0, post_by_pre[k]] += sign * weights[s]
                r = {{on_pre}}(weights[s], {current}{pre_params})
{store}    for i in range(post_spikes.shape[1]):
        if post_spikes[0, i] != 0.0:
            for s in range(indptr[i], indptr[i + 1]):
{decay}                r = {{on_post}}(weights[s], {current}{post_params})
{store}    step[0] += 1
    return bad == 0
'''

_STORE = """\
                w = r[0]
{traces}                weights[s] = w
                last[s] = t
                if not (w - w == 0.0):
                    bad += 1
"""

_LOOPS: dict[tuple, tuple[GeneratedKernel, Callable]] = {}


def event_loop(on_pre: Any, on_post: Any, n_traces: int, pre_params: tuple[int, ...],
               post_params: tuple[int, ...], n_params: int) -> tuple[GeneratedKernel, Callable]:
    """The step of a trace rule, compiled and uncompiled: ``(GeneratedKernel, python function)``.

    Parameters
    ----------
    on_pre, on_post : numba dispatcher
        The pathways, compiled with ``inline="always"``.
    n_traces : int
        How many traces each synapse keeps.
    pre_params, post_params : tuple of int
        Which of the rule's parameters (positions) each pathway takes, in its order.
    n_params : int
        How many parameters the rule passes.

    Returns
    -------
    tuple
        The kernel, whose arguments are ``(weights, *traces, last,
        pre_spikes, post_spikes, pre_ptr, by_pre, post_by_pre, indptr,
        target, transmit, sign, step, dt, *inv_taus, *params)`` and which
        returns whether every weight it wrote is finite; and the same source
        as a plain Python function calling the pathways' ``py_func``.
    """
    key = (on_pre, on_post, n_traces, pre_params, post_params, n_params)
    if key not in _LOOPS:
        traces = [f"tr{k}" for k in range(n_traces)]
        fields = {
            "traces": ", ".join(traces), "inv_taus": ", ".join(f"inv_tau{k}" for k in range(n_traces)),
            "params": ", ".join(f"p{k}" for k in range(n_params)) or "*_",
            "decay": "".join(f"                tr{k}[s] = tr{k}[s] * math.exp(inv_tau{k} * (-(t - last[s])))\n"
                             for k in range(n_traces)),
            "current": ", ".join(f"{tr}[s]" for tr in traces),
            "pre_params": "".join(f", p{k}" for k in pre_params),
            "post_params": "".join(f", p{k}" for k in post_params),
            "store": _STORE.format(traces="".join(f"                tr{k}[s] = r[{k + 1}]\n" for k in range(n_traces))),
        }
        source = _TEMPLATE.format(**fields)
        name = f"trace_rule_{on_pre.py_func.__name__}_{on_post.py_func.__name__}"
        kernel = GeneratedKernel(name, source, {"on_pre": on_pre, "on_post": on_post})
        namespace: dict[str, Any] = {"math": math, "np": np}
        exec(source.format(name="step", on_pre="on_pre", on_post="on_post"),  # noqa: S102 (our own template)
             {**namespace, "on_pre": on_pre.py_func, "on_post": on_post.py_func}, namespace)
        _LOOPS[key] = (kernel, namespace["step"])
    return _LOOPS[key]


class TraceRule(OnPre):
    """Base of the rules :func:`trace_rule` makes: event-driven plasticity with per-synapse traces.

    Subclasses say which traces the synapses keep (``traces``: name ->
    the parameter holding its time constant) and which pathway functions
    run (:meth:`pathways`). The traces and each synapse's last event time
    are projection arrays (``projection.arrays[name]``), so they follow the
    synapses through births, deaths and checkpoints.

    Parameters
    ----------
    target : str, optional
        The post variable a pre spike adds the weight to (``"ge"`` of a
        :class:`~neurosim.LIF` population); ``None``: learn only (the post
        population may then be an input, e.g. a given spike train).
    **params
        The rule's declared parameters.

    Raises
    ------
    ValueError
        When the network validates: a dense projection (the traces live per
        stored synapse: give ``connectivity=`` or ``storage="sparse"``), a
        batch above 1, a network without ``dt``, a transmission delay, or a
        ``target`` the post population lacks.
    """

    target = Name(None, optional=True, doc="post variable a pre spike adds the weight to (None: learn only)")
    #: trace name -> name of the declared parameter holding its time constant (seconds)
    traces: dict[str, str] = {}
    #: the compiled pathways of a rule made by :func:`trace_rule` (``None`` on hand-written subclasses)
    on_pre_kernel: Any = None
    on_post_kernel: Any = None

    def __init__(self, target: str | None = None, **params: Any) -> None:
        super(OnPre, self).__init__()
        self.set_params(target=target, **params)
        self._by_pre = None
        self._signed = None
        self.step = np.zeros(1, dtype=np.int64)

    @property
    def learns_only(self) -> bool:
        """True without a ``target``: the projection may then end on an input population (a given spike train)."""
        return self.target is None

    def pathways(self) -> tuple[Any, Any]:
        """The compiled ``(on_pre, on_post)`` functions this instance runs.

        Returns
        -------
        tuple of numba dispatchers
        """
        return type(self).on_pre_kernel, type(self).on_post_kernel

    def attach(self, network: Network) -> None:
        for name in (*self.traces, "last_update"):
            self.projection.add_array(name, 0.0)
        self.step[0] = network.t  # Brian2's t = step * dt from the network's start

    def state(self) -> dict[str, np.ndarray]:
        return {"step": self.step}

    def validate(self, network: Network) -> None:
        p = self.projection
        if self.delay:
            raise ValueError(f"{self.label}: a trace rule with a transmission delay is not built yet; use delay=0")
        if not p.sparse:
            raise ValueError(f"{self.label}: a trace rule keeps its traces per stored synapse and needs sparse "
                             "storage (Projection(..., connectivity=...) or storage='sparse')")
        if network.batch != 1:
            raise ValueError(f"{self.label}: a trace rule learns from one spike train; the network's batch is "
                             f"{network.batch}")
        if network.dt is None:
            raise ValueError(f"{self.label}: a trace rule needs the network's time step: Network(dt=...) in seconds")
        if self.target is not None:
            super().validate(network)

    def kernel_params(self) -> dict[str, float]:
        """The parameters the pathways may take: the numeric ones besides ``delay``, by name, in declared order.

        Returns
        -------
        dict of str -> float
        """
        values = {k: getattr(self, k) for k in self.declared() if k != "delay"}
        return {k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}

    def _loop(self) -> tuple[GeneratedKernel, Callable]:
        on_pre, on_post = self.pathways()
        names, n = tuple(self.kernel_params()), len(self.traces)
        return event_loop(on_pre, on_post, n, _takes(on_pre, n, names), _takes(on_post, n, names), len(names))

    def _arrays(self) -> tuple:
        p = self.projection
        pre_ptr, by_pre, post_by_pre = self._index()
        target = p.post.state[self.target] if self.target is not None else _NO_TARGET
        return (p.weights, *(p.arrays[n] for n in self.traces), p.arrays["last_update"], p.pre.activity,
                p.post.activity, pre_ptr, by_pre, post_by_pre, p.synapse_index.indptr, target)

    def _scalars(self) -> tuple:
        net = self.projection.network
        assert net is not None and net.dt is not None  # validated before any step
        values = self.kernel_params()
        return (self.target is not None, float(self.projection.sign), self.step, float(net.dt),
                *(1.0 / values[tau] for tau in self.traces.values()), *(float(v) for v in values.values()))

    def update_numpy(self) -> None:
        # the kernel's source run by the interpreter, with the pathways uncompiled: the same operations in
        # the same order, so the same bits (math.exp is the C library's, as numba's)
        self._loop()[1](*self._arrays(), *self._scalars())

    def kernel_call(self) -> KernelCall:
        p = self.projection
        n = len(self._arrays())
        refs = tuple(ArrayRef(lambda k=k: self._arrays()[k], f"{p.name}.trace_rule.{k}") for k in range(n))
        s = self._scalars()
        step = ArrayRef(lambda: self.step, f"{p.name}.trace_rule.step")
        return KernelCall(self._loop()[0], refs + s[:2] + (step,) + s[3:], label=f"{p.name}.{type(self).__name__}",
                          finite=f"{p.name}.weights")


_NO_TARGET = np.zeros((1, 1))


@functools.lru_cache(maxsize=None)
def _takes(pathway: Any, n_traces: int, names: tuple[str, ...]) -> tuple[int, ...]:
    """The positions in ``names`` of the parameters ``pathway`` takes after the weight and the traces.

    Cached: the NumPy path asks every step, and reading a signature costs more than the step of a small rule.
    """
    wanted = list(inspect.signature(pathway.py_func).parameters)[1 + n_traces:]
    return tuple(names.index(n) for n in wanted)


def _check_pathway(func: Any, traces: dict, params: dict, which: str) -> None:
    """``TypeError`` unless ``func`` takes ``(w, *traces, *some declared parameters)``."""
    names = list(inspect.signature(func.py_func).parameters)
    n = 1 + len(traces)
    if len(names) < n or names[1:n] != list(traces) or any(a not in params for a in names[n:]):
        raise TypeError(f"{which} must take (w, {', '.join(traces)}, then any of the parameters {list(params)} by "
                        f"name) and return (w, {', '.join(traces)}); it takes ({', '.join(names)})")


def trace_rule(on_pre: Callable, on_post: Callable, *, traces: dict[str, str], params: dict[str, Param],
               name: str | None = None) -> type:
    """Make a spike-timing rule class from its two pathways (per-synapse traces, event-driven).

    Parameters
    ----------
    on_pre, on_post : callable
        ``f(w, *traces, *params) -> (w, *traces)``: what a synapse does on
        a pre spike and on a post spike, with its traces decayed to the
        event's time. After the traces, each takes any of the declared
        parameters by name. Numba-compatible scalar code, defined at module
        level (plain Python or ``@njit``).
    traces : dict of str -> str
        The traces each synapse keeps, in the order the functions take them,
        each mapped to the declared parameter holding its time constant
        (seconds).
    params : dict of str -> Param
        Declared parameters (:class:`~neurosim.params.Float`...), including
        the time constants.
    name : str, optional
        Class name (default: ``on_pre``'s name without a ``_pre``/``on_`` part).

    Returns
    -------
    type
        A subclass of :class:`TraceRule`, instantiated as ``Rule(target=None,
        **params)``.

    Raises
    ------
    TypeError
        If a parameter is not declared, a trace's time constant is not a
        declared parameter, or a pathway's arguments are not the ones above.

    Examples
    --------
    Pair-based STDP in four lines of rule; a pre spike 1 ms before a post
    spike potentiates by ``d exp(-1 ms / 20 ms)``:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> from neurosim.params import Float
    >>> from neurosim.rules.trace import demo_stdp_pre, demo_stdp_post
    >>> MySTDP = ns.trace_rule(demo_stdp_pre, demo_stdp_post, traces={"x": "tau", "y": "tau"},
    ...                        params={"tau": Float(0.02, low=0.0, low_open=True), "d": Float(1e-4)})
    >>> net = ns.Network(dt=1e-4)
    >>> spikes = np.zeros((11, 1, 2)); spikes[0, 0, 0] = 1; spikes[10, 0, 1] = 1
    >>> a, b = ns.Population("a", 1), ns.Population("b", 1)
    >>> _ = net.add(a, b)
    >>> _ = net.connect(ns.ArrayStream(spikes[:, :, :1]), a), net.connect(ns.ArrayStream(spikes[:, :, 1:]), b)
    >>> W = net.add(ns.Projection("W", a, b, connectivity=ns.AllToAll(), init=ns.Constant(0.5), rule=MySTDP()))
    >>> _ = net.run(11)
    >>> f"{W.weights[0] - 0.5:.6e}", f"{1e-4 * np.exp(-0.001 / 0.02):.6e}"
    ('9.512294e-05', '9.512294e-05')
    """
    params = dict(params)
    for key, p in params.items():
        if not isinstance(p, Param):
            raise TypeError(f"params[{key!r}] must be a declared parameter (neurosim.params.Float...); "
                            f"got {type(p).__name__}")
    for trace, tau in traces.items():
        if tau not in params:
            raise TypeError(f"the time constant of trace {trace!r} must be a declared parameter; {tau!r} is not in "
                            f"params ({list(params)})")
    pre, post = _compiled(on_pre, inline=True), _compiled(on_post, inline=True)
    _check_pathway(pre, traces, params, "on_pre")
    _check_pathway(post, traces, params, "on_post")
    cls_name = name or pre.py_func.__name__.replace("on_pre", "").replace("_pre", "").strip("_").title() or "TraceRule"
    namespace: dict[str, Any] = {"traces": dict(traces), "on_pre_kernel": pre, "on_post_kernel": post,
                                 "__doc__": pre.py_func.__doc__ or f"A trace rule made from {pre.py_func.__name__}.",
                                 "__module__": pre.py_func.__module__, "__qualname__": cls_name}
    for key, p in params.items():
        namespace[key] = copy.copy(p)
    return type(cls_name, (TraceRule,), namespace)


def demo_stdp_pre(w, x, y, d):
    """The example's pre pathway: ``x += d``, ``w += y`` (depression through ``y``)."""
    x += d
    return w + y, x, y


def demo_stdp_post(w, x, y, d):
    """The example's post pathway: ``y -= 1.05 d``, ``w += x`` (potentiation through ``x``)."""
    y -= 1.05 * d
    return w + x, x, y

