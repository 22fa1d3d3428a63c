"""Weighted Jacobi relaxation to the fixed point of a linear recurrent network."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.dynamics.base import Dynamics
from neurosim.kernels.dense import GROWTH_FLOOR, copy_2d, jacobi_kernel
from neurosim.kernels.parallel import use_rows
from neurosim.params import Bool, Float, Int
from neurosim.synapses import csr_refs

if TYPE_CHECKING:
    from neurosim.synapses import Projection

__all__ = ["Jacobi", "Linear", "JacobiNotConverged"]


class JacobiNotConverged(RuntimeWarning):
    """The Jacobi iteration hit ``max_iter`` before reaching ``tol`` (warned once per ``run`` with the count)."""


class Jacobi(Dynamics):
    """Weighted Jacobi iteration of paper 002, Eq. 17.

    .. math:: y \\leftarrow (1-\\eta)\\, y + \\eta\\, (W^{YX} x - W^{YY} y)

    iterated inside one step. The feed-forward drive ``W^{YX} x`` sums every
    feed-forward projection (with its sign); the lateral term uses the
    population's lateral projection (at most one, its sign is the sign of
    the term, -1 for the anti-Hebbian synapses of paper 002). The fixed
    point solves ``(I + W^{YY}) y = W^{YX} x``, i.e. Eq. 16; it converges when
    the spectral radius of ``(1-eta) I - eta W^{YY}`` is below 1.

    Parameters
    ----------
    eta : float in (0, 1], default=0.1
        Jacobi weight.
    tol : float >= 0, default=0.0
        Stop when ``max|dy| <= tol max(max|y|, max|W^{YX} x|)`` (over the
        batch): relative to the drive, the problem's own scale, so activities
        of 1e-9 or 1e9 stop at the same iterate; with a zero drive, relative
        to the starting state. ``0`` selects the fixed-iterations mode:
        exactly ``max_iter`` iterations.
    max_iter : int >= 1, default=30
        Iteration cap (the number of iterations in fixed mode).
    zero_start : bool, default=True
        Start every step from ``y = 0`` (default) rather than from the
        previous step's output.

    Notes
    -----
    A step whose iteration does not contract (the lateral loop is unstable:
    ``rho((1-eta) I + eta s M) >= 1``, e.g. strong excitatory lateral
    weights at ``eta = 1``) stops the run in either mode with
    :class:`~neurosim.SimulationDiverged` naming the step and
    ``"<population>.activity (Jacobi iteration not contracting)"``; state
    and recordings are kept up to that step, on both paths. The test is made
    once per step, after the last iteration: the last update is at least as
    large (Euclidean norm over the batch) as the step's first update, and
    above rounding level (see
    :func:`neurosim.kernels.dense.jacobi_relax`). With symmetric lateral
    weights (paper 002's) a contracting iteration never fails it. A step that
    contracts but does not reach ``tol`` within ``max_iter`` is only counted
    and warned at the end of the run (:class:`JacobiNotConverged`).
    Lower ``eta`` or the lateral weights to make the loop contract.

    Examples
    --------
    Two units inhibiting each other with weight 0.5 settle at
    ``(I + M) y = x``, i.e. ``y = x / 1.5`` for ``x = [1, 1]``:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network()
    >>> x = ns.Population("x", 2)
    >>> y = ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.5, tol=1e-12, max_iter=200))
    >>> W = ns.Projection("W", x, y, init=np.eye(2))
    >>> M = ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.5))
    >>> _ = net.add(x, y, W, M)
    >>> _ = net.connect(ns.ArrayStream(np.ones((1, 2))), x)
    >>> _ = net.run(1)
    >>> np.round(y.activity, 6).tolist(), y.dynamics.iterations > 0
    ([[0.666667, 0.666667]], True)
    """

    unconverged_warning = JacobiNotConverged

    sparse_projections = True
    eta = Float(0.1, low=0.0, high=1.0, low_open=True, schedulable=False, doc="Jacobi weight")
    tol = Float(0.0, low=0.0, schedulable=False, doc="relative tolerance; 0: fixed iterations")
    max_iter = Int(30, low=1, doc="iteration cap (the count in fixed mode)")
    zero_start = Bool(True, doc="start every step from y = 0")

    def __init__(self, eta: float = 0.1, tol: float = 0.0, max_iter: int = 30, zero_start: bool = True) -> None:
        super().__init__()
        self.set_params(eta=eta, tol=tol, max_iter=max_iter, zero_start=zero_start)
        # [iterations of the last step (negative: tol not reached or not contracting),
        #  contracting steps that hit max_iter before tol]
        self.info = np.zeros(2, dtype=np.int64)

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        if len(lateral) > 1:
            names = [p.name for p in lateral]
            raise ValueError(f"Jacobi dynamics of population {self.population.name!r} supports at most one lateral projection; got {names}")
        super().connect(feedforward, lateral)

    def _lateral(self):
        if self.lateral:
            p = self.lateral[0]
            return p, float(p.sign)
        return None, 0.0

    @property
    def iterations(self) -> int:
        """Iterations used in the last step (negative: tolerance not reached, or not contracting)."""
        return int(self.info[0])

    def step_numpy(self) -> str | None:
        """Relax ``y`` with NumPy (the mirror of :func:`neurosim.kernels.dense.jacobi_relax`).

        Returns
        -------
        str or None
            ``None``, or :attr:`failure_label` when the iteration did not
            contract.
        """
        # NumPy mirror of kernels.dense.jacobi_relax, non-contraction test included
        y = self.population.activity
        drive = self.buffer("drive")
        self.drive_numpy(drive)
        m, s = self._lateral()
        if self.zero_start:
            y[:] = 0.0
        # the tolerance's scale besides max|y| (see the kernel): the drive's, or the start's for a zero drive
        floor = np.abs(drive).max(initial=0.0)
        if floor == 0.0:
            floor = np.abs(y).max(initial=0.0)
        norms = []  # squared Euclidean norm of each update, over the batch
        for it in range(self.max_iter):
            lat = m.product(y) if m is not None else np.zeros_like(y)
            new = (1.0 - self.eta) * y + self.eta * (drive + s * lat)
            norms.append(float(np.sum((new - y) ** 2)))
            # initial=0.0: a population may be empty (every unit killed)
            delta = np.abs(new - y).max(initial=0.0)
            ymax = np.abs(new).max(initial=0.0)
            y[:] = new
            if self.tol > 0.0 and delta <= self.tol * max(ymax, floor):
                self.info[0] = it + 1
                return None
            if not np.isfinite(delta):
                self.info[0] = it + 1
                return None  # a NaN/Inf state: the engine's finiteness check names it
        self.info[0] = -self.max_iter if self.tol > 0.0 else self.max_iter
        if len(norms) > 1 and _not_contracting(norms[0], norms[-1], float(np.sum(y * y))):
            self.info[0] = -self.max_iter
            return self.failure_label
        if self.tol > 0.0:
            self.info[1] += 1  # reported once per run by take_unconverged, on both paths
        return None

    @property
    def failure_label(self) -> str:
        """What a step that failed the non-contraction test reports (``SimulationDiverged.variable``)."""
        return f"{self.population.name}.activity (Jacobi iteration not contracting)"

    def _unconverged_text(self, n):
        return (f"Jacobi dynamics of {self.population.name!r} did not reach tol={self.tol:g} within "
                f"max_iter={self.max_iter} iterations in {n} step(s) of this run")

    def kernel_calls(self) -> list[KernelCall]:
        pop = self.population
        drive = self.buffer_ref("drive")
        lat = self.lateral[0] if self.lateral else None
        lat_ref = ArrayRef((lambda: lat.weights) if lat is not None else (lambda: _EMPTY), f"{pop.name}.lateral")
        sparse = () if lat is None or not lat.sparse else csr_refs(lat)[:2]
        parallel = lat is not None and use_rows(pop.size, lat.n_synapses // max(pop.size, 1) if lat.sparse else pop.size,
                                                pop.batch)
        return self.drive_calls(drive) + [KernelCall(
            jacobi_kernel(self.tol, parallel),
            (ArrayRef(lambda: pop.activity, f"{pop.name}.activity"), drive, lat_ref,
             float(lat.sign) if lat is not None else 0.0, self.eta, self.tol, self.max_iter, self.zero_start,
             self.buffer_ref("scratch"), ArrayRef(lambda: self.info, f"{pop.name}.jacobi_info"), *sparse),
            label=f"{pop.name}.jacobi", finite=self.failure_label,
        )]



class Linear(Dynamics):
    """Activity equals the summed feed-forward drive: ``y = sum_p sign_p W_p x_p`` (no lateral projections).

    Takes no parameters. See :class:`~neurosim.Network` for an Example.
    """

    sparse_projections = True

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        if lateral:
            raise ValueError(f"Linear dynamics of population {self.population.name!r} cannot take lateral projections; use Jacobi")
        super().connect(feedforward, lateral)

    def step_numpy(self) -> None:
        self.drive_numpy(self.population.activity)

    def kernel_calls(self) -> list[KernelCall]:
        pop = self.population
        act = ArrayRef(lambda: pop.activity, f"{pop.name}.activity")
        drive = self.buffer_ref("drive")
        return self.drive_calls(drive) + [KernelCall(copy_2d, (act, drive))]


_EMPTY = np.zeros((1, 1))


def _not_contracting(u_first: float, u_last: float, y2: float) -> bool:
    """kernels.dense._not_contracting on Python floats (squared update norms, squared norm of y)."""
    if u_last == np.inf:
        return u_first < np.inf
    return u_last >= u_first and u_last > GROWTH_FLOOR * GROWTH_FLOOR * (1.0 + y2)
