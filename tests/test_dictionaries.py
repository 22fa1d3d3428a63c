"""Ground-truth dictionaries and the Eq. 1 example generator of paper 004."""

import itertools
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from matplotlib.font_manager import FontProperties, findfont

from neurosim.data import (
    ALPHANUMERIC_GLYPHS,
    SparseDictionaryStream,
    alphanumeric_dictionary,
    gabor_dictionary,
    noise_variance,
    sparse_examples,
)
from neurosim.streams import ChunkedRandomStream


def _pairs(A):
    G = np.abs(A.T @ A)
    i, j = np.triu_indices(A.shape[1], 1)
    return G[i, j]


# --------------------------------------------------------------------------- #
# Gabor dictionary
# --------------------------------------------------------------------------- #
def test_gabor_shape_norm_mean_and_paper_coherences():
    A = gabor_dictionary()
    assert A.shape == (64, 100)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(A.mean(axis=0), 0.0, rtol=0, atol=1e-14)
    g = _pairs(A)
    # the documented values (paper: 0.97 and 0.13)
    assert abs(g.max() - 0.9720) < 5e-4
    assert abs(g.mean() - 0.1196) < 5e-4
    assert g.max() < 1 - 1e-3  # 100 distinct elements


def test_gabor_first_element_by_hand():
    # element 0: centre (3.5, 3.5), theta 0, f 0.15, cosine phase, sigma = 0.6 / 0.15 = 4
    y, x = np.mgrid[0:8, 0:8].astype(float)
    g = np.exp(-((x - 3.5) ** 2 + (y - 3.5) ** 2) / 32.0) * np.cos(2 * np.pi * 0.15 * (x - 3.5))
    g -= g.mean()
    np.testing.assert_allclose(gabor_dictionary()[:, 0], g.ravel() / np.linalg.norm(g), rtol=0, atol=1e-13)
    # element 1: the next orientation (36 degrees), a wave along that direction
    th = np.pi / 5
    xr = (x - 3.5) * np.cos(th) + (y - 3.5) * np.sin(th)
    g = np.exp(-((x - 3.5) ** 2 + (y - 3.5) ** 2) / 32.0) * np.cos(2 * np.pi * 0.15 * xr)
    g -= g.mean()
    np.testing.assert_allclose(gabor_dictionary()[:, 1], g.ravel() / np.linalg.norm(g), rtol=0, atol=1e-13)


@pytest.mark.parametrize("K", [1, 8, 16, 32, 64, 128, 256])
def test_gabor_other_sizes_distinct_unit_norm(K):
    A = gabor_dictionary(K)
    assert A.shape == (64, K)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0, rtol=0, atol=1e-12)
    if K > 1:
        assert _pairs(A).max() < 1 - 1e-3


def test_gabor_prefix_and_side():
    # a smaller dictionary of the same orientation count is a prefix of the grid
    np.testing.assert_array_equal(gabor_dictionary(60)[:, :40], gabor_dictionary(80)[:, :40])
    A = gabor_dictionary(100, side=16)
    assert A.shape == (256, 100)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0, rtol=0, atol=1e-12)


def test_gabor_returns_copies():
    A = gabor_dictionary()
    A[:] = 0.0
    assert np.linalg.norm(gabor_dictionary()[:, 0]) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"n_elements": 0}, ValueError, "n_elements"),
        ({"n_elements": 1001}, ValueError, "n_elements"),
        ({"n_elements": 10.0}, TypeError, "n_elements"),
        ({"side": 3}, ValueError, "side"),
        ({"side": True}, TypeError, "side"),
    ],
)
def test_gabor_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gabor_dictionary(**kwargs)


# --------------------------------------------------------------------------- #
# Alphanumeric dictionary
# --------------------------------------------------------------------------- #
def test_alphanumeric_glyph_set():
    assert len(ALPHANUMERIC_GLYPHS) == 64 == len(set(ALPHANUMERIC_GLYPHS))
    assert ALPHANUMERIC_GLYPHS[:10] == "0123456789" and ALPHANUMERIC_GLYPHS[-2:] == "?&"


