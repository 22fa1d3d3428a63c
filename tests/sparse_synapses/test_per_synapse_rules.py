"""User rules written per synapse (``local_rule(per_synapse=True)``) on sparse and dense synapses (issue 39).

The oracle is a NumPy transcription of the rule's equation, run on the
same activity (the post activity is clamped to an input): the same numbers
on sparse synapses, on the masked dense projection with the same synapses
and on a lateral projection (no self-synapse), on both paths.
"""

import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from backends import PATHS
from clamped_activity import Clamp, at_synapses, data

import neurosim as ns
from neurosim.params import Float
from neurosim.rules import LocalRule, local_rule


def _trace(post, trace, rate, decay):
    """The unit update: ``trace_i <- 0.5 trace_i + 0.5 mean_b y_i`` (after the synapses)."""
    batch = post.shape[0]
    for i in range(trace.shape[0]):
        acc = 0.0
        for b in range(batch):
            acc += post[b, i]
        trace[i] = 0.5 * trace[i] + 0.5 * acc / batch


@local_rule(params={"rate": Float(0.05, low=0.0, high=1.0), "decay": Float(0.01, low=0.0, high=1.0)},
            post_variables={"trace": 1.0}, per_synapse=True, unit_update=_trace)
def TraceHebbian(w, post, pre, trace, rate, decay):
    """``w <- (1 - decay) w + rate trace_i mean_b(y_i x_j)``, the trace of the step before."""
    acc = 0.0
    for b in range(post.shape[0]):
        acc += post[b] * pre[b]
    return (1.0 - decay) * w + rate * trace * acc / post.shape[0]


def _scaled_decay(w, post, pre, rate):
    return w - rate * w * abs(pre[0])


# the function-call form: the module's name _scaled_decay stays the plain function
ScaledDecay = local_rule(_scaled_decay, params={"rate": Float(0.1, low=0.0, high=1.0)}, per_synapse=True,
                         name="ScaledDecay")

N_PRE, N_POST, STEPS = 20, 9, 12


def circuit(storage, batch, steps=STEPS):
    net = ns.Network(seed=7, batch=batch)
    x, c = ns.Population("x", N_PRE), ns.Population("c", N_POST)
    y = ns.Population("y", N_POST, dynamics=Clamp(c))
    net.add(x, c, y)
    net.connect(ns.ArrayStream(data(steps, batch, N_PRE, seed=3)), x)
    net.connect(ns.ArrayStream(data(steps, batch, N_POST, seed=4)), c)
    net.add(ns.Projection("W", x, y, connectivity=ns.FixedProbability(0.4), storage=storage, init=ns.Normal(0.5),
                          rule=TraceHebbian(0.05, 0.01)),
            ns.Projection("M", y, y, sign=-1, connectivity=ns.FixedProbability(0.5), storage=storage,
                          init=ns.Uniform(0.0, 1.0), rule=ScaledDecay(0.1)))
    return net


def transcription(net, steps=STEPS):
    """The rules in NumPy on the dense matrices (zeros where no synapse is), over the same inputs."""
    W, M = net["W"].to_dense(), net["M"].to_dense()
    mask_w, mask_m = W != 0, M != 0
    trace = np.ones(N_POST)
    X, Y = data(steps, net.batch, N_PRE, seed=3), data(steps, net.batch, N_POST, seed=4)
    for t in range(steps):
        x, y = X[t], Y[t]
        W = np.where(mask_w, 0.99 * W + 0.05 * trace[:, None] * (y.T @ x) / net.batch, 0.0)
        M = np.where(mask_m, M - 0.1 * M * np.abs(y[0])[None, :], 0.0)
        trace = 0.5 * trace + 0.5 * y.mean(axis=0)
    return W, M, trace


