"""Sparse projections against dense-with-mask ones on the same synapses, scipy.sparse, both paths (issue 39)."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from random_sparse import csr_index, random_csr

import neurosim as ns
from neurosim.kernels import sparse as ks


def build(storage, *, rule=None, lateral=False, n=60, m=30, seed=0, batch=1, conn=None):
    net = ns.Network(seed=seed, batch=batch)
    x = ns.Population("x", n)
    y = ns.Population("y", m, dynamics=ns.Jacobi(max_iter=8) if lateral else ns.Linear())
    net.add(x, y)
    net.connect(ns.GaussianStream(np.linspace(2.0, 0.1, n), seed=1), x)
    net.add(ns.Projection("W", x, y, connectivity=conn or ns.FixedProbability(0.2), storage=storage,
                          rule=rule() if rule else None))
    if lateral:
        net.add(ns.Projection("M", y, y, sign=-1, connectivity=ns.FixedProbability(0.1), storage=storage,
                              init=ns.Uniform(0.0, 0.05)))
    return net


def at_synapses(dense_proj):
    """The dense weights at the synapses of its mask, in synapse order (row by row)."""
    return dense_proj.weights[dense_proj.mask]


RULES = {"Hebbian": lambda: ns.Hebbian(0.002, decay=0.01), "Oja": lambda: ns.Oja(0.01)}


def test_the_same_seed_gives_the_same_synapses_and_weights_in_both_storages():
    a, b = build("dense"), build("sparse")
    assert a["W"].mask.sum() == b["W"].n_synapses
    assert np.array_equal(np.argwhere(a["W"].mask), np.column_stack(b["W"].synapse_index.pairs()))
    assert np.array_equal(at_synapses(a["W"]), b["W"].weights)
    assert np.array_equal(a["W"].to_dense(), b["W"].to_dense())
    assert (a["W"].to_scipy() != b["W"].to_scipy()).nnz == 0


@pytest.mark.parametrize("backend", ["python", "auto"])
@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("batch", [1, 3])
def test_rules_learn_on_sparse_synapses_what_they_learn_on_the_masked_dense_projection(rule, backend, batch):
    a, b = build("dense", rule=RULES[rule], batch=batch), build("sparse", rule=RULES[rule], batch=batch)
    a.run(40, backend=backend)
    b.run(40, backend=backend)
    wa, wb = at_synapses(a["W"]), b["W"].weights
    # the rules are the same expressions synapse by synapse; the drives sum in other orders (BLAS), so
    # the two agree to rounding, compounded over 40 steps
    assert np.max(np.abs(wa - wb)) <= 1e-12 * np.max(np.abs(wa))
    assert np.all(a["W"].weights[~a["W"].mask] == 0.0)


@pytest.mark.parametrize("backend", ["python", "auto"])
def test_similarity_matching_with_sparse_feedforward_and_lateral_synapses(backend):
    def circuit(storage):
        net = build(storage, lateral=True)
        s = ns.SquaredNorm(net["x"])
        net.add(ns.CumulativeActivity(net["y"], alpha=0.1, signal=s, beta=0.999))
        net["W"].rule = None
        rule_w, rule_m = ns.NormalizedHebbian(0.1, s), ns.NormalizedHebbian(0.1, s)
        rule_w.projection, rule_m.projection = net["W"], net["M"]
        net["W"].rule, net["M"].rule = rule_w, rule_m
        net._changed()
        return net

    a, b = circuit("dense"), circuit("sparse")
    a.run(60, backend=backend)
    b.run(60, backend=backend)
    for name in ("W", "M"):
        wa, wb = at_synapses(a[name]), b[name].weights
        assert np.max(np.abs(wa - wb)) <= 1e-11 * np.max(np.abs(wa)), name
    assert np.allclose(a["y"].activity, b["y"].activity, rtol=1e-11, atol=1e-14)


def test_the_sparse_drive_equals_scipy():
    net = build("sparse", conn=ns.FixedInDegree(7), batch=4)
    net.run(1)
    W = net["W"].to_scipy()
    want = (W @ net["x"].activity.T).T
    assert np.allclose(net["y"].activity, want, rtol=1e-13, atol=1e-15)


def test_compiled_and_numpy_paths_agree_on_sparse_projections():
    a, b = build("sparse", rule=RULES["Oja"], lateral=True), build("sparse", rule=RULES["Oja"], lateral=True)
    a.run(30, backend="python")
    b.run(30)
    assert np.allclose(a["W"].weights, b["W"].weights, rtol=1e-12, atol=1e-15)
    assert np.allclose(a["y"].activity, b["y"].activity, rtol=1e-12, atol=1e-15)


def _csr_case(seed=0, n_post=700, n_pre=500, batch=2, density=0.05):
    rng = np.random.default_rng(seed)
    W = random_csr((n_post, n_pre), density, rng)
    W.sort_indices()
    return (*csr_index(W), W.data.copy(), rng.normal(size=(batch, n_pre)), rng.normal(size=(batch, n_post)))


def test_row_parallel_sparse_kernels_give_the_serial_bits_for_any_thread_count():
    indptr, indices, w, x, y = _csr_case()
    out1 = np.zeros((2, 700))
    ks.csr_drive(out1, x, indptr, indices, w, -1.0, False)
    before = numba.get_num_threads()
    try:
        for threads in range(1, min(3, numba.config.NUMBA_NUM_THREADS) + 1):
            numba.set_num_threads(threads)
            out = np.zeros((2, 700))
            ks.csr_drive_rows(out, x, indptr, indices, w, -1.0, False)
            assert np.array_equal(out, out1), threads
            for serial, rows, args in ((ks.csr_oja, ks.csr_oja_rows, (0.01,)),
                                       (ks.csr_hebbian, ks.csr_hebbian_rows, (0.01, 0.1))):
                w1, w2 = w.copy(), w.copy()
                assert serial(w1, indptr, indices, y, x, *args)
                assert rows(w2, indptr, indices, y, x, *args)
                assert np.array_equal(w1, w2)
            mu, signal = np.full(700, 3.0), np.array([2.0, 1.5])
            w1, w2 = w.copy(), w.copy()
            ks.csr_normalized_hebbian(w1, indptr, indices, y, x, mu, 0.1, signal)
            ks.csr_normalized_hebbian_rows(w2, indptr, indices, y, x, mu, 0.1, signal)
            assert np.array_equal(w1, w2)
    finally:
        numba.set_num_threads(before)
    assert np.allclose(out1, -(sp.csr_array((w, indices, indptr), shape=(700, 500)) @ x.T).T, rtol=1e-13)


def test_rule_kernels_report_non_finite_weights():
    indptr, indices, w, x, y = _csr_case(n_post=5, n_pre=5, batch=1, density=1.0)  # row 1 has synapses
    y[0, 1] = 1e200
    x[:] = 1e200
    assert not ks.csr_hebbian(w.copy(), indptr, indices, y, x, 1.0, 0.0)
    assert ks.csr_all_finite(w) and not ks.csr_all_finite(np.array([1.0, np.nan]))


def test_checkpoints_of_sparse_projections_round_trip_bit_for_bit(tmp_path):
    a = build("sparse", rule=RULES["Oja"])
    a.run(20)
    a.save(tmp_path / "c")
    a.run(20)
    b = build("sparse", rule=RULES["Oja"])
    b.load(tmp_path / "c")
    assert b.t == 20
    b.run(20)
    assert np.array_equal(a["W"].weights, b["W"].weights)
    assert a["W"].synapse_index == b["W"].synapse_index


def test_a_damaged_sparse_checkpoint_is_refused_and_changes_nothing(tmp_path):
    a = build("sparse")
    path = a.save(tmp_path / "c")
    with np.load(path) as f:
        data = {k: f[k] for k in f.files}
    data["proj/W/indices"] = data["proj/W/indices"].copy()
    data["proj/W/indices"][0] = 10**6
    np.savez(tmp_path / "bad.npz", **data)
    before = a["W"].weights.copy()
    with pytest.raises(ValueError, match="synapse index of projection 'W' is damaged"):
        a.load(tmp_path / "bad.npz")
    assert np.array_equal(a["W"].weights, before)
    dense = build("dense")
    with pytest.raises(ValueError, match="structure"):
        dense.load(path)


def test_births_and_deaths_on_sparse_projections_match_the_masked_dense_projection():
    nets = {s: build(s, rule=RULES["Oja"]) for s in ("dense", "sparse")}
    for net in nets.values():
        net.run(5)
        y = net["y"]
        net.apply(ns.Birth(y, 3), ns.Death(y, [2, 7, 31]))
        net.run(5)
    a, b = nets["dense"], nets["sparse"]
    assert np.array_equal(a["y"].ids, b["y"].ids)
    assert np.array_equal(np.argwhere(a["W"].mask), np.column_stack(b["W"].synapse_index.pairs()))
    wa, wb = at_synapses(a["W"]), b["W"].weights
    assert np.max(np.abs(wa - wb)) <= 1e-12 * np.max(np.abs(wa))
    # the newborn post units drew their synapses from FixedProbability(0.2): a row of 60 candidates each
    assert b["W"].synapse_index.in_degree()[-3:].sum() > 0


def test_link_and_unlink_on_a_sparse_projection_are_logged_with_both_ends():
    net = build("sparse", conn=ns.FromIndices(post=[0, 1], pre=[0, 1]))
    W = net["W"]
    before = W.n_synapses
    net.apply(ns.Link(W, [5, 5], [3, 4], weight=0.5))
    assert W.n_synapses == before + 2
    post, pre = W.synapses()
    assert {(5, 3), (5, 4)} <= set(zip(post.tolist(), pre.tolist()))
    assert W.to_dense()[5, 3] == 0.5
    net.apply(ns.Unlink(W, 0, 0))
    assert W.n_synapses == before + 1 and W.to_dense()[0, 0] == 0.0
    log = net.event_log.to_dict()
    assert log["kind"][-3:] == ["link", "link", "unlink"] and log["partner"][-3:] == [3, 4, 0]
    with pytest.raises(ValueError, match="exists already"):
        net.apply(ns.Link(W, 5, 3))
    with pytest.raises(ValueError, match="there is no synapse"):
        net.apply(ns.Unlink(W, 9, 9))
    assert W.n_synapses == before + 1


def test_components_that_do_not_run_on_sparse_synapses_are_refused_by_name():
    net = ns.Network(seed=0)
    x = ns.Population("x", 8)
    a = ns.Population("a", 4, dynamics=ns.SparseCode(lam=0.1))
    net.add(x, a, ns.Projection("D", x, a, connectivity=ns.FixedInDegree(3)))
    net.connect(ns.GaussianStream(np.ones(8), seed=0), x)
    with pytest.raises(ValueError, match=r"SparseCode dynamics of 'a' does not run on sparse projections; \['D'\]"):
        net.run(1)


def test_sparse_weights_are_validated_on_assignment():
    net = build("sparse")
    W = net["W"]
    with pytest.raises(ValueError, match=r"must have shape \(n_synapses,\)"):
        W.weights = np.zeros(W.shape)
    with pytest.raises(ValueError, match="finite"):
        W.weights = np.full(W.n_synapses, np.nan)
    with pytest.raises(ValueError, match="has no mask"):
        W.mask = np.ones(W.shape)
    W.weights = np.arange(W.n_synapses, dtype=float)
    assert W.to_scipy().data.tolist() == list(range(W.n_synapses))


def test_a_scipy_matrix_as_init_gives_synapses_and_weights():
    x, y = ns.Population("x", 4), ns.Population("y", 3, dynamics=ns.Linear())
    m = sp.csr_array(np.array([[0.0, 2.0, 0, 0], [1.0, 0, 0, -1.0], [0, 0, 0, 0]]))
    W = ns.Projection("W", x, y, init=m)
    net = ns.Network(seed=0)
    net.add(x, y, W)
    net.connect(ns.ArrayStream(np.array([[1.0, 2.0, 3.0, 4.0]])), x)
    assert W.sparse and W.n_synapses == 3
    net.run(1)
    assert y.activity.tolist() == [[4.0, -3.0, 0.0]]


@pytest.mark.parametrize("layout", ["dense", "slots"])
def test_recorded_sparse_weights_equal_the_masked_dense_projections_through_births_deaths_and_unlinks(layout):
    # the oracle: the same synapses stored densely with a mask, recorded by the same recorder code; sparse samples
    # are one value per synapse, and synapses_to_dense puts one sample on the grid of the units alive then
    from neurosim.recording import synapses_to_dense

    out = {}
    for storage in ("dense", "sparse"):
        net = build(storage, rule=RULES["Oja"], n=6, m=5)
        rec = net.record(net["W"], "weights", every=2)
        net.run(5)
        net.apply(ns.Birth(net["y"], 1), ns.Death(net["y"], [1]))
        net.run(5)
        W = net["W"]
        post, pre = W.synapses()
        net.apply(ns.Unlink(W, post[0], pre[0]))
        net.run(5)
        out[storage] = rec.to_dataset(layout="dense" if storage == "dense" else layout)
    a, b = out["dense"], out["sparse"]
    assert a.sizes["time"] == b.sizes["time"] == 7
    for time in a.time.values:
        want = a.weights.sel(time=time)
        want = want.dropna("unit", how="all").dropna("pre_unit", how="all")
        got = synapses_to_dense(b, time=int(time))
        assert got["unit"].values.tolist() == want["unit"].values.tolist()
        np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=0)
    assert np.count_nonzero(got.values) < got.size  # absent synapses: 0
