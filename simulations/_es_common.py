"""What the paper-004 (example selection) scripts share: one learning run analysed, and the figures' ordering.

Not a simulation (the leading underscore keeps it out of ``neurosim list``).

Scale (the paper: 1000 epochs of N = 50,000 examples, n = 500 selected,
K = 100): every script keeps ``n / N = 1 %`` and the per-element quantile
of ByElement (``n / (K N)``: the paper's top 5 of 50,000 per element is our
top 1 of 10,000), with ``N = 10,000`` and ``n = 100`` by default, so an
update averages 5x fewer examples than the paper's; the number of epochs is
the scripts' ``steps``.
"""

from __future__ import annotations

import time

import numpy as np

from neurosim._validation import check_choice, check_float, check_int
from neurosim.simulations._harness import check_runs_succeeded, runs_folder

__all__ = ["DICTIONARIES", "ALGORITHM_ORDER", "ENCODER_TITLES", "ground_truth", "learn", "selected_snr_db",
           "check_learn", "run_sweep"]

DICTIONARIES = ("gabor", "alphanumeric")
#: the legend of Fig. 3a from the worst to the best at 1000 epochs (LARS, Gabor), as the paper orders it
ALGORITHM_ORDER = ("ErrBySum", "Uniform", "SNRBySum", "GradBySum", "SalMap", "SUNBySum", "GradByElement",
                   "SNRByElement", "SUNByElement")
ENCODER_TITLES = {"lars": "LARS", "omp": "OMP", "k_sparse": "k-Sparse"}


def ground_truth(dictionary: str, n_elements: int | None = None) -> np.ndarray:
    """The ground-truth dictionary ``A*`` (P, K) of Fig. 2 (``n_elements`` Gabor patches for Fig. 4's K)."""
    from neurosim.data.dictionaries import alphanumeric_dictionary, gabor_dictionary

    dictionary = check_choice("dictionary", dictionary, set(DICTIONARIES))
    if dictionary == "gabor":
        return gabor_dictionary() if n_elements is None else gabor_dictionary(n_elements=n_elements)
    if n_elements is not None:
        raise ValueError("n_elements applies to the gabor dictionary only (the alphanumeric one has 64 glyphs)")
    return alphanumeric_dictionary()


def selected_snr_db(S_true, noise, A, index) -> float:
    """True SNR of the selected examples (Fig. 5): ``10 log10(sum ||A s||^2 / sum ||eps||^2)`` over ``index``."""
    signal = S_true[index] @ A.T
    return float(10.0 * np.log10(np.sum(signal * signal) / np.sum(noise[index] * noise[index])))


def run_sweep(sweep, out, resume: bool, workers, progress: bool):
    """Run a script's :class:`~neurosim.Sweep` of learning runs, stored in ``out/runs``; refuse any failed run.

    Parameters
    ----------
    sweep : neurosim.Sweep
    out : pathlib.Path
        The script's output folder.
    resume : bool
        Keep the runs already finished in ``out/runs`` (:func:`~neurosim.simulations._harness.runs_folder`).
    workers : int or None
        Processes running the sweep (None: every core); one runs it in this process.
    progress : bool
        Show the sweep's progress.

    Returns
    -------
    xarray.Dataset
        The sweep's results.
    """
    runs = sweep.run(executor="processes" if (workers or 2) > 1 else "serial", workers=workers, progress=progress,
                     out=runs_folder(out, resume))
    check_runs_succeeded(runs, "runs")
    return runs


def check_learn(dictionary, encoder, algorithm, steps=None, n_examples=10_000, n_selected=100, snr_db=6.0, k=5,
                n_components=None):
    """Refuse, before any run, what :func:`learn` would refuse."""
    from neurosim.models.example_selection import ALGORITHMS, ENCODERS

    check_choice("dictionary", dictionary, set(DICTIONARIES))
    check_choice("encoder", encoder, set(ENCODERS))
    check_choice("algorithm", algorithm, set(ALGORITHMS))
    if steps is not None:
        check_int("steps", steps, low=1)
    N = check_int("n_examples", n_examples, low=1)
    check_int("n_selected", n_selected, low=1, high=N)
    check_float("snr_db", snr_db)
    check_int("k", k, low=1)
    if n_components is not None:
        check_int("n_components", n_components, low=1)


def learn(dictionary: str, encoder: str, algorithm: str, seed: int, steps: int, *, n_examples: int = 10_000,
          n_selected: int = 100, snr_db: float = 6.0, k: int = 5, n_components: int | None = None,
          record_every: int = 10):
    """One learning run of Alg. 1, analysed: ``D*`` over epochs and the Fig.-5 measures of the last epoch.

    Returns an :class:`xarray.Dataset` with ``distance(epoch)`` (Eq. 16: the
    initial dictionary at epoch 0, the recorded dictionaries and the last one), ``selected_snr_db`` and
    ``all_snr_db`` (true SNR of the last epoch's selected examples and of
    all its examples), ``estimated_snr_db`` (what the learner saw, the same
    examples), ``histogram_distance`` (histogram-intersection distance
    between the true activations of the selected and of all examples) and
    ``seconds``.
    """
    import xarray as xr

    from neurosim.analysis.dictionaries import dictionary_distance, histogram_intersection_distance
    from neurosim.data.dictionaries import SparseDictionaryStream
    from neurosim.models.example_selection import build_network

    check_learn(dictionary, encoder, algorithm, steps, n_examples, n_selected, snr_db, k, n_components)
    A_star = ground_truth(dictionary, n_components if dictionary == "gabor" else None)
    stream = SparseDictionaryStream(A_star, k=k, snr_db=snr_db, seed=seed)
    circuit = build_network(stream, encoder=encoder, algorithm=algorithm, n_examples=n_examples,
                            n_selected=n_selected, seed=seed, record_every=record_every)
    initial = circuit.distance()  # epoch 0: the initial dictionary of examples
    start = time.perf_counter()
    circuit.run(steps)
    seconds = time.perf_counter() - start

    weights = circuit.network.recorders["D"].to_dataset()
    epochs = [0] + list(weights["epoch"].values)
    dist = [initial] + [dictionary_distance(np.asarray(w).T, A_star) for w in weights["weights"].values]
    if not epochs or epochs[-1] != steps:
        epochs.append(steps)
        dist.append(circuit.distance())
    sel = circuit.network.recorders["selection"].to_dataset()
    index = sel["index"].values[-1].astype(np.int64)
    S_true, noise = stream.truth(steps - 1, n_examples)
    everyone = np.arange(n_examples)
    return xr.Dataset(
        {
            "distance": ("epoch", np.asarray(dist)),
            "selected_snr_db": selected_snr_db(S_true, noise, A_star, index),
            "all_snr_db": selected_snr_db(S_true, noise, A_star, everyone),
            "estimated_snr_db": float(10.0 * np.log10(np.mean(sel["estimated_snr"].values[-1]))),
            "histogram_distance": histogram_intersection_distance(S_true[index], S_true),
            "seconds": seconds,
        },
        coords={"epoch": np.asarray(epochs, dtype=np.int64)},
    )
