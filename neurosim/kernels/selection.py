"""Numba kernels of example selection for dictionary learning (paper 004).

Tsuchida & Cottrell (2015), "Example selection for dictionary learning":
goodness measures (Sec. 3.1, Eq. 9-13), selector functions (Sec. 3.2,
Eq. 14-15) and activity equalization (Sec. 2.3, Alg. 1 step 4b).

Layout (the framework's): samples are rows. ``X`` is (N, P) inputs, ``S``
is (N, K) activations, ``W`` is (K, P) with atoms as rows, so the paper's
``A-hat`` is ``W.T`` and sample ``i`` is reconstructed as ``S[i] @ W``.

Goodness is factored as ``G_ij = f_i * |s_ij|`` (Grad, SNR, SUN) or
``G_ij = f_i`` (Err, SalMap), with the per-sample factor ``f_i`` of
:func:`sample_factors`; ``G`` (N x K) is never materialized by the
selectors. The product ``f * a`` is taken as 0 whenever ``f == 0`` or
``a == 0`` (see :func:`_prod`), so ``f_i = +inf`` (SNR of a perfectly
reconstructed sample) never produces ``inf * 0 = NaN``.

These kernels trust their caller for values (finite inputs, valid codes);
``neurosim.selection_functions`` validates. They do check array sizes, because numba
does not bounds-check and a short work array would corrupt memory.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "ERR", "GRAD", "SNR", "SUN", "SALMAP", "UNIFORM", "BY_SUM", "BY_ELEMENT",
    "sample_factors", "goodness_dense", "row_scores", "select_examples", "selection_workspace",
    "uniform_indices", "equalize", "gabor_bank", "saliency_maps", "saliency_map",
    "GABOR_RADIUS", "GABOR_SIGMA", "GABOR_WAVELENGTH", "N_MAPS",
]

# goodness measures (Eq. 9-13)
ERR, GRAD, SNR, SUN, SALMAP = 0, 1, 2, 3, 4
# selector functions (uniform sampling, Eq. 14, Eq. 15)
UNIFORM, BY_SUM, BY_ELEMENT = 0, 1, 2

# SplitMix64 (Steele, Lea & Flood 2014) constants
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


# ----------------------------------------------------------------------------- goodness

@njit(cache=True)
def _prod(f, a):
    # f, a in [0, inf]: a zero factor wins over an infinite one, so that an
    # SNR of +inf on an inactive element is goodness 0, never NaN.
    if f == 0.0 or a == 0.0:
        return 0.0
    return f * a


@njit(cache=True)
def sample_factors(X, S, W, measure, saliency, out):
    """Per-sample goodness factor ``f_i`` (Eq. 9-13), in place.

    Parameters
    ----------
    X : float64 (N, P)
    S : float64 (N, K)
        Activations; only the nonzeros of each row are visited.
    W : float64 (K, P)
        Dictionary, atoms as rows.
    measure : int
        ``ERR``/``GRAD``: ``||x_i - S[i] @ W||_1`` (Eq. 9, 10).
        ``SNR``: ``||x_i||_2^2 / ||x_i - S[i] @ W||_2^2`` (Eq. 11), with
        ``f_i = 0`` when ``x_i = 0`` and ``f_i = +inf`` when ``x_i != 0`` is
        reconstructed exactly (the largest possible value; a ratio beyond
        the float64 range is also ``+inf``). Both norms are computed scaled
        by their largest entry, so neither overflows on its own.
        ``SUN``: 1 (Eq. 12; the element factor ``|s_ij|`` is applied later).
        ``SALMAP``: ``saliency[i]`` (Eq. 13, precomputed by
        :func:`saliency_map`).
    saliency : float64 (N,) for ``SALMAP``, anything (e.g. length 0) otherwise
    out : float64 (N,)

    Returns
    -------
    int
        Number of samples whose factor is not representable: a non-finite
        residual (``S @ W`` overflows) for every residual measure, or an L1
        norm overflowing for ``ERR``/``GRAD``. Their ``out[i]`` is NaN.
    """
    N, P = X.shape
    K = S.shape[1]
    if S.shape[0] != N or W.shape[0] != K or W.shape[1] != P or out.shape[0] != N:
        raise ValueError("sample_factors: inconsistent shapes of X (N, P), S (N, K), W (K, P), out (N,)")
    if measure < 0 or measure > SALMAP:
        raise ValueError("sample_factors: unknown measure code")
    if measure == SUN:
        for i in range(N):
            out[i] = 1.0
        return 0
    if measure == SALMAP:
        if saliency.shape[0] != N:
            raise ValueError("sample_factors: saliency must have length N for SALMAP")
        for i in range(N):
            out[i] = saliency[i]
        return 0
    r = np.empty(P)
    bad = 0
    for i in range(N):
        for p in range(P):
            r[p] = X[i, p]
        # k nonzeros of K: the reconstruction costs O(k P), not O(K P)
        for j in range(K):
            s = S[i, j]
            if s != 0.0:
                for p in range(P):
                    r[p] -= s * W[j, p]
        finite = True
        for p in range(P):
            if not np.isfinite(r[p]):
                finite = False
                break
        if not finite:
            out[i] = np.nan
            bad += 1
            continue
        if measure == SNR:
            mx = 0.0
            mr = 0.0
            for p in range(P):
                mx = max(mx, abs(X[i, p]))
                mr = max(mr, abs(r[p]))
            if mx == 0.0:
                out[i] = 0.0
            elif mr == 0.0:
                out[i] = np.inf
            else:
                sx = 0.0
                sr = 0.0
                for p in range(P):
                    a = X[i, p] / mx
                    b = r[p] / mr
                    sx += a * a
                    sr += b * b
                q = mx / mr
                out[i] = (q * q) * (sx / sr)
        else:
            e = 0.0
            for p in range(P):
                e += abs(r[p])
            if not np.isfinite(e):
                out[i] = np.nan
                bad += 1
            else:
                out[i] = e
    return bad


@njit(cache=True)
def _element_dependent(measure):
    return measure == GRAD or measure == SNR or measure == SUN


@njit(cache=True)
def goodness_dense(f, S, measure, out):
    """Dense goodness ``G`` (N, K) from the factors ``f`` (analysis only).

    ``G_ij = f_i * |s_ij|`` for ``GRAD``, ``SNR``, ``SUN`` (Eq. 10-12; ``|.|``
    admits signed codes and equals ``s_ij`` for the paper's non-negative
    ones) and ``G_ij = f_i`` for ``ERR``, ``SALMAP`` (Eq. 9, 13). A zero
    factor or a zero activation gives exactly 0.
    """
    N, K = S.shape
    if f.shape[0] != N or out.shape[0] != N or out.shape[1] != K:
        raise ValueError("goodness_dense: inconsistent shapes of f (N,), S (N, K), out (N, K)")
    dep = _element_dependent(measure)
    for i in range(N):
        for j in range(K):
            out[i, j] = _prod(f[i], abs(S[i, j])) if dep else f[i]
    return 0


@njit(cache=True)
def row_scores(f, S, measure, out):
    """The BySum score of Eq. 14 per sample, in place.

    ``f_i * sum_j |s_ij|`` for element-dependent measures (the sum of the
    row of ``G``, factored), ``f_i`` for ``ERR``/``SALMAP`` (the row sum
    ``K f_i`` ranks the same).
    """
    N, K = S.shape
    dep = _element_dependent(measure)
    for i in range(N):
        if dep:
            t = 0.0
            for j in range(K):
                t += abs(S[i, j])
            out[i] = _prod(f[i], t)
        else:
            out[i] = f[i]
    return 0


# ----------------------------------------------------------------------------- top-m heaps

@njit(cache=True)
def _worse(sa, ia, sb, ib):
    # the ranking order of every selector: larger goodness first, ties to the lower index
    return sa < sb or (sa == sb and ia > ib)


@njit(cache=True, inline="always")
def _swap(hs, hi, a, b):
    """Exchange heap entries ``a`` and ``b`` (score and index)."""
    ts = hs[a]
    hs[a] = hs[b]
    hs[b] = ts
    ti = hi[a]
    hi[a] = hi[b]
    hi[b] = ti


@njit(cache=True)
def _sift_down(hs, hi, start, size):
    # min-heap on _worse: the root is the worst kept candidate
    k = start
    while True:
        c = 2 * k + 1
        if c >= size:
            return
        if c + 1 < size and _worse(hs[c + 1], hi[c + 1], hs[c], hi[c]):
            c += 1
        if not _worse(hs[c], hi[c], hs[k], hi[k]):
            return
        _swap(hs, hi, c, k)
        k = c


@njit(cache=True)
def _sift_up(hs, hi, k):
    while k > 0:
        p = (k - 1) // 2
        if not _worse(hs[k], hi[k], hs[p], hi[p]):
            return
        _swap(hs, hi, p, k)
        k = p


@njit(cache=True)
def _offer(hs, hi, size, m, score, idx):
    """Offer a candidate to a top-``m`` heap holding ``size``; return the new size.

    Candidates must arrive in increasing ``idx``: a tie with the root then
    loses, which is the lower-index-first rule.
    """
    if size < m:
        hs[size] = score
        hi[size] = idx
        _sift_up(hs, hi, size)
        return size + 1
    if _worse(hs[0], hi[0], score, idx):
        hs[0] = score
        hi[0] = idx
        _sift_down(hs, hi, 0, size)
    return size


@njit(cache=True)
def _sort_heap(hs, hi, size):
    # heap sort with the worst at the root: popping to the back leaves the best first
    for end in range(size - 1, 0, -1):
        ts = hs[0]
        hs[0] = hs[end]
        hs[end] = ts
        ti = hi[0]
        hi[0] = hi[end]
        hi[end] = ti
        _sift_down(hs, hi, 0, end)


# ----------------------------------------------------------------------------- uniform

@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def _key(seed, counter):
    return _mix(_mix(np.uint64(seed) + _GAMMA) + np.uint64(counter) * _GAMMA)


@njit(cache=True)
def uniform_indices(N, n, seed, counter, perm, out_idx):
    """``n`` distinct indices of ``range(N)``, uniform without replacement.

    Partial Fisher-Yates shuffle of ``perm`` (length >= N, overwritten) with
    the draws of the SplitMix64 stream whose state starts at
    ``key = mix(mix(seed + g) + counter * g)`` (``g = 0x9E3779B97F4A7C15``,
    ``mix`` its finalizer): draw ``q = 0, 1, ...`` is
    ``mix(key + (q + 1) g)``. Step ``j`` picks ``t = j + u`` with ``u``
    uniform in ``[0, N - j)`` by rejection (``x < 2^64 mod (N - j)`` is
    redrawn, so there is no modulo bias). All arithmetic is on uint64, so
    the result is a pure function of ``(N, n, seed, counter)``: the same
    bits on every machine and in :func:`neurosim.selection_functions._uniform_reference`.
    """
    for i in range(N):
        perm[i] = i
    key = _key(seed, counter)
    q = np.uint64(0)
    one = np.uint64(1)
    for j in range(n):
        m = np.uint64(N - j)
        thr = (np.uint64(0) - m) % m
        while True:
            q += one
            x = _mix(key + q * _GAMMA)
            if x >= thr:
                break
        t = j + np.int64(x % m)
        v = perm[t]
        perm[t] = perm[j]
        perm[j] = v
        out_idx[j] = v
    return 0


# ----------------------------------------------------------------------------- selection

def selection_workspace(N, K, n):
    """Work arrays for :func:`select_examples`: ``(work_int, work_float)``.

    ``work_int`` is int64 of length ``K n + 3 K + N`` and ``work_float``
    float64 of length ``K n``; this covers every selector (ByElement keeps a
    top-``n`` list per element, see :func:`_by_element`; BySum a top-``n``
    heap; Uniform a permutation of ``range(N)``).
    """
    N = int(N)
    K = int(K)
    n = int(n)
    if N < 1 or K < 1 or n < 1 or n > N:
        raise ValueError(f"selection_workspace needs N >= 1, K >= 1 and 1 <= n <= N; got N={N}, K={K}, n={n}")
    return np.zeros(K * n + 3 * K + N, dtype=np.int64), np.zeros(K * n, dtype=np.float64)


@njit(cache=True)
def _by_sum(f, S, measure, n, out_idx, hi, hs):
    N, K = S.shape
    dep = _element_dependent(measure)
    size = 0
    for i in range(N):
        if dep:
            t = 0.0
            for j in range(K):
                t += abs(S[i, j])
            g = _prod(f[i], t)
        else:
            g = f[i]
        size = _offer(hs, hi, size, n, g, i)
    _sort_heap(hs, hi, size)
    for r in range(n):
        out_idx[r] = hi[r]


@njit(cache=True)
def _by_element(f, S, n, out_idx, work_int, work_float):
    # Why a top-n list per element suffices: when element j takes its turn,
    # fewer than n examples are selected, so at least one of the first n
    # entries of column j's full sorted order is unselected, and the first
    # such entry is exactly what j takes. (The first n, not n/K: j may have
    # to skip up to n - 1 examples already taken by other elements.)
    # Only positive goodness is kept in the lists: G >= 0, so the entries
    # with G_ij = 0 come after them in the sorted column in increasing i,
    # and are scanned lazily (zptr) when a list runs dry.
    N, K = S.shape
    m = n
    hidx = work_int[: K * m]
    cnt = work_int[K * m: K * m + K]
    ptr = work_int[K * m + K: K * m + 2 * K]
    zptr = work_int[K * m + 2 * K: K * m + 3 * K]
    sel = work_int[K * m + 3 * K: K * m + 3 * K + N]
    hsc = work_float[: K * m]
    for j in range(K):
        cnt[j] = 0
        ptr[j] = 0
        zptr[j] = 0
    for i in range(N):
        sel[i] = 0
    for i in range(N):
        fi = f[i]
        for j in range(K):
            g = _prod(fi, abs(S[i, j]))
            if g > 0.0:
                cnt[j] = _offer(hsc[j * m: (j + 1) * m], hidx[j * m: (j + 1) * m], cnt[j], m, g, i)
    for j in range(K):
        _sort_heap(hsc[j * m: (j + 1) * m], hidx[j * m: (j + 1) * m], cnt[j])
    count = 0
    while count < n:
        before = count
        for j in range(K):
            if count == n:
                break
            base = j * m
            while ptr[j] < cnt[j] and sel[hidx[base + ptr[j]]] != 0:
                ptr[j] += 1
            if ptr[j] < cnt[j]:
                i = hidx[base + ptr[j]]
                ptr[j] += 1
            else:
                # G_ij = 0 tail of column j, in increasing i
                z = zptr[j]
                while z < N and (sel[z] != 0 or _prod(f[z], abs(S[z, j])) > 0.0):
                    z += 1
                zptr[j] = z
                if z == N:
                    continue  # no candidate left for this element: skipped
                i = z
                zptr[j] = z + 1
            sel[i] = 1
            out_idx[count] = i
            count += 1
        if count == before:  # pragma: no cover - impossible for n <= N
            break
    return count


@njit(cache=True)
def select_examples(f, S, measure, selector, n, seed, counter, out_idx, work_int, work_float):
    """Select ``n`` distinct examples (Alg. 1 step 3), indices into ``out_idx``.

    Parameters
    ----------
    f : float64 (N,)
        Factors from :func:`sample_factors` (values in ``[0, inf]``).
    S : float64 (N, K)
    measure : int
        ``ERR``, ``GRAD``, ``SNR``, ``SUN`` or ``SALMAP`` (ignored by ``UNIFORM``).
    selector : int
        ``BY_SUM`` (Eq. 14): the ``n`` largest row sums of ``G``, best first.
        ``BY_ELEMENT`` (Eq. 15): each column of ``G`` ranked best first;
        round robin over ``j = 0..K-1``, element ``j`` taking its best
        not-yet-selected example per turn, until ``n`` are selected (the
        first ``n mod K`` elements get one extra turn). For ``ERR`` and
        ``SALMAP`` every column has the same order, so the round robin
        takes examples in the BySum order: they are dispatched to BySum and
        the two selectors agree exactly (paper, end of Sec. 3.2).
        ``UNIFORM``: :func:`uniform_indices` with ``(seed, counter)``.
        Ties are broken by the lower sample index throughout.
    n : int in [1, N]
    seed, counter : int >= 0
        ``UNIFORM`` only.
    out_idx : int64 (n,)
        Receives the indices in selection order.
    work_int, work_float : from :func:`selection_workspace` ``(N, K, n)``.

    Returns
    -------
    int
        ``n``.
    """
    N, K = S.shape
    if f.shape[0] != N:
        raise ValueError("select_examples: f must have length N = S.shape[0]")
    if n < 1 or n > N:
        raise ValueError("select_examples: n must be in [1, N]")
    if out_idx.shape[0] != n:
        raise ValueError("select_examples: out_idx must have length n")
    if work_int.shape[0] < K * n + 3 * K + N or work_float.shape[0] < K * n:
        raise ValueError("select_examples: work arrays too short; use selection_workspace(N, K, n)")
    if selector == UNIFORM:
        if seed < 0 or counter < 0:
            raise ValueError("select_examples: seed and counter must be >= 0")
        uniform_indices(N, n, seed, counter, work_int, out_idx)
        return n
    if measure < 0 or measure > SALMAP:
        raise ValueError("select_examples: unknown measure code")
    if selector == BY_SUM or (selector == BY_ELEMENT and not _element_dependent(measure)):
        _by_sum(f, S, measure, n, out_idx, work_int[:n], work_float[:n])
        return n
    if selector == BY_ELEMENT:
        _by_element(f, S, n, out_idx, work_int, work_float)
        return n
    raise ValueError("select_examples: unknown selector code")


# ----------------------------------------------------------------------------- equalization

@njit(cache=True)
def equalize(S, gamma):
    """Activity equalization of Alg. 1 step 4b, in place.

    ``s_ij <- s_ij * (mean_j' m_j' / m_j) ** gamma`` with
    ``m_j = sum_i |s_ij|`` over the rows of ``S`` (``|.|`` admits signed
    codes; it is the paper's ``sum_i s_ij`` for non-negative ones) and the
    mean over all ``K`` elements. An element with ``m_j == 0`` (a zero
    column) is left unchanged. ``gamma = 0`` leaves ``S`` bit-identical;
    ``gamma = 1`` makes every nonzero ``m_j`` equal to the mean (Sec. 2.3).
    When the factor overflows (a subnormal ``m_j``) that column's entries
    are rescaled through logarithms.
    """
    N, K = S.shape
    if gamma == 0.0:
        return 0
    m = np.zeros(K)
    for i in range(N):
        for j in range(K):
            m[j] += abs(S[i, j])
    mean = 0.0
    for j in range(K):
        mean += m[j]
    mean /= K
    # logs[j] is NaN for the usual columns scaled by fac[j]; for a column
    # whose factor overflows (a subnormal m_j) each entry is rescaled in
    # logs instead: |s_ij| <= m_j bounds the result by max(mean, m_j).
    fac = np.ones(K)
    logs = np.full(K, np.nan)
    for j in range(K):
        if m[j] == 0.0:
            continue
        v = (mean / m[j]) ** gamma
        if np.isfinite(v):
            fac[j] = v
        else:
            logs[j] = gamma * (np.log(mean) - np.log(m[j]))
    for i in range(N):
        for j in range(K):
            if np.isnan(logs[j]):
                S[i, j] *= fac[j]
            elif S[i, j] != 0.0:
                v = np.exp(np.log(abs(S[i, j])) + logs[j])
                S[i, j] = v if S[i, j] > 0.0 else -v
    return 0


# ----------------------------------------------------------------------------- saliency

GABOR_RADIUS = 3        # 7 x 7 filters
GABOR_SIGMA = 1.5       # pixels, isotropic Gaussian envelope
GABOR_WAVELENGTH = 4.0  # pixels, cosine carrier
N_MAPS = 6              # centre-surround intensity, 4 orientations, saliency


@njit(cache=True)
def gabor_bank(out):
    """The 4 orientation filters, in place: ``out`` (4, 7, 7).

    ``g_t(dr, dc) = exp(-(dr^2 + dc^2) / (2 sigma^2)) cos(2 pi (dc cx_t + dr cy_t) / lambda)``
    with ``(cx_t, cy_t) = (1, 0), (h, h), (0, 1), (-h, h)`` (``h = sqrt(1/2)``,
    carrier directions 0, 45, 90, 135 degrees from the column axis),
    ``sigma = 1.5``, ``lambda = 4``; each filter then has its mean removed
    (no response to a constant patch) and is scaled to unit L2 norm.
    The direction vectors are exact, so rotating a filter by 90 degrees on
    the grid gives the next filter's values exactly.
    """
    R = GABOR_RADIUS
    h = np.sqrt(0.5)
    cxs = (1.0, h, 0.0, -h)
    cys = (0.0, h, 1.0, h)
    for t in range(4):
        cx = cxs[t]
        cy = cys[t]
        tot = 0.0
        for a in range(2 * R + 1):
            for b in range(2 * R + 1):
                dr = a - R
                dc = b - R
                v = np.exp(-(dr * dr + dc * dc) / (2.0 * GABOR_SIGMA * GABOR_SIGMA)) * np.cos(
                    2.0 * np.pi * (dc * cx + dr * cy) / GABOR_WAVELENGTH)
                out[t, a, b] = v
                tot += v
        mu = tot / ((2 * R + 1) * (2 * R + 1))
        ss = 0.0
        for a in range(2 * R + 1):
            for b in range(2 * R + 1):
                out[t, a, b] -= mu
                ss += out[t, a, b] * out[t, a, b]
        nrm = np.sqrt(ss)
        for a in range(2 * R + 1):
            for b in range(2 * R + 1):
                out[t, a, b] /= nrm
    return 0


@njit(cache=True)
def _itti_normalize(M, flag, stack):
    """Itti's N(.) with the map's own amplitude kept, in place.

    ``M <- M * (1 - mbar / max(M))^2`` where ``mbar`` is the mean of the
    local maxima other than the global one. A local maximum is a positive
    pixel ``>=`` its in-bounds 8-neighbours; 8-connected local-maximum
    pixels of equal value (to ``1e-12 max M``) form one plateau counted
    once, so a straight edge's ridge is one maximum, not many equal ones
    that would null the map. The plateau holding the global maximum is
    excluded; ``mbar = 0`` if no other remains. A zero map stays zero.
    ``flag``, ``stack``: int64 work arrays of length ``side * side``.
    """
    side = M.shape[0]
    mx = 0.0
    for r in range(side):
        for c in range(side):
            mx = max(mx, M[r, c])
    if mx == 0.0:
        return
    for r in range(side):
        for c in range(side):
            v = M[r, c]
            ismax = v > 0.0
            for dr in range(-1, 2):
                for dc in range(-1, 2):
                    rr = r + dr
                    cc = c + dc
                    if (dr != 0 or dc != 0) and 0 <= rr < side and 0 <= cc < side and M[rr, cc] > v:
                        ismax = False
            flag[r * side + c] = 1 if ismax else 0
    tol = 1e-12 * mx
    tot = 0.0
    cnt = 0
    gotmax = False
    for p0 in range(side * side):
        if flag[p0] != 1:
            continue
        v0 = M[p0 // side, p0 % side]
        flag[p0] = 2
        top = 1
        stack[0] = p0
        best = v0
        while top > 0:
            top -= 1
            p = stack[top]
            r = p // side
            c = p % side
            best = max(best, M[r, c])
            for dr in range(-1, 2):
                for dc in range(-1, 2):
                    rr = r + dr
                    cc = c + dc
                    if 0 <= rr < side and 0 <= cc < side:
                        q = rr * side + cc
                        if flag[q] == 1 and abs(M[rr, cc] - v0) <= tol:
                            flag[q] = 2
                            stack[top] = q
                            top += 1
        if best == mx and not gotmax:
            gotmax = True  # the global maximum's plateau (one occurrence) is not averaged
            continue
        tot += best
        cnt += 1
    mbar = tot / cnt if cnt > 0 else 0.0
    w = 1.0 - mbar / mx
    w = w * w
    for r in range(side):
        for c in range(side):
            M[r, c] *= w


@njit(cache=True)
def _saliency_one(x, side, gab, maps, flag, stack):
    R = GABOR_RADIUS
    # intensity channel: centre-surround |I - mean of the in-bounds 3x3 window|, I = |x|
    I = maps[0]
    for r in range(side):
        for c in range(side):
            s = 0.0
            k = 0
            for rr in range(max(r - 1, 0), min(r + 2, side)):
                for cc in range(max(c - 1, 0), min(c + 2, side)):
                    s += abs(x[rr * side + cc])
                    k += 1
            I[r, c] = abs(abs(x[r * side + c]) - s / k)
    # orientation channel: |correlation with each Gabor|, zero padding
    for t in range(4):
        O = maps[1 + t]
        for r in range(side):
            for c in range(side):
                s = 0.0
                for a in range(max(0, R - r), min(2 * R + 1, side - r + R)):
                    for b in range(max(0, R - c), min(2 * R + 1, side - c + R)):
                        s += x[(r + a - R) * side + (c + b - R)] * gab[t, a, b]
                O[r, c] = abs(s)
    _itti_normalize(I, flag, stack)
    Sal = maps[5]
    for r in range(side):
        for c in range(side):
            Sal[r, c] = 0.0
    for t in range(4):
        _itti_normalize(maps[1 + t], flag, stack)
        for r in range(side):
            for c in range(side):
                Sal[r, c] += maps[1 + t][r, c]
    for r in range(side):
        for c in range(side):
            Sal[r, c] *= 0.25
    _itti_normalize(Sal, flag, stack)  # orientation conspicuity, N(mean_t N(O_t))
    best = 0.0
    for r in range(side):
        for c in range(side):
            v = 0.5 * (I[r, c] + Sal[r, c])
            Sal[r, c] = v
            best = max(best, v)
    return best


@njit(cache=True)
def saliency_maps(X, side, maps, out):
    """:func:`saliency_map` also keeping the maps: ``maps`` (N, 6, side, side).

    ``maps[i, 0]`` is N(intensity centre-surround), ``maps[i, 1 + t]`` is
    N(O_t) for orientations 0, 45, 90, 135 degrees, ``maps[i, 5]`` the
    saliency map; ``out[i]`` its maximum.
    """
    N, P = X.shape
    if side < 1 or side * side != P:
        raise ValueError("saliency_maps: side must be >= 1 with side * side equal to X.shape[1]")
    if maps.shape[0] != N or maps.shape[1] != N_MAPS or maps.shape[2] != side or maps.shape[3] != side:
        raise ValueError("saliency_maps: maps must have shape (N, 6, side, side)")
    if out.shape[0] != N:
        raise ValueError("saliency_maps: out must have length N")
    gab = np.empty((4, 2 * GABOR_RADIUS + 1, 2 * GABOR_RADIUS + 1))
    gabor_bank(gab)
    flag = np.empty(P, dtype=np.int64)
    stack = np.empty(P, dtype=np.int64)
    for i in range(N):
        out[i] = _saliency_one(X[i], side, gab, maps[i], flag, stack)
    return 0


@njit(cache=True)
def saliency_map(X, side, out):
    """Single-scale Itti-Koch-Niebur saliency of each patch (Eq. 13), in place.

    Each row of ``X`` (N, side*side) is a row-major ``side x side``
    monochrome patch (signed). Per patch:

    1. intensity ``I = |x|``; feature map ``C(p) = |I(p) - mean of I over
       the 3x3 window at p clipped to the patch|`` (single-scale
       centre-surround);
    2. orientation maps ``O_t = |x (*) g_t|``, the correlation with the 4
       Gabor filters of :func:`gabor_bank` (0, 45, 90, 135 degrees, 7x7,
       sigma 1.5, wavelength 4, zero mean, unit norm), zero padding;
    3. Itti's N(.) (:func:`_itti_normalize`): ``M * (1 - mbar / max M)^2``,
       promoting maps with one dominant peak (a plateau of equal local
       maxima counts as one). Unlike Itti et al.'s first
       step (rescale to [0, 1]) the map keeps its amplitude: every patch
       is its own "image" here, and a per-patch rescale would give a faint
       and a strong edge the same score, whereas selection compares
       patches. The score is thus homogeneous of degree 1 in ``x``;
    4. conspicuities ``Ibar = N(C)``, ``Obar = N(mean_t N(O_t))``;
       saliency map ``(Ibar + Obar) / 2``;
    5. score = the maximum of the saliency map: the location Itti et al.'s
       winner-take-all attends first (the mean would dilute one salient
       feature in a mostly blank patch).

    A blank (constant-zero) patch scores 0.
    """
    N, P = X.shape
    if side < 1 or side * side != P:
        raise ValueError("saliency_map: side must be >= 1 with side * side equal to X.shape[1]")
    if out.shape[0] != N:
        raise ValueError("saliency_map: out must have length N")
    gab = np.empty((4, 2 * GABOR_RADIUS + 1, 2 * GABOR_RADIUS + 1))
    gabor_bank(gab)
    maps = np.empty((N_MAPS, side, side))
    flag = np.empty(P, dtype=np.int64)
    stack = np.empty(P, dtype=np.int64)
    for i in range(N):
        out[i] = _saliency_one(X[i], side, gab, maps, flag, stack)
    return 0
