"""Every core: ns.set_num_threads, the row-parallel kernels, and results across thread counts.

The row-parallel kernels give every row to one thread with the same
instructions, so a network's numbers must not depend on the thread count at
all (exact equality for 2, 3, 4 threads); against one thread (BLAS products)
they agree to rounding. The rules' row kernels are the serial kernels' row
loops, so they must give exactly the serial bits.
"""

import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import neurosim as ns
from neurosim.kernels import parallel as par
from neurosim.kernels import plasticity as pk
from neurosim.kernels.dense import jacobi_kernel, jacobi_relax


# -- ns.set_num_threads ------------------------------------------------------------------
@pytest.mark.parametrize("bad, err", [(0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError),
                                      ("2", TypeError), (None, TypeError)])
def test_set_num_threads_refuses_bad_counts(bad, err):
    with pytest.raises(err, match="n must be"):
        ns.set_num_threads(bad)


def test_set_num_threads_above_the_pool_says_how_to_get_more():
    assert ns.max_threads() == numba.config.NUMBA_NUM_THREADS
    with pytest.raises(ValueError, match="NUMBA_NUM_THREADS"):
        ns.set_num_threads(ns.max_threads() + 1)


def test_num_threads_block_sets_numba_and_blas_and_restores():
    from threadpoolctl import threadpool_info

    before = ns.get_num_threads()
    blas_before = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
    with ns.num_threads(1):
        assert ns.get_num_threads() == 1
        assert all(d["num_threads"] == 1 for d in threadpool_info() if d["user_api"] == "blas")
    assert ns.get_num_threads() == before
    assert [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"] == blas_before


def _python(code: str, **env):
    full = dict(os.environ, **{k: str(v) for k, v in env.items()})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=600)


@pytest.mark.slow
def test_environment_variable_is_applied_at_import():
    out = _python("import neurosim as ns; from threadpoolctl import threadpool_info; "
                  "print(ns.get_num_threads(), {d['num_threads'] for d in threadpool_info() if d['user_api'] == 'blas'})",
                  NEUROSIM_NUM_THREADS=1, NUMBA_NUM_THREADS=2)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "{1}"]


@pytest.mark.slow
@pytest.mark.parametrize("value, text", [("zero", "must be an integer"), ("0", "must be >= 1"),
                                         ("3", "NUMBA_NUM_THREADS=3")])
def test_environment_variable_errors_name_it(value, text):
    out = _python("import neurosim", NEUROSIM_NUM_THREADS=value, NUMBA_NUM_THREADS=2)
    assert out.returncode != 0
    assert "NEUROSIM_NUM_THREADS" in out.stderr and text in out.stderr


