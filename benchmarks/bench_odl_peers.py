"""Online dictionary learning: the paper-000 circuit (ODL) against SPAMS ``trainDL`` and scikit-learn.

All minimise the per-sample objective of Mairal et al. (2009), Eq. 2,
``0.5 ||x - D alpha||^2 + lam ||alpha||_1`` with unit-norm-bounded atoms:

* **ours**: ``build_network(stream, k, "ODL", batch=200, lam=lam)`` (the
  circuit with a fixed-lambda feature-sign encoder; paper 000, Alg. 1 steps
  4, 11, 13-19), run on the engine's compiled path in one ``network.run``
  per checkpoint, in up to three forms: one sweep of the dictionary update
  per batch (``max_sweeps=1``, what the peers do) keeping the whole past
  (``A <- A + sum a a^T``, the paper); the same with the peers' weighting of
  the past (``decay=ns.schedules.Mairal2010(batch)``: ``A`` and ``B`` scaled
  by ``beta_t`` inside the step, Mairal et al. 2010 Sec. 3.4, as SPAMS and
  scikit-learn); and, unless ``--no-tol``, the circuit's default stopping
  rule (sweeps until the relative change is below ``tol = 1e-6``, at most
  100; keeps the whole past);
* **sklearn**: ``MiniBatchDictionaryLearning(alpha=lam, batch_size=200,
  fit_algorithm=F, transform_algorithm="lasso_" + F)`` fed batch by batch
  with ``partial_fit``, for each ``F`` in ``--sklearn`` (``lars``: LARS
  coding, its default; ``cd``: coordinate descent);
* **spams**: ``trainDL(mode=2, lambda1=lam, lambda2=0, batchsize=200,
  numThreads=1)`` in a worker subprocess (``_spams_runner.py``: its bundled
  BLAS stays out of this process; timed inside the worker). ``trainDL``
  cannot be paused, so the point after ``N`` iterations is a separate run
  of ``N`` iterations (it draws its batches from the whole training set in
  its own order).

Data: 32x32 images of ``neurosim.data.domains.load_image_domains`` (urban and
natural photographs, ``m = 1024``), each sample centred and scaled to unit
norm; training = the training split shuffled, held out = ``--heldout``
samples of the test split (other photographs). ``--lam`` defaults to 0.15,
the reference of the ODL speed comparison (issue 24; ``1.2 / sqrt(m) =
0.0375`` is Mairal et al. 2010's choice). Every method starts from the same
dictionary: ``k`` training samples.

Timing: **CPU time** of the process doing the work (``time.process_time``:
ours and scikit-learn in this process, SPAMS inside its worker), so that
other jobs on a shared machine do not inflate the numbers; BLAS (and numba)
pinned to one thread in both processes. Protocol: for each checkpoint ``N``
(mini-batches seen) every method is advanced to ``N`` in turn (interleaved:
machine noise hits all alike), its cumulative training time is recorded
(held-out evaluation excluded), and the held-out objective of its dictionary
is computed with our feature-sign encoder (an exact lasso solver; the final
dictionaries are re-scored with scikit-learn's LARS as a check).
Compilation is excluded: a throwaway circuit of each form is run first.
Repeated ``--repeats`` times; times are medians.

**Per batch**: the median time to the last checkpoint divided by its ``N``.
**Time to within 1 % of the best**: ``best`` = the lowest held-out objective
any method reaches at any checkpoint; a method's time to ``(1 + within)
best`` (``--within``, default 0.01) is its first crossing of that level,
interpolated linearly in time between the two checkpoints that bracket it
(from its start, objective of ``D0`` at time 0). Printed: the table of
(time, objective) per checkpoint, per batch times, the times to the target
and the ratios of each form of ours to each peer.

``--profile`` adds where the circuit's time goes after the run: ten engine
steps against the same ten batches replayed by hand, kernel by kernel
(drive, Gram, encoder, memory update, dictionary update), and the Python
cost of a ``run`` call (ten ``run(1)`` against one ``run(10)``).

Usage::

    python benchmarks/bench_odl_peers.py --k 100 --lam 0.15
    python benchmarks/bench_odl_peers.py --k 400 --lam 0.15 --no-tol --profile
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

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
cpu_time = time.process_time  # CPU time of this process (all its threads): what every method is timed with


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

    ``decay``: the memory's weight of the past (1: the whole past, paper 000;
    ``ns.schedules.Mairal2010(batch)``: the peers' ``beta_t``, applied inside
    the compiled step).
    """

    def __init__(self, X, D0, lam, batch, max_sweeps, decay=1.0):
        steps = len(X) // batch
        self.c = build_network(ns.ArrayStream(X[: steps * batch].reshape(steps, batch, -1)), D0.shape[0], "ODL",
                               batch=batch, lam=lam, max_sweeps=max_sweeps, record_every=10**9, decay=decay)
        self.c.dictionary.weights = D0
        self.seen = 0

    def advance(self, n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = cpu_time()
            self.c.network.run(n - self.seen)
            dt = cpu_time() - t
        self.seen = n
        return dt

    def dictionary(self):
        return self.c.dictionary.weights.copy()


class Sklearn:
    """``MiniBatchDictionaryLearning`` fed by ``partial_fit``; ``algorithm``: its coder, ``"lars"`` or ``"cd"``."""

    def __init__(self, X, D0, lam, batch, algorithm="lars"):
        from sklearn.decomposition import MiniBatchDictionaryLearning

        self.X, self.batch = X, batch
        self.steps = len(X) // batch
        self.model = MiniBatchDictionaryLearning(D0.shape[0], alpha=lam, batch_size=batch, dict_init=D0.copy(),
                                                 fit_algorithm=algorithm, transform_algorithm="lasso_" + algorithm,
                                                 transform_alpha=lam, random_state=0)
        self.seen = 0

    def advance(self, n):
        with warnings.catch_warnings():
            # coordinate descent stops at scikit-learn's default transform_max_iter = 1000 on a few samples
            # (ConvergenceWarning): its default behaviour, kept
            warnings.simplefilter("ignore")
            t = cpu_time()
            for i in range(self.seen, n):
                j = i % self.steps
                self.model.partial_fit(self.X[j * self.batch:(j + 1) * self.batch])
            dt = cpu_time() - t
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

    def advance(self, n):  # the whole run to n, not an increment: the worker's CPU time of one trainDL call
        return float(self._ask(f"train {n} {self.batch} {self.out}"))

    def dictionary(self):
        return np.load(self.out)

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)
        self.tmp.cleanup()


