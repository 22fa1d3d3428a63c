"""Feature-sign search vs scikit-learn and SPAMS on the Table 1 sizes of Lee et al. (2006).

For each (input dimension k x number of bases n) of Table 1 -- 196x512,
500x200, 288x400, 512x200 -- encode 100 signals with one lambda chosen so
that about 7.5 % of the coefficients are nonzero, and time (median over
repeats, BLAS pinned to one thread, one process run so ratios are fair on a
shared machine):

* ``neurosim.coding.feature_sign`` (ours, Gram and correlations included),
* ``sklearn.decomposition.sparse_encode`` with ``lasso_lars`` and
  ``lasso_cd`` (``alpha = lam`` is the same objective),
* ``spams.lasso`` (mode 2, ``lambda1 = lam``, ``numThreads=1``) in a
  worker subprocess (``_spams_runner.py``, timed inside the worker, so
  the pipe round trip is not counted); skipped with a message if SPAMS is
  not installed (``pip install spams-bin``).

All methods include their own Gram computation. Repeats are interleaved
(one call of every method per round) and the median per method is printed.

The "gap" column is Table 1's relative error ``(f - f*) / f*`` of the total
objective over the 100 signals, ``f*`` the best among the methods.

Data: "gauss" = Gaussian signals on a Gaussian dictionary with unit atoms;
"pink" = windows of 1/f (pink) noise on a dictionary of other unit-norm
pink-noise windows: strongly correlated signals and coherent atoms, a cheap
stand-in for natural stimuli.

Usage: ``python benchmarks/bench_encoders.py [--repeats 7] [--data gauss pink]``
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

SIZES = [(196, 512), (500, 200), (288, 400), (512, 200)]
HERE = os.path.dirname(os.path.abspath(__file__))


def pink_windows(n_windows, length, rng):
    # 1/f amplitude spectrum with random phases, cut into windows.
    n = n_windows * length * 2
    freqs = np.fft.rfftfreq(n)
    amp = np.zeros_like(freqs)
    amp[1:] = 1.0 / freqs[1:]
    spec = amp * np.exp(2j * np.pi * rng.random(freqs.size))
    sig = np.fft.irfft(spec, n)
    W = sig[: n_windows * length].reshape(n_windows, length)
    W = W - W.mean(axis=1, keepdims=True)
    return W / W.std()


def make_data(kind, n_features, n_atoms, n_samples, seed):
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        D = rng.standard_normal((n_atoms, n_features))
        X = rng.standard_normal((n_samples, n_features))
    else:
        W = pink_windows(n_atoms + n_samples, n_features, rng)
        D, X = W[:n_atoms], W[n_atoms:]
    D = D / np.linalg.norm(D, axis=1, keepdims=True)
    return np.ascontiguousarray(X), np.ascontiguousarray(D)


def objective(X, D, A, lam):
    return float(0.5 * np.sum((X - A @ D) ** 2) + lam * np.sum(np.abs(A)))


def lam_for_density(X, D, density, feature_sign):
    """One lambda for the batch with mean nonzero fraction ~ density (bisection)."""
    lo, hi = 0.0, float(np.abs(X @ D.T).max())
    target = density * D.shape[0]
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        nnz = np.count_nonzero(feature_sign(X, D, mid), axis=1).mean()
        if abs(nnz - target) < 0.25:
            break
        lo, hi = (mid, hi) if nnz > target else (lo, mid)
    return mid


class SpamsWorker:
    """Client of ``_spams_runner.py``: one SPAMS process for the whole run."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "_spams_runner.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if not reply or reply.startswith("error"):
            raise RuntimeError(f"spams worker: {reply or 'died'}")
        return reply

    def load(self, X, D, lam):
        path = os.path.join(self.tmp.name, "in.npz")
        np.savez(path, X=X, D=D, lam=lam)
        self._ask(f"load {path}")

    def run(self):
        return float(self._ask("run"))

    def codes(self):
        path = os.path.join(self.tmp.name, "out.npy")
        self._ask(f"save {path}")
        return np.load(path)

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)
        self.tmp.cleanup()


def wall(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--density", type=float, default=0.075)
    parser.add_argument("--data", nargs="+", default=["gauss", "pink"], choices=["gauss", "pink"])
    args = parser.parse_args()

    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:
        pass
    import numba
    import sklearn
    from sklearn.decomposition import sparse_encode

    from neurosim.coding import feature_sign

    have_spams = importlib.util.find_spec("spams") is not None
    print(f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"scikit-learn {sklearn.__version__}")
    if not have_spams:
        print("SKIP spams.lasso: spams is not importable (pip install spams-bin)")
    spams = SpamsWorker() if have_spams else None
    X0, D0 = make_data("gauss", 20, 30, 5, 0)
    feature_sign(X0, D0, 0.1)  # JIT warm-up (cached compile) outside the timings

    header = f"{'k x n':>9} {'data':>5} {'method':>22} {'median ms':>10} {'x ours':>7} {'gap':>9} {'nnz/sig':>8}"
    print(header)
    print("-" * len(header))
    for kind in args.data:
        for n_features, n_atoms in SIZES:
            X, D = make_data(kind, n_features, n_atoms, args.samples, seed=n_features + n_atoms)
            lam = lam_for_density(X, D, args.density, feature_sign)
            methods = {
                "feature_sign (ours)": lambda: feature_sign(X, D, lam),
                "sklearn lasso_lars": lambda: sparse_encode(X, D, algorithm="lasso_lars", alpha=lam, max_iter=10000),
                "sklearn lasso_cd": lambda: sparse_encode(X, D, algorithm="lasso_cd", alpha=lam, max_iter=10000),
            }
            times = {m: [] for m in methods}
            codes = {}
            if spams is not None:
                spams.load(X, D, lam)
                times["spams.lasso (1 thread)"] = []
            # Interleave the methods inside every repeat so that load changes
            # on the shared machine hit all of them alike.
            for _ in range(args.repeats):
                for m, fn in methods.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # lasso_cd's ConvergenceWarning is part of the result
                        t, codes[m] = wall(fn)
                    times[m].append(t)
                if spams is not None:
                    times["spams.lasso (1 thread)"].append(spams.run())
            if spams is not None:
                codes["spams.lasso (1 thread)"] = spams.codes()
            rows = {m: (float(np.median(times[m])), codes[m]) for m in times}
            objs = {m: objective(X, D, A, lam) for m, (_, A) in rows.items()}
            best = min(objs.values())
            t_ours = rows["feature_sign (ours)"][0]
            for m, (t, A) in rows.items():
                gap = (objs[m] - best) / best
                nnz = np.count_nonzero(A, axis=1).mean()
                print(f"{n_features:>4}x{n_atoms:<4} {kind:>5} {m:>22} {1e3 * t:10.2f} {t / t_ours:7.2f} "
                      f"{gap:9.1e} {nnz:8.1f}")
            print(f"{'':>9} {'':>5} {'lam':>22} {lam:10.4g}")
            sys.stdout.flush()
    if spams is not None:
        spams.close()


if __name__ == "__main__":
    main()
