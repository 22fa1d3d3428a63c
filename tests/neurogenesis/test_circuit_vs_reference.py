"""The engine's circuit against the independent NumPy transcription of Alg. 1, step by step, for every variant.

Each engine step is checked against one step of the reference started from the
engine's state before it (dictionary, A, B, unit ids, random generator).

The codes are the one place where two correct implementations may differ:
Alg. 2 bisects lambda and stops at the first midpoint whose lasso solution
has beta_c nonzeros. When a midpoint falls within rounding of a knot of the
lasso path, one exact solver sees a coefficient of 1e-15 and counts it, another
does not, and the bisection continues to a different (equally valid) support.
The reference's LARS-path solver and the engine's feature-sign search do
differ there. So the reference encodes with the engine's NumPy encoder
(``neurosim.coding.lambda_for_count``, itself checked against scikit-learn in
``tests/coding``), and the engine's codes are checked separately against the
definition: exact lasso solutions (KKT conditions) with beta_c nonzeros.
Everything else in the step -- p_c, k_n, the newborn draws, A and B, the
column update, the shrink and the deaths -- is the reference's own code.
"""

import warnings

import numpy as np
import pytest
from reference_nodl import NODLReference, draw_elements

import neurosim as ns
from neurosim.coding import lambda_for_count
from neurosim.models.neurogenesis import build_network


def generic_domains(m=16, n_per=240, batch=20, seed=0):
    """Two domains spanning different random subspaces, with dense noise: no exact ties in the lasso paths.

    (Samples with exactly disjoint supports make lasso knots coincide, where
    Alg. 2's bisection may pick either of two equally valid supports.)
    """
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(2):
        basis = rng.standard_normal((m, 5))
        codes = rng.standard_normal((5, n_per)) * (rng.random((5, n_per)) < 0.6)
        parts.append((basis @ codes).T + 0.05 * rng.standard_normal((n_per, m)))
    X = np.concatenate(parts)
    return ns.ArrayStream(X.reshape(-1, batch, m)), X

SETTINGS = dict(beta_c=3, gamma=0.95, c_k=8, tol=1e-6, max_sweeps=100)


@pytest.mark.parametrize("variant,lambda_g,k0", [("NODL", 1.0, 4), ("NODL+", 0.0, 4), ("NODL-", 0.5, 10),
                                                 ("ODL", 0.0, 4), ("ODL*", 0.0, 4)])
def test_same_dictionary_statistics_and_unit_ids_at_every_step(variant, lambda_g, k0):
    # NODL- starts larger: the engine keeps beta_c elements (the encoder needs them), the reference has no floor
    stream, X = generic_domains()
    m, batch, seed, steps = X.shape[1], 20, 3, 24
    circuit = build_network(stream, k0, variant, batch=batch, lambda_g=lambda_g, seed=seed, **SETTINGS)
    D0 = draw_elements(np.random.default_rng(seed), m, k0, None)  # the engine's generator, seeded, draws them first
    np.testing.assert_array_equal(circuit.dictionary.weights, D0.T)
    births = deaths = 0
    events = []
    for t in range(steps):
        ref = NODLReference(circuit.dictionary.weights.T.copy(), np.random.default_rng(), variant=variant,
                            lambda_g=lambda_g, kn_rounding="half_even", unused="prox", reinit_as_birth=True, **SETTINGS)
        ref.rng.bit_generator.state = circuit.network.rng.bit_generator.state
        ref.A = circuit.code.state["A"].copy()
        ref.B = circuit.dictionary.arrays["B"].T.copy()
        ref.ids = circuit.code.ids.tolist()
        ref.next_id = circuit.code.next_id
        ref.t = t
        ref.encode = lambda Xc, ref=ref: _codes(Xc, ref.D, ref.beta_c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            circuit.network.run(1)
        _check_lasso_codes(circuit, SETTINGS["beta_c"])
        rec = ref.step(X[t * batch:(t + 1) * batch].T)
        events += ref.events
        births += rec.k_born
        deaths += rec.k_died
        assert circuit.code.ids.tolist() == list(ref.ids), f"step {t + 1}"
        np.testing.assert_allclose(circuit.dictionary.weights, ref.D.T, rtol=1e-9, atol=1e-11, err_msg=f"step {t + 1}")
        np.testing.assert_allclose(circuit.code.state["A"], ref.A, rtol=1e-9, atol=1e-11, err_msg=f"step {t + 1}")
        np.testing.assert_allclose(circuit.dictionary.arrays["B"], ref.B.T, rtol=1e-9, atol=1e-11)
        assert circuit.network.rng.bit_generator.state == ref.rng.bit_generator.state
    if variant in ("NODL", "NODL+"):
        assert births > 0
    if variant in ("NODL", "NODL-"):
        assert deaths > 0
    kinds = [(s - 1, k) for s, k in zip(circuit.network.event_log.step, circuit.network.event_log.kind)]
    assert sorted(set(kinds)) == sorted({(t, k) for t, k, _ in events})


def _codes(Xc, D, beta_c):
    """Codes of the columns of ``Xc`` under ``D`` (features x atoms), Alg. 2 with feature-sign search."""
    if D.shape[1] == 0:
        return np.zeros((0, Xc.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, A = lambda_for_count(Xc.T, D.T, beta_c, return_codes=True)
    return np.asarray(A).T


def _check_lasso_codes(circuit, beta_c):
    """At most beta_c nonzeros per code: Alg. 2 stops with fewer when no lambda gives exactly beta_c."""
    counts = np.count_nonzero(circuit.code.activity, axis=1)
    assert np.all((counts >= 1) & (counts <= beta_c))


def test_codes_are_exact_lasso_solutions_with_at_most_beta_c_nonzeros():
    stream, X = generic_domains()
    circuit = build_network(stream, 6, "NODL", batch=20, lambda_g=1.0, seed=3, **SETTINGS)
    seen = {}
    circuit.network.add_callback(lambda n: seen.update(W=n.projections["D"].weights.copy(),
                                                        a=n.populations["code"].activity.copy()),
                                 phase="dynamics", when="after")
    for t in range(10):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            circuit.network.run(1)
        W, A, Xb = seen["W"], seen["a"], X[t * 20:(t + 1) * 20]
        for x, a in zip(Xb, A):
            act = a != 0
            assert 1 <= act.sum() <= SETTINGS["beta_c"]
            g = W @ (x - a @ W)  # correlation of each atom with the residual
            lam = np.abs(g[act]).mean()
            np.testing.assert_allclose(g[act], lam * np.sign(a[act]), rtol=1e-7, atol=1e-9)
            assert np.all(np.abs(g[~act]) <= lam * (1 + 1e-7) + 1e-9)
