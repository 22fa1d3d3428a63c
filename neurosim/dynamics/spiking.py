"""Spiking dynamics: leaky integrate-and-fire units with exponential synaptic currents (issue 42).

A :class:`LIF` population's activity is its spikes: 1.0 for a unit that
spiked in the step, 0.0 otherwise. Its state variables are the membrane
potential ``v`` (volts), the excitatory and inhibitory synaptic currents
``ge``, ``gi`` (volts, as in Brette et al. 2007's CUBA network) and the
refractory steps left. Spikes reach other populations through projections
carrying an :class:`~neurosim.rules.transmission.OnPre` rule, which add each
synapse's weight to the post unit's ``ge`` or ``gi``.

One step, in Brian2's order (its default schedule: groups, thresholds,
synapses, resets): every population integrates from the state the previous
step left (dynamics phase), tests its threshold and resets; then every
projection delivers the spikes of this step (plasticity phase), so a spike
first changes a membrane potential in the next step's integration.
Quantities are SI floats (seconds, volts), as Brian2 computes, because
rounding differs in other units.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.dynamics.base import Dynamics
from neurosim.kernels.spiking import lif_conductance_euler, lif_current_euler, lif_current_exact
from neurosim.params import Choice, Float

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.synapses import Projection

__all__ = ["SpikingDynamics", "LIF", "LIFConductance", "current_exact_constants", "refractory_steps"]

#: the state variables of a LIF population besides ``activity`` (its spikes), with units
VARIABLES = {"v": ("V", "membrane potential"), "ge": ("V", "excitatory synaptic current (as a potential)"),
             "gi": ("V", "inhibitory synaptic current (as a potential)"),
             "refractory_left": ("1", "refractory steps left")}


def current_exact_constants(dt: float, tau_m: float, tau_e: float, tau_i: float, v_rest: float) -> tuple:
    """The constants of one exact step of current-based LIF, as Brian2's generated code computes them.

    ``(c0, c_ge, c_gi, c_v, a_ge, a_gi)`` of
    :func:`neurosim.kernels.spiking.lif_current_exact`: the matrix exponential
    of the linear system over ``dt`` (Brian2's ``method="exact"``), in the
    expression trees of its loop-invariant constants (``_lio_*``), with
    ``math.exp`` (the C library's ``exp``, which Brian2's C++ calls; NumPy's
    array ``exp`` differs in the last bit for some arguments).

    Parameters
    ----------
    dt, tau_m, tau_e, tau_i : float
        Seconds; ``tau_e`` and ``tau_i`` must differ from ``tau_m``.
    v_rest : float
        Volts.

    Returns
    -------
    tuple of float
    """
    e = math.exp
    l4 = tau_e * e(-dt / tau_e)
    l5 = -e(dt / tau_e)
    l6 = dt / tau_m
    l7 = -dt / tau_m
    l8 = 0.0 - tau_m
    l9 = tau_i * e(-dt / tau_i)
    l10 = -e(dt / tau_i)
    c0 = v_rest - (v_rest * e(l7))
    c_ge = ((l4 * (l5 + e(l6))) * e(l7)) / (l8 + tau_e)
    c_gi = ((l9 * (l10 + e(l6))) * e(l7)) / (l8 + tau_i)
    return c0, c_ge, c_gi, e(l7), e(-dt / tau_e), e(-dt / tau_i)


def refractory_steps(refractory: float, dt: float) -> int:
    """Whole steps of refractoriness: ``int((refractory + 1e-3 dt) / dt)``, Brian2's ``timestep``.

    Parameters
    ----------
    refractory, dt : float
        Seconds.

    Returns
    -------
    int
    """
    return int((refractory + 1e-3 * dt) / dt)


class SpikingDynamics(Dynamics):
    """Base of dynamics whose activity is spikes and whose kernel lists the units that spiked.

    The kernel writes, besides ``activity`` (1.0 where a unit spiked), the
    ascending list of those units (:meth:`fired`, :meth:`n_fired`), so that
    spike delivery (:class:`~neurosim.OnPre`) visits only them.
    """

    def fired(self) -> np.ndarray:
        """The units that spiked in the last step.

        Returns
        -------
        numpy.ndarray of int64, shape (batch, size)
            Row ``b`` holds them, ascending, in its first ``n_fired()[b]`` entries.
        """
        return self.buffer("fired", dtype=np.int64)

    def n_fired(self) -> np.ndarray:
        """How many units spiked in the last step.

        Returns
        -------
        numpy.ndarray of int64, shape (batch,)
        """
        return self.buffer("n_fired", (self.population.batch,), dtype=np.int64)

    #: ``(targets, what to write)``: the post variables :class:`~neurosim.OnPre` may deliver to (subclasses)
    spike_targets: tuple = ((), "")

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        from neurosim.rules.transmission import OnPre

        targets, needs = self.spike_targets
        for p in list(feedforward) + list(lateral):
            if not isinstance(p.rule, OnPre) or p.rule.target not in targets:
                has = (f"OnPre({p.rule.target!r})" if isinstance(p.rule, OnPre) else
                       type(p.rule).__name__ if p.rule is not None else "no rule")
                raise ValueError(f"projection {p.name!r} onto the {type(self).__name__} population "
                                 f"{self.population.name!r} needs {needs} (it has {has})")
        super().connect(feedforward, lateral)

    def check_time_step(self, network: Network) -> None:
        """Refuse a network without ``dt``: spiking dynamics integrate in seconds.

        Parameters
        ----------
        network : neurosim.Network
            The network the population belongs to.

        Raises
        ------
        ValueError
            Naming the population, when ``network.dt`` is None.
        """
        if network.dt is None:
            raise ValueError(f"{type(self).__name__} dynamics of population {self.population.name!r} need the network's "
                             "time step: Network(dt=...) in seconds (e.g. 1e-4)")

    def spike_refs(self) -> tuple:
        """The kernel arguments ``(fired, n_fired)`` of :meth:`fired` and :meth:`n_fired`.

        Returns
        -------
        tuple of ArrayRef
        """
        name = self.population.name
        return ArrayRef(self.fired, f"{name}.fired"), ArrayRef(self.n_fired, f"{name}.n_fired")


class LIF(SpikingDynamics):
    """Leaky integrate-and-fire units with exponential synaptic currents (current-based; Brette et al. 2007).

    ``dv/dt = (ge + gi - (v - v_rest)) / tau_m`` (``v`` held while
    refractory), ``dge/dt = -ge / tau_e``, ``dgi/dt = -gi / tau_i``; a unit
    spikes when ``v > v_threshold`` and is not refractory, then ``v =
    v_reset`` and it stays refractory for ``refractory`` seconds (whole
    steps, Brian2's rounding). ``ge`` and ``gi`` keep decaying and receiving
    spikes while refractory (Brian2's ``examples/CUBA.py``). The step ``dt``
    is the network's (``Network(dt=...)``, seconds).

    Every projection onto the population must carry an
    :class:`~neurosim.OnPre` rule naming ``"ge"`` or ``"gi"``.

    Parameters
    ----------
    tau_m, tau_e, tau_i : float > 0
        Time constants of the membrane and of the excitatory and inhibitory
        currents, seconds (defaults 20, 5 and 10 ms: the CUBA network).
    v_threshold, v_reset, v_rest : float
        Volts (defaults -50, -60 and -49 mV); ``v_reset < v_threshold``.
        Units start at ``v_reset`` (set ``population.state["v"]`` to start
        elsewhere), not refractory, with no synaptic current.
    refractory : float >= 0
        Seconds (default 5 ms).
    method : {"exact", "euler"}
        ``"exact"``: the linear system's exact solution over a step
        (``tau_e`` and ``tau_i`` must differ from ``tau_m``); ``"euler"``:
        forward Euler. Both in Brian2's generated arithmetic.

    Raises
    ------
    ValueError
        A time constant <= 0 or not finite, ``v_reset >= v_threshold``, a
        negative refractory period, or (``"exact"``) a current time constant
        equal to ``tau_m``; at run time, a network without ``dt`` or a
        projection onto the population without an ``OnPre`` rule.

    Examples
    --------
    A unit whose resting potential is above threshold fires regularly: from
    -60 mV it reaches -50 mV in ``tau_m ln(2)`` = 13.9 ms, then waits 5 ms:

    >>> import neurosim as ns
    >>> net = ns.Network(dt=1e-4)
    >>> p = ns.Population("p", 1, dynamics=ns.LIF(v_rest=-0.04))
    >>> _ = net.add(p)
    >>> p.state["v"][:] = -0.06
    >>> _ = net.record(p, ["activity"])
    >>> _ = net.run(1000)
    >>> spikes = net.recorders["p"].to_dataset().activity.values[:, 0, 0]
    >>> spikes.nonzero()[0][:3].tolist()   # steps of the first spikes, 100 ms in all
    [138, 326, 514]
    """

    sparse_projections = True
    #: the variables the kernel tests as it writes them (a segment makes no separate pass over them)
    self_checked = ("activity", "v", "ge", "gi", "refractory_left")
    #: the population variables the dynamics keep: ``{name: (units, long name)}``
    variables = VARIABLES
    tau_m = Float(0.02, low=0.0, low_open=True, schedulable=False, doc="membrane time constant, s")
    tau_e = Float(0.005, low=0.0, low_open=True, schedulable=False, doc="excitatory current time constant, s")
    tau_i = Float(0.01, low=0.0, low_open=True, schedulable=False, doc="inhibitory current time constant, s")
    v_threshold = Float(-0.05, schedulable=False, doc="threshold, V")
    v_reset = Float(-0.06, schedulable=False, doc="reset potential, V")
    v_rest = Float(-0.049, schedulable=False, doc="resting potential, V")
    refractory = Float(0.005, low=0.0, schedulable=False, doc="refractory period, s")
    method = Choice("exact", options=("exact", "euler"), doc="integration method")

    def __init__(self, tau_m: float = 0.02, tau_e: float = 0.005, tau_i: float = 0.01, v_threshold: float = -0.05,
                 v_reset: float = -0.06, v_rest: float = -0.049, refractory: float = 0.005,
                 method: str = "exact") -> None:
        super().__init__()
        self.set_params(tau_m=tau_m, tau_e=tau_e, tau_i=tau_i, v_threshold=v_threshold, v_reset=v_reset,
                        v_rest=v_rest, refractory=refractory, method=method)
        self._check_together()

    def _check_together(self) -> None:
        """The checks that involve several parameters (each one alone is checked when set)."""
        if not self.v_reset < self.v_threshold:
            raise ValueError(f"v_reset must be below v_threshold; got v_reset={self.v_reset!r}, "
                             f"v_threshold={self.v_threshold!r}")
        if self.method == "exact":
            for name in ("tau_e", "tau_i"):
                if getattr(self, name) == self.tau_m:
                    raise ValueError(f"method='exact' needs {name} != tau_m (the solution divides by their "
                                     f"difference); got both {self.tau_m!r}: use method='euler'")

    def attach(self, network: Network) -> None:
        pop = self.population
        for name, (units, long_name) in self.variables.items():
            init = self.v_reset if name == "v" else 0.0  # at rest above threshold (CUBA) a unit would fire at once
            pop.add_variable(name, init=init, per_sample=True, units=units, long_name=long_name)

    #: the post variables a projection's :class:`~neurosim.OnPre` may deliver to, and why (for the message)
    spike_targets = (("ge", "gi"), "rule=ns.OnPre('ge') or ns.OnPre('gi'): spikes reach a LIF unit through its "
                                   "synaptic currents")

    def validate(self, network: Network) -> None:
        self._check_together()  # parameters set one at a time after construction
        self.check_time_step(network)

    def _constants(self) -> tuple:
        net = self.population.network
        if net is None or net.dt is None:
            raise ValueError(f"LIF dynamics of population {self.population.name!r} need a network with a time step: "
                             "Network(dt=...) in seconds (e.g. 1e-4)")
        dt = float(net.dt)
        steps = float(refractory_steps(self.refractory, dt))
        if self.method == "exact":
            return current_exact_constants(dt, self.tau_m, self.tau_e, self.tau_i, self.v_rest), steps
        return (self.v_rest, dt / self.tau_m, -dt / self.tau_e, -dt / self.tau_i), steps

    def step_numpy(self) -> str | None:
        """One step with NumPy: elementwise, the kernels' arithmetic in the same order.

        Returns
        -------
        str or None
            The failure label when ``v``, ``ge`` or ``gi`` is not finite, else None.
        """
        pop, s = self.population, self.population.state
        consts, steps = self._constants()
        v, ge, gi, left = s["v"], s["ge"], s["gi"], s["refractory_left"]
        left[:] = np.where(left > 0.0, left - 1.0, left)
        active = left <= 0.0
        v_new, ge_new, gi_new = self._integrate(consts, v, ge, gi)
        v_new = np.where(active, v_new, v)
        spiked = active & (v_new > self.v_threshold)
        ge[:], gi[:] = ge_new, gi_new
        v[:] = np.where(spiked, self.v_reset, v_new)
        left[:] = np.where(spiked, steps, left)
        pop.activity[:] = spiked
        fired, n_fired = self.fired(), self.n_fired()
        for b in range(spiked.shape[0]):
            idx = np.flatnonzero(spiked[b])
            fired[b, :idx.size] = idx
            n_fired[b] = idx.size
        if not (np.isfinite(v).all() and np.isfinite(ge).all() and np.isfinite(gi).all()):
            return self.failure_label
        return None

    def _integrate(self, consts: tuple, v, ge, gi) -> tuple:
        """The step's new ``v`` (before the refractory hold), ``ge`` and ``gi`` with NumPy, in the kernels' arithmetic."""
        if self.method == "exact":
            c0, c_ge, c_gi, c_v, a_ge, a_gi = consts
            return c0 + ((c_ge * ge + c_gi * gi) + c_v * v), a_ge * ge, a_gi * gi
        v_rest, k_m, k_e, k_i = consts
        return k_m * ((v_rest + (ge + gi)) - v) + v, k_e * ge + ge, k_i * gi + gi

    def _kernel(self):
        return lif_current_exact if self.method == "exact" else lif_current_euler

    def kernel_calls(self) -> list[KernelCall]:
        pop = self.population
        consts, steps = self._constants()
        refs = tuple(ArrayRef(lambda v=v: pop.state[v], f"{pop.name}.{v}") for v in ("v", "ge", "gi",
                                                                                      "refractory_left"))
        spikes = ArrayRef(lambda: pop.activity, f"{pop.name}.activity")
        kernel = self._kernel()
        return [KernelCall(kernel, refs + (spikes,) + self.spike_refs() + tuple(consts) + (self.v_threshold, self.v_reset, steps),
                           label=f"{pop.name}.lif", finite=self.failure_label)]

    @property
    def failure_label(self) -> str:
        """What a step whose state turned NaN or infinite reports (``SimulationDiverged.variable``)."""
        return f"{self.population.name}.v/ge/gi (LIF state not finite)"


class LIFConductance(LIF):
    """Leaky integrate-and-fire units with exponentially decaying synaptic conductances (Brette et al. 2007, COBA).

    ``dv/dt = (ge (e_e - v) + gi (e_i - v) - (v - v_rest)) / tau_m`` (``v``
    held while refractory), ``dge/dt = -ge / tau_e``, ``dgi/dt = -gi / tau_i``,
    with the conductances ``ge``, ``gi`` in units of the leak conductance
    (dimensionless; a spike adds its weight to them through
    :class:`~neurosim.OnPre`). Forward Euler, in Brian2's generated
    arithmetic (its ``method="exact"`` cannot solve this non-linear system
    either). Threshold, reset and refractoriness as :class:`LIF`.

    Parameters
    ----------
    tau_m, tau_e, tau_i : float > 0
        Seconds (defaults 20, 5 and 10 ms).
    v_threshold, v_reset, v_rest : float
        Volts (defaults -50, -60 and -60 mV); ``v_reset < v_threshold``.
    e_e, e_i : float
        Reversal potentials of the excitatory and inhibitory conductances,
        volts (defaults 0 and -80 mV).
    refractory : float >= 0
        Seconds (default 5 ms).

    Raises
    ------
    ValueError
        As :class:`LIF`.

    Examples
    --------
    >>> import neurosim as ns
    >>> net = ns.Network(dt=1e-4)
    >>> p = ns.Population("p", 1, dynamics=ns.LIFConductance())
    >>> _ = net.add(p)
    >>> p.state["ge"][:] = 2.0   # a large excitatory conductance drives v towards 0 mV: a spike
    >>> _ = net.record(p, ["activity"])
    >>> _ = net.run(100)
    >>> int(net.recorders["p"].to_dataset().activity.values.sum())
    1
    """

    v_rest = Float(-0.06, schedulable=False, doc="resting potential, V")
    method = Choice("euler", options=("euler",), doc="integration method (forward Euler only)")
    variables = {**VARIABLES, "ge": ("1", "excitatory conductance, in units of the leak's"),
                 "gi": ("1", "inhibitory conductance, in units of the leak's")}
    e_e = Float(0.0, schedulable=False, doc="excitatory reversal potential, V")
    e_i = Float(-0.08, schedulable=False, doc="inhibitory reversal potential, V")

    def __init__(self, tau_m: float = 0.02, tau_e: float = 0.005, tau_i: float = 0.01, v_threshold: float = -0.05,
                 v_reset: float = -0.06, v_rest: float = -0.06, e_e: float = 0.0, e_i: float = -0.08,
                 refractory: float = 0.005) -> None:
        Dynamics.__init__(self)  # one set_params with every parameter (a second call would reset the others)
        self.set_params(tau_m=tau_m, tau_e=tau_e, tau_i=tau_i, v_threshold=v_threshold, v_reset=v_reset,
                        v_rest=v_rest, refractory=refractory, method="euler", e_e=e_e, e_i=e_i)
        self._check_together()

    def _constants(self) -> tuple:
        (v_rest, k_m, k_e, k_i), steps = super()._constants()
        return (v_rest, self.e_e, self.e_i, k_m, k_e, k_i), steps

    def _integrate(self, consts: tuple, v, ge, gi) -> tuple:
        v_rest, e_e, e_i, k_m, k_e, k_i = consts
        return k_m * ((v_rest + ((ge * (e_e - v)) + (gi * (e_i - v)))) - v) + v, k_e * ge + ge, k_i * gi + gi

    def _kernel(self):
        return lif_conductance_euler

