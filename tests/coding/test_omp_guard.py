"""OMP's stopping test, ``chosen[best] or max|alpha|^2 <= eps * max|c|^2``, needs both halves.

Once the residual of an exactly representable signal vanishes, every
correlation ``alpha`` is rounding noise. Whichever atom holds the largest
noise decides which half of the test stops the search:

* an atom not yet chosen: only the relative threshold stops; without it the
  atom joins the support with a rounding-sized coefficient;
* an atom already chosen: its noise is below the threshold unless the chosen
  atoms are nearly parallel (the noise grows like eps * |gamma|); then only
  the ``chosen`` test stops, and without it the already chosen atom is sent
  to the dependence test and the sample is reported as OMP_DEPENDENT, with a
  warning, although the signal is represented exactly.
"""

import warnings

import numpy as np

from neurosim.coding import NonConvergenceWarning, omp
from neurosim.kernels.greedy import OMP_EXACT, omp_codes


def test_exact_signals_keep_their_support_and_nothing_more():
    # Orthonormal atoms: x = a q_i + b q_j is recovered after two atoms with residual
    # correlations of order 1e-16, far below the threshold sqrt(eps) * max|c| ~ 1e-8.
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    D = Q.T
    pairs = [tuple(rng.choice(8, 2, replace=False)) for _ in range(60)]
    coef = rng.uniform(0.5, 2.0, (60, 2)) * rng.choice([-1.0, 1.0], (60, 2))
    X = np.stack([a * D[i] + b * D[j] for (i, j), (a, b) in zip(pairs, coef)])
    A = np.zeros((60, 8))
    status = np.full(60, -1, dtype=np.int64)
    omp_codes(D @ D.T, X @ D.T, 5, A, status)
    assert np.all(status == OMP_EXACT)
    for row, (i, j), (a, b) in zip(A, pairs, coef):
        # exactly two nonzeros: a third atom with a 1e-17 coefficient would be a wrong support
        assert np.flatnonzero(row).tolist() == sorted([i, j])
        np.testing.assert_allclose(row[[i, j]], [a, b], rtol=1e-12)


def test_nearly_parallel_atoms_do_not_report_a_dependent_atom():
    # Atoms d0, d1 at angle arccos(1 - delta) and d2 orthogonal to both (then rotated);
    # x = (d0 - d1) / delta has the code (1/delta, -1/delta, 0). cond(G_SS) ~ 1/delta makes
    # the rounding noise on the chosen atoms ~ eps / delta ~ 1e-7 relative, above the
    # threshold 1.5e-8: for most rotations the largest noise sits on a chosen atom.
    delta = 1e-9
    th = np.arccos(1.0 - delta)
    base = np.array([[1.0, 0.0, 0.0], [np.cos(th), np.sin(th), 0.0], [0.0, 0.0, 1.0]])
    for seed in range(20):
        Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((3, 3)))
        D = base @ Q.T
        x = (D[0] - D[1]) / delta
        with warnings.catch_warnings():
            # nothing here is dependent: a warning would blame an atom that was already chosen
            warnings.simplefilter("error", NonConvergenceWarning)
            a = omp(x, D, 3)
        # the solve is as accurate as cond(G_SS) ~ 1e9 allows; atom 2 gets at most a
        # rounding-sized coefficient
        np.testing.assert_allclose(a, [1.0 / delta, -1.0 / delta, 0.0], rtol=1e-4, atol=1e-4 / delta)


def test_no_samples_give_no_codes_and_no_warning():
    # omp() calls the kernel even for zero samples: its loop runs zero times and reports 0
    D = np.random.default_rng(1).standard_normal((5, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvergenceWarning)
        assert omp(np.zeros((0, 4)), D, 2).shape == (0, 5)
