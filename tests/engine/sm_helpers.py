"""Small networks shared by the engine tests (a module of its own name: worker processes import it by name,
where ``conftest`` would be ambiguous between the suite's conftest files)."""

import numpy as np

import neurosim as ns
from neurosim.streams import GaussianStream


def make_sm(regularizer="XY", n=12, k=3, batch=1, seed=0, stream_seed=1, beta=0.99, every=1, tol=0.0, max_iter=30):
    """A similarity-matching network assembled from public entities."""
    lam = np.r_[4.0, 3.0, 2.0, np.linspace(0.2, 0.05, n - 3)]
    net = ns.Network(seed=seed, batch=batch)
    x = ns.Population("x", n)
    y = ns.Population("y", k, dynamics=ns.Jacobi(eta=0.1, tol=tol, max_iter=max_iter))
    net.add(x, y)
    net.connect(GaussianStream(lam, seed=stream_seed, eigenvectors="random", eigvec_seed=5, chunk=64), x)
    sig = {"TY": None, "XY": ns.SquaredNorm(x), "YY": ns.SquaredNorm(y)}[regularizer]
    alpha = {"TY": 1.0, "XY": 0.08, "YY": 0.2}[regularizer]
    net.add(ns.CumulativeActivity(y, alpha=alpha, signal=sig, beta=beta))
    net.add(ns.Projection("W", x, y, rule=ns.NormalizedHebbian(alpha, sig)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0), rule=ns.NormalizedHebbian(alpha, sig)))
    net.record(y, ["activity", "mu"], every=every)
    return net


def state_of(net):
    """Everything a run changes, by name: population variables and ids, the dynamics' solver counters, the
    projections' weights, masks and per-synapse arrays, and the state of every rule and component."""
    from neurosim.io import _component_state

    out = {f"{p}.{v}": a.copy() for p, pop in net.populations.items() for v, a in pop.state.items()}
    out.update({f"{n}.weights": p.weights.copy() for n, p in net.projections.items()})
    out.update({f"{p}.ids": pop.ids.copy() for p, pop in net.populations.items()})
    out.update({f"{p}.info": pop.dynamics.info.copy() for p, pop in net.populations.items()
                if getattr(pop.dynamics, "info", None) is not None})
    out.update({f"{n}.mask": p.mask.copy() for n, p in net.projections.items() if p.mask is not None})
    out.update({f"{n}.{k}": a.copy() for n, p in net.projections.items() for k, a in p.arrays.items()})
    out.update({k: np.array(a, copy=True) for k, a in _component_state(net).items()})
    return out
