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
with a stamp that adds :func:`kernel_sources_digest` of their file: a change
to any kernel module the file imports, directly or through others, or to the
inlining choice compiles them anew; a change elsewhere in
``neurosim/kernels`` does not. Functions
defined elsewhere (a user's ``local_rule``, generated segments, which carry
the digest in their own source) keep numba's stamp. The hook is numba's list
of cache locators (``CacheImpl._locator_classes``, not a public API; the
same in numba 0.59 and 0.68), installed when ``neurosim.kernels`` is first
imported, before any kernel is decorated.
"""

import ast
import hashlib
from functools import lru_cache
from pathlib import Path

from numba.core import caching

_PACKAGE = Path(__file__).resolve().parents[1]
_KERNELS = Path(__file__).resolve().parent
#: the package whose modules are the kernels (``from neurosim.kernels.X import ...``)
_KERNELS_PACKAGE = "neurosim.kernels"


@lru_cache(maxsize=None)
def _kernel_imports(path: Path) -> frozenset:
    """The kernel modules that the source file ``path`` imports anywhere in it (``neurosim.kernels.X``)."""
    names = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        module = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
        if isinstance(node, ast.ImportFrom) and module == _KERNELS_PACKAGE:
            names += [alias.name for alias in node.names]  # from neurosim.kernels import sparse
        elif isinstance(node, ast.ImportFrom) and module.startswith(_KERNELS_PACKAGE + "."):
            names.append(module.split(".")[-1])
        elif isinstance(node, ast.Import):
            names += [alias.name.split(".")[-1] for alias in node.names
                      if alias.name.startswith(_KERNELS_PACKAGE + ".")]
    return frozenset(p for name in names if (p := _KERNELS / f"{name}.py").is_file())


@lru_cache(maxsize=None)
def kernel_sources_digest(path: Path | None = None) -> str:
    """Hash of the kernel modules ``path`` imports, transitively (all of them if None), and of the inlining choice.

    ``NEUROSIM_INLINE_KERNELS`` is included: inlined and called kernels are different machine code.
    """
    from neurosim.kernels._build import INLINE

    if path is None:
        files = set(_KERNELS.glob("*.py"))
    else:
        files, todo = set(), [path]
        while todo:
            if (file := todo.pop()) not in files:
                files.add(file)
                todo.extend(_kernel_imports(file))
    digest = hashlib.sha1(f"inline={INLINE}".encode())
    for file in sorted(files):
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


class KernelSourcesLocator(caching._CacheLocator):
    """numba's locator for a function in neurosim's files, its source stamp extended by its kernels' digest."""

    def __init__(self, locator, path):
        self._locator = locator
        self._path = path
        # numba names the file when it warns that a function cannot be cached (e.g. under NUMBA_OPT=0, where
        # its machine code refers to dynamic globals); without it that warning raised AttributeError
        self._py_file = getattr(locator, "_py_file", str(path))

    def ensure_cache_path(self):
        self._locator.ensure_cache_path()

    def get_cache_path(self):
        return self._locator.get_cache_path()

    def get_disambiguator(self):
        return self._locator.get_disambiguator()

    def get_source_stamp(self):
        return self._locator.get_source_stamp(), kernel_sources_digest(self._path)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            path = Path(py_file).resolve()
            if not (path.is_relative_to(_PACKAGE) and path.is_file()):
                return None
        except (OSError, ValueError):  # a placeholder name ("<string>") or an unreadable path
            return None
        for other in caching.CacheImpl._locator_classes:
            if other is not cls and (locator := other.from_function(py_func, py_file)) is not None:
                return cls(locator, path)
        return None


def install() -> None:
    """Put :class:`KernelSourcesLocator` first in numba's list of cache locators (once per process)."""
    classes = caching.CacheImpl._locator_classes
    if KernelSourcesLocator not in classes:
        classes.insert(0, KernelSourcesLocator)
