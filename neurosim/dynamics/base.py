"""Within-step activity solvers.

A :class:`Dynamics` computes its population's activity inside one step from
the populations projecting onto it. The network tells it which projections
are feed-forward (from other populations) and which are lateral (from the
population onto itself); populations are solved in topological order of the
feed-forward graph, so a population's inputs are final before it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import DTypeLike

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Component
from neurosim.kernels.dense import synaptic_drive
from neurosim.kernels.parallel import drive_rows, use_rows
from neurosim.kernels.sparse import csr_drive, csr_drive_rows
from neurosim.synapses import csr_refs

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.population import Population
    from neurosim.synapses import Projection

__all__ = ["Dynamics"]



class Dynamics(Component):
    """Base class. Subclasses implement :meth:`step_numpy` and may implement :meth:`kernel_calls`.

    Runs in the dynamics phase; its order is the population's position in
    the topological order of the feed-forward graph, set when the network
    is validated, so a population's inputs are final before it runs. A
    dynamics object is given to one :class:`~neurosim.Population`
    (``Population(name, size, dynamics=...)``).

    Attributes
    ----------
    population : neurosim.Population
        The population whose activity it computes (``None`` until given to one).
    feedforward : list of neurosim.Projection
        Projections from other populations onto it (set by :meth:`connect`).
    lateral : list of neurosim.Projection
        Projections from the population onto itself.
    """

    params_key = "dynamics"
    phase = "dynamics"
    #: population variables the dynamics' kernels test for NaN/Inf as they write them (reported through
    #: their ``finite`` label), which a compiled segment therefore does not test again every step
    self_checked: tuple = ()

    def __init__(self) -> None:
        # None until a Population takes the dynamics; dynamics run only attached, so their
        # methods read self.population as a Population
        self.population: Population = None  # type: ignore[assignment]
        self.feedforward: list[Projection] = []
        self.lateral: list[Projection] = []
        self._buffers: dict[str, np.ndarray] = {}

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        """Take the projections onto the population; called by the network when its structure is validated.

        Parameters
        ----------
        feedforward : list of neurosim.Projection
            Projections from other populations.
        lateral : list of neurosim.Projection
            Projections from the population onto itself.

        Raises
        ------
        ValueError
            In subclasses that cannot take this wiring (e.g. ``Linear`` with
            a lateral projection).
        """
        self.feedforward, self.lateral = list(feedforward), list(lateral)

    def check_one_dictionary(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        """Raise ``ValueError`` unless the population has exactly one excitatory feed-forward projection and no lateral one.

        For encoders whose only input is a dictionary (atoms as rows of the
        projection's weights) and which do their own competition.

        Parameters
        ----------
        feedforward : list of neurosim.Projection
            Must hold exactly one projection, with ``sign=+1``.
        lateral : list of neurosim.Projection
            Must be empty.
        """
        what = f"{type(self).__name__} dynamics of {self.population.name!r}"
        if lateral:
            raise ValueError(f"{what} cannot take lateral projections (the encoder does the competition)")
        if len(feedforward) != 1:
            raise ValueError(f"{what} needs exactly one feed-forward projection (the dictionary); "
                             f"got {[p.name for p in feedforward]}")
        if feedforward[0].sign != 1:
            raise ValueError(f"the dictionary projection {feedforward[0].name!r} must be excitatory (sign=+1)")

    def buffer(self, name: str, shape: tuple[int, ...] | None = None, dtype: DTypeLike = np.float64) -> np.ndarray:
        """A workspace array, reallocated when the population's size or batch changes.

        Parameters
        ----------
        name : str
            Key of the buffer.
        shape : tuple of int, optional
            Default ``(batch, size)`` of the population.
        dtype : dtype, optional
            Element type (float64 by default).

        Returns
        -------
        numpy.ndarray
            Zeros when (re)allocated; otherwise the previous contents.
        """
        pop = self.population
        shape = (pop.batch, pop.size) if shape is None else shape
        buf = self._buffers.get(name)
        if buf is None or buf.shape != shape or buf.dtype != dtype:
            buf = np.zeros(shape, dtype=dtype)
            self._buffers[name] = buf
        return buf

    def buffer_ref(self, name: str, shape_fn: Callable[[], tuple[int, ...]] | None = None,
                   dtype: DTypeLike = np.float64) -> ArrayRef:
        """A kernel argument that resolves :meth:`buffer` when a segment starts.

        Parameters
        ----------
        name : str
            Key of the buffer.
        shape_fn : callable, optional
            Returns the shape when called; default ``(batch, size)``.
        dtype : dtype, optional
            Element type (float64 by default).

        Returns
        -------
        neurosim.codegen.ArrayRef
            Labelled ``"<population>.<name>"``.
        """
        return ArrayRef(lambda: self.buffer(name, None if shape_fn is None else shape_fn(), dtype),
                        f"{self.population.name}.{name}")

    # -- feed-forward drive, shared by every dense dynamics ------------------------
    def drive_numpy(self, out: np.ndarray) -> None:
        """Write the feed-forward drive ``sum_p sign_p W_p a_pre`` into ``out`` (NumPy).

        Parameters
        ----------
        out : numpy.ndarray, shape (batch, size)
            Overwritten with the drive.
        """
        out[:] = 0.0
        for p in self.feedforward:
            out += p.sign * p.product(p.pre.activity)

    def drive_calls(self, out_ref: ArrayRef) -> list[KernelCall]:
        """Kernel calls that write the feed-forward drive into the array ``out_ref`` resolves to.

        Parameters
        ----------
        out_ref : neurosim.codegen.ArrayRef
            The ``(batch, size)`` output array.

        Returns
        -------
        list of neurosim.codegen.KernelCall
            One call per feed-forward projection (row-parallel for large
            ones), or one that zeroes ``out`` when there is none.
        """
        if not self.feedforward:
            return [KernelCall(_zero, (out_ref,))]
        calls = []
        for n, p in enumerate(self.feedforward):
            n_post, n_pre = p.shape
            pre = ArrayRef(lambda p=p: p.pre.activity, f"{p.pre.name}.activity")
            if p.sparse:
                rows = use_rows(n_post, p.n_synapses // max(n_post, 1), p.pre.batch)
                calls.append(KernelCall(csr_drive_rows if rows else csr_drive,
                                        (out_ref, pre, *csr_refs(p), float(p.sign), n > 0), label=f"{p.name}.drive"))
                continue
            calls.append(KernelCall(
                drive_rows if use_rows(n_post, n_pre, p.pre.batch) else synaptic_drive,
                (out_ref, pre, ArrayRef(lambda p=p: p.weights, f"{p.name}.weights"), float(p.sign), n > 0),
                label=f"{p.name}.drive",
            ))
        return calls

    def step_numpy(self) -> str | None:
        """Compute the activity with NumPy. Returns None, or a label when the solver failed.

        The label is what the engine reports as ``SimulationDiverged.variable``
        (the run stops at this step); a solver that can fail returns the same
        label from ``step_numpy`` and as its kernel call's ``finite``, so both
        paths stop alike.

        Returns
        -------
        str or None
            ``None`` on success, else the failure label.

        Raises
        ------
        NotImplementedError
            In the base class.
        """
        raise NotImplementedError

    def kernel_calls(self) -> list[KernelCall] | None:
        """List of KernelCalls computing the activity, or ``None`` without kernels.

        A call with ``finite`` set returns False when its solver failed; the
        step then stops with ``SimulationDiverged`` naming ``finite`` (or the
        first non-finite variable, if any).

        Returns
        -------
        list of neurosim.codegen.KernelCall or None
            ``None`` in the base class.
        """
        return None

    #: warning category of :meth:`take_unconverged`'s report
    unconverged_warning: type = RuntimeWarning

    def take_unconverged(self) -> str | None:
        """Describe the solver's non-converged steps since the last call (and forget them), or None.

        Dynamics with an iterative solver count what hit its cap in
        ``self.info[1]`` (both paths) and describe a count in
        :meth:`_unconverged_text`. The engine calls this at the end of every
        ``run`` and warns with the text (:attr:`unconverged_warning`), so a
        compiled run, which cannot warn from inside a segment, reports what
        the per-step path would.

        Returns
        -------
        str or None
            The warning text, or ``None`` when every step converged.
        """
        info = getattr(self, "info", None)
        if info is None or info.size < 2 or not info[1]:
            return None
        n, info[1] = int(info[1]), 0
        return self._unconverged_text(n)

    def _unconverged_text(self, n: int) -> str:
        return f"{type(self).__name__} dynamics of {self.population.name!r}: the solver hit its cap {n} time(s) during this run"

    def network_of(self) -> Network | None:
        return None if self.population is None else self.population.network

    @property
    def label(self) -> str:
        name = self.population.name if self.population is not None else "?"
        return f"{type(self).__name__} dynamics of {name!r}"

    def populations(self) -> list[Population]:
        return [] if self.population is None else [self.population] + [p.pre for p in self.feedforward]

    def projections(self) -> list[Projection]:
        return self.feedforward + self.lateral + [q for q in super().projections()
                                                  if q not in self.feedforward and q not in self.lateral]


from neurosim.kernels.dense import zero_fill as _zero  # noqa: E402
