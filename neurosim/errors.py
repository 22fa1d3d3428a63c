"""Exceptions raised by simulations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

    from neurosim.network import Network

__all__ = ["SimulationDiverged"]


class SimulationDiverged(FloatingPointError):
    """NaN or Inf appeared in a state variable, or a solver inside a step failed.

    Raised by :meth:`neurosim.Network.run` (and :meth:`neurosim.Ensemble.run`);
    the network stays at the last completed step.

    Parameters
    ----------
    step : int
        The step at which the failure was detected, ``>= 0``.
    variable : str
        The state variable, ``"<entity>.<variable>"``, optionally followed by
        the reason a solver gave.
    network : neurosim.Network or None, optional
        The network that stopped; ``None`` when there is none to point to.
    others : sequence of str, optional
        Further variables that were non-finite at the same step (named in the
        message).
    nonfinite : bool, optional
        Whether ``variable`` holds NaN or Inf (default) or a solver failed on
        finite values.

    Attributes
    ----------
    step : int
        The step (1-based count of completed steps) at which it was detected.
    variable : str
        The state variable, as ``"<entity>.<variable>"``; when the values are
        finite but a solver failed, followed by the reason, e.g.
        ``"y.activity (Jacobi iteration not contracting)"``.
    network : neurosim.Network
        The network, stopped at that step; its recorders hold every sample
        taken before the divergence (``network.recorders``).
    nonfinite : bool
        True when ``variable`` holds NaN or Inf; False when its values are
        finite and a solver reported the failure.
    member : int or None
        In an :class:`~neurosim.Ensemble`, the index of the member network that
        diverged; ``None`` for a network run alone.
    """

    member: int | None = None

    def __init__(self, step: int, variable: str, network: Network | None = None, others: Sequence[str] = (),
                 nonfinite: bool = True) -> None:
        self.step, self.variable, self.network, self.nonfinite = int(step), variable, network, bool(nonfinite)
        extra = f" (also non-finite: {', '.join(others)})" if others else ""
        what = " contains NaN or Inf" if nonfinite else "; the values are still finite"
        super().__init__(
            f"simulation diverged at step {step}: {variable}{what}{extra}. "
            "The recording up to this step is kept: see .recordings on this error."
        )

    @property
    def recordings(self) -> dict[str, xr.Dataset]:
        """``{recorder name: xarray.Dataset}`` of everything recorded before the divergence."""
        if self.network is None:
            return {}
        return {name: rec.to_dataset() for name, rec in self.network.recorders.items()}
