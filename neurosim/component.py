"""Components: what the engine runs inside a step, in a declared place.

Every piece of per-step work (a population's dynamics, a global signal, a
rule on per-unit variables, a plasticity rule) is a :class:`Component`. It
declares *where* it runs, as Brian2's ``when``/``order`` do: a ``phase``
(``"dynamics"`` or ``"plasticity"``) and an ``order`` within the phase
(lower first; ties keep the order of addition). The engine sorts the
components once and runs them in that order on every path
(``Network.schedule()`` prints it). Adding a new kind of component (a
statistics accumulator, a selector before plasticity, a shrink after the
rules) means writing one class with a phase and an order; the engine,
network and checkpoints need no change.

The defaults place signals (order -20) before unit rules (-10) before
projection rules (0), so a rule sees this step's ``mu``; a component that
must run between them picks an order in between.

A component describes its work twice: :meth:`~Component.step_numpy` (the NumPy
reference) and :meth:`~Component.kernel_calls` (compiled kernels, or ``None``). A
component without kernels runs its reference on the per-step path, while
the others keep their kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurosim.params import Parametrized

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from neurosim.codegen import KernelCall
    from neurosim.network import Network
    from neurosim.population import Population
    from neurosim.synapses import Projection

__all__ = ["Component", "PHASES", "COMPONENT_PHASES", "order_after_dynamics", "Workspace"]

#: the fixed order of phases inside one step
PHASES = ("input", "dynamics", "plasticity", "events", "record")
#: the phases components may run in (input, events and record belong to the engine)
COMPONENT_PHASES = ("dynamics", "plasticity")


class Component(Parametrized):
    """Base class of per-step work placed by ``phase`` and ``order``.

    Dynamics, signals, unit rules, rules and user components
    (``network.add(component)``) are components. A subclass implements
    :meth:`kernel_calls` (compiled) and/or :meth:`step_numpy` (the NumPy
    reference), lists its populations in :meth:`populations` and its own
    memory in :meth:`state`; parameters are declared as class attributes
    (:mod:`neurosim.params`).
    """

    #: phase the component runs in: "dynamics" or "plasticity"
    phase = "plasticity"
    #: position within the phase (lower runs first; ties keep the order of addition)
    order = 0
    #: the network the component was added to (set by Network.add; an annotation only, no class default)
    network: Network | None
    #: whether the component runs on projections with sparse storage (``Projection(connectivity=...)``); one
    #: that does not is refused when the network validates, naming the projection
    sparse_projections: bool = False
    #: what the refusal of a sparse projection suggests instead (when the component does not run on them)
    sparse_hint: str = ("build them with storage='dense', or use a component that supports sparse synapses: "
                        "docs/architecture.md, Sparse synapses")

    def projections(self) -> list:
        """The projections the component reads or updates (checked against :attr:`sparse_projections`).

        Returns
        -------
        list of neurosim.Projection
            By default every declared parameter holding a projection; rules
            and dynamics add their own.
        """
        from neurosim.synapses import Projection

        values = (getattr(self, name, None) for name in self.declared())
        return [v for v in values if isinstance(v, Projection)]

    def kernel_calls(self) -> list[KernelCall] | None:
        """The compiled work of one step.

        Returns
        -------
        list of neurosim.codegen.KernelCall or None
            The numba kernels to call, in order, with their arguments;
            ``None`` when the component has no compiled form (then the
            network steps it with :meth:`step_numpy`).
        """
        return None

    def step_numpy(self) -> object:
        """Run one step with NumPy (the reference the compiled form is tested against).

        Returns
        -------
        object
            Ignored by the engine, except that dynamics return ``None`` or a
            failure label (see :meth:`neurosim.dynamics.Dynamics.step_numpy`).

        Raises
        ------
        NotImplementedError
            In the base class.
        """
        raise NotImplementedError(f"{type(self).__name__} implements neither step_numpy nor kernel_calls")

    def attach(self, network: Network) -> None:
        """Called once when the component joins ``network`` (declare variables or arrays it needs here).

        Parameters
        ----------
        network : neurosim.Network
            The network the component was added to.
        """

    def validate(self, network: Network) -> None:
        """Raise ``ValueError`` if the component cannot run in ``network`` (called before every run).

        Parameters
        ----------
        network : neurosim.Network
            The network about to run.
        """

    def check_structure(self, sizes: Mapping[str, int] | None = None) -> None:
        """Raise ``ValueError`` unless the component can run with these population sizes.

        The constraints a component puts on the number of units (a map's
        ``rows * cols``, a code's ``n_nonzero``, a fixed group family) live
        here, once: :meth:`neurosim.Network.validate` checks them on the
        network as it is (before every run, after the component's own
        :meth:`validate`), and :meth:`neurosim.Network.apply` on the sizes a
        batch of events would leave, before anything is committed, so a
        refused Birth or Death changes nothing. The base class has none.

        Parameters
        ----------
        sizes : mapping of str to int, optional
            Number of units of each population by name, as the staged events
            would leave them; ``None`` (default): the populations' current
            sizes. A check must not change the component's state when
            ``sizes`` is given (nothing has been applied yet).

        Raises
        ------
        ValueError
            Naming the component, the population and the constraint.
        """

    @staticmethod
    def size_of(population: Population, sizes: Mapping[str, int] | None) -> int:
        """The size of ``population`` in ``sizes`` (see :meth:`check_structure`), else its current size.

        Parameters
        ----------
        population : neurosim.Population
            A population the component reads.
        sizes : mapping of str to int or None
            Staged sizes by population name, or ``None``.

        Returns
        -------
        int
            Number of units.
        """
        if sizes is None:
            return population.size
        return int(sizes.get(population.name, population.size))

    def state(self) -> dict[str, np.ndarray]:
        """Arrays the component keeps from step to step, ``{name: ndarray}``.

        Checkpoints save and restore them, and a failed step restores them,
        so a component with memory of its own (an accumulator, a running
        threshold kept outside the populations) survives both. The arrays
        are updated in place. Population variables and weights are saved
        anyway; list only what the component owns.

        Returns
        -------
        dict
            ``{name: ndarray}``; empty when the component keeps nothing.
        """
        return {}

    def network_of(self) -> Network | None:
        """The network the component belongs to, or ``None``.

        Returns
        -------
        neurosim.Network or None
            Found through the component's populations or projection.
        """
        return None

    @property
    def label(self) -> str:
        """How schedules and error messages name the component (default: its class name)."""
        return type(self).__name__

    def populations(self) -> list[Population]:
        """Populations whose state the component reads or writes (they must belong to its network).

        Returns
        -------
        list of neurosim.Population
            Empty in the base class.
        """
        return []


def order_after_dynamics(population: Population) -> float:
    """The dynamics-phase order right after ``population``'s own dynamics (before any population downstream).

    For components that read a population's activity of this step before
    anything else uses it (a measure, a selector).

    Parameters
    ----------
    population : neurosim.Population
        The population whose dynamics the component follows.

    Returns
    -------
    float
        Its dynamics' order plus 0.5 (0.5 without dynamics).
    """
    dyn = population.dynamics
    return (dyn.order if dyn is not None else 0) + 0.5


class _CodeReader(Component):
    """A component that reads the code of its ``dictionary`` projection (``x -> code``) in the step it is
    computed (a measure, a selector): it runs right after the code population's dynamics."""

    dictionary: Projection

    def _take_dictionary(self, dictionary: Projection) -> None:
        """Keep ``dictionary``; TypeError unless it is a Projection."""
        from neurosim.synapses import Projection

        if not isinstance(dictionary, Projection):
            raise TypeError(f"dictionary must be a Projection; got {type(dictionary).__name__}")
        self.dictionary = dictionary

    @property
    def order(self) -> float:  # type: ignore[override]  # a property where Component has a class attribute
        """Right after the code population's dynamics (:func:`~neurosim.component.order_after_dynamics`)."""
        return order_after_dynamics(self.dictionary.post)


class Workspace:
    """Scratch arrays of a component, reallocated only when their shape or dtype changes (e.g. after a Birth)."""

    def __init__(self):
        self._arrays: dict = {}

    def __call__(self, name: str, shape: tuple, dtype=None):
        import numpy as np

        dtype = np.dtype(np.float64 if dtype is None else dtype)
        buf = self._arrays.get(name)
        if buf is None or buf.shape != shape or buf.dtype != dtype:
            buf = np.zeros(shape, dtype=dtype)
            self._arrays[name] = buf
        return buf
