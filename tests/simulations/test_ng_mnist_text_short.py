"""The paper-000 MNIST, classification and text reproductions, shortened.

Tiny runs cannot settle the paper's comparisons (NODL >= ODL), so these
tests check what holds for any run: the outputs and their dimensions, the
ranges of the accuracies, the dictionary sizes against the event log and
against what each algorithm may do (ODL neither grows nor shrinks, NODL+
only grows, NODL- only shrinks), and the classifier against separable and
label-free data.
"""

import numpy as np
import pytest
import xarray as xr

from neurosim.simulations import ng_classification, ng_mnist_split, ng_text_domains

# end-to-end reproductions and benchmark scripts: the slow tier (docs/testing.md)
pytestmark = pytest.mark.slow

pytest.importorskip("sklearn")


def _check_seeds(ds, n_seeds, normalize):
    """The seed dimension, the recorded normalisation, and seeds that differ."""
    assert ds.attrs["normalize"] == normalize
    assert list(ds.seed.values) == list(range(n_seeds))
    for name in ("accuracy", "final_size", "active_size", "dictionary_size"):
        assert ds[name].dims[0] == "seed" and ds[name].sizes["seed"] == n_seeds
    if n_seeds > 1:
        # other splits, initial elements and newborns: the scores differ between seeds
        assert not np.allclose(ds.accuracy.isel(seed=0).values, ds.accuracy.isel(seed=1).values)


def _check_sizes(ds, k0s):
    """What the five algorithms may do to the size, and the log-rebuilt size against the final weights."""
    sizes = ds.dictionary_size
    # the last size rebuilt from births and deaths equals the number of rows of the final dictionary
    np.testing.assert_array_equal(sizes.isel(step=-1).values, ds.final_size.values)
    assert np.all(ds.active_size.values <= ds.final_size.values)
    assert np.all(ds.active_size.values >= 0)
    for j, k0 in enumerate(k0s):
        if "ODL" in ds.variant:
            assert np.all(sizes.sel(variant="ODL").isel(initial_size=j).values == k0)
        for r in range(sizes.sizes["seed"]):
            if "NODL+" in ds.variant:
                s = np.concatenate([[k0], sizes.sel(variant="NODL+").isel(seed=r, initial_size=j).values])
                assert np.all(np.diff(s) >= 0)  # births only
            if "NODL-" in ds.variant:
                s = np.concatenate([[k0], sizes.sel(variant="NODL-").isel(seed=r, initial_size=j).values])
                assert np.all(np.diff(s) <= 0)  # deaths only


def test_mnist_split_short(tmp_path):
    variants = ("ODL", "NODL", "NODL+", "NODL-")
    paths = ng_mnist_split.run(steps=2, out=tmp_path, progress=False, initial_sizes=(20,), n_test=60,
                               variants=variants, n_seeds=2)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        assert ds.accuracy.shape == (2, 4, 1, 2)
        assert list(ds.domain.values) == ["digits 0-4", "digits 5-9"]
        assert ds.dictionary_size.shape == (2, 4, 1, 4)
        _check_seeds(ds, 2, ng_mnist_split.NORMALIZE)
        acc = ds.accuracy.values
        assert np.all(np.isfinite(acc)) and np.all(acc >= -1) and np.all(acc <= 1)
        # ODL keeps all its elements active on digits: a dictionary that codes them must correlate positively
        assert np.all(ds.accuracy.sel(variant="ODL").values > 0)
        _check_sizes(ds, (20,))


def test_mnist_split_checks_steps(tmp_path):
    with pytest.raises(ValueError, match="steps"):
        ng_mnist_split.run(steps=ng_mnist_split.MAX_STEPS + 1, out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="variants"):
        ng_mnist_split.run(steps=1, out=tmp_path, progress=False, variants=("SGD",))
    with pytest.raises(ValueError, match="normalize"):
        ng_mnist_split.run(steps=1, out=tmp_path, progress=False, normalize="zscore")


