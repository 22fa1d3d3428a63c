"""Numba kernels that say whether structural plasticity of synapses is due (compiled trigger conditions).

Each returns a bool: whether :class:`~neurosim.structural_plasticity.Prune`
or :class:`~neurosim.structural_plasticity.Grow` would change any synapse
now. A compiled segment evaluates them every ``every`` steps and leaves
compiled code only when one holds, so a network whose synapses need no
pruning or growing keeps running in segments. The sparse forms read the
compressed rows of :mod:`neurosim.synapse_index`, the masked forms a dense
``(post, pre)`` weight matrix and its mask; both say the same of the same
synapses.
"""

from numba import njit

__all__ = ["csr_any_weak", "masked_any_weak", "csr_fan_in_short", "masked_fan_in_short"]


@njit(cache=True, nogil=True)
def csr_any_weak(weights, threshold):
    """True when some stored synapse has ``|w| < threshold`` (``weights``: one per synapse)."""
    for s in range(weights.shape[0]):
        if abs(weights[s]) < threshold:
            return True
    return False


@njit(cache=True, nogil=True)
def masked_any_weak(weights, mask, threshold):
    """True when some synapse of the mask has ``|w| < threshold``."""
    n_post, n_pre = weights.shape
    for i in range(n_post):
        for j in range(n_pre):
            if mask[i, j] and abs(weights[i, j]) < threshold:
                return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _free_pre_units(n_pre, linked, exclude_self):
    """Pre units a post unit linked from ``linked`` distinct ones could still link to (not itself if ``exclude_self``)."""
    return n_pre - linked - (1 if exclude_self else 0)


@njit(cache=True, nogil=True)
def csr_fan_in_short(indptr, indices, pre_ids, fan_in, exclude_self):
    """True when some post unit has fewer than ``fan_in`` synapses and a pre unit it could still link to.

    A row's candidates are the pre units it has no synapse from (multapses
    count once), and not itself when ``exclude_self`` (a lateral projection
    without self-connections). ``pre_ids``: the pre population's ids (its
    length is the pre count, which deaths change between segments).
    """
    n_pre = pre_ids.shape[0]
    for i in range(indptr.shape[0] - 1):
        lo = indptr[i]
        hi = indptr[i + 1]
        if hi - lo >= fan_in:
            continue
        distinct = 0
        for s in range(lo, hi):
            if s == lo or indices[s] != indices[s - 1]:
                distinct += 1
        if _free_pre_units(n_pre, distinct, exclude_self) > 0:
            return True
    return False


@njit(cache=True, nogil=True)
def masked_fan_in_short(mask, fan_in, exclude_self):
    """:func:`csr_fan_in_short` on a mask: some row with fewer than ``fan_in`` synapses and a free pre unit."""
    n_pre = mask.shape[1]
    for i in range(mask.shape[0]):
        d = 0
        for j in range(n_pre):
            if mask[i, j]:
                d += 1
        if d < fan_in and _free_pre_units(n_pre, d, exclude_self) > 0:
            return True
    return False
