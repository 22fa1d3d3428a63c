"""Package discovery for setuptools (all other metadata is in pyproject.toml).

``models/`` and ``simulations/`` live beside ``neurosim/`` but install as
``neurosim.models`` and ``neurosim.simulations``.  ``[tool.setuptools.packages.find]``
cannot express that: it names packages relative to the searched folder, so
``models/similarity_matching`` would come out as a top-level
``similarity_matching``.  Here every folder with an ``__init__.py`` under the
three roots is found and prefixed with its root's package name, so a new
subpackage cannot be left out of a wheel (tests/test_packaging.py builds one).
"""

from setuptools import find_packages, setup

PACKAGE_DIR = {"neurosim": "neurosim", "neurosim.models": "models", "neurosim.simulations": "simulations"}


def _packages():
    names = []
    for package, folder in PACKAGE_DIR.items():
        names.append(package)
        names += [f"{package}.{sub}" for sub in find_packages(folder)]
    return sorted(names)


setup(package_dir=PACKAGE_DIR, packages=_packages())
