"""neurosim: time-step simulation of neural circuits with local plasticity.

Populations of units and plastic projections are explicit entities; a
network runs them in a fixed per-step schedule (input, dynamics,
plasticity, events, record), in compiled segments when every component has
a numba kernel. See ``docs/architecture.md``.

The public names are those of ``neurosim.__all__`` (``import neurosim as
ns``; ``ns.Network``), which ``help(neurosim)`` lists under CLASSES and
FUNCTIONS, and the modules the API reference documents (``neurosim.plot``,
``neurosim.estimators``, ``neurosim.models``, ...). Under PACKAGE CONTENTS
``help()`` lists every module file of the package, as it does for any
package: ``_validation`` (the argument checks), ``_lazy`` (dependencies
imported on first use) and ``__main__`` (what ``python -m neurosim`` runs)
are internal, not part of the API.
"""

from neurosim import connectivity, params, schedules
from neurosim.component import Component
from neurosim.connectivity import AllToAll, FixedInDegree, FixedOutDegree, FixedProbability, FromIndices
from neurosim.dynamics import LIF, BestMatchingUnit, Dynamics, Izhikevich, LIFConductance, Jacobi, JacobiNotConverged, Linear, SparseCode, StructuredSparseCode
from neurosim.engine import PerStepWarning
from neurosim.errors import SimulationDiverged
from neurosim.events import Assign, Birth, Death, EventLog, Link, Trigger, Unlink
from neurosim.ensemble import Ensemble
from neurosim.experiment import Sweep
from neurosim.groups import GroupStructure
from neurosim.network import PHASES, Network
from neurosim.population import Population
from neurosim.recording import Recorder
from neurosim.rules import (BCM, CumulativeActivity, Delta, Foldiak, Hebbian, LocalRule, NormalizedHebbian, Oja, OjaSubspace,
                            OnPre, Rule, Sanger, STDP, TraceRule, TripletSTDP, UnitRule, local_rule,
                            trace_rule)
from neurosim.signals import Signal, SquaredNorm, Unity
from neurosim.structural_plasticity import Grow, GrowSynapses, Prune, PruneSynapses
from neurosim.streams import (ArrayStream, BernoulliMaskStream, ChunkedRandomStream, GaussianStream, ObservedStream,
                              PoissonStream, SpikeTimeStream, Stream, SwitchingStream)
from neurosim.synapses import Constant, Normal, Projection, Uniform
from neurosim.threads import get_num_threads, max_threads, num_threads, set_num_threads

__version__ = "0.1.0"

__all__ = [
    "Network", "PHASES", "Population", "Projection", "Normal", "Uniform", "Constant",
    "connectivity", "AllToAll", "FixedProbability", "FixedInDegree", "FixedOutDegree", "FromIndices",
    "Dynamics", "BestMatchingUnit", "Jacobi", "Linear", "SparseCode", "StructuredSparseCode", "GroupStructure", "Rule",
    "UnitRule", "Hebbian", "Oja", "NormalizedHebbian", "Sanger", "OjaSubspace", "BCM", "Foldiak", "Delta",
    "CumulativeActivity", "Signal", "SquaredNorm", "Unity", "Birth", "Death", "Link", "Unlink", "Assign", "Trigger", "EventLog",
    "Prune", "Grow", "PruneSynapses", "GrowSynapses",
    "Recorder", "Stream", "ChunkedRandomStream", "ArrayStream", "GaussianStream", "SwitchingStream", "BernoulliMaskStream",
    "ObservedStream",
    "SimulationDiverged", "JacobiNotConverged", "PerStepWarning", "Component", "LocalRule", "local_rule",
    "params", "schedules", "Sweep", "Ensemble", "set_num_threads", "get_num_threads", "num_threads", "max_threads",
    "LIF", "LIFConductance", "Izhikevich", "OnPre", "STDP", "TripletSTDP", "TraceRule", "trace_rule", "PoissonStream", "SpikeTimeStream",
]

from neurosim.threads import _from_environment  # noqa: E402

_from_environment()
del _from_environment


# -- submodules imported on first access (issue 40) -----------------------------------------------------------------
# ``import neurosim`` imports only what the names above need; any other public submodule (``ns.plot``, ``ns.io``,
# ``ns.store``, ``ns.analysis``, ``ns.models``, ...) is imported when first read as an attribute (PEP 562), so it
# works without ``import neurosim.plot`` and its dependencies (matplotlib, zarr, ...) are paid for only then. Hidden
# from the type checker, which would otherwise type every misspelt ``ns.Name`` as the hook's result. No __dir__
# lists the submodules not yet imported: tools that read every name dir() gives (pydoc, inspect.getmembers) would
# import them all, and fail where one's optional dependency is missing.
from typing import TYPE_CHECKING  # noqa: E402

if not TYPE_CHECKING:
    def __getattr__(name):
        """Import the public submodule ``neurosim.<name>`` on first access (``ns.plot``, ``ns.io``, ...)."""
        if not name.startswith("_"):
            import importlib

            try:
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{__name__}.{name}":
                    raise  # the submodule exists but a dependency of it is missing: that is the error to show
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
del TYPE_CHECKING
