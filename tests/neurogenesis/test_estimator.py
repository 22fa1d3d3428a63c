"""NeurogenesisDictionaryLearner: scikit-learn's contract, atoms that come and go, the circuit underneath."""

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from neurosim.estimators import NeurogenesisDictionaryLearner  # noqa: E402
from neurosim.models.neurogenesis import build_network  # noqa: E402
from neurosim.streams import ArrayStream  # noqa: E402


# an explicit n_nonzero_coefs (issue 38): the checks set n_components=1 and fit 1-feature data, where the count
# is used as min(n_components, n_features); refusing it failed six checks. float32 is preserved (a tag the checks read)
@parametrize_with_checks([NeurogenesisDictionaryLearner(n_components=4, n_nonzero_coefs=2, batch_size=10,
                                                        random_state=0)])
def test_scikit_learn_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


def _two_domain_data(seed=0):
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(2):
        basis = rng.standard_normal((12, 4))
        parts.append((basis @ (rng.standard_normal((4, 200)) * (rng.random((4, 200)) < 0.5))).T
                     + 0.05 * rng.standard_normal((200, 12)))
    return parts


def test_atoms_are_born_on_a_new_domain_and_the_log_says_when():
    first, second = _two_domain_data()
    est = NeurogenesisDictionaryLearner(n_components=4, batch_size=20, n_nonzero_coefs=2, birth_threshold=0.95,
                                        max_births=6, group_alpha=0.0, variant="NODL+", random_state=1)
    est.fit(first)
    size_first = est.n_components_
    est.partial_fit(second)
    assert est.n_components_ > size_first
    born = [s for s, k in zip(est.event_log_["step"], est.event_log_["kind"]) if k == "birth"]
    assert born and max(born) > 10  # births in the second domain (steps 11-20)
    assert est.components_.shape == (est.n_components_, 12) and est.unit_ids_.size == est.n_components_
    assert np.all(np.linalg.norm(est.components_, axis=1) <= 1 + 1e-12)
    assert est.score(second) > 0.8


def test_the_estimator_is_the_circuit():
    """fit equals the paper-000 circuit run on the same mini-batches with the same seed."""
    first, _ = _two_domain_data()
    est = NeurogenesisDictionaryLearner(n_components=5, batch_size=20, n_nonzero_coefs=2, random_state=3,
                                        birth_threshold=0.9, max_births=4, group_alpha=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(first)
        seed = est._build_args[2]
        c = build_network(ArrayStream(first.reshape(10, 20, 12)), 5, "NODL", batch=20, beta_c=2, gamma=0.9, c_k=4,
                          lambda_g=0.2, seed=seed)
        c.network.run(10)
    np.testing.assert_array_equal(est.components_, c.dictionary.weights)
    assert est.unit_ids_.tolist() == c.code.ids.tolist()


def test_pickled_estimator_continues_identically():
    first, second = _two_domain_data()
    est = NeurogenesisDictionaryLearner(n_components=4, batch_size=20, random_state=0).fit(first)
    copy = pickle.loads(pickle.dumps(est))
    est.partial_fit(second)
    copy.partial_fit(second)
    np.testing.assert_array_equal(est.components_, copy.components_)
    assert est.event_log_ == copy.event_log_


@pytest.mark.parametrize("kw,match", [
    (dict(birth_threshold=0.0), r"birth_threshold must be in \(0.0, 1.0\]"), (dict(max_births=-1), "max_births must be in"),
    (dict(group_alpha=-1.0), "group_alpha must be in"), (dict(n_nonzero_coefs=0), r"n_nonzero_coefs must be in \[1, inf\)"),
    (dict(element_nonzeros=13), r"element_nonzeros must be in \[0, 12\]"), (dict(variant="SGD"), "variant must be one of"),
    (dict(batch_size=0), "batch_size must be in"),
])
def test_bad_parameters_name_themselves(kw, match):
    first, _ = _two_domain_data()
    with pytest.raises((ValueError, TypeError), match=match):
        NeurogenesisDictionaryLearner(n_components=4, **kw).fit(first)


def test_constant_samples_count_as_unrepresented():
    """A constant sample has no defined Pearson correlation: it counts as 0, so it pushes towards births."""
    X = np.ones((40, 6))
    est = NeurogenesisDictionaryLearner(n_components=3, batch_size=20, variant="NODL+", group_alpha=0.0,
                                        max_births=4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    assert est.n_components_ == 3 + 2 * 4  # accuracy 0 at both steps: (1 - 0) * c_k births each
    assert np.all(np.isfinite(est.components_))


def test_float32_in_float32_out_as_minibatch_dictionary_learning():
    """Issue 38, item 14: the dtypes of scikit-learn's ``MiniBatchDictionaryLearning`` for the same calls (the oracle),
    and the atoms of the float32 fit those of the float64 fit of the same (float32) numbers, to float32 rounding."""
    from sklearn.decomposition import MiniBatchDictionaryLearning

    X = np.random.default_rng(3).standard_normal((60, 6)).astype(np.float32)
    X64 = X.astype(np.float64)
    ours = NeurogenesisDictionaryLearner(n_components=4, batch_size=20, random_state=0).fit(X)
    theirs = MiniBatchDictionaryLearning(n_components=4, batch_size=20, max_iter=2, random_state=0).fit(X)
    assert ours.components_.dtype == theirs.components_.dtype == np.float32
    for data in (X, X64):
        assert ours.transform(data).dtype == data.dtype
        if data.dtype == np.float32:  # float64 data: scikit-learn 1.6 (the oldest pin) codes in its components'
            assert theirs.transform(data).dtype == data.dtype  # float32, newer versions (and we) in float64
    codes = ours.transform(X)
    assert ours.inverse_transform(codes).dtype == np.float32
    if hasattr(theirs, "inverse_transform"):  # scikit-learn >= 1.7
        assert theirs.inverse_transform(theirs.transform(X)).dtype == np.float32
    ref = NeurogenesisDictionaryLearner(n_components=4, batch_size=20, random_state=0).fit(X64)
    assert ref.components_.dtype == np.float64
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(codes, ref.transform(X64), rtol=1e-6, atol=1e-6)
    # partial_fit keeps the first call's dtype, as scikit-learn's
    est = NeurogenesisDictionaryLearner(n_components=4, batch_size=20, random_state=0).partial_fit(X)
    assert est.partial_fit(X64).components_.dtype == np.float32


def test_a_count_above_the_dictionary_is_used_as_its_size():
    """``n_nonzero_coefs`` above ``min(n_components, n_features)`` is that minimum: the same fit, bit for bit."""
    first, _ = _two_domain_data()
    big = NeurogenesisDictionaryLearner(n_components=4, n_nonzero_coefs=7, batch_size=20, random_state=0).fit(first)
    exact = NeurogenesisDictionaryLearner(n_components=4, n_nonzero_coefs=4, batch_size=20, random_state=0).fit(first)
    assert big.n_nonzero_coefs_ == exact.n_nonzero_coefs_ == 4
    np.testing.assert_array_equal(big.components_, exact.components_)
    np.testing.assert_array_equal(big.transform(first), exact.transform(first))
    one = NeurogenesisDictionaryLearner(n_components=4, n_nonzero_coefs=3, batch_size=20, random_state=0)
    assert one.fit(first[:, :1]).n_nonzero_coefs_ == 1  # one feature: one nonzero
