"""ReconstructionAccuracy (paper 000, Sec. 2, ``p_c``) on a hand-made batch, against NumPy and SciPy correlations.

``value[0]`` is the batch mean of the correlation between each sample ``x_b``
and its reconstruction ``a_b W``, samples whose correlation is undefined
(a constant sample or reconstruction) counting as 0; ``value[1]`` counts
those samples. Both the NumPy reference (``step_numpy``) and the compiled
kernel must give it.
"""

import numpy as np
import pytest
from scipy.stats import spearmanr

import neurosim as ns
from neurosim.kernels.dictionary import reconstruction_accuracy
from neurosim.reconstruction_accuracy import ReconstructionAccuracy
from neurosim.streams import GaussianStream

# rows: a sample whose range is exactly 1 (an ordinary sample: its correlation is defined), a generic
# sample, a constant sample (undefined), and a sample whose code is zero (constant reconstruction: undefined)
X = np.array([[0.0, 1.0, 0.0, 1.0, 0.5],
              [0.3, -1.2, 2.0, 0.7, -0.4],
              [2.0, 2.0, 2.0, 2.0, 2.0],
              [1.0, -1.0, 0.5, 0.0, 3.0]])
CODES = np.array([[1.0, 0.0], [0.4, -0.8], [0.5, 0.5], [0.0, 0.0]])
WEIGHTS = np.array([[0.2, 1.0, 0.0, 0.9, 0.6],
                    [1.0, 0.5, -0.5, 0.25, 0.0]])


def _network(metric):
    net = ns.Network(seed=0, batch=X.shape[0])
    x, y = ns.Population("x", X.shape[1]), ns.Population("y", CODES.shape[1], dynamics=ns.Linear())
    net.add(x, y)
    net.connect(GaussianStream(np.ones(X.shape[1]), seed=0), x)
    W = ns.Projection("W", x, y)
    net.add(W)
    m = ReconstructionAccuracy(W, metric=metric)
    net.add(m)
    x.activity[...] = X
    y.activity[...] = CODES
    W.weights[...] = WEIGHTS
    return net, m


def _expected(metric):
    recon = CODES @ WEIGHTS
    rs = []
    for xb, rb in zip(X, recon):
        if np.all(xb == xb[0]) or np.all(rb == rb[0]):
            rs.append(np.nan)
        elif metric == "pearson":
            rs.append(np.corrcoef(xb, rb)[0, 1])
        else:
            rs.append(spearmanr(xb, rb).statistic)
    rs = np.array(rs)
    return np.nansum(rs) / len(rs), np.count_nonzero(np.isnan(rs)), rs


@pytest.mark.parametrize("metric", ["pearson", "spearman"])
def test_numpy_reference_and_kernel_give_the_batch_mean_correlation_undefined_as_zero(metric):
    """value = (mean correlation with undefined samples as 0, number undefined), by NumPy/SciPy, both paths."""
    mean, n_undefined, rs = _expected(metric)
    assert n_undefined == 2 and np.isfinite(rs[0]) and abs(rs[0]) > 0.1  # the range-1 sample counts
    net, m = _network(metric)
    m.step_numpy()
    np.testing.assert_allclose(m.value, [mean, n_undefined], rtol=1e-12, atol=1e-15)
    out = np.full(2, np.nan)
    reconstruction_accuracy(out, X, CODES, WEIGHTS, metric == "spearman", np.zeros(X.shape[1]))
    np.testing.assert_allclose(out, [mean, n_undefined], rtol=1e-12, atol=1e-15)


def test_the_measure_is_named_after_its_code_population_and_dictionary_in_the_schedule():
    """The schedule row of the measure says which population's code and which projection it measures."""
    net, m = _network("pearson")
    assert m.label == "ReconstructionAccuracy of 'y' through 'W'"
    rows = net.schedule().rows()
    assert ("dynamics", m.order, m.label) in rows
    assert "ReconstructionAccuracy of 'y' through 'W'" in str(net.schedule())


def test_the_kernels_ranks_are_scipys_average_ranks():
    # Spearman's correlation only needs ranks up to an affine map, so the measure above cannot tell
    # r from 2 r - 1; the helper promises scipy.stats.rankdata's average ranks themselves
    from scipy.stats import rankdata

    from neurosim.kernels.dictionary import _ranks

    rng = np.random.default_rng(5)
    for v in (np.array([0.0, 1.0, 0.0, 1.0, 0.5]), np.array([3.0]), np.array([2.0, 2.0, 2.0]),
              rng.integers(0, 4, 40).astype(float), rng.standard_normal(25)):
        np.testing.assert_array_equal(_ranks(v), rankdata(v))
