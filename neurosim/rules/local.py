"""A plasticity rule from one plain function: :func:`local_rule`.

Writing a :class:`~neurosim.rules.Rule` by hand takes a NumPy reference, a
kernel and the plumbing between them. For the common case -- a rule that
updates one projection's weights from its pre and post activity, per-unit
variables of the post population and a few parameters -- one numba-compatible
function is enough. It comes in two forms.

**Per synapse** (``per_synapse=True``): the function says what one synapse
does, and the library maps it over the synapses -- every stored synapse of a
sparse projection, every ``(i, j)`` of a dense one except a lateral
projection's diagonal and masked-out synapses -- serially or row-parallel
(:mod:`neurosim.rules.synapse_map`)::

    from neurosim.params import Float
    from neurosim.rules import local_rule

    @local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)}, per_synapse=True)
    def AntiHebbian(w, post, pre, rate):
        \"\"\"``w_ij -= rate * mean_b y_i x_j``.\"\"\"
        acc = 0.0
        for b in range(post.shape[0]):
            acc += post[b] * pre[b]
        return w - rate * acc / post.shape[0]

    net.add(ns.Projection("M", y, y, rule=AntiHebbian(rate=0.05)))

Its arguments: the synapse's weight ``w``; ``post`` and ``pre``, the
activities of its two units over the batch (1-D, ``(batch,)``); the declared
post variables as the post unit's values (scalars, read-only); the declared
parameters. It returns the new weight. An optional ``unit_update(post,
*post_variables, *params)`` updates the post variables (whole ``(n_post,)``
arrays, in place; ``post`` the ``(batch, n_post)`` activity) after every
synapse has been updated: a sliding threshold, a trace.

**Whole matrix**: the function gets the projection's ``weights`` ``(n_post,
n_pre)`` (update it in place), ``post`` ``(batch, n_post)``, ``pre``
``(batch, n_pre)``, then one ``(n_post,)`` array per declared post variable
(in the order given; the function may update them in place), then the
declared parameters, and loops over the synapses itself. It runs on dense
projections only; after every update the projection's structure is
enforced (masked-out synapses and a lateral projection's diagonal are zero).

Either way, the decorator returns a :class:`Rule` subclass. Its compiled
path calls the function compiled by numba (with bounds checks) inside the
engine's segments; its NumPy reference calls the same function uncompiled,
on the same values, so the two paths run the same arithmetic. The weights
are tested for NaN/Inf after every update, stopping a compiled segment at
the step they diverge. Parameters are :mod:`declared <neurosim.params>`:
validated, live (an assignment takes effect from the next step),
schedulable, and part of ``params()``.

The functions must be defined at module level. In a script (``__main__``),
which a compiled segment cannot import, their source is copied into the
segment: they may then use only ``np``, ``math`` and their arguments.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from numba.core.registry import CPUDispatcher

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels.plasticity import enforce_structure_all
from neurosim.params import REQUIRED, Bool, Param
from neurosim.rules.base import Rule
from neurosim.rules.synapse_map import synapse_maps
from neurosim.synapses import csr_refs

__all__ = ["local_rule", "LocalRule"]

_FIXED_ARGS = ("weights", "post", "pre")
_SYNAPSE_ARGS = ("w", "post", "pre")


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
    #: whether ``kernel`` is the per-synapse form ``f(w, post, pre, ...) -> new weight``
    per_synapse: bool = False
    #: the per-synapse form's compiled ``unit_update``, run after the synapses (None: none)
    unit_kernel: Any = None
    #: the per-synapse form's loops over the synapses by ``(storage, row_parallel)`` (:mod:`.synapse_map`)
    maps: dict = {}
    #: post-population variables passed to the function, in order
    variable_names: tuple = ()
    #: declared parameters passed to the function, in order
    param_names: tuple = ()
    sparse_hint = ("a whole-matrix local_rule loops over a dense weight matrix itself; write the rule per synapse, "
                   "local_rule(..., per_synapse=True) with f(w, post, pre, ...) returning the synapse's new weight, "
                   "and it runs on sparse and dense projections alike (docs/rules.md, 'Per-synapse rules')")

    def __init__(self, **params: Any) -> None:
        super().__init__()
        self.set_params(**params)
        self.post_variables = dict(type(self).post_variables)
        self._workspaces: dict[str, np.ndarray] = {}

    def _values(self) -> tuple[list, list]:
        """The post variables' arrays and the parameters' values now, in the function's order."""
        p = self.projection
        t = p.network.t if p.network is not None else None
        return [p.post.state[v] for v in self.variable_names], [self.value(n, t) for n in self.param_names]

    def update_numpy(self) -> None:
        p = self.projection
        variables, params = self._values()
        if not self.per_synapse:
            type(self).kernel.py_func(p.weights, p.post.activity, p.pre.activity, *variables, *params)
            p.enforce_structure()
            return
        f = type(self).kernel.py_func
        # the rows the loops hand the function (contiguous vectors over the batch)
        y_t, x_t = p.post.activity.T.copy(), p.pre.activity.T.copy()
        w = p.weights
        if p.sparse:
            post, pre = p.synapse_index.pairs()
            for s in range(w.size):
                i = post[s]
                w[s] = f(w[s], y_t[i], x_t[pre[s]], *[v[i] for v in variables], *params)
        else:
            mask = p.mask
            for i in range(w.shape[0]):
                at_i = [v[i] for v in variables]
                for j in range(w.shape[1]):
                    if not ((p.lateral and j == i) or (mask is not None and not mask[i, j])):
                        w[i, j] = f(w[i, j], y_t[i], x_t[j], *at_i, *params)
        if type(self).unit_kernel is not None:
            type(self).unit_kernel.py_func(p.post.activity, *variables, *params)

    def _transposed(self, kind: str) -> np.ndarray:
        """The workspace ``(n, batch)`` the per-synapse loops copy the ``"post"`` or ``"pre"`` activity into."""
        p = self.projection
        a = (p.post if kind == "post" else p.pre).activity
        ws = self._workspaces.get(kind)
        if ws is None or ws.shape != a.shape[::-1]:
            ws = self._workspaces[kind] = np.zeros(a.shape[::-1])
        return ws

    def kernel_calls(self) -> list[KernelCall]:
        p = self.projection
        cls = type(self)
        w, post, pre = self._refs()
        variables = [ArrayRef(lambda v=v: p.post.state[v], f"{p.post.name}.{v}") for v in self.variable_names]
        params = [self.ref(n) for n in self.param_names]
        if not self.per_synapse:
            update = KernelCall(cls.kernel, (w, post, pre, *variables, *params), label=f"{p.name}.rule")
            structure = KernelCall(enforce_structure_all, (w, p.lateral, self._mask_ref(), p.mask is not None),
                                   label=f"{p.name}.structure", finite=f"{p.name}.weights")
            return [update, structure]
        transposed = [ArrayRef(lambda k=k: self._transposed(k), f"{p.name}.rule.{k}_t") for k in ("post", "pre")]
        if p.sparse:
            indptr, indices, _ = csr_refs(p)
            synapses: tuple = (indptr, indices)
        else:
            synapses = (p.lateral, self._mask_ref(), p.mask is not None)
        loop = cls.maps["sparse" if p.sparse else "dense", self._use_rows()]
        calls = [KernelCall(loop, (w, *synapses, post, pre, *transposed, *variables, *params), label=f"{p.name}.rule",
                            finite=f"{p.name}.weights")]
        if cls.unit_kernel is not None:
            calls.append(KernelCall(cls.unit_kernel, (post, *variables, *params), label=f"{p.name}.rule.units"))
        return calls


