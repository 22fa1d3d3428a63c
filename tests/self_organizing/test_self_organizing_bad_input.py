"""Bad input to the self-organising circuits and to the synapse events: refused by name before anything runs.

A growing network cannot lose all its units: the two units nearest an input
are linked in the step they win and keep that edge (age 0 in GNG, 1 in GWR)
through the step's removals, so at least two units stay alive whatever the
parameters (the documented floor, tested with random parameters below). In
GWR that needs ``a_max >= 1``; a smaller ``a_max``, with which the printed
algorithm deletes every unit, is refused by name.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import neurosim as ns
from neurosim.events import Assign, Link, Unlink
from neurosim.models.self_organizing import (build_gng, build_gwr, build_neural_gas, build_som, quantization_error,
                                             topographic_error)

X = np.random.default_rng(0).random((50, 2))


def _stream():
    return ns.ArrayStream(X)


BUILDERS = {
    "som": lambda **kw: build_som(_stream(), **{"rows": 3, "cols": 4, "steps": 50, **kw}),
    "neural_gas": lambda **kw: build_neural_gas(_stream(), **{"n_units": 5, "steps": 50, **kw}),
    "gng": lambda **kw: build_gng(_stream(), **kw),
    "gwr": lambda **kw: build_gwr(_stream(), **kw),
}

BAD = [
    ("som", "rows", 0, ValueError), ("som", "cols", 2.5, TypeError), ("som", "steps", 0, ValueError),
    ("som", "rate", -0.1, ValueError), ("som", "rate", 1.5, ValueError), ("neural_gas", "eps_i", 2.0, ValueError), ("som", "sigma", 0.0, ValueError), ("som", "sigma", math.nan, ValueError),
    ("som", "decay", "linear", ValueError), ("som", "sigma_decay", "inverse_to_zero", ValueError),
    ("som", "neighbourhood", "cone", ValueError),
    ("som", "topology", "toroidal", ValueError), ("som", "seed", -1, ValueError),
    ("som", "init", np.zeros((12, 3)), ValueError), ("som", "init", np.full((12, 2), np.nan), ValueError),
    ("som", "init", np.zeros((4, 3, 2)), ValueError), ("som", "init", "weights", TypeError),
    ("neural_gas", "n_units", 0, ValueError), ("neural_gas", "eps_i", 0.0, ValueError),
    ("neural_gas", "lam_f", -1.0, ValueError), ("neural_gas", "steps", 1.5, TypeError),
    ("neural_gas", "init", np.zeros((5, 3)), ValueError),
    ("gng", "eps_b", 1.5, ValueError), ("gng", "eps_n", -0.1, ValueError), ("gng", "lam", 0, ValueError),
    ("gng", "lam", 2.5, TypeError), ("gng", "a_max", -1.0, ValueError), ("gng", "alpha", 2.0, ValueError),
    ("gng", "d", math.inf, ValueError), ("gng", "max_units", 1, ValueError), ("gng", "init", np.zeros((3, 2)), ValueError),
    ("gwr", "a_T", 0.0, ValueError), ("gwr", "a_T", 1.5, ValueError), ("gwr", "h_T", -0.5, ValueError),
    ("gwr", "tau_b", 0.0, ValueError), ("gwr", "alpha_n", 1.0, ValueError), ("gwr", "eps_b", "0.1", TypeError),
    ("gwr", "max_units", 0, ValueError), ("gwr", "init", np.zeros((2, 5)), ValueError),
    ("gng", "init", np.zeros((1, 2, 2)), ValueError),
    # below 1 the winners' own edge (age 1 at the removals) would go and with it every unit
    ("gwr", "a_max", 0.5, ValueError),
]


@pytest.mark.parametrize("model,name,value,error", BAD, ids=[f"{m}.{n}={v!r}"[:40] for m, n, v, _ in BAD])
def test_bad_parameters_are_refused_by_name(model, name, value, error):
    with pytest.raises(error, match=name):
        BUILDERS[model](**{name: value})


def test_maps_too_large_for_the_memory_are_refused_by_name_before_allocating():
    # issue 38: build_som(rows=10**9) allocated for 25 s, then failed in NumPy without naming rows
    with pytest.raises(ValueError, match=r"build_som: rows \* cols = 1000000000 \* 1000000000 = 10{18} units with "
                                         r"dim = 2 inputs .* would allocate .* GiB; only .* GiB of memory is available"):
        build_som(_stream(), rows=10**9, cols=10**9, steps=50)
    with pytest.raises(ValueError, match=r"build_neural_gas: n_units = 1000000000000 with dim = 2 inputs"):
        build_neural_gas(_stream(), n_units=10**12, steps=50)
    with pytest.raises(ValueError, match=r"Kohonen's grid positions of rows \* cols = 1000000000 \* 1000000000"):
        ns.rules.Kohonen(10**9, 10**9)


@pytest.mark.parametrize("builder, kw, units, extra", [
    ("som", {"rows": 256, "cols": 256}, 2**16, 6), ("neural_gas", {"n_units": 2**16}, 2**16, 0)])
@pytest.mark.parametrize("spare", [0, -1])
def test_a_map_is_refused_exactly_when_its_arrays_do_not_fit(monkeypatch, builder, kw, units, extra, spare):
    # the map's ids, activity and distances, its prototypes (dim = 2) and, for a SOM, the grid being built
    import neurosim._validation as validation

    monkeypatch.setattr(validation, "available_memory", lambda: 8 * units * (3 + 2 + extra) + spare)
    if spare < 0:
        with pytest.raises(ValueError, match=f"{'rows' if builder == 'som' else 'n_units'}.* would allocate"):
            BUILDERS[builder](**kw)
    else:
        assert BUILDERS[builder](**kw).weights.shape == (units, 2)


def test_a_stream_is_required_and_steps_when_the_som_anneals():
    with pytest.raises(TypeError, match="stream"):
        build_gng(X)
    with pytest.raises(ValueError, match="steps"):
        build_som(_stream(), 2, 2)  # asymptotic decay needs its length
    build_som(_stream(), 2, 2, decay="constant")  # a constant rate and radius need none


def test_wrong_dimensions_are_refused_by_name():
    c = build_gng(_stream())
    with pytest.raises(ValueError, match="X must have 2 features"):
        c.quantization_error(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="at least one sample"):
        quantization_error(np.zeros((0, 2)), c.weights)
    with pytest.raises(ValueError, match="rows \\* cols"):
        topographic_error(X, np.zeros((5, 2)), 2, 2)
    with pytest.raises(ValueError, match="stream dimension"):
        ns.network.Input(ns.ArrayStream(np.zeros((3, 4))), c.x)  # an input of another dimension


def test_batches_and_wiring_the_rules_cannot_use_are_refused_before_the_run():
    net = ns.Network(batch=4)
    x = ns.Population("x", 2)
    m = ns.Population("m", 6, dynamics=ns.BestMatchingUnit())
    net.add(x, m)
    net.connect(ns.ArrayStream(np.zeros((10, 4, 2))), x)
    net.add(ns.Projection("W", x, m, rule=ns.rules.Kohonen(2, 3)))
    with pytest.raises(ValueError, match="batch must be 1"):
        net.run(1)
    assert net.t == 0
    net2 = ns.Network()
    y = ns.Population("y", 5, dynamics=ns.Linear())
    x2 = ns.Population("x", 2)
    net2.add(x2, y)
    net2.connect(ns.ArrayStream(np.zeros((10, 2))), x2)
    net2.add(ns.Projection("W", x2, y, rule=ns.rules.NeuralGas()))
    with pytest.raises(ValueError, match="BestMatchingUnit"):
        net2.run(1)
    net3 = ns.Network()
    x3, m3 = ns.Population("x", 2), ns.Population("m", 5, dynamics=ns.BestMatchingUnit())
    net3.add(x3, m3)
    net3.connect(ns.ArrayStream(np.zeros((10, 2))), x3)
    net3.add(ns.Projection("W", x3, m3, rule=ns.rules.Kohonen(2, 3)))
    with pytest.raises(ValueError, match="rows \\* cols"):
        net3.run(1)
    with pytest.raises(ValueError, match="edges must be a sparse lateral projection"):
        ns.rules.GrowingNeuralGas(ns.Projection("E", m3, m3))


def _edged():
    net = ns.Network()
    x = ns.Population("x", 2)
    m = ns.Population("m", 3, dynamics=ns.BestMatchingUnit())
    net.add(x, m)
    net.connect(ns.ArrayStream(np.zeros((4, 2))), x)
    E = ns.Projection("E", m, m, init=ns.Constant(0.0), mask=np.zeros((3, 3), bool))
    E.add_array("age")
    W = ns.Projection("W", x, m)
    net.add(E, W)
    return net, m, E, W


def test_synapse_events_refuse_what_they_cannot_do_and_leave_the_network_unchanged():
    net, m, E, W = _edged()
    net.apply(Link(E, 0, 1, symmetric=True))
    before = (E.mask.copy(), E.arrays["age"].copy(), m.ids.copy(), len(net.event_log))
    cases = [
        (lambda: Link(W, 0, 0), ValueError, "needs a masked or sparse projection"),
        (lambda: Link(E, 0, 1), ValueError, "exists already"),
        (lambda: Unlink(E, 0, 2), ValueError, "no synapse"),
        (lambda: Link(E, 1, 1), ValueError, "self-synapse"),
        (lambda: Link(E, 0, 9), ValueError, "not alive"),
        (lambda: Link(E, 0, 2, values={"weight_age": 1.0}), ValueError, "weight_age"),
        (lambda: Link(E, [0, 0], [2, 2]), ValueError, "twice"),
        (lambda: Assign(m, "nothing", 0, 1.0), ValueError, "nothing"),
        (lambda: Assign(m, "activity", 0, 1.0), ValueError, "activity"),
    ]
    for make, err, text in cases:
        with pytest.raises(err, match=text):
            # a valid Birth first: the refusal must undo it too (all or none)
            net.apply(ns.Birth(m, 1, unlinked=[E]), make())
        assert np.array_equal(E.mask, before[0]) and np.array_equal(E.arrays["age"], before[1])
        assert np.array_equal(m.ids, before[2]) and len(net.event_log) == before[3] and m.next_id == 3
    with pytest.raises(ValueError, match="same number"):
        Link(E, [0, 1], [2])
    with pytest.raises(TypeError, match="post_ids"):
        Link(E, [0.5], [1])
    with pytest.raises(ValueError, match="symmetric=True needs a lateral"):
        Link(W, 0, 0, symmetric=True)
    with pytest.raises(ValueError, match="unlinked"):
        net.apply(ns.Birth(m, 1, unlinked=["W"]))  # W is not masked
    with pytest.raises(ValueError, match="values must be one number or one per id"):
        Assign(m, "distance", [0, 1], [1.0, 2.0, 3.0])


def test_a_death_after_a_link_in_one_call_removes_the_new_synapses_with_the_unit():
    net, m, E, W = _edged()
    net.apply(ns.Birth(m, 1, unlinked=[E]), Link(E, [3, 3], [0, 2], symmetric=True, values={"age": 4.0}),
              Link(E, 0, 1, symmetric=True), ns.Death(m, 3))
    assert m.ids.tolist() == [0, 1, 2]
    assert E.mask.astype(int).tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    log = net.event_log
    assert list(zip(log.kind, log.unit, log.partner)) == [("birth", 3, -1), ("link", 3, 0), ("link", 3, 2),
                                                          ("link", 0, 1), ("death", 3, -1)]


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(["gng", "gwr"]), a_max=st.floats(1.0, 5.0), eps_b=st.floats(0.0, 1.0),
       eps_n=st.floats(0.0, 1.0), lam=st.integers(1, 5), a_T=st.floats(0.01, 1.0), h_T=st.floats(0.0, 1.0),
       seed=st.integers(0, 3))
def test_random_parameters_never_lose_the_last_two_units(model, a_max, eps_b, eps_n, lam, a_T, h_T, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((60, 2)) * rng.uniform(0.1, 3.0)
    params = dict(a_max=a_max, eps_b=eps_b, eps_n=eps_n)
    params.update(lam=lam) if model == "gng" else params.update(a_T=a_T, h_T=h_T)
    c = (build_gng if model == "gng" else build_gwr)(ns.ArrayStream(data), max_units=20, **params)
    sizes = []
    c.network.add_callback(lambda n: sizes.append(n.populations["map"].size))
    c.run(len(data))
    assert min(sizes) >= 2 and c.map.size <= 20
    assert len(c.edge_list()) >= 1 and np.isfinite(c.weights).all()


@settings(max_examples=examples(40), deadline=None)
@given(model=st.sampled_from(sorted(BUILDERS)), name=st.sampled_from(
    ["eps_b", "eps_n", "a_max", "alpha", "d", "lam", "a_T", "h_T", "tau_b", "alpha_b", "rate", "sigma", "eps_i",
     "lam_i", "rows", "n_units"]),
       value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 300), st.text(max_size=3)))
def test_constructors_accept_or_refuse_any_value_by_name(model, name, value):
    import inspect

    builder = {"som": build_som, "neural_gas": build_neural_gas, "gng": build_gng, "gwr": build_gwr}[model]
    if name not in inspect.signature(builder).parameters:
        return
    try:
        c = BUILDERS[model](**{name: value})
    except (TypeError, ValueError) as exc:
        assert name in str(exc)
        return
    assert c.network.t == 0  # accepted: a circuit that runs
    c.network.run(3)


def test_the_gpu_backend_refuses_the_competitive_circuits_by_name_before_running():
    # the GPU path maps the dense rate family only; these circuits run on the CPU paths
    for make in (BUILDERS["som"], BUILDERS["gng"]):
        c = make()
        with pytest.raises(ValueError, match="backend='cuda' cannot run map.bmu; W.rule"):
            c.network.run(5, backend="cuda")
        assert c.network.t == 0


# -- declared defaults: the papers' values, the same in the declaration, the constructor and the builder ------------

#: the papers' (and MiniSom's) values: Kohonen as MiniSom's defaults; Neural Gas the initial eps_i, lambda_i of
#: Martinetz et al. (1993); GNG Fritzke (1995), Sec. 3 (Fig. 1); GWR Marsland et al. (2002), Sec. 4
PAPER = {
    "Kohonen": {"rate": 0.5, "sigma": 1.0, "neighbourhood": "gaussian", "topology": "rectangular"},
    "NeuralGas": {"rate": 0.5, "lam": 10.0},
    "GrowingNeuralGas": {"eps_b": 0.2, "eps_n": 0.006, "lam": 100, "a_max": 50.0, "alpha": 0.5, "d": 0.995},
    "GrowWhenRequired": {"a_T": 0.95, "h_T": 0.1, "eps_b": 0.1, "eps_n": 0.01, "tau_b": 3.33, "tau_n": 14.3,
                         "alpha_b": 1.05, "alpha_n": 1.05, "a_max": 50.0},
}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_every_declared_default_is_the_constructors_and_the_papers(name):
    # set_params always receives the constructor's value, so a declared default that drifts from the signature's
    # is invisible to every run: compare the three (value and type: an Int's default is an int)
    import inspect

    from neurosim.params import REQUIRED
    from neurosim.rules import competitive

    cls = getattr(competitive, name)
    declared = {k: p.default for k, p in cls.declared().items()}
    signature = inspect.signature(cls.__init__).parameters
    assert set(declared) == set(signature) - {"self"}
    for k, default in declared.items():
        given = signature[k].default
        if given is inspect.Parameter.empty:
            assert default is REQUIRED, k
        else:
            assert default == given and type(default) is type(given), k
    assert {k: v for k, v in declared.items() if v is not REQUIRED} == PAPER[name]
    assert all(type(declared[k]) is type(v) for k, v in PAPER[name].items())


@pytest.mark.parametrize("builder, rule", [("build_gng", "GrowingNeuralGas"), ("build_gwr", "GrowWhenRequired"),
                                           ("build_som", "Kohonen")])
def test_the_builders_defaults_are_the_rules(builder, rule):
    import inspect

    from neurosim.models import self_organizing

    signature = inspect.signature(getattr(self_organizing, builder)).parameters
    assert {k: signature[k].default for k in PAPER[rule]} == PAPER[rule]


def test_kohonens_defaults_are_minisoms():
    import inspect

    minisom = pytest.importorskip("minisom")
    theirs = inspect.signature(minisom.MiniSom.__init__).parameters
    assert theirs["learning_rate"].default == PAPER["Kohonen"]["rate"]
    assert theirs["sigma"].default == PAPER["Kohonen"]["sigma"]
    assert theirs["neighborhood_function"].default == PAPER["Kohonen"]["neighbourhood"]
    assert theirs["topology"].default == PAPER["Kohonen"]["topology"]


INF = None  # unbounded
#: every declared numeric parameter's range as the docstrings and papers give it: (low, high, low_open, high_open)
RANGES = {
    "Kohonen": {"rows": (1, INF), "cols": (1, INF), "rate": (0.0, 1.0, False, False),
                "sigma": (0.0, INF, True, False)},
    "NeuralGas": {"rate": (0.0, 1.0, False, False), "lam": (0.0, INF, True, False)},
    "GrowingNeuralGas": {"eps_b": (0.0, 1.0, False, False), "eps_n": (0.0, 1.0, False, False), "lam": (1, INF),
                         "a_max": (0.0, INF, False, False), "alpha": (0.0, 1.0, False, False),
                         "d": (0.0, 1.0, False, False)},
    "GrowWhenRequired": {"a_T": (0.0, 1.0, True, False), "h_T": (0.0, 1.0, False, False),
                         "eps_b": (0.0, 1.0, False, False), "eps_n": (0.0, 1.0, False, False),
                         "tau_b": (0.0, INF, True, False), "tau_n": (0.0, INF, True, False),
                         "alpha_b": (1.0, INF, True, False), "alpha_n": (1.0, INF, True, False),
                         "a_max": (1.0, INF, False, False)},
}
#: the parameters fixed once the rule is built (they shape the structure)
FIXED = {"Kohonen": {"rows", "cols", "neighbourhood", "topology"}, "NeuralGas": set(),
         "GrowingNeuralGas": {"edges"}, "GrowWhenRequired": {"edges"}}


@pytest.mark.parametrize("name", sorted(RANGES))
def test_every_declared_range_and_liveness_is_the_documented_one(name):
    from neurosim.params import Float, Int
    from neurosim.rules import competitive

    declared = getattr(competitive, name).declared()
    for k, expected in RANGES[name].items():
        p = declared[k]
        if isinstance(p, Int):
            assert len(expected) == 2 and (p.low, p.high) == expected, k
        else:
            assert isinstance(p, Float) and (p.low, p.high, p.low_open, p.high_open) == expected, k
    assert set(RANGES[name]) | FIXED[name] | ({"neighbourhood", "topology"} if name == "Kohonen" else set()) \
        == set(declared)
    assert {k for k, p in declared.items() if not p.live} == FIXED[name]


def _edge_values(low, high, low_open, high_open):
    """(accepted, refused) values at each bound: the bound itself and one step beyond it."""
    ok, bad = [], []
    for bound, is_open, out in ((low, low_open, -1), (high, high_open, 1)):
        if bound is None:
            continue
        beyond = np.nextafter(bound, out * np.inf)
        inside = np.nextafter(bound, -out * np.inf)
        (bad if is_open else ok).append(bound)
        bad.append(beyond)
        ok.append(inside)
    return ok, bad


@pytest.mark.parametrize("builder, name", [("gng", "GrowingNeuralGas"), ("gwr", "GrowWhenRequired"),
                                           ("neural_gas", "NeuralGas"), ("som", "Kohonen")])
def test_each_live_bound_is_enforced_on_assignment(builder, name):
    # behaviour, not only the declaration: at every bound the closed end is accepted, the open end and one ulp
    # beyond are refused by name
    rule = BUILDERS[builder]().network.projections["W"].rule
    for k, r in RANGES[name].items():
        if k in FIXED[name] or len(r) == 2:
            continue
        ok, bad = _edge_values(*r)
        for v in ok:
            setattr(rule, k, float(v))
            assert getattr(rule, k) == v
        for v in bad:
            with pytest.raises(ValueError, match=k):
                setattr(rule, k, float(v))


def _bmu_network(n=3):
    net = ns.Network()
    x = ns.Population("x", 2)
    m = ns.Population("m", n, dynamics=ns.BestMatchingUnit())
    net.add(x, m)
    net.connect(ns.ArrayStream(np.zeros((4, 2))), x)
    return net, x, m


def _mask_edges(name, m, n=3):
    return ns.Projection(name, m, m, init=ns.Constant(0.0), mask=np.zeros((n, n), bool))


def _sparse_edges(name, m, post=(), pre=()):
    return ns.Projection(name, m, m, init=ns.Constant(1.0), connectivity=ns.FromIndices(list(post), list(pre)),
                         storage="sparse")


@pytest.mark.parametrize("rule", ["GrowingNeuralGas", "GrowWhenRequired"])
def test_wiring_the_growing_rules_cannot_use_is_refused_by_name_before_the_run(rule):
    cls = getattr(ns.rules, rule)
    with pytest.raises(TypeError, match="edges must be a Projection"):
        cls(np.zeros((3, 3), bool))
    net, x, m = _bmu_network()
    with pytest.raises(ValueError, match="edges must be a sparse lateral projection.*'E' is not lateral"):
        cls(ns.Projection("E", x, m, connectivity=ns.FromIndices([], []), storage="sparse"))
    # a dense (masked) one would hold units^2 values: refused, with what to build instead
    refusal = (r"edges must be a sparse lateral projection, e\.g\. Projection\('E', map, map, "
               r"connectivity=FromIndices\(\[\], \[\]\), storage='sparse'\); 'E' is dense")
    with pytest.raises(ValueError, match=refusal):
        cls(_mask_edges("E", m))
    with pytest.raises(ValueError, match="'E' is dense"):
        cls(ns.Projection("E", m, m))
    # edges left out of the network
    net.add(ns.Projection("W", x, m, rule=cls(_sparse_edges("E", m))))
    with pytest.raises(ValueError, match=f"{rule}: the edges 'E' are not in the network; add them"):
        net.run(1)
    assert net.t == 0
    # edges between other units than the prototypes'
    net, x, m = _bmu_network()
    other = ns.Population("o", 3, dynamics=ns.BestMatchingUnit())
    net.add(other, ns.Projection("V", x, other))
    E = _sparse_edges("E", other)
    net.add(E, ns.Projection("W", x, m, rule=cls(E)))
    with pytest.raises(ValueError, match=f"{rule}: the edges 'E' must connect the units of 'm'; they connect 'o'"):
        net.run(1)
    assert net.t == 0
    # edges one-sided at the start: an edge is two synapses
    net, x, m = _bmu_network()
    E = _sparse_edges("E", m, [0, 1, 2], [1, 0, 1])
    net.add(E, ns.Projection("W", x, m, rule=cls(E)))
    with pytest.raises(ValueError, match=f"{rule}: the edges 'E' must be symmetric"):
        net.run(1)
    assert net.t == 0
    # sparse prototypes: the rules and BestMatchingUnit move and read them as dense rows
    net, x, m = _bmu_network()
    E = _sparse_edges("E", m)
    net.add(E, ns.Projection("W", x, m, rule=cls(E), connectivity=ns.FixedInDegree(2), storage="sparse"))
    with pytest.raises(ValueError, match="prototypes as dense rows; projection 'W' stores its synapses sparsely"):
        net.run(1)
    assert net.t == 0
    with pytest.raises(ValueError, match=f"{rule} moves the prototypes as dense rows; projection 'W' stores"):
        net["W"].rule.validate(net)  # the rule's own check, whatever the dynamics accept


@pytest.mark.parametrize("rule", ["Kohonen", "NeuralGas"])
def test_a_competitive_rule_on_a_lateral_projection_is_refused(rule):
    net, x, m = _bmu_network(4)
    make = (lambda: ns.rules.Kohonen(2, 2)) if rule == "Kohonen" else ns.rules.NeuralGas
    net.add(ns.Projection("W", x, m), ns.Projection("L", m, m, rule=make()))
    with pytest.raises(ValueError, match=f"{rule} learns the prototypes of a feed-forward projection; 'L' is lateral"):
        net.run(1)
    assert net.t == 0


def test_best_matching_unit_wiring_is_refused_by_name():
    net, x, m = _bmu_network()
    net.add(ns.Projection("W", x, m, sign=-1))
    with pytest.raises(ValueError, match="prototype projection 'W' must be excitatory"):
        net.run(1)
    net, x, m = _bmu_network()
    y = ns.Population("y", 2)
    net.add(y, ns.Projection("W", x, m), ns.Projection("V", y, m))
    net.connect(ns.ArrayStream(np.zeros((4, 2))), y)
    with pytest.raises(ValueError, match=r"needs exactly one feed-forward projection \(the prototypes\); got \['W', 'V'\]"):
        net.run(1)
    net, x, m = _bmu_network()
    net.add(ns.Projection("W", x, m), _mask_edges("E", m), _mask_edges("F", m))
    with pytest.raises(ValueError, match=r"takes at most one lateral projection \(the edges\); got \['E', 'F'\]"):
        net.run(1)
    # one lateral projection, dense or sparse, is allowed and changes nothing
    for edges in (_mask_edges, _sparse_edges):
        net, x, m = _bmu_network()
        net.add(ns.Projection("W", x, m), edges("E", m))
        net.run(1)
        assert m.activity.sum() == 1.0


@pytest.mark.parametrize("neighbourhood", ["gaussian", "mexican_hat"])
@pytest.mark.parametrize("sigma", [1.5612459757428907e-210, 1e-160, 1e-155])
def test_a_tiny_sigma_moves_the_winner_alone_on_both_paths(neighbourhood, sigma):
    """sigma > 0 is accepted, so any positive sigma must run: where 2 sigma^2 underflows to 0 (the first two)
    or the mexican hat's 2 p / (2 sigma^2) overflows (all three), the neighbourhood is its limit
    sigma -> 0, the winner alone (it raised ZeroDivisionError in the kernel and gave NaN in NumPy).
    Found by the hypothesis test above on a fresh machine."""
    X = np.random.default_rng(0).random((3, 2))
    init = np.random.default_rng(1).random((6, 2))
    moved = []
    for backend in ("python", "compiled"):
        c = build_som(ns.ArrayStream(X), 2, 3, rate=0.5, sigma=sigma, neighbourhood=neighbourhood,
                      decay="constant", init=init)
        w = init.copy()
        for t in range(3):
            c.run(1, backend=backend)
            winner = int(np.argmin(np.sum((w - X[t]) ** 2, axis=1)))
            w[winner] += 0.5 * (X[t] - w[winner])
            np.testing.assert_array_equal(c.weights, w)
        moved.append(c.weights.copy())
    np.testing.assert_array_equal(moved[0], moved[1])
