"""Sparse encoders running as population dynamics inside network steps."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.coding import feature_sign, k_winners, omp


def problem(n_features=10, n_atoms=16, T=40, seed=0):
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((n_atoms, n_features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((T, n_features))
    return D, X


def coder_net(dynamics, D, X, rule=None, batch=1):
    net = ns.Network(seed=0, batch=batch)
    x = ns.Population("x", D.shape[1])
    a = ns.Population("a", D.shape[0], dynamics=dynamics)
    net.add(x, a)
    net.connect(ns.ArrayStream(X if batch == 1 else X.reshape(-1, batch, X.shape[1])), x)
    net.add(ns.Projection("D", x, a, init=D, rule=rule))
    net.record(a, "activity")
    return net


def codes(net):
    return net.recorders["a"].to_dataset().activity.values


def objective(X, D, A, lam):
    return 0.5 * ((X - A @ D) ** 2).sum(axis=1) + lam * np.abs(A).sum(axis=1)


@pytest.mark.parametrize("warm", [True, False])
def test_feature_sign_dynamics_solves_each_step(warm):
    D, X = problem()
    lam = 0.3
    net = coder_net(ns.SparseCode("feature_sign", lam=lam, warm_start=warm), D, X)
    net.run(len(X), backend="compiled")
    A = codes(net)[:, 0, :]
    ref = feature_sign(X, D, lam)
    np.testing.assert_allclose(objective(X, D, A, lam), objective(X, D, ref, lam), rtol=1e-10)
    np.testing.assert_allclose(A, ref, atol=1e-8)


def test_omp_and_k_winners_dynamics_equal_public_encoders():
    D, X = problem(seed=1)
    for dyn, ref in ((ns.SparseCode("omp", n_nonzero=3), omp(X, D, 3)),
                     (ns.SparseCode("k_winners", n_nonzero=4, nonneg=True), k_winners(X, D, 4, nonneg=True))):
        net = coder_net(dyn, D, X)
        net.run(len(X))
        np.testing.assert_allclose(codes(net)[:, 0, :], ref, atol=1e-12)


@pytest.mark.parametrize("batch", [1, 4])
def test_nonneg_omp_dynamics_same_bits_on_both_backends_and_equal_the_public_encoder(batch):
    D, X = problem(seed=5)
    D = np.abs(D)  # non-negative atoms: some NNLS coefficients drop to 0
    runs = {}
    for backend in ("compiled", "python"):
        net = coder_net(ns.SparseCode("omp", n_nonzero=4, nonneg=True), D, X, batch=batch)
        net.run(len(X) // batch, backend=backend)
        runs[backend] = codes(net).reshape(len(X), D.shape[0])
    # one kernel on the Gram and correlations of the same BLAS calls: the same bits
    np.testing.assert_array_equal(runs["compiled"], runs["python"])
    ref = omp(X, D, 4, nonneg=True)
    np.testing.assert_allclose(runs["compiled"], ref, rtol=0, atol=1e-12)
    assert np.all(runs["compiled"] >= 0.0) and np.any(runs["compiled"] == 0.0)
    assert not np.allclose(ref, omp(X, D, 4), atol=1e-3)  # not the signed encoder


def test_nonneg_omp_dynamics_learning_dictionary_same_bits_on_both_backends():
    D, X = problem(seed=6)
    runs = {}
    for backend in ("compiled", "python"):
        net = coder_net(ns.SparseCode("omp", n_nonzero=3, nonneg=True), D, X, rule=ns.Oja(rate=0.05))
        net.run(len(X), backend=backend)
        runs[backend] = (codes(net), net.projections["D"].weights.copy())
    np.testing.assert_array_equal(runs["compiled"][0], runs["python"][0])
    np.testing.assert_array_equal(runs["compiled"][1], runs["python"][1])
    assert not np.allclose(runs["compiled"][1], D), "the dictionary did learn"


def test_target_count_mode_hits_the_count_per_sample():
    D, X = problem(seed=2)
    net = coder_net(ns.SparseCode("feature_sign", n_nonzero=5), D, X, batch=4)
    net.run(len(X) // 4)
    A = codes(net)
    assert np.all((np.abs(A) > 0).sum(axis=-1) == 5)


def test_learning_dictionary_refreshes_the_gram_in_compiled_segments():
    D, X = problem(seed=3)
    a = coder_net(ns.SparseCode("feature_sign", lam=0.2), D, X, rule=ns.Oja(rate=0.05))
    b = coder_net(ns.SparseCode("feature_sign", lam=0.2), D, X, rule=ns.Oja(rate=0.05))
    a.run(len(X), backend="compiled")
    b.run(len(X), backend="python")
    np.testing.assert_allclose(a.projections["D"].weights, b.projections["D"].weights, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(codes(a), codes(b), atol=1e-8)
    assert not np.allclose(a.projections["D"].weights, D), "the dictionary did learn"


def test_atoms_born_during_a_run_join_the_code():
    D, X = problem(seed=4)
    net = coder_net(ns.SparseCode("feature_sign", lam=0.1), D, X)
    net.run(10)
    a = net.populations["a"]
    net.apply(ns.Birth(a, 2))
    net.projections["D"].weights[-2:] = X[10:12] / np.linalg.norm(X[10:12], axis=1, keepdims=True)
    net.run(2)
    A = codes(net)
    # the newborn atoms equal the normalised next two signals, so each of them is used to code its signal
    assert A.shape[-1] == 18 and np.isnan(A[:10, 0, 16:]).all()
    assert abs(A[10, 0, 16]) > 0.5 and abs(A[11, 0, 17]) > 0.5


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match="exactly one of lam"):
        ns.SparseCode("feature_sign")
    with pytest.raises(ValueError, match="needs n_nonzero"):
        ns.SparseCode("omp")
    with pytest.raises(ValueError, match="method must be one of"):
        ns.SparseCode("lars", lam=0.1)
    with pytest.raises(ValueError, match="lam must be in"):
        ns.SparseCode("feature_sign", lam=-1.0)
    D, X = problem()
    net = coder_net(ns.SparseCode("k_winners", n_nonzero=40), D, X)
    with pytest.raises(ValueError, match="n_nonzero must be in"):
        net.run(1)


def small_net(dynamics, init, backend_T=4, seed=0):
    """x (5 features) -> a (8 atoms): more atoms than features (an overcomplete code)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((backend_T, 5))
    net = ns.Network(seed=0)
    x = ns.Population("x", 5)
    a = ns.Population("a", 8, dynamics=dynamics)
    net.add(x, a)
    net.connect(ns.ArrayStream(X), x)
    net.add(ns.Projection("D", x, a, init=init))
    net.record(a, "activity")
    return net


