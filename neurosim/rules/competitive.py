"""Rules of competitive, self-organising circuits: Kohonen's map and Martinetz & Schulten's Neural Gas.

Both move every prototype (row of the projection ``x -> map``) toward the
input by a factor that falls off with the unit's distance from the winner:
on a fixed grid for the self-organising map (Kohonen 1982), by rank in input
space for Neural Gas (Martinetz & Schulten 1991; Martinetz, Berkovich &
Schulten 1993). They read what the map's
:class:`~neurosim.dynamics.competitive.BestMatchingUnit` dynamics computed
this step (the one-hot winner, the squared distances), one sample per step.
"""

from __future__ import annotations

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import competitive as k
from neurosim.params import Choice, Float, Int
from neurosim.rules.base import Rule

__all__ = ["Kohonen", "NeuralGas", "grid_positions", "TOPOLOGIES"]

#: map topologies (MiniSom's)
TOPOLOGIES = ("rectangular", "hexagonal")


def grid_positions(rows: int, cols: int, topology: str = "rectangular") -> tuple:
    """Grid indices and plane coordinates of the units of a ``rows x cols`` map, in unit order.

    Unit ``u = i * cols + j`` sits at grid index ``(i, j)`` (MiniSom's
    ``(x, y)`` position; its weights ``(rows, cols, dim)`` flattened row-major
    are our rows). Its plane coordinates are ``(i, j)`` on a rectangular
    grid; on a hexagonal one, every other row of MiniSom's meshgrid (counted
    from the last) is shifted by -1/2 and ``j`` is scaled by ``(3/2) / sqrt(3) = sqrt(3)/2``,
    exactly as MiniSom builds ``_xx`` and ``_yy``.

    Returns
    -------
    grid_i, grid_j, grid_x, grid_y : ndarray of float64, shape (rows * cols,)
    """
    xx, yy = np.meshgrid(np.arange(rows), np.arange(cols))  # (cols, rows), MiniSom's layout
    xx, yy = xx.astype(float), yy.astype(float)
    if topology == "hexagonal":
        xx[::-2] -= 0.5
        yy *= (3.0 / 2.0) / np.sqrt(3)  # MiniSom's Y_HEX_CONV_FACTOR (one ulp above sqrt(3) / 2)
    gi, gj = np.meshgrid(np.arange(rows, dtype=float), np.arange(cols, dtype=float), indexing="ij")
    return gi.ravel(), gj.ravel(), np.ascontiguousarray(xx.T).ravel(), np.ascontiguousarray(yy.T).ravel()


class _Competitive(Rule):
    """Shared checks: one sample per step, the post population run by BestMatchingUnit."""

    def validate(self, network):
        from neurosim.dynamics.competitive import BestMatchingUnit

        p = self.projection
        if p.lateral:
            raise ValueError(f"{type(self).__name__} learns the prototypes of a feed-forward projection; "
                             f"{p.name!r} is lateral")
        if not isinstance(p.post.dynamics, BestMatchingUnit):
            raise ValueError(f"{type(self).__name__} on projection {p.name!r} reads the winner that BestMatchingUnit "
                             f"dynamics compute; population {p.post.name!r} has "
                             f"{type(p.post.dynamics).__name__ if p.post.dynamics is not None else 'no dynamics'}")
        if network.batch != 1:
            raise ValueError(f"{type(self).__name__} on projection {p.name!r} learns from one input per step "
                             f"(each input moves the prototypes the next is matched against): the network's batch "
                             f"must be 1; got {network.batch}")


