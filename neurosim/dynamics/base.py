"""Within-step activity solvers.

A :class:`Dynamics` computes its population's activity inside one step from
the populations projecting onto it. The network tells it which projections
are feed-forward (from other populations) and which are lateral (from the
population onto itself); populations are solved in topological order of the
feed-forward graph, so a population's inputs are final before it runs.
"""

from __future__ import annotations

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Component
from neurosim.kernels.dense import synaptic_drive
from neurosim.kernels.parallel import drive_rows, use_rows

__all__ = ["Dynamics"]


class Dynamics(Component):
    """Base class. Subclasses implement :meth:`step_numpy` and may implement :meth:`kernel_calls`.

    Runs in the dynamics phase; its order is the population's position in
    the topological order of the feed-forward graph, set when the network
    is validated, so a population's inputs are final before it runs.
    """

    params_key = "dynamics"
    phase = "dynamics"

    def __init__(self):
        self.population = None
        self.feedforward: list = []
        self.lateral: list = []
        self._buffers: dict[str, np.ndarray] = {}

    def connect(self, feedforward: list, lateral: list):
        """Called by the network when its structure is validated."""
        self.feedforward, self.lateral = list(feedforward), list(lateral)

    def check_one_dictionary(self, feedforward: list, lateral: list):
        """Raise ``ValueError`` unless the population has exactly one excitatory feed-forward projection and no lateral one.

        For encoders whose only input is a dictionary (atoms as rows of the
        projection's weights) and which do their own competition.
        """
        what = f"{type(self).__name__} dynamics of {self.population.name!r}"
        if lateral:
            raise ValueError(f"{what} cannot take lateral projections (the encoder does the competition)")
        if len(feedforward) != 1:
            raise ValueError(f"{what} needs exactly one feed-forward projection (the dictionary); "
                             f"got {[p.name for p in feedforward]}")
        if feedforward[0].sign != 1:
            raise ValueError(f"the dictionary projection {feedforward[0].name!r} must be excitatory (sign=+1)")

    def buffer(self, name: str, shape=None, dtype=np.float64) -> np.ndarray:
        """A workspace array, reallocated when the population's size or batch changes."""
        pop = self.population
        shape = (pop.batch, pop.size) if shape is None else shape
        buf = self._buffers.get(name)
        if buf is None or buf.shape != shape or buf.dtype != dtype:
            buf = np.zeros(shape, dtype=dtype)
            self._buffers[name] = buf
        return buf

    def buffer_ref(self, name: str, shape_fn=None, dtype=np.float64) -> ArrayRef:
        return ArrayRef(lambda: self.buffer(name, None if shape_fn is None else shape_fn(), dtype),
                        f"{self.population.name}.{name}")

    # -- feed-forward drive, shared by every dense dynamics ------------------------
    def drive_numpy(self, out: np.ndarray):
        out[:] = 0.0
        for p in self.feedforward:
            out += p.sign * (p.pre.activity @ p.weights.T)

    def drive_calls(self, out_ref: ArrayRef) -> list:
        if not self.feedforward:
            return [KernelCall(_zero, (out_ref,))]
        calls = []
        for n, p in enumerate(self.feedforward):
            n_post, n_pre = p.weights.shape
            calls.append(KernelCall(
                drive_rows if use_rows(n_post, n_pre, p.pre.batch) else synaptic_drive,
                (out_ref, ArrayRef(lambda p=p: p.pre.activity, f"{p.pre.name}.activity"),
                 ArrayRef(lambda p=p: p.weights, f"{p.name}.weights"), float(p.sign), n > 0),
                label=f"{p.name}.drive",
            ))
        return calls

    def step_numpy(self):
        """Compute the activity with NumPy. Returns None, or a label when the solver failed.

        The label is what the engine reports as ``SimulationDiverged.variable``
        (the run stops at this step); a solver that can fail returns the same
        label from ``step_numpy`` and as its kernel call's ``finite``, so both
        paths stop alike.
        """
        raise NotImplementedError

    def kernel_calls(self):
        """List of KernelCalls computing the activity, or ``None`` without kernels.

        A call with ``finite`` set returns False when its solver failed; the
        step then stops with ``SimulationDiverged`` naming ``finite`` (or the
        first non-finite variable, if any).
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
        """
        info = getattr(self, "info", None)
        if info is None or info.size < 2 or not info[1]:
            return None
        n, info[1] = int(info[1]), 0
        return self._unconverged_text(n)

    def _unconverged_text(self, n: int) -> str:
        return f"{type(self).__name__} dynamics of {self.population.name!r}: the solver hit its cap {n} time(s) during this run"

    def network_of(self):
        return None if self.population is None else self.population.network

    @property
    def label(self) -> str:
        name = self.population.name if self.population is not None else "?"
        return f"{type(self).__name__} dynamics of {name!r}"

    def populations(self) -> list:
        return [] if self.population is None else [self.population] + [p.pre for p in self.feedforward]


from neurosim.kernels.dense import zero_fill as _zero  # noqa: E402
