"""Issue 24: codes against normalised elements (paper 000's authors' code), and the other printed-vs-authors options.

Oracles: closed forms of the normalisations, the independent transcription
(``reference_nodl.coding_dictionary``), the public lasso encoder run on the
normalised atoms, NumPy/scipy correlations, and the circuit's own NumPy path
against its compiled one.
"""

import warnings

import numpy as np
import pytest
from reference_nodl import coding_dictionary
from test_circuit import circuit, two_domains

import neurosim as ns
from neurosim.coding import lambda_for_count, normalized_atoms
from neurosim.estimators import NeurogenesisDictionaryLearner
from neurosim.reconstruction_accuracy import ReconstructionAccuracy
from neurosim.models.neurogenesis import RandomElements, births_for, build_network

#: slow tier: the whole paper-000 circuit compiled per coding option (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow


def _quiet_run(net, steps, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.run(steps, **kw)


# -- the normalisations ---------------------------------------------------------------------------------------------
def test_normalized_atoms_closed_forms_and_the_independent_transcription():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((7, 12)) * rng.uniform(0.1, 3.0, (7, 1))
    W[2] = 0.0  # all-zero: stays zero
    W[4] = 0.5  # constant (its mean exact in floats): centring zeroes it
    unit = normalized_atoms(W, "unit")
    cu = normalized_atoms(W, "center_unit")
    live = [0, 1, 3, 5, 6]
    np.testing.assert_allclose(np.linalg.norm(unit[live + [4]], axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(unit[live], W[live] / np.linalg.norm(W[live], axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(cu[live].mean(axis=1), 0.0, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(cu[live], axis=1), 1.0, rtol=1e-12)
    assert not np.any(unit[2]) and not np.any(cu[2]) and not np.any(cu[4])
    for how in ("none", "unit", "center_unit"):
        np.testing.assert_allclose(normalized_atoms(W, how), coding_dictionary(W.T, how).T, rtol=1e-12, atol=1e-14)
    none = normalized_atoms(W, "none")
    assert np.array_equal(none, W) and none is not W


@pytest.mark.parametrize("value", [0.37, 1e-3, 123.456, -7.1])
@pytest.mark.parametrize("m", [3, 12, 1024])
def test_an_atom_constant_up_to_rounding_is_inactive_not_blown_up(value, m):
    """Centring a constant row leaves rounding residue (the float mean need not equal the value); not an atom."""
    W = np.vstack([np.full(m, value), np.linspace(-1.0, 2.0, m)])
    out = normalized_atoms(W, "center_unit")
    assert not np.any(out[0])
    assert np.linalg.norm(out[1]) == pytest.approx(1.0, rel=1e-14)


def test_normalized_atoms_refuses_an_unknown_normalisation_by_name():
    with pytest.raises(ValueError, match=r"normalize must be one of \['center_unit', 'none', 'unit'\]"):
        normalized_atoms(np.eye(3), "centre")
    with pytest.raises(ValueError, match="normalize must be one of"):
        ns.SparseCode("feature_sign", n_nonzero=2, normalize="l1")


@pytest.mark.parametrize("normalize", ["unit", "center_unit"])
@pytest.mark.parametrize("method", ["count", "lam", "omp", "k_winners"])
def test_sparse_code_codes_against_the_normalised_atoms_on_both_paths(normalize, method):
    """The activity is the encoder's code of x against normalized_atoms(W): the public encoders are the oracle."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((3, 6, 10)) + 0.5  # a common offset, which centring removes from the atoms' view
    W0 = rng.standard_normal((8, 10)) * rng.uniform(0.2, 2.0, (8, 1)) + 0.3
    W0[5] = 0.0
    kw = {"count": dict(method="feature_sign", n_nonzero=3), "lam": dict(method="feature_sign", lam=0.2),
          "omp": dict(method="omp", n_nonzero=3), "k_winners": dict(method="k_winners", n_nonzero=3)}[method]
    out = {}
    for backend in ("python", "compiled"):
        net = ns.Network(seed=0, batch=6)
        x = ns.Population("x", 10)
        code = ns.Population("code", 8, dynamics=ns.SparseCode(normalize=normalize, **kw))
        net.add(x, code)
        net.connect(ns.ArrayStream(X), x)
        net.add(ns.Projection("D", x, code, init=W0))
        _quiet_run(net, 2, backend=backend)
        out[backend] = code.activity.copy()
    np.testing.assert_allclose(out["compiled"], out["python"], rtol=1e-10, atol=1e-12)
    Wn = normalized_atoms(W0, normalize)
    assert not np.any(out["python"][:, 5])  # the zero atom stays inactive
    live = np.flatnonzero(np.any(Wn != 0, axis=1))
    if method == "count":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, codes = lambda_for_count(X[1], Wn[live], 3, return_codes=True)
        np.testing.assert_allclose(out["python"][:, live], codes, rtol=1e-8, atol=1e-10)
    elif method == "lam":
        a = out["python"]
        g = (X[1] - a @ Wn) @ Wn[live].T  # KKT of 0.5||x - Wn^T a||^2 + lam ||a||_1 on the normalised atoms
        act = a[:, live] != 0
        np.testing.assert_allclose(g[act], 0.2 * np.sign(a[:, live][act]), rtol=1e-7, atol=1e-9)
        assert np.all(np.abs(g[~act]) <= 0.2 + 1e-9)
    elif method == "k_winners":
        c = X[1] @ Wn.T
        for b in range(6):
            assert set(np.flatnonzero(out["python"][b])) == set(np.argsort(-np.abs(c[b]))[:3])


def test_reconstruction_accuracy_follows_the_encoder_and_can_be_told_otherwise():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((2, 5, 9)) + 1.0
    W0 = rng.standard_normal((6, 9)) * 0.5
    values = {}
    for normalize in (None, "none", "unit"):
        for backend in ("python", "compiled"):
            net = ns.Network(seed=0, batch=5)
            x = ns.Population("x", 9)
            code = ns.Population("code", 6, dynamics=ns.SparseCode(n_nonzero=2, normalize="center_unit"))
            net.add(x, code)
            net.connect(ns.ArrayStream(X), x)
            D = ns.Projection("D", x, code, init=W0)
            acc = ReconstructionAccuracy(D, normalize=normalize)
            net.add(D, acc)
            _quiet_run(net, 1, backend=backend)
            values[normalize, backend] = acc.value[0]
            expected_how = "center_unit" if normalize is None else normalize
            assert acc.coding_normalization == expected_how
            R = code.activity @ normalized_atoms(W0, expected_how)
            r = [np.corrcoef(xb, rb)[0, 1] for xb, rb in zip(X[0], R)]
            assert acc.value[0] == pytest.approx(np.mean(r), rel=1e-12)
        assert values[normalize, "python"] == pytest.approx(values[normalize, "compiled"], rel=1e-13)
    assert values[None, "python"] != pytest.approx(values["none", "python"], rel=1e-6)


# -- the circuit ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("normalize", ["unit", "center_unit"])
def test_compiled_segments_equal_the_per_step_path_with_births_and_deaths(normalize):
    opts = dict(normalize=normalize)  # the other options: against the reference (test_circuit_vs_reference)
    fast, _ = circuit("NODL", steps=24, backend="auto", **opts)
    ref, _ = circuit("NODL", steps=24, backend="python", **opts)
    log = ref.network.event_log
    assert "birth" in log.kind and "death" in log.kind
    assert fast.code.ids.tolist() == ref.code.ids.tolist()
    assert fast.network.event_log.to_dict() == log.to_dict()
    np.testing.assert_allclose(fast.dictionary.weights, ref.dictionary.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fast.code.state["A"], ref.code.state["A"], rtol=1e-10, atol=1e-12)


def test_a_checkpoint_carries_a_normalised_circuit_and_refuses_another_normalisation(tmp_path):
    whole, _ = circuit("NODL", steps=16, normalize="center_unit")
    first, _ = circuit("NODL", steps=8, normalize="center_unit")
    path = first.network.save(tmp_path / "ck")
    resumed, _ = circuit("NODL", normalize="center_unit")
    resumed.network.load(path)
    _quiet_run(resumed.network, 8)
    assert resumed.code.ids.tolist() == whole.code.ids.tolist()
    np.testing.assert_array_equal(resumed.dictionary.weights, whole.dictionary.weights)
    np.testing.assert_array_equal(resumed.code.state["A"], whole.code.state["A"])
    other, _ = circuit("NODL", normalize="none")
    with pytest.raises(ValueError, match="normalize"):
        other.network.load(path)


def test_centred_coding_changes_the_run_and_uncentred_unit_coding_of_unit_atoms_does_not():
    """ODL's atoms sit on the unit sphere, so "unit" codes as "none" does; centring changes the codes."""
    runs = {how: circuit("ODL", steps=6, lambda_g=0.0, normalize=how)[0] for how in ("none", "unit", "center_unit")}
    np.testing.assert_allclose(runs["unit"].dictionary.weights, runs["none"].dictionary.weights, rtol=1e-9,
                               atol=1e-12)
    assert not np.allclose(runs["center_unit"].dictionary.weights, runs["none"].dictionary.weights, atol=1e-3)


def test_the_initial_dictionary_can_be_given_as_an_array_or_a_callable():
    stream, X = two_domains()
    W0 = np.random.default_rng(9).standard_normal((5, 16))
    kept = W0.copy()
    c = build_network(stream, 5, "NODL", batch=20, beta_c=3, init=W0)
    np.testing.assert_array_equal(c.dictionary.weights, W0)
    _quiet_run(c.network, 2)
    np.testing.assert_array_equal(W0, kept)  # the weights learned; the caller's array did not change
    seen = []

    def draw(rng, shape):
        seen.append(shape)
        return np.ones(shape) / 4.0

    c2 = build_network(stream, 5, "NODL", batch=20, beta_c=3, gamma=0.99, seed=1, init=draw)
    assert seen == [(5, 16)]
    np.testing.assert_array_equal(c2.dictionary.weights, np.full((5, 16), 0.25))
    _quiet_run(c2.network, 2)
    born = [u for k, u in zip(c2.network.event_log.kind, c2.network.event_log.unit) if k == "birth"]
    assert born and seen == [(5, 16)]  # newborns come from the newborn rule, not from init
    with pytest.raises(ValueError, match=r"init must have shape \(5, 16\)"):
        build_network(stream, 5, "NODL", batch=20, beta_c=3, init=np.ones((4, 16)))
    with pytest.raises(ValueError, match="init"):
        build_network(stream, 5, "NODL", batch=20, beta_c=3, init=np.full((5, 16), np.nan))


def test_centered_uniform_newborns_are_the_authors_normalize_rand():
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    got = RandomElements(0, "centered_uniform")(rng_a, (4, 30))
    U = rng_b.random((4, 30))
    U -= U.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(got, U / np.linalg.norm(U, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 0.0, atol=1e-14)


@pytest.mark.parametrize("p,c_k,nearest,floor", [(0.75, 10, 2, 2), (0.74, 10, 3, 2), (0.85, 10, 2, 1),
                                                  (0.0, 8, 8, 8), (0.96, 10, 0, 0), (0.95, 10, 1, 0),
                                                  (0.7, 5, 2, 1)])
def test_birth_count_rounding(p, c_k, nearest, floor):
    # (1 - 0.75) * 10 = 2.5 rounds half to even: 2; in floats (1 - 0.85) * 10 = 1.5000000000000004 and
    # (1 - 0.95) * 10 = 0.5000000000000004 round up
    assert births_for(p, c_k, "nearest") == nearest
    assert births_for(p, c_k, "floor") == floor


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_tol_none_runs_exactly_max_sweeps_and_counts_no_capped_step(backend):
    fixed, _ = circuit("NODL", steps=5, backend=backend, tol=None, max_sweeps=3)
    assert fixed.dictionary.rule.info.tolist() == [3, 0]
    assert fixed.dictionary.rule.tol is None


@pytest.mark.parametrize("kw,match", [
    (dict(normalize="centre"), "normalize must be one of"), (dict(birth_rounding="up"), "birth_rounding must be one of"),
    (dict(unused="skip"), "unused must be one of"), (dict(newborn="gauss"), "newborn must be one of"),
    (dict(tol=0.0), r"tol must be in \(0.0, inf\)"), (dict(tol=-1e-3), "tol must be in"),
    (dict(max_sweeps=0), r"max_sweeps must be in \[1, inf\)"), (dict(init=np.ones(16)), "init must have"),
])
def test_new_parameters_are_refused_by_name(kw, match):
    stream, _ = two_domains()
    with pytest.raises((ValueError, TypeError), match=match):
        build_network(stream, 4, "NODL", batch=20, **kw)


# -- the estimator --------------------------------------------------------------------------------------------------
def test_estimator_codes_and_reconstructs_with_the_normalised_atoms():
    _, X = two_domains()
    est = NeurogenesisDictionaryLearner(6, n_nonzero_coefs=3, batch_size=20, normalize="center_unit",
                                        birth_rounding="floor", unused="zero", newborn="uniform", tol=None,
                                        max_sweeps=4, random_state=0).fit(X[:200])
    np.testing.assert_array_equal(est.coding_components_, normalized_atoms(est.components_, "center_unit"))
    assert est.network_.projections["D"].rule.tol is None
    codes = est.transform(X[200:240])
    live = np.flatnonzero(np.any(est.coding_components_ != 0, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, expected = lambda_for_count(X[200:240], est.coding_components_[live], 3, return_codes=True)
    np.testing.assert_allclose(codes[:, live], expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.inverse_transform(codes), codes @ est.coding_components_, rtol=1e-12)
    plain = NeurogenesisDictionaryLearner(6, n_nonzero_coefs=3, batch_size=20, random_state=0).fit(X[:200])
    np.testing.assert_array_equal(plain.coding_components_, plain.components_)


def test_estimator_takes_an_initial_dictionary_like_scikit_learn():
    _, X = two_domains()
    W0 = np.random.default_rng(1).standard_normal((5, 16))
    est = NeurogenesisDictionaryLearner(n_nonzero_coefs=2, batch_size=20, dict_init=W0, variant="ODL",
                                        max_sweeps=1, tol=None, random_state=0)
    est.partial_fit(X[:20])
    assert est.n_components_ == 5  # taken from dict_init
    # one sweep from W0 with A, B of the first batch: the oracle is the reference column update
    from reference_nodl import column_update

    codes = est.network_.populations["code"].activity
    D, _ = column_update(W0.T, codes.T @ codes, X[:20].T @ codes, 0.0, None, None, 1, unused="prox")
    np.testing.assert_allclose(est.components_, D.T, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"dict_init must have shape \(n_components, n_features\) = \(4, 16\)"):
        NeurogenesisDictionaryLearner(4, dict_init=W0).fit(X[:40])
    with pytest.raises(ValueError, match="normalize must be one of"):
        NeurogenesisDictionaryLearner(4, normalize="x").fit(X[:40])
