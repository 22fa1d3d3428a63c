"""Checks that pin down behaviour the other engine tests leave open.

Each test here has an oracle that a plausible wrong version of the code
violates: masked synapses that must stay exactly zero, the Jacobi stopping
rule against the exact fixed point, a compiled trigger firing at a step
computed by hand, a checkpoint that must carry the projection masks (and
refuse other files), a NaN input that only the load test can see, and the
Hebbian and Oja kernels against their NumPy reference.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.events import Link, Unlink
from neurosim.streams import GaussianStream
from neurosim.triggers import every_step, variable_mean_below

from sm_helpers import make_sm, state_of


# -- masked projections under NormalizedHebbian ----------------------------------------------

def _masks(n=12, k=3):
    """Fixed feed-forward and lateral masks with absent synapses in every row."""
    rng = np.random.default_rng(42)
    w_mask = rng.random((k, n)) < 0.6
    w_mask[:, 0] = False  # every row loses at least one synapse, whatever the draw
    m_mask = np.ones((k, k), bool)
    m_mask[0, 2] = m_mask[2, 1] = False  # the diagonal is removed by the projection itself
    return w_mask, m_mask


def make_masked(batch=1, seed=0):
    """The similarity-matching circuit of ``make_sm("XY")`` with both projections masked."""
    n, k = 12, 3
    w_mask, m_mask = _masks(n, k)
    lam = np.r_[4.0, 3.0, 2.0, np.linspace(0.2, 0.05, n - 3)]
    net = ns.Network(seed=seed, batch=batch)
    x = ns.Population("x", n)
    y = ns.Population("y", k, dynamics=ns.Jacobi(eta=0.1, max_iter=30))
    net.add(x, y)
    net.connect(GaussianStream(lam, seed=1, eigenvectors="random", eigvec_seed=5, chunk=64), x)
    sig = ns.SquaredNorm(x)
    net.add(ns.CumulativeActivity(y, alpha=0.08, signal=sig, beta=0.99))
    net.add(ns.Projection("W", x, y, mask=w_mask, rule=ns.NormalizedHebbian(0.08, sig)))
    # Uniform rather than zero initial lateral weights, so the lateral mask has entries to zero
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Uniform(0.0, 0.1), mask=m_mask,
                          rule=ns.NormalizedHebbian(0.08, sig)))
    net.record(y, ["activity", "mu"])
    return net


def _absent(net):
    """Boolean maps of the synapses that must be zero: masked out, plus the lateral diagonal."""
    w_mask, m_mask = _masks()
    return {"W": ~w_mask, "M": ~m_mask | np.eye(3, dtype=bool)}


@pytest.mark.parametrize("batch", [1, 3])  # the rule kernel has a separate single-sample branch
def test_masked_normalized_hebbian_on_every_path(batch):
    steps = 200
    seg = make_masked(batch)
    seg.run(steps, backend="compiled")
    per = make_masked(batch)
    # a callback due every step forces the per-step path, which calls the same kernels one at a time
    per.add_callback(lambda net: None, phase="dynamics", when="after", every=1)
    per.run(steps, backend="compiled")
    ref = make_masked(batch)
    ref.run(steps, backend="python")

    for net in (seg, per, ref):
        for name, absent in _absent(net).items():
            w = net.projections[name].weights
            # masked synapses are not merely small: the rule must never write them
            assert np.all(w[absent] == 0.0), (name, w[absent])
            # and the others did learn (a mask applied everywhere would also pass the line above)
            assert np.all(w[~absent] != 0.0), name
    for key, value in state_of(seg).items():
        assert np.array_equal(value, state_of(per)[key]), key
        # the NumPy reference sums in another order; 1e-9 is far above rounding after 200 steps
        np.testing.assert_allclose(value, state_of(ref)[key], rtol=1e-9, atol=1e-12, err_msg=key)


# -- Jacobi with a tolerance -------------------------------------------------------------------

N_IN, N_OUT = 6, 4


def _fixed_weights():
    rng = np.random.default_rng(7)
    W = rng.normal(0.0, 1.0, (N_OUT, N_IN))
    M = rng.uniform(0.0, 0.3, (N_OUT, N_OUT))
    M = 0.5 * (M + M.T)
    np.fill_diagonal(M, 0.0)
    return W, M


def make_relax(tol, zero_start, batch=2, eta=0.3, max_iter=2000):
    """Jacobi relaxation with fixed weights (no rules), so each step's fixed point is known."""
    W, M = _fixed_weights()
    net = ns.Network(seed=0, batch=batch)
    x = ns.Population("x", N_IN)
    y = ns.Population("y", N_OUT, dynamics=ns.Jacobi(eta=eta, tol=tol, max_iter=max_iter, zero_start=zero_start))
    net.add(x, y)
    net.connect(GaussianStream(np.linspace(2.0, 0.5, N_IN), seed=3, chunk=32), x)
    net.add(ns.Projection("W", x, y, init=ns.Constant(0.0)))
    net.add(ns.Projection("M", y, y, sign=-1, init=ns.Constant(0.0)))
    net.projections["W"].weights[:] = W
    net.projections["M"].weights[:] = M
    return net


