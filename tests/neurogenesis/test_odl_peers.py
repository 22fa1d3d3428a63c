"""ODL of the paper-000 circuit against its peers: scikit-learn's MiniBatchDictionaryLearning and SPAMS trainDL.

With a fixed L1 weight (``build_network(..., "ODL", lam=lam)``) the circuit is
online dictionary learning of Mairal et al. (2009), the baseline of paper 000
(Alg. 1 without steps 5-9 and 16): each mini-batch is coded by the lasso
``min 0.5 ||x - D alpha||^2 + lam ||alpha||_1`` (Eq. 2 of Mairal et al.), the
statistics ``A = sum alpha alpha^T`` and ``B = sum x alpha^T`` are accumulated
(Alg. 1 step 11) and the dictionary follows by block-coordinate descent
(steps 13-19). scikit-learn ``MiniBatchDictionaryLearning(alpha=lam)`` and
SPAMS ``trainDL(mode=2, lambda1=lam, lambda2=0)`` minimise the same
per-sample objective (``/work/shared/DATA.md``). They differ in details that
do not change the objective: the peers weight past batches (Mairal et al.
2010, Sec. 3.4) and scale ``A`` and ``B`` by ``1/batch``, make one sweep of
the dictionary update per batch, and re-draw atoms that are (almost) never
used; SPAMS draws its batches in its own order.

Oracles:

* exact, one batch from the same dictionary: ``A``, ``B`` and the dictionary
  after one sweep equal scikit-learn's internal ``_A``, ``_B`` (times the
  batch size) and ``components_``, and ``A``, ``B`` equal SPAMS's returned
  model (``t0 = 0``, the batch as the whole data set);
* exact, thirty batches: with scikit-learn's weighting of the past applied
  to the circuit's ``A`` and ``B`` between steps, the circuit's dictionary
  is scikit-learn's after every batch (observed difference ~1e-14); and the
  same inside the circuit, ``decay=ns.schedules.Mairal2010(batch)`` (one
  run, compiled and NumPy paths; ``A``, ``B`` and the dictionary), whose
  values are scikit-learn's ``beta_t`` in closed form; a run cut by a
  checkpoint equals the uncut run;
* learning, natural-image patches: from the same initial dictionary each
  method learns on the same stream, and each learned dictionary's held-out
  objective, with codes from an independent solver (scikit-learn's LARS),
  is within 2 % of the best of the three; each is also well below the
  initial dictionary's (so the 2 % bound separates learning from not).

SPAMS runs in a subprocess (its bundled BLAS/OpenMP stays out of this
process) and is skipped when ``spams`` is not importable (``pip install
spams-bin``).
"""

import importlib.util
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

#: slow tier: the whole paper-000 circuit against scikit-learn and SPAMS (docs/testing.md, "The slow tier")
pytestmark = pytest.mark.slow

sklearn_dl = pytest.importorskip("sklearn.decomposition")
skimage_data = pytest.importorskip("skimage.data")
from sklearn.feature_extraction.image import extract_patches_2d  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim.models.neurogenesis import build_network  # noqa: E402

HAVE_SPAMS = importlib.util.find_spec("spams") is not None

# SPAMS trainDL in its own process: X (n, m) and D (k, m) in, the learned D and its model A, B out.
SPAMS_WORKER = textwrap.dedent("""
    import os, sys
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = "1"
    import numpy as np, spams
    d = np.load(sys.argv[1])
    D, model = spams.trainDL(np.asfortranarray(d["X"].T), D=np.asfortranarray(d["D"].T), lambda1=float(d["lam"]),
                             lambda2=0.0, mode=2, iter=int(d["iter"]), batchsize=int(d["batch"]), t0=float(d["t0"]),
                             numThreads=1, verbose=False, return_model=True)
    np.savez(sys.argv[2], D=np.asarray(D).T, A=np.asarray(model["A"]), B=np.asarray(model["B"]).T)
""")


def spams_train(tmp_path, X, D0, lam, iters, batch, t0=1e-5):
    """SPAMS trainDL in a subprocess; returns the learned dictionary (k, m) and the model's A (k, k), B (k, m)."""
    src, dst = tmp_path / "spams_in.npz", tmp_path / "spams_out.npz"
    np.savez(src, X=X, D=D0, lam=lam, iter=iters, batch=batch, t0=t0)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", SPAMS_WORKER, str(src), str(dst)], check=True, env=env, timeout=300)
    out = np.load(dst)
    return out["D"], out["A"], out["B"]


