"""neurosim's numba kernels: pure functions on arrays, called by the engine's segments and by the solvers."""

from neurosim.kernels import _cache, _inline_copy

# before any kernel module decorates its functions: their disk cache is stamped with every kernel's source
_cache.install()
# numba's inliner copies a callee's variables once per inlining instead of once per block (compile time only)
_inline_copy.install_on_first_compile()