def test_alphanumeric_bundled_font():
    path = Path(findfont(FontProperties(family="DejaVu Sans"), fallback_to_default=True)).resolve()
    assert Path(matplotlib.get_data_path()).resolve() in path.parents


def test_alphanumeric_deterministic_norm_mean_coherence():
    A = alphanumeric_dictionary()
    B = alphanumeric_dictionary()
    assert A.shape == (64, 64)
    assert A is not B and A.tobytes() == B.tobytes()
    A[:] = 0.0  # a copy: the cache is not touched
    np.testing.assert_array_equal(alphanumeric_dictionary(), B)
    np.testing.assert_allclose(np.linalg.norm(B, axis=0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(B.mean(axis=0), 0.0, rtol=0, atol=1e-14)
    g = _pairs(B)
    # the documented values (paper: 0.95 and 0.34)
    assert abs(g.max() - 0.9549) < 5e-4
    assert abs(g.mean() - 0.3055) < 5e-4


def _upright(A, j, side=8):
    """Undo element j's documented rotation and sign."""
    return np.rot90(A[:, j].reshape(side, side), -(j % 4)) * (-1.0) ** j


@pytest.mark.parametrize("ch", ["1", "I", "l"])
def test_alphanumeric_rotations(ch):
    # thin vertical strokes: upright, the ink varies across columns, not rows
    A = alphanumeric_dictionary()
    j = ALPHANUMERIC_GLYPHS.index(ch)
    up = _upright(A, j)
    assert np.var(up.sum(axis=0)) > 2 * np.var(up.sum(axis=1))
    stored = A[:, j].reshape(8, 8)
    across_cols, across_rows = np.var(stored.sum(axis=0)), np.var(stored.sum(axis=1))
    if j % 2:  # rotated by 90 or 270 degrees: a horizontal bar
        assert across_rows > 2 * across_cols
    else:
        assert across_cols > 2 * across_rows


@pytest.mark.parametrize("ch", ["O", "0", "o", "8", "B"])
def test_alphanumeric_ink_positive_counter_hollow(ch):
    # upright and sign-corrected, ink is above the mean (positive) and a
    # counter (hole) below it: the even-odd rule left it empty
    A = alphanumeric_dictionary()
    up = _upright(A, ALPHANUMERIC_GLYPHS.index(ch))
    assert up.max() > -up.min()  # ink (few, bright pixels) dominates the positive side
    if ch in "O0o":
        assert up[3:5, 3:5].max() < 0  # the centre of the counter is background


def test_alphanumeric_signs_alternate():
    A = alphanumeric_dictionary()
    # glyph ink covers under half the patch, so after mean removal the ink
    # pixels are the large-magnitude ones: their sign is (-1)^j
    for j in range(64):
        col = A[:, j]
        assert np.sign(col[np.argmax(np.abs(col))]) == (-1.0) ** j, ALPHANUMERIC_GLYPHS[j]


def test_alphanumeric_validation():
    with pytest.raises(ValueError, match="side"):
        alphanumeric_dictionary(side=2)
    with pytest.raises(TypeError, match="side"):
        alphanumeric_dictionary(side="8")


# --------------------------------------------------------------------------- #
# noise variance (closed form) and the generator
# --------------------------------------------------------------------------- #
def _random_unit(P, K, seed):
    A = np.random.default_rng(seed).standard_normal((P, K)) + 0.3  # nonzero cross terms
    return A / np.linalg.norm(A, axis=0)


@pytest.mark.parametrize("seed, K, k", [(0, 4, 2), (1, 5, 3), (2, 3, 3), (3, 6, 1)])
def test_noise_variance_exact_by_enumeration(seed, K, k):
    # E||A s||^2 = sum over the C(K, k) equally likely supports of
    # E[s_S^T A_S^T A_S s_S] with E s_i s_j = 1/r^2 (i != j), 2/r^2 (i == j)
    P, rate, snr = 7, 1.7, 4.5
    A = _random_unit(P, K, seed)
    G = A.T @ A
    subsets = list(itertools.combinations(range(K), k))
    power = 0.0
    for S in subsets:
        M = np.full((k, k), 1.0 / rate**2) + np.eye(k) / rate**2
        power += np.sum(G[np.ix_(S, S)] * M)
    power /= len(subsets)
    want = power / (P * 10 ** (snr / 10))
    assert noise_variance(A, k, snr, rate) == pytest.approx(want, rel=1e-12)


def test_noise_variance_monte_carlo_and_realised_snr():
    A = gabor_dictionary()
    X, S, noise = sparse_examples(A, 40000, k=5, snr_db=6.0, rate=1.0, rng=3)
    sig = S @ A.T
    # E||A s||^2 estimated from 40000 draws: relative error ~1 %
    power = np.mean(np.sum(sig**2, axis=1))
    assert power / 64 / 10**0.6 == pytest.approx(noise_variance(A, 5, 6.0, 1.0), rel=0.05)
    assert np.var(noise) == pytest.approx(noise_variance(A, 5, 6.0, 1.0), rel=0.02)
    snr = 10 * np.log10(power / np.mean(np.sum(noise**2, axis=1)))
    assert abs(snr - 6.0) < 0.2


def test_sparse_examples_model():
    A = gabor_dictionary(20)
    X, S, noise = sparse_examples(A, 30000, k=3, snr_db=10.0, rate=2.0, rng=np.random.default_rng(5))
    assert X.shape == (30000, 64) and S.shape == (30000, 20) and noise.shape == (30000, 64)
    assert np.all(np.count_nonzero(S, axis=1) == 3)
    assert np.all(S >= 0)
    np.testing.assert_array_equal(X, S @ A.T + noise)
    nz = S[S > 0]
    assert nz.mean() == pytest.approx(0.5, rel=0.02)  # Exp(2): mean 1/2
    assert np.mean(nz**2) == pytest.approx(0.5, rel=0.04)  # E s^2 = 2/rate^2
    counts = np.count_nonzero(S, axis=0)  # uniform supports: each element ~ N k / K
    expect = 30000 * 3 / 20
    assert np.all(np.abs(counts - expect) < 6 * np.sqrt(expect))
    # pairs are uniform too: co-activation of elements 0 and 1 ~ N k(k-1)/(K(K-1))
    both = np.count_nonzero((S[:, 0] > 0) & (S[:, 1] > 0))
    expect2 = 30000 * 3 * 2 / (20 * 19)
    assert abs(both - expect2) < 6 * np.sqrt(expect2)


def test_sparse_examples_reproducible_and_full_support():
    A = gabor_dictionary(6)
    a = sparse_examples(A, 50, 2, 6.0, 1.0, rng=7)
    b = sparse_examples(A, 50, 2, 6.0, 1.0, rng=np.random.default_rng(7))
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    _, S, _ = sparse_examples(A, 10, k=6, rng=1)
    assert np.all(S > 0)
    X, S, noise = sparse_examples(A, 0, 2)
    assert X.shape == (0, 64) and S.shape == (0, 6)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"k": 0}, ValueError, "k must"),
        ({"k": 7}, ValueError, "k must"),
        ({"k": 2.0}, TypeError, "k must"),
        ({"snr_db": float("nan")}, ValueError, "snr_db"),
        ({"snr_db": float("inf")}, ValueError, "snr_db"),
        ({"rate": 0.0}, ValueError, "rate"),
        ({"rate": -1.0}, ValueError, "rate"),
        ({"rate": 1e-200}, ValueError, "rate"),
        ({"n_samples": -1}, ValueError, "n_samples"),
        ({"rng": -1}, ValueError, "rng"),
        ({"rng": None}, TypeError, "rng"),
        ({"A": np.ones((4, 6))}, ValueError, "unit-norm"),
        ({"A": np.full((64, 6), np.nan)}, ValueError, "finite"),
        ({"A": np.zeros((64, 0))}, ValueError, "shape"),
        ({"A": np.ones(64)}, ValueError, "dimensions"),
    ],
)
def test_sparse_examples_validation(kwargs, exc, match):
    args = {"A": gabor_dictionary(6), "n_samples": 10, "k": 2, "snr_db": 6.0, "rate": 1.0, "rng": 0, **kwargs}
    with pytest.raises(exc, match=match):
        sparse_examples(**args)


