"""Selector functions (Tsuchida & Cottrell 2015, Eq. 14-15) and uniform sampling."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples
from scipy import stats

from neurosim.kernels import selection as K
from neurosim.selection_functions import (
    MEASURES,
    SELECTION_ALGORITHMS,
    SELECTORS,
    DegenerateSelectionWarning,
    _uniform_reference,
    goodness,
    select,
)


def _data(seed, N=80, Kk=7, P=9, density=0.3, integer=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, P))
    D = rng.normal(size=(Kk, P))
    A = rng.integers(1, 4, size=(N, Kk)).astype(float) if integer else rng.exponential(size=(N, Kk))
    S = np.where(rng.random((N, Kk)) < density, A, 0.0)
    return X, S, D


def _literal_by_element(G, n):
    """Eq. 15 as the paper words it: sort each column, round robin, skip duplicates."""
    N, Kk = G.shape
    orders = [list(np.argsort(-G[:, j], kind="stable")) for j in range(Kk)]
    chosen = []
    taken = set()
    while len(chosen) < n:
        progress = False
        for j in range(Kk):
            if len(chosen) == n:
                break
            while orders[j] and orders[j][0] in taken:
                orders[j].pop(0)
            if not orders[j]:
                continue
            i = orders[j].pop(0)
            taken.add(i)
            chosen.append(i)
            progress = True
        assert progress
    return np.array(chosen)


def test_algorithm_table():
    assert set(SELECTION_ALGORITHMS) == {
        "Uniform", "ErrBySum", "GradBySum", "SNRBySum", "SUNBySum", "SalMap",
        "GradByElement", "SNRByElement", "SUNByElement",
    }
    for m, s in SELECTION_ALGORITHMS.values():
        assert s in SELECTORS and (m in MEASURES or (m is None and s == "uniform"))


def test_by_sum_hand():
    # SUN goodness = S: row sums 3, 1, 3, 0, 2 -> order 0, 2 (tie, lower index first), 4, 1, 3
    S = np.array([[1.0, 2.0], [1.0, 0.0], [0.0, 3.0], [0.0, 0.0], [2.0, 0.0]])
    X = np.zeros((5, 1))
    D = np.ones((2, 1))
    np.testing.assert_array_equal(select(X, S, D, 5, measure="sun", selector="by_sum"), [0, 2, 4, 1, 3])
    np.testing.assert_array_equal(select(X, S, D, 2, measure="sun", selector="by_sum"), [0, 2])


def test_by_element_hand():
    # columns of G = S: col 0 ranks 4, 0, 1 (tie 0/1 -> 0), then 2, 3; col 1 ranks 2, 0, then 1, 3, 4
    S = np.array([[1.0, 2.0], [1.0, 0.0], [0.0, 3.0], [0.0, 0.0], [2.0, 0.0]])
    X = np.zeros((5, 1))
    D = np.ones((2, 1))
    # round robin: j0 -> 4, j1 -> 2, j0 -> 0, j1 -> (0 taken) 1, j0 -> (1 taken) 2 taken -> 3
    np.testing.assert_array_equal(select(X, S, D, 5, measure="sun", selector="by_element"), [4, 2, 0, 1, 3])
    # n = 3 (not a multiple of K = 2): element 0 gets the extra turn
    np.testing.assert_array_equal(select(X, S, D, 3, measure="sun", selector="by_element"), [4, 2, 0])


@pytest.mark.parametrize("measure", ["err", "grad", "snr", "sun", "salmap"])
@pytest.mark.parametrize("n", [1, 13, 40, 80])
def test_by_sum_against_argsort(measure, n):
    X, S, D = _data(11, P=9)
    G = goodness(X, S, D, measure, side=3 if measure == "salmap" else None)
    want = np.argsort(-G.sum(axis=1), kind="stable")[:n]
    np.testing.assert_array_equal(select(X, S, D, n, measure=measure, selector="by_sum",
                                         side=3 if measure == "salmap" else None), want)


@pytest.mark.parametrize("measure", ["grad", "snr", "sun"])
@pytest.mark.parametrize("n", [1, 6, 7, 22, 56, 80])
@pytest.mark.parametrize("seed", [0, 1])
def test_by_element_against_literal(measure, n, seed):
    X, S, D = _data(20 + seed)
    G = goodness(X, S, D, measure)
    np.testing.assert_array_equal(select(X, S, D, n, measure=measure, selector="by_element"),
                                  _literal_by_element(G, n))


@pytest.mark.parametrize("n", [1, 5, 9, 31, 60])
@pytest.mark.parametrize("density", [0.05, 0.3, 0.9])
def test_by_element_ties_and_duplicates(n, density):
    # integer activations: many exact ties in G; density 0.9: one example best for several elements
    X, S, D = _data(5, N=60, Kk=4, integer=True, density=density)
    G = goodness(X, S, D, "sun")
    assert len(np.unique(G)) < 5  # ties really are present
    got = select(X, S, D, n, measure="sun", selector="by_element")
    np.testing.assert_array_equal(got, _literal_by_element(G, n))
    assert len(set(got.tolist())) == n


def test_by_element_many_elements_few_samples():
    # K > N: some elements find no unselected candidate and are skipped
    X, S, D = _data(6, N=5, Kk=12, density=0.5)
    G = goodness(X, S, D, "grad")
    got = select(X, S, D, 5, measure="grad", selector="by_element")
    np.testing.assert_array_equal(got, _literal_by_element(G, 5))


@pytest.mark.parametrize("measure", ["err", "salmap"])
@pytest.mark.parametrize("n", [1, 7, 30, 80])
def test_element_independent_measures_by_element_equals_by_sum(measure, n):
    X, S, D = _data(8, P=9)
    side = 3 if measure == "salmap" else None
    a = select(X, S, D, n, measure=measure, selector="by_sum", side=side)
    b = select(X, S, D, n, measure=measure, selector="by_element", side=side)
    np.testing.assert_array_equal(a, b)
    # and both are what the literal Eq. 15 gives on the (constant-row) G
    np.testing.assert_array_equal(b, _literal_by_element(goodness(X, S, D, measure, side=side), n))


def test_snr_perfect_reconstruction_ranks_first():
    X = np.array([[1.0, 0.5], [1.0, 1.0], [2.0, 0.0]])
    D = np.array([[1.0, 1.0], [1.0, 0.0]])
    S = np.array([[0.9, 0.0], [1.0, 0.0], [0.0, 1.0]])  # row 1 exact (SNR inf), rows 0, 2 finite
    for sel in ("by_sum", "by_element"):
        assert select(X, S, D, 1, measure="snr", selector=sel)[0] == 1


def test_all_zero_activations_warn_and_take_lowest_indices():
    X, _, D = _data(9, N=10, Kk=3)
    S = np.zeros((10, 3))
    for m in ("sun", "grad", "snr"):
        for sel in ("by_sum", "by_element"):
            with pytest.warns(DegenerateSelectionWarning, match="every goodness value is 0"):
                got = select(X, S, D, 4, measure=m, selector=sel)
            np.testing.assert_array_equal(got, [0, 1, 2, 3])


def test_seed_counter_ignored_by_goodness_selectors():
    X, S, D = _data(10)
    a = select(X, S, D, 9, measure="grad", selector="by_element")
    b = select(X, S, D, 9, measure="grad", selector="by_element", seed=5, counter=77)
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- uniform

def test_uniform_distinct_in_range_deterministic():
    X, S, D = _data(12, N=50)
    a = select(X, S, D, 20, measure=None, selector="uniform", seed=3, counter=4)
    assert a.dtype == np.int64 and len(set(a.tolist())) == 20 and a.min() >= 0 and a.max() < 50
    np.testing.assert_array_equal(a, select(X, S, D, 20, measure=None, selector="uniform", seed=3, counter=4))
    assert not np.array_equal(a, select(X, S, D, 20, measure=None, selector="uniform", seed=3, counter=5))
    assert not np.array_equal(a, select(X, S, D, 20, measure=None, selector="uniform", seed=4, counter=4))
    full = select(X, S, D, 50, measure=None, selector="uniform", seed=3, counter=4)
    np.testing.assert_array_equal(np.sort(full), np.arange(50))
    np.testing.assert_array_equal(full[:20], a)  # a prefix of the same shuffle


@pytest.mark.parametrize("N, n, seed, counter", [(1, 1, 0, 0), (10, 3, 0, 0), (97, 50, 12345, 678),
                                                 (1000, 1000, 2**63 - 1, 2**63 - 1), (5, 2, 1, 2**40)])
def test_uniform_kernel_matches_pure_python_bits(N, n, seed, counter):
    perm = np.empty(N, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    K.uniform_indices(N, n, seed, counter, perm, out)
    np.testing.assert_array_equal(out, _uniform_reference(N, n, seed, counter))


def test_uniform_is_roughly_uniform():
    N, n, draws = 10, 3, 3000
    counts = np.zeros(N)
    first = np.zeros(N)
    X, S, D = _data(13, N=N)
    for c in range(draws):
        idx = select(X, S, D, n, measure=None, selector="uniform", seed=1, counter=c)
        counts[idx] += 1
        first[idx[0]] += 1
    # each index is in a draw with probability n / N; the first pick is uniform
    assert stats.chisquare(counts, np.full(N, draws * n / N)).pvalue > 1e-4
    assert stats.chisquare(first, np.full(N, draws / N)).pvalue > 1e-4
    # ordered pairs (first, second) are uniform over the N (N - 1) pairs
    pairs = np.zeros((N, N))
    for c in range(draws):
        i, j = select(X, S, D, 2, measure=None, selector="uniform", seed=2, counter=c)
        pairs[i, j] += 1
    off = pairs[~np.eye(N, dtype=bool)]
    assert pairs.trace() == 0
    assert stats.chisquare(off, np.full(off.size, draws / off.size)).pvalue > 1e-4


# ----------------------------------------------------------------------------- kernel guards

def test_workspace_sizes_and_kernel_guards():
    wi, wf = K.selection_workspace(10, 3, 4)
    assert wi.shape == (3 * 4 + 3 * 3 + 10,) and wf.shape == (12,)
    f = np.ones(10)
    S = np.ones((10, 3))
    out = np.empty(4, dtype=np.int64)
    with pytest.raises(ValueError, match="work arrays too short"):
        K.select_examples(f, S, K.SUN, K.BY_ELEMENT, 4, 0, 0, out, wi[:-1], wf)
    with pytest.raises(ValueError, match="work arrays too short"):
        K.select_examples(f, S, K.SUN, K.BY_ELEMENT, 4, 0, 0, out, wi, wf[:-1])
    K.select_examples(f, S, K.SUN, K.BY_ELEMENT, 4, 0, 0, out, wi, wf)  # the documented sizes suffice
    assert sorted(out) == sorted(set(out)) and ((out >= 0) & (out < 10)).all()
    with pytest.raises(ValueError, match="out_idx"):
        K.select_examples(f, S, K.SUN, K.BY_SUM, 3, 0, 0, out, wi, wf)
    with pytest.raises(ValueError, match="n must be in"):
        K.select_examples(f, S, K.SUN, K.BY_SUM, 11, 0, 0, np.empty(11, dtype=np.int64), wi, wf)
    with pytest.raises(ValueError, match="unknown selector"):
        K.select_examples(f, S, K.SUN, 7, 4, 0, 0, out, wi, wf)
    with pytest.raises(ValueError):
        K.selection_workspace(3, 2, 4)


# ----------------------------------------------------------------------------- validation

X0, S0, D0 = _data(14, N=6, Kk=2, P=4)


@pytest.mark.parametrize(
    "n, kw, err, match",
    [
        (7, dict(measure="sun", selector="by_sum"), ValueError, r"n must be in \[1, N\] with N = 6"),
        (0, dict(measure="sun", selector="by_sum"), ValueError, "n must be in"),
        (2.0, dict(measure="sun", selector="by_sum"), TypeError, "n must be an integer"),
        (2, dict(measure="sun", selector="top"), ValueError, "selector must be one of"),
        (2, dict(measure="l1", selector="by_sum"), ValueError, "measure must be one of"),
        (2, dict(measure=None, selector="by_sum"), ValueError, "needs a measure"),
        (2, dict(measure="sun", selector="uniform"), ValueError, "measure must be None"),
        (2, dict(measure=None, selector="uniform", seed=-1), ValueError, "seed must be in"),
        (2, dict(measure=None, selector="uniform", counter=2**63), ValueError, "counter must be in"),
        (2, dict(measure=None, selector="uniform", side=2), ValueError, "side is used by"),
        (2, dict(measure="grad", selector="by_sum", side=2), ValueError, "side is used by"),
    ],
)
def test_select_validation(n, kw, err, match):
    with pytest.raises(err, match=match):
        select(X0, S0, D0, n, **kw)


_hostile = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=examples(80), deadline=None)
@given(
    Xh=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), elements=_hostile),
    Sh=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), elements=_hostile),
    Dh=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6), elements=_hostile),
    n=st.integers(-3, 10) | st.floats(allow_nan=True) | st.none(),
    alg=st.sampled_from(sorted(SELECTION_ALGORITHMS)),
)
def test_select_hostile(Xh, Sh, Dh, n, alg):
    measure, selector = SELECTION_ALGORITHMS[alg]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateSelectionWarning)
        try:
            idx = select(Xh, Sh, Dh, n, measure=measure, selector=selector)
        except (ValueError, TypeError) as exc:
            assert str(exc)
            return
    assert idx.shape == (n,) and len(set(idx.tolist())) == n
    assert idx.min() >= 0 and idx.max() < Xh.shape[0]


@settings(max_examples=examples(80), deadline=None)
@given(data=st.data(), N=st.integers(1, 12), Kk=st.integers(1, 5), alg=st.sampled_from(sorted(SELECTION_ALGORITHMS)))
def test_select_valid_inputs_always_n_distinct(data, N, Kk, alg):
    measure, selector = SELECTION_ALGORITHMS[alg]
    P = 4
    el = st.sampled_from([0.0, 0.0, 1.0, 2.0, -1.0, 0.5, 1e-300, 1e300])
    Xh = data.draw(hnp.arrays(np.float64, (N, P), elements=el))
    Sh = data.draw(hnp.arrays(np.float64, (N, Kk), elements=el))
    Dh = data.draw(hnp.arrays(np.float64, (Kk, P), elements=el))
    n = data.draw(st.integers(1, N))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateSelectionWarning)
        try:
            idx = select(Xh, Sh, Dh, n, measure=measure, selector=selector)
        except ValueError as exc:
            assert "too large" in str(exc)
            return
    assert idx.shape == (n,) and len(set(idx.tolist())) == n and 0 <= idx.min() and idx.max() < N
    if selector == "by_element" and measure in ("grad", "snr", "sun"):
        np.testing.assert_array_equal(idx, _literal_by_element(goodness(Xh, Sh, Dh, measure), n))
    if selector == "by_sum" and measure in ("err", "sun"):
        # err ranks f_i = G[:, 0]; sun ranks sum_j |s_ij| (fewer than 8 terms: NumPy sums them in order)
        key = goodness(Xh, Sh, Dh, measure)[:, 0] if measure == "err" else np.abs(Sh).sum(axis=1)
        np.testing.assert_array_equal(idx, np.argsort(-key, kind="stable")[:n])


@pytest.mark.parametrize("selector", [K.BY_SUM, K.BY_ELEMENT])
@pytest.mark.parametrize("N, Kk, n", [(9, 3, 4), (6, 4, 6), (12, 2, 5)])
def test_selection_kernels_stay_inside_their_workspaces_when_run_as_python(monkeypatch, selector, N, Kk, n):
    # numba does not bounds-check: a workspace slice cut short is written past its end and the compiled
    # selection can still look right. The kernels' own source run by the interpreter checks every index.
    rng = np.random.default_rng(N + 10 * n)
    S = rng.random((N, Kk)) * (rng.random((N, Kk)) < 0.6)
    f = rng.random(N)
    work_int, work_float = K.selection_workspace(N, Kk, n)

    def run(kernel):
        out = np.full(n, -1, dtype=np.int64)
        kernel(f, S, K.SUN, selector, n, 0, 0, out, work_int.copy(), work_float.copy())
        return out

    compiled = run(K.select_examples)
    for name in ("_prod", "_worse", "_swap", "_sift_down", "_sift_up", "_offer", "_sort_heap", "_by_sum",
                 "_by_element", "_element_dependent"):
        monkeypatch.setattr(K, name, getattr(K, name).py_func)
    np.testing.assert_array_equal(run(K.select_examples.py_func), compiled)
    assert sorted(set(compiled.tolist())) == sorted(compiled.tolist())  # n distinct examples


_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z):
    """SplitMix64's finalizer, written from its published constants (not imported)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _unmix64(z):
    """The inverse of :func:`_mix64` (each xorshift and odd multiplication is a bijection of uint64)."""
    def unxorshift(y, s):
        x = y
        for _ in range(64 // s + 1):
            x = y ^ (x >> s)
        return x
    z = unxorshift(z, 31)
    z = (z * pow(0x94D049BB133111EB, -1, 1 << 64)) & _MASK64
    z = unxorshift(z, 27)
    z = (z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & _MASK64
    return unxorshift(z, 30)


def _seed_and_counter_whose_first_draw_is(x):
    """A (seed, counter), both below 2^63, whose first draw ``mix(key + g)`` is ``x``.

    ``key = mix(mix(seed + g) + counter g)``, so for each seed the counter is solved for (``g`` is odd).
    """
    key = (_unmix64(x) - _GOLDEN) & _MASK64
    inner = _unmix64(key)
    for seed in range(64):
        counter = ((inner - _mix64((seed + _GOLDEN) & _MASK64)) * pow(_GOLDEN, -1, 1 << 64)) & _MASK64
        if counter < 2**63:
            return seed, counter
    raise AssertionError("no seed below 64 gives a counter below 2^63")


@pytest.mark.parametrize("N", [3, 10, 1000, 12345])
@pytest.mark.parametrize("offset", [0, -1])
def test_uniform_rejection_threshold_is_two_to_the_64_mod_n_exactly(N, offset):
    """Rejection sampling (docstring): a draw ``x < 2^64 mod N`` is redrawn and ``x = 2^64 mod N`` is kept.

    Seed and counter are solved for so that the first draw is exactly the threshold (kept: ``out[0] = x mod
    N``) or one below it (redrawn: ``out[0]`` comes from the second draw).
    """
    thr = (1 << 64) % N
    x = thr + offset
    seed, counter = _seed_and_counter_whose_first_draw_is(x)
    key = _mix64((_mix64((seed + _GOLDEN) & _MASK64) + counter * _GOLDEN) & _MASK64)
    assert _mix64((key + _GOLDEN) & _MASK64) == x
    second = _mix64((key + 2 * _GOLDEN) & _MASK64)
    assert second >= thr
    perm, out = np.empty(N, dtype=np.int64), np.empty(1, dtype=np.int64)
    K.uniform_indices(N, 1, seed, counter, perm, out)
    assert out[0] == (x % N if offset == 0 else second % N)
    np.testing.assert_array_equal(out, _uniform_reference(N, 1, seed, counter))