def _one_step_at_a_time(net, steps, backend):
    """Run ``steps`` single-step runs; return per step (iterations, x, y)."""
    out = []
    for _ in range(steps):
        net.run(1, backend=backend)
        out.append((net.populations["y"].dynamics.iterations,
                    net.populations["x"].activity.copy(), net.populations["y"].activity.copy()))
    return out


def _hand_iterations(x, y_prev, tol, zero_start, eta=0.3):
    """The documented stopping rule, iterated from scratch: ``max|dy| <= tol max(max|y|, max|drive|)``."""
    W, M = _fixed_weights()
    drive = x @ W.T
    y = np.zeros_like(drive) if zero_start else y_prev.copy()
    for it in range(1, 2001):
        new = (1.0 - eta) * y + eta * (drive - y @ M.T)
        done = np.abs(new - y).max() <= tol * max(np.abs(new).max(), np.abs(drive).max())
        y = new
        if done:
            return it
    return -2000


@pytest.mark.parametrize("zero_start", [True, False])
# tol = 0.5 is loose enough that some steps stop after the first iterate, which the kernel
# tests separately when it starts from zero
@pytest.mark.parametrize("tol", [0.5, 1e-3, 1e-8])
def test_jacobi_tolerance_is_honoured_on_both_paths(tol, zero_start):
    eta, steps = 0.3, 25
    W, M = _fixed_weights()
    # iteration matrix T = (1 - eta) I - eta M: a contraction in the max norm with factor q
    T = (1.0 - eta) * np.eye(N_OUT) - eta * M
    q = np.abs(T).sum(axis=1).max()
    assert q < 1.0
    comp = _one_step_at_a_time(make_relax(tol, zero_start), steps, "compiled")
    ref = _one_step_at_a_time(make_relax(tol, zero_start), steps, "python")
    y_prev = np.zeros((2, N_OUT))
    counts = []
    for t, ((it_c, x_c, y_c), (it_r, x_r, y_r)) in enumerate(zip(comp, ref), start=1):
        assert np.array_equal(x_c, x_r)
        # same stopping rule on both paths: same number of iterations, and the documented count
        assert it_c == it_r == _hand_iterations(x_c, y_prev, tol, zero_start), t
        counts.append(it_c)
        np.testing.assert_allclose(y_c, y_r, rtol=1e-9, atol=1e-12)
        # The tolerance holds: one more iteration moves y by at most q * tol max(max|y|, max|drive|), and
        # the exact fixed point (I + M) y* = W x lies within q / (1 - q) times that.
        drive = x_c @ W.T
        bound = tol * max(np.abs(y_c).max(), np.abs(drive).max())
        # the test's own rounding (a few operations on values of size max|y|) is ~1e-15 max|y|
        slack = 1e-12 * (1.0 + np.abs(y_c).max())
        step = (1.0 - eta) * y_c + eta * (drive - y_c @ M.T) - y_c
        assert np.abs(step).max() <= q * bound + slack, t
        exact = np.linalg.solve(np.eye(N_OUT) + M, drive.T).T
        err = np.abs(y_c - exact).max()
        assert err <= q / (1.0 - q) * bound + slack, (t, err, bound)
        y_prev = y_c
    if tol == 0.5 and zero_start:
        # from y = 0 the first update is eta drive, eta max|drive| <= tol max|drive|: every step stops there
        assert counts == [1] * steps, counts
    elif tol == 0.5:
        assert 1 in counts and max(counts) > 1, counts
    else:
        assert min(counts) > 1, counts  # the tolerance, not an early exit, ended the iteration


