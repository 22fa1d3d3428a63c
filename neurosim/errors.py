"""Exceptions raised by simulations."""

from __future__ import annotations

__all__ = ["SimulationDiverged"]


class SimulationDiverged(FloatingPointError):
    """NaN or Inf appeared in a state variable, or a solver inside a step failed.

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
    """

    def __init__(self, step: int, variable: str, network=None, others=(), nonfinite: bool = True):
        self.step, self.variable, self.network, self.nonfinite = int(step), variable, network, bool(nonfinite)
        extra = f" (also non-finite: {', '.join(others)})" if others else ""
        what = " contains NaN or Inf" if nonfinite else "; the values are still finite"
        super().__init__(
            f"simulation diverged at step {step}: {variable}{what}{extra}. "
            "The recording up to this step is kept: see .recordings on this error."
        )

    @property
    def recordings(self) -> dict:
        """``{recorder name: xarray.Dataset}`` of everything recorded before the divergence."""
        if self.network is None:
            return {}
        return {name: rec.to_dataset() for name, rec in self.network.recorders.items()}
