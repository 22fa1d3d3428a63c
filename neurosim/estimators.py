"""scikit-learn estimators over neurosim's sparse coding.

scikit-learn, a dependency of neurosim, is imported by this module (not by
``import neurosim``).  The API mirrors
``sklearn/decomposition/_dict_learning.py`` (``SparseCoder``,
``DictionaryLearning`` / ``MiniBatchDictionaryLearning``):

* :class:`SparseCoder` -- stateless transformer over a fixed dictionary,
  encoding with feature-sign search (Lee et al. 2006), OMP or k-winners.
* :class:`DictionaryLearner` -- ``fit`` runs the batch alternation of
  Lee et al. (2006) (feature-sign / Lagrange dual by default,
  :func:`neurosim.coding.basis.learn_bases`); ``partial_fit`` runs the
  online recursion of Mairal, Bach, Ponce & Sapiro (2009, "Online
  dictionary learning for sparse coding", Algorithms 1-2) on sufficient
  statistics.

Layout as in scikit-learn: ``components_`` has shape
``(n_components, n_features)`` (rows are atoms), codes have shape
``(n_samples, n_components)``, and ``X ~= codes @ components_``.
"""

from __future__ import annotations

import re
import types
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from neurosim._validation import check_bool, check_choice, check_float, check_int, check_not_too_large
from neurosim.coding.basis import _random_bases, learn_bases
from neurosim.coding.normalization import normalized_atoms
from neurosim.kernels.basis import project_rows_to_ball
from neurosim.progress import resolve as resolve_progress

__all__ = ["SparseCoder", "DictionaryLearner", "NeurogenesisDictionaryLearner", "OnlineStructuredDictionaryLearner",
           "UnobservedFeatureWarning"]

_TRANSFORM_ALGORITHMS = {"feature_sign", "omp", "k_winners"}
#: the dtypes an estimator that preserves float32 accepts (anything else becomes float64), as scikit-learn's
_FLOATS = [np.float64, np.float32]


#: Docstring pieces the estimators' methods share, as in their numpydoc: ``{name}`` in a docstring stands for
#: the piece ``name`` (filled in by :func:`_doc`, indented as its line); a piece may itself hold pieces
#: (``{samples}``: what the rows of ``X`` are, which a method may say otherwise).
_DOC_PIECES = {
    "samples": "Samples, one per row.",
    "params_X": "Parameters\n----------\nX : array-like of shape (n_samples, n_features)\n    {samples}",
    "params_X_y": "{params_X}\ny : Ignored\n    Not used, present for scikit-learn's API.",
    "params_codes": "Parameters\n----------\nX : array-like of shape (n_samples, n_atoms)\n"
                    "    Codes, one column per atom of the fitted dictionary (``n_components_`` columns).",
    "returns_code": "Returns\n-------\n"
                    "code : ndarray of shape (n_samples, n_components) or (n_samples, 2 n_components)\n"
                    "    Twice as many columns with ``split_sign``.",
    "returns_reconstructions": "Returns\n-------\nndarray of shape (n_samples, n_features)\n    The reconstructions.",
}
#: what a sample of the estimators that take missing values is
_SAMPLES_MISSING = "Samples; NaN marks a missing entry."
_PIECE = re.compile(r"\{(\w+)\}")


def _fill_doc(doc, fields):
    """``doc`` with each ``{name}`` of ``fields`` (over :data:`_DOC_PIECES`) filled in, to the line's indentation."""
    if doc is None:  # python -OO
        return None
    fields = {**_DOC_PIECES, **fields}

    def line(text):
        indent = "\n" + text[:len(text) - len(text.lstrip())]
        return _PIECE.sub(lambda m: fields[m[1]].replace("\n", indent) if m[1] in fields else m[0], text)

    while (filled := "\n".join(map(line, doc.split("\n")))) != doc:
        doc = filled
    return doc


def _doc(func=None, **fields):
    """Decorator: the method's docstring with its pieces filled in (``@_doc``, or ``@_doc(samples=...)``)."""
    if func is None:
        return lambda f: _doc(f, **fields)
    func.__doc__ = _fill_doc(func.__doc__, fields)
    return func


def _keep_params(estimator, params):
    """The whole of an estimator's ``__init__``: each argument stored as is under its own name.

    ``params`` is ``__init__``'s ``locals()``: its explicit parameters (scikit-learn's ``get_params``,
    ``set_params`` and ``clone`` read the signature and these attributes; nothing is checked here).
    """
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


def _check_n_features(X, dictionary):
    """Raise unless the samples ``X`` have as many features as the atoms of ``dictionary``."""
    if X.shape[1] != dictionary.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but the dictionary has {dictionary.shape[1]} "
            f"(dictionary shape {dictionary.shape})"
        )


def _encode(X, dictionary, algorithm, alpha, n_nonzero, max_iter, positive):
    """Dispatch to :func:`neurosim.coding.encoders.sparse_encode` (imported lazily)."""
    from neurosim.coding.encoders import sparse_encode

    if algorithm == "feature_sign":
        return sparse_encode(X, dictionary, "feature_sign", lam=alpha, nonneg=positive, max_iter=max_iter)
    if algorithm == "omp" and positive:
        raise ValueError("positive_code=True is not supported with transform_algorithm='omp'")
    return sparse_encode(X, dictionary, algorithm, n_nonzero=n_nonzero, nonneg=positive)


