"""The paper-004 circuit against independent oracles: plain SGD in NumPy, scikit-learn's lasso, its own pieces.

Small problems (P = 64 Gabor patches, K = 16, N = 300) so every test runs in
seconds; the compiled path is the default, ``backend="python"`` the NumPy
reference.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from sklearn.linear_model import Lasso

import neurosim as ns
from neurosim.data.dictionaries import SparseDictionaryStream, gabor_dictionary
from neurosim.models.example_selection import ALGORITHMS, build_network, default_eta, distance_over_time, lasso_weight
from neurosim.rules.example_sgd import ExampleSGD
from neurosim.selection_functions import select
from neurosim.example_selector import ExampleSelector

# The papers' circuits end to end, each against its paper's numbers or an independent transcription:
# every test compiles the whole circuit, so they are the slow tier (docs/testing.md).
pytestmark = pytest.mark.slow

K, N = 16, 300


def _stream(seed=0, k=3, snr_db=6.0):
    return SparseDictionaryStream(gabor_dictionary(n_elements=K), k=k, snr_db=snr_db, seed=seed)


def _numpy_epoch(W, X, index, encode, eta, gamma=0.2, passes=10):
    """Alg. 1 step 4 written out in NumPy: re-encode, equalize (Sec. 2.3), Eq. 8, normalise."""
    W = W.copy()
    Xn = X[index]
    n = len(index)
    for _ in range(passes):
        S = encode(Xn, W)
        m = S.sum(axis=0)
        factor = np.ones_like(m)
        used = m > 0
        # the paper's mean over all K elements; an unused element (m_j = 0) is left as it is
        factor[used] = (m.sum() / len(m) / m[used]) ** gamma
        S = S * factor
        W = W - eta / n * (S.T @ (S @ W - Xn))
        W = W / np.linalg.norm(W, axis=1, keepdims=True)
    return W


def _k_sparse(k):
    def encode(X, W):
        C = X @ W.T
        S = np.zeros_like(C)
        top = np.argsort(-C, axis=1, kind="stable")[:, :k]
        rows = np.arange(len(X))[:, None]
        S[rows, top] = np.maximum(C[rows, top], 0.0)
        return S
    return encode


def test_uniform_with_every_example_is_plain_sgd():
    """Selector Uniform with n = N: the circuit equals SGD dictionary learning on all examples (Eq. 8)."""
    stream = _stream()
    c = build_network(stream, encoder="k_sparse", algorithm="Uniform", n_examples=N, n_selected=N)
    W = c.dictionary.weights.copy()
    eta = default_eta()
    for t in range(1, 4):
        X = stream.block(t - 1, 1, N)[0]
        W = _numpy_epoch(W, X, np.arange(N), _k_sparse(3), eta(t))
        c.run(1)
        assert sorted(c.selection.state["index"].astype(int)) == list(range(N))
        np.testing.assert_allclose(c.dictionary.weights, W, rtol=0, atol=1e-10)


@pytest.mark.parametrize("algorithm", ["SUNByElement", "GradBySum", "SNRByElement", "ErrBySum", "SalMap"])
def test_the_update_learns_from_exactly_the_selected_examples(algorithm):
    """One epoch: the recorded selection equals the public ``select`` on the encoder's codes; the update uses those rows."""
    stream = _stream(seed=3)
    c = build_network(stream, encoder="k_sparse", algorithm=algorithm, n_examples=N, n_selected=32)
    W0 = c.dictionary.weights.copy()
    c.run(1)
    X = stream.block(0, 1, N)[0]
    S = _k_sparse(3)(X, W0)
    measure, how = ALGORITHMS[algorithm]
    expected = select(X, S, W0, 32, measure=measure, selector=how)
    np.testing.assert_array_equal(c.selection.state["index"].astype(int), expected)
    W = _numpy_epoch(W0, X, expected, _k_sparse(3), default_eta()(1))
    np.testing.assert_allclose(c.dictionary.weights, W, rtol=0, atol=1e-10)


def test_lars_encoder_solves_the_papers_nonnegative_lasso():
    """Eq. 5 in the form 0.5 ||x - A s||^2 + lam ||s||_1, s >= 0: scikit-learn's Lasso(positive=True) gives the same codes."""
    stream = _stream(seed=1)
    c = build_network(stream, encoder="lars", algorithm="Uniform", n_examples=40, n_selected=4, passes=1)
    W0 = c.dictionary.weights.copy()
    c.run(1)
    lam = lasso_weight(stream)
    X = stream.block(0, 1, 40)[0]
    P = X.shape[1]
    for i in range(0, 40, 7):
        # Lasso minimises (1 / (2 P)) ||x - A s||^2 + alpha ||s||_1
        ref = Lasso(alpha=lam / P, fit_intercept=False, positive=True, tol=1e-12, max_iter=100_000).fit(W0.T, X[i]).coef_
        np.testing.assert_allclose(c.code.activity[i], ref, atol=1e-6)
    assert lam == pytest.approx(stream.noise_var * 1.0 * K / 3)


