"""The COBA network (Brette et al. 2007, benchmark 1) against Brian2: the same spikes, bit for bit (issue 42).

Conductance-based LIF units (:class:`neurosim.LIFConductance`), forward Euler,
on the initial state and connectivity of ``coba_inputs``; the oracle is
Brian2's raster (``benchmarks/brian2_coba_reference.py`` regenerates
``data/brian2_coba_100ms.npz``).
"""

import pathlib

import numpy as np
import pytest

from neurosim.models.spiking import coba_inputs, coba_network

DATA = pathlib.Path(__file__).parent / "data" / "brian2_coba_100ms.npz"


@pytest.mark.parametrize("backend", ["compiled", pytest.param("python", marks=pytest.mark.slow)])
def test_coba_gives_brian2s_spikes_bit_for_bit(backend):
    net = coba_network(*coba_inputs(1234))
    net.run(1000, backend=backend)
    step, unit = np.nonzero(net.recorders["P"].to_dataset().activity.values[:, 0, :])
    ref = np.load(DATA)
    assert unit.size == ref["i"].size > 5000
    np.testing.assert_array_equal(step, ref["step"])
    np.testing.assert_array_equal(unit, ref["i"])
