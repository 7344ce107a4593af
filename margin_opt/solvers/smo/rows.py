"""Kernel rows and blocks: K[r, ·] for SMO's row cache, ``K[rows, cols]`` and ``Kβ``.

Rows
----

A whole row of a named kernel (linear, poly, rbf, sigmoid) on dense data, or on
sparse data with a dense transpose, is computed in tiles of :data:`TILE` columns:
the dot products xᵣᵀX[tile]ᵀ by axpys over the transposed data (the tile stays in
the first-level cache while the d rows of the transpose stream through), then the
kernel's transform of the tile (for RBF: distances, the exact recomputation of the
small ones, a vectorized exp).  Rows of at least ``kd.par_min`` columns are split
over ``kd.nthr`` threads, whole tiles each; every entry is computed by the same code
whatever the split, so the row does not depend on the number of threads.  Rows on a
subset of columns (the active set of a shrunk problem) are computed the same way from
a compact copy of the active columns of the transpose, refreshed when the active set
changes (every shrinking), so they cost in proportion to the active set; on sparse
data without a dense transpose they are sparse dot products column by column.

RBF rows are exact on any data: the data are centred once (the kernel is
translation invariant) and where ‖x − z‖² = ‖x‖² + ‖z‖² − 2xᵀz is still below
:data:`GUARD`·(‖x‖² + ‖z‖²) it is recomputed coordinate by coordinate.

Structures
----------
:class:`KernelArrays` ``kd``: how kernel rows are computed (the kernel's kind and
parameters, the data dense or CSR with its CSC copy, scratch buffers, threads).  A
named tuple, which numba compiles to a plain tuple.

Blocks
------
Blocks are dot products by BLAS (``X[rows] @ Xᵀ``) turned into kernel values by
the rows' compiled transform, on one thread; a symmetric block
(:func:`symmetric_block`, the polish's K_FF) is half a product and its transform is
split over the numba threads.  Products ``Kβ``
(:func:`combination`) are computed tile by tile of columns in compiled code
(:func:`combination_gemm`), split over the numba threads.  RBF
distances are formed on centred data (the kernel is translation invariant, and
‖x‖² + ‖z‖² − 2xᵀz then keeps its digits), and the few entries where
‖x − z‖² is still small against ‖x‖² + ‖z‖² are recomputed coordinate by
coordinate, so that an offset of the features (1e6) or a huge γ (1e300) gives the
kernel of the unshifted data.  Memory is O(block + n·d), never the n × n matrix.

Used by SMO (its row cache and its Newton polish) and by the certificates
(:meth:`margin_opt.problems.kernel_data.KernelData.combination`), which compute
the decision values from α alone, independently of any solver's gradient.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.linalg import blas

from ...parallel import fit_threads, one_blas_thread
from .state import split, threads_if, when

__all__ = ["KernelArrays", "KINDS", "K_LINEAR", "K_POLY", "K_RBF", "K_SIGMOID", "K_PRECOMPUTED",
           "kernel_row", "packed_kernel_row", "kernel_values", "squared_distances", "transform",
           "sparse_d2", "dense_d2", "sweep4", "sparse_dots", "combination_gemm", "arrays",
           "for_smo", "named_kernel_arrays", "kernel_block", "by_tiles", "dense_named",
           "combination", "symmetric_block", "plain"]

#: How kernel rows are computed.  ``kind`` (K_*), ``gamma``, ``coef0``, ``degree``;
#: ``sparse``; dense ``X`` (n, d) and its transpose ``XT`` (d, n) — for sparse X,
#: ``XT`` is the dense transpose when it fits a quarter of the cache budget, else a
#: (1, 1) placeholder; ``sq`` the squared row norms; the CSR arrays ``data``,
#: ``indices``, ``indptr`` and the CSC copy ``cdata``, ``cindices``, ``cindptr`` (used
#: for whole rows: K[r, :] = Σ_f x_rf X[:, f]; ``cdata`` None for dense data); scratch
#: ``xbuf`` (d, per thread: shape (nthr, d)), ``kbuf`` (n, int64), ``tmp`` (n);
#: ``all_cols`` = arange(n); ``nthr`` the threads a row of at least ``par_min`` columns
#: is split over (1: none; None: a serial run, see :mod:`.state`); ``XA``
#: (d, m) and ``sqa`` (m) the compact copy of the active columns (the transpose and the
#: squared norms at the data rows of the active variables, in position order) and
#: ``xa_stamp`` (1,) the layout it holds (−1: none); (1, 1) / (1,) placeholders where
#: no rows on active columns are computed from a transpose.
KernelArrays = namedtuple("KernelArrays", [
    "kind", "gamma", "coef0", "degree", "sparse", "X", "XT", "sq", "data", "indices",
    "indptr", "xbuf", "kbuf", "tmp", "cdata", "cindices", "cindptr", "all_cols", "nthr",
    "par_min", "XA", "sqa", "xa_stamp"])

# kernel kinds
K_LINEAR, K_POLY, K_RBF, K_SIGMOID, K_PRECOMPUTED = 0, 1, 2, 3, 4

GUARD = 1e-4         # RBF: recompute ‖x − z‖² exactly below GUARD·(‖x‖² + ‖z‖²)
TILE = 512           # columns per tile of a whole row (4 KB: stays in L1)
GEMM_COLS = 512      # columns per tile, and rows per product, of a combination by BLAS
GEMM_ROWS = 128
#: a combination of sparse rows goes row by row (one axpy per nonzero) where the rows
#: hold at most d / SPARSE_ROWS_MAX nonzeros on average
SPARSE_ROWS_MAX = 4
#: kernel values (rows × columns) of a combination from which its tiles are split over
#: threads (below, one thread: the same values, and no parallel function to compile
#: for a small problem's certificate)
GEMM_PAR_ENTRIES = 1 << 18
_FM = {"nnan", "ninf", "nsz", "contract", "arcp"}   # no reassociation: exp stays exact
# The functions that compute a tile of a row (vexp, sparse_dots, _tile, kernel_values,
# squared_distances, transform, _tiles) are compiled without reference counting
# (``_nrt=False``), as SMO's loop is: they allocate nothing, and the views they take of
# every tile would otherwise each cost two atomic operations where numba does not prune
# them (quiet machine, A/B: an RBF row at n = 20 000, d = 20 3.96 → 3.6 ns an entry;
# a9a.t 3.28 → 2.7; the certificate's Kβ on a9a.t 3.0 → 2.45 ns an entry).
#: the dense transpose of sparse data is stored in single precision from this size on
#: (bytes in double) where every value is a single-precision number (binary features,
#: counts, data loaded as float32): the same values and the same double-precision
#: products, half the memory traffic of a row (a9a.t: 3.9–4.4 → 3.3 ns an entry of an RBF
#: row, quiet machine)
NARROW_MIN_BYTES = 1 << 22

_LOG2E = 1.4426950408889634
_LN2HI = 6.93147180369123816490e-01
_LN2LO = 1.90821492927058770002e-10


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
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


@njit(cache=True, nogil=True)
def sparse_d2(adata, aind, p, pe, bdata, bind, q, qe):
    """‖a − b‖² of two sparse rows, a = (adata, aind)[p:pe] and b = (bdata, bind)[q:qe],
    merged on their sorted column indices, summed coordinate by coordinate."""
    s = 0.0
    while p < pe or q < qe:
        fp = aind[p] if p < pe else np.iinfo(np.int64).max
        fq = bind[q] if q < qe else np.iinfo(np.int64).max
        if fp == fq:
            t = adata[p] - bdata[q]
            p += 1
            q += 1
        elif fp < fq:
            t = adata[p]
            p += 1
        else:
            t = bdata[q]
            q += 1
        s += t * t
    return s


@njit(cache=True, nogil=True)
def dense_d2(x, z):
    """‖x − z‖² of two dense rows, summed coordinate by coordinate."""
    s = 0.0
    for f in range(x.shape[0]):
        t = x[f] - z[f]
        s += t * t
    return s


@njit(cache=True, nogil=True)
def exact_d2(r, c, kd):
    """‖x_r − x_c‖² summed coordinate by coordinate (no cancellation).

    Sparse rows are merged on their sorted column indices.
    """
    if not kd.sparse:
        return dense_d2(kd.X[r], kd.X[c])
    data, indices, indptr = kd.data, kd.indices, kd.indptr
    return sparse_d2(data, indices, indptr[r], indptr[r + 1], data, indices, indptr[c],
                     indptr[c + 1])


@njit(cache=True, inline="always", fastmath=_FM)
def sweep4(b, m, XTc, lo, hi, v0, v1, v2, v3, f0, f1, f2, f3):
    """b[k] += v0·XTc[f0, lo + k] + … + v3·XTc[f3, lo + k], summed in that order."""
    x0, x1 = XTc[f0, lo:hi], XTc[f1, lo:hi]
    x2, x3 = XTc[f2, lo:hi], XTc[f3, lo:hi]
    for k in range(m):
        b[k] = (((b[k] + v0 * x0[k]) + v1 * x1[k]) + v2 * x2[k]) + v3 * x3[k]


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def sparse_dots(b, m, XTc, lo, hi, data, indices, q, qe):
    """b[k] += Σ_p data[p]·XTc[indices[p], lo + k] over the nonzeros p in [q, qe) of a
    sparse row, k < m = hi − lo: four nonzeros per sweep over the tile (a quarter of
    the loads and stores of b), then the rest, each entry summed in the row's order."""
    while q + 4 <= qe:
        sweep4(b, m, XTc, lo, hi, data[q], data[q + 1], data[q + 2], data[q + 3],
               indices[q], indices[q + 1], indices[q + 2], indices[q + 3])
        q += 4
    for p in range(q, qe):
        v = data[p]
        xt = XTc[indices[p], lo:hi]
        for k in range(m):
            b[k] += v * xt[k]


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def _tile(r, b, lo, hi, XTc, sqc, cols, full, kd, kbuf):
    """b[k] = K[r, c] for the columns c of XTc[:, lo:hi] (b has length hi − lo).

    ``XTc`` is the dense transpose of the data (``full``: column c = lo + k) or the
    compact copy of the active columns (column c = cols[lo + k]); ``sqc`` their
    squared norms, in the same order.
    """
    m = hi - lo
    for k in range(m):
        b[k] = 0.0
    if kd.sparse:
        # four nonzeros per sweep over the tile, as for dense rows below (the same sums
        # in the same order: a quarter of the loads and stores of b)
        sparse_dots(b, m, XTc, lo, hi, kd.data, kd.indices, kd.indptr[r], kd.indptr[r + 1])
    else:
        # the row's nonzero features, four per sweep over the tile (a quarter of the
        # loads and stores of b); each entry sums its products in feature order, zero
        # features skipped (exact: their terms are zeros)
        X = kd.X
        fa = fb = fc = 0
        held = 0                      # nonzero features waiting for a sweep: fa, fb, fc
        for f in range(XTc.shape[0]):
            if X[r, f] == 0.0:
                continue
            if held == 3:
                sweep4(b, m, XTc, lo, hi, X[r, fa], X[r, fb], X[r, fc], X[r, f], fa, fb, fc, f)
                held = 0
                continue
            if held == 0:
                fa = f
            elif held == 1:
                fb = f
            else:
                fc = f
            held += 1
        for q in range(held):
            f = fa if q == 0 else (fb if q == 1 else fc)
            v = X[r, f]
            xt = XTc[f, lo:hi]
            for k in range(m):
                b[k] += v * xt[k]
    kernel_values(r, b, lo, hi, sqc, cols, full, kd, kbuf)


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def kernel_values(r, b, lo, hi, sqc, cols, full, kd, kbuf):
    """b[k] = K[r, c] from the inner products b[k] = x_r·x_c, k < hi − lo: the one
    kernel transform, of SMO's rows, of blocks and of the pairs' matrices alike.

    The column of b[k] is c = lo + k (``full``) or c = cols[lo + k], its squared norm
    sqc[lo + k]; ``kbuf`` is int64 scratch of b's length (for :func:`vexp`).

    RBF: ‖x − z‖² = ‖x‖² + ‖z‖² − 2xᵀz loses its digits when ‖x − z‖² is small
    against ‖x‖² + ‖z‖² (the data are centred once, which removes the common case:
    a large offset of the features); the distances are formed in a loop without
    branches (it vectorizes), and the few below :data:`GUARD` recomputed coordinate
    by coordinate (:func:`exact_d2`) in a second pass.  The formulas are
    :func:`squared_distances` and :func:`transform`, shared with prediction.
    """
    m = hi - lo
    if kd.kind == K_RBF:
        sr = kd.sq[r]
        if squared_distances(b, m, sr, sqc[lo:hi]):
            for k in range(m):
                if b[k] <= GUARD * (sr + sqc[lo + k]):
                    c = lo + k if full else cols[lo + k]
                    b[k] = 0.0 if c == r else exact_d2(r, c, kd)
    transform(b, m, kd.kind, kd.gamma, kd.coef0, kd.degree, kbuf)


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def squared_distances(b, m, sr, s):
    """b[k] = sr + s[k] − 2·b[k] (‖x − z‖² from xᵀz and the squared norms), k < m, in a
    loop without branches (it vectorizes); returns how many are at most
    :data:`GUARD`·(sr + s[k]), where the formula has lost its digits and the caller
    recomputes them coordinate by coordinate."""
    nbad = 0
    for k in range(m):
        norms = sr + s[k]
        d2 = norms - 2.0 * b[k]
        nbad += d2 <= GUARD * norms
        b[k] = d2
    return nbad


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def transform(b, m, kind, gamma, coef0, degree, kbuf):
    """b[k] = the kernel's value from b[k], k < m: for RBF from the squared distance
    (exp(−γ·max(b, 0)), :func:`vexp`), for poly and sigmoid from the inner product
    ((γb + coef0)^degree, tanh(γb + coef0)); linear: unchanged."""
    if kind == K_RBF:
        for k in range(m):
            b[k] = -gamma * max(b[k], 0.0)
        vexp(b, m, kbuf)
    elif kind == K_POLY:
        for k in range(m):
            z = gamma * b[k] + coef0
            v = 1.0
            for _ in range(degree):
                v *= z
            b[k] = v
    elif kind == K_SIGMOID:
        for k in range(m):
            b[k] = math.tanh(gamma * b[k] + coef0)


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def _tiles(r, out, lo, hi, cols, full, packed, kd):
    """Whole row (``full``: out[c] for columns c in [lo, hi)) or active positions
    t in [lo, hi) (out[cols[t]] through ``kd.tmp``; ``packed``: out[t]), tile by tile."""
    XTc, sqc = (kd.XT, kd.sq) if full else (kd.XA, kd.sqa)
    dst = out if full or packed else kd.tmp
    for s in range(lo, hi, TILE):
        e = min(s + TILE, hi)
        _tile(r, dst[s:e], s, e, XTc, sqc, cols, full, kd, kd.kbuf[s:e])
    if not (full or packed):
        for t in range(lo, hi):
            out[cols[t]] = dst[t]


