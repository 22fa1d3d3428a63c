"""The first two iterations of ``epsilon_l1_codes``' conjugate gradient against its docstring.

The other epsilon-L1 tests check where CG ends (the gradient's stopping rule, scikit-learn-free
optimality) and how many iterations it takes; a changed preconditioner or direction update still ends
there. Here the iterates themselves are computed from the docstring's recipe:

* gradient ``g(a) = G a - D x + lam a / sqrt(a^2 + eps)`` (Eq. 2 with Eq. 1's epsilon-L1 penalty);
* Jacobi preconditioner ``M(a) = diag(G) + lam eps / (a^2 + eps)^(3/2)`` (the Hessian's diagonal),
  refreshed every iteration, ``z = g / M``;
* first direction ``p = -z``; then Polak-Ribiere+ ``beta = max(0, (g_new . z_new - g_old . z_new) /
  (g_old . z_old))``, ``p = -z_new + beta p``, restarted to ``-z_new`` where that is not a descent
  direction;
* an exact line search: ``t`` with ``p . g(a + t p) = 0``, solved here by scipy's ``brentq`` on a
  bracket, independently of the kernel's safeguarded Newton search.

The two computations agree to 1e-8 relative (the root finders stop at different roundings).
"""

import numpy as np
import pytest
from scipy.optimize import brentq

from neurosim.coding.basis import epsilon_l1_codes


def _grad(a, x, D, lam, eps):
    G = D @ D.T
    return G @ a - D @ x + lam * a / np.sqrt(a * a + eps)


def _precond(a, D, lam, eps):
    return np.einsum("ij,ij->i", D, D) + lam * eps / (a * a + eps) ** 1.5


def _exact_step(a, p, x, D, lam, eps):
    def slope(t):
        return float(p @ _grad(a + t * p, x, D, lam, eps))
    assert slope(0.0) < 0.0
    hi = 1.0
    while slope(hi) < 0.0:
        hi *= 2.0
    return brentq(slope, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)


def cg_reference(x, D, lam, eps, a0, n_iter):
    a = a0.copy()
    g = _grad(a, x, D, lam, eps)
    z = g / _precond(a, D, lam, eps)
    p = -z
    for _ in range(n_iter):
        a = a + _exact_step(a, p, x, D, lam, eps) * p
        g_new = _grad(a, x, D, lam, eps)
        z_new = g_new / _precond(a, D, lam, eps)
        beta = max(0.0, (g_new @ z_new - g @ z_new) / (g @ z))
        p = -z_new + beta * p
        if p @ g_new >= 0.0:
            p = -z_new
        g, z = g_new, z_new
    return a


# one and two iterations on purpose: the cap warning is due and is not what this checks
@pytest.mark.filterwarnings("ignore::neurosim.coding.NonConvergenceWarning")
@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize(("lam", "eps"), [(0.1, 1e-3), (0.5, 1e-1), (0.02, 1e-4)])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_first_two_cg_iterates_are_the_documented_ones(seed, lam, eps, warm):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((6, 5))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((3, 5))
    A0 = 0.3 * rng.standard_normal((3, 6)) if warm else np.zeros((3, 6))
    for n_iter in (1, 2):
        got = epsilon_l1_codes(X, D, lam, eps, init=A0, max_iter=n_iter, tol=0.0)
        for r in range(X.shape[0]):
            want = cg_reference(X[r], D, lam, eps, A0[r], n_iter)
            np.testing.assert_allclose(got[r], want, rtol=1e-8, atol=1e-12, err_msg=f"row {r}, {n_iter} iterations")
