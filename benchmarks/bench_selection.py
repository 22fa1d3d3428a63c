"""Learning with example selection (paper 004, Alg. 1): one epoch of the circuit against the NumPy pipeline.

One epoch at the paper's scale (Tsuchida & Cottrell 2015, Sec. 4): ``N =
50,000`` 8x8 examples from the Gabor dictionary (``K = 100``, ``k = 5``, SNR
6 dB), ``n = 500`` selected by SUNByElement (Eq. 12 + Eq. 15), 10 passes of
re-encode / equalize (``gamma = 0.2``) / SGD (Eq. 8) / normalise. For each
encoder (``k_sparse``: Eq. 7; ``lars``: the non-negative lasso of Eq. 5;
``omp``: Eq. 6):

* **ours**: ``build_network(...)`` of ``neurosim.models.example_selection``
  on the engine's compiled path; ``circuit.run(1)`` is timed per epoch after
  a warm-up epoch (whose numba compile -- or cache load -- is reported
  separately, from ``network.timings["compile_seconds"]``).
* **peer**: the authors' pipeline shape written here in plain NumPy /
  scikit-learn: encode all ``N`` (k-Sparse: ``X @ D.T`` and
  ``np.argpartition``, the top ``k`` kept where positive; LARS:
  ``sklearn.decomposition.sparse_encode(algorithm="lasso_lars", alpha=lam,
  positive=True)``; OMP: ``sparse_encode(algorithm="omp",
  n_nonzero_coefs=k)``), goodness and selection (``np.argsort`` of every
  element's column, stable so ties go to the lower index, and a round robin
  in Python for ByElement; ``np.argsort`` of the row sums for BySum), then
  the 10 passes in NumPy with the same encoder.

scikit-learn's ``lasso_lars`` divides ``alpha`` by ``n_features`` and
``LassoLars`` scales its loss by ``1 / (2 n_features)``, so ``alpha = lam``
is our ``0.5 ||x - D^T s||^2 + lam ||s||_1`` (checked below on the epoch's
codes). scikit-learn has no non-negative OMP: the peer's OMP is signed (a
different, slightly cheaper problem) and is compared for speed only.

Both sides start every epoch from the same dictionary (ours, just before
the epoch) and the same examples, so the work is the same and the agreement
is checked on every timed epoch: the selected rows (as a set and in order)
and the dictionary after the epoch (``max |W_ours - W_numpy|``).

Step 1 of Alg. 1 (drawing the ``N`` examples from Eq. 1) is data
generation, not the learner: the epochs are drawn once before the timings
and served from memory to both sides; its cost is printed separately.

BLAS is pinned to one thread; times are the best of ``--repeats`` epochs,
ours and the peer interleaved within each epoch so that load on a shared
machine hits both alike.

Usage::

    python benchmarks/bench_selection.py                 # the paper's scale
    python benchmarks/bench_selection.py --quick         # smoke test (N = 500, n = 20, 1 repeat)
    python benchmarks/bench_selection.py --encoders k_sparse --repeats 5 --algorithm GradByElement
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
# steady state: every segment compiled before its first step (a new structure's Python form, which
# short runs use, would otherwise time the compile in the first long run after a short warm-up)
os.environ.setdefault("NEUROSIM_PYTHON_TIER_SECONDS", "0")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from neurosim.data.dictionaries import SparseDictionaryStream, gabor_dictionary  # noqa: E402
from neurosim.models.example_selection import ALGORITHMS, ENCODERS, build_network, lasso_weight  # noqa: E402

#: agreement bound on the dictionaries for k_sparse: same arithmetic up to BLAS summation order
K_SPARSE_TOL = 1e-8
#: for lars: two exact lasso solvers (LARS homotopy, feature-sign search) reach the minimiser to ~1e-12
LARS_TOL = 1e-6


class PreDrawnStream(SparseDictionaryStream):
    """The paper-004 stream with chosen epochs drawn once and kept (no eviction), bit-identical to drawing them.

    ``SparseDictionaryStream`` uses one chunk per step, so chunk ``c`` is
    epoch ``c``; kept chunks are what the parent would draw for them.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._kept: dict = {}

    def predraw(self, epochs, batch: int) -> float:
        """Draw and keep ``epochs``; return the seconds of the first draw (Alg. 1 step 1 at this ``N``)."""
        first = None
        for t in epochs:
            t0 = time.perf_counter()
            self._kept[(t, batch)] = super()._chunk(t, batch)
            first = time.perf_counter() - t0 if first is None else first
        return first

    def _chunk(self, c, batch):
        got = self._kept.get((c, batch))
        return got if got is not None else super()._chunk(c, batch)