@pytest.mark.parametrize("backend", ["compiled", "python"])
@pytest.mark.parametrize("dyn", [lambda: ns.SparseCode("omp", n_nonzero=7),
                                 lambda: ns.SparseCode("feature_sign", n_nonzero=7)])
def test_n_nonzero_above_n_features_is_refused_on_validation(dyn, backend):
    D = np.random.default_rng(1).standard_normal((8, 5))
    net = small_net(dyn(), D)
    with pytest.raises(ValueError, match=r"n_nonzero must be in \[1, 5\] \(min\(n_atoms, n_features\)"):
        net.run(1, backend=backend)
    assert net.t == 0


@pytest.mark.parametrize("backend", ["compiled", "python"])
@pytest.mark.parametrize("how", ["between_runs", "python_trigger", "compiled_trigger"])
def test_n_nonzero_is_rechecked_after_a_death(backend, how):
    from neurosim.triggers import every_step

    D = np.random.default_rng(1).standard_normal((8, 5))
    net = small_net(ns.SparseCode("k_winners", n_nonzero=3), D, backend_T=10)
    a = net.populations["a"]
    match = r"SparseCode n_nonzero must be in \[1, 2\] \(n_atoms = size of 'a'\)"
    if how == "between_runs":
        net.run(2, backend=backend)
        # refused by the event itself, before anything changes (issue 38), and the network runs on
        with pytest.raises(ValueError, match=match):
            net.apply(ns.Death(a, a.ids[:6]))
        assert a.size == 8 and len(net.event_log) == 0
        net.run(1, backend=backend)
        return

    def kill(net):
        return ns.Death(a, a.ids[:6]) if net.t == 2 else None

    cond = (lambda n: n.t == 2) if how == "python_trigger" else every_step()
    net.add(ns.Trigger(cond, kill, every=2))
    with pytest.raises(ValueError, match=match):
        net.run(6, backend=backend)
    # the Death is refused in the events phase of step 2, which is undone: both backends stop at the last
    # completed step, with every atom
    assert net.t == 1 and a.size == 8 and len(net.event_log) == 0