class _BaseSparseCoding(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """Shared transform settings and transform / inverse_transform (as in scikit-learn).

    Subclasses take the transform settings (``transform_algorithm``, ``transform_n_nonzero_coefs``,
    ``transform_alpha``, ``split_sign``, ``positive_code``, ``transform_max_iter``) in their ``__init__``
    and say where their atoms come from in :meth:`_atoms`.
    """

    def _atoms(self):
        """The atoms (rows) that codes combine, shape ``(n_components, n_features)``.

        Raises ``NotFittedError`` where the atoms are learned and not yet fitted.
        """
        raise NotImplementedError

    @_doc
    def transform(self, X):
        """Encode ``X`` as sparse combinations of the atoms.

        {params_X}

        {returns_code}
        """
        return self._transform(X, self._atoms())

    def inverse_transform(self, X):
        """Map codes back to signal space, ``X @ atoms``.

        The atoms are ``dictionary`` for :class:`SparseCoder` and the learned
        ``components_`` for :class:`DictionaryLearner`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components) or (n_samples, 2 n_components)
            Twice as many columns with ``split_sign``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            The reconstructions.
        """
        return self._inverse_transform(X, self._atoms())

    @property
    def _n_features_out(self):
        return self._atoms().shape[0] * (2 if self.split_sign else 1)

    def _check_transform_params(self, n_features, n_atoms=None):
        algorithm = check_choice("transform_algorithm", self.transform_algorithm, _TRANSFORM_ALGORITHMS)
        alpha = self.transform_alpha
        if alpha is None:
            alpha = getattr(self, "alpha", 1.0)
        alpha = check_float("transform_alpha", alpha, low=0.0)
        k = self.transform_n_nonzero_coefs
        # The most nonzeros the encoder can produce: k winners picks among the
        # atoms, OMP's selected atoms must also be independent (<= n_features).
        high = None
        if n_atoms is not None and algorithm != "feature_sign":
            high = n_atoms if algorithm == "k_winners" else min(n_atoms, n_features)
        if k is None:
            # scikit-learn's default for OMP: 10 % of the features (capped at what the encoder allows).
            k = max(int(n_features / 10), 1)
            if high is not None:
                k = min(k, high)
        elif algorithm == "feature_sign":
            k = check_int("transform_n_nonzero_coefs", k, low=1)  # not used by feature_sign (as in scikit-learn)
        else:
            # An explicit count the encoder cannot honour is refused (never clipped silently).
            k = check_int("transform_n_nonzero_coefs", k, low=1, high=high)
        max_iter = check_int("transform_max_iter", self.transform_max_iter, low=1)
        positive = check_bool("positive_code", self.positive_code)
        split = check_bool("split_sign", self.split_sign)
        return algorithm, alpha, k, max_iter, positive, split

    def _transform(self, X, dictionary):
        X = check_not_too_large("X", validate_data(self, X, reset=False, dtype=np.float64))
        _check_n_features(X, dictionary)
        algorithm, alpha, k, max_iter, positive, split = self._check_transform_params(X.shape[1], dictionary.shape[0])
        code = _encode(X, dictionary, algorithm, alpha, k, max_iter, positive)
        code = np.asarray(code, dtype=np.float64)
        if split:
            # Positive and negative parts as separate features, e.g. for
            # downstream classifiers that need nonnegative inputs.
            code = np.hstack([np.maximum(code, 0.0), -np.minimum(code, 0.0)])
        return code

    def _inverse_transform(self, code, dictionary):
        code = check_array(code, dtype=np.float64)
        n = dictionary.shape[0] * (2 if self.split_sign else 1)
        if code.shape[1] != n:
            raise ValueError(
                f"code must have {n} columns (number of components"
                f"{' x 2 with split_sign' if self.split_sign else ''}); got {code.shape[1]}"
            )
        if self.split_sign:
            half = dictionary.shape[0]
            code = code[:, :half] - code[:, half:]
        return code @ dictionary


class SparseCoder(_BaseSparseCoding, BaseEstimator):
    """Sparse coding of data against a fixed dictionary.

    Transforms each sample ``x`` into a code ``a`` with ``x ~= a @ dictionary``.
    Counterpart of :class:`sklearn.decomposition.SparseCoder` using
    neurosim's encoders.

    Parameters
    ----------
    dictionary : ndarray of shape (n_components, n_features)
        Atoms (rows).  Not modified.
    transform_algorithm : {"feature_sign", "omp", "k_winners"}, default="feature_sign"
        * ``"feature_sign"``: exact lasso solution of
          ``0.5 ||x - D^T a||^2 + alpha ||a||_1`` by feature-sign search
          (Lee et al. 2006, Algorithm 1);
        * ``"omp"``: orthogonal matching pursuit with
          ``transform_n_nonzero_coefs`` atoms;
        * ``"k_winners"``: keep the ``transform_n_nonzero_coefs`` largest
          responses.
    transform_n_nonzero_coefs : int, default=None
        Number of nonzero coefficients for ``"omp"`` and ``"k_winners"``;
        default ``max(n_features // 10, 1)`` as in scikit-learn.
    transform_alpha : float, default=None
        L1 weight ``alpha >= 0`` for ``"feature_sign"``; default 1.0.
    split_sign : bool, default=False
        Return ``[max(a, 0), -min(a, 0)]`` (twice as many columns).
    positive_code : bool, default=False
        Nonnegative codes (``"feature_sign"`` and ``"k_winners"``).
    transform_max_iter : int, default=1000
        Iteration cap of feature-sign search.

    Attributes
    ----------
    n_components_ : int
        Number of atoms.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Set when ``fit`` sees string feature names.

    See Also
    --------
    DictionaryLearner : learns the dictionary.
    neurosim.coding.encoders.feature_sign : the encoder.

    Examples
    --------
    One atom per sample by OMP over the identity dictionary:

    >>> import numpy as np
    >>> from neurosim.estimators import SparseCoder
    >>> coder = SparseCoder(np.eye(3), transform_algorithm="omp", transform_n_nonzero_coefs=1)
    >>> coder.transform(np.array([[0.0, 2.0, 0.5], [-3.0, 1.0, 0.0]])).tolist()
    [[0.0, 2.0, 0.0], [-3.0, 0.0, 0.0]]
    """

    def __init__(self, dictionary, *, transform_algorithm="feature_sign", transform_n_nonzero_coefs=None,
                 transform_alpha=None, split_sign=False, positive_code=False, transform_max_iter=1000):
        _keep_params(self, locals())

    def _atoms(self):
        return check_array(self.dictionary, dtype=np.float64, input_name="dictionary")

    @_doc
    def fit(self, X: ArrayLike, y: object = None) -> SparseCoder:
        """Validate the parameters and ``X`` (nothing is learned).

        {params_X_y}

        Returns
        -------
        self : SparseCoder
            The validated estimator.
        """
        X = check_not_too_large("X", validate_data(self, X, dtype=np.float64))
        D = self._atoms()
        _check_n_features(X, D)
        self._check_transform_params(X.shape[1], D.shape[0])
        self.n_components_ = D.shape[0]
        return self

    @_doc
    def transform(self, X: ArrayLike, y: object = None) -> np.ndarray:
        """Encode ``X`` as sparse combinations of the dictionary atoms.

        Same as the base class's, but accepts (and ignores) ``y`` like
        scikit-learn's ``SparseCoder.transform``.

        {params_X_y}

        {returns_code}
        """
        return super().transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags


class DictionaryLearner(_BaseSparseCoding, BaseEstimator):
    """Sparse-coding dictionary learning (Lee et al. 2006; online: Mairal et al. 2009).

    Finds atoms ``D`` (rows, ``||d_j||^2 <= norm_bound``) and codes ``A``
    minimising ``sum_i 0.5 ||x_i - a_i @ D||^2 + alpha ||a_i||_1``.

    * :meth:`fit` alternates exact coefficient solves (feature-sign search,
      warm-started) and exact basis solves (Lagrange dual, Eq. 6-11 of
      Lee et al.) until the relative objective change per iteration is
      below ``tol`` (their footnote 12).
    * :meth:`partial_fit` performs one step of online dictionary learning
      (Mairal et al. 2009, Algorithm 1): code the mini-batch against the
      current atoms, accumulate the sufficient statistics
      ``A_t = rho A_{t-1} + sum a a^T`` and ``B_t = rho B_{t-1} + sum a x^T``,
      and update the atoms by block-coordinate descent on
      ``0.5 tr(D^T A_t D) - tr(D^T B_t)`` (Algorithm 2).  ``fit`` also sets
      these statistics (from the training codes), so ``partial_fit`` can
      continue a batch fit.

    Parameters
    ----------
    n_components : int, default=None
        Number of atoms; default ``n_features``.
    alpha : float, default=1.0
        L1 weight of the learning objective.
    max_iter : int, default=1000
        Maximum alternations in :meth:`fit`.
    tol : float, default=1e-6
        Footnote-12 tolerance on ``|f_new - f_old| / |f_old|``.
    fit_algorithm : {"feature_sign", "epsilon_l1", "lars"}, default="feature_sign"
        Coefficient solver during :meth:`fit` ("epsilon_l1" learns under the
        smooth penalty of Lee et al. Eq. 1 with ``epsilon``; "lars" is
        scikit-learn's lasso-LARS).  :meth:`partial_fit` always codes with
        feature-sign search.
    basis_algorithm : {"dual", "gradient"}, default="dual"
        Basis solver during :meth:`fit`: Lagrange dual or projected gradient.
    norm_bound : float, default=1.0
        Bound ``c`` on the squared atom norms.
    epsilon : float, default=1e-3
        Smoothing constant for ``fit_algorithm="epsilon_l1"``.
    forget_factor : float, default=1.0
        ``rho`` in (0, 1] scaling the old statistics at each
        :meth:`partial_fit` (1: Mairal et al.'s plain sums).
    dict_update_iter : int, default=10
        Maximum block-coordinate sweeps per :meth:`partial_fit`.
    transform_algorithm : {"feature_sign", "omp", "k_winners"}, default="feature_sign"
        Encoder of :meth:`transform` (see :class:`SparseCoder`).
    transform_n_nonzero_coefs : int, default=None
        Nonzeros per code for ``"omp"`` and ``"k_winners"``; default
        ``max(n_features // 10, 1)``.
    transform_alpha : float, default=None
        Defaults to ``alpha``.
    split_sign : bool, default=False
        :meth:`transform` returns ``[max(a, 0), -min(a, 0)]``.
    positive_code : bool, default=False
        Nonnegative codes in :meth:`transform` only.
    transform_max_iter : int, default=1000
        Iteration cap of feature-sign search in :meth:`transform`.
    dict_init : ndarray of shape (n_components, n_features), default=None
        Initial atoms (projected onto the norm ball); default random.
    random_state : int, RandomState instance or None, default=None
        Seeds the random initial atoms.
    progress : bool, default=None
        A progress bar over :meth:`fit`'s alternations, with the objective;
        default :func:`neurosim.progress.resolve` (a bar when someone is
        watching: a terminal or a notebook).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Learned atoms.
    n_components_ : int
    error_ : ndarray
        Objective after each alternation of :meth:`fit`.
    n_iter_ : int
        Alternations performed by :meth:`fit`.
    dual_ : ndarray of shape (n_components,)
        Lagrange duals of the last basis step (``basis_algorithm="dual"``).
    n_steps_ : int
        Number of :meth:`partial_fit` calls since the last :meth:`fit`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    References
    ----------
    H. Lee, A. Battle, R. Raina, A. Y. Ng. Efficient sparse coding
    algorithms. NIPS 2006.
    J. Mairal, F. Bach, J. Ponce, G. Sapiro. Online dictionary learning for
    sparse coding. ICML 2009.
    """

    def __init__(self, n_components=None, *, alpha=1.0, max_iter=1000, tol=1e-6, fit_algorithm="feature_sign",
                 basis_algorithm="dual", norm_bound=1.0, epsilon=1e-3, forget_factor=1.0, dict_update_iter=10,
                 transform_algorithm="feature_sign", transform_n_nonzero_coefs=None, transform_alpha=None,
                 split_sign=False, positive_code=False, transform_max_iter=1000, dict_init=None, random_state=None,
                 progress=None):
        _keep_params(self, locals())

    # -- helpers ---------------------------------------------------------
    def _n_atoms(self, n_features):
        if self.n_components is None:
            return n_features
        return check_int("n_components", self.n_components, low=1)

    def _initial_dictionary(self, n_atoms, n_features, c, random_state):
        if self.dict_init is not None:
            D = check_array(self.dict_init, dtype=np.float64, input_name="dict_init").copy()
            if D.shape != (n_atoms, n_features):
                raise ValueError(f"dict_init must have shape {(n_atoms, n_features)}; got {D.shape}")
            with np.errstate(over="ignore", under="ignore"):
                zero = np.flatnonzero(~(np.einsum("ij,ij->i", D, D) > 0.0))
            if zero.size:
                raise ValueError(f"dict_init must have no all-zero rows (atoms), allowed: ||dict_init[i]||^2 in (0, inf); "
                                 f"rows {zero[:10].tolist()} are zero (or their squared norm underflows)")
            project_rows_to_ball(D, c)
            return D
        seed = random_state.randint(np.iinfo(np.int32).max)
        return _random_bases(np.random.default_rng(seed), n_atoms, n_features, c)

    # -- batch -----------------------------------------------------------
    @_doc
    def fit(self, X: ArrayLike, y: object = None) -> DictionaryLearner:
        """Learn the dictionary from ``X`` by alternating minimisation.

        {params_X_y}

        Returns
        -------
        self : DictionaryLearner
        """
        self._fit(X)
        return self

    @_doc
    def fit_transform(self, X: ArrayLike, y: object = None) -> np.ndarray:
        """Learn the dictionary and return the codes of ``X``.

        {params_X_y}

        Returns
        -------
        code : ndarray of shape (n_samples, n_components)
        """
        codes = self._fit(X)
        algorithm, alpha, _, _, positive, split = self._check_transform_params(self.n_features_in_, self.n_components_)
        if (algorithm == "feature_sign" and self.fit_algorithm == "feature_sign"
                and alpha == float(self.alpha) and not positive and not split):
            # The learner's last coding step already encoded X against the
            # returned atoms with the same solver and weight.
            return codes
        return self.transform(X)

    def _fit(self, X):
        X = check_not_too_large("X", validate_data(self, X, dtype=np.float64))
        n_samples, n_features = X.shape
        n_atoms = self._n_atoms(n_features)
        alpha = check_float("alpha", self.alpha, low=0.0)
        c = check_float("norm_bound", self.norm_bound, low=0.0, low_open=True)
        fit_algorithm = check_choice("fit_algorithm", self.fit_algorithm, {"feature_sign", "epsilon_l1", "lars"})
        basis_algorithm = check_choice("basis_algorithm", self.basis_algorithm, {"dual", "gradient"})
        if basis_algorithm == "dual":
            # The Lagrange dual multiplies squared norms (X S^T with codes S of the size of X, then its
            # square): where X's fourth powers overflow it returns zero atoms, and the coder then
            # complained about a D the user never passed.
            check_not_too_large("X", X, power=4, hint=" (basis_algorithm='gradient' needs only its squares)")
        epsilon = check_float("epsilon", self.epsilon, low=0.0, low_open=True)
        tol = check_float("tol", self.tol, low=0.0)
        max_iter = check_int("max_iter", self.max_iter, low=0)
        self._check_transform_params(n_features, n_atoms)
        self._check_online_params()
        rs = check_random_state(self.random_state)
        D0 = self._initial_dictionary(n_atoms, n_features, c, rs)
        result = learn_bases(
            X, n_atoms, alpha,
            coder=fit_algorithm, basis=basis_algorithm, c=c, eps=epsilon,
            tol=tol, max_iter=max_iter, D_init=D0, progress=resolve_progress(self.progress),
        )
        self.components_ = result.components
        self.n_components_ = n_atoms
        self.error_ = result.objective
        self.n_iter_ = result.n_iter
        self.dual_ = result.dual
        # Sufficient statistics of Mairal et al. so partial_fit continues
        # from the batch solution.
        A = result.codes
        self._A = A.T @ A
        self._B = A.T @ X
        self._random_state = rs
        self.n_steps_ = 0
        return A

    # -- online ----------------------------------------------------------
    def _check_online_params(self):
        rho = check_float("forget_factor", self.forget_factor, low=0.0, high=1.0, low_open=True)
        sweeps = check_int("dict_update_iter", self.dict_update_iter, low=1)
        return rho, sweeps

    @_doc(samples="Mini-batch.")
    def partial_fit(self, X: ArrayLike, y: object = None) -> DictionaryLearner:
        """Update the atoms with one mini-batch (Mairal et al. 2009, Alg. 1).

        {params_X_y}

        Returns
        -------
        self : DictionaryLearner
        """
        first = not hasattr(self, "components_")
        X = check_not_too_large("X", validate_data(self, X, dtype=np.float64, reset=first))
        n_features = X.shape[1]
        alpha = check_float("alpha", self.alpha, low=0.0)
        c = check_float("norm_bound", self.norm_bound, low=0.0, low_open=True)
        rho, sweeps = self._check_online_params()
        if first:
            n_atoms = self._n_atoms(n_features)
            self._check_transform_params(n_features, n_atoms)
            self._random_state = check_random_state(self.random_state)
            self.components_ = self._initial_dictionary(n_atoms, n_features, c, self._random_state)
            self.n_components_ = n_atoms
            self._A = np.zeros((n_atoms, n_atoms))
            self._B = np.zeros((n_atoms, n_features))
            self.n_steps_ = 0
        from neurosim.coding.encoders import feature_sign

        D = self.components_.copy()
        code = np.asarray(feature_sign(X, D, alpha), dtype=np.float64)
        self._A = rho * self._A + code.T @ code
        self._B = rho * self._B + code.T @ X
        self.components_ = _online_dictionary_update(D, self._A, self._B, c, sweeps)
        self.n_steps_ += 1
        return self

    def _atoms(self):
        check_is_fitted(self)
        return self.components_


def _online_dictionary_update(D, A, B, c, sweeps, tol=1e-10):
    """Block-coordinate atom update of Mairal et al. (2009), Algorithm 2.

    Minimises ``0.5 tr(D^T A D) - tr(D^T B)`` over rows ``d_j`` with
    ``||d_j||^2 <= c``, one atom at a time: the exact minimiser for atom
    ``j`` with the others fixed is the projection onto the ball of
    ``d_j + (b_j - A_j D) / A_jj`` (their ``u_j``, transposed to our row
    layout and with the unit ball generalised to radius ``sqrt(c)``).
    Atoms with ``A_jj = 0`` (never used) are left unchanged, since the
    surrogate does not depend on them.
    """
    radius = np.sqrt(c)
    diag = np.diag(A)
    scale = max(float(np.max(np.abs(D))), 1e-300)
    for _ in range(sweeps):
        max_change = 0.0
        for j in range(D.shape[0]):
            if diag[j] <= 0.0:
                continue
            u = D[j] + (B[j] - A[j] @ D) / diag[j]
            norm = np.linalg.norm(u)
            if norm > radius:
                u *= radius / norm
            max_change = max(max_change, float(np.max(np.abs(u - D[j]))))
            D[j] = u
        if max_change <= tol * scale:
            break
    return D


class _FeedStream:
    """A stream serving the mini-batches an estimator hands the network, keyed by step (set before each run)."""

    def __init__(self, dim: int):
        from neurosim.streams import Stream

        class _S(Stream):
            def block(inner, t0, n, batch=1):
                k = t0 - self.t0
                return self.data[k:k + n]

            def params(inner):
                return {"stream": "estimator mini-batches"}

        self.stream = _S()
        self.stream.dim = dim
        self.data = np.zeros((0, 1, dim))
        self.t0 = 0


def _method_of(cls, func, **fields):
    """``func``, a method of a base class of ``cls``, as ``cls``'s own: the same code, documented for ``cls``.

    The docstring has its pieces filled in with ``fields`` and ``{estimator}``, the class's name, which is also
    the return annotation (``help``, the API pages and ``inspect.signature`` show it as a method of ``cls``).
    """
    method = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    method.__kwdefaults__ = func.__kwdefaults__
    method.__module__ = cls.__module__
    method.__qualname__ = f"{cls.__qualname__}.{func.__name__}"
    method.__annotations__ = {**{k: v for k, v in func.__annotations__.items() if k != "self"}, "return": cls.__name__}
    method.__doc__ = _fill_doc(func.__doc__, {"estimator": cls.__name__, **fields})
    return method


_Learner = TypeVar("_Learner", bound="_NetworkDictionaryLearner")


class _NetworkDictionaryLearner:
    """What the estimators that learn their atoms by running a network share: the scaffolding around the network.

    The network learns one mini-batch per step from :class:`_FeedStream` feeds. A subclass builds it in
    ``_build(*self._build_args)``, which hands the circuit to :meth:`_adopt`, and says

    * how training data is checked: ``_training_data(X, reset)`` returns the arrays a step reads (``reset``:
      ``X`` starts a fit, as in ``validate_data``);
    * how the first data start the network: ``_start(*data)``;
    * how a pass over the data runs and what it publishes: ``_steps(*data)``, with :meth:`_run_minibatches`;
    * what is recorded once the data are learned: :meth:`_after_learning`;
    * which atoms codes combine: :meth:`_atoms`.

    ``fit`` and ``partial_fit`` are the same for all of them: each subclass gets them as its own methods,
    documented with its name and its ``_doc_fields`` (``data``: what fit learns from; ``samples``: what the
    rows of ``X`` hold).

    The network holds compiled code, so the estimator travels as a checkpoint: ``__getstate__`` saves it,
    ``__setstate__`` rebuilds the network with ``self._build(*self._build_args)`` and loads the checkpoint.
    """

    _doc_fields = {"data": "X"}

    def __init_subclass__(cls, **kwargs):
        """Give the subclass ``fit`` and ``partial_fit`` as its own methods, documented for it."""
        super().__init_subclass__(**kwargs)
        for name in ("fit", "partial_fit"):
            if name not in vars(cls):
                setattr(cls, name, _method_of(cls, vars(_NetworkDictionaryLearner)[name], **cls._doc_fields))

    def fit(self: _Learner, X: ArrayLike, y: object = None) -> _Learner:
        """Learn the atoms from {data}: ``n_epochs`` passes of mini-batches, from a fresh network.

        {params_X_y}

        Returns
        -------
        self : {estimator}
            The fitted estimator.
        """
        return self._fit_minibatches(X, fresh=True)

    def partial_fit(self: _Learner, X: ArrayLike, y: object = None) -> _Learner:
        """Continue learning with the mini-batches of X (a first call builds the network).

        {params_X_y}

        Returns
        -------
        self : {estimator}
            The updated estimator.
        """
        return self._fit_minibatches(X, fresh=False)

    def __getstate__(self):
        import tempfile
        from pathlib import Path

        state = self.__dict__.copy()
        net = state.pop("network_", None)
        state.pop("_circuit", None)
        for feed in ("_feed", "_feed_mask"):
            state.pop(feed, None)
        if net is not None:
            with tempfile.TemporaryDirectory() as d:
                state["_checkpoint"] = Path(net.save(Path(d) / "state")).read_bytes()
        return state

    def __setstate__(self, state):
        import tempfile
        from pathlib import Path

        checkpoint = state.pop("_checkpoint", None)
        steps = state.get("n_steps_", 0)
        self.__dict__.update(state)
        if checkpoint is not None:
            self._build(*self._build_args)
            with tempfile.TemporaryDirectory() as d:
                path = Path(d) / "state.npz"
                path.write_bytes(checkpoint)
                self.network_.load(path)
            self.n_steps_ = steps

    def _batch_size(self, n_samples):
        """Samples per mini-batch: ``batch_size``, or ``n_samples`` where the data that build the network are fewer."""
        return min(check_int("batch_size", self.batch_size, low=1), n_samples)

    def _draw_seed(self):
        """The network's seed, drawn from ``random_state``."""
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _adopt(self, circuit):
        """Run ``circuit``'s network from now on, from step 0."""
        self._circuit = circuit
        self.network_ = circuit.network
        self.n_steps_ = 0

    def _fit_minibatches(self, X, fresh):
        """``fit`` (``fresh``: a new network, ``n_epochs`` passes) or ``partial_fit`` (one pass; the first builds)."""
        first = fresh or not hasattr(self, "network_")
        data = self._training_data(X, reset=first)
        if first:
            self._start(*data)
        for _ in range(self.n_epochs if fresh else 1):
            self._steps(*data)
        self._after_learning(*data)
        return self

    def _after_learning(self, *data):
        """Record what the learned ``data`` say beyond the atoms (nothing, unless a subclass keeps more)."""

    def _run_minibatches(self, *feeds):
        """Run one network step per mini-batch: each ``(feed, data)`` serves its rows of ``data`` to the network.

        The arrays in ``feeds`` have the same shape ``(n_samples, n_features)``.
        """
        import warnings

        from neurosim.coding.encoders import NonConvergenceWarning

        net = self.network_
        batch = net.batch
        n, n_features = feeds[0][1].shape
        n_batches = -(-n // batch)
        idx = np.arange(n_batches * batch) % n  # the last mini-batch is completed from the first samples
        for feed, data in feeds:
            feed.data = np.ascontiguousarray(data[idx].reshape(n_batches, batch, n_features))
            feed.t0 = net.t
        with warnings.catch_warnings():
            # a coder may stop short of its target for some samples (NODL's Alg. 2 may not hit the count
            # exactly: their codes have fewer nonzeros); learning goes on with those codes
            warnings.simplefilter("ignore", NonConvergenceWarning)
            net.run(n_batches)
        self.n_steps_ += n_batches

    def _atoms(self):
        """The atoms (rows) that codes combine: the learned ``components_``."""
        check_is_fitted(self)
        return self.components_

    def _decode(self, X, dtype):
        """``inverse_transform``: the codes ``X`` (checked, as ``dtype``) times the atoms, ``X @ self._atoms()``."""
        check_is_fitted(self)
        codes = check_array(X, dtype=dtype)
        if codes.shape[1] != self.components_.shape[0]:
            raise ValueError(f"codes must have n_components_ = {self.components_.shape[0]} columns; "
                             f"got {codes.shape[1]}")
        return codes @ self._atoms()

    @property
    def _n_features_out(self):
        return self.components_.shape[0]


class NeurogenesisDictionaryLearner(_NetworkDictionaryLearner, _BaseSparseCoding, BaseEstimator):
    """Online dictionary learning whose atoms are born and die (Garg et al. 2017, paper 000).

    Runs :func:`neurosim.models.neurogenesis.build_network` -- the paper's
    NODL, NODL+, NODL-, ODL or ODL* as one neurosim network -- on the data,
    one mini-batch per step. ``n_components_`` changes as atoms are born
    (when the batch's mean Pearson correlation between samples and their
    reconstructions is at most ``birth_threshold``) and die (atoms zeroed by
    the group-sparsity shrink); ``event_log_`` says which atom appeared or
    disappeared at which mini-batch.

    Parameters
    ----------
    n_components : int, default=None
        Initial number of atoms; default ``min(n_features, 50)`` (or the
        rows of ``dict_init``).
    variant : {"NODL", "NODL+", "NODL-", "ODL", "ODL*"}, default="NODL"
        The paper's algorithm: neurogenesis with group sparsity (NODL),
        births only (NODL+), deaths only (NODL-), or fixed-size online
        dictionary learning (ODL; ODL* with the final size of a NODL run).
    n_nonzero_coefs : int >= 1, default=None
        Nonzeros per code (the paper's ``beta_c``); default
        ``min(5, n_components, n_features)``. Codes have at most
        ``min(n_components, n_features)`` independent nonzeros, so a larger
        value is used as that minimum (``n_nonzero_coefs_``), as the codes
        of a dictionary that lost atoms to deaths already have fewer
        nonzeros than ``beta_c``.
    element_nonzeros : int, default=0
        Nonzeros per atom (``beta_d``); 0 for dense atoms.
    birth_threshold : float in (0, 1], default=0.9
        ``gamma``: births when the batch's mean correlation is at most this.
    max_births : int >= 0, default=50
        ``c_k``: at most this many atoms born per mini-batch,
        ``round((1 - p) c_k)`` for mean correlation ``p``.
    group_alpha : float >= 0, default=0.03
        ``lambda_g``, the group-sparsity weight (NODL and NODL- only).
    accuracy : {"pearson", "spearman"}, default="pearson"
        Correlation that measures a batch's reconstruction accuracy ``p``.
    max_components : int, default=None
        Most atoms alive at once (births are cut to fit).
    batch_size : int, default=200
        Samples per mini-batch (one network step). ``partial_fit`` and
        ``fit`` cut X into consecutive mini-batches; a last, shorter one
        is completed with the first samples of X. With fewer samples than
        ``batch_size`` in the first call, the mini-batch is that size.
    n_epochs : int >= 1, default=1
        Passes of ``fit`` over X.
    tol : float > 0 or None, default=1e-6
        The dictionary update sweeps until the relative change is below
        ``tol``; None: exactly ``max_sweeps`` sweeps per mini-batch.
    max_sweeps : int >= 1, default=100
        Most dictionary sweeps per mini-batch.
    normalize : {"none", "unit", "center_unit"}, default="none"
        The atoms codes are computed against: ``components_`` as learned
        (the printed Alg. 1), scaled to unit norm, or centred and scaled
        (the authors' code, which reproduces the paper's image results; see
        :func:`neurosim.models.neurogenesis.build_network`). ``transform``
        and ``inverse_transform`` use the same atoms
        (``coding_components_``).
    birth_rounding : {"nearest", "floor"}, default="nearest"
        ``round((1 - p) c_k)`` half to even, or down (the authors' code).
    unused : {"keep", "zero"}, default="keep"
        Atoms no code has used yet: kept, or zeroed at once (the authors'
        code).
    newborn : {"dense", "sparse", "uniform", "data"}, default="dense"
        New atoms: random Gaussian unit-norm, random with
        ``element_nonzeros`` nonzeros, the authors' centred uniform, or the
        mini-batch's worst-reconstructed samples.
    dict_init : array of shape (n_components, n_features) or callable, default=None
        The initial atoms (as scikit-learn's ``dict_init``), or
        ``dict_init(rng, shape)`` returning them; default: drawn as newborns.
    random_state : int, RandomState or None
        Seeds the initial and newborn atoms.

    Notes
    -----
    Parameters are checked by ``fit`` / the first ``partial_fit``: a wrong
    type raises TypeError and a value out of range ValueError, naming the
    parameter (as spelled here) and its range. Input with NaN or Inf is
    refused before any mini-batch is learned, so a refused ``partial_fit``
    leaves the fitted state as it was. A constant sample has no defined
    Pearson correlation and counts as 0 (not represented), which pushes
    towards births. As scikit-learn's ``MiniBatchDictionaryLearning``,
    float32 data gives float32 ``components_`` (the dtype of the first
    ``fit``/``partial_fit``) and ``transform`` returns the dtype of its
    input (float32 or float64); the network learns in float64.

    Attributes
    ----------
    components_ : ndarray of shape (``n_components_``, n_features)
        The atoms alive now as learned (rows, ``||d_j|| <= 1``; the paper's
        ``D``).
    coding_components_ : ndarray of shape (``n_components_``, n_features)
        The atoms codes are computed against: ``components_`` normalised as
        ``normalize`` says (the same array values under ``"none"``).
    n_components_ : int
    n_nonzero_coefs_ : int
        The nonzeros per code in use (``n_nonzero_coefs`` or its default,
        at most ``min(n_components, n_features)``).
    unit_ids_ : ndarray of int
        The stable id of each row of ``components_`` (never reused).
    event_log_ : dict
        ``{"step", "kind", "population", "unit"}`` lists: every birth and death.
    n_steps_ : int
        Mini-batches seen.
    network_ : neurosim.Network
        The network that learned them.

    Examples
    --------
    Rank-3 data in 12 dimensions coded with 2 nonzeros: 4 initial atoms
    reconstruct it poorly, so atoms are born:

    >>> import numpy as np
    >>> from neurosim.estimators import NeurogenesisDictionaryLearner
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)) @ rng.standard_normal((3, 12))
    >>> est = NeurogenesisDictionaryLearner(n_components=4, batch_size=50, n_nonzero_coefs=2,
    ...                                     random_state=0).fit(X)
    >>> est.n_components_ > 4, "birth" in est.event_log_["kind"]
    (True, True)
    >>> codes = est.transform(X)
    >>> codes.shape == (200, est.n_components_), int((codes != 0).sum(axis=1).max())
    (True, 2)
    >>> est.score(X) > 0.9  # mean Pearson correlation of samples and reconstructions
    True
    """

    _TRANSFORM = {"transform_algorithm": "feature_sign", "transform_alpha": None, "transform_n_nonzero_coefs": None,
                  "transform_max_iter": 1000, "positive_code": False, "split_sign": False}

    def __init__(self, n_components=None, *, variant="NODL", n_nonzero_coefs=None, element_nonzeros=0,
                 birth_threshold=0.9, max_births=50, group_alpha=0.03, accuracy="pearson", max_components=None,
                 batch_size=200, n_epochs=1, tol=1e-6, max_sweeps=100, normalize="none", birth_rounding="nearest",
                 unused="keep", newborn="dense", dict_init=None, random_state=None):
        _keep_params(self, locals())

    def __getattr__(self, name):
        # transform-time settings of the shared base class, fixed here: codes use the learning encoder
        if name in NeurogenesisDictionaryLearner._TRANSFORM:
            return NeurogenesisDictionaryLearner._TRANSFORM[name]
        raise AttributeError(name)

    def _build(self, n_features, n_samples, seed=None):
        from neurosim.models.neurogenesis import VARIANTS, build_network

        k = self.n_components
        if k is None and self.dict_init is not None and not callable(self.dict_init):
            k = int(np.shape(self.dict_init)[0])  # as scikit-learn: the initial atoms say how many
        k = min(n_features, 50) if k is None else check_int("n_components", k, low=1)
        limit = min(k, n_features)
        beta_c = self.n_nonzero_coefs
        if beta_c is None:
            beta_c = min(5, limit)
        else:
            # at most min(n_components, n_features) independent nonzeros exist (issue 38: refusing more failed
            # scikit-learn's checks on 1-feature data and with n_components=1, where the count is simply reached)
            beta_c = min(check_int("n_nonzero_coefs", beta_c, low=1), limit)
        batch = self._batch_size(n_samples)
        check_int("n_epochs", self.n_epochs, low=1)
        # checked here under the estimator's own names (build_network would name the paper's symbols)
        check_choice("variant", self.variant, set(VARIANTS))
        check_int("element_nonzeros", self.element_nonzeros, low=0, high=n_features)
        check_float("birth_threshold", self.birth_threshold, low=0.0, high=1.0, low_open=True)
        check_int("max_births", self.max_births, low=0)
        check_float("group_alpha", self.group_alpha, low=0.0)
        check_choice("accuracy", self.accuracy, {"pearson", "spearman"})
        if self.max_components is not None:
            check_int("max_components", self.max_components, low=k)
        if self.tol is not None:
            check_float("tol", self.tol, low=0.0, low_open=True)
        check_int("max_sweeps", self.max_sweeps, low=1)
        from neurosim.coding.normalization import NORMALIZATIONS
        from neurosim.models.neurogenesis import BIRTH_ROUNDING, NEWBORN

        check_choice("normalize", self.normalize, set(NORMALIZATIONS))
        check_choice("birth_rounding", self.birth_rounding, set(BIRTH_ROUNDING))
        check_choice("unused", self.unused, {"keep", "zero"})
        check_choice("newborn", self.newborn, set(NEWBORN))
        init = self.dict_init
        if init is not None and not callable(init):
            init = check_array(init, dtype=np.float64, input_name="dict_init")
            if init.shape != (k, n_features):
                raise ValueError(f"dict_init must have shape (n_components, n_features) = ({k}, {n_features}); "
                                 f"got {init.shape}")
        if seed is None:
            seed = self._draw_seed()
        self._build_args = (n_features, batch, seed)
        self._feed = _FeedStream(n_features)
        circuit = build_network(
            self._feed.stream, k, self.variant, batch=batch, beta_c=beta_c, beta_d=self.element_nonzeros,
            gamma=self.birth_threshold, c_k=self.max_births, lambda_g=self.group_alpha, metric=self.accuracy,
            max_size=self.max_components, tol=self.tol, max_sweeps=self.max_sweeps, seed=seed, record_every=10**9,
            normalize=self.normalize, birth_rounding=self.birth_rounding, unused=self.unused, newborn=self.newborn,
            init=init)
        self._beta_c = self.n_nonzero_coefs_ = beta_c
        self._adopt(circuit)

    def _training_data(self, X, reset):
        X = check_not_too_large("X", validate_data(self, X, dtype=_FLOATS, reset=reset))
        if reset:
            self._fit_dtype = X.dtype  # the first call's, as scikit-learn's partial_fit keeps its components' dtype
        return (X.astype(np.float64, copy=False),)

    def _start(self, X):
        self._build(X.shape[1], X.shape[0])

    def _steps(self, X):
        self._run_minibatches((self._feed, X))
        self._publish()

    def _publish(self):
        c = self._circuit
        dtype = getattr(self, "_fit_dtype", np.float64)
        weights = c.dictionary.weights
        self.components_ = weights.astype(dtype)
        self.coding_components_ = normalized_atoms(weights, self.normalize).astype(dtype)
        self.n_components_ = int(self.components_.shape[0])
        self.unit_ids_ = c.code.ids.copy()
        self.event_log_ = c.network.event_log.to_dict()

    def _atoms(self):
        """The atoms codes are computed against (and decode with): ``coding_components_``."""
        check_is_fitted(self)
        return self.coding_components_

    @_doc
    def transform(self, X: ArrayLike) -> np.ndarray:
        """Codes of X with ``n_nonzero_coefs`` nonzeros each (Alg. 2's lambda per sample).

        {params_X}

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
            Codes against ``coding_components_``; 0 for all-zero atoms.
        """
        import warnings

        from neurosim.coding.encoders import NonConvergenceWarning, lambda_for_count

        check_is_fitted(self)
        X = check_not_too_large("X", validate_data(self, X, reset=False, dtype=_FLOATS))
        dtype = X.dtype
        X = X.astype(np.float64, copy=False)
        # the network's float64 atoms, not float32 components_ (the codes of a float32 fit are those of its network)
        D = normalized_atoms(self._circuit.dictionary.weights, self.normalize)
        active = np.flatnonzero(np.any(D != 0.0, axis=1))
        out = np.zeros((X.shape[0], D.shape[0]))
        if active.size:
            k = min(self._beta_c, active.size, X.shape[1])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonConvergenceWarning)
                _, codes = lambda_for_count(X, D[active], k, return_codes=True)
            out[:, active] = np.asarray(codes).reshape(X.shape[0], active.size)
        return out.astype(dtype, copy=False)

    @_doc
    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """``X @ coding_components_`` (``X @ components_`` under ``normalize="none"``).

        {params_codes}

        {returns_reconstructions}
        """
        return self._decode(X, dtype=_FLOATS)  # float32 codes of a float32 fit stay float32 (NumPy's promotion)

    @_doc
    def score(self, X: ArrayLike, y: object = None) -> float:
        """Mean Pearson correlation between the samples of X and their reconstructions (the paper's accuracy).

        {params_X_y}

        Returns
        -------
        float
            In ``[-1, 1]``; 0 for a sample or reconstruction that is constant.
        """
        X = check_not_too_large("X", validate_data(self, X, reset=False, dtype=np.float64))
        R = self.inverse_transform(self.transform(X)).astype(np.float64, copy=False)
        Xc, Rc = X - X.mean(axis=1, keepdims=True), R - R.mean(axis=1, keepdims=True)
        xx, rr = (Xc * Xc).sum(axis=1), (Rc * Rc).sum(axis=1)
        with np.errstate(over="ignore"):
            den = np.sqrt(xx * rr)
        # the product of two squared norms overflows for |X| beyond ~1e77 (each alone is finite, X having
        # been checked): the product of the roots then (the same value up to rounding; a Pearson r of 0
        # from an infinite denominator would be wrong)
        den = np.where(np.isfinite(den), den, np.sqrt(xx) * np.sqrt(rr))
        r = np.where(den > 0, (Xc * Rc).sum(axis=1) / np.where(den > 0, den, 1.0), 0.0)
        return float(r.mean())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]  # as MiniBatchDictionaryLearning
        return tags


