"""Neurogenesis-inspired online dictionary learning (paper 000: Garg, Rish, Cecchi & Lozano 2017).

One circuit runs the paper's five algorithms, chosen by ``variant``:

=========  ===========================================  =========================================
variant    birth (Alg. 1 steps 5-9)                     death (step 16, group sparsity)
=========  ===========================================  =========================================
``ODL``    no                                           no (``lambda_g = 0``; Mairal et al. 2009)
``ODL*``   dead (all-zero) elements replaced by fresh   no
           random ones
``NODL``   ``k_n = (1 - p_c) c_k`` new random elements  elements zeroed by the shrink die
           when ``p_c <= gamma``
``NODL+``  as NODL                                      no (``lambda_g = 0``)
``NODL-``  no (``c_k = 0``)                             as NODL
=========  ===========================================  =========================================

Entities (all public neurosim components):

* ``x``: input population, one minibatch per step (``Network(batch=...)``).
* ``code``: the hidden units, dynamics ``SparseCode("feature_sign",
  n_nonzero=beta_c, normalize=normalize)`` -- the lasso with a per-sample
  lambda found by binary search to give ``beta_c`` nonzeros (Alg. 1 step 4,
  Alg. 2), against the elements as learned (``"none"``, as printed) or
  normalised as the authors' code does (``"center_unit"``).
* ``D``: the dictionary, projection ``x -> code``, atoms as rows of its
  weights; newborn atoms come from its initializer
  (:class:`RandomElements`: random unit-norm, ``beta_d`` nonzeros when
  elements are sparse).
* :class:`~neurosim.reconstruction_accuracy.ReconstructionAccuracy` after the code's
  dynamics: ``p_c``, the batch-mean Pearson correlation of ``x`` and
  ``D alpha`` (Spearman optional).
* a trigger evaluated after the dynamics phase (``when="dynamics"``) whose
  compiled condition is ``p_c <= gamma``: its ``Birth`` adds ``k_n``
  elements, and the engine re-runs the dynamics phase, so the batch is
  re-encoded with the extended dictionary in the same step (step 9).
* :class:`~neurosim.rules.dictionary.DictionaryMemory`: ``A`` (a pair
  variable of ``code``) and ``B`` (an array of ``D``), padded by births
  (step 8) and cut by deaths like the weights.
* :class:`~neurosim.rules.dictionary.BlockCoordinateDescent`, ``D``'s
  rule: steps 13-19 with the optional sparsifying prox and the
  group-sparsity shrink.
* a trigger in the events phase whose compiled condition is "some element
  is all zeros": its ``Death`` removes the elements the shrink killed (NODL,
  NODL-), or replaces them by fresh random ones (ODL*). The encoder needs
  ``beta_c`` elements, so deaths stop there: zeroed elements beyond that
  stay in the dictionary, inactive (an all-zero atom codes nothing), the
  oldest dying first when room is made.

Every birth and death is in ``network.event_log``, so each unit's age is
known from any recording.

Where the printed Alg. 1 and the authors' released MATLAB code differ, an
option names both (defaults: the printed algorithm, or ours where the paper
is silent):

==================  ==========================  ===================================
option              printed / ours (default)    authors' code
==================  ==========================  ===================================
``normalize``       ``"none"``: codes against   ``"center_unit"`` for dense data
                    ``D``                       (``sparse_coding.m``)
``birth_rounding``  ``"nearest"``               ``"floor"`` (``DL.m``)
``unused``          ``"keep"`` (``a_jj = 0``:   ``"zero"`` (``updateD.m`` divides
                    prox steps only)            by ``1e-100``)
``newborn``         ``"dense"`` (Gaussian)      ``"uniform"`` (``normalize(rand)``)
``tol``             ``1e-6`` (relative)         a sweep cap (``None``: fixed count)
==================  ==========================  ===================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import neurosim as ns
from neurosim._validation import check_array, check_choice, check_float, check_int
from neurosim.codegen import ArrayRef, KernelCall
from neurosim.coding.normalization import NORMALIZATIONS, normalized_atoms
from neurosim.kernels.dictionary import any_zero_row, first_at_most
from neurosim.models.circuit import Circuit
from neurosim.reconstruction_accuracy import ReconstructionAccuracy
from neurosim.rules.dictionary import BlockCoordinateDescent, DictionaryMemory
from neurosim.synapses import Initializer

__all__ = ["VARIANTS", "NEWBORN", "BIRTH_ROUNDING", "RandomElements", "NeurogenesisCircuit", "build_network",
           "births_for", "elements_from_data"]

#: variant -> (conditional birth, death by group sparsity, dead elements re-initialised)
VARIANTS = {
    "ODL": (False, False, False),
    "ODL*": (False, False, True),
    "NODL": (True, True, False),
    "NODL+": (True, False, False),
    "NODL-": (False, True, False),
}


#: newborn (and, without ``init``, initial) elements: "dense" and "sparse" random unit-norm (Gaussian),
#: "uniform" the authors' centred uniform ``normalize(rand(n, k))``, "data" the worst-reconstructed samples
NEWBORN = ("dense", "sparse", "uniform", "data")


class RandomElements(Initializer):
    """Random dictionary elements, unit-norm rows; with ``nonzeros``, sparse.

    ``distribution="normal"`` draws ``rng.standard_normal(shape)`` (the
    paper: "randomly initialized with non-zero support in all the
    dimensions"); ``"centered_uniform"`` draws ``rng.random(shape)`` and
    centres each row -- the authors' ``normalize(rand(n, k))``. For sparse
    elements keeps the ``nonzeros`` largest magnitudes of each row (the rest
    set to 0), then scales each row to unit norm.

    Parameters
    ----------
    nonzeros : int >= 0, optional
        Nonzeros per element; 0 for dense elements.
    distribution : {"normal", "centered_uniform"}, optional
        How the entries are drawn.
    """

    def __init__(self, nonzeros: int = 0, distribution: str = "normal") -> None:
        self.nonzeros = check_int("nonzeros", nonzeros, low=0)
        self.distribution = check_choice("distribution", distribution, {"normal", "centered_uniform"})

    def __call__(self, rng, shape):
        if self.distribution == "normal":
            w = rng.standard_normal(shape)
        else:
            w = rng.random(shape)
            w -= w.mean(axis=1, keepdims=True)
        if self.nonzeros and self.nonzeros < shape[1]:
            drop = np.argsort(-np.abs(w), axis=1, kind="stable")[:, self.nonzeros:]
            np.put_along_axis(w, drop, 0.0, axis=1)
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        return w / np.where(norms > 0, norms, 1.0)

    def params(self):
        return {"init": "RandomElements", "init_nonzeros": self.nonzeros, "init_distribution": self.distribution}


class _InitialThenNewborn(Initializer):
    """The initial dictionary from ``init`` (an array or a callable ``init(rng, shape)``), births from ``newborn``."""

    def __init__(self, init, newborn: Initializer):
        self.init, self.newborn, self._drawn = init, newborn, False

    def __call__(self, rng, shape):
        if self._drawn:
            return self.newborn(rng, shape)
        self._drawn = True
        w = self.init(rng, shape) if callable(self.init) else self.init
        # a copy: the weights learn in place, and the caller's array is theirs
        return check_array("init", w, shape=shape).copy()

    def params(self):
        return {**self.newborn.params(), "init_initial": "callable" if callable(self.init) else "array"}


def elements_from_data(X: np.ndarray, codes: np.ndarray, W: np.ndarray, k: int, nonzeros: int = 0,
                       normalize: str = "none") -> np.ndarray:
    """``k`` new elements taken from the batch: its worst-reconstructed samples (lowest Pearson), unit-norm rows.

    The reconstruction is ``codes @ normalized_atoms(W, normalize)``, the
    atoms the codes were computed against. With fewer samples than ``k`` the
    samples repeat; a constant sample gives a constant element. With
    ``nonzeros``, each keeps its largest entries.

    Parameters
    ----------
    X : numpy.ndarray, shape (batch, n_features)
        The mini-batch.
    codes : numpy.ndarray, shape (batch, n_atoms)
        Its codes.
    W : numpy.ndarray, shape (n_atoms, n_features)
        The dictionary the codes were computed with.
    k : int >= 1
        Elements wanted.
    nonzeros : int >= 0, optional
        Nonzeros kept per element (0: dense).
    normalize : {"none", "unit", "center_unit"}, optional
        How the atoms were normalised for coding.

    Returns
    -------
    numpy.ndarray, shape (k, n_features)
        Unit-norm elements.
    """
    recon = codes @ normalized_atoms(W, normalize)
    xc = X - X.mean(axis=1, keepdims=True)
    rc = recon - recon.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (rc * rc).sum(axis=1))
    r = np.where(den > 0, (xc * rc).sum(axis=1) / np.where(den > 0, den, 1.0), 0.0)
    order = np.argsort(r, kind="stable")
    rows = X[order[np.arange(k) % len(order)]].copy()
    if nonzeros and nonzeros < rows.shape[1]:
        drop = np.argsort(-np.abs(rows), axis=1, kind="stable")[:, nonzeros:]
        np.put_along_axis(rows, drop, 0.0, axis=1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.where(norms > 0, rows / np.where(norms > 0, norms, 1.0), 1.0 / np.sqrt(rows.shape[1]))


#: how ``k_n = (1 - p_c) c_k`` becomes an integer (Alg. 1 step 6 gives no rule)
BIRTH_ROUNDING = ("nearest", "floor")


def births_for(accuracy: float, c_k: int, rounding: str = "nearest") -> int:
    """``k_n = (1 - p_c) c_k`` as an integer: Alg. 1 step 6 (the paper gives no rounding).

    ``rounding="nearest"`` rounds half to even (``np.rint``); ``"floor"``
    rounds down, as the authors' code does (``DL.m``:
    ``floor(birth_rate * new_elements)`` with ``birth_rate = 1 - p_c``).

    Parameters
    ----------
    accuracy : float
        The batch's mean correlation ``p_c``.
    c_k : int >= 0
        Most births per mini-batch.
    rounding : {"nearest", "floor"}, optional
        How ``(1 - p_c) c_k`` is rounded.

    Returns
    -------
    int
        ``k_n``.

    Examples
    --------
    >>> from neurosim.models.neurogenesis import births_for
    >>> births_for(0.75, 10), births_for(0.75, 10, rounding="floor")
    (2, 2)
    >>> births_for(0.65, 10), births_for(0.65, 10, rounding="floor")
    (4, 3)
    """
    value = (1.0 - accuracy) * c_k
    return int(np.floor(value)) if rounding == "floor" else int(np.rint(value))


@dataclass
class NeurogenesisCircuit(Circuit):
    """The built network and handles to its parts.

    Parameters
    ----------
    network : neurosim.Network
        The circuit.
    x : neurosim.Population
        Input units (one mini-batch per step).
    code : neurosim.Population
        The code units (one per atom; born and killed).
    dictionary : neurosim.Projection
        ``x -> code``, atoms as rows.
    accuracy : neurosim.reconstruction_accuracy.ReconstructionAccuracy or None
        The measure the birth trigger reads (``None`` without births).
    variant : {"NODL", "NODL+", "NODL-", "ODL", "ODL*"}
        The paper's algorithm.
    """

    network: ns.Network
    x: ns.Population
    code: ns.Population
    dictionary: ns.Projection
    accuracy: ReconstructionAccuracy | None
    variant: str

    @property
    def D(self) -> np.ndarray:
        """The dictionary in the paper's layout, ``(n_features, n_atoms)`` (columns are elements)."""
        return self.dictionary.weights.T


