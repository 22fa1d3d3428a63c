"""Stochastic-gradient dictionary learning from selected examples (Tsuchida & Cottrell 2015, Alg. 1 step 4).

:class:`ExampleSGD` is the rule of a dictionary projection ``x -> code``
(atoms as rows of its weights, the paper's ``A-hat = W^T``) whose code
population runs a :class:`~neurosim.dynamics.sparse.SparseCode` encoder and
whose examples are chosen by an :class:`~neurosim.example_selector.ExampleSelector`.
In the plasticity phase it takes the ``n`` selected rows of the batch and
repeats ``passes`` times (the paper: 10):

(a) re-encode them with the code population's own encoder and the current
    dictionary,
(b) equalize the activations (Sec. 2.3):
    ``s_ij <- s_ij (mean_j' m_j' / m_j)^gamma``, ``m_j = sum_i s_ij``,
(c) ``A <- A - eta_t (A S_n - X_n) S_n^T / n`` (Eq. 8),
(d) normalise every atom to unit norm (projection onto ``C_A``).

``eta_t`` is a live parameter: give it a schedule for the paper's
``Theta(1/t + c)``, e.g. ``InverseTime(start, half_life, floor=c)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Workspace
from neurosim.kernels import example_sgd as k
from neurosim.params import Float, Int
from neurosim.rules.base import Rule

__all__ = ["ExampleSGD", "normalize_rows_numpy"]


def normalize_rows_numpy(W: np.ndarray) -> None:
    """In place: every nonzero finite row to unit norm, divided by its largest magnitude first (no overflow).

    Parameters
    ----------
    W : numpy.ndarray, shape (n, m)
        Rows to normalise; all-zero and non-finite rows are left as they are.
    """
    mx = np.abs(W).max(axis=1)
    ok = (mx > 0.0) & np.isfinite(mx)
    W[ok] /= mx[ok, None]
    W[ok] *= (1.0 / np.sqrt(np.einsum("ij,ij->i", W[ok], W[ok])))[:, None]


class ExampleSGD(Rule):
    """SGD on the reconstruction loss of the selected examples, with activity equalization (paper 004, Alg. 1 step 4).

    Parameters
    ----------
    eta : float > 0 or Schedule, default=0.1
        Learning rate ``eta_t`` (Eq. 8).
    gamma : float in [0, 1], default=0.2
        Equalization strength (Sec. 2.3): 0 none, 1 all elements equally
        active; the paper uses 0.2.
    passes : int >= 1, default=10
        Encode-equalize-update-normalise passes per step (the paper: 10).

    Notes
    -----
    The examples are those chosen by the network's
    :class:`~neurosim.example_selector.ExampleSelector` on the same projection (there
    must be exactly one); the rule reads its selection population's ``index``.
    The encoder is the code population's: ``"k_winners"``, ``"omp"``
    (signed, or non-negative with ``nonneg=True``) or ``"feature_sign"``
    with a fixed ``lam`` (the lasso of Eq. 5); the target-count mode of
    ``"feature_sign"`` is refused. ``info[0]`` counts the encoder failures
    of the last step's passes (feature-sign samples that did not converge,
    OMP atoms that were linearly dependent), ``info[1]`` their total, on
    the compiled path; the ``"python"`` backend warns
    ``NonConvergenceWarning`` through the public encoders instead and leaves
    ``info`` as it was.
    """

    eta = Float(0.1, low=0.0, low_open=True, doc="learning rate eta_t (Eq. 8); may follow a schedule")
    gamma = Float(0.2, low=0.0, high=1.0, schedulable=False, doc="activity equalization (Sec. 2.3)")
    passes = Int(10, low=1, doc="passes over the selected examples per step")

    def __init__(self, eta=0.1, gamma: float = 0.2, passes: int = 10):
        super().__init__()
        self.selector = None
        self.set_params(eta=eta, gamma=gamma, passes=passes)
        self.info = np.zeros(2, dtype=np.int64)
        self._array = Workspace()

    def state(self):
        return {"info": self.info}

    def populations(self):
        return super().populations() + ([] if self.selector is None else [self.selector.selection])

    def validate(self, network):
        from neurosim.dynamics.sparse import SparseCode
        from neurosim.example_selector import ExampleSelector

        p = self.projection
        found = [c for c in network.components if isinstance(c, ExampleSelector) and c.dictionary is p]
        if len(found) != 1:
            raise ValueError(f"ExampleSGD on {p.name!r} learns from the examples an ExampleSelector chooses through "
                             f"{p.name!r}: the network needs exactly one; found {len(found)}")
        self.selector = found[0]
        dyn = p.post.dynamics
        if not isinstance(dyn, SparseCode):
            raise ValueError(f"ExampleSGD on {p.name!r} re-encodes with the code population's encoder: "
                             f"{p.post.name!r} needs SparseCode dynamics; got {type(dyn).__name__}")
        if dyn.method == "feature_sign" and dyn.n_nonzero is not None:
            raise ValueError(f"ExampleSGD on {p.name!r}: the encoder of {p.post.name!r} must be 'k_winners', 'omp' "
                             "or 'feature_sign' with a fixed lam (the target-count mode is not supported)")

    # -- NumPy reference ---------------------------------------------------------------
    def update_numpy(self):
        from neurosim.selection_functions import equalize_activity

        p, dyn = self.projection, self.projection.post.dynamics
        t = p.network.t
        idx = self.selector.selection.state["index"].astype(np.int64)
        X = p.pre.activity[idx]
        W = p.weights
        eta, n = self.value("eta", t), idx.size
        for _ in range(self.passes):
            S = dyn.encode_numpy(X, W, None, t)
            if isinstance(S, str):
                return S
            S = equalize_activity(S, self.gamma)
            W -= (eta / n) * (S.T @ (S @ W - X))
            normalize_rows_numpy(W)
        return None

    # -- compiled ----------------------------------------------------------------------
    def _method(self) -> int:
        assert self.projection is not None  # compiled only once attached
        dyn: Any = self.projection.post.dynamics  # a SparseCode (validate checks it)
        if dyn.method == "k_winners":
            return k.K_WINNERS
        if dyn.method == "feature_sign":
            return k.FEATURE_SIGN
        return k.NN_OMP if dyn.nonneg else k.OMP

    def kernel_call(self):
        p, dyn = self.projection, self.projection.post.dynamics
        sel = self.selector.selection
        n = lambda: sel.size  # noqa: E731
        K = lambda: p.post.size  # noqa: E731
        P = lambda: p.pre.size  # noqa: E731

        def ws(name, shape_fn, dtype=np.float64):
            return ArrayRef(lambda: self._array(name, shape_fn(), dtype), f"{p.name}.sgd_{name}")

        k_arg = dyn.n_nonzero if dyn.n_nonzero is not None else 1
        lam = dyn.ref("lam") if dyn.method == "feature_sign" else 0.0
        w, _, x = self._refs()
        return KernelCall(k.example_sgd_epoch, (
            w, x, ArrayRef(lambda: sel.state["index"], f"{sel.name}.index"),
            self._method(), k_arg, lam, dyn.nonneg, dyn.absolute, dyn._max_iter(), dyn.tol,
            self.gamma, self.ref("eta"), self.passes,
            ws("Xn", lambda: (n(), P())), ws("Sn", lambda: (n(), K())), ws("Cn", lambda: (n(), K())),
            ws("G", lambda: (K(), K())), ws("R", lambda: (n(), P())), ws("grad", lambda: (K(), P())),
            ws("active", lambda: (K(),), np.bool_), ws("status", lambda: (n(),), np.int64),
            ArrayRef(lambda: self.info, f"{p.name}.sgd_info")), label=f"{p.name}.rule", finite=f"{p.name}.weights")
