"""Compiled inner loops of the SMO solver (numba, ``cache=True``).

Everything here works on plain arrays so that :mod:`margin_opt.solvers.smo`
stays readable.  Three groups:

* kernel rows: ``K[r, :]`` (or ``K[r, active columns]``) for linear / poly /
  rbf / sigmoid on dense or CSR data, with a vectorizable ``exp``;
* the row cache: LRU slots of data rows, each valid for all columns or for the
  active set of one shrinking epoch (LIBSVM computes only active columns too);
* the SMO iteration (LIBSVM's ``Solver::Solve``): WSS 1 / WSS 2, the analytic
  two-variable update clipped to the box, shrinking, gradient reconstruction.

Structures passed around
------------------------
:class:`KernelArrays` ``kd``: how kernel rows are computed (the kernel's kind and
parameters, the data dense or CSR with its CSC copy, scratch buffers);
:class:`RowCache` ``cc``: the LRU slots of kernel rows;
``st`` (int64 state): see the ``S_*`` constants.  Both are named tuples, which
numba compiles to plain tuples (attribute access costs nothing).

References
----------
J. C. Platt, "Sequential minimal optimization", MSR-TR-98-14, 1998.
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training SVM", JMLR 6, 2005 (WSS 2, Algorithm 1 and eq. (12)).
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011, §4.1 (stopping rule, shrinking, gradient reconstruction).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

#: How kernel rows are computed.  ``kind`` (K_*), ``gamma``, ``coef0``, ``degree``;
#: ``sparse``; dense ``X`` (n, d) and its transpose ``XT`` (d, n) — for sparse X,
#: ``XT`` is the dense transpose when it fits a quarter of the cache budget, else a
#: (1, 1) placeholder; ``sq`` the squared row norms; the CSR arrays ``data``,
#: ``indices``, ``indptr`` and the CSC copy ``cdata``, ``cindices``, ``cindptr`` (used
#: for whole rows: K[r, :] = Σ_f x_rf X[:, f]); scratch ``xbuf`` (d), ``kbuf`` (n,
#: int64), ``tmp`` (n); ``all_cols`` = arange(n).
KernelArrays = namedtuple("KernelArrays", [
    "kind", "gamma", "coef0", "degree", "sparse", "X", "XT", "sq", "data", "indices",
    "indptr", "xbuf", "kbuf", "tmp", "cdata", "cindices", "cindptr", "all_cols"])

#: The row cache: ``cache`` (n_slots, n_data) float64 rows (only read: it may be a
#: read-only or memory-mapped kernel matrix), ``slot_of_row`` (n_data,),
#: ``row_of_slot`` (n_slots,), ``slot_epoch`` (FULL, or the shrinking epoch whose
#: active columns a row is valid for), ``slot_tick`` (last use, for LRU) and
#: ``store``, the same array as ``cache`` where rows are computed (written), a
#: (1, 1) placeholder where the whole matrix is given.
RowCache = namedtuple("RowCache", ["cache", "slot_of_row", "row_of_slot", "slot_epoch",
                                   "slot_tick", "store"])

# kernel kinds
K_LINEAR, K_POLY, K_RBF, K_SIGMOID, K_PRECOMPUTED = 0, 1, 2, 3, 4

# int64 state vector
S_ITER, S_COUNTER, S_ACTIVE, S_UNSHRINK, S_EPOCH, S_TICK = 0, 1, 2, 3, 4, 5
S_ROWS_FULL, S_ROWS_PARTIAL, S_HITS, S_MISSES, S_ACTIVE_SUM, S_MARK = 6, 7, 8, 9, 10, 11
N_STATE = 12

# return codes of the run loop
R_OPTIMAL, R_CHUNK, R_MAX_ITER, R_STALLED, R_CAP = 0, 1, 2, 3, 4

FULL = -1            # slot_epoch of a row valid for every column
TAU = 1e-12          # LIBSVM's guard for non-positive curvature
GUARD = 1e-4         # RBF: recompute ‖x − z‖² exactly below GUARD·(‖x‖² + ‖z‖²)
_FM = {"nnan", "ninf", "nsz", "contract", "arcp"}   # no reassociation: exp stays exact

_LOG2E = 1.4426950408889634
_LN2HI = 6.93147180369123816490e-01
_LN2LO = 1.90821492927058770002e-10


@njit(cache=True, fastmath=_FM)
def vexp(a, n, kbuf):
    """a[:n] = exp(a[:n]) in place; vectorizable (Cody–Waite + degree-13 Taylor).

    Relative error below 2e-16 on [-708, 709]; arguments below -708 give ~3e-308.
    """
    for i in range(n):
        x = min(max(a[i], -708.0), 709.0)
        k = np.floor(x * _LOG2E + 0.5)
        r = (x - k * _LN2HI) - k * _LN2LO
        p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
                1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                    1.0 / 479001600 + r * (1.0 / 6227020800)))))))))))))
        kbuf[i] = (np.int64(k) + 1023) << 52
        a[i] = p
    kf = kbuf.view(np.float64)
    for i in range(n):
        a[i] *= kf[i]


@njit(cache=True)
def exact_d2(r, c, kd):
    """‖x_r − x_c‖² summed coordinate by coordinate (no cancellation).

    Sparse rows are merged on their sorted column indices.
    """
    if not kd.sparse:
        X = kd.X
        s = 0.0
        for f in range(X.shape[1]):
            t = X[r, f] - X[c, f]
            s += t * t
        return s
    data, indices, indptr = kd.data, kd.indices, kd.indptr
    p, pe, q, qe = indptr[r], indptr[r + 1], indptr[c], indptr[c + 1]
    s = 0.0
    while p < pe or q < qe:
        fp = indices[p] if p < pe else np.iinfo(np.int64).max
        fq = indices[q] if q < qe else np.iinfo(np.int64).max
        if fp == fq:
            t = data[p] - data[q]
            p += 1
            q += 1
        elif fp < fq:
            t = data[p]
            p += 1
        else:
            t = data[q]
            q += 1
        s += t * t
    return s


@njit(cache=True, fastmath=_FM)
def _transform(r, buf, cols, lo, hi, kd, kbuf):
    """Turn dot products buf[lo:hi] (columns cols[lo:hi], data rows) into kernel values.

    RBF: ‖x − z‖² = ‖x‖² + ‖z‖² − 2xᵀz loses its digits when ‖x − z‖² is small
    against ‖x‖² + ‖z‖² (the data are centred once, which removes the common case:
    a large offset of the features); those entries are recomputed coordinate by
    coordinate (:func:`exact_d2`).
    """
    kind, gamma, coef0, degree = kd.kind, kd.gamma, kd.coef0, kd.degree
    sq = kd.sq
    if kind == K_RBF:
        sr = sq[r]
        for k in range(lo, hi):
            c = cols[k]
            norms = sr + sq[c]
            d2 = norms - 2.0 * buf[k]
            if d2 <= GUARD * norms:
                d2 = 0.0 if c == r else exact_d2(r, c, kd)
            buf[k] = -gamma * max(d2, 0.0)
        vexp(buf[lo:hi], hi - lo, kbuf[lo:hi])
    elif kind == K_POLY:
        for k in range(lo, hi):
            z = gamma * buf[k] + coef0
            v = 1.0
            for _ in range(degree):
                v *= z
            buf[k] = v
    elif kind == K_SIGMOID:
        for k in range(lo, hi):
            buf[k] = math.tanh(gamma * buf[k] + coef0)


@njit(cache=True, fastmath=_FM)
def _dense_dots(r, buf, lo, hi, X, XT, sparse, data, indices, indptr):
    """buf[lo:hi] = xᵣᵀ X[lo:hi]ᵀ by axpys over the transposed data (dense XT)."""
    for k in range(lo, hi):
        buf[k] = 0.0
    if sparse:
        for q in range(indptr[r], indptr[r + 1]):
            v = data[q]
            f = indices[q]
            for k in range(lo, hi):
                buf[k] += v * XT[f, k]       # (2-D indexing vectorizes; a row view did not)
    else:
        for f in range(XT.shape[0]):
            v = X[r, f]
            if v != 0.0:
                for k in range(lo, hi):
                    buf[k] += v * XT[f, k]


@njit(cache=True, fastmath=_FM)
def kernel_row(r, out, cols, ncols, kd):
    """Kernel values K[r, c] for data row r.

    ``ncols < 0``: every column, written to ``out[c]``; else only the columns
    ``cols[:ncols]`` (data rows), written to ``out[cols[k]]``.  (Splitting whole rows
    over threads was measured: 1.3–3× slower per row on a shared 2-core machine,
    so rows stay single-threaded; blocks of rows use threads, see kernel_blocks.)
    """
    sparse, X, XT = kd.sparse, kd.X, kd.XT
    data, indices, indptr, xbuf, tmp = kd.data, kd.indices, kd.indptr, kd.xbuf, kd.tmp
    n_all = out.shape[0]
    full = ncols < 0
    n = n_all if full else ncols
    buf = out if full else tmp
    dense_cols = (not sparse) or XT.shape[1] == n_all
    if full and dense_cols:
        _dense_dots(r, buf, 0, n, X, XT, sparse, data, indices, indptr)
    elif sparse and full:
        cdata, cindices, cindptr = kd.cdata, kd.cindices, kd.cindptr
        for k in range(n):
            buf[k] = 0.0
        for q in range(indptr[r], indptr[r + 1]):
            v = data[q]
            f = indices[q]
            for e in range(cindptr[f], cindptr[f + 1]):
                buf[cindices[e]] += v * cdata[e]
    elif sparse:
        for q in range(indptr[r], indptr[r + 1]):
            xbuf[indices[q]] = data[q]
        for k in range(n):
            c = cols[k]
            s = 0.0
            for q in range(indptr[c], indptr[c + 1]):
                s += xbuf[indices[q]] * data[q]
            buf[k] = s
        for q in range(indptr[r], indptr[r + 1]):
            xbuf[indices[q]] = 0.0
    else:
        d = X.shape[1]
        for k in range(n):
            c = cols[k]
            s = 0.0
            for f in range(d):
                s += X[r, f] * X[c, f]
            buf[k] = s
    _transform(r, buf, kd.all_cols if full else cols, 0, n, kd, kd.kbuf)
    if not full:
        for k in range(n):
            out[cols[k]] = buf[k]


@njit(cache=True, inline="always")
def get_row(v, need_full, index, st, kd, cc, all_cols):
    """Slot of the cache holding K[index[v], ·], valid on the active set (or all).

    The variables are kept permuted so that the active ones are the first
    ``st[S_ACTIVE]``: their data rows are ``index[:active_size]``.
    """
    cache, slot_of_row, row_of_slot, slot_epoch, slot_tick = (
        cc.cache, cc.slot_of_row, cc.row_of_slot, cc.slot_epoch, cc.slot_tick)
    r = index[v]
    st[S_TICK] += 1
    s = slot_of_row[r]
    if s >= 0:
        e = slot_epoch[s]
        if e == FULL or (not need_full and e == st[S_EPOCH]):
            slot_tick[s] = st[S_TICK]
            st[S_HITS] += 1
            return s
    elif cache.shape[0] >= cache.shape[1]:
        s = r                                  # everything fits: slot = data row
        row_of_slot[s] = r
        slot_of_row[r] = s
    else:
        # evict the least recently used slot
        s = 0
        best = slot_tick[0]
        for t in range(1, slot_tick.shape[0]):
            if slot_tick[t] < best:
                best = slot_tick[t]
                s = t
        old = row_of_slot[s]
        if old >= 0:
            slot_of_row[old] = -1
        row_of_slot[s] = r
        slot_of_row[r] = s
    st[S_MISSES] += 1
    slot_tick[s] = st[S_TICK]
    n_data = cache.shape[1]
    na = st[S_ACTIVE]
    store = cc.store
    if need_full or 2 * na > n_data:
        kernel_row(r, store[s], all_cols, -1, kd)
        slot_epoch[s] = FULL
        st[S_ROWS_FULL] += 1
    else:
        kernel_row(r, store[s], index, na, kd)
        slot_epoch[s] = st[S_EPOCH]
        st[S_ROWS_PARTIAL] += 1
    return s


@njit(cache=True)
def init_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    """G = Qα + p and G_bar = Σ_{α_i = C_i} C_i Q_i over all variables."""
    m = alpha.shape[0]
    cache = cc.cache
    for t in range(m):
        G[t] = p[t]
        G_bar[t] = 0.0
    for i in range(m):
        if alpha[i] > 0.0:
            s = get_row(i, True, index, st, kd, cc, all_cols)
            row = cache[s]
            a = alpha[i] * y[i]
            for t in range(m):
                G[t] += a * y[t] * row[index[t]]
            if alpha[i] >= C[i]:
                c = C[i] * y[i]
                for t in range(m):
                    G_bar[t] += c * y[t] * row[index[t]]


@njit(cache=True)
def reconstruct_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    """Restore G on the shrunk variables (LIBSVM's ``reconstruct_gradient``)."""
    m = alpha.shape[0]
    na = st[S_ACTIVE]
    if na == m:
        return
    cache = cc.cache
    for j in range(na, m):
        G[j] = G_bar[j] + p[j]
    nr_free = 0
    for i in range(na):
        if 0.0 < alpha[i] < C[i]:
            nr_free += 1
    if nr_free * m > 2 * na * (m - na):
        # rows of the inactive variables over the active columns
        for i in range(na, m):
            s = get_row(i, False, index, st, kd, cc, all_cols)
            row = cache[s]
            acc = 0.0
            for j in range(na):
                if 0.0 < alpha[j] < C[j]:
                    acc += alpha[j] * y[j] * row[index[j]]
            G[i] += y[i] * acc
    else:
        for i in range(na):
            if 0.0 < alpha[i] < C[i]:
                s = get_row(i, True, index, st, kd, cc, all_cols)
                row = cache[s]
                a = alpha[i] * y[i]
                for j in range(na, m):
                    G[j] += a * y[j] * row[index[j]]


@njit(cache=True)
def unshrink(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    reconstruct_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols)
    m = alpha.shape[0]
    if st[S_ACTIVE] < m:
        st[S_ACTIVE] = m
        st[S_EPOCH] += 1


@njit(cache=True)
def _be_shrunk(i, Gmax1, Gmax2, alpha, G, y, C):
    if alpha[i] >= C[i]:
        if y[i] > 0:
            return -G[i] > Gmax1
        return -G[i] > Gmax2
    if alpha[i] <= 0.0:
        if y[i] > 0:
            return G[i] > Gmax2
        return G[i] > Gmax1
    return False


@njit(cache=True)
def _swap(k, q, alpha, G, G_bar, y, p, C, QD, index, perm):
    """Exchange the variables at positions k and q (LIBSVM's ``swap_index``)."""
    alpha[k], alpha[q] = alpha[q], alpha[k]
    G[k], G[q] = G[q], G[k]
    G_bar[k], G_bar[q] = G_bar[q], G_bar[k]
    y[k], y[q] = y[q], y[k]
    p[k], p[q] = p[q], p[k]
    C[k], C[q] = C[q], C[k]
    QD[k], QD[q] = QD[q], QD[k]
    index[k], index[q] = index[q], index[k]
    perm[k], perm[q] = perm[q], perm[k]


@njit(cache=True)
def do_shrinking(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols, tol):
    """LIBSVM's ``do_shrinking``: move bound variables that cannot enter the pair
    behind the active ones (the kernel cache is keyed by data row, so it needs no
    swapping)."""
    Gmax1 = -np.inf
    Gmax2 = -np.inf
    na = st[S_ACTIVE]
    for i in range(na):
        if y[i] > 0:
            if alpha[i] < C[i]:
                Gmax1 = max(Gmax1, -G[i])
            if alpha[i] > 0.0:
                Gmax2 = max(Gmax2, G[i])
        else:
            if alpha[i] < C[i]:
                Gmax2 = max(Gmax2, -G[i])
            if alpha[i] > 0.0:
                Gmax1 = max(Gmax1, G[i])
    if st[S_UNSHRINK] == 0 and Gmax1 + Gmax2 <= tol * 10.0:
        st[S_UNSHRINK] = 1
        unshrink(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols)
        na = st[S_ACTIVE]
    k = 0
    while k < na:
        if _be_shrunk(k, Gmax1, Gmax2, alpha, G, y, C):
            na -= 1
            _swap(k, na, alpha, G, G_bar, y, p, C, QD, index, perm)
        else:
            k += 1
    st[S_ACTIVE] = na


@njit(cache=True)
def _first_pass(alpha, G, y, C, na, firstf, firsti):
    """m = max_{I_up} g and M = min_{I_low} g (g = −y∇) with their positions."""
    Gmax = -np.inf
    Mmin = np.inf
    imax = -1
    jmax = -1
    for t in range(na):
        pos = y[t] > 0.0
        neg = y[t] < 0.0
        a = alpha[t]
        below = a < C[t]
        above = a > 0.0
        g = -y[t] * G[t]
        gu = g if (pos & below) | (neg & above) else -np.inf
        gl = g if (pos & above) | (neg & below) else np.inf
        cu = gu >= Gmax
        cl = gl <= Mmin
        imax = t if cu else imax
        Gmax = gu if cu else Gmax
        jmax = t if cl else jmax
        Mmin = gl if cl else Mmin
    firstf[0] = Gmax
    firstf[1] = Mmin
    firsti[0] = imax
    firsti[1] = jmax


@njit(cache=True, inline="always")
def select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, wss2,
                out, fresh, firstf, firsti):
    """Working pair (out[0], out[1]) and the gap m(α) − M(α); returns the gap.

    Returns with out[0] = −1 when the gap is below ``tol`` (optimal on the active set).
    Written with selects rather than branches on the labels (they are unpredictable).
    With g_t = −y_t∇_t: I_up = {y=+1, α<C} ∪ {y=−1, α>0}, I_low the mirror image,
    m = max_{I_up} g, M = min_{I_low} g.  When ``fresh`` the first pass (m, M and
    their indices in ``firstf``/``firsti``) was already done by the gradient update.
    """
    na = st[S_ACTIVE]
    if not fresh:
        _first_pass(alpha, G, y, C, na, firstf, firsti)
    Gmax = firstf[0]
    Mmin = firstf[1]
    imax = firsti[0]
    jmax = firsti[1]
    gap = Gmax - Mmin
    out[0] = -1
    if imax < 0 or jmax < 0 or Gmax == -np.inf or Mmin == np.inf or gap < tol:
        return gap
    if not wss2:
        out[0] = imax
        out[1] = jmax
        return gap
    i = imax
    s = get_row(i, False, index, st, kd, cc, all_cols)
    row = cc.cache[s]
    ri = index[i]
    qi = QD[i]
    best = np.inf
    jbest = -1
    for t in range(na):
        pos = y[t] > 0.0
        neg = y[t] < 0.0
        a = alpha[t]
        low = (pos & (a > 0.0)) | (neg & (a < C[t]))
        gd = Gmax + y[t] * G[t]
        c = index[t]
        kit = qi if c == ri else row[c]
        quad = qi + QD[t] - 2.0 * kit
        quad = quad if quad > 0.0 else TAU
        od = -(gd * gd) / quad
        od = od if low & (gd > 0.0) else np.inf
        better = od <= best            # selects, not branches
        jbest = t if better else jbest
        best = od if better else best
    if jbest < 0:
        return gap
    out[0] = i
    out[1] = jbest
    return gap


