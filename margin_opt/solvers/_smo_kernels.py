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

from collections import namedtuple

import numpy as np
from numba import njit

from . import _held_rows as _held
from . import _packed_rows as _pk
from . import _smo_passes as _ps
from ._kernel_rows import (  # noqa: F401  (re-exported: the kernels' kinds and arrays)
    GUARD,
    K_LINEAR,
    K_POLY,
    K_PRECOMPUTED,
    K_RBF,
    K_SIGMOID,
    KernelArrays,
    _transform,
    axpy_rows,
    combination_gemm,
    compact_active,
    exact_d2,
    has_transpose,
    kernel_row,
    vexp,
)
from ._smo_state import (  # noqa: F401  (re-exported: the state vector's entries)
    FULL,
    N_STATE,
    S_ACTIVE,
    S_ACTIVE_SUM,
    S_COUNTER,
    S_EPOCH,
    S_FULL_ITER,
    S_GEMM,
    S_HITS,
    S_ITER,
    S_LAYOUT,
    S_MARK,
    S_MISSES,
    S_RECONSTRUCT,
    S_ROWS_FULL,
    S_ROWS_PARTIAL,
    S_TICK,
    S_UNSHRINK,
)

#: The row cache: ``cache`` (n_slots, n_data) float64 rows (only read: it may be a
#: read-only or memory-mapped kernel matrix), ``slot_of_row`` (n_data,),
#: ``row_of_slot`` (n_slots,), ``slot_epoch`` (FULL, or the shrinking epoch whose
#: active columns a row is valid for), ``slot_tick`` (last use, for LRU) and
#: ``store``, the same array as ``cache`` where rows are computed (written), a
#: (1, 1) placeholder where the whole matrix is given.  The other fields are the
#: packed rows of a shrunk run (:mod:`._packed_rows`): ``flat``, the same memory as
#: ``store`` in one dimension, ``pmeta``, ``col_of_row``, ``bcols``, ``cidx``,
#: ``pslot_of_row``, ``prow_of_slot``, ``lru_prev``, ``lru_next`` and ``full``.
RowCache = namedtuple("RowCache", ["cache", "slot_of_row", "row_of_slot", "slot_epoch",
                                   "slot_tick", "store", "flat", "pmeta", "col_of_row",
                                   "bcols", "cidx", "pslot_of_row", "prow_of_slot",
                                   "lru_prev", "lru_next", "full"])

# return codes of the run loop
R_OPTIMAL, R_CHUNK, R_MAX_ITER, R_STALLED, R_CAP = 0, 1, 2, 3, 4
# between smo_run and its loop only: shrink, or unshrink, and call the loop again
_R_SHRINK, _R_UNSHRINK = 5, 6

TAU = 1e-12          # LIBSVM's guard for non-positive curvature
#: kernel values (free variables × data rows) from which the gradient reconstruction
#: combines the free rows by BLAS tiles instead of computing them one by one
GEMM_RECONSTRUCT_MIN = 1 << 17


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
    # rows on the active columns cost in proportion to them where they come from the
    # compact copy of the transpose; without one (sparse, CSC) they cost ~3× per column
    if need_full or (8 * na > 7 * n_data if has_transpose(kd) else 2 * na > n_data):
        kernel_row(r, store[s], all_cols, -1, kd)
        slot_epoch[s] = FULL
        st[S_ROWS_FULL] += 1
    else:
        compact_active(kd, index, na, st[S_LAYOUT])
        kernel_row(r, store[s], index, na, kd)
        slot_epoch[s] = st[S_EPOCH]
        st[S_ROWS_PARTIAL] += 1
    return s


@njit(cache=True, nogil=True)
def init_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    """G = Qα + p over all variables and G_bar = Σ_{α_i = C_i} C_i y_i K[index[i], :]
    (by data row: LIBSVM's Ḡ is yₜ·G_bar[index[t]])."""
    m = alpha.shape[0]
    cache = cc.cache
    for t in range(m):
        G[t] = p[t]
    G_bar[:] = 0.0
    for i in range(m):
        if alpha[i] > 0.0:
            s = get_row(i, True, index, st, kd, cc, all_cols)
            row = cache[s]
            a = alpha[i] * y[i]
            for t in range(m):
                G[t] += a * y[t] * row[index[t]]
            if alpha[i] >= C[i]:
                _axpy(C[i] * y[i], row, G_bar)


