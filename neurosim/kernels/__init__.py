"""neurosim's numba kernels: pure functions on arrays, called by the engine's segments and by the solvers."""

from neurosim.kernels import _cache

# before any kernel module decorates its functions: their disk cache is stamped with every kernel's source
_cache.install()
