"""``Assign`` at engine level: a per-unit variable set by stable id, staged with the call's other events
(all or none), seen by the events after it in the same call (``Network.apply``'s docstring)."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.events import Assign

from sm_helpers import make_sm, state_of


def _net():
    net = make_sm("XY", n=6, k=4)
    net.validate()
    y = net.populations["y"]
    y.state["mu"][:] = [0.5, 1.5, 2.5, 3.5]
    return net, y


def test_assign_sets_only_the_named_units_and_returns_an_empty_id_array():
    net, y = _net()
    before = state_of(net)
    out = net.apply(Assign(y, "mu", [0, 2], [5.0, 6.0]))
    assert isinstance(out, np.ndarray) and out.size == 0
    np.testing.assert_array_equal(y.state["mu"], [5.0, 1.5, 6.0, 3.5])
    after = state_of(net)
    assert [k for k in before if not np.array_equal(before[k], after[k])] == ["y.mu"]


def test_one_value_is_broadcast_and_ids_are_stable_across_a_death():
    net, y = _net()
    net.apply(ns.Death(y, [0]))
    np.testing.assert_array_equal(y.ids, [1, 2, 3])
    # id 3 is now at position 2: the event addresses units by id, not by position
    net.apply(Assign(y, "mu", [3, 1], 9.0))
    np.testing.assert_array_equal(y.state["mu"], [9.0, 2.5, 9.0])


def test_assigns_births_and_deaths_of_one_call_build_on_each_other():
    net, y = _net()
    out = net.apply(Assign(y, "mu", [0], 7.0), ns.Birth(y, 1), Assign(y, "mu", [4, 1], [8.0, -1.0]),
                    Assign(y, "mu", [2], 4.0), ns.Death(y, [3]))
    np.testing.assert_array_equal(out[1], [4])
    np.testing.assert_array_equal(y.ids, [0, 1, 2, 4])
    # the first Assign survives the Birth, the born unit takes the later value, the Death removes unit 3's
    np.testing.assert_array_equal(y.state["mu"], [7.0, -1.0, 4.0, 8.0])


def test_a_refused_event_after_an_assign_leaves_the_network_untouched():
    net, y = _net()
    before = state_of(net)
    mu = y.state["mu"]
    with pytest.raises(ValueError):
        net.apply(Assign(y, "mu", [0, 1], 5.0), Assign(y, "mu", [99], 1.0))
    with pytest.raises(ValueError):
        net.apply(Assign(y, "mu", [2], 5.0), ns.Death(y, [42]))
    after = state_of(net)
    assert all(np.array_equal(before[k], after[k]) for k in before)
    # not even the live array was written in place
    assert y.state["mu"] is mu


@pytest.mark.parametrize("variable, match", [("activity", "not a per-unit variable"),
                                             ("nothing", "not a per-unit variable")])
def test_assign_refuses_what_is_not_a_per_unit_variable(variable, match):
    net, y = _net()
    with pytest.raises(ValueError, match=match):
        net.apply(Assign(y, variable, [0], 1.0))


@pytest.mark.parametrize("layout, match", [("pair", "is a pair variable"), ("per_sample", "is a per-sample variable")])
def test_assign_refuses_pair_and_per_sample_variables(layout, match):
    net, y = _net()
    y.add_variable("extra", 1.0, **{layout: True})
    before = y.state["extra"].copy()
    with pytest.raises(ValueError, match=match):
        net.apply(Assign(y, "extra", [0], 2.0))
    np.testing.assert_array_equal(y.state["extra"], before)


def test_assign_refuses_a_population_of_another_network():
    net, y = _net()
    stranger = ns.Population("y", 4)  # same name, not this network's
    stranger.add_variable("mu", 0.0)
    with pytest.raises(ValueError, match="Assign refers to population 'y', which is not in this network"):
        net.apply(Assign(stranger, "mu", [0], 2.0))
    np.testing.assert_array_equal(y.state["mu"], [0.5, 1.5, 2.5, 3.5])