@pytest.mark.parametrize("backend", PATHS)
@pytest.mark.parametrize("batch", [1, 3])
def test_a_per_synapse_rule_learns_its_equation_on_sparse_and_dense_synapses(batch, backend):
    a, b = circuit("dense", batch), circuit("sparse", batch)
    W, M, trace = transcription(b)
    assert np.array_equal(W != 0, a["W"].mask) and not M.diagonal().any()
    a.run(STEPS, backend=backend)
    b.run(STEPS, backend=backend)
    for name, want in (("W", W), ("M", M)):
        # the same function on the same synapses: the same bits on both storages
        assert np.array_equal(at_synapses(a[name]), b[name].weights), name
        assert np.all(a[name].weights[~a[name].mask] == 0.0), name
        post, pre = b[name].synapse_index.pairs()
        np.testing.assert_allclose(b[name].weights, want[post, pre], rtol=1e-12, atol=1e-15, err_msg=name)
    assert np.array_equal(a["y"].state["trace"], b["y"].state["trace"])
    np.testing.assert_allclose(b["y"].state["trace"], trace, rtol=1e-12)
    assert not a._engine.missing if backend == "compiled" else True


def test_the_per_step_kernel_path_gives_the_segments_bits():
    a, b = circuit("sparse", 2), circuit("sparse", 2)
    a.run(STEPS)
    b.add_callback(lambda net: None)  # a callback every step: the kernels one step at a time
    b.run(STEPS)
    for name in ("W", "M"):
        assert np.array_equal(a[name].weights, b[name].weights)


def test_the_rule_class_says_what_it_is():
    assert TraceHebbian.per_synapse and TraceHebbian.sparse_projections
    assert TraceHebbian.variable_names == ("trace",) and TraceHebbian.param_names == ("rate", "decay")
    assert TraceHebbian(0.2).params() == {"rule": "TraceHebbian", "rate": 0.2, "decay": 0.01}
    assert sorted(TraceHebbian.maps) == [("dense", False), ("dense", True), ("sparse", False), ("sparse", True)]
    assert ScaledDecay.unit_kernel is None and "ScaledDecay" in repr(ScaledDecay.maps["sparse", True])


@local_rule(params={"limit": Float(1.0)}, per_synapse=True)
def Fragile(w, post, pre, limit):
    """Reads past the end of ``pre`` (batch 1) once an input exceeds ``limit``."""
    if pre[0] > limit:
        return pre[1]
    return w


def _fragile(n, storage):
    steps = np.zeros((6, 1, n))
    steps[3, 0, 0] = 5.0  # step 4 crosses the limit
    net = ns.Network(seed=0)
    x, c = ns.Population("x", n), ns.Population("c", n)
    y = ns.Population("y", n, dynamics=Clamp(c))
    net.add(x, c, y, ns.Projection("W", x, y, connectivity=ns.AllToAll(), storage=storage, rule=Fragile(1.0)))
    net.connect(ns.ArrayStream(steps), x)
    net.connect(ns.ArrayStream(steps), c)
    return net


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_an_index_past_the_end_raises_at_its_step_on_both_paths(backend):
    net = _fragile(4, "sparse")
    with pytest.raises(IndexError, match="Fragile on projection 'W' indexed an array out of bounds at step 4"):
        net.run(6, backend=backend)
    assert net.t == 3


@pytest.mark.slow
@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs a thread pool of two (NUMBA_NUM_THREADS >= 2)")
def test_an_index_past_the_end_in_the_row_parallel_loop_raises_at_its_step():
    # numba's thread pool turns the bounds check's IndexError into a SystemError; the segment is replayed
    # step by step with the serial loop, which raises the IndexError at its step
    with ns.num_threads(2):
        for storage in ("dense", "sparse"):
            net = _fragile(300, storage)  # 90,000 synapses: the row-parallel loop
            net.validate()
            assert net["W"].rule.kernel_calls()[0].func is Fragile.maps[storage, True]
            with pytest.raises(IndexError, match="at step 4; the network is left at step 3"):
                net.run(6)
            assert net.t == 3


@local_rule(params={"rate": Float(0.1)})
def Matrix(weights, post, pre, rate):
    """A whole-matrix rule."""
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            weights[i, j] *= 1.0 - rate


