"""Kernel fusion in a segment's plan: a linear population's drive and its projection's rule in one pass.

A network whose last population is ``Linear`` with one sparse feed-forward
projection learning by ``Oja`` or ``Hebbian`` (the large rate networks of
:mod:`neurosim.connectivity`) spends a step reading every synapse twice:
the drive ``y = W x`` in the dynamics phase, then the rule's update of
``W`` in the plasticity phase. With 10^8 synapses neither pass fits in any
cache, so the step costs two trips through memory. When the rule's call
follows the population's calls directly in the plan -- nothing in between
reads or writes the weights, the activity or the input, and no trigger is
evaluated between the phases (``when="dynamics"``) -- one kernel
(:func:`neurosim.kernels.sparse.csr_linear_oja`,
:func:`~neurosim.kernels.sparse.csr_linear_hebbian`) computes each row's
drive and then updates that row while it is in the cache. It runs the same
per-row functions in the same order, so a fused segment gives the bits of
the unfused calls (and of the per-step path, which never fuses); only the
memory traffic changes (about 40 % less).

Applied by :meth:`neurosim.engine.Engine._plan` to compiled segments on the
CPU; the GPU path plans without it.
"""

from __future__ import annotations

from dataclasses import replace

from neurosim.codegen import KernelCall, SegmentPlan
from neurosim.kernels import sparse as ks
from neurosim.kernels.dense import copy_2d

__all__ = ["fuse_linear_rules", "FUSED_RULES"]

#: rule kernel -> (fused serial kernel, fused row-parallel kernel)
FUSED_RULES = {
    ks.csr_oja: (ks.csr_linear_oja, ks.csr_linear_oja_rows),
    ks.csr_oja_rows: (ks.csr_linear_oja, ks.csr_linear_oja_rows),
    ks.csr_hebbian: (ks.csr_linear_hebbian, ks.csr_linear_hebbian_rows),
    ks.csr_hebbian_rows: (ks.csr_linear_hebbian, ks.csr_linear_hebbian_rows),
}
_DRIVES = (ks.csr_drive, ks.csr_drive_rows)


def fuse_linear_rules(plan: SegmentPlan, midstep_triggers: bool = False) -> SegmentPlan:
    """The plan with a linear population's drive, copy and rule fused into one call, where that is exact.

    The pattern, at the boundary of the phases: the last two dynamics calls
    are a ``Linear`` population's only drive (a sparse projection, not
    accumulated) and the copy of that drive into its activity, and the first
    plasticity call is the same projection's ``Oja`` or ``Hebbian`` update
    reading that activity and the same input. Anything else leaves the plan
    as it is.

    Parameters
    ----------
    plan : SegmentPlan
        A segment's plan (``n_dynamics`` marks the phases).
    midstep_triggers : bool, default=False
        Whether compiled triggers are evaluated between the phases
        (``Trigger(when="dynamics")``): then the rule must not run before
        them, and nothing is fused.

    Returns
    -------
    SegmentPlan
        ``plan`` itself, or a copy with the three calls replaced by one
        (``n_dynamics`` counts the fused call with the plasticity phase, as
        it writes the weights and tests them as it writes).
    """
    n = plan.n_dynamics
    if midstep_triggers or n < 2 or n >= len(plan.calls):
        return plan
    drive, copy, rule = plan.calls[n - 2], plan.calls[n - 1], plan.calls[n]
    if drive.func not in _DRIVES or copy.func is not copy_2d or rule.func not in FUSED_RULES:
        return plan
    out, pre, indptr, indices, weights, sign, accumulate = drive.args
    activity, source = copy.args
    if accumulate or source is not out:
        return plan
    r_weights, _, _, r_post, r_pre = rule.args[:5]
    if not (r_weights.get() is weights.get() and r_post.get() is activity.get() and r_pre.get() is pre.get()):
        return plan
    serial, rows = FUSED_RULES[rule.func]
    parallel = drive.func is ks.csr_drive_rows or rule.func in (ks.csr_oja_rows, ks.csr_hebbian_rows)
    fused = KernelCall(rows if parallel else serial, (activity, out, pre, indptr, indices, weights, sign, *rule.args[5:]),
                       label=f"{rule.label} with {drive.label}", finite=rule.finite)
    return replace(plan, calls=plan.calls[:n - 2] + [fused] + plan.calls[n + 1:], n_dynamics=n - 2)
