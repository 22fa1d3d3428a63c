"""neurosim.plot draws growing networks (prototypes and edges) and counts edge events from the event log."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from test_gng import FAST, _moving  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim import plot  # noqa: E402
from neurosim.dynamics import BestMatchingUnit  # noqa: E402
from neurosim.models.self_organizing import build_gng  # noqa: E402


def test_graph_draws_one_line_per_edge_at_the_prototypes():
    P = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [np.nan, np.nan]])
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 0] = A[1, 2] = A[2, 1] = A[0, 3] = A[3, 0] = 1.0  # the edge to the absent unit is skipped
    ax = plot.graph(P, A)
    (lines,) = ax.collections[:1]
    segs = sorted(tuple(map(tuple, s)) for s in lines.get_segments())
    assert segs == [((0.0, 0.0), (1.0, 0.0)), ((1.0, 0.0), (0.0, 1.0))]
    np.testing.assert_array_equal(ax.collections[1].get_offsets(), P[:3])


@pytest.fixture(scope="module")
def gng():
    """A GNG run over the moving ring, recording its prototypes and edges every 100 inputs."""
    X = _moving()
    c = build_gng(ns.ArrayStream(X), record_every=100, **FAST)
    c.run(len(X))
    return c, X


def _segments(ax):
    """The edges' line segments, each as a sorted pair of end points, sorted."""
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    if not lines:
        return []
    (lines,) = lines
    return sorted(tuple(sorted(map(tuple, s))) for s in lines.get_segments())


def _hand_built(storage):
    """A competitive population of 3 units, prototypes P, edges 0-1 and 1-2 (each two synapses)."""
    net = ns.Network(seed=0)
    x = ns.Population("x", 2)
    units = ns.Population("map", 3, dynamics=BestMatchingUnit())
    net.add(x, units)
    W = ns.Projection("W", x, units, init=P3)
    edges = ns.Projection("edges", units, units, init=ns.Constant(1.0), storage=storage,
                          connectivity=ns.FromIndices([0, 1, 1, 2], [1, 0, 2, 1]))
    net.add(W, edges)
    return net


P3 = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize("storage", ["sparse", "dense"])
def test_graph_of_a_network_finds_its_prototypes_and_edges(storage):
    net = _hand_built(storage)
    ax = plot.graph(net)
    assert _segments(ax) == [((0.0, 0.0), (1.0, 0.0)), ((0.0, 1.0), (1.0, 0.0))]
    np.testing.assert_array_equal(ax.collections[-1].get_offsets(), P3)
    # an adjacency given with the network replaces its edges
    assert _segments(plot.graph(net, np.ones((3, 3)))) == [((0.0, 0.0), (0.0, 1.0)), ((0.0, 0.0), (1.0, 0.0)),
                                                           ((0.0, 1.0), (1.0, 0.0))]
    plt.close("all")


def test_graph_of_a_gng_circuit_draws_its_edges_at_its_prototypes(gng):
    # issue 40: graph(gng, data=X) was a TypeError (adjacency missing)
    c, X = gng
    row = {unit: r for r, unit in enumerate(c.ids)}
    expected = sorted(tuple(sorted((tuple(c.weights[row[a]]), tuple(c.weights[row[b]])))) for a, b, _ in c.edge_list())
    assert len(expected) >= 5
    for source in (c, c.network):
        ax = plot.graph(source, data=X)
        assert _segments(ax) == expected
        np.testing.assert_array_equal(ax.collections[0].get_offsets(), X)
        np.testing.assert_array_equal(ax.collections[-1].get_offsets(), c.weights)
    plt.close("all")


def test_graph_refuses_what_it_cannot_draw():
    with pytest.raises(TypeError, match="give the adjacency"):
        plot.graph(P3)
    with pytest.raises(TypeError, match="got int"):
        plot.graph(3, np.eye(3))
    net = _hand_built("sparse")
    net.add(ns.Population("map2", 2, dynamics=BestMatchingUnit()))
    with pytest.raises(ValueError, match="has 2"):
        plot.graph(net)


def test_graph_at_a_recorded_step_is_the_circuits_network_and_edge_counts_follow_the_log(gng):
    c, X = gng
    net = c.network
    W = net.recorders[[n for n, r in net.recorders.items() if r.target is c.prototypes][0]].to_dataset(layout="dense")
    E = net.recorders[[n for n, r in net.recorders.items() if r.target is c.edges][0]].to_dataset(layout="dense")
    ax = plot.graph_at(W, E, data=X)
    assert len(ax.collections[1].get_segments()) == len(c.edge_list())
    np.testing.assert_array_equal(np.asarray(ax.collections[2].get_offsets()), c.weights)
    steps, existing, linked, unlinked = plot.edge_counts(W, steps=np.arange(1, len(X) + 1), projection="edges")
    assert existing[-1] == len(c.edge_list())
    assert linked.sum() == net.event_log.kind.count("link") and unlinked.sum() == net.event_log.kind.count("unlink")
