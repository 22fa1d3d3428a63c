"""The CUBA network of Brette et al. (2007), as Brian2's ``examples/CUBA.py`` builds it (issue 42).

4,000 current-based leaky integrate-and-fire units (:class:`neurosim.LIF`,
exact integration), 3,200 excitatory and 800 inhibitory, each pair connected
with probability 0.02 (self-connections included), ``dt`` = 0.1 ms. Every
quantity is computed as Brian2 computes it (SI units, the same expressions:
``we = (60 * 0.27 / 10) * mV``), so that the network gives Brian2's spikes bit
for bit (``tests/spiking/test_cuba_brian2.py``).

This module imports only NumPy at the top, so that the Brian2 scripts in
``benchmarks/`` (run in Brian2's own environment) draw the same inputs.

References
----------
R. Brette et al., "Simulation of networks of spiking neurons: a review of tools
and strategies", J. Comput. Neurosci. 23:349-398, 2007 (benchmark 2, CUBA).
"""

from __future__ import annotations

import numpy as np

__all__ = ["N", "N_EXCITATORY", "P_CONNECT", "DT", "cuba_inputs", "cuba_network", "coba_inputs", "coba_network",
           "raster_stats", "cuba_delays"]

#: units
N = 4000
#: excitatory units (the first ones)
N_EXCITATORY = 3200
#: connection probability of every ordered pair
P_CONNECT = 0.02
#: time step, seconds (Brian2's ``0.1 * ms``)
DT = 0.1 * 0.001
#: Brian2's CUBA parameters, in SI units computed as Brian2 does (``20 * ms`` is ``20 * 0.001``)
PARAMS = dict(tau_m=20 * 0.001, tau_e=5 * 0.001, tau_i=10 * 0.001, v_threshold=-50 * 0.001, v_reset=-60 * 0.001,
              v_rest=-49 * 0.001, refractory=5 * 0.001)
W_EXCITATORY = (60 * 0.27 / 10) * 0.001
W_INHIBITORY = (-20 * 4.5 / 10) * 0.001


def cuba_inputs(seed: int = 1234, n: int = N, p: float = P_CONNECT):
    """Initial potentials and synapses of one CUBA network.

    Parameters
    ----------
    seed : int
        Seeds NumPy's PCG64 generator: the same draws on every machine.
    n : int
        Units.
    p : float
        Connection probability of every ordered pair.

    Returns
    -------
    v0 : numpy.ndarray, shape (n,)
        Uniform in [-60, -50) mV, in volts.
    pre, post : numpy.ndarray of int
        The synapses, in Brian2's order (by pre unit, then post unit).
    """
    rng = np.random.default_rng(seed)
    v0 = -0.06 + rng.random(n) * (-0.05 - -0.06)
    pre, post = np.nonzero(rng.random((n, n)) < p)
    return v0, pre, post


def cuba_delays(post, pre):
    """A delay per synapse for the delayed CUBA check: ``((7 pre + 13 post) mod 31) dt``, 0 to 3 ms.

    A fixed function of the units' ids, so that Brian2 (``S.delay``) and
    neurosim (``OnPre(..., delays=cuba_delays)``) get the same delays
    without exchanging them; every delay from 0 to 30 steps occurs.

    Parameters
    ----------
    post, pre : array of int
        The synapses' post and pre unit ids.

    Returns
    -------
    numpy.ndarray of float
        Seconds.
    """
    return ((np.asarray(pre) * 7 + np.asarray(post) * 13) % 31) * DT


def cuba_network(v0, pre, post, storage: str = "sparse", self_connections: bool = True, n_excitatory: int = N_EXCITATORY,
                 record: bool = True, delays=None):
    """The CUBA network in neurosim: population ``P`` and the projections ``Ce`` (onto ``ge``) and ``Ci`` (``gi``).

    Parameters
    ----------
    v0, pre, post : arrays
        From :func:`cuba_inputs`.
    storage : {"sparse", "dense"}
        The projections' storage (a dense lateral projection has no self-synapses).
    self_connections : bool
        Keep self-synapses (Brian2's ``connect(p=...)`` draws them).
    n_excitatory : int
        The first units are excitatory.
    record : bool
        Record ``P``'s activity (its spikes) every step.
    delays : callable, optional
        Per-synapse delays of both projections (``OnPre(..., delays=)``), e.g. :func:`cuba_delays`.

    Returns
    -------
    neurosim.Network
    """
    import neurosim as ns

    v0, pre, post = np.asarray(v0), np.asarray(pre), np.asarray(post)
    net = ns.Network(dt=DT)
    p = ns.Population("P", v0.size, dynamics=ns.LIF(method="exact", **PARAMS))
    e = pre < n_excitatory
    kw = dict(storage=storage)
    ce = ns.Projection("Ce", p, p, init=ns.Constant(W_EXCITATORY), rule=ns.OnPre("ge", delays=delays),
                       connectivity=ns.FromIndices(post=post[e], pre=pre[e], self_connections=self_connections), **kw)
    ci = ns.Projection("Ci", p, p, sign=-1, init=ns.Constant(-W_INHIBITORY), rule=ns.OnPre("gi", delays=delays),
                       connectivity=ns.FromIndices(post=post[~e], pre=pre[~e], self_connections=self_connections),
                       **kw)
    net.add(p, ce, ci)
    p.state["v"][0] = v0
    if record:
        net.record(p, ["activity"])
    return net


