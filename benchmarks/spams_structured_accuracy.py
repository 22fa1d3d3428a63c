"""How close SPAMS' structured solvers get to the optimum of the paper-003 objective, and how fast (one core).

For each family (singletons, disjoint groups of 4, a depth-4 binary tree,
3x3 neighbourhoods on a 16x16 torus) and each SPAMS regulariser that
applies, prints the relative objective gap to a reference optimum of
``0.5 ||x - W^T a||^2 + kappa sum_G ||a_G||_2`` (FISTA with an exact dual
prox, run to convergence), the share of exactly-zero code entries (SPAMS
vs reference) and the seconds of the SPAMS call. Usage::

    python benchmarks/spams_structured_accuracy.py [--samples 4] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _spams_structured import SpamsStructuredWorker  # noqa: E402

from neurosim.groups import GroupStructure  # noqa: E402


def _prox(v, groups, lam, xi):
    u = v.copy()
    for G, x in zip(groups, xi):
        u[G] -= x
    for _ in range(1000):
        change = 0.0
        for g, G in enumerate(groups):
            z = u[G] + xi[g]
            nz = np.linalg.norm(z)
            new = z if nz <= lam else z * (lam / nz)
            change = max(change, np.abs(new - xi[g]).max())
            u[G] = z - new
            xi[g] = new
        if change <= 1e-15:
            break
    return u


def reference(x, W, kappa, groups, n_iter=20000):
    """FISTA for the l2 group objective; the prox by dual block coordinate ascent (exact at convergence)."""
    D = W.T
    L = np.linalg.norm(D, 2) ** 2
    a = np.zeros(D.shape[1])
    y, t = a.copy(), 1.0
    xi = [np.zeros(len(G)) for G in groups]
    for _ in range(n_iter):
        a_new = _prox(y - D.T @ (D @ y - x) / L, groups, kappa / L, xi)
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y = a_new + (t - 1) / t_new * (a_new - a)
        step = np.abs(a_new - a).max()
        a, t = a_new, t_new
        if step < 1e-15 * max(1.0, np.abs(a).max()):
            break
    return a


def objective(x, W, a, kappa, groups):
    return 0.5 * np.sum((x - a @ W) ** 2) + kappa * sum(np.linalg.norm(a[G]) for G in groups)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    m = 64
    families = [
        ("singletons", GroupStructure.singletons(256), [("l1", 0.2)]),
        ("disjoint 4", GroupStructure.disjoint(256, 4), [("group-lasso-l2", 0.4), ("tree-l2", 0.4)]),
        ("tree 4x2", GroupStructure.tree(4, 2), [("tree-l2", 0.3)]),
        ("torus 16x16 r1", GroupStructure.torus(16, 16),
         [("graph-l2", 0.2), ("graph-l2", 0.3), ("graph-l2", 0.5), ("graph", 0.2)]),
    ]
    settings = [(1e-6, 1000), (1e-10, 20000)]
    print(f"{'family':16s} {'regul':15s} {'kappa':>5s} {'tol':>6s} {'max_it':>6s} {'gap max':>9s} "
          f"{'zeros spams':>11s} {'zeros ref':>9s} {'ms/sample':>9s}")
    with SpamsStructuredWorker() as worker:
        for name, gs, kinds in families:
            k = gs.n_units
            W = rng.normal(size=(k, m))
            W /= np.linalg.norm(W, axis=1, keepdims=True)
            X = rng.normal(size=(args.samples, m))
            groups = [gs.indices[gs.indptr[g]:gs.indptr[g + 1]] for g in range(gs.n_groups)]
            csr = (gs.indptr, gs.indices, gs.weights)
            for kind, kappa in kinds:
                ref = np.array([reference(x, W, kappa, groups) for x in X])
                f_ref = np.array([objective(x, W, a, kappa, groups) for x, a in zip(X, ref)])
                for tol, max_it in settings:
                    codes, seconds = worker.solve(X, W, csr, kappa, kind, tol=tol, max_it=max_it)
                    f = np.array([objective(x, W, a, kappa, groups) for x, a in zip(X, codes)])
                    gap = np.max((f - f_ref) / f_ref)
                    print(f"{name:16s} {kind:15s} {kappa:5.2f} {tol:6.0e} {max_it:6d} {gap:9.2e} "
                          f"{np.mean(codes == 0):11.3f} {np.mean(ref == 0):9.3f} "
                          f"{1e3 * seconds / len(X):9.3f}", flush=True)


if __name__ == "__main__":
    main()
