"""Hypothesis budgets for the suite: a ``ci`` profile (each test's own count) and a quicker ``dev`` one.

A test states how many examples it needs as ``@settings(max_examples=examples(60))``;
``NEUROSIM_HYPOTHESIS_PROFILE`` picks the profile (``ci`` unless set, so the
README's ``python -m pytest`` and CI run every test at its full count; ``dev``
runs a fifth of each, at least 5, for the loop while editing). A module of its
own name, not ``conftest``: test modules import it by name.
"""

import os

from hypothesis import settings

PROFILES = {"ci": 1.0, "dev": 0.2}
#: the profile in force (read when the suite starts)
NAME = os.environ.get("NEUROSIM_HYPOTHESIS_PROFILE", "ci")
if NAME not in PROFILES:
    raise ValueError(f"NEUROSIM_HYPOTHESIS_PROFILE must be one of {sorted(PROFILES)}; got {NAME!r}")


def examples(n: int) -> int:
    """``n`` examples under the ``ci`` profile, a fifth of them (at least 5) under ``dev``."""
    return n if NAME == "ci" else max(5, round(n * PROFILES[NAME]))


def load():
    """Register both profiles and load the chosen one (for tests that take hypothesis' defaults)."""
    settings.register_profile("ci", deadline=None, print_blob=True)
    settings.register_profile("dev", deadline=None, max_examples=examples(100))
    settings.load_profile(NAME)
