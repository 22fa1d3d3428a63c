"""Sparse encoders as population dynamics (paper 001; k winners: paper 004; target count: paper 000).

The code population's activity is the sparse code of its input under the
dictionary held by its one feed-forward projection: with ``W`` the weights
(atoms as rows, shape ``(n_atoms, n_features)``) and ``x`` the pre activity,

* ``"feature_sign"``: ``a = argmin 0.5 ||x - W^T a||^2 + lam ||a||_1`` by
  feature-sign search (Lee et al. 2006, Alg. 1), warm-started from the
  previous step's code (the paper's Step 3 start) when ``warm_start``;
* ``"feature_sign"`` with ``n_nonzero``: the same lasso with a per-sample
  ``lam`` bisected until the code has exactly ``n_nonzero`` nonzeros
  (Garg et al. 2017, Alg. 2);
* ``"omp"``: orthogonal matching pursuit with ``n_nonzero`` atoms; with
  ``nonneg`` the non-negative OMP of Bruckstein, Elad & Zibulevsky (2008)
  for Eq. 6 of Tsuchida & Cottrell (2015) (positive correlations only,
  NNLS re-fit on the support; at most ``n_nonzero`` nonzeros);
* ``"k_winners"``: keep the ``n_nonzero`` largest entries of ``W x``
  (the k-Sparse encoder of Tsuchida & Cottrell 2015).

The projection's weights can learn (any rule); the Gram matrix is refreshed
inside the step only when they changed.

All-zero atoms (rows of ``W``; e.g. a newborn atom or one a rule drove to
zero) are *inactive* on both backends: their code is 0 and they are never
selected, as if the atom were absent. The standalone encoders of
:mod:`neurosim.coding` refuse such a dictionary instead (there a zero atom is
a user error, here it can arise during learning). ``n_nonzero`` is checked
against the structure (``n_atoms`` for ``"k_winners"``,
``min(n_atoms, n_features)`` otherwise) when the network is validated and
again before every step and compiled segment, so after a structural event
(``Death``) both backends raise the same ``ValueError``. With fewer active
atoms than ``n_nonzero`` the codes simply have fewer nonzeros (the
target-count mode then reports a missed count).

Overflow: a dictionary whose squared atom norms overflow float64 is refused
with a ``ValueError`` naming the projection when the network is validated
(before any step). If the dictionary or the input grows so that ``W W^T``
(not needed by ``"k_winners"``) or ``W x`` overflows during a run, or (but
for ``"k_winners"``) the squared projections of the input on the atoms the
solvers sum (``n_atoms max_i (w_i . x)^2 / ||w_i||^2``, an input of about
1e154 on unit atoms; :func:`neurosim.kernels.encoding.projections_representable`),
both backends stop at that step with ``SimulationDiverged`` naming
``"<code>.activity (dictionary ... too large ...)"``, codes left as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.coding.normalization import NORMALIZATIONS, normalized_atoms
from neurosim.dynamics.base import Dynamics
from neurosim.kernels import encoding as k
from neurosim.kernels.dense import synaptic_drive
from neurosim.kernels.encoding import correlations, gram, projections_representable
from neurosim.kernels.greedy import k_winners_codes
from neurosim.params import Bool, Choice, Float, Int

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neurosim.network import Network
    from neurosim.synapses import Projection

__all__ = ["SparseCode", "METHODS"]

METHODS = ("feature_sign", "omp", "k_winners")


class SparseCode(Dynamics):
    """Compute a code population's activity with a sparse encoder.

    Parameters
    ----------
    method : {"feature_sign", "omp", "k_winners"}, default="feature_sign"
        The encoder (see the module docstring); fixed after construction.
    lam : float >= 0, optional
        L1 weight for ``"feature_sign"`` (the paper's ``gamma = 2 lam``).
    n_nonzero : int >= 1, optional
        Nonzeros per code: required for ``"omp"`` and ``"k_winners"``; for
        ``"feature_sign"`` it replaces ``lam`` (target-count mode).
    nonneg : bool, default=False
        Non-negative codes (``"omp"``: non-negative OMP, see
        :func:`neurosim.coding.omp`).
    absolute : bool, default=True
        ``"k_winners"`` ranks by ``|W x|`` (True) or ``W x`` (False).
    warm_start : bool, default=True
        ``"feature_sign"`` starts from the previous step's code.
    max_iter : int >= 1, optional
        Feature-sign iteration cap per sample (default ``max(1000, 10 m)``).
    tol : float > 0, default=1e-10
        Tolerance of feature-sign's optimality conditions.
    normalize : {"none", "unit", "center_unit"}, default="none"
        The atoms the encoder codes with (:mod:`neurosim.coding.normalization`):
        the weights' rows as they are, scaled to unit norm, or centred and
        scaled (paper 000's authors' code). The activity is the code against
        these normalised atoms; the weights themselves are not changed, so a
        rule learns the raw dictionary from codes against the normalised one.

    Notes
    -----
    ``info[0]`` holds the number of samples whose solver did not converge in
    the last step (0 when all did). The ``"python"`` backend warns
    ``NonConvergenceWarning`` through the public encoders as it goes; on the
    compiled path the kernels count those samples in ``info[1]`` and the
    engine warns once at the end of ``run`` with the total.

    Raises
    ------
    ValueError
        If the parameters do not make one encoder (``"feature_sign"`` needs
        exactly one of ``lam`` and ``n_nonzero``; ``"omp"`` and
        ``"k_winners"`` need ``n_nonzero`` and take no ``lam``), or, when the
        network is validated, the wiring is not one excitatory dictionary
        projection or ``n_nonzero`` exceeds the sizes.

    Examples
    --------
    One atom per code by OMP over the identity dictionary keeps the largest
    input entry:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> net = ns.Network()
    >>> x = ns.Population("x", 3)
    >>> code = ns.Population("code", 3, dynamics=ns.SparseCode("omp", n_nonzero=1))
    >>> _ = net.add(x, code, ns.Projection("D", x, code, init=np.eye(3)))
    >>> _ = net.connect(ns.ArrayStream(np.array([[0.0, 2.0, 0.5]])), x)
    >>> _ = net.run(1)
    >>> code.activity.tolist()
    [[0.0, 2.0, 0.0]]

    The same encoder on any rows, in NumPy:

    >>> code.dynamics.encode_numpy(np.array([[-3.0, 1.0, 0.0]]), np.eye(3)).tolist()
    [[-3.0, 0.0, 0.0]]
    """

    unconverged_warning = NonConvergenceWarning

    method = Choice("feature_sign", options=METHODS, live=False, doc="the encoder")
    lam = Float(None, low=0.0, optional=True, doc="L1 weight (feature_sign); may follow a schedule")
    n_nonzero = Int(None, low=1, optional=True, doc="nonzeros per code")
    nonneg = Bool(False, doc="non-negative codes")
    absolute = Bool(True, doc="k_winners ranks by |W x|")
    warm_start = Bool(True, doc="feature_sign starts from the previous code")
    max_iter = Int(None, low=1, optional=True, doc="feature-sign iteration cap (None: max(1000, 10 m))")
    tol = Float(1e-10, low=0.0, high=1.0, low_open=True, high_open=True, schedulable=False,
                doc="tolerance of feature-sign's optimality conditions")
    normalize = Choice("none", options=NORMALIZATIONS, live=False, doc="atoms coded with: as they are, unit, centred+unit")

    def __init__(self, method: str = "feature_sign", *, lam: float | None = None, n_nonzero: int | None = None,
                 nonneg: bool = False, absolute: bool = True, warm_start: bool = True,
                 max_iter: int | None = None, tol: float = 1e-10, normalize: str = "none") -> None:
        super().__init__()
        self.set_params(method=method, lam=lam, n_nonzero=n_nonzero, nonneg=nonneg, absolute=absolute,
                        warm_start=warm_start, max_iter=max_iter, tol=tol, normalize=normalize)
        self.check_options()
        self.info = np.zeros(2, dtype=np.int64)

    def check_options(self) -> None:
        """Raise ``ValueError`` unless the parameters make one encoder (checked again before every run)."""
        if self.method == "feature_sign" and (self.lam is None) == (self.n_nonzero is None):
            raise ValueError("feature_sign needs exactly one of lam (L1 weight) or n_nonzero (target count)")
        if self.method in ("omp", "k_winners"):
            if self.n_nonzero is None:
                raise ValueError(f"{self.method} needs n_nonzero (an integer >= 1)")
            if self.lam is not None:
                raise ValueError(f"{self.method} takes n_nonzero, not lam")

    def validate(self, network: Network) -> None:
        self.check_options()
        self.check_structure()

    def connect(self, feedforward: list[Projection], lateral: list[Projection]) -> None:
        self.check_one_dictionary(feedforward, lateral)
        super().connect(feedforward, lateral)
        self.check_structure()
        self.check_dictionary()

    def check_dictionary(self) -> None:
        """Raise ``ValueError`` when a squared atom norm of the dictionary overflows float64.

        Run when the network is validated, so a dictionary that cannot be
        encoded with is refused before any step, on both backends. A dictionary
        (or input) that overflows later, e.g. grown by a rule, stops the run at
        that step instead (:attr:`failure_label`), again on both backends.
        """
        proj = self.dictionary
        with np.errstate(over="ignore"):
            norms = np.einsum("ij,ij->i", proj.weights, proj.weights)
        bad = np.flatnonzero(~np.isfinite(norms))
        if bad.size:
            big = float(np.abs(proj.weights[bad]).max())
            raise ValueError(
                f"the dictionary projection {proj.name!r} of SparseCode {self.population.name!r} has atoms (rows) "
                f"{bad[:10].tolist()} whose squared norm overflows float64 (max |weight| {big:.3g}); allowed: "
                f"sum_j W[i, j]^2 <= {np.finfo(np.float64).max:.4g} for every atom i; rescale the weights")

    @property
    def failure_label(self) -> str:
        """What a step whose dictionary or input overflows reports (``SimulationDiverged.variable``)."""
        return (f"{self.population.name}.activity (dictionary {self.dictionary.name!r} or its input too large: "
                f"W W^T, W x or the squared projections of x on the atoms overflow float64)")

    def check_structure(self, sizes: Mapping[str, int] | None = None) -> None:
        """Raise ``ValueError`` unless ``n_nonzero`` fits the sizes of the code and input populations.

        Run when the network is validated, before every step/segment, and by
        :meth:`neurosim.Network.apply` on the sizes its events would leave
        (``sizes``), so a Birth or Death that leaves too few atoms is refused
        before anything is applied.

        Parameters
        ----------
        sizes : mapping of str to int, optional
            Staged population sizes (:meth:`neurosim.component.Component.check_structure`);
            default the current ones.
        """
        if self.n_nonzero is None or not self.feedforward:
            return  # not connected yet: the network's validation checks it when it is
        pop, proj = self.population, self.dictionary
        n_atoms, n_features = self.size_of(pop, sizes), self.size_of(proj.pre, sizes)
        if self.method == "k_winners":
            high, why = n_atoms, f"n_atoms = size of {pop.name!r}"
        else:
            high = min(n_atoms, n_features)
            why = (f"min(n_atoms, n_features) = min(size of {pop.name!r}, size of {proj.pre.name!r}) "
                   f"for {self.method} on the dictionary projection {proj.name!r}")
        if self.n_nonzero > high:
            raise ValueError(f"SparseCode n_nonzero must be in [1, {high}] ({why}); got {self.n_nonzero}")

    def _unconverged_text(self, n):
        if self.method == "omp":
            # OMP has no iteration limit or tolerance: its kernels count the samples that stopped early
            refit = " or the non-negative re-fit failed" if self.nonneg else ""
            return (f"SparseCode (omp) of {self.population.name!r}: {n} sample(s) stopped early during this run "
                    f"because the next atom was linearly dependent on the selected ones{refit}; their codes use "
                    f"the atoms selected before (as omp(..., nonneg={self.nonneg}) warns)")
        return (f"SparseCode ({self.method}) of {self.population.name!r}: the solver did not converge for {n} "
                f"sample(s) during this run (max_iter={self._max_iter()}, tol={self.tol:g})")

    @property
    def dictionary(self) -> Projection:
        """The one feed-forward projection, whose weights' rows are the atoms."""
        return self.feedforward[0]

    def _max_iter(self) -> int:
        return self.max_iter if self.max_iter is not None else max(1000, 10 * self.population.size)

    # -- NumPy reference (through the validated public encoders) -------------------
    def step_numpy(self) -> str | None:
        self.check_structure()
        pop, proj = self.population, self.dictionary
        codes = self.encode_numpy(proj.pre.activity, proj.weights, pop.activity if self.warm_start else None,
                                  pop.network.t if pop.network is not None else 0)
        if isinstance(codes, str):
            return codes  # the kernels test the same; the run stops at this step
        pop.activity[:] = codes
        return None

    def encode_numpy(self, X: np.ndarray, W: np.ndarray, previous: np.ndarray | None = None,
                     t: int = 0) -> np.ndarray | str:
        """Codes of the rows of ``X`` under the dictionary ``W`` (atoms as rows, normalised as ``normalize`` says) with this encoder, in NumPy.

        The NumPy reference of one step (through the validated public
        encoders), also used by rules that re-encode examples with the code
        population's own encoder.

        Parameters
        ----------
        X : numpy.ndarray, shape (n_samples, n_features)
            Samples to encode, one per row.
        W : numpy.ndarray, shape (n_atoms, n_features)
            Dictionary, atoms as rows; all-zero atoms get code 0.
        previous : numpy.ndarray, shape (n_samples, n_atoms), optional
            Warm start of ``"feature_sign"`` (ignored by the other methods).
        t : int, default=0
            The step at which a scheduled ``lam`` is read.

        Returns
        -------
        numpy.ndarray or str
            The codes, shape ``(n_samples, n_atoms)``, or
            :attr:`failure_label` when ``X W^T`` or ``W W^T`` overflows.
        """
        from neurosim.coding import feature_sign, lambda_for_count, omp

        if self.normalize != "none":
            W = normalized_atoms(W, self.normalize)
        # all-zero atoms are inactive (code 0), as in the kernels; the encoders run on the others
        active = np.flatnonzero(np.any(W != 0.0, axis=1))
        out = np.zeros((X.shape[0], W.shape[0]))
        if active.size == 0:
            if self.method == "feature_sign" and self.n_nonzero is not None:
                _warn_count_missed(X.shape[0], self.n_nonzero, 0)
            return out
        if not self._usable_numpy(X, W):
            return self.failure_label
        D = W[active]
        k_max = active.size if self.method == "k_winners" else min(active.size, W.shape[1])
        k = None if self.n_nonzero is None else min(self.n_nonzero, k_max)
        # k is None only for feature_sign with lam (check_options: omp and k_winners need n_nonzero)
        if self.method == "feature_sign" and self.lam is not None:
            init = previous[:, active].copy() if previous is not None else None
            codes = feature_sign(X, D, self.value("lam", t), init=init, nonneg=self.nonneg,
                                 max_iter=self._max_iter(), tol=self.tol)
        elif self.method == "feature_sign":
            assert k is not None and self.n_nonzero is not None
            if k < self.n_nonzero:
                _warn_count_missed(X.shape[0], self.n_nonzero, active.size)
            _, codes = lambda_for_count(X, D, k, nonneg=self.nonneg, max_iter=self._max_iter(),
                                        tol=self.tol, return_codes=True)
        elif self.method == "omp":
            assert k is not None
            codes = omp(X, D, k, nonneg=self.nonneg)
        else:
            # the selection kernel of the public k_winners, without its dictionary checks: k winners
            # needs no atom norms, and neither does its compiled kernel
            C = np.zeros((X.shape[0], D.shape[0]))
            correlations(X, np.ascontiguousarray(D), C)
            codes = np.zeros_like(C)
            k_winners_codes(C, k, codes, self.absolute, self.nonneg)
        out[:, active] = np.asarray(codes).reshape(X.shape[0], active.size)
        return out

    def _usable_numpy(self, X, W) -> bool:
        """The kernels' condition for running the encoder: ``X W^T`` and (but for k winners) ``W W^T`` and the
        squared projections (:func:`~neurosim.kernels.encoding.projections_representable`) finite.

        Computed by the kernels' own BLAS calls and test, so both paths decide alike even at the edge of overflow.
        """
        C = np.empty((X.shape[0], W.shape[0]))
        correlations(X, W, C)
        if self.method == "k_winners":
            return bool(np.isfinite(C).all())
        G = np.empty((W.shape[0], W.shape[0]))
        gram(W, G)
        return bool(np.isfinite(G).all() and np.isfinite(C).all() and projections_representable(G, C))

    # -- compiled --------------------------------------------------------------------
    def kernel_calls(self) -> list[KernelCall] | None:
        pop, proj = self.population, self.dictionary
        act = ArrayRef(lambda: pop.activity, f"{pop.name}.activity")
        drive = self.buffer_ref("drive")
        # resolved before every step and compiled segment: re-checks n_nonzero after structural events
        info = ArrayRef(self._checked_info, f"{pop.name}.encoder_info")
        m = lambda: (pop.size, pop.size)  # noqa: E731
        gram = self.buffer_ref("gram", m)
        w = ArrayRef(lambda: proj.weights, f"{proj.name}.weights")
        w_seen = self.buffer_ref("weights_seen", lambda: proj.weights.shape)
        # the Gram cache is invalid after any reallocation (events change the dictionary's shape)
        valid = ArrayRef(lambda: self._valid(), f"{pop.name}.gram_valid")
        if self.normalize == "none":
            calls = self.drive_calls(drive)
        else:
            # the normalised atoms, rebuilt every step (O(k m), small next to the encoder); the encoder's
            # Gram cache compares them with the last step's, so unchanged weights still skip the Gram
            raw, w = w, self.buffer_ref("coding_weights", lambda: proj.weights.shape)
            calls = [KernelCall(k.normalize_rows, (raw, NORMALIZATIONS.index(self.normalize), w),
                                label=f"{pop.name}.normalize"),
                     KernelCall(synaptic_drive, (drive, ArrayRef(lambda: proj.pre.activity, f"{proj.pre.name}.activity"),
                                                 w, 1.0, False), label=f"{proj.name}.drive")]
        if self.method == "k_winners":
            active = self.buffer_ref("active", lambda: (pop.size,), np.bool_)
            return calls + [KernelCall(k.k_winners_step, (act, drive, w, active, self.n_nonzero, self.absolute,
                                                          self.nonneg, info), finite=self.failure_label)]
        head = (act, drive, gram, w, w_seen, valid)
        if self.method == "omp":
            status = self.buffer_ref("status", lambda: (pop.batch,), np.int64)
            step = k.nn_omp_step if self.nonneg else k.omp_step
            return calls + [KernelCall(step, head + (self.n_nonzero, status, info), finite=self.failure_label)]
        if self.lam is not None:
            return calls + [KernelCall(k.feature_sign_step, head + (self.ref("lam"), self.warm_start, self.nonneg,
                                                                     self._max_iter(), self.tol, info),
                                       finite=self.failure_label)]
        lams = self.buffer_ref("lams", lambda: (pop.batch,))
        status = self.buffer_ref("status", lambda: (pop.batch,), np.int64)
        return calls + [KernelCall(k.count_feature_sign_step, head + (self.n_nonzero, lams, self.nonneg, self._max_iter(),
                                                                      self.tol, 1e-10, 100, status, info),
                                   finite=self.failure_label)]

    def _checked_info(self) -> np.ndarray:
        self.check_structure()
        return self.info

    def _valid(self) -> np.ndarray:
        shape = (self.dictionary.weights.shape, self.population.batch)
        if getattr(self, "_valid_shape", None) != shape:
            self._valid_shape = shape
            self._valid_flag = np.zeros(1, dtype=np.int64)
        return self._valid_flag

def _warn_count_missed(n_samples: int, n_nonzero: int, n_active: int) -> None:
    import warnings

    from neurosim.coding import NonConvergenceWarning

    warnings.warn(f"SparseCode: only {n_active} nonzero atom(s) in the dictionary, fewer than n_nonzero = {n_nonzero}; "
                  f"the {n_samples} sample(s) of this step use at most {n_active} (all-zero atoms are inactive)",
                  NonConvergenceWarning, stacklevel=3)
