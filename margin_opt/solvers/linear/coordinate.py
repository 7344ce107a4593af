"""X for the linear solvers, and the layout dual coordinate descent's epochs read.

The epochs of dual coordinate descent with w explicit (liblinear's) and the row
operations (w = Σ cₜ xₜ, Xw, X_R X_Rᵀ, the primal Hessian) are compiled in the core
(``src/core/linear.cpp``, :class:`margin_opt._core.LinearX`).  One epoch visits the
active variables in a random order and, for each, takes the exact minimizing step of
the dual in that one coordinate: the gradient costs one sparse dot product with w
(O(nnz(xᵢ))), the update one axpy into w.  No kernel row is ever formed.

Two kinds of variables:

- ``LinearX.epoch_margin``: one multiplier per standard-form variable t with sign yₜ,
  linear term pₜ, bound uₜ, diagonal Dₜ and data row index[t] (C-SVC, the hinge and
  the squared hinge; liblinear's ``solve_l2r_l1l2_svc``);
- ``LinearX.epoch_tube``: one β = a − â per sample (ε-SVR, L1 and L2 losses; Ho and
  Lin's ``solve_l2r_l1l2_svr``), the standard form's two multipliers of a point
  folded into one, so one dot product per sample.

With an intercept, the equality yᵀα = Δ is handled by the augmented Lagrangian: the
gradient is read at f = Xw + b with b = λ + ρ(yᵀα − Δ) and the coordinate's
curvature is Qₜₜ + Dₜ + ρ (:mod:`margin_opt.solvers.linear.dcd` updates λ; the run's
state between epochs is a :class:`margin_opt._core.CDState`).

References
----------
C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
coordinate descent method for large-scale linear SVM", ICML 2008.
C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression", JMLR 13, 2012.
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
for large linear classification", JMLR 9, 2008.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ... import _core

__all__ = ["linear_x", "spans", "REC_WIDTH", "CDState"]

#: columns of the per-variable record read by an epoch (one cache line a variable):
#: epoch_margin (yₜ, pₜ, uₜ, Dₜ, Qₜₜ + Dₜ); epoch_tube (zᵢ, εᵢ, uᵢ, Dᵢ, ‖xᵢ‖² + Dᵢ)
REC_WIDTH = _core.REC_WIDTH
CDState = _core.CDState

#: the largest index an int32 index array holds
_INT32_MAX = np.iinfo(np.int32).max


def linear_x(X):
    """X as the compiled linear solvers read it: a :class:`margin_opt._core.LinearX`.

    Dense X becomes C-ordered float64 (a copy only where it is not); sparse X becomes
    CSR in canonical form (sorted indices, duplicates summed: a copy only where it is
    not) with float64 data and int32 indices wherever they fit (as scipy builds them;
    ``load_svmlight_file`` gives int64), int64 only past 2³¹ − 1 stored entries or
    columns: narrower indices are less memory to stream.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    LinearX
    """
    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        itype = np.int32 if max(X.nnz, X.shape[1]) <= _INT32_MAX else np.int64
        return _core.LinearX.csr(np.ascontiguousarray(X.data, dtype=np.float64),
                                 np.ascontiguousarray(X.indices, dtype=itype),
                                 np.ascontiguousarray(X.indptr, dtype=itype), X.shape[1])
    return _core.LinearX.dense(np.ascontiguousarray(X, dtype=np.float64))


def _row_starts(x, indptr, rows):
    """(lo, hi) of the rows ``rows`` in x's data."""
    if x.is_dense:
        return rows * x.d, rows * x.d + x.d
    return indptr[rows].astype(np.int64), indptr[rows + 1].astype(np.int64)


def spans(x, indptr, rows):
    """Where each variable's data row lies in x's data: ndarray of shape (m, 2), int64.

    ``[lo, hi)`` of row ``rows[t]`` (CSR: ``indptr[r], indptr[r + 1]``; dense:
    ``r·d, r·d + d``), read by the epochs in one load beside the variable's record
    instead of through ``rows`` and ``indptr`` (two dependent loads at random).

    Parameters
    ----------
    x : LinearX
    indptr : ndarray of shape (n + 1,) or None
        X's CSR row pointers (None for dense X).
    rows : ndarray of shape (m,), int64
    """
    rows = np.asarray(rows, dtype=np.int64)
    lo, hi = _row_starts(x, indptr, rows)
    return np.ascontiguousarray(np.stack([lo, hi], axis=1), dtype=np.int64)
