"""The Song et al. (2000) circuit (issue 42): its unit, inputs and synapses against a hand-written NumPy loop."""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models.stdp_song import DT, G_MAX, NEURON, song_network, song_run

# slow tier: the Song circuit's checks compile networks of their own (the quick tier's 2 minutes)
pytestmark = pytest.mark.slow

STEPS = 3000  # 0.3 s


def _by_hand(spikes, w):
    """The unit by forward Euler in the kernel's expression trees, written out: dynamics, threshold, then delivery."""
    k_m, k_e = DT / NEURON["tau_m"], -DT / NEURON["tau_e"]
    v, ge, out = NEURON["v_rest"], 0.0, []
    for t in range(spikes.shape[0]):
        v_new = k_m * ((NEURON["v_rest"] + ((ge * (NEURON["e_e"] - v)) + (0.0 * (-0.08 - v)))) - v) + v
        ge = k_e * ge + ge
        if v_new > NEURON["v_threshold"]:
            out.append(t)
            v_new = NEURON["v_reset"]
        v = v_new
        for j in np.flatnonzero(spikes[t]):  # Brian2's order: inputs ascending, one addition at a time
            ge += w[j]
    return np.array(out)


@pytest.mark.parametrize("rate", [15.0, 30.0])
def test_fixed_weights_fire_as_the_equations_say(rate):
    net = song_network(rate, "none", seed=3, n_inputs=200, g_max=0.05)
    w = net.projections["S"].weights.reshape(-1).copy()
    spikes = ns.PoissonStream(rate, dt=DT, dim=200, seed=3).block(0, STEPS)
    net.run(STEPS)
    ours = np.flatnonzero(net.recorders["neuron"].to_dataset().activity.values.reshape(-1))
    expected = _by_hand(spikes, w)
    assert expected.size > 10  # the unit fires: the comparison has spikes to compare
    np.testing.assert_array_equal(ours, expected)


def test_every_rule_sees_the_same_inputs_and_initial_weights():
    w0 = {rule: song_network(20.0, rule, seed=5).projections["S"].weights.copy() for rule in ("none", "additive",
                                                                                                "triplet")}
    np.testing.assert_array_equal(w0["none"], w0["additive"])
    np.testing.assert_array_equal(w0["none"], w0["triplet"])
    assert 0.0 <= w0["none"].min() and w0["none"].max() < G_MAX


def test_song_run_reports_the_recorded_spikes_and_the_weights_in_units_of_g_max():
    ds = song_run(seconds=0.5, rate_hz=20.0, rule="additive", seed=1, bin_seconds=0.1)
    net = song_network(20.0, "additive", seed=1)
    net.run(5000)
    spikes = net.recorders["neuron"].to_dataset().activity.values.reshape(-1)
    np.testing.assert_allclose(ds.output_rate_hz.values * 0.1, spikes.reshape(5, 1000).sum(1), rtol=1e-12)
    np.testing.assert_array_equal(ds.weights.values, net.projections["S"].weights.reshape(-1) / G_MAX)
    assert ds.weights.min() >= 0.0 and ds.weights.max() <= 1.0


def test_an_unknown_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="rule"):
        song_network(rule="hebbian")
