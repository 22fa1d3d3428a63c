"""Figures of structured dictionaries: topographic maps and tree dictionaries (Agg backend)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurosim.groups import GroupStructure  # noqa: E402
from neurosim.plot import plot_topographic_map, plot_tree_dictionary, tree_layout  # noqa: E402


def test_tree_layout_hand_case():
    x, depth = tree_layout([-1, 0, 0, 1, 1, 2])
    # leaves 3, 4, 5 at 0, 1, 2; node 1 over (3, 4), node 2 over 5, the root over (1, 2)
    np.testing.assert_allclose(x, [1.25, 0.5, 2.0, 0.0, 1.0, 2.0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(depth, [0, 1, 1, 2, 2, 2])
    x, depth = tree_layout([-1, -1, 0])  # a forest: trees side by side in root order
    np.testing.assert_array_equal(x, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(depth, [0, 0, 1])


def test_tree_layout_deep_chain_and_complete_tree():
    x, depth = tree_layout(np.arange(-1, 5000))  # a 5001-node chain: no recursion limit
    np.testing.assert_array_equal(depth, np.arange(5001))
    assert np.all(x == 0.0)
    g = GroupStructure.tree(4, 3)
    x, depth = tree_layout(g.parent)
    assert sorted(np.bincount(depth)) == [1, 3, 9, 27]
    leaves = depth == 3
    np.testing.assert_array_equal(np.sort(x[leaves]), np.arange(27.0))  # leaves never overlap


@pytest.mark.parametrize("parent, match", [
    ([0, -1], "another node"), ([-1, 5], "another node"), ([1, 2, 0], "cycle"), ([-1, 2, 1], "cycle"),
    ([], "non-empty"), ([[-1]], "1-D"), ([-1.0, 0.0], "integer"),
])
def test_tree_layout_rejects_bad_parents(parent, match):
    with pytest.raises(ValueError, match=match):
        tree_layout(np.asarray(parent))


def test_plot_tree_dictionary_draws_every_element():
    g = GroupStructure.tree(3, 2)
    W = np.random.default_rng(0).normal(size=(7, 16))
    ax = plot_tree_dictionary(W, g.parent)
    assert len(ax.images) == 7 and len(ax.lines) == 6
    x, depth = tree_layout(g.parent)
    for j, im in enumerate(ax.images):
        left, right, bottom, top = im.get_extent()
        assert (left + right) / 2 == pytest.approx(x[j]) and (bottom + top) / 2 == pytest.approx(depth[j])
        np.testing.assert_allclose(im.get_array(), W[j].reshape(4, 4) / np.abs(W[j]).max(), rtol=1e-12)
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # root on top
    plt.close("all")


def test_plot_tree_dictionary_bad_input():
    W = np.ones((3, 9))
    with pytest.raises(ValueError, match="parent"):
        plot_tree_dictionary(W, [-1, 0])
    with pytest.raises(ValueError, match="patch_size"):
        plot_tree_dictionary(np.ones((3, 8)), [-1, 0, 0])
    with pytest.raises(ValueError, match="W"):
        plot_tree_dictionary(np.full((3, 9), np.nan), [-1, 0, 0])


def test_plot_topographic_map_places_elements_on_the_grid():
    W = np.random.default_rng(1).normal(size=(12, 16))
    ax = plot_topographic_map(W, (3, 4), 4)
    canvas = ax.images[0].get_array()
    assert canvas.shape == (3 * 5 + 1, 4 * 5 + 1)
    j = 6  # row 1, column 2
    tile = canvas[1 + 1 * 5:1 + 1 * 5 + 4, 1 + 2 * 5:1 + 2 * 5 + 4]
    np.testing.assert_allclose(tile, W[j].reshape(4, 4) / np.abs(W[j]).max(), rtol=1e-12)
    ax2 = plot_topographic_map(np.ones((9, 4)), GroupStructure.torus(3, 3))
    assert ax2.images[0].get_array().shape == (10, 10)
    plt.close("all")


@pytest.mark.parametrize("args, exc, match", [
    ((np.ones((11, 16)), (3, 4)), ValueError, "W"),
    ((np.ones((12, 16)), (3, 4), 5), ValueError, "patch_size"),
    ((np.ones((12, 16)), (3,)), TypeError, "shape"),
    ((np.ones((12, 16)), GroupStructure.singletons(12)), TypeError, "shape"),
    ((np.ones((12, 16)), (0, 4)), ValueError, "rows"),
])
def test_plot_topographic_map_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        plot_topographic_map(*args)
