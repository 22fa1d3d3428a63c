"""Third-party modules imported on first use, so that ``import neurosim`` does not pay for them (issue 40).

xarray (with pandas), networkx and SciPy together took about half of
``import neurosim`` (0.5 s of 1.0-1.5 s), though a network that records
nothing, has no graph and codes nothing never touches them. A module that
needs one binds it as a global that imports it on first attribute access,
so its code reads as before (``xr.Dataset(...)``, ``nx.DiGraph()``,
``linalg.cho_factor(...)``) and tests can still monkeypatch the global::

    from typing import TYPE_CHECKING

    from neurosim._lazy import lazy_module

    if TYPE_CHECKING:  # the type checker sees the real module
        import xarray as xr
    else:
        xr = lazy_module("xarray")

``tests/test_lazy_imports.py`` checks that ``import neurosim`` leaves these
modules out of ``sys.modules``; ``benchmarks/bench_import.py`` measures the
seconds.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


def _imported(name: str) -> types.ModuleType:
    # sys.modules first: the import machinery costs a few microseconds even for an imported module
    module = sys.modules.get(name)
    return module if module is not None else importlib.import_module(name)


class _LazyModule(types.ModuleType):
    """A stand-in for the module named ``name`` that imports it on the first attribute read.

    Every read is forwarded to the module in ``sys.modules`` (nothing is
    copied), so a monkeypatched attribute of the real module is seen here
    too; the forwarding costs a microsecond or two a read, nothing next to
    the calls it leads to.
    """

    def __getattr__(self, attr: str) -> Any:
        # called for every name not in the stand-in's own __dict__ (its module attributes)
        return getattr(_imported(self.__name__), attr)

    def __dir__(self) -> list[str]:
        return dir(_imported(self.__name__))

    def __repr__(self) -> str:
        return f"<lazily imported module {self.__name__!r}>"


def lazy_module(name: str) -> types.ModuleType:
    """Return a stand-in for module ``name`` that imports it on first attribute access.

    Parameters
    ----------
    name : str
        The module's absolute name, for example ``"xarray"`` or ``"scipy.linalg"``.

    Returns
    -------
    types.ModuleType
        A module object whose attributes are those of ``name``; reading the
        first one imports ``name`` (an ``ImportError`` surfaces then, not here).

    Examples
    --------
    >>> import sys
    >>> from neurosim._lazy import lazy_module
    >>> json = lazy_module("json")
    >>> json.dumps([1, 2])
    '[1, 2]'
    >>> "json" in sys.modules
    True
    """
    return _LazyModule(name)
