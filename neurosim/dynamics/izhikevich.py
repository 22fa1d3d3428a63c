"""Izhikevich's simple model of spiking neurons (Izhikevich 2003), in Brian2's arithmetic (issue 42).

Two variables per unit, the membrane potential ``v`` and a recovery
variable ``u``, with four per-unit parameters ``a``, ``b``, ``c``, ``d`` that
select the firing pattern (regular spiking, fast spiking, chattering, ...)
and an input current ``I``. Quantities are SI floats as Brian2 users write
the model (``v`` in volts, ``u`` and ``I`` in volts per second, ``a`` and
``b`` per second): the paper's ``0.04 v^2 + 5 v + 140`` with ``v`` in mV and
``t`` in ms becomes ``(0.04/ms/mV) v^2 + (5/ms) v + 140 mV/ms``, and the
paper's numbers carry over as ``a = 0.02/ms = 20 /s``, ``c = -65 mV =
-0.065 V``, ``d = 8 mV/ms = 8 V/s``, ``I = 10`` (mV/ms) ``= 10 V/s``.

One step, in Brian2's order (groups, thresholds, synapses, resets): the
dynamics integrate by forward Euler and test the threshold (dynamics
phase); the projections deliver the step's spikes (plasticity phase, order
0); then :class:`IzhikevichReset`, which the dynamics add to the network
with the population, resets the units that spiked (plasticity phase, order
:data:`RESET_ORDER`). A spike that reaches a unit's ``v`` in the step that
unit spiked is therefore overwritten by the reset, as in Brian2.

References
----------
E. M. Izhikevich, "Simple model of spiking neurons", IEEE Transactions on
Neural Networks 14(6):1569-1572, 2003.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Component
from neurosim.dynamics.spiking import SpikingDynamics
from neurosim.kernels.izhikevich import izhikevich_euler, izhikevich_reset
from neurosim.params import Float

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.population import Population

__all__ = ["Izhikevich", "IzhikevichReset", "RESET_ORDER", "EULER_CONSTANTS"]

#: Brian2's loop invariants of the Euler step, ``140*mV/ms`` (V/s), ``5/ms`` (1/s) and ``0.04/(mV*ms)`` (1/(V s)),
#: computed as its generated C++ computes them (``1.0f*(140.0 * mV)/ms`` with ``mV = ms = 0.001``); all exact here
EULER_CONSTANTS = (1.0 * (140.0 * 0.001) / 0.001, 1.0 * 5.0 / 0.001, 1.0 * 0.04 / (0.001 * 0.001))
#: plasticity-phase order of the reset: after every rule (order 0), so after the step's spikes are delivered,
#: Brian2's ``resets`` slot after its ``synapses``
RESET_ORDER = 100

#: the state variables of an Izhikevich population besides ``activity`` (its spikes): ``{name: (units, long name,
#: one value per sample)}``; ``a``, ``b``, ``c``, ``d`` are one value per unit, shared by the samples
VARIABLES = {"v": ("V", "membrane potential", True), "u": ("V/s", "recovery variable", True),
             "I": ("V/s", "input current (as dv/dt)", True),
             "a": ("1/s", "time scale of the recovery variable", False),
             "b": ("1/s", "sensitivity of the recovery variable to v", False),
             "c": ("V", "reset potential", False), "d": ("V/s", "reset increment of the recovery variable", False)}
#: the variables a projection's :class:`~neurosim.OnPre` rule may add its spikes to
SPIKE_TARGETS = ("v", "I")


class Izhikevich(SpikingDynamics):
    """Izhikevich's simple model of spiking neurons (Izhikevich 2003, eqs. 1-3), forward Euler in Brian2's arithmetic.

    ``dv/dt = 0.04 v^2 + 5 v + 140 - u + I`` (eq. 1, ``v`` in mV and ``t``
    in ms), ``du/dt = a (b v - u)`` (eq. 2); when ``v >= v_threshold``
    (30 mV in the paper): ``v = c``, ``u = u + d`` (eq. 3). Written in SI
    units as Brian2 users write it, ``dv/dt = (0.04/ms/mV) v**2 + (5/ms) v +
    140 mV/ms - u + I`` and ``du/dt = a (b v - u)``, integrated by forward
    Euler (Brian2's ``method="euler"``, which it uses for this non-linear
    system) over the network's step ``dt`` (``Network(dt=...)``, seconds;
    the paper's 1 ms is ``1e-3``, Brian2's default 0.1 ms is ``1e-4``). No
    refractory period: the reset and the recovery variable end a spike.

    ``a``, ``b``, ``c``, ``d`` and the input current ``I`` are population
    variables, one value per unit (``I`` per sample and unit), initialised
    from the parameters below; a heterogeneous population sets them
    (``population.state["c"][:] = ...``), as the paper's network does.
    ``I`` keeps its value unless the user or a projection changes it.
    Units start at ``v = c`` and ``u = b c`` of the parameters (set
    ``population.state["v"]`` and ``["u"]`` to start elsewhere); units born
    later too.

    Spikes reach a population through projections carrying
    :class:`~neurosim.OnPre`, onto one of two variables:

    - ``OnPre("v")``: each spike moves ``v`` by the synapse's weight (volts)
      at once, the paper's pulse coupling and Brian2's ``on_pre="v_post +=
      w"``. The reset runs after the step's spikes are delivered (Brian2's
      order), so a unit that spiked in the step ends it at ``c`` whatever
      it received.
    - ``OnPre("I")``: each spike adds its weight (V/s) to the input current
      for good (Brian2's ``on_pre="I_post += w"``): a lasting step of the
      current, not a pulse.

    Parameters
    ----------
    a : float, default=20.0
        Time scale of the recovery variable, 1/s (the paper's ``a = 0.02``
        per ms: regular spiking; fast spiking has 0.1/ms = 100 /s).
    b : float, default=200.0
        Sensitivity of the recovery variable to ``v``, 1/s (0.2/ms).
    c : float, default=-0.065
        Reset potential, V (-65 mV); below ``v_threshold``.
    d : float, default=8.0
        Increment of ``u`` at a spike, V/s (8 mV/ms; fast spiking has 2).
    I : float, default=0.0
        Input current, V/s (mV/ms: the paper's ``I = 10`` is 10.0).
    v_threshold : float, default=0.03
        Spike cut-off, V (30 mV, eq. 3); a unit spikes when ``v >=
        v_threshold``.

    Raises
    ------
    ValueError
        A parameter that is not finite, ``c >= v_threshold``; at run time, a
        network without ``dt``, a per-unit ``c`` at or above the threshold
        or a projection onto the population without ``OnPre("v")`` or
        ``OnPre("I")``.

    See Also
    --------
    neurosim.LIF : leaky integrate-and-fire units.

    Notes
    -----
    One step from ``v``, ``u`` (Brian2's generated expression trees, which
    the kernels copy)::

        u' = (dt * (a * ((b * v) - u))) + u
        v' = (dt * ((140.0 + ((I + (5000.0 * v)) + (40000.0 * (v * v)))) - u)) + v

    then the threshold ``v' >= v_threshold``, the delivery of the step's
    spikes, and the reset of the units that spiked.

    References
    ----------
    E. M. Izhikevich, "Simple model of spiking neurons", IEEE Transactions
    on Neural Networks 14(6):1569-1572, 2003.

    Examples
    --------
    A regular-spiking unit under a constant current of 10 mV/ms fires
    tonically; a fast-spiking one (``a`` = 0.1/ms, ``d`` = 2 mV/ms) faster:

    >>> import neurosim as ns
    >>> net = ns.Network(dt=1e-4)
    >>> rs = ns.Population("rs", 1, dynamics=ns.Izhikevich(I=10.0))
    >>> fs = ns.Population("fs", 1, dynamics=ns.Izhikevich(a=100.0, d=2.0, I=10.0))
    >>> _ = net.add(rs, fs)
    >>> _ = net.record(rs, ["activity"]), net.record(fs, ["activity"])
    >>> _ = net.run(10000)   # 1 s
    >>> [int(net.recorders[p].to_dataset().activity.values.sum()) for p in ("rs", "fs")]
    [23, 131]
    """

    sparse_projections = True
    #: the variables the kernel tests as it writes them (a segment makes no separate pass over them)
    self_checked = ("activity", "v", "u")
    #: the population variables the dynamics keep: ``{name: (units, long name, per sample)}``
    variables = VARIABLES
    a = Float(20.0, schedulable=False, doc="time scale of the recovery variable, 1/s")
    b = Float(200.0, schedulable=False, doc="sensitivity of the recovery variable, 1/s")
    c = Float(-0.065, schedulable=False, doc="reset potential, V")
    d = Float(8.0, schedulable=False, doc="reset increment of the recovery variable, V/s")
    I = Float(0.0, schedulable=False, doc="input current, V/s")  # noqa: E741 (the model's name for it)
    v_threshold = Float(0.03, schedulable=False, doc="spike cut-off, V")

    def __init__(self, a: float = 20.0, b: float = 200.0, c: float = -0.065, d: float = 8.0, I: float = 0.0,  # noqa: E741
                 v_threshold: float = 0.03) -> None:
        super().__init__()
        self.set_params(a=a, b=b, c=c, d=d, I=I, v_threshold=v_threshold)
        self._check_together()
        self.reset = IzhikevichReset(self)

    def _check_together(self) -> None:
        """The checks that involve several parameters (each one alone is checked when set)."""
        if not self.c < self.v_threshold:
            raise ValueError(f"c must be below v_threshold (a unit reset at or above it would spike every step); "
                             f"got c={self.c!r}, v_threshold={self.v_threshold!r}")

    def attach(self, network: Network) -> None:
        pop = self.population
        init = {"v": self.c, "u": self.b * self.c, "I": self.I, "a": self.a, "b": self.b, "c": self.c, "d": self.d}
        for name, (units, long_name, per_sample) in self.variables.items():
            pop.add_variable(name, init=init[name], per_sample=per_sample, units=units, long_name=long_name)
        # Brian2's resetter, in its own slot after the synapses: a component of the network, scheduled on its own
        if not any(c is self.reset for c in network.components):
            network.add(self.reset)

    spike_targets = (SPIKE_TARGETS, "rule=ns.OnPre('v') (a jump of the membrane potential) or ns.OnPre('I') "
                                    "(a lasting step of the input current)")

    def validate(self, network: Network) -> None:
        self._check_together()  # parameters set one at a time after construction
        self.check_time_step(network)
        c = self.population.state["c"]
        above = ~(c < self.v_threshold)  # NaN too
        if above.any():
            k = int(np.argmax(above))
            raise ValueError(f"Izhikevich population {self.population.name!r}: state['c'] must be below "
                             f"v_threshold={self.v_threshold!r} for every unit (a unit reset at or above it would "
                             f"spike every step); unit {int(self.population.ids[k])} has c={float(c[k])!r}")

    def _dt(self) -> float:
        net = self.population.network
        if net is None or net.dt is None:
            raise ValueError(f"Izhikevich dynamics of population {self.population.name!r} need a network with a "
                             "time step: Network(dt=...) in seconds (e.g. 1e-4)")
        return float(net.dt)

    def step_numpy(self) -> str | None:
        """One step with NumPy: the kernel's arithmetic, elementwise in the same order (the reset comes later).

        Returns
        -------
        str or None
            The failure label when ``v`` or ``u`` is not finite, else None.
        """
        pop, s = self.population, self.population.state
        dt = self._dt()
        k_rest, k_linear, k_square = EULER_CONSTANTS
        v, u, a, b = s["v"], s["u"], s["a"], s["b"]
        u_new = (dt * (a * ((b * v) - u))) + u
        v_new = (dt * ((k_rest + ((s["I"] + (k_linear * v)) + (k_square * (v * v)))) - u)) + v
        u[:], v[:] = u_new, v_new
        spiked = v_new >= self.v_threshold
        pop.activity[:] = spiked
        fired, n_fired = self.fired(), self.n_fired()
        for row in range(spiked.shape[0]):
            idx = np.flatnonzero(spiked[row])
            fired[row, :idx.size] = idx
            n_fired[row] = idx.size
        if not (np.isfinite(v).all() and np.isfinite(u).all()):
            return self.failure_label
        return None

    def kernel_calls(self) -> list[KernelCall]:
        pop = self.population
        refs = tuple(ArrayRef(lambda v=v: pop.state[v], f"{pop.name}.{v}") for v in ("v", "u", "I", "a", "b"))
        spikes = ArrayRef(lambda: pop.activity, f"{pop.name}.activity")
        return [KernelCall(izhikevich_euler, refs + (spikes,) + self.spike_refs() + (self._dt(),) + EULER_CONSTANTS +
                           (self.v_threshold,), label=f"{pop.name}.izhikevich", finite=self.failure_label)]

    @property
    def failure_label(self) -> str:
        """What a step whose state turned NaN or infinite reports (``SimulationDiverged.variable``)."""
        return f"{self.population.name}.v/u (Izhikevich state not finite)"


class IzhikevichReset(Component):
    """The reset ``v = c; u += d`` of the units of an :class:`Izhikevich` population that spiked in the step.

    Brian2's resetter: it runs after the step's spikes are delivered
    (plasticity phase, order :data:`RESET_ORDER`, after every rule), so a
    spike reaching the ``v`` of a unit that spiked in the same step is
    overwritten, as in Brian2's schedule (thresholds, synapses, resets).
    The :class:`Izhikevich` dynamics create it and add it to the network
    with their population; it is not added by hand.

    Parameters
    ----------
    dynamics : Izhikevich
        The dynamics whose spikes it resets.
    """

    phase = "plasticity"
    order = RESET_ORDER

    def __init__(self, dynamics: Izhikevich) -> None:
        super().__init__()
        self.dynamics = dynamics

    @property
    def label(self) -> str:
        pop = self.dynamics.population
        return f"Izhikevich reset of {pop.name if pop is not None else '?'!r}"

    def populations(self) -> list[Population]:
        return [] if self.dynamics.population is None else [self.dynamics.population]

    def network_of(self) -> Network | None:
        return self.dynamics.network_of()

    def step_numpy(self) -> str | None:
        """Reset the units that spiked with NumPy, in the kernel's arithmetic.

        Returns
        -------
        str or None
            The failure label when a written value is not finite, else None.
        """
        pop = self.dynamics.population
        s = pop.state
        v, u, c, d = s["v"], s["u"], s["c"], s["d"]
        spiked = pop.activity != 0.0
        rows, units = np.nonzero(spiked)
        v[rows, units] = c[units]
        u[rows, units] = u[rows, units] + d[units]
        if not (np.isfinite(v[rows, units]).all() and np.isfinite(u[rows, units]).all()):
            return self.dynamics.failure_label
        return None

    def kernel_calls(self) -> list[KernelCall]:
        dyn = self.dynamics
        pop = dyn.population
        refs = tuple(ArrayRef(lambda v=v: pop.state[v], f"{pop.name}.{v}") for v in ("v", "u", "c", "d"))
        fired = (ArrayRef(dyn.fired, f"{pop.name}.fired"), ArrayRef(dyn.n_fired, f"{pop.name}.n_fired"))
        return [KernelCall(izhikevich_reset, refs + fired, label=f"{pop.name}.izhikevich_reset",
                           finite=dyn.failure_label)]