@njit(cache=True, nogil=True, fastmath={"nnan", "nsz"})
def _axpy(c, row, out):
    """out += c·row (data order, contiguous)."""
    for k in range(out.shape[0]):
        out[k] += c * row[k]


@njit(cache=True, nogil=True)
def reconstruct_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    """Restore G on the shrunk variables (LIBSVM's ``reconstruct_gradient``)."""
    m = alpha.shape[0]
    na = st[S_ACTIVE]
    if na == m:
        return
    st[S_RECONSTRUCT] += 1
    cache = cc.cache
    for j in range(na, m):
        G[j] = y[j] * G_bar[index[j]] + p[j]
    nr_free = 0
    for i in range(na):
        if 0.0 < alpha[i] < C[i]:
            nr_free += 1
    packed = _pk.active(cc, st[S_EPOCH])
    if nr_free * m > 2 * na * (m - na):
        # rows of the inactive variables over the active columns
        for i in range(na, m):
            if packed:
                G[i] += y[i] * _free_dot(_pk.row(index[i], st, kd, cc), cc.cidx, alpha, y,
                                         C, na)
            else:
                s = get_row(i, False, index, st, kd, cc, all_cols)
                G[i] += y[i] * _free_dot(cache[s], index, alpha, y, C, na)
    elif nr_free * cc.slot_of_row.shape[0] >= GEMM_RECONSTRUCT_MIN and \
            cc.store.shape[1] > 1 and kd.kind != K_PRECOMPUTED and has_transpose(kd):
        _reconstruct_gemm(alpha, G, y, C, index, na, kd, cc)
        st[S_GEMM] += 1
    else:
        for i in range(na):
            if 0.0 < alpha[i] < C[i]:
                a = alpha[i] * y[i]
                if packed:
                    _shrunk_axpy(a, _scratch_row(i, index, st, kd, cc, all_cols), G, y, index,
                                 na)
                else:
                    s = get_row(i, True, index, st, kd, cc, all_cols)
                    _shrunk_axpy(a, cache[s], G, y, index, na)


@njit(cache=True, inline="always")
def _shrunk_axpy(a, row, G, y, index, na):
    """G[j] += a·yⱼ·row[index[j]] for the shrunk variables j ≥ na (row by data row)."""
    for j in range(na, G.shape[0]):
        G[j] += a * y[j] * row[index[j]]


@njit(cache=True, inline="always")
def _whole_slot(cc, r):
    """The slot holding data row r for every column, or −1."""
    s = cc.slot_of_row[r]
    return s if s >= 0 and cc.slot_epoch[s] == FULL else -1


@njit(cache=True, nogil=True)
def _reconstruct_gemm(alpha, G, y, C, index, na, kd, cc):
    """G[j] += yⱼ Σ_free αᵢyᵢK[index[i], index[j]] for the shrunk j ≥ na, as one
    combination of the free variables' kernel rows (the coefficients summed by data
    row): the rows the cache holds whole read in place (:mod:`._held_rows`), the
    others by BLAS tiles (:func:`._kernel_rows.combination_gemm`), instead of one
    computed row per free variable."""
    XT = kd.XT
    n_data = XT.shape[1]
    coef = np.zeros(n_data)
    for i in range(na):
        if 0.0 < alpha[i] < C[i]:
            coef[index[i]] += alpha[i] * y[i]
    n_held = 0
    n_new = 0
    for r in range(n_data):
        if coef[r] != 0.0:
            if _whole_slot(cc, r) >= 0:
                n_held += 1
            else:
                n_new += 1
    slots = np.empty(n_held, dtype=np.int64)
    hcoefs = np.empty((n_held, 1))
    rows = np.empty(n_new, dtype=np.int64)
    coefs = np.empty((n_new, 1))
    dense = not axpy_rows(kd)                 # sparse rows by axpys: no dense copy
    Xr = np.empty((n_new if dense else 0, XT.shape[0]))
    h = 0
    k = 0
    for r in range(n_data):
        if coef[r] == 0.0:
            continue
        s = _whole_slot(cc, r)
        if s >= 0:
            slots[h] = s
            hcoefs[h, 0] = coef[r]
            h += 1
        else:
            rows[k] = r
            coefs[k, 0] = coef[r]
            if dense:
                for f in range(XT.shape[0]):
                    Xr[k, f] = XT[f, r]
            k += 1
    if n_new:
        f_all = combination_gemm(kd, Xr, rows, coefs, kd.nthr)
    else:
        f_all = np.zeros((1, n_data))
    _held.accumulate(cc.cache, slots, hcoefs, f_all, kd.nthr)
    f = f_all[0]
    for j in range(na, G.shape[0]):
        G[j] += y[j] * f[index[j]]


