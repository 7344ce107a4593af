"""Kernel matrices by blocks: the compiled kernel arrays, ``K[rows, cols]`` and ``Kβ``.

Blocks are dot products by BLAS (``X[rows] @ Xᵀ``) turned into kernel values by
the compiled transform of :mod:`._smo_kernels`, on one thread; a symmetric block
(:func:`symmetric_block`, the polish's K_FF) is half a product and its transform is
split over the numba threads.  Products ``Kβ``
(:func:`combination`) are computed tile by tile of columns in compiled code
(:func:`._kernel_rows.combination_T`), split over the numba threads.  RBF
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

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.linalg import blas

from . import _kernel_rows as _kr
from . import _smo_kernels as _k
from ..parallel import one_blas_thread, smo_threads

__all__ = ["KINDS", "arrays", "for_smo", "named_kernel_arrays", "kernel_block", "by_tiles",
           "dense_named", "combination", "symmetric_block"]

#: the kernels computed here (others: a callable or a precomputed matrix)
KINDS = {"linear": _k.K_LINEAR, "poly": _k.K_POLY, "rbf": _k.K_RBF, "sigmoid": _k.K_SIGMOID}

_BLOCK_BYTES = 32 * 2 ** 20
#: entries of a block from which its transform is split over the numba threads
_PAR_ENTRIES = 1 << 16


def arrays(kind, *, n, d=1, gamma=0.0, coef0=0.0, degree=1, sparse=False, X=None, XT=None,
           sq=None, csr=None, csc=None, nthr=1):
    """A :class:`~._smo_kernels.KernelArrays` with placeholders for what this kind of
    data does not use."""
    e2 = np.zeros((1, 1))
    ef, ei = np.zeros(1), np.zeros(1, dtype=np.int64)

    def f64(a):
        return np.ascontiguousarray(a, dtype=np.float64)

    def i64(a):
        return np.ascontiguousarray(a, dtype=np.int64)

    data, indices, indptr = (f64(csr[0]), i64(csr[1]), i64(csr[2])) if csr else (ef, ei, ei)
    cdata, cind, cptr = (f64(csc[0]), i64(csc[1]), i64(csc[2])) if csc else (ef, ei, ei)
    return _k.KernelArrays(
        kind=kind, gamma=gamma, coef0=coef0, degree=degree, sparse=sparse,
        X=e2 if X is None else X, XT=e2 if XT is None else XT, sq=ef if sq is None else sq,
        data=data, indices=indices, indptr=indptr, xbuf=np.zeros((nthr, d if sparse else 1)),
        kbuf=np.zeros(n, dtype=np.int64), tmp=np.zeros(n), cdata=cdata, cindices=cind,
        cindptr=cptr, all_cols=np.arange(n, dtype=np.int64), nthr=int(nthr),
        par_min=np.iinfo(np.int64).max, XA=e2, sqa=ef, xa_stamp=np.full(1, -1, dtype=np.int64))


def for_smo(kd, m, nthr, par_min):
    """``kd`` for SMO over m variables: rows of at least ``par_min`` columns split over
    ``nthr`` threads, and room for the compact copy of the active columns (where the
    data have a dense transpose)."""
    nthr = max(1, int(nthr))
    dense_T = kd.kind != _k.K_PRECOMPUTED and (not kd.sparse or kd.XT.shape[1] ==
                                                kd.all_cols.size)
    XA = np.empty((kd.XT.shape[0], m)) if dense_T else kd.XA
    return kd._replace(nthr=nthr, xbuf=np.zeros((nthr, kd.xbuf.shape[1])), par_min=int(par_min),
                       XA=XA, sqa=np.empty(m) if dense_T else kd.sqa, tmp=np.empty(max(m, 1)),
                       kbuf=np.empty(max(m, kd.kbuf.size), dtype=np.int64),
                       xa_stamp=np.full(1, -1, dtype=np.int64))


def named_kernel_arrays(X, kernel, dense_budget=0.0):
    """``(kd, csr)`` for a named kernel (linear, poly, rbf, sigmoid) on X.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
        Not modified (dense RBF data are centred in a copy; sparse data are copied
        to CSR with sorted indices).
    kernel : Kernel
    dense_budget : float, default=0
        Bytes allowed for a dense transpose of sparse X (faster whole rows).

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
                    XT=np.ascontiguousarray(Xcsc.T.toarray()) if dense_T else None,
                    sq=np.asarray(Xc.multiply(Xc).sum(axis=1), dtype=np.float64).ravel(),
                    csr=(Xc.data, Xc.indices, Xc.indptr),
                    csc=(Xcsc.data, Xcsc.indices, Xcsc.indptr))
        return kd, Xc
    Xd = np.ascontiguousarray(X, dtype=np.float64)
    if kind == _k.K_RBF:
        Xd = Xd - Xd.mean(axis=0)
    kd = arrays(kind, n=n, d=d, **params, X=Xd, XT=np.ascontiguousarray(Xd.T),
                sq=np.einsum("ij,ij->i", Xd, Xd))
    return kd, None


