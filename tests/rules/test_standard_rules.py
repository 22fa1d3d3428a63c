"""The standard local rules: one step against their equations, and each against an oracle."""

import numpy as np
import pytest
from numba import njit

from neurosim.rules import standard


# --------------------------------------------------------------------------- #
# one step of each function against its equation, in NumPy
# --------------------------------------------------------------------------- #
def _formula(name, W, Y, X, extra):
    B = Y.shape[0]
    if name == "sanger":
        (rate,) = extra
        return W + rate / B * (Y.T @ X - np.tril(Y.T @ Y) @ W), ()
    if name == "oja_subspace":
        (rate,) = extra
        return W + rate / B * (Y.T @ X - (Y.T @ Y) @ W), ()
    if name == "bcm":
        theta, rate, tau_rate, nonnegative = extra
        new = W + rate / B * ((Y * (Y - theta)).T @ X)
        if nonnegative:
            new = np.maximum(new, 0.0)
        return new, (theta + ((Y * Y).mean(axis=0) - theta) * tau_rate,)
    if name == "foldiak":
        rate, p = extra
        return W + rate * (Y.T @ X / B - p * p), ()
    if name == "delta":
        (rate,) = extra
        return W + rate / B * (Y.T @ (X - Y @ W)), ()
    raise AssertionError(name)


CASES = {
    "sanger": lambda rng, n: (0.03,),
    "oja_subspace": lambda rng, n: (0.03,),
    "bcm": lambda rng, n: (rng.uniform(0.5, 2.0, n), 0.03, 0.2, False),
    "bcm_nonnegative": lambda rng, n: (rng.uniform(0.5, 2.0, n), 0.3, 0.2, True),
    "foldiak": lambda rng, n: (0.03, 0.3),
    "delta": lambda rng, n: (0.03,),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("compiled", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("batch", [1, 5])
def test_one_step_is_the_equation(case, compiled, batch):
    name = case.split("_nonnegative")[0]
    fn = getattr(standard, name)
    if compiled:
        fn = njit(fn)
    rng = np.random.default_rng(7)
    n_post, n_pre = 3, 7
    W = rng.standard_normal((n_post, n_pre))
    Y = rng.standard_normal((batch, n_post))
    X = rng.standard_normal((batch, n_pre))
    extra = CASES[case](rng, n_post)
    want_w, want_vars = _formula(name, W, Y, X, extra)
    got_vars = tuple(np.array(e) if isinstance(e, np.ndarray) else e for e in extra)
    fn(W, Y, X, *got_vars)
    np.testing.assert_allclose(W, want_w, rtol=1e-12, atol=1e-14)
    for got, want in zip(got_vars, want_vars):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    if case == "bcm_nonnegative":
        assert (W == 0.0).any() and (W >= 0.0).all()  # the clip acted
