"""Issue 25: OSDL's bad inputs are refused or reported, never silently turned into numbers."""

import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.estimators import OnlineStructuredDictionaryLearner, UnobservedFeatureWarning
from neurosim.models.osdl import build_network

#: slow tier: the whole paper-003 circuit built and run per hostile input (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow


def _data(n=64, m=6, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 3)) @ rng.random((3, m)) + 0.5


def test_all_nan_x_is_refused_by_fit_and_partial_fit():
    X = np.full((20, 5), np.nan)
    for call in ("fit", "partial_fit"):
        with pytest.raises(ValueError, match=r"X has no observed entry \(all 100 values are NaN\)"):
            getattr(OnlineStructuredDictionaryLearner(4, batch_size=10, random_state=0), call)(X)


def test_a_feature_never_observed_is_reported_and_not_imputed_as_zero():
    X = _data()
    X[:, 2] = np.nan  # feature 2: never observed
    est = OnlineStructuredDictionaryLearner(4, batch_size=16, random_state=0)
    with pytest.warns(UnobservedFeatureWarning, match=r"1 feature\(s\) never observed .*\[2\]"):
        est.fit(X)
    assert est.n_observed_.tolist() == [64, 64, 0, 64, 64, 64]
    assert not np.any(est.components_[:, 2])  # nothing learned there
    Y = _data(8, seed=1)
    Y[:, 2] = np.nan
    Y[0, 0] = np.nan
    with pytest.warns(UnobservedFeatureWarning, match="cannot be imputed and stay NaN"):
        out = est.impute(Y)
    assert np.all(np.isnan(out[:, 2]))
    assert np.isfinite(out[0, 0])  # an observed-in-training feature is imputed
    np.testing.assert_array_equal(out[1:, [0, 1, 3, 4, 5]], Y[1:, [0, 1, 3, 4, 5]])
    # observed later by partial_fit: counted, then imputable without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnobservedFeatureWarning)
        est.partial_fit(_data(16, seed=2))
        assert est.n_observed_[2] == 16
        assert np.all(np.isfinite(est.impute(Y)))


def test_nan_only_where_the_mask_says_missing_is_not_a_divergence():
    rng = np.random.default_rng(3)
    X = rng.random((6, 8, 5))
    masks = (rng.random(X.shape) > 0.3).astype(float)

    class NaNAtMissing(ns.Stream):
        dim = 5

        def block(self, t0, n, batch=1):
            return np.where(masks[t0:t0 + n] != 0, X[t0:t0 + n], np.nan)

    runs = {}
    for name, stream in (("nan", NaNAtMissing()), ("zeros", ns.ArrayStream(X * masks))):
        c = build_network(stream, 4, masks=ns.ArrayStream(masks), batch=8, seed=0)
        c.network.run(6)
        runs[name] = c.dictionary.weights.copy()
    np.testing.assert_array_equal(runs["nan"], runs["zeros"])
    # a NaN at an OBSERVED entry is a real divergence: the run stops naming x
    bad = masks.copy()
    bad[2, 0, 0] = 1.0
    X[2, 0, 0] = np.nan
    c = build_network(NaNAtMissing(), 4, masks=ns.ArrayStream(bad), batch=8, seed=0)
    with pytest.raises(ns.SimulationDiverged, match="x.activity"):
        c.network.run(6)


def test_observed_stream_checks_its_parts():
    with pytest.raises(TypeError, match="masks must be a neurosim Stream"):
        ns.ObservedStream(ns.ArrayStream(np.ones((2, 3))), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"masks must have the dimension of the data \(3\)"):
        ns.ObservedStream(ns.ArrayStream(np.ones((2, 3))), ns.ArrayStream(np.ones((2, 4))))
