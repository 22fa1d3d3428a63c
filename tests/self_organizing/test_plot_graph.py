"""neurosim.plot draws growing networks (prototypes and edges) and counts edge events from the event log."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from test_gng import FAST, _moving  # noqa: E402

import neurosim as ns  # noqa: E402
from neurosim import plot  # noqa: E402
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


def test_graph_at_a_recorded_step_is_the_circuits_network_and_edge_counts_follow_the_log():
    X = _moving()
    c = build_gng(ns.ArrayStream(X), record_every=100, **FAST)
    c.run(len(X))
    net = c.network
    W = net.recorders[[n for n, r in net.recorders.items() if r.target is c.prototypes][0]].to_dataset(layout="dense")
    E = net.recorders[[n for n, r in net.recorders.items() if r.target is c.edges][0]].to_dataset(layout="dense")
    ax = plot.graph_at(W, E, data=X)
    assert len(ax.collections[1].get_segments()) == len(c.edge_list())
    np.testing.assert_array_equal(np.asarray(ax.collections[2].get_offsets()), c.weights)
    steps, existing, linked, unlinked = plot.edge_counts(W, steps=np.arange(1, len(X) + 1), projection="edges")
    assert existing[-1] == len(c.edge_list())
    assert linked.sum() == net.event_log.kind.count("link") and unlinked.sum() == net.event_log.kind.count("unlink")