def time_to(target, times, objs, start=None):
    """Time of the first crossing of ``target``, linear between checkpoints (None if never reached).

    ``start``: the objective at time 0 (the initial dictionary), the point before the first checkpoint.
    """
    prev_t, prev_o = 0.0, start
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
    feature-sign, memory update with the step's decay, one sweep of the
    dictionary update) and must end at the same dictionary; the difference
    of the totals is what the engine adds (loading the batch, finiteness
    checks, the Python around ``run``). Then the Python cost of a ``run``
    call: ``n_steps`` calls of ``run(1)`` against one ``run(n_steps)``.
    """
    from neurosim.kernels.dictionary import block_coordinate_descent, memory_update
    from neurosim.kernels.feature_sign import feature_sign_codes
    from neurosim.rules.dictionary import DictionaryMemory

    c = runner.c
    memory = next(r for r in c.network.unit_rules if isinstance(r, DictionaryMemory))
    W, A, B = c.dictionary.weights.copy(), c.code.state["A"].copy(), c.dictionary.arrays["B"].copy()
    first, n_batches = runner.seen, len(X) // batch
    engine = runner.advance(first + n_steps) / n_steps
    k, m = W.shape
    parts = dict.fromkeys(("drive X W^T", "Gram W W^T", "encoder (feature-sign)", "memory update A, B",
                           "dictionary update (1 sweep)"), 0.0)
    names = list(parts)
    work = np.zeros(m), np.zeros(m), np.zeros(2, np.int64)
    # load every kernel once on copies (numba's cache), so the replay times the work, not the loading
    Xb, codes = X[:batch], np.zeros((batch, k))
    feature_sign_codes(W @ W.T, Xb @ W.T, lam, codes, False, False, max(1000, 10 * k), 1e-10)
    memory_update(A.copy(), B.copy(), codes, Xb, 1.0)
    block_coordinate_descent(W.copy(), A, B, 0.0, 0, 1e-6, 1, 1e-10, False, *work)
    for s in range(first, first + n_steps):
        j = s % n_batches
        Xb = X[j * batch:(j + 1) * batch]
        codes = np.zeros((batch, k))
        decay = memory.value("decay", s + 1)
        t0 = cpu_time()
        C = Xb @ W.T
        t1 = cpu_time()
        G = W @ W.T
        t2 = cpu_time()
        feature_sign_codes(G, C, lam, codes, False, False, max(1000, 10 * k), 1e-10)
        t3 = cpu_time()
        memory_update(A, B, codes, Xb, decay)
        t4 = cpu_time()
        block_coordinate_descent(W, A, B, 0.0, 0, 1e-6, 1, 1e-10, False, *work)
        t5 = cpu_time()
        for name, dt in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            parts[name] += dt / n_steps
    same = np.allclose(W, c.dictionary.weights, rtol=1e-9, atol=1e-12)
    total = sum(parts.values())
    print(f"  profile of {runner.name}, steps {first}-{first + n_steps - 1}, CPU ms per step:")
    for name, v in parts.items():
        print(f"    {name:30s} {v * 1e3:8.2f}  ({v / total:4.0%})")
    print(f"    {'sum of kernels':30s} {total * 1e3:8.2f};  engine step {engine * 1e3:.2f}  "
          f"(engine adds {(engine - total) * 1e3:+.2f}; hand replay reaches the engine's dictionary: {same})")
    seen = runner.seen
    one_by_one = sum(runner.advance(seen + i + 1) for i in range(n_steps))
    together = runner.advance(seen + 2 * n_steps)
    print(f"    Python per run() call: {(one_by_one - together) / n_steps * 1e3:.2f} ms "
          f"({n_steps} x run(1) {one_by_one * 1e3:.1f} ms, run({n_steps}) {together * 1e3:.1f} ms)")


def _help(text, default):
    return f"{text} (default: {default})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Times are CPU seconds (time.process_time) of the process doing the work.")
    ap.add_argument("--k", type=int, default=100, help=_help("dictionary size (atoms)", 100))
    ap.add_argument("--batch", type=int, default=200, help=_help("mini-batch size", 200))
    ap.add_argument("--lam", type=float, default=0.15,
                    help=_help("L1 weight lambda of every method (1.2/sqrt(m) = 0.0375 is Mairal et al. 2010's "
                               "choice for m = 1024)", 0.15))
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[5, 10, 20, 40, 80],
                    help=_help("mini-batches seen at which each method is timed and scored", "5 10 20 40 80"))
    ap.add_argument("--repeats", type=int, default=3, help=_help("repeats of the whole run; times are medians", 3))
    ap.add_argument("--heldout", type=int, default=1000, help=_help("held-out samples scored", 1000))
    ap.add_argument("--within", type=float, default=0.01,
                    help=_help("relative tolerance of 'time to within X of the best held-out objective'", 0.01))
    ap.add_argument("--no-tol", action="store_true",
                    help=_help("skip ours with sweeps to tol (slow at large k)", "off: that form runs"))
    ap.add_argument("--sklearn", nargs="*", choices=["lars", "cd"], default=["lars", "cd"],
                    help=_help("scikit-learn coders (fit_algorithm) to run; none with an empty list", "lars cd"))
    ap.add_argument("--no-spams", action="store_true",
                    help=_help("skip SPAMS trainDL (also skipped when spams is not importable)", "off"))
    ap.add_argument("--profile", action="store_true",
                    help=_help("after the run: where the circuit's time goes, kernel by kernel", "off"))
    args = ap.parse_args(argv)
    checkpoints = sorted(set(args.checkpoints))

    import sklearn

    try:  # BLAS already pinned by the environment; this also pins a library loaded in another way
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:
        pass
    t = time.perf_counter()
    X, Xte = load_data(args.heldout)
    m, k, batch, lam = X.shape[1], args.k, args.batch, args.lam
    D0 = X[np.random.default_rng(1).choice(len(X), k, replace=False)].copy()
    have_spams = importlib.util.find_spec("spams") is not None and not args.no_spams
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"{cpu}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}, "
          f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
          f"spams {'yes' if have_spams else 'skipped'}; BLAS and numba 1 thread; CPU time")
    print(f"data: {len(X)} training, {len(Xte)} held-out samples, m={m}; k={k}, batch={batch}, lam={lam:g} "
          f"({time.perf_counter() - t:.1f} s to load); {len(X) // batch} batches per pass")

    forms = {"ours (1 sweep)": dict(max_sweeps=1),
             "ours (1 sweep, Mairal2010)": dict(max_sweeps=1, decay=ns.schedules.Mairal2010(batch))}
    if not args.no_tol:
        forms["ours (sweeps to tol)"] = dict(max_sweeps=100)
    for kw in forms.values():  # compile (or load) each form's segment: not timed
        Ours(X[: 2 * batch], D0, lam, batch, **kw).advance(2)

    methods = {name: (lambda kw=kw: Ours(X, D0, lam, batch, **kw)) for name, kw in forms.items()}
    if have_spams:
        methods["spams trainDL"] = lambda: Spams(X, D0, lam, batch)
    for alg in args.sklearn:
        methods[f"sklearn MBDL ({alg})"] = lambda alg=alg: Sklearn(X, D0, lam, batch, alg)

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

    start = objective(Xte, D0, lam)
    print(f"\nheld-out objective at start: {start:.6f}; CPU seconds, median of {args.repeats} repeats")
    head = "  N  " + "".join(f"| {name:>28s} " for name in methods)
    print(head + "\n" + "-" * len(head))
    for i, n in enumerate(checkpoints):
        print(f"{n:4d} " + "".join(f"| {med[name][i]:8.3f} s  {objs[name][i]:.6f}    " for name in methods))

    best = min(min(v) for v in objs.values())
    who = min(methods, key=lambda name: min(objs[name]))
    target = (1.0 + args.within) * best
    reach = {name: time_to(target, med[name], objs[name], start) for name in methods}
    per_batch = {name: med[name][-1] / checkpoints[-1] for name in methods}
    print(f"\nbest held-out objective {best:.6f} ({who}); target = {target:.6f} "
          f"(within {args.within:.0%} of the best); CPU time to reach it:")
    for name in methods:
        got = "not reached" if reach[name] is None else f"{reach[name]:8.3f} s"
        print(f"  {name:28s} {got}   ({per_batch[name] * 1e3:.2f} ms per batch over the whole run)")
    for ours in (n for n in methods if n.startswith("ours")):
        for peer in (n for n in methods if not n.startswith("ours")):
            ratio = "n/a" if reach[ours] is None or reach[peer] is None else f"{reach[ours] / reach[peer]:.3f}"
            print(f"  ratio {ours} / {peer}: time to {args.within:.0%} of best {ratio}, "
                  f"time per batch {per_batch[ours] / per_batch[peer]:.3f}")
    print("check, final dictionaries re-scored with sklearn LARS codes (relative difference to feature-sign):")
    for name, D in finals.items():
        lars = objective_lars(Xte[:200], D[np.linalg.norm(D, axis=1) > 0], lam)
        fs = objective(Xte[:200], D, lam)
        print(f"  {name:28s} {abs(lars - fs) / fs:.1e}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    if args.profile:
        for name in forms:
            if "tol" not in name:
                last[name].name = name
                profile(last[name], X, lam, batch)


if __name__ == "__main__":
    main()
