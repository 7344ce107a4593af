"""Packed kernel rows for a shrunk SMO run: more rows in the same cache budget.

The row cache of :mod:`.cache` keeps each row in a slot of ``n_data``
values, whatever part of it is valid: a row computed on the active columns only
(after shrinking) still takes a whole slot.  Late in a run the active set is a
fraction of the data (ε-SVR at n = 20000: ~6000 of 40000 variables) while the rows
SMO keeps asking for are those of the free multipliers (~5000): with 1310 slots of
200 MB every iteration missed 1.7 rows, and the misses were 80 % of the time.
LIBSVM keeps rows of the active length for the same reason (``Cache::get_data``).

Here, once shrinking leaves ``L`` distinct data rows active, ``L`` small enough
that the budget holds at least twice as many rows of ``L`` values as of ``n_data``,
and more free variables than the classic slots hold (where their rows fit, as for
SVC at n = 20000 with 1241 free variables and 1310 slots, packing only costs the
moves), the cache's memory is re-cut into packed slots of ``L`` values:
``K[r, bcols[k]]`` at ``flat[s·L + k]``, the columns ``bcols`` being the active data
rows at that moment (the *layout*).  Within one shrinking epoch the active set
only shrinks, so every later active column is one of the layout's; the variable at
position t reads its column ``cidx[t]``, refreshed after every shrinking.  A new
layout keeps the rows the cache holds (the classic slots' rows that cover its
columns, or the previous layout's), moved in place; when the active set has shrunk
below 70 % of the layout, the layout is rebuilt the same way.  When the epoch ends
(unshrinking: every column needed again) packed rows are no longer used and the
classic slots, emptied when the layout was built, fill again.  Whole rows (the Ḡ
updates, the gradient reconstruction) are computed into one scratch row while
packed rows are in use, not cached.  Packed slots are
evicted least recently used through a doubly linked list (O(1) per access; the
classic slots scan their ticks, which at thousands of slots would cost as much as
a row).  A packed row holds the values :func:`.rows.kernel_row` computes,
bit for bit, so the pair steps do not depend on the packing; the sums over the free
rows (a Newton polish's gradient update, the gradient reconstruction) read the rows
the classic slots hold whole in place and combine the others by BLAS
(:func:`.cache.accumulate`), so after them the gradient may differ in the last bit.

Structures: the fields of :class:`.cache.RowCache` named below, and its
``pmeta`` (int64, entries ``P_*``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .rows import compact_active, packed_kernel_row
from .state import FULL, S_ACTIVE, S_EPOCH, S_HITS, S_LAYOUT, S_MISSES, S_ROWS_PARTIAL

__all__ = ["make", "active", "plan", "row"]

# entries of ``pmeta``
P_L, P_EPOCH, P_SLOTS, P_CIDX_LAYOUT, P_STAMP, P_BUILDS, P_ENABLED, P_KEPT = range(8)
P_REBUILDS = 8       # layouts built from the previous layout of the same epoch
N_PMETA = 9

#: rebuild the layout once the active variables are fewer than this part of its columns
REBUILD_BELOW = 0.7
#: pack only where the budget then holds at least this many times the classic slots
MIN_GAIN = 2


def make(flat, n_data, m, enabled=True):
    """The packed-row arrays of a cache whose rows live in ``flat`` (1-D float64, the
    classic slots' memory; a (1,) placeholder disables packing), for ``n_data`` data
    rows and ``m`` variables, as a dict of :class:`RowCache` fields.  Without packing
    ``flat`` is None, and the packed functions are not compiled for that cache
    (:func:`.state.when`)."""
    enabled = bool(enabled) and flat.shape[0] > 1
    k = n_data if enabled else 1
    pmeta = np.zeros(N_PMETA, dtype=np.int64)
    pmeta[P_ENABLED] = int(enabled)
    return {"flat": flat if enabled else None, "pmeta": pmeta,
            "col_of_row": np.full(k, -1, dtype=np.int64),
            "bcols": np.zeros(k, dtype=np.int64),
            "cidx": np.zeros(m if enabled else 1, dtype=np.int64),
            "pslot_of_row": np.full(k, -1, dtype=np.int64),
            "prow_of_slot": np.full(k, -1, dtype=np.int64),
            "lru_prev": np.zeros(k + 1, dtype=np.int64),
            "lru_next": np.zeros(k + 1, dtype=np.int64),
            "full": np.zeros(k)}


@njit(cache=True, nogil=True)
def active(cc, epoch):
    """True when rows on the active columns come packed (a layout of this epoch)."""
    return cc.pmeta[P_L] > 0 and cc.pmeta[P_EPOCH] == epoch


@njit(cache=True, nogil=True)
def _clear(cc):
    """Forget the layout and the rows it holds."""
    pm = cc.pmeta
    for k in range(pm[P_L]):
        cc.col_of_row[cc.bcols[k]] = -1
    for s in range(pm[P_SLOTS]):
        r = cc.prow_of_slot[s]
        if r >= 0:
            cc.pslot_of_row[r] = -1
            cc.prow_of_slot[s] = -1
    pm[P_L] = 0
    pm[P_SLOTS] = 0


@njit(cache=True, nogil=True)
def _refresh(cc, index, na, layout):
    """cidx[t] = the packed column of the variable at position t < na."""
    if cc.pmeta[P_CIDX_LAYOUT] == layout:
        return
    for t in range(na):
        cc.cidx[t] = cc.col_of_row[index[t]]
    cc.pmeta[P_CIDX_LAYOUT] = layout


@njit(cache=True, nogil=True)
def plan(cc, index, st, alpha, C):
    """After a shrinking or unshrinking: keep the layout (refreshing ``cidx``), build
    a new one or use none.  A layout is built only where the free active variables
    (0 < α < C: the rows SMO keeps asking for) outnumber the classic slots; it keeps
    the rows already held that cover its columns (:func:`_repack`).  Returns True
    (for :func:`on`)."""
    pm = cc.pmeta
    if pm[P_ENABLED] == 0:
        return True
    na = st[S_ACTIVE]
    same = pm[P_L] > 0 and pm[P_EPOCH] == st[S_EPOCH]
    if same and na >= REBUILD_BELOW * pm[P_L]:
        _refresh(cc, index, na, st[S_LAYOUT])
        return True
    n_data = cc.slot_of_row.shape[0]
    mark = np.zeros(n_data, dtype=np.bool_)
    for t in range(na):
        mark[index[t]] = True
    bcols = np.flatnonzero(mark)              # increasing: what _repack relies on
    L = bcols.shape[0]
    n_slots = min(cc.flat.shape[0] // max(L, 1), n_data)
    n_free = 0
    for t in range(na):
        n_free += 0.0 < alpha[t] < C[t]
    if L == 0 or n_slots < MIN_GAIN * cc.cache.shape[0] or n_free <= cc.cache.shape[0]:
        if same:
            _refresh(cc, index, na, st[S_LAYOUT])
        else:
            _clear(cc)
        return True
    _repack(cc, bcols, n_slots, same, st[S_EPOCH])
    pm[P_REBUILDS] += same
    pm[P_L] = L
    pm[P_EPOCH] = st[S_EPOCH]
    pm[P_SLOTS] = n_slots
    pm[P_BUILDS] += 1
    pm[P_STAMP] = -2 - pm[P_BUILDS]          # the compact copy of bcols (layouts are ≥ 0)
    pm[P_CIDX_LAYOUT] = -1
    _refresh(cc, index, na, st[S_LAYOUT])
    return True


@njit(cache=True, nogil=True)
def _repack(cc, bcols, n_slots, from_packed, epoch):
    """Re-cut the cache's memory into ``n_slots`` packed slots over the columns
    ``bcols`` (increasing), keeping the rows held that cover them: the packed rows of
    the previous layout of this epoch (``from_packed``), else the classic rows valid
    for every column or for this epoch's active set (a superset of ``bcols``).

    The rows move in place, in memory order: row q of the source (slot length
    ``w ≥ L``) goes to packed slot k ≤ q, and its column k' is read at source column
    src[k'] ≥ k' (both column lists increasing), so every value is read before the
    writes reach it.  The classic slots are emptied; the kept rows enter the LRU list
    in their previous order of use, after the empty slots.
    """
    flat = cc.flat
    L = bcols.shape[0]
    pm = cc.pmeta
    if from_packed:
        w = pm[P_L]
        src = cc.col_of_row[bcols]
        n_src = pm[P_SLOTS]
        # rank of use of each old slot, from the LRU list (0 = least recent)
        key = np.full(n_src, -1, dtype=np.int64)
        h = cc.slot_of_row.shape[0]
        s = cc.lru_next[h]
        rank = 0
        while s != h:
            key[s] = rank
            rank += 1
            s = cc.lru_next[s]
        rows = np.empty(n_src, dtype=np.int64)
        for q in range(n_src):
            rows[q] = cc.prow_of_slot[q]
    else:
        w = cc.cache.shape[1]
        src = bcols
        n_src = cc.cache.shape[0]
        key = cc.slot_tick.copy()
        rows = cc.row_of_slot.copy()
        for q in range(n_src):
            e = cc.slot_epoch[q]
            if rows[q] >= 0 and not (e == FULL or e == epoch):
                rows[q] = -1
    _clear(cc)
    cc.slot_of_row[:] = -1
    cc.row_of_slot[:] = -1
    cc.slot_tick[:] = 0
    for k in range(L):
        cc.col_of_row[bcols[k]] = k
        cc.bcols[k] = bcols[k]
    kept = np.empty(n_slots, dtype=np.int64)
    k = 0
    for q in range(n_src):
        r = rows[q]
        if r < 0 or k >= n_slots:
            continue
        d0 = k * L
        s0 = q * w
        for j in range(L):
            flat[d0 + j] = flat[s0 + src[j]]
        cc.pslot_of_row[r] = k
        cc.prow_of_slot[k] = r
        kept[k] = key[q]
        k += 1
    pm[P_KEPT] += k
    # LRU list (sentinel h; next of h is the least recently used): the empty slots,
    # then the kept rows from the least to the most recently used
    h = cc.slot_of_row.shape[0]
    order = np.empty(n_slots, dtype=np.int64)
    for j in range(n_slots - k):
        order[j] = k + j
    by_use = np.argsort(kept[:k])
    for j in range(k):
        order[n_slots - k + j] = by_use[j]
    prv, nxt = cc.lru_prev, cc.lru_next
    last = h
    for j in range(n_slots):
        s = order[j]
        nxt[last] = s
        prv[s] = last
        last = s
    nxt[last] = h
    prv[h] = last


@njit(cache=True, inline="always")
def _touch(cc, s):
    """Make slot s the most recently used."""
    prv, nxt = cc.lru_prev, cc.lru_next
    h = cc.slot_of_row.shape[0]
    p = prv[s]
    q = nxt[s]
    nxt[p] = q
    prv[q] = p
    t = prv[h]
    nxt[t] = s
    prv[s] = t
    nxt[s] = h
    prv[h] = s


@njit(cache=True, inline="always")
def row(r, st, kd, cc):
    """The packed row of data row r (``L`` values, column k = ``bcols[k]``), computed
    into the least recently used slot on a miss."""
    pm = cc.pmeta
    L = pm[P_L]
    s = cc.pslot_of_row[r]
    if s >= 0:
        _touch(cc, s)
        st[S_HITS] += 1
        return cc.flat[s * L:(s + 1) * L]
    s = cc.lru_next[cc.slot_of_row.shape[0]]
    old = cc.prow_of_slot[s]
    if old >= 0:
        cc.pslot_of_row[old] = -1
    cc.prow_of_slot[s] = r
    cc.pslot_of_row[r] = s
    _touch(cc, s)
    st[S_MISSES] += 1
    st[S_ROWS_PARTIAL] += 1
    out = cc.flat[s * L:(s + 1) * L]
    compact_active(kd, cc.bcols, L, pm[P_STAMP])
    packed_kernel_row(r, out, cc.bcols, L, kd)
    return out
