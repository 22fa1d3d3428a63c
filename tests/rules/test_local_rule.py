"""A rule written as one plain function (``local_rule``) runs compiled and equals its reference."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import neurosim as ns
from neurosim.params import Float
from neurosim.rules import local_rule
from neurosim.streams import GaussianStream


@local_rule(params={"rate": Float(0.01, low=0.0, high=1.0, low_open=True)})
def UserOja(weights, post, pre, rate):
    """Oja's rule written as a user would, in the same operation order as the built-in kernel."""
    batch, n_post = post.shape
    scale = rate / batch
    for i in range(n_post):
        yy = 0.0
        for b in range(batch):
            yy += post[b, i] * post[b, i]
        for j in range(weights.shape[1]):
            hebb = 0.0
            for b in range(batch):
                hebb += post[b, i] * pre[b, j]
            weights[i, j] = weights[i, j] + scale * (hebb - yy * weights[i, j])


@local_rule(params={"rate": Float(0.01, low=0.0), "tau_rate": Float(0.1, low=0.0, high=1.0)},
            post_variables={"theta": 0.5})
def SlidingThreshold(weights, post, pre, theta, rate, tau_rate):
    """A BCM-like rule whose per-unit threshold the function itself updates."""
    batch = post.shape[0]
    for i in range(weights.shape[0]):
        yy = 0.0
        for b in range(batch):
            yy += post[b, i] * post[b, i]
        for j in range(weights.shape[1]):
            acc = 0.0
            for b in range(batch):
                acc += post[b, i] * (post[b, i] - theta[i]) * pre[b, j]
            weights[i, j] += rate * acc / batch
        theta[i] += tau_rate * (yy / batch - theta[i])


def _net(rule, n=8, k=3, seed=0, mask=None, lateral_rule=None):
    net = ns.Network(seed=seed)
    x = ns.Population("x", n)
    y = ns.Population("y", k, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.linspace(2.0, 0.2, n), seed=3, eigenvectors="random", eigvec_seed=1), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.3), rule=rule, mask=mask))
    net.record(y, "activity", every=5)
    return net


def test_user_rule_runs_compiled_and_matches_the_builtin_kernel():
    a, b = _net(UserOja(rate=0.02)), _net(ns.Oja(rate=0.02))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a PerStepWarning would mean the rule was not compiled
        a.run(400)
    b.run(400)
    assert not a._engine.missing
    np.testing.assert_allclose(a.projections["W"].weights, b.projections["W"].weights, rtol=1e-12, atol=1e-14)


def test_user_rule_compiled_equals_its_numpy_reference_and_per_step_kernels():
    comp, ref, step = (_net(SlidingThreshold(rate=0.01, tau_rate=0.05)) for _ in range(3))
    comp.run(300)
    ref.run(300, backend="python")
    step.add_callback(lambda net: None)  # a callback every step forces the per-step kernel path
    step.run(300)
    for name in ("W",):
        np.testing.assert_allclose(comp.projections[name].weights, ref.projections[name].weights, rtol=1e-10, atol=1e-13)
        np.testing.assert_array_equal(comp.projections[name].weights, step.projections[name].weights)
    np.testing.assert_array_equal(comp.populations["y"].state["theta"], step.populations["y"].state["theta"])
    np.testing.assert_allclose(comp.populations["y"].state["theta"], ref.populations["y"].state["theta"], rtol=1e-10)
    # the threshold tracks a running mean of y^2, so it left its initial value
    assert not np.allclose(comp.populations["y"].state["theta"], 0.5)


def test_user_rule_keeps_masked_synapses_at_zero_on_both_paths():
    rng = np.random.default_rng(0)
    mask = rng.random((3, 8)) < 0.5
    for backend in ("compiled", "python"):
        net = _net(UserOja(rate=0.05), mask=mask)
        net.run(100, backend=backend)
        w = net.projections["W"].weights
        assert np.all(w[~mask] == 0.0) and np.all(w[mask] != 0.0)


def test_user_rule_parameters_are_declared_validated_and_live():
    rule = UserOja(rate=0.02)
    assert rule.params() == {"rule": "UserOja", "rate": 0.02}
    with pytest.raises(ValueError, match=r"rate must be in \(0.0, 1.0\]"):
        UserOja(rate=2.0)
    with pytest.raises(TypeError, match="has no parameters"):
        UserOja(eta=0.1)
    a, b = _net(UserOja(rate=0.02)), _net(UserOja(rate=0.02))
    a.run(100)
    b.run(100, backend="python")
    a.projections["W"].rule.rate = 1e-6
    b.projections["W"].rule.rate = 1e-6
    w0 = a.projections["W"].weights.copy()
    a.run(100)
    b.run(100, backend="python")
    moved = np.abs(a.projections["W"].weights - w0).max()
    assert moved < 1e-4  # at 0.02 the weights move by ~0.1 over 100 steps
    np.testing.assert_allclose(a.projections["W"].weights, b.projections["W"].weights, rtol=1e-10, atol=1e-13)


def test_bad_rule_functions_are_refused():
    with pytest.raises(TypeError, match="must take"):
        @local_rule(params={"rate": Float(0.1)})
        def wrong(weights, post, pre, eta):  # noqa: ARG001
            pass
    with pytest.raises(TypeError, match="declared parameter"):
        @local_rule(params={"rate": 0.1})
        def wrong2(weights, post, pre, rate):  # noqa: ARG001
            pass


@pytest.mark.slow
def test_rule_defined_in_a_script_runs_compiled(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent('''
        import warnings
        import numpy as np
        import neurosim as ns
        from neurosim.params import Float
        from neurosim.rules import local_rule
        from neurosim.streams import GaussianStream

        @local_rule(params={"rate": Float(0.01, low=0.0)})
        def Decay(weights, post, pre, rate):
            for i in range(weights.shape[0]):
                for j in range(weights.shape[1]):
                    weights[i, j] -= rate * weights[i, j] * np.abs(pre[0, j])

        def build():
            net = ns.Network(seed=0)
            x, y = ns.Population("x", 4), ns.Population("y", 2, dynamics=ns.Linear())
            net.add(x, y)
            net.connect(GaussianStream(np.ones(4), seed=1), x)
            net.add(ns.Projection("W", x, y, rule=Decay(rate=0.01)))
            return net

        warnings.simplefilter("error")
        a, b = build(), build()
        a.run(200)
        b.run(200, backend="python")
        assert not a._engine.missing
        print(float(np.abs(a.projections["W"].weights - b.projections["W"].weights).max()))
    '''))
    env = {"NEUROSIM_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    import os

    env = {**os.environ, **env}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) < 1e-12