def _compiled(func: Callable, inline: bool) -> CPUDispatcher:
    """``func`` compiled with bounds checks (inlined into its callers when ``inline``); reused if it is already."""
    opts = {"boundscheck": True, **({"inline": "always"} if inline else {})}
    if isinstance(func, CPUDispatcher) and all(func.targetoptions.get(k) == v for k, v in opts.items()):
        return func
    if not callable(func):
        raise TypeError(f"func must be a function; got {type(func).__name__}")
    from numba import njit

    # Bounds checks on (user kernels only): an index past an array's end raises IndexError, as the NumPy
    # reference does, instead of writing over memory next to the weights. Not cached (numba's cache
    # index ignores compile options, so a cache file shared with the user's own @njit(cache=True) could
    # hand back code without the checks); a cached segment holds the compiled kernel anyway.
    return njit(nogil=True, **opts)(getattr(func, "py_func", func))


def _check_arguments(py: Callable, fixed: tuple, rest: list, what: str) -> None:
    """``TypeError`` unless ``py`` takes ``len(fixed)`` arrays (any names) and then exactly ``rest``, in order."""
    names = list(inspect.signature(py).parameters)
    n = len(fixed)
    if len(names) != n + len(rest) or names[n:] != rest:
        raise TypeError(f"{py.__name__} must take ({', '.join(list(fixed) + rest)}): {what}; it takes "
                        f"({', '.join(names)})")
    if "<" in py.__qualname__:
        raise TypeError(f"{py.__qualname__} must be defined at module level (not inside a function) so that compiled "
                        "segments can reach it")


