"""BernoulliMaskStream: random observation masks (paper 003, Delta_t = diag(m_t))."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from scipy import stats

from neurosim.streams import BernoulliMaskStream, ChunkedRandomStream


@pytest.mark.parametrize("missing", [0.1, 0.5, 0.9])
def test_fraction_missing_within_binomial_bounds(missing):
    s = BernoulliMaskStream(64, missing, seed=3, chunk=100)
    m = s.block(0, 500, 2)
    assert m.shape == (500, 2, 64)
    assert set(np.unique(m)) <= {0.0, 1.0}
    n = m.size
    k = int(np.sum(m == 0.0))
    # two-sided binomial test: a correct stream fails it with probability 1e-6
    assert stats.binomtest(k, n, missing).pvalue > 1e-6
    # per coordinate as well: no coordinate is systematically favoured
    per_coord = np.sum(m == 0.0, axis=(0, 1))
    lo, hi = stats.binom.ppf([1e-7, 1 - 1e-7], 1000, missing)
    assert np.all((per_coord >= lo) & (per_coord <= hi))


def test_missing_zero_gives_full_masks():
    m = BernoulliMaskStream(7, 0.0, seed=1).block(0, 300, 3)
    np.testing.assert_array_equal(m, np.ones((300, 3, 7)))


def test_independent_across_coordinates():
    # P(both of two coordinates missing) = missing^2 for independent draws
    missing = 0.5
    m = BernoulliMaskStream(2, missing, seed=11).block(0, 20000)[:, 0, :]
    both = int(np.sum((m[:, 0] == 0) & (m[:, 1] == 0)))
    assert stats.binomtest(both, m.shape[0], missing**2).pvalue > 1e-6


def test_deterministic_and_seeded():
    a = BernoulliMaskStream(16, 0.3, seed=5, chunk=32).block(10, 100, 2)
    b = BernoulliMaskStream(16, 0.3, seed=5, chunk=32).block(10, 100, 2)
    np.testing.assert_array_equal(a, b)
    c = BernoulliMaskStream(16, 0.3, seed=6, chunk=32).block(10, 100, 2)
    assert not np.array_equal(a, c)


@settings(max_examples=examples(40), deadline=None)
@given(t0=st.integers(0, 200), n=st.integers(0, 90), lead=st.integers(0, 40), batch=st.integers(1, 3),
       chunk=st.integers(1, 50))
def test_random_access(t0, n, lead, batch, chunk):
    """block(t0, n) equals the matching slice of a longer block from an earlier start."""
    s = BernoulliMaskStream(5, 0.4, seed=2, chunk=chunk)
    start = max(0, t0 - lead)
    long = s.block(start, t0 - start + n + 7, batch)
    fresh = BernoulliMaskStream(5, 0.4, seed=2, chunk=chunk)  # empty cache
    np.testing.assert_array_equal(fresh.block(t0, n, batch), long[t0 - start:t0 - start + n])


def test_is_chunked_stream_and_params():
    s = BernoulliMaskStream(9, 0.25, seed=4, chunk=8)
    assert isinstance(s, ChunkedRandomStream)
    assert s.dim == 9
    assert s.params() == {"stream": "BernoulliMaskStream", "dim": 9, "seed": 4, "chunk": 8, "missing": 0.25}


@pytest.mark.parametrize("missing", [-0.1, 1.0, 1.5, float("nan"), float("inf")])
def test_bad_missing_value(missing):
    with pytest.raises(ValueError, match="missing"):
        BernoulliMaskStream(4, missing)


@pytest.mark.parametrize("missing", ["0.5", None, True, [0.5]])
def test_bad_missing_type(missing):
    with pytest.raises(TypeError, match="missing"):
        BernoulliMaskStream(4, missing)


@pytest.mark.parametrize("kw, name, exc", [
    ({"dim": 0}, "dim", ValueError), ({"dim": 2.0}, "dim", TypeError),
    ({"seed": -1}, "seed", ValueError), ({"chunk": 0}, "chunk", ValueError),
])
def test_bad_other_arguments(kw, name, exc):
    args = {"dim": 4, "missing": 0.5, **kw}
    with pytest.raises(exc, match=name):
        BernoulliMaskStream(**args)


@settings(max_examples=examples(60), deadline=None)
@given(missing=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.text(max_size=3)),
       dim=st.integers(-3, 6))
def test_hostile_arguments_raise_cleanly(missing, dim):
    try:
        s = BernoulliMaskStream(dim, missing)
    except (TypeError, ValueError) as exc:
        assert "missing" in str(exc) or "dim" in str(exc)
        return
    assert 0.0 <= s.missing < 1.0 and s.dim >= 1
    m = s.block(0, 3)
    assert m.shape == (3, 1, dim) and set(np.unique(m)) <= {0.0, 1.0}
