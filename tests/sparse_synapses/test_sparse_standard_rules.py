"""Sanger, OjaSubspace, Delta, BCM and Földiák on sparse synapses (issue 39).

Oracles: the masked dense projection with the same synapses learning from
the same activity (the post activity is clamped to an input, so both storages
see the same numbers), and each rule's equation in NumPy on the dense matrix
with zeros where no synapse is. OjaSubspace, Delta, BCM and Földiák do the
same arithmetic in the same order on both storages (the column sums run over
the stored synapses in increasing post unit, as the dense kernels sum their
rows, skipping only zeros): bit for bit. Sanger's sparse kernel sums its
decay in another order (linear in the synapses): to 1e-12.
"""

import numba
import numpy as np
import pytest
from backends import PATHS
from clamped_activity import Clamp, at_synapses, data
from random_sparse import random_csr

import neurosim as ns
from neurosim import rules
from neurosim.codegen import GeneratedKernel
from neurosim.kernels import sparse as ks
from neurosim.kernels import parallel
from neurosim.kernels.parallel import MIN_RULE_WORK
from neurosim.synapse_index import SynapseIndex

N_PRE, N_POST, STEPS = 30, 12, 30

RULES = {"sanger": lambda: rules.Sanger(0.02), "subspace": lambda: rules.OjaSubspace(0.02),
         "delta": lambda: rules.Delta(0.02), "bcm": lambda: rules.BCM(0.02, 0.2),
         "bcm_clipped": lambda: rules.BCM(0.2, 0.2, nonnegative=True)}


def circuit(storage, batch, steps=STEPS):
    """One clamped post population per rule on input ``x``, and Földiák on a lateral projection ``M``."""
    net = ns.Network(seed=3, batch=batch)
    x, c = ns.Population("x", N_PRE), ns.Population("c", N_POST)
    net.add(x, c)
    net.connect(ns.ArrayStream(data(steps, batch, N_PRE, seed=1)), x)
    net.connect(ns.ArrayStream(data(steps, batch, N_POST, seed=2, scale=0.7)), c)
    for name, rule in RULES.items():
        y = ns.Population(f"y_{name}", N_POST, dynamics=Clamp(c))
        net.add(y, ns.Projection(f"W_{name}", x, y, connectivity=ns.FixedProbability(0.4), storage=storage,
                                 init=ns.Normal(0.3), rule=rule()))
    z = ns.Population("z", N_POST, dynamics=Clamp(c))
    net.add(z, ns.Projection("M", z, z, sign=-1, connectivity=ns.FixedProbability(0.4), storage=storage,
                             init=ns.Uniform(0.0, 0.1), rule=rules.Foldiak(0.05, p=0.2)))
    return net


EXACT = ["W_subspace", "W_delta", "W_bcm", "W_bcm_clipped", "M"]


@pytest.mark.parametrize("backend", PATHS)
@pytest.mark.parametrize("batch", [1, 3])
def test_sparse_synapses_learn_what_the_masked_dense_projection_learns(batch, backend):
    a, b = circuit("dense", batch), circuit("sparse", batch)
    w0 = {name: p.weights.copy() for name, p in b.projections.items()}
    a.run(STEPS, backend=backend)
    b.run(STEPS, backend=backend)
    for name in EXACT:  # the same arithmetic in the same order: the same bits
        assert np.array_equal(at_synapses(a[name]), b[name].weights), name
    wa, wb = at_synapses(a["W_sanger"]), b["W_sanger"].weights
    assert np.max(np.abs(wa - wb)) <= 1e-12 * np.max(np.abs(wa))  # the decay summed in another order
    for name, p in a.projections.items():
        assert np.all(p.weights[~p.mask] == 0.0), name
        assert not np.allclose(b[name].weights, w0[name]), name  # every rule learnt
    assert np.array_equal(a["y_bcm"].state["theta"], b["y_bcm"].state["theta"])
    assert np.all(b["W_bcm_clipped"].weights >= 0.0) and np.any(b["W_bcm_clipped"].weights == 0.0)


