"""One OSDL mini-batch (paper 003, supplement Tables 1-3): the compiled kernels against NumPy (and SPAMS for the codes).

Setting: dictionary 64 x 256 (8x8 whitened natural-image patches,
``n_atoms = 256`` on a 16 x 16 torus with 3 x 3 neighbourhood groups),
``kappa = 0.1``, ``eta = 1``, half of every sample's pixels missing, mini-batch
sizes ``R`` in ``--batches``.

**Dictionary step** (the statistics of Eqs. 23-25 with masks and forgetting,
Table 3 with ``T_D = 1``, part 2 of Eq. 25), three implementations on the
same codes, dictionary and statistics:

* ``ours``: the kernels the circuit runs (``neurosim.kernels.osdl``);
* ``numpy``: the same steps vectorised in NumPy (the circuit's per-step
  reference, ``OSDLStatistics.update_numpy`` / ``OSDLDictionary.update_numpy``);
* ``transcription``: the literal NumPy transcription of the tables with
  explicit ``Delta`` matrices (``neurosim.models.osdl_reference``), the
  issue's "NumPy transcription".

Agreement is checked every repeat (max |W_ours - W_peer|).

**Coding step** (Table 2 with masks, torus groups): ours (``tol = 1e-6``)
against a NumPy transcription of Table 2 (same iterations, ``np.linalg.solve``
per sample), with equal objectives checked. SPAMS has no solver for
overlapping l2 groups with missing data (its ``graph`` penalties are l-inf
norms, and it has no masks); where SPAMS applies -- full observations,
disjoint groups (``group-lasso-l2``) and trees (``tree-l2``) -- the
``--spams`` option times its FISTA in its own process (see
``_spams_structured.py``) against ours (``solver="auto"``: FISTA with the
exact prox on disjoint groups and trees, Table 2 on the torus) at equal or
lower objective, in CPU time.

BLAS pinned to one thread; best of ``--repeats``, implementations
interleaved within each repeat.

Usage::

    python benchmarks/bench_osdl.py                 # R = 32, 64, 128, 256
    python benchmarks/bench_osdl.py --quick         # smoke test
    python benchmarks/bench_osdl.py --spams         # also SPAMS where it applies (needs spams-bin)
    python benchmarks/bench_osdl.py --spams --batches 16 256   # the issue's setting
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
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.coding.structured import structured_objective, structured_sparse_code  # noqa: E402
from neurosim.data.images import TRAIN_IMAGES, sample_patches  # noqa: E402
from neurosim.kernels import osdl as k  # noqa: E402
from neurosim.models import osdl_reference as ref  # noqa: E402

KAPPA, ROWS, MISSING, RHO = 0.1, 16, 0.5, 2.0


def table2_numpy(X, W, M, groups, kappa, n_iter):
    """Table 2 in NumPy, sample by sample (ridge start z = 1, then the z-step and a linear solve), fixed iterations."""
    inc = groups.incidence() ** 2  # (n_groups, n_atoms): (d_j^G)^2
    codes = np.zeros((X.shape[0], W.shape[0]))
    for r in range(X.shape[0]):
        o = M[r] != 0
        D = W[:, o].T
        G, c = D.T @ D, D.T @ X[r, o]
        z = np.ones(inc.shape[0])
        for _ in range(n_iter):
            zeta = (inc / z[:, None]).sum(axis=0)
            a = np.linalg.solve(G + kappa * np.diag(zeta), c)
            z = np.maximum(np.sqrt(inc @ (a * a)), 1e-8)
        codes[r] = a
    return codes


def dictionary_ours(W, st, X, M, codes, t):
    C, B, E = st
    A = np.zeros((0, 0, 0))
    k.osdl_statistics(C, B, E, A, X, M, codes, k.forgetting_factor(float(t), RHO), False)
    P = np.zeros_like(X)
    u, e, info = np.zeros(X.shape[1]), np.zeros(X.shape[1]), np.zeros(1, dtype=np.int64)
    k.osdl_dictionary(W, C, B, E, A, X, M, codes, False, False, 1, 0.0, P, u, e, np.zeros(X.shape[0]), info)
    return W


def dictionary_numpy(W, st, X, M, codes, t):
    C, B, E = st
    R = X.shape[0]
    g = k.forgetting_factor(float(t), RHO)
    obs = (M != 0).astype(float)
    C *= g
    C += (codes * codes).T @ obs / R
    B *= g
    B += codes.T @ (obs * X) / R
    E *= g
    P = obs * (codes @ W)
    for j in range(W.shape[0]):
        e = E[j] + codes[:, j] @ P / R
        c = C[j]
        u = np.where(c > 0, W[j] + (B[j] - e) / np.where(c > 0, c, 1.0), W[j])
        u /= max(1.0, float(np.sqrt(u @ u)))
        d = u - W[j]
        W[j] = u
        P += obs * np.outer(codes[:, j], d)
    E += codes.T @ P / R
    return W


def dictionary_transcription(W, st, X, M, codes, t):
    st.update(X, M, codes, RHO)
    W = ref.dictionary_step(W, st, X, M, codes, n_sweeps=1)
    ref.finish_step(st, W, X, M, codes)
    return W


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, nargs="+", default=[32, 64, 128, 256])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--spams", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.batches, args.repeats = [16], 1
    print(f"# {platform.processor() or platform.machine()}, numpy {np.__version__}, one BLAS thread")
    groups = ns.GroupStructure.torus(ROWS, ROWS)
    n_atoms = groups.n_units
    Xall = sample_patches(max(args.batches) * 2 + n_atoms, 8, seed=0, images=TRAIN_IMAGES)
    W0 = Xall[-n_atoms:] / np.linalg.norm(Xall[-n_atoms:], axis=1, keepdims=True)
    rng = np.random.default_rng(1)
    # warm up the kernels (compile or load from cache) outside the timings
    Xw, Mw = Xall[:4], (rng.random((4, 64)) >= MISSING).astype(float)
    cw = structured_sparse_code(Xw, W0, groups, KAPPA, observed=Mw, n_iter=2, tol=0.0)
    dictionary_ours(W0.copy(), [np.zeros_like(W0) for _ in range(3)], Xw, Mw, cw, 1)

    print("\n## Dictionary step (statistics + Table 3 + Eq. 25 part 2), masked, 64 x 256")
    print("| R | ours (ms) | NumPy vectorised (ms) | transcription (ms) | NumPy / ours | transcription / ours | max diff |")
    print("|---|---|---|---|---|---|---|")
    for R in args.batches:
        X = Xall[:R]
        M = (rng.random(X.shape) >= MISSING).astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            codes = structured_sparse_code(X, W0, groups, KAPPA, observed=M, n_iter=50, tol=1e-6)
        # statistics as after t - 1 = 9 earlier mini-batches
        base = [np.abs(rng.standard_normal(W0.shape)) * 0.1, rng.standard_normal(W0.shape) * 0.1,
                rng.standard_normal(W0.shape) * 0.1]
        best = {"ours": np.inf, "numpy": np.inf, "transcription": np.inf}
        diff = 0.0
        for _ in range(args.repeats):
            out = {}
            for name in best:
                if name == "transcription":
                    st = ref.OSDLStatistics(C=base[0].copy(), B=base[1].copy(), e=base[2].copy(), t=9)
                else:
                    st = [b.copy() for b in base]
                W = W0.copy()
                t0 = time.perf_counter()
                out[name] = {"ours": dictionary_ours, "numpy": dictionary_numpy,
                             "transcription": dictionary_transcription}[name](W, st, X, M, codes, 10)
                best[name] = min(best[name], time.perf_counter() - t0)
            diff = max(diff, float(np.abs(out["ours"] - out["numpy"]).max()),
                       float(np.abs(out["ours"] - out["transcription"]).max()))
        o = best["ours"]
        print(f"| {R} | {1e3 * o:.2f} | {1e3 * best['numpy']:.1f} | {1e3 * best['transcription']:.0f} | "
              f"{best['numpy'] / o:.1f} | {best['transcription'] / o:.0f} | {diff:.1e} |")

    print("\n## Coding step (Table 2), masked, torus 3x3 groups, 50 iterations per sample")
    print("| R | ours (ms) | NumPy Table 2 (ms) | NumPy / ours | objective gap (rel.) |")
    print("|---|---|---|---|---|")
    for R in args.batches:
        X = Xall[:R]
        M = (rng.random(X.shape) >= MISSING).astype(float)
        t_ours = t_np = np.inf
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            ours = structured_sparse_code(X, W0, groups, KAPPA, observed=M, n_iter=50, tol=0.0)
            t_ours = min(t_ours, time.perf_counter() - t0)
            t0 = time.perf_counter()
            peer = table2_numpy(X, W0, M, groups, KAPPA, 50)
            t_np = min(t_np, time.perf_counter() - t0)
        fo = structured_objective(X, W0, ours, groups, KAPPA, observed=M).mean()
        fp = structured_objective(X, W0, peer, groups, KAPPA, observed=M).mean()
        print(f"| {R} | {1e3 * t_ours:.1f} | {1e3 * t_np:.0f} | {t_np / t_ours:.1f} | {abs(fo - fp) / fp:.1e} |")

    if args.spams:
        from _spams_structured import compare_with_spams  # noqa: PLC0415

        compare_with_spams(Xall, W0, KAPPA, args.batches, args.repeats)


if __name__ == "__main__":
    main()