def test_lasso_weight_reads_the_stream():
    stream = _stream(k=5)
    assert lasso_weight(stream) == pytest.approx(stream.noise_var * stream.rate * K / 5)


@pytest.mark.parametrize("encoder", ["k_sparse", "lars", "omp"])
@pytest.mark.parametrize("algorithm", ["Uniform", "SUNByElement"])
def test_compiled_and_numpy_paths_agree(encoder, algorithm):
    """Same selected examples every epoch; dictionaries equal well above rounding (different BLAS calls)."""
    runs = []
    for backend in ("auto", "python"):
        c = build_network(_stream(seed=2), encoder=encoder, algorithm=algorithm, n_examples=N, n_selected=20)
        c.run(3, backend=backend)
        runs.append(c)
    a, b = (r.network.recorders["selection"].to_dataset() for r in runs)
    np.testing.assert_array_equal(a["index"].values, b["index"].values)
    np.testing.assert_allclose(a["estimated_snr"].values, b["estimated_snr"].values, rtol=1e-9)
    np.testing.assert_allclose(runs[0].dictionary.weights, runs[1].dictionary.weights, rtol=0, atol=1e-9)


@pytest.mark.parametrize("algorithm", ["Uniform", "SUNByElement"])
def test_a_resumed_checkpoint_continues_bit_for_bit(tmp_path, algorithm):
    """The uniform selector's draws, the rule's info and the dictionary survive a checkpoint exactly."""
    whole = build_network(_stream(), encoder="k_sparse", algorithm=algorithm, n_examples=N, n_selected=20)
    whole.run(4)
    first = build_network(_stream(), encoder="k_sparse", algorithm=algorithm, n_examples=N, n_selected=20)
    first.run(2)
    first.network.save(tmp_path / "ck")
    second = build_network(_stream(), encoder="k_sparse", algorithm=algorithm, n_examples=N, n_selected=20, seed=0)
    second.network.load(tmp_path / "ck")
    second.run(2)
    np.testing.assert_array_equal(second.dictionary.weights, whole.dictionary.weights)
    np.testing.assert_array_equal(second.selection.state["index"], whole.selection.state["index"])
    np.testing.assert_array_equal(second.selector.counter, whole.selector.counter)


def test_uniform_draws_differ_between_epochs_and_are_distinct():
    c = build_network(_stream(), encoder="k_sparse", algorithm="Uniform", n_examples=N, n_selected=50)
    c.run(3)
    idx = c.network.recorders["selection"].to_dataset()["index"].values.astype(int)
    assert idx.shape == (3, 50)
    for row in idx:
        assert len(set(row)) == 50 and row.min() >= 0 and row.max() < N
    assert not np.array_equal(np.sort(idx[0]), np.sort(idx[1]))


def test_learning_approaches_the_ground_truth():
    """D* (Eq. 16) falls well below its value for the initial dictionary of examples."""
    c = build_network(_stream(k=2, snr_db=12.0), encoder="k_sparse", algorithm="SUNByElement", n_examples=2000,
                      n_selected=64, record_every=1)
    start = c.distance()
    c.run(30)
    d = distance_over_time(c)
    assert d.sizes["epoch"] == 30
    assert float(d[-1]) < 0.5 * start


@pytest.mark.parametrize("encoder", ["k_sparse", "lars"])
def test_every_selector_picks_examples_of_higher_true_snr_than_uniform(encoder):
    """Fig. 5 (left): the selected examples' true SNR (from the stream's regenerated truth) beats a uniform draw's."""
    from neurosim.simulations._es_common import selected_snr_db

    snr = {}
    for alg in ("Uniform", "SNRByElement", "SUNByElement", "GradBySum", "ErrBySum", "SalMap"):
        stream = _stream(seed=5)
        c = build_network(stream, encoder=encoder, algorithm=alg, n_examples=2000, n_selected=64)
        c.run(2)
        S, noise = stream.truth(1, 2000)
        snr[alg] = selected_snr_db(S, noise, stream.A, c.selection.state["index"].astype(int))
    assert abs(snr["Uniform"] - 6.0) < 1.0  # 64 examples of a 6 dB stream
    for alg, value in snr.items():
        if alg != "Uniform":
            assert value > snr["Uniform"] + 3.0, (alg, snr)


# -- bad input -------------------------------------------------------------------------

