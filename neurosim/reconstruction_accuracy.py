"""Per-step measures: components that compute a quantity for triggers and recordings.

:class:`ReconstructionAccuracy` computes, right after a code population's
dynamics, how well the batch is represented by its dictionary: paper 000's
``p_c``, the batch mean of the Pearson correlation between each sample
``x_b`` and its reconstruction ``D alpha_b`` (Spearman as an option, as the
authors' released code uses). Its ``value`` drives conditional neurogenesis
(a compiled trigger condition ``first_at_most(value, gamma)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import spearmanr

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.coding.normalization import NORMALIZATIONS, normalized_atoms
from neurosim.component import _CodeReader
from neurosim.kernels import dictionary as k
from neurosim.kernels.encoding import normalize_rows
from neurosim.params import Choice

if TYPE_CHECKING:
    from neurosim.population import Population

__all__ = ["ReconstructionAccuracy"]


class ReconstructionAccuracy(_CodeReader):
    """Mean correlation between the input and its reconstruction from the code (paper 000, ``p_c``).

    Runs in the dynamics phase right after the code population's dynamics.
    ``value[0]`` is the batch mean of ``corr(x_b, W~^T a_b)`` (``W~``: the
    atoms as the encoder codes with them, see ``normalize``); a sample whose
    correlation is undefined (constant input or reconstruction, e.g. an
    all-zero code) counts as 0 -- it is not represented -- and ``value[1]``
    counts such samples in the last step.

    Parameters
    ----------
    dictionary : Projection
        ``x -> code`` with the atoms as rows of its weights.
    metric : {"pearson", "spearman"}, default="pearson"
    normalize : {"none", "unit", "center_unit"}, optional
        Reconstruct with the atoms normalised so
        (:mod:`neurosim.coding.normalization`): ``x_b`` is compared with
        ``D~ a_b``. Default: as the code population's encoder normalises
        (its ``SparseCode(normalize=...)``; ``"none"`` for other dynamics),
        so the codes and the atoms they were computed against match.
    """

    params_key = "measure"
    phase = "dynamics"
    metric = Choice("pearson", options=("pearson", "spearman"), doc="correlation measure")
    normalize = Choice(None, options=NORMALIZATIONS, optional=True, live=False,
                       doc="atoms reconstructed with (None: as the code's encoder)")

    # [batch-mean accuracy, ...] (above); it shadows Parametrized.value(name, t), as Signal.value does
    value: np.ndarray  # type: ignore[assignment]

    # named here so that this class's API page shows it (autodoc lists a class's own members)
    order = _CodeReader.order

    def __init__(self, dictionary, metric: str = "pearson", normalize: str | None = None):
        self._take_dictionary(dictionary)
        self.set_params(metric=metric, normalize=normalize)
        self.value = np.zeros(2)
        self._recon = np.zeros(0)
        self._atoms = np.zeros((0, 0))

    @property
    def coding_normalization(self) -> str:
        """The normalisation the reconstruction uses: ``normalize``, or the code population's encoder's."""
        if self.normalize is not None:
            return self.normalize
        return getattr(self.dictionary.post.dynamics, "normalize", "none") or "none"

    @property
    def label(self) -> str:
        return f"ReconstructionAccuracy of {self.dictionary.post.name!r} through {self.dictionary.name!r}"

    def populations(self) -> list[Population]:
        return [self.dictionary.pre, self.dictionary.post]

    def state(self) -> dict[str, np.ndarray]:
        return {"value": self.value}

    def _workspace(self):
        n = self.dictionary.pre.size
        if self._recon.shape != (n,):
            self._recon = np.zeros(n)
        return self._recon

    def _atoms_workspace(self):
        shape = self.dictionary.weights.shape
        if self._atoms.shape != shape:
            self._atoms = np.zeros(shape)
        return self._atoms

    def step_numpy(self) -> None:
        p = self.dictionary
        x, a = p.pre.activity, p.post.activity
        recon = a @ normalized_atoms(p.weights, self.coding_normalization)
        rs = []
        for xb, rb in zip(x, recon):
            if np.ptp(xb) == 0.0 or np.ptp(rb) == 0.0:
                rs.append(np.nan)
            elif self.metric == "pearson":
                rs.append(np.corrcoef(xb, rb)[0, 1])
            else:
                rs.append(spearmanr(xb, rb).statistic)
        r = np.asarray(rs)
        self.value[0] = np.nansum(r) / len(r)
        self.value[1] = np.count_nonzero(np.isnan(r))

    def kernel_calls(self) -> list[KernelCall] | None:
        p = self.dictionary
        w = ArrayRef(lambda: p.weights, f"{p.name}.weights")
        calls = []
        how = self.coding_normalization
        if how != "none":
            raw, w = w, ArrayRef(self._atoms_workspace, f"{p.name}.accuracy_atoms")
            calls.append(KernelCall(normalize_rows, (raw, NORMALIZATIONS.index(how), w),
                                    label=f"{p.post.name}.accuracy_atoms"))
        return calls + [KernelCall(k.reconstruction_accuracy, (
            ArrayRef(lambda: self.value, f"{p.post.name}.accuracy"),
            ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"),
            ArrayRef(lambda: p.post.activity, f"{p.post.name}.activity"),
            w, self.metric == "spearman",
            ArrayRef(self._workspace, f"{p.name}.recon")), label=f"{p.post.name}.accuracy")]
