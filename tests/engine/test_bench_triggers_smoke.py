"""Smoke test of benchmarks/bench_triggers.py: the quick mode runs, agrees and draws each input row once."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_triggers.py"


@pytest.mark.slow
def test_bench_triggers_quick():
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(BENCH), "--quick", "--discard"], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ratio trigger/no-trigger = " in r.stdout, r.stdout
    assert "input rows drawn with the trigger: 10000 for 10000 steps" in r.stdout, r.stdout
    assert "ratio discarding/no-trigger = " in r.stdout, r.stdout
    assert "DISAGREEMENT" not in r.stdout, r.stdout