def test_build_network_refuses_bad_arguments():
    s = _stream()
    with pytest.raises(TypeError, match="stream"):
        build_network(np.zeros((3, 64)))
    with pytest.raises(ValueError, match="n_selected"):
        build_network(s, n_examples=10, n_selected=11)
    with pytest.raises(ValueError, match="algorithm"):
        build_network(s, algorithm="Random")
    with pytest.raises(ValueError, match="encoder"):
        build_network(s, encoder="lasso")
    with pytest.raises(ValueError, match="gamma"):
        build_network(s, gamma=1.5)
    with pytest.raises(ValueError, match="passes"):
        build_network(s, passes=0)
    with pytest.raises(ValueError, match="lam"):
        build_network(s, lam=-1.0)
    with pytest.raises(ValueError, match="n_components"):
        build_network(_stream(k=5), encoder="k_sparse", n_components=4)


def _net(batch=10, n=3, dynamics=None):
    net = ns.Network(batch=batch)
    x = ns.Population("x", 4)
    code = ns.Population("code", 5, dynamics=dynamics or ns.SparseCode("k_winners", n_nonzero=2, nonneg=True))
    sel = ns.Population("sel", max(n, 1))
    net.add(x, code, *([sel] if n else []))
    net.connect(ns.ArrayStream(np.random.default_rng(0).standard_normal((4, batch, 4))), x)
    return net, x, code, sel


def test_selector_and_rule_refuse_what_they_cannot_run():
    net, x, code, sel = _net(n=0)
    D = ns.Projection("D", x, code, rule=ExampleSGD())
    net.add(D)
    with pytest.raises(ValueError, match="exactly one"):
        net.run(1)
    with pytest.raises(ValueError, match="uniform"):
        ExampleSelector(D, sel, measure="sun", selector="uniform")
    with pytest.raises(ValueError, match="needs a measure"):
        ExampleSelector(D, sel, measure=None, selector="by_sum")
    with pytest.raises(ValueError, match="measure"):
        ExampleSelector(D, sel, measure="loudness")
    with pytest.raises(TypeError, match="dictionary"):
        ExampleSelector(sel, sel)
    with pytest.raises(ValueError, match="gamma"):
        ExampleSGD(gamma=-0.1)
    with pytest.raises(ValueError, match="eta"):
        ExampleSGD(eta=0.0)

    net, x, code, sel = _net(batch=2, n=3)
    D = ns.Projection("D", x, code, rule=ExampleSGD())
    net.add(D, ExampleSelector(D, sel, measure="sun", selector="by_element"))
    with pytest.raises(ValueError, match=r"n must be in \[1, 2\]"):
        net.run(1)

    net, x, code, sel = _net(dynamics=ns.SparseCode("feature_sign", n_nonzero=2))
    D = ns.Projection("D", x, code, rule=ExampleSGD())
    net.add(D, ExampleSelector(D, sel, measure="sun", selector="by_element"))
    with pytest.raises(ValueError, match="target-count"):
        net.run(1)

    net, x, code, sel = _net()
    D = ns.Projection("D", x, code, rule=ExampleSGD())
    net.add(D, ExampleSelector(D, sel, measure="salmap", selector="by_sum", side=3))
    with pytest.raises(ValueError, match="side"):
        net.run(1)


def test_a_huge_learning_rate_still_gives_unit_norm_atoms():
    """Eq. 8 with eta = 1e300: |A| would overflow when squared; the projection onto C_A still gives unit atoms."""
    for backend in ("auto", "python"):
        c = build_network(_stream(), encoder="k_sparse", algorithm="SUNByElement", n_examples=N, n_selected=10,
                          eta=1e300)
        c.run(2, backend=backend)
        norms = np.linalg.norm(c.dictionary.weights, axis=1)
        np.testing.assert_allclose(norms, 1.0, rtol=1e-12)


@pytest.mark.parametrize("encoder", ["k_sparse", "lars", "omp"])
def test_more_elements_than_pixels_is_an_overcomplete_dictionary(encoder):
    """K > P (Fig. 4 goes to K = 196 with P = 64) is allowed: codes stay k-sparse (OMP: k <= P), atoms unit-norm."""
    stream = SparseDictionaryStream(gabor_dictionary(n_elements=196), k=5, snr_db=6.0, seed=0)
    c = build_network(stream, encoder=encoder, algorithm="SUNByElement", n_examples=200, n_selected=10)
    c.run(2)
    assert c.dictionary.weights.shape == (196, 64)
    np.testing.assert_allclose(np.linalg.norm(c.dictionary.weights, axis=1), 1.0, rtol=1e-12)
    if encoder != "lars":
        assert np.count_nonzero(c.code.activity, axis=1).max() <= 5
    assert np.all(c.code.activity >= 0.0)