def test_classifier_separable_and_chance():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 100)
    X = rng.standard_normal((200, 20))
    X[y == 1, :3] += 4.0  # the classes differ by 4 sd along 3 axes: a linear rule separates them
    assert ng_classification.classify(X, y) > 0.95
    assert ng_classification.classify(X[::2], y[::2], X[1::2], y[1::2]) > 0.95
    # labels independent of the features: 10-fold CV on 200 samples stays near chance (sd ~ 0.035)
    assert 0.3 < ng_classification.classify(X, rng.permutation(y)) < 0.7


def test_classification_short(tmp_path):
    paths = ng_classification.run(steps=1, out=tmp_path, progress=False, n_seeds=1)
    assert set(paths) == {"dataset", "figure"} and all(p.stat().st_size > 0 for p in paths.values())
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        assert ds.attrs["normalize"] == ng_classification.NORMALIZE == "center_unit"
        assert ds.accuracy.shape == (1, 4, 2)
        assert list(ds.features.values) == ["pixels", "ODL", "NODL", "ODL same size"]
        acc = ds.accuracy.values
        assert np.all(acc >= 0) and np.all(acc <= 1)
        assert np.all(ds.active_size.values >= 1)


def test_text_samples_restricted():
    train, test, columns = ng_text_domains.text_samples(50, 20)
    assert columns.shape == (ng_text_domains.N_FEATURES,) and np.all(np.diff(columns) > 0)
    for X, n in ((train[0], 50), (train[1], 50), (test[0], 20), (test[1], 20)):
        assert X.shape == (n, ng_text_domains.N_FEATURES)
        assert np.all((X != 0).sum(1) >= ng_text_domains.MIN_NONZEROS) and np.all(X >= 0)


def test_text_domains_short(tmp_path):
    paths = ng_text_domains.run(steps=1, out=tmp_path, progress=False, initial_sizes=(40,), n_test=40,
                                variants=("ODL", "NODL", "NODL-"), n_seeds=2)
    with xr.open_dataset(paths["dataset"], engine="h5netcdf") as ds:
        assert ds.accuracy.shape == (2, 3, 1, 2) and ds.dictionary_size.shape == (2, 3, 1, 2)
        _check_seeds(ds, 2, ng_text_domains.NORMALIZE)
        assert ds.attrs["normalize"] == "none"  # sparse data: the authors' code codes against D itself
        acc = ds.accuracy.values
        assert np.all(np.isfinite(acc)) and np.all(acc >= -1) and np.all(acc <= 1)
        _check_sizes(ds, (40,))


def test_common_scoring_uses_the_normalised_atoms():
    from neurosim.coding import normalized_atoms
    from neurosim.simulations._ng_common import encode, pearson_accuracy

    rng = np.random.default_rng(3)
    W = rng.random((6, 12)) + 0.5  # positive elements: centring changes them a lot
    W[2] = 0.0  # an inactive element
    X = rng.standard_normal((15, 12))
    for how in ("none", "unit", "center_unit"):
        codes = encode(W, X, 3, how)
        assert codes.shape == (15, 6) and np.all(codes[:, 2] == 0)
        assert np.all((codes != 0).sum(1) <= 3)
        # the reconstruction is codes @ normalised atoms
        R = codes @ normalized_atoms(W, how)
        expected = np.mean([np.corrcoef(x, r)[0, 1] if np.std(r) > 0 else 0.0 for x, r in zip(X, R)])
        assert pearson_accuracy(W, X, 3, normalize=how) == pytest.approx(expected, abs=1e-12)
        assert pearson_accuracy(W, X, 3, codes=codes, normalize=how) == pytest.approx(expected, abs=1e-12)
    # the default is the printed algorithm: codes against W itself
    np.testing.assert_array_equal(encode(W, X, 3), encode(W, X, 3, "none"))
