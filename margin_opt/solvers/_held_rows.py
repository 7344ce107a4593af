"""Sums of kernel rows that SMO's row cache already holds, read in place.

``outT[j] += Σₖ coefs[k, j]·cache[slots[k]]``: the Newton polish's gradient update
and the gradient reconstruction at the end of a shrinking epoch both combine the
rows of the free variables, most of which the cache holds whole.  Reading them
costs a sweep over memory (ε-SVR at n = 5000: 1538 of 1890 free rows held, 62 MB),
against recomputing them by matrix products (:func:`._kernel_rows.combination_gemm`:
a product and an exponential per entry).  The sweep is memory-bound; split by
columns over the numba threads it draws on both cores' bandwidth (28 against
14 GB/s on the 2-core development machine), and each entry adds its terms in the
same order whatever the split, so the sums do not depend on the threads.
"""

from __future__ import annotations

from numba import njit, prange

__all__ = ["accumulate", "PAR_ENTRIES"]

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


@njit(cache=True, nogil=True)
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
        Threads, used where ``r·n`` ≥ :data:`PAR_ENTRIES`.
    """
    if nthr > 1 and slots.shape[0] * cache.shape[1] >= PAR_ENTRIES:
        _split(cache, slots, coefs, outT, nthr)
    else:
        _range(cache, slots, coefs, outT, 0, outT.shape[1])
