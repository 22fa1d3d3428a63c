"""Projections: synaptic weights from a pre- to a post-population, stored densely or sparsely.

**Dense storage** (the default without a ``connectivity``): ``weights[i, j]``
is the synapse from pre unit ``j`` onto post unit ``i`` (post x pre, the
layout of a matrix acting on activity vectors). A lateral projection (pre is
post) has no self-synapses: its diagonal is held at zero by construction and
by every rule. An optional boolean ``mask`` restricts connectivity; weights
outside it stay zero.

**Sparse storage** (``connectivity=FixedProbability(0.01)`` and the other
descriptions of :mod:`neurosim.connectivity`, or ``storage="sparse"``): only
the synapses that exist are stored, as Brian2's ``Synapses`` stores them:
``weights[s]`` is synapse ``s``, numbered row by row by post unit
(:class:`~neurosim.synapse_index.SynapseIndex`, ``synapse_index``), so memory
grows with the synapses, not with ``post x pre``. The same connectivity with
``storage="dense"`` gives a masked dense projection with the same synapses
and, from the same seed, the same initial weights.

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

from neurosim._validation import check_array, check_choice, check_float, check_memory
from neurosim.codegen import ArrayRef
from neurosim.connectivity import AllToAll, Connectivity, FromIndices, as_connectivity
from neurosim.population import Population, check_name
from neurosim.synapse_index import SynapseIndex, index_dtype

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.rules.base import Rule

__all__ = ["Projection", "Initializer", "Normal", "Uniform", "Constant", "csr_refs"]


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
        # in place: the values of mean + std * z without two temporaries the size of the weights
        w = rng.standard_normal(shape)
        w *= self.std
        w += self.mean
        return w

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


#: Projection storages: ``"auto"`` is sparse with a ``connectivity`` and dense without.
STORAGES = ("auto", "dense", "sparse")


class Projection:
    """Synapses ``pre -> post`` with at most one plasticity rule, stored densely or sparsely.

    Parameters
    ----------
    name : str
        Identifier, unique within a network.
    pre, post : Population
        Source and target. ``pre is post`` makes a lateral projection.
    sign : {+1, -1}
        Excitatory (+1) or inhibitory (-1): the drive onto ``post`` is
        ``sign * weights @ pre.activity``.
    init : Initializer, array_like or scipy.sparse matrix, optional
        Initial weights. An Initializer draws one weight per synapse from
        the network's generator (``Network(seed=...)``) when the network
        adds the projection. The default is ``Normal(0.1)``: independent
        Gaussian weights of mean 0 and standard deviation 0.1, whatever the
        number of inputs (no ``1 / sqrt(pre.size)`` scaling), with
        the self-synapses of a dense lateral projection and synapses outside
        the connectivity at 0 (``init=Constant(0.0)`` starts from zero). A dense
        array must have shape ``(post.size, pre.size)`` (a sparse projection
        takes its values at the synapses); a ``scipy.sparse`` matrix gives
        both the synapses (its stored entries, when no ``connectivity`` is
        given) and their weights, and makes the storage sparse by default.
        Newborn units get weights from an Initializer, or zeros when
        ``init`` was an array.
    mask : array_like of bool, optional
        Connectivity as a dense ``(post.size, pre.size)`` boolean matrix;
        newborn units are fully connected (but for self-synapses). Not
        together with ``connectivity``; with ``storage="sparse"`` its
        entries become the stored synapses.
    rule : neurosim.rules.Rule, optional
        The plasticity rule updating ``weights``.
    connectivity : Connectivity or scipy.sparse matrix, optional
        Which synapses exist (:mod:`neurosim.connectivity`:
        ``FixedProbability(p)``, ``FixedInDegree(k)``, ``FixedOutDegree(k)``,
        ``Gaussian(sigma, ...)``, ``FromIndices(post, pre)``, ``AllToAll()``),
        drawn from the network's generator when the network adds the
        projection, and for newborn units. A matrix means its stored entries.
    storage : {"auto", "dense", "sparse"}, default="auto"
        ``"sparse"`` stores only existing synapses (1-D ``weights`` in
        :attr:`synapse_index` order); ``"dense"`` a ``(post, pre)`` matrix
        with a mask; ``"auto"`` is sparse when a ``connectivity`` (or a
        sparse ``init``) is given, dense otherwise.

    Raises
    ------
    TypeError
        If ``pre`` or ``post`` is not a Population.
    ValueError
        If ``sign`` is not +1 or -1, an array ``init`` or ``mask`` has the
        wrong shape, ``rule`` already belongs to another projection, both
        ``mask`` and ``connectivity`` are given, the connectivity cannot be
        drawn for these sizes (``k`` above the units to choose from, indices
        out of range, repeated pairs without ``multapses``), or its arrays
        (the weights, and a mask or the synapse index) would need more
        memory than is available (``MemAvailable`` of ``/proc/meminfo``),
        before anything is allocated or drawn.

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

    A sparse projection stores one weight per synapse:

    >>> x, z = ns.Population("x", 1000), ns.Population("z", 1000, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, z, connectivity=ns.FixedInDegree(10), init=ns.Constant(0.5))
    >>> _ = ns.Network(seed=0).add(x, z, W)
    >>> W.sparse, W.weights.shape, W.n_synapses
    (True, (10000,), 10000)
    """

    def __init__(self, name: str, pre: Population, post: Population, *, sign: int = 1,
                 init: Initializer | ArrayLike | None = None, mask: ArrayLike | None = None,
                 rule: Rule | None = None, connectivity: Connectivity | Any = None, storage: str = "auto") -> None:
        self.name = check_name("projection", name)
        for label, pop in (("pre", pre), ("post", post)):
            if not isinstance(pop, Population):
                raise TypeError(f"{label} must be a Population; got {type(pop).__name__}")
        if sign not in (1, -1) or isinstance(sign, bool):
            raise ValueError(f"sign must be +1 (excitatory) or -1 (inhibitory); got {sign!r}")
        self.pre, self.post, self.sign = pre, post, int(sign)
        self.lateral = pre is post
        shape = (post.size, pre.size)
        storage = check_choice("storage", storage, STORAGES)
        connectivity = as_connectivity(connectivity)
        sparse_init = _is_scipy_sparse(init)
        if mask is not None and connectivity is not None:
            raise ValueError(f"projection {name!r}: give mask or connectivity, not both (a mask is the connectivity "
                             "FromIndices(matrix=mask))")
        if sparse_init and connectivity is None and mask is None:
            connectivity = FromIndices(matrix=init, self_connections=self.lateral and _has_diagonal(init))
        if storage == "auto":
            storage = "sparse" if connectivity is not None else "dense"
        self.sparse = storage == "sparse"
        if self.sparse and connectivity is None:
            connectivity = (FromIndices(matrix=np.asarray(mask, dtype=bool)) if mask is not None
                            else AllToAll())
            mask = None
        #: the description of which synapses exist (``None``: a dense projection without one)
        self.connectivity: Connectivity | None = connectivity
        if connectivity is not None:
            connectivity.check(post.size, pre.size, self.lateral, self.sparse)
        self._check_fits(mask is not None)
        if init is None:
            init = Normal(0.1)
        self._init_array: np.ndarray | None = None
        self._init_sparse = None
        if isinstance(init, Initializer):
            self.initializer = init
        elif sparse_init:
            self.initializer = Constant(0.0)
            self._init_sparse = _checked_sparse_init(name, init, shape)
        else:
            self.initializer = Constant(0.0)
            self._init_array = check_array("init", init, shape=shape)
        self.network: Network | None = None
        self._index: SynapseIndex | None = None
        self._weights: np.ndarray
        if self.sparse:
            self._index = SynapseIndex(np.zeros(post.size + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), pre.size)
            self._weights = np.zeros(0)
        else:
            self._weights = np.zeros(shape)
        self._mask: np.ndarray | None = None
        #: arrays with one value per synapse (shaped like ``weights``) that follow every Birth and Death with them
        #: (see :meth:`add_array`)
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

    def _check_fits(self, masked: bool) -> None:
        """Refuse arrays that would not fit in memory, before anything is allocated or drawn."""
        post, pre = self.post.size, self.pre.size
        c = self.connectivity
        if self.sparse:
            assert c is not None  # a sparse projection always has a connectivity
            n = c.expected_synapses(post, pre, self.lateral)
            # the weights and indices, and as much again while the synapses are drawn and sorted
            need = 2 * n * (8 + index_dtype(n, post, pre).itemsize) + (post + 1) * 8
            what = f"about {n} synapses, sparse storage"
        else:
            need = post * pre * (9 if masked or c is not None else 8)
            what = "weights and mask" if masked or c is not None else "weights"
        check_memory(need, f"Projection {self.name!r} ({self.pre.name} -> {self.post.name}) of shape (post.size, "
                           f"pre.size) = {(post, pre)} ({what})")

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
        """Draw the synapses and the initial weights (done once, when the network adds the projection).

        The connectivity is drawn first, then one weight per synapse in
        synapse order, so a sparse projection and a dense one of the same
        connectivity get the same synapses and weights from the same seed.

        Parameters
        ----------
        rng : numpy.random.Generator
            The network's generator (``network.rng``).
        """
        shape = (self.post.size, self.pre.size)
        c = self.connectivity
        if c is None:
            w = (self._init_array.copy() if self._init_array is not None
                 else np.asarray(self.initializer(rng, shape), float))
            self._weights = np.ascontiguousarray(w)
            self.enforce_structure()
            return
        index = c.draw(rng, shape[0], shape[1], self.lateral)
        values = self._initial_values(rng, index)
        if self.sparse:
            self._index, self._weights = index, values
        else:
            post, pre = index.pairs()
            m = np.zeros(shape, dtype=bool)
            m[post, pre] = True
            dense = np.zeros(shape)
            dense[post, pre] = values
            self._mask, self._weights = m, dense
        self.arrays = {k: np.full(self._weights.shape, v) for k, v in self._array_init.items()}

    def _initial_values(self, rng, index: SynapseIndex) -> np.ndarray:
        """One initial weight per synapse of ``index``, in synapse order."""
        if self._init_sparse is None and self._init_array is None:
            # an initializer needs only the count: no (post, pre) pairs (8-16 bytes a synapse, 1.6 GB at 10^8)
            return self._draw(rng, (index.size,), None)
        post, pre = index.pairs()
        if self._init_sparse is not None:
            return _values_at(self._init_sparse, post, pre)
        given = self._init_array
        assert given is not None  # an array init (the branches above took the others)
        return np.ascontiguousarray(given[post, pre], dtype=np.float64)

    # -- validated weights and mask -------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        """``(post.size, pre.size)``: the shape of ``weights`` and ``mask`` of a dense projection."""
        return (self.post.size, self.pre.size)

    @property
    def structured(self) -> bool:
        """Whether the projection says which synapses exist (a mask, or sparse storage).

        Only such a projection's synapses can be linked and unlinked
        (:class:`~neurosim.events.Link`, :class:`~neurosim.events.Unlink`)
        and left out for newborn units (``Birth(unlinked=...)``).
        """
        return self.sparse or self._mask is not None

    @property
    def synapse_index(self) -> SynapseIndex:
        """Which synapses exist: compressed rows by post unit (:class:`~neurosim.synapse_index.SynapseIndex`).

        For a sparse projection, ``weights[s]`` belongs to the synapse
        ``s`` of this index. A dense projection gets one made from its mask
        (every synapse but a lateral diagonal when it has none).
        """
        if self.sparse:
            assert self._index is not None  # a sparse projection always holds an index
            return self._index
        m = self._dense_mask()
        post, pre = np.nonzero(m)
        return SynapseIndex.from_pairs(post, pre, *self.shape)[0]

    def _dense_mask(self) -> np.ndarray:
        if self._mask is not None:
            return self._mask
        m = np.ones(self.shape, dtype=bool)
        if self.lateral:
            np.fill_diagonal(m, False)
        return m

    @property
    def n_synapses(self) -> int:
        """Number of existing synapses."""
        if self.sparse:
            return self._weights.size
        return int(self._dense_mask().sum())

    def synapses(self) -> tuple[np.ndarray, np.ndarray]:
        """Stable ids ``(post_ids, pre_ids)`` of every synapse (in ``weights`` order for a sparse projection).

        Returns
        -------
        tuple of numpy.ndarray of int64
        """
        post, pre = self.synapse_index.pairs()
        return self.post.ids[post], self.pre.ids[pre]

    def to_scipy(self):
        """The weights as a ``scipy.sparse.csr_array`` of shape ``(post.size, pre.size)``.

        Every existing synapse is a stored entry (also one whose weight is
        0); multapses are summed, as they act on the drive.

        Returns
        -------
        scipy.sparse.csr_array
        """
        import scipy.sparse as sp

        idx = self.synapse_index
        values = self._weights if self.sparse else self._weights[idx.pairs()]
        out = sp.csr_array((np.array(values, dtype=np.float64), idx.indices.copy(), idx.indptr.copy()),
                           shape=self.shape)
        out.sum_duplicates()
        return out

    def to_dense(self) -> np.ndarray:
        """The weights as a ``(post.size, pre.size)`` array: 0 where there is no synapse, multapses summed.

        Returns
        -------
        numpy.ndarray
        """
        if not self.sparse:
            return self._weights.copy()
        out = np.zeros(self.shape)
        post, pre = self._index.pairs()  # type: ignore[union-attr]
        np.add.at(out, (post, pre), self._weights)
        return out

    def product(self, activity: np.ndarray) -> np.ndarray:
        """``activity @ W.T`` (without the sign): what the synapses carry from rows of pre activity (NumPy).

        Parameters
        ----------
        activity : numpy.ndarray, shape (batch, pre.size)
            Rows of pre activity.

        Returns
        -------
        numpy.ndarray, shape (batch, post.size)
        """
        if not self.sparse:
            return activity @ self._weights.T
        idx = self._index
        assert idx is not None  # a sparse projection always holds an index
        # per synapse w_s x_j, summed row by row in stored order (np.add.reduceat adds left to right)
        terms = activity[:, idx.indices] * self._weights
        out = np.zeros((activity.shape[0], idx.n_post))
        rows = np.flatnonzero(np.diff(idx.indptr))
        if rows.size:
            out[:, rows] = np.add.reduceat(terms, idx.indptr[rows], axis=1)
        return out

    @property
    def weights(self) -> np.ndarray:
        """Synaptic weights: ``(post.size, pre.size)`` C-contiguous float64, or ``(n_synapses,)`` when sparse.

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
            where = "synapse" if self.sparse else "(post, pre) index"
            raise ValueError(f"weights of projection {self.name!r} must be finite; NaN/Inf at {where} {bad}")
        self._weights = np.array(arr, dtype=np.float64, order="C", copy=True)
        self.enforce_structure()

    @property
    def mask(self) -> np.ndarray | None:
        """Connectivity, ``(post.size, pre.size)`` C-contiguous bool, or ``None`` (all connected; or sparse storage).

        Assigning accepts booleans or integers equal to 0/1, copies them to a
        C-contiguous bool array, clears a lateral projection's diagonal and
        zeroes the weights outside the new mask. Assigning ``None`` connects
        every synapse again (their weights stay 0 until a rule changes them).
        A sparse projection has no mask (its :attr:`synapse_index` says which
        synapses exist); assigning one is refused.
        """
        return self._mask

    @mask.setter
    def mask(self, value: ArrayLike | None) -> None:
        if self.sparse:
            raise ValueError(f"projection {self.name!r} stores its synapses sparsely and has no mask; change its "
                             "synapses with Link/Unlink events")
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
        if self.sparse:
            if arr.shape != self._weights.shape:
                raise ValueError(f"{what} of the sparse projection {self.name!r} must have shape (n_synapses,) = "
                                 f"{self._weights.shape}, one value per synapse in synapse_index order; got "
                                 f"{arr.shape} (Projection.to_dense() gives the (post, pre) matrix)")
        elif arr.shape != self.shape:
            raise ValueError(f"{what} of projection {self.name!r} must have shape (post.size, pre.size) = "
                             f"{self.shape} ({self.post.name!r} x {self.pre.name!r}); got {arr.shape}")
        return arr

    def enforce_structure(self) -> None:
        """Zero the weights that the connectivity forbids (self-synapses, masked-out); nothing to do when sparse."""
        if self.sparse:
            return
        if self.lateral:
            np.fill_diagonal(self._weights, 0.0)
        if self._mask is not None:
            self._weights[~self._mask] = 0.0

    # -- structural change (staged by Network.apply, then swapped in) ----------------
    def add_array(self, name: str, init: float = 0.0) -> np.ndarray:
        """Declare an array with one value per synapse (shaped like ``weights``) that lives with the synapses.

        It gains entries filled with ``init`` when units are born or
        synapses linked, and loses them when units die or synapses are
        unlinked, exactly like the weights (e.g. the statistics
        ``B = sum x alpha^T`` of online dictionary learning, or the age of a
        growing neural gas's edges). Checkpoints save it. Declaring it again
        keeps its values.

        Parameters
        ----------
        name : str
            Array name (a Python identifier), the key in ``arrays``.
        init : float, optional
            Initial value, also of newborn synapses.

        Returns
        -------
        numpy.ndarray
            The array, ``arrays[name]``, shaped like ``weights``.
        """
        check_name("array", name)
        init = check_float("init", init)
        if name in self.arrays:
            return self.arrays[name]
        self._array_init[name] = init
        self.arrays[name] = np.full(self._weights.shape, init)
        return self.arrays[name]

    def _stage(self) -> list:
        """``[weights, mask or SynapseIndex, arrays]``: the live arrays, as staged edits start from them."""
        return [self._weights, self._index if self.sparse else self._mask, dict(self.arrays)]

    def _commit(self, staged: list):
        if self.sparse:
            self._weights, self._index = staged[0], staged[1]
        else:
            self._weights, self._mask = staged[0], staged[1]
        if len(staged) > 2:
            self.arrays = dict(staged[2])

    def _draw(self, rng, shape, pop) -> np.ndarray:
        block = np.asarray(self.initializer(rng, shape), dtype=np.float64)
        whose = f" for the newborn units of {pop.name!r}" if pop is not None else ""
        if block.shape != shape:
            raise ValueError(f"initializer {type(self.initializer).__name__} of projection {self.name!r} returned shape "
                             f"{block.shape}{whose}; expected {shape}")
        if not np.all(np.isfinite(block)):
            raise ValueError(f"initializer {type(self.initializer).__name__} of projection {self.name!r} drew NaN/Inf "
                             f"weights{whose}")
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
        ``linked=False``: the newborn units get no synapses (a structured
        projection). A projection with a ``connectivity`` gives newborn
        units the synapses the description draws for them
        (:meth:`~neurosim.connectivity.Connectivity.newborn`), then one weight
        per new synapse; one without gives them every synapse.
        """
        if self.lateral and given is not None:
            raise ValueError(f"Birth weights cannot be given for the lateral projection {self.name!r}")
        if self.connectivity is not None:
            return self._grown_by_connectivity(staged, pop, n, rng, given, linked)
        w, m = staged[0], staged[1]
        arrays = dict(staged[2]) if len(staged) > 2 else {}
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

    def _grown_by_connectivity(self, staged, pop, n, rng, given, linked) -> list:
        """:meth:`_grown` for a projection with a connectivity: only the drawn synapses, dense or sparse alike."""
        w, structure = staged[0], staged[1]
        arrays = dict(staged[2]) if len(staged) > 2 else {}
        old_post, old_pre = (structure.shape if self.sparse else w.shape)
        new_post = n if pop is self.post else 0
        new_pre = n if pop is self.pre else 0
        n_post, n_pre = old_post + new_post, old_pre + new_pre
        if linked:
            assert self.connectivity is not None
            post, pre = self.connectivity.newborn(rng, n_post, n_pre, new_post, new_pre, self.lateral)
        else:
            post, pre = np.zeros(0, np.int64), np.zeros(0, np.int64)
        if given is not None:
            shape = (n, old_pre) if pop is self.post else (old_post, n)
            block = self._checked_block(given, shape, pop)
            values = block[post - old_post, pre] if pop is self.post else block[post, pre - old_pre]
        else:
            values = self._draw(rng, (post.size,), pop)
        if self.sparse:
            index, old, new = structure.grown(n_post, n_pre, post, pre)
            if post.size == 0:
                # no synapse added (a Birth that leaves them unlinked): the values stay as they are, shared, since
                # staged sparse arrays are only ever replaced, never written
                return [w, index, arrays]
            grown_w = np.empty(index.size)
            grown_w[old], grown_w[new] = w, values
            grown_arrays = {}
            for k, a in arrays.items():
                grown = np.empty(index.size)
                grown[old], grown[new] = a, self._array_init[k]
                grown_arrays[k] = grown
            return [grown_w, index, grown_arrays]
        dense_w = np.zeros((n_post, n_pre))
        dense_w[:old_post, :old_pre] = w
        dense_w[post, pre] = values
        m = np.zeros((n_post, n_pre), dtype=bool)
        m[:old_post, :old_pre] = structure
        m[post, pre] = True
        grown_arrays = {}
        for k, a in arrays.items():
            g = np.full((n_post, n_pre), self._array_init[k])
            g[:old_post, :old_pre] = a
            grown_arrays[k] = g
        return [dense_w, m, grown_arrays]

    def _shrunk(self, staged: list, pop: Population, index: np.ndarray) -> list:
        w, m = staged[0], staged[1]
        arrays = dict(staged[2]) if len(staged) > 2 else {}
        if self.sparse:
            structure, keep = m.removed(index if pop is self.post else None, index if pop is self.pre else None)
            return [w[keep], structure, {k: a[keep] for k, a in arrays.items()}]
        axes = ([0] if pop is self.post else []) + ([1] if pop is self.pre else [])
        for axis in axes:
            w = np.delete(w, index, axis=axis)
            m = None if m is None else np.delete(m, index, axis=axis)
            arrays = {k: np.delete(a, index, axis=axis) for k, a in arrays.items()}
        return [np.ascontiguousarray(w), None if m is None else np.ascontiguousarray(m),
                {k: np.ascontiguousarray(a) for k, a in arrays.items()}]

    def _bytes(self, shape: tuple) -> int:
        """Bytes of the weights (and mask or index, and declared arrays) at ``shape``."""
        per_value = 8 * (1 + len(self.arrays))
        if not self.sparse:
            return shape[0] * shape[1] * (per_value + (1 if self._mask is not None else 0))
        assert self.connectivity is not None and self._index is not None  # a sparse projection holds both
        now = self._index.size
        post, pre = shape
        grown = max(0, self.connectivity.expected_synapses(post, pre, self.lateral)
                    - self.connectivity.expected_synapses(self._index.n_post, self._index.n_pre, self.lateral))
        n = now + grown
        return n * (per_value + index_dtype(n, post, pre).itemsize) + (post + 1) * 8

    def _restore(self, weights: np.ndarray, structure, arrays=None):
        """Put back arrays saved earlier from this projection (undoing a failed step); no checks."""
        self._weights = weights
        if self.sparse:
            self._index = structure
        else:
            self._mask = structure
        if arrays is not None:
            self.arrays = arrays

    def params(self) -> dict[str, Any]:
        """The projection's parameters: populations, sign, storage, connectivity, initializer and its rule's.

        Returns
        -------
        dict
            Plain values, as recorded Datasets and checkpoints carry them
            (the rule's as ``"rule.<name>"``).
        """
        out: dict[str, Any] = {"pre": self.pre.name, "post": self.post.name, "sign": self.sign}
        if self.sparse:
            out["storage"] = "sparse"
        if self.connectivity is not None:
            out.update(self.connectivity.params())
        out.update(self.initializer.params())
        if self.rule is not None:
            out.update({f"rule.{k}": v for k, v in self.rule.params().items()})
        return out

    def __repr__(self) -> str:
        rule = repr(self.rule) if self.rule is not None else None
        post, pre = self.shape
        lateral = ", lateral" if self.lateral else ""
        if self.sparse:
            return (f"Projection({self.name!r}, {self.pre.name} -> {self.post.name}, sign={self.sign:+d}, "
                    f"sparse {post}x{pre}, {self.n_synapses} synapses{lateral}, rule={rule})")
        mask = f", mask={int(self._mask.sum())} of {self._mask.size} synapses" if self._mask is not None else ""
        return (f"Projection({self.name!r}, {self.pre.name} -> {self.post.name}, sign={self.sign:+d}, "
                f"weights={post}x{pre}{lateral}{mask}, rule={rule})")


def csr_refs(p: Projection) -> tuple[ArrayRef, ArrayRef, ArrayRef]:
    """Kernel arguments ``(indptr, indices, weights)`` of a sparse projection, resolved when a segment starts.

    Parameters
    ----------
    p : neurosim.Projection
        A projection with ``sparse`` storage.

    Returns
    -------
    tuple of neurosim.codegen.ArrayRef
    """
    return (ArrayRef(lambda: p.synapse_index.indptr, f"{p.name}.indptr"),
            ArrayRef(lambda: p.synapse_index.indices, f"{p.name}.indices"),
            ArrayRef(lambda: p.weights, f"{p.name}.weights"))


def _is_scipy_sparse(value) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover -- scipy is a dependency
        return False
    return sp.issparse(value)


def _has_diagonal(matrix) -> bool:
    import scipy.sparse as sp

    coo = sp.coo_array(matrix)
    return bool(np.any(coo.row == coo.col))


def _checked_sparse_init(name: str, matrix, shape: tuple[int, int]):
    import scipy.sparse as sp

    csr = sp.csr_array(matrix, dtype=np.float64)
    if csr.shape != shape:
        raise ValueError(f"init of projection {name!r} must have shape (post.size, pre.size) = {shape}; got {csr.shape}")
    if not np.all(np.isfinite(csr.data)):
        raise ValueError(f"init of projection {name!r} must be finite")
    return csr


def _values_at(csr, post: np.ndarray, pre: np.ndarray) -> np.ndarray:
    """The values of a CSR matrix at ``(post, pre)`` (0 where none is stored; duplicates summed)."""
    c = csr.copy()
    c.sum_duplicates()
    return np.ascontiguousarray(np.asarray(c[post, pre]).ravel(), dtype=np.float64)
