"""OnlineStructuredDictionaryLearner: the OSDL circuit as a scikit-learn estimator, NaN = missing."""

import pickle

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_digits  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.estimators import OnlineStructuredDictionaryLearner  # noqa: E402


def _digits(missing=0.3, seed=0):
    X = load_digits().data / 16.0
    rng = np.random.default_rng(seed)
    Xm = np.where(rng.random(X.shape) < missing, np.nan, X)
    return X, Xm


@pytest.mark.slow  # 13 s cold: the quick tier keeps the estimator's contract and rules tests
def test_learns_from_missing_values_and_imputes_better_than_the_mean():
    X, Xm = _digits()
    est = OnlineStructuredDictionaryLearner(36, groups=ns.GroupStructure.torus(6, 6), alpha=0.02, batch_size=64,
                                            random_state=0).fit(Xm[:1200])
    assert est.components_.shape == (36, 64) and est.n_steps_ == 19
    assert np.all(np.linalg.norm(est.components_, axis=1) <= 1 + 1e-12)
    test, test_m = X[1200:], Xm[1200:]
    filled = est.impute(test_m)
    miss = np.isnan(test_m)
    np.testing.assert_array_equal(filled[~miss], test[~miss])
    col_mean = np.nanmean(Xm[:1200], axis=0)
    err = np.mean((filled[miss] - test[miss]) ** 2)
    base = np.mean((np.broadcast_to(col_mean, test.shape)[miss] - test[miss]) ** 2)
    assert err < 0.6 * base
    codes = est.transform(test_m)
    assert codes.shape == (len(test), 36)
    np.testing.assert_allclose(est.inverse_transform(codes), codes @ est.components_)
    # the score is minus the mean objective: the learned dictionary fits held-out digits better than a random one
    rnd = OnlineStructuredDictionaryLearner(36, groups=ns.GroupStructure.torus(6, 6), alpha=0.02, batch_size=64,
                                            random_state=0).fit(np.random.default_rng(0).random((64, 64)))
    assert est.score(test_m) > rnd.score(test_m)


@pytest.mark.slow  # 12 s, the quick tier's second-longest test; CI's full suite runs it (the quick tier stays
# under its 2 minutes)
def test_partial_fit_continues_and_pickles_as_a_checkpoint():
    _, Xm = _digits(seed=1)
    a = OnlineStructuredDictionaryLearner(20, alpha=0.05, batch_size=50, forget=2.0, random_state=3)
    a.partial_fit(Xm[:300])
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.components_, b.components_)
    a.partial_fit(Xm[300:600])
    b.partial_fit(Xm[300:600])
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.n_steps_ == b.n_steps_ == 12


def test_estimator_bad_input():
    _, Xm = _digits()
    with pytest.raises(ValueError, match="forget"):
        OnlineStructuredDictionaryLearner(8, forget=-1.0).fit(Xm[:100])
    with pytest.raises(ValueError, match="alpha"):
        OnlineStructuredDictionaryLearner(8, alpha=-1.0).fit(Xm[:100])
    with pytest.raises(ValueError, match="infinity"):
        OnlineStructuredDictionaryLearner(8).fit(np.where(np.isnan(Xm[:100]), np.inf, Xm[:100]))
    with pytest.raises(ValueError, match="n_units"):
        OnlineStructuredDictionaryLearner(8, groups=ns.GroupStructure.torus(3, 3)).fit(Xm[:100])
    est = OnlineStructuredDictionaryLearner(8, batch_size=20).fit(Xm[:100])
    with pytest.raises(ValueError):
        est.transform(Xm[:5, :10])
