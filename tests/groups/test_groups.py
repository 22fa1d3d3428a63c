"""Group families of structured sparse codes (paper 003): structure, Omega, hostile input."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis_profiles import examples

from neurosim.groups import GroupStructure, as_groups


def test_singletons_omega_is_l1():
    g = GroupStructure.singletons(5)
    a = np.array([[1.0, -2.0, 0.0, 3.5, -0.5]])
    assert g.n_groups == 5
    assert g.omega(a)[0] == pytest.approx(7.0, rel=1e-15)
    # eta = 1/2 over singletons: (sum |a_j|^0.5)^2, by hand
    assert g.omega(a, eta=0.5)[0] == pytest.approx((1 + np.sqrt(2) + np.sqrt(3.5) + np.sqrt(0.5)) ** 2, rel=1e-13)


def test_disjoint_blocks_and_group_lasso_norm():
    g = GroupStructure.disjoint(7, 3)
    assert [list(x) for x in g] == [[0, 1, 2], [3, 4, 5], [6]]
    a = np.array([3.0, 4.0, 0.0, 0.0, 0.0, 0.0, -2.0])
    assert g.omega(a) == pytest.approx(5.0 + 2.0, rel=1e-15)


def test_torus_neighbourhoods_wrap():
    g = GroupStructure.torus(4, 5, radius=1)
    assert g.n_groups == 20 and g.n_units == 20 and g.grid == (4, 5)
    # unit 0 at (0, 0): rows {3, 0, 1} x cols {4, 0, 1}
    expected = sorted(r * 5 + c for r in (3, 0, 1) for c in (4, 0, 1))
    assert list(g.group(0)) == expected
    # every unit is in exactly 9 groups (the neighbourhoods containing it)
    assert np.all(np.bincount(g.indices, minlength=20) == 9)
    with pytest.raises(ValueError, match="radius"):
        GroupStructure.torus(4, 5, radius=2)


def test_tree_groups_are_subtrees():
    g = GroupStructure.tree(depth=3, branching=2)
    assert g.n_units == 7
    assert list(g.group(0)) == list(range(7))
    assert list(g.group(1)) == [1, 3, 4] and list(g.group(2)) == [2, 5, 6]
    assert list(g.group(6)) == [6]
    assert list(g.parent) == [-1, 0, 0, 1, 1, 2, 2]
    # same family from a networkx tree with non-integer labels
    t = nx.DiGraph([("a", "b"), ("a", "c")])
    h = GroupStructure.from_graph(t)
    assert [list(x) for x in h] == [[0, 1, 2], [1], [2]]


def test_graph_neighbourhoods():
    h = GroupStructure.from_graph(nx.path_graph(4))
    assert [list(x) for x in h] == [[0, 1], [0, 1, 2], [1, 2, 3], [2, 3]]
    # the 2-D torus grid graph of networkx gives the 4-neighbourhood (radius 1 hop)
    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 3, periodic=True), ordering="sorted")
    assert all(len(x) == 5 for x in GroupStructure.from_graph(grid))


def test_omega_weights_and_incidence():
    g = GroupStructure.from_sets([[0, 1], [1, 2]], 3, weights=[2.0, [1.0, 3.0]])
    a = np.array([1.0, 1.0, 1.0])
    assert g.omega(a) == pytest.approx(np.sqrt(8.0) + np.sqrt(10.0), rel=1e-15)
    inc = g.incidence()
    np.testing.assert_array_equal(inc, [[2.0, 2.0, 0.0], [0.0, 1.0, 3.0]])
    # Omega from the incidence matrix written out
    assert g.omega(a) == pytest.approx(np.sqrt(((inc * a) ** 2).sum(axis=1)).sum(), rel=1e-15)


def test_as_groups():
    assert as_groups(None, 4) == GroupStructure.singletons(4)
    assert as_groups([[0, 1], [2, 3]], 4) == GroupStructure.disjoint(4, 2)
    with pytest.raises(ValueError, match="n_units"):
        as_groups(GroupStructure.singletons(3), 4)


@pytest.mark.parametrize("sets, n, match", [
    ([[0, 4]], 4, r"\[0, 3\]"),
    ([[0, -1]], 4, r"\[0, 3\]"),
    ([[0, 1], []], 2, "empty"),
    ([[0, 0, 1]], 2, "twice"),
    ([[0]], 2, "belong to none"),
    ([], 2, "at least one"),
])
def test_bad_groups(sets, n, match):
    with pytest.raises(ValueError, match=match):
        GroupStructure.from_sets(sets, n)


def test_bad_weights_and_types():
    with pytest.raises(ValueError, match="weights"):
        GroupStructure.from_sets([[0, 1]], 2, weights=[-1.0])
    with pytest.raises(ValueError, match="weights"):
        GroupStructure.from_sets([[0, 1]], 2, weights=[[1.0, np.nan]])
    with pytest.raises(TypeError, match="integer"):
        GroupStructure.from_sets([[0, 1.5]], 2)
    with pytest.raises(TypeError):
        GroupStructure.from_sets(3, 2)
    with pytest.raises(ValueError, match="eta"):
        GroupStructure.singletons(2).omega([1.0, 1.0], eta=0.0)
    with pytest.raises(ValueError, match="cycle"):
        GroupStructure.from_parents([1, 0])


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.integers(-3, 8), max_size=5), max_size=5), st.integers(-1, 6))
def test_hostile_sets_give_clear_errors(sets, n):
    try:
        g = GroupStructure.from_sets(sets, n)
    except (ValueError, TypeError) as e:
        assert any(word in str(e) for word in ("n_units", "group", "unit", "indptr"))
    else:
        covered = sorted({u for s in sets for u in s})
        assert covered == list(range(n)) and g.n_groups == len(sets)
