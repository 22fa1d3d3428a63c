"""The greedy kernels' workspaces and bookkeeping, checked by running their own source in Python.

numba does not bounds-check array indexing, so a workspace allocated one
slot short is written past its end without an error, and the compiled
codes may still look right. The kernels' ``py_func`` (the same source run
by the Python interpreter, where every index is checked) is the oracle
here: on the same inputs it must run without an ``IndexError`` and give
the compiled kernel's codes and statuses (to rounding: the interpreter and
numba may fuse or reorder floating-point operations differently).
"""

import numpy as np
import pytest

import neurosim.kernels.greedy as greedy
from neurosim.kernels.greedy import OMP_DEPENDENT, OMP_EXACT, OMP_NNLS_FAILED, OMP_OK

_HELPERS = ("_omp_start", "_omp_one", "_omp_batch", "_residual_correlations", "chol_extend", "_nnls_solve_passive",
            "_nnls_support")


def _interpreted(monkeypatch):
    """Make the greedy kernels' helpers plain Python (bounds-checked); call only after the compiled run.

    The compiled kernels resolve their helpers when they are first compiled for a signature, so running
    them before the patch keeps them compiled against the real helpers.
    """
    for name in _HELPERS:
        monkeypatch.setattr(greedy, name, getattr(greedy, name).py_func)


def _problem(seed, n_samples=6, n_atoms=7, n_features=5, nonneg=False):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = rng.random((n_samples, n_atoms)) * (rng.random((n_samples, n_atoms)) < 0.5)
    if not nonneg:
        S *= rng.choice([-1.0, 1.0], size=S.shape)
    X = S @ D + 0.05 * rng.standard_normal((n_samples, n_features))
    return D @ D.T, X @ D.T


def _run(kernel, G, C, k):
    A = np.full(C.shape, np.nan)
    status = np.full(C.shape[0], -1, dtype=np.int64)
    failed = kernel(G, C, k, A, status)
    return A, status, failed


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("name", ["omp_codes", "nn_omp_codes"])
def test_compiled_greedy_kernels_match_their_bounds_checked_source(monkeypatch, name, k):
    """The compiled OMP / NN-OMP kernels equal their own source run by Python (which checks every index)."""
    G, C = _problem(k, nonneg=name == "nn_omp_codes")
    compiled = getattr(greedy, name)
    A_c, st_c, f_c = _run(compiled, G, C, k)
    _interpreted(monkeypatch)
    A_p, st_p, f_p = _run(compiled.py_func, G, C, k)
    np.testing.assert_allclose(A_p, A_c, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(st_p, st_c)
    assert f_p == f_c == np.count_nonzero(np.isin(st_c, [OMP_DEPENDENT, OMP_NNLS_FAILED]))
    assert np.all(np.count_nonzero(A_c, axis=1) <= k)
    assert set(st_c.tolist()) <= {OMP_OK, OMP_EXACT, OMP_DEPENDENT, OMP_NNLS_FAILED}


@pytest.mark.parametrize("name", ["omp_codes", "nn_omp_codes"])
def test_a_dependent_atom_is_reported_by_compiled_and_interpreted_kernels_alike(monkeypatch, name):
    """An atom in the span of the chosen ones (to 1e-12 of its squared norm) stops the sample as OMP_DEPENDENT.

    By hand: x = (3, 2, 1) picks e0 (correlation 3), then e1 (2); the residual (0, 0, 1) then correlates
    1e-6 with atom 2 = (0.5, 0, 1e-6), far above the negligible-correlation threshold (eps * 9), but atom 2's
    squared distance to span(e0, e1) is 1e-12 = 4e-12 of its squared norm, below the 1e-10 dependence bound.
    """
    D = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.0, 1e-6]])
    X = np.array([[3.0, 2.0, 1.0]])
    G, C = D @ D.T, X @ D.T
    kernel = getattr(greedy, name)
    results = [_run(kernel, G, C, 3)]
    _interpreted(monkeypatch)
    results.append(_run(kernel.py_func, G, C, 3))
    for A, status, failed in results:
        assert status.tolist() == [OMP_DEPENDENT] and failed == 1
        np.testing.assert_allclose(A, [[3.0, 2.0, 0.0]], rtol=1e-12, atol=1e-12)
