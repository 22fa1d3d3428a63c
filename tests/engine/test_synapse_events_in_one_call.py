"""Links and Unlinks that build on each other inside one ``Network.apply`` call.

Until a Birth or Death touches the projection, a call keeps its synapse edits as a list and writes
them at the commit (``Network._stage_synapses``); a later event of the same call must see them: a
synapse linked earlier exists, one unlinked earlier does not, and a Birth or Death after them grows or
shrinks the edited arrays, not the live ones.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.events import Link, Unlink

from sm_helpers import state_of
from test_survivors import _lateral_net


def _edges(E):
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(E.mask))}


def test_a_synapse_linked_earlier_in_the_call_exists_for_the_next_link():
    net = _lateral_net()
    before = state_of(net)
    E = net.projections["E"]
    with pytest.raises(ValueError, match="2 <- 3 exists already"):
        # the first Link has the default weight 0: the link exists whatever its weight
        net.apply(Link(E, 2, 3), Link(E, 2, 3, weight=0.7))
    after = state_of(net)
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert len(net.event_log.kind) == 0


def test_a_synapse_unlinked_earlier_in_the_call_is_gone_for_the_next_unlink():
    net = _lateral_net()
    E = net.projections["E"]
    with pytest.raises(ValueError, match="no synapse 0 <- 1"):
        net.apply(Unlink(E, 0, 1), Unlink(E, 0, 1))
    assert _edges(E) == {(0, 1), (1, 0)}


def test_link_then_unlink_and_unlink_then_relink_in_one_call():
    net = _lateral_net()
    E = net.projections["E"]
    # linked and unlinked again: nothing is left, both edits are logged
    net.apply(Link(E, 2, 3, weight=0.5), Unlink(E, 2, 3))
    assert _edges(E) == {(0, 1), (1, 0)} and E.weights[2, 3] == 0.0
    assert list(net.event_log.kind) == ["link", "unlink"]
    # an existing synapse unlinked and linked again takes the new weight
    E.weights[0, 1] = 0.25
    net.apply(Unlink(E, 0, 1), Link(E, 0, 1, weight=0.75))
    assert _edges(E) == {(0, 1), (1, 0)}
    assert E.weights[0, 1] == 0.75 and E.weights[1, 0] == 0.0


def test_a_birth_after_a_link_grows_the_edited_arrays():
    net = _lateral_net()
    y, E = net.populations["y"], net.projections["E"]
    out = net.apply(Link(E, 2, 3, symmetric=True, weight=0.5), ns.Birth(y, 1, unlinked=[E]),
                    Link(E, 4, 2, weight=0.25))
    np.testing.assert_array_equal(out[1], [4])
    assert E.mask.shape == E.weights.shape == (5, 5)
    assert _edges(E) == {(0, 1), (1, 0), (2, 3), (3, 2), (4, 2)}
    assert E.weights[2, 3] == E.weights[3, 2] == 0.5 and E.weights[4, 2] == 0.25
    # everything not linked has weight 0
    w = E.weights.copy()
    w[E.mask] = 0.0
    assert not w.any()


def test_a_death_after_a_link_removes_the_new_synapse_with_its_unit():
    net = _lateral_net()
    y, E = net.populations["y"], net.projections["E"]
    net.apply(Link(E, 2, 3, symmetric=True, weight=0.5), Link(E, 0, 2, weight=0.125), ns.Death(y, [3]))
    np.testing.assert_array_equal(y.ids, [0, 1, 2])
    assert E.mask.shape == (3, 3)
    assert _edges(E) == {(0, 1), (1, 0), (0, 2)}
    assert E.weights[0, 2] == 0.125


def _twins(n=6):
    """The lateral edge 0 <-> 1 (weight 0.5, age 3) on a masked dense and on a sparse projection, a network each."""
    nets = {}
    for storage in ("dense", "sparse"):
        net = ns.Network(seed=0)
        y = ns.Population("y", n)
        net.add(ns.Population("x", 2), y)
        E = ns.Projection("E", y, y, init=ns.Constant(0.5), connectivity=ns.FromIndices([0, 1], [1, 0]),
                          storage=storage)
        net.add(E)
        E.add_array("age", 3.0)
        nets[storage] = net
    return nets


def _synapses(E):
    """``{(post id, pre id): (weight, age)}`` of every synapse, dense or sparse alike."""
    post, pre = E.synapses()
    if E.sparse:
        w, age = E.weights, E.arrays["age"]
    else:
        w, age = E.weights[E.mask], E.arrays["age"][E.mask]
    return {(int(a), int(b)): (float(u), float(v)) for a, b, u, v in zip(post, pre, w, age)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_links_unlinks_births_and_deaths_in_one_call_leave_the_sparse_edges_of_the_masked_ones(seed):
    # the oracle is the masked dense projection given the same events: after every call the same synapses with the
    # same weights and ages, and the same log
    rng = np.random.default_rng(seed)
    nets = _twins()
    for _ in range(12):
        E, y = nets["dense"]["E"], nets["dense"]["y"]
        edges = set(_synapses(E))
        ids = y.ids.tolist()
        events, linked, next_id = [], set(edges), y.next_id
        for _ in range(int(rng.integers(1, 6))):
            i, j = (int(v) for v in rng.choice(ids, 2, replace=False))
            if rng.random() < 0.15:
                events.append(("birth",))
                ids.append(next_id)
                next_id += 1
            elif (i, j) in linked:
                events.append(("unlink", i, j))
                linked.discard((i, j))
            else:
                weight, age = float(rng.normal()), float(rng.integers(0, 9))
                events.append(("link", i, j, weight, age))
                linked.add((i, j))
        if rng.random() < 0.2:
            events.append(("death", int(rng.choice(ids))))
        for net in nets.values():
            E, y = net["E"], net["y"]
            made = [ns.Birth(y, 1, unlinked=[E]) if ev[0] == "birth" else ns.Death(y, [ev[1]]) if ev[0] == "death"
                    else Unlink(E, ev[1], ev[2]) if ev[0] == "unlink"
                    else Link(E, ev[1], ev[2], weight=ev[3], values={"age": ev[4]}) for ev in events]
            net.apply(*made)
        a, b = nets["dense"], nets["sparse"]
        assert _synapses(a["E"]) == _synapses(b["E"])
        assert np.array_equal(a["y"].ids, b["y"].ids)
        assert a.event_log.to_dict() == b.event_log.to_dict()
