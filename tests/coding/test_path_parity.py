"""SparseCode dynamics: the compiled and NumPy paths fail alike on a dictionary or input that overflows."""

import re

import numpy as np
import pytest

import neurosim as ns

METHODS = [("feature_sign", dict(lam=0.1)), ("feature_sign", dict(n_nonzero=2)), ("omp", dict(n_nonzero=2)),
           ("k_winners", dict(n_nonzero=2))]
IDS = ["lasso", "count", "omp", "k_winners"]


def coder(method, kw, D, X):
    net = ns.Network(seed=0)
    x = ns.Population("x", D.shape[1])
    a = ns.Population("a", D.shape[0], dynamics=ns.SparseCode(method, **kw))
    net.add(x, a)
    net.connect(ns.ArrayStream(X), x)
    net.add(ns.Projection("D", x, a, init=D))
    net.record(a, "activity")
    return net


def dictionary(scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    D = np.abs(rng.standard_normal((6, 4))) + 0.5  # positive entries: sum_j D_ij > ||D_i|| = 1
    return scale * D / np.linalg.norm(D, axis=1, keepdims=True)


@pytest.mark.parametrize("backend", ["compiled", "python"])
@pytest.mark.parametrize(("method", "kw"), METHODS, ids=IDS)
def test_a_dictionary_whose_squared_norms_overflow_is_refused_before_any_step(method, kw, backend):
    X = np.random.default_rng(1).standard_normal((10, 4))
    D = dictionary(1e160)  # |w| ~ 5e159: ||w||^2 ~ 1e320 overflows
    net = coder(method, kw, D, X)
    big = re.escape(f"{np.abs(D).max():.3g}")
    with pytest.raises(ValueError, match=rf"dictionary projection 'D' of SparseCode 'a'.*overflows float64 "
                                         rf"\(max \|weight\| {big}\); allowed: sum_j W\[i, j\]\^2 <= 1\.798e\+308"):
        net.run(3, backend=backend)
    assert net.t == 0
    assert not net.populations["a"].activity.any() and not net.populations["x"].activity.any()


def _fail_at(net, steps, backend):
    with pytest.raises(ns.SimulationDiverged) as info:
        net.run(steps, backend=backend)
    return info.value


LABEL = "a.activity (dictionary 'D' or its input too large: W W^T or W x overflows float64)"


@pytest.mark.parametrize(("method", "kw"), METHODS, ids=IDS)
def test_a_dictionary_grown_too_large_between_runs_stops_both_paths_at_the_same_step(method, kw):
    X = np.random.default_rng(2).standard_normal((20, 4))
    errors, codes = {}, {}
    for backend in ("compiled", "python"):
        net = coder(method, kw, dictionary(), X)
        net.run(5, backend=backend)
        codes[backend] = net.populations["a"].activity.copy()
        net.projections["D"].weights *= 1e160  # still finite, squared norms overflow
        errors[backend] = _fail_at(net, 10, backend)
        assert net.t == 6
        np.testing.assert_array_equal(net.populations["a"].activity, codes[backend])  # codes left as they were
    for err in errors.values():
        assert (err.step, err.variable) == (6, LABEL)
        assert err.recordings["a"].time.values.tolist() == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("method", "kw"), METHODS, ids=IDS)
def test_an_input_whose_correlations_overflow_stops_both_paths_at_its_step(method, kw):
    X = np.random.default_rng(3).standard_normal((20, 4))
    X[6] = 1e308  # finite, but every x . w_i = 1e308 * sum_j w_ij overflows
    for backend in ("compiled", "python"):
        err = _fail_at(coder(method, kw, dictionary(), X), 20, backend)
        assert (err.step, err.variable) == (7, LABEL), backend
        assert "values are still finite" in str(err)
