"""OnlineStructuredDictionaryLearner learns the same atoms from the same data at any scale (issue 38, item 2).

Data ``s X`` with ``alpha`` scaled by ``s`` is the same problem as ``X`` with ``alpha``: the structured lasso's codes
scale by ``s``, Table 3's atoms (in the unit ball) do not. So the atoms learned from ``s X`` must be those learned
from ``X``, the codes ``s`` times theirs. Before, the initial atoms were data rows only ever scaled down into the
ball: from data of norm 0.01 four of six atoms ended near norm 0.01, from 1e-4 all were 0 and ``transform``
returned zeros. The oracle is the invariance itself, plus unit-norm initial atoms, which the network path has
(``RandomUnitAtoms``) and which the first step must keep near the unit sphere on this well-conditioned data.
"""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from neurosim.estimators import OnlineStructuredDictionaryLearner  # noqa: E402


def _data(seed=0, n=120, k=6, m=8):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((k, m))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    A = rng.standard_normal((n, k)) * (rng.random((n, k)) < 0.4)
    X = A @ D + 0.01 * rng.standard_normal((n, m))
    X[rng.random(X.shape) < 0.2] = np.nan  # missing entries too: the initial atoms have them at 0
    return X


def _fit(X, alpha):
    return OnlineStructuredDictionaryLearner(6, alpha=alpha, batch_size=10, random_state=0).fit(X)


@pytest.fixture(scope="module")
def at_scale_one():
    X = _data()
    return X, _fit(X, 0.1)


@pytest.mark.parametrize("s", [1e-8, 1e-4, 1e-2, 1e3])
def test_the_same_atoms_and_scaled_codes_at_every_scale(at_scale_one, s):
    X, ref = at_scale_one
    norms = np.linalg.norm(ref.components_, axis=1)
    assert np.all((norms > 0.9) & (norms <= 1 + 1e-12))  # no collapse at scale 1 either
    est = _fit(s * X, 0.1 * s)
    np.testing.assert_allclose(est.components_, ref.components_, rtol=0, atol=1e-6)
    codes, codes_ref = est.transform(s * X[:20]), ref.transform(X[:20])
    assert np.abs(codes_ref).max() > 0.1
    np.testing.assert_allclose(codes / s, codes_ref, rtol=0, atol=1e-6 * np.abs(codes_ref).max())


def test_the_initial_atoms_are_unit_norm_data_rows():
    """One mini-batch of one sample with ``alpha`` so large that every code is 0: Table 3 then leaves the atoms
    where they started (``b_j``, ``C_j`` and ``e_j`` stay 0), so ``components_`` are the initial atoms: the data
    row (the only one) at unit norm."""
    x = 1e-3 * np.random.default_rng(1).standard_normal(8)
    est = OnlineStructuredDictionaryLearner(6, alpha=1e6, batch_size=1, random_state=0).fit(x[None, :])
    want = x / np.linalg.norm(x)
    np.testing.assert_allclose(est.components_, np.tile(want, (6, 1)), rtol=1e-12, atol=1e-15)
