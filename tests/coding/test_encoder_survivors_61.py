"""Documented return types, error messages and fixed parameters of the encoders.

Pinned here:

* ``lambda_for_count`` on one 1-D signal returns a float lambda (and, with
  ``return_codes``, a 1-D code), equal to the first row of the batched call;
* ``resolve_solver(solver="fista")`` names the actual reason the exact prox
  is missing: ``eta < 1 (non-convex)`` for ``eta < 1``, the group family
  (overlap without nesting, unequal member weights) for ``eta = 1``;
* ``structured_objective`` with ``kappa = 0`` is the plain squared error
  even where ``Omega`` overflows float64 (``0 * Omega = 0`` in the reals;
  ``Omega = 2^(1/eta)`` is finite, just not representable);
* ``SparseCode.method`` is a fixed (``live=False``) parameter: a running
  network's encoder refuses a new method with ``AttributeError`` and keeps
  coding with the old one.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.coding.encoders import lambda_for_count
from neurosim.coding.structured import resolve_solver, structured_objective
from neurosim.groups import GroupStructure
from neurosim.kernels.structured_fista import SOLVER_FISTA, SOLVER_TABLE2


# -- lambda_for_count ---------------------------------------------------------------

def _dictionary(seed=0, n_atoms=6, n_features=5):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    return D, rng.standard_normal((3, n_features))


def test_lambda_for_count_on_one_signal_returns_a_float_and_a_1d_code():
    """Docstring: ``lam`` is a float for a 1-D X; the codes are (n_atoms,) like feature_sign's for 1-D X."""
    D, X = _dictionary()
    lams, A = lambda_for_count(X, D, 2, return_codes=True)
    lam = lambda_for_count(X[1], D, 2)
    assert type(lam) is float
    # the same bisection as the batch's row 1 (rtol_lambda = 1e-10; one-row BLAS may round differently)
    assert lam == pytest.approx(lams[1], rel=1e-8)
    lam1, a1 = lambda_for_count(X[1], D, 2, return_codes=True)
    assert type(lam1) is float and lam1 == lam
    assert a1.shape == (D.shape[0],)
    np.testing.assert_allclose(a1, A[1], rtol=0, atol=1e-8)
    assert np.count_nonzero(a1) == 2
    # a 2-D batch of one row stays an array: the float is for 1-D X only
    lam_b, A_b = lambda_for_count(X[1:2], D, 2, return_codes=True)
    assert isinstance(lam_b, np.ndarray) and lam_b.shape == (1,) and A_b.shape == (1, D.shape[0])


# -- resolve_solver -----------------------------------------------------------------

@pytest.mark.parametrize("groups", [
    GroupStructure.from_sets([[0, 1], [1, 2], [2, 3]], 4),  # overlapping, not nested
    GroupStructure.from_sets([[0, 1], [2, 3]], 4, weights=[[1.0, 2.0], [1.0, 1.0]]),  # disjoint, unequal weights
])
def test_fista_refusal_at_eta_one_names_the_groups_not_eta(groups):
    """eta = 1 is convex; what FISTA lacks there is an exact prox for this group family, and the message says so."""
    assert resolve_solver("auto", groups, 1.0) == SOLVER_TABLE2
    with pytest.raises(ValueError, match="needs an exact proximal operator") as exc:
        resolve_solver("fista", groups, 1.0)
    msg = str(exc.value)
    assert "the groups overlap without nesting or have unequal member weights" in msg
    assert "eta < 1" not in msg and "non-convex" not in msg


def test_fista_refusal_below_eta_one_names_the_non_convexity():
    """Singleton groups have an exact prox at eta = 1 (FISTA is taken); below 1 the reason is eta itself."""
    groups = GroupStructure.singletons(4)
    assert resolve_solver("fista", groups, 1.0) == SOLVER_FISTA
    with pytest.raises(ValueError, match="needs an exact proximal operator") as exc:
        resolve_solver("fista", groups, 0.5)
    msg = str(exc.value)
    assert "eta < 1 (non-convex)" in msg
    assert "overlap" not in msg


# -- structured_objective -----------------------------------------------------------

def test_objective_with_kappa_zero_is_the_squared_error_even_when_omega_overflows():
    """Omega([1, 1]) over singletons at eta = 5e-4 is (1 + 1)^(1/eta) = 2^2000, beyond float64 (inf); the
    kappa = 0 cost is 0.5 ||x - D^T a||^2 regardless (0 * Omega = 0 for the finite real Omega)."""
    from neurosim.coding.structured import structured_penalty
    eta = 5e-4
    a = np.array([1.0, 1.0])
    assert structured_penalty(a, eta=eta) == np.inf  # the overflow this test is about
    W = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, -0.5]])
    x = np.array([2.0, -1.0, 0.25])
    r = x - a @ W  # [1, -2, 0.25]
    expected = 0.5 * float(r @ r)  # 0.5 * 5.0625
    assert structured_objective(x, W, a, kappa=0.0, eta=eta) == expected
    out = structured_objective(np.stack([x, x]), W, np.stack([a, 0 * a]), kappa=0.0, eta=eta)
    np.testing.assert_array_equal(out, [expected, 0.5 * float(x @ x)])
    # with kappa > 0 the overflowed penalty shows (the cost really is beyond float64)
    assert structured_objective(x, W, a, kappa=0.1, eta=eta) == np.inf


# -- SparseCode.method is fixed -------------------------------------------------------

def test_running_sparse_code_refuses_a_new_method_and_keeps_its_encoder():
    """Fixed parameters refuse assignment after construction (neurosim.params): AttributeError naming
    ``method``; the network goes on coding with OMP (one atom: the largest |input| kept)."""
    net = ns.Network()
    x = ns.Population("x", 3)
    code = ns.Population("code", 3, dynamics=ns.SparseCode("omp", n_nonzero=1))
    net.add(x, code, ns.Projection("D", x, code, init=np.eye(3)))
    net.connect(ns.ArrayStream(np.array([[0.0, 2.0, 0.5], [-3.0, 1.0, 0.0]])), x)
    net.run(1)
    assert code.activity.tolist() == [[0.0, 2.0, 0.0]]
    with pytest.raises(AttributeError, match="method is fixed"):
        code.dynamics.method = "k_winners"
    with pytest.raises(AttributeError, match="method is fixed"):
        code.dynamics.set_params(method="feature_sign", n_nonzero=1)
    assert code.dynamics.method == "omp"
    net.run(1)
    assert code.activity.tolist() == [[-3.0, 0.0, 0.0]]
    assert ns.SparseCode.method.live is False
