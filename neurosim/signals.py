"""Global scalar signals: quantities every synapse of a rule can see.

Paper 002 needs ``||x||^2`` (input-output regularizer, Eq. 21) and
``||y||^2`` (squared-output regularizer, Eq. 24), computed once per step and
broadcast to all synapses, "via extracellular space or glia". A signal has
one value per batch sample, shape ``(batch,)``, and is computed after the
dynamics phase, before any rule runs.
"""

from __future__ import annotations

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Component
from neurosim.kernels.plasticity import squared_norm
from neurosim.population import Population

__all__ = ["Signal", "SquaredNorm", "Unity"]


class Signal(Component):
    """Base class; subclasses fill ``self.value`` (shape ``(batch,)``).

    Runs in the plasticity phase at order -20, before unit rules and rules.
    A signal is not added to a network: the rules that read it list it in
    their ``signals()``, and the network computes each distinct signal once
    per step.

    The instance attribute ``value`` (numpy.ndarray, shape ``(batch,)``) is
    the signal's value in the current step, one per batch sample.
    """

    name = "signal"
    params_key = "signal"
    phase = "plasticity"
    order = -20
    # The signal's output, one value per batch sample. It shadows Parametrized.value(name, t), so a
    # signal reads a scheduled parameter with neurosim.params.resolve_value instead. (Hence no Attributes
    # section above: numpydoc would find the inherited method on the class and link and summarise it.)
    value: np.ndarray  # type: ignore[assignment]

    def __init__(self) -> None:
        self.value = np.ones(1)

    def bind(self, batch: int) -> None:
        """Size ``value`` for ``batch`` samples (ones until first computed).

        Parameters
        ----------
        batch : int >= 1
            The network's batch size.
        """
        if self.value.shape != (batch,):
            self.value = np.ones(batch)

    def compute_numpy(self) -> None:
        """Compute ``value`` for the current step with NumPy (the per-step path).

        Raises
        ------
        NotImplementedError
            In the base class.
        """
        raise NotImplementedError

    def kernel_call(self) -> KernelCall | None:
        """A KernelCall that updates ``value``; ``None`` when there is none.

        Returns
        -------
        neurosim.codegen.KernelCall or None
            The compiled update of ``value``.
        """
        return None

    def kernel_calls(self) -> list[KernelCall] | None:
        call = self.kernel_call()
        return None if call is None else [call]

    def step_numpy(self) -> None:
        self.compute_numpy()

    @property
    def label(self) -> str:
        return f"signal {self.name!r}"

    def ref(self) -> ArrayRef:  # type: ignore[override]  # the signal's value, not a declared parameter
        """A kernel argument that reads ``value`` when a segment starts.

        Unlike :meth:`neurosim.params.Parametrized.ref`, it takes no name: a
        signal's reference is its value.

        Returns
        -------
        neurosim.codegen.ArrayRef
            Labelled ``"signal.<name>"``.
        """
        return ArrayRef(lambda: self.value, f"signal.{self.name}")

    def params(self) -> dict[str, str]:
        """The signal's identity, ``{"signal": name}``.

        Returns
        -------
        dict
            What rules that read the signal record among their parameters.
        """
        return {"signal": self.name}


class Unity(Signal):
    """The constant 1: the scale-dependent regularizer's offset ``alpha * 1`` (Eq. 19 of paper 002).

    Examples
    --------
    >>> from neurosim import Unity
    >>> s = Unity()
    >>> s.bind(3)
    >>> s.value.tolist()
    [1.0, 1.0, 1.0]
    """

    name = "one"

    def compute_numpy(self) -> None:
        pass

    def kernel_calls(self) -> list[KernelCall]:
        return []  # constant: nothing to do on either path


class SquaredNorm(Signal):
    """``||a||^2`` of a population's activity, per batch sample.

    Paper 002 reads ``||x||^2`` (Eq. 21) and ``||y||^2`` (Eq. 24) this way.

    Parameters
    ----------
    population : neurosim.Population
        The population whose activity is squared and summed over units.

    Raises
    ------
    TypeError
        If ``population`` is not a Population.

    Examples
    --------
    >>> import numpy as np
    >>> import neurosim as ns
    >>> x = ns.Population("x", 2)
    >>> s = ns.SquaredNorm(x)
    >>> s.bind(1)
    >>> x.activity[:] = [[3.0, 4.0]]
    >>> s.compute_numpy()
    >>> s.name, s.value.tolist()
    ('sqnorm_x', [25.0])
    """

    def __init__(self, population: Population) -> None:
        super().__init__()
        if not isinstance(population, Population):
            raise TypeError(f"population must be a Population; got {type(population).__name__}")
        self.population = population
        self.name = f"sqnorm_{population.name}"

    def populations(self) -> list[Population]:
        return [self.population]

    def compute_numpy(self) -> None:
        a = self.population.activity
        self.value[:] = np.einsum("bi,bi->b", a, a)

    def kernel_call(self) -> KernelCall:
        return KernelCall(
            squared_norm, (self.ref(), ArrayRef(lambda: self.population.activity, f"{self.population.name}.activity")),
            label=self.name,
        )
