"""A new structure's first steps: interpreted kernels with their compiled bits, and the second process (issue 40).

Oracle: each kernel's machine code. Every kernel in ``INTERPRETABLE`` is run
compiled and interpreted on the same random arguments, on each branch its
code takes (batch of one and several, small and BLAS-sized lateral products,
a sparse lateral projection, fixed iterations and a tolerance, zero start,
no lateral projection, accumulate and sign); every array it writes and
what it returns must be equal bit for bit.
"""

import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse

from neurosim.kernels import _background, _interpreted, dense, plasticity


def _both(kernel, args):
    """Run ``kernel`` compiled and interpreted on copies of ``args``; the arrays after each run and the results."""
    compiled_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interpreted_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_compiled = kernel(*compiled_args)
    with _interpreted.machine_errors():  # as the engine runs them
        got_interpreted = _interpreted.interpreted(kernel)(*interpreted_args)
    return (got_compiled, compiled_args), (got_interpreted, interpreted_args)


def _assert_same(kernel, args):
    (rc, ac), (ri, ai) = _both(kernel, args)
    assert rc == ri, (kernel.__name__, rc, ri)
    for k, (a, b) in enumerate(zip(ac, ai)):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f"{kernel.__name__}: argument {k}", strict=True)


def _jacobi_args(rng, batch, n, sign, tol, max_iter, zero_start, sparse=False):
    y = rng.normal(size=(batch, n))
    drive = rng.normal(size=(batch, n))
    lateral = rng.normal(scale=0.3 / np.sqrt(n), size=(n, n))
    lateral = (lateral + lateral.T) / 2
    np.fill_diagonal(lateral, 0.0)
    args = [y, drive, lateral, sign, 0.3, tol, max_iter, zero_start, np.zeros((batch, n)), np.zeros(2, np.int64)]
    if sparse:
        lateral[rng.random((n, n)) < 0.6] = 0.0
        csr = scipy.sparse.csr_matrix(lateral)
        args[2] = csr.data.astype(np.float64)
        args += [csr.indptr.astype(np.int64), csr.indices.astype(np.int64)]
    return args


_QUICK = [("jacobi_tolerance", 1, 4, -1.0, False)]


@pytest.mark.parametrize("kernel,batch,n,sign,zero_start", [
    # the README network's case in the quick tier, every other branch (the BLAS-sized lateral product too) in the slow
    pytest.param(k, *case, marks=() if (k, *case) in _QUICK else pytest.mark.slow)
    for k in ("jacobi_tolerance", "jacobi_fixed", "jacobi_relax")
    for case in ((1, 4, -1.0, False), (3, 20, -1.0, True), (2, 5, 0.0, False), (1, 6, 1.0, True))])
def test_the_jacobi_kernels_interpreted_give_their_compiled_bits(kernel, batch, n, sign, zero_start):
    rng = np.random.default_rng(batch * 100 + n)
    tol = 0.0 if kernel == "jacobi_fixed" else 1e-9
    _assert_same(getattr(dense, kernel), _jacobi_args(rng, batch, n, sign, tol, 40, zero_start))


@pytest.mark.slow
def test_a_sparse_lateral_projection_interpreted_gives_its_compiled_bits():
    rng = np.random.default_rng(5)
    for kernel, tol in ((dense.jacobi_tolerance, 1e-9), (dense.jacobi_fixed, 0.0)):
        _assert_same(kernel, _jacobi_args(rng, 2, 30, -1.0, tol, 25, False, sparse=True))


def test_the_jacobi_tolerance_interpreted_stops_at_the_same_iteration():
    rng = np.random.default_rng(3)
    args = _jacobi_args(rng, 1, 4, -1.0, 1e-6, 500, False)
    (_, ac), (_, ai) = _both(dense.jacobi_tolerance, args)
    assert 1 < ac[9][0] < 500 and ac[9][0] == ai[9][0]  # a real early stop, at the same iteration