@njit(cache=True, nogil=True, fastmath=_FM)
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
    kernel_values(r, out, np.int64(0), n, kd.sq, kd.all_cols, np.bool_(True), kd, kd.kbuf)


@njit(cache=True, nogil=True, fastmath=_FM)
def _cols_range(r, out, cols, lo, hi, packed, kd, xbuf):
    """out[cols[k]] (``packed``: out[k]) = K[r, cols[k]] for k in [lo, hi) (sparse dot
    products column by column, where the data have no dense transpose; their squared
    norms gathered into ``kd.sqa``)."""
    tmp, sq, sqa = kd.tmp, kd.sq, kd.sqa
    data, indices, indptr = kd.data, kd.indices, kd.indptr
    for q in range(indptr[r], indptr[r + 1]):
        xbuf[indices[q]] = data[q]
    for k in range(lo, hi):
        c = cols[k]
        s = 0.0
        for q in range(indptr[c], indptr[c + 1]):
            s += xbuf[indices[q]] * data[q]
        tmp[k] = s
        sqa[k] = sq[c]
    for q in range(indptr[r], indptr[r + 1]):
        xbuf[indices[q]] = 0.0
    kernel_values(r, tmp[lo:hi], lo, hi, sqa, cols, np.bool_(False), kd, kd.kbuf[lo:hi])
    if packed:
        for k in range(lo, hi):
            out[k] = tmp[k]
    else:
        for k in range(lo, hi):
            out[cols[k]] = tmp[k]


