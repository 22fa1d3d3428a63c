"""A Birth is refused, before anything is allocated, exactly when the arrays it would create exceed the
available memory (``Network.apply``): the population's state at its new size plus the weights, mask and
per-synapse arrays of every projection touching it, at the sizes the call's earlier events leave.

The byte counts are hand-computed from the array layouts: 8 bytes per float64 entry and id, 1 per mask entry.
"""

import numpy as np
import pytest

import neurosim as ns
import neurosim.network as network_module


def _net():
    """x (3) -> y (4) -> z (2); y has a per-unit and a pair variable and a masked lateral E with one array."""
    net = ns.Network(seed=0)
    x, y, z = ns.Population("x", 3), ns.Population("y", 4), ns.Population("z", 2)
    net.add(x, y, z)
    y.add_variable("mu", 1.0)
    y.add_variable("A", 0.0, pair=True)
    E = ns.Projection("E", y, y, init=ns.Constant(0.0), mask=np.zeros((4, 4), bool))
    E.add_array("age")
    net.add(ns.Projection("W", x, y), E, ns.Projection("V", y, z))
    return net, y, z


# y at 6 units: ids + activity (batch 1) + mu + A (6 rows) = 9 rows of 6 -> 8 * 6 * 9
Y6 = 8 * 6 * (1 + 1 + 1 + 6)
W6 = 6 * 3 * 8  # x -> y, weights only
E6 = 6 * 6 * (8 * 2 + 1)  # weights, "age", mask
V6 = 2 * 6 * 8  # y -> z with z at 2 units


@pytest.mark.parametrize("spare", [0, -1])
def test_a_birth_needs_exactly_its_new_arrays(monkeypatch, spare):
    need = Y6 + W6 + E6 + V6
    monkeypatch.setattr(network_module, "_available_memory", lambda: need + spare)
    net, y, z = _net()
    if spare < 0:
        with pytest.raises(ValueError, match=r"would grow population 'y' from 4 to 6 units and allocate .* "
                                             r"projections \['W', 'E', 'V'\]\); only"):
            net.apply(ns.Birth(y, 2))
        assert y.size == 4
    else:
        net.apply(ns.Birth(y, 2))
        assert y.size == 6


@pytest.mark.parametrize("spare", [0, -1])
def test_a_birth_counts_a_neighbour_at_the_size_an_earlier_birth_of_the_call_left(monkeypatch, spare):
    # z grows to 3 first (its own need is small); y's Birth then needs V at (3, 6), not (2, 6)
    need = Y6 + W6 + E6 + 3 * 6 * 8
    monkeypatch.setattr(network_module, "_available_memory", lambda: need + spare)
    net, y, z = _net()
    if spare < 0:
        with pytest.raises(ValueError, match="would grow population 'y' from 4 to 6"):
            net.apply(ns.Birth(z, 1), ns.Birth(y, 2))
        assert (y.size, z.size) == (4, 2)
    else:
        net.apply(ns.Birth(z, 1), ns.Birth(y, 2))
        assert (y.size, z.size) == (6, 3)


def test_without_a_memory_reading_a_birth_is_not_limited(monkeypatch):
    monkeypatch.setattr(network_module, "_available_memory", lambda: None)
    net, y, z = _net()
    net.apply(ns.Birth(y, 2))
    assert y.size == 6
