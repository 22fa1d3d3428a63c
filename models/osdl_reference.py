"""Literal NumPy transcription of OSDL, Tables 1-3 (paper 003: Szabó, Póczos & Lőrincz, supplement).

This module is the test oracle of the compiled circuit in
:mod:`neurosim.models.osdl`: slow on purpose, written line by line from the
supplement with the masks as explicit matrices ``Delta_r = np.diag(M[r] != 0)``
and one loop per dictionary column, so that each line can be checked against
the paper by eye.

Layout. The public functions take and return the library's dictionary ``W``
of shape ``(n_atoms, n_features)`` (atom ``j`` is ``W[j]``); internally the
paper's ``D = W.T`` of shape ``(d_x, d_alpha)`` is used, column ``d_j``. The
statistics are stored in the library's layout, one row per atom: ``C[j]`` is
the diagonal of the paper's diagonal matrix ``C_j`` (Eq. 19), ``B[j]`` is
``b_j`` (Eq. 20, column ``j`` of the paper's ``B``), ``e[j]`` is ``e_j``
(Eq. 21/25). Data ``X`` and masks ``M`` are ``(R, n_features)`` (nonzero
``M[r, f]``: coordinate ``f`` of sample ``r`` observed), codes
``(R, n_atoms)``.

Mini-batch form
---------------
The supplement's Table 1 lost its statistics-update lines. We rebuild them
from Eqs. 23-25 applied to the *mean* over the mini-batch: mini-batch ``t``
contributes one term ``N_t`` of Lemma 1,

    N_t^C_j = (1/R) sum_r Delta_{t,r} alpha_{t,r,j}^2,
    N_t^B   = (1/R) sum_r Delta_{t,r} x_{t,r} alpha_{t,r}^T,

so that by Lemma 1 ``C_{j,t} = sum_i (i/t)^rho N_i^C_j`` (for ``rho > 0``
whatever ``C_{j,0}``; for ``rho = 0`` with ``C_{j,0} = 0``), i.e. the
statistics of Eqs. 19-20 with each sample weighted by ``(i/t)^rho / R``.
The ``1/R`` is the one printed in the ``e_j`` line (part 2) of Table 1 and
in the ``e_j^temp`` line of Table 3. One step ``t = 1, 2, ...``::

    gamma_t = (1 - 1/t)^rho                       (Lemma 1; rho = 0 gives 1, also at t = 1)
    C_j <- gamma_t C_j + (1/R) sum_r Delta_r alpha_{r,j}^2        (23)
    B   <- gamma_t B   + (1/R) sum_r Delta_r x_r alpha_r^T        (24)
    e_j <- gamma_t e_j                                            (25, part 1)
    D_t <- Table 3 with T_D = n_sweeps sweeps:
           for j = 1..k, with the current D (columns already updated
           in this sweep included):
               e_j^tmp = e_j + (1/R) sum_r Delta_r D alpha_r alpha_{r,j}
               solve C_j u_j = b_j - e_j^tmp + C_j d_j            (22)
               d_j = Pi_{D_j}(u_j)
    e_j <- e_j + (1/R) sum_r Delta_r D_t alpha_r alpha_{r,j}      (25, part 2)

``C_j`` is diagonal, so (22) is solved coordinate-wise; where
``C_j[f] = 0`` (coordinate ``f`` never observed while atom ``j`` was active)
the equation reads ``0 = 0`` and ``u_j[f] = d_j[f]`` is kept. The
constraint sets ``D_j`` are the unit ball (``"l2"``: ``u / max(1, ||u||)``)
and its non-negative part (``"nonneg_l2"``: clip at 0, then divide by
``max(1, ||.||)``, which is the Euclidean projection onto the intersection).

Exact form (``e_form="exact"``). Eq. 25 approximates Eq. 21 by evaluating
each past term with the dictionary of its own time. The exact ``e_j`` of
Eq. 21 with the *current* ``D`` needs per-coordinate code statistics::

    A^(f) <- gamma_t A^(f) + (1/R) sum_r M[r, f] != 0 * alpha_r alpha_r^T    (shape (n_features, k, k))
    e_j[f] = sum_l D[f, l] A^(f)[l, j],   C_j[f] = A^(f)[j, j]

With full masks every ``A^(f)`` is the ``A_t`` of Eq. 29 (mini-batch form)
and (22) becomes Eqs. 30-31, Mairal et al.'s online dictionary learning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from neurosim._validation import check_array, check_choice, check_float, check_int

__all__ = [
    "CONSTRAINTS",
    "E_FORMS",
    "forgetting_factor",
    "project_atom",
    "OSDLStatistics",
    "dictionary_step",
    "finish_step",
    "osdl_numpy",
]

CONSTRAINTS = ("l2", "nonneg_l2")
E_FORMS = ("online", "exact")


def forgetting_factor(t, rho) -> float:
    """Forgetting factor ``gamma_t = (1 - 1/t)^rho`` of Lemma 1 and Table 1.

    Parameters
    ----------
    t : int
        Mini-batch index, ``t >= 1``.
    rho : float
        Forgetting exponent, ``rho >= 0``.

    Returns
    -------
    float
        ``1`` for ``rho = 0`` (for every ``t``, including ``t = 1``, where the
        formula would read ``0^0``); ``0`` at ``t = 1`` for ``rho > 0``, which
        is why ``M_0`` is forgotten in Lemma 1's second case.
    """
    t = check_int("t", t, low=1)
    rho = check_float("rho", rho, low=0.0)
    if rho == 0.0:
        return 1.0
    return (1.0 - 1.0 / t) ** rho


def project_atom(u, constraint="l2") -> np.ndarray:
    """Euclidean projection ``Pi_{D_j}`` of one atom onto its constraint set (Table 3).

    Parameters
    ----------
    u : array_like, shape (n_features,)
        The unconstrained solution ``u_j`` of Eq. 22.
    constraint : {"l2", "nonneg_l2"}
        ``"l2"``: the unit ball ``{d : ||d||_2 <= 1}``, giving
        ``u / max(1, ||u||)``. ``"nonneg_l2"``: the unit ball intersected with
        the non-negative orthant, giving ``v / max(1, ||v||)`` with
        ``v = max(u, 0)``.

    Returns
    -------
    ndarray, shape (n_features,)
        A new array; ``u`` is not modified.
    """
    u = check_array("u", u, ndim=1)
    constraint = check_choice("constraint", constraint, CONSTRAINTS)
    return _project(u, constraint)


def _project(u, constraint):
    v = np.maximum(u, 0.0) if constraint == "nonneg_l2" else u.copy()
    big = float(np.max(np.abs(v))) if v.size else 0.0
    # ||v|| computed on v / max|v| so that a huge u is scaled onto the sphere instead of to 0 by an inf norm
    norm = big * float(np.linalg.norm(v / big)) if big > 0.0 and np.isfinite(big) else float(np.linalg.norm(v))
    return v / max(1.0, norm)


def _delta(mask_row):
    # Delta_r of the paper: a 0/1 diagonal matrix, so that Delta = Delta^T = Delta^2 (Eq. 14)
    return np.diag((mask_row != 0.0).astype(np.float64))


@dataclass
class OSDLStatistics:
    """The statistics of the cost function ``hat f_t`` (Eqs. 19-21, or 29 per coordinate).

    Parameters
    ----------
    C : ndarray, shape (n_atoms, n_features)
        ``C[j]`` is the diagonal of ``C_j`` (Eq. 19/23).
    B : ndarray, shape (n_atoms, n_features)
        ``B[j]`` is ``b_j``, column ``j`` of the paper's ``B`` (Eq. 20/24).
    e : ndarray, shape (n_atoms, n_features), or None
        ``e[j]`` is ``e_j`` (Eq. 25); ``None`` in the exact form.
    A : ndarray, shape (n_features, n_atoms, n_atoms), or None
        ``A[f]`` is the code statistic ``A^(f)`` of coordinate ``f`` (the
        exact form); ``None`` in the online form.
    t : int
        Number of mini-batches folded in so far.
    """

    C: np.ndarray
    B: np.ndarray
    e: np.ndarray | None = None
    A: np.ndarray | None = None
    t: int = 0
    e_form: str = field(init=False)

    def __post_init__(self):
        self.C = check_array("C", self.C, ndim=2)
        k, m = self.C.shape
        if k < 1 or m < 1:
            raise ValueError(f"C must have shape (n_atoms >= 1, n_features >= 1); got {self.C.shape}")
        self.B = check_array("B", self.B, shape=(k, m))
        if (self.e is None) == (self.A is None):
            raise ValueError("exactly one of e (online form) and A (exact form) must be given")
        if self.e is not None:
            self.e = check_array("e", self.e, shape=(k, m))
            self.e_form = "online"
        else:
            self.A = check_array("A", self.A, shape=(m, k, k))
            self.e_form = "exact"
        self.t = check_int("t", self.t, low=0)

    @classmethod
    def zeros(cls, n_atoms, n_features, e_form="online") -> "OSDLStatistics":
        """Table 1's initialisation ``C_{j,0} = 0``, ``B_0 = 0``, ``e_{j,0} = 0`` (exact form: ``A^(f)_0 = 0``).

        Parameters
        ----------
        n_atoms, n_features : int
            ``d_alpha >= 1`` and ``d_x >= 1``.
        e_form : {"online", "exact"}
            Keep the running ``e_j`` of Eq. 25, or the per-coordinate ``A^(f)``.
        """
        k = check_int("n_atoms", n_atoms, low=1)
        m = check_int("n_features", n_features, low=1)
        e_form = check_choice("e_form", e_form, E_FORMS)
        if e_form == "online":
            return cls(np.zeros((k, m)), np.zeros((k, m)), e=np.zeros((k, m)))
        return cls(np.zeros((k, m)), np.zeros((k, m)), A=np.zeros((m, k, k)))

    @property
    def n_atoms(self) -> int:
        """``d_alpha``, the number of atoms."""
        return self.C.shape[0]

    @property
    def n_features(self) -> int:
        """``d_x``, the number of features."""
        return self.C.shape[1]

    def update(self, X, M, codes, rho) -> "OSDLStatistics":
        """Fold mini-batch ``t + 1`` into the statistics: Eqs. 23-24 and part 1 of Eq. 25 (mini-batch form).

        Parameters
        ----------
        X : array_like, shape (R, n_features)
            The mini-batch (values at unobserved coordinates are ignored).
        M : array_like, shape (R, n_features)
            Masks, nonzero = observed.
        codes : array_like, shape (R, n_atoms)
            The representations ``alpha_{t,r}`` (Table 2).
        rho : float
            Forgetting exponent ``rho >= 0``.

        Returns
        -------
        OSDLStatistics
            ``self``, updated in place, with ``t`` incremented.
        """
        X, M, codes = _check_batch(X, M, codes, self.n_atoms, self.n_features)
        rho = check_float("rho", rho, low=0.0)
        t = self.t + 1
        gamma = forgetting_factor(t, rho)
        R = X.shape[0]
        # computed aside and assigned only once all are finite, so an overflow leaves the statistics as they were
        C, B, e, A = self.C.copy(), self.B.copy(), None, None
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            for j in range(self.n_atoms):
                Cj = np.diag(self.C[j])
                N = sum(_delta(M[r]) * codes[r, j] ** 2 for r in range(R))
                C[j] = np.diag(gamma * Cj + N / R)  # (23)
            Bp = self.B.T  # the paper's B, (d_x, d_alpha)
            N = sum(np.outer(_delta(M[r]) @ X[r], codes[r]) for r in range(R))
            B = np.ascontiguousarray((gamma * Bp + N / R).T)  # (24)
            if self.e_form == "online":
                e = gamma * self.e  # (25), part 1
            else:
                A = self.A.copy()
                for f in range(self.n_features):
                    N = sum(float(M[r, f] != 0.0) * np.outer(codes[r], codes[r]) for r in range(R))
                    A[f] = gamma * self.A[f] + N / R
        if not all(np.all(np.isfinite(a)) for a in (C, B, e if A is None else A)):
            raise ValueError("the statistics overflow float64; rescale X or the codes")
        self.C, self.B = C, B
        if A is None:
            self.e = e
        else:
            self.A = A
        self.t = t
        return self

    def copy(self) -> OSDLStatistics:
        """A deep copy (every array copied).

        Returns
        -------
        OSDLStatistics
            Independent of this one.
        """
        return OSDLStatistics(
            self.C.copy(), self.B.copy(),
            e=None if self.e is None else self.e.copy(),
            A=None if self.A is None else self.A.copy(), t=self.t,
        )


def _check_data(X, M, n_features):
    X = check_array("X", X, ndim=2)
    if X.shape[0] < 1 or X.shape[1] != n_features:
        raise ValueError(f"X must have shape (R >= 1, n_features = {n_features}); got {X.shape}")
    M = check_array("M", M, shape=X.shape)
    return X, M


def _check_batch(X, M, codes, n_atoms, n_features):
    X, M = _check_data(X, M, n_features)
    codes = check_array("codes", codes, shape=(X.shape[0], n_atoms))
    return X, M, codes


def _check_W(W, stats=None):
    W = check_array("W", W, ndim=2)
    if W.shape[0] < 1 or W.shape[1] < 1:
        raise ValueError(f"W must have shape (n_atoms >= 1, n_features >= 1); got {W.shape}")
    if stats is not None:
        if not isinstance(stats, OSDLStatistics):
            raise TypeError(f"stats must be an OSDLStatistics; got {type(stats).__name__}")
        if W.shape != stats.C.shape:
            raise ValueError(f"W must have shape {stats.C.shape} (that of the statistics); got {W.shape}")
        if np.any(stats.C < 0.0):
            raise ValueError("stats.C must be non-negative (a weighted sum of squared codes, Eq. 19)")
        if stats.A is not None and np.any(np.einsum("fjj->jf", stats.A) < 0.0):
            raise ValueError("the diagonals of stats.A must be non-negative (sums of squared codes, Eq. 29)")
    return W


def _masked_reconstruction_term(D, M, codes, j):
    """``(1/R) sum_r Delta_r D alpha_r alpha_{r,j}``, the term shared by Table 3 and part 2 of Eq. 25."""
    R = codes.shape[0]
    return sum(_delta(M[r]) @ D @ codes[r] * codes[r, j] for r in range(R)) / R


def dictionary_step(W, stats, X, M, codes, n_sweeps=1, constraint="l2") -> np.ndarray:
    """Table 3: ``n_sweeps`` (``T_D``) sweeps of block-coordinate descent over the atoms.

    Parameters
    ----------
    W : array_like, shape (n_atoms, n_features)
        The dictionary ``D_{t-1}``, atoms as rows (not modified).
    stats : OSDLStatistics
        Statistics after :meth:`OSDLStatistics.update` for this mini-batch.
    X, M, codes : array_like
        The mini-batch, its masks and codes, as given to ``stats.update``.
    n_sweeps : int
        ``T_D >= 1``.
    constraint : {"l2", "nonneg_l2"}
        The constraint set ``D_j`` of every atom (see :func:`project_atom`).

    Returns
    -------
    ndarray, shape (n_atoms, n_features)
        ``D_t``, atoms as rows (a new array).

    Notes
    -----
    For atom ``j`` in order, with the current ``D``: ``e_j^tmp = e_j + (1/R)
    sum_r Delta_r D alpha_r alpha_{r,j}`` (exact form: ``e_j^tmp[f] =
    sum_l D[f, l] A^(f)[l, j]``, Eq. 21 with the current ``D``), then Eq. 22
    ``C_j u_j = b_j - e_j^tmp + C_j d_j`` coordinate-wise (``u_j[f] = d_j[f]``
    where ``C_j[f] = 0``), then ``d_j = Pi(u_j)``.
    """
    W = _check_W(W, stats)
    X, M, codes = _check_batch(X, M, codes, stats.n_atoms, stats.n_features)
    n_sweeps = check_int("n_sweeps", n_sweeps, low=1)
    constraint = check_choice("constraint", constraint, CONSTRAINTS)
    D = W.T.copy()  # the paper's D = [d_1, ..., d_k]
    k, m = stats.n_atoms, stats.n_features
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        for _ in range(n_sweeps):
            for j in range(k):
                if stats.e_form == "online":
                    e_tmp = stats.e[j] + _masked_reconstruction_term(D, M, codes, j)
                    Cj = np.diag(stats.C[j])
                else:
                    e_tmp = np.array([sum(D[f, l] * stats.A[f, l, j] for l in range(k)) for f in range(m)])
                    Cj = np.diag([stats.A[f, j, j] for f in range(m)])
                rhs = stats.B[j] - e_tmp + Cj @ D[:, j]  # (22)
                u = D[:, j].copy()
                for f in range(m):
                    if Cj[f, f] != 0.0:
                        u[f] = rhs[f] / Cj[f, f]
                D[:, j] = _project(u, constraint)
    if not np.all(np.isfinite(D)):
        raise ValueError("the dictionary update overflows float64 (tiny C_j against large b_j or e_j); "
                         "rescale X or the codes")
    return np.ascontiguousarray(D.T)


def finish_step(stats, W, X, M, codes) -> OSDLStatistics:
    """Part 2 of Eq. 25 (Table 1): ``e_j += (1/R) sum_r Delta_r D_t alpha_r alpha_{r,j}``.

    Parameters
    ----------
    stats : OSDLStatistics
        Updated in place; in the exact form nothing is kept that depends on
        ``D``, so nothing changes.
    W : array_like, shape (n_atoms, n_features)
        The new dictionary ``D_t`` from :func:`dictionary_step`.
    X, M, codes : array_like
        The mini-batch, its masks and codes.

    Returns
    -------
    OSDLStatistics
        ``stats``.
    """
    W = _check_W(W, stats)
    X, M, codes = _check_batch(X, M, codes, stats.n_atoms, stats.n_features)
    if stats.e_form == "online":
        D = W.T
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            e = np.array([stats.e[j] + _masked_reconstruction_term(D, M, codes, j) for j in range(stats.n_atoms)])
        if not np.all(np.isfinite(e)):
            raise ValueError("e_j overflows float64; rescale X or the codes")
        stats.e = e
    return stats


def osdl_numpy(
    batches: Iterable,
    W0,
    encode: Callable,
    *,
    rho=0.0,
    n_sweeps=1,
    constraint="l2",
    e_form="online",
):
    """Table 1: online group-structured dictionary learning over a stream of mini-batches.

    Parameters
    ----------
    batches : iterable of (X, M)
        Mini-batches ``X`` ``(R, n_features)`` with their masks ``M`` (same
        shape, nonzero = observed); ``R`` may change between batches.
    W0 : array_like, shape (n_atoms, n_features)
        Initial dictionary ``D_0``, atoms as rows (not modified).
    encode : callable
        ``encode(X, M, W) -> codes`` of shape ``(R, n_atoms)``: the
        representation step (Table 2 or any other encoder), given ``D_{t-1}``.
    rho : float
        Forgetting exponent, ``rho >= 0``.
    n_sweeps : int
        ``T_D >= 1`` sweeps of Table 3 per mini-batch.
    constraint : {"l2", "nonneg_l2"}
        Constraint set of the atoms.
    e_form : {"online", "exact"}
        The running ``e_j`` of Eq. 25 (the paper's choice) or the exact
        Eq. 21 with the current dictionary.

    Returns
    -------
    W : ndarray, shape (n_atoms, n_features)
        ``D_T``.
    stats : OSDLStatistics
        The statistics after the last mini-batch.
    """
    W = _check_W(W0).copy()
    rho = check_float("rho", rho, low=0.0)
    n_sweeps = check_int("n_sweeps", n_sweeps, low=1)
    constraint = check_choice("constraint", constraint, CONSTRAINTS)
    e_form = check_choice("e_form", e_form, E_FORMS)
    if not callable(encode):
        raise TypeError(f"encode must be callable encode(X, M, W) -> codes; got {type(encode).__name__}")
    stats = OSDLStatistics.zeros(W.shape[0], W.shape[1], e_form)
    for batch in batches:
        try:
            X, M = batch
        except (TypeError, ValueError):
            raise TypeError("batches must yield pairs (X, M)") from None
        X, M = _check_data(X, M, W.shape[1])
        codes = check_array("codes", encode(X, M, W.copy()), shape=(X.shape[0], W.shape[0]))
        stats.update(X, M, codes, rho)
        W = dictionary_step(W, stats, X, M, codes, n_sweeps, constraint)
        finish_step(stats, W, X, M, codes)
    return W, stats
