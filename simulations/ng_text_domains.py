"""Garg et al. (2017), Sec. C.2 / Fig. 5: sparse word co-occurrence vectors of two topical domains.

The paper's NLP experiment: one sample per vocabulary word, its column of a
very sparse word co-occurrence matrix (12,883 domain-specific words, about
14 nonzeros per column) over text of two domains; the biology words are
streamed first, then the mathematics words; 2750 words per domain for
training and as many for testing; sparse dictionary elements (25 nonzeros)
and sparse codes (38 nonzeros). Its finding (Fig. 5): on the first domain
ODL and NODL are about equal, on the second NODL is clearly better; overall
Pearson accuracies are low ("more challenging than encoding image data").

Substitutes here (all data offline): the co-occurrence vectors of
:func:`neurosim.data.domains.load_text_domains` (WordNet 3.0 noun glosses;
biology = animal and plant glosses, then artifacts instead of mathematics),
raw counts. To keep a run within minutes the features are cut to the
``N_FEATURES`` columns (words) with the largest total count over the
training words of both domains, and words with fewer than
``MIN_NONZEROS`` nonzeros in those columns are dropped (their Pearson
correlation would be undefined or meaningless); ``N_TRAIN`` / ``N_TEST``
words per domain instead of 2750. The paper's ``beta_d = 25`` and
``beta_c = 38`` (``min(38, k0)`` for smaller initial sizes) are kept; batch
200, ``gamma = 0.9``, ``c_k = 50`` and ``lambda_g = 0.03`` are its image
settings (it gives none for text); at most ``MAX_SWEEPS`` block coordinate
sweeps per dictionary update. Outputs (``<out>/ng_text_domains.nc``,
``.png``): test Pearson accuracy per algorithm, initial size and domain,
the final and active dictionary sizes, the size after every mini-batch.

Codes are computed against the learned elements themselves
(``normalize="none"``, :data:`NORMALIZE`), learning and scoring: text is
sparse data, for which the authors' released code codes against ``D``
itself (it centres and unit-normalises the elements only for dense data);
``normalize="center_unit"`` runs the dense-data variant for comparison.
Every run is repeated on ``n_seeds`` seeds ``seed + r`` (word split and
order, initial dictionaries, newborns); the dataset has a ``seed``
dimension and the figure shows the mean and sd over seeds.
"""

from __future__ import annotations

import pathlib

import numpy as np

from neurosim._validation import check_int
from neurosim.data.domains import load_text_domains

NAME = "ng_text_domains"
DESCRIPTION = "Garg et al. 2017 Sec. C.2 / Fig. 5: word co-occurrence vectors, biology then artifacts, ODL vs NODL"
#: mini-batches of 200 words per domain
DEFAULT_STEPS = 5
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1, "initial_sizes": [40], "n_test": 40, "variants": ["ODL", "NODL", "NODL-"]}

BATCH = 200
N_FEATURES = 2000
MIN_NONZEROS = 3
#: test words per domain
N_TEST = 600
INITIAL_SIZES = (40, 100, 200, 400)
BETA_C = 38
SETTINGS = dict(beta_d=25, gamma=0.9, c_k=50, lambda_g=0.03)
MAX_SWEEPS = 10
DOMAINS = ("biology", "artifacts")
#: seeds per run
DEFAULT_SEEDS = 3
#: the atoms codes are computed against, learning and scoring: word vectors are sparse data, and the authors'
#: code codes sparse data against the elements themselves (it normalises them only for dense data)
NORMALIZE = "none"