def test_jacobi_compiled_segment_matches_per_step_kernels_with_tolerance():
    seg = make_sm("XY", tol=1e-6, max_iter=200)
    seg.run(150)
    per = make_sm("XY", tol=1e-6, max_iter=200)
    per.add_callback(lambda net: None, phase="dynamics", when="after", every=1)
    per.run(150)
    for key, value in state_of(seg).items():
        assert np.array_equal(value, state_of(per)[key]), key
    assert seg.populations["y"].dynamics.iterations == per.populations["y"].dynamics.iterations > 1


# -- compiled trigger: variable_mean_below ------------------------------------------------------

def make_decaying(threshold, every=1):
    """``mu`` decays by exactly 1/4 a step (beta = 1/2, alpha = 0, silent units): binary-exact values.

    Two units start at mu = 8 and 24; their mean is 16 / 4^t after t steps,
    while the smaller unit alone is 8 / 4^t. A trigger on the mean must use
    both units and the strict ``<``.
    """
    net = ns.Network(seed=0, batch=1)
    y = ns.Population("y", 2)
    net.add(y)
    net.connect(ns.ArrayStream(np.zeros((1, 2))), y)  # silent units: y^2 adds nothing to mu
    net.add(ns.CumulativeActivity(y, alpha=0.0, beta=0.5))
    y.state["mu"][:] = [8.0, 24.0]
    fired = []

    def action(n):
        fired.append(n.t)
        return []

    net.add(ns.Trigger(variable_mean_below(y, "mu", threshold), action, every=every))
    return net, fired


def test_variable_mean_below_fires_at_the_hand_computed_step():
    # mean after t steps: 16/4^t = 4, 1, 0.25, 1/16, ... The threshold 0.25 is reached exactly
    # at t = 3, where "below" is still false; the first step below it is t = 4. (The smaller
    # unit alone, 8/4^t, is below 0.25 from t = 3 on, so a min instead of a mean fires early.)
    net, fired = make_decaying(0.25)
    net.run(10, backend="compiled")
    assert fired == [4, 5, 6, 7, 8, 9, 10]
    assert net.populations["y"].state["mu"].mean() == 16.0 / 4**10
    # evaluated only on steps that are multiples of `every`
    net, fired = make_decaying(0.25, every=3)
    net.run(10, backend="compiled")
    assert fired == [6, 9]


def test_variable_mean_below_does_not_fire_above_threshold():
    # mean stays >= 16/4^10 > 1e-6 over 10 steps
    net, fired = make_decaying(1e-6)
    net.run(10, backend="compiled")
    assert fired == []
    # the python backend evaluates the same compiled condition per step
    net, fired = make_decaying(0.25)
    net.run(10, backend="python")
    assert fired == [4, 5, 6, 7, 8, 9, 10]


# -- checkpoints of masked networks -------------------------------------------------------------

