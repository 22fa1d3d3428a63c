"""The Gram cache of the compiled encoders (``kernels.encoding.refresh_gram``): recomputed exactly when needed.

``G = W W^T`` is cached with the ``W`` it was made from (``W_seen``) and a valid flag. The contract: the
cache is kept (``G`` not touched) when the flag is set and ``W`` equals ``W_seen`` entry by entry, and
recomputed otherwise -- any entry changed, the first or the last, or ``W_seen`` holding the same numbers
in another order; an overflowing ``G`` is reported and never marked valid.
"""

import numpy as np
import pytest

from neurosim.kernels.encoding import refresh_gram

RNG = np.random.default_rng(97)
W = RNG.standard_normal((3, 4))
SENTINEL = 7.0  # a stale G: kept only on a cache hit


def _call(W_now, W_seen, flag):
    G = np.full((W_now.shape[0],) * 2, SENTINEL)
    W_seen = W_seen.copy()
    valid = np.array([flag], dtype=np.int64)
    ok = refresh_gram(G, W_now, W_seen, valid)
    return ok, G, W_seen, valid[0]


def test_an_unchanged_dictionary_keeps_the_cached_gram():
    ok, G, seen, valid = _call(W, W, 1)
    assert ok and valid == 1
    assert np.all(G == SENTINEL)  # not recomputed
    np.testing.assert_array_equal(seen, W)


def _changed(where):
    W2 = W.copy()
    W2.flat[where] += 0.5
    return W2


@pytest.mark.parametrize("W_seen", [_changed(0), _changed(W.size - 1), _changed(5), np.roll(W, 1), np.roll(W, -1),
                                    W[::-1]],
                         ids=["first-entry", "last-entry", "middle-entry", "rolled-forward", "rolled-back",
                              "rows-reversed"])
def test_a_dictionary_that_differs_anywhere_recomputes_the_gram(W_seen):
    ok, G, seen, valid = _call(W, W_seen, 1)
    assert ok and valid == 1
    np.testing.assert_allclose(G, W @ W.T, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(seen, W)


def test_an_invalid_cache_is_recomputed_even_for_the_same_dictionary():
    ok, G, seen, valid = _call(W, W, 0)
    assert ok and valid == 1
    np.testing.assert_allclose(G, W @ W.T, rtol=1e-14, atol=1e-14)


def test_an_overflowing_gram_is_reported_and_never_marked_valid():
    huge = W * 1e200
    ok, G, seen, valid = _call(huge, W, 1)
    assert not ok and valid == 0
    np.testing.assert_array_equal(seen, W)  # the W it would cache is not recorded either