@njit(cache=True, parallel=True)
def _tiles_par(r, out, n, cols, full, packed, kd, nthr):
    step = ((n + nthr - 1) // nthr + TILE - 1) // TILE * TILE
    for h in prange(nthr):
        _tiles(r, out, min(n, h * step), min(n, (h + 1) * step), cols, full, packed, kd)


@njit(cache=True, parallel=True)
def _cols_par(r, out, cols, n, packed, kd, nthr):
    step = (n + nthr - 1) // nthr
    for h in prange(nthr):
        _cols_range(r, out, cols, min(n, h * step), min(n, (h + 1) * step), packed, kd,
                    kd.xbuf[h])


#: the parallel rows, called where a run splits (compiled only for a run that may)
_tiles_threads = split(_tiles_par)
_cols_threads = split(_cols_par)


@njit(cache=True, nogil=True)
def has_transpose(kd):
    """True when rows come from a dense transpose (dense X, or sparse X with XT)."""
    return (not kd.sparse) or kd.XT.shape[1] == kd.all_cols.shape[0]


@njit(cache=True, nogil=True)
def compact_active(kd, cols, ncols, stamp):
    """Refresh the compact copy of the active columns (``kd.XA[:, t]`` =
    ``XT[:, cols[t]]``, ``kd.sqa``) unless it already holds layout ``stamp``."""
    if kd.xa_stamp[0] == stamp or not has_transpose(kd):
        return
    XT, XA, sq, sqa = kd.XT, kd.XA, kd.sq, kd.sqa
    for f in range(XT.shape[0]):
        xt = XT[f]
        xa = XA[f]
        for t in range(ncols):
            xa[t] = xt[cols[t]]
    for t in range(ncols):
        sqa[t] = sq[cols[t]]
    kd.xa_stamp[0] = stamp


@njit(cache=True, nogil=True)
def kernel_row(r, out, cols, ncols, kd):
    """Kernel values K[r, c] for data row r.

    ``ncols < 0``: every column, written to ``out[c]``; else only the columns
    ``cols[:ncols]`` (the data rows of the active variables), written to
    ``out[cols[k]]`` — from the compact copy :func:`compact_active` (which the caller
    keeps current) where the data have a dense transpose.  Split over ``kd.nthr``
    threads from ``kd.par_min`` columns on.
    """
    _row(r, out, cols, ncols, np.bool_(False), kd)


@njit(cache=True, nogil=True)
def packed_kernel_row(r, out, cols, ncols, kd):
    """out[k] = K[r, cols[k]] for k < ncols (a packed row: the columns in the order
    given, from the compact copy of ``cols[:ncols]`` where the data have a dense
    transpose); the values are those :func:`kernel_row` computes, bit for bit."""
    _row(r, out, cols, ncols, np.bool_(True), kd)


@njit(cache=True, nogil=True)
def _row(r, out, cols, ncols, packed, kd):
    full = ncols < 0
    n = out.shape[0] if full else ncols
    nthr = threads_if(kd.nthr, n >= kd.par_min)      # None: a serial run (see .state)
    # sparse data without a dense transpose (dense data have no CSC copy: not compiled)
    if not _sparse_row_if(kd.cdata, r, out, cols, n, full, packed, kd, nthr) and \
            not _tiles_threads(nthr, r, out, n, cols, full, packed, kd, nthr):
        _tiles(r, out, np.int64(0), n, cols, full, packed, kd)


@njit(cache=True, nogil=True)
def _sparse_row(r, out, cols, n, full, packed, kd, nthr):
    """:func:`_row` for sparse data without a dense transpose (True); False, nothing
    done, where the data have one."""
    if has_transpose(kd):
        return False
    if full:
        _csc_row(r, out, kd)
    elif not _cols_threads(nthr, r, out, cols, n, packed, kd, nthr):
        _cols_range(r, out, cols, np.int64(0), n, packed, kd, kd.xbuf[0])
    return True


#: sparse rows without a dense transpose, compiled only for data with a CSC copy
_sparse_row_if = when(_sparse_row)


@njit(cache=True, nogil=True, fastmath=_FM)
def _gemm_range(kd, Xr, rows, coefs, outT, t0, t1, by_rows):
    """outT[:, c] = Σ_q coefs[q, :]·K[rows[q], c] for the columns of tiles [t0, t1): the
    inner products of a tile of :data:`GEMM_COLS` columns with a block of
    :data:`GEMM_ROWS` rows by one matrix product (BLAS), then the kernel values
    (:func:`kernel_values`) and the sums, over ``rows`` in order.  ``by_rows`` (sparse
    rows with few nonzeros): each row's tile as SMO computes it (:func:`_tile`, one
    axpy per nonzero feature) instead of the dense product."""
    n = outT.shape[1]
    k = coefs.shape[1]
    d = Xr.shape[1]
    kbuf = np.empty(GEMM_COLS, dtype=np.int64)
    XT = kd.XT
    b = np.empty(GEMM_COLS)
    for t in range(t0, t1):
        lo = t * GEMM_COLS
        hi = min(lo + GEMM_COLS, n)
        m = hi - lo
        for j in range(k):
            outT[j, lo:hi] = 0.0
        if by_rows:
            _tile_rows(kd, rows, coefs, outT, lo, hi, b, kbuf)
            continue
        XTt = np.empty((d, m))                 # the tile of the transpose, contiguous
        for f in range(d):
            XTt[f] = XT[f, lo:hi]
        for s in range(0, rows.shape[0], GEMM_ROWS):
            e = min(s + GEMM_ROWS, rows.shape[0])
            _block_sums(kd, np.dot(Xr[s:e], XTt), rows, coefs, outT, s, e, lo, hi, kbuf)


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def _tile_rows(kd, rows, coefs, outT, lo, hi, b, kbuf):
    """outT[:, lo:hi] += Σ_q coefs[q, :]·K[rows[q], lo:hi], each row's tile computed as
    SMO computes it (:func:`_tile`), over ``rows`` in order (no reference counting, as
    the tile functions)."""
    m = hi - lo
    for q in range(rows.shape[0]):
        _tile(rows[q], b, lo, hi, kd.XT, kd.sq, kd.all_cols, np.bool_(True), kd, kbuf)
        _add_scaled(coefs, q, b, outT, lo, m)


@njit(cache=True, nogil=True, fastmath=_FM, _nrt=False)
def _block_sums(kd, D, rows, coefs, outT, s, e, lo, hi, kbuf):
    """outT[:, lo:hi] += Σ_q coefs[q, :]·K[rows[q], lo:hi] for q in [s, e), from the
    inner products D[q − s] (turned into kernel values in place)."""
    m = hi - lo
    for q in range(e - s):
        bq = D[q]
        kernel_values(rows[s + q], bq, lo, hi, kd.sq, kd.all_cols, np.bool_(True), kd, kbuf)
        _add_scaled(coefs, s + q, bq, outT, lo, m)


@njit(cache=True, inline="always", fastmath=_FM)
def _add_scaled(coefs, q, b, outT, lo, m):
    """outT[j, lo:lo + m] += coefs[q, j]·b[:m] for every j (zero coefficients skipped)."""
    for j in range(coefs.shape[1]):
        c = coefs[q, j]
        if c != 0.0:
            o = outT[j, lo:lo + m]
            for i in range(m):
                o[i] += c * b[i]


@njit(cache=True, parallel=True)
def _gemm_par(kd, Xr, rows, coefs, outT, nthr, by_rows):
    n_tiles = (outT.shape[1] + GEMM_COLS - 1) // GEMM_COLS
    step = (n_tiles + nthr - 1) // nthr
    for h in prange(nthr):
        _gemm_range(kd, Xr, rows, coefs, outT, min(n_tiles, h * step),
                    min(n_tiles, (h + 1) * step), by_rows)


@njit(cache=True, nogil=True)
def axpy_rows(kd):
    """True where :func:`combination_gemm` goes row by row, one axpy per nonzero (its
    ``Xr`` is then not read): sparse rows of at most d / :data:`SPARSE_ROWS_MAX`
    nonzeros on average, where that beats the dense product's d multiply-adds per entry
    (a9a.t, 14 of 123, the certificate's Kβ over 6081 rows: 0.35 → 0.21-0.23 s on two
    threads)."""
    return kd.sparse and SPARSE_ROWS_MAX * kd.indptr[-1] <= \
        kd.XT.shape[0] * (kd.indptr.shape[0] - 1)


def combination_gemm(kd, Xr, rows, coefs, nthr):
    """(K[:, rows] @ coefs)ᵀ, shape (k, n), tile by tile of columns from the transpose
    (never a block of the kernel matrix in memory), the inner products by matrix
    products with ``Xr`` (the rows, dense, (r, d); unread where :func:`axpy_rows`);
    threads take whole tiles, so every column's values, and its sum over ``rows`` in
    order, are the same whatever ``nthr``.  Split over ``nthr`` threads from
    :data:`GEMM_PAR_ENTRIES` kernel values on (the parallel function is compiled on
    that first use only)."""
    kd = plain(kd)
    outT = np.empty((coefs.shape[1], kd.all_cols.shape[0]))
    by_rows = bool(axpy_rows(kd))
    n_tiles = (outT.shape[1] + GEMM_COLS - 1) // GEMM_COLS
    if nthr > 1 and n_tiles > 1 and rows.shape[0] * outT.shape[1] >= GEMM_PAR_ENTRIES:
        _gemm_par(kd, Xr, rows, coefs, outT, int(nthr), by_rows)
    else:
        _gemm_range(kd, Xr, rows, coefs, outT, 0, n_tiles, by_rows)
    return outT


def plain(kd):
    """``kd`` without a thread count (``nthr`` None, as a serial run's and as
    :func:`arrays` makes it): for the compiled functions that Python calls beside a run
    (blocks, combinations), so that they and the kernel rows' functions they share with
    the run are compiled for one type of ``kd``."""
    return kd if kd.nthr is None else kd._replace(nthr=None)


# ---------------------------------------------------------------- blocks

#: the kernels computed here (others: a callable or a precomputed matrix)
KINDS = {"linear": K_LINEAR, "poly": K_POLY, "rbf": K_RBF, "sigmoid": K_SIGMOID}

_BLOCK_BYTES = 32 * 2 ** 20
#: entries of a block from which its transform is split over the numba threads
_PAR_ENTRIES = 1 << 16


def arrays(kind, *, n, d=1, gamma=0.0, coef0=0.0, degree=1, sparse=False, X=None, XT=None,
           sq=None, csr=None, csc=None, nthr=None):
    """A :class:`KernelArrays` with placeholders for what this kind of
    data does not use."""
    e2 = np.zeros((1, 1))
    ef, ei = np.zeros(1), np.zeros(1, dtype=np.int64)

    def f64(a):
        return np.ascontiguousarray(a, dtype=np.float64)

    def i64(a):
        return np.ascontiguousarray(a, dtype=np.int64)

    data, indices, indptr = (f64(csr[0]), i64(csr[1]), i64(csr[2])) if csr else (ef, ei, ei)
    XT = e2 if XT is None else XT
    # no CSC copy (dense data, a kernel matrix): cdata None, no sparse rows compiled
    cdata, cind, cptr = (f64(csc[0]), i64(csc[1]), i64(csc[2])) if csc else (None, ei, ei)
    return KernelArrays(
        kind=kind, gamma=gamma, coef0=coef0, degree=degree, sparse=sparse,
        X=e2 if X is None else X, XT=XT, sq=ef if sq is None else sq,
        data=data, indices=indices, indptr=indptr,
        xbuf=np.zeros((nthr or 1, d if sparse else 1)), kbuf=np.zeros(n, dtype=np.int64),
        tmp=np.zeros(n), cdata=cdata, cindices=cind, cindptr=cptr,
        all_cols=np.arange(n, dtype=np.int64), nthr=None if nthr is None else int(nthr),
        par_min=np.iinfo(np.int64).max, XA=np.zeros((1, 1), dtype=XT.dtype), sqa=ef,
        xa_stamp=np.full(1, -1, dtype=np.int64))


def for_smo(kd, m, nthr, par_min, max_threads=None, serial=False):
    """``kd`` for SMO over m variables: rows of at least ``par_min`` columns split over
    ``nthr`` threads (scratch for up to ``max_threads``, the most the run may switch to
    with ``kd._replace(nthr=...)``), and room for the compact copy of the active columns
    (where the data have a dense transpose).  ``serial``: a run that never splits, whose
    ``kd.nthr`` is None (its compiled code has no parallel functions, see :mod:`.state`)."""
    nthr = max(1, int(nthr))
    room = max(nthr, int(max_threads or 1))
    dense_T = kd.kind != K_PRECOMPUTED and (not kd.sparse or kd.XT.shape[1] ==
                                                kd.all_cols.size)
    XA = np.empty((kd.XT.shape[0], m), dtype=kd.XT.dtype) if dense_T else kd.XA
    # sqa: the active columns' squared norms (with a transpose), or those of the columns
    # of a row computed by sparse dot products (without one)
    sqa = np.empty(max(m, 1)) if kd.kind != K_PRECOMPUTED else kd.sqa
    return kd._replace(nthr=None if serial else nthr, xbuf=np.zeros((room, kd.xbuf.shape[1])),
                       par_min=int(par_min),
                       XA=XA, sqa=sqa, tmp=np.empty(max(m, 1)),
                       kbuf=np.empty(max(m, kd.kbuf.size), dtype=np.int64),
                       xa_stamp=np.full(1, -1, dtype=np.int64))


def _narrowed(A, min_bytes):
    """A in single precision where it has at least ``min_bytes`` and every value is a
    single-precision number (converted back, the same doubles), else A."""
    if A.nbytes < min_bytes:
        return A
    A32 = A.astype(np.float32)
    return A32 if np.array_equal(A32, A) else A


def named_kernel_arrays(X, kernel, dense_budget=0.0, narrow_min_bytes=NARROW_MIN_BYTES):
    """``(kd, csr)`` for a named kernel (linear, poly, rbf, sigmoid) on X.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
        Not modified (dense RBF data are centred in a copy; sparse data are copied
        to CSR with sorted indices).
    kernel : Kernel
    dense_budget : float, default=0
        Bytes allowed for a dense transpose of sparse X (faster whole rows).
    narrow_min_bytes : float, default=NARROW_MIN_BYTES
        The dense transpose of sparse X is kept in single precision from this size on
        (in double) where all its values are single-precision numbers: every product
        is still formed and summed in double, so the kernel values are the same to the
        bit, and a row reads half the memory.

    Returns
    -------
    kd : KernelArrays
    csr : scipy.sparse.csr_matrix or None
        The CSR copy for sparse X.
    """
    kind = KINDS[kernel.name]
    params = dict(gamma=float(kernel.gamma) if kernel.gamma is not None else 1.0,
                  coef0=float(kernel.coef0), degree=int(kernel.degree))
    n, d = X.shape
    if sp.issparse(X):
        Xc = sp.csr_matrix(X, dtype=np.float64, copy=True)
        Xc.sum_duplicates()                                   # exact_d2 merges rows: one
        Xc.sort_indices()                                     # entry per column, in order
        Xcsc = Xc.tocsc()
        dense_T = n * d * 8 <= dense_budget
        kd = arrays(kind, n=n, d=d, sparse=True, **params,
                    XT=_narrowed(np.ascontiguousarray(Xcsc.T.toarray()), narrow_min_bytes)
                    if dense_T else None,
                    sq=np.asarray(Xc.multiply(Xc).sum(axis=1), dtype=np.float64).ravel(),
                    csr=(Xc.data, Xc.indices, Xc.indptr),
                    csc=(Xcsc.data, Xcsc.indices, Xcsc.indptr))
        return kd, Xc
    Xd = np.ascontiguousarray(X, dtype=np.float64)
    if kind == K_RBF:
        Xd = Xd - Xd.mean(axis=0)
    kd = arrays(kind, n=n, d=d, **params, X=Xd, XT=np.ascontiguousarray(Xd.T),
                sq=np.einsum("ij,ij->i", Xd, Xd))
    return kd, None


@njit(cache=True, nogil=True)
def _transform_block(rows, B, cols, sqc, kd):
    """B[i, :] = kernel values from dot products, for data row rows[i] and columns cols
    (squared norms sqc), by :func:`kernel_values`."""
    n = B.shape[1]
    kbuf = np.empty(n, dtype=np.int64)
    for i in range(rows.shape[0]):
        kernel_values(rows[i], B[i], np.int64(0), n, sqc, cols, np.bool_(False), kd, kbuf)


def kernel_block(kd, gram, csr, rows, cols=None):
    """``K[rows][:, cols]`` (all columns when ``cols`` is None), ndarray of shape
    (len(rows), len(cols)).

    Parameters
    ----------
    kd : KernelArrays
        From :func:`named_kernel_arrays` (ignored when ``gram`` is given).
    gram : ndarray or None
        The whole kernel matrix when it is at hand (precomputed, callable).
    csr : scipy.sparse.csr_matrix or None
        The data, for sparse X.
    rows, cols : ndarray of int
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if gram is not None:
        return gram[np.ix_(rows, cols)] if cols is not None else gram[rows]
    kd = plain(kd)
    n_data = kd.all_cols.size
    if cols is None:
        cols = kd.all_cols
        if csr is None:
            B = kd.X[rows] @ kd.XT
        elif kd.XT.shape[1] == n_data and kd.XT.dtype == np.float64:
            B = np.asarray(csr[rows] @ kd.XT)
        else:
            B = (csr[rows] @ csr.T).toarray()
    else:
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        B = (csr[rows] @ csr[cols].T).toarray() if csr is not None else kd.X[rows] @ kd.X[cols].T
    B = np.ascontiguousarray(B, dtype=np.float64)
    if kd.kind != K_LINEAR:
        _transform_block(rows, B, cols, np.ascontiguousarray(kd.sq[cols]), kd)
    return B


@njit(cache=True, nogil=True)
def _lower_share(B, rows, sqr, kd, h, nthr):
    """Rows i ≡ h (mod nthr) of B (dot products of data rows ``rows``, squared norms
    ``sqr``, in its lower triangle and diagonal): columns 0..i turned into kernel values
    as a kernel row."""
    n = B.shape[0]
    kbuf = np.empty(n, dtype=np.int64)
    for i in range(h, n, nthr):
        kernel_values(rows[i], B[i, :i + 1], np.int64(0), i + 1, sqr, rows, np.bool_(False), kd,
                      kbuf[:i + 1])


@njit(cache=True, nogil=True)
def _mirror_share(B, h, nthr):
    """Tile rows q ≡ h (mod nthr) of B's lower triangle copied to the upper one (K[j, i]
    is the very value of K[i, j])."""
    n = B.shape[0]
    t = 64
    for q in range(h, (n + t - 1) // t, nthr):
        i0 = q * t
        for j0 in range(0, i0 + 1, t):
            for i in range(i0, min(i0 + t, n)):
                for j in range(j0, min(j0 + t, i)):
                    B[j, i] = B[i, j]


@njit(cache=True, parallel=True, nogil=True)
def _transform_lower_mirror(B, rows, sqr, kd, nthr):
    """:func:`_lower_share`, then :func:`_mirror_share`, dealt to ``nthr`` threads (the
    triangle's work balanced); each entry is computed by the same code whatever the
    split."""
    for h in prange(nthr):            # np.int64: the serial call's type (prange's is unsigned)
        _lower_share(B, rows, sqr, kd, np.int64(h), nthr)
    for h in prange(nthr):
        _mirror_share(B, np.int64(h), nthr)


def symmetric_block(kd, rows, nthr=None) -> np.ndarray:
    """``K[rows][:, rows]`` of dense data, exactly symmetric, ndarray of shape (r, r).

    The dot products of the lower triangle by one BLAS ``dsyrk`` (half a product),
    turned into kernel values by the compiled transform of SMO's rows (RBF on the
    centred data of ``kd``, small distances recomputed exactly, the diagonal exactly
    1), then mirrored; the transform and the mirror split over ``nthr`` numba threads
    (None: :func:`margin_opt.parallel.fit_threads`) where the block is large.

    Parameters
    ----------
    kd : KernelArrays
        From :func:`named_kernel_arrays` on dense data.
    rows : ndarray of int
    nthr : int or None
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.size == 0:
        return np.zeros((0, 0))
    kd = plain(kd)
    Xr = kd.X[rows]
    # Fortran C = XrXrᵀ, upper triangle: the C-order lower triangle of its transpose
    B = np.ascontiguousarray(blas.dsyrk(1.0, Xr.T, trans=1, lower=0).T)
    if nthr is None:
        nthr = fit_threads() if rows.size * rows.size >= _PAR_ENTRIES else 1
    nthr = max(1, int(nthr))
    sqr = np.ascontiguousarray(kd.sq[rows])
    if nthr == 1:        # no parallel region (e.g. on a thread beside SMO's own)
        _lower_share(B, rows, sqr, kd, 0, 1)
        _mirror_share(B, 0, 1)
    else:
        _transform_lower_mirror(B, rows, sqr, kd, nthr)
    return B


