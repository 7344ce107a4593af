"""Shrinking and gradient reconstruction (LIBSVM's ``do_shrinking``, ``reconstruct_gradient``).

Bound variables that cannot enter a violating pair are moved behind the active ones
(:func:`do_shrinking`); SMO's passes then run over the active variables only, and the
kernel rows are computed on the active columns (:mod:`.cache`, :mod:`.packed`).  The
gradient of the shrunk variables is kept as Ḡ (the sum over the variables at their
upper bound, by data row) and restored from it and the free variables' rows when they
are needed again (:func:`reconstruct_gradient`, at the end of a phase through
:func:`unshrink`): row by row, or as one combination of the free rows, the rows the
cache holds whole read in place and the others by BLAS tiles.

References
----------
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011, §5.1 (shrinking, gradient reconstruction).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from . import cache as _cache
from . import packed as _pk
from .cache import get_row, scratch_row, whole_slot
from .rows import K_PRECOMPUTED, axpy_rows, combination_gemm, has_transpose
from .state import (
    S_ACTIVE,
    S_EPOCH,
    S_FULL_ITER,
    S_GEMM,
    S_ITER,
    S_LAYOUT,
    S_RECONSTRUCT,
    when,
)

__all__ = ["reconstruct_gradient", "reconstruct_by_tiles", "unshrink", "shrink_maxima",
           "do_shrinking", "reorder"]

#: kernel values (free variables × data rows) from which the gradient reconstruction
#: combines the free rows by BLAS tiles instead of computing them one by one
GEMM_RECONSTRUCT_MIN = 1 << 17


@njit(cache=True, nogil=True)
def reconstruct_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
    """Restore G on the shrunk variables (LIBSVM's ``reconstruct_gradient``).

    Returns False, having changed nothing, where the free rows are best combined by
    BLAS tiles (:data:`GEMM_RECONSTRUCT_MIN`): the caller then runs
    :func:`reconstruct_by_tiles` (in Python, so that a run that never takes that way
    never compiles it); True when done.
    """
    m = alpha.shape[0]
    na = st[S_ACTIVE]
    if na == m:
        return True
    nr_free = 0
    for i in range(na):
        if 0.0 < alpha[i] < C[i]:
            nr_free += 1
    by_rows = nr_free * m > 2 * na * (m - na)
    if not by_rows and nr_free * cc.slot_of_row.shape[0] >= GEMM_RECONSTRUCT_MIN and \
            cc.store.shape[1] > 1 and kd.kind != K_PRECOMPUTED and has_transpose(kd):
        return False
    st[S_RECONSTRUCT] += 1
    _from_gbar(G, G_bar, y, p, index, na)
    cache = cc.cache
    packed = _pk.active(cc, st[S_EPOCH])
    if by_rows:
        # rows of the inactive variables over the active columns
        if not _packed_free_dots_if(cc.flat, alpha, G, y, C, index, st, kd, cc, na):
            for i in range(na, m):
                s = get_row(i, False, index, st, kd, cc, all_cols)
                G[i] += y[i] * _free_dot(cache[s], index, alpha, y, C, na)
    else:
        for i in range(na):
            if 0.0 < alpha[i] < C[i]:
                a = alpha[i] * y[i]
                if packed:
                    _shrunk_axpy(a, scratch_row(i, index, st, kd, cc, all_cols), G, y, index,
                                 na)
                else:
                    s = get_row(i, True, index, st, kd, cc, all_cols)
                    _shrunk_axpy(a, cache[s], G, y, index, na)
    return True


@njit(cache=True, nogil=True)
def _packed_free_dots(alpha, G, y, C, index, st, kd, cc, na):
    """Where rows come packed: G[i] += yᵢ Σ_free αⱼyⱼK[index[i], index[j]] for the
    shrunk i ≥ na from their packed rows; False (nothing done) where they do not."""
    if not _pk.active(cc, st[S_EPOCH]):
        return False
    for i in range(na, alpha.shape[0]):
        G[i] += y[i] * _free_dot(_pk.row(index[i], st, kd, cc), cc.cidx, alpha, y, C, na)
    return True


#: packed rows, compiled only for a cache that packs
_packed_free_dots_if = when(_packed_free_dots)
_plan_if = when(_pk.plan)


@njit(cache=True, nogil=True)
def _from_gbar(G, G_bar, y, p, index, na):
    """G[j] = yⱼ·Ḡ[index[j]] + pⱼ for the shrunk variables j ≥ na."""
    for j in range(na, G.shape[0]):
        G[j] = y[j] * G_bar[index[j]] + p[j]


@njit(cache=True, inline="always")
def _shrunk_axpy(a, row, G, y, index, na):
    """G[j] += a·yⱼ·row[index[j]] for the shrunk variables j ≥ na (row by data row)."""
    for j in range(na, G.shape[0]):
        G[j] += a * y[j] * row[index[j]]


def reconstruct_by_tiles(alpha, G, G_bar, y, p, C, index, st, kd, cc):
    """:func:`reconstruct_gradient` where it returned False: G[j] = yⱼḠ[index[j]] + pⱼ +
    yⱼ Σ_free αᵢyᵢK[index[i], index[j]] for the shrunk j ≥ na, the free variables'
    kernel rows taken as one combination (the coefficients summed by data row): the
    rows the cache holds whole read in place (:func:`.cache.accumulate`), the others by
    BLAS tiles (:func:`.rows.combination_gemm`), instead of one computed row per free
    variable.  Every gradient is then exact (``st[S_FULL_ITER]``), so the caller's next
    :func:`unshrink` does not reconstruct again."""
    na = int(st[S_ACTIVE])
    nthr = kd.nthr if kd.nthr is not None else 1
    st[S_RECONSTRUCT] += 1
    _from_gbar(G, G_bar, y, p, index, na)
    slots, hcoefs, rows, coefs, Xr = _combination_terms(alpha, y, C, index, na, kd, cc)
    if rows.size:
        f_all = combination_gemm(kd, Xr, rows, coefs, nthr)
    else:
        f_all = np.zeros((1, kd.XT.shape[1]))
    _cache.accumulate(cc.cache, slots, hcoefs, f_all, nthr)
    _add_shrunk(G, y, f_all[0], index, na)
    st[S_GEMM] += 1
    st[S_FULL_ITER] = st[S_ITER]


@njit(cache=True, nogil=True)
def _combination_terms(alpha, y, C, index, na, kd, cc):
    """The terms of :func:`reconstruct_by_tiles`: the slots of the rows held whole and
    their coefficients, the other rows, theirs and their data (dense, unless
    :func:`.rows.axpy_rows`)."""
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
            if whole_slot(cc, r) >= 0:
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
        s = whole_slot(cc, r)
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
    return slots, hcoefs, rows, coefs, Xr


@njit(cache=True, nogil=True)
def _add_shrunk(G, y, f, index, na):
    """G[j] += yⱼ·f[index[j]] for the shrunk variables j ≥ na."""
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


@njit(cache=True, nogil=True)
def _permute(a, order, k, tmp):
    """a[:k] = a[order[:k]] through ``tmp`` (of a's dtype)."""
    for t in range(k):
        tmp[t] = a[order[t]]
    for t in range(k):
        a[t] = tmp[t]


@njit(cache=True, nogil=True)
def reorder(order, k, alpha, G, y, p, C, QD, index, perm):
    """Positions [0, k) take the variables now at positions order[:k] (a permutation)."""
    ft = np.empty(k)
    it = np.empty(k, dtype=np.int64)
    for a in (alpha, G, y, p, C, QD):
        _permute(a, order, k, ft)
    _permute(index, order, k, it)
    _permute(perm, order, k, it)


def unshrink(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols):
    """Reconstruct the gradient, make every variable active and put them back in
    their original order (``perm`` the identity: the data rows of the active
    variables are then read in increasing order).  Where no multiplier has moved
    since every gradient was last exact (``st[S_FULL_ITER]``: e.g. shrinking right
    after a polish, then optimal at once) the shrunk gradients still hold and are not
    recomputed (at ε-SVR n = 5000 that recomputation took 30 ms for nothing).

    Returns False, having changed nothing, where the reconstruction is left to the
    caller (:func:`reconstruct_by_tiles`, then this again); True when done.

    Called from Python (the driver) it runs here, its two steps compiled; compiled
    callers (:func:`.loop.smo_run` in the batch entries) get it compiled, the same
    code, so that a run driven from Python never compiles a library that links the
    reconstruction again.  A run that never shrank (nothing inactive, every variable in
    its place: e.g. a small problem that ends before its first shrinking) has every
    gradient exact already: nothing is called, so nothing is compiled for it.
    """
    if st[S_ACTIVE] == alpha.shape[0] and (perm == np.arange(perm.shape[0])).all():
        st[S_FULL_ITER] = st[S_ITER]
        return True
    if st[S_ITER] != st[S_FULL_ITER]:
        if not reconstruct_gradient(alpha, G, G_bar, y, p, C, index, st, kd, cc, all_cols):
            return False
    _activate_all(alpha, G, y, p, C, QD, index, perm, st, cc)
    return True


@overload(unshrink, jit_options={"cache": True, "nogil": True})
def _unshrink_compiled(alpha, G, G_bar, y, p, C, QD, index, perm, st, kd, cc, all_cols):
    return unshrink


@njit(cache=True, nogil=True)
def _activate_all(alpha, G, y, p, C, QD, index, perm, st, cc):
    """:func:`unshrink` after the reconstruction: every gradient exact, every variable
    active, in its original position."""
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
        reorder(order, m, alpha, G, y, p, C, QD, index, perm)
        st[S_LAYOUT] += 1
    if shrunk or moved:
        # the epoch's packed rows end; a new layout (where ``index`` uses few data rows)
        # reads the positions as they are now, after the reordering
        _plan_if(cc.flat, cc, index, st, alpha, C)


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
def shrink_maxima(alpha, G, y, C, st):
    """(Gmax1, Gmax2) of LIBSVM's ``do_shrinking`` over the active variables: m(α) and
    −M(α).  Where ``st[S_UNSHRINK]`` is 0 and their sum is ≤ 10·tol, the caller
    unshrinks first (LIBSVM's early unshrinking) and sets it to 1, then calls
    :func:`do_shrinking` with these maxima."""
    Gmax1 = -np.inf
    Gmax2 = -np.inf
    for i in range(st[S_ACTIVE]):
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
    return Gmax1, Gmax2


@njit(cache=True, nogil=True)
def do_shrinking(Gmax1, Gmax2, alpha, G, y, p, C, QD, index, perm, st, cc):
    """LIBSVM's ``do_shrinking`` (after :func:`shrink_maxima`): move bound variables
    that cannot enter the pair behind the active ones.  The partition is stable (the
    active variables keep their order, so their data rows are read in increasing
    order); the kernel cache is keyed by data row, so it needs no swapping."""
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
    reorder(order, na, alpha, G, y, p, C, QD, index, perm)
    st[S_ACTIVE] = kept
    st[S_LAYOUT] += 1
    _plan_if(cc.flat, cc, index, st, alpha, C)

