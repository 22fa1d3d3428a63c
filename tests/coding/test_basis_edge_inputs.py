"""Edge inputs of the basis learners that their docstrings promise to handle (hand-computed oracles)."""

import numpy as np
import pytest

from neurosim.coding.basis import learn_bases, projected_gradient_bases, sparse_coding_objective
from neurosim.coding.encoders import NonConvergenceWarning


def test_projected_gradient_starts_from_d_init_projected_onto_the_ball():
    """D_init outside the ball is rescaled radially first: max_iter=0 returns that projection, by hand."""
    X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
    A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    D_init = np.array([[3.0, 4.0], [0.0, 0.5]])  # row 0 has norm 5 > sqrt(c) = 1, row 1 is inside
    D0 = projected_gradient_bases(X, A, 1.0, D_init=D_init, max_iter=0)
    np.testing.assert_allclose(D0, [[0.6, 0.8], [0.0, 0.5]], rtol=1e-15)
    np.testing.assert_array_equal(D_init, [[3.0, 4.0], [0.0, 0.5]])  # the caller's array is not modified


@pytest.mark.parametrize("lr", [0.05, None])
def test_projected_gradient_first_step_is_taken_from_the_projected_start(lr):
    """One step = P_c(P_c(D_init) - lr * 2 (G P_c(D_init) - C)), against NumPy."""
    rng = np.random.default_rng(4)
    A = rng.standard_normal((12, 3))
    X = rng.standard_normal((12, 4))
    D_init = 5.0 * rng.standard_normal((3, 4))  # every row far outside the ball ||d||^2 <= 4

    def ball(D):
        n = np.sqrt(np.sum(D * D, axis=1, keepdims=True))
        return np.where(n > 2.0, D * (2.0 / n), D)

    G, C = A.T @ A, A.T @ X
    step = 1.0 / (2.0 * np.linalg.eigvalsh(G)[-1]) if lr is None else lr
    D0 = ball(D_init)
    expected = ball(D0 - step * 2.0 * (G @ D0 - C))
    f0, f1 = (float(np.sum((X - A @ D) ** 2)) for D in (D0, expected))
    if f0 - f1 <= 1e-8 * f0:  # the step meets the stopping rule (lr = 0.05 overshoots and raises the objective)
        got = projected_gradient_bases(X, A, 4.0, D_init=D_init, lr=lr, max_iter=1)
    else:
        with pytest.warns(NonConvergenceWarning, match="max_iter=1"):  # one step, on purpose
            got = projected_gradient_bases(X, A, 4.0, D_init=D_init, lr=lr, max_iter=1)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("basis", ["dual", "gradient"])
def test_learner_accepts_a_single_sample(basis):
    """One signal is a valid problem: the learner runs, keeps the basis feasible and does not raise the objective."""
    X = np.array([[3.0, 4.0, 0.0]])
    res = learn_bases(X, 1, 0.1, basis=basis, max_iter=5, seed=0)
    assert res.components.shape == (1, 3) and res.codes.shape == (1, 1)
    assert np.sum(res.components**2) <= 1.0 + 1e-9
    assert np.all(np.diff(res.objective) <= 1e-10 * res.objective[0])
    assert res.objective[-1] == pytest.approx(sparse_coding_objective(X, res.components, res.codes, 0.1), rel=1e-12)
    # the learnt atom turns towards x: its best unit direction is x / ||x|| = (0.6, 0.8, 0)
    d = res.components[0] / np.linalg.norm(res.components[0])
    assert abs(d @ np.array([0.6, 0.8, 0.0])) > 0.99


@pytest.mark.parametrize("lr", [None, 0.1])
def test_projected_gradient_with_all_codes_zero_returns_the_projected_start(lr):
    """All codes zero: ``G = 0``, the objective does not depend on ``D`` and its gradient is 0, so every step
    leaves ``P_c(D_init)`` as it is. With the default step the Lipschitz constant ``2 lambda_max(G)`` is
    exactly 0 (no step ``1 / L`` exists): the learner returns the projected start at once."""
    X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
    D_init = np.array([[3.0, 4.0], [0.0, 0.5], [-1.2, 0.9]])  # norms 5, 0.5 and 1.5 against sqrt(c) = 1
    got = projected_gradient_bases(X, np.zeros((3, 3)), 1.0, D_init=D_init, lr=lr, max_iter=5)
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.0, 0.5], [-0.8, 0.6]], rtol=1e-15)
