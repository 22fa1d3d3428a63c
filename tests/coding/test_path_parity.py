"""SparseCode dynamics: the compiled and NumPy paths fail alike on a dictionary or input that overflows."""

import re
import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.coding import NonConvergenceWarning
from neurosim.streams import GaussianStream

#: slow tier: a network compiled per encoder and path (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

METHODS = [("feature_sign", dict(lam=0.1)), ("feature_sign", dict(n_nonzero=2)), ("omp", dict(n_nonzero=2)),
           ("k_winners", dict(n_nonzero=2)), ("omp", dict(n_nonzero=2, nonneg=True))]
IDS = ["lasso", "count", "omp", "k_winners", "nn_omp"]


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


LABEL = ("a.activity (dictionary 'D' or its input too large: W W^T, W x or the squared projections of x on the atoms "
         "overflow float64)")


@pytest.mark.parametrize(("method", "kw"), METHODS[:3] + METHODS[4:], ids=IDS[:3] + IDS[4:])  # the Gram-based methods
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


def test_k_winners_needs_no_gram_and_runs_on_with_a_grown_dictionary_on_both_paths():
    # |w| ~ 5e159: squared norms overflow, x . w does not; the winners are those of x W^T
    X = np.random.default_rng(2).standard_normal((20, 4))
    codes = {}
    for backend in ("compiled", "python"):
        net = coder("k_winners", dict(n_nonzero=2), dictionary(), X)
        net.run(5, backend=backend)
        net.projections["D"].weights *= 1e160
        net.run(5, backend=backend)
        codes[backend] = net.recorders["a"].to_dataset().activity.values[5:, 0]
    W = dictionary() * 1e160
    C = X[5:10] @ W.T
    want = np.where(np.argsort(np.argsort(-np.abs(C), axis=1), axis=1) < 2, C, 0.0)
    np.testing.assert_allclose(codes["compiled"], want, rtol=1e-14)
    np.testing.assert_array_equal(codes["python"], codes["compiled"])  # same BLAS call, same selection kernel


@pytest.mark.parametrize(("method", "kw"), METHODS, ids=IDS)
def test_an_input_whose_correlations_overflow_stops_both_paths_at_its_step(method, kw):
    X = np.random.default_rng(3).standard_normal((20, 4))
    X[6] = 1e308  # finite, but every x . w_i = 1e308 * sum_j w_ij overflows
    for backend in ("compiled", "python"):
        err = _fail_at(coder(method, kw, dictionary(), X), 20, backend)
        assert (err.step, err.variable) == (7, LABEL), backend
        assert "values are still finite" in str(err)


# -- trajectories of a learning dictionary -------------------------------------------------------


def learner(batch, perturb=False):
    """Non-negative feature-sign codes of a dictionary learning by Oja's rule, one atom replaced every 100 steps."""
    n, m = 8, 12
    net = ns.Network(seed=0, batch=batch)
    x = ns.Population("x", n)
    a = ns.Population("a", m, dynamics=ns.SparseCode("feature_sign", lam=0.1, nonneg=True))
    net.add(x, a)
    net.connect(GaussianStream(np.linspace(2.0, 0.2, n), seed=1, eigenvectors="random", eigvec_seed=3), x)
    net.add(ns.Projection("D", x, a, init=ns.Normal(0.3), rule=ns.Oja(rate=0.2)))
    if perturb:  # one weight moved by one ulp
        w = net.projections["D"].weights
        w[0, 0] = np.nextafter(w[0, 0], np.inf)

    def turnover(net):
        pop = net.populations["a"]
        return [ns.Death(pop, pop.ids[:1]), ns.Birth(pop, 1)]

    net.add(ns.Trigger(lambda net: True, turnover, every=100))
    net.record(a, "activity")
    return net


def run_codes(net, steps, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvergenceWarning)
        net.run(steps, backend=backend)
    return net.recorders["a"].to_dataset().activity.values


def relative_gap(A, B):
    """Per recorded step, max |A - B| over units and samples relative to max |B| over the run (NaN: unit not alive)."""
    return np.nanmax(np.abs(A - B).reshape(A.shape[0], -1), axis=1) / np.nanmax(np.abs(B))


def test_one_sample_learning_run_agrees_across_paths_to_the_documented_bound():
    # With one sample per step every product both paths compute is the same BLAS call or the same
    # scalar expression; the Gram must not come from NumPy's matmul. Usually the two runs are
    # bit-identical. But this chaotic learner amplifies a one-ulp difference in one weight to
    # about 1e-12 in 1,000 steps and past 1e-9 in about 1,900, and the same BLAS
    # call is not promised to give the same bits for arrays at other memory alignments: a fresh-machine
    # run once parted at step 1,780 of 2,000. So the bound is asserted over 1,000 steps, where one ulp
    # stays far below it, and that this is so is checked on the same learner.
    steps = 1000
    compiled = run_codes(learner(1), steps, "compiled")
    gap = relative_gap(compiled, run_codes(learner(1), steps, "python"))
    assert gap.max() <= 1e-9, f"paths part at step {np.argmax(gap > 1e-9) + 1}"
    ulp = relative_gap(run_codes(learner(1, perturb=True), steps, "compiled"), compiled)
    assert 0.0 < ulp.max() <= 1e-10, "one ulp stays far below the bound over this horizon"


def test_batch_learning_run_agrees_until_the_model_itself_amplifies_rounding():
    # With 4 samples per step the NumPy Oja rule sums the batch in BLAS order, the kernel in sample
    # order: per step the paths differ by rounding. The learner amplifies any rounding-size
    # difference (here one ulp in one initial weight, on one path) to O(1) within ~1200 steps, so
    # the documented bound is: 1e-9 relative for the first 150 steps, then whatever the model makes
    # of rounding, and every single step solved alike from the same state (next test).
    steps = 1500
    compiled = run_codes(learner(4), steps, "compiled")
    paths = relative_gap(compiled, run_codes(learner(4), steps, "python"))
    assert paths[:150].max() <= 1e-9
    ulp = relative_gap(run_codes(learner(4, perturb=True), steps, "compiled"), compiled)
    assert ulp[:10].max() <= 1e-12 and ulp.max() > 1e-3, "a one-ulp perturbation grows to visible size"


@pytest.mark.parametrize("batch", [1, 4])
def test_each_step_is_solved_alike_from_the_same_state(tmp_path, batch):
    # after the trajectories have parted: the same checkpoint, one step on each path
    net = learner(batch)
    run_codes(net, 1250, "compiled")
    net.save(tmp_path / "ckpt.npz")
    out = {}
    for backend in ("compiled", "python"):
        twin = learner(batch)
        twin.load(tmp_path / "ckpt.npz")
        run_codes(twin, 1, backend)
        out[backend] = twin.populations["a"].activity.copy(), twin.projections["D"].weights.copy()
    for c, p in zip(out["compiled"], out["python"]):
        np.testing.assert_allclose(c, p, rtol=0, atol=1e-12 * np.abs(p).max())
