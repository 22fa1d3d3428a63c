"""SPAMS worker for ``bench_encoders.py`` (``lasso``) and ``bench_odl_peers.py`` (``trainDL``), in its own process.

SPAMS bundles its own BLAS/OpenMP runtime; keeping it out of the benchmark
process avoids two BLAS libraries fighting over threads and symbols. The
worker stays alive for the whole benchmark so that its runs can be
interleaved with the in-process methods (fair ratios on a shared, noisy
machine). Protocol, one command per line on stdin, one reply per line::

    load PATH   -> "ok"       PATH.npz holds X (n_samples, n_features),
                              D (n_atoms, n_features) and lam
    run         -> seconds    wall-clock time of one spams.lasso call
    save PATH   -> "ok"       codes of the last run, (n_samples, n_atoms)
    train N BATCH PATH -> seconds   CPU time of this process for one trainDL call: N
                              iterations of BATCH samples from the loaded X,
                              starting at the loaded D; the learned
                              dictionary goes to PATH (.npy, (n_atoms, n_features))
    quit

SPAMS mode 2 minimises ``0.5 ||x - D^T a||^2 + lambda1 ||a||_1`` (its
dictionary is our ``D^T``), which is our objective with ``lambda1 = lam``; ``trainDL(mode=2,
lambda1=lam, lambda2=0)`` learns a dictionary for that objective (SPAMS's
default ``lambda2`` is 1e-9, not 0). ``trainDL`` cannot be paused, so each
``train`` is a fresh run from the loaded dictionary.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def main() -> None:
    import spams

    Xf = Df = codes = None
    lam = 0.0
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "load":
            data = np.load(arg)
            # Fortran layout is what SPAMS wants; converting outside the
            # timed call mirrors how a SPAMS user keeps data.
            Xf = np.asfortranarray(data["X"].T)
            Df = np.asfortranarray(data["D"].T)
            lam = float(data["lam"])
            reply = "ok"
        elif cmd == "run":
            t0 = time.perf_counter()
            codes = spams.lasso(Xf, D=Df, lambda1=lam, mode=2, numThreads=1)
            reply = repr(time.perf_counter() - t0)
        elif cmd == "train":
            n_iter, batch, path = arg.split(" ", 2)
            D_start = Df.copy(order="F")  # in case trainDL writes into its start
            t0 = time.process_time()  # CPU time: other jobs on a shared machine do not count
            learned = spams.trainDL(Xf, D=D_start, lambda1=lam, lambda2=0.0, mode=2, iter=int(n_iter),
                                    batchsize=int(batch), numThreads=1, verbose=False)
            seconds = time.process_time() - t0
            np.save(path, np.asarray(learned).T)
            reply = repr(seconds)
        elif cmd == "save":
            np.save(arg, np.asarray(codes.todense()).T)
            reply = "ok"
        elif cmd == "quit":
            return
        else:
            reply = f"error: unknown command {cmd!r}"
        print(reply, flush=True)


if __name__ == "__main__":
    main()
