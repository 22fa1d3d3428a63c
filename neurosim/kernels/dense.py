"""Numba kernels for dense rate populations: synaptic drive and Jacobi dynamics.

Pure functions on contiguous float64 arrays, compiled once and cached on disk
(``cache=True``). They write into preallocated outputs so that a compiled
segment allocates nothing per step.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from neurosim.kernels._build import INLINE
from neurosim.kernels.parallel import rows_product
from neurosim.kernels.sparse import csr_product

__all__ = ["synaptic_drive", "lateral_product", "jacobi_relax", "jacobi_kernel", "jacobi_fixed", "jacobi_tolerance",
           "jacobi_fixed_rows", "jacobi_tolerance_rows", "all_finite"]


@njit(cache=True, nogil=True, inline=INLINE)
def synaptic_drive(out, pre, weights, sign, accumulate):
    """``out (+)= sign * pre @ weights.T`` for a batch of activity rows.

    Parameters
    ----------
    out : (batch, n_post) array, written in place.
    pre : (batch, n_pre) array.
    weights : (n_post, n_pre) array.
    sign : float, +1 or -1.
    accumulate : bool, add to ``out`` instead of overwriting it.
    """
    # BLAS gemm through numba: same numbers as NumPy's ``pre @ weights.T``.
    # Element loops rather than array expressions: those compile several times slower.
    # Both branches call the three-argument np.dot: the two-argument form is a second binding
    # of the same gemm, and compiling it cost half a second of a first run.
    batch, n_post = out.shape
    if accumulate:
        tmp = np.empty((batch, n_post))
        np.dot(pre, weights.T, tmp)
        for b in range(batch):
            for i in range(n_post):
                out[b, i] += sign * tmp[b, i]
    else:
        np.dot(pre, weights.T, out)
        if sign != 1.0:
            for b in range(batch):
                for i in range(n_post):
                    out[b, i] *= sign


#: Up to this many units the lateral product is a hand loop: a BLAS call costs more than an 8 x 8 product.
SMALL_LATERAL = 16


@njit(cache=True, nogil=True, inline=INLINE)
def lateral_product(out, y, lateral):
    """``out = y @ lateral.T`` for a batch of activity rows (hand loop when small, BLAS otherwise).

    Inlined into its callers (it runs once per Jacobi iteration, where a call
    costs a fifth of an 8-unit iteration).
    """
    if y.shape[1] <= SMALL_LATERAL:
        for b in range(y.shape[0]):
            _row_product(out[b], y[b], lateral)
    else:
        np.dot(y, lateral.T, out)


def _lateral(out, y, lateral, parallel, indptr, indices):
    """``out = y @ lateral.T``: row-parallel (large populations on several threads) or :func:`lateral_product`.

    A sparse lateral projection (``indptr`` given; ``lateral`` its 1-D
    weights) takes :func:`~neurosim.kernels.sparse.csr_product`. This is the
    NumPy-callable form; compiled callers get the form for their argument
    types from the overload below (chosen when numba types the call, so the
    dense form compiles exactly as it did without the sparse one).
    """
    if indptr is None:
        out[:] = y @ lateral.T
    else:
        csr_product.py_func(out, y, indptr, indices, lateral, False)


@overload(_lateral, prefer_literal=True)
def _lateral_typed(out, y, lateral, parallel, indptr, indices):
    # ``parallel`` is a literal in the two Jacobi entry points, so each compiles one product only:
    # the serial entry never compiles the row-parallel kernel (numba's thread pool, about a second
    # of compilation) that a network on one thread never calls.
    rows = parallel.literal_value if isinstance(parallel, types.BooleanLiteral) else None
    if _absent(indptr):
        if rows is True:
            return lambda out, y, lateral, parallel, indptr, indices: rows_product(out, y, lateral)
        if rows is False:
            return lambda out, y, lateral, parallel, indptr, indices: lateral_product(out, y, lateral)

        def dense(out, y, lateral, parallel, indptr, indices):
            if parallel:
                rows_product(out, y, lateral)
            else:
                lateral_product(out, y, lateral)
        return dense

    def sparse(out, y, lateral, parallel, indptr, indices):
        csr_product(out, y, indptr, indices, lateral, parallel)
    return sparse


def _absent(t) -> bool:
    """Whether a numba argument type is ``None`` (given or left to its default)."""
    return isinstance(t, (types.NoneType, types.Omitted)) or t is None


@njit(cache=True, nogil=True, inline=INLINE)
def _row_product(z, y, lateral):
    """``z = lateral @ y`` for one activity row, by hand."""
    n = y.shape[0]
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc += lateral[i, j] * y[j]
        z[i] = acc


@njit(cache=True, nogil=True, inline=INLINE)
def _relax_row_small(y, drive, lateral, lateral_sign, eta, n_iter, z):
    """``n_iter`` fixed Jacobi iterations on one activity row, lateral product by hand."""
    n = y.shape[0]
    c = 1.0 - eta
    for it in range(n_iter):
        _row_product(z, y, lateral)
        for i in range(n):
            y[i] = c * y[i] + eta * (drive[i] + lateral_sign * z[i])


#: Relative floor of the non-contraction test: an update with ``||dy||^2 <= GROWTH_FLOOR^2 (1 + ||y||^2)``
#: is rounding-level (e.g. a warm-started step already at its fixed point) and never flagged.
GROWTH_FLOOR = 1e-12


def _relax_small(y, drive, lateral, lateral_sign, eta, n_iter, scratch, indptr, indices):
    """``n_iter`` fixed Jacobi iterations of a small population (each batch row on its own when dense).

    NumPy-callable form; compiled callers get the form for their argument
    types from the overload below.
    """
    c = 1.0 - eta
    for it in range(n_iter):
        _lateral(scratch, y, lateral, False, indptr, indices)
        y[:] = c * y + eta * (drive + lateral_sign * scratch)


@overload(_relax_small)
def _relax_small_typed(y, drive, lateral, lateral_sign, eta, n_iter, scratch, indptr, indices):
    if _absent(indptr):
        def dense(y, drive, lateral, lateral_sign, eta, n_iter, scratch, indptr, indices):
            for b in range(y.shape[0]):
                _relax_row_small(y[b], drive[b], lateral, lateral_sign, eta, n_iter, scratch[b])
        return dense

    def sparse(y, drive, lateral, lateral_sign, eta, n_iter, scratch, indptr, indices):
        c = 1.0 - eta
        for it in range(n_iter):
            csr_product(scratch, y, indptr, indices, lateral, False)
            for b in range(y.shape[0]):
                for i in range(y.shape[1]):
                    y[b, i] = c * y[b, i] + eta * (drive[b, i] + lateral_sign * scratch[b, i])
    return sparse


@njit(cache=True, nogil=True, inline=INLINE)
def _relax_measured(y, drive, lateral, lateral_sign, eta, scratch, parallel, indptr, indices):
    """One Jacobi iteration on every batch row; returns ``(||dy||^2, ||y||^2)`` over the batch.

    The update is the same expression as in the unmeasured loops, so a
    measured iteration gives the same bits; the sums have no branches, so
    measuring costs a few multiply-adds per unit.
    """
    batch, n = y.shape
    c = 1.0 - eta
    du2 = 0.0
    y2 = 0.0
    if lateral_sign == 0.0:
        for b in range(batch):
            for i in range(n):
                v = c * y[b, i] + eta * drive[b, i]
                d = v - y[b, i]
                du2 += d * d
                y2 += v * v
                y[b, i] = v
        return du2, y2
    _lateral(scratch, y, lateral, parallel, indptr, indices)
    for b in range(batch):
        for i in range(n):
            v = c * y[b, i] + eta * (drive[b, i] + lateral_sign * scratch[b, i])
            d = v - y[b, i]
            du2 += d * d
            y2 += v * v
            y[b, i] = v
    return du2, y2


@njit(cache=True, nogil=True, inline=INLINE)
def _not_contracting(u_first, u_last, y2):
    """The non-contraction test of :func:`jacobi_relax` on squared Euclidean norms.

    ``u_first``, ``u_last``: the step's first and last updates, ``y2``: the
    last iterate. A NaN state never fails it (the finiteness checks name it).
    Squares overflow from ``|dy| ~ 1e154``: growth into overflow (``u_first``
    finite, ``u_last`` not) fails the test; a first update that already
    overflows (an input of 1e200, where the iteration may well contract) does
    not, and a state that keeps growing overflows and is reported as Inf.
    """
    if u_last == np.inf:
        return u_first < np.inf
    return u_last >= u_first and u_last > GROWTH_FLOOR * GROWTH_FLOOR * (1.0 + y2)


@njit(cache=True, nogil=True, inline=INLINE)
def jacobi_relax(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, indptr=None,
                 indices=None):
    """Weighted Jacobi iteration ``y <- (1 - eta) y + eta (drive + s M y)`` (paper 002, Eq. 17).

    With ``s = -1`` and ``M = W^YY`` this is Eq. 17 exactly: the fixed point
    solves ``(I + W^YY) y = W^YX x`` (Eq. 16 after dividing by the
    normalisers of Eq. 18).

    Non-contraction: with ``u_k`` the Euclidean norm, over the whole batch,
    of the ``k``-th update ``dy_k = y_k - y_{k-1}`` and ``K`` the last
    iteration run, the step fails when ``u_K >= u_1`` (over the step the
    iteration did not shrink its update) and the last update is above rounding,
    ``u_K^2 > GROWTH_FLOOR^2 (1 + ||y_K||^2)``. The updates obey
    ``dy_{k+1} = T dy_k`` with ``T = (1 - eta) I + eta s M``; for a symmetric
    ``M`` (the Hebbian and anti-Hebbian lateral weights of paper 002)
    ``||T v|| <= rho(T) ||v||``, so a contracting iteration (``rho(T) < 1``)
    never fails the test, and a non-contracting one (``rho(T) >= 1``) fails
    it once its non-decaying mode dominates the update. A non-symmetric ``M``
    can grow transiently although ``rho(T) < 1``; the test then fails only
    if the growth still holds at the last iteration.
    The test is the same in both modes and is made once, after the last
    iteration (from two iterations on: one has nothing to compare), so the
    fixed-iterations mode measures only its first (when not ``zero_start``)
    and last iterations.

    Parameters
    ----------
    y : (batch, n) array, in place; the starting point unless ``zero_start``.
    drive : (batch, n) array, the feed-forward input ``W^YX x`` (fixed within a step).
    lateral : (n, n) array with zero diagonal; ignored when ``lateral_sign == 0``.
    lateral_sign : float, -1 (inhibitory), +1, or 0 (no lateral projection).
    eta : float in (0, 1], the Jacobi weight.
    tol : float; stop when ``max |dy| <= tol * max(max |y|, max |drive|)``
        (over the batch, ``y`` the new iterate): relative to the problem's own
        scale, the drive's, so the same iteration rescaled stops at the same
        iterate (issue 38; the ``tol * (1 + max |y|)`` used before was
        absolute below 1). When every drive is 0 (the fixed point is 0) the
        scale is the starting state's ``max |y|`` instead. ``tol <= 0`` runs
        exactly ``max_iter`` iterations (fixed-iterations mode).
    max_iter : int >= 1.
    zero_start : bool, start from ``y = 0`` instead of the previous ``y``.
    scratch : (batch, n) array used as workspace.
    info : int64 array of length 2; ``info[0]`` receives the iterations run
        (``-max_iter`` when ``tol > 0`` and the tolerance was not reached, or
        when the iteration did not contract); ``info[1]`` counts the calls
        that hit ``max_iter`` before ``tol`` while contracting.
    indptr, indices : int arrays, optional
        A sparse lateral projection's compressed rows
        (:mod:`neurosim.synapse_index`); ``lateral`` is then its 1-D weights.

    Returns
    -------
    ok : bool, False when the iteration did not contract (``y`` holds the
        last iterate). A NaN/Inf state is not reported here: it returns True
        and the finiteness checks name it.
    """
    return _jacobi(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, False, 0, indptr,
                   indices)


# What segments call: jacobi_relax split by the two choices a segment's plan makes once, so that numba
# compiles one lateral product (serial or row-parallel) and one mode (fixed iterations or a tolerance),
# not every combination: the tolerance-mode kernel alone compiles in about half the time of the whole.
# Each takes jacobi_relax's arguments; the mode kernels read ``tol`` as the plan found it.
@njit(cache=True, nogil=True, inline=INLINE)
def jacobi_fixed(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, indptr=None,
                 indices=None):
    """:func:`jacobi_relax` for ``tol <= 0`` (exactly ``max_iter`` iterations); same arguments and result."""
    return _jacobi(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, False, 1, indptr,
                   indices)


@njit(cache=True, nogil=True, inline=INLINE)
def jacobi_tolerance(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, indptr=None,
                     indices=None):
    """:func:`jacobi_relax` for ``tol > 0`` (stop at the tolerance); same arguments and result."""
    return _jacobi(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, False, 2, indptr,
                   indices)


@njit(cache=True, nogil=True, inline=INLINE)
def jacobi_fixed_rows(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, indptr=None,
                      indices=None):
    """:func:`jacobi_fixed` with row-parallel lateral products (:mod:`neurosim.kernels.parallel`; the same bits)."""
    return _jacobi(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, True, 1, indptr,
                   indices)


@njit(cache=True, nogil=True, inline=INLINE)
def jacobi_tolerance_rows(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, indptr=None,
                          indices=None):
    """:func:`jacobi_tolerance` with row-parallel lateral products (the same bits)."""
    return _jacobi(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, True, 2, indptr,
                   indices)


def jacobi_kernel(tol: float, parallel: bool):
    """The kernel a segment calls for Jacobi dynamics with this ``tol``, serial or row-parallel."""
    if tol > 0.0:
        return jacobi_tolerance_rows if parallel else jacobi_tolerance
    return jacobi_fixed_rows if parallel else jacobi_fixed


# inline="always" whatever the build: the constants the entry points pass (``parallel``, ``mode``) then prune
# the branches they decide before numba types them, which a separately compiled body would not.
@njit(cache=True, nogil=True, inline="always")
def _jacobi(y, drive, lateral, lateral_sign, eta, tol, max_iter, zero_start, scratch, info, parallel, mode, indptr,
            indices):
    """The body of every Jacobi kernel; ``parallel`` and ``mode`` are constants of each entry point.

    ``parallel``: row-parallel lateral products (``_lateral``'s overload
    reads the literal). ``mode``: 0 decides by ``tol`` at run time
    (:func:`jacobi_relax`), 1 runs fixed iterations, 2 stops at ``tol``.
    """
    batch, n = y.shape
    c = 1.0 - eta
    u_first = 0.0  # squared norm of the first update
    y2 = 0.0  # squared norm of the latest iterate
    floor = 0.0  # the tolerance's scale besides max |y|: max |drive|, or the start's max |y| for a zero drive
    if mode == 2 or (mode == 0 and tol > 0.0):
        for b in range(batch):
            for i in range(n):
                if abs(drive[b, i]) > floor:
                    floor = abs(drive[b, i])
        if floor == 0.0 and not zero_start:
            for b in range(batch):
                for i in range(n):
                    if abs(y[b, i]) > floor:
                        floor = abs(y[b, i])
    if zero_start:
        # From y = 0 the lateral term vanishes and the first iterate is exactly eta * drive,
        # bit for bit what the general update gives; skipping its product saves one of the
        # max_iter matrix products per step.
        for b in range(batch):
            for i in range(n):
                v = eta * drive[b, i]
                y[b, i] = v
                u_first += v * v
        y2 = u_first  # the first update is the first iterate
        if mode == 2 or (mode == 0 and tol > 0.0):
            delta = 0.0  # max |y - 0|
            for b in range(batch):
                for i in range(n):
                    if abs(y[b, i]) > delta or y[b, i] != y[b, i]:
                        delta = abs(y[b, i])
            if delta <= tol * max(delta, floor) or delta != delta:
                info[0] = 1
                return True
    u_last = u_first
    if mode == 1 or (mode == 0 and tol <= 0.0):
        # fixed-iterations mode: no convergence bookkeeping. Only the iterations the
        # non-contraction test compares are measured (the first, unless zero_start gave it,
        # and the last); the others run unmeasured so the update loop vectorizes.
        first = 1 if zero_start else 0
        if not zero_start:
            u_first, y2 = _relax_measured(y, drive, lateral, lateral_sign, eta, scratch, parallel, indptr, indices)
            u_last = u_first
            first = 1
        n_fast = max_iter - 1 - first
        if n_fast > 0:
            if lateral_sign == 0.0:
                for it in range(n_fast):
                    for b in range(batch):
                        for i in range(n):
                            y[b, i] = c * y[b, i] + eta * drive[b, i]
            elif n <= SMALL_LATERAL and not parallel:
                # small populations: each batch row relaxes on its own (rows are independent),
                # so the inner loops run on 1-D rows without the batch index
                _relax_small(y, drive, lateral, lateral_sign, eta, n_fast, scratch, indptr, indices)
            else:
                for it in range(n_fast):
                    _lateral(scratch, y, lateral, parallel, indptr, indices)
                    for b in range(batch):
                        for i in range(n):
                            y[b, i] = c * y[b, i] + eta * (drive[b, i] + lateral_sign * scratch[b, i])
        if max_iter > first:
            u_last, y2 = _relax_measured(y, drive, lateral, lateral_sign, eta, scratch, parallel, indptr, indices)
        info[0] = max_iter
        if max_iter > 1 and _not_contracting(u_first, u_last, y2):
            info[0] = -max_iter
            return False
        return True
    first = 1 if zero_start else 0
    for it in range(first, max_iter):
        delta = 0.0
        ymax = 0.0
        du2 = 0.0
        y2 = 0.0
        if lateral_sign != 0.0:
            _lateral(scratch, y, lateral, parallel, indptr, indices)
        else:
            for b in range(batch):  # a loop here rather than zero_fill: one function less to compile
                for i in range(n):
                    scratch[b, i] = 0.0
        for b in range(batch):
            for i in range(n):
                v = c * y[b, i] + eta * (drive[b, i] + lateral_sign * scratch[b, i])
                d = v - y[b, i]
                du2 += d * d
                y2 += v * v
                d = abs(d)
                if d > delta or d != d:  # a NaN must stick so the loop can leave on it
                    delta = d
                if abs(v) > ymax:
                    ymax = abs(v)
                y[b, i] = v
        if it == 0:
            u_first = du2
        u_last = du2
        if delta <= tol * max(ymax, floor):
            info[0] = it + 1
            return True
        # NaN never satisfies the test above; leave early so divergence is reported promptly.
        if delta != delta:
            info[0] = it + 1
            return True
    info[0] = -max_iter
    if max_iter > 1 and _not_contracting(u_first, u_last, y2):
        return False
    info[1] += 1
    return True


@njit(cache=True, nogil=True, inline=INLINE)
def all_finite(a):
    """True when every element of ``a`` (any shape) is finite."""
    # ``a.flat`` iterates in place; ``ravel`` would copy an array numba cannot prove contiguous
    for v in a.flat:
        if not (v - v == 0.0):  # false for NaN and +-Inf
            return False
    return True


@njit(cache=True, nogil=True)
def zero_fill(a):
    """Set every element of a C-contiguous array to zero."""
    flat = a.reshape(a.size)
    for i in range(flat.size):
        flat[i] = 0.0


@njit(cache=True, nogil=True)
def copy_into(dst, src):
    """``dst[...] = src`` for C-contiguous arrays of equal size.

    An explicit loop: numba's broadcasting slice assignment costs seconds of
    compilation in every function that uses it, and segments copy inputs and
    records every step.
    """
    d = dst.reshape(dst.size)
    s = src.reshape(src.size)
    for i in range(d.size):
        d[i] = s[i]


@njit(cache=True, nogil=True, inline=INLINE)
def copy_1d(dst, src):
    """``dst[:] = src`` for 1-D arrays (the per-step copies of a segment; faster than :func:`copy_into`)."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, nogil=True, inline=INLINE)
def copy_2d(dst, src):
    """``dst[:, :] = src`` for 2-D arrays, as an explicit loop."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, nogil=True, inline=INLINE)
def copy_2d_finite(dst, src):
    """``dst[:, :] = src`` and whether every copied value is finite.

    A segment loads each step's input with it: the test rides on the copy at
    no measurable cost, where a separate scan of the input block would stream
    it through memory a second time.
    """
    bad = 0
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            v = src[i, j]
            dst[i, j] = v
            bad |= not (v - v == 0.0)  # NaN or +-Inf; no branch, so the loop vectorizes
    return bad == 0
