"""Plain-NumPy reference transcription of neurogenetic online dictionary learning.

Written from Garg, Rish, Cecchi, Lozano, "Neurogenesis-inspired dictionary
learning: online model adaption in a changing world" (plain-text extraction
``000_7b546350ffac6c20.txt``; line numbers below refer to that file).  This
module is a test oracle: it imports nothing from ``neurosim`` and favours
literal transcription over speed.  The extraction lost the figures and garbled
parts of Alg. 1 (e.g. the ``(.)_+`` of step 16 and the symbol ``\\omega_j`` of
step 17); where a formula had to be reconstructed from the surrounding text the
docstring says so.

Conventions: samples are COLUMNS.  ``X`` is ``(m, n)`` (m features, n samples
of one batch), ``D`` is ``(m, k)``, codes are ``(k, n)``, ``A`` is ``(k, k)``,
``B`` is ``(m, k)`` -- as in the paper (``A = sum alpha alpha^T``,
``B = sum x alpha^T``, line 110).

=============================  ==============================================
function / class               paper
=============================  ==============================================
``lasso_path_solution``        step 4 of Alg. 1 (l.153): lasso
                               ``0.5||x - D a||^2 + lam ||a||_1`` solved
                               exactly along the LARS/homotopy path
``lasso_cd``                   same lasso, independent coordinate descent
                               (used to cross-check ``lasso_path_solution``)
``lambda_for_count``           Alg. 2 (l.221-240) applied to the lasso; per
                               sample lambda_c (l.207)
``sparse_codes``               step 4 / step 9 (l.153, l.164-165) for a batch
``lambda_for_vector_count``    Alg. 2 literally, for a vector (l.221-240)
``prox_count``                 step 15 (l.180) with lambda_j from Alg. 2
                               applied to the vector u_j (l.195, l.219-240)
``group_shrink``               step 16 (l.183), killing rule l.215
``column_update``              steps 12-19 (l.172-190), eq. (4) (l.112),
                               convergence rule l.139/l.195
``surrogate_objective``        eq. (3) (l.107-108) plus the group term of eq. (6)
                               (l.132)
``coding_dictionary``          D as the codes use it: as printed, or the
                               authors' normalize(D) (centred, unit columns)
``pearson_accuracy``           p_c of step 5 (l.157), batch mean (l.128);
                               Spearman option (l.213, l.256)
``births_count``               step 6 (l.158), bound by c_k (l.128)
``draw_elements``              initializeRand of step 7 (l.161); dense
                               newborns, l.328
``NODLReference``              Alg. 1 (l.141-193) for ODL, ODL*, NODL, NODL+,
                               NODL- (l.244, l.468)
=============================  ==============================================

Choices made where the paper is silent or ambiguous (all are parameters or are
documented at the function that makes them):

* Lasso scaling: step 4 is ``0.5||x - D a||_2^2 + lam ||a||_1`` (no 1/m).
* Alg. 2 is written for a vector ``u`` (l.221-240).  For the codes the same
  bisection is run with ``lam_max = ||D^T x||_inf`` (smallest lam giving the
  zero code) and ``beta*`` = number of nonzeros of the exact lasso solution.
* Accuracy is the batch MEAN of the per-sample Pearson correlations (l.128);
  a sample whose reconstruction (or itself) is constant has correlation 0.
* k_n = floor((1 - p_c) c_k + 1/2), clipped to [0, c_k] (l.158 gives no
  rounding rule; "bounded by c_k", l.128).
* Sufficient statistics are plain SUMS over all samples seen, no forgetting,
  started at zero (l.110, l.147, step 11).
* Step 16 threshold is lambda_g itself, applied to v_j (l.183, l.215: "all
  elements with l2-norm below lambda_g are set to zero"), NOT lambda_g/A_jj.
  Consequently, without element sparsity, steps 14-17 are the exact block
  minimiser of
  ``0.5 tr(D^T D A) - tr(D^T B) + lambda_g sum_j A_jj ||d_j||`` (A_jj-weighted
  group term), not of eq. (6).  ``shrink_scale="ajj"`` gives the exact block
  minimiser of the unweighted objective instead.
* A column with A_jj <= 0 (never used since birth, hence a_j = 0, b_j = 0) is
  skipped: d_j is left unchanged (eq. (4) divides by a_jj).  So a newborn
  that no code has used yet keeps its random values and is not killed by
  the group term (the exact block minimiser with lambda_g > 0 would be 0).
* Mini-batches: one batch is one "x_t" (l.151); its samples are coded one by
  one (own lambda_c each), and their outer products are summed into A, B.
  sklearn's MiniBatchDictionaryLearning instead keeps forgetting-weighted
  means and makes one sweep per batch; the column update is invariant to a
  common scale of (A, B), so the two agree on the first batch only (see the
  tests).
* Death: columns that are exactly zero after the dictionary update are removed
  together with row/column j of A and column j of B (only when lambda_g > 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata
from sklearn.linear_model import lars_path

__all__ = [
    "lasso_path_solution",
    "lasso_cd",
    "lambda_for_count",
    "sparse_codes",
    "prox_count",
    "lambda_for_vector_count",
    "group_shrink",
    "column_update",
    "surrogate_objective",
    "pearson_accuracy",
    "births_count",
    "draw_elements",
    "NODLReference",
    "VARIANTS",
]


# --------------------------------------------------------------------------
# Lasso (step 4 of Alg. 1)
# --------------------------------------------------------------------------
class _LassoPath:
    """Exact lasso solutions of ``0.5||x - D a||^2 + lam ||a||_1`` for all lam.

    The lasso solution is piecewise linear in lam between the knots of the
    homotopy (LARS-lasso) path, so it is evaluated exactly by linear
    interpolation between knots.  scikit-learn's ``lars_path`` returns knots
    scaled by 1/m (its objective is ``(1/2m)||.||^2 + alpha||.||_1``); they are
    multiplied by m here, and the first knot is set to exactly
    ``||D^T x||_inf`` (rounding in the rescaling could leave a nonzero code
    at that lam).  For lam below the last knot the last knot's
    solution is returned (the path ends at lam = 0, or when m coefficients are
    active).  Entries that are zero at both ends of an interval are exactly 0.
    """

    def __init__(self, D: np.ndarray, x: np.ndarray, gram: np.ndarray | None = None):
        D = np.asarray(D, dtype=float)
        x = np.asarray(x, dtype=float)
        self.k = D.shape[1]
        m = D.shape[0]
        xy = D.T @ x
        self.lam_max = float(np.max(np.abs(xy))) if self.k else 0.0
        if self.k == 0 or self.lam_max == 0.0:
            self.knots = np.array([0.0])
            self.coefs = np.zeros((self.k, 1))
            return
        G = D.T @ D if gram is None else gram
        alphas, _, coefs = lars_path(D, x, Xy=xy, Gram=G, method="lasso", max_iter=10 * self.k + 10)
        self.knots = alphas * m  # decreasing
        self.knots[0] = self.lam_max  # the first knot is ||D^T x||_inf by definition
        self.coefs = coefs

    def __call__(self, lam: float) -> np.ndarray:
        knots, coefs = self.knots, self.coefs
        if lam >= knots[0]:
            return np.zeros(self.k)
        if lam <= knots[-1]:
            return coefs[:, -1].copy()
        # knots[i] > lam >= knots[i+1] with knots[i] > knots[i+1]
        i = int(np.nonzero(knots > lam)[0][-1])
        hi, lo = knots[i], knots[i + 1]
        t = (hi - lam) / (hi - lo)
        a = (1.0 - t) * coefs[:, i] + t * coefs[:, i + 1]
        a[(coefs[:, i] == 0) & (coefs[:, i + 1] == 0)] = 0.0
        return a


def lasso_path_solution(D: np.ndarray, x: np.ndarray, lam: float) -> np.ndarray:
    """Exact solution of ``min_a 0.5||x - D a||_2^2 + lam ||a||_1`` (step 4).

    The LARS path is checked against the optimality conditions; where it
    fails them (some scikit-learn/NumPy builds drop a knot: seen with
    scikit-learn 1.6.0 and NumPy 1.24), coordinate descent gives the answer.
    """
    D = np.asarray(D, dtype=float)
    x = np.asarray(x, dtype=float)
    a = _LassoPath(D, x)(float(lam))
    g = D.T @ (x - D @ a)
    act = a != 0
    scale = max(1.0, float(np.abs(D.T @ x).max(initial=0.0)))
    bad = (np.abs(g[act] - lam * np.sign(a[act])).max(initial=0.0) > 1e-9 * scale
           or (np.abs(g[~act]) - lam).max(initial=-1.0) > 1e-9 * scale)
    return lasso_cd(D, x, lam) if bad else a


def lasso_cd(D: np.ndarray, x: np.ndarray, lam: float, tol: float = 1e-13, max_sweeps: int = 100000) -> np.ndarray:
    """Cyclic coordinate descent for the same lasso (independent cross-check).

    Coordinates with ``||d_j|| = 0`` stay 0.  Stops when the largest coordinate
    change in a sweep is below ``tol`` times ``max(1, max|a|)``.
    """
    D = np.asarray(D, dtype=float)
    G = D.T @ D
    c = D.T @ np.asarray(x, dtype=float)
    k = D.shape[1]
    a = np.zeros(k)
    for _ in range(max_sweeps):
        delta = 0.0
        for j in range(k):
            if G[j, j] <= 0.0:
                continue
            r = c[j] - G[j] @ a + G[j, j] * a[j]
            new = np.sign(r) * max(abs(r) - lam, 0.0) / G[j, j]
            delta = max(delta, abs(new - a[j]))
            a[j] = new
        if delta <= tol * max(1.0, float(np.max(np.abs(a)))):
            break
    return a


def lambda_for_count(
    x: np.ndarray,
    D: np.ndarray,
    beta_c: int,
    eps_beta: int = 0,
    eps_lambda: float = 1e-6,
    max_iter: int = 200,
    gram: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Alg. 2 (l.221-240) applied to the lasso of step 4: lambda_c giving ~beta_c nonzeros.

    Literal bisection of Alg. 2 with ``lam_min = 0``, ``lam_max = ||D^T x||_inf``
    (the lasso analogue of ``max(u^+)``: the smallest lam whose solution is 0)::

        lam_mean = (lam_min + lam_max) / 2
        beta*    = nnz(lasso(lam_mean))           (exact nonzeros, see _LassoPath)
        if (lam_max - lam_min) / lam_max < eps_lambda or |beta* - beta_c| <= eps_beta:
            return lam_mean
        elif beta* > beta_c: lam_min = lam_mean
        else:                lam_max = lam_mean

    Tie / stop rules: the count is tested first (step 7 tests both; either
    stops).  When beta_c cannot be reached (beta_c >= k, or ties in the path)
    the bracket-width rule stops it, at the lam_mean of that last bracket.  If
    ``D^T x = 0`` no lam gives nonzeros: returns ``(0.0, zeros)`` (the
    least-norm least-squares solution).  ``max_iter`` guards the loop; with
    ``eps_lambda = 1e-6`` it is never reached (about 20 halvings).

    Returns ``(lambda_c, code)`` with ``code`` the exact lasso solution at
    ``lambda_c``.
    """
    path = _LassoPath(D, x, gram)
    k = path.k
    if k == 0 or path.lam_max == 0.0:
        return 0.0, np.zeros(k)
    lam_min, lam_max = 0.0, path.lam_max
    for _ in range(max_iter):
        lam_mean = 0.5 * (lam_min + lam_max)
        a = path(lam_mean)
        nnz = int(np.count_nonzero(a))
        if abs(lam_max - lam_min) / lam_max < eps_lambda or abs(nnz - beta_c) <= eps_beta:
            return lam_mean, a
        if nnz > beta_c:
            lam_min = lam_mean
        else:
            lam_max = lam_mean
    return lam_mean, a