def test_checkpoint_restores_masks_and_continues_bit_identically(tmp_path):
    # A unit of y dies at step 30, so the saved masks are no longer the ones the building code
    # makes: a network restored without them would keep 3-row masks (or none at all).
    def grow(net, steps):
        net.run(30)
        net.apply(ns.Death(net.populations["y"], [1]))
        net.run(steps - 30)

    whole = make_masked()
    grow(whole, 120)

    first = make_masked()
    grow(first, 60)
    saved = {n: p.mask.copy() for n, p in first.projections.items()}
    assert saved["W"].shape == (2, 12) and saved["M"].shape == (2, 2)
    path = first.save(tmp_path / "ckpt.npz")

    fresh = make_masked()  # same code, fresh state
    fresh.load(path)
    for name in ("W", "M"):
        assert fresh.projections[name].mask is not None, name
        assert np.array_equal(fresh.projections[name].mask, saved[name]), name
    fresh.run(60)
    assert fresh.t == whole.t == 120
    for key, value in state_of(whole).items():
        assert np.array_equal(value, state_of(fresh)[key]), key
    w_absent = ~fresh.projections["W"].mask
    assert w_absent.any() and np.all(fresh.projections["W"].weights[w_absent] == 0.0)


# -- non-finite input that nothing downstream would see -------------------------------------------

class _NaNAt(ns.ChunkedRandomStream):
    """Emits NaN at one step (ArrayStream refuses such data)."""

    def __init__(self, dim, bad_step):
        super().__init__(dim, seed=0, chunk=16)
        self.bad_step = bad_step

    def _draw(self, rng, t0, n, batch):
        x = rng.standard_normal((n, batch, self.dim))
        for t in range(t0, t0 + n):
            if t == self.bad_step - 1:  # steps count from 1
                x[t - t0] = np.nan
        return x


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_non_finite_input_is_caught_where_it_is_loaded(backend):
    # x drives nothing, so no later phase computes from the NaN: only the test made as the
    # input is loaded (in a segment: the finite copy of the input) can report it at its step.
    net = ns.Network(seed=0)
    x = ns.Population("x", 3)
    net.add(x)
    net.connect(_NaNAt(3, 23), x)
    net.record(x, "activity")
    with pytest.raises(ns.SimulationDiverged) as info:
        net.run(60, backend=backend)
    assert info.value.step == 23
    assert info.value.variable == "x.activity"


# -- Hebbian and Oja: compiled kernels against the NumPy reference ---------------------------------

def make_plain(rule, batch):
    net = ns.Network(seed=2, batch=batch)
    x = ns.Population("x", 5)
    y = ns.Population("y", 3, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream([1.0, 0.8, 0.6, 0.4, 0.2], seed=4, chunk=32), x)
    mask = np.ones((3, 5), bool)
    mask[1, 2] = False
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.0, 0.3), mask=mask, rule=rule))
    return net


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("rule", [lambda: ns.Oja(rate=0.01), lambda: ns.Hebbian(rate=0.01, decay=0.05)])
def test_hebbian_and_oja_kernels_match_their_numpy_reference(rule, batch):
    # Oja's rule is self-normalising and Hebbian with decay stays bounded here, so after
    # 150 steps both paths still agree to 1e-9 relative unless an update term differs.
    a, b = make_plain(rule(), batch), make_plain(rule(), batch)
    a.run(150, backend="compiled")
    b.run(150, backend="python")
    wa, wb = a.projections["W"].weights, b.projections["W"].weights
    np.testing.assert_allclose(wa, wb, rtol=1e-9, atol=1e-12)
    assert wa[1, 2] == 0.0 and np.all(np.isfinite(wa))
    assert not np.allclose(wa, make_plain(rule(), batch).projections["W"].weights)  # it learned


def test_load_refuses_a_file_of_another_format(tmp_path):
    import json

    net = make_masked()
    net.run(5)
    path = net.save(tmp_path / "ckpt.npz")
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    meta = json.loads(str(data["__meta__"]))
    meta["format"] = "something-else-1"
    data["__meta__"] = np.array(json.dumps(meta))
    other = tmp_path / "other.npz"
    np.savez(other, **data)
    with pytest.raises(ValueError, match="is not a"):
        make_masked().load(other)