# ----------------------------------------------------------------------------- the peer: plain NumPy / scikit-learn

def peer_encode(encoder, X, W, k, lam):
    """Codes ``(len(X), K)`` of the rows of ``X`` under ``W`` (atoms as rows), the authors' encoders."""
    if encoder == "k_sparse":
        C = X @ W.T
        K = W.shape[0]
        top = np.argpartition(C, K - k, axis=1)[:, K - k:]
        S = np.zeros_like(C)
        # Eq. 7 on non-negative codes: the k largest of A^T x, kept where positive
        np.put_along_axis(S, top, np.maximum(np.take_along_axis(C, top, axis=1), 0.0), axis=1)
        return S
    from sklearn.decomposition import sparse_encode

    if encoder == "lars":
        return sparse_encode(X, W, algorithm="lasso_lars", alpha=lam, positive=True)
    return sparse_encode(X, W, algorithm="omp", n_nonzero_coefs=k)


def peer_goodness(measure, X, S, W):
    """Per-sample factor ``f`` and, for element-dependent measures, ``G = f |S|`` (Eq. 9-12)."""
    if measure == "sun":
        return None, np.abs(S)
    R = X - S @ W
    if measure in ("err", "grad"):
        f = np.abs(R).sum(axis=1)
    else:  # snr, with the kernel's conventions: x != 0 reconstructed exactly -> inf, 0 / 0 -> 0
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.einsum("ij,ij->i", X, X) / np.einsum("ij,ij->i", R, R)
        f[np.isnan(f)] = 0.0
    if measure == "err":
        return f, None
    with np.errstate(invalid="ignore"):
        G = f[:, None] * np.abs(S)
    G[np.isnan(G)] = 0.0  # inf * 0: an inactive element has goodness 0
    return f, G


def peer_select(measure, selector, X, S, W, n, seed, counter):
    """``n`` row indices in selection order (Eq. 14, 15; uniform: our generator's pure-Python twin)."""
    N = X.shape[0]
    if selector == "uniform":
        from neurosim.selection_functions import _uniform_reference

        return _uniform_reference(N, n, seed, counter)
    f, G = peer_goodness(measure, X, S, W)
    if selector == "by_sum" or G is None:  # err: every element ranks alike, ByElement is BySum
        score = f if G is None else G.sum(axis=1)
        return np.argsort(-score, kind="stable")[:n]
    order = np.argsort(-G, axis=0, kind="stable")  # each element's column, best first, ties to the lower row
    taken = np.zeros(N, dtype=bool)
    ptr = np.zeros(G.shape[1], dtype=np.int64)
    out = []
    while len(out) < n:
        for j in range(G.shape[1]):
            if len(out) == n:
                break
            p = ptr[j]
            while taken[order[p, j]]:
                p += 1
            i = order[p, j]
            ptr[j] = p + 1
            taken[i] = True
            out.append(i)
    return np.asarray(out, dtype=np.int64)


def peer_update(encoder, W, Xn, k, lam, gamma, eta, passes):
    """Alg. 1 step 4 in NumPy: ``passes`` x (encode, equalize, Eq. 8, normalise); ``W`` updated in place."""
    n, K = Xn.shape[0], W.shape[0]
    for _ in range(passes):
        S = peer_encode(encoder, Xn, W, k, lam)
        m = np.abs(S).sum(axis=0)
        mean = m.sum() / K
        with np.errstate(divide="ignore"):
            S *= np.where(m > 0.0, (mean / m) ** gamma, 1.0)  # Sec. 2.3; unused elements stay 0
        W -= (eta / n) * (S.T @ (S @ W - Xn))
        W /= np.sqrt(np.einsum("ij,ij->i", W, W))[:, None]
    return W