@njit(cache=True, inline="always")
def _free_dot(row, cols, alpha, y, C, na):
    """Σ over the free active variables j of αⱼyⱼ·row[cols[j]]."""
    acc = 0.0
    for j in range(na):
        if 0.0 < alpha[j] < C[j]:
            acc += alpha[j] * y[j] * row[cols[j]]
    return acc


@njit(cache=True, inline="always")
def _scratch_row(v, index, st, kd, cc, all_cols):
    """K[index[v], :] computed whole into the scratch row (while rows come packed)."""
    kernel_row(index[v], cc.full, all_cols, -1, kd)
    st[S_MISSES] += 1
    st[S_ROWS_FULL] += 1
    return cc.full


@njit(cache=True, nogil=True)
def _permute(a, order, k, tmp):
    """a[:k] = a[order[:k]] through ``tmp`` (of a's dtype)."""
    for t in range(k):
        tmp[t] = a[order[t]]
    for t in range(k):
        a[t] = tmp[t]


@njit(cache=True, nogil=True)
def _reorder(order, k, alpha, G, y, p, C, QD, index, perm):
    """Positions [0, k) take the variables now at positions order[:k] (a permutation)."""
    ft = np.empty(k)
    it = np.empty(k, dtype=np.int64)
    for a in (alpha, G, y, p, C, QD):
        _permute(a, order, k, ft)
    _permute(index, order, k, it)
    _permute(perm, order, k, it)


@njit(cache=True, nogil=True)
def unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols):
    """Reconstruct the gradient, make every variable active and put them back in
    their original order (``perm`` the identity: the data rows of the active
    variables are then read in increasing order).  Where no multiplier has moved
    since every gradient was last exact (``st[S_FULL_ITER]``: e.g. shrinking right
    after a polish, then optimal at once) the shrunk gradients still hold and are not
    recomputed (at ε-SVR n = 5000 that recomputation took 30 ms for nothing)."""
    if st[S_ITER] != st[S_FULL_ITER]:
        reconstruct_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols)
    st[S_FULL_ITER] = st[S_ITER]
    m = alpha.shape[0]
    shrunk = st[S_ACTIVE] < m
    if shrunk:
        st[S_ACTIVE] = m
        st[S_EPOCH] += 1
        st[S_LAYOUT] += 1
    order = np.empty(m, dtype=np.int64)
    moved = False
    for t in range(m):
        order[perm[t]] = t
        moved = moved or perm[t] != t
    if moved:
        _reorder(order, m, alpha, G, y, p, C, QD, index, perm)
        st[S_LAYOUT] += 1
    if shrunk or moved:
        # the epoch's packed rows end; a new layout (where ``index`` uses few data rows)
        # reads the positions as they are now, after the reordering
        _pk.plan(cc, index, st, alpha, C)


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def do_shrinking(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols, tol):
    """LIBSVM's ``do_shrinking``: move bound variables that cannot enter the pair
    behind the active ones.  The partition is stable (the active variables keep
    their order, so their data rows are read in increasing order); the kernel cache
    is keyed by data row, so it needs no swapping."""
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
        unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols)
        na = st[S_ACTIVE]
    order = np.empty(na, dtype=np.int64)
    kept = 0
    for k in range(na):
        if not _be_shrunk(k, Gmax1, Gmax2, alpha, G, y, C):
            order[kept] = k
            kept += 1
    if kept == na:
        return
    q = kept
    for k in range(na):
        if _be_shrunk(k, Gmax1, Gmax2, alpha, G, y, C):
            order[q] = k
            q += 1
    _reorder(order, na, alpha, G, y, p, C, QD, index, perm)
    st[S_ACTIVE] = kept
    st[S_LAYOUT] += 1
    _pk.plan(cc, index, st, alpha, C)


