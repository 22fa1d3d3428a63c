"""Standard local learning rules: Sanger, Oja's subspace rule, BCM, Földiák, delta.

Every rule here is made by :func:`~neurosim.rules.local_rule` from
module-level functions with explicit loops, which numba compiles as they are
(the compiled path) and which run as plain Python on NumPy values (the
per-step reference path). Each class is available under its function's name
and a capitalised alias (``bcm is BCM``); ``BCM.kernel`` is the compiled
function, ``BCM.kernel.py_func`` the plain one. A batch averages each update
over its samples (the minibatch form of the same expected update).

* :class:`BCM` and :class:`Foldiak` are local to each synapse: per-synapse
  functions ``f(w, post, pre, *post_variables, *params)`` returning the new
  weight (``post``, ``pre`` the two units' activities over the batch), which
  the library maps over the synapses of dense and sparse projections alike
  (BCM's sliding threshold is its per-unit update, run after the synapses).
* :class:`Sanger`, :class:`OjaSubspace` and :class:`Delta` sum down a column
  of the weights (``sum_k W_kj y_k``). On dense projections they are
  whole-matrix functions on ``weights`` ``(n_post, n_pre)``, updated in
  place, ``post`` ``(batch, n_post)`` and ``pre`` ``(batch, n_pre)``; on
  sparse ones, the kernels of :mod:`neurosim.kernels.sparse` that walk each
  column's stored synapses (``csr_sanger``, ``csr_subspace``, serial and
  row-parallel) and their NumPy references.

Notation below: ``x`` the pre activity, ``y`` the post activity, ``W`` the
weights, ``E_b`` the mean over the batch, ``LT`` the lower triangle including
the diagonal.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import sparse as ks
from neurosim.params import Bool, Float
from neurosim.rules.local import LocalRule, local_rule
from neurosim.synapse_index import SynapseIndex
from neurosim.synapses import csr_refs

__all__ = ["Sanger", "OjaSubspace", "BCM", "Foldiak", "Delta", "sanger", "oja_subspace", "bcm", "foldiak", "delta"]


def _rate():
    return Float(0.01, low=0.0, high=1.0, low_open=True, doc="learning rate")


class _ColumnSums(LocalRule):
    """The sparse path of a whole-matrix rule whose update sums down the columns (Sanger, OjaSubspace, Delta).

    Dense projections run the class's whole-matrix ``kernel``; sparse ones
    the serial or row-parallel kernel of :attr:`sparse_kernels`, with a
    workspace ``(n_pre, batch)`` and the transposed synapse index, and
    :meth:`_sparse_numpy` as their NumPy reference.
    """

    sparse_projections = True
    #: (serial, row-parallel) kernels of :mod:`neurosim.kernels.sparse` for sparse projections
    sparse_kernels: tuple = ()

    @staticmethod
    def _sparse_numpy(w: np.ndarray, index: SynapseIndex, y: np.ndarray, x: np.ndarray, scale: float) -> None:
        raise NotImplementedError

    def _sparse_structure(self) -> tuple:
        """The index arrays the sparse kernels take before the activities."""
        p = self.projection
        return tuple(ArrayRef(lambda k=k: p.synapse_index.by_pre()[k], f"{p.name}.{name}")
                     for k, name in enumerate(("pre_indptr", "pre_synapses", "pre_post")))

    def _work(self) -> np.ndarray:
        p = self.projection
        shape = (p.pre.size, p.pre.activity.shape[0])
        ws = self._workspaces.get("columns")
        if ws is None or ws.shape != shape:
            ws = self._workspaces["columns"] = np.zeros(shape)
        return ws

    def update_numpy(self) -> None:
        p = self.projection
        if not p.sparse:
            super().update_numpy()
            return
        y = p.post.activity
        rate = self.value("rate", p.network.t if p.network is not None else None)
        self._sparse_numpy(p.weights, p.synapse_index, y, p.pre.activity, rate / y.shape[0])

    def kernel_calls(self) -> list[KernelCall]:
        p = self.projection
        if not p.sparse:
            return super().kernel_calls()
        w, post, pre = self._refs()
        serial, rows = self.sparse_kernels
        work = ArrayRef(self._work, f"{p.name}.rule.columns")
        return [KernelCall(rows if self._use_rows() else serial,
                           (w, *self._sparse_structure(), post, pre, work, self.ref("rate")), label=f"{p.name}.rule",
                           finite=f"{p.name}.weights")]


def _batch_sum(terms: np.ndarray) -> np.ndarray:
    """``sum_b terms[b]`` added in order of ``b`` from 0.0, as the kernels add (NumPy's sum may pair them)."""
    acc = np.zeros(terms.shape[1:])
    for t in terms:
        acc += t
    return acc


class _SangerColumns(_ColumnSums):
    sparse_kernels = (ks.csr_sanger, ks.csr_sanger_rows)

    @staticmethod
    def _sparse_numpy(w, index, y, x, scale):
        """:func:`~neurosim.kernels.sparse.csr_sanger` in NumPy: running sums down each column, in its order."""
        ptr, syn, post = index.by_pre()
        pre = np.repeat(np.arange(index.n_pre), np.diff(ptr))
        terms = y[:, post] * w[syn]
        prefix = np.empty_like(terms)
        for j in np.flatnonzero(np.diff(ptr)):
            np.cumsum(terms[:, ptr[j]:ptr[j + 1]], axis=1, out=prefix[:, ptr[j]:ptr[j + 1]])
        yi = y[:, post]
        w[syn] = w[syn] + scale * (_batch_sum(yi * x[:, pre]) - _batch_sum(yi * prefix))


class _SubspaceColumns(_ColumnSums):
    sparse_kernels = (ks.csr_subspace, ks.csr_subspace_rows)

    def _sparse_structure(self) -> tuple:
        return csr_refs(self.projection)[:2] + super()._sparse_structure()

    @staticmethod
    def _sparse_numpy(w, index, y, x, scale):
        """:func:`~neurosim.kernels.sparse.csr_subspace` in NumPy: residuals subtracted synapse by synapse, in order."""
        post, pre = index.pairs()
        res = x.copy()
        for b in range(x.shape[0]):
            np.subtract.at(res[b], pre, w * y[b, post])  # unbuffered, in synapse order: the kernel's order
        w += scale * _batch_sum(y[:, post] * res[:, pre])


@local_rule(params={"rate": _rate()}, name="Sanger", base=_SangerColumns)
def sanger(weights, post, pre, rate):
    """Sanger's generalized Hebbian algorithm (GHA).

    .. math:: \\Delta W = \\eta\\, E_b\\left[y x^T - \\mathrm{LT}(y y^T)\\, W\\right]

    i.e. ``dW_ij = rate * E_b y_i (x_j - sum_{k <= i} y_k W_kj)``: unit ``i``
    learns by Oja's rule on the input with the projections onto units
    ``0 .. i-1`` removed. With linear units ``y = W x`` on zero-mean input
    of covariance ``C``, row ``i`` of ``W`` converges to the ``i``-th
    eigenvector of ``C`` (eigenvalues in decreasing order, sign arbitrary),
    unit norm: the rows are the ordered principal components. With a
    constant rate the rows fluctuate about them by an amount that shrinks
    with ``rate / batch``.

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate ``eta``.

    References
    ----------
    T. D. Sanger, "Optimal unsupervised learning in a single-layer linear
    feedforward neural network", Neural Networks 2(6):459-473, 1989.
    """
    batch, n_post = post.shape
    n_pre = pre.shape[1]
    scale = rate / batch
    c = np.zeros(n_post)
    # Row i needs the old rows 0..i only (lower triangle), so updating the
    # rows from the last to the first works in place.
    for i in range(n_post - 1, -1, -1):
        for k in range(i + 1):
            acc = 0.0
            for b in range(batch):
                acc += post[b, i] * post[b, k]
            c[k] = acc
        for j in range(n_pre):
            hebb = 0.0
            for b in range(batch):
                hebb += post[b, i] * pre[b, j]
            decay = 0.0
            for k in range(i + 1):
                decay += c[k] * weights[k, j]
            weights[i, j] += scale * (hebb - decay)


@register_jitable(inline="always")
def _residual_update(weights, post, pre, rate):
    """``W += rate E_b[y (x - W^T y)^T]``: the update of :class:`OjaSubspace` and :class:`Delta`.

    Plain Python on the rules' NumPy path; inlined into their compiled kernels (with their bounds checks).
    """
    batch, n_post = post.shape
    n_pre = pre.shape[1]
    scale = rate / batch
    # residuals x - W^T y with the old weights, then the rank-batch update
    res = np.empty((batch, n_pre))
    for b in range(batch):
        for j in range(n_pre):
            acc = pre[b, j]
            for k in range(n_post):
                acc -= weights[k, j] * post[b, k]
            res[b, j] = acc
    for i in range(n_post):
        for j in range(n_pre):
            acc = 0.0
            for b in range(batch):
                acc += post[b, i] * res[b, j]
            weights[i, j] += scale * acc


@local_rule(params={"rate": _rate()}, name="OjaSubspace", base=_SubspaceColumns)
def oja_subspace(weights, post, pre, rate):
    """Oja's subspace rule.

    .. math:: \\Delta W = \\eta\\, E_b\\left[y x^T - y y^T W\\right]
              = \\eta\\, E_b\\left[y\\, (x - W^T y)^T\\right]

    The symmetric form of :class:`Sanger` (the full ``y y^T`` instead of its
    lower triangle). With linear units ``y = W x`` on zero-mean input, the
    ``k`` rows of ``W`` converge to an orthonormal basis of the principal
    ``k``-dimensional subspace of the input covariance: ``W W^T -> I`` and
    ``W^T W`` tends to the projector onto the leading eigenvectors, but the
    rows themselves are an arbitrary rotation of those eigenvectors. (Its
    diagonal part alone, ``y_i y_i W_ij``, is Oja's single-unit rule,
    :class:`~neurosim.rules.Oja`, whose units all learn the first component.)

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate ``eta``.

    References
    ----------
    E. Oja, "A simplified neuron model as a principal component analyzer",
    J. Math. Biology 15:267-273, 1982.
    E. Oja, "Neural networks, principal components, and subspaces",
    Int. J. Neural Systems 1(1):61-68, 1989.
    """
    _residual_update(weights, post, pre, rate)


def _bcm_threshold(post, theta, rate, tau_rate, nonnegative):
    """BCM's per-unit update, after the synapses: ``theta_i <- theta_i + tau (E_b[y_i^2] - theta_i)``."""
    batch = post.shape[0]
    for i in range(theta.shape[0]):
        yy = 0.0
        for b in range(batch):
            yy += post[b, i] * post[b, i]
        th = theta[i]
        theta[i] = th + (yy / batch - th) * tau_rate


@local_rule(params={"rate": _rate(),
                    "tau_rate": Float(0.1, low=0.0, high=1.0, low_open=True,
                                      doc="rate of the threshold's running average"),
                    "nonnegative": Bool(False, doc="clip the weights at zero")},
            post_variables={"theta": 1.0}, name="BCM", per_synapse=True, unit_update=_bcm_threshold)
def bcm(w, post, pre, theta, rate, tau_rate, nonnegative):
    """Bienenstock-Cooper-Munro rule with a sliding threshold.

    .. math::

        \\Delta W_{ij} &= \\eta\\, E_b\\left[y_i (y_i - \\theta_i)\\, x_j\\right] \\\\
        \\theta_i &\\leftarrow \\theta_i + \\tau\\, \\left(E_b[y_i^2] - \\theta_i\\right)

    The weights move with the threshold ``theta`` of the step before (the
    threshold is an average over past activity), then ``theta`` takes this
    step's ``E_b y_i^2``: it is the running average of ``y_i^2`` with time
    constant ``1 / tau_rate`` steps. The quadratic dependence of the threshold
    on the activity stabilises the weights of a linear unit without any
    bound (Intrator & Cooper 1992); the stable fixed points are the
    selective ones, where the unit responds to one of a set of linearly
    independent input patterns and not to the others. ``theta`` must adapt
    faster than the weights, or the weights oscillate.

    ``nonnegative`` clips the weights at zero after each update, the
    excitatory-synapse constraint used in many BCM simulations; it is off by
    default, the unbounded rule of the analysis above.

    The threshold is the per-unit variable ``theta`` of the post population
    (initial value 1.0, also for newborn units).

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate ``eta``.
    tau_rate : float in (0, 1], default=0.1
        Rate ``tau`` of the threshold's running average.
    nonnegative : bool, default=False
        Clip the weights at zero.

    References
    ----------
    E. L. Bienenstock, L. N. Cooper, P. W. Munro, "Theory for the
    development of neuron selectivity: orientation specificity and binocular
    interaction in visual cortex", J. Neuroscience 2(1):32-48, 1982.
    N. Intrator, L. N. Cooper, "Objective function formulation of the BCM
    theory of visual cortical plasticity", Neural Networks 5:3-17, 1992.
    """
    batch = post.shape[0]
    acc = 0.0
    for b in range(batch):
        yi = post[b]
        acc += yi * (yi - theta) * pre[b]
    v = w + rate / batch * acc
    if nonnegative and v < 0.0:
        v = 0.0
    return v


@local_rule(params={"rate": _rate(),
                    "p": Float(0.0, low=0.0, high=1.0, doc="target activity; p^2 is the target co-activation")},
            name="Foldiak", per_synapse=True)
def foldiak(w, post, pre, rate, p):
    """Földiák's anti-Hebbian rule for lateral (inhibitory) connections.

    .. math:: \\Delta W_{ij} = \\eta\\, E_b\\left[y_i y_j - p^2\\right], \\quad i \\ne j

    for a lateral projection with inhibitory sign (drive ``-W y``): a
    positive correlation between units ``i`` and ``j`` strengthens the
    inhibition between them, a negative one weakens it (or makes it
    excitatory; the weights are not bounded), until ``E[y_i y_j] = p^2``.
    Földiák (1990) uses ``p`` as the target probability of firing of binary
    units, so that their pairwise co-activation ``p^2`` is that of
    independent units; ``p = 0`` (the default) is the pure decorrelating
    form of Földiák (1989) for zero-mean linear units, whose fixed point is
    ``E[y_i y_j] = 0`` for ``i != j``. Földiák writes the rule for the signed
    weight ``w_ij = -W_ij``: ``dw_ij = -alpha (y_i y_j - p^2)``. The diagonal
    (self-inhibition) stays zero.

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate ``eta``.
    p : float in [0, 1], default=0.0
        Target activity; ``p^2`` is the target co-activation.

    References
    ----------
    P. Földiák, "Adaptive network for optimal linear feature extraction",
    Proc. IJCNN, 1:401-405, 1989.
    P. Földiák, "Forming sparse representations by local anti-Hebbian
    learning", Biological Cybernetics 64:165-170, 1990.
    """
    batch = post.shape[0]
    acc = 0.0
    for b in range(batch):
        acc += post[b] * pre[b]
    return w + rate / batch * (acc - batch * p * p)


@local_rule(params={"rate": _rate()}, name="Delta", base=_SubspaceColumns)
def delta(weights, post, pre, rate):
    """Delta rule: gradient descent on the reconstruction error of a dictionary.

    .. math:: \\Delta W = \\eta\\, E_b\\left[a\\, (x - W^T a)^T\\right]
              = -\\eta\\, \\nabla_W\\, E_b\\, \\tfrac12 \\lVert x - W^T a \\rVert^2

    for a projection from the input ``x`` (pre, ``n_features``) to a code
    population ``a`` (post, ``n_atoms``) whose weights are the dictionary,
    one atom per row, as :class:`~neurosim.SparseCode` reads it. Each
    synapse sees its atom's code ``a_i`` and the reconstruction error of its
    input feature, ``x_j - sum_k W_kj a_k``. On a fixed batch of inputs
    ``X`` (rows ``x``) with fixed codes ``A`` (rows ``a``) this is gradient
    descent on the least-squares objective ``0.5 ||X - A W||^2 / batch``: it
    decreases at every step for ``rate < 2 / lambda_max(A^T A / batch)`` and
    converges to the least-squares dictionary. On changing batches it is the
    stochastic gradient of the same objective. The update has the algebraic form of :class:`OjaSubspace`;
    what differs is the post activity: a code chosen by the dynamics (e.g.
    sparse coding), not ``W x``.

    Parameters
    ----------
    rate : float in (0, 1], default=0.01
        Learning rate ``eta``.

    References
    ----------
    B. Widrow, M. E. Hoff, "Adaptive switching circuits", IRE WESCON
    Convention Record 4:96-104, 1960.
    B. A. Olshausen, D. J. Field, "Emergence of simple-cell receptive field
    properties by learning a sparse code for natural images", Nature
    381:607-609, 1996.
    """
    _residual_update(weights, post, pre, rate)


Sanger = sanger
OjaSubspace = oja_subspace
BCM = bcm
Foldiak = foldiak
Delta = delta
