"""Smoke test of benchmarks/bench_engine.py: the quick mode runs, agrees numerically and prints its ratios."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_engine.py"


def test_bench_engine_quick():
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ratio engine/fused = " in r.stdout, r.stdout
    assert "ratio engine/numpy = " in r.stdout, r.stdout
    assert "DISAGREEMENT" not in r.stdout, r.stdout


def test_bench_import_one_round():
    # issue 40: the benchmark measures, tests/test_lazy_imports.py asserts; here only that it runs and reports
    r = subprocess.run([sys.executable, str(BENCH.with_name("bench_import.py")), "--runs", "1", "--top", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ratio neurosim/numba = " in r.stdout and "  import neurosim " in r.stdout, r.stdout
    assert "heavy dependencies loaded by import neurosim: none" in r.stdout, r.stdout


def test_bench_dictionary_tiny():
    bench = BENCH.with_name("bench_dictionary.py")
    args = ["--m", "12", "--k", "5", "--batch", "10", "--steps", "3", "--repeats", "1"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(bench), *args], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ratio turnover/static = " in r.stdout and "(10 events in the last run)" in r.stdout, r.stdout


def test_bench_odl_peers_tiny():
    bench = BENCH.with_name("bench_odl_peers.py")
    args = ["--k", "10", "--batch", "50", "--checkpoints", "1", "2", "--repeats", "1", "--heldout", "50", "--profile"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(bench), *args], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ratio ours (1 sweep, Mairal2010) / sklearn MBDL (lars): time to 1% of best" in r.stdout, r.stdout
    assert "ratio ours (1 sweep) / sklearn MBDL (cd): time to 1% of best" in r.stdout, r.stdout
    assert "hand replay reaches the engine's dictionary: True" in r.stdout, r.stdout


def test_bench_selection_quick():
    bench = BENCH.with_name("bench_selection.py")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(bench), "--quick"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ratio peer/ours = ") == 2 * 3, r.stdout  # per encoder and in the summary
    assert "agreement k_sparse: True" in r.stdout, r.stdout
    assert "agreement lars (looser bound 1e-06: feature-sign vs LARS): True" in r.stdout, r.stdout
    assert "agreement omp: skipped" in r.stdout, r.stdout


def test_bench_parallel_quick():
    bench = BENCH.with_name("bench_parallel.py")
    r = subprocess.run([sys.executable, str(bench), "--quick", "--no-torch"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "DRAM triad GB/s by threads" in r.stdout and "256 x 128 |" in r.stdout, r.stdout


def test_bench_cuda_quick_under_the_simulator():
    bench = BENCH.with_name("bench_cuda.py")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, str(bench), "--quick"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 x 3 | 2 |" in r.stdout and "DISAGREEMENT" not in r.stdout, r.stdout


def test_bench_self_organizing_quick():
    pytest.importorskip("minisom")
    pytest.importorskip("minigng")
    bench = BENCH.with_name("bench_self_organizing.py")
    r = subprocess.run([sys.executable, str(bench), "--quick"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ratio ours/peer = ") == 4, r.stdout
    assert r.stdout.count("(agreement: True)") == 4, r.stdout  # same weights as MiniSom, same network as minigng


def test_bench_store_growing_quick():
    pytest.importorskip("zarr")
    bench = BENCH.with_name("bench_store_growing.py")
    r = subprocess.run([sys.executable, str(bench), "--quick"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ratio store/memory = ") == 2, r.stdout  # prototypes; prototypes and edges
    assert r.stdout.count("(store == memory: True)") == 2, r.stdout


def test_bench_sparse_quick():
    bench = BENCH.with_name("bench_sparse.py")
    r = subprocess.run([sys.executable, str(bench), "--quick", "--no-brian2"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(agree: yes)" in r.stdout, r.stdout  # neurosim and the NumPy loop: the same weights
    assert "ratio neurosim/scipy (drive+Oja) = " in r.stdout and "| 2000 | 0.01 |" in r.stdout, r.stdout


def _brian2_python():
    """An interpreter with Brian2: NEUROSIM_BRIAN2_PYTHON, or this one (Brian2 needs a NumPy it supports)."""
    for py in (os.environ.get("NEUROSIM_BRIAN2_PYTHON"), sys.executable):
        if py and subprocess.run([py, "-c", "import brian2"], capture_output=True).returncode == 0:
            return py
    return None


def test_brian2_standalone_learns_the_weights_neurosim_learns():
    """Oracle of both: Brian2 C++ standalone given neurosim's synapses, weights and inputs (bench_sparse.py)."""
    py = _brian2_python()
    if py is None:
        pytest.skip("no Python with brian2 (set NEUROSIM_BRIAN2_PYTHON to one, e.g. a venv with brian2)")
    bench = BENCH.with_name("bench_sparse.py")
    r = subprocess.run([sys.executable, str(bench), "--checks-only", "--brian2-python", py], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("(agree: yes)") == 2, r.stdout


def test_bench_first_run_times_the_readme_network_as_written():
    """The probe is the README's network with its run split in two (import, first step, the rest), and runs.

    Only the README network's probe, on the caches the suite already has: the cold runs (every kernel compiled
    again) are the benchmark's to measure, not the suite's.
    """
    sys.path.insert(0, str(BENCH.parent))
    try:
        import bench_first_run as bench
    finally:
        sys.path.remove(str(BENCH.parent))
    probe = bench.network_probe()
    block = bench.readme_blocks()[0]
    assert bench.RUN_LINE in block and bench.RUN_LINE not in probe
    assert probe.count("net.run(") == 2 and block.replace(bench.RUN_LINE, "") in probe.replace(bench._PROBE_RUN, "")
    wall, out = bench.timed_script(probe, "probe.py", dict(os.environ, OMP_NUM_THREADS="1"), 300)
    t_import, t_first, t_rest, t_all = (float(v) for v in out.split("PROBE ")[1].split())
    assert 0 < t_import < t_all and 0 < t_first < t_all and 0 < t_rest < t_all <= wall
    # the README's printed eigenvalues still come out (the probe ran the whole 20,000 steps)
    assert "[3.67 2.67 1.67 0.  ]" in out
    r = subprocess.run([sys.executable, str(BENCH.with_name("bench_first_run.py")), "--runs", "0"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--runs must be >= 1" in r.stderr
