"""Iteration counts and stopping rules the basis learners report, against their documented definitions.

``epsilon_l1_codes`` stops each sample on ``||grad f(a)||_inf <= tol * max(lam,
||D x||_inf)`` and reports the CG iterations it ran; ``learn_bases`` runs at
most ``max_iter`` alternations and reports how many. The oracle is the
gradient of Eq. 2 with the epsilon-L1 penalty, recomputed here with NumPy,
and the documented counts themselves.
"""

import warnings

import numpy as np
import pytest

from neurosim.coding.basis import epsilon_l1_codes, learn_bases
from neurosim.coding.encoders import NonConvergenceWarning


def _problem(seed, scale, n_samples=6, n_atoms=5, n_features=4):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = scale * rng.standard_normal((n_samples, n_features))
    return X, D


def _gradient(X, D, A, lam, eps):
    """grad f(a) = D D^T a - D x + lam a / sqrt(a^2 + eps), row-wise (Eq. 2, epsilon-L1 penalty of Eq. 1)."""
    return A @ (D @ D.T) - X @ D.T + lam * A / np.sqrt(A * A + eps)


def _threshold(X, D, tol, lam):
    return tol * np.maximum(lam, np.max(np.abs(X @ D.T), axis=1))


@pytest.mark.parametrize("scale", [1e-9, 1e9])
def test_tiny_and_huge_signals_get_the_codes_of_the_same_problem_at_scale_one(scale):
    """Issue 38: the rule is relative, so signals of 1e-9 (with ``lam`` and ``sqrt(eps)`` scaled alike) are coded,
    not left at the zero start (the floor ``max(1, .)`` of the rule before met it at once). The oracle: the
    codes at scale 1 meet the stationarity of Eq. 2 to ``1e-9`` of the gradient's scale; the rescaled ones must
    be those codes rescaled."""
    X, D = _problem(0, scale=1.0)
    lam, eps, tol = 0.1, 1e-3, 1e-10
    A1 = epsilon_l1_codes(X, D, lam, eps, tol=tol)
    assert np.max(np.abs(_gradient(X, D, A1, lam, eps))) <= 1e-9 * np.max(np.abs(X @ D.T))
    A = epsilon_l1_codes(scale * X, D, scale * lam, scale**2 * eps, tol=tol)
    np.testing.assert_allclose(A / scale, A1, rtol=1e-7, atol=1e-7 * np.abs(A1).max())


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e3])
def test_eps_l1_runs_exactly_until_every_sample_meets_the_documented_rule(scale):
    """n_iter is the first CG iteration at which every sample meets ||grad||_inf <= tol * max(lam, ||D x||_inf)."""
    X, D = _problem(1, scale)
    lam, eps, tol = 0.05 * scale, 1e-2 * scale**2, 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        A, n_iter = epsilon_l1_codes(X, D, lam, eps, tol=tol, return_n_iter=True)
    thresh = _threshold(X, D, tol, lam)
    assert n_iter >= 1
    assert np.all(np.max(np.abs(_gradient(X, D, A, lam, eps)), axis=1) <= thresh)
    # one CG iteration fewer (the same deterministic iterates, cut short) leaves some sample above the rule
    with pytest.warns(NonConvergenceWarning, match="did not reach the gradient tolerance"):
        A_short = epsilon_l1_codes(X, D, lam, eps, tol=tol, max_iter=n_iter - 1)
    assert np.any(np.max(np.abs(_gradient(X, D, A_short, lam, eps)), axis=1) > thresh)


@pytest.mark.parametrize("max_iter", [1, 2, 4])
def test_learner_runs_max_iter_alternations_when_tol_is_zero(max_iter):
    """With tol=0 the relative-change rule never holds: exactly max_iter alternations, one callback each."""
    X, _ = _problem(2, 1.0, n_samples=20, n_features=6)
    seen = []
    res = learn_bases(X, 4, 0.1, tol=0.0, max_iter=max_iter, seed=0, callback=lambda s: seen.append(s["iteration"]))
    assert res.n_iter == max_iter and not res.converged
    assert len(res.objective) == len(res.times) == max_iter + 1
    assert seen == list(range(1, max_iter + 1))


def test_learner_with_zero_iterations_returns_the_initial_codes():
    """max_iter=0: no alternation, the objective history holds the initial coding only."""
    X, _ = _problem(3, 1.0, n_samples=10, n_features=6)
    res = learn_bases(X, 4, 0.1, tol=0.0, max_iter=0, seed=0)
    assert res.n_iter == 0 and not res.converged and len(res.objective) == 1


def _dual_projected_gradient(X, A, c, dual):
    """max_i H_ii |lam_i - max(lam_i - g_i / H_ii, 0)| with g_i = c - ||d_i(lam)||^2, d(lam) = (A^T A + diag lam)^-1
    A^T X (Eq. 9, 11) and H_ii = 2 ||d_i||^2 ((A^T A + diag lam)^-1)_ii, the Hessian's diagonal (Eq. 10)."""
    M = np.linalg.inv(A.T @ A + np.diag(dual))
    D = M @ (A.T @ X)
    norms = np.einsum("ij,ij->i", D, D)
    g = c - norms
    h = 2.0 * norms * np.diag(M)
    return float(np.max(np.abs(h * (dual - np.maximum(dual - g / h, 0.0)))))