# -- seed-53 survivors: synapse events without a structural change, masks in the rollback copy ----

def _lateral_net():
    """y (4 units, ids 0-3) with a masked lateral projection holding one edge 0 <-> 1."""
    net = ns.Network(seed=0)
    x = ns.Population("x", 2)
    y = ns.Population("y", 4)
    net.add(x, y)
    mask = np.zeros((4, 4), bool)
    mask[0, 1] = mask[1, 0] = True
    net.add(ns.Projection("E", y, y, init=ns.Constant(0.0), mask=mask))
    return net


def test_link_and_unlink_alone_edit_the_mask_by_stable_id():
    # A Link or Unlink applied with no Birth or Death in the same call finds the units' rows and columns
    # from the population as it is; after a Death the ids no longer equal the indices.
    net = _lateral_net()
    y, E = net.populations["y"], net.projections["E"]
    net.apply(Link(E, 2, 3, symmetric=True, weight=0.5))
    want = np.zeros((4, 4), bool)
    want[0, 1] = want[1, 0] = want[2, 3] = want[3, 2] = True
    np.testing.assert_array_equal(E.mask, want)
    assert E.weights[2, 3] == E.weights[3, 2] == 0.5
    net.apply(Unlink(E, 0, 1, symmetric=True))
    want[0, 1] = want[1, 0] = False
    np.testing.assert_array_equal(E.mask, want)
    net.apply(ns.Death(y, [0]))  # ids 1, 2, 3 now sit at indices 0, 1, 2
    net.apply(Link(E, 1, 3, symmetric=True))
    np.testing.assert_array_equal(y.ids, [1, 2, 3])
    want = np.zeros((3, 3), bool)
    want[1, 2] = want[2, 1] = want[0, 2] = want[2, 0] = True
    np.testing.assert_array_equal(E.mask, want)
    assert list(net.event_log.kind)[-1] == "link" and list(net.event_log.partner)[-1] == 3


def test_a_rolled_back_step_restores_the_masks():
    # The engine copies every projection's mask before a step it may have to undo; a failed action
    # after the copy must leave the masks as they were, not drop them (an unmasked projection would
    # let its rule write every synapse).
    net = make_masked()
    masks = {n: p.mask.copy() for n, p in net.projections.items()}
    boom = [True]

    def bad_action(n):
        if n.t == 30 and boom:
            boom.clear()
            raise KeyError("action failed")

    net.add(ns.Trigger(every_step(), bad_action, every=10))
    with pytest.raises(KeyError, match="action failed"):
        net.run(40)
    for name, mask in masks.items():
        assert net.projections[name].mask is not None, name
        np.testing.assert_array_equal(net.projections[name].mask, mask)
    net.run(10)
    for name, absent in _absent(net).items():
        assert np.all(net.projections[name].weights[absent] == 0.0)


def test_callbacks_must_run_every_one_or_more_steps():
    net = make_sm()
    with pytest.raises(ValueError, match="every"):
        net.add_callback(lambda n: None, every=0)


def test_a_stream_fed_population_is_not_tested_again_every_step():
    # A population fed by a stream is tested for finiteness as its values are loaded: the per-step
    # finiteness checks leave out its activity (a second pass over the input each step) and test
    # every variable that dynamics or components write.
    from neurosim.engine import Engine

    labels = [ref.label for ref in Engine(make_sm())._checks()]
    assert "x.activity" not in labels
    assert "y.activity" in labels and "y.mu" in labels


