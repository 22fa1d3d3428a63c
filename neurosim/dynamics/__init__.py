"""Within-step activity solvers."""

from neurosim.dynamics.base import Dynamics
from neurosim.dynamics.competitive import BestMatchingUnit
from neurosim.dynamics.izhikevich import Izhikevich
from neurosim.dynamics.jacobi import Jacobi, JacobiNotConverged, Linear
from neurosim.dynamics.sparse import SparseCode
from neurosim.dynamics.spiking import LIF, LIFConductance
from neurosim.dynamics.structured import StructuredSparseCode

__all__ = ["Dynamics", "BestMatchingUnit", "Jacobi", "Linear", "JacobiNotConverged", "SparseCode", "StructuredSparseCode",
           "LIF", "LIFConductance", "Izhikevich"]
