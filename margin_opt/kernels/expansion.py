"""Kernel expansions f(x) = Σₛ cₛ K(x, s) + b evaluated by blocks: every kernel
estimator's decision values, computed by the compiled kernel engine
(``margin_opt._core``, ``src/core/kernel.cpp``).

The values K(x, s) of a block of queries against a tile of support vectors come from
their inner products (dense data: one BLAS product of the centred queries with the
centred tile; sparse data: four nonzeros of a query per sweep over the dense
transpose of the tile), turned into kernel values by the engine's one transform (for
RBF ‖x‖² + ‖s‖² − 2xᵀs, the distances that lost their digits recomputed coordinate by
coordinate, then a vectorized exponential), then multiplied by the tile's
coefficients and summed.  The blocks of queries are dealt to the threads of
:func:`margin_opt.parallel.core_threads` (the core's pool; BLAS on one thread each).
The kernel values of a block never leave the first levels of the cache, and the
memory beyond the output is bounded by :attr:`ExpansionOptions.block_bytes` (never an
n_queries × n_SV matrix).

Several functions that share support vectors share the block: the one-vs-one pairs
(pair (i, j) sums the SVs of classes i and j with their coefficients for that pair,
LIBSVM's layout) are one product of each class's tile with its coefficients for the
k − 1 pairs it is in, so every kernel value is computed once per query, whatever the
number of pairs.  Crammer–Singer's k functions are one product likewise.

Kernels the engine does not name (a callable, a precomputed matrix) and sparse
support vectors whose dense transpose exceeds the budget go block by block through
:class:`~margin_opt.kernels.Kernel` and numpy, with the same memory bound.

References
----------
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM TIST
2(3), 2011, §7 (the one-vs-one model and its decision values).
B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press, 2002, §7.3 (the
kernel expansion of the decision function).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _num_samples

from .._core import Expansion as CoreExpansion
from .._core import Support, expansion_values
from ..parallel import core_threads, one_blas_thread
from . import CORE_KINDS, canonical_csr, core_rows, core_spec, row_sq_norms

__all__ = ["ExpansionOptions", "Expansion", "binary_expansion", "ovo_expansion",
           "joint_expansion", "evaluate"]

#: the kernels the engine computes, by name
KINDS = CORE_KINDS


@dataclass(frozen=True)
class ExpansionOptions:
    """How an expansion is evaluated.

    Parameters
    ----------
    block_bytes : int, default=16 MiB
        Memory for all the threads' scratch together (blocks of queries, their
        kernel values, their partial sums), beyond the output and the support
        vectors' own prepared copy (centred, or a dense transpose of sparse ones).
    tile : int, default=256
        Support vectors per tile (the kernel values of a block of queries against a
        tile stay in the second-level cache).
    max_rows : int, default=128
        Queries per block, at most.
    parallel_entries : int, default=65536
        Kernel values (queries × support vectors) from which the blocks are split over
        threads.
    sparse_transpose_bytes : int, default=64 MiB
        Largest dense transpose of sparse support vectors (n_features × n_SV) made for
        the compiled sparse path; above it, blocks by scipy.
    """

    block_bytes: int = 16 * 2 ** 20
    tile: int = 256
    max_rows: int = 128
    parallel_entries: int = 1 << 16
    sparse_transpose_bytes: int = 64 * 2 ** 20

    def __post_init__(self):
        for name in ("block_bytes", "tile", "max_rows", "parallel_entries",
                     "sparse_transpose_bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"ExpansionOptions.{name} must be an integer ≥ 1, got {v!r}.")


#: The functions f_p(x) = G[a_slot[p], a_col[p]](x) + G[b_slot[p], b_col[p]](x) + b_p,
#: where G[g, j](x) = Σ over the support vectors s of group g of W[s, j]·K(x, s):
#: ``W`` (n_SV, m) the coefficients, ``bounds`` (n_groups + 1,) the groups' rows
#: (bounds[g]:bounds[g + 1]), ``a_slot``, ``a_col``, ``b_slot``, ``b_col``
#: (n_functions,) the two partial sums of each function (b_slot = −1: none),
#: ``intercept`` (n_functions,).
Expansion = namedtuple("Expansion", ["W", "bounds", "a_slot", "a_col", "b_slot", "b_col",
                                     "intercept"])


def binary_expansion(dual_coef, intercept) -> Expansion:
    """f_p(x) = Σₛ dual_coef[p, s] K(x, s) + intercept[p] (one decision function,
    SVC's binary or SVR's: dual_coef of shape (1, n_SV))."""
    dual_coef = np.asarray(dual_coef, dtype=float)
    k, n_sv = dual_coef.shape
    z = np.zeros(k, dtype=np.int64)
    return Expansion(np.ascontiguousarray(dual_coef.T), np.array([0, n_sv], dtype=np.int64),
                     z, np.arange(k, dtype=np.int64), z - 1, z,
                     np.asarray(intercept, dtype=float).ravel())


def joint_expansion(dual_coef, intercept) -> Expansion:
    """f_r(x) = Σₛ dual_coef[r, s] K(x, s) + intercept[r] for every r (the k functions
    of Crammer–Singer, dual_coef of shape (k, n_SV), share every support vector)."""
    return binary_expansion(dual_coef, intercept)


def ovo_expansion(n_support, dual_coef, intercept) -> Expansion:
    """The one-vs-one pairs of LIBSVM's layout: pair (i, j) (i < j, in order) is
    Σ over the SVs of class i of dual_coef[j − 1, s] K(x, s) + Σ over those of class j of
    dual_coef[i, s] K(x, s) + intercept[p].

    Parameters
    ----------
    n_support : ndarray of shape (n_classes,)
    dual_coef : ndarray of shape (n_classes − 1, n_SV)
    intercept : ndarray of shape (n_pairs,)
    """
    n_support = np.asarray(n_support, dtype=np.int64)
    k = n_support.size
    ii, jj = np.triu_indices(k, 1)          # (0, 1), (0, 2), …: class_pairs' order
    return Expansion(np.ascontiguousarray(np.asarray(dual_coef, dtype=float).T),
                     np.concatenate([[0], np.cumsum(n_support)]).astype(np.int64),
                     ii.astype(np.int64), (jj - 1).astype(np.int64), jj.astype(np.int64),
                     ii.astype(np.int64), np.asarray(intercept, dtype=float).ravel())


# ---------------------------------------------------------------- the driver

def _tiles(bounds, tile) -> np.ndarray:
    """(n_tiles, 3) rows (lo, hi, group): each group's support vectors in tiles of at
    most ``tile`` (a tile never straddles two groups)."""
    out = [(lo, min(lo + tile, bounds[g + 1]), g) for g in range(bounds.size - 1)
           for lo in range(int(bounds[g]), int(bounds[g + 1]), tile)]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def evaluate(kernel, X, support_vectors, ex: Expansion, *, support=None,
             options: ExpansionOptions | None = None, nthr: int | None = None) -> np.ndarray:
    """The values of the expansion ``ex`` at the queries X, block by block.

    Parameters
    ----------
    kernel : Kernel
        The fitted kernel (its resolved hyperparameters).
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        Validated queries (for ``kernel.name == "precomputed"``: K(X, X_train) of shape
        (n_samples, n_train)).  Not modified.
    support_vectors : {ndarray, sparse matrix} of shape (n_SV, n_features)
        The fitted ``support_vectors_``, in the rows' order of ``ex.W`` (for a
        precomputed kernel only their number is read).
    ex : Expansion
    support : ndarray of int of shape (n_SV,), optional
        The fitted ``support_`` (the columns of a precomputed kernel).
    options : ExpansionOptions, optional
    nthr : int, optional
        Threads (default: :func:`margin_opt.parallel.core_threads`; one below
        ``options.parallel_entries`` kernel values).

    Returns
    -------
    values : ndarray of shape (n_samples, n_functions)

    Raises
    ------
    ValueError
        The expansion's rows, its groups' bounds and the support vectors disagree in
        number (attributes of a model set by hand), or the kernel overflowed on these
        queries (e.g. a polynomial kernel on features far larger than those of the fit).

    Notes
    -----
    Memory beyond the returned array: the support vectors' prepared copy (dense:
    centred for RBF; sparse: their dense transpose, at most
    ``options.sparse_transpose_bytes``) and at most ``options.block_bytes`` of
    scratch, whatever n_samples (e.g. 10⁶ queries); dense X that is not
    C-contiguous float64 is copied first.
    """
    opts = options or ExpansionOptions()
    n = X.shape[0]
    W = np.ascontiguousarray(ex.W, dtype=np.float64)
    n_sv, m = W.shape
    ngroups = ex.bounds.size - 1
    out = np.empty((n, ex.intercept.size))
    if n == 0 or n_sv == 0:
        out[:] = ex.intercept
        return out
    n_rows = _num_samples(support_vectors)      # (a callable's rows: a list of strings)
    if not (int(ex.bounds[-1]) == n_sv == n_rows):
        raise ValueError(
            f"the model's attributes disagree: its coefficients have {n_sv} rows, "
            f"n_support_ sums to {int(ex.bounds[-1])} and support_vectors_ has "
            f"{n_rows} rows; set them together (or refit).")
    d = X.shape[1]
    named = kernel.name in KINDS
    sv_sparse, x_sparse = sp.issparse(support_vectors), sp.issparse(X)
    small_T = d * n_sv * 8 <= opts.sparse_transpose_bytes
    tiles = _tiles(ex.bounds, opts.tile)
    tw = int(min(opts.tile, n_sv))
    if nthr is None:
        nthr = core_threads() if n * n_sv >= opts.parallel_entries else 1
    if named and (small_T or not (x_sparse or sv_sparse)):
        row_bytes = 8 * (d + 2 + ngroups * m + 2 * tw + m)
        nthr = max(1, min(int(nthr), -(-n // 8)))
        bq = int(max(1, min(opts.max_rows, opts.block_bytes // (nthr * row_bytes))))
        nthr = max(1, min(nthr, -(-n // bq)))
        spec = core_spec(kernel)
        if x_sparse:
            S = canonical_csr(support_vectors)
            queries = core_rows(X)
            prepared = Support(core_rows(S), row_sq_norms(S),
                               transpose=np.ascontiguousarray(S.T.toarray()))
        else:
            SV = (support_vectors.toarray() if sv_sparse
                  else np.asarray(support_vectors, dtype=np.float64))
            shift = SV.mean(axis=0) if kernel.name == "rbf" else np.zeros(d)
            SVc = np.ascontiguousarray(SV - shift)
            queries = core_rows(X)
            prepared = Support(core_rows(SVc), row_sq_norms(SVc), shift=shift)
        index = (np.ascontiguousarray(a, dtype=np.int64)
                 for a in (ex.a_slot, ex.a_col, ex.b_slot, ex.b_col))
        coefs = CoreExpansion(W, tiles, *index,
                              np.ascontiguousarray(ex.intercept, dtype=np.float64), ngroups)
        with one_blas_thread():
            expansion_values(spec, queries, prepared, coefs, out, threads=int(nthr),
                             block_rows=bq)
        if not np.all(np.isfinite(out)):
            raise ValueError(
                f"the {kernel.describe()} kernel overflowed on these queries (NaN or infinite "
                "decision values): scale the features as for fit (e.g. the same "
                "sklearn.preprocessing.StandardScaler), or lower gamma/degree.")
        return out
    # a callable, a precomputed matrix, or sparse support vectors too wide to transpose:
    # blocks of the kernel matrix by Kernel and numpy
    step = int(max(1, opts.block_bytes // (8 * (n_sv + ngroups * m + 1))))
    has_b = ex.b_slot >= 0
    for q0 in range(0, n, step):
        Xb = X[q0:q0 + step]
        if kernel.name == "precomputed":
            Kb = np.asarray(Xb[:, support], dtype=np.float64)
        else:
            Kb = kernel(Xb, support_vectors)
        G = np.zeros((Kb.shape[0], ngroups, m))
        for lo, hi, g in tiles:
            G[:, g] += Kb[:, lo:hi] @ W[lo:hi]
        v = G[:, ex.a_slot, ex.a_col]
        v[:, has_b] += G[:, ex.b_slot[has_b], ex.b_col[has_b]]
        out[q0:q0 + step] = v + ex.intercept
    return out
