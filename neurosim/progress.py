"""Whether a call shows progress: the one rule behind every ``progress=`` argument (issue 40).

``Network.run``, the paper circuits' ``run`` and ``Sweep.run`` take
``progress=None`` by default, which means *auto*: a tqdm bar (with the
"compiling segment…" phase of a first run) when someone is watching -- the
standard error stream is a terminal, or the code runs in a Jupyter or IPython
kernel -- and silence otherwise (scripts whose output goes to a file, CI,
workers of a sweep), as users of a batch job expect. ``True`` or ``False``
decide for the call. The environment variable ``NEUROSIM_PROGRESS`` (``1`` or
``0``) decides for every call left on auto, e.g. ``NEUROSIM_PROGRESS=1`` to
see the bars of a script whose output is redirected.

Whatever the bar shows also goes to the ``neurosim`` logger at INFO (a
segment compiling, how long it took, a sweep's runs):
``logging.basicConfig(level=logging.INFO)`` prints it where no bar is shown.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from neurosim._validation import check_bool

#: the environment variable that decides for every ``progress=None`` call
ENV = "NEUROSIM_PROGRESS"

_state = threading.local()


@contextlib.contextmanager
def quiet():
    """Within this block (in this thread), calls left on auto show no progress.

    A sweep runs its points inside it: one bar over the sweep's runs, none for
    the run of each point (whose worker may share the sweep's terminal).
    ``progress=True`` still shows a bar.
    """
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def interactive() -> bool:
    """Whether someone is watching: standard error is a terminal, or the code runs in an IPython/Jupyter kernel.

    Returns
    -------
    bool
        True in a terminal or a notebook; False when standard error goes to
        a file or a pipe (batch jobs, CI, sweep workers).
    """
    if "ipykernel" in sys.modules or ("IPython" in sys.modules and _in_ipython()):
        return True
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def _in_ipython() -> bool:
    get = getattr(sys.modules.get("IPython"), "get_ipython", None)
    return get is not None and get() is not None


def resolve(progress: bool | None, name: str = "progress") -> bool:
    """The ``progress=`` argument of a call as a bool: ``None`` is auto (see the module docstring).

    Parameters
    ----------
    progress : bool or None
        ``True``/``False`` decide; ``None`` is False inside :func:`quiet`,
        else follows ``NEUROSIM_PROGRESS`` when it is set, else
        :func:`interactive`.
    name : str, default="progress"
        The argument's name in error messages.

    Returns
    -------
    bool
        Whether to show progress.

    Raises
    ------
    TypeError
        ``progress`` is neither a bool nor None.
    ValueError
        ``NEUROSIM_PROGRESS`` is set to something other than 0 or 1.

    Examples
    --------
    >>> from neurosim.progress import resolve
    >>> resolve(True), resolve(False)
    (True, False)
    """
    if progress is not None:
        return check_bool(name, progress)
    if getattr(_state, "depth", 0):
        return False
    value = os.environ.get(ENV, "")
    if value == "":
        return interactive()
    if value not in ("0", "1"):
        raise ValueError(f"{ENV} must be 0 or 1 (or unset: a bar when standard error is a terminal); got {value!r}")
    return value == "1"