def local_rule(func: Callable | None = None, *, params: dict[str, Param] | None = None,
               post_variables: dict[str, float] | None = None, name: str | None = None, per_synapse: bool = False,
               unit_update: Callable | None = None, base: type | None = None) -> Any:
    """Make a :class:`~neurosim.rules.Rule` class from one numba-compatible function.

    Parameters
    ----------
    func : callable
        Whole-matrix form (the default): ``func(weights, post, pre,
        *post_variables, *params)``, updating ``weights`` (and possibly the
        post variables) in place; dense projections only. Per-synapse form
        (``per_synapse=True``): ``func(w, post, pre, *post_variables,
        *params)`` returning the new weight of one synapse, with ``post``
        and ``pre`` its units' activities ``(batch,)`` and the post
        variables as the post unit's values; dense and sparse projections.
        Plain Python or already ``@njit``-decorated.
    params : dict of str -> Param, optional
        Declared parameters (:class:`~neurosim.params.Float`, ``Int``,
        ``Bool``...), in the order the function takes them.
    post_variables : dict of str -> float, optional
        Per-unit variables of the post population the function receives,
        with their initial values (also for newborn units).
    name : str, optional
        Class name (default: the function's name).
    per_synapse : bool, default=False
        Whether ``func`` is the per-synapse form.
    unit_update : callable, optional
        Per-synapse form only: ``unit_update(post, *post_variables,
        *params)``, run after every synapse has been updated, with ``post``
        the ``(batch, n_post)`` activity and the post variables as their
        ``(n_post,)`` arrays, to update in place.
    base : type, optional
        A :class:`LocalRule` subclass for the class to derive from (the
        standard rules add a hand-written sparse path this way).

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
        ``func`` or ``unit_update`` is not a function, their arguments are not
        the ones above in that order, they are not defined at module level,
        ``unit_update`` is given without ``per_synapse`` or without post
        variables, or ``base`` is not a subclass of :class:`LocalRule`.

    Examples
    --------
    A Hebbian rule written per synapse; one step by hand gives ``W = 1 + 0.1
    * y x^T`` with ``x = [1, 2]`` and ``y = W x = 3``:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> from neurosim.params import Float
    >>> @ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)}, per_synapse=True)
    ... def MyHebbian(w, post, pre, rate):
    ...     return w + rate * post[0] * pre[0]
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

    The same rule as one loop nest over the weight matrix (dense projections only):

    >>> @ns.local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)})
    ... def MyHebbianMatrix(weights, post, pre, rate):
    ...     for i in range(weights.shape[0]):
    ...         for j in range(weights.shape[1]):
    ...             weights[i, j] += rate * post[0, i] * pre[0, j]
    >>> MyHebbianMatrix.per_synapse, MyHebbian.sparse_projections, MyHebbianMatrix.sparse_projections
    (False, True, False)
    """
    if func is None:
        return lambda f: local_rule(f, params=params, post_variables=post_variables, name=name,
                                    per_synapse=per_synapse, unit_update=unit_update, base=base)
    params = dict(params or {})
    post_variables = dict(post_variables or {})
    for key, p in params.items():
        if not isinstance(p, Param):
            raise TypeError(f"params[{key!r}] must be a declared parameter (neurosim.params.Float, Int, Bool...); "
                            f"got {type(p).__name__}")
    if not isinstance(per_synapse, bool):
        raise TypeError(f"per_synapse must be True or False; got {per_synapse!r}")
    base = LocalRule if base is None else base
    if not (isinstance(base, type) and issubclass(base, LocalRule)):
        raise TypeError(f"base must be a subclass of LocalRule; got {base!r}")
    if unit_update is not None and not per_synapse:
        raise TypeError("unit_update belongs to the per-synapse form (per_synapse=True); a whole-matrix function "
                        "updates the post variables itself")
    if unit_update is not None and not post_variables:
        raise TypeError("unit_update updates post variables; declare them with post_variables={name: initial value}")
    kernel = _compiled(func, inline=per_synapse)
    py = kernel.py_func
    rest = list(post_variables) + list(params)
    if per_synapse:
        _check_arguments(py, _SYNAPSE_ARGS, rest, f"the synapse's weight and its units' activities, then the post "
                         f"variables {list(post_variables)}, then the parameters {list(params)}, in that order")
    else:
        _check_arguments(py, _FIXED_ARGS, rest, f"the fixed arrays, then the post variables {list(post_variables)}, "
                         f"then the parameters {list(params)}, in that order")
    unit = None
    if unit_update is not None:
        unit = _compiled(unit_update, inline=False)
        _check_arguments(unit.py_func, ("post",), rest, f"the post activity, then the post variables "
                         f"{list(post_variables)}, then the parameters {list(params)}, in that order")
    cls_name = name or py.__name__
    signature = _constructor_signature(params)
    namespace = {"kernel": kernel, "per_synapse": per_synapse, "unit_kernel": unit,
                 "variable_names": tuple(post_variables), "param_names": tuple(params),
                 "post_variables": post_variables, "__doc__": _class_doc(py.__doc__, params, post_variables),
                 "__module__": py.__module__, "__qualname__": cls_name, "__signature__": signature,
                 "__init__": _make_init(cls_name, signature, base)}
    if per_synapse:
        namespace["maps"] = synapse_maps(kernel, len(post_variables), len(params), cls_name)
        namespace["sparse_projections"] = True
    namespace["__init__"].__qualname__ = f"{cls_name}.__init__"
    namespace["__init__"].__module__ = py.__module__
    for key, p in params.items():
        namespace[key] = copy.copy(p)  # type() calls __set_name__, which names this class's own descriptor
    return type(cls_name, (base,), namespace)


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


def _make_init(cls_name: str, signature: inspect.Signature, base: type):
    """An ``__init__`` taking exactly ``signature`` (so ``help()`` and IDEs show the names) and passing it on."""
    with_self = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                   *signature.parameters.values()])

    def __init__(self, *args, **kwargs):
        if set(kwargs) - set(signature.parameters):
            base.__init__(self, **kwargs)  # raises, naming the unknown and the declared parameters
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:  # name the class and what it takes, as a Python-defined __init__ would
            raise TypeError(f"{cls_name}{signature}: {exc}") from None
        base.__init__(self, **bound.arguments)

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
