"""The helpers every component uses: scratch arrays (:class:`~neurosim.component.Workspace`) and the
dynamics-phase slot right after a population's own dynamics (:func:`~neurosim.component.order_after_dynamics`)."""

import numpy as np

import neurosim as ns
from neurosim.component import Workspace, order_after_dynamics


def test_a_workspace_array_is_kept_while_its_shape_and_dtype_stay_and_replaced_when_either_changes():
    work = Workspace()
    a = work("a", (3, 2))
    assert a.dtype == np.float64 and a.shape == (3, 2) and not a.any()
    a[:] = 7.0
    # same name, shape and dtype: the very array, contents kept (no reallocation every step)
    assert work("a", (3, 2)) is a and work("a", (3, 2), np.float64) is a
    assert (a == 7.0).all()
    # another name: an array of its own
    b = work("b", (3, 2))
    assert b is not a and not b.any()
    # a new shape (a Birth grew the population): a fresh zeroed array of that shape
    grown = work("a", (4, 2))
    assert grown.shape == (4, 2) and not grown.any() and grown is not a
    assert work("a", (4, 2)) is grown
    # a new dtype: a fresh array of that dtype, even at the same shape
    flags = work("a", (4, 2), np.bool_)
    assert flags.dtype == np.bool_ and flags.shape == (4, 2) and not flags.any()
    assert work("a", (4, 2), np.bool_) is flags
    ints = work("a", (4, 2), np.int64)
    assert ints.dtype == np.int64 and ints is not flags
    # the other name was not touched by any of this
    assert work("b", (3, 2)) is b


def test_order_after_dynamics_falls_between_a_population_and_the_next_one_downstream():
    net = ns.Network(seed=0)
    x = ns.Population("x", 4)
    y = ns.Population("y", 3, dynamics=ns.Jacobi(eta=0.1, max_iter=5))
    z = ns.Population("z", 2, dynamics=ns.Jacobi(eta=0.1, max_iter=5))
    net.add(x, y, z)
    net.connect(ns.ArrayStream(np.ones((10, 4))), x)
    net.add(ns.Projection("W", x, y))
    net.add(ns.Projection("V", y, z))
    net.validate()
    oy, oz = y.dynamics.order, z.dynamics.order
    assert oy < oz
    assert order_after_dynamics(y) == oy + 0.5
    assert oy < order_after_dynamics(y) < oz
    assert order_after_dynamics(z) == oz + 0.5
    # a population without dynamics (an input): right at the start of the phase
    assert order_after_dynamics(x) == 0.5