def peer_epoch(encoder, measure, selector, X, W, n, k, lam, gamma, eta, passes, seed, counter):
    """One epoch of Alg. 1 steps 2-4 from ``W`` (copied); returns ``(S_N, idx, W_new, seconds per part)``."""
    W = W.copy()
    t0 = time.perf_counter()
    S = peer_encode(encoder, X, W, k, lam)
    t1 = time.perf_counter()
    idx = peer_select(measure, selector, X, S, W, n, seed, counter)
    t2 = time.perf_counter()
    peer_update(encoder, W, X[idx], k, lam, gamma, eta, passes)
    t3 = time.perf_counter()
    return S, idx, W, {"encode all N": t1 - t0, "goodness + select": t2 - t1, f"update ({passes} passes)": t3 - t2}


# ----------------------------------------------------------------------------- the comparison

def bench_encoder(encoder, args, stream, lam):
    measure, selector = ALGORITHMS[args.algorithm]
    N, n, k = args.N, args.n, stream.k
    circuit = build_network(stream, encoder=encoder, algorithm=args.algorithm, n_examples=N, n_selected=n,
                            gamma=args.gamma, eta=args.eta, passes=args.passes, seed=args.seed)
    net, D, sel = circuit.network, circuit.dictionary, circuit.selection
    ours_t, peer_t, parts = [], [], []
    worst_dw, same_order, same_set, worst_ds = 0.0, True, True, 0.0
    for epoch in range(args.repeats + 1):  # epoch 0: warm-up (compile), checked but not timed
        W0 = D.weights.copy()
        counter = int(circuit.selector.counter[0])
        t0 = time.perf_counter()
        circuit.run(1)
        ours = time.perf_counter() - t0
        X = stream.block(epoch, 1, N)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn's lars/omp warnings are part of the peer's result
            t0 = time.perf_counter()
            S, idx, W1, part = peer_epoch(encoder, measure, selector, X, W0, n, k, lam, args.gamma, args.eta,
                                          args.passes, args.seed, counter)
            peer = time.perf_counter() - t0
        ours_idx = sel.state["index"].astype(np.int64)
        same_order &= bool(np.array_equal(ours_idx, idx))
        same_set &= set(ours_idx.tolist()) == set(idx.tolist())
        worst_dw = max(worst_dw, float(np.max(np.abs(D.weights - W1))))
        # the code population holds the epoch's codes of all N under W0: the encoders' problems compared directly
        worst_ds = max(worst_ds, float(np.max(np.abs(circuit.code.activity - S))))
        if epoch == 0:
            compile_s = float(net.timings.get("compile_seconds", 0.0))
            continue
        ours_t.append(ours)
        peer_t.append(peer)
        parts.append(part)
    best_ours, best_peer = min(ours_t), min(peer_t)
    label = {"k_sparse": "k-Sparse, Eq. 7", "lars": "non-negative lasso, Eq. 5",
             "omp": "non-negative OMP, Eq. 6"}[encoder]
    peer_label = {"k_sparse": "NumPy X @ D.T + argpartition",
                  "lars": "sklearn sparse_encode lasso_lars, positive=True",
                  "omp": "sklearn sparse_encode omp (SIGNED: sklearn has no non-negative OMP)"}[encoder]
    print(f"\n{encoder} ({label}); {args.algorithm}, N={N}, n={n}, K={stream.A.shape[1]}, k={k}, "
          f"passes={args.passes}, best of {args.repeats} epochs")
    print(f"  ours: {best_ours:.4f} s/epoch  (circuit.run(1); compile/cache load of the warm-up epoch "
          f"{compile_s:.2f} s, excluded)")
    print(f"  peer: {best_peer:.4f} s/epoch  ({peer_label})")
    best_part = {name: min(p[name] for p in parts) for name in parts[0]}
    print("  peer breakdown (best of each part): " + ", ".join(f"{name} {v:.4f} s" for name, v in best_part.items()))
    print(f"  ratio peer/ours = {best_peer / best_ours:.2f}")
    print(f"  codes of all N, peer vs the circuit's code population: max |dS| = {worst_ds:.2e}")
    checked = args.repeats + 1
    if encoder == "k_sparse":
        ok = same_order and worst_dw <= K_SPARSE_TOL
        print(f"  agreement k_sparse: {ok} (over {checked} epochs: selection identical in order {same_order}, "
              f"as a set {same_set}; max |W_ours - W_numpy| = {worst_dw:.2e}, bound {K_SPARSE_TOL:g})")
    elif encoder == "lars":
        ok = same_set and worst_dw <= LARS_TOL
        print(f"  agreement lars (looser bound {LARS_TOL:g}: feature-sign vs LARS): {ok} (over {checked} epochs: "
              f"selection identical in order {same_order}, as a set {same_set}; "
              f"max |W_ours - W_sklearn| = {worst_dw:.2e})")
    else:
        print(f"  agreement omp: skipped (sklearn's OMP is signed, ours non-negative: different codes; "
              f"selection identical as a set {same_set}, max |W_ours - W_sklearn| = {worst_dw:.2e})")
    sys.stdout.flush()
    return best_ours, best_peer