def text_samples(n_train: int, n_test: int, seed: int = 0):
    """Dense word vectors restricted to the ``N_FEATURES`` most frequent context words.

    Returns ``(train, test, columns)``: ``train`` and ``test`` are lists of
    two arrays (biology, artifacts) of ``n_train`` resp. ``n_test`` words
    with at least ``MIN_NONZEROS`` nonzeros in the kept columns (rows in the
    loader's random order); ``columns`` are the kept vocabulary indices.
    """
    import scipy.sparse as sp

    bio, art = load_text_domains(seed=seed)
    total = np.asarray(sp.vstack([bio.X_train, art.X_train]).sum(axis=0)).ravel()
    columns = np.sort(np.argsort(-total, kind="stable")[:N_FEATURES])
    train, test = [], []
    for d in (bio, art):
        parts = []
        for X, n in ((d.X_train, n_train), (d.X_test, n_test)):
            X = X[:, columns]
            keep = np.flatnonzero(np.diff(X.tocsr().indptr) >= MIN_NONZEROS)
            if keep.size < n:
                raise ValueError(f"{d.name}: only {keep.size} words have >= {MIN_NONZEROS} nonzeros; {n} asked")
            parts.append(X[keep[:n]].toarray())
        train.append(parts[0])
        test.append(parts[1])
    return train, test, columns


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, initial_sizes=None, n_test=None,
        variants=None, n_seeds=None, normalize=NORMALIZE) -> dict[str, pathlib.Path]:
    """Learn the biology words then the artifact words (``steps`` mini-batches each) with each algorithm.

    Parameters
    ----------
    steps : int >= 1, optional
        Mini-batches of 200 words per domain (default :data:`DEFAULT_STEPS`).
    out : path
        Output folder.
    seed : int >= 0
        First seed; seed ``seed + r`` draws the word split and order, the
        initial dictionaries and the newborns of repetition ``r``.
    progress : bool
        Show the engine's progress bars.
    initial_sizes : sequence of int, optional
        Initial dictionary sizes (default :data:`INITIAL_SIZES`).
    n_test : int, optional
        Test words per domain (default :data:`N_TEST`).
    variants : sequence of str, optional
        Algorithms (default: all five of :data:`neurosim.models.neurogenesis.VARIANTS`).
    n_seeds : int >= 1, optional
        Repetitions (default :data:`DEFAULT_SEEDS`).
    normalize : {"none", "unit", "center_unit"}
        The atoms codes are computed against, learning and scoring (default
        :data:`NORMALIZE`: the elements themselves, as the authors' code codes sparse data).

    Returns
    -------
    dict
        The paths written: ``dataset`` (test accuracy per seed, algorithm, initial size and word domain; the
        dictionary sizes; the words' mean nonzeros) and ``figure`` (the layout of the paper's Fig. 5).
    """
    from neurosim.simulations._harness import output_folder
    from neurosim.simulations._ng_common import (check_algorithms, check_run_arguments, fig3_dataset, learn_all,
                                                 write_fig3)

    steps, seed, n_seeds, normalize = check_run_arguments(steps, DEFAULT_STEPS, seed, n_seeds, DEFAULT_SEEDS, normalize)
    n_test = check_int("n_test", N_TEST if n_test is None else n_test, low=1)
    sizes0, variants = check_algorithms(initial_sizes, INITIAL_SIZES, variants)
    out = output_folder(out)

    results, nnz = [], []
    for r in range(n_seeds):
        train_x, test_x, columns = text_samples(steps * BATCH, n_test, seed + r)
        stream = np.concatenate(train_x)
        results.append(learn_all(stream, test_x, variants, sizes0, steps, BATCH, BETA_C, seed=seed + r,
                                 progress=progress, normalize=normalize, max_sweeps=MAX_SWEEPS, **SETTINGS))
        nnz.append([float((x != 0).sum(1).mean()) for x in train_x])
    nnz = np.mean(nnz, axis=0)
    ds = fig3_dataset(results, seed + np.arange(n_seeds), variants, sizes0, DOMAINS, steps,
                      {"steps_per_domain": steps, "batch": BATCH, "n_features": N_FEATURES,
                       "min_nonzeros": MIN_NONZEROS, "mean_nonzeros_biology": nnz[0],
                       "mean_nonzeros_artifacts": nnz[1], "beta_c_max": BETA_C, "max_sweeps": MAX_SWEEPS,
                       "n_test_per_domain": n_test, "seed": seed, "first_seed": seed, "n_seeds": n_seeds,
                       "normalize": normalize, "weighting": "count", **SETTINGS})
    return write_fig3(ds, out, NAME, ("1st domain: biology words (old)", "2nd domain: artifact words (new)"))


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {"ng_text_domains.png": "ng_text_domains.png"}


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`): accuracy per run, and NODL against ODL per seed.

    See :func:`neurosim.simulations._ng_common.fig3_tables`.
    """
    from neurosim.simulations._ng_common import fig3_tables

    return fig3_tables(ds, NAME)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
