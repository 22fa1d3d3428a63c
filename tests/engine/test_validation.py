"""Public constructors and run entry points reject bad input with clear errors only."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import neurosim as ns
from neurosim.models.similarity_matching import build_network
from neurosim.streams import GaussianStream

hostile = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5), st.lists(st.integers(), max_size=3), st.just(np.nan), st.just(-0.0), st.just(1e308),
    st.just(np.array([1.0, np.nan])),
)
fast = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def only_clear_errors(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        assert str(exc), "error message must not be empty"


@fast
@given(name=hostile, size=hostile)
def test_population(name, size):
    only_clear_errors(ns.Population, name, size)


@fast
@given(eta=hostile, tol=hostile, max_iter=hostile, zero_start=hostile)
def test_jacobi(eta, tol, max_iter, zero_start):
    only_clear_errors(ns.Jacobi, eta=eta, tol=tol, max_iter=max_iter, zero_start=zero_start)


@fast
@given(alpha=hostile, beta=hostile, init=hostile)
def test_rules(alpha, beta, init):
    pop = ns.Population("y", 2)
    only_clear_errors(ns.CumulativeActivity, pop, alpha=alpha, beta=beta, init=init)
    only_clear_errors(ns.NormalizedHebbian, alpha)
    only_clear_errors(ns.Hebbian, rate=alpha, decay=beta)
    only_clear_errors(ns.Oja, rate=alpha)


@fast
@given(sign=hostile, init=hostile, mask=hostile)
def test_projection(sign, init, mask):
    a, b = ns.Population("a", 2), ns.Population("b", 3)
    only_clear_errors(ns.Projection, "p", a, b, sign=sign, init=init, mask=mask)


@fast
@given(seed=hostile, batch=hostile, steps=hostile, backend=hostile)
def test_network_and_run(seed, batch, steps, backend):
    only_clear_errors(ns.Network, seed=seed, batch=batch)
    net = ns.Network()
    x = ns.Population("x", 2)
    y = ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(np.ones((3, 2))), x)
    net.add(ns.Projection("W", x, y))
    only_clear_errors(net.run, steps, backend=backend)
    only_clear_errors(net.run, 2, backend=backend)


@fast
@given(k=hostile, reg=hostile, alpha=hostile, beta=hostile, eta=hostile, max_iter=hostile)
def test_build_network(k, reg, alpha, beta, eta, max_iter):
    stream = GaussianStream(np.ones(4), seed=0)
    only_clear_errors(build_network, stream, k, reg, alpha, beta=beta, eta=eta, max_iter=max_iter)


@fast
@given(n=hostile, ids=hostile, every=hostile)
def test_events_and_recorders(n, ids, every):
    pop = ns.Population("h", 3)
    only_clear_errors(ns.Birth, pop, n)
    only_clear_errors(ns.Death, pop, ids)
    only_clear_errors(ns.Recorder, pop, "activity", every=every)
    only_clear_errors(ns.Trigger, n, ids)


def test_messages_name_parameter_and_range():
    with pytest.raises(ValueError, match=r"beta must be in \(0\.0, 1\.0\]"):
        build_network(GaussianStream(np.ones(4)), 2, "XY", 0.1, beta=0.0)
    with pytest.raises(ValueError, match=r"eta must be in \(0\.0, 1\.0\]"):
        ns.Jacobi(eta=1.5)
    with pytest.raises(ValueError, match="alpha must be in"):
        ns.NormalizedHebbian(-1.0)
    with pytest.raises(ValueError, match="regularizer must be one of"):
        build_network(GaussianStream(np.ones(4)), 2, "XX", 0.1)
    with pytest.raises(ValueError, match="size must be in"):
        ns.Population("x", 0)
    with pytest.raises(TypeError, match="size must be an integer"):
        ns.Population("x", 2.5)


def test_wiring_errors_are_clear():
    net = ns.Network()
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    with pytest.raises(ValueError, match="stream dimension"):
        net.connect(ns.ArrayStream(np.ones((2, 4))), x)
    with pytest.raises(ValueError, match="neither dynamics nor an input"):
        net.run(1)
    net.connect(ns.ArrayStream(np.ones((2, 3))), x)
    with pytest.raises(ValueError, match="not in this network"):
        net.add(ns.Projection("P", x, ns.Population("z", 2)))
    with pytest.raises(ValueError, match="already"):
        net.add(ns.Population("x", 3))
    z = ns.Population("z", 2, dynamics=ns.Linear())
    net.add(z, ns.Projection("yz", y, z), ns.Projection("zy", z, y))
    with pytest.raises(ValueError, match="cycle"):
        net.run(1)
    with pytest.raises(ValueError, match="unknown variables"):
        net.record(y, "voltage")


def test_graph_describes_the_circuit():
    net = ns.Network()
    x = ns.Population("x", 3)
    y = ns.Population("y", 2, dynamics=ns.Jacobi())
    net.add(x, y)
    net.connect(ns.ArrayStream(np.ones((2, 3))), x)
    net.add(ns.Projection("W", x, y), ns.Projection("M", y, y, sign=-1))
    g = net.graph
    assert set(g.nodes) == {"x", "y"}
    assert g.edges["x", "y"]["projections"] == ["W"] and g.edges["y", "y"]["projections"] == ["M"]
    assert g.nodes["x"]["input"] and g.nodes["y"]["dynamics"] == "Jacobi"
    assert "Projection('M', y -> y, sign=-1" in net.summary()


def test_compiled_backend_without_kernels_is_refused():
    class NumpyOnly(ns.Rule):
        def update_numpy(self):
            self.projection.weights *= 0.99

    net = ns.Network()
    x, y = ns.Population("x", 2), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(np.ones((2, 2))), x)
    net.add(ns.Projection("W", x, y, rule=NumpyOnly()))
    with pytest.raises(ValueError, match="missing: NumpyOnly on projection .W."):
        net.run(1, backend="compiled")
    w0 = net.projections["W"].weights.copy()
    with pytest.warns(ns.PerStepWarning, match="NumpyOnly on projection 'W' has no compiled kernel"):
        net.run(3)  # auto falls back to the per-step path, this rule in NumPy
    np.testing.assert_allclose(net.projections["W"].weights, w0 * 0.99**3)


def test_available_memory_reads_memavailable_and_falls_back_to_free_pages(monkeypatch):
    # documented: MemAvailable of /proc/meminfo, else the sysconf free pages times the page size
    import builtins
    import io

    from neurosim import network as network_mod

    real_open = builtins.open
    meminfo = "MemTotal:        1000 kB\nMemFree:          200 kB\nMemAvailable:     500 kB\nBuffers:  10 kB\n"

    def fake_open(path, *a, **kw):
        return io.StringIO(meminfo) if path == "/proc/meminfo" else real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", fake_open)
    pages = {"SC_AVPHYS_PAGES": 7, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(network_mod.os, "sysconf", lambda name: pages[name])
    assert network_mod._available_memory() == 500 * 1024
    meminfo = "MemTotal:        1000 kB\nMemFree:          200 kB\n"  # an old kernel: no MemAvailable
    assert network_mod._available_memory() == 7 * 4096

    def no_proc(path, *a, **kw):
        if path == "/proc/meminfo":
            raise OSError("no /proc")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", no_proc)
    assert network_mod._available_memory() == 7 * 4096


def test_graph_summary_schedule_and_flat_params_list_everything():
    # two projections between the same pair of populations share one graph edge that names both; the
    # summary lists the recorders, the printed schedule the engine's end-of-plasticity check, and
    # flat_params turns array-valued parameters into arrays (netCDF-safe)
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(np.ones((4, 3))), x)
    net.add(ns.Projection("A", x, y), ns.Projection("B", x, y, sign=-1))
    net.record(y, "activity", every=2, name="rec")
    assert net.graph.edges["x", "y"]["projections"] == ["A", "B"]
    assert "  Recorder(rec: ['activity'] every 2)" in net.summary().splitlines()
    assert "NaN/Inf check of every state variable" in str(net.schedule())
    net.attrs["weights_seen"] = [1.0, 2.0]
    flat = net.flat_params()
    assert isinstance(flat["network.weights_seen"], np.ndarray)
    np.testing.assert_array_equal(flat["network.weights_seen"], [1.0, 2.0])
    assert flat["network.seed"] == 0 and flat["network.name"] == net.name


def test_two_components_are_accepted_and_the_same_one_twice_is_refused():
    from neurosim.reconstruction_accuracy import ReconstructionAccuracy

    net = ns.Network(seed=0)
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    A, B = ns.Projection("A", x, y), ns.Projection("B", x, y)
    net.add(A, B)
    first, second = ReconstructionAccuracy(A), ReconstructionAccuracy(B)
    net.add(first)
    net.add(second)  # another component: fine
    assert net.components == [first, second]
    with pytest.raises(ValueError, match="already in the network"):
        net.add(second)
    assert net.components == [first, second]


def test_connect_returns_the_input_it_adds():
    net = ns.Network(seed=0)
    x = ns.Population("x", 2)
    net.add(x)
    stream = ns.ArrayStream(np.ones((5, 2)))
    inp = net.connect(stream, x)
    assert inp.stream is stream and inp.population is x
    assert net.inputs == [inp]


def test_run_refuses_a_checkpoint_path_holding_a_foreign_file_before_any_step(tmp_path):
    # the check is at the start of run, not at the first save: nothing runs, the user's file is intact
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 2), ns.Population("y", 1, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, rule=ns.Oja(0.01)))
    net.connect(ns.ArrayStream(np.ones((50, 2))), x)
    path = tmp_path / "mine.npz"
    np.savez(path, data=np.arange(3))
    before = path.read_bytes()
    with pytest.raises(ValueError, match="mine.npz"):
        net.run(20, checkpoint=path, checkpoint_every=10)
    assert net.t == 0
    assert path.read_bytes() == before


@pytest.mark.parametrize("dynamics", [lambda: ns.SparseCode("omp", n_nonzero=1),
                                      lambda: ns.SparseCode("feature_sign", lam=0.1)])
def test_encoders_take_exactly_one_excitatory_dictionary_and_no_lateral_projection(dynamics):
    # An encoder's only input is its dictionary (atoms as rows); it does its own competition.
    def net_with(*extra, sign=1):
        net = ns.Network()
        x, x2, a = ns.Population("x", 3), ns.Population("x2", 3), ns.Population("a", 2, dynamics=dynamics())
        net.add(x, x2, a)
        net.connect(ns.ArrayStream(np.eye(3)), x)
        net.connect(ns.ArrayStream(np.eye(3)), x2)
        net.add(ns.Projection("D", x, a, sign=sign, init=ns.Uniform(0.1, 1.0)))
        for p in extra:
            net.add(p(net))
        return net

    net_with().run(2)  # one excitatory dictionary: runs
    with pytest.raises(ValueError, match=r"needs exactly one feed-forward projection \(the dictionary\); "
                                         r"got \['D', 'D2'\]"):
        net_with(lambda n: ns.Projection("D2", n.populations["x2"], n.populations["a"])).run(1)
    with pytest.raises(ValueError, match="dictionary projection 'D' must be excitatory"):
        net_with(sign=-1).run(1)
    with pytest.raises(ValueError, match="cannot take lateral projections"):
        net_with(lambda n: ns.Projection("L", n.populations["a"], n.populations["a"], sign=-1)).run(1)


def test_jacobi_dynamics_refuse_a_second_lateral_projection_and_keep_one():
    """Jacobi relaxes ``y = (1 - eta) y + eta (W x + s M y)`` with one lateral matrix ``M``."""
    def net_with(n_lateral):
        net = ns.Network()
        x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Jacobi(eta=0.5, max_iter=5))
        net.add(x, y, ns.Projection("W", x, y))
        net.connect(ns.ArrayStream(np.ones((2, 3))), x)
        for k in range(n_lateral):
            net.add(ns.Projection(f"M{k}", y, y, sign=-1))
        return net

    net_with(1).validate()
    with pytest.raises(ValueError, match=r"supports at most one lateral projection; got \['M0', 'M1'\]"):
        net_with(2).validate()


@pytest.mark.parametrize("name", [1, None, b"net", ["net"]])
def test_a_network_name_must_be_a_string(name):
    with pytest.raises(TypeError, match=f"name must be a string; got {type(name).__name__}"):
        ns.Network(name=name)
    assert ns.Network(name="circuit").name == "circuit"


def test_an_input_population_receiving_projections_is_refused_with_their_names():
    net = ns.Network()
    x, z = ns.Population("x", 3), ns.Population("z", 2)
    y = ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y, z, ns.Projection("xy", x, y), ns.Projection("yz", y, z), ns.Projection("xz", x, z))
    net.connect(ns.ArrayStream(np.ones((2, 3))), x)
    net.connect(ns.ArrayStream(np.ones((2, 2))), z)  # z is an input population
    with pytest.raises(ValueError, match=r"input population 'z' cannot receive projections \['yz', 'xz'\]$"):
        net.validate()


def test_the_summary_has_one_line_per_entity_unit_rules_included():
    from sm_helpers import make_sm

    net = make_sm("XY")
    net.add(ns.Trigger(lambda n: False, lambda n: None, every=5, name="never"))
    lines = net.summary().splitlines()
    assert lines[0] == f"Network {net.name!r}: t=0, batch=1, seed=0"
    expected = len(net.populations) + len(net.projections) + len(net.unit_rules) + len(net.inputs) \
        + len(net.triggers) + len(net.recorders)
    assert len(lines) == 1 + expected
    assert "  CumulativeActivity(y)" in lines and "  Input(GaussianStream -> x)" in lines
    assert "  Trigger(never, every=5)" in lines
