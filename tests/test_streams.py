"""Gaussian and switching input streams (paper 002, Section VI)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from neurosim.streams import (
    PAPER002_SWITCHES,
    ArrayStream,
    GaussianStream,
    SwitchingStream,
    paper002_spectrum,
)


def _concat_blocks(stream, t0, sizes, batch=1):
    out, t = [], t0
    for s in sizes:
        out.append(stream.block(t, s, batch))
        t += s
    return np.concatenate(out, axis=0)


# --------------------------------------------------------------------------- #
# determinism / block-splitting invariance
# --------------------------------------------------------------------------- #
@settings(max_examples=examples(40), deadline=None)
@given(
    t0=st.integers(0, 100),
    sizes=st.lists(st.integers(0, 23), min_size=1, max_size=8),
    batch=st.integers(1, 3),
    switching=st.booleans(),
)
def test_block_equals_concatenation_of_smaller_blocks(t0, sizes, batch, switching):
    base = GaussianStream([3.0, 1.0, 0.5], seed=7, eigenvectors="random", chunk=16)
    stream = SwitchingStream(base, [(20, 2.0), (45, 0.5), (45, 3.0)]) if switching else base
    whole = stream.block(t0, sum(sizes), batch)
    assert whole.shape == (sum(sizes), batch, 3)
    np.testing.assert_array_equal(whole, _concat_blocks(stream, t0, sizes, batch))
    # a fresh instance (empty cache) gives the same numbers
    base2 = GaussianStream([3.0, 1.0, 0.5], seed=7, eigenvectors="random", chunk=16)
    stream2 = SwitchingStream(base2, [(20, 2.0), (45, 0.5), (45, 3.0)]) if switching else base2
    np.testing.assert_array_equal(whole, stream2.block(t0, sum(sizes), batch))


def test_seeds_and_shared_eigenvectors():
    lam = paper002_spectrum(0)
    g1 = GaussianStream(lam, seed=1, eigenvectors="random", eigvec_seed=5)
    g2 = GaussianStream(lam, seed=2, eigenvectors="random", eigvec_seed=5)
    np.testing.assert_array_equal(g1.eigenvectors, g2.eigenvectors)  # same covariance
    assert not np.allclose(g1.block(0, 10), g2.block(0, 10))  # new samples
    g3 = GaussianStream(lam, seed=5, eigenvectors="random")  # eigvec_seed defaults to seed
    np.testing.assert_array_equal(g3.eigenvectors, g1.eigenvectors)
    V = g1.eigenvectors
    np.testing.assert_allclose(V.T @ V, np.eye(64), atol=1e-12)
    np.testing.assert_allclose(g1.covariance, (V * lam) @ V.T)
    np.testing.assert_array_equal(GaussianStream(lam).eigenvectors, np.eye(64))
    sw = SwitchingStream(g1, PAPER002_SWITCHES)
    np.testing.assert_array_equal(sw.base.eigenvectors, V)
    p = sw.params()
    assert p["switch_steps"] == [1000, 6000] and p["base_eigvec_seed"] == 5 and p["dim"] == 64


def test_paper002_spectrum():
    lam = paper002_spectrum(3)
    assert lam.shape == (64,)
    np.testing.assert_array_equal(lam[:4], [6, 5, 4, 2])
    assert np.all((lam[4:] >= 0) & (lam[4:] <= 0.2)) and np.all(np.diff(lam) <= 0)
    np.testing.assert_array_equal(lam, paper002_spectrum(np.random.default_rng(3)))
    assert not np.array_equal(lam, paper002_spectrum(4))


# --------------------------------------------------------------------------- #
# statistics
# --------------------------------------------------------------------------- #
def test_empirical_covariance_matches_target():
    """20k samples: every entry within 5 standard errors, top eigenvalues within 5 %.

    For Gaussian data the standard error of the sample second moment
    ``C_ij`` is ``sqrt((C_ii C_jj + C_ij^2) / N)``.
    """
    N = 20000
    g = GaussianStream(paper002_spectrum(0), seed=11, eigenvectors="random")
    x = g.block(0, N)[:, 0]
    C_hat = x.T @ x / N
    C = g.covariance
    se = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / N)
    assert np.all(np.abs(C_hat - C) <= 5 * se)
    np.testing.assert_allclose(np.linalg.eigvalsh(C_hat)[::-1][:4], [6, 5, 4, 2], rtol=0.05)
    assert np.abs(x.mean(axis=0)).max() < 5 * np.sqrt(6 / N)


def test_switching_scale_applied_at_the_right_steps():
    g = GaussianStream([2.0, 1.0], seed=3, eigenvectors="random", chunk=64)
    sw = SwitchingStream(g, PAPER002_SWITCHES)
    t = np.array([0, 999, 1000, 1001, 5999, 6000, 10**6])
    np.testing.assert_array_equal(sw.scale_at(t), [1, 1, 2, 2, 2, 1, 1])
    np.testing.assert_array_equal(sw.eigenvalues_at(999), [2.0, 1.0])
    np.testing.assert_array_equal(sw.eigenvalues_at(1000), [4.0, 2.0])
    np.testing.assert_array_equal(sw.eigenvalues_at(6000), [2.0, 1.0])
    np.testing.assert_allclose(sw.covariance_at(3000), 2 * g.covariance)
    x, xb = sw.block(990, 5020), g.block(990, 5020)
    ratio = (x / xb)[:, 0, 0]
    np.testing.assert_allclose(ratio[:10], 1.0)  # steps 990..999
    np.testing.assert_allclose(ratio[10:5010], np.sqrt(2.0))  # 1000..5999
    np.testing.assert_allclose(ratio[5010:], 1.0)  # 6000..6009
    # empirical variance doubles in the switched window
    v = sw.block(1000, 5000)[:, 0]
    assert np.trace(v.T @ v / 5000) == pytest.approx(6.0, rel=0.05)
    # repeated steps: the last one wins; no switches is the identity
    assert SwitchingStream(g, [(5, 3.0), (5, 0.5)]).scale_at(5) == 0.5
    np.testing.assert_array_equal(SwitchingStream(g, []).block(0, 50), g.block(0, 50))


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(eigenvalues=[]), "eigenvalues"),
        (dict(eigenvalues=[1.0, -0.1]), "non-negative"),
        (dict(eigenvalues=[1.0, np.inf]), "finite"),
        (dict(eigenvalues=[[1.0]]), "eigenvalues"),
        (dict(eigenvalues=[1.0], seed=-1), "seed"),
        (dict(eigenvalues=[1.0], chunk=0), "chunk"),
        (dict(eigenvalues=[1.0, 2.0], eigenvectors="haar"), "eigenvectors"),
        (dict(eigenvalues=[1.0, 2.0], eigenvectors=[[1.0, 1.0], [0.0, 1.0]]), "orthogonal"),
        (dict(eigenvalues=[1.0, 2.0], eigenvectors=np.eye(3)), "eigenvectors"),
        (dict(eigenvalues=[1.0], eigvec_seed=-3), "eigvec_seed"),
        (dict(eigenvalues=[1.7e308, 1.7e308]), "overflow"),
    ],
)
def test_gaussian_stream_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GaussianStream(**kwargs)


@pytest.mark.parametrize(
    "switches,exc,match",
    [
        ([(10, 2.0), (5, 1.0)], ValueError, "non-decreasing"),
        ([(-1, 2.0)], ValueError, "step"),
        ([(10, 0.0)], ValueError, "scale"),
        ([(10, np.nan)], ValueError, "scale"),
        ([(10.5, 2.0)], TypeError, "step"),
        ([(10, 2.0, 3.0)], TypeError, "pair"),
        ("ab", TypeError, "switches"),
        (5, TypeError, "switches"),
    ],
)
def test_switching_stream_rejects_bad_switches(switches, exc, match):
    with pytest.raises(exc, match=match):
        SwitchingStream(GaussianStream([1.0]), switches)


def test_switching_stream_rejects_non_stream_base():
    with pytest.raises(TypeError, match="base"):
        SwitchingStream(np.ones(3), [])


_hostile = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5),
    st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=2)), max_size=4),
    st.lists(st.lists(st.floats(-2, 2), max_size=3), max_size=3),
)


@settings(max_examples=examples(150), deadline=None)
@given(eigenvalues=_hostile, seed=_hostile, eigenvectors=st.one_of(_hostile, st.just("random")), eigvec_seed=_hostile, chunk=_hostile)
def test_gaussian_stream_hostile_arguments(eigenvalues, seed, eigenvectors, eigvec_seed, chunk):
    try:
        g = GaussianStream(eigenvalues, seed=seed, eigenvectors=eigenvectors, eigvec_seed=eigvec_seed, chunk=chunk)
    except (ValueError, TypeError):
        return
    x = g.block(0, 3)
    assert x.shape == (3, 1, g.dim) and np.all(np.isfinite(x))


@settings(max_examples=examples(150), deadline=None)
@given(
    switches=st.one_of(
        _hostile,
        st.lists(st.tuples(_hostile, _hostile), max_size=3),
        st.lists(st.tuples(st.integers(-3, 50), st.one_of(st.floats(-1, 5), st.just(float("nan")))), max_size=4),
    )
)
def test_switching_stream_hostile_arguments(switches):
    try:
        sw = SwitchingStream(GaussianStream([1.0, 0.5], seed=1), switches)
    except (ValueError, TypeError):
        return
    x = sw.block(0, 60)
    assert x.shape == (60, 1, 2) and np.all(np.isfinite(x))


def test_chunk_too_large_for_memory_is_refused_by_name():
    with pytest.raises(ValueError, match="chunk"):
        GaussianStream([1.0, 0.5], chunk=3_263_260_492)
    with pytest.raises(ValueError, match="chunk"):
        GaussianStream(np.ones(1024), chunk=2**22)  # 32 GiB per chunk
    # the bound is one chunk of one batch row in 256 MiB: 2**15 rows of 1024 values, and not one more
    with pytest.raises(ValueError, match="chunk"):
        GaussianStream(np.ones(1024), chunk=2**15 + 1)
    assert GaussianStream(np.ones(1024), chunk=2**15).chunk == 2**15


def test_array_stream_blocks_are_read_only_and_equal_to_the_data():
    data = np.arange(12.0).reshape(6, 2)
    s = ArrayStream(data)
    b = s.block(2, 3)
    assert not b.flags.writeable
    assert np.array_equal(b[:, 0], data[2:5])
    wrap = s.block(5, 3)  # wraps around the end
    assert np.array_equal(wrap[:, 0], data[[5, 0, 1]])
    assert not wrap.flags.writeable


def test_array_stream_keeps_a_copy_so_editing_the_data_later_changes_no_run():
    # issue 38: the stream kept a view of the caller's array, and an edit after construction changed the run
    import neurosim as ns

    def run(stream):
        net = ns.Network(seed=0)
        x = ns.Population("x", 2)
        net.add(x)
        net.connect(stream, x)
        net.record(x, "activity")
        net.run(3, backend="python")
        return net.recorders["x"].to_dataset()["activity"].values[:, 0, :]

    X = np.arange(6.0).reshape(3, 2)
    s = ArrayStream(X)
    X[:] = -1.0  # the caller reuses its buffer
    np.testing.assert_array_equal(run(s), np.arange(6.0).reshape(3, 2))
    assert not np.shares_memory(s.data, X) and not s.data.flags.writeable
    # float32, a (T, batch, dim) array, a list: a private copy each time
    for data in (np.ones((3, 2), np.float32), np.ones((3, 1, 2)), [[1.0, 2.0]]):
        t = ArrayStream(data)
        assert not t.data.flags.writeable and not np.shares_memory(t.data, np.asarray(data))


def test_array_stream_copy_false_shares_the_callers_array_and_says_so():
    X = np.arange(6.0).reshape(3, 2)
    s = ArrayStream(X, copy=False)
    assert np.shares_memory(s.data, X)  # no second copy of a large data set
    X[0] = 7.0  # documented: an edit shows in the steps read after it
    assert s.block(0, 1)[0].tolist() == [[7.0, 7.0]]
    # where a conversion is needed it is a copy anyway
    assert not np.shares_memory(ArrayStream(np.ones((3, 2), np.float32), copy=False).data, X)
    with pytest.raises(TypeError, match="copy must be a bool"):
        ArrayStream(X, copy="no")