def test_birth_refuses_keys_that_name_no_projection():
    y = ns.Population("y", 3)
    with pytest.raises(TypeError, match="weights keys must be projections or their names; got int"):
        ns.Birth(y, 1, weights={3: np.zeros((1, 2))})
    with pytest.raises(TypeError, match="unlinked must hold projections or their names; got float"):
        ns.Birth(y, 1, unlinked=[1.5])
    born = ns.Birth(y, 1, weights={"W": np.zeros((1, 2))}, unlinked=["E"])
    assert set(born.weights) == {"W"} and born.unlinked == {"E"}


def test_links_set_and_unlinks_reset_the_per_synapse_arrays():
    # a Link writes its values (or the array's init) into the projection's per-synapse arrays, an Unlink
    # puts the init back; both by stable id, with no Birth or Death in the same call
    net = _lateral_net()
    E = net.projections["E"]
    E.add_array("age", init=-1.0)
    net.apply(Link(E, 2, 3, symmetric=True, values={"age": 5.0}), Link(E, 0, 2))
    assert E.arrays["age"][2, 3] == E.arrays["age"][3, 2] == 5.0
    assert E.arrays["age"][0, 2] == -1.0 and E.mask[0, 2] and not E.mask[2, 0]
    net.apply(Unlink(E, 3, 2, symmetric=True))
    assert E.arrays["age"][2, 3] == E.arrays["age"][3, 2] == -1.0 and not E.mask[2, 3]
    # after a Birth in the same call the projection is staged whole (its shape changes): the same results
    y = net.populations["y"]
    net.apply(ns.Birth(y, 1, unlinked=[E]), Link(E, 4, 1, symmetric=True, values={"age": 7.0}),
              Link(E, 4, 3), Unlink(E, 0, 1, symmetric=True))
    assert y.ids.tolist() == [0, 1, 2, 3, 4]
    assert E.arrays["age"][4, 1] == E.arrays["age"][1, 4] == 7.0 and E.arrays["age"][4, 3] == -1.0
    assert E.mask[4, 3] and not E.mask[3, 4] and not E.mask[4, [0, 2]].any()
    assert not E.mask[0, 1] and E.arrays["age"][0, 1] == E.arrays["age"][1, 0] == -1.0


def test_membership_covers_populations_projections_and_recorders():
    net = make_sm()
    assert {"x", "y", "W", "M"} <= {n for n in ("x", "y", "W", "M") if n in net}
    assert "y" in net.recorders and "y" in net  # the recorder named after its population
    net.record(net.populations["y"], "mu", name="mu_trace")
    assert "mu_trace" in net and "nothing" not in net


def test_a_population_of_another_batch_wired_without_dynamics_is_refused():
    # a population holding another batch of samples than the network may only be a selection's, which
    # takes no dynamics, input or projections; one wired by a projection is refused even without dynamics
    net = ns.Network(batch=2)
    s = ns.Population("s", 3)
    y = ns.Population("y", 2, dynamics=ns.Linear())
    net.add(s, y)
    net.connect(ns.ArrayStream(np.ones((4, 2, 3))), s)
    net.add(ns.Projection("sy", s, y))
    s.set_batch(5)  # as ExampleSelector does to its selection population, which must not be wired
    with pytest.raises(ValueError, match=r"population 's' holds 5 sample\(s\) per step but is wired into"):
        net.run(1)


def test_a_population_of_another_batch_with_dynamics_is_refused_even_unwired():
    # the other half of the rule: dynamics alone (no projection, no input) make a population part of the
    # network's step, so it must hold the network's batch
    net = ns.Network(batch=2)
    s = ns.Population("s", 3)
    y = ns.Population("y", 2, dynamics=ns.Linear())
    z = ns.Population("z", 2, dynamics=ns.Linear())
    net.add(s, y, z)
    net.connect(ns.ArrayStream(np.ones((4, 2, 3))), s)
    net.add(ns.Projection("sy", s, y))
    z.set_batch(5)
    with pytest.raises(ValueError, match=r"population 'z' holds 5 sample\(s\) per step but is wired into"):
        net.run(1)