# -- kernels ---------------------------------------------------------------------------------
def test_rows_product_and_drive_match_numpy():
    rng = np.random.default_rng(0)
    for batch, n_post, n_pre in [(1, 37, 53), (3, 64, 1030), (4, 5, 1)]:
        a = rng.normal(size=(batch, n_pre))
        w = rng.normal(size=(n_post, n_pre))
        ref = a @ w.T
        out = np.zeros((batch, n_post))
        par.rows_product(out, a, w)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
        base = rng.normal(size=(batch, n_post))
        acc = base.copy()
        par.drive_rows(acc, a, w, -1.0, True)
        np.testing.assert_allclose(acc, base - ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
        par.drive_rows(acc, a, w, -1.0, False)
        np.testing.assert_allclose(acc, -ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("lateral, use_mask", [(False, False), (True, False), (False, True)])
def test_rule_row_kernels_give_the_serial_bits(batch, lateral, use_mask):
    rng = np.random.default_rng(batch + 2 * lateral + 4 * use_mask)
    n_post, n_pre = 29, (29 if lateral else 41)
    w0 = rng.normal(size=(n_post, n_pre))
    post, pre = rng.normal(size=(batch, n_post)), rng.normal(size=(batch, n_pre))
    mu, signal = rng.uniform(5, 10, n_post), rng.uniform(0.5, 2, batch)
    mask = rng.random((n_post, n_pre)) > 0.3 if use_mask else np.ones((1, 1), bool)
    for serial, rows, args in [(pk.normalized_hebbian, pk.normalized_hebbian_rows, (mu, 0.1, signal)),
                               (pk.hebbian, pk.hebbian_rows, (0.05, 0.01)), (pk.oja, pk.oja_rows, (0.05,))]:
        a, b = w0.copy(), w0.copy()
        ra = serial(a, post, pre, *args, lateral, mask, use_mask)
        rb = rows(b, post, pre, *args, lateral, mask, use_mask)
        assert ra == rb
        assert np.array_equal(a, b), serial.__name__
        assert not np.array_equal(a, w0)


@pytest.mark.parametrize("decay", [1.0, 0.9])
def test_dictionary_memory_row_kernel_gives_the_serial_bits(decay):
    from neurosim.kernels.dictionary import memory_update, memory_update_rows

    rng = np.random.default_rng(7)
    a = rng.normal(size=(5, 30)) * (rng.random((5, 30)) < 0.3)  # sparse codes: the skipped zero terms
    x = rng.normal(size=(5, 47))
    A0, B0 = rng.normal(size=(30, 30)), rng.normal(size=(30, 47))
    A1, B1, A2, B2 = A0.copy(), B0.copy(), A0.copy(), B0.copy()
    memory_update(A1, B1, a, x, decay)
    memory_update_rows(A2, B2, a, x, decay)
    assert np.array_equal(A1, A2) and np.array_equal(B1, B2)
    np.testing.assert_allclose(A1, decay * A0 + a.T @ a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B1, decay * B0 + a.T @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("exact, per_coordinate", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("gamma", [1.0, 0.8])
def test_osdl_statistics_row_kernel_gives_the_serial_bits(exact, per_coordinate, gamma):
    from neurosim.kernels.osdl import osdl_statistics, osdl_statistics_rows

    rng = np.random.default_rng(11)
    R, k, m = 4, 9, 13
    codes = rng.normal(size=(R, k)) * (rng.random((R, k)) < 0.5)
    X = rng.normal(size=(R, m))
    M = (rng.random((R, m)) < 0.7).astype(float)
    arrays = [rng.normal(size=(k, m)) for _ in range(3)] + [rng.normal(size=(m if per_coordinate else 1, k, k))]
    a = [v.copy() for v in arrays]
    b = [v.copy() for v in arrays]
    osdl_statistics(*a, X, M, codes, gamma, exact)
    osdl_statistics_rows(*b, X, M, codes, gamma, exact)
    for u, v in zip(a, b):
        assert np.array_equal(u, v)
    assert not np.array_equal(a[0], arrays[0])
    # C's closed form (Eq. 23, mini-batch mean over observed coordinates)
    np.testing.assert_allclose(a[0], gamma * arrays[0] + (codes**2).T @ M / R, rtol=1e-12, atol=1e-12)


def test_row_rules_report_non_finite_weights():
    w = np.full((8, 8), 1e308)
    post = np.full((1, 8), 1e308)
    assert not pk.hebbian_rows(w, post, post, 1.0, 0.0, False, np.ones((1, 1), bool), False)
    w = np.ones((8, 8))
    assert pk.oja_rows(w, np.ones((1, 8)), np.ones((1, 8)), 0.1, True, np.ones((1, 1), bool), False)
    assert np.all(np.diag(w) == 0.0)


@pytest.mark.parametrize("tol", [0.0, 1e-9])
@pytest.mark.parametrize("zero_start", [True, False])
def test_parallel_jacobi_matches_serial_to_rounding(tol, zero_start):
    rng = np.random.default_rng(3)
    n = 40
    m = rng.normal(size=(n, n)) * 0.02
    m = m + m.T
    np.fill_diagonal(m, 0.0)
    drive = rng.normal(size=(2, n))
    out = []
    for parallel in (False, True):
        y = np.full((2, n), 0.5)
        info = np.zeros(2, np.int64)
        relax = jacobi_kernel(tol, True) if parallel else jacobi_relax
        ok = relax(y, drive, m, -1.0, 0.3, tol, 60, zero_start, np.empty_like(y), info)
        out.append((ok, info.copy(), y))
    assert out[0][0] and out[1][0]
    assert np.array_equal(out[0][1], out[1][1])
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out[0][2] @ (np.eye(n) + m).T, drive, atol=1e-6 if tol else 1e-3)


def test_small_networks_keep_the_serial_kernels():
    assert not par.use_rows(64, 8) and not par.use_rule_rows(64, 8)
    with ns.num_threads(1):
        assert not par.use_rows(4096, 1024) and not par.use_rule_rows(4096, 1024)


# -- a whole network across thread counts (a subprocess with a pool of 4) --------------------
_NETWORK = r"""
import json, sys
import numpy as np
import neurosim as ns
from neurosim.streams import ArrayStream
from neurosim.models.similarity_matching import build_network
n, k, steps = 530, 520, 6
X = np.random.default_rng(0).normal(size=(steps, n))
out = {}
for threads in (1, 2, 3, 4, 2):
    ns.set_num_threads(threads)
    c = build_network(ArrayStream(X), k, "XY", 0.1, beta=0.999, eta=0.1, tol=0.0, max_iter=30, zero_start=True,
                      seed=0, record=("activity",), record_every=1)
    kernels = sorted({call.func.__name__ for comp in c.network.schedule().components
                      for call in (comp.kernel_calls() or [])})
    c.run(steps)
    y = c.network.recorders[next(iter(c.network.recorders))].to_dataset()["activity"].values
    key = str(threads) if str(threads) not in out else "2again"
    out[key] = dict(W=c.feedforward.weights.tolist(), M=c.lateral.weights.tolist(), y=y.tolist(), kernels=kernels)
json.dump(out, sys.stdout)
"""


@pytest.mark.slow
def test_network_numbers_do_not_depend_on_the_thread_count():
    res = _python(_NETWORK, NUMBA_NUM_THREADS=4, OMP_NUM_THREADS=1)
    assert res.returncode == 0, res.stderr[-3000:]
    out = {k: {v: (np.asarray(a) if v != "kernels" else a) for v, a in d.items()} for k, d in json.loads(res.stdout).items()}
    # the parallel kernels ran (else this test would compare the serial path with itself)
    assert "drive_rows" in out["2"]["kernels"] and "normalized_hebbian_rows" in out["2"]["kernels"]
    assert "drive_rows" not in out["1"]["kernels"]
    for v in ("W", "M", "y"):
        for t in ("3", "4", "2again"):
            assert np.array_equal(out[t][v], out["2"][v]), (v, t)
        scale = np.abs(out["1"][v]).max()
        assert np.abs(out["2"][v] - out["1"][v]).max() <= 1e-12 * scale, v
