"""Random births and deaths keep the dictionary's bookkeeping consistent (property test)."""

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import neurosim as ns
from neurosim.models.neurogenesis import build_network

M, BATCH = 10, 8


def _circuit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40 * BATCH, M))
    c = build_network(ns.ArrayStream(X.reshape(40, BATCH, M)), 5, "ODL", batch=BATCH, beta_c=2, seed=1)
    return c, X


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(st.tuples(st.booleans(), st.integers(1, 3), st.integers(0, 10**6)), min_size=1, max_size=8))
def test_random_births_and_deaths_keep_a_b_d_and_recordings_aligned(events):
    c, X = _circuit()
    net, code, D = c.network, c.code, c.dictionary
    for birth, n, pick in events:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            net.run(1)
        if birth:
            net.apply(ns.Birth(code, n))
        elif code.size > 2 + n:  # the encoder needs beta_c = 2 elements
            ids = code.ids[np.random.default_rng(pick).choice(code.size, n, replace=False)]
            net.apply(ns.Death(code, ids))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.run(1)
    A, B = code.state["A"], D.arrays["B"]
    assert A.shape == (code.size, code.size) and B.shape == D.weights.shape == (code.size, M)
    np.testing.assert_allclose(A, A.T, rtol=0, atol=1e-12 * max(1.0, np.abs(A).max()))
    assert np.linalg.eigvalsh(A).min() >= -1e-9 * max(1.0, np.abs(A).max())
    # A and B are the sums over the recorded codes of the units alive now, matched by id
    ds = net.recorders["code"].to_dataset(layout="dense")
    a = np.nan_to_num(ds.activity.sel(unit=code.ids).values)  # (time, batch, unit)
    x = X.reshape(40, BATCH, M)[: net.t]
    np.testing.assert_allclose(A, np.einsum("tbi,tbj->ij", a, a), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(B, np.einsum("tbi,tbf->if", a, x), rtol=1e-10, atol=1e-10)
    # the recording is NaN exactly where the event log says a unit was not alive: events applied after
    # step s (between runs) are logged at s, so a unit born at s is recorded from s + 1 on and one killed at s
    # was last recorded at s
    log = net.event_log
    for u in ds.unit.values:
        born = [s for s, k, v in zip(log.step, log.kind, log.unit) if v == u and k == "birth"]
        died = [s for s, k, v in zip(log.step, log.kind, log.unit) if v == u and k == "death"]
        start = born[0] if born else 0
        end = died[0] if died else net.t
        alive = (ds.time.values > start) & (ds.time.values <= end)
        np.testing.assert_array_equal(np.isfinite(ds.activity.sel(unit=u).values[:, 0]), alive, err_msg=f"unit {u}")