@njit(cache=True, inline="always")
def _update_pair(i, j, alpha, G, y, C, QD, Kij):
    """Analytic minimization on y_i a_i + y_j a_j = const, clipped to the box.

    Returns the old (alpha_i, alpha_j).
    """
    Ci = C[i]
    Cj = C[j]
    oi = alpha[i]
    oj = alpha[j]
    if y[i] != y[j]:
        quad = QD[i] + QD[j] - 2.0 * Kij
        if quad <= 0.0:
            quad = TAU
        delta = (-G[i] - G[j]) / quad
        diff = oi - oj
        ai = oi + delta
        aj = oj + delta
        if diff > 0.0:
            if aj < 0.0:
                aj = 0.0
                ai = diff
        else:
            if ai < 0.0:
                ai = 0.0
                aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        else:
            if aj > Cj:
                aj = Cj
                ai = Cj + diff
    else:
        quad = QD[i] + QD[j] - 2.0 * Kij
        if quad <= 0.0:
            quad = TAU
        delta = (G[i] - G[j]) / quad
        ssum = oi + oj
        ai = oi - delta
        aj = oj + delta
        if ssum > Ci:
            if ai > Ci:
                ai = Ci
                aj = ssum - Ci
        else:
            if aj < 0.0:
                aj = 0.0
                ai = ssum
        if ssum > Cj:
            if aj > Cj:
                aj = Cj
                ai = ssum - Cj
        else:
            if ai < 0.0:
                ai = 0.0
                aj = ssum
    alpha[i] = ai
    alpha[j] = aj
    return oi, oj


