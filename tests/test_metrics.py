"""Eigenvalue and subspace errors (paper 002, Section VI-A; ref. [7])."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from neurosim.metrics import (
    eigenvalue_error,
    neural_filter,
    output_covariance,
    principal_subspace,
    row_space_basis,
    subspace_error,
)
from neurosim.models.similarity_matching import (
    REGULARIZERS,
    alpha_for_shrinkage,
    offline_filter,
    offline_output_eigenvalues,
    offline_solution,
)


# subspace_error evaluates (r + p - 2 ||V^T U||_F^2) / p: a zero error comes
# out as a cancellation of O(1) terms, i.e. a few ulps of 1 (5.9e-16 seen on
# some CPUs), not as a square of rounding errors.
_ZERO = 1e-13


def _orth(n, rng):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q


# --------------------------------------------------------------------------- #
# eigenvalue error
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_eigenvalue_error_zero_on_offline_solution_and_rotation_invariant(regularizer):
    rng = np.random.default_rng(0)
    n, T, k = 8, 500, 5
    X = (_orth(n, rng) * np.sqrt([5, 4, 3, 0.5, 0.3, 0.2, 0.1, 0.05])) @ rng.standard_normal((n, T))
    lam = np.linalg.eigvalsh(X @ X.T / T)
    alpha = alpha_for_shrinkage(lam, regularizer, 1.0, 3)
    target = offline_output_eigenvalues(lam, k, regularizer, alpha)
    Y = offline_solution(X, k, regularizer, alpha)  # paper layout (k, T)
    # E is a sum of squared eigenvalue differences that are zero up to
    # rounding: its square root must be a few thousand ulps of lambda_1 at most.
    tol = (1e-12 * lam.max()) ** 2
    assert eigenvalue_error(Y, target, time_axis=1) < tol
    assert eigenvalue_error(Y.T, target) < tol  # engine layout (T, k)
    Q = _orth(k, rng)
    assert eigenvalue_error(Q @ Y, target, time_axis=1) < tol
    # a perturbed output is penalized by exactly the squared eigenvalue shift
    Y2 = Y.copy()
    Y2[0] *= np.sqrt(1.1)  # top eigenvalue of (1/T) Y Y^T grows by 10 %
    assert eigenvalue_error(Y2, target, time_axis=1) == pytest.approx((0.1 * target[0]) ** 2, rel=1e-9)


def test_eigenvalue_error_hand_values_and_padding():
    C = np.diag([3.0, 1.0])
    assert eigenvalue_error(C, [2.0]) == pytest.approx(1.0 + 1.0)  # (3-2)^2 + (1-0)^2
    assert eigenvalue_error(C, [1.0, 3.0, 0.5]) == pytest.approx(0.25)  # target sorted, output padded
    R = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    assert eigenvalue_error(R @ C @ R.T, [3.0, 1.0]) < (1e-12 * 3.0) ** 2  # squared: eigenvalues to 1e-12
    # square sample matrices must be read as samples when asked
    Y = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(output_covariance(Y), Y.T @ Y / 2)
    assert eigenvalue_error(Y, np.linalg.eigvalsh(Y.T @ Y / 2), kind="samples") < (1e-12 * 15.0) ** 2  # lambda_1 < 15
    with pytest.raises(ValueError, match="symmetric"):
        eigenvalue_error(Y, [1.0], kind="covariance")


# --------------------------------------------------------------------------- #
# subspace error
# --------------------------------------------------------------------------- #
def test_subspace_error_hand_values():
    e = np.eye(4)
    U1 = e[:, :1]
    assert subspace_error(e[:1], U1) == pytest.approx(0.0, abs=_ZERO)
    assert subspace_error(e[1:2], U1) == pytest.approx(2.0)  # orthogonal lines
    assert subspace_error(e[:2], U1) == pytest.approx(1.0)  # one spurious dimension
    assert subspace_error(e[:1], e[:, :2]) == pytest.approx(0.5)  # one of two dimensions missing
    # 45-degree line vs e1: ||P - Q||^2 = 2 - 2 cos^2(45) = 1
    F = np.array([[1.0, 1.0, 0.0, 0.0]])
    assert subspace_error(F, U1) == pytest.approx(1.0)
    assert subspace_error(np.zeros((3, 4)), U1) == pytest.approx(1.0)  # nothing learned


@pytest.mark.parametrize("regularizer", REGULARIZERS)
def test_subspace_error_zero_for_offline_filter_and_invariances(regularizer):
    rng = np.random.default_rng(1)
    n, k = 10, 6
    lam = np.array([6.0, 5.0, 4.0, 2.0, 0.2, 0.15, 0.1, 0.08, 0.05, 0.01])
    V = _orth(n, rng)
    C = (V * lam) @ V.T
    alpha = alpha_for_shrinkage(lam, regularizer, 2.0, 3)
    F = offline_filter(C, k, regularizer, alpha)  # rows 4..6 are zero: outputs off
    U = principal_subspace(C, 3)
    assert subspace_error(F, U) < _ZERO
    Q = _orth(k, rng)
    assert subspace_error(Q @ F, U) < _ZERO  # U_k rotation mixes silent and active rows
    assert subspace_error(F, U @ _orth(3, rng)) < _ZERO
    # positive otherwise: compare with the top-4 subspace or a perturbed filter
    assert subspace_error(F, principal_subspace(C, 4)) == pytest.approx(0.25)
    Fp = F + 1e-2 * rng.standard_normal(F.shape) * (np.arange(k) < 3)[:, None]
    assert 1e3 * _ZERO < subspace_error(Fp, U) < 1e-2  # well above rounding, of order (1e-2)^2


def test_rank_deficient_filter_ignores_silent_outputs():
    rng = np.random.default_rng(2)
    U = np.eye(5)[:, :2]
    F = np.zeros((4, 5))
    F[:2, :2] = rng.standard_normal((2, 2))
    F[2] = 1e-9 * rng.standard_normal(5)  # decaying, "off" neuron
    assert subspace_error(F, U) < _ZERO
    assert subspace_error(F, U, rtol=1e-12) == pytest.approx(0.5, abs=1e-6)  # now counted as a direction
    assert row_space_basis(F).shape == (5, 2)
    assert row_space_basis(F, rank=3).shape == (5, 3)
    assert subspace_error(F, U, rank=1) == pytest.approx(0.5, abs=1e-12)  # top direction lies in span(U)


def test_neural_filter_is_jacobi_fixed_point():
    """Iterating Eq. 17 to convergence gives y = (I + W^YY)^{-1} W^YX x."""
    rng = np.random.default_rng(3)
    k, n = 4, 7
    W = rng.standard_normal((k, n))
    M = 0.1 * rng.standard_normal((k, k))
    np.fill_diagonal(M, 0.0)
    x = rng.standard_normal(n)
    y = np.zeros(k)
    for _ in range(3000):
        y = 0.9 * y + 0.1 * (W @ x - M @ y)
    np.testing.assert_allclose(neural_filter(W, M) @ x, y, rtol=1e-10)
    with pytest.raises(ValueError, match="singular"):
        neural_filter(W, -np.eye(k))


def test_principal_subspace():
    C = np.diag([1.0, 5.0, 3.0])
    U = principal_subspace(C, 2)
    np.testing.assert_allclose(np.abs(U), np.eye(3)[:, [1, 2]])


@settings(max_examples=examples(60), deadline=None)
@given(
    F=st.one_of(st.none(), st.integers(), st.text(), st.lists(st.floats(), max_size=4),
                st.lists(st.lists(st.floats(allow_nan=True), min_size=1, max_size=3), min_size=1, max_size=3)),
    U=st.one_of(st.none(), st.floats(), st.lists(st.lists(st.floats(), min_size=1, max_size=3), min_size=1, max_size=3)),
    rtol=st.one_of(st.floats(), st.integers(), st.text()),
)
def test_metrics_hostile_arguments(F, U, rtol):
    for call in (lambda: subspace_error(F, U, rtol=rtol), lambda: eigenvalue_error(F, U), lambda: neural_filter(F, U)):
        try:
            out = call()
        except (ValueError, TypeError):
            continue
        assert not np.isnan(out).any()  # huge inputs may legitimately overflow to inf
