"""Dictionary learning with example selection (paper 004: Tsuchida & Cottrell 2015).

One step of the network is one epoch of Alg. 1:

* ``x``: input population; the batch is the epoch's ``N`` examples, drawn
  from a ground-truth dictionary by a
  :class:`~neurosim.data.dictionaries.SparseDictionaryStream` (Eq. 1:
  ``k`` non-negative Exp(rate) activations plus Gaussian noise) -- step 1.
* ``code``: the ``K`` hidden units, dynamics
  :class:`~neurosim.dynamics.sparse.SparseCode` -- the encoder of step 2:
  ``"lars"`` (the non-negative lasso of Eq. 5 with ``lambda' = lambda K /
  k``; solved by feature-sign search, which reaches the same minimiser as
  LARS), ``"omp"`` (non-negative OMP, Eq. 6) or ``"k_sparse"`` (the ``k``
  largest positive entries of ``A^T x``, Eq. 7).
* ``D``: the dictionary, projection ``x -> code`` with the atoms as rows of
  its weights (``A-hat = D.weights.T``), initialised with random examples
  (normalised), as the paper does.
* :class:`~neurosim.example_selector.ExampleSelector` right after the encoder:
  goodness measure and selector function (Eq. 9-15) -- step 3; the chosen
  rows go to the ``selection`` population (``n`` units; variables
  ``index`` and ``estimated_snr``, recorded every step).
* :class:`~neurosim.rules.example_sgd.ExampleSGD`, ``D``'s rule: ``passes``
  times re-encode, equalize (gamma), SGD step (Eq. 8), normalise -- step 4.

The learned dictionary is recorded every ``record_every`` steps, so ``D*``
(Eq. 16) can be followed over the epochs
(:func:`distance_over_time`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import neurosim as ns
from neurosim._validation import check_choice, check_float, check_int
from neurosim.data.dictionaries import SparseDictionaryStream, sparse_examples
from neurosim.models.circuit import Circuit
from neurosim.rules.example_sgd import ExampleSGD
from neurosim.selection_functions import SELECTION_ALGORITHMS

if TYPE_CHECKING:
    import xarray as xr
from neurosim.example_selector import ExampleSelector
from neurosim.synapses import Initializer

__all__ = ["ENCODERS", "ALGORITHMS", "ExamplesInit", "ExampleSelectionCircuit", "build_network", "default_eta",
           "lasso_weight", "distance_over_time"]

#: the paper's three encoders (Sec. 2.1)
ENCODERS = ("lars", "omp", "k_sparse")
#: the paper's selection algorithms (Sec. 3, Fig. 3): name -> (measure, selector)
ALGORITHMS = dict(SELECTION_ALGORITHMS)


def default_eta(start: float = 2.0, half_life: float = 10.0, floor: float = 0.05) -> ns.schedules.InverseTime:
    """The learning rate ``eta_t = start / (1 + t / half_life) + floor``: ``Theta(1/t + c)`` (Eq. 8).

    The paper gives no constants. These were chosen for the Uniform baseline
    (Gabor, LARS, N = 10,000, n = 100): among ``(start, floor)`` = (0.1,
    0.005), (0.5, 0.02) and (2, 0.05) with ``half_life = 10``, the last gave
    Uniform the lowest ``D*`` after 100 epochs (0.0037 against 0.0049 and
    0.0075); every algorithm uses the same schedule.

    Parameters
    ----------
    start : float, optional
        ``eta`` at epoch 0 (without the floor).
    half_life : float > 0, optional
        Epochs after which the decaying part is halved.
    floor : float, optional
        The constant ``c``.

    Returns
    -------
    neurosim.schedules.InverseTime
        The schedule, for :class:`~neurosim.rules.example_sgd.ExampleSGD`'s ``eta``.
    """
    return ns.schedules.InverseTime(start, half_life=half_life, floor=floor)


def lasso_weight(stream: SparseDictionaryStream) -> float:
    """The L1 weight of the LARS encoder in the form ``0.5 ||x - A s||^2 + lam ||s||_1``.

    Eq. 5 is ``(1 / (2 sigma^2)) ||x - A s||^2 + lambda' ||s||_1`` with
    ``lambda' = lambda P / k``; multiplied by ``sigma^2`` it is our form with
    ``lam = sigma^2 lambda'``. The paper's ``P`` here is the length of the
    code (it defines ``C_s`` in ``R^P``) and its reason for the factor -- the
    mean of an activation over all examples, ``k / (K lambda)``, is
    ``1 / lambda'`` -- gives ``lambda' = lambda K / k`` with ``K`` elements.

    Parameters
    ----------
    stream : neurosim.data.dictionaries.SparseDictionaryStream
        The generative model (``noise_var``, ``rate``, ``A``, ``k``).

    Returns
    -------
    float
        ``lam = sigma^2 lambda K / k``.
    """
    return float(stream.noise_var * stream.rate * stream.A.shape[1] / stream.k)


class ExamplesInit(Initializer):
    """Initial atoms: examples drawn from the stream's generative model (a draw of their own), normalised.

    Parameters
    ----------
    stream : neurosim.data.dictionaries.SparseDictionaryStream
        The generative model the examples come from (Eq. 1).
    """

    def __init__(self, stream: SparseDictionaryStream) -> None:
        self.stream = stream

    def __call__(self, rng, shape):
        s = self.stream
        X, _, _ = sparse_examples(s.A, shape[0], k=s.k, snr_db=s.snr_db, rate=s.rate, rng=rng)
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(norms > 0, norms, 1.0)

    def params(self):
        return {"init": "ExamplesInit"}


@dataclass
class ExampleSelectionCircuit(Circuit):
    """The built network and handles to its parts.

    Parameters
    ----------
    network : neurosim.Network
        The circuit (one epoch per step).
    x : neurosim.Population
        Input units (``N`` examples per step).
    code : neurosim.Population
        The code units (the encoder's dynamics).
    dictionary : neurosim.Projection
        ``x -> code``, atoms as rows.
    selector : neurosim.example_selector.ExampleSelector
        Scores and picks ``n`` examples per epoch.
    selection : neurosim.Population
        One unit per selected slot (``index``, ``estimated_snr``).
    rule : neurosim.rules.example_sgd.ExampleSGD
        The dictionary's update from the selected examples.
    stream : neurosim.data.dictionaries.SparseDictionaryStream
        The ground truth and its examples.
    """

    network: ns.Network
    x: ns.Population
    code: ns.Population
    dictionary: ns.Projection
    selector: ExampleSelector
    selection: ns.Population
    rule: ExampleSGD
    stream: SparseDictionaryStream

    @property
    def A(self) -> np.ndarray:
        """The learned dictionary in the paper's layout ``(P, K)`` (columns are elements)."""
        return self.dictionary.weights.T.copy()

    def distance(self) -> float:
        """``D*(A-hat, A*)`` (Eq. 16) of the current dictionary.

        Needs at least as many learned elements as true ones
        (``n_components >= stream.A.shape[1]``; extra learned elements are
        left unmatched, see :func:`~neurosim.analysis.dictionaries.dictionary_distance`).

        Returns
        -------
        float
            ``D* >= 0``; 0 for the true dictionary up to order and sign.

        Raises
        ------
        ValueError
            With fewer learned elements than true ones.
        """
        from neurosim.analysis.dictionaries import dictionary_distance

        K_hat, K = self.dictionary.weights.shape[0], self.stream.A.shape[1]
        if K_hat < K:
            raise ValueError(f"distance() (D*, Eq. 16) needs n_components >= the ground truth's {K} elements, to match "
                             f"each true element to a learned one; this circuit learns {K_hat}")
        return dictionary_distance(self.A, self.stream.A)


def build_network(stream: SparseDictionaryStream, *, encoder: str = "lars", algorithm: str = "SUNByElement",
                  n_examples: int = 10_000, n_selected: int = 100, n_components: int | None = None,
                  gamma: float = 0.2, eta=None, passes: int = 10, lam: float | None = None, seed: int = 0,
                  record_every: int = 1) -> ExampleSelectionCircuit:
    """Build the paper-004 circuit: encode ``N`` examples per step, select ``n``, learn from them.

    Parameters
    ----------
    stream : SparseDictionaryStream
        The examples (and the ground truth ``stream.A`` for ``D*``).
    encoder : {"lars", "omp", "k_sparse"}
    algorithm : str
        One of :data:`ALGORITHMS` (``"Uniform"``, ``"ErrBySum"``,
        ``"SalMap"``, ``"GradBySum"``, ``"SNRBySum"``, ``"SUNBySum"``,
        ``"GradByElement"``, ``"SNRByElement"``, ``"SUNByElement"``).
    n_examples : int >= 1
        ``N``, examples presented per epoch (the batch).
    n_selected : int in [1, n_examples]
        ``n``, examples that reach the dictionary update.
    n_components : int >= 1, optional
        Elements learned; default: as many as the ground truth has. ``D*``
        (:meth:`ExampleSelectionCircuit.distance`) needs at least that many.
    gamma : float in [0, 1]
        Activity equalization (Sec. 2.3; the paper: 0.2).
    eta : float > 0 or Schedule, optional
        Learning rate; default :func:`default_eta`.
    passes : int >= 1
        Inner passes per epoch (the paper: 10).
    lam : float > 0, optional
        L1 weight of the LARS encoder; default :func:`lasso_weight`.
    seed : int >= 0
        Seeds the initial dictionary and the uniform selector.
    record_every : int >= 1
        The dictionary is recorded every ``record_every`` epochs (the
        selection every epoch).

    Returns
    -------
    ExampleSelectionCircuit
        The network and handles to its parts.

    Raises
    ------
    TypeError, ValueError
        For a parameter of the wrong type or outside its range, naming it.
    """
    if not isinstance(stream, SparseDictionaryStream):
        raise TypeError(f"stream must be a SparseDictionaryStream; got {type(stream).__name__}")
    encoder = check_choice("encoder", encoder, set(ENCODERS))
    algorithm = check_choice("algorithm", algorithm, set(ALGORITHMS))
    N = check_int("n_examples", n_examples, low=1)
    n = check_int("n_selected", n_selected, low=1, high=N)
    K = check_int("n_components", n_components if n_components is not None else stream.A.shape[1], low=1)
    gamma = check_float("gamma", gamma, low=0.0, high=1.0)
    passes = check_int("passes", passes, low=1)
    seed = check_int("seed", seed, low=0)
    record_every = check_int("record_every", record_every, low=1)
    if lam is not None:
        lam = check_float("lam", lam, low=0.0, low_open=True)
    if encoder != "lars" and stream.k > min(K, stream.dim) and encoder == "omp":
        raise ValueError(f"the stream's k = {stream.k} must be at most min(n_components, P) = {min(K, stream.dim)} "
                         "for the omp encoder")
    if encoder == "k_sparse" and stream.k > K:
        raise ValueError(f"the stream's k = {stream.k} must be at most n_components = {K} for the k_sparse encoder")

    if encoder == "lars":
        dynamics = ns.SparseCode("feature_sign", lam=lam if lam is not None else lasso_weight(stream), nonneg=True,
                                 warm_start=False)
    elif encoder == "omp":
        dynamics = ns.SparseCode("omp", n_nonzero=stream.k, nonneg=True)
    else:
        dynamics = ns.SparseCode("k_winners", n_nonzero=stream.k, nonneg=True, absolute=False)

    net = ns.Network(seed=seed, batch=N, name=f"example_selection_{encoder}_{algorithm}")
    x = ns.Population("x", stream.dim)
    code = ns.Population("code", K, dynamics=dynamics)
    selection = ns.Population("selection", n)
    net.add(x, code, selection)
    net.connect(stream, x)
    measure, how = ALGORITHMS[algorithm]
    rule = ExampleSGD(eta=eta if eta is not None else default_eta(), gamma=gamma, passes=passes)
    D = ns.Projection("D", x, code, init=ExamplesInit(stream), rule=rule)
    selector = ExampleSelector(D, selection, measure=measure, selector=how, seed=seed)
    net.add(D, selector)
    net.record(selection, ["index", "estimated_snr"])
    net.record(D, "weights", every=record_every, time_dim="epoch")
    return ExampleSelectionCircuit(net, x, code, D, selector, selection, rule, stream)


def distance_over_time(circuit: ExampleSelectionCircuit) -> xr.DataArray:
    """``D*`` (Eq. 16) of every recorded dictionary, as an ``xarray.DataArray`` over the recorded epochs.

    Parameters
    ----------
    circuit : ExampleSelectionCircuit
        A circuit that has run (its ``"D"`` recorder holds the dictionaries).

    Returns
    -------
    xarray.DataArray
        Dimension ``epoch``, named ``distance``.
    """
    import xarray as xr

    from neurosim.analysis.dictionaries import dictionary_distance

    ds = circuit.network.recorders["D"].to_dataset()
    A_star = circuit.stream.A
    values = [dictionary_distance(np.asarray(w).T, A_star) for w in ds["weights"].values]
    return xr.DataArray(np.asarray(values), coords={"epoch": ds["epoch"].values}, dims="epoch", name="distance")
