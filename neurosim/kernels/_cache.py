"""numba's disk cache for neurosim's kernels, stamped with every kernel's source.

numba stamps a cached function with its own source file only. neurosim's
kernels call kernels of other modules (and, in the default build, inline
them), so an edited callee left its callers' cached machine code in use:
stale numbers, or a crash where an argument's meaning changed (a segfault in
``jacobi_relax`` after a kernel it calls changed, with ``dense.py`` itself
untouched). A pip upgrade rewrites every file and was safe; an editable
install that changes one kernel module was not.

Functions defined in neurosim's own files are therefore cached under numba's
usual locator (``NUMBA_CACHE_DIR`` or ``__pycache__``, as numba would choose)
with a stamp that adds :func:`kernel_sources_digest`: any change to
``neurosim/kernels`` or to the inlining choice compiles them anew. Functions
defined elsewhere (a user's ``local_rule``, generated segments, which carry
the digest in their own source) keep numba's stamp. The hook is numba's list
of cache locators (``CacheImpl._locator_classes``, not a public API; the
same in numba 0.59 and 0.68), installed when ``neurosim.kernels`` is first
imported, before any kernel is decorated.
"""

import hashlib
from functools import lru_cache
from pathlib import Path

from numba.core import caching

_PACKAGE = Path(__file__).resolve().parents[1]
_KERNELS = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def kernel_sources_digest() -> str:
    """Hash of ``neurosim/kernels/*.py`` and of whether kernels are inlined (``NEUROSIM_INLINE_KERNELS``)."""
    from neurosim.kernels._build import INLINE

    digest = hashlib.sha1(f"inline={INLINE}".encode())
    for path in sorted(_KERNELS.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class KernelSourcesLocator(caching._CacheLocator):
    """numba's locator for a function in neurosim's files, its source stamp extended by the kernels' digest."""

    def __init__(self, locator):
        self._locator = locator

    def ensure_cache_path(self):
        self._locator.ensure_cache_path()

    def get_cache_path(self):
        return self._locator.get_cache_path()

    def get_disambiguator(self):
        return self._locator.get_disambiguator()

    def get_source_stamp(self):
        return self._locator.get_source_stamp(), kernel_sources_digest()

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            if not Path(py_file).resolve().is_relative_to(_PACKAGE):
                return None
        except (OSError, ValueError):  # a placeholder name ("<string>") or an unreadable path
            return None
        for other in caching.CacheImpl._locator_classes:
            if other is not cls and (locator := other.from_function(py_func, py_file)) is not None:
                return cls(locator)
        return None


def install() -> None:
    """Put :class:`KernelSourcesLocator` first in numba's list of cache locators (once per process)."""
    classes = caching.CacheImpl._locator_classes
    if KernelSourcesLocator not in classes:
        classes.insert(0, KernelSourcesLocator)
