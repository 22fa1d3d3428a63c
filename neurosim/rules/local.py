"""A plasticity rule from one plain function: :func:`local_rule`.

Writing a :class:`~neurosim.rules.Rule` by hand takes a NumPy reference, a
kernel and the plumbing between them. For the common case -- a rule that
updates one projection's weights from its pre and post activity, per-unit
variables of the post population and a few parameters -- one numba-compatible
function is enough::

    from neurosim.params import Float
    from neurosim.rules import local_rule

    @local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)})
    def AntiHebbian(weights, post, pre, rate):
        \"\"\"``W_ij -= rate * mean_b y_i x_j``.\"\"\"
        batch = post.shape[0]
        for i in range(weights.shape[0]):
            for j in range(weights.shape[1]):
                acc = 0.0
                for b in range(batch):
                    acc += post[b, i] * pre[b, j]
                weights[i, j] -= rate * acc / batch

    net.add(ns.Projection("M", y, y, rule=AntiHebbian(rate=0.05)))

The decorator returns a :class:`Rule` subclass. Its compiled path calls the
function compiled by numba (with bounds checks) inside the engine's segments; its
NumPy reference calls the same function uncompiled, on the same arrays, so
the two paths run the same arithmetic. After every update the projection's
structure is enforced (masked-out synapses and a lateral projection's
diagonal are zero) and the weights are tested for NaN/Inf, stopping a
compiled segment at the step they diverge.

The function's arguments, in order: ``weights`` ``(n_post, n_pre)``
(update it in place), ``post`` ``(batch, n_post)``, ``pre``
``(batch, n_pre)``, then one ``(n_post,)`` array per declared post variable
(in the order given; the function may update them in place, e.g. a sliding
threshold), then the declared parameters as scalars. Parameters are
:mod:`declared <neurosim.params>`: validated, live (an assignment takes
effect from the next step), schedulable, and part of ``params()``.

The function must be defined at module level. In a script (``__main__``),
which a compiled segment cannot import, its source is copied into the
segment: it may then use only ``np``, ``math`` and its arguments.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

from numba.core.registry import CPUDispatcher

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels.plasticity import enforce_structure_all
from neurosim.params import REQUIRED, Bool, Param
from neurosim.rules.base import Rule

__all__ = ["local_rule", "LocalRule"]

_FIXED_ARGS = ("weights", "post", "pre")


class LocalRule(Rule):
    """Base of the rules :func:`local_rule` makes. Class attributes say what the function takes.

    Parameters
    ----------
    **params
        The declared parameters of the rule class, by name (each validated
        against its declaration, :mod:`neurosim.params`).
    """

    #: the numba-compiled function (a CPUDispatcher; set by local_rule on each class it makes)
    kernel: Any = None
    #: post-population variables passed to the function, in order
    variable_names: tuple = ()
    #: declared parameters passed to the function, in order
    param_names: tuple = ()

    def __init__(self, **params: Any) -> None:
        super().__init__()
        self.set_params(**params)
        self.post_variables = dict(type(self).post_variables)

    def _args_numpy(self):
        p = self.projection
        t = p.network.t if p.network is not None else None
        return ([p.weights, p.post.activity, p.pre.activity] + [p.post.state[v] for v in self.variable_names]
                + [self.value(n, t) for n in self.param_names])

    def update_numpy(self) -> None:
        type(self).kernel.py_func(*self._args_numpy())
        self.projection.enforce_structure()

    def kernel_calls(self) -> list[KernelCall]:
        p = self.projection
        w, post, pre = self._refs()
        variables = [ArrayRef(lambda v=v: p.post.state[v], f"{p.post.name}.{v}") for v in self.variable_names]
        update = KernelCall(type(self).kernel, (w, post, pre, *variables, *(self.ref(n) for n in self.param_names)),
                            label=f"{p.name}.rule")
        structure = KernelCall(enforce_structure_all, (w, p.lateral, self._mask_ref(), p.mask is not None),
                               label=f"{p.name}.structure", finite=f"{p.name}.weights")
        return [update, structure]


def local_rule(func: Callable | None = None, *, params: dict[str, Param] | None = None,
               post_variables: dict[str, float] | None = None, name: str | None = None) -> Any:
    """Make a :class:`~neurosim.rules.Rule` class from one numba-compatible function.

    Parameters
    ----------
    func : callable
        ``func(weights, post, pre, *post_variables, *params)``, updating
        ``weights`` (and possibly the post variables) in place. Plain Python
        or already ``@njit``-decorated.
    params : dict of str -> Param, optional
        Declared parameters (:class:`~neurosim.params.Float`, ``Int``,
        ``Bool``...), in the order the function takes them.
    post_variables : dict of str -> float, optional
        Per-unit variables of the post population the function receives,
        with their initial values (also for newborn units).
    name : str, optional
        Class name (default: the function's name).

    Returns
    -------
    type
        A subclass of :class:`LocalRule`; instantiate it with the parameters
        (``inspect.signature`` and ``help()`` show them with their defaults:
        positional or keyword in the declared order, keyword-only from the
        first ``Bool`` on). Its docstring is the function's, with a
        Parameters section built from the declarations when it has none.
        Called with only keyword arguments, ``local_rule`` returns the decorator.

    Raises
    ------
    TypeError
        If a parameter is not a declared :class:`~neurosim.params.Param`,
        ``func`` is not a function, its arguments are not ``(weights, post,
        pre, *post_variables, *params)`` in that order, or it is not defined
        at module level.

    Examples
    --------
    A Hebbian rule written as one loop nest; one step by hand gives
    ``W = 1 + 0.1 * y x^T`` with ``x = [1, 2]`` and ``y = W x = 3``:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> from neurosim.params import Float
    >>> @ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)})
    ... def MyHebbian(weights, post, pre, rate):
    ...     for i in range(weights.shape[0]):
    ...         for j in range(weights.shape[1]):
    ...             weights[i, j] += rate * post[0, i] * pre[0, j]
    >>> net = ns.Network()
    >>> x, y = ns.Population("x", 2), ns.Population("y", 1, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y, init=ns.Constant(1.0), rule=MyHebbian(rate=0.1))
    >>> _ = net.add(x, y, W)
    >>> _ = net.connect(ns.ArrayStream(np.array([[1.0, 2.0]])), x)
    >>> _ = net.run(1, backend="python")  # a rule defined here (not in a module) runs uncompiled
    >>> np.round(W.weights, 12).tolist()
    [[1.3, 1.6]]
    >>> W.rule.rate
    0.1
    """
    if func is None:
        return lambda f: local_rule(f, params=params, post_variables=post_variables, name=name)
    params = dict(params or {})
    post_variables = dict(post_variables or {})
    for key, p in params.items():
        if not isinstance(p, Param):
            raise TypeError(f"params[{key!r}] must be a declared parameter (neurosim.params.Float, Int, Bool...); "
                            f"got {type(p).__name__}")
    if isinstance(func, CPUDispatcher) and func.targetoptions.get("boundscheck"):
        kernel = func
    elif callable(func):
        from numba import njit

        # Bounds checks on (user kernels only): an index past an array's end raises IndexError, as the NumPy
        # reference does, instead of writing over memory next to the weights. Not cached (numba's cache
        # index ignores compile options, so a cache file shared with the user's own @njit(cache=True) could
        # hand back code without the checks); a cached segment holds the compiled kernel anyway.
        kernel = njit(nogil=True, boundscheck=True)(getattr(func, "py_func", func))
    else:
        raise TypeError(f"func must be a function; got {type(func).__name__}")
    py = kernel.py_func
    names = list(inspect.signature(py).parameters)
    want = list(_FIXED_ARGS) + list(post_variables) + list(params)
    if len(names) != len(want) or names[3:] != want[3:]:
        raise TypeError(f"{py.__name__} must take (weights, post, pre{''.join(', ' + n for n in want[3:])}): the "
                        f"fixed arrays, then the post variables {list(post_variables)}, then the parameters "
                        f"{list(params)}, in that order; it takes ({', '.join(names)})")
    if "<" in py.__qualname__:
        raise TypeError(f"{py.__qualname__} must be defined at module level (not inside a function) so that compiled "
                        "segments can reach it")
    cls_name = name or py.__name__
    signature = _constructor_signature(params)
    namespace = {"kernel": kernel, "variable_names": tuple(post_variables), "param_names": tuple(params),
                 "post_variables": post_variables, "__doc__": _class_doc(py.__doc__, params, post_variables),
                 "__module__": py.__module__, "__qualname__": cls_name, "__signature__": signature,
                 "__init__": _make_init(cls_name, signature)}
    namespace["__init__"].__qualname__ = f"{cls_name}.__init__"
    namespace["__init__"].__module__ = py.__module__
    for key, p in params.items():
        namespace[key] = copy.copy(p)  # type() calls __set_name__, which names this class's own descriptor
    return type(cls_name, (LocalRule,), namespace)


def _constructor_signature(params: dict) -> inspect.Signature:
    """The class's call signature: the declared parameters in the function's order, with their defaults.

    Positional-or-keyword, as the hand-written rules take them (``Oja(rate)``),
    up to the first flag (a ``Bool``) or the first parameter without a default
    after one with a default; from there on keyword-only, so a flag or a
    later parameter is always named at the call.
    """
    out, keyword_only, seen_default = [], False, False
    for key, p in params.items():
        required = p.default is REQUIRED
        if isinstance(p, Bool) or (required and seen_default):
            keyword_only = True
        seen_default |= not required
        kind = inspect.Parameter.KEYWORD_ONLY if keyword_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
        out.append(inspect.Parameter(key, kind, default=inspect.Parameter.empty if required else p.default))
    return inspect.Signature(out)


def _make_init(cls_name: str, signature: inspect.Signature):
    """An ``__init__`` taking exactly ``signature`` (so ``help()`` and IDEs show the names) and passing it on."""
    with_self = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                   *signature.parameters.values()])

    def __init__(self, *args, **kwargs):
        if set(kwargs) - set(signature.parameters):
            LocalRule.__init__(self, **kwargs)  # raises, naming the unknown and the declared parameters
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:  # name the class and what it takes, as a Python-defined __init__ would
            raise TypeError(f"{cls_name}{signature}: {exc}") from None
        LocalRule.__init__(self, **bound.arguments)

    # a function attribute inspect.signature reads; typeshed's FunctionType does not declare it
    __init__.__signature__ = with_self  # type: ignore[attr-defined]
    __init__.__doc__ = f"Build the rule; see ``{cls_name}`` for the parameters."
    return __init__


def _class_doc(doc: str | None, params: dict, post_variables: dict) -> str:
    """The function's docstring, with a numpydoc Parameters section of the declared ones if it has none."""
    doc = inspect.cleandoc(doc) if doc else "A plasticity rule made by :func:`~neurosim.rules.local_rule`."
    if not params or "\nParameters\n---" in f"\n{doc}":
        return doc
    lines = ["", "Parameters", "----------"]
    for key, p in params.items():
        head = f"{key} : {p.kind}" + ("" if p.default is REQUIRED else f", default {p.default!r}")
        what = (p.doc[:1].upper() + p.doc[1:]).rstrip(".") + ". " if p.doc else ""
        extra = "live (may be assigned while running)" if p.live else "fixed once built"
        if p.schedulable and p.live:
            extra += ", schedulable"
        allowed = "True or False" if isinstance(p, Bool) else p.describe_range()
        if allowed == p.kind:  # a kind without a range of its own ("name", "object")
            allowed = f"a {p.kind}"
        lines += [head, f"    {what}{allowed[:1].upper()}{allowed[1:]}; {extra}."]
    if post_variables:
        lines += ["", "Notes", "-----",
                  "Per-unit variables of the post population (initial value): "
                  + ", ".join(f"``{k}`` ({v!r})" for k, v in post_variables.items()) + "."]
    return doc + "\n" + "\n".join(lines)
