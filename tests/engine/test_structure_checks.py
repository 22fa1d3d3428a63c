"""Events are refused when a component does not allow the structure they would leave (issue 38, item 5).

``Network.apply`` runs every component's ``check_structure`` -- the checks
``Network.validate`` runs before every run -- on the population sizes the
staged events would leave, before anything is committed: a refused call
leaves the network, its random generator, its event log and its recordings
exactly as they were, and later runs go on.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models.self_organizing import build_som
from neurosim.triggers import every_step

KOHONEN = r"Kohonen on projection 'W': population 'map' has 10 units, not rows \* cols = 3 \* 3 = 9"


def state(net):
    """Every array an event touches, copied, with the RNG state, the event log, the step and the recordings."""
    out = {"t": net.t, "rng": net.rng.bit_generator.state, "log": net.event_log.to_dict()}
    for name, pop in net.populations.items():
        out[f"{name}.ids"], out[f"{name}.next_id"] = pop.ids.copy(), pop.next_id
        out.update({f"{name}.{v}": a.copy() for v, a in pop.state.items()})
    for name, p in net.projections.items():
        out[f"{name}.weights"] = p.weights.copy()
        out[f"{name}.mask"] = None if p.mask is None else p.mask.copy()
    for name, rec in net.recorders.items():
        ds = rec.to_dataset(layout="slots")
        out.update({f"rec.{name}.{v}": ds[v].values.copy() for v in ds.data_vars})
        out[f"rec.{name}.time"] = ds[rec.time_dim].values.copy()
    return out


def assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].shape == b[k].shape and np.array_equal(a[k], b[k], equal_nan=True), k  # bit for bit
        else:
            assert a[k] == b[k], k


def som(steps=30):
    X = np.random.default_rng(0).random((steps, 3))
    c = build_som(ns.ArrayStream(X), 3, 3, steps=steps, record_every=2)
    return c


def test_a_birth_on_a_kohonen_map_is_refused_naming_the_rule_and_nothing_changes():
    c = som()
    c.run(6)
    net = c.network
    before = state(net)
    with pytest.raises(ValueError, match=r"Birth refused \('map' 9 -> 10 units\): " + KOHONEN +
                                         r"; nothing was applied"):
        net.apply(ns.Birth(net["map"], 1))
    assert_same(state(net), before)
    # a Death in the same call that would restore 9 units is fine: the constraint is on what the call leaves
    born, dead = net.apply(ns.Birth(net["map"], 1), ns.Death(net["map"], [0]))
    assert born.tolist() == [9] and dead.tolist() == [0] and net["map"].size == 9
    c.run(4)  # and the map runs on
    assert net.t == 10


@pytest.mark.parametrize("backend", ["compiled", "python"])
@pytest.mark.parametrize("condition", ["compiled", "python"])
def test_a_refused_birth_from_a_trigger_stops_the_run_at_the_last_completed_step(backend, condition):
    # the run used to commit the 10th unit (and log its birth), then stop; every later run refused the map
    ref = som()
    ref.run(4, backend=backend)
    c = som()
    net = c.network
    cond = every_step() if condition == "compiled" else (lambda n: True)
    net.add(ns.Trigger(cond, lambda n: ns.Birth(n["map"], 1), every=5))
    with pytest.raises(ValueError, match=KOHONEN):
        net.run(20, backend=backend)
    assert_same(state(net), state(ref.network))
    net.triggers.clear()
    net.run(16, backend=backend)  # later runs are not refused
    ref.run(16, backend=backend)
    assert_same(state(net), state(ref.network))


def coder(dynamics, atoms=8, features=5, steps=6):
    rng = np.random.default_rng(1)
    net = ns.Network(seed=0)
    x = ns.Population("x", features)
    a = ns.Population("a", atoms, dynamics=dynamics)
    net.add(x, a)
    net.connect(ns.ArrayStream(rng.standard_normal((steps, features))), x)
    net.add(ns.Projection("D", x, a, init=rng.standard_normal((atoms, features))))
    net.record(a, "activity")
    return net


def test_a_death_leaving_fewer_atoms_than_n_nonzero_is_refused():
    net = coder(ns.SparseCode("k_winners", n_nonzero=3))
    net.validate()  # connects the dynamics to its dictionary (what a run does first; nothing needs to run here)
    a = net.populations["a"]
    before = state(net)
    with pytest.raises(ValueError, match=r"Death refused \('a' 8 -> 2 units\): SparseCode dynamics of 'a': "
                                         r"SparseCode n_nonzero must be in \[1, 2\] \(n_atoms = size of 'a'\); "
                                         "got 3; nothing was applied"):
        net.apply(ns.Death(a, a.ids[:6]))
    assert_same(state(net), before)
    net.apply(ns.Death(a, a.ids[:5]))  # three atoms left: allowed, and the network validates
    assert a.size == 3
    net.validate()


def test_a_birth_that_a_fixed_group_family_cannot_cover_is_refused():
    net = coder(ns.StructuredSparseCode(ns.GroupStructure.torus(3, 3)), atoms=9)
    net.validate()
    before = state(net)
    with pytest.raises(ValueError, match=r"Birth refused \('a' 9 -> 11 units\): StructuredSparseCode dynamics of "
                                         r"'a': groups must cover the 11 units of 'a'"):
        net.apply(ns.Birth(net.populations["a"], 2))
    assert_same(state(net), before)
    # without a family (singletons) the groups follow the size; checking the staged sizes resolves nothing,
    # the next validation (before the next run) does
    free = coder(ns.StructuredSparseCode())
    free.validate()
    free.apply(ns.Birth(free.populations["a"], 2))
    assert free.populations["a"].dynamics.groups.n_units == 8
    free.validate()
    assert free.populations["a"].dynamics.groups.n_units == 10


def test_a_user_component_refuses_a_size_through_the_same_hook():
    # the hook is the components' own: a user component refusing a size is asked like the library's
    class AtMostFour(ns.Component):
        def __init__(self, pop):
            super().__init__()
            self.pop = pop

        def populations(self):
            return [self.pop]

        def step_numpy(self):
            return None

        def check_structure(self, sizes=None):
            if self.size_of(self.pop, sizes) > 4:
                raise ValueError(f"population {self.pop.name!r} may hold at most 4 units")

    def build(size):
        net = ns.Network(seed=3)
        x = ns.Population("x", 2)
        h = ns.Population("h", size, dynamics=ns.Linear())
        net.add(x, h, ns.Projection("W", x, h))
        net.connect(ns.ArrayStream(np.ones((4, 2))), x)
        net.add(AtMostFour(h))
        return net, h

    with pytest.raises(ValueError, match="may hold at most 4 units"):
        build(5)[0].validate()  # the network's validation (before every run) asks the same hook
    net, h = build(3)
    net.apply(ns.Birth(h, 1))
    before = state(net)
    with pytest.raises(ValueError, match=r"Birth refused \('h' 4 -> 5 units\): AtMostFour: population 'h' may "
                                         "hold at most 4 units"):
        net.apply(ns.Birth(h, 1))
    assert_same(state(net), before)
