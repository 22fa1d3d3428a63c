"""Kohonen's map and Neural Gas on sparse prototypes (units with local receptive fields), issue 39.

The oracle is the masked dense projection with the same synapses: its
best-matching unit measures each unit's distance over its receptive field
only (the coordinates outside it are not part of the prototype), and the
rules move only those synapses, so the two storages give the same bits. A
hand computation pins what that distance is.
"""

import numba
import numpy as np
import pytest
from backends import PATHS

import neurosim as ns
from neurosim.kernels import competitive as kc

N_IN, ROWS, COLS = 12, 3, 4


def maps(storage, batch=1, rules=True):
    """Two maps of ROWS x COLS units on Gaussian input, each unit seeing 5 of the 12 inputs: Kohonen's, Neural Gas."""
    net = ns.Network(seed=4, batch=batch)
    x = ns.Population("x", N_IN)
    net.add(x)
    net.connect(ns.GaussianStream(np.linspace(2.0, 0.5, N_IN), seed=5), x)
    for name, rule in (("som", lambda: ns.rules.Kohonen(ROWS, COLS, rate=0.3, sigma=1.2)),
                       ("gas", lambda: ns.rules.NeuralGas(rate=0.3, lam=2.0))):
        m = ns.Population(name, ROWS * COLS, dynamics=ns.BestMatchingUnit())
        net.add(m, ns.Projection(f"W_{name}", x, m, connectivity=ns.FixedInDegree(5), storage=storage,
                                 init=ns.Uniform(-1.0, 1.0), rule=rule() if rules else None))
    return net


@pytest.mark.parametrize("backend", PATHS)
def test_sparse_prototypes_learn_what_the_masked_dense_ones_learn(backend):
    a, b = maps("dense"), maps("sparse")
    records = [(net.record(net["som"], "activity"), net.record(net["gas"], "activity")) for net in (a, b)]
    w0 = {name: p.weights.copy() for name, p in b.projections.items()}
    a.run(30, backend=backend)
    b.run(30, backend=backend)
    for k, name in enumerate(("som", "gas")):
        W = f"W_{name}"
        mask = a[W].mask
        # the same synapses, the same arithmetic in the same order: the same bits
        assert np.array_equal(a[W].weights[mask], b[W].weights), name
        assert np.all(a[W].weights[~mask] == 0.0), name  # the absent synapses stay absent on the dense projection
        assert not np.allclose(b[W].weights, w0[W]), name
        assert np.array_equal(a[name].state["distance"], b[name].state["distance"]), name
        won = [rec[k].to_dataset().activity.values[:, 0] for rec in records]
        assert np.array_equal(won[0], won[1]), name
        assert np.unique(won[1].argmax(axis=1)).size > 3, name  # several units won: the competition ran


