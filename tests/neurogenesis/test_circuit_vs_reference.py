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

#: slow tier: the whole paper-000 circuit compiled per variant, against a transcription (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow


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
    births, deaths = _run_against_reference(variant, lambda_g, k0)
    if variant in ("NODL", "NODL+"):
        assert births > 0
    if variant in ("NODL", "NODL-"):
        assert deaths > 0


#: (circuit keyword, value) -> (reference keyword, value): the same choice in both transcriptions
_OPTION_NAMES = {
    ("birth_rounding", "nearest"): ("kn_rounding", "half_even"),
    ("birth_rounding", "floor"): ("kn_rounding", "floor"),
    ("unused", "keep"): ("unused", "prox"),
    ("unused", "zero"): ("unused", "zero"),
    ("newborn", "dense"): ("newborn_distribution", "normal"),
    ("newborn", "uniform"): ("newborn_distribution", "centered_uniform"),
}


@pytest.mark.parametrize("normalize", ["none", "unit", "center_unit"])
@pytest.mark.parametrize("variant,lambda_g,k0,options", [
    ("NODL", 1.0, 4, {}),
    ("NODL", 1.0, 4, {"birth_rounding": "floor", "unused": "zero", "newborn": "uniform"}),
    ("NODL+", 0.0, 4, {"unused": "zero", "tol": None, "max_sweeps": 3}),
    # k0 = 16: some elements go unused in the first batches, where "keep" and "zero" differ
    ("ODL", 0.0, 16, {"unused": "zero", "newborn": "uniform", "tol": None, "max_sweeps": 2}),
    ("ODL", 0.0, 16, {"unused": "keep"}),
    ("ODL*", 0.0, 4, {"unused": "zero", "birth_rounding": "floor"}),
])
def test_every_coding_normalisation_and_option_matches_the_reference_step_by_step(normalize, variant, lambda_g, k0,
                                                                                  options):
    """Issue 24: codes against D~, A and B from those codes, steps 13-19 on the raw D -- in both transcriptions."""
    births, deaths = _run_against_reference(variant, lambda_g, k0, normalize=normalize, **options)
    if variant == "NODL":
        assert births > 0 and deaths > 0


def _run_against_reference(variant, lambda_g, k0, steps=24, **options):
    stream, X = generic_domains()
    m, batch, seed = X.shape[1], 20, 3
    settings = {**SETTINGS, **{k: v for k, v in options.items() if k in ("tol", "max_sweeps")}}
    circuit = build_network(stream, k0, variant, batch=batch, lambda_g=lambda_g, seed=seed, **settings,
                            **{k: v for k, v in options.items() if k not in settings})
    ref_options = {"kn_rounding": "half_even", "unused": "prox"}
    for key in ("birth_rounding", "unused", "newborn"):
        if key in options:
            name, value = _OPTION_NAMES[key, options[key]]
            ref_options[name] = value
    dist = ref_options.get("newborn_distribution", "normal")
    D0 = draw_elements(np.random.default_rng(seed), m, k0, None, dist)  # the engine's generator draws them first
    np.testing.assert_array_equal(circuit.dictionary.weights, D0.T)
    births = deaths = 0
    events = []
    for t in range(steps):
        ref = NODLReference(circuit.dictionary.weights.T.copy(), np.random.default_rng(), variant=variant,
                            lambda_g=lambda_g, reinit_as_birth=True, normalize=options.get("normalize", "none"),
                            **ref_options, **settings)
        ref.rng.bit_generator.state = circuit.network.rng.bit_generator.state
        ref.A = circuit.code.state["A"].copy()
        ref.B = circuit.dictionary.arrays["B"].T.copy()
        ref.ids = circuit.code.ids.tolist()
        ref.next_id = circuit.code.next_id
        ref.t = t
        ref.encode = lambda Xc, ref=ref: _codes(Xc, ref.coding_dictionary(), ref.beta_c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            circuit.network.run(1)
        _check_lasso_codes(circuit, SETTINGS["beta_c"])
        rec = ref.step(X[t * batch:(t + 1) * batch].T)
        events += ref.events
        births += rec.k_born
        deaths += rec.k_died
        msg = f"step {t + 1}"
        assert circuit.code.ids.tolist() == list(ref.ids), msg
        np.testing.assert_allclose(circuit.dictionary.weights, ref.D.T, rtol=1e-9, atol=1e-11, err_msg=msg)
        np.testing.assert_allclose(circuit.code.state["A"], ref.A, rtol=1e-9, atol=1e-11, err_msg=msg)
        np.testing.assert_allclose(circuit.dictionary.arrays["B"], ref.B.T, rtol=1e-9, atol=1e-11, err_msg=msg)
        if circuit.accuracy is not None:
            assert circuit.accuracy.value[0] == pytest.approx(rec.accuracy_after_birth if rec.k_born else rec.accuracy,
                                                              rel=1e-9, abs=1e-12), msg
        assert circuit.network.rng.bit_generator.state == ref.rng.bit_generator.state
    kinds = [(s - 1, k) for s, k in zip(circuit.network.event_log.step, circuit.network.event_log.kind)]
    assert sorted(set(kinds)) == sorted({(t, k) for t, k, _ in events})
    return births, deaths


def _codes(Xc, D, beta_c):
    """Codes of the columns of ``Xc`` under ``D`` (features x atoms), Alg. 2 with feature-sign search.

    All-zero columns (zeroed elements the circuit keeps) code 0, as in the circuit's encoder.
    """
    out = np.zeros((D.shape[1], Xc.shape[1]))
    active = np.flatnonzero(np.any(D != 0.0, axis=0))
    if active.size == 0:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, A = lambda_for_count(Xc.T, D[:, active].T, min(beta_c, active.size), return_codes=True)
    out[active] = np.asarray(A).T
    return out


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
