"""Structured sparse codes with missing observations: OSDL's representation step (paper 003, Table 2).

For each sample ``x`` (a row of ``X``) observed on the coordinates ``O``
(``observed[r] != 0``; the paper's ``Delta = diag(observed[r])``) and a
dictionary ``W`` with atoms as rows (the paper's ``D = W^T``)::

    minimize_alpha  0.5 ||x_O - D_O alpha||_2^2 + kappa Omega(alpha),
    Omega(alpha) = || (||d^G o alpha||_2)_{G in groups} ||_eta

(the per-sample cost of the supplement's Eq. 5), by Table 2's alternating
minimisation of its variational form; see :mod:`neurosim.kernels.structured`
for the identity, the start and the linear algebra. With ``eta = 1`` the
problem is convex (the overlapping group lasso; singleton groups give the
lasso with ``lam = kappa``); with ``eta < 1`` it is not, and Table 2
converges to a stationary point (every iteration still does not increase the
variational cost).

All numerics run in :func:`neurosim.kernels.structured.structured_codes`;
this module only checks arguments.

Missing values: an entry of ``X`` where ``observed`` is 0 is never read, so
it may be anything, NaN and Inf included (a missing value); an observed
entry must be finite. :func:`neurosim.analysis.inpainting.inpaint` follows
the same rule for the pixels of its image.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_float, check_int, check_not_too_large
from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.groups import GroupStructure, as_groups
from neurosim.kernels.structured import PATH_AUTO, structured_codes, structured_workspace  # noqa: F401 (re-exported)
from neurosim.kernels.structured_fista import (NO_ORDER, SOLVER_FISTA, SOLVER_TABLE2, encode_workspace_sizes,
                                               structured_encode)

__all__ = ["SOLVERS", "structured_sparse_code", "structured_penalty", "structured_objective", "resolve_solver"]

SOLVERS = ("auto", "fista", "table2")


def resolve_solver(solver: str, groups: GroupStructure, eta: float) -> int:
    """``SOLVER_FISTA`` or ``SOLVER_TABLE2`` for ``solver`` in :data:`SOLVERS` on these groups and ``eta``.

    ``"auto"`` picks FISTA with the exact prox where it is exact: ``eta = 1``
    and a laminar family with one weight per group (disjoint groups,
    singletons, trees; :meth:`~neurosim.groups.GroupStructure.prox_order`),
    Table 2 otherwise (overlapping groups such as the torus, ``eta < 1``,
    unequal member weights). ``"fista"`` where it is not exact raises
    ``ValueError``. (At ``kappa = 0`` the kernel always takes Table 2's
    direct least-squares solve.)

    Parameters
    ----------
    solver : {"auto", "fista", "table2"}
        The requested solver.
    groups : neurosim.groups.GroupStructure
        The group family.
    eta : float in (0, 1]
        ``Omega``'s exponent.

    Returns
    -------
    int
        ``SOLVER_FISTA`` or ``SOLVER_TABLE2``.

    Raises
    ------
    ValueError
        If ``solver="fista"`` where its prox is not exact.
    """
    from neurosim._validation import check_choice

    solver = check_choice("solver", solver, set(SOLVERS))
    if solver == "table2":
        return SOLVER_TABLE2
    exact = eta == 1.0 and groups.prox_order() is not None
    if solver == "fista" and not exact:
        why = "eta < 1 (non-convex)" if eta != 1.0 else \
            "the groups overlap without nesting or have unequal member weights"
        raise ValueError(f"solver='fista' needs an exact proximal operator, which this problem lacks: {why}; "
                         "use solver='table2' or 'auto'")
    return SOLVER_FISTA if exact else SOLVER_TABLE2


def _check_dictionary(W) -> np.ndarray:
    W = check_array("W", W, ndim=2)
    if W.shape[0] < 1 or W.shape[1] < 1:
        raise ValueError(f"W must have shape (n_atoms >= 1, n_features >= 1); got {W.shape}")
    with np.errstate(over="ignore"):
        if not np.isfinite(np.einsum("ij,ij->", W, W)):
            raise ValueError("W values are too large: the squared norms of the atoms overflow float64; rescale W")
    return W


def _check_signals(X: Any, n_features: int, observed: Any, name: str = "X") -> tuple[np.ndarray, np.ndarray, bool]:
    """``(X, M, single)``: ``X`` with its unobserved entries 0, the 0/1 observation mask, whether ``X`` was 1-D.

    The module's rule for missing values: entries where ``observed`` is 0 are
    never read and may be NaN or Inf; observed entries must be finite (and
    their squares must not overflow).
    """
    X = check_array(name, X, ndim=(1, 2), finite=False)
    single = X.ndim == 1
    if single:
        X = X[None, :]
    if X.shape[1] != n_features:
        raise ValueError(f"{name} must have n_features = {n_features} columns (W.shape[1]); got shape "
                         f"{X.shape[1:] if single else X.shape}")
    M = _check_observed(observed, X.shape, single)
    bad = (M != 0) & ~np.isfinite(X)
    if bad.any():
        where = np.argwhere(bad)
        where = where[:, 1] if single else where  # coordinates of a 1-D X, (sample, coordinate) pairs of a 2-D one
        raise ValueError(f"{name} must be finite at observed coordinates; NaN/Inf at {where[:5].tolist()} (a missing "
                         "value is allowed where observed is 0: mark it as not observed)")
    # the kernels never read the unobserved entries; zeros there keep the overflow check to the observed ones
    X = np.where(M != 0, X, 0.0)
    return check_not_too_large(name, X), M, single


def _check_observed(observed, shape, single: bool) -> np.ndarray:
    if observed is None:
        return np.ones(shape)
    M = check_array("observed", observed, ndim=(1, 2))
    if M.ndim == 1 and single:
        M = M[None, :]
    if M.shape != shape:
        want = shape[1:] if single else shape
        raise ValueError(f"observed must have the shape of X {want} (nonzero = observed); got {M.shape}")
    return M


def _check_codes(codes, n_samples: int, n_atoms: int, name: str) -> np.ndarray:
    A = check_array(name, codes, ndim=(1, 2))
    if A.ndim == 1:
        A = A[None, :]
    if A.shape != (n_samples, n_atoms):
        raise ValueError(f"{name} must have shape ({n_samples}, {n_atoms}) (n_samples, n_atoms); got {A.shape}")
    return A


def _check_eta(eta) -> float:
    return check_float("eta", eta, low=0.0, high=1.0, low_open=True)


def structured_sparse_code(X: ArrayLike, W: ArrayLike, groups: Any = None, kappa: float = 0.1, *, eta: float = 1.0,
                           observed: ArrayLike | None = None, eps: float = 1e-8, n_iter: int = 200, tol: float = 1e-8,
                           init: ArrayLike | None = None, solver: str = "auto", fista_iter: int = 5000) -> np.ndarray:
    """Structured sparse codes of the observed part of ``X`` (paper 003, supplement Table 2).

    Minimises, per row ``x`` of ``X`` observed on ``O``,
    ``0.5 ||x_O - D_O alpha||^2 + kappa Omega(alpha)`` (Eq. 5's per-sample
    cost) with ``Omega(alpha) = ||(||d^G o alpha||_2)_G||_eta``, by
    alternating the z-step ``z^G = max(||d^G o alpha||^(2-eta)
    Omega^(eta-1), eps)`` and the alpha-step ``alpha = (D_O^T D_O + kappa
    diag(zeta))^-1 D_O^T x_O``, ``zeta_j = sum_{G ∋ j} (d_j^G)^2 / z^G``.
    This is block-coordinate descent on ``J(alpha, z) = 0.5 ||x_O - D_O
    alpha||^2 + (kappa / 2) (sum_j zeta_j alpha_j^2 + ||z||_beta)``, ``beta =
    eta / (2 - eta)``, whose minimum over ``z >= 0`` is the cost above
    (Jenatton et al. 2010; proof in :mod:`neurosim.kernels.structured`).

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features) or (n_features,)
        Signals; only the observed coordinates are read: an entry where
        ``observed`` is 0 may be NaN or Inf (a missing value), an observed
        one must be finite.
    W : array_like, shape (n_atoms, n_features)
        Dictionary, atoms as rows (``D = W^T``). An all-zero atom (or one
        zero on every observed coordinate of a sample) is allowed: it has no
        data term and the penalty drives its code to 0 (exactly 0 for
        ``kappa > 0``; ``kappa = 0`` sets it to 0 as well).
    groups : GroupStructure, list of index sets, networkx graph or None
        Group family over the ``n_atoms`` units (weights ``d^G``), coerced by
        :func:`neurosim.groups.as_groups`; ``None``: singletons (the lasso at
        ``eta = 1``).
    kappa : float >= 0, default=0.1
        Trade-off. ``kappa = 0`` gives a least-squares code (the penalty is
        off; with more atoms than observed coordinates, the one Table 2's
        direct solve picks).
    eta : float in (0, 1], default=1.0
        ``1``: the convex sum of group norms. ``eta < 1``: non-convex; the
        iteration then converges to a stationary point (each iteration does
        not increase ``J``), which depends on the start.
    observed : array_like, shape of ``X``, optional
        Nonzero (or True) where a coordinate is observed; default all. A
        sample with no observed coordinate gets the code 0 (nothing to fit;
        the penalty is minimised at 0).
    eps : float > 0, default=1e-08
        Floor of ``z^G`` (Table 2's smoothing); it perturbs the cost by at
        most ``kappa eps / 2`` per group at ``eta = 1``. It is in the units
        of the codes: the same problem rescaled (``X`` and ``kappa`` by
        ``s``) is the same problem only with ``eps`` rescaled by ``s`` too.
    n_iter : int >= 1, default=200
        ``T_alpha``, the most iterations per sample.
    tol : float >= 0, default=1e-08
        Stop a sample when ``max_j |alpha_new - alpha_old| <= tol max(s,
        max_j |alpha_old|)``, ``s = ||x_O||_2 / max_j ||d_j,O||_2`` the
        sample's code scale, so the rule is relative at every scale of the
        data and the atoms; ``0``: exactly ``n_iter`` iterations (the
        paper's fixed ``T_alpha``).
    init : array_like, shape (n_samples, n_atoms), optional
        Warm start: the first z-step is computed from it. Default: the first
        iteration takes ``z^G = s``, the sample's code scale (a ridge start),
        because ``alpha = 0`` would give ``z^G = eps`` everywhere and crawl
        out of the origin.
        FISTA starts from it too (default: 0).
    solver : {"auto", "fista", "table2"}, default="auto"
        ``"table2"``: the iterations above (the paper's, for any groups and
        ``eta``). ``"fista"``: accelerated proximal gradient with the exact
        proximal operator (:mod:`neurosim.kernels.structured_fista`): same
        cost, exact zeros; needs ``eta = 1`` and disjoint or nested groups
        (a tree) with one weight per group. ``"auto"`` (default): FISTA where
        it is exact, Table 2 otherwise (:func:`resolve_solver`). ``kappa = 0``
        always uses Table 2's direct solve.
    fista_iter : int >= 1, default=5000
        The most FISTA iterations per sample (``n_iter`` and ``eps`` are
        Table 2's). ``tol`` is the same stopping rule for both.

    Returns
    -------
    codes : ndarray, shape (n_samples, n_atoms) or (n_atoms,)

    Warns
    -----
    NonConvergenceWarning
        If ``tol > 0`` and some samples used all ``n_iter`` iterations
        without meeting it (their codes are the last iterate).
    """
    W = _check_dictionary(W)
    n_atoms, n_features = W.shape
    X, M, single = _check_signals(X, n_features, observed)
    g = as_groups(groups, n_atoms)
    kappa = check_float("kappa", kappa, low=0.0)
    eta = _check_eta(eta)
    eps = check_float("eps", eps, low=0.0, low_open=True)
    n_iter = check_int("n_iter", n_iter, low=1)
    tol = check_float("tol", tol, low=0.0)
    fista_iter = check_int("fista_iter", fista_iter, low=1)
    which = resolve_solver(solver, g, eta)
    if init is None:
        codes = np.zeros((X.shape[0], n_atoms))
        warm = False
    else:
        codes = _check_codes(init, X.shape[0], n_atoms, "init").copy()
        warm = True
    ni, nw = encode_workspace_sizes(n_atoms, n_features, g.n_groups, kappa, PATH_AUTO)
    iwork, work = np.zeros(ni, dtype=np.int64), np.zeros(nw)
    info = np.zeros(2, dtype=np.int64)
    order = g.prox_order() if which == SOLVER_FISTA else NO_ORDER
    ok = structured_encode(W, X, M, g.indptr, g.indices, g.weights, order, kappa, eta, eps, n_iter, fista_iter, tol,
                           warm, codes, info, iwork, work, PATH_AUTO, which)
    if not ok:
        raise ValueError("structured_sparse_code overflowed float64 (non-finite codes); rescale X and W, or raise "
                         "eps or eta")
    if info[1]:
        cap = f"fista_iter = {fista_iter}" if which == SOLVER_FISTA and kappa > 0 else f"n_iter = {n_iter}"
        warnings.warn(f"structured_sparse_code: {int(info[1])} sample(s) used all {cap} iterations "
                      f"without meeting tol = {tol}; their codes are the last iterate (increase {cap.split(' =')[0]})",
                      NonConvergenceWarning, stacklevel=2)
    return codes[0] if single else codes


def structured_penalty(codes: ArrayLike, groups: Any = None, eta: float = 1.0) -> np.ndarray | float:
    """``Omega(alpha) = ||(||d^G o alpha||_2)_G||_eta`` for every row of ``codes`` (a float for one code).

    Parameters
    ----------
    codes : array_like, shape (n_samples, n_atoms) or (n_atoms,)
        Codes ``alpha``.
    groups : GroupStructure, list of index sets, networkx graph or None
        As in :func:`structured_sparse_code` (``None``: singletons, the L1 norm).
    eta : float in (0, 1], default=1.0
        The outer quasi-norm's exponent.

    Returns
    -------
    numpy.ndarray of shape (n_samples,) or float
        ``Omega`` per code.

    Examples
    --------
    >>> from neurosim.coding.structured import structured_penalty
    >>> structured_penalty([3.0, -4.0])  # no groups: the L1 norm
    7.0
    >>> structured_penalty([3.0, -4.0], groups=[[0, 1]])  # one group: the Euclidean norm
    5.0
    """
    A = check_array("codes", codes, ndim=(1, 2))
    if A.shape[-1] < 1:
        raise ValueError(f"codes must have at least one column (n_atoms >= 1); got shape {A.shape}")
    g = as_groups(groups, A.shape[-1])
    eta = _check_eta(eta)
    with np.errstate(over="ignore"):
        out = g.omega(A, eta)
    return float(out) if A.ndim == 1 else out


def structured_objective(X: ArrayLike, W: ArrayLike, codes: ArrayLike, groups: Any = None, kappa: float = 0.1,
                         eta: float = 1.0, observed: ArrayLike | None = None) -> np.ndarray | float:
    """Per row: ``0.5 ||x_O - D_O alpha||^2 + kappa Omega(alpha)`` (Eq. 5's per-sample cost, paper 003).

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features) or (n_features,)
        Samples (entries not observed are ignored and may be NaN or Inf;
        observed ones must be finite).
    W : array_like, shape (n_atoms, n_features)
        Dictionary, atoms as rows.
    codes : array_like, shape (n_samples, n_atoms) or (n_atoms,)
        Codes, one per sample.
    groups : GroupStructure, list of index sets, networkx graph or None
        As in :func:`structured_sparse_code`.
    kappa : float >= 0, default=0.1
        Weight of ``Omega``.
    eta : float in (0, 1], default=1.0
        ``Omega``'s exponent.
    observed : array_like of X's shape, optional
        Nonzero where an entry is observed; default all.

    Returns
    -------
    numpy.ndarray of shape (n_samples,) or float
        The cost per sample (a float for a 1-D ``X``).
    """
    W = _check_dictionary(W)
    X, M, single = _check_signals(X, W.shape[1], observed)
    A = _check_codes(codes, X.shape[0], W.shape[0], "codes")
    kappa = check_float("kappa", kappa, low=0.0)
    eta = _check_eta(eta)
    g = as_groups(groups, W.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.where(M != 0, X - A @ W, 0.0)
        out = 0.5 * np.einsum("ij,ij->i", r, r) + (kappa * g.omega(A, eta) if kappa > 0 else 0.0)
    return float(out[0]) if single else out