@njit(cache=True, inline="always")
def _update_gbar(v, old, alpha, G_bar, y, C, index, st, kd, cc, all_cols):
    was_upper = old >= C[v]
    is_upper = alpha[v] >= C[v]
    if was_upper == is_upper:
        return
    s = get_row(v, True, index, st, kd, cc, all_cols)
    row = cc.cache[s]
    c = C[v] * y[v] if is_upper else -C[v] * y[v]
    for t in range(alpha.shape[0]):
        G_bar[t] += c * y[t] * row[index[t]]


@njit(cache=True, inline="always")
def _progress(gap, st, fout, stall_window):
    """The progress test: True when m(α) − M(α) has not halved for ``stall_window``
    iterations (``fout[1]`` holds the gap at the last mark, ``st[S_MARK]`` its iteration)."""
    if gap <= 0.5 * fout[1]:
        fout[1] = gap
        st[S_MARK] = st[S_ITER]
        return False
    return st[S_ITER] - st[S_MARK] > stall_window


@njit(cache=True)
def smo_run(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
            tol, wss2, shrinking, max_iter, stop_iter, alpha_cap, stall_window, fout):
    """Run SMO iterations until optimal, ``stop_iter`` (chunk end), ``max_iter`` or a stall.

    The per-variable arrays are permuted in place by shrinking (``perm[k]`` is
    the original variable at position k).  ``fout[0]`` receives the last gap
    m(α) − M(α).  Returns one of the ``R_*`` codes: ``R_STALLED`` when the gap has
    not halved in ``stall_window`` iterations (see :func:`_progress`), ``R_CAP``
    when a multiplier exceeds ``alpha_cap`` (a diverging dual: e.g. the hard
    margin on data that no hyperplane separates).
    """
    m = alpha.shape[0]
    cache = cc.cache
    pair = np.empty(2, dtype=np.int64)
    firstf = np.empty(2)
    firsti = np.empty(2, dtype=np.int64)
    fresh = False
    interval = min(m, 1000)
    while True:
        if st[S_ITER] >= max_iter:
            return R_MAX_ITER
        if st[S_ITER] >= stop_iter:
            return R_CHUNK
        st[S_COUNTER] -= 1
        if st[S_COUNTER] <= 0:
            st[S_COUNTER] = interval
            if shrinking:
                do_shrinking(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
                             tol)
                fresh = False
        gap = select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols,
                          tol, wss2, pair, fresh, firstf, firsti)
        if pair[0] < 0:
            if st[S_ACTIVE] < m:
                unshrink(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols)
                gap = select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, wss2,
                                  pair, False, firstf, firsti)
                st[S_COUNTER] = 1
            fout[0] = gap
            if pair[0] < 0:
                return R_OPTIMAL
        fout[0] = gap
        if _progress(gap, st, fout, stall_window):
            return R_STALLED
        st[S_ITER] += 1
        st[S_ACTIVE_SUM] += st[S_ACTIVE]
        i = pair[0]
        j = pair[1]
        si = get_row(i, False, index, st, kd, cc, all_cols)
        sj = get_row(j, False, index, st, kd, cc, all_cols)
        row_i = cache[si]
        row_j = cache[sj]
        Kij = row_i[index[j]]
        if index[i] == index[j]:
            Kij = QD[i]
        oi, oj = _update_pair(i, j, alpha, G, y, C, QD, Kij)
        dai = (alpha[i] - oi) * y[i]
        daj = (alpha[j] - oj) * y[j]
        na = st[S_ACTIVE]
        # gradient update fused with the first pass of the next selection
        Gmax = -np.inf
        Mmin = np.inf
        imax = -1
        jmax = -1
        for t in range(na):
            c = index[t]
            yt = y[t]
            gt = G[t] + yt * (row_i[c] * dai + row_j[c] * daj)
            G[t] = gt
            pos = yt > 0.0
            neg = yt < 0.0
            a = alpha[t]
            below = a < C[t]
            above = a > 0.0
            g = -yt * gt
            gu = g if (pos & below) | (neg & above) else -np.inf
            gl = g if (pos & above) | (neg & below) else np.inf
            cu = gu >= Gmax
            cl = gl <= Mmin
            imax = t if cu else imax
            Gmax = gu if cu else Gmax
            jmax = t if cl else jmax
            Mmin = gl if cl else Mmin
        firstf[0] = Gmax
        firstf[1] = Mmin
        firsti[0] = imax
        firsti[1] = jmax
        fresh = True
        _update_gbar(i, oi, alpha, G_bar, y, C, index, st, kd, cc, all_cols)
        _update_gbar(j, oj, alpha, G_bar, y, C, index, st, kd, cc, all_cols)
        if alpha[i] > alpha_cap or alpha[j] > alpha_cap:
            return R_CAP


