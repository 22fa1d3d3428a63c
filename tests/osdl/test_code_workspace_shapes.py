"""The code population's compiled step at every shape of Table 2's two paths, against the function.

``StructuredSparseCode`` allocates one workspace for every path its kernel
may take within a run: Table 2's direct Cholesky (``k <= |O|`` or
``kappa = 0``), its Woodbury form (``k > |O|``), and FISTA. With missing
observations the path changes from sample to sample, and the Woodbury form
can need the larger workspace even where ``k <= n_features`` (an
undercomplete dictionary whose samples observe fewer than ``k``
coordinates). The oracle is :func:`neurosim.coding.structured_sparse_code`,
which sizes its own workspace for the problem it is given.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.coding import structured_sparse_code
from neurosim.models import osdl

# Full suite only (the slow tier): an OSDL circuit compiled per shape (9 s of a cold quick tier);
# the quick tier stays a quick check of an edit.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("k,m,n_obs,solver", [
    (9, 20, 5, "table2"),   # undercomplete, every sample on the Woodbury path
    (9, 20, 14, "table2"),  # undercomplete, direct path
    (16, 6, 6, "table2"),   # overcomplete, fully observed: Woodbury
    (9, 20, 5, "fista"),    # FISTA on singleton groups (its prox is exact)
    (9, 20, 5, "auto"),
])
def test_the_networks_codes_are_the_functions_at_either_paths_shapes(k, m, n_obs, solver):
    R, kappa = 4, 0.05
    rng = np.random.default_rng(k * 100 + m + n_obs)
    X = rng.standard_normal((3 * R, m))
    M = np.zeros((3 * R, m))
    for row in M:
        row[rng.choice(m, n_obs, replace=False)] = 1.0
    W0 = rng.standard_normal((k, m))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    groups = [[j] for j in range(k)]
    # (steps, batch, features): each step is one mini-batch of R samples
    c = osdl.build_network(ns.ArrayStream(X.reshape(3, R, m)), k, groups=groups, kappa=kappa, masks=ns.ArrayStream(M.reshape(3, R, m)), batch=R,
                           init=W0, code_iter=2000, code_tol=1e-8, solver=solver)
    c.network.run(1)  # the step's codes come from the initial dictionary; the rule changes it after
    want = structured_sparse_code(X[:R], W0, groups, kappa, observed=M[:R], n_iter=2000, tol=1e-8, solver=solver)
    assert np.abs(want).max() > 0.0  # a nonzero code: the data term is read
    np.testing.assert_allclose(c.code.activity, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("k,m", [(16, 6), (9, 20)])
def test_a_kappa_scheduled_through_zero_in_one_segment_codes_each_step_as_the_function(k, m):
    # kappa = 0 switches the kernel to the direct solve, whose factor is k x k: the workspace allocated at the
    # segment's start must hold it although the first step ran at kappa > 0
    R, steps = 3, 4
    rng = np.random.default_rng(k + m)
    X = rng.standard_normal((steps, R, m))
    M = (rng.random((steps, R, m)) < 0.6).astype(float)
    M[..., 0] = 1.0
    W0 = rng.standard_normal((k, m))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    kappas = {0: 0.05, 2: 0.0, 3: 0.1}
    c = osdl.build_network(ns.ArrayStream(X), k, kappa=0.05, masks=ns.ArrayStream(M), batch=R, init=W0,
                           code_iter=2000, code_tol=1e-8, solver="table2")
    c.code.dynamics.kappa = ns.schedules.Piecewise(kappas)
    c.network.record(c.code, "activity")
    c.network.record(c.dictionary, "weights")
    c.network.run(steps)
    codes = c.network.recorders["code"].to_dataset().activity.values
    weights = c.network.recorders["D"].to_dataset().weights.values
    for t in range(1, steps + 1):
        kappa = kappas[max(s for s in kappas if s <= t)]  # Piecewise: the latest key <= t
        W = W0 if t == 1 else weights[t - 2]
        want = structured_sparse_code(X[t - 1], W, c.groups, kappa, observed=M[t - 1], n_iter=2000, tol=1e-8,
                                      solver="table2")
        np.testing.assert_allclose(codes[t - 1], want, rtol=1e-9, atol=1e-12, err_msg=f"step {t}")