def test_the_selection_population_keeps_one_row_and_refuses_wiring():
    c = build_network(_stream(), encoder="k_sparse", algorithm="SUNByElement", n_examples=N, n_selected=12)
    c.run(1)
    assert c.selection.activity.shape == (1, 12) and c.x.activity.shape == (N, 64)
    c.network.add(ns.Projection("into_selection", c.x, c.selection))
    with pytest.raises(ValueError, match="selection population takes no"):
        c.run(1)


_HOSTILE = st.one_of(st.none(), st.booleans(), st.integers(-3, 400), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=4), st.just([1, 2]))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_examples=_HOSTILE, n_selected=_HOSTILE, gamma=_HOSTILE, passes=_HOSTILE, lam=_HOSTILE,
       encoder=st.sampled_from(["lars", "omp", "k_sparse", "LARS", 3]),
       algorithm=st.sampled_from(list(ALGORITHMS) + ["random", None]))
def test_build_network_under_hostile_arguments(n_examples, n_selected, gamma, passes, lam, encoder, algorithm):
    """Every argument is checked before anything is built: a network, or a TypeError/ValueError naming one."""
    kwargs = dict(n_examples=n_examples, n_selected=n_selected, gamma=gamma, passes=passes, lam=lam,
                  encoder=encoder, algorithm=algorithm)
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k == "lam"}
    try:
        c = build_network(_stream(), **kwargs)
    except (TypeError, ValueError) as err:
        # the parameter named may be one left at its default whose range another argument sets
        # (n_selected = 100 > n_examples = 1)
        assert any(name in str(err) for name in [*kwargs, "n_selected", "n_components"]), str(err)
        return
    assert c.selection.size <= c.network.batch


def test_distance_needs_at_least_as_many_learned_elements_as_true_ones():
    """Issue 25: n_components below the truth's size runs, and D* says why it cannot be computed."""
    A = np.random.default_rng(0).standard_normal((16, 10))
    stream = SparseDictionaryStream(A / np.linalg.norm(A, axis=0), k=2, seed=0)
    small = build_network(stream, encoder="k_sparse", n_examples=40, n_selected=10, n_components=6)
    with pytest.raises(ValueError, match=r"needs n_components >= the ground truth's 10 elements.*learns 6"):
        small.distance()
    large = build_network(stream, encoder="k_sparse", n_examples=40, n_selected=10, n_components=14)
    d = large.distance()
    assert np.isfinite(d) and d >= 0.0


def test_example_sgd_encoders_are_distinct_and_omp_is_omp():
    # the epoch kernel dispatches on these codes: two equal codes would run one encoder for the other
    from sklearn.linear_model import orthogonal_mp_gram

    from neurosim.kernels import example_sgd as kx
    assert len({kx.K_WINNERS, kx.FEATURE_SIGN, kx.OMP, kx.NN_OMP}) == 4
    rng = np.random.default_rng(5)
    W = rng.standard_normal((6, 10))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    X = rng.standard_normal((4, 10))
    S, C, G = np.zeros((4, 6)), np.zeros((4, 6)), np.zeros((6, 6))
    fails = kx.encode_rows(kx.OMP, X, W, 2, 0.0, False, True, 100, 1e-10, S, C, G,
                           np.ones(6, dtype=np.bool_), np.zeros(4, dtype=np.int64))
    assert fails == 0
    want = orthogonal_mp_gram(W @ W.T, W @ X.T, n_nonzero_coefs=2).T
    np.testing.assert_allclose(S, want, rtol=1e-10, atol=1e-12)


def test_the_rule_counts_the_encoder_failures_of_each_step():
    """ExampleSGD's info: [failures of the last step's passes, their total] (compiled path)."""
    clean = build_network(_stream(seed=4), encoder="lars", algorithm="Uniform", n_examples=N, n_selected=20)
    clean.run(3)
    assert clean.network.projections["D"].rule.info.tolist() == [0, 0]  # feature-sign converges at its defaults
    c = build_network(_stream(seed=4), encoder="lars", algorithm="Uniform", n_examples=N, n_selected=20)
    c.network.populations["code"].dynamics.max_iter = 1  # one feature-sign iteration cannot solve these lassos
    rule = c.network.projections["D"].rule
    per_step = []
    with pytest.warns(ns.coding.NonConvergenceWarning):
        for _ in range(3):
            c.run(1)
            per_step.append(int(rule.info[0]))
    assert all(0 < f <= 20 * rule.passes for f in per_step)  # at most every example of every pass
    assert rule.info[1] == sum(per_step)