@njit(cache=True)
def coordinate_run(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, max_iter, stop_iter,
                   alpha_cap, stall_window, fout):
    """Greedy single-variable coordinate descent for the form without yᵀα = Δ.

    Picks the variable with the largest projected-gradient violation, minimizes
    exactly along it and clips to [0, C_i]; stops when the violation is ≤ tol, or
    with ``R_STALLED`` / ``R_CAP`` as :func:`smo_run`.
    """
    m = alpha.shape[0]
    cache = cc.cache
    while True:
        if st[S_ITER] >= max_iter:
            return R_MAX_ITER
        if st[S_ITER] >= stop_iter:
            return R_CHUNK
        viol = 0.0
        i = -1
        for t in range(m):
            g = G[t]
            if g < 0.0 and alpha[t] < C[t]:
                v = -g
            elif g > 0.0 and alpha[t] > 0.0:
                v = g
            else:
                continue
            if v > viol:
                viol = v
                i = t
        fout[0] = viol
        if i < 0 or viol <= tol:
            return R_OPTIMAL
        if _progress(viol, st, fout, stall_window):
            return R_STALLED
        st[S_ITER] += 1
        q = QD[i] if QD[i] > 0.0 else TAU
        old = alpha[i]
        alpha[i] = min(max(old - G[i] / q, 0.0), C[i])
        s = get_row(i, True, index, st, kd, cc, all_cols)
        row = cache[s]
        d = (alpha[i] - old) * y[i]
        for t in range(m):
            G[t] += d * y[t] * row[index[t]]
        if alpha[i] > alpha_cap:
            return R_CAP