@pytest.mark.parametrize("batch,accumulate,sign", [
    (1, False, 1.0),  # the README network's; the other branches in the slow tier
    *(pytest.param(*case, marks=pytest.mark.slow)
      for case in ((1, True, -1.0), (1, False, -1.0), (4, False, 1.0), (4, True, -1.0), (4, False, -1.0)))])
def test_the_drive_interpreted_is_numbas_blas_product(batch, accumulate, sign):
    rng = np.random.default_rng(batch)
    args = [rng.normal(size=(batch, 7)), rng.normal(size=(batch, 33)), rng.normal(size=(7, 33)), sign, accumulate]
    _assert_same(dense.synaptic_drive, args)


@pytest.mark.parametrize("batch", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_the_similarity_matching_rules_interpreted_give_their_compiled_bits(batch):
    rng = np.random.default_rng(10 + batch)
    x, y = rng.normal(size=(batch, 9)), rng.normal(size=(batch, 4))
    signal = np.empty(batch)
    _assert_same(plasticity.squared_norm, [signal, x])
    plasticity.squared_norm(signal, x)
    mu = rng.uniform(1, 2, 4)
    _assert_same(plasticity.cumulative_activity, [mu, y, 0.99, 0.1, signal])
    mask = rng.random((4, 9)) < 0.7
    for weights, pre, lateral in ((rng.normal(size=(4, 9)), x, False), (rng.normal(size=(4, 4)), y, True)):
        for use_mask in (False, True):
            m = mask[:, :weights.shape[1]]
            _assert_same(plasticity.normalized_hebbian, [weights, y, pre, mu, 0.1, signal, lateral, m, use_mask])


@pytest.mark.slow  # compiles the copies' other signatures
def test_the_copies_and_checks_interpreted_give_their_compiled_results():
    rng = np.random.default_rng(0)
    src = rng.normal(size=(3, 5))
    for kernel, dst in ((dense.copy_2d, np.empty((3, 5))), (dense.copy_into, np.empty((3, 5))),
                        (dense.copy_2d_finite, np.empty((3, 5)))):
        _assert_same(kernel, [dst, src])
    _assert_same(dense.copy_1d, [np.empty(5), src[1]])
    bad = src.copy()
    bad[2, 3] = np.nan
    _assert_same(dense.copy_2d_finite, [np.empty((3, 5)), bad])
    for a in (src, bad, np.full(2, np.inf)):
        _assert_same(dense.all_finite, [a])


def test_a_kernel_without_an_interpreted_form_is_refused():
    with pytest.raises(ValueError, match="no interpreted form"):
        _interpreted.interpreted(dense.zero_fill)


def test_background_compiles_are_switched_by_the_environment(monkeypatch):
    monkeypatch.setenv("NEUROSIM_BACKGROUND_COMPILE", "yes")
    with pytest.raises(ValueError, match="NEUROSIM_BACKGROUND_COMPILE must be 0 or 1"):
        _background.enabled()
    monkeypatch.setenv("NEUROSIM_BACKGROUND_COMPILE", "0")
    assert not _background.enabled()


@pytest.mark.slow  # a second Python process: about a second
def test_a_failed_second_process_is_reported_and_nothing_waits(caplog):
    # a signature the kernel cannot take: the second process fails; done() says so without raising
    job = _background.BackgroundCompile([(dense.copy_1d, ())])
    job._process.wait(timeout=120)
    with caplog.at_level(logging.WARNING, logger="neurosim.engine"):
        assert job.done()
    assert "failed" in caplog.text and "copy_1d" in caplog.text


_README_NETWORK = textwrap.dedent("""
    import logging, sys
    import numpy as np
    import neurosim as ns
    from neurosim.streams import GaussianStream
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="LOG %(message)s")

    def build():
        net = ns.Network(seed=0)
        x = ns.Population("x", 16)
        y = ns.Population("y", 4, dynamics=ns.Jacobi(eta=0.1, tol=1e-8, max_iter=500))
        net.add(x, y)
        net.connect(GaussianStream(np.r_[5, 4, 3, np.full(13, 0.1)], seed=1, eigenvectors="random"), x)
        s = ns.SquaredNorm(x)
        net.add(ns.CumulativeActivity(y, alpha=0.1, signal=s, beta=0.999))
        net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(0.1, s)))
        net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(0.1, s)))
        net.record(y, ["activity", "mu"], every=1)
        return net

    from neurosim.first_steps import _warmups

    first = build()
    first.run(1)  # interpreted: the second process starts
    for _ in range(400):  # then machine code compiled here and interpreted kernels, until that process ends
        first.run(100)
        if all(w is None or w.finished() for w in _warmups.values()):
            break
    first.run(500)  # the machine code throughout
    second = build()
    second.run(first.t)  # the machine code throughout (compiled in this process or loaded from the cache)
    a, b = (n.recorders["y"].to_dataset() for n in (first, second))
    assert np.array_equal(a.activity.values, b.activity.values), "activity differs"
    assert np.array_equal(a.mu.values, b.mu.values), "mu differs"
    for name in ("W", "M"):
        assert np.array_equal(first.projections[name].weights, second.projections[name].weights), name
    print("SAME")
""")


@pytest.mark.slow
def test_the_first_steps_run_interpreted_and_the_numbers_do_not_change(tmp_path):
    # fresh caches: the kernels are compiled nowhere yet, so the network's first steps are interpreted
    script = tmp_path / "first_steps.py"
    script.write_text(_README_NETWORK)
    env = dict(os.environ, NEUROSIM_BACKGROUND_COMPILE="1", NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               NEUROSIM_CACHE_DIR=str(tmp_path / "neurosim"))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "SAME" in r.stdout
    assert "in a second process" in r.stdout and "the second process has compiled the kernels" in r.stdout, r.stdout


def test_a_large_network_or_background_compiles_off_calls_the_compiled_kernels(monkeypatch):
    from neurosim import first_steps

    # over the size bound the first steps would cost more interpreted than the compile saves
    assert first_steps.warmup_for(object(), [np.zeros(first_steps.MAX_ELEMENTS + 1)]) is None

    class Segment:  # only its module's globals are read
        py_func = type("Form", (), {"__globals__": {"_k0": dense.synaptic_drive}})()

    monkeypatch.setenv("NEUROSIM_BACKGROUND_COMPILE", "0")
    segment = Segment()
    assert first_steps.warmup_for(segment, [np.zeros(4)]) is None
    first_steps._warmups.pop(segment, None)


def test_an_interpreted_division_by_zero_raises_what_the_machine_code_raises():
    from numba import njit

    from neurosim.first_steps import KernelWarmup

    def segment_source(a, b):
        return a[0] / b[0], a[0] * np.inf - a[0] * np.inf  # a division by zero; a NaN made silently

    class Segment:
        py_func = staticmethod(segment_source)

    with pytest.raises(ZeroDivisionError):  # numba's error model
        njit(segment_source)(np.ones(1), np.zeros(1))
    warmup = KernelWarmup(Segment(), {})
    with pytest.raises(ZeroDivisionError):
        warmup.function(np.ones(1), np.zeros(1))
    quotient, nan = warmup.function(np.ones(1), np.full(1, 2.0))
    assert quotient == 0.5 and np.isnan(nan)


def test_an_interpreted_kernel_calls_no_machine_code_but_the_blas_product():
    # what it calls compiled would have to be compiled first: the first step would wait for numba again
    from numba.core.registry import CPUDispatcher

    for kernel in _interpreted.INTERPRETABLE:
        seen, todo = set(), [_interpreted.interpreted(kernel)]
        while todo:
            form = todo.pop()
            if form in seen:
                continue
            seen.add(form)
            for name in form.__code__.co_names:
                value = form.__globals__.get(name)
                assert not isinstance(value, CPUDispatcher), (kernel.__name__, name)
                if callable(value) and hasattr(value, "__code__") and value.__globals__ is not vars(np):
                    todo.append(value)
            for cell in form.__closure__ or ():
                assert not isinstance(cell.cell_contents, CPUDispatcher), (kernel.__name__, cell)