def _equation(name, W, Y, X, theta):
    """One step of each rule's equation on the dense matrix ``W`` (zeros where no synapse is)."""
    B = Y.shape[0]
    if name == "sanger":
        return W + 0.02 / B * (Y.T @ X - np.tril(Y.T @ Y) @ W)
    if name in ("subspace", "delta"):
        return W + 0.02 / B * (Y.T @ (X - Y @ W))
    if name == "bcm":
        return W + 0.02 / B * ((Y * (Y - theta)).T @ X)
    if name == "bcm_clipped":
        return np.maximum(W + 0.2 / B * ((Y * (Y - theta)).T @ X), 0.0)
    return W + 0.05 * (Y.T @ X / B - 0.2 * 0.2)  # Földiák


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_one_step_on_sparse_synapses_is_each_rules_equation(backend):
    net = circuit("sparse", batch=3)
    net.run(2, backend=backend)  # a step, so that theta has moved from its initial value
    before = {name: p.to_dense() for name, p in net.projections.items()}
    theta = net["y_bcm"].state["theta"].copy()
    net.run(1, backend=backend)
    X, Y = net["x"].activity, net["c"].activity
    for name, p in net.projections.items():
        rule = name[2:] if name != "M" else "foldiak"
        post, pre = p.synapse_index.pairs()
        want = _equation(rule, before[name], Y, Y if name == "M" else X, theta)[post, pre]
        np.testing.assert_allclose(p.weights, want, rtol=1e-12, atol=1e-14, err_msg=name)
    np.testing.assert_allclose(net["y_bcm"].state["theta"], theta + ((Y * Y).mean(axis=0) - theta) * 0.2, rtol=1e-12)


def test_compiled_and_numpy_paths_agree_on_sparse_synapses():
    a, b = circuit("sparse", 3), circuit("sparse", 3)
    a.run(STEPS, backend="python")
    b.run(STEPS, backend="compiled")
    for name, p in a.projections.items():
        np.testing.assert_allclose(p.weights, b[name].weights, rtol=1e-12, atol=1e-15, err_msg=name)


def _csr_case(n_post=700, n_pre=500, density=0.2, batch=2, lateral=False, seed=0):
    """A projection of 70,000 synapses: large enough for a segment to choose the row-parallel kernels."""
    rng = np.random.default_rng(seed)
    W = random_csr((n_post, n_pre), density, rng, no_diagonal=lateral)
    W.sort_indices()
    index = SynapseIndex(W.indptr, W.indices, n_pre)
    return index, W.data.copy(), rng.normal(size=(batch, n_post)), rng.normal(size=(batch, n_pre))


@pytest.mark.slow  # compiles the row-parallel kernels (about 6 s of numba with empty caches)
def test_row_parallel_kernels_give_the_serial_bits_for_any_thread_count():
    index, w0, y, x = _csr_case()
    cols = index.by_pre()
    # large enough for a segment to choose the row-parallel kernels wherever more than one thread runs
    # (use_rule_rows; asked here without threads, so the test runs on a one-thread pool too)
    assert index.n_post * (index.size // index.n_post) >= MIN_RULE_WORK
    theta, work = np.full(index.n_post, 0.5), np.zeros((index.n_pre, 2))
    t_post, t_pre = np.zeros((index.n_post, 2)), np.zeros((index.n_pre, 2))
    dense, mask = np.zeros(index.shape), np.zeros(index.shape, bool)
    post, pre = index.pairs()
    dense[post, pre], mask[post, pre] = w0, True

    def calls(rows):
        bcm = rules.BCM.maps["sparse", rows], rules.BCM.maps["dense", rows]
        return [(ks.csr_subspace_rows if rows else ks.csr_subspace,
                 (index.indptr, index.indices, *cols, y, x, work, 0.01), w0),
                (ks.csr_sanger_rows if rows else ks.csr_sanger, (*cols, y, x, work, 0.01), w0),
                (bcm[0], (index.indptr, index.indices, y, x, t_post, t_pre, theta, 0.01, 0.1, False), w0),
                (bcm[1], (False, mask, True, y, x, t_post, t_pre, theta, 0.01, 0.1, False), dense)]

    serial = []
    for kernel, args, start in calls(False):
        w = start.copy()
        assert kernel(w, *args)
        assert not np.array_equal(w, start)
        serial.append(w)
    assert np.array_equal(serial[3][mask], serial[2]) and np.all(serial[3][~mask] == 0.0)
    before = numba.get_num_threads()
    try:
        for threads in range(1, min(3, numba.config.NUMBA_NUM_THREADS) + 1):
            numba.set_num_threads(threads)
            for (kernel, args, start), want in zip(calls(True), serial):
                w = start.copy()
                assert (kernel.compiled() if isinstance(kernel, GeneratedKernel) else kernel)(w, *args)
                assert np.array_equal(w, want), (kernel, threads)
    finally:
        numba.set_num_threads(before)


def test_segments_choose_the_row_parallel_kernels_for_large_sparse_projections(monkeypatch):
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 500), ns.Population("y", 700, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, connectivity=ns.FixedInDegree(100), rule=rules.Sanger()))
    net.connect(ns.GaussianStream(np.ones(500), seed=0), x)
    net.validate()
    rule = net["W"].rule
    with ns.num_threads(1):
        assert [c.func for c in rule.kernel_calls()] == [ks.csr_sanger]
    # two threads running, as on any machine of two cores (asked without a pool of two: the mutation tool's
    # workers have one thread)
    with monkeypatch.context() as m:
        m.setattr(parallel.numba, "get_num_threads", lambda: 2)
        assert [c.func for c in rule.kernel_calls()] == [ks.csr_sanger_rows]
