"""Garg et al. (2017), Sec. 3 / C.1 (Fig. 4c, 11): classification on the codes, NODL vs ODL.

The paper learns a dictionary on the urban domain and then on the natural
domain (Flowers and Animals permuted), encodes the *test* images of the
natural domain with it, and classifies animals versus flowers with logistic
regression on the codes, by 10-fold cross-validation (Fig. 4c; the paper
also ranks features by p-value and reports the error against the number of
top features; here all features are used, the right end of its x-axis). Its
finding: NODL's error is at most ODL's, the difference "negligible for the
full feature set"; sparse dictionaries give lower errors (0.22-0.36) than
dense ones (0.40-0.52).

Here the domains are those of :func:`neurosim.data.domains.load_image_domains`
(32x32 grayscale crops of photographs: urban, then natural = animals and
plants; train and test from different photographs). Per seed, ODL and NODL
start from the same random dictionary, see the urban training crops, then
the natural training crops (batch 200), and encode with ``beta_c`` nonzeros
(Alg. 2, the circuit's encoder). Two protocols:

``cv``
    the paper's: 10-fold stratified cross-validation on the codes of the
    natural test crops (a cat versus a flower photograph);
``transfer``
    fit on the codes of the natural training crops (astronaut versus
    grass), score on the test crops: a harder, cross-photograph test.

Raw pixels are scored the same way as a reference, and so are the codes of
a size-matched control: ODL started with as many elements as NODL ended
with, so that both code vectors have the same length. Settings: the paper's
batch 200, ``gamma = 0.9``, ``c_k = 50``, ``lambda_g = 0.03``; sparse
elements with ``beta_d = 20`` nonzeros and codes with ``beta_c = 50``
(``beta_d * beta_c`` about the 1024 pixels, the rule of App. E.2 behind the
paper's 5 x 200, which is too slow here), at most ``MAX_SWEEPS`` block
coordinate sweeps per update. Output: ``<out>/ng_classification.nc``
(accuracy per seed, algorithm and protocol; dictionary sizes) and ``.png``.

Codes are computed against centred, unit-norm elements while learning and
when encoding the features (``normalize="center_unit"``,
:data:`NORMALIZE`): images are dense data, for which the authors' released
code codes against ``normalize(D)``; ``normalize="none"`` is Alg. 1 as
printed. Each of the ``n_seeds`` repetitions uses seed ``seed + s``.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from neurosim.data.domains import load_image_domains  # noqa: E402
from neurosim.simulations._harness import save_figure  # noqa: E402

NAME = "ng_classification"
DESCRIPTION = "Garg et al. 2017 Sec. C.1 / Fig. 4c: logistic regression on the codes (animals vs plants), NODL vs ODL"
#: samples per class and split / 200: urban gives DEFAULT_STEPS mini-batches, natural twice as many
DEFAULT_STEPS = 3
#: the shortened arguments of ``neurosim reproduce --quick`` (what CI runs): every stage of the
#: simulation, on small data, in seconds
QUICK = {"steps": 1}

BATCH = 200
K0 = 50
SETTINGS = dict(beta_c=50, beta_d=20, gamma=0.9, c_k=50, lambda_g=0.03)
MAX_SWEEPS = 10
SEEDS = (0, 1, 2)
ALGORITHMS = ("ODL", "NODL")
#: ODL started with as many elements as NODL ended with (same seed): the codes have as many features
SAME_SIZE = "ODL same size"
FEATURES = ("pixels", *ALGORITHMS, SAME_SIZE)
PROTOCOLS = ("cv", "transfer")
N_FOLDS = 10
#: the atoms codes are computed against, learning and encoding: images are dense data, and the authors' code
#: codes dense data against centred unit-norm elements (``normalize(D)`` in their sparse_coding.m)
NORMALIZE = "center_unit"


def classify(F_train, y_train, F_test=None, y_test=None, n_folds: int = N_FOLDS, seed: int = 0) -> float:
    """Accuracy of an L2 logistic regression on standardised features (scikit-learn).

    With ``F_test``: fit on the training features, return the accuracy on the
    test features. Without: the mean accuracy of ``n_folds``-fold stratified
    cross-validation on ``F_train`` (the paper's protocol, Fig. 4c).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    if F_test is None:
        folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        return float(np.mean(cross_val_score(model, F_train, y_train, cv=folds, scoring="accuracy")))
    return float(model.fit(F_train, y_train).score(F_test, y_test))


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, *, n_seeds=None,
        normalize=NORMALIZE) -> dict[str, pathlib.Path]:
    """Train ODL and NODL on urban then natural crops, classify animals vs plants on the codes.

    Parameters
    ----------
    steps : int >= 1, optional
        Urban mini-batches (natural: twice as many); ``200 * steps`` crops
        per class and split (default :data:`DEFAULT_STEPS`).
    out : path
        Output folder.
    seed : int >= 0
        First seed; seed ``seed + s`` draws the crops, the initial
        dictionary and the newborns of repetition ``s``.
    progress : bool
        Show the engine's progress bars.
    n_seeds : int >= 1, optional
        Repetitions (default ``len(SEEDS)``).
    normalize : {"none", "unit", "center_unit"}
        The atoms codes are computed against, learning and encoding (default
        :data:`NORMALIZE`; images are dense data, which the authors' code codes against centred unit-norm atoms).

    Returns
    -------
    dict
        The paths written: ``dataset`` (accuracy per seed, features and protocol; the dictionaries' active
        sizes) and ``figure`` (accuracy per features, both protocols).
    """
    from neurosim.simulations._harness import output_folder
    from neurosim.simulations._ng_common import check_run_arguments, encode, train

    steps, seed, n_seeds, normalize = check_run_arguments(steps, DEFAULT_STEPS, seed, n_seeds, len(SEEDS), normalize)
    out = output_folder(out)
    n_per_class = steps * BATCH
    beta_c = SETTINGS["beta_c"]

    acc = np.zeros((n_seeds, len(FEATURES), len(PROTOCOLS)))
    size = np.zeros((n_seeds, len(ALGORITHMS) + 1), dtype=np.int64)
    for s in range(n_seeds):
        urban, natural = load_image_domains(n_per_class=n_per_class, size=32, seed=seed + s)
        stream = np.concatenate([urban.X_train, natural.X_train])
        feats = {"pixels": (natural.X_train, natural.X_test)}
        for a, alg in enumerate(ALGORITHMS):
            W, _ = train(stream, BATCH, K0, alg, seed=seed + s, progress=progress, max_sweeps=MAX_SWEEPS,
                         normalize=normalize, **SETTINGS)
            size[s, a] = int(np.any(W != 0, axis=1).sum())
            feats[alg] = tuple(encode(W, X, beta_c, normalize) for X in (natural.X_train, natural.X_test))
        # the encoder needs beta_c elements, so the control never starts below that
        k_same = max(int(size[s, 1]), beta_c)
        W, _ = train(stream, BATCH, k_same, "ODL", seed=seed + s, progress=progress, max_sweeps=MAX_SWEEPS,
                     normalize=normalize, **SETTINGS)
        size[s, 2] = int(np.any(W != 0, axis=1).sum())
        feats[SAME_SIZE] = tuple(encode(W, X, beta_c, normalize) for X in (natural.X_train, natural.X_test))
        for f, name in enumerate(FEATURES):
            F_tr, F_te = feats[name]
            acc[s, f, 0] = classify(F_te, natural.y_test, seed=seed + s)
            acc[s, f, 1] = classify(F_tr, natural.y_train, F_te, natural.y_test)

    ds = xr.Dataset(
        {"accuracy": (("seed", "features", "protocol"), acc),
         "active_size": (("seed", "algorithm"), size)},
        coords={"seed": seed + np.arange(n_seeds), "features": list(FEATURES), "protocol": list(PROTOCOLS),
                "algorithm": [*ALGORITHMS, SAME_SIZE]},
        attrs={"steps_urban": steps, "steps_natural": 2 * steps, "batch": BATCH, "initial_size": K0,
               "max_sweeps": MAX_SWEEPS, "n_folds": N_FOLDS, "classes": "animals (0) vs plants (1)",
               "chance": 0.5, "first_seed": seed, "n_seeds": n_seeds, "normalize": normalize, **SETTINGS},
    )
    paths = {"dataset": out / f"{NAME}.nc", "figure": out / f"{NAME}.png"}
    ds.to_netcdf(paths["dataset"], engine="h5netcdf")

    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(FEATURES))
    for p, proto in enumerate(PROTOCOLS):
        mean, sd = acc[:, :, p].mean(0), acc[:, :, p].std(0, ddof=1) if n_seeds > 1 else np.zeros(len(FEATURES))
        ax.bar(x + (p - 0.5) * 0.4, mean, 0.4, yerr=sd, capsize=4,
               label={"cv": "10-fold CV on test codes (paper)", "transfer": "train photos -> test photos"}[proto])
    ax.axhline(0.5, color="k", lw=0.5, ls="--")
    ax.set_xticks(x, [f.replace(" same", "\nsame") for f in FEATURES])
    ax.set_xlabel("features the classifier is given: pixels, or codes over each dictionary")
    ax.set_ylabel("accuracy, animals vs plants")
    ax.set_ylim(0, 1.12)  # room above the bars (accuracies <= 1) for the legend
    ax.set_title(f"logistic regression, mean ± sd over {n_seeds} seeds; codes against {normalize!r} atoms",
                 fontsize=9)
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    fig.tight_layout()
    save_figure(fig, paths["figure"])
    return paths