def lam_check(stream, lam, n_samples=20):
    """sklearn's ``lasso_lars`` with ``alpha = lam`` against our feature-sign on a few samples: the same lasso?"""
    from sklearn.decomposition import sparse_encode

    from neurosim.coding import feature_sign

    X = stream.block(0, 1, n_samples)[0]
    W = np.ascontiguousarray(stream.A.T)
    ours = feature_sign(X, W, lam, nonneg=True)
    theirs = sparse_encode(X, W, algorithm="lasso_lars", alpha=lam, positive=True)
    return float(np.max(np.abs(ours - theirs))), float(np.mean(np.count_nonzero(ours, axis=1)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, default=50_000, help="examples per epoch (the batch)")
    ap.add_argument("--n", type=int, default=500, help="examples selected per epoch")
    ap.add_argument("--K", type=int, default=100, help="elements of the Gabor dictionary (learned as many)")
    ap.add_argument("--k", type=int, default=5, help="nonzero activations per example (and of k-Sparse / OMP)")
    ap.add_argument("--passes", type=int, default=10)
    ap.add_argument("--gamma", type=float, default=0.2)
    ap.add_argument("--eta", type=float, default=0.5, help="constant learning rate (the timings do not depend on it)")
    ap.add_argument("--algorithm", default="SUNByElement", choices=[a for a in ALGORITHMS if a != "SalMap"],
                    help="selection algorithm (SalMap has no NumPy peer here)")
    ap.add_argument("--encoders", nargs="+", default=["k_sparse", "lars", "omp"], choices=ENCODERS)
    ap.add_argument("--repeats", type=int, default=3, help="timed epochs (best of)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smoke test: N = 500, n = 20, 1 repeat")
    args = ap.parse_args(argv)
    if args.quick:
        args.N, args.n, args.repeats = 500, 20, 1
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")

    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    import numba
    import sklearn

    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
          f"numba {numba.__version__}, scikit-learn {sklearn.__version__}; BLAS 1 thread")
    stream = PreDrawnStream(gabor_dictionary(args.K), k=args.k, snr_db=6.0, seed=args.seed)
    lam = lasso_weight(stream)
    draw = stream.predraw(range(args.repeats + 1), args.N)
    print(f"Gabor dictionary K={args.K}, P={stream.dim}; draw of one epoch's N={args.N} examples (Alg. 1 step 1, "
          f"Eq. 1): {draw:.4f} s, done up front for both sides and not timed")
    if "lars" in args.encoders:
        dev, nnz = lam_check(stream, lam)
        print(f"lasso_lars alpha = lam = {lam:.4f} is our lasso: max |S_sklearn - S_feature_sign| on 20 samples "
              f"= {dev:.1e} ({nnz:.1f} nonzeros per code)")
    summary = {}
    for encoder in args.encoders:
        summary[encoder] = bench_encoder(encoder, args, stream, lam)
    print("\nsummary (s/epoch): " + "; ".join(f"{e} ours {o:.4f} peer {p:.4f} ratio peer/ours = {p / o:.2f}"
                                              for e, (o, p) in summary.items()))


if __name__ == "__main__":
    main()
