"""The sparse rule kernels against the dense ones, bit for bit, and their serial and row-parallel forms (issue 39)."""

import numba
import numpy as np
import pytest
from random_sparse import csr_index, random_csr

from neurosim.kernels import plasticity as kp
from neurosim.kernels import sparse as ks


def _case(batch, seed=0, n_post=90, n_pre=70):
    rng = np.random.default_rng(seed)
    W = random_csr((n_post, n_pre), 0.1, rng)
    W.sort_indices()
    return (*csr_index(W), W.data.copy(), W.toarray() != 0,
            rng.normal(size=(batch, n_post)), rng.normal(size=(batch, n_pre)))


RULES = {"oja": (ks.csr_oja, ks.csr_oja_rows, kp.oja, (0.01,)),
         "hebbian": (ks.csr_hebbian, ks.csr_hebbian_rows, kp.hebbian, (0.01, 0.1))}


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("rule", sorted(RULES))
def test_sparse_rules_give_the_masked_dense_kernels_bits_at_every_synapse(rule, batch):
    indptr, indices, w, mask, y, x = _case(batch)
    serial, rows, dense, args = RULES[rule]
    dense_w = np.zeros(mask.shape)
    dense_w[mask] = w  # row by row, in stored (sorted) order: synapse s of the index
    assert dense(dense_w, y, x, *args, False, mask, True)
    ws = w.copy()
    assert serial(ws, indptr, indices, y, x, *args)
    assert np.array_equal(ws, dense_w[mask])
    before = numba.get_num_threads()
    try:
        for threads in range(1, min(2, numba.config.NUMBA_NUM_THREADS) + 1):
            numba.set_num_threads(threads)
            wr = w.copy()
            assert rows(wr, indptr, indices, y, x, *args)
            assert np.array_equal(wr, ws), threads
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("batch", [1, 2])
def test_the_sparse_drive_sums_each_row_in_one_fixed_order_for_any_thread_count(batch):
    indptr, indices, w, mask, _, x = _case(batch, seed=1)
    out = np.zeros((batch, indptr.size - 1))
    ks.csr_drive(out, x, indptr, indices, w, 1.0, False)
    # the four partial sums of _drive_row, by hand: synapses lo + 4k + r into sum r, the last < 4 into sum 0
    want = np.zeros_like(out)
    for b in range(batch):
        for i in range(indptr.size - 1):
            terms = [w[s] * x[b, indices[s]] for s in range(indptr[i], indptr[i + 1])]
            full = len(terms) - len(terms) % 4
            a = [0.0, 0.0, 0.0, 0.0]
            for k, t in enumerate(terms[:full]):
                a[k % 4] += t
            for t in terms[full:]:
                a[0] += t
            want[b, i] = (a[0] + a[1]) + (a[2] + a[3])
    assert np.array_equal(out, want)
    before = numba.get_num_threads()
    try:
        for threads in range(1, min(2, numba.config.NUMBA_NUM_THREADS) + 1):
            numba.set_num_threads(threads)
            rows = np.full_like(out, 1.0)
            ks.csr_drive_rows(rows, x, indptr, indices, w, 1.0, True)
            assert np.array_equal(rows, 1.0 + want), threads
    finally:
        numba.set_num_threads(before)
