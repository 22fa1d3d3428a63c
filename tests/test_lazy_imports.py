"""``import neurosim`` leaves the heavy dependencies out until a feature uses them (issue 40).

xarray (with pandas), networkx, SciPy's submodules, tqdm and matplotlib cost
about half of ``import neurosim`` when imported eagerly; they are imported on
first use (``neurosim/_lazy.py``, the hook in ``neurosim/__init__.py``).
One fresh interpreter imports neurosim, reads every public name, then uses
each deferred dependency once; after each stage it reports which of the heavy
packages are newly in ``sys.modules``. The seconds are measured by
``benchmarks/bench_import.py``, not here.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import neurosim

HEAVY = ("xarray", "pandas", "matplotlib", "zarr", "dask", "networkx", "scipy", "sklearn", "tqdm", "h5netcdf")

# numba is imported first and what it imports does not count: numba itself (kept: every kernel is @njit at import)
# imports the bare scipy package to check its version; scipy.linalg & co. would count, as top-level "scipy"
SCRIPT = textwrap.dedent("""
    import json, sys
    import numba
    seen = set(sys.modules)
    stages = {}

    def stage(name, value=None):
        new = {m.split(".")[0] for m in set(sys.modules) - seen} & set(HEAVY)
        seen.update(sys.modules)
        stages[name] = {"imported": sorted(new), "value": value}

    import numpy as np
    import neurosim as ns
    stage("import neurosim")
    for name in ns.__all__:
        getattr(ns, name)
    stage("every public name")
    g = ns.GroupStructure.from_parents([-1, 0, 0, 1])            # networkx: the tree's descendants
    stage("tree groups", [g.indptr.tolist(), g.indices.tolist()])
    X, A = np.arange(6.0).reshape(3, 2), np.eye(3)             # scipy.linalg: a Cholesky solve
    stage("Lagrange dual", ns.coding.lagrange_dual_objective(X, A, np.ones(3), c=1.0))
    net = ns.Network(seed=0)
    x = ns.Population("x", 2)
    net.add(x)
    net.connect(ns.ArrayStream(np.arange(8.0).reshape(4, 2)), x)
    net.record(x, "activity")
    net.run(4, backend="python")                               # tqdm: the progress bar (disabled)
    stage("run")
    ds = net.recorders["x"].to_dataset()                       # xarray
    stage("to_dataset", [type(ds).__module__.split(".")[0], list(ds.activity.dims),
                         ds.activity.isel(batch=0).values.tolist()])
    plot = ns.plot                                             # the submodule; matplotlib on its first figure
    stage("ns.plot", plot.__name__)
    ax = plot.tiles(np.eye(4))
    stage("plot.tiles", type(ax).__module__.split(".")[0])
    print(json.dumps(stages))
""")


@pytest.fixture(scope="module")
def stages():
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + SCRIPT], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


@pytest.mark.slow  # a subprocess
def test_import_neurosim_and_its_public_names_import_no_heavy_dependency(stages):
    assert stages["import neurosim"]["imported"] == []
    assert stages["every public name"]["imported"] == []


@pytest.mark.slow  # a subprocess
def test_each_deferred_dependency_is_imported_by_its_first_use(stages):
    assert "networkx" in stages["tree groups"]["imported"]
    assert "scipy" in stages["Lagrange dual"]["imported"]
    assert "tqdm" in stages["run"]["imported"]
    assert {"xarray", "pandas"} <= set(stages["to_dataset"]["imported"])
    # reading ns.plot imports the module; matplotlib waits for the first figure
    assert stages["ns.plot"]["imported"] == []
    assert "matplotlib" in stages["plot.tiles"]["imported"]


@pytest.mark.slow  # a subprocess
def test_the_deferred_uses_give_what_they_gave_before(stages):
    # parents [-1, 0, 0, 1]: each unit's group is itself and its descendants, {0,1,2,3}, {1,3}, {2}, {3}
    assert stages["tree groups"]["value"] == [[0, 4, 6, 7, 8], [0, 1, 2, 3, 1, 3, 2, 3]]
    # Eq. 8 by hand: tr(X^T X) = 0+1+...+25 = 55, G = I, (G + I)^-1 = I/2, tr(X^T X)/2 = 27.5, c sum(dual) = 3
    assert stages["Lagrange dual"]["value"] == pytest.approx(55.0 - 27.5 - 3.0, rel=1e-12)
    # the recorded input is the stream's rows, one per step
    assert stages["to_dataset"]["value"] == ["xarray", ["time", "batch", "unit"], [[0, 1], [2, 3], [4, 5], [6, 7]]]
    assert stages["ns.plot"]["value"] == "neurosim.plot"
    assert stages["plot.tiles"]["value"] == "matplotlib"


def test_submodules_are_attributes_on_first_read():
    # the hook itself (this process may have imported them already: the subprocess above reads ns.plot fresh)
    assert neurosim.__getattr__("analysis") is sys.modules["neurosim.analysis"]
    assert neurosim.__getattr__("io") is sys.modules["neurosim.io"]


def test_a_name_that_is_no_submodule_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'neurosim' has no attribute 'plott'"):
        neurosim.plott
    with pytest.raises(AttributeError, match="no attribute '_lazy_private'"):
        neurosim._lazy_private
    with pytest.raises(ImportError, match="cannot import name 'Netwrk'"):
        from neurosim import Netwrk  # noqa: F401
