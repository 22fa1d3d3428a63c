"""Online group-structured dictionary learning with missing observations (paper 003: Szabó, Póczos & Lőrincz).

One circuit runs OSDL (supplement, Tables 1-3) with every option the paper
has: masks, forgetting, structured codes.

Entities (all public neurosim components):

* ``x``: input population, one mini-batch of ``R`` samples per step
  (``Network(batch=R)``), fed by the data stream;
* ``observed``: the *mask population* (only with a mask stream), the same
  size as ``x``, fed by a mask stream (:class:`~neurosim.streams.BernoulliMaskStream`
  or replayed masks): nonzero entries mark the observed coordinates
  ``O_{t,r}``; the paper's ``Delta_{t,r} = diag(observed)``;
* ``code``: the hidden units, dynamics
  :class:`~neurosim.dynamics.StructuredSparseCode` -- Table 2's
  representation on the observed coordinates, with the group structure
  ``G`` (:class:`~neurosim.groups.GroupStructure`: none, disjoint groups,
  torus neighbourhoods, a tree), ``kappa``, ``eta``, ``eps``, ``T_alpha``;
* ``D``: the dictionary, projection ``x -> code``, atoms as rows of its
  weights;
* :class:`~neurosim.rules.osdl.OSDLStatistics` (plasticity order -10):
  ``C_j``, ``B``, ``e_j`` (or the exact per-coordinate code statistics)
  with forgetting ``gamma_t = (1 - 1/t)^rho``;
* :class:`~neurosim.rules.osdl.OSDLDictionary`, ``D``'s rule: Table 3
  (``T_D`` sweeps of column updates, projection onto the unit ball or its
  non-negative part) and part 2 of Eq. 25.

``net.schedule()`` shows the order. With full masks, no groups, ``rho = 0``
and ``e_form="exact"`` the circuit is Mairal et al.'s online dictionary
learning, the ODL of paper 000 (tested as such).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

import neurosim as ns
from neurosim._validation import check_choice, check_float, check_int
from neurosim.groups import GroupStructure, as_groups
from neurosim.models.circuit import Circuit
from neurosim.rules.osdl import CONSTRAINTS, E_FORMS, OSDLDictionary, OSDLStatistics
from neurosim.schedules import Schedule
from neurosim.synapses import Initializer

__all__ = ["OSDLCircuit", "build_network", "DataElements"]


class DataElements(Initializer):
    """Initial atoms from given rows (e.g. random training samples), scaled into the unit ball.

    Rows of norm above 1 are scaled to norm 1 (the constraint set of Table 3);
    an all-zero row is replaced by the constant unit vector. Atoms born later
    (a :class:`~neurosim.Birth`) are random unit vectors.

    Parameters
    ----------
    rows : array_like, shape (n_atoms, n_features)
        The initial atoms.

    Raises
    ------
    ValueError
        If ``rows`` is not a finite 2-D array.
    """

    def __init__(self, rows):
        try:
            rows = np.asarray(rows, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"init must be a 2-D array of numbers (n_atoms, n_features); got {type(rows).__name__}") \
                from None
        if rows.ndim != 2 or not np.isfinite(rows).all():
            raise ValueError("init rows must be a finite 2-D array (n_atoms, n_features)")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        self.rows = np.where(norms > 0, rows / np.maximum(norms, 1.0), 1.0 / np.sqrt(rows.shape[1]))

    def __call__(self, rng, shape):
        if shape == self.rows.shape:
            return self.rows.copy()
        if shape[1] != self.rows.shape[1]:
            raise ValueError(f"init rows have shape {self.rows.shape}; the dictionary needs {shape}")
        return RandomUnitAtoms()(rng, shape)  # newborn atoms (a Birth): random, as the given rows are used up

    def params(self):
        return {"init": "DataElements"}


@dataclass
class OSDLCircuit(Circuit):
    """The built network and handles to its parts.

    Parameters
    ----------
    network : neurosim.Network
        The circuit.
    x : neurosim.Population
        Input units (one mini-batch per step).
    observed : neurosim.Population or None
        The mask population (nonzero = observed); ``None`` without masks.
    code : neurosim.Population
        The code units (structured representation, Table 2).
    dictionary : neurosim.Projection
        ``x -> code``, atoms as rows.
    statistics : neurosim.rules.osdl.OSDLStatistics
        The unit rule keeping the statistics of Eqs. 19-25.
    """

    network: ns.Network
    x: ns.Population
    observed: ns.Population | None
    code: ns.Population
    dictionary: ns.Projection
    statistics: OSDLStatistics

    @property
    def groups(self) -> GroupStructure:
        """The code population's group family (singletons for an encoder without one)."""
        g = getattr(self.code.dynamics, "groups", None)
        return g if g is not None else as_groups(None, self.code.size)

    @property
    def D(self) -> np.ndarray:
        """The dictionary in the paper's layout, ``(n_features, n_atoms)`` (columns are elements)."""
        return self.dictionary.weights.T

    @property
    def W(self) -> np.ndarray:
        """The dictionary as stored, atoms as rows ``(n_atoms, n_features)``."""
        return self.dictionary.weights

    def encode(self, X: ArrayLike, observed: ArrayLike | None = None) -> np.ndarray:
        """Codes of the rows of ``X`` (observed where ``observed`` is nonzero) by the code population's encoder.

        Table 2 with the current dictionary and the circuit's parameters (or
        the encoder given to :func:`build_network`, which reads every
        coordinate: ``observed`` must then be None); the network is not stepped.

        Parameters
        ----------
        X : array_like, shape (n_samples, n_features)
            Samples.
        observed : array_like of X's shape, optional
            Nonzero where an entry is observed; default all.

        Returns
        -------
        numpy.ndarray, shape (n_samples, n_atoms)
            The codes.

        Raises
        ------
        ValueError
            If ``observed`` is given to an encoder that reads every
            coordinate, or the encoding overflows.
        """
        dyn, W = self.code.dynamics, self.dictionary.weights
        if isinstance(dyn, ns.StructuredSparseCode):
            return dyn.encode(X, W, observed)
        if observed is not None:
            raise ValueError(f"observed must be None: the code population's {type(dyn).__name__} reads every "
                             "coordinate (only StructuredSparseCode codes on observed ones)")
        codes = dyn.encode_numpy(np.atleast_2d(np.asarray(X, dtype=np.float64)), W)
        if isinstance(codes, str):
            raise ValueError(f"encoding failed: {codes}")
        return codes

    def reconstruct(self, X: ArrayLike, observed: ArrayLike | None = None) -> np.ndarray:
        """``D alpha`` for every row of ``X``: the observed coordinates fitted, the missing ones filled in.

        Parameters
        ----------
        X, observed : array_like
            As :meth:`encode`: the samples, and where their entries are observed (default all).

        Returns
        -------
        numpy.ndarray, shape (n_samples, n_features)
            The reconstructions.
        """
        return self.encode(X, observed) @ self.dictionary.weights


