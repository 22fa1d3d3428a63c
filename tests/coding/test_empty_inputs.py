"""Every public coding function at each empty dimension: no atoms or no features is refused with a
ValueError naming the shapes; no samples gives an empty code matrix from the encoders (a batch may be
empty), and is refused by the learners and the epsilon-L1 solver, whose objectives are means over samples."""

import numpy as np
import pytest

from neurosim.coding import basis, encoders, structured

# Full suite only (the slow tier): every encoder's kernels compiled for empty shapes (15 s of a cold quick tier);
# the quick tier stays a quick check of an edit.
pytestmark = pytest.mark.slow

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4))
D = RNG.standard_normal((3, 4))
A = RNG.standard_normal((5, 3))

ENCODERS = {
    "feature_sign": lambda X, D: encoders.feature_sign(X, D, 0.1),
    "omp": lambda X, D: encoders.omp(X, D, 1),
    "nonneg omp": lambda X, D: encoders.omp(X, D, 1, nonneg=True),
    "k_winners": lambda X, D: encoders.k_winners(X, D, 1),
    "sparse_encode": lambda X, D: encoders.sparse_encode(X, D, "feature_sign", lam=0.1),
    "structured_sparse_code": lambda X, D: structured.structured_sparse_code(X, D, None, 0.1),
}
EMPTY = {"no samples": (X[:0], D), "no features": (X[:, :0], D[:, :0]), "no atoms": (X, D[:0])}


@pytest.mark.parametrize("name", ENCODERS)
def test_encoders_code_an_empty_batch_and_refuse_an_empty_dictionary(name):
    f = ENCODERS[name]
    codes = f(*EMPTY["no samples"])
    assert codes.shape == (0, 3)
    for case in ("no features", "no atoms"):
        x, d = EMPTY[case]
        with pytest.raises(ValueError, match=r"must have shape \(n_atoms >= 1, n_features >= 1\); got " +
                           str(d.shape).replace("(", r"\(").replace(")", r"\)")):
            f(x, d)


@pytest.mark.parametrize("case", EMPTY)
def test_the_epsilon_l1_solver_refuses_every_empty_dimension(case):
    x, d = EMPTY[case]
    with pytest.raises(ValueError, match="X and D must be non-empty"):
        basis.epsilon_l1_codes(x, d, 0.1)


@pytest.mark.parametrize("solver", [basis.lagrange_dual_bases, basis.projected_gradient_bases])
@pytest.mark.parametrize("case", ["no samples", "no features", "no atoms"])
def test_the_basis_solvers_refuse_every_empty_dimension(solver, case):
    x, a = {"no samples": (X[:0], A[:0]), "no features": (X[:, :0], A), "no atoms": (X, A[:, :0])}[case]
    with pytest.raises(ValueError, match="X and A must be non-empty"):
        solver(x, a)


@pytest.mark.parametrize("x", [X[:0], X[:, :0]])
def test_learn_bases_refuses_empty_data(x):
    with pytest.raises(ValueError, match="X must be non-empty"):
        basis.learn_bases(x, 3, 0.1, max_iter=1)


@pytest.mark.parametrize("name", ENCODERS)
def test_encoders_accept_the_smallest_non_empty_shapes(name):
    """One atom, one feature, one sample: the boundary just inside every emptiness check."""
    f = ENCODERS[name]
    for x, d in [(X[:1], D), (X, D[:1]), (X[:, :1], D[:, :1]), (X[:1, :1], D[:1, :1])]:
        assert f(x, d).shape == (x.shape[0], d.shape[0])


@pytest.mark.parametrize("x, d", [(X[:1], D), (X, D[:1]), (X[:, :1], D[:, :1])])
def test_the_epsilon_l1_solver_accepts_the_smallest_non_empty_shapes(x, d):
    assert basis.epsilon_l1_codes(x, d, 0.1).shape == (x.shape[0], d.shape[0])


@pytest.mark.parametrize("solver", [basis.lagrange_dual_bases, basis.projected_gradient_bases])
@pytest.mark.parametrize("x, a", [(X[:1], A[:1]), (X[:, :1], A), (X, A[:, :1])])
def test_the_basis_solvers_accept_the_smallest_non_empty_shapes(solver, x, a):
    # a seeded start for projected gradient: from some random starts 100 steps do not meet its tolerance, and
    # a capped run warns (issue 38)
    out = solver(x, a, seed=1) if solver is basis.projected_gradient_bases else solver(x, a)
    bases = out[0] if isinstance(out, tuple) else out  # the dual also returns its multipliers
    assert bases.shape == (a.shape[1], x.shape[1]) and np.isfinite(bases).all()
