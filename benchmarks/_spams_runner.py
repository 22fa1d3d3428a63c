"""Run SPAMS' ``lasso`` on data saved by ``bench_encoders.py``, in its own process.

SPAMS bundles its own BLAS/OpenMP runtime; keeping it out of the benchmark
process avoids two BLAS libraries fighting over threads and symbols. Usage::

    python _spams_runner.py IN.npz OUT.npz

``IN.npz`` holds ``X`` (n_samples, n_features), ``D`` (n_atoms,
n_features), ``lam`` and ``repeats``. SPAMS mode 2 minimises
``0.5 ||x - D^T a||^2 + lambda1 ||a||_1`` (its dictionary is our ``D^T``),
which is our objective with ``lambda1 = lam``. ``OUT.npz`` receives the
codes (n_samples, n_atoms) and the wall-clock time of every repeat.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def main(src: str, dst: str) -> None:
    import spams

    data = np.load(src)
    X, D, lam, repeats = data["X"], data["D"], float(data["lam"]), int(data["repeats"])
    # Fortran layout is what SPAMS wants; converting outside the timed call
    # mirrors how a SPAMS user keeps data.
    Xf = np.asfortranarray(X.T)
    Df = np.asfortranarray(D.T)
    times = []
    codes = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = spams.lasso(Xf, D=Df, lambda1=lam, mode=2, numThreads=1)
        times.append(time.perf_counter() - t0)
        codes = out
    np.savez(dst, A=np.asarray(codes.todense()).T, times=np.array(times))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