@pytest.mark.parametrize("c", [0.7, 1e-3, 1e3])  # the stopping rule scales with c: tol * c, not tol
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lagrange_dual_reports_the_first_newton_step_whose_projected_gradient_meets_tol(seed, tol, c):
    """n_iter is the first step whose duals meet ``max|pg| <= tol c`` (recomputed here); fewer steps warn,
    and the warning reports that projected gradient."""
    import re

    from neurosim.coding.basis import lagrange_dual_bases
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((40, 5))
    # X scaled with sqrt(c): the bases' norms bind as for c = 1; tol stays well above the rounding floor,
    # where the decrement stop would end the run instead
    X = 3.0 * np.sqrt(c) * rng.standard_normal((40, 8))
    _, dual, n_iter = lagrange_dual_bases(X, A, c, tol=tol, return_n_iter=True)
    assert 1 <= n_iter <= 30
    assert _dual_projected_gradient(X, A, c, dual) <= tol * c * (1 + 1e-6)
    for m in range(n_iter):
        with pytest.warns(NonConvergenceWarning, match=f"after {m} Newton steps") as rec:
            _, dual_m = lagrange_dual_bases(X, A, c, tol=tol, max_iter=m)
        pg = _dual_projected_gradient(X, A, c, dual_m)
        assert pg > tol * c
        reported = float(re.search(r"projected gradient (\S+) >", str(rec[0].message)).group(1))
        assert reported == pytest.approx(pg, rel=6e-3)  # printed to 3 significant digits
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, dual_n = lagrange_dual_bases(X, A, c, tol=tol, max_iter=n_iter)
    np.testing.assert_array_equal(dual_n, dual)


@pytest.mark.parametrize("seed", [0, 1])
def test_one_alternation_is_feature_sign_then_the_dual_at_its_documented_tolerance(seed):
    """learn_bases' first alternation: feature-sign codes, then lagrange_dual_bases at tol 1e-10 (docstring), bit for bit."""
    from neurosim.coding.basis import lagrange_dual_bases
    from neurosim.coding.encoders import feature_sign
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 6))
    D0 = rng.standard_normal((8, 6))
    D0 /= np.linalg.norm(D0, axis=1, keepdims=True)
    res = learn_bases(X, 8, 0.2, D_init=D0, max_iter=1, tol=0.0)
    A0 = feature_sign(X, D0, 0.2)
    D1, dual1 = lagrange_dual_bases(X, A0, 1.0, D_init=D0, tol=1e-10)
    np.testing.assert_array_equal(res.components, D1)
    np.testing.assert_array_equal(res.dual, dual1)
    np.testing.assert_array_equal(res.codes, feature_sign(X, D1, 0.2, init=A0))


def _pg_problem(seed, scale):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 4))
    X = scale * rng.standard_normal((30, 6))
    D0 = 0.1 * np.sqrt(scale) * rng.standard_normal((4, 6))
    return X, A, D0


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])  # the rule is relative: tol |f|, not tol
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
@pytest.mark.parametrize("seed", [0, 1])
def test_projected_gradient_stops_at_the_first_step_whose_relative_decrease_is_below_tol(seed, tol, scale):
    """projected_gradient_bases stops after the first step k with f(D_{k-1}) - f(D_k) <= tol |f(D_{k-1})|.

    The iterates are deterministic, so ``max_iter=k`` at ``tol=0`` gives the k-th one; the objective
    ``||X - A D||_F^2`` is evaluated here directly, not through the solver's trace formula. Cases where
    the decrease lies within 1e-9 of the threshold (where the two evaluations may disagree) are refused.
    """
    from neurosim.coding.basis import projected_gradient_bases
    X, A, D0 = _pg_problem(seed, scale)
    c = scale  # the ball binds for some rows at every scale

    def f(D):
        return float(np.sum((X - A @ D) ** 2))

    got = projected_gradient_bases(X, A, c, D_init=D0, tol=tol, max_iter=500)
    prev = f(projected_gradient_bases(X, A, c, D_init=D0, max_iter=0))
    for k in range(1, 500):
        with warnings.catch_warnings():  # k capped steps replayed on purpose; the cap's warning is tested below
            warnings.simplefilter("ignore", NonConvergenceWarning)
            D_k = projected_gradient_bases(X, A, c, D_init=D0, tol=0.0, max_iter=k)
        cur = f(D_k)
        margin = (prev - cur) - tol * abs(prev)
        assert abs(margin) > 1e-9 * abs(prev), "ambiguous case: pick another problem"
        if margin <= 0:
            break
        prev = cur
    assert 2 <= k < 500
    np.testing.assert_array_equal(got, D_k)
    # and it did not stop one step early; a cap of k steps meets the rule (no warning), k - 1 do not (issue 38:
    # a capped run warns)
    np.testing.assert_array_equal(projected_gradient_bases(X, A, c, D_init=D0, tol=tol, max_iter=k), got)
    with pytest.warns(NonConvergenceWarning, match=f"all max_iter={k - 1} steps"):
        short = projected_gradient_bases(X, A, c, D_init=D0, tol=tol, max_iter=k - 1)
    assert not np.array_equal(got, short)