class UnobservedFeatureWarning(UserWarning):
    """A feature was never observed in the data an estimator learned from: nothing is known about it."""


class OnlineStructuredDictionaryLearner(_NetworkDictionaryLearner, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                                        BaseEstimator):
    """Online group-structured dictionary learning from data with missing values (Szabó et al. 2011, paper 003).

    Runs :func:`neurosim.models.osdl.build_network` on the data, one
    mini-batch per step. Missing values are ``NaN`` in ``X`` (as in
    scikit-learn's imputers): each sample is coded on its observed entries
    (the structured lasso ``0.5 ||x_O - D_O alpha||^2 + alpha Omega(alpha)``,
    supplement Table 2) and only observed entries enter the dictionary's
    statistics (Eqs. 19-25), with the forgetting factor ``(1 - 1/t)^forget``.

    Parameters
    ----------
    n_components : int, default=None
        Number of atoms; default ``n_features``. Must match ``groups``.
    groups : GroupStructure, list of index sets, networkx graph or None
        Group structure of the codes (``None``: the lasso).
    alpha : float >= 0, default=0.1
        ``kappa``, the weight of ``Omega``.
    eta : float in (0, 1], default=1.0
        Exponent of ``Omega`` (1: convex).
    batch_size : int, default=32
        Samples per mini-batch (one network step).
    forget : float >= 0, default=0.0
        ``rho``: mini-batch ``i`` weighs ``(i / t)^rho`` at mini-batch ``t``.
    e_form : {"online", "exact"}, default="online"
        How the statistics ``e_j`` are kept: the online recursion of the
        paper, or exact per-coordinate code statistics.
    positive_dict : bool, default=False
        Atoms in the non-negative part of the unit ball.
    n_sweeps : int, default=1
        Dictionary sweeps per mini-batch (``T_D``).
    max_iter : int, default=50
        Table 2's iteration cap ``T``.
    tol : float, default=1e-6
        Table 2's early stop on the code's relative change.
    n_epochs : int, default=1
        Passes of ``fit`` over X.
    random_state : int, RandomState or None
        Seeds the initial atoms (random samples of the first data, missing
        entries set to 0, scaled to unit norm; an all-zero sample gives the
        constant unit vector).

    Notes
    -----
    An ``X`` with no observed entry is refused. A feature never observed in
    the data fitted so far cannot be learned (every atom keeps 0 there):
    ``fit``/``partial_fit`` warn :class:`UnobservedFeatureWarning` naming
    it, and ``impute`` leaves its missing entries NaN (with the same
    warning) rather than filling a made-up 0. The iteration count
    ``max_iter`` is Table 2's ``T``, which includes its ridge start: the
    paper's ``T_alpha`` is ``T - 1``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    n_observed_ : ndarray of int, shape (n_features,)
        How often each feature was observed in the data fitted so far.
    n_steps_ : int
    network_ : neurosim.Network
    """

    def __init__(self, n_components=None, *, groups=None, alpha=0.1, eta=1.0, batch_size=32, forget=0.0,
                 e_form="online", positive_dict=False, n_sweeps=1, max_iter=50, tol=1e-6, n_epochs=1,
                 random_state=None):
        _keep_params(self, locals())

    _doc_fields = {"data": "X (NaN = missing)", "samples": "Samples, one per row; NaN marks a missing entry."}

    def _validate(self, X: Any, reset: bool, fitting: bool = False) -> tuple[np.ndarray, np.ndarray]:
        # infinity is refused by validate_data; NaN marks a missing entry
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=reset)
        observed = ~np.isnan(X)
        if fitting and not observed.any():
            raise ValueError(f"X has no observed entry (all {X.size} values are NaN): nothing to learn from")
        # the check every estimator makes (the structured coder made it too, but not before fit ran)
        return check_not_too_large("X", np.where(observed, X, 0.0)), observed.astype(np.float64)

    def _training_data(self, X, reset):
        return self._validate(X, reset=reset, fitting=True)

    def _build(self, n_features, batch, seed, init=None):
        from neurosim.models.osdl import build_network

        k = n_features if self.n_components is None else check_int("n_components", self.n_components, low=1)
        check_float("alpha", self.alpha, low=0.0)
        check_float("eta", self.eta, low=0.0, high=1.0, low_open=True)
        check_float("forget", self.forget, low=0.0)
        check_choice("e_form", self.e_form, {"online", "exact"})
        check_bool("positive_dict", self.positive_dict)
        check_int("n_sweeps", self.n_sweeps, low=1)
        check_int("max_iter", self.max_iter, low=1)
        check_float("tol", self.tol, low=0.0)
        check_int("n_epochs", self.n_epochs, low=1)
        self._build_args = (n_features, batch, seed)
        self._feed, self._feed_mask = _FeedStream(n_features), _FeedStream(n_features)
        circuit = build_network(
            self._feed.stream, k, groups=self.groups, kappa=self.alpha, eta=self.eta, masks=self._feed_mask.stream,
            batch=batch, rho=self.forget, e_form=self.e_form, constraint="nonneg_l2" if self.positive_dict else "l2",
            n_sweeps=self.n_sweeps, code_iter=self.max_iter, code_tol=self.tol, seed=seed)
        if init is not None:
            # set after building, so that a rebuilt network (unpickling) has the same parameters as this one
            from neurosim.models.osdl import DataElements

            circuit.network.validate()
            circuit.dictionary.weights = DataElements(init).rows
        self._adopt(circuit)
        self.n_components_ = k

    def _start(self, X, M):
        batch = self._batch_size(X.shape[0])
        seed = self._draw_seed()
        k = X.shape[1] if self.n_components is None else check_int("n_components", self.n_components, low=1)
        rows = np.random.default_rng(seed).choice(X.shape[0], k, replace=X.shape[0] < k)
        init = X[rows]
        # at unit norm, as the network's random atoms start (issue 38): DataElements only scales rows down into
        # the ball, and from rows of norm 0.01 Table 3's updates shrank the atoms further, to 0 for data at 1e-4.
        # Divided by their largest entry first, so that norms of rows of 1e-200 neither underflow nor overflow.
        big = np.abs(init).max(axis=1, keepdims=True)
        init = np.divide(init, big, out=np.zeros_like(init), where=big > 0)
        norms = np.linalg.norm(init, axis=1, keepdims=True)
        init = np.divide(init, norms, out=np.zeros_like(init), where=norms > 0)  # a zero row: DataElements' constant
        self._build(X.shape[1], batch, seed, init=init)
        self.n_observed_ = np.zeros(X.shape[1], dtype=np.int64)

    def _steps(self, X, M):
        self._run_minibatches((self._feed, X), (self._feed_mask, M))
        self.components_ = self._circuit.dictionary.weights.copy()

    def _after_learning(self, X, M):
        """Count how often each feature was observed, and warn about those never observed."""
        self.n_observed_ = self.n_observed_ + M.sum(axis=0).astype(np.int64)
        # stacklevel 4 (past _fit_minibatches): attributed to fit's or partial_fit's own line, so that the default
        # warnings filter shows it once for each of them
        self._warn_unobserved("the atoms are 0 there (nothing was learned about them)", stacklevel=4)

    def _warn_unobserved(self, consequence, stacklevel=3):
        import warnings

        never = np.flatnonzero(self.n_observed_ == 0)
        if never.size:
            warnings.warn(f"{never.size} feature(s) never observed in the data fitted so far (indices "
                          f"{never[:10].tolist()}{' ...' if never.size > 10 else ''}): {consequence}",
                          UnobservedFeatureWarning, stacklevel=stacklevel)
        return never

    @_doc(samples=_SAMPLES_MISSING)
    def transform(self, X: ArrayLike) -> np.ndarray:
        """Codes of X on its observed entries (NaN = missing).

        {params_X}

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
            The structured codes.
        """
        check_is_fitted(self)
        X, M = self._validate(X, reset=False)
        return self._circuit.encode(X, M)

    @_doc
    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """``X @ components_``: the reconstruction of every entry.

        {params_codes}

        {returns_reconstructions}
        """
        return self._decode(X, dtype=np.float64)

    @_doc(samples=_SAMPLES_MISSING)
    def impute(self, X: ArrayLike) -> np.ndarray:
        """X with every missing (NaN) entry replaced by its reconstruction from the observed ones.

        Entries of a feature never observed while fitting stay NaN (with an
        :class:`UnobservedFeatureWarning`): no atom has learned anything there.

        {params_X}

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            ``X`` with its missing entries filled; observed entries unchanged.
        """
        check_is_fitted(self)
        Xv = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        out = np.where(np.isnan(Xv), self.inverse_transform(self.transform(Xv)), Xv)
        never = np.flatnonzero(self.n_observed_ == 0)
        if never.size and np.isnan(Xv[:, never]).any():
            self._warn_unobserved("their missing entries cannot be imputed and stay NaN")
            out[:, never] = np.where(np.isnan(Xv[:, never]), np.nan, out[:, never])
        return out

    @_doc(samples=_SAMPLES_MISSING)
    def score(self, X: ArrayLike, y: object = None) -> float:
        """Minus the mean per-sample objective on the observed entries (higher is better).

        {params_X_y}

        Returns
        -------
        float
            ``-mean_i (0.5 ||x_O - D_O a||^2 + alpha Omega(a))``, ``<= 0``.
        """
        from neurosim.coding.structured import structured_objective

        check_is_fitted(self)
        Xz, M = self._validate(X, reset=False)
        codes = self._circuit.encode(Xz, M)
        return -float(np.mean(structured_objective(Xz, self.components_, codes, self._circuit.groups, self.alpha,
                                                   eta=self.eta, observed=M)))
