"""SMO's row cache: kernel rows kept by data row, and sums of the rows it holds.

The cache (:class:`RowCache`) keeps ``K[r, ·]`` for data rows r in slots, each valid
for every column or for the active set of one shrinking epoch (LIBSVM computes only
the active columns too), the least recently used evicted (:func:`get_row`); where the
whole n × n matrix is given or fits the budget every row has its own slot.  Once
shrinking leaves few rows active its memory is re-cut into packed rows
(:mod:`.packed`).  Its memory is kept for the next run of the process
(:mod:`.memory`).

Sums of held rows (:func:`accumulate`): ``outT[j] += Σₖ coefs[k, j]·cache[slots[k]]``.
The Newton polish's gradient update and the gradient reconstruction at the end of a
shrinking epoch both combine the rows of the free variables, most of which the
cache holds whole.  Reading them costs a sweep over memory (ε-SVR at n = 5000: 1538
of 1890 free rows held, 62 MB), against recomputing them by matrix products
(:func:`.rows.combination_gemm`: a product and an exponential per entry).  The
sweep is memory-bound; split by columns over the numba threads it draws on both
cores' bandwidth (28 against 14 GB/s on the 2-core development machine), and each
entry adds its terms in the same order whatever the split, so the sums do not
depend on the threads.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from . import memory as _mem
from . import packed as _pk
from .rows import compact_active, has_transpose, kernel_row
from .state import (
    FULL,
    S_ACTIVE,
    S_EPOCH,
    S_HITS,
    S_LAYOUT,
    S_MISSES,
    S_ROWS_FULL,
    S_ROWS_PARTIAL,
    S_TICK,
)

__all__ = ["RowCache", "make_cache", "get_row", "accumulate", "whole_slot", "scratch_row",
           "PAR_ENTRIES"]

_MB = 2 ** 20

#: The row cache: ``cache`` (n_slots, n_data) float64 rows (only read: it may be a
#: read-only or memory-mapped kernel matrix), ``slot_of_row`` (n_data,),
#: ``row_of_slot`` (n_slots,), ``slot_epoch`` (FULL, or the shrinking epoch whose
#: active columns a row is valid for), ``slot_tick`` (last use, for LRU) and
#: ``store``, the same array as ``cache`` where rows are computed (written), a
#: (1, 1) placeholder where the whole matrix is given.  The other fields are the
#: packed rows of a shrunk run (:mod:`.packed`): ``flat``, the same memory as
#: ``store`` in one dimension (None where the cache does not pack), ``pmeta``,
#: ``col_of_row``, ``bcols``, ``cidx``, ``pslot_of_row``, ``prow_of_slot``,
#: ``lru_prev``, ``lru_next`` and ``full``.
RowCache = namedtuple("RowCache", ["cache", "slot_of_row", "row_of_slot", "slot_epoch",
                                   "slot_tick", "store", "flat", "pmeta", "col_of_row",
                                   "bcols", "cidx", "pslot_of_row", "prow_of_slot",
                                   "lru_prev", "lru_next", "full"])


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
        kernel_row(r, store[s], all_cols, np.int64(-1), kd)
        slot_epoch[s] = FULL
        st[S_ROWS_FULL] += 1
    else:
        compact_active(kd, index, na, st[S_LAYOUT])
        kernel_row(r, store[s], index, na, kd)
        slot_epoch[s] = st[S_EPOCH]
        st[S_ROWS_PARTIAL] += 1
    return s


@njit(cache=True, inline="always")
def whole_slot(cc, r):
    """The slot holding data row r for every column, or −1."""
    s = cc.slot_of_row[r]
    return s if s >= 0 and cc.slot_epoch[s] == FULL else -1


@njit(cache=True, inline="always")
def scratch_row(v, index, st, kd, cc, all_cols):
    """K[index[v], :] computed whole into the scratch row (while rows come packed)."""
    kernel_row(index[v], cc.full, all_cols, np.int64(-1), kd)
    st[S_MISSES] += 1
    st[S_ROWS_FULL] += 1
    return cc.full


def make_cache(gram, n_data, cache_size, m, packed=True, pool=None):
    """The :class:`RowCache` and its number of slots: a full matrix (all rows valid) or
    LRU slots (packed once shrinking leaves few rows active where ``packed``, see
    :mod:`.packed`), for ``m`` variables; ``cache_size`` in MB.  The slots' memory comes
    from ``pool`` (a :class:`.memory.RowMemory`; None: :data:`.memory.POOL`), and goes
    back to it when the run ends."""
    if gram is not None:
        ar = np.arange(n_data, dtype=np.int64)
        return RowCache(gram, ar.copy(), ar.copy(), np.full(n_data, FULL, dtype=np.int64),
                        np.zeros(n_data, dtype=np.int64), np.zeros((1, 1)),
                        **_pk.make(np.zeros(1), n_data, m, False)), n_data
    n_slots = int(max(2, min(n_data, cache_size * _MB // (8 * n_data))))
    # memory kept from an earlier run where it fits (no fresh pages to fault in)
    pool = _mem.POOL if pool is None else pool
    rows = pool.take(n_slots * n_data, reserve=cache_size * _MB // 8).reshape(n_slots, n_data)
    packed = packed and n_slots < n_data
    return RowCache(rows, np.full(n_data, -1, dtype=np.int64),
                    np.full(n_slots, -1, dtype=np.int64), np.zeros(n_slots, dtype=np.int64),
                    np.zeros(n_slots, dtype=np.int64), rows,
                    **_pk.make(rows.reshape(-1), n_data, m, packed)), n_slots


#: cache entries read from which the sweep is split over threads
PAR_ENTRIES = 1 << 18


@njit(cache=True, nogil=True)
def _range(cache, slots, coefs, outT, lo, hi):
    """outT[j, lo:hi] += Σₖ coefs[k, j]·cache[slots[k], lo:hi], k in order."""
    for i in range(slots.shape[0]):
        row = cache[slots[i], lo:hi]
        for j in range(outT.shape[0]):
            c = coefs[i, j]
            if c != 0.0:
                o = outT[j, lo:hi]
                for t in range(hi - lo):
                    o[t] += c * row[t]


@njit(cache=True, parallel=True)
def _split(cache, slots, coefs, outT, nthr):
    n = outT.shape[1]
    step = ((n + nthr - 1) // nthr + 7) // 8 * 8
    for h in prange(nthr):
        _range(cache, slots, coefs, outT, min(n, h * step), min(n, (h + 1) * step))


def accumulate(cache, slots, coefs, outT, nthr):
    """outT[j, :] += Σₖ coefs[k, j]·cache[slots[k], :] for every j.

    Parameters
    ----------
    cache : ndarray of shape (n_slots, n)
        The rows (read only).
    slots : ndarray of int of shape (r,)
        The rows to combine, in the order their terms are added.
    coefs : ndarray of shape (r, k)
        Zero coefficients are skipped.
    outT : ndarray of shape (k, n)
        Added to in place.
    nthr : int
        Threads, used where ``r·n`` ≥ :data:`PAR_ENTRIES` (the parallel function is
        compiled on that first use only).
    """
    if nthr > 1 and slots.shape[0] * cache.shape[1] >= PAR_ENTRIES:
        _split(cache, slots, coefs, outT, int(nthr))
    else:
        _range(cache, slots, coefs, outT, 0, outT.shape[1])