@njit(cache=True, nogil=True)
def _transform_block(rows, B, cols, kd):
    """B[i, :] = kernel values from dot products, for data row rows[i] and columns cols."""
    n = B.shape[1]
    kbuf = np.empty(n, dtype=np.int64)
    for i in range(rows.shape[0]):
        _k._transform(rows[i], B[i], cols, 0, n, kd, kbuf)


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
    n_data = kd.all_cols.size
    if cols is None:
        cols = kd.all_cols
        if csr is None:
            B = kd.X[rows] @ kd.XT
        elif kd.XT.shape[1] == n_data:
            B = np.asarray(csr[rows] @ kd.XT)
        else:
            B = (csr[rows] @ csr.T).toarray()
    else:
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        B = (csr[rows] @ csr[cols].T).toarray() if csr is not None else kd.X[rows] @ kd.X[cols].T
    B = np.ascontiguousarray(B, dtype=np.float64)
    if kd.kind != _k.K_LINEAR:
        _transform_block(rows, B, cols, kd)
    return B


@njit(cache=True, nogil=True)
def _lower_share(B, rows, kd, h, nthr):
    """Rows i ≡ h (mod nthr) of B (dot products of data rows ``rows`` in its lower
    triangle and diagonal): columns 0..i turned into kernel values as a kernel row."""
    n = B.shape[0]
    kbuf = np.empty(n, dtype=np.int64)
    for i in range(h, n, nthr):
        _k._transform(rows[i], B[i], rows, 0, i + 1, kd, kbuf)


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
def _transform_lower_mirror(B, rows, kd, nthr):
    """:func:`_lower_share`, then :func:`_mirror_share`, dealt to ``nthr`` threads (the
    triangle's work balanced); each entry is computed by the same code whatever the
    split."""
    for h in prange(nthr):
        _lower_share(B, rows, kd, h, nthr)
    for h in prange(nthr):
        _mirror_share(B, h, nthr)


def symmetric_block(kd, rows, nthr=None) -> np.ndarray:
    """``K[rows][:, rows]`` of dense data, exactly symmetric, ndarray of shape (r, r).

    The dot products of the lower triangle by one BLAS ``dsyrk`` (half a product),
    turned into kernel values by the compiled transform of SMO's rows (RBF on the
    centred data of ``kd``, small distances recomputed exactly, the diagonal exactly
    1), then mirrored; the transform and the mirror split over ``nthr`` numba threads
    (None: :func:`margin_opt.parallel.smo_threads`) where the block is large.

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
    Xr = kd.X[rows]
    # Fortran C = XrXrᵀ, upper triangle: the C-order lower triangle of its transpose
    B = np.ascontiguousarray(blas.dsyrk(1.0, Xr.T, trans=1, lower=0).T)
    if nthr is None:
        nthr = smo_threads() if rows.size * rows.size >= _PAR_ENTRIES else 1
    nthr = max(1, int(nthr))
    if nthr == 1:        # no parallel region (e.g. on a thread beside SMO's own)
        _lower_share(B, rows, kd, 0, 1)
        _mirror_share(B, 0, 1)
    else:
        _transform_lower_mirror(B, rows, kd, nthr)
    return B


def dense_named(kd) -> bool:
    """True where ``kd`` holds a named kernel on dense data, from which
    :func:`symmetric_block` computes (no row cache, no kernel matrix needed)."""
    return kd.kind != _k.K_PRECOMPUTED and not kd.sparse


def by_tiles(kd, gram) -> bool:
    """True when :func:`combination` works tile by tile from a dense transpose (a named
    kernel, no kernel matrix given), not from blocks of whole rows."""
    return gram is None and kd.kind != _k.K_PRECOMPUTED and _kr.has_transpose(kd)


def combination(kd, gram, csr, rows, coefs, block_bytes=_BLOCK_BYTES):
    """``K[:, rows] @ coefs``, ndarray of shape (n_data, k).

    Where the data have a dense transpose (dense X, or sparse X whose transpose fits),
    tile by tile of columns in compiled code, the inner products of a tile with a block
    of rows by one BLAS product, the kernel values never stored beyond that block and
    the tiles split over the numba threads (:func:`margin_opt.parallel.smo_threads`); each
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
    """
    n_data = kd.all_cols.size if gram is None else gram.shape[0]
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    coefs = np.ascontiguousarray(coefs, dtype=np.float64)
    if by_tiles(kd, gram):
        # the inner products by BLAS, a block of rows against a tile of columns (~1.9×
        # faster than sweeps over the features at n = 20000, d = 20); one BLAS thread
        # per numba thread
        if _kr.axpy_rows(kd):                   # sparse rows by axpys: no dense copy
            Xr = np.empty((0, kd.XT.shape[0]))
        else:
            Xr = csr[rows].toarray() if kd.sparse else np.ascontiguousarray(kd.X[rows])
        with one_blas_thread():
            return _kr.combination_gemm(kd, Xr, rows, coefs, smo_threads()).T
    out = np.zeros((n_data, coefs.shape[1]))
    step = max(1, int(block_bytes // (8 * n_data)))
    with one_blas_thread():
        for s in range(0, rows.size, step):
            blk = kernel_block(kd, gram, csr, rows[s:s + step])
            out += blk.T @ coefs[s:s + step]
    return out
