"""Settings shared by paper 002's online experiments (Section VI, Figs. 4-6).

Both experiments (``sm_fig4_fig5_stationary``, ``sm_fig6_nonstationary``)
drive one network per regularizer with the 64-dimensional Gaussian stream of
Section VI-A (:func:`stationary_input`), ``k = 4`` output neurons,
``eta = 0.1``, and ``alpha`` chosen from the population spectrum so that the
top three modes are soft-thresholded by 2 (:func:`shrinkage_network`).

Deviation from the paper: the Jacobi dynamics (Eq. 17) are iterated to
convergence (``tol = 1e-10``, at most 3000 iterations, started from zero) --
the paper says "iterate until convergence" but gives no stopping rule.
"""

from __future__ import annotations

import numpy as np

from .network import build_network
from .offline import alpha_for_shrinkage

__all__ = [
    "K",
    "ETA",
    "TOL",
    "MAX_ITER",
    "SHRINKAGE",
    "P",
    "REGULARIZER_TITLES",
    "stationary_input",
    "shrinkage_network",
    "experiment_attrs",
]

#: Number of output neurons.
K = 4
#: Jacobi weight of Eq. 17 (paper: 0.1).
ETA = 0.1
#: Jacobi stopping rule (deviation: run to convergence instead of a fixed count).
TOL, MAX_ITER = 1e-10, 3000
#: Soft-threshold applied to the top ``P`` modes (paper: "thresholded by 2", top three).
SHRINKAGE, P = 2.0, 3
#: Panel titles of the regularizers in the figures.
REGULARIZER_TITLES = {"TY": r"scale-dependent $R_{TY}$", "XY": r"input-output $R_{XY}$", "YY": r"squared-output $R_{YY}$"}


def stationary_input(seed: int):
    """The input of Section VI-A.

    Parameters
    ----------
    seed : int
        Seeds the noise eigenvalues, the eigenvectors and the samples.

    Returns
    -------
    spectrum : numpy.ndarray, shape (64,)
        Population eigenvalues, :func:`neurosim.streams.paper002_spectrum`.
    stream : neurosim.streams.GaussianStream
        Zero-mean Gaussian samples with that spectrum and Haar-random
        orthonormal eigenvectors.
    """
    from neurosim.streams import GaussianStream, paper002_spectrum

    spectrum = paper002_spectrum(seed)
    return spectrum, GaussianStream(spectrum, seed=seed, eigenvectors="random")


def shrinkage_network(stream, spectrum, regularizer, *, beta=1.0, seed=0, k=K, eta=ETA, tol=TOL, max_iter=MAX_ITER):
    """Network whose ``alpha`` soft-thresholds the top :data:`P` modes of ``spectrum`` by :data:`SHRINKAGE`.

    Parameters
    ----------
    stream : neurosim.Stream
        Input of the network.
    spectrum : numpy.ndarray
        Population eigenvalues ``alpha`` is chosen for
        (:func:`~neurosim.models.similarity_matching.alpha_for_shrinkage`).
    regularizer : {"TY", "XY", "YY"}
    beta : float
        Forgetting factor (1: none).
    seed : int
        Seed of the initial weights.
    k, eta, tol, max_iter
        Outputs and Jacobi dynamics, as for
        :func:`~neurosim.models.similarity_matching.build_network`.

    Returns
    -------
    SimilarityMatchingCircuit
        The chosen coefficient is its ``alpha``.
    """
    alpha = alpha_for_shrinkage(spectrum, regularizer, SHRINKAGE, P)
    return build_network(stream, k, regularizer, alpha, beta=beta, eta=eta, tol=tol, max_iter=max_iter, seed=seed)


def experiment_attrs(name: str, steps: int, seed: int, n: int) -> dict:
    """Dataset attributes that record a run's settings shared by both experiments.

    Parameters
    ----------
    name : str
        The simulation.
    steps, seed : int
        Its steps and root seed.
    n : int
        Input dimension.

    Returns
    -------
    dict
    """
    return {
        "simulation": name,
        "paper": "Chen, Pehlevan, Chklovskii - Self-calibrating neural networks for dimensionality reduction (paper 002)",
        "steps": steps, "seed": seed, "n": n, "k": K, "eta": ETA, "jacobi_tol": TOL,
        # zero start, mu_init and the initial weights' spread are build_network's defaults.
        "jacobi_max_iter": MAX_ITER, "jacobi_zero_start": 1, "mu_init": 1.0,
        "init_std": f"1/sqrt(n) = {1 / np.sqrt(n):.6g}", "shrinkage": SHRINKAGE, "p": P,
    }