def test_a_whole_matrix_rule_is_refused_on_sparse_synapses_with_the_way_out():
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 4), ns.Population("y", 3, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, connectivity=ns.FixedInDegree(2), rule=Matrix(0.1)))
    net.connect(ns.GaussianStream(np.ones(4), seed=0), x)
    with pytest.raises(ValueError, match=r"Matrix on projection 'W' does not run on sparse projections; \['W'\] .*"
                                         r"per_synapse=True"):
        net.run(1)


def _w(w, post, pre, rate):
    return w


def _w_eta(w, post, pre, eta):
    return w


def _w_theta(w, post, pre, theta, rate):
    return w


def _unit(post, rate):
    pass


def test_bad_per_synapse_rules_are_refused():
    rate = {"rate": Float(0.1)}
    with pytest.raises(TypeError, match=r"_w_eta must take \(w, post, pre, rate\)"):
        local_rule(_w_eta, params=rate, per_synapse=True)
    with pytest.raises(TypeError, match=r"_w must take \(w, post, pre, theta, rate\)"):
        local_rule(_w, params=rate, post_variables={"theta": 1.0}, per_synapse=True)
    with pytest.raises(TypeError, match="unit_update belongs to the per-synapse form"):
        local_rule(_w, params=rate, post_variables={"theta": 1.0}, unit_update=_unit)
    with pytest.raises(TypeError, match="declare them with post_variables"):
        local_rule(_w, params=rate, per_synapse=True, unit_update=_unit)
    with pytest.raises(TypeError, match=r"_unit must take \(post, theta, rate\)"):
        local_rule(_w_theta, params=rate, post_variables={"theta": 1.0}, per_synapse=True, unit_update=_unit)
    with pytest.raises(TypeError, match="must be defined at module level"):
        local_rule(lambda w, post, pre, rate: w, params=rate, per_synapse=True)
    with pytest.raises(TypeError, match="per_synapse must be True or False"):
        local_rule(_w, params=rate, per_synapse=1)
    with pytest.raises(TypeError, match="base must be a subclass of LocalRule"):
        local_rule(_w, params=rate, per_synapse=True, base=ns.Rule)
    assert issubclass(local_rule(_w, params=rate, per_synapse=True, base=LocalRule), LocalRule)


SCRIPT = '''
import warnings
import numpy as np
import neurosim as ns
from neurosim.params import Float
from neurosim.rules import local_rule


def halve(post, theta, rate):
    for i in range(theta.shape[0]):
        theta[i] = 0.5 * theta[i] + post[0, i] * post[0, i]


@local_rule(params={"rate": Float(0.01, low=0.0)}, post_variables={"theta": 1.0}, per_synapse=True,
            unit_update=halve)
def Sliding(w, post, pre, theta, rate):
    return w + rate * post[0] * (post[0] - theta) * pre[0]


def build(storage):
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 6), ns.Population("y", 4, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(X), x)
    net.add(ns.Projection("W", x, y, connectivity=ns.FixedInDegree(3), storage=storage, init=ns.Constant(0.3),
                          rule=Sliding(rate=0.05)))
    return net


X = np.random.default_rng(0).normal(size=(40, 6))
warnings.simplefilter("error")
a, b = build("sparse"), build("dense")
want = a["W"].to_dense()
a.run(40)
b.run(40)
assert not a._engine.missing and not b._engine.missing  # compiled: the rule's source went into the segment
mask, theta = want != 0, np.ones(4)
for x in X:
    y = want @ x
    want = np.where(mask, want + 0.05 * (y * (y - theta))[:, None] * x[None, :], 0.0)
    theta = 0.5 * theta + y * y
post, pre = a["W"].synapse_index.pairs()
print(float(np.max(np.abs(a["W"].weights - want[post, pre]))), float(np.max(np.abs(b["W"].weights - want))),
      float(np.max(np.abs(a["y"].state["theta"] - theta))))
'''


@pytest.mark.slow
def test_a_per_synapse_rule_defined_in_a_script_runs_compiled(tmp_path):
    script = tmp_path / "per_synapse_script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "NEUROSIM_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert all(float(v) < 1e-12 for v in out.stdout.split()), out.stdout
