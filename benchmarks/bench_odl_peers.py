"""Online dictionary learning: the paper-000 circuit (ODL) against SPAMS ``trainDL`` and scikit-learn.

All three minimise the per-sample objective of Mairal et al. (2009), Eq. 2,
``0.5 ||x - D alpha||^2 + lam ||alpha||_1`` with unit-norm-bounded atoms:

* **ours**: ``build_network(stream, k, "ODL", batch=200, lam=lam)`` (the
  circuit with a fixed-lambda feature-sign encoder; paper 000, Alg. 1 steps
  4, 11, 13-19), run on the engine's compiled path, once with one sweep of
  the dictionary update per batch (``max_sweeps=1``, what the peers do) and,
  unless ``--no-tol``, with the circuit's default stopping rule (sweeps until
  the relative change is below ``tol = 1e-6``, at most 100), and once with
  one sweep and the peers' weighting of the past (``A`` and ``B`` scaled by
  ``beta_t`` before each step, Mairal et al. 2010 Sec. 3.4: see :class:`Ours`);
* **sklearn**: ``MiniBatchDictionaryLearning(alpha=lam, batch_size=200)``
  fed batch by batch with ``partial_fit`` (LARS coding, its default);
* **spams**: ``trainDL(mode=2, lambda1=lam, lambda2=0, batchsize=200,
  numThreads=1)`` in a worker subprocess (``_spams_runner.py``: its bundled
  BLAS stays out of this process; timed inside the worker). ``trainDL``
  cannot be paused, so the point after ``N`` iterations is a separate run
  of ``N`` iterations (it draws its batches from the whole training set in
  its own order).

Data: 32x32 images of ``neurosim.data.domains.load_image_domains`` (urban and
natural photographs, ``m = 1024``), each sample centred and scaled to unit
norm; training = the training split shuffled, held out = 1000 samples of the
test split (other photographs). ``lam = 1.2 / sqrt(m)`` (Mairal et al.
2010). Every method starts from the same dictionary: ``k`` training samples.

Protocol: for each checkpoint ``N`` (mini-batches seen) every method is
advanced to ``N`` in turn (interleaved: machine noise hits all alike), its
cumulative training time is recorded (held-out evaluation excluded), and the
held-out objective of its dictionary is computed with our feature-sign
encoder (an exact lasso solver; the final dictionaries are re-scored with
scikit-learn's LARS as a check). Compilation is excluded: a throwaway
circuit is run first. BLAS pinned to one thread. Repeated ``--repeats``
times; times are medians.

**Time to the same objective.** The target is the highest (worst) of the
methods' held-out objectives at the last checkpoint, i.e. a level every
method reaches within the run. A method's time to the target is linearly
interpolated between the two checkpoints that bracket its first crossing.
Printed: the table of (time, objective) per checkpoint, the times to the
target and the ratios ours/spams and ours/sklearn.

``--profile`` adds where the circuit's time goes after the run: ten engine
steps against the same ten batches replayed by hand, kernel by kernel
(drive, Gram, encoder, memory update, dictionary update).

Usage::

    python benchmarks/bench_odl_peers.py --k 100
    python benchmarks/bench_odl_peers.py --k 400 --checkpoints 5 10 20 40 --no-tol --profile
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.coding.encoders import feature_sign  # noqa: E402
from neurosim.data.domains import load_image_domains  # noqa: E402
from neurosim.models.neurogenesis import build_network  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def load_data(n_heldout: int, seed: int = 0):
    """Unit-norm, centred 32x32 images: shuffled training split and ``n_heldout`` test samples."""
    urban, natural = load_image_domains(center=True, normalize=True, seed=seed)
    rng = np.random.default_rng(seed)

    def clean(X):
        return X[np.linalg.norm(X, axis=1) > 0.5]  # normalize leaves constant crops at 0

    X = clean(np.vstack([urban.X_train, natural.X_train]))
    Xte = clean(np.vstack([urban.X_test, natural.X_test]))
    return X[rng.permutation(len(X))], Xte[rng.permutation(len(Xte))[:n_heldout]]


def objective(X, D, lam):
    """Mean held-out ``0.5 ||x - D^T a||^2 + lam ||a||_1`` at exact lasso codes (feature-sign)."""
    D = D[np.linalg.norm(D, axis=1) > 0]  # an all-zero atom codes nothing (and the encoder refuses it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        C = feature_sign(X, D, lam)
    return float(np.mean(0.5 * ((X - C @ D) ** 2).sum(axis=1) + lam * np.abs(C).sum(axis=1)))


def objective_lars(X, D, lam):
    from sklearn.decomposition import sparse_encode

    C = sparse_encode(X, D, algorithm="lasso_lars", alpha=lam)
    return float(np.mean(0.5 * ((X - C @ D) ** 2).sum(axis=1) + lam * np.abs(C).sum(axis=1)))


class Ours:
    """The circuit, advanced with ``network.run``; the stream cycles over the training set.

    ``weighted``: before each step, ``A`` and ``B`` are scaled by
    scikit-learn's ``beta_t`` (Mairal et al. 2010, Sec. 3.4, rho = 1, with its
    batch-size correction), so that old codes, computed with early
    dictionaries, weigh less, as in both peers. The circuit's
    ``DictionaryMemory`` has a constant ``decay`` only (paper 000 keeps the
    whole past), so this steps one at a time and scales the two arrays in
    place between steps (Python; timed with the rest).
    """

    def __init__(self, X, D0, lam, batch, max_sweeps, weighted=False):
        steps = len(X) // batch
        self.c = build_network(ns.ArrayStream(X[: steps * batch].reshape(steps, batch, -1)), D0.shape[0], "ODL",
                               batch=batch, lam=lam, max_sweeps=max_sweeps, record_every=10**9)
        self.c.dictionary.weights = D0
        self.batch, self.weighted, self.seen = batch, weighted, 0

    def beta(self, step):
        b = self.batch
        theta = (step + 1) * b if step < b - 1 else b * b + step + 1 - b
        return (theta + 1 - b) / (theta + 1)

    def advance(self, n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            if self.weighted:
                A, B = self.c.code.state["A"], self.c.dictionary.arrays["B"]
                for step in range(self.seen, n):
                    beta = self.beta(step)
                    A *= beta
                    B *= beta
                    self.c.network.run(1)
            else:
                self.c.network.run(n - self.seen)
            dt = time.perf_counter() - t
        self.seen = n
        return dt

    def dictionary(self):
        return self.c.dictionary.weights.copy()


class Sklearn:
    def __init__(self, X, D0, lam, batch):
        from sklearn.decomposition import MiniBatchDictionaryLearning

        self.X, self.batch = X, batch
        self.steps = len(X) // batch
        self.model = MiniBatchDictionaryLearning(D0.shape[0], alpha=lam, batch_size=batch, dict_init=D0.copy(),
                                                 random_state=0)
        self.seen = 0

    def advance(self, n):
        t = time.perf_counter()
        for i in range(self.seen, n):
            j = i % self.steps
            self.model.partial_fit(self.X[j * self.batch:(j + 1) * self.batch])
        dt = time.perf_counter() - t
        self.seen = n
        return dt

    def dictionary(self):
        return self.model.components_.copy()


class Spams:
    """Client of ``_spams_runner.py``; each checkpoint is a fresh ``trainDL`` run of ``n`` iterations."""

    def __init__(self, X, D0, lam, batch):
        self.tmp = tempfile.TemporaryDirectory()
        self.batch = batch
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "_spams_runner.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        path = os.path.join(self.tmp.name, "in.npz")
        np.savez(path, X=X, D=D0, lam=lam)
        self._ask(f"load {path}")
        self.out = os.path.join(self.tmp.name, "D.npy")

    def _ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if not reply or reply.startswith("error"):
            raise RuntimeError(f"spams worker: {reply or 'died'}")
        return reply

    def advance(self, n):  # the whole run to n, not an increment
        return float(self._ask(f"train {n} {self.batch} {self.out}"))

    def dictionary(self):
        return np.load(self.out)

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)
        self.tmp.cleanup()


def time_to(target, times, objs):
    """Time of the first crossing of ``target``, linear between checkpoints (None if never reached)."""
    prev_t, prev_o = 0.0, None
    for t, o in zip(times, objs):
        if o <= target:
            if prev_o is None or prev_o == o:
                return t
            return prev_t + (t - prev_t) * (prev_o - target) / (prev_o - o)
        prev_t, prev_o = t, o
    return None


def profile(runner, X, lam, batch, n_steps=10):
    """Where an engine step's time goes: ``n_steps`` engine steps, then the same batches by hand, kernel by kernel.

    From the same state (dictionary, A, B), the hand replay calls the
    kernels the compiled segment calls (drive ``X W^T``, Gram ``W W^T``,
    feature-sign, memory update, one sweep of the dictionary update) and must
    end at the same dictionary; the difference of the totals is what the
    engine adds (loading the batch, finiteness checks, the Python around
    ``run``).
    """
    from neurosim.kernels.dictionary import block_coordinate_descent, memory_update
    from neurosim.kernels.feature_sign import feature_sign_codes

    c = runner.c
    W, A, B = c.dictionary.weights.copy(), c.code.state["A"].copy(), c.dictionary.arrays["B"].copy()
    first, n_batches = runner.seen, len(X) // batch
    engine = runner.advance(first + n_steps) / n_steps
    k, m = W.shape
    parts = dict.fromkeys(("drive X W^T", "Gram W W^T", "encoder (feature-sign)", "memory update A, B",
                           "dictionary update (1 sweep)"), 0.0)
    names = list(parts)
    work = np.zeros(m), np.zeros(m), np.zeros(2, np.int64)
    for s in range(first, first + n_steps):
        j = s % n_batches
        Xb = X[j * batch:(j + 1) * batch]
        codes = np.zeros((batch, k))
        t0 = time.perf_counter()
        C = Xb @ W.T
        t1 = time.perf_counter()
        G = W @ W.T
        t2 = time.perf_counter()
        feature_sign_codes(G, C, lam, codes, False, False, max(1000, 10 * k), 1e-10)
        t3 = time.perf_counter()
        memory_update(A, B, codes, Xb, 1.0)
        t4 = time.perf_counter()
        block_coordinate_descent(W, A, B, 0.0, 0, 1e-6, 1, 1e-10, *work)
        t5 = time.perf_counter()
        for name, dt in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            parts[name] += dt / n_steps
    same = np.allclose(W, c.dictionary.weights, rtol=1e-9, atol=1e-12)
    total = sum(parts.values())
    print(f"  profile of ours (1 sweep/batch), steps {first}-{first + n_steps - 1}, ms per step:")
    for name, v in parts.items():
        print(f"    {name:30s} {v * 1e3:8.2f}  ({v / total:4.0%})")
    print(f"    {'sum of kernels':30s} {total * 1e3:8.2f};  engine step {engine * 1e3:.2f}  "
          f"(engine adds {(engine - total) * 1e3:+.2f}; hand replay reaches the engine's dictionary: {same})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[5, 10, 20, 40, 80])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--heldout", type=int, default=1000)
    ap.add_argument("--no-tol", action="store_true", help="skip ours with sweeps to tol (slow at large k)")
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    checkpoints = sorted(set(args.checkpoints))

    import sklearn

    t = time.perf_counter()
    X, Xte = load_data(args.heldout)
    m, k, batch = X.shape[1], args.k, args.batch
    lam = 1.2 / np.sqrt(m)
    D0 = X[np.random.default_rng(1).choice(len(X), k, replace=False)].copy()
    have_spams = importlib.util.find_spec("spams") is not None
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, spams {'yes' if have_spams else 'not installed (skipped)'}; "
          f"BLAS 1 thread")
    print(f"data: {len(X)} training, {len(Xte)} held-out samples, m={m}; k={k}, batch={batch}, lam={lam:.4f} "
          f"({time.perf_counter() - t:.1f} s to load); {len(X) // batch} batches per pass")

    Ours(X[: 2 * batch], D0, lam, batch, 1).advance(2)  # compile (or load) the segment: not timed

    methods = {"ours (1 sweep/batch)": lambda: Ours(X, D0, lam, batch, 1),
               "ours (1 sweep, weighted)": lambda: Ours(X, D0, lam, batch, 1, weighted=True)}
    if not args.no_tol:
        methods["ours (sweeps to tol)"] = lambda: Ours(X, D0, lam, batch, 100)
    if have_spams:
        methods["spams trainDL"] = lambda: Spams(X, D0, lam, batch)
    if not args.no_sklearn:
        methods["sklearn MBDL"] = lambda: Sklearn(X, D0, lam, batch)

    times = {name: [[] for _ in checkpoints] for name in methods}
    objs = {name: [None] * len(checkpoints) for name in methods}
    finals = {}
    for r in range(args.repeats):
        runners = {name: make() for name, make in methods.items()}
        cum = dict.fromkeys(methods, 0.0)
        for i, n in enumerate(checkpoints):
            for name, runner in runners.items():
                dt = runner.advance(n)
                cum[name] = dt if name == "spams trainDL" else cum[name] + dt
                times[name][i].append(cum[name])
                if r == 0:  # the learned dictionaries are the same every repeat (up to SPAMS's own draws)
                    objs[name][i] = objective(Xte, runner.dictionary(), lam)
        for name, runner in runners.items():
            if r == 0:
                finals[name] = runner.dictionary()
            if isinstance(runner, Spams):
                runner.close()
        last = runners
    med = {name: [statistics.median(v) for v in times[name]] for name in methods}

    print(f"\nheld-out objective at start: {objective(Xte, D0, lam):.6f}; median of {args.repeats} repeats")
    head = "  N  " + "".join(f"| {name:>28s} " for name in methods)
    print(head + "\n" + "-" * len(head))
    for i, n in enumerate(checkpoints):
        print(f"{n:4d} " + "".join(f"| {med[name][i]:8.2f} s  {objs[name][i]:.6f}    " for name in methods))

    target = max(objs[name][-1] for name in methods)
    reach = {name: time_to(target, med[name], objs[name]) for name in methods}
    print(f"\ntarget = {target:.6f} (the worst objective at N = {checkpoints[-1]}); time to reach it:")
    per_batch = {name: med[name][-1] / checkpoints[-1] for name in methods}
    for name in methods:
        got = "not reached" if reach[name] is None else f"{reach[name]:8.2f} s"
        print(f"  {name:26s} {got}   ({per_batch[name] * 1e3:.1f} ms per batch over the whole run)")
    for ours in (n for n in methods if n.startswith("ours")):
        for peer in (n for n in methods if not n.startswith("ours")):
            ratio = "n/a" if reach[ours] is None or reach[peer] is None else f"{reach[ours] / reach[peer]:.3f}"
            print(f"  ratio {ours} / {peer}: time to target {ratio}, "
                  f"time per batch {per_batch[ours] / per_batch[peer]:.3f}")
    print("check, final dictionaries re-scored with sklearn LARS codes (relative difference to feature-sign):")
    for name, D in finals.items():
        lars = objective_lars(Xte[:200], D[np.linalg.norm(D, axis=1) > 0], lam)
        fs = objective(Xte[:200], D, lam)
        print(f"  {name:26s} {abs(lars - fs) / fs:.1e}")
    if args.profile:
        profile(last["ours (1 sweep/batch)"], X, lam, batch)


if __name__ == "__main__":
    main()