def patches(image, n, seed):
    """``n`` random 8x8 patches of ``image``, each centred and scaled to unit norm (flat ones dropped)."""
    P = extract_patches_2d(np.asarray(image, float), (8, 8), max_patches=n, random_state=seed).reshape(n, -1)
    P = P - P.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(P, axis=1)
    keep = norms > 1e-8 * norms.max()
    return P[keep] / norms[keep, None]


@pytest.fixture(scope="module")
def data():
    """Training patches from two photographs (shuffled), held-out patches from a third."""
    from skimage.color import rgb2gray

    train = np.vstack([patches(skimage_data.camera(), 1600, 0), patches(rgb2gray(skimage_data.astronaut()), 1600, 1)])
    train = train[np.random.default_rng(0).permutation(len(train))][:3000]
    test = patches(skimage_data.moon(), 1000, 2)
    return train, test


LAM = 0.15  # 1.2 / sqrt(m), Mairal et al. (2010)'s choice for m = 64
K, BATCH = 32, 100


def initial_dictionary(X, k, seed=1):
    """``k`` training samples (unit norm), the usual start of online dictionary learning."""
    return X[np.random.default_rng(seed).choice(len(X), k, replace=False)].copy()


def ours(X, D0, lam, batch, **kw):
    steps = len(X) // batch
    c = build_network(ns.ArrayStream(X[: steps * batch].reshape(steps, batch, -1)), D0.shape[0], "ODL", batch=batch,
                      lam=lam, record_every=10**9, **kw)
    c.dictionary.weights = D0
    return c, steps


def heldout_objective(X, D, lam):
    """Mean of ``0.5 ||x - D^T a||^2 + lam ||a||_1`` with lasso codes from scikit-learn's LARS (not our encoder)."""
    C = sklearn_dl.sparse_encode(X, D, algorithm="lasso_lars", alpha=lam)
    return float(np.mean(0.5 * ((X - C @ D) ** 2).sum(axis=1) + lam * np.abs(C).sum(axis=1)))


