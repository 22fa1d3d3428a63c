"""The paper-000 circuit on the engine: bookkeeping, paths, births and deaths as events."""

import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr

import neurosim as ns
from neurosim.kernels.dictionary import block_coordinate_descent, prox_count, reconstruction_accuracy
from neurosim.models.neurogenesis import build_network, births_for
from neurosim.rules.dictionary import prox_count_numpy


def two_domains(m=16, n_per=240, batch=20, seed=0):
    """Two domains whose samples have disjoint supports (first / second half of the coordinates)."""
    rng = np.random.default_rng(seed)
    half = m // 2
    out = []
    for q in (0, 1):
        basis = np.zeros((m, 6))
        basis[q * half:(q + 1) * half] = rng.standard_normal((half, 6))
        codes = rng.standard_normal((6, n_per)) * (rng.random((6, n_per)) < 0.5)
        out.append((basis @ codes).T)
    X = np.concatenate(out)
    X[np.all(X == 0, axis=1), 0] = 1.0  # no all-zero sample
    return ns.ArrayStream(X.reshape(-1, batch, m)), X


def circuit(variant="NODL", steps=None, backend="auto", **kw):
    stream, X = two_domains()
    opts = dict(batch=20, beta_c=3, gamma=0.95, c_k=8, lambda_g=1.0, seed=3)
    opts.update(kw)
    c = build_network(stream, 4, variant, **opts)
    if steps:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ns.coding.NonConvergenceWarning) if hasattr(ns, "coding") else None
            c.network.run(steps, backend=backend)
    return c, X


def test_births_and_deaths_happen_and_are_logged():
    c, _ = circuit("NODL", steps=24)
    log = c.network.event_log
    kinds = set(log.kind)
    assert kinds == {"birth", "death"}
    born = [u for k, u in zip(log.kind, log.unit) if k == "birth"]
    dead = [u for k, u in zip(log.kind, log.unit) if k == "death"]
    alive = set(range(4)) | set(born)
    alive -= set(dead)
    assert sorted(alive) == c.code.ids.tolist()
    # every alive element has a nonzero norm (the zeroed ones left by Death)
    assert np.all(np.linalg.norm(c.dictionary.weights, axis=1) > 0)