@pytest.mark.parametrize("make", [
    lambda: ns.SparseCode("feature_sign", lam=0.1),
    lambda: ns.SparseCode("feature_sign", lam=0.1, warm_start=False, nonneg=True),
    lambda: ns.SparseCode("feature_sign", n_nonzero=3),
    lambda: ns.SparseCode("omp", n_nonzero=3),
    lambda: ns.SparseCode("omp", n_nonzero=3, nonneg=True),
    lambda: ns.SparseCode("k_winners", n_nonzero=3, absolute=False),
    lambda: ns.SparseCode("k_winners", n_nonzero=7),
])
def test_zero_atoms_are_inactive_on_both_backends(make):
    rng = np.random.default_rng(2)
    D = rng.standard_normal((8, 5))
    D[[1, 4]] = 0.0
    runs = []
    for backend in ("compiled", "python"):
        net = small_net(make(), D, backend_T=6)
        net.run(6, backend=backend)
        runs.append(codes(net)[:, 0, :])
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-10)
    assert np.all(runs[0][:, [1, 4]] == 0.0)
    assert np.all(np.count_nonzero(runs[0], axis=1) > 0)


@pytest.mark.parametrize("make", [lambda: ns.SparseCode("feature_sign", lam=0.1),
                                  lambda: ns.SparseCode("omp", n_nonzero=2),
                                  lambda: ns.SparseCode("omp", n_nonzero=2, nonneg=True),
                                  lambda: ns.SparseCode("k_winners", n_nonzero=2)])
def test_an_all_zero_dictionary_gives_zero_codes_on_both_backends(make):
    for backend in ("compiled", "python"):
        net = small_net(make(), ns.Constant(0.0))
        net.run(3, backend=backend)
        assert np.all(codes(net) == 0.0)


def test_constructor_refuses_options_the_encoders_refuse():
    with pytest.raises(ValueError, match=r"tol must be in \(0.0, 1.0\)"):
        ns.SparseCode("feature_sign", lam=0.1, tol=2)


def test_compiled_non_convergence_is_warned_at_the_end_of_the_run():
    from neurosim.coding import NonConvergenceWarning

    D, X = problem()
    net = coder_net(ns.SparseCode("feature_sign", lam=0.01, warm_start=False, max_iter=1), D, X)
    with pytest.warns(NonConvergenceWarning, match=r"did not converge for \d+ sample\(s\) during this run") as rec:
        net.run(len(X), backend="compiled")
    assert len([w for w in rec if issubclass(w.category, NonConvergenceWarning)]) == 1
    assert net.populations["a"].dynamics.info[1] == 0  # counted once, then forgotten



@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_nonneg_omp_dynamics_warns_with_the_runs_count_of_dependent_stops(backend):
    # tests/coding/test_nn_omp.py's hand-worked case: x = e(80) with atoms 10 e(0), e(60), 0.5 e(100) stops
    # on a dependent third atom; e(30) does not. Two of the five steps stop so. The compiled path counts
    # them inside the segment and warns once at the end of the run, naming 2 samples, then starts again
    # from zero; the NumPy path warns at each step that stops (1 sample each).
    import re

    from test_nn_omp import deg

    from neurosim.coding import NonConvergenceWarning

    D = np.array([10.0 * deg(0), deg(60), 0.5 * deg(100)])
    X = np.vstack([deg(80), deg(30), deg(30), deg(80), deg(30)])
    net = coder_net(ns.SparseCode("omp", n_nonzero=3, nonneg=True), D, X)
    with pytest.warns(NonConvergenceWarning, match="linearly dependent") as rec:
        net.run(len(X), backend=backend)
    counts = [int(re.search(r"(\d+) sample\(s\)", str(w.message)).group(1))
              for w in rec if issubclass(w.category, NonConvergenceWarning)]
    assert counts == ([2] if backend == "compiled" else [1, 1])
    A = codes(net).reshape(len(X), -1)
    np.testing.assert_allclose(A[[0, 3], 1], np.cos(np.radians(20)), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(A[[0, 3]][:, [0, 2]], 0.0)
    assert net.populations["a"].dynamics.info[1] == 0

def test_target_count_mode_reports_no_miss_when_every_count_is_hit():
    # the kernel's count of samples whose count was missed (info[0]) feeds the end-of-run warning
    import warnings

    D, X = problem(seed=2)
    net = coder_net(ns.SparseCode("feature_sign", n_nonzero=5), D, X, batch=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ns.coding.NonConvergenceWarning)
        net.run(len(X) // 4)
    dyn = next(p.dynamics for p in net.populations.values() if isinstance(p.dynamics, ns.SparseCode))
    assert dyn.info[0] == 0
    assert np.all((np.abs(codes(net)) > 0).sum(axis=-1) == 5)


def test_nonzero_rows_sees_an_entry_in_any_column_by_hand():
    # an atom is active when any entry is nonzero, the first or the last column included
    from neurosim.kernels.encoding import nonzero_rows
    W = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0], [-1.0, 0.0, 0.0], [0.0, 1e-300, 0.0], [0.0, 0.0, 0.0]])
    active = np.ones(5, dtype=np.bool_)
    nonzero_rows(W, active)
    assert active.tolist() == [False, True, True, True, False]