@settings(max_examples=examples(60), deadline=None)
@given(
    k=st.one_of(st.integers(-3, 12), st.floats(allow_nan=True), st.booleans()),
    snr=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-500, 500)),
    rate=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2, 5)),
    n=st.integers(-2, 20),
)
def test_sparse_examples_hostile(k, snr, rate, n):
    A = gabor_dictionary(8)
    try:
        X, S, noise = sparse_examples(A, n, k, snr, rate, rng=0)
    except (ValueError, TypeError) as exc:
        assert any(w in str(exc) for w in ("k", "snr_db", "rate", "n_samples"))
        return
    assert X.shape == (n, 64) and S.shape == (n, 8)
    assert np.all(np.isfinite(X)) and np.all(np.count_nonzero(S, axis=1) == k)
    assert np.isfinite(noise_variance(A, k, snr, rate))


# --------------------------------------------------------------------------- #
# the stream
# --------------------------------------------------------------------------- #
def test_stream_blocks_truth_and_splitting():
    A = alphanumeric_dictionary()
    s = SparseDictionaryStream(A, k=5, snr_db=6.0, rate=1.0, seed=11)
    assert isinstance(s, ChunkedRandomStream) and s.dim == 64 and s.chunk == 1
    whole = s.block(2, 3, 200)
    assert whole.shape == (3, 200, 64)
    fresh = SparseDictionaryStream(A, seed=11)
    np.testing.assert_array_equal(np.concatenate([fresh.block(2, 1, 200), fresh.block(3, 2, 200)]), whole)
    for t in (2, 3, 4):
        S, noise = s.truth(t, 200)
        np.testing.assert_array_equal(whole[t - 2], S @ A.T + noise)
        assert np.all(np.count_nonzero(S, axis=1) == 5)
    # the same draws as sparse_examples with the step's generator
    X, S, noise = sparse_examples(A, 200, 5, 6.0, 1.0, rng=np.random.default_rng(np.random.SeedSequence(11, spawn_key=(3,))))
    np.testing.assert_array_equal(X, whole[1])
    assert not np.array_equal(whole[0], whole[1])
    assert not np.array_equal(SparseDictionaryStream(A, seed=12).block(2, 1, 200)[0], whole[0])
    assert s.noise_var == noise_variance(A, 5, 6.0, 1.0)
    p = s.params()
    assert p["stream"] == "SparseDictionaryStream" and p["k"] == 5 and p["n_elements"] == 64 and p["seed"] == 11


def test_stream_keeps_its_own_dictionary():
    A = gabor_dictionary(10)
    s = SparseDictionaryStream(A, k=2, seed=0)
    before = s.block(0, 1, 5).copy()
    A[:] = 0.0
    np.testing.assert_array_equal(SparseDictionaryStream(gabor_dictionary(10), k=2, seed=0).block(0, 1, 5), before)
    with pytest.raises(ValueError):
        s.A[0, 0] = 1.0


def test_stream_validation():
    A = gabor_dictionary(10)
    with pytest.raises(ValueError, match="k must"):
        SparseDictionaryStream(A, k=11)
    with pytest.raises(ValueError, match="seed"):
        SparseDictionaryStream(A, seed=-1)
    with pytest.raises(ValueError, match="unit-norm"):
        SparseDictionaryStream(2 * A)
    s = SparseDictionaryStream(A)
    with pytest.raises(ValueError, match="t must"):
        s.truth(-1, 5)
    with pytest.raises(ValueError, match="batch"):
        s.truth(0, 0)
