"""Online dictionary learning as plasticity: memory statistics and the block-coordinate dictionary update.

Paper 000 (Garg et al., Alg. 1) on top of Mairal et al. (2009). The
dictionary is a projection ``x -> code`` whose weights hold the atoms as
rows, ``W = D^T`` of shape ``(n_atoms, n_features)``; the code population's
dynamics is the sparse encoder (e.g. ``SparseCode("feature_sign",
n_nonzero=beta_c)``, Alg. 2's per-sample lambda). Two components learn it:

* :class:`DictionaryMemory` (a unit rule, plasticity order -10): the
  "memory" ``A = sum alpha alpha^T`` (a pair variable of the code
  population, ``(k, k)``) and ``B = sum x alpha^T`` (an array of the
  dictionary projection, stored like ``W``), Alg. 1 step 11. Both follow
  every birth (zero rows/columns, step 8) and death of a code unit.
* :class:`BlockCoordinateDescent` (the dictionary projection's rule,
  order 0): Alg. 1 steps 13-19, with the optional sparsifying prox (step 15,
  ``beta_d`` nonzeros per element) and the group-sparsity shrink (step 16)
  that zeroes weak elements; a death trigger then removes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.kernels import dictionary as k
from neurosim.kernels.parallel import use_rule_rows
from neurosim.params import Choice, Float, Int
from neurosim.rules.base import Rule, UnitRule

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.population import Population

__all__ = ["DictionaryMemory", "BlockCoordinateDescent", "prox_count_numpy"]


class DictionaryMemory(UnitRule):
    """Sufficient statistics of online dictionary learning (paper 000, Alg. 1 step 11).

    .. math:: A \\leftarrow \\rho A + \\sum_b \\alpha_b \\alpha_b^T, \\qquad B \\leftarrow \\rho B + \\sum_b x_b \\alpha_b^T

    Parameters
    ----------
    dictionary : Projection
        ``x -> code``; ``B`` lives on it (``dictionary.arrays["B"]``), ``A``
        on its post population (``code.state["A"]``).
    decay : float in (0, 1] or Schedule, default=1.0
        ``rho``; 1 (the paper) keeps the whole past. A schedule gives one
        value per step: :class:`neurosim.schedules.Mairal2010` is the
        weighting of the past of Mairal et al. (2010, Sec. 3.4), SPAMS and
        scikit-learn (``MiniBatchDictionaryLearning``'s ``A`` and ``B``).
        Like every schedule it is a function of the step number only, so a
        checkpoint restores it and a run cut into pieces equals an uncut run.
    """

    decay = Float(1.0, low=0.0, high=1.0, low_open=True, doc="forgetting factor of A and B (may follow a schedule)")

    def __init__(self, dictionary, decay=1.0):
        from neurosim.synapses import Projection

        if not isinstance(dictionary, Projection):
            raise TypeError(f"dictionary must be a Projection; got {type(dictionary).__name__}")
        super().__init__(dictionary.post)
        self.dictionary = dictionary
        self.set_params(decay=decay)

    def attach(self, network: Network) -> None:
        self.population.add_variable("A", 0.0, pair=True, units="1",
                                     long_name="memory matrix A (decayed sum of code outer products)")
        self.dictionary.add_array("B", 0.0)

    def writes(self) -> set[tuple[str, str]]:
        return {(self.population.name, "A")}

    def populations(self) -> list[Population]:
        return [self.population, self.dictionary.pre]

    def validate(self, network: Network) -> None:
        if network.projections.get(self.dictionary.name) is not self.dictionary:
            raise ValueError(f"DictionaryMemory: projection {self.dictionary.name!r} is not in network {network.name!r}")

    def update_numpy(self) -> None:
        a, x = self.population.activity, self.dictionary.pre.activity
        A, B = self.population.state["A"], self.dictionary.arrays["B"]
        net = self.population.network
        decay = self.value("decay", net.t if net is not None else None)
        if decay != 1.0:
            A *= decay
            B *= decay
        A += a.T @ a
        B += a.T @ x

    def kernel_call(self) -> KernelCall | None:
        pop, proj = self.population, self.dictionary
        kernel = k.memory_update_rows if use_rule_rows(*proj.weights.shape) else k.memory_update
        return KernelCall(kernel, (
            ArrayRef(lambda: pop.state["A"], f"{pop.name}.A"), ArrayRef(lambda: proj.arrays["B"], f"{proj.name}.B"),
            ArrayRef(lambda: pop.activity, f"{pop.name}.activity"),
            ArrayRef(lambda: proj.pre.activity, f"{proj.pre.name}.activity"), self.ref("decay")),
            label=f"{pop.name}.memory")


class BlockCoordinateDescent(Rule):
    """Dictionary update by block-coordinate descent (paper 000, Alg. 1 steps 13-19; Mairal et al. 2009, Alg. 2).

    For each element ``j`` with ``A_jj > 0``, in order::

        u_j = (b_j - sum_i a_ji d_i) / a_jj + d_j        (14)
        v_j = Prox_{lambda_j ||.||_1}(u_j)               (15) beta_d nonzeros, lambda_j by Alg. 2; skipped if beta_d = 0
        w_j = v_j (1 - lambda_g / ||v_j||_2)_+            (16) group sparsity: weak elements become 0
        d_j = w_j / max(1, ||w_j||_2)                     (17)

    repeated until ``||D_new - D_old||_F <= tol ||D_old||_F`` (or
    ``max_sweeps``). For an element with ``a_jj = 0`` (never used: its code
    was 0 for every sample so far) step 14 is undefined; see ``unused``.
    Needs a :class:`DictionaryMemory` on the same projection.

    Parameters
    ----------
    lambda_g : float >= 0, default=0.0
        Group-sparsity weight (0: no death; NODL+ and ODL).
    beta_d : int >= 0, default=0
        Nonzeros per element (0: dense elements).
    tol : float > 0 or None, default=1e-06
        Relative change that ends the sweeps; None runs exactly
        ``max_sweeps`` sweeps every step (the authors' code caps its sweeps
        at ``min(max(0.01 m, 5), 20)`` with a tolerance on the largest
        change; a fixed count is the honest form of a cap that decides).
    max_sweeps : int >= 1, default=100
        Most block-coordinate sweeps per step.
    unused : {"keep", "zero"}, default="keep"
        Elements with ``a_jj = 0``. ``"keep"`` (default): ``u_j = d_j``, so
        only steps 15-17 act -- ODL leaves the element as it is, and the
        group shrink wears it down by ``lambda_g`` per sweep until it dies.
        ``"zero"``: the authors' code (``updateD.m`` divides by ``1e-100``
        when ``A_jj = 0``; with ``b_j = a_j = 0`` that gives ``u_j = 0``): the
        element becomes 0 at once, and dies where deaths are on.
    eps_lambda : float in (0, 1), default=1e-10
        Relative width at which Alg. 2's binary search stops.
    """

    lambda_g = Float(0.0, low=0.0, schedulable=False, doc="group-sparsity weight")
    beta_d = Int(0, low=0, doc="nonzeros per dictionary element (0: dense)")
    tol = Float(1e-6, low=0.0, low_open=True, optional=True, schedulable=False,
                doc="relative change that ends the sweeps (None: always max_sweeps)")
    max_sweeps = Int(100, low=1, doc="cap on sweeps per step")
    unused = Choice("keep", options=("keep", "zero"), live=False, doc="elements never used (a_jj = 0): kept or zeroed")
    eps_lambda = Float(1e-10, low=0.0, high=1.0, low_open=True, high_open=True, schedulable=False,
                       doc="relative width ending Alg. 2's search")

    def __init__(self, lambda_g: float = 0.0, beta_d: int = 0, tol: float | None = 1e-6, max_sweeps: int = 100,
                 eps_lambda: float = 1e-10, unused: str = "keep"):
        super().__init__()
        self.set_params(lambda_g=lambda_g, beta_d=beta_d, tol=tol, max_sweeps=max_sweeps, eps_lambda=eps_lambda,
                        unused=unused)
        self.info = np.zeros(2, dtype=np.int64)  # [sweeps of the last step, steps that hit max_sweeps]

    def validate(self, network: Network) -> None:
        p = self.projection
        if "B" not in p.arrays or "A" not in p.post.state:
            raise ValueError(f"BlockCoordinateDescent on projection {p.name!r} needs a DictionaryMemory({p.name}) "
                             "in the network (it keeps A and B)")
        if p.lateral:
            raise ValueError(f"BlockCoordinateDescent cannot learn the lateral projection {p.name!r}")

    def state(self) -> dict[str, np.ndarray]:
        return {"info": self.info}

    def _work(self, name):
        p = self.projection
        buf = getattr(self, "_" + name, None)
        if buf is None or buf.shape != (p.pre.size,):
            buf = np.zeros(p.pre.size)
            setattr(self, "_" + name, buf)
        return buf

    def update_numpy(self) -> None:
        p = self.projection
        w, A, B = p.weights, p.post.state["A"], p.arrays["B"]
        n_atoms = w.shape[0]
        for sweep in range(self.max_sweeps):
            change = norm = 0.0
            for j in range(n_atoms):
                ajj = A[j, j]
                if ajj > 0.0:
                    u = (B[j] - A[j] @ w) / ajj + w[j]
                else:
                    u = np.zeros_like(w[j]) if self.unused == "zero" else w[j].copy()
                v = prox_count_numpy(u, self.beta_d, self.eps_lambda) if self.beta_d > 0 else u
                nv = float(np.sqrt(v @ v))
                shrink = max(0.0, 1.0 - self.lambda_g / nv) if nv > 0.0 else 0.0
                new = v * (shrink / max(1.0, shrink * nv))
                change += float((new - w[j]) @ (new - w[j]))
                norm += float(w[j] @ w[j])
                w[j] = new
            self.info[0] = sweep + 1
            if self.tol is not None and change <= self.tol * self.tol * norm:
                break
        else:
            if self.tol is not None:
                self.info[1] += 1

    def kernel_call(self) -> KernelCall | None:
        p = self.projection
        w, _, _ = self._refs()
        return KernelCall(k.block_coordinate_descent, (
            w, ArrayRef(lambda: p.post.state["A"], f"{p.post.name}.A"), ArrayRef(lambda: p.arrays["B"], f"{p.name}.B"),
            self.lambda_g, self.beta_d, -1.0 if self.tol is None else self.tol, self.max_sweeps, self.eps_lambda,
            self.unused == "zero", ArrayRef(lambda: self._work("u"), f"{p.name}.bcd_u"), ArrayRef(lambda: self._work("v"), f"{p.name}.bcd_v"),
            ArrayRef(lambda: self.info, f"{p.name}.bcd_info")), label=f"{p.name}.rule", finite=f"{p.name}.weights")


def prox_count_numpy(u: np.ndarray, beta: int, eps_lambda: float = 1e-10) -> np.ndarray:
    """NumPy reference of :func:`neurosim.kernels.dictionary.prox_count` (paper 000, Alg. 2), the same steps.

    Keeps the ``beta`` largest entries of ``u`` in magnitude, soft-thresholded
    by the ``lambda`` found by bisection.

    Parameters
    ----------
    u : numpy.ndarray, shape (n,)
        The vector.
    beta : int >= 0
        Nonzeros to keep.
    eps_lambda : float in (0, 1), default=1e-10
        Relative width at which the bisection stops (it also stops where
        the interval cannot be halved any further in floating point).

    Returns
    -------
    numpy.ndarray, shape (n,)
        The sparsified copy (``u`` itself is not changed).
    """
    a = np.abs(u)
    if beta >= np.count_nonzero(a):
        return u.copy()
    lo, hi = 0.0, float(a.max())
    while True:
        lam = 0.5 * (lo + hi)
        count = int(np.count_nonzero(a > lam))
        if count == beta or (hi - lo) / hi < eps_lambda or not (lo < lam < hi):
            break
        if count > beta:
            lo = lam
        else:
            hi = lam
    return np.where(a > lam, np.sign(u) * (a - lam), 0.0)
