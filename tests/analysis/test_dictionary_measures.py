"""Coherences, D* (Eq. 16) and the histogram intersection distance of paper 004."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from hypothesis_profiles import examples

from neurosim.analysis import average_coherence, coherence, dictionary_distance, histogram_intersection_distance


# --------------------------------------------------------------------------- #
# coherence
# --------------------------------------------------------------------------- #
def test_coherence_by_hand():
    r = 1 / np.sqrt(2)
    A = np.array([[1.0, 0.0, r], [0.0, 1.0, r]])
    assert coherence(A) == pytest.approx(r, rel=1e-12)
    # pairs (0,1): 0, (0,2): r, (1,2): r -> mean 2r/3, not the 4r/3 of the printed double sum
    assert average_coherence(A) == pytest.approx(2 * r / 3, rel=1e-12)
    assert coherence(np.eye(5)) == 0.0 and average_coherence(np.eye(5)) == 0.0


def test_coherence_brute_force_and_scale_invariance():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((9, 7))
    U = A / np.linalg.norm(A, axis=0)
    vals = [abs(U[:, i] @ U[:, j]) for i in range(7) for j in range(7) if i < j]
    assert coherence(A) == pytest.approx(max(vals), rel=1e-12)
    assert average_coherence(A) == pytest.approx(np.mean(vals), rel=1e-12)
    scaled = A * np.array([1e-3, 2.0, -5.0, 1.0, 7.0, 1e3, 0.5])
    assert coherence(scaled) == pytest.approx(coherence(A), rel=1e-12)
    assert average_coherence(scaled) == pytest.approx(average_coherence(A), rel=1e-12)


def test_coherence_parallel_columns_capped_at_one():
    a = np.random.default_rng(1).standard_normal(5)
    A = np.column_stack([a, -3 * a, np.ones(5)])
    assert coherence(A) == 1.0


@pytest.mark.parametrize(
    "A, exc, match",
    [
        (np.ones((4, 1)), ValueError, "K >= 2"),
        (np.ones(4), ValueError, "dimensions"),
        (np.array([[1.0, 0.0], [0.0, 0.0]]), ValueError, "columns \\[1\\]"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), ValueError, "finite"),
        (np.array([["a", "b"]]), TypeError, "numeric"),
        (np.full((2, 2), 1e300), ValueError, "overflow"),
    ],
)
def test_coherence_validation(A, exc, match):
    for f in (coherence, average_coherence):
        with pytest.raises(exc, match=match):
            f(A)


# --------------------------------------------------------------------------- #
# D* (Eq. 16)
# --------------------------------------------------------------------------- #
def _brute(A_hat, A_star):
    P, K = A_star.shape
    return min(np.sum((A_hat[:, list(p)] - A_star) ** 2) / (K * P) for p in itertools.permutations(range(K)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("K", [1, 2, 4, 6])
def test_distance_brute_force(seed, K):
    rng = np.random.default_rng(seed)
    P = 5
    A_hat, A_star = rng.standard_normal((P, K)), rng.standard_normal((P, K))
    d, perm = dictionary_distance(A_hat, A_star, return_permutation=True)
    assert d == pytest.approx(_brute(A_hat, A_star), rel=1e-12)
    assert sorted(perm.tolist()) == list(range(K)) and perm.dtype == np.int64
    assert d == pytest.approx(np.mean((A_hat[:, perm] - A_star) ** 2), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K,K_hat", [(1, 3), (2, 4), (3, 5), (4, 6)])
def test_distance_with_more_learned_than_true_elements_brute_force(seed, K, K_hat):
    """Every injective matching of the K true elements into the K_hat learned ones, by enumeration."""
    rng = np.random.default_rng(seed)
    P = 4
    A_hat, A_star = rng.standard_normal((P, K_hat)), rng.standard_normal((P, K))
    d, perm = dictionary_distance(A_hat, A_star, return_permutation=True)
    best = min(np.sum((A_hat[:, list(p)] - A_star) ** 2) / (K * P)
               for p in itertools.permutations(range(K_hat), K))
    assert d == pytest.approx(best, rel=1e-12)
    assert len(set(perm.tolist())) == K and perm.max() < K_hat
    assert d == pytest.approx(np.mean((A_hat[:, perm] - A_star) ** 2), rel=1e-12)
    # a learned copy of the truth plus extra elements: distance 0
    assert dictionary_distance(np.concatenate([A_star, A_hat], axis=1), A_star) == 0.0


def test_distance_zero_for_permuted_copy_and_recovers_permutation():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((64, 100))
    pi = rng.permutation(100)
    d, perm = dictionary_distance(A[:, pi], A, return_permutation=True)
    assert d == 0.0
    np.testing.assert_array_equal(A[:, pi][:, perm], A)
    np.testing.assert_array_equal(pi[perm], np.arange(100))


def test_distance_invariances_and_symmetry():
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((8, 12)), rng.standard_normal((8, 12))
    d = dictionary_distance(A, B)
    p, q = rng.permutation(12), rng.permutation(12)
    assert dictionary_distance(A[:, p], B) == pytest.approx(d, rel=1e-12)
    assert dictionary_distance(A, B[:, q]) == pytest.approx(d, rel=1e-12)
    assert dictionary_distance(B, A) == pytest.approx(d, rel=1e-12)
    # the same row (pixel) permutation of both leaves every column distance unchanged
    r = rng.permutation(8)
    assert dictionary_distance(A[r], B[r]) == pytest.approx(d, rel=1e-12)
    # not invariant to sign flips: the paper's elements have identifiable signs
    assert dictionary_distance(-A, A) > 0
    # a hand case: two elements, swapped and one moved by 0.5 in one pixel
    A2 = np.array([[1.0, 0.0], [0.0, 1.0]])
    H = np.array([[0.0, 1.5], [1.0, 0.0]])
    assert dictionary_distance(H, A2) == pytest.approx(0.25 / 4, rel=1e-12)


@pytest.mark.parametrize(
    "A_hat, A_star, exc, match",
    [
        (np.ones((3, 4)), np.ones((3, 5)), ValueError, r"A_hat must have shape \(P, K_hat\) with P = 3 and K_hat >= K"),
        (np.ones((4, 5)), np.ones((3, 5)), ValueError, "A_hat must have shape"),
        (np.ones((3, 4)), np.ones((3, 0)), ValueError, "A_star must have shape"),
        (np.full((3, 2), np.inf), np.ones((3, 2)), ValueError, "A_hat must contain only finite"),
        (np.ones((3, 2)), np.full((3, 2), np.nan), ValueError, "A_star must contain only finite"),
        (np.full((3, 2), 1e200), -np.full((3, 2), 1e200), ValueError, "overflow"),
        (np.ones(3), np.ones(3), ValueError, "dimensions"),
    ],
)
def test_distance_validation(A_hat, A_star, exc, match):
    with pytest.raises(exc, match=match):
        dictionary_distance(A_hat, A_star)
    with pytest.raises(TypeError, match="return_permutation"):
        dictionary_distance(np.ones((2, 2)), np.ones((2, 2)), return_permutation=1)


@settings(max_examples=examples(60), deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 5)),
           elements=st.floats(-1e150, 1e150, allow_nan=False, allow_infinity=False)),
    st.randoms(use_true_random=False),
)
def test_distance_hostile(A, rnd):
    perm = list(range(A.shape[1]))
    rnd.shuffle(perm)
    d, p = dictionary_distance(A[:, perm], A, return_permutation=True)
    assert d == 0.0
    # the matching is exact up to columns whose squared distances underflow to 0
    # (e.g. 1e-190 and 0), which D* cannot tell apart
    assert np.sum((A[:, perm][:, p] - A) ** 2) == 0.0
    if A.shape[1] <= 4:
        B = A[::-1].copy()
        assert dictionary_distance(B, A) == pytest.approx(_brute(B, A), rel=1e-9, abs=0.0)


# --------------------------------------------------------------------------- #
# histogram intersection distance (Fig. 5)
# --------------------------------------------------------------------------- #
def test_hid_by_hand():
    S_all = np.array([[1.0], [2.0], [3.0], [4.0]])
    # 2 bins on [1, 4]: [1, 2.5), [2.5, 4]; all -> (1/2, 1/2), selected {1, 2} -> (1, 0)
    assert histogram_intersection_distance(S_all[:2], S_all, bins=2) == pytest.approx(0.5, abs=1e-15)
    # selected {1, 4}: (1/2, 1/2), the same histogram as all
    assert histogram_intersection_distance(S_all[[0, 3]], S_all, bins=2) == 0.0
    # 3 bins, edges 1, 2, 3, 4: all (1/4, 1/4, 1/2) (4 falls in the closed last bin); selected {3}: (0, 0, 1)
    assert histogram_intersection_distance(S_all[[2]], S_all, bins=3) == pytest.approx(0.5, abs=1e-15)


def test_hid_zeros_and_element_rules():
    S_all = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 5.0], [0.0, 0.0, 0.0]])
    S_sel = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    # element 0: same nonzero values -> 0; element 1: empty in both -> left out;
    # element 2: nonzero only in S_all -> 1
    assert histogram_intersection_distance(S_sel, S_all, bins=4) == pytest.approx(0.5, abs=1e-15)
    # with zeros counted, element 1 is all zeros in both (0), element 2: selected {0, 0}
    # against {0, 5, 0} on 2 bins [0, 2.5), [2.5, 5]: (1, 0) vs (2/3, 1/3) -> 1/3;
    # element 0: {1, 2} vs {1, 2, 0} on [0, 1), [1, 2]: (0, 1) vs (1/3, 2/3) -> 1/3
    got = histogram_intersection_distance(S_sel, S_all, bins=2, nonzero_only=False)
    assert got == pytest.approx((1 / 3 + 0 + 1 / 3) / 3, abs=1e-15)
    with pytest.raises(ValueError, match="no nonzero activation"):
        histogram_intersection_distance(np.zeros((3, 2)), np.zeros((4, 2)))


def test_hid_identical_disjoint_symmetric_and_numpy_oracle():
    rng = np.random.default_rng(4)
    S = rng.exponential(1.0, (500, 6)) * (rng.random((500, 6)) < 0.2)
    assert histogram_intersection_distance(S, S) == 0.0
    assert histogram_intersection_distance(S[rng.permutation(500)], S) == 0.0
    # disjoint supports: the selected activations all below, the others all above
    lo = np.where(S > 0, 1.0 + rng.random(S.shape), 0.0)
    hi = np.where(S > 0, 3.0 + rng.random(S.shape), 0.0)
    assert histogram_intersection_distance(lo, hi, bins=2) == 1.0
    T = rng.exponential(2.0, (300, 6)) * (rng.random((300, 6)) < 0.3)
    d = histogram_intersection_distance(T, S, bins=7)
    assert d == histogram_intersection_distance(S, T, bins=7)
    # numpy's histogram on the pooled range of the nonzero values is the oracle
    want = []
    for j in range(6):
        a, b = T[:, j][T[:, j] != 0], S[:, j][S[:, j] != 0]
        edges = np.linspace(min(a.min(), b.min()), max(a.max(), b.max()), 8)
        p = np.histogram(a, edges)[0] / a.size
        q = np.histogram(b, edges)[0] / b.size
        want.append(1 - np.minimum(p, q).sum())
    assert d == pytest.approx(np.mean(want), abs=1e-12)
    assert 0 < d < 1


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"S_selected": np.ones((3, 2))}, ValueError, "S_selected must have K = 3"),
        ({"S_all": np.ones((3, 0)), "S_selected": np.ones((3, 0))}, ValueError, "S_all must have shape"),
        ({"S_all": np.full((3, 3), np.nan)}, ValueError, "S_all must contain only finite"),
        ({"S_selected": np.ones(3)}, ValueError, "dimensions"),
        ({"bins": 0}, ValueError, "bins"),
        ({"bins": 2.5}, TypeError, "bins"),
        ({"nonzero_only": "yes"}, TypeError, "nonzero_only"),
    ],
)
def test_hid_validation(kwargs, exc, match):
    args = {"S_selected": np.ones((2, 3)), "S_all": np.ones((4, 3)), **kwargs}
    with pytest.raises(exc, match=match):
        histogram_intersection_distance(**args)


_hostile = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, 5e-324, 1e308, -1e308])


@settings(max_examples=examples(80), deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=_hostile),
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)), elements=_hostile),
    st.integers(1, 50),
    st.booleans(),
)
def test_hid_hostile(a, b, bins, nonzero_only):
    try:
        d = histogram_intersection_distance(a, b, bins=bins, nonzero_only=nonzero_only)
    except ValueError as exc:
        assert "no nonzero activation" in str(exc) and nonzero_only and not (np.any(a) or np.any(b))
        return
    assert 0.0 <= d <= 1.0
    assert d == histogram_intersection_distance(b, a, bins=bins, nonzero_only=nonzero_only)
    if np.any(a) or not nonzero_only:
        assert histogram_intersection_distance(a, a, bins=bins, nonzero_only=nonzero_only) == 0.0