#: the figure of the run that the report shows (``neurosim tables`` copies it to docs/reports/figures)
REPORT_FIGURES = {f"{NAME}.png": f"{NAME}.png"}


def tables(ds) -> list:
    """The report's tables (:mod:`neurosim.report_tables`) from the dataset :func:`run` writes.

    ``accuracy``: per feature set, the code length (per seed) and the
    accuracy of each protocol, mean ± sd over seeds. ``claims``: NODL's
    accuracy minus ODL's and minus the same-size ODL's, per protocol, paired
    by seed, with the seeds on which NODL's is at least as high (the
    paper's "NODL's error at most ODL's"), and the seeds on which each
    feature set is below chance in the transfer protocol.
    """
    from neurosim.report_tables import Table, cell, mean_sd, paired, per_seed

    acc = ds.accuracy.transpose("features", "protocol", "seed")
    protocols = [str(p) for p in ds.protocol.values]
    rows = []
    for f in ds.features.values:
        f = str(f)
        length = "every pixel" if f == "pixels" else per_seed(ds.active_size.sel(algorithm=f).values, "d")
        rows.append([f, length] + [mean_sd(acc.sel(features=f, protocol=p).values) for p in protocols])
    accuracy = Table(f"{NAME}/accuracy", ["features", "code length (per seed)"]
                     + [f"{p} accuracy, mean ± sd" for p in protocols], rows,
                     align=["l", "r"] + ["r"] * len(protocols))
    chance = float(ds.attrs.get("chance", 0.5))
    rows = []
    for other in ("ODL", SAME_SIZE):
        rows.append([f"NODL ≥ {other}"] + [paired(acc.sel(features="NODL", protocol=p).values
                                                  - acc.sel(features=other, protocol=p).values) for p in protocols])
    for f in ds.features.values:
        below = [cell("{k}/{n}", k=int((acc.sel(features=f, protocol=p).values < chance).sum()), n=ds.sizes["seed"])
                 for p in protocols]
        rows.append([f"{f} below chance ({chance:g}), seeds"] + below)
    claims = Table(f"{NAME}/claims", ["claim"] + [f"{p}: NODL − other, mean ± sd (seeds ≥ 0)" for p in protocols],
                   rows, align=["l"] + ["r"] * len(protocols))
    return [accuracy, claims]


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