#: the COBA network's parameters (Brette et al. 2007 benchmark 1, in Brian2's syntax with absolute potentials)
COBA_PARAMS = dict(tau_m=20 * 0.001, tau_e=5 * 0.001, tau_i=10 * 0.001, v_threshold=-50 * 0.001, v_reset=-60 * 0.001,
                   v_rest=-60 * 0.001, e_e=0 * 0.001, e_i=-80 * 0.001, refractory=5 * 0.001)
#: conductance increments of an excitatory and an inhibitory spike, in units of the leak conductance
COBA_W_EXCITATORY, COBA_W_INHIBITORY = 6 / 10, 67 / 10


def coba_inputs(seed: int = 1234, n: int = N, p: float = P_CONNECT):
    """Initial state and synapses of one COBA network (Brette et al.'s initial values, drawn with NumPy).

    Parameters
    ----------
    seed, n, p : int, int, float
        As :func:`cuba_inputs`: the seed of NumPy's PCG64, the units and the connection probability.

    Returns
    -------
    v0, ge0, gi0 : numpy.ndarray, shape (n,)
        ``v_rest + (5 z - 5) mV``, ``1.5 z + 4`` and ``12 z + 20`` for standard normal ``z``.
    pre, post : numpy.ndarray of int
        The synapses, by pre unit then post unit.
    """
    rng = np.random.default_rng(seed)
    v0 = -60 * 0.001 + (rng.standard_normal(n) * 5 - 5) * 0.001
    ge0 = rng.standard_normal(n) * 1.5 + 4
    gi0 = rng.standard_normal(n) * 12 + 20
    pre, post = np.nonzero(rng.random((n, n)) < p)
    return v0, ge0, gi0, pre, post


def coba_network(v0, ge0, gi0, pre, post, n_excitatory: int = N_EXCITATORY, record: bool = True):
    """The COBA network in neurosim: conductance-based LIF units, ``Ce`` onto ``ge``, ``Ci`` onto ``gi``.

    Parameters
    ----------
    v0, ge0, gi0, pre, post : arrays
        From :func:`coba_inputs`.
    n_excitatory : int
        The first units are excitatory.
    record : bool
        Record the population's activity (its spikes) every step.

    Returns
    -------
    neurosim.Network
    """
    import neurosim as ns

    pre, post = np.asarray(pre), np.asarray(post)
    net = ns.Network(dt=DT)
    p = ns.Population("P", np.asarray(v0).size, dynamics=ns.LIFConductance(**COBA_PARAMS))
    e = pre < n_excitatory
    ce = ns.Projection("Ce", p, p, init=ns.Constant(COBA_W_EXCITATORY), rule=ns.OnPre("ge"),
                       connectivity=ns.FromIndices(post=post[e], pre=pre[e], self_connections=True))
    ci = ns.Projection("Ci", p, p, init=ns.Constant(COBA_W_INHIBITORY), rule=ns.OnPre("gi"),
                       connectivity=ns.FromIndices(post=post[~e], pre=pre[~e], self_connections=True))
    net.add(p, ce, ci)
    p.state["v"][0], p.state["ge"][0], p.state["gi"][0] = v0, ge0, gi0
    if record:
        net.record(p, ["activity"])
    return net


def raster_stats(i, step, n: int = N, steps: int = 1000, dt: float = DT) -> dict:
    """Population rate and mean CV of the inter-spike intervals of a raster.

    Parameters
    ----------
    i, step : int arrays
        The spikes: unit and step of each.
    n, steps : int
        Units and steps run.
    dt : float
        Seconds.

    Returns
    -------
    dict
        ``rate_hz`` (spikes per unit per second), ``cv_isi`` (mean over the
        units with at least two intervals) and ``units_with_isi``.
    """
    order = np.lexsort((step, i))
    i, step = np.asarray(i)[order], np.asarray(step)[order]
    cvs = []
    for u in np.unique(i):
        isi = np.diff(step[i == u]).astype(float)
        if isi.size >= 2:
            cvs.append(isi.std() / isi.mean())
    return {"rate_hz": i.size / (n * steps * dt), "cv_isi": float(np.mean(cvs)) if cvs else float("nan"),
            "units_with_isi": len(cvs)}
