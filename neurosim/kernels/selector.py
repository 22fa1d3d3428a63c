"""The per-step kernel of :class:`neurosim.example_selector.ExampleSelector` (paper 004, Alg. 1 step 3)."""

from __future__ import annotations

from numba import njit

from neurosim.kernels.selection import SALMAP, sample_factors, saliency_map, select_examples

__all__ = ["SNR_CAP", "selector_step"]

#: the estimated SNR of a perfectly reconstructed example (kept finite so the state can be checked and recorded)
SNR_CAP = 1e300


@njit(cache=True, nogil=True)
def selector_step(X, S, W, measure, selector, seed, side, counter, saliency, factors, chosen, work_int, work_float,
                  index, estimated_snr):
    """Goodness, selection and the selected slots' ``index`` / ``estimated_snr`` for one batch."""
    if measure == SALMAP:
        saliency_map(X, side, saliency)
    sample_factors(X, S, W, measure, saliency, factors)
    n = chosen.size
    select_examples(factors, S, measure, selector, n, seed, counter[0], chosen, work_int, work_float)
    counter[0] += 1
    for r in range(n):
        i = chosen[r]
        index[r] = i
        sig = 0.0
        res = 0.0
        for j in range(X.shape[1]):
            rec = 0.0
            for a in range(S.shape[1]):
                if S[i, a] != 0.0:
                    rec += S[i, a] * W[a, j]
            d = X[i, j] - rec
            sig += X[i, j] * X[i, j]
            res += d * d
        if res > 0.0:
            estimated_snr[r] = min(sig / res, SNR_CAP)
        else:
            estimated_snr[r] = SNR_CAP if sig > 0.0 else 0.0
