"""Projections: dense synaptic weights from a pre- to a post-population.

``weights[i, j]`` is the synapse from pre unit ``j`` onto post unit ``i``
(post x pre, the layout of a matrix acting on activity vectors). A lateral
projection (pre is post) has no self-synapses: its diagonal is held at zero
by construction and by every rule. An optional boolean ``mask`` restricts
connectivity; weights outside it stay zero.

``weights`` and ``mask`` are validated properties: assigning an array copies
it into the layout the kernels need (C-contiguous float64, or bool for the
mask), refuses a wrong shape or non-finite weights, and re-applies the
structure (zero diagonal of a lateral projection, zero weights outside the
mask). In-place changes (``p.weights[...] = v``, ``p.weights *= c``) are
not checked; they keep the array the kernels see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_float, check_memory
from neurosim.population import Population, check_name

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.rules.base import Rule

__all__ = ["Projection", "Initializer", "Normal", "Uniform", "Constant"]


class Initializer:
    """Draws initial weights; called for the whole matrix and for newborn rows/columns.

    A subclass implements ``__call__(rng, shape) -> ndarray`` and
    :meth:`params`.
    """

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The initializer's kind and parameters, as ``{"init": name, "init_<param>": value}``.

        Returns
        -------
        dict
            Merged into the projection's :meth:`Projection.params`.
        """
        return {"init": type(self).__name__}


class Normal(Initializer):
    """Gaussian weights with mean ``mean`` and standard deviation ``std``.

    Parameters
    ----------
    std : float >= 0, optional
        Standard deviation.
    mean : float, optional
        Mean.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim import Normal
    >>> w = Normal(std=0.0, mean=0.5)(np.random.default_rng(0), (2, 3))
    >>> w.tolist()
    [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
    """

    def __init__(self, std: float = 0.1, mean: float = 0.0) -> None:
        self.std = check_float("std", std, low=0.0)
        self.mean = check_float("mean", mean)

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return self.mean + self.std * rng.standard_normal(shape)

    def params(self) -> dict[str, Any]:
        return {"init": "Normal", "init_std": self.std, "init_mean": self.mean}


class Uniform(Initializer):
    """Uniform weights on ``[low, high)``.

    Parameters
    ----------
    low : float, optional
        Lower bound (inclusive).
    high : float >= low, optional
        Upper bound (exclusive).

    Raises
    ------
    ValueError
        If ``high < low``.
    """

    def __init__(self, low: float = -0.1, high: float = 0.1) -> None:
        self.low = check_float("low", low)
        self.high = check_float("high", high)
        if self.high < self.low:
            raise ValueError(f"high must be >= low; got low={low}, high={high}")

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(self.low, self.high, size=shape)

    def params(self) -> dict[str, Any]:
        return {"init": "Uniform", "init_low": self.low, "init_high": self.high}


class Constant(Initializer):
    """All weights equal ``value``.

    Parameters
    ----------
    value : float, optional
        The weight of every synapse (and of newborn units' synapses).
    """

    def __init__(self, value: float = 0.0) -> None:
        self.value = check_float("value", value)

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return np.full(shape, self.value)

    def params(self) -> dict[str, Any]:
        return {"init": "Constant", "init_value": self.value}


