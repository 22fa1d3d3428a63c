"""Within-step activity solvers."""

from neurosim.dynamics.base import Dynamics
from neurosim.dynamics.jacobi import Jacobi, JacobiNotConverged, Linear

__all__ = ["Dynamics", "Jacobi", "Linear", "JacobiNotConverged"]
