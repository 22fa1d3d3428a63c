"""Parameters changed between runs, from callbacks, or by schedules take effect on both paths."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.schedules import ExponentialDecay, InverseTime, Piecewise
from neurosim.streams import GaussianStream


def oja_net(rate=0.02, seed=0, mask=None):
    net = ns.Network(seed=seed)
    x = ns.Population("x", 10)
    y = ns.Population("y", 3, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.linspace(3.0, 0.3, 10), seed=2, eigenvectors="random", eigvec_seed=4), x)
    net.add(ns.Projection("W", x, y, init=ns.Normal(0.3), rule=ns.Oja(rate), mask=mask))
    return net


def sparse_net(lam=0.3, seed=0):
    net = ns.Network(seed=seed)
    x = ns.Population("x", 12)
    a = ns.Population("a", 20, dynamics=ns.SparseCode("feature_sign", lam=lam))
    net.add(x, a)
    net.connect(GaussianStream(np.linspace(2.0, 0.5, 12), seed=5), x)
    net.add(ns.Projection("D", x, a, init=ns.Normal(0.3)))
    net.record(a, "activity")
    return net


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_rate_changed_between_runs_takes_effect(backend):
    net = oja_net(0.05)
    net.run(300, backend=backend)
    w0 = net.projections["W"].weights.copy()
    net.projections["W"].rule.rate = 1e-6
    net.run(300, backend=backend)
    ref = oja_net(0.05)
    ref.run(600, backend=backend)
    moved_slow = np.abs(net.projections["W"].weights - w0).max()
    moved_fast = np.abs(ref.projections["W"].weights - w0).max()
    # the step size is proportional to the rate: 1e-6 / 0.05 = 2e-5 (a generous 1e-2 for the different path)
    assert 0 < moved_slow < 1e-2 * moved_fast


def test_compiled_and_numpy_paths_agree_through_parameter_changes():
    nets = {b: oja_net(0.05) for b in ("compiled", "python")}
    for rate in (0.02, 0.005, 0.04, 0.001):
        for b, net in nets.items():
            net.projections["W"].rule.rate = rate
            net.run(150, backend=b)
    np.testing.assert_allclose(nets["compiled"].projections["W"].weights, nets["python"].projections["W"].weights,
                               rtol=1e-10, atol=1e-12)


def test_lam_and_mask_set_after_a_run_take_effect_on_both_paths():
    out = {}
    for b in ("compiled", "python"):
        net = sparse_net(0.05)
        net.run(20, backend=b)
        dense = np.count_nonzero(net.populations["a"].activity)
        net.populations["a"].dynamics.lam = 5.0  # far above max |D x|: every code is zero
        net.run(5, backend=b)
        assert dense > 0 and np.count_nonzero(net.populations["a"].activity) == 0
        out[b] = net.recorders["a"].to_dataset().activity.values
    np.testing.assert_allclose(out["compiled"], out["python"], rtol=1e-9, atol=1e-12)
    for b in ("compiled", "python"):
        net = oja_net(0.05)
        net.run(50, backend=b)
        mask = np.ones((3, 10), bool)
        mask[:, :4] = False
        net.projections["W"].mask = mask
        net.run(1, backend=b)
        assert np.all(net.projections["W"].weights[:, :4] == 0.0)


def test_a_callback_changing_a_parameter_affects_the_following_steps():
    nets = {}
    for b in ("compiled", "python"):
        net = oja_net(0.05)

        def anneal(n):
            n.projections["W"].rule.rate = 0.05 / (1 + n.t / 100)

        net.add_callback(anneal, phase="record", every=50)
        net.run(400, backend=b)
        nets[b] = net
    manual = oja_net(0.05)
    for k in range(8):
        manual.run(50)
        manual.projections["W"].rule.rate = 0.05 / (1 + manual.t / 100)
    np.testing.assert_array_equal(nets["compiled"].projections["W"].weights, manual.projections["W"].weights)
    np.testing.assert_allclose(nets["python"].projections["W"].weights, manual.projections["W"].weights,
                               rtol=1e-10, atol=1e-12)


def test_fixed_parameters_refuse_assignment():
    rule = ns.NormalizedHebbian(0.1)
    with pytest.raises(AttributeError, match="rate_variable is fixed"):
        rule.rate_variable = "nu"
    code = ns.SparseCode("omp", n_nonzero=2)
    with pytest.raises(AttributeError, match="method is fixed"):
        code.method = "k_winners"
    with pytest.raises(ValueError, match=r"eta must be in \(0.0, 1.0\]"):
        ns.Jacobi().eta = 1.5
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        ns.Jacobi().max_iter = 2.5


def test_params_list_every_declared_parameter():
    a = ns.SparseCode("k_winners", n_nonzero=3, absolute=True, max_iter=50)
    b = ns.SparseCode("k_winners", n_nonzero=3, absolute=False, max_iter=50)
    assert a.params() != b.params()
    assert set(a.params()) == {"dynamics", *ns.SparseCode.declared()}
    assert a.params()["max_iter"] == 50 and a.params()["absolute"] is True


def test_piecewise_schedule_equals_switching_by_hand_bit_for_bit():
    sched = oja_net(Piecewise({0: 0.05, 201: 0.005}))
    sched.run(400)
    by_hand = oja_net(0.05)
    by_hand.run(200)
    by_hand.projections["W"].rule.rate = 0.005
    by_hand.run(200)
    np.testing.assert_array_equal(sched.projections["W"].weights, by_hand.projections["W"].weights)


def test_schedules_agree_across_paths_and_cut_runs():
    runs = {}
    for key, backend, pieces in (("uncut", "compiled", [500]), ("cut", "compiled", [7, 93, 400]),
                                 ("python", "python", [500])):
        net = oja_net(InverseTime(0.03, half_life=50))
        for n in pieces:
            net.run(n, backend=backend)
        runs[key] = net.projections["W"].weights
    np.testing.assert_array_equal(runs["uncut"], runs["cut"])
    np.testing.assert_allclose(runs["uncut"], runs["python"], rtol=1e-10, atol=1e-12)
    # the annealed rate gives a different result from its initial value held constant
    const = oja_net(0.03 / (1 + 1 / 50))
    const.run(500)
    assert np.abs(const.projections["W"].weights - runs["uncut"]).max() > 1e-3


def test_lam_schedule_on_a_sparse_code():
    out = {}
    for b in ("compiled", "python"):
        net = sparse_net(Piecewise({0: 0.05, 11: 5.0}))
        net.run(20, backend=b)
        act = net.recorders["a"].to_dataset().activity.values[:, 0]
        assert np.count_nonzero(act[:10]) > 0 and np.count_nonzero(act[10:]) == 0
        out[b] = act
    np.testing.assert_allclose(out["compiled"], out["python"], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_a_schedule_leaving_the_allowed_range_stops_with_the_parameter_and_step(backend):
    net = oja_net(ExponentialDecay(0.5, 1.0))
    net.projections["W"].rule.rate = Piecewise({0: 0.01, 31: 1.5})  # 1.5 > 1: outside (0, 1]
    with pytest.raises(ValueError, match=r"schedule of rate gives 1.5 at step 31"):
        net.run(50, backend=backend)
    assert net.t <= 30


def test_schedules_are_refused_where_they_cannot_apply():
    with pytest.raises(TypeError, match="cannot follow a schedule"):
        ns.Jacobi(eta=InverseTime(0.1, 10))
    with pytest.raises(ValueError, match="rate must be in"):
        ns.Oja(rate=InverseTime(-1.0, 10))  # the first value is validated on assignment


@pytest.mark.parametrize("make", [
    lambda: ExponentialDecay(0.1, 0.5),
    lambda: InverseTime(0.1, half_life=10),
    lambda: ns.schedules.LinearRamp(0.1, 0.01, steps=10),
    lambda: Piecewise({0: 0.1, 5: 0.05}),
    lambda: ns.schedules.Function(lambda t: 0.1 / (1.0 + t)),
], ids=["ExponentialDecay", "InverseTime", "LinearRamp", "Piecewise", "Function"])
def test_every_schedule_starts_unbound_and_binds_to_its_parameter(make):
    # Schedule's contract (base class): ``param`` is None until the schedule is assigned to a
    # declared parameter, then bind() records that parameter; every subclass inherits it.
    s = make()
    assert s.param is None
    net = oja_net()
    rule = net.projections["W"].rule
    rule.rate = s
    assert s.param is not None and s.param.name == "rate"


#: found by the test below when written, left to the module's owner: ExampleSelector declares
#: measure=None (optional) while its constructor defaults to "sun"
KNOWN_DEFAULT_DISAGREEMENTS: set = set()


def test_declared_defaults_are_the_constructor_defaults_of_every_component():
    # params.py: the declared parameters are the one table of defaults; where a constructor also
    # names a default for the same parameter, the two must agree (params(), repr() and the docs
    # read the table, construction reads the signature)
    import importlib
    import inspect
    import pkgutil

    from neurosim.params import REQUIRED, Parametrized

    for mod in pkgutil.walk_packages(ns.__path__, "neurosim."):  # components are found by subclassing
        if mod.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except ImportError:  # an optional dependency (e.g. zarr) missing
            pass
    seen, todo = set(), [Parametrized]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    checked = 0
    for cls in sorted(seen, key=lambda c: c.__qualname__):
        if not cls.__module__.startswith("neurosim.") or "__init__" not in vars(cls):
            continue
        sig = inspect.signature(cls.__init__).parameters
        for name, p in cls.declared().items():
            arg = sig.get(name)
            if arg is None or arg.default is inspect.Parameter.empty or p.default is REQUIRED:
                continue
            if (cls.__name__, name) in KNOWN_DEFAULT_DISAGREEMENTS:
                continue
            assert p.default == arg.default, f"{cls.__name__}.{name}: declared {p.default!r}, __init__ {arg.default!r}"
            checked += 1
    assert checked >= 20  # 24 when written


def test_a_component_added_by_a_callback_mid_run_runs_from_the_next_step():
    # the engine re-reads the network's components whenever it changes, also in the middle of a run
    # (Engine docstring): a CumulativeActivity added by a callback after step 10 must update its
    # variable from step 11 on, exactly as one added between two runs
    def add(net):
        y = net.populations["y"]
        if "mu" not in y.state:
            net.add(ns.CumulativeActivity(y, alpha=0.1, beta=0.9))

    net = oja_net()
    net.add_callback(add, phase="record", when="after", every=10)
    net.run(25)
    ref = oja_net()
    ref.run(10)
    add(ref)
    ref.run(15)
    mu = net.populations["y"].state["mu"]
    assert np.all(mu != 1.0)  # it did run (init 1.0)
    np.testing.assert_array_equal(mu, ref.populations["y"].state["mu"])
    np.testing.assert_array_equal(net.projections["W"].weights, ref.projections["W"].weights)