@njit(cache=True, inline="always")
def position_row(v, avoid, index, st, kd, cc, all_cols, bufs, btag, nthr):
    """Which of the two buffers ``bufs`` holds the row of variable v in position order
    (over the active set), gathering it from the row cache when neither does;
    ``avoid`` is a buffer that must be kept (−1: none).  ``btag[b]`` = (data row,
    layout, last use) of buffer b."""
    r = index[v]
    st[S_TICK] += 1
    for b in range(2):
        if b != avoid and btag[b, 0] == r and btag[b, 1] == st[S_LAYOUT]:
            btag[b, 2] = st[S_TICK]
            return b
    if avoid >= 0:
        b = 1 - avoid
    else:
        b = 0 if btag[0, 2] <= btag[1, 2] else 1
    if _pk.active(cc, st[S_EPOCH]):
        _ps.gather(_pk.row(r, st, kd, cc), cc.cidx, bufs[b], st[S_ACTIVE], nthr)
    else:
        s = get_row(v, False, index, st, kd, cc, all_cols)
        _ps.gather(cc.cache[s], index, bufs[b], st[S_ACTIVE], nthr)
    btag[b, 0] = r
    btag[b, 1] = st[S_LAYOUT]
    btag[b, 2] = st[S_TICK]
    return b


@njit(cache=True, inline="always")
def select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, wss2, out, fresh,
                firstf, firsti, pu, pl, nthr, parts, red, bufs, btag):
    """Working pair (out[0], out[1]) and the gap m(α) − M(α); returns the gap.

    Returns with out[0] = −1 when the gap is below ``tol`` (optimal on the active set).
    With g_t = −y_t∇_t: I_up = {y=+1, α<C} ∪ {y=−1, α>0}, I_low the mirror image,
    m = max_{I_up} g, M = min_{I_low} g.  When ``fresh`` the first pass (m, M and
    their positions in ``firstf``/``firsti``) was already done by the gradient
    update.  The passes are :mod:`._smo_passes` (``pu``/``pl``: the set penalties);
    with WSS 2 the row of i is left in position order in ``bufs[out[2]]``.
    """
    na = st[S_ACTIVE]
    if not fresh:
        _ps.first_pass(G, y, pu, pl, na, nthr, parts, red, firstf, firsti)
    Gmax = firstf[0]
    Mmin = firstf[1]
    imax = firsti[0]
    jmax = firsti[1]
    gap = Gmax - Mmin
    out[0] = -1
    out[2] = -1
    if imax < 0 or jmax < 0 or gap < tol:
        return gap
    if not wss2:
        out[0] = imax
        out[1] = jmax
        return gap
    i = imax
    b = position_row(i, -1, index, st, kd, cc, all_cols, bufs, btag, nthr)
    j = _ps.wss2(G, y, pl, QD, index, bufs[b], i, Gmax, na, nthr, parts, red, bufs[2])
    if j < 0:
        return gap
    out[0] = i
    out[1] = j
    out[2] = b
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
    c = C[v] * y[v] if is_upper else -C[v] * y[v]
    if _pk.active(cc, st[S_EPOCH]):
        _axpy(c, _scratch_row(v, index, st, kd, cc, all_cols), G_bar)
    else:
        s = get_row(v, True, index, st, kd, cc, all_cols)
        _axpy(c, cc.cache[s], G_bar)


@njit(cache=True, inline="always")
def _progress(gap, st, fout, stall_window):
    """The progress test: True when m(α) − M(α) has not halved for ``stall_window``
    iterations (``fout[1]`` holds the gap at the last mark, ``st[S_MARK]`` its iteration)."""
    if gap <= 0.5 * fout[1]:
        fout[1] = gap
        st[S_MARK] = st[S_ITER]
        return False
    return st[S_ITER] - st[S_MARK] > stall_window


