"""Kernel rows K[r, ·] for SMO's row cache: compiled, tiled, split over threads.

A whole row of a named kernel (linear, poly, rbf, sigmoid) on dense data, or on
sparse data with a dense transpose, is computed in tiles of :data:`TILE` columns:
the dot products xᵣᵀX[tile]ᵀ by axpys over the transposed data (the tile stays in
the first-level cache while the d rows of the transpose stream through), then the
kernel's transform of the tile (for RBF: distances, the exact recomputation of the
small ones, a vectorized exp).  Rows of at least ``kd.par_min`` columns are split
over ``kd.nthr`` threads, whole tiles each; every entry is computed by the same code
whatever the split, so the row does not depend on the number of threads.  Rows on a
subset of columns (the active set of a shrunk problem) are dot products column by
column, split likewise.

RBF rows are exact on any data: the data are centred once (the kernel is
translation invariant) and where ‖x − z‖² = ‖x‖² + ‖z‖² − 2xᵀz is still below
:data:`GUARD`·(‖x‖² + ‖z‖²) it is recomputed coordinate by coordinate.

Structures
----------
:class:`KernelArrays` ``kd``: how kernel rows are computed (the kernel's kind and
parameters, the data dense or CSR with its CSC copy, scratch buffers, threads).  A
named tuple, which numba compiles to a plain tuple.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

#: How kernel rows are computed.  ``kind`` (K_*), ``gamma``, ``coef0``, ``degree``;
#: ``sparse``; dense ``X`` (n, d) and its transpose ``XT`` (d, n) — for sparse X,
#: ``XT`` is the dense transpose when it fits a quarter of the cache budget, else a
#: (1, 1) placeholder; ``sq`` the squared row norms; the CSR arrays ``data``,
#: ``indices``, ``indptr`` and the CSC copy ``cdata``, ``cindices``, ``cindptr`` (used
#: for whole rows: K[r, :] = Σ_f x_rf X[:, f]); scratch ``xbuf`` (d, per thread: shape
#: (nthr, d)), ``kbuf`` (n, int64), ``tmp`` (n); ``all_cols`` = arange(n); ``nthr``
#: the threads a row of at least ``par_min`` columns is split over (1: none).
KernelArrays = namedtuple("KernelArrays", [
    "kind", "gamma", "coef0", "degree", "sparse", "X", "XT", "sq", "data", "indices",
    "indptr", "xbuf", "kbuf", "tmp", "cdata", "cindices", "cindptr", "all_cols", "nthr",
    "par_min"])

# kernel kinds
K_LINEAR, K_POLY, K_RBF, K_SIGMOID, K_PRECOMPUTED = 0, 1, 2, 3, 4

GUARD = 1e-4         # RBF: recompute ‖x − z‖² exactly below GUARD·(‖x‖² + ‖z‖²)
TILE = 512           # columns per tile of a whole row (4 KB: stays in L1)
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
def _full_tile(r, out, lo, hi, kd, kbuf):
    """out[lo:hi] = K[r, lo:hi] from the dense transpose (dense X, or sparse X with XT)."""
    m = hi - lo
    b = out[lo:hi]
    for k in range(m):
        b[k] = 0.0
    XT = kd.XT
    if kd.sparse:
        data, indices, indptr = kd.data, kd.indices, kd.indptr
        for q in range(indptr[r], indptr[r + 1]):
            v = data[q]
            xt = XT[indices[q], lo:hi]
            for k in range(m):
                b[k] += v * xt[k]
    else:
        X = kd.X
        for f in range(XT.shape[0]):
            v = X[r, f]
            if v != 0.0:
                xt = XT[f, lo:hi]
                for k in range(m):
                    b[k] += v * xt[k]
    kind, gamma, coef0 = kd.kind, kd.gamma, kd.coef0
    if kind == K_RBF:
        sr = kd.sq[r]
        s = kd.sq[lo:hi]
        nbad = 0
        for k in range(m):
            norms = sr + s[k]
            d2 = norms - 2.0 * b[k]
            nbad += d2 <= GUARD * norms
            b[k] = d2
        if nbad:
            for k in range(m):
                if b[k] <= GUARD * (sr + s[k]):
                    c = lo + k
                    b[k] = 0.0 if c == r else exact_d2(r, c, kd)
        for k in range(m):
            b[k] = -gamma * max(b[k], 0.0)
        vexp(b, m, kbuf[lo:hi])
    elif kind == K_POLY:
        for k in range(m):
            z = gamma * b[k] + coef0
            v = 1.0
            for _ in range(kd.degree):
                v *= z
            b[k] = v
    elif kind == K_SIGMOID:
        for k in range(m):
            b[k] = math.tanh(gamma * b[k] + coef0)


@njit(cache=True, fastmath=_FM)
def _full_range(r, out, lo, hi, kd):
    for s in range(lo, hi, TILE):
        _full_tile(r, out, s, min(s + TILE, hi), kd, kd.kbuf)


@njit(cache=True, fastmath=_FM)
def _csc_row(r, out, kd):
    """K[r, :] for sparse X without a dense transpose: Σ_f x_rf X[:, f] from the CSC copy."""
    data, indices, indptr = kd.data, kd.indices, kd.indptr
    cdata, cindices, cindptr = kd.cdata, kd.cindices, kd.cindptr
    n = out.shape[0]
    for k in range(n):
        out[k] = 0.0
    for q in range(indptr[r], indptr[r + 1]):
        v = data[q]
        f = indices[q]
        for e in range(cindptr[f], cindptr[f + 1]):
            out[cindices[e]] += v * cdata[e]
    _transform(r, out, kd.all_cols, 0, n, kd, kd.kbuf)


@njit(cache=True, fastmath=_FM)
def _cols_range(r, out, cols, lo, hi, kd, xbuf):
    """out[cols[k]] = K[r, cols[k]] for k in [lo, hi) (dot products column by column)."""
    tmp = kd.tmp
    if kd.sparse:
        data, indices, indptr = kd.data, kd.indices, kd.indptr
        for q in range(indptr[r], indptr[r + 1]):
            xbuf[indices[q]] = data[q]
        for k in range(lo, hi):
            c = cols[k]
            s = 0.0
            for q in range(indptr[c], indptr[c + 1]):
                s += xbuf[indices[q]] * data[q]
            tmp[k] = s
        for q in range(indptr[r], indptr[r + 1]):
            xbuf[indices[q]] = 0.0
    else:
        X = kd.X
        d = X.shape[1]
        xr = X[r]
        for k in range(lo, hi):
            xc = X[cols[k]]
            s = 0.0
            for f in range(d):
                s += xr[f] * xc[f]
            tmp[k] = s
    _transform(r, tmp, cols, lo, hi, kd, kd.kbuf)
    for k in range(lo, hi):
        out[cols[k]] = tmp[k]


@njit(cache=True, parallel=True)
def _full_par(r, out, n, kd, nthr):
    step = ((n + nthr - 1) // nthr + TILE - 1) // TILE * TILE
    for h in prange(nthr):
        _full_range(r, out, min(n, h * step), min(n, (h + 1) * step), kd)


@njit(cache=True, parallel=True)
def _cols_par(r, out, cols, n, kd, nthr):
    step = (n + nthr - 1) // nthr
    for h in prange(nthr):
        _cols_range(r, out, cols, min(n, h * step), min(n, (h + 1) * step), kd, kd.xbuf[h])


@njit(cache=True)
def kernel_row(r, out, cols, ncols, kd):
    """Kernel values K[r, c] for data row r.

    ``ncols < 0``: every column, written to ``out[c]``; else only the columns
    ``cols[:ncols]`` (data rows), written to ``out[cols[k]]``.  Split over ``kd.nthr``
    threads from ``kd.par_min`` columns on.
    """
    full = ncols < 0
    n = out.shape[0] if full else ncols
    nthr = kd.nthr if n >= kd.par_min else 1
    if full:
        if kd.sparse and kd.XT.shape[1] != out.shape[0]:
            _csc_row(r, out, kd)
        elif nthr > 1:
            _full_par(r, out, n, kd, nthr)
        else:
            _full_range(r, out, 0, n, kd)
    elif nthr > 1:
        _cols_par(r, out, cols, n, kd, nthr)
    else:
        _cols_range(r, out, cols, 0, n, kd, kd.xbuf[0])