def dense_named(kd) -> bool:
    """True where ``kd`` holds a named kernel on dense data, from which
    :func:`symmetric_block` computes (no row cache, no kernel matrix needed)."""
    return kd.kind != K_PRECOMPUTED and not kd.sparse


def by_tiles(kd, gram) -> bool:
    """True when :func:`combination` works tile by tile from a dense transpose (a named
    kernel, no kernel matrix given), not from blocks of whole rows."""
    return gram is None and kd.kind != K_PRECOMPUTED and has_transpose(kd)


def combination(kd, gram, csr, rows, coefs, block_bytes=_BLOCK_BYTES, nthr=None):
    """``K[:, rows] @ coefs``, ndarray of shape (n_data, k).

    Where the data have a dense transpose (dense X, or sparse X whose transpose fits),
    tile by tile of columns in compiled code, the inner products of a tile with a block
    of rows by one BLAS product, the kernel values never stored beyond that block and
    the tiles split over the numba threads (:func:`margin_opt.parallel.fit_threads`); each
    column's sum runs over ``rows`` in order, so the result does not depend on the
    number of threads.  Otherwise from blocks of rows of K by BLAS.

    Parameters
    ----------
    kd, gram, csr : see :func:`kernel_block`
    rows : ndarray of int of shape (r,)
        Data rows with a coefficient.
    coefs : ndarray of shape (r, k)
    block_bytes : float
        Memory of one block of kernel rows (the BLAS path).
    nthr : int or None
        Threads for the tiles (None: :func:`margin_opt.parallel.fit_threads`; an SMO run
        passes the count it runs on).
    """
    kd = plain(kd)
    n_data = kd.all_cols.size if gram is None else gram.shape[0]
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    coefs = np.ascontiguousarray(coefs, dtype=np.float64)
    if by_tiles(kd, gram):
        # the inner products by BLAS, a block of rows against a tile of columns (~1.9×
        # faster than sweeps over the features at n = 20000, d = 20); one BLAS thread
        # per numba thread
        if axpy_rows(kd):                   # sparse rows by axpys: no dense copy
            Xr = np.empty((0, kd.XT.shape[0]))
        else:
            Xr = csr[rows].toarray() if kd.sparse else np.ascontiguousarray(kd.X[rows])
        with one_blas_thread():
            nthr = fit_threads() if nthr is None else max(1, int(nthr))
            return combination_gemm(kd, Xr, rows, coefs, nthr).T
    out = np.zeros((n_data, coefs.shape[1]))
    step = max(1, int(block_bytes // (8 * n_data)))
    with one_blas_thread():
        for s in range(0, rows.size, step):
            blk = kernel_block(kd, gram, csr, rows[s:s + step])
            out += blk.T @ coefs[s:s + step]
    return out
