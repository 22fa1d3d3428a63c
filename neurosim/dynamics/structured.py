"""Structured sparse codes with missing observations as population dynamics (paper 003, supplement Table 2).

The code population's activity is OSDL's representation of its input under
the dictionary held by its one feed-forward projection (atoms as rows of
``W``), using only the coordinates its *mask population* marks observed::

    alpha = argmin_alpha 0.5 ||x_O - D_O alpha||^2 + kappa Omega(alpha),
    Omega(alpha) = ||(||d^G o alpha||_2)_{G in groups}||_eta

computed by Table 2's alternating (eta-trick) iterations, ``T_alpha =
n_iter`` of them at most (see :func:`neurosim.coding.structured_sparse_code`),
or, where its proximal operator is exact (``eta = 1``, disjoint or nested
groups), by FISTA (``solver``, default ``"auto"``).
The group structure (:class:`~neurosim.groups.GroupStructure`) is fixed: a
structural event that changes the code population's size is refused before
the next step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.dynamics.base import Dynamics
from neurosim.groups import GroupStructure, as_groups
from neurosim.params import Bool, Choice, Float, Int

if TYPE_CHECKING:
    from collections.abc import Mapping

    import networkx as nx

    from neurosim.network import Network
    from neurosim.population import Population
    from neurosim.synapses import Projection

__all__ = ["StructuredSparseCode"]


class StructuredSparseCode(Dynamics):
    """A code population's activity by OSDL's structured representation step (Table 2), on observed coordinates.

    Parameters
    ----------
    groups : GroupStructure, list of index sets, networkx graph or None
        The group family over the code units (``None``: singletons, the lasso).
    kappa : float >= 0, default=0.1
        Weight of ``Omega``; may follow a schedule.
    eta : float in (0, 1], default=1.0
        ``Omega``'s exponent (1: convex; below 1 a stationary point is found).
    eps : float > 0, default=1e-08
        Table 2's smoothing: ``z^G >= eps``.
    n_iter : int >= 1, default=50
        ``T_alpha``.
    tol : float >= 0, default=1e-06
        Early stop when the code changes by at most ``tol`` (max norm,
        relative to ``max(s, max|alpha|)``, ``s`` the sample's code scale:
        :func:`~neurosim.coding.structured.structured_sparse_code`); 0:
        exactly ``n_iter`` iterations (the paper).
    warm_start : bool, default=False
        Start from the previous step's code (default: Table 2's start).
    observed : Population, optional
        The mask population (the size of the input): nonzero = observed.
        ``None``: every coordinate is observed.
    solver : {"auto", "fista", "table2"}, default="auto"
        ``"table2"``: the paper's iterations (any groups, any ``eta``).
        ``"fista"``: accelerated proximal gradient with the exact proximal
        operator, the same cost (``eta = 1``, disjoint or nested groups with
        one weight per group). ``"auto"``: FISTA where it is exact, Table 2
        otherwise (see :func:`neurosim.coding.structured.resolve_solver`); a
        scheduled ``kappa`` of 0 always takes Table 2's direct solve.
    fista_iter : int >= 1, default=1000
        The most FISTA iterations per sample (``n_iter`` is Table 2's).

    Notes
    -----
    A sample with no observed coordinate gets the code 0. ``info[0]`` holds
    the most iterations a sample used in the last step; ``info[1]`` counts
    samples that hit ``n_iter`` before ``tol`` (the engine warns at the end
    of a run).
    """

    unconverged_warning = NonConvergenceWarning

    kappa = Float(0.1, low=0.0, doc="weight of the structured penalty Omega; may follow a schedule")
    eta = Float(1.0, low=0.0, high=1.0, low_open=True, schedulable=False, doc="exponent eta of Omega")
    eps = Float(1e-8, low=0.0, low_open=True, schedulable=False, doc="smoothing: z^G >= eps")
    n_iter = Int(50, low=1, doc="T_alpha: iterations of Table 2")
    tol = Float(1e-6, low=0.0, schedulable=False, doc="relative code change that stops early (0: never)")
    warm_start = Bool(False, doc="start from the previous step's code")
    solver = Choice("auto", options=("auto", "fista", "table2"), live=False,
                    doc="auto: FISTA with the exact prox where exact (eta = 1, disjoint/tree groups), else Table 2")
    fista_iter = Int(1000, low=1, doc="the most FISTA iterations per sample")

    def __init__(self, groups: GroupStructure | list | nx.Graph | None = None, *, kappa: float = 0.1,
                 eta: float = 1.0, eps: float = 1e-8, n_iter: int = 50, tol: float = 1e-6, warm_start: bool = False,
                 observed: Population | None = None, solver: str = "auto", fista_iter: int = 1000) -> None:
        from neurosim.population import Population

        super().__init__()
        if groups is not None and not isinstance(groups, GroupStructure):
            import networkx as nx

            if not isinstance(groups, (list, tuple, nx.Graph)):
                raise TypeError(f"groups must be a GroupStructure, a list of index sets, a networkx graph or None; "
                                f"got {type(groups).__name__}")
        if observed is not None and not isinstance(observed, Population):
            raise TypeError(f"observed must be a Population (the mask population) or None; got {type(observed).__name__}")
        self._groups_given = groups
        self.groups: GroupStructure | None = groups if isinstance(groups, GroupStructure) else None
        self.observed = observed
        self.set_params(kappa=kappa, eta=eta, eps=eps, n_iter=n_iter, tol=tol, warm_start=warm_start, solver=solver,
                        fista_iter=fista_iter)
        self.info = np.zeros(2, dtype=np.int64)

    # -- structure ------------------------------------------------------------------
    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        self.check_one_dictionary(feedforward, lateral)
        super().connect(feedforward, lateral)
        if self.observed is not None and self.observed.size != self.dictionary.pre.size:
            raise ValueError(f"observed must have the size of {self.dictionary.pre.name!r} "
                             f"({self.dictionary.pre.size}); the mask population {self.observed.name!r} has "
                             f"{self.observed.size}")
        self.check_structure()

    def check_structure(self, sizes: Mapping[str, int] | None = None) -> None:
        """Raise ``ValueError`` unless the groups cover exactly the code population's units (also before every step).

        ``groups=None`` follows the population's size (singletons); a given
        family is fixed, so a Birth or Death that changes the size is refused
        by :meth:`neurosim.Network.apply`, which passes the sizes its events
        would leave as ``sizes`` (then nothing is resolved or changed here).

        Parameters
        ----------
        sizes : mapping of str to int, optional
            Staged population sizes (:meth:`neurosim.component.Component.check_structure`);
            default the current ones, for which a family that follows the
            size (``groups=None``) is resolved.
        """
        if self.population is None:
            return  # not in a network yet
        size = self.size_of(self.population, sizes)
        if self.groups is not None and self.groups.n_units == size:
            return
        if isinstance(self._groups_given, GroupStructure):
            raise ValueError(f"groups must cover the {size} units of {self.population.name!r}; the structure has "
                             f"n_units = {self._groups_given.n_units}")
        if sizes is None:
            self.groups = as_groups(self._groups_given, size)

    def validate(self, network: Network) -> None:
        self.check_structure()
        self.resolved_solver()  # solver="fista" where its prox is not exact is refused before the run
        if self.observed is not None and network.populations.get(self.observed.name) is not self.observed:
            raise ValueError(f"StructuredSparseCode: the mask population {self.observed.name!r} is not in network "
                             f"{network.name!r}")

    def populations(self) -> list[Population]:
        pops = super().populations()
        return pops + ([self.observed] if self.observed is not None else [])

    def params(self) -> dict[str, Any]:
        out = super().params()
        if self.groups is None and self.population is not None:
            self.check_structure()  # resolve the family, so parameters read the same before and after a run
        if self.groups is not None:
            out.update(self.groups.params())
        return out

    @property
    def dictionary(self) -> Projection:
        """The one feed-forward projection, whose weights' rows are the atoms."""
        return self.feedforward[0]

    @property
    def failure_label(self) -> str:
        """What a step whose code overflows reports (``SimulationDiverged.variable``)."""
        return (f"{self.population.name}.activity (structured code overflowed: dictionary "
                f"{self.dictionary.name!r} or its input too large)")

    def _unconverged_text(self, n):
        return (f"StructuredSparseCode of {self.population.name!r}: {n} sample(s) used all n_iter={self.n_iter} "
                f"iterations before the code changed by less than tol={self.tol:g} during this run")

    def _mask(self) -> np.ndarray:
        if self.observed is not None:
            return self.observed.activity
        ones = self.buffer("all_observed", self.dictionary.pre.activity.shape)
        ones.fill(1.0)
        return ones

    # -- NumPy reference ----------------------------------------------------------------
    def encode(self, X: ArrayLike, W: ArrayLike, observed: ArrayLike | None = None,
               previous: ArrayLike | None = None, t: int | None = None) -> np.ndarray:
        """Codes of the rows of ``X`` under ``W`` (atoms as rows) with these parameters; ``kappa`` at step ``t``.

        Parameters
        ----------
        X : numpy.ndarray, shape (n_samples, n_features)
            Samples, one per row (entries not observed are ignored).
        W : numpy.ndarray, shape (n_atoms, n_features)
            Dictionary, atoms as rows.
        observed : numpy.ndarray, shape (n_samples, n_features), optional
            1 where an entry is observed, 0 where missing; default all observed.
        previous : numpy.ndarray, shape (n_samples, n_atoms), optional
            Warm start of the iterations.
        t : int, optional
            The step at which a scheduled ``kappa`` is read; default the
            network's ``t`` (0 outside a network).

        Returns
        -------
        numpy.ndarray, shape (n_samples, n_atoms)
            The structured codes (Table 2 of paper 003, or FISTA where exact).
        """
        from neurosim.coding.structured import structured_sparse_code

        self.check_structure()
        t = self.population.network.t if t is None and self.population.network is not None else (t or 0)
        return structured_sparse_code(X, W, self.groups, self.value("kappa", t), eta=self.eta, observed=observed,
                                      eps=self.eps, n_iter=self.n_iter, tol=self.tol, init=previous,
                                      solver=self.solver, fista_iter=self.fista_iter)

    def resolved_solver(self) -> str:
        """What ``solver`` runs on these groups and ``eta``.

        Returns
        -------
        str
            ``"fista"`` or ``"table2"``.

        Raises
        ------
        ValueError
            If ``solver="fista"`` where its proximal operator is not exact.
        """
        from neurosim.coding.structured import resolve_solver
        from neurosim.kernels.structured_fista import SOLVER_FISTA

        return "fista" if resolve_solver(self.solver, self._checked_groups(), self.eta) == SOLVER_FISTA else "table2"

    def _solver_args(self):
        """``(order, solver)`` for :func:`~neurosim.kernels.structured_fista.structured_encode`."""
        from neurosim.kernels.structured_fista import NO_ORDER, SOLVER_FISTA, SOLVER_TABLE2

        if self.resolved_solver() == "fista":
            return self.groups.prox_order(), SOLVER_FISTA
        return NO_ORDER, SOLVER_TABLE2

    def step_numpy(self) -> str | None:
        from neurosim.kernels.structured_fista import structured_encode

        self.check_structure()
        pop, proj = self.population, self.dictionary
        order, solver = self._solver_args()
        iwork, work = self._workspace()
        codes = pop.activity.copy() if self.warm_start else np.zeros_like(pop.activity)
        g = self._checked_groups()
        t = pop.network.t if pop.network is not None else None
        ok = structured_encode(proj.weights, proj.pre.activity, self._mask(), g.indptr, g.indices, g.weights, order,
                               float(self.value("kappa", t)), self.eta, self.eps, self.n_iter,
                               self.fista_iter, self.tol, self.warm_start, codes, self.info, iwork, work, 0, solver)
        if not ok:
            return self.failure_label
        pop.activity[:] = codes
        return None

    def _work_lengths(self) -> tuple[int, int]:
        from neurosim.kernels.structured import PATH_AUTO
        from neurosim.kernels.structured_fista import encode_workspace_sizes

        # the kernel runs PATH_AUTO, whose Cholesky factor is min(k, |O|) square at kappa > 0 and k square at
        # kappa = 0 (a scheduled kappa may reach 0): the kappa = 0 size bounds every step, for either solver
        k_, m = self.population.size, self.dictionary.pre.size
        return encode_workspace_sizes(k_, m, self._checked_groups().n_groups, 0.0, PATH_AUTO)

    def _workspace(self):
        ni, nw = self._work_lengths()
        return self.buffer("iwork", (ni,), np.int64), self.buffer("work", (nw,))

    # -- compiled ------------------------------------------------------------------------
    def kernel_calls(self) -> list[KernelCall] | None:
        from neurosim.kernels.structured_fista import structured_encode

        pop, proj = self.population, self.dictionary
        act = ArrayRef(lambda: pop.activity, f"{pop.name}.activity")
        X = ArrayRef(lambda: proj.pre.activity, f"{proj.pre.name}.activity")
        M = ArrayRef(self._mask, f"{self.observed.name}.activity" if self.observed is not None
                     else f"{pop.name}.all_observed")
        W = ArrayRef(lambda: proj.weights, f"{proj.name}.weights")
        g = self._checked_groups
        groups = (ArrayRef(lambda: g().indptr, f"{pop.name}.groups_indptr"),
                  ArrayRef(lambda: g().indices, f"{pop.name}.groups_indices"),
                  ArrayRef(lambda: g().weights, f"{pop.name}.groups_weights"))
        work = (ArrayRef(lambda: self._workspace()[0], f"{pop.name}.iwork"),
                ArrayRef(lambda: self._workspace()[1], f"{pop.name}.work"))
        order = ArrayRef(lambda: self._solver_args()[0], f"{pop.name}.groups_prox_order")
        solver = self._solver_args()[1]
        return [KernelCall(structured_encode, (W, X, M) + groups + (order,
            self.ref("kappa"), self.eta, self.eps, self.n_iter, self.fista_iter, self.tol, self.warm_start, act,
            ArrayRef(lambda: self.info, f"{pop.name}.encoder_info")) + work + (0, solver), finite=self.failure_label)]

    def _checked_groups(self) -> GroupStructure:
        self.check_structure()
        assert self.groups is not None  # check_structure resolved it
        return self.groups
