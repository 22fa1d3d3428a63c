"""Online group-structured dictionary learning as plasticity (paper 003: Szabó, Póczos & Lőrincz, supplement).

The dictionary is a projection ``x -> code`` whose weights hold the atoms as
rows (``W = D^T``); the code population's dynamics is the structured
representation of Table 2 (:class:`~neurosim.dynamics.StructuredSparseCode`),
or any encoder. Missing observations arrive as a *mask population*
``observed`` (same size as ``x``, fed by a mask stream; nonzero = observed):
every statistic uses only the observed coordinates of each sample. Two
components learn the dictionary, as in paper 000's circuit:

* :class:`OSDLStatistics` (a unit rule of the code population, plasticity
  order -10): the statistics ``C`` (diagonals of ``C_j``, Eq. 19/23), ``B``
  (Eq. 20/24) and ``E`` (the online ``e_j`` of Eq. 25), arrays of the
  dictionary projection shaped like its weights, with the forgetting factor
  ``gamma_t = (1 - 1/t)^rho`` of Lemma 1; in the *exact* form per-coordinate
  code statistics ``A[f]`` (Eq. 29 per coordinate) replace ``E``.
* :class:`OSDLDictionary` (the projection's rule, order 0): Table 3's
  column-wise update with the projection onto the constraint set, then part 2
  of Eq. 25.

The mini-batch form of Table 1 is written out in :mod:`neurosim.kernels.osdl`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Workspace
from neurosim.kernels import osdl as k
from neurosim.kernels.parallel import use_rule_rows
from neurosim.params import Choice, Float, Int
from neurosim.rules.base import Rule, UnitRule

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neurosim.network import Network
    from neurosim.population import Population

__all__ = ["OSDLStatistics", "OSDLDictionary", "E_FORMS", "CONSTRAINTS"]

#: how ``e_j`` is kept: the paper's online approximation (Eq. 25) or Eq. 21 with the current dictionary
E_FORMS = ("online", "exact")
#: constraint sets of the dictionary's columns: unit l2 ball, or its non-negative part
CONSTRAINTS = ("l2", "nonneg_l2")


def _mask_or_ones(observed, like, work: Workspace) -> np.ndarray:
    if observed is not None:
        return observed.activity
    ones = work("ones", like.shape)
    ones.fill(1.0)
    return ones


class OSDLStatistics(UnitRule):
    """Sufficient statistics of OSDL with masks and forgetting (supplement Eqs. 19-25, 29; Lemma 1).

    Per mini-batch ``t`` (``R`` samples ``x_r`` with masks ``Delta_r`` and
    codes ``alpha_r``), with ``gamma_t = (1 - 1/t)^rho``::

        C_j <- gamma_t C_j + (1/R) sum_r Delta_r alpha_rj^2          (23)
        B   <- gamma_t B   + (1/R) sum_r Delta_r x_r alpha_r^T        (24)
        e_j <- gamma_t e_j   (part 2 is added by OSDLDictionary)       (25)

    By Lemma 1 each statistic equals ``sum_i (i/t)^rho N_i`` (for ``rho >
    0``, whatever it started from; for ``rho = 0`` the plain sum). With
    ``e_form="exact"`` the code statistics ``A[f] <- gamma_t A[f] + (1/R)
    sum_r Delta_r[f] alpha_r alpha_r^T`` are kept per coordinate (one ``A``
    when there is no mask population: Eq. 29), so that ``e_j`` of Eq. 21 can
    be formed with the *current* dictionary (memory ``n_features k^2``).

    Parameters
    ----------
    dictionary : Projection
        ``x -> code``; ``C``, ``B``, ``E`` live on it (``dictionary.arrays``).
    observed : Population, optional
        The mask population (same size as ``dictionary.pre``): nonzero
        entries are observed. ``None``: every coordinate is observed.
    rho : float >= 0, default=0.0
        Forgetting exponent; 0 keeps plain sums.
    e_form : {"online", "exact"}, default="online"
    """

    rho = Float(0.0, low=0.0, schedulable=False, doc="forgetting exponent rho of gamma_t = (1 - 1/t)^rho")
    e_form = Choice("online", options=E_FORMS, live=False, doc="online e_j (Eq. 25) or exact (Eq. 21, current D)")

    def __init__(self, dictionary, observed=None, rho: float = 0.0, e_form: str = "online"):
        from neurosim.population import Population
        from neurosim.synapses import Projection

        if not isinstance(dictionary, Projection):
            raise TypeError(f"dictionary must be a Projection; got {type(dictionary).__name__}")
        if observed is not None:
            if not isinstance(observed, Population):
                raise TypeError(f"observed must be a Population (the mask population) or None; "
                                f"got {type(observed).__name__}")
            if observed.size != dictionary.pre.size:
                raise ValueError(f"observed must have the size of {dictionary.pre.name!r} ({dictionary.pre.size}); "
                                 f"got {observed.size}")
        super().__init__(dictionary.post)
        self.dictionary = dictionary
        self.observed = observed
        self.set_params(rho=rho, e_form=e_form)
        self.count = np.zeros(1, dtype=np.int64)  # mini-batches folded in: the t of gamma_t
        self._A = np.zeros((0, 0, 0))
        self._work = Workspace()

    # -- structure ------------------------------------------------------------------
    def attach(self, network: Network) -> None:
        for name in ("C", "B", "E"):
            self.dictionary.add_array(name, 0.0)

    def writes(self) -> set[tuple[str, str]]:
        return set()

    def populations(self) -> list[Population]:
        pops = [self.population, self.dictionary.pre]
        return pops + ([self.observed] if self.observed is not None else [])

    def validate(self, network: Network) -> None:
        if network.projections.get(self.dictionary.name) is not self.dictionary:
            raise ValueError(f"OSDLStatistics: projection {self.dictionary.name!r} is not in network {network.name!r}")
        if self.observed is not None and network.populations.get(self.observed.name) is not self.observed:
            raise ValueError(f"OSDLStatistics: the mask population {self.observed.name!r} is not in network "
                             f"{network.name!r}")

    def check_structure(self, sizes: Mapping[str, int] | None = None) -> None:
        """Raise ``ValueError`` if the exact form's code statistics no longer fit the number of atoms.

        Parameters
        ----------
        sizes : mapping of str to int, optional
            Staged population sizes (:meth:`neurosim.component.Component.check_structure`);
            default the current ones.
        """
        k_ = self.size_of(self.dictionary.post, sizes)
        if self.e_form == "exact" and self._A.size and self.count[0] and self._A.shape[1] != k_:
            raise ValueError(f"OSDLStatistics (e_form='exact') keeps its code statistics A for "
                             f"{self._A.shape[1]} atoms; the dictionary has {k_}: units born or killed "
                             "after learning started need e_form='online'")

    @property
    def A(self) -> np.ndarray:
        """Exact form: per-coordinate code statistics ``(F, k, k)`` (``F = 1`` without masks); empty otherwise."""
        k_, m = self.dictionary.weights.shape
        F = 1 if self.observed is None else m
        shape = (F, k_, k_) if self.e_form == "exact" else (0, 0, 0)
        if self._A.shape != shape:
            self.check_structure()
            self._A = np.zeros(shape)
        return self._A

    def state(self) -> dict[str, np.ndarray]:
        return {"count": self.count, "A": self.A}

    def gamma(self) -> float:
        """The forgetting factor of the mini-batch about to be folded in.

        Returns
        -------
        float
            ``gamma_t = (1 - 1/t)^rho`` for the next ``t``.
        """
        return float(k.forgetting_factor(float(self.count[0] + 1), self.rho))

    def mask(self) -> np.ndarray:
        """The observation masks of the current mini-batch.

        Returns
        -------
        numpy.ndarray, shape (batch, n_features)
            The mask population's activity (nonzero = observed), or ones.
        """
        return _mask_or_ones(self.observed, self.dictionary.pre.activity, self._work)

    def mask_ref(self) -> ArrayRef:
        """The masks as the kernels see them: the mask population's activity, or ones.

        Returns
        -------
        neurosim.codegen.ArrayRef
            Resolves to :meth:`mask`.
        """
        name = (f"{self.observed.name}.activity" if self.observed is not None
                else f"{self.population.name}.osdl_all_observed")
        return ArrayRef(self.mask, name)

    # -- one step ---------------------------------------------------------------------
    def update_numpy(self) -> None:
        p = self.dictionary
        X, M, a = p.pre.activity, self.mask(), self.population.activity
        obs = (M != 0.0).astype(np.float64)
        R = a.shape[0]
        g = self.gamma()
        C, B, E = p.arrays["C"], p.arrays["B"], p.arrays["E"]
        C *= g
        C += (a * a).T @ obs / R
        B *= g
        B += a.T @ (obs * X) / R
        if self.e_form == "exact":
            A = self.A
            A *= g
            if A.shape[0] == 1:
                A[0] += a.T @ a / R
            else:
                A += np.einsum("rf,rj,ri->fji", obs, a, a) / R
        else:
            E *= g
        self.count[0] += 1

    def kernel_call(self) -> KernelCall | None:
        p, pop = self.dictionary, self.population
        arr = lambda name: ArrayRef(lambda: p.arrays[name], f"{p.name}.{name}")  # noqa: E731
        return KernelCall(k.osdl_statistics_step, (
            arr("C"), arr("B"), arr("E"), ArrayRef(lambda: self.A, f"{pop.name}.osdl_A"),
            ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"), self.mask_ref(),
            ArrayRef(lambda: pop.activity, f"{pop.name}.activity"), self.rho, self.e_form == "exact",
            ArrayRef(lambda: self.count, f"{pop.name}.osdl_count"), use_rule_rows(*p.weights.shape)),
            label=f"{pop.name}.osdl_statistics")


class OSDLDictionary(Rule):
    """Dictionary update of OSDL (supplement Table 3) and the second half of Eq. 25.

    ``n_sweeps`` sweeps over the atoms ``j`` in order, each with the current
    dictionary::

        e_j^tmp = e_j + (1/R) sum_r Delta_r D alpha_r alpha_rj    (online; exact: Eq. 21 with the current D)
        C_j u_j = b_j - e_j^tmp + C_j d_j                           (22), C_j diagonal
        d_j = Pi_{D_j}(u_j)

    then (online form) ``e_j += (1/R) sum_r Delta_r D_t alpha_r alpha_rj``.
    A coordinate never observed while atom ``j`` was active (``C_j[f] = 0``)
    keeps its value. Needs an :class:`OSDLStatistics` on the same projection.

    Parameters
    ----------
    n_sweeps : int >= 1, default=1
        ``T_D``.
    tol : float >= 0, default=0.0
        Sweeps also stop once ``||D_new - D_old||_F <= tol ||D_old||_F``; 0
        runs exactly ``n_sweeps`` (the paper).
    constraint : {"l2", "nonneg_l2"}, default="l2"
        ``D_j``: the unit l2 ball, or its intersection with the non-negative orthant.
    """

    n_sweeps = Int(1, low=1, doc="T_D: sweeps over the atoms per step")
    tol = Float(0.0, low=0.0, schedulable=False, doc="relative change that ends the sweeps early (0: never)")
    constraint = Choice("l2", options=CONSTRAINTS, doc="constraint set of the atoms")

    def __init__(self, n_sweeps: int = 1, tol: float = 0.0, constraint: str = "l2"):
        super().__init__()
        self.set_params(n_sweeps=n_sweeps, tol=tol, constraint=constraint)
        self.info = np.zeros(1, dtype=np.int64)
        self._work = Workspace()

    def statistics(self) -> OSDLStatistics:
        """The network's :class:`OSDLStatistics` of this rule's projection.

        Returns
        -------
        OSDLStatistics
            The one unit rule keeping this dictionary's statistics.

        Raises
        ------
        ValueError
            If the network has none or several.
        """
        proj = self.projection
        net = proj.network if proj is not None else None
        found = [r for r in (net.unit_rules if net is not None else [])
                 if isinstance(r, OSDLStatistics) and r.dictionary is proj]
        if len(found) != 1:
            name = proj.name if proj is not None else "?"
            raise ValueError(f"OSDLDictionary on projection {name!r} needs exactly one "
                             f"OSDLStatistics({name}) in the network; found {len(found)}")
        return found[0]

    def validate(self, network: Network) -> None:
        if self.projection.lateral:
            raise ValueError(f"OSDLDictionary cannot learn the lateral projection {self.projection.name!r}")
        self.statistics()

    def state(self) -> dict[str, np.ndarray]:
        return {"info": self.info}

    def update_numpy(self) -> None:
        st = self.statistics()
        p = self.projection
        W, a = p.weights, p.post.activity
        obs = (st.mask() != 0.0).astype(np.float64)
        C, B, E = p.arrays["C"], p.arrays["B"], p.arrays["E"]
        exact, nonneg = st.e_form == "exact", self.constraint == "nonneg_l2"
        A = st.A
        R = a.shape[0]
        P = obs * (a @ W) if not exact else None
        for sweep in range(self.n_sweeps):
            change = norm = 0.0
            for j in range(W.shape[0]):
                if exact:
                    e = A[0, :, j] @ W if A.shape[0] == 1 else np.einsum("lf,fl->f", W, A[:, :, j])
                else:
                    e = E[j] + a[:, j] @ P / R
                c = C[j]
                u = np.where(c > 0.0, W[j] + (B[j] - e) / np.where(c > 0.0, c, 1.0), W[j])
                if nonneg:
                    u = np.maximum(u, 0.0)
                u = u / max(1.0, float(np.sqrt(u @ u)))
                d = u - W[j]
                change += float(d @ d)
                norm += float(W[j] @ W[j])
                W[j] = u
                if not exact:
                    P += obs * np.outer(a[:, j], d)
            self.info[0] = sweep + 1
            if change <= self.tol * self.tol * norm:
                break
        if not exact:
            E += a.T @ P / R

    def kernel_call(self) -> KernelCall | None:
        st = self.statistics()
        p = self.projection
        w, _, _ = self._refs()
        arr = lambda name: ArrayRef(lambda: p.arrays[name], f"{p.name}.{name}")  # noqa: E731
        m = lambda: (p.pre.size,)  # noqa: E731
        return KernelCall(k.osdl_dictionary, (
            w, arr("C"), arr("B"), arr("E"), ArrayRef(lambda: st.A, f"{p.post.name}.osdl_A"),
            ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"), st.mask_ref(),
            ArrayRef(lambda: p.post.activity, f"{p.post.name}.activity"), st.e_form == "exact",
            self.constraint == "nonneg_l2", self.n_sweeps, self.tol,
            ArrayRef(lambda: self._work("P", (p.post.batch, p.pre.size)), f"{p.name}.osdl_P"),
            ArrayRef(lambda: self._work("u", m()), f"{p.name}.osdl_u"),
            ArrayRef(lambda: self._work("e", m()), f"{p.name}.osdl_e"),
            ArrayRef(lambda: self._work("col", (p.post.batch,)), f"{p.name}.osdl_col"),
            ArrayRef(lambda: self.info, f"{p.name}.osdl_info")), label=f"{p.name}.rule", finite=f"{p.name}.weights")