def test_one_batch_equals_sklearn_internals(data):
    X, _ = data
    D0 = initial_dictionary(X, K)
    Xb = X[:BATCH]
    c, _ = ours(Xb, D0, LAM, BATCH, max_sweeps=1)  # the peers make one sweep per batch
    c.network.run(1)
    A, B, D = c.code.state["A"], c.dictionary.arrays["B"], c.dictionary.weights

    peer = sklearn_dl.MiniBatchDictionaryLearning(K, alpha=LAM, batch_size=BATCH, dict_init=D0.copy(), random_state=0)
    peer.partial_fit(Xb)
    codes = sklearn_dl.sparse_encode(Xb, D0, algorithm="lasso_lars", alpha=LAM)
    # first batch: sklearn's A = C^T C / batch, B = X^T C / batch (its forgetting weight multiplies zeros)
    np.testing.assert_allclose(c.code.activity, codes, atol=1e-9)
    np.testing.assert_allclose(A, peer._A * BATCH, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(B, peer._B.T * BATCH, rtol=1e-9, atol=1e-12)
    used = np.diag(A) > 1e-6  # sklearn re-draws the others from the data; ours leaves them (a_jj = 0: no data term)
    assert used.sum() >= K // 2
    np.testing.assert_allclose(D[used], peer.components_[used], atol=1e-8)
    np.testing.assert_array_equal(D[np.diag(A) == 0.0], D0[np.diag(A) == 0.0])
    assert np.abs(D[used] - D0[used]).max() > 1e-2  # the update did move the used atoms


def sklearn_beta(step, batch):
    """scikit-learn's weight of the past before mini-batch ``step`` (0-based): Mairal et al. 2010, Sec. 3.4, rho = 1."""
    theta = (step + 1) * batch if step < batch - 1 else batch * batch + step + 1 - batch
    return (theta + 1 - batch) / (theta + 1)


def test_thirty_batches_equal_sklearn_given_its_weighting_of_the_past(data):
    # The circuit keeps the whole past (A <- A + sum alpha alpha^T, paper 000 Alg. 1 step 11); scikit-learn
    # scales A and B by beta_t first. Scaling the circuit's A and B by the same beta_t between steps must give
    # the same dictionary at every step: the same coding, the same statistics, the same block-coordinate sweep.
    X, _ = data
    D0 = initial_dictionary(X, K)
    steps = 30
    c, _ = ours(X[: steps * BATCH], D0, LAM, BATCH, max_sweeps=1)
    peer = sklearn_dl.MiniBatchDictionaryLearning(K, alpha=LAM, batch_size=BATCH, dict_init=D0.copy(), random_state=0)
    A, B = c.code.state["A"], c.dictionary.arrays["B"]
    for t in range(steps):
        A *= sklearn_beta(t, BATCH)  # in place: the engine holds these arrays
        B *= sklearn_beta(t, BATCH)
        c.network.run(1)
        peer.partial_fit(X[t * BATCH:(t + 1) * BATCH])
        assert np.diag(peer._A).min() > 1e-6  # so scikit-learn re-drew no atom (which the circuit never does)
        np.testing.assert_allclose(c.dictionary.weights, peer.components_, rtol=0, atol=1e-9, err_msg=f"batch {t}")
    np.testing.assert_allclose(A, peer._A * BATCH, rtol=1e-9, atol=1e-12)
    assert np.abs(c.dictionary.weights - D0).max() > 0.1


def test_mairal2010_schedule_is_sklearns_beta():
    # closed form against scikit-learn's _update_inner_stats formula (step = t - 1), on both sides of t = batch
    for batch in (1, 3, 100):
        sched = ns.schedules.Mairal2010(batch)
        t = np.arange(1, 3 * batch + 5)
        np.testing.assert_allclose(sched.values(1, t.size), [sklearn_beta(s - 1, batch) for s in t], rtol=1e-15)
    assert ns.schedules.Mairal2010(100)(1) == pytest.approx(1 / 101)  # the first batch all but replaces the zeros
    with pytest.raises(ValueError, match="batch"):
        ns.schedules.Mairal2010(0)


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_scheduled_decay_equals_sklearn_in_one_run(data, backend):
    # DictionaryMemory(decay=Mairal2010(batch)) is scikit-learn's weighting of the past inside the circuit: one
    # run, no Python between steps, and the dictionary equals MiniBatchDictionaryLearning's after 30 batches,
    # on the compiled path and on the NumPy reference alike
    X, _ = data
    D0 = initial_dictionary(X, K)
    steps = 30
    c, _ = ours(X[: steps * BATCH], D0, LAM, BATCH, max_sweeps=1, decay=ns.schedules.Mairal2010(BATCH))
    peer = sklearn_dl.MiniBatchDictionaryLearning(K, alpha=LAM, batch_size=BATCH, dict_init=D0.copy(), random_state=0)
    for t in range(steps):
        peer.partial_fit(X[t * BATCH:(t + 1) * BATCH])
        assert np.diag(peer._A).min() > 1e-6  # scikit-learn re-drew no atom (which the circuit never does)
    c.network.run(steps, backend=backend)
    np.testing.assert_allclose(c.dictionary.weights, peer.components_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(c.code.state["A"], peer._A * BATCH, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(c.dictionary.arrays["B"], peer._B.T * BATCH, rtol=1e-9, atol=1e-12)


def test_scheduled_decay_is_checkpoint_safe(data, tmp_path):
    # a schedule is a function of the step number: a run cut in two, through a checkpoint into a fresh
    # circuit, equals the uncut run bit for bit (compiled) and the NumPy reference to rounding
    X, _ = data
    D0 = initial_dictionary(X, K)
    steps = 12

    def build():
        return ours(X[: steps * BATCH], D0, LAM, BATCH, max_sweeps=1, decay=ns.schedules.Mairal2010(BATCH))[0]

    whole = build()
    whole.network.run(steps)
    first = build()
    first.network.run(5)
    path = ns.io.save_checkpoint(first.network, tmp_path / "odl")
    second = build()
    ns.io.load_checkpoint(second.network, path)
    second.network.run(steps - 5)
    for got in (second.dictionary.weights, second.code.state["A"], second.dictionary.arrays["B"]):
        assert got is not None
    np.testing.assert_array_equal(second.dictionary.weights, whole.dictionary.weights)
    np.testing.assert_array_equal(second.code.state["A"], whole.code.state["A"])
    np.testing.assert_array_equal(second.dictionary.arrays["B"], whole.dictionary.arrays["B"])
    reference = build()
    reference.network.run(steps, backend="python")
    np.testing.assert_allclose(reference.dictionary.weights, whole.dictionary.weights, rtol=0, atol=1e-9)
    # and the weighting did act: the plain memory (decay 1) ends elsewhere
    plain = ours(X[: steps * BATCH], D0, LAM, BATCH, max_sweeps=1)[0]
    plain.network.run(steps)
    assert np.abs(plain.dictionary.weights - whole.dictionary.weights).max() > 1e-3


def test_decay_schedule_out_of_range_is_refused():
    from neurosim.rules.dictionary import DictionaryMemory

    stream = ns.ArrayStream(np.random.default_rng(0).standard_normal((3, 4, 3)))
    c = build_network(stream, 2, "ODL", batch=4, beta_c=2, lam=0.1, decay=0.5)
    memory = next(r for r in c.network.unit_rules if isinstance(r, DictionaryMemory))
    assert memory.decay == 0.5
    with pytest.raises(ValueError, match="decay"):
        memory.decay = ns.schedules.LinearRamp(1.0, 2.0, 2)  # leaves (0, 1]
    with pytest.raises(ValueError, match="decay"):
        build_network(stream, 2, "ODL", batch=4, beta_c=2, lam=0.1, decay=0.0)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SPAMS, reason="spams not importable (pip install spams-bin)")
def test_one_batch_memory_equals_spams_model(data, tmp_path):
    X, _ = data
    D0 = initial_dictionary(X, K)
    Xb = X[:BATCH]
    c, _ = ours(Xb, D0, LAM, BATCH)
    c.network.run(1)
    # t0 = 0: no extra weighting of the first batch, so SPAMS's A, B are C^T C / batch, X^T C / batch
    _, A_s, B_s = spams_train(tmp_path, Xb, D0, LAM, iters=1, batch=BATCH, t0=0.0)
    np.testing.assert_allclose(c.code.state["A"], A_s * BATCH, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(c.dictionary.arrays["B"], B_s * BATCH, rtol=1e-7, atol=1e-10)


def test_lam_is_validated():
    stream = ns.ArrayStream(np.ones((2, 4, 3)))
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            build_network(stream, 2, "ODL", batch=4, beta_c=2, lam=bad)
    with pytest.raises(TypeError, match="lam"):
        build_network(stream, 2, "ODL", batch=4, beta_c=2, lam="0.1")
    c = build_network(stream, 2, "ODL", batch=4, beta_c=2, lam=0.1)
    assert c.code.dynamics.lam == 0.1 and c.code.dynamics.n_nonzero is None


@pytest.mark.slow
def test_learned_dictionaries_match_peers_on_heldout_objective(data, tmp_path):
    X, Xte = data
    D0 = initial_dictionary(X, K)
    c, steps = ours(X, D0, LAM, BATCH)  # ODL as the paper runs it: sweeps until tol
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the encoder must converge on every sample
        c.network.run(steps)
    results = {"ours": heldout_objective(Xte, c.dictionary.weights, LAM)}

    peer = sklearn_dl.MiniBatchDictionaryLearning(K, alpha=LAM, batch_size=BATCH, dict_init=D0.copy(), random_state=0)
    for t in range(steps):
        peer.partial_fit(X[t * BATCH:(t + 1) * BATCH])
    results["sklearn"] = heldout_objective(Xte, peer.components_, LAM)
    if HAVE_SPAMS:
        D_s, _, _ = spams_train(tmp_path, X, D0, LAM, iters=steps, batch=BATCH)
        results["spams"] = heldout_objective(Xte, D_s, LAM)

    start = heldout_objective(Xte, D0, LAM)
    best = min(results.values())
    assert start > 1.05 * best, (start, results)  # learning moved the objective far more than the tolerance
    for name, value in results.items():
        assert value <= 1.02 * best, (name, results)
