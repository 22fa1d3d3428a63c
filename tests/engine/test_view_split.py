"""Compiled segments end where an ArrayStream wraps around when its blocks are large (no wrapped copy is drawn).

``Stream.view_steps`` says how many steps a stream serves as a view of its
own data; the engine ends a segment there when those steps hold at least
``VIEW_SPLIT_BYTES`` of input, since copying a large wrapped block (and
first-touching fresh memory for it) costs more than the Python of one more
segment. Segments are bit-identical however a run is cut, so the results
equal a run that copies (small ``VIEW_SPLIT_BYTES`` disabled) and the
per-step path.
"""

import numpy as np

import neurosim as ns
import neurosim.engine as engine


def test_view_steps_closed_form():
    s = ns.ArrayStream(np.zeros((7, 3, 2)))
    assert s.view_steps(0, 5, 3) == 5
    assert s.view_steps(0, 9, 3) == 7
    assert s.view_steps(5, 9, 3) == 2
    assert s.view_steps(12, 9, 3) == 2  # 12 % 7 = 5
    assert s.view_steps(5, 9, 1) == 9  # not the array's batch: no view to offer, no preference
    assert ns.ArrayStream(np.zeros((7, 1, 2))).view_steps(5, 9, 3) == 9  # broadcast batch: always a copy
    assert ns.streams.Stream.view_steps(s, 3, 4, 3) == 4  # the base class has no preference


def network(data, seed=0):
    net = ns.Network(seed=seed, batch=data.shape[1])
    x = ns.Population("x", data.shape[2])
    y = ns.Population("y", 3, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ns.ArrayStream(data), x)
    net.add(ns.Projection("W", x, y, rule=ns.Oja(rate=1e-4)))
    return net


def run_counting_wrapped_blocks(monkeypatch, data, split_bytes):
    monkeypatch.setattr(engine, "VIEW_SPLIT_BYTES", split_bytes)
    wrapped = []
    block = ns.ArrayStream.block

    def spy(self, t0, n, batch=1):
        wrapped.append(t0 % self.data.shape[0] + n > self.data.shape[0])
        return block(self, t0, n, batch)

    monkeypatch.setattr(ns.ArrayStream, "block", spy)
    net = network(data)
    net.run(3)
    net.run(17)
    monkeypatch.setattr(ns.ArrayStream, "block", block)
    assert net.t == 20
    return net, wrapped


def test_large_wrapping_stream_is_served_as_views(monkeypatch):
    # 9 steps of 64 x 2048 float64 (1 MiB per step): a 20-step run crosses the wrap twice
    data = np.random.default_rng(0).standard_normal((9, 64, 2048))
    split, wrapped = run_counting_wrapped_blocks(monkeypatch, data, 2**20)
    assert wrapped and not any(wrapped)  # every block a view
    copied, wrapped = run_counting_wrapped_blocks(monkeypatch, data, 2**62)
    assert any(wrapped)  # without the split: a wrapped block copied
    # segments are bit-identical however the run is cut
    np.testing.assert_array_equal(split.projections["W"].weights, copied.projections["W"].weights)
    np.testing.assert_array_equal(split.populations["y"].activity, copied.populations["y"].activity)
    ref = network(data)
    ref.run(20, backend="python")
    np.testing.assert_allclose(split.projections["W"].weights, ref.projections["W"].weights, rtol=1e-12, atol=1e-15)


def test_small_inputs_do_not_split(monkeypatch):
    # 5 steps of 1 x 4: copying is cheap, and a segment every 5 steps would cost Python each time
    data = np.random.default_rng(1).standard_normal((5, 1, 4))
    _, wrapped = run_counting_wrapped_blocks(monkeypatch, data, engine.VIEW_SPLIT_BYTES)
    assert any(wrapped)