class Kohonen(_Competitive):
    """Kohonen's self-organising map: ``w_j += rate h(j, c; sigma) (x - w_j)``, ``c`` the best-matching unit.

    The post population is a ``rows x cols`` map (unit ``i * cols + j`` at
    grid position ``(i, j)``, see :func:`grid_positions`); ``h`` is one of
    MiniSom's neighbourhood functions, computed as MiniSom computes it, so
    a map built with MiniSom's initial weights, schedules and input order
    learns MiniSom's weights to rounding.

    Parameters
    ----------
    rows, cols : int >= 1
        The map's shape (MiniSom's ``x``, ``y``); fixed.
    rate : float >= 0
        Learning rate (MiniSom's ``learning_rate``, default 0.5); usually a
        schedule, e.g. :class:`~neurosim.schedules.AsymptoticDecay`.
    sigma : float > 0
        Neighbourhood radius in grid units (MiniSom's default 1); usually a
        shrinking schedule.
    neighbourhood : {"gaussian", "mexican_hat", "bubble", "triangle"}
        Fixed.
    topology : {"rectangular", "hexagonal"}
        Fixed.
    """

    rows = Int(low=1, live=False, doc="map rows (MiniSom's x)")
    cols = Int(low=1, live=False, doc="map columns (MiniSom's y)")
    rate = Float(0.5, low=0.0, doc="learning rate")
    sigma = Float(1.0, low=0.0, low_open=True, doc="neighbourhood radius (grid units)")
    neighbourhood = Choice("gaussian", options=k.NEIGHBOURHOODS, live=False, doc="neighbourhood function")
    topology = Choice("rectangular", options=TOPOLOGIES, live=False, doc="grid topology")

    def __init__(self, rows: int, cols: int, rate=0.5, sigma=1.0, neighbourhood: str = "gaussian",
                 topology: str = "rectangular"):
        super().__init__()
        self.set_params(rows=rows, cols=cols, rate=rate, sigma=sigma, neighbourhood=neighbourhood, topology=topology)
        self.grid = tuple(np.ascontiguousarray(a) for a in grid_positions(self.rows, self.cols, self.topology))

    def validate(self, network):
        super().validate(network)
        p = self.projection
        if p.post.size != self.rows * self.cols:
            raise ValueError(f"Kohonen on projection {p.name!r}: population {p.post.name!r} has {p.post.size} units, "
                             f"not rows * cols = {self.rows} * {self.cols} = {self.rows * self.cols}")

    def neighbourhood_of(self, c: int, sigma: float) -> np.ndarray:
        """``h(j, c; sigma)`` for every unit ``j`` (the NumPy reference, in the kernel's operation order)."""
        gi, gj, gx, gy = self.grid
        d = 2.0 * sigma * sigma
        if self.neighbourhood == "gaussian":
            dx, dy = gx - gx[c], gy - gy[c]
            return np.exp(-(dx * dx) / d) * np.exp(-(dy * dy) / d)
        if self.neighbourhood == "mexican_hat":
            dx, dy = gx - gx[c], gy - gy[c]
            p = dx * dx + dy * dy
            return np.exp(-p / d) * (1.0 - 2.0 / d * p)
        if self.neighbourhood == "bubble":
            inside = (gi > gi[c] - sigma) & (gi < gi[c] + sigma) & (gj > gj[c] - sigma) & (gj < gj[c] + sigma)
            return inside.astype(float)
        tx = np.maximum(-np.abs(gi[c] - gi) + sigma, 0.0)
        ty = np.maximum(-np.abs(gj[c] - gj) + sigma, 0.0)
        return tx * ty

    def update_numpy(self):
        p = self.projection
        t = p.network.t
        winners = np.flatnonzero(p.post.activity[0] == 1.0)
        if winners.size == 0:
            return
        g = self.neighbourhood_of(int(winners[0]), self.value("sigma", t)) * self.value("rate", t)
        p.weights += g[:, None] * (p.pre.activity[0][None, :] - p.weights)

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        grid = [ArrayRef(lambda a=a: a, f"{p.name}.rule.grid{n}") for n, a in enumerate(self.grid)]
        return KernelCall(k.kohonen_update, (w, post, pre, *grid, self.ref("rate"), self.ref("sigma"),
                                             k.NEIGHBOURHOODS.index(self.neighbourhood)), label=f"{p.name}.rule")


class NeuralGas(_Competitive):
    """Neural Gas: ``w_i += rate exp(-k_i / lam) (x - w_i)``, ``k_i`` unit ``i``'s distance rank (0: the winner).

    Martinetz & Schulten 1991; Martinetz, Berkovich & Schulten 1993, Eq. 5
    (``epsilon``, ``lambda`` there; usually the schedules
    ``start (stop / start)^(t / t_max)``,
    :class:`~neurosim.schedules.GeometricDecay`). Ranks by the squared
    distances of :class:`~neurosim.dynamics.competitive.BestMatchingUnit`,
    ties to the lower column.

    Parameters
    ----------
    rate : float >= 0
        ``epsilon`` (paper: 0.5 decaying to 0.005).
    lam : float > 0
        ``lambda``, the neighbourhood range in ranks (paper: 10 decaying to 0.01).
    """

    rate = Float(0.5, low=0.0, doc="step size epsilon")
    lam = Float(10.0, low=0.0, low_open=True, doc="neighbourhood range lambda (ranks)")

    def __init__(self, rate=0.5, lam=10.0):
        super().__init__()
        self.set_params(rate=rate, lam=lam)
        self._rank = np.zeros(0)

    def _ranks(self) -> np.ndarray:
        n = self.projection.post.size
        if self._rank.shape != (n,):
            self._rank = np.zeros(n)
        return self._rank

    def update_numpy(self):
        p = self.projection
        t = p.network.t
        d = p.post.state["distance"][0]
        rank = np.empty(d.size)
        rank[np.argsort(d, kind="stable")] = np.arange(d.size)
        g = self.value("rate", t) * np.exp(-rank / self.value("lam", t))
        p.weights += g[:, None] * (p.pre.activity[0][None, :] - p.weights)

    def kernel_call(self):
        p = self.projection
        w, post, pre = self._refs()
        dist = ArrayRef(lambda: p.post.state["distance"], f"{p.post.name}.distance")
        rank = ArrayRef(self._ranks, f"{p.name}.rule.rank")
        return KernelCall(k.neural_gas_update, (w, dist, pre, rank, self.ref("rate"), self.ref("lam")),
                          label=f"{p.name}.rule")