class Projection:
    """Dense synapses ``pre -> post`` with at most one plasticity rule.

    Parameters
    ----------
    name : str
        Identifier, unique within a network.
    pre, post : Population
        Source and target. ``pre is post`` makes a lateral projection.
    sign : {+1, -1}
        Excitatory (+1) or inhibitory (-1): the drive onto ``post`` is
        ``sign * weights @ pre.activity``.
    init : Initializer or array_like, optional
        Initial weights; an array must have shape ``(post.size, pre.size)``.
        Default ``Normal(0.1)``. Newborn units get rows/columns from an
        Initializer, or zeros when ``init`` was an array.
    mask : array_like of bool, optional
        Connectivity, shape ``(post.size, pre.size)``; newborn units are
        fully connected (but for self-synapses).
    rule : neurosim.rules.Rule, optional
        The plasticity rule updating ``weights``.

    Raises
    ------
    TypeError
        If ``pre`` or ``post`` is not a Population.
    ValueError
        If ``sign`` is not +1 or -1, an array ``init`` or ``mask`` has the
        wrong shape, ``rule`` already belongs to another projection, or the
        weights (and mask) would need more memory than is available
        (``MemAvailable`` of ``/proc/meminfo``), before allocating.

    Examples
    --------
    A lateral inhibitory projection holds a zero diagonal:

    >>> import neurosim as ns
    >>> y = ns.Population("y", 3, dynamics=ns.Jacobi())
    >>> M = ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.2))
    >>> net = ns.Network()
    >>> _ = net.add(y, M)
    >>> M.lateral, M.shape
    (True, (3, 3))
    >>> print(M.weights)
    [[0.  0.2 0.2]
     [0.2 0.  0.2]
     [0.2 0.2 0. ]]
    """

    def __init__(self, name: str, pre: Population, post: Population, *, sign: int = 1,
                 init: Initializer | ArrayLike | None = None, mask: ArrayLike | None = None,
                 rule: Rule | None = None) -> None:
        self.name = check_name("projection", name)
        for label, pop in (("pre", pre), ("post", post)):
            if not isinstance(pop, Population):
                raise TypeError(f"{label} must be a Population; got {type(pop).__name__}")
        if sign not in (1, -1) or isinstance(sign, bool):
            raise ValueError(f"sign must be +1 (excitatory) or -1 (inhibitory); got {sign!r}")
        self.pre, self.post, self.sign = pre, post, int(sign)
        self.lateral = pre is post
        shape = (post.size, pre.size)
        check_memory(shape[0] * shape[1] * (9 if mask is not None else 8),
                     f"Projection {self.name!r} ({pre.name} -> {post.name}) of shape (post.size, pre.size) = {shape} "
                     f"({'weights and mask' if mask is not None else 'weights'})")
        if init is None:
            init = Normal(0.1)
        if isinstance(init, Initializer):
            self.initializer = init
            self._init_array = None
        else:
            self.initializer = Constant(0.0)
            self._init_array = check_array("init", init, shape=shape)
        self.network: Network | None = None
        self._weights = np.zeros(shape)
        self._mask: np.ndarray | None = None
        #: arrays shaped like ``weights`` that follow every Birth and Death with them (see :meth:`add_array`)
        self.arrays: dict[str, np.ndarray] = {}
        self._array_init: dict[str, float] = {}
        if mask is not None:
            self.mask = mask
        self.rule: Rule | None = None
        if rule is not None:
            from neurosim.rules.base import Rule

            if not isinstance(rule, Rule):
                raise TypeError(f"rule must be a neurosim Rule instance; got {type(rule).__name__}")
            if rule.projection is not None:
                raise ValueError("this Rule object is already attached to another projection")
            rule.projection = self
            self.rule = rule

    def variable_attrs(self, name: str = "weights") -> dict:
        """``{"units", "long_name"}`` of the recorded ``weights`` (dimensionless: they scale activity into drive).

        Parameters
        ----------
        name : str
            ``"weights"``, the only variable a projection records.

        Returns
        -------
        dict
            ``{"units": "1", "long_name": ...}`` naming the projection, its
            populations and its sign.

        Raises
        ------
        ValueError
            For any other ``name``.
        """
        if name != "weights":
            raise ValueError(f"a projection records only 'weights'; got {name!r}")
        kind = "lateral " if self.lateral else ""
        return {"units": "1", "long_name": f"{kind}weights of projection {self.name} ({self.pre.name} -> {self.post.name}, "
                                           f"sign {self.sign:+d})"}

    def materialize(self, rng: np.random.Generator) -> None:
        """Draw the initial weights (done once, when the network adds the projection).

        Parameters
        ----------
        rng : numpy.random.Generator
            The network's generator (``network.rng``).
        """
        shape = (self.post.size, self.pre.size)
        w = self._init_array.copy() if self._init_array is not None else np.asarray(self.initializer(rng, shape), float)
        self._weights = np.ascontiguousarray(w)
        self.enforce_structure()

    # -- validated weights and mask -------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        """``(post.size, pre.size)``: the shape of ``weights`` and ``mask``."""
        return (self.post.size, self.pre.size)

    @property
    def weights(self) -> np.ndarray:
        """Synaptic weights, ``(post.size, pre.size)`` C-contiguous float64.

        Assigning converts a real array to a fresh C-contiguous, writeable
        float64 copy, refuses a wrong shape or NaN/Inf (``ValueError``) and
        non-numeric, boolean or complex arrays (``TypeError``), and zeroes
        the synapses the structure forbids.
        """
        return self._weights

    @weights.setter
    def weights(self, value: ArrayLike) -> None:
        if value is self._weights:  # ``p.weights += dw`` writes in place, then assigns the same array back
            return
        arr = self._checked(value, "weights")
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[:5].tolist()
            raise ValueError(f"weights of projection {self.name!r} must be finite; NaN/Inf at (post, pre) index {bad}")
        self._weights = np.array(arr, dtype=np.float64, order="C", copy=True)
        self.enforce_structure()

    @property
    def mask(self) -> np.ndarray | None:
        """Connectivity, ``(post.size, pre.size)`` C-contiguous bool, or ``None`` (all connected).

        Assigning accepts booleans or integers equal to 0/1, copies them to a
        C-contiguous bool array, clears a lateral projection's diagonal and
        zeroes the weights outside the new mask. Assigning ``None`` connects
        every synapse again (their weights stay 0 until a rule changes them).
        """
        return self._mask

    @mask.setter
    def mask(self, value: ArrayLike | None) -> None:
        if value is not None and value is self._mask:
            return
        toggled = (value is None) != (self._mask is None)
        if value is None:
            self._mask = None
        else:
            arr = self._checked(value, "mask")
            if arr.dtype != np.bool_ and not np.all((arr == 0) | (arr == 1)):
                raise ValueError(f"mask of projection {self.name!r} must hold booleans or 0/1; "
                                 f"got values {np.unique(arr[(arr != 0) & (arr != 1)])[:5].tolist()}")
            m = np.array(arr, dtype=np.bool_, order="C", copy=True)
            if self.lateral:
                np.fill_diagonal(m, False)
            self._mask = m
            self.enforce_structure()
        if toggled and self.network is not None:
            self.network._changed()  # kernels take whether a mask exists as a compile-time argument

    def _checked(self, value, what: str) -> np.ndarray:
        try:
            arr = np.asarray(value)
        except Exception as exc:
            raise TypeError(f"{what} of projection {self.name!r} must be an array; {exc}") from None
        kinds = "iub" if what == "mask" else "iuf"
        if arr.dtype.kind not in kinds:
            allowed = "bool or integer 0/1" if what == "mask" else "real numbers (float or integer)"
            raise TypeError(f"{what} of projection {self.name!r} must hold {allowed}; got dtype {arr.dtype}")
        if arr.shape != self.shape:
            raise ValueError(f"{what} of projection {self.name!r} must have shape (post.size, pre.size) = "
                             f"{self.shape} ({self.post.name!r} x {self.pre.name!r}); got {arr.shape}")
        return arr

    def enforce_structure(self) -> None:
        """Zero the weights that the connectivity forbids (self-synapses, masked-out)."""
        if self.lateral:
            np.fill_diagonal(self._weights, 0.0)
        if self._mask is not None:
            self._weights[~self._mask] = 0.0

    # -- structural change (staged by Network.apply, then swapped in) ----------------
    def add_array(self, name: str, init: float = 0.0) -> np.ndarray:
        """Declare an array shaped like ``weights`` that lives with the synapses.

        It gains rows/columns filled with ``init`` when units are born and
        loses them when units die, exactly like the weights (e.g. the
        statistics ``B = sum x alpha^T`` of online dictionary learning, kept
        per synapse). Checkpoints save it. Declaring it again keeps its values.

        Parameters
        ----------
        name : str
            Array name (a Python identifier), the key in ``arrays``.
        init : float, optional
            Initial value, also of newborn units' rows and columns.

        Returns
        -------
        numpy.ndarray
            The array, ``arrays[name]``, shape ``(post.size, pre.size)``.
        """
        check_name("array", name)
        init = check_float("init", init)
        if name in self.arrays:
            return self.arrays[name]
        self._array_init[name] = init
        self.arrays[name] = np.full(self.shape, init)
        return self.arrays[name]

    def _stage(self) -> list:
        return [self._weights, self._mask, dict(self.arrays)]

    def _commit(self, staged: list):
        self._weights, self._mask = staged[0], staged[1]
        if len(staged) > 2:
            self.arrays = dict(staged[2])

    def _draw(self, rng, shape, pop) -> np.ndarray:
        block = np.asarray(self.initializer(rng, shape), dtype=np.float64)
        if block.shape != shape:
            raise ValueError(f"initializer {type(self.initializer).__name__} of projection {self.name!r} returned shape "
                             f"{block.shape} for the newborn units of {pop.name!r}; expected {shape}")
        if not np.all(np.isfinite(block)):
            raise ValueError(f"initializer {type(self.initializer).__name__} of projection {self.name!r} drew NaN/Inf "
                             f"weights for the newborn units of {pop.name!r}")
        return block

    def _checked_block(self, block, shape, pop) -> np.ndarray:
        try:
            arr = np.asarray(block, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"Birth weights for projection {self.name!r} must be a real array of shape {shape}") from None
        if arr.shape != shape:
            raise ValueError(f"Birth weights for projection {self.name!r} must have shape {shape} (the newborn units of "
                             f"{pop.name!r} on the {'post' if pop is self.post else 'pre'} side); got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"Birth weights for projection {self.name!r} must be finite")
        return arr

    def _grown(self, staged: list, pop: Population, n: int, rng: np.random.Generator, given=None,
               linked: bool = True) -> list:
        """Weights, mask and arrays with ``n`` newborn units of ``pop``, as new arrays; ``staged`` is left as it was.

        ``given``: the newborn weights (rows if ``pop`` is the post side,
        columns if the pre side) set by the event instead of drawn.
        ``linked=False``: the newborn units' mask rows/columns are False (no
        synapses, hence zero weights), for a masked projection.
        """
        w, m = staged[0], staged[1]
        arrays = dict(staged[2]) if len(staged) > 2 else {}
        if self.lateral and given is not None:
            raise ValueError(f"Birth weights cannot be given for the lateral projection {self.name!r}")
        if pop is self.post:
            shape = (n, w.shape[1])
            block = self._checked_block(given, shape, pop) if given is not None else self._draw(rng, shape, pop)
            w = np.concatenate([w, block], axis=0)
            if m is not None:
                m = np.concatenate([m, np.full((n, m.shape[1]), linked)], axis=0)
            for k, a in arrays.items():
                arrays[k] = np.concatenate([a, np.full((n, a.shape[1]), self._array_init[k])], axis=0)
        if pop is self.pre:
            shape = (w.shape[0], n)
            block = self._checked_block(given, shape, pop) if given is not None else self._draw(rng, shape, pop)
            w = np.concatenate([w, block], axis=1)
            if m is not None:
                m = np.concatenate([m, np.full((m.shape[0], n), linked)], axis=1)
            for k, a in arrays.items():
                arrays[k] = np.concatenate([a, np.full((a.shape[0], n), self._array_init[k])], axis=1)
        arrays = {k: np.ascontiguousarray(a) for k, a in arrays.items()}
        w = np.ascontiguousarray(w)
        if m is not None:
            m = np.ascontiguousarray(m)
            if self.lateral:
                np.fill_diagonal(m, False)
            w[~m] = 0.0
        if self.lateral:
            np.fill_diagonal(w, 0.0)
        return [w, m, arrays]

    def _shrunk(self, staged: list, pop: Population, index: np.ndarray) -> list:
        w, m = staged[0], staged[1]
        arrays = dict(staged[2]) if len(staged) > 2 else {}
        axes = ([0] if pop is self.post else []) + ([1] if pop is self.pre else [])
        for axis in axes:
            w = np.delete(w, index, axis=axis)
            m = None if m is None else np.delete(m, index, axis=axis)
            arrays = {k: np.delete(a, index, axis=axis) for k, a in arrays.items()}
        return [np.ascontiguousarray(w), None if m is None else np.ascontiguousarray(m),
                {k: np.ascontiguousarray(a) for k, a in arrays.items()}]

    def _bytes(self, shape: tuple) -> int:
        """Bytes of the weights (and mask, and declared arrays) at ``shape``."""
        return shape[0] * shape[1] * (8 * (1 + len(self.arrays)) + (1 if self._mask is not None else 0))

    def _restore(self, weights: np.ndarray, mask, arrays=None):
        """Put back arrays saved earlier from this projection (undoing a failed step); no checks."""
        self._weights = weights
        self._mask = mask
        if arrays is not None:
            self.arrays = arrays

    def params(self) -> dict[str, Any]:
        """The projection's parameters: populations, sign, initializer and its rule's (``"rule.<name>"``).

        Returns
        -------
        dict
            Plain values, as recorded Datasets and checkpoints carry them.
        """
        out = {"pre": self.pre.name, "post": self.post.name, "sign": self.sign, **self.initializer.params()}
        if self.rule is not None:
            out.update({f"rule.{k}": v for k, v in self.rule.params().items()})
        return out

    def __repr__(self) -> str:
        rule = repr(self.rule) if self.rule is not None else None
        post, pre = self._weights.shape
        mask = f", mask={int(self._mask.sum())} of {self._mask.size} synapses" if self._mask is not None else ""
        lateral = ", lateral" if self.lateral else ""
        return (f"Projection({self.name!r}, {self.pre.name} -> {self.post.name}, sign={self.sign:+d}, "
                f"weights={post}x{pre}{lateral}{mask}, rule={rule})")