@pytest.mark.parametrize("variant", ["NODL", "NODL+", "NODL-", "ODL", "ODL*"])
def test_memory_matrices_are_the_sums_over_the_recorded_codes(variant):
    c, X = circuit(variant, steps=24)
    ds = c.network.recorders["code"].to_dataset(layout="dense")
    a = np.nan_to_num(ds.activity.values)  # (time, batch, unit); NaN where a unit was not alive
    ids = ds.unit.values
    alive = np.isin(ids, c.code.ids)
    a_alive = a[:, :, alive]
    x = X.reshape(-1, 20, X.shape[1])[:24]
    A_oracle = np.einsum("tbi,tbj->ij", a_alive, a_alive)
    B_oracle = np.einsum("tbi,tbf->if", a_alive, x)
    A, B = c.code.state["A"], c.dictionary.arrays["B"]
    np.testing.assert_allclose(A, A_oracle, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(B, B_oracle, rtol=1e-10, atol=1e-10)
    assert np.allclose(A, A.T) and np.linalg.eigvalsh(A).min() > -1e-9 * max(1.0, np.abs(A).max())


def test_compiled_segments_equal_the_per_step_path_and_the_numpy_reference():
    comp, _ = circuit("NODL", steps=24)
    step, _ = circuit("NODL")
    step.network.add_callback(lambda n: None)  # forces the per-step kernel path
    step.network.run(24)
    ref, _ = circuit("NODL", steps=24, backend="python")
    assert comp.code.ids.tolist() == step.code.ids.tolist() == ref.code.ids.tolist()
    np.testing.assert_array_equal(comp.dictionary.weights, step.dictionary.weights)
    np.testing.assert_array_equal(comp.code.state["A"], step.code.state["A"])
    np.testing.assert_allclose(comp.dictionary.weights, ref.dictionary.weights, rtol=1e-7, atol=1e-9)
    assert list(comp.network.event_log.step) == list(ref.network.event_log.step)


def test_a_birth_re_encodes_the_batch_in_the_same_step():
    c, _ = circuit("NODL+", steps=24)
    log = c.network.event_log
    ds = c.network.recorders["code"].to_dataset(layout="dense")
    coded = 0
    for step in sorted(set(log.step)):
        newborn = [u for s, k, u in zip(log.step, log.kind, log.unit) if k == "birth" and s == step]
        coded += np.count_nonzero(ds.activity.sel(time=step, unit=newborn).values)
        if step > 1:
            assert np.isnan(ds.activity.sel(time=step - 1, unit=newborn).values).all()
    # the newborn elements already code the batch that triggered them (had the births come after the
    # plasticity phase, their activity in that step would be the initial 0)
    assert coded > 0


def test_births_follow_the_accuracy_rule_and_respect_max_size():
    assert births_for(0.9, 50) == 5 and births_for(1.0, 50) == 0 and births_for(0.0, 8) == 8
    assert births_for(0.95, 8) == 0 and births_for(0.93, 8) == 1
    c, _ = circuit("NODL+", steps=24, max_size=9)
    assert c.code.size == 9


def test_the_last_elements_are_kept_when_every_element_would_die():
    c, _ = circuit("NODL-", steps=6, lambda_g=50.0)  # shrinks every used element to zero
    assert c.code.size >= 1
    assert c.network.t == 6


def test_reconstruction_accuracy_matches_numpy_and_scipy():
    rng = np.random.default_rng(1)
    x, a, w = rng.standard_normal((5, 12)), rng.standard_normal((5, 4)), rng.standard_normal((4, 12))
    a[2] = 0.0  # an all-zero code: its reconstruction is constant, the correlation undefined
    out = np.zeros(2)
    reconstruction_accuracy(out, x, a, w, False, np.zeros(12))
    r = [np.corrcoef(x[b], a[b] @ w)[0, 1] for b in range(5) if b != 2]
    assert out[1] == 1 and out[0] == pytest.approx(sum(r) / 5, rel=1e-12)
    reconstruction_accuracy(out, x, a, w, True, np.zeros(12))
    r = [spearmanr(x[b], a[b] @ w).statistic for b in range(5) if b != 2]
    assert out[0] == pytest.approx(sum(r) / 5, rel=1e-12)


def test_prox_count_keeps_beta_entries_and_matches_its_reference():
    rng = np.random.default_rng(2)
    for _ in range(20):
        u = rng.standard_normal(30)
        beta = int(rng.integers(1, 30))
        out = np.zeros(30)
        lam = prox_count(u, beta, 1e-12, out)
        assert np.count_nonzero(out) == beta
        kept = np.abs(u) > lam
        np.testing.assert_allclose(out[kept], np.sign(u[kept]) * (np.abs(u[kept]) - lam), rtol=1e-14)
        np.testing.assert_array_equal(out, prox_count_numpy(u, beta, 1e-12))
    u = np.array([3.0, -1.0, 0.0, 2.0])
    out = np.zeros(4)
    prox_count(u, 5, 1e-12, out)
    np.testing.assert_array_equal(out, u)  # more wanted than there are: unchanged


def test_block_coordinate_descent_solves_the_surrogate_problem():
    """Without prox and shrink the update converges to argmin 0.5 tr(D^T D A) - tr(D^T B) over ||d_j|| <= 1."""
    rng = np.random.default_rng(4)
    k, m = 5, 9
    a = rng.standard_normal((40, k))
    x = rng.standard_normal((40, m))
    A, B = a.T @ a, a.T @ x  # B like the weights: (atoms, features)
    w = rng.standard_normal((k, m)) * 0.1
    info = np.zeros(2, np.int64)
    block_coordinate_descent(w, A, B, 0.0, 0, 1e-13, 10_000, 1e-10, False, np.zeros(m), np.zeros(m), info)
    # KKT: for each atom, the gradient A_j. W - B_j is -nu_j d_j with nu_j >= 0, nu_j = 0 when ||d_j|| < 1
    G = A @ w - B
    for j in range(k):
        nrm = np.linalg.norm(w[j])
        assert nrm <= 1 + 1e-12
        if nrm < 1 - 1e-9:
            assert np.linalg.norm(G[j]) < 1e-8
        else:
            cos = -G[j] @ w[j] / (np.linalg.norm(G[j]) * nrm)
            assert cos > 1 - 1e-8
    # with lambda_g above every element's norm all elements die
    w2 = rng.standard_normal((k, m))
    block_coordinate_descent(w2, A, B, 1e6, 0, 1e-10, 50, 1e-10, False, np.zeros(m), np.zeros(m), info)
    assert np.all(w2 == 0.0)


@pytest.mark.parametrize("kw,match", [
    (dict(gamma=0.0), r"gamma must be in \(0.0, 1.0\]"), (dict(gamma=1.5), "gamma must be in"),
    (dict(c_k=-1), r"c_k must be in \[0, inf\)"), (dict(lambda_g=-0.1), "lambda_g must be in"),
    (dict(beta_d=100), r"beta_d must be in \[0, 16\]"), (dict(beta_c=0), "beta_c must be in"),
    (dict(variant="XODL"), "variant must be one of"),
])
def test_bad_parameters_are_refused_by_name(kw, match):
    stream, _ = two_domains()
    variant = kw.pop("variant", "NODL")
    with pytest.raises((ValueError, TypeError), match=match):
        build_network(stream, 4, variant, batch=20, **kw)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_dictionary_rule_counts_its_sweeps_and_its_capped_steps(backend):
    # info = [sweeps of the last step, steps that hit max_sweeps] on both paths: with one sweep
    # allowed and a tolerance no sweep meets, every step sweeps once and hits the cap; with room
    # to converge, the last step ran between 2 sweeps (the first one moves the dictionary) and the cap.
    capped, _ = circuit("NODL", steps=6, backend=backend, max_sweeps=1, tol=1e-300)
    assert capped.dictionary.rule.info.tolist() == [1, 6]
    free, _ = circuit("NODL", steps=6, backend=backend, max_sweeps=50, tol=1e-3)
    sweeps, capped_steps = free.dictionary.rule.info.tolist()
    assert 2 <= sweeps < 50 and capped_steps == 0