def build_network(stream: ns.Stream, n_components: int, variant: str = "NODL", *, batch: int = 200,
                  beta_c: int = 5, beta_d: int = 0, gamma: float = 0.9, c_k: int = 50, lambda_g: float = 0.03,
                  metric: str = "pearson", max_size: int | None = None, tol: float | None = 1e-6, max_sweeps: int = 100,
                  newborn: str = "dense", seed: int = 0, record_every: int = 1,
                  lam: float | None = None, normalize: str = "none", birth_rounding: str = "nearest",
                  unused: str = "keep", init=None, decay=1.0) -> NeurogenesisCircuit:
    """Build the paper-000 circuit for one of its five algorithms.

    Parameters
    ----------
    stream : Stream
        The data: one minibatch of ``batch`` samples per step (e.g.
        ``ArrayStream(X.reshape(T, batch, m))``).
    n_components : int >= 1
        Initial dictionary size ``k``.
    variant : {"ODL", "ODL*", "NODL", "NODL+", "NODL-"}
    batch : int >= 1
        Samples per mini-batch (one step).
    beta_c : int in [1, min(n_components, n_features)]
        Nonzeros per code (Alg. 1 step 4). Bounded by the *initial*
        dictionary size: deaths stop at ``beta_c`` elements, so the
        dictionary never holds fewer during the run (the paper's "at most
        200 nonzeros" with fewer elements is ``beta_c = min(200, k)``).
    beta_d : int in [0, n_features]
        Nonzeros per dictionary element; 0 for dense elements.
    gamma : float in (0, 1]
        Birth threshold on the batch's mean correlation.
    c_k : int >= 0
        Most elements born per batch.
    lambda_g : float >= 0, finite
        Group-sparsity weight (used by NODL and NODL-; the other variants use 0).
    metric : {"pearson", "spearman"}
        A sample whose correlation is undefined (a constant sample or a
        constant reconstruction, e.g. an all-zero code) counts as 0: it is
        not represented, and pushes towards births.
    max_size : int >= n_components, optional
        Most elements the dictionary may hold; births are cut to fit (none
        once it is full; ODL* replaces dead elements one for one).
    newborn : {"dense", "sparse", "uniform", "data"}
        New (and, without ``init``, initial) elements: random unit-norm
        Gaussian with full support (the paper: "randomly initialized with
        non-zero support in all the dimensions"), random with ``beta_d``
        nonzeros, the authors' code's ``normalize(rand(n, k))`` (uniform
        entries, each element centred, unit norm), or (births only; initial
        elements are then dense) the batch's worst-reconstructed samples,
        normalised (and cut to ``beta_d`` nonzeros for sparse elements), set
        by the Birth event.
    tol : float > 0 or None
        The dictionary update sweeps until the relative change is below
        ``tol``, at most ``max_sweeps``; None: exactly ``max_sweeps`` sweeps
        per batch.
    max_sweeps : int >= 1
        Most dictionary sweeps per mini-batch.
    seed : int
        Seeds the initial and newborn elements (``network.rng``).
    record_every : int
        The code's activity is recorded every ``record_every`` steps.
    lam : float > 0, optional
        A fixed L1 weight for every sample instead of Alg. 2's target count:
        the code solves ``min 0.5 ||x - D alpha||^2 + lam ||alpha||_1``
        (Mairal et al. 2009, Eq. 2; SPAMS ``trainDL(mode=2, lambda1=lam)``,
        scikit-learn ``MiniBatchDictionaryLearning(alpha=lam)``). ``beta_c``
        then only bounds how far deaths shrink the dictionary.
    normalize : {"none", "unit", "center_unit"}
        The atoms the codes are computed against
        (:mod:`neurosim.coding.normalization`). ``"none"`` is Alg. 1 as
        printed (codes against ``D``); ``"center_unit"`` is the authors'
        code, which codes dense data against ``D~``, each element centred
        and scaled to unit norm (their ``sparse_coding.m``; sparse data,
        e.g. text, against ``D`` itself). Under a normalisation, steps 4 and
        9, ``p_c`` and the data-taken newborns code against ``D~`` and
        reconstruct with ``D~``; those codes feed ``A`` and ``B`` (step 11);
        steps 13-19 (the ``beta_d`` prox, the ``lambda_g`` shrink, the
        projection, deaths) act on the raw ``D`` as printed; an all-zero
        element stays zero in ``D~``. The paper-000 image and MNIST
        reproductions use ``"center_unit"``: with it NODL beats ODL at equal
        size as the paper reports, and Sec. 4 / App. E.5 explain ODL's small
        adaptation by exactly this normalisation ("introduces non-zeros of
        small magnitude in all dimensions", which only centring does);
        codes against the raw sparse elements collapse both (see
        ``docs/reports/paper000.md``). The default stays the printed
        algorithm.
    birth_rounding : {"nearest", "floor"}
        ``k_n = (1 - p_c) c_k`` rounded half to even, or down (the authors'
        code); see :func:`births_for`.
    unused : {"keep", "zero"}
        Elements never used so far (``a_jj = 0``): kept as they are (the
        group shrink alone wears them down), or zeroed at once (the authors'
        code); see :class:`~neurosim.rules.dictionary.BlockCoordinateDescent`.
    init : array of shape (n_components, n_features) or callable, optional
        The initial dictionary (atoms as rows; or ``init(rng, shape)``
        returning it, drawn with the network's generator), instead of
        drawing it as the newborns are. Must be finite; its rows need not
        be unit-norm (step 17 bounds them at the first update).
    decay : float in (0, 1] or Schedule
        Weight of the past in the memory ``A``, ``B``
        (:class:`~neurosim.rules.dictionary.DictionaryMemory`): 1 (the paper)
        keeps the whole past; ``ns.schedules.Mairal2010(batch)`` weighs it as
        SPAMS and scikit-learn do (Mairal et al. 2010, Sec. 3.4).

    Returns
    -------
    NeurogenesisCircuit
        The network and handles to its parts.

    Raises
    ------
    TypeError, ValueError
        For a parameter of the wrong type or outside its range, naming it
        and its allowed range (before anything is built).

    Notes
    -----
    A batch with NaN or Inf stops the run with
    :class:`~neurosim.errors.SimulationDiverged` at that step, naming
    ``x.activity``; the recordings and the event log up to the step before
    are kept (``error.recordings``).
    """
    if not isinstance(stream, ns.Stream):
        raise TypeError(f"stream must be a neurosim Stream (e.g. ArrayStream(X.reshape(T, batch, m))); "
                        f"got {type(stream).__name__}")
    variant = check_choice("variant", variant, set(VARIANTS))
    birth, death, reinit = VARIANTS[variant]
    n_components = check_int("n_components", n_components, low=1)
    beta_c = check_int("beta_c", beta_c, low=1)
    beta_d = check_int("beta_d", beta_d, low=0)
    if beta_d > stream.dim:
        raise ValueError(f"beta_d must be in [0, {stream.dim}] (0: dense elements; at most the input size); got {beta_d}")
    gamma = check_float("gamma", gamma, low=0.0, high=1.0, low_open=True)
    c_k = check_int("c_k", c_k, low=0)
    lambda_g = check_float("lambda_g", lambda_g, low=0.0)
    metric = check_choice("metric", metric, {"pearson", "spearman"})
    if max_size is not None:
        max_size = check_int("max_size", max_size, low=n_components)
    newborn = check_choice("newborn", newborn, set(NEWBORN))
    normalize = check_choice("normalize", normalize, set(NORMALIZATIONS))
    birth_rounding = check_choice("birth_rounding", birth_rounding, set(BIRTH_ROUNDING))
    unused = check_choice("unused", unused, {"keep", "zero"})
    if tol is not None:
        tol = check_float("tol", tol, low=0.0, low_open=True)
    max_sweeps = check_int("max_sweeps", max_sweeps, low=1)
    if init is not None and not callable(init):
        init = check_array("init", init, shape=(n_components, stream.dim))
    if lam is not None:
        lam = check_float("lam", lam, low=0.0, low_open=True)
    # the bound that depends on other arguments last, so a single bad argument is the one named.
    # The encoder keeps beta_c nonzeros among linearly independent elements (at most n_features of them);
    # deaths stop at beta_c elements, so the bound on the initial size holds for the whole run
    if beta_c > min(n_components, stream.dim):
        raise ValueError(f"beta_c must be in [1, {min(n_components, stream.dim)}] (at most min(n_components, "
                         f"n_features) = min({n_components}, {stream.dim})); got {beta_c}")

    net = ns.Network(seed=seed, batch=batch, name=f"neurogenesis_{variant}")
    x = ns.Population("x", stream.dim)
    # fixed lam: no warm start, since consecutive mini-batches hold unrelated samples and the last
    # step's codes are a worse start than zero (1.7-2x slower steps at m = 1024, k = 100-400)
    encoder = (ns.SparseCode("feature_sign", n_nonzero=beta_c, normalize=normalize) if lam is None
               else ns.SparseCode("feature_sign", lam=lam, warm_start=False, normalize=normalize))
    code = ns.Population("code", n_components, dynamics=encoder, max_size=max_size)
    net.add(x, code)
    net.connect(stream, x)
    rule = BlockCoordinateDescent(lambda_g=lambda_g if death else 0.0, beta_d=beta_d, tol=tol, max_sweeps=max_sweeps,
                                  unused=unused)
    elements = RandomElements(beta_d if newborn == "sparse" else 0,
                              "centered_uniform" if newborn == "uniform" else "normal")
    D = ns.Projection("D", x, code, init=elements if init is None else _InitialThenNewborn(init, elements), rule=rule)
    net.add(D)
    net.add(DictionaryMemory(D, decay=decay))  # A and B; runs before the rule (unit rules: order -10)

    accuracy = None
    if birth and c_k > 0:
        accuracy = ReconstructionAccuracy(D, metric=metric)
        net.add(accuracy)

        def conditional_birth(n):
            k_n = births_for(float(accuracy.value[0]), c_k, birth_rounding)
            if max_size is not None:
                k_n = min(k_n, max_size - code.size)
            if k_n <= 0:
                return None
            if newborn == "data":
                return ns.Birth(code, k_n, weights={D: elements_from_data(x.activity, code.activity, D.weights,
                                                                           k_n, beta_d, normalize)})
            return ns.Birth(code, k_n)

        cond = KernelCall(first_at_most, (ArrayRef(lambda: accuracy.value, "code.accuracy"), gamma))
        net.add(ns.Trigger(cond, conditional_birth, when="dynamics", name="conditional_birth"))

    if death or reinit:
        def dead(n):
            ids = code.ids[~np.any(D.weights != 0.0, axis=1)]
            if ids.size == 0:
                return None
            if reinit:
                return [ns.Death(code, ids), ns.Birth(code, ids.size)]
            # the encoder needs beta_c elements; zeroed ones beyond that stay (inactive) until births make room
            ids = ids[: max(0, code.size - beta_c)]
            return ns.Death(code, ids) if ids.size else None

        cond = KernelCall(any_zero_row, (ArrayRef(lambda: D.weights, "D.weights"),))
        net.add(ns.Trigger(cond, dead, name="reinit_dead" if reinit else "group_sparsity_death"))

    net.record(code, "activity", every=record_every)
    return NeurogenesisCircuit(net, x, code, D, accuracy, variant)