@njit(cache=True)
def objectives(alpha, G, y, p, C, b):
    """(P, D): the primal ½αᵀQα + Σ uₜξₜ at the intercept b (ξₜ = max(0, −(∇ₜ + yₜb)),
    finite uₜ) and the dual −(½αᵀQα + pᵀα), in O(m) from ∇ = Qα + p."""
    quad = 0.0
    lin = 0.0
    slack = 0.0
    for t in range(alpha.shape[0]):
        quad += alpha[t] * (G[t] - p[t])
        lin += p[t] * alpha[t]
        if C[t] < np.inf:
            s = G[t] + y[t] * b
            if s < 0.0:
                slack -= C[t] * s
    return 0.5 * quad + slack, -(0.5 * quad + lin)


@njit(cache=True)
def calculate_b(alpha, G, y, C):
    """Intercept b = −ρ: mean of y_i∇_i over free variables, else the interval midpoint."""
    ub = np.inf
    lb = -np.inf
    nfree = 0
    sfree = 0.0
    for i in range(alpha.shape[0]):
        yG = y[i] * G[i]
        if alpha[i] >= C[i]:
            if y[i] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[i] <= 0.0:
            if y[i] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            nfree += 1
            sfree += yG
    if nfree > 0:
        rho = sfree / nfree
    else:
        rho = (ub + lb) / 2.0
    return -rho
