"""Alg. 1 step 14 for an element never used (a_jj = 0), on both paths: ``unused="keep"`` or ``"zero"``.

The dictionary rule's NumPy reference and its kernel get the same A, B and D,
with element 0 never used; ``"zero"`` must give that element 0, ``"keep"``
must keep it (group-shrunk by ``lambda_g`` and projected to the unit ball,
as every element is, Eqs. 15-17), and the two paths must agree.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models.neurogenesis import build_network


def _both_paths(code, proj, rule, A, B, D0):
    """One dictionary step from the same A, B and D on the NumPy reference and on the kernel."""
    out = {}
    for path in ("numpy", "kernel"):
        code.state["A"][...] = A
        proj.arrays["B"][...] = B
        proj.weights[...] = D0
        if path == "numpy":
            rule.update_numpy()
        else:
            assert rule.kernel_call()()
        out[path] = proj.weights.copy()
    return out


@pytest.mark.parametrize("unused", ["keep", "zero"])
@pytest.mark.parametrize("lambda_g", [0.0, 0.1])
def test_an_unused_element_is_kept_or_zeroed_on_both_paths(unused, lambda_g):
    rng = np.random.default_rng(3)
    m, k = 6, 4
    c = build_network(ns.ArrayStream(rng.standard_normal((2, 5, m))), k, "NODL", batch=5, beta_c=2,
                      lambda_g=lambda_g, tol=None, max_sweeps=3, unused=unused, c_k=1)
    proj, code = c.dictionary, c.code
    rule = proj.rule
    a = rng.standard_normal((40, k))
    a[:, 0] = 0.0  # element 0 never used: A[0, 0] = 0, A[0, :] = 0
    A, B = a.T @ a, a.T @ rng.standard_normal((40, m))
    D0 = 0.5 * rng.standard_normal((k, m))  # norms below 1: "keep" is not rescaled by the projection
    D0[0] *= 0.9 / np.linalg.norm(D0[0])
    out = _both_paths(code, proj, rule, A, B, D0)
    np.testing.assert_allclose(out["kernel"], out["numpy"], rtol=1e-12, atol=1e-14)
    if unused == "zero":
        assert not out["numpy"][0].any()
    else:
        # the group shrink (1 - lambda_g / ||d||)_+ takes lambda_g off the norm in each of the 3 sweeps
        np.testing.assert_allclose(np.linalg.norm(out["numpy"][0]), 0.9 - 3 * lambda_g, rtol=1e-12)
        np.testing.assert_allclose(out["numpy"][0] / np.linalg.norm(out["numpy"][0]), D0[0] / 0.9, rtol=1e-12)
    assert out["numpy"][1:].any()


@pytest.mark.parametrize("lambda_g", [0.1, 1.0])
def test_a_kept_element_whose_squared_norm_underflows_is_shrunk_to_zero_on_both_paths(lambda_g):
    """Eq. 16's group shrink ``(1 - lambda_g / ||d||)_+`` of an element of norm ~1e-170 is exactly 0.

    ``||d||^2`` underflows to 0 in float64, so the rule cannot form ``lambda_g / ||d||``; the exact shrink
    is 0 all the same, since ``||d|| < lambda_g``. The element must come out 0, not as it went in.
    """
    rng = np.random.default_rng(5)
    m, k = 6, 4
    c = build_network(ns.ArrayStream(rng.standard_normal((2, 5, m))), k, "NODL", batch=5, beta_c=2,
                      lambda_g=lambda_g, tol=None, max_sweeps=1, unused="keep", c_k=1)
    proj, code = c.dictionary, c.code
    rule = proj.rule
    a = rng.standard_normal((40, k))
    a[:, 0] = 0.0
    A, B = a.T @ a, a.T @ rng.standard_normal((40, m))
    D0 = 0.5 * rng.standard_normal((k, m))
    D0[0] = 1e-170 * rng.standard_normal(m)
    assert D0[0] @ D0[0] == 0.0 and D0[0].any()  # the squared norm underflows, the element does not
    out = _both_paths(code, proj, rule, A, B, D0)
    assert not out["numpy"][0].any() and not out["kernel"][0].any()