@njit(cache=True, nogil=True)
def smo_run(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
            tol, wss2, shrinking, max_iter, stop_iter, alpha_cap, stall_window, fout, pthr, pmin):
    """Run SMO iterations until optimal, ``stop_iter`` (chunk end), ``max_iter`` or a stall.

    The per-variable arrays are permuted in place by shrinking (``perm[k]`` is
    the original variable at position k).  ``fout[0]`` receives the last gap
    m(α) − M(α).  Returns one of the ``R_*`` codes: ``R_STALLED`` when the gap has
    not halved in ``stall_window`` iterations (see :func:`_progress`), ``R_CAP``
    when a multiplier exceeds ``alpha_cap`` (a diverging dual: e.g. the hard
    margin on data that no hyperplane separates).  Passes over at least ``pmin``
    active variables are split over ``pthr`` threads.
    """
    m = alpha.shape[0]
    pair = np.empty(3, dtype=np.int64)
    firstf = np.empty(2)
    firsti = np.empty(2, dtype=np.int64)
    pu = np.empty(m)
    pl = np.empty(m)
    parts = np.empty((max(pthr, 1), 4))
    red = np.empty(4)
    bufs = np.empty((3, m))          # the rows of the pair in position order; WSS 2 scratch
    btag = np.full((2, 3), -1, dtype=np.int64)
    interval = min(m, 1000)
    while True:
        code = _smo_loop(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols,
                         tol, wss2, shrinking, max_iter, stop_iter, alpha_cap, stall_window,
                         fout, pthr, pmin, pair, firstf, firsti, pu, pl, parts, red, bufs,
                         btag)
        # the steps that allocate, taken here for the loop (which counts no references)
        if code == _R_SHRINK:
            do_shrinking(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols, tol)
            st[S_COUNTER] = interval + 1     # the loop's first decrement leaves ``interval``
        elif code == _R_UNSHRINK:
            unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols)
            st[S_COUNTER] = 2                # as LIBSVM: shrink again right after this step
        else:
            return code


@njit(cache=True, nogil=True, _nrt=False)
def _smo_loop(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols, tol, wss2,
              shrinking, max_iter, stop_iter, alpha_cap, stall_window, fout, pthr, pmin, pair,
              firstf, firsti, pu, pl, parts, red, bufs, btag):
    """The loop of :func:`smo_run` on its workspace, compiled without reference counting:
    it allocates nothing, and the array views it takes every iteration (a cached row, the
    buffers of the pair) would otherwise each cost two atomic operations — about 40 % of
    an iteration on a small problem."""
    m = alpha.shape[0]
    _ps.set_pens(0, m, alpha, y, C, pu, pl)    # α may have changed since the last call
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
                return _R_SHRINK          # smo_run shrinks and calls again (fresh passes)
        nt = pthr if st[S_ACTIVE] >= pmin else 1
        gap = select_pair(alpha, G, y, C, QD, index, st, kd, cc, all_cols, tol, wss2, pair,
                          fresh, firstf, firsti, pu, pl, nt, parts, red, bufs, btag)
        if pair[0] < 0:
            if st[S_ACTIVE] < m:
                return _R_UNSHRINK        # optimal on the active set: smo_run unshrinks
            fout[0] = gap
            return R_OPTIMAL
        fout[0] = gap
        if _progress(gap, st, fout, stall_window):
            return R_STALLED
        st[S_ITER] += 1
        st[S_ACTIVE_SUM] += st[S_ACTIVE]
        i = pair[0]
        j = pair[1]
        bi = pair[2]
        if bi < 0:                                 # first order: the row of i not read yet
            bi = position_row(i, -1, index, st, kd, cc, all_cols, bufs, btag, nt)
        bj = position_row(j, bi, index, st, kd, cc, all_cols, bufs, btag, nt)
        Kij = bufs[bi, j]
        if index[i] == index[j]:
            Kij = QD[i]
        oi, oj = _update_pair(i, j, alpha, G, y, C, QD, Kij)
        _ps.set_pens(i, i + 1, alpha, y, C, pu, pl)
        _ps.set_pens(j, j + 1, alpha, y, C, pu, pl)
        dai = (alpha[i] - oi) * y[i]
        daj = (alpha[j] - oj) * y[j]
        # gradient update fused with the first pass of the next selection
        _ps.fused_update(G, y, pu, pl, bufs[bi], bufs[bj], dai, daj, st[S_ACTIVE], nt, parts,
                         red, firstf, firsti)
        fresh = True
        _update_gbar(i, oi, alpha, G_bar, y, C, index, st, kd, cc, all_cols)
        _update_gbar(j, oj, alpha, G_bar, y, C, index, st, kd, cc, all_cols)
        if alpha[i] > alpha_cap or alpha[j] > alpha_cap:
            return R_CAP


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