def sparse_codes(
    X: np.ndarray,
    D: np.ndarray,
    beta_c: int,
    eps_beta: int = 0,
    eps_lambda: float = 1e-6,
) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a batch (steps 4 and 9): ``lambda_for_count`` per column of X (l.207).

    Returns ``(codes (k, n), lambdas (n,))``.
    """
    X = np.asarray(X, dtype=float)
    D = np.asarray(D, dtype=float)
    k, n = D.shape[1], X.shape[1]
    codes = np.zeros((k, n))
    lams = np.zeros(n)
    G = D.T @ D
    for i in range(n):
        lams[i], codes[:, i] = lambda_for_count(X[:, i], D, beta_c, eps_beta, eps_lambda, gram=G)
    return codes, lams


# --------------------------------------------------------------------------
# Dictionary update (steps 12-19 of Alg. 1)
# --------------------------------------------------------------------------
def lambda_for_vector_count(u: np.ndarray, beta: int, eps_beta: int = 0, eps_lambda: float = 1e-6, max_iter: int = 200) -> float:
    """Alg. 2 (l.221-240) literally, for a vector u: lam with nnz((|u| - lam)_+) ~ beta.

    Same bisection and stop rules as ``lambda_for_count``.  Extra rule: if u
    has at most beta nonzeros already, lam = 0 (no sparsification needed,
    "lam_min = 0 (if no sparsity)", l.225); this also covers u = 0.
    """
    up = np.abs(np.asarray(u, dtype=float))
    if np.count_nonzero(up) <= beta:
        return 0.0
    lam_min, lam_max = 0.0, float(up.max())
    lam_mean = 0.0
    for _ in range(max_iter):
        lam_mean = 0.5 * (lam_min + lam_max)
        nnz = int(np.count_nonzero(np.maximum(up - lam_mean, 0.0)))
        if abs(lam_max - lam_min) / lam_max < eps_lambda or abs(nnz - beta) <= eps_beta:
            return lam_mean
        if nnz > beta:
            lam_min = lam_mean
        else:
            lam_max = lam_mean
    return lam_mean


def prox_count(u: np.ndarray, beta_d: int, mode: str = "soft", eps_lambda: float = 1e-6) -> np.ndarray:
    """Step 15 (l.180): sparsify u to beta_d nonzeros.

    ``mode="soft"`` (paper): ``sgn(u)(|u| - lam_j)_+`` with lam_j from Alg. 2
    (``lambda_for_vector_count``, eps_beta = 0): keeps the beta_d
    largest-magnitude entries (when there are no ties at the threshold) and
    shrinks them by lam_j.
    ``mode="hard"``: keep the beta_d largest-magnitude entries unchanged (ties
    broken towards the lower index, stable sort), zero the rest.
    """
    u = np.asarray(u, dtype=float)
    if mode == "soft":
        lam = lambda_for_vector_count(u, beta_d, 0, eps_lambda)
        return np.sign(u) * np.maximum(np.abs(u) - lam, 0.0)
    if mode == "hard":
        out = np.zeros_like(u)
        keep = np.argsort(-np.abs(u), kind="stable")[:beta_d]
        out[keep] = u[keep]
        return out
    raise ValueError(f"unknown prox mode {mode!r}")


def group_shrink(v: np.ndarray, thr: float) -> np.ndarray:
    """Step 16 (l.183): ``w = v (1 - thr/||v||_2)_+``; ``w = 0`` when ``||v|| <= thr``.

    The extraction shows ``v_j (1 - lambda_g/||v_j||_2)`` without ``(.)_+``;
    the positive part is restored from l.215 ("all elements with l2-norm below
    lambda_g are set to zero").  ``||v|| = 0`` gives 0.
    """
    v = np.asarray(v, dtype=float)
    nv = float(np.linalg.norm(v))
    if nv <= thr or nv == 0.0:
        return np.zeros_like(v)
    return v * (1.0 - thr / nv)


@dataclass
class UpdateInfo:
    sweeps: int
    converged: bool
    rel_change: float


def column_update(
    D: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    lambda_g: float = 0.0,
    beta_d: int | None = None,
    tol: float = 1e-6,
    max_sweeps: int = 100,
    *,
    prox_mode: str = "soft",
    shrink_scale: str = "unit",
    unused: str = "skip",
) -> tuple[np.ndarray, UpdateInfo]:
    """Block-coordinate descent of steps 12-19 (l.172-190); returns ``(D_new, info)``.

    One sweep visits j = 0..k-1 in order, in place (Gauss-Seidel: later
    columns see the already updated earlier ones)::

        if A_jj <= 0: (with A PSD this means a_j = 0, and b_j = 0 for codes of
                      the data seen: eq. (4) is 0/0, the data term does not
                      involve d_j)
            unused="skip": skip column j, d_j unchanged (default);
            unused="prox": u_j = d_j, then steps 15-17 as below (the group
                           shrink then wears an unused element down by
                           lambda_g per sweep until it dies)
            unused="zero": u_j = 0 (the authors' updateD.m divides
                           (b_j - D a_j + A_jj d_j) = 0 by 1e-100), so d_j = 0
        else:
            u_j = (b_j - D a_j) / A_jj + d_j # = (b_j - sum_{k!=j} d_k a_jk)/a_jj, eq. (4)
        v_j = prox_count(u_j, beta_d)         # step 15, only if beta_d is not None
        w_j = group_shrink(v_j, thr)          # step 16, thr = lambda_g ("unit")
                                              #   or lambda_g / A_jj ("ajj")
        d_j = w_j / max(1, ||w_j||_2)         # step 17 (the extraction's
                                              #   "omega_j" is w_j)

    Order: sparsify (15), then group shrink (16), then project (17), as in
    Alg. 1 (l.180-185).  Convergence (l.139, l.195: "the magnitude of change
    between the two successive versions of the dictionary"): stop after the
    first sweep with ``||D_new - D_old||_F <= tol * max(||D_old||_F, 1e-12)``,
    or after ``max_sweeps`` sweeps (always ``max_sweeps`` with ``tol=None``).  Zeroed columns are NOT removed here
    (see ``NODLReference``); a zeroed column can come back in a later sweep.
    """
    D = np.array(D, dtype=float, copy=True)
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    k = D.shape[1]
    rel = np.inf
    sweeps = 0
    converged = False
    for sweeps in range(1, max_sweeps + 1):
        D_old = D.copy()
        for j in range(k):
            ajj = A[j, j]
            if ajj <= 0.0:
                if unused == "skip":
                    continue
                if unused == "zero":
                    u = np.zeros(D.shape[0])
                elif unused == "prox":
                    u = D[:, j].copy()
                else:
                    raise ValueError(f"unknown unused rule {unused!r}")
            else:
                u = (B[:, j] - D @ A[:, j]) / ajj + D[:, j]
            v = prox_count(u, beta_d, prox_mode) if beta_d is not None else u
            if shrink_scale == "unit":
                thr = lambda_g
            elif shrink_scale == "ajj":
                thr = lambda_g / ajj if ajj > 0.0 else lambda_g
            else:
                raise ValueError(f"unknown shrink_scale {shrink_scale!r}")
            w = group_shrink(v, thr) if lambda_g > 0 else v
            D[:, j] = w / max(1.0, float(np.linalg.norm(w)))
        change = float(np.linalg.norm(D - D_old))
        rel = change / max(float(np.linalg.norm(D_old)), 1e-12)
        if tol is not None and rel <= tol:
            converged = True
            break
    return D, UpdateInfo(sweeps, converged, rel)


def surrogate_objective(D: np.ndarray, A: np.ndarray, B: np.ndarray, lambda_g: float = 0.0, weighted: bool = False) -> float:
    """``0.5 tr(D^T D A) - tr(D^T B) + lambda_g sum_j c_j ||d_j||``, eq. (3) + group term.

    ``c_j = 1`` (eq. (6) up to the 1/t scaling) or, with ``weighted=True``,
    ``c_j = A_jj`` -- the objective whose exact block minimiser steps 14-17 are.
    """
    D = np.asarray(D, dtype=float)
    norms = np.linalg.norm(D, axis=0)
    c = np.diag(A) if weighted else np.ones(D.shape[1])
    return float(0.5 * np.trace(D.T @ D @ A) - np.trace(D.T @ B) + lambda_g * np.sum(c * norms))


# --------------------------------------------------------------------------
# Accuracy (step 5), births (steps 6-8)
# --------------------------------------------------------------------------
def _corr_cols(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    Xc = X - X.mean(axis=0, keepdims=True)
    Yc = Y - Y.mean(axis=0, keepdims=True)
    nx = np.sqrt(np.sum(Xc * Xc, axis=0))
    ny = np.sqrt(np.sum(Yc * Yc, axis=0))
    den = nx * ny
    out = np.zeros(X.shape[1])
    ok = den > 0
    out[ok] = np.sum(Xc * Yc, axis=0)[ok] / den[ok]
    return out


def coding_dictionary(D: np.ndarray, normalize: str = "none") -> np.ndarray:
    """The dictionary the codes are computed against, ``(m, k)``.

    "none": ``D`` (Alg. 1 as printed, l.153); "unit": each column over its
    l2 norm; "center_unit": each column minus its mean, then over its l2 norm
    -- the authors' released code, which codes against ``normalize(D)``
    (Skoglund's ElasticNet ``normalize``: ``center`` then unit length), the
    normalisation Sec. 4 credits for ODL's small adaptation.  A column whose
    norm (after centring) is 0 stays all-zero.
    """
    D = np.array(D, dtype=float, copy=True)
    if normalize == "none":
        return D
    if normalize == "center_unit":
        D = D - D.mean(axis=0, keepdims=True)
    elif normalize != "unit":
        raise ValueError(f"unknown normalize {normalize!r}")
    norms = np.sqrt((D * D).sum(axis=0))
    out = np.zeros_like(D)
    ok = norms > 0
    out[:, ok] = D[:, ok] / norms[ok]
    return out


def pearson_accuracy(X: np.ndarray, D: np.ndarray, codes: np.ndarray, method: str = "pearson", per_sample: bool = False):
    """p_c(x, D, alpha) of step 5 (l.157): correlation over features of x_i and D alpha_i.

    Batch value = mean over the samples of the batch (l.128).  A sample whose
    reconstruction (or itself) is constant -- e.g. the zero code -- counts as
    correlation 0 (the correlation is undefined there; 0 means "no
    reconstruction", which triggers births).  ``method="spearman"`` ranks each
    column first (average ranks for ties, l.213).
    """
    X = np.asarray(X, dtype=float)
    R = np.asarray(D, dtype=float) @ np.asarray(codes, dtype=float)
    if R.ndim == 1:
        R = R.reshape(X.shape)
    if method == "spearman":
        X = rankdata(X, axis=0)
        R = rankdata(R, axis=0)
    elif method != "pearson":
        raise ValueError(f"unknown method {method!r}")
    r = _corr_cols(X, R)
    return r if per_sample else float(r.mean())


def births_count(p_c: float, gamma: float, c_k: int, rounding: str = "half_up") -> int:
    """Steps 5-6 (l.157-158): ``k_n = round((1 - p_c) c_k)`` if ``p_c <= gamma`` else 0.

    The paper gives no rounding rule.  ``rounding``: "half_up" (default,
    ``floor(x + 1/2)``), "half_even" (``np.rint``), "ceil" (at least one birth
    whenever triggered with p_c < 1) or "floor".  The result is clipped to
    ``[0, c_k]`` ("bounded by c_k", l.128; p_c < 0 is possible).
    """
    if p_c > gamma or c_k <= 0:
        return 0
    x = (1.0 - p_c) * c_k
    if rounding == "half_up":
        kn = np.floor(x + 0.5)
    elif rounding == "half_even":
        kn = np.rint(x)
    elif rounding == "ceil":
        kn = np.ceil(x)
    elif rounding == "floor":
        kn = np.floor(x)
    else:
        raise ValueError(f"unknown rounding {rounding!r}")
    return int(min(max(int(kn), 0), c_k))


def draw_elements(rng: np.random.Generator, m: int, k_n: int, beta_d: int | None = None,
                  distribution: str = "normal") -> np.ndarray:
    """initializeRand(k_n) of step 7 (l.161): random unit-norm columns, ``(m, k_n)``.

    Draw order, exactly (element-major, so the first elements do not depend
    on k_n):
      1. ``Z = rng.standard_normal((k_n, m))`` -- one call; row i of Z is
         newborn i (the i-th new column of D, the i-th new id);
      2. only if ``beta_d`` is not None and ``beta_d < m``: in each row keep
         the beta_d largest |entries| (``np.argsort(-|z|, kind="stable")``,
         ties to the lower index) and set the rest to 0;
      3. divide each row by its l2 norm; return ``Z.T``.
    No other draws are made.  The paper's newborns are dense ("randomly
    initialized with non-zero support in all the dimensions", l.328) and are
    sparsified by step 15 at the next update; step 2 is the optional
    "sparse newborn" variant.  ``distribution="centered_uniform"`` replaces
    step 1 by ``Z = rng.random((k_n, m))`` with each row's mean subtracted:
    the authors' ``normalize(rand(n, k_n))``.
    """
    if k_n == 0:
        return np.zeros((m, 0))
    if distribution == "normal":
        Z = rng.standard_normal((k_n, m))
    elif distribution == "centered_uniform":
        Z = rng.random((k_n, m))
        Z = Z - Z.mean(axis=1, keepdims=True)
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    if beta_d is not None and beta_d < m:
        for i in range(k_n):
            drop = np.argsort(-np.abs(Z[i]), kind="stable")[beta_d:]
            Z[i, drop] = 0.0
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return Z.T.copy()


# --------------------------------------------------------------------------
# Alg. 1
# --------------------------------------------------------------------------
VARIANTS = {
    # name: (births, group sparsity allowed, re-initialise dead elements)
    "ODL": dict(birth=False, group=False, reinit_dead=False),
    "ODL*": dict(birth=False, group=False, reinit_dead=True),
    "NODL": dict(birth=True, group=True, reinit_dead=False),
    "NODL+": dict(birth=True, group=False, reinit_dead=False),
    "NODL-": dict(birth=False, group=True, reinit_dead=False),
}


@dataclass
class StepRecord:
    step: int
    accuracy: float  # p_c before births (step 5)
    k_before: int
    k_born: int
    k_died: int
    k_after: int
    sweeps: int
    accuracy_after_birth: float | None = None  # p_c with the re-encoded batch (step 9)


@dataclass
class NODLReference:
    """Online loop of Alg. 1 (l.141-193) for ODL, ODL*, NODL, NODL+ and NODL-.

    ``variant`` fixes which mechanisms are on (l.244, l.468); a nonzero
    ``lambda_g`` for a variant without group sparsity is an error:

    ======  ======  ===============  ===========================
    name    births  lambda_g used    dead-element handling
    ======  ======  ===============  ===========================
    ODL     no      0 (forced)       zero columns kept
    ODL*    no      0 (forced)       zero columns redrawn
    NODL    yes     lambda_g         zero columns removed
    NODL+   yes     0 (forced)       zero columns kept
    NODL-   no      lambda_g         zero columns removed
    ======  ======  ===============  ===========================

    One call of ``step(X)`` with a batch ``X (m, n)`` performs:

    1. codes ``alpha = sparse_codes(X, D, beta_c)`` (step 4);
    2. ``p = pearson_accuracy(X, D, alpha, accuracy_method)`` (step 5;
       "pearson" as in the paper, or "spearman", l.213);
    3. births (NODL, NODL+): ``k_n = births_count(p, gamma, c_k, kn_rounding)``; if > 0,
       ``D_n = draw_elements(rng, m, k_n, beta_d if sparse_births else None)``,
       ``D = [D D_n]``, A padded with zero rows/columns, B with zero columns
       (step 8), fresh ids, event ``(t, "birth", ids)``, and the batch is
       re-encoded with the extended D (step 9);
    4. ``A += alpha alpha^T``, ``B += X alpha^T`` (sums over the batch, step 11;
       l.110 -- no 1/n, no forgetting, A = B = 0 initially, step 1);
    5. ``D = column_update(D, A, B, lambda_g, beta_d, tol, max_sweeps)``
       (steps 12-19);
    6. deaths (NODL, NODL-; only when lambda_g > 0): every column with
       ``||d_j|| == 0`` after step 5 is removed with row/column j of A and
       column j of B; event ``(t, "death", ids)``;
    7. ODL*: every column with ``||d_j|| == 0`` is redrawn in place with
       ``draw_elements(rng, m, n_dead, ...)`` (columns in increasing position
       order), keeps its id, and its row/column of A and column of B are set
       to 0 (its statistics described the dead element; keeps A PSD); event
       ``(t, "reinit", ids)``.  The paper re-initialises and "continue[s]
       updating them ... on the current batch" (l.468); here the redrawn
       element first takes part in the next batch (an interpretation).
       With ``reinit_as_birth=True`` the dead columns are instead removed
       (event ``(t, "death", ids)``) and as many newborns appended with
       fresh ids (event ``(t, "birth", new_ids)``), A/B padded with zeros.

    With ``normalize`` (see ``coding_dictionary``) steps 1, 2 and the
    re-encoding code against, and reconstruct with, ``coding_dictionary(D,
    normalize)``; those codes go into A and B; steps 5-7 act on D itself.

    Other options: ``kn_rounding`` (see ``births_count``), ``unused`` (the
    A_jj = 0 rule of ``column_update``), ``prox_mode`` and ``shrink_scale``
    (see ``column_update``), ``sparse_births`` (see ``draw_elements``).

    After each step: ``last_codes`` (the codes added to A, B in step 11, i.e.
    after re-encoding), ``last_ids`` (the ids of their rows), ``last_born``
    (the drawn ``D_n`` or None), ``history`` (``StepRecord`` per step).

    ``t`` counts batches from 0.  Ids: the initial columns get
    ``0..k0-1``; newborns get ``next_id, next_id+1, ...``; ids are never
    reused.  All random numbers come from ``rng`` and only from
    ``draw_elements`` (births then re-initialisations, in that order per step).
    """

    D0: np.ndarray
    rng: np.random.Generator
    variant: str = "NODL"
    beta_c: int = 5
    beta_d: int | None = None
    gamma: float = 0.9
    c_k: int = 10
    lambda_g: float = 0.0
    tol: float = 1e-6
    max_sweeps: int = 100
    sparse_births: bool = False
    kn_rounding: str = "half_up"
    unused: str = "skip"
    reinit_as_birth: bool = False
    prox_mode: str = "soft"
    shrink_scale: str = "unit"
    eps_beta: int = 0
    eps_lambda: float = 1e-6
    accuracy_method: str = "pearson"
    normalize: str = "none"
    newborn_distribution: str = "normal"
    D: np.ndarray = field(init=False)
    A: np.ndarray = field(init=False)
    B: np.ndarray = field(init=False)
    ids: list = field(init=False)
    next_id: int = field(init=False)
    t: int = field(init=False, default=0)
    events: list = field(init=False, default_factory=list)
    history: list = field(init=False, default_factory=list)
    last_codes: np.ndarray | None = field(init=False, default=None)
    last_ids: tuple = field(init=False, default=())
    last_born: np.ndarray | None = field(init=False, default=None)

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}")
        spec = VARIANTS[self.variant]
        self._birth = spec["birth"]
        self._reinit = spec["reinit_dead"]
        if not spec["group"] and self.lambda_g != 0.0:
            raise ValueError(f"{self.variant} has no group sparsity (lambda_g = 0, l.244); got {self.lambda_g}")
        self._lambda_g = self.lambda_g
        self.D = np.array(self.D0, dtype=float, copy=True)
        m, k = self.D.shape
        self.A = np.zeros((k, k))
        self.B = np.zeros((m, k))
        self.ids = list(range(k))
        self.next_id = k

    @property
    def k(self) -> int:
        return self.D.shape[1]

    def coding_dictionary(self) -> np.ndarray:
        return coding_dictionary(self.D, self.normalize)

    def encode(self, X: np.ndarray) -> np.ndarray:
        return sparse_codes(X, self.coding_dictionary(), self.beta_c, self.eps_beta, self.eps_lambda)[0]

    def accuracy(self, X: np.ndarray, method: str = "pearson") -> float:
        return pearson_accuracy(X, self.coding_dictionary(), self.encode(X), method)

    def step(self, X: np.ndarray) -> StepRecord:
        X = np.asarray(X, dtype=float)
        m = self.D.shape[0]
        t = self.t
        k_before = self.k
        codes = self.encode(X)
        p = pearson_accuracy(X, self.coding_dictionary(), codes, self.accuracy_method)
        k_born = 0
        p_after = None
        self.last_born = None
        if self._birth:
            k_born = births_count(p, self.gamma, self.c_k, self.kn_rounding)
            if k_born > 0:
                Dn = draw_elements(self.rng, m, k_born, self.beta_d if self.sparse_births else None,
                                   self.newborn_distribution)
                self.last_born = Dn.copy()
                self.D = np.concatenate([self.D, Dn], axis=1)
                k = self.k
                A = np.zeros((k, k))
                A[:k_before, :k_before] = self.A
                self.A = A
                self.B = np.concatenate([self.B, np.zeros((m, k_born))], axis=1)
                new_ids = list(range(self.next_id, self.next_id + k_born))
                self.next_id += k_born
                self.ids.extend(new_ids)
                self.events.append((t, "birth", tuple(new_ids)))
                codes = self.encode(X)
                p_after = pearson_accuracy(X, self.coding_dictionary(), codes, self.accuracy_method)
        self.last_codes = codes
        self.last_ids = tuple(self.ids)
        self.A = self.A + codes @ codes.T
        self.B = self.B + X @ codes.T
        self.D, info = column_update(
            self.D, self.A, self.B, self._lambda_g, self.beta_d, self.tol, self.max_sweeps,
            prox_mode=self.prox_mode, shrink_scale=self.shrink_scale, unused=self.unused,
        )
        dead = np.nonzero(np.linalg.norm(self.D, axis=0) == 0.0)[0]
        k_died = 0
        if self._lambda_g > 0 and dead.size:
            keep = np.setdiff1d(np.arange(self.k), dead)
            died = tuple(self.ids[j] for j in dead)
            self.D = self.D[:, keep]
            self.A = self.A[np.ix_(keep, keep)]
            self.B = self.B[:, keep]
            self.ids = [self.ids[j] for j in keep]
            self.events.append((t, "death", died))
            k_died = len(died)
        elif self._reinit and dead.size and not self.reinit_as_birth:
            self.D[:, dead] = draw_elements(self.rng, m, dead.size, self.beta_d if self.sparse_births else None,
                                                   self.newborn_distribution)
            self.A[dead, :] = 0.0
            self.A[:, dead] = 0.0
            self.B[:, dead] = 0.0
            self.events.append((t, "reinit", tuple(self.ids[j] for j in dead)))
        elif self._reinit and dead.size:
            keep = np.setdiff1d(np.arange(self.k), dead)
            died = tuple(self.ids[j] for j in dead)
            n_new = dead.size
            Dn = draw_elements(self.rng, m, n_new, self.beta_d if self.sparse_births else None,
                               self.newborn_distribution)
            self.D = np.concatenate([self.D[:, keep], Dn], axis=1)
            A = np.zeros((self.k, self.k))
            A[: keep.size, : keep.size] = self.A[np.ix_(keep, keep)]
            self.A = A
            self.B = np.concatenate([self.B[:, keep], np.zeros((m, n_new))], axis=1)
            new_ids = list(range(self.next_id, self.next_id + n_new))
            self.next_id += n_new
            self.ids = [self.ids[j] for j in keep] + new_ids
            self.events.append((t, "death", died))
            self.events.append((t, "birth", tuple(new_ids)))
        rec = StepRecord(t, p, k_before, k_born, k_died, self.k, info.sweeps, p_after)
        self.history.append(rec)
        self.t += 1
        return rec

    def run(self, batches) -> list:
        return [self.step(X) for X in batches]
