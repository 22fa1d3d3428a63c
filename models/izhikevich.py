"""Izhikevich's (2003) network of 800 excitatory and 200 inhibitory units, sparse, with constant input currents.

The heterogeneous population of the paper's Fig. 3 and its MATLAB code:
excitatory units with ``a = 0.02``, ``b = 0.2``, ``c = -65 + 15 r^2``, ``d =
8 - 6 r^2`` (regular spiking to chattering as ``r`` goes from 0 to 1),
inhibitory ones with ``a = 0.02 + 0.08 r``, ``b = 0.25 - 0.05 r``, ``c =
-65``, ``d = 2`` (fast spiking to low-threshold spiking), ``r`` uniform in
[0, 1) and drawn once per unit; every unit starts at ``v = -65`` mV, ``u = b
v``. Two changes make it a fixed network that Brian2 and neurosim can run on
the same numbers: the connectivity is sparse (each ordered pair with
probability :data:`P_CONNECT`, self-pairs included) with weights three
times the paper's dense ones (a spike moves ``v`` by up to 1.5 mV,
excitatory, or 3 mV, inhibitory, at once), and the paper's thalamic noise,
redrawn every millisecond, is replaced by a constant current per unit drawn
once (uniform in [0, 8) mV/ms, excitatory, [0, 4), inhibitory). The network
then fires in population bursts at about 20 Hz after a synchronous start
(13,450 spikes in 1 s on seed 2003).

Quantities are SI floats (volts, seconds; ``u`` and ``I`` in V/s, which is
mV/ms), as Brian2 computes them (``tests/spiking/test_izhikevich_brian2.py``,
``benchmarks/brian2_izhikevich_reference.py``). This module imports only
NumPy at the top, so that the Brian2 script, run in Brian2's own
environment, draws the same inputs.

References
----------
E. M. Izhikevich, "Simple model of spiking neurons", IEEE Transactions on
Neural Networks 14(6):1569-1572, 2003.
"""

from __future__ import annotations

import numpy as np

__all__ = ["N_EXCITATORY", "N_INHIBITORY", "P_CONNECT", "DT", "W_EXCITATORY_MAX", "W_INHIBITORY_MAX",
           "I_EXCITATORY_MAX", "I_INHIBITORY_MAX", "izhikevich_inputs", "izhikevich_network"]

#: excitatory units (the first ones) and inhibitory units
N_EXCITATORY, N_INHIBITORY = 800, 200
#: connection probability of every ordered pair
P_CONNECT = 0.1
#: time step, seconds (Brian2's ``0.1 * ms``)
DT = 0.1 * 0.001
#: largest jump of ``v`` an excitatory and an inhibitory spike cause, volts (weights uniform below them)
W_EXCITATORY_MAX, W_INHIBITORY_MAX = 0.0015, 0.003
#: largest constant input current of an excitatory and an inhibitory unit, V/s (= mV/ms; uniform below them)
I_EXCITATORY_MAX, I_INHIBITORY_MAX = 8.0, 4.0


def izhikevich_inputs(seed: int = 2003, p: float = P_CONNECT) -> dict:
    """Per-unit parameters, input currents, initial state and synapses of one network.

    Parameters
    ----------
    seed : int
        Seeds NumPy's PCG64 generator: the same draws on every machine.
    p : float
        Connection probability of every ordered pair.

    Returns
    -------
    dict
        ``a``, ``b`` (1/s), ``c`` (V), ``d`` (V/s), ``I`` (V/s), ``v0`` (V)
        and ``u0`` (V/s), each of shape ``(N_EXCITATORY + N_INHIBITORY,)``;
        ``pre``, ``post`` (int) and ``w`` (V, positive) of every synapse, by
        pre unit then post unit (Brian2's order); a synapse is inhibitory when
        its pre unit is (``pre >= N_EXCITATORY``).
    """
    rng = np.random.default_rng(seed)
    ne, ni = N_EXCITATORY, N_INHIBITORY
    re, ri = rng.random(ne), rng.random(ni)
    # the paper's values (per ms, mV, mV/ms) converted once to SI; the same arrays go to Brian2 and neurosim
    a = np.concatenate([np.full(ne, 0.02), 0.02 + 0.08 * ri]) / 0.001
    b = np.concatenate([np.full(ne, 0.2), 0.25 - 0.05 * ri]) / 0.001
    c = np.concatenate([-65.0 + 15.0 * re**2, np.full(ni, -65.0)]) * 0.001
    d = np.concatenate([8.0 - 6.0 * re**2, np.full(ni, 2.0)])
    current = np.concatenate([I_EXCITATORY_MAX * rng.random(ne), I_INHIBITORY_MAX * rng.random(ni)])
    v0 = np.full(ne + ni, -65.0 * 0.001)
    pre, post = np.nonzero(rng.random((ne + ni, ne + ni)) < p)
    w = np.where(pre < ne, W_EXCITATORY_MAX, W_INHIBITORY_MAX) * rng.random(pre.size)
    return dict(a=a, b=b, c=c, d=d, I=current, v0=v0, u0=b * v0, pre=pre, post=post, w=w)


def izhikevich_network(inputs: dict, record: tuple = ("activity",)):
    """The network in neurosim: population ``P`` and projections ``Se`` (excitatory) and ``Si`` (inhibitory) onto ``v``.

    Parameters
    ----------
    inputs : dict
        From :func:`izhikevich_inputs`.
    record : tuple of str
        ``P``'s variables recorded every step (by the recorder ``P``; none when empty).

    Returns
    -------
    neurosim.Network
    """
    import neurosim as ns

    a = inputs["a"]
    n = a.size
    pre, post, w = inputs["pre"], inputs["post"], inputs["w"]
    net = ns.Network(dt=DT)
    pop = ns.Population("P", n, dynamics=ns.Izhikevich())
    projections = []
    for name, sign, keep in (("Se", 1, pre < N_EXCITATORY), ("Si", -1, pre >= N_EXCITATORY)):
        weights = np.zeros((n, n))
        weights[post[keep], pre[keep]] = w[keep]
        projections.append(ns.Projection(name, pop, pop, sign=sign, init=weights, rule=ns.OnPre("v"),
                                         connectivity=ns.FromIndices(post=post[keep], pre=pre[keep],
                                                                     self_connections=True)))
    net.add(pop, *projections)  # Se before Si: each step delivers the excitatory spikes first, as Brian2 does
    for key in ("a", "b", "c", "d"):
        pop.state[key][:] = inputs[key]
    pop.state["I"][0] = inputs["I"]
    pop.state["v"][0] = inputs["v0"]
    pop.state["u"][0] = inputs["u0"]
    if record:
        net.record(pop, list(record))
    return net
