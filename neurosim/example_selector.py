"""Example selection between encoding and plasticity (Tsuchida & Cottrell 2015, Alg. 1 step 3).

An :class:`ExampleSelector` runs in the dynamics phase right after a code
population's encoder: from the batch's inputs ``X`` (the ``N`` presented
examples), their codes ``S`` and the dictionary, it computes a goodness
measure (Eq. 9-13) and picks ``n`` examples with a selector function (Eq.
14-15, or uniformly at random). The choice is written into the per-unit
variables of a *selection* population of ``n`` units, one unit per slot of
the selected set:

* ``index``: the row of the batch in slot ``r`` (float64, exact below 2^53),
* ``estimated_snr``: ``||x||^2 / ||x - S W||^2`` of that example under the
  current dictionary (the goodness of Eq. 11 without the activation factor;
  capped at ``1e300``, the value of a perfect reconstruction, so the state
  stays finite),

so a recorder, a checkpoint and a compiled segment treat the selection like
any other state, and a plasticity rule downstream
(:class:`~neurosim.rules.example_sgd.ExampleSGD`) learns from those rows
only. The selection population has no dynamics, no input and no
projections; its activity is unused and kept at one row whatever the batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurosim.codegen import ArrayRef, KernelCall
from neurosim.component import Workspace, _CodeReader
from neurosim.kernels import selection as k
from neurosim.kernels.selector import SNR_CAP, selector_step
from neurosim.params import Choice, Int

if TYPE_CHECKING:
    from neurosim.network import Network
    from neurosim.population import Population

__all__ = ["ExampleSelector"]

_MEASURE_CODES = {"err": k.ERR, "grad": k.GRAD, "snr": k.SNR, "sun": k.SUN, "salmap": k.SALMAP}
_SELECTOR_CODES = {"uniform": k.UNIFORM, "by_sum": k.BY_SUM, "by_element": k.BY_ELEMENT}


class ExampleSelector(_CodeReader):
    """Choose which examples of the batch reach plasticity (paper 004, Alg. 1 step 3).

    Parameters
    ----------
    dictionary : Projection
        ``x -> code``, atoms as rows of its weights; its pre population holds
        the ``N`` examples (the network's batch), its post population the
        codes ``S`` computed by the code's dynamics this step.
    selection : Population
        ``n`` units, one per selected example; ``n`` must not exceed the
        batch. The selector declares ``index`` and ``estimated_snr`` on it.
    measure : {"err", "grad", "snr", "sun", "salmap"} or None
        Goodness measure (Eq. 9-13); ``None`` only with ``selector="uniform"``.
    selector : {"uniform", "by_sum", "by_element"}
        Selector function (Eq. 14, 15) or uniform sampling without replacement.
    seed : int >= 0
        Seeds the uniform selector; the draw of step ``t`` is a pure function
        of ``(seed, t)``, so runs cut into pieces and resumed checkpoints
        choose the same examples.
    side : int, optional
        Patch side for ``"salmap"`` (the examples are ``side x side`` images);
        default: the square root of the input size.

    Notes
    -----
    ``"err"`` and ``"salmap"`` give every element the same goodness, so
    ``"by_element"`` chooses exactly what ``"by_sum"`` chooses (the paper
    therefore pairs them with BySum only). Ties are broken by the lower row
    index; with all-zero activations the activation-weighted measures
    (``"grad"``, ``"snr"``, ``"sun"``) are 0 for every example and the
    first ``n`` rows are chosen.
    """

    params_key = "example_selection"
    phase = "dynamics"
    measure = Choice("sun", options=tuple(_MEASURE_CODES), optional=True, live=False,
                     doc="goodness measure (None: uniform)")
    selector = Choice("by_element", options=tuple(_SELECTOR_CODES), live=False, doc="selector function")
    seed = Int(0, low=0, live=False, doc="seed of the uniform selector")
    side = Int(None, low=1, optional=True, live=False, doc="patch side for salmap")

    def __init__(self, dictionary, selection, measure: str | None = "sun", selector: str = "by_element",
                 seed: int = 0, side: int | None = None):
        from neurosim.population import Population

        self._take_dictionary(dictionary)
        if not isinstance(selection, Population):
            raise TypeError(f"selection must be a Population; got {type(selection).__name__}")
        self.selection = selection
        self.set_params(measure=measure, selector=selector, seed=seed, side=side)
        if self.selector == "uniform" and self.measure is not None:
            raise ValueError(f"selector='uniform' takes no measure (measure=None); got measure={self.measure!r}")
        if self.selector != "uniform" and self.measure is None:
            raise ValueError(f"selector={self.selector!r} needs a measure, one of {sorted(_MEASURE_CODES)}")
        self.counter = np.zeros(1, dtype=np.int64)
        self._array = Workspace()
        self._network: Network | None = None

    # -- placement -------------------------------------------------------------------
    # right after the code's dynamics; named here so that this class's API page shows it (autodoc lists a
    # class's own members, and _CodeReader is private)
    order = _CodeReader.order

    @property
    def label(self) -> str:
        return f"ExampleSelector of {self.selection.name!r} through {self.dictionary.name!r}"

    @property
    def n(self) -> int:
        """Examples selected per step: the size of the selection population."""
        return self.selection.size

    def attach(self, network: Network) -> None:
        self._network = network
        self.selection.add_variable("index", 0.0, units="1",
                                    long_name="row of the epoch's batch selected into this slot")
        self.selection.add_variable("estimated_snr", 0.0, units="1",
                                    long_name="estimated SNR ||x||^2 / ||x - reconstruction||^2 of the selected example")
        # the slots hold per-unit results, not per-sample activity: one row of activity, not N
        # (at the paper's N = 50,000 and n = 500 a batched activity would be 200 MB nobody writes)
        self.selection.set_batch(1)

    def network_of(self) -> Network | None:
        return self._network

    def populations(self) -> list[Population]:
        return [self.dictionary.pre, self.dictionary.post, self.selection]

    def writes(self) -> set[tuple[str, str]]:
        """What the selector writes: the selection population's ``index`` and ``estimated_snr``.

        Returns
        -------
        set of tuple of str
            ``{(population name, variable)}``.
        """
        return {(self.selection.name, "index"), (self.selection.name, "estimated_snr")}

    def state(self) -> dict[str, np.ndarray]:
        return {"counter": self.counter}

    def validate(self, network: Network) -> None:
        N, n = network.batch, self.n
        if n > N:
            raise ValueError(f"ExampleSelector: the selection population {self.selection.name!r} has n = {n} units, "
                             f"more than the N = {N} examples of a batch; n must be in [1, {N}]")
        if self.measure == "salmap":
            self._side()

    def _side(self) -> int:
        P = self.dictionary.pre.size
        side = self.side if self.side is not None else int(round(np.sqrt(P)))
        if side * side != P:
            raise ValueError(f"ExampleSelector measure='salmap' needs square patches: side * side must equal the input "
                             f"size {P}; got side={side}")
        return side

    # -- work arrays -----------------------------------------------------------------
    def _workspace(self, which):
        N, K = self.dictionary.pre.activity.shape[0], self.dictionary.post.size
        ints, floats = k.selection_workspace(N, K, self.n)
        if which == "int":
            return self._array("ws_int", ints.shape, ints.dtype)
        return self._array("ws_float", floats.shape)

    # -- the step --------------------------------------------------------------------
    def _codes(self):
        return (_MEASURE_CODES[self.measure] if self.measure is not None else k.SUN), _SELECTOR_CODES[self.selector]

    def step_numpy(self) -> None:
        from neurosim.selection_functions import select

        p, sel = self.dictionary, self.selection
        X, S, W = p.pre.activity, p.post.activity, p.weights
        idx = select(X, S, W, self.n, measure=self.measure, selector=self.selector, seed=self.seed,
                     counter=int(self.counter[0]), side=self._side() if self.measure == "salmap" else None)
        self.counter[0] += 1
        Xn = X[idx]
        R = Xn - S[idx] @ W
        sel.state["index"][:] = idx
        sel.state["estimated_snr"][:] = _snr(np.einsum("ij,ij->i", Xn, Xn), np.einsum("ij,ij->i", R, R))

    def kernel_calls(self) -> list[KernelCall] | None:
        p, sel = self.dictionary, self.selection
        measure, selector = self._codes()
        N = lambda: p.pre.activity.shape[0]  # noqa: E731
        side = self._side() if self.measure == "salmap" else 0
        return [KernelCall(selector_step, (
            ArrayRef(lambda: p.pre.activity, f"{p.pre.name}.activity"),
            ArrayRef(lambda: p.post.activity, f"{p.post.name}.activity"),
            ArrayRef(lambda: p.weights, f"{p.name}.weights"),
            measure, selector, self.seed, side,
            ArrayRef(lambda: self.counter, f"{sel.name}.counter"),
            ArrayRef(lambda: self._array("saliency", (N(),) if self.measure == "salmap" else (0,)),
                     f"{sel.name}.saliency"),
            ArrayRef(lambda: self._array("factors", (N(),)), f"{sel.name}.factors"),
            ArrayRef(lambda: self._array("chosen", (self.n,), np.int64), f"{sel.name}.chosen"),
            ArrayRef(lambda: self._workspace("int"), f"{sel.name}.work_int"),
            ArrayRef(lambda: self._workspace("float"), f"{sel.name}.work_float"),
            ArrayRef(lambda: sel.state["index"], f"{sel.name}.index"),
            ArrayRef(lambda: sel.state["estimated_snr"], f"{sel.name}.estimated_snr")),
            label=f"{sel.name}.selection")]


def _snr(signal, residual):
    """``signal / residual`` capped at :data:`SNR_CAP` (a perfect reconstruction), ``0 / 0 = 0``: the kernel's rule."""
    out = np.zeros_like(signal)
    for i, (s, r) in enumerate(zip(signal, residual)):
        out[i] = min(s / r, SNR_CAP) if r > 0.0 else (SNR_CAP if s > 0.0 else 0.0)
    return out