def test_compiled_and_numpy_paths_agree_on_sparse_prototypes():
    a, b = maps("sparse"), maps("sparse")
    a.run(25, backend="python")
    b.run(25, backend="compiled")
    for name in ("som", "gas"):
        # the same expressions in the same order; NumPy's exp and the compiled one may differ in the last bit
        np.testing.assert_allclose(a[f"W_{name}"].weights, b[f"W_{name}"].weights, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(a[name].state["distance"], b[name].state["distance"], rtol=1e-12)
        assert np.array_equal(a[name].activity, b[name].activity), name


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_the_distance_runs_over_each_units_receptive_field_only(backend):
    # by hand: unit 0 sees inputs 0 and 2, unit 1 inputs 1 and 3, unit 2 all four, unit 3 none (distance 0)
    conn = ns.FromIndices(post=[0, 0, 1, 1, 2, 2, 2, 2], pre=[0, 2, 1, 3, 0, 1, 2, 3])
    x = np.array([[[1.0, 2.0, 3.0, 4.0], [0.5, 0.0, -1.0, 2.0]]])
    for storage in ("dense", "sparse"):
        net = ns.Network(seed=0, batch=2)
        inp = ns.Population("x", 4)
        m = ns.Population("map", 4, dynamics=ns.BestMatchingUnit())
        net.add(inp, m)
        net.connect(ns.ArrayStream(x), inp)
        W = ns.Projection("W", inp, m, connectivity=conn, storage=storage, init=ns.Constant(1.0))
        net.add(W)
        net.run(1, backend=backend)
        want = np.array([[0.0 + 4.0, 1.0 + 9.0, 0.0 + 1.0 + 4.0 + 9.0, 0.0],
                         [0.25 + 4.0, 1.0 + 1.0, 0.25 + 1.0 + 4.0 + 1.0, 0.0]])
        assert np.array_equal(m.state["distance"], want), storage
        assert m.activity.tolist() == [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]


def test_batches_of_inputs_get_their_distances_and_winners_on_sparse_prototypes():
    a, b = maps("dense", batch=3, rules=False), maps("sparse", batch=3, rules=False)
    a.run(2, backend="python")
    b.run(2, backend="compiled")
    for name in ("som", "gas"):
        assert np.array_equal(a[name].state["distance"], b[name].state["distance"])
        assert np.array_equal(a[name].activity, b[name].activity)
        assert a[name].activity.sum(axis=1).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.slow  # compiles the row-parallel kernels (about 6 s of numba with empty caches)
def test_the_sparse_kernels_row_parallel_forms_give_the_serial_bits_for_any_thread_count():
    rng = np.random.default_rng(1)
    n_post, n_pre, k_in = 2000, 300, 40  # 80,000 synapses: a segment would choose the row-parallel forms
    indices = np.sort(np.stack([rng.choice(n_pre, k_in, replace=False) for _ in range(n_post)]), axis=1)
    indptr = np.arange(0, n_post * k_in + 1, k_in).astype(np.int32)
    indices = indices.ravel().astype(np.int32)
    w0 = rng.uniform(-1, 1, indices.size)
    x = rng.normal(size=(2, n_pre))
    gi, gj, gx, gy = ns.rules.competitive.grid_positions(40, 50)
    ref_d, ref_a = np.zeros((2, n_post)), np.zeros((2, n_post))
    kc.csr_best_matching_unit(ref_a, ref_d, x, indptr, indices, w0)
    ref_k, ref_g = w0.copy(), w0.copy()
    kc.csr_kohonen_update(ref_k, indptr, indices, ref_a[:1], x[:1], gi, gj, gx, gy, 0.4, 3.0, 0)
    kc.csr_neural_gas_update(ref_g, indptr, indices, ref_d[:1], x[:1], np.zeros(n_post), 0.4, 30.0)
    assert not np.array_equal(ref_k, w0) and not np.array_equal(ref_g, w0)
    before = numba.get_num_threads()
    try:
        for threads in range(1, min(3, numba.config.NUMBA_NUM_THREADS) + 1):
            numba.set_num_threads(threads)
            d, a = np.zeros((2, n_post)), np.zeros((2, n_post))
            kc.csr_best_matching_unit_rows(a, d, x, indptr, indices, w0)
            assert np.array_equal(d, ref_d) and np.array_equal(a, ref_a), threads
            wk, wg = w0.copy(), w0.copy()
            kc.csr_kohonen_update_rows(wk, indptr, indices, a[:1], x[:1], gi, gj, gx, gy, 0.4, 3.0, 0)
            kc.csr_neural_gas_update_rows(wg, indptr, indices, d[:1], x[:1], np.zeros(n_post), 0.4, 30.0)
            assert np.array_equal(wk, ref_k) and np.array_equal(wg, ref_g), threads
    finally:
        numba.set_num_threads(before)
    # and the distances are the masked dense kernel's
    dense_w, mask = np.zeros((n_post, n_pre)), np.zeros((n_post, n_pre), bool)
    rows = np.repeat(np.arange(n_post), k_in)
    dense_w[rows, indices], mask[rows, indices] = w0, True
    d, a = np.zeros((2, n_post)), np.zeros((2, n_post))
    kc.best_matching_unit_masked(a, d, x, dense_w, mask)
    assert np.array_equal(d, ref_d) and np.array_equal(a, ref_a)


def test_growing_networks_still_refuse_sparse_prototypes():
    net = ns.Network(seed=0)
    x = ns.Population("x", N_IN)
    m = ns.Population("map", 4, dynamics=ns.BestMatchingUnit())
    edges = ns.Projection("E", m, m, connectivity=ns.FromIndices([], []))
    net.add(x, m, edges, ns.Projection("W", x, m, connectivity=ns.FixedInDegree(5),
                                       rule=ns.rules.GrowingNeuralGas(edges)))
    net.connect(ns.GaussianStream(np.ones(N_IN), seed=0), x)
    with pytest.raises(ValueError, match=r"GrowingNeuralGas moves the prototypes as dense rows; projection 'W' stores its synapses sparsely"):
        net.run(1)