def build_network(stream: ns.Stream, n_components: int, *, groups=None, kappa: float = 0.1, eta: float = 1.0,
                  masks: ns.Stream | None = None, batch: int = 32, rho: float = 0.0, e_form: str = "online",
                  constraint: str = "l2", n_sweeps: int = 1, code_iter: int = 50, code_tol: float = 1e-6,
                  eps: float = 1e-8, encoder: ns.Dynamics | None = None, init=None, seed: int = 0,
                  record_every: int = 0, solver: str = "auto") -> OSDLCircuit:
    """Build the OSDL circuit (supplement Table 1).

    Parameters
    ----------
    stream : Stream
        The data ``x_{t,r}``: one mini-batch of ``batch`` samples per step.
    n_components : int >= 1
        ``d_alpha``, the number of dictionary elements.
    groups : GroupStructure, list of index sets, networkx graph or None
        The group structure ``G`` over the ``n_components`` code units
        (``None``: singletons, i.e. the lasso).
    kappa : float >= 0
        Trade-off of the structured penalty (may be a schedule).
    eta : float in (0, 1]
        ``Omega``'s ``eta`` (1: the convex sum of group norms).
    masks : Stream, optional
        Observation masks (nonzero = observed), the same dimension as
        ``stream``; ``None``: everything observed (no mask population).
        The data's values at missing entries are never used and may be NaN
        (:class:`~neurosim.ObservedStream`).
    batch : int >= 1
        ``R``.
    rho : float >= 0
        Forgetting exponent.
    e_form : {"online", "exact"}
        ``e_j`` as the paper's online approximation (Eq. 25) or exactly
        (Eq. 21 with the current dictionary; per-coordinate code statistics
        when there are masks: ``n_features * n_components^2`` numbers).
    constraint : {"l2", "nonneg_l2"}
        Constraint set of the atoms.
    n_sweeps : int >= 1
        ``T_D``.
    code_iter, code_tol, eps
        ``T_alpha``, an early stop on the code's change (0: exactly
        ``T_alpha`` iterations), and the smoothing ``epsilon`` of Table 2.
    encoder : Dynamics, optional
        Another encoder for the code population (e.g.
        ``SparseCode("feature_sign", lam=kappa)``, the exact lasso); only
        without masks, since only Table 2's encoder reads them.
    init : array (n_components, n_features), optional
        Initial atoms (scaled into the unit ball); default: random Gaussian
        atoms of unit norm drawn from ``network.rng``.
    seed : int
        Seed of the network's generator (initial and newborn atoms).
    record_every : int >= 0
        Record the code's activity every ``record_every`` steps (0: not at all).
    solver : {"auto", "fista", "table2"}
        The code's solver (:class:`~neurosim.StructuredSparseCode`): ``"auto"``
        runs FISTA with the exact prox where it is exact (``eta = 1``, disjoint
        groups, singletons or a tree), Table 2 otherwise; ``"table2"`` always
        runs the paper's iterations (``code_iter`` is Table 2's ``T_alpha``).

    Returns
    -------
    OSDLCircuit
        The network and handles to its parts.
    """
    if not isinstance(stream, ns.Stream):
        raise TypeError(f"stream must be a neurosim Stream; got {type(stream).__name__}")
    n_components = check_int("n_components", n_components, low=1)
    # checked now (errors name the argument); None stays None so that the encoder's singletons follow the size
    as_groups(groups, n_components)
    if not isinstance(kappa, Schedule):
        kappa = check_float("kappa", kappa, low=0.0)
    eta = check_float("eta", eta, low=0.0, high=1.0, low_open=True)
    if masks is not None:
        if not isinstance(masks, ns.Stream):
            raise TypeError(f"masks must be a neurosim Stream of 0/1 masks or None; got {type(masks).__name__}")
        if masks.dim != stream.dim:
            raise ValueError(f"masks must have the dimension of the data ({stream.dim}); got {masks.dim}")
    batch = check_int("batch", batch, low=1)
    rho = check_float("rho", rho, low=0.0)
    e_form = check_choice("e_form", e_form, E_FORMS)
    constraint = check_choice("constraint", constraint, CONSTRAINTS)
    n_sweeps = check_int("n_sweeps", n_sweeps, low=1)
    code_iter = check_int("code_iter", code_iter, low=1)
    code_tol = check_float("code_tol", code_tol, low=0.0)
    eps = check_float("eps", eps, low=0.0, low_open=True)
    record_every = check_int("record_every", record_every, low=0)
    if encoder is not None:
        if not isinstance(encoder, ns.Dynamics):
            raise TypeError(f"encoder must be a neurosim Dynamics or None; got {type(encoder).__name__}")
        if masks is not None:
            raise ValueError("encoder must be None when masks are given (only Table 2's StructuredSparseCode "
                             "reads the mask population)")
    initializer = RandomUnitAtoms() if init is None else DataElements(init)
    if init is not None and initializer.rows.shape != (n_components, stream.dim):
        raise ValueError(f"init must have shape (n_components, n_features) = ({n_components}, {stream.dim}); "
                         f"got {initializer.rows.shape}")

    net = ns.Network(seed=seed, batch=batch, name="osdl")
    x = ns.Population("x", stream.dim)
    net.add(x)
    # values at missing entries are never read (they may be NaN): x sees them as 0
    net.connect(stream if masks is None else ns.ObservedStream(stream, masks), x)
    observed = None
    if masks is not None:
        observed = ns.Population("observed", stream.dim)
        net.add(observed)
        net.connect(masks, observed)
    if encoder is None:
        encoder = ns.StructuredSparseCode(groups, kappa=kappa, eta=eta, eps=eps, n_iter=code_iter, tol=code_tol,
                                          observed=observed, solver=solver)
    code = ns.Population("code", n_components, dynamics=encoder)
    net.add(code)
    rule = OSDLDictionary(n_sweeps=n_sweeps, constraint=constraint)
    D = ns.Projection("D", x, code, init=initializer, rule=rule)
    net.add(D)
    statistics = OSDLStatistics(D, observed=observed, rho=rho, e_form=e_form)
    net.add(statistics)
    if record_every:
        net.record(code, "activity", every=record_every)
    return OSDLCircuit(net, x, observed, code, D, statistics)


class RandomUnitAtoms(Initializer):
    """Gaussian atoms scaled to unit norm (inside Table 3's constraint set from the start)."""

    def __call__(self, rng, shape):
        w = rng.standard_normal(shape)
        return w / np.linalg.norm(w, axis=1, keepdims=True)

    def params(self):
        return {"init": "RandomUnitAtoms"}
