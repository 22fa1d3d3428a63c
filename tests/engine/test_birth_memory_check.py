"""A Birth is refused, before anything is allocated, exactly when the arrays it would create exceed the
available memory (``Network.apply``): the population's state at its new size plus the weights, mask and
per-synapse arrays of every projection touching it, at the sizes the call's earlier events leave.

The constructors too (issue 38): a Population, a pair variable or a Projection whose arrays would not fit is
refused by name, with the same reading of the available memory, before it allocates (a size typed an order
too large allocated for many seconds and ended in NumPy's bare MemoryError).

The byte counts are hand-computed from the array layouts: 8 bytes per float64 entry and id, 1 per mask entry.
"""

import numpy as np
import pytest

import neurosim as ns
import neurosim._validation as validation
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


# 2**16 units: ids and activity are 2 * 8 * 2**16 bytes = 1 MiB, the smallest size that is checked at all
UNITS = 2**16


@pytest.mark.parametrize("spare", [0, -1])
def test_a_population_is_refused_by_size_exactly_when_its_ids_and_activity_do_not_fit(monkeypatch, spare):
    monkeypatch.setattr(validation, "available_memory", lambda: 16 * UNITS + spare)
    if spare < 0:
        with pytest.raises(ValueError, match=rf"Population 'y' of size={UNITS} .* would allocate 0.000977 GiB; "
                                             r"only 0.000977 GiB of memory is available"):
            ns.Population("y", UNITS)
    else:
        assert ns.Population("y", UNITS).size == UNITS


@pytest.mark.parametrize("spare", [0, -1])
def test_a_pair_variable_is_refused_exactly_when_it_does_not_fit(monkeypatch, spare):
    y = ns.Population("y", 512)  # 512 x 512 float64 = 2 MiB
    monkeypatch.setattr(validation, "available_memory", lambda: 8 * 512 * 512 + spare)
    if spare < 0:
        with pytest.raises(ValueError, match=r"variable 'A' of population 'y', shape \(512, 512\), would allocate"):
            y.add_variable("A", pair=True)
        assert "A" not in y.state  # refused: nothing declared
    else:
        assert y.add_variable("A", pair=True).shape == (512, 512)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("spare", [0, -1])
def test_a_projection_is_refused_exactly_when_its_weights_and_mask_do_not_fit(monkeypatch, spare, masked):
    x, y = ns.Population("x", 256), ns.Population("y", 1024)
    need = 1024 * 256 * (9 if masked else 8)
    monkeypatch.setattr(validation, "available_memory", lambda: need + spare)
    mask = np.ones((1024, 256), dtype=bool) if masked else None
    if spare < 0:
        with pytest.raises(ValueError, match=r"Projection 'W' \(x -> y\) of shape \(post.size, pre.size\) = "
                                             r"\(1024, 256\) .* would allocate"):
            ns.Projection("W", x, y, mask=mask)
    else:
        assert ns.Projection("W", x, y, mask=mask).shape == (1024, 256)


def test_sizes_no_machine_holds_are_refused_by_name_at_once():
    # with the real reading of the available memory: refused before allocating, so in no time
    with pytest.raises(ValueError, match=r"Population 'y' of size=1000000000000 .* would allocate 1.49e\+04 GiB"):
        ns.Population("y", 10**12)
    x = ns.Population("x", 10**6)
    with pytest.raises(ValueError, match=r"Projection 'W' \(x -> x\) of shape .* = \(1000000, 1000000\)"):
        ns.Projection("W", x, x)
