"""Assigning a projection's weights or mask converts, validates and keeps the structure."""

import numpy as np
import pytest

from sm_helpers import make_sm


def _read_only(w):
    w = w.copy()
    w.flags.writeable = False
    return w


def assigned(make):
    net = make_sm("XY", n=8, k=3)
    net.run(5)
    W = net.projections["W"]
    W.weights = make(W.weights.copy())
    return net, W


@pytest.mark.parametrize("make", [
    lambda w: w.astype(np.float32),
    lambda w: np.round(w * 10).astype(np.int64),
    lambda w: np.asfortranarray(w),
    lambda w: np.repeat(w, 2, axis=1)[:, ::2],  # a strided view
    lambda w: _read_only(w),
], ids=["float32", "int64", "fortran", "strided", "read_only"])
def test_convertible_weights_become_c_contiguous_float64_and_run(make):
    net, W = assigned(make)
    w = W.weights
    assert w.dtype == np.float64 and w.flags.c_contiguous and w.flags.writeable and w.flags.owndata
    expected = np.asarray(make(np.arange(24.0).reshape(3, 8) / 10), dtype=np.float64)
    W.weights = make(np.arange(24.0).reshape(3, 8) / 10)
    assert np.array_equal(W.weights, expected)
    net.run(5)  # the compiled kernels accept what the property stored
    net.run(5, backend="python")
    assert net.t == 15 and np.isfinite(W.weights).all()


@pytest.mark.parametrize("value, error, match", [
    (np.zeros((3, 7)), ValueError, r"weights of projection 'W' must have shape \(post.size, pre.size\) = \(3, 8\).*got \(3, 7\)"),
    (np.zeros(24), ValueError, r"\(3, 8\).*got \(24,\)"),
    (np.full((3, 8), np.nan), ValueError, r"weights of projection 'W' must be finite"),
    (np.full((3, 8), np.inf), ValueError, "must be finite"),
    (np.zeros((3, 8), dtype=bool), TypeError, r"weights of projection 'W' must hold real numbers .*got dtype bool"),
    (np.zeros((3, 8), dtype=complex), TypeError, "dtype complex128"),
    ([["a"] * 8] * 3, TypeError, "dtype <U1"),
])
def test_bad_weights_are_refused_and_change_nothing(value, error, match):
    net = make_sm("XY", n=8, k=3)
    net.run(5)
    W = net.projections["W"]
    before = W.weights
    with pytest.raises(error, match=match):
        W.weights = value
    assert W.weights is before
    net.run(5)


def test_lateral_diagonal_and_mask_are_reapplied_on_assignment():
    net = make_sm("XY", n=8, k=3)
    M, W = net.projections["M"], net.projections["W"]
    M.weights = np.ones((3, 3))
    assert np.array_equal(M.weights, 1.0 - np.eye(3))
    mask = np.ones((3, 8), dtype=np.int64)
    mask[0, :4] = 0
    W.mask = mask
    assert W.mask.dtype == np.bool_ and W.mask.flags.c_contiguous and not W.mask[0, :4].any()
    assert np.all(W.weights[0, :4] == 0.0)
    W.weights = np.ones((3, 8))
    assert np.all(W.weights[0, :4] == 0.0) and np.all(W.weights[0, 4:] == 1.0)
    M.mask = np.ones((3, 3), dtype=bool)
    assert not M.mask.diagonal().any(), "a lateral mask has no self-synapses"
    with pytest.raises(ValueError, match=r"mask of projection 'W' must hold booleans or 0/1; got values \[2\]"):
        W.mask = np.full((3, 8), 2)
    with pytest.raises(TypeError, match=r"mask of projection 'W' must hold bool or integer 0/1; got dtype float64"):
        W.mask = np.ones((3, 8))
    with pytest.raises(ValueError, match=r"mask of projection 'W' must have shape .* \(3, 8\)"):
        W.mask = np.ones((8, 3), dtype=bool)


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_mask_set_after_a_run_takes_effect(backend):
    net = make_sm("XY", n=8, k=3)
    net.run(20, backend=backend)
    W = net.projections["W"]
    assert np.all(W.weights[:, :3] != 0.0)
    mask = np.ones((3, 8), dtype=bool)
    mask[:, :3] = False
    W.mask = mask
    net.run(20, backend=backend)
    # the rule would have made these synapses nonzero again at every step
    assert np.all(W.weights[:, :3] == 0.0) and np.all(W.weights[:, 3:] != 0.0)
    W.mask = None
    net.run(5, backend=backend)
    assert np.all(W.weights[:, :3] != 0.0), "without a mask the rule grows every synapse again"
