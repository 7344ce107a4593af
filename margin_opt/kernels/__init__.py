"""Kernel functions: linear, polynomial, RBF, sigmoid, precomputed and callables.

The numerical work is done by :mod:`sklearn.metrics.pairwise`, which accepts dense
arrays and ``scipy.sparse`` matrices alike.  This module resolves a kernel
specification (name and hyperparameters, with ``gamma="scale"``/``"auto"`` as
scikit-learn defines them) into a :class:`Kernel` object that the problems and
solvers share.

References
----------
B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press, 2002, ch. 2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import pairwise
from sklearn.utils.validation import _num_samples

from ..validation import canonical

__all__ = ["Kernel", "make_kernel", "resolve_gamma", "rbf", "KERNELS", "polynomial_features",
           "n_polynomial_features", "row_sq_norms", "ColumnMap"]

KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")


def resolve_gamma(gamma, X) -> float:
    """Resolve ``gamma`` to a positive float.

    Parameters
    ----------
    gamma : {"scale", "auto"} or float
        ``"scale"`` is ``1 / (n_features * X.var())`` (1.0 when the variance is
        zero) and ``"auto"`` is ``1 / n_features``, as in scikit-learn's ``SVC``.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data.

    Returns
    -------
    gamma : float
        Strictly positive kernel coefficient (units: 1 / squared feature units).

    Raises
    ------
    ValueError
        If ``gamma`` is a number that is not strictly positive and finite, an unknown
        string, or ``"scale"`` on features whose variance makes it infinite or 0
        (features of order 1e-160 or 1e160: scale them).
    """
    n_features = X.shape[1]
    if isinstance(gamma, str):
        if gamma == "scale":
            if sp.issparse(X):
                var = X.multiply(X).mean() - X.mean() ** 2
            else:
                var = np.asarray(X, dtype=float).var()
            if var == 0:
                return 1.0
            with np.errstate(over="ignore", divide="ignore"):
                g = 1.0 / (n_features * var)
            if not np.isfinite(g) or g == 0:
                raise ValueError(
                    f"gamma='scale' is 1 / (n_features · X.var()) = {g:g} here: the variance "
                    f"of X, {var:.3g}, is too {'small' if g else 'large'} for float64. Scale "
                    "the features (e.g. sklearn.preprocessing.StandardScaler), or pass a "
                    "numeric gamma.")
            return g
        if gamma == "auto":
            return 1.0 / n_features
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive float, got {gamma!r}.")
    try:
        g = float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive float, got {gamma!r}.") \
            from None
    if not np.isfinite(g) or g <= 0:
        raise ValueError(f"gamma must be a positive finite number, got {gamma!r}; "
                         "try gamma='scale'.")
    return g


def row_sq_norms(A) -> np.ndarray:
    """‖aᵢ‖² of every row of A (dense or sparse), shape (n_rows,); for CSR the squared
    entries summed row by row (no elementwise sparse product, nothing of the length
    of the feature count)."""
    if sp.issparse(A):
        A = A.tocsr()
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        # each row's squares summed in order from 0, as a product with a vector of ones
        # would, without that vector: memory O(nnz), whatever the number of columns
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        with np.errstate(over="ignore"):
            sq = np.bincount(rows, weights=A.data * A.data, minlength=A.shape[0])
        return sq.astype(np.float64, copy=False)        # (an empty matrix's is int)
    return np.einsum("ij,ij->i", A, A)



#: Sparse data are posed on their non-empty columns (:class:`ColumnMap`) from this many
#: features on, where at most half of the columns hold an entry.
COMPRESS_MIN_FEATURES = 2 ** 16
#: The largest dense array (bytes) that :meth:`ColumnMap.expand` returns; above, CSR.
DENSE_COEF_BYTES = 2 ** 26

#: the kernels whose values depend on the data through inner products and norms only
_NAMED = ("linear", "poly", "rbf", "sigmoid")


#: the kernels the compiled engine computes, by name (its ``KernelSpec.kind``)
CORE_KINDS = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3}


def core_spec(kernel):
    """The compiled engine's ``KernelSpec`` of a named :class:`Kernel` (linear, poly,
    rbf, sigmoid).

    Raises
    ------
    ValueError
        For a precomputed or callable kernel (the engine computes named kernels only).
    """
    from .._core import KernelSpec

    if kernel.name not in CORE_KINDS:
        raise ValueError(f"the compiled engine computes the named kernels {sorted(CORE_KINDS)}, "
                         f"not {kernel.name!r}.")
    gamma = float(kernel.gamma) if kernel.gamma is not None else 1.0
    return KernelSpec(CORE_KINDS[kernel.name], gamma, float(kernel.coef0), int(kernel.degree))


def canonical_csr(A) -> sp.csr_matrix:
    """``A`` as a float64 CSR matrix with sorted, unique column indices (a copy only where
    it is not one already)."""
    A = sp.csr_matrix(A, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


def core_rows(X):
    """The compiled engine's view (``Rows``) of dense or sparse X: C-contiguous float64
    rows, or canonical CSR with int64 indices.  The arrays are held by the view, not
    copied where they already have that form; ``X`` is never modified."""
    from .._core import Rows

    if sp.issparse(X):
        A = canonical_csr(X)
        return Rows.csr(A.data, A.indices.astype(np.int64, copy=False),
                        A.indptr.astype(np.int64, copy=False), A.shape[1])
    return Rows.dense(np.ascontiguousarray(X, dtype=np.float64))


def engine_gram(kernel, X, threads=1) -> np.ndarray:
    """The n × n kernel matrix of ``X``: from the compiled engine for a named kernel on
    dense rows (one BLAS product per block of rows, the RBF distances on centred data,
    a vectorized transform), else :meth:`Kernel.gram`.

    Parameters
    ----------
    kernel : Kernel
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    threads : int, default=1
        Threads of the core's pool the blocks are dealt to.

    Returns
    -------
    ndarray of shape (n_samples, n_samples)
    """
    if sp.issparse(X) or kernel.name not in CORE_KINDS:
        return kernel.gram(X)
    from .._core import kernel_matrix
    from ..parallel import one_blas_thread

    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], X.shape[0]))
    with one_blas_thread():          # the blocks' products on the pool's threads
        kernel_matrix(core_spec(kernel), core_rows(X), out, int(threads))
    return out


@dataclass(frozen=True)
class ColumnMap:
    """The non-empty columns of sparse training data, and data posed on them.

    A column without an entry adds nothing to an inner product xᵀz or a norm ‖x‖², so
    every value of a named kernel (linear, poly, rbf, sigmoid) between training points
    is the same on the columns that hold an entry, and so is every answer (w in those
    columns, zero in the others).  Sparse data with d features of which only k ≪ d hold
    an entry (an svmlight file whose largest feature index is 2·10⁹) is fitted in
    memory O(nnz + n·k) instead of O(n·d) (the solvers' dense transposes and vectors
    of length d).

    Parameters
    ----------
    columns : ndarray of int64 of shape (k,)
        The non-empty columns, increasing.
    n_features : int
        d, the number of columns of the user's data.
    """

    columns: np.ndarray
    n_features: int

    @classmethod
    def of(cls, X, kernel="linear", min_features=COMPRESS_MIN_FEATURES):
        """The map of training data X where it pays, else None.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        kernel : str or Kernel, default="linear"
            Only the named kernels are mapped (a callable sees the user's columns).
        min_features : int, default=COMPRESS_MIN_FEATURES

        Returns
        -------
        column_map : ColumnMap or None
            For sparse X with at least ``min_features`` columns of which at most half
            hold an entry.
        """
        name = kernel.name if isinstance(kernel, Kernel) else kernel
        if not sp.issparse(X) or name not in _NAMED or X.shape[1] < min_features:
            return None
        used = np.unique(sp.csr_matrix(X).indices).astype(np.int64)
        if 2 * used.size > X.shape[1]:
            return None
        return cls(used, int(X.shape[1]))

    def compress(self, A, *, rest=False):
        """The rows of A on the map's columns, in O(nnz(A) log k) time and memory.

        Parameters
        ----------
        A : {ndarray, sparse matrix} of shape (n_rows, n_features)
            Training rows, new queries, or weights in the user's columns.
        rest : bool, default=False
            Add a last column holding, for each row, √(Σ of its squared entries in the
            columns outside the map): its inner products with rows of the training data
            (zero there) are unchanged, and its norm, hence every RBF distance to them,
            is kept (a query's features unseen in training).

        Returns
        -------
        A_mapped : csr_matrix of shape (n_rows, k) or (n_rows, k + 1)

        Raises
        ------
        ValueError
            A of another number of columns.
        """
        A = canonical(sp.csr_matrix(A, dtype=np.float64))
        if A.shape[1] != self.n_features:
            raise ValueError(f"the data have {A.shape[1]} features, the column map "
                             f"{self.n_features}.")
        n, k = A.shape[0], self.columns.size
        idx = A.indices.astype(np.int64, copy=False)
        pos = np.searchsorted(self.columns, idx)
        hit = pos < k
        hit[hit] = self.columns[pos[hit]] == idx[hit]
        rows = np.repeat(np.arange(n), np.diff(A.indptr))
        if not rest:
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows[hit], minlength=n), out=indptr[1:])
            return sp.csr_matrix((A.data[hit], pos[hit], indptr), shape=(n, k))
        outside = np.bincount(rows[~hit], weights=A.data[~hit] ** 2, minlength=n)
        extra = np.flatnonzero(outside)
        M = sp.csr_matrix((np.concatenate([A.data[hit], np.sqrt(outside[extra])]),
                           (np.concatenate([rows[hit], extra]),
                            np.concatenate([pos[hit], np.full(extra.size, k)]))),
                          shape=(n, k + 1))
        M.sum_duplicates()
        return M

    def expand(self, W):
        """Weights on the map's columns back in the user's columns.

        Parameters
        ----------
        W : array-like of shape (m, k)

        Returns
        -------
        W_full : {ndarray, csr_matrix} of shape (m, n_features)
            Dense up to :data:`DENSE_COEF_BYTES`, else CSR (zero off the map).
        """
        W = np.atleast_2d(np.asarray(W, dtype=np.float64))
        m = W.shape[0]
        if m * self.n_features * 8 <= DENSE_COEF_BYTES:
            out = np.zeros((m, self.n_features))
            out[:, self.columns] = W
            return out
        r, c = np.nonzero(W)
        return sp.csr_matrix((W[r, c], (r, self.columns[c])), shape=(m, self.n_features))


#: pairs recomputed coordinate by coordinate per vectorized step (bounds the memory)
_RISKY_CHUNK = 4096


def rbf(A, B, gamma, shift=None) -> np.ndarray:
    """exp(−γ‖a − b‖²) computed without cancellation, ndarray of shape (n_a, n_b).

    The squared distances come from scikit-learn's BLAS formula ‖a‖² + ‖b‖² − 2aᵀb on
    the shifted data; where that formula has lost its precision (‖a − b‖² below 1e-6 of
    ‖a‖² + ‖b‖², e.g. duplicated points, which must give exactly 1) they are
    recomputed as Σ(aᵢ − bᵢ)².

    Parameters
    ----------
    A : {ndarray, sparse matrix} of shape (n_a, n_features)
    B : {ndarray, sparse matrix} of shape (n_b, n_features)
    gamma : float
    shift : ndarray of shape (n_features,), optional
        Subtracted from A and B first (dense data only).
    """
    A = canonical(A) if sp.issparse(A) else np.asarray(A, dtype=float)
    B = canonical(B) if sp.issparse(B) else np.asarray(B, dtype=float)
    if shift is not None and not sp.issparse(A) and not sp.issparse(B):
        A, B = A - shift, B - shift
    d2 = pairwise.euclidean_distances(A, B, squared=True)
    i, j = np.nonzero(d2 <= 1e-6 * (row_sq_norms(A)[:, None] + row_sq_norms(B)[None, :]))
    for s in range(0, i.size, _RISKY_CHUNK):
        ii, jj = i[s:s + _RISKY_CHUNK], j[s:s + _RISKY_CHUNK]
        diff = A[ii] - B[jj]
        d2[ii, jj] = row_sq_norms(sp.csr_matrix(diff) if sp.issparse(diff) else np.asarray(diff))
    return np.exp(-gamma * d2)


@dataclass(frozen=True)
class Kernel:
    """A kernel k(x, z) with its hyperparameters resolved.

    Parameters
    ----------
    name : {"linear", "poly", "rbf", "sigmoid", "precomputed", "callable"}
        Kernel family.  ``linear``: xᵀz; ``poly``: (γxᵀz + coef0)^degree;
        ``rbf``: exp(−γ‖x − z‖²); ``sigmoid``: tanh(γxᵀz + coef0).
    gamma : float or None
        Resolved coefficient γ (None for linear, precomputed and callables).
    degree : int
        Degree of the polynomial kernel.
    coef0 : float
        Independent term of the polynomial and sigmoid kernels.
    func : callable or None
        For ``name="callable"``: ``func(A, B)`` returning an array of shape (n_a, n_b)
        (a sparse matrix is made dense).
    shift : ndarray of shape (n_features,) or None
        RBF only: a point subtracted from both arguments before the distances are
        formed (the kernel is translation invariant; centring the data removes the
        cancellation in ‖x‖² + ‖z‖² − 2xᵀz for data far from the origin).

    Notes
    -----
    For ``precomputed`` the "data" is the kernel matrix itself: at training time
    an ndarray of shape (n_samples, n_samples), at prediction time the matrix
    K(X_test, X_train) of shape (n_test, n_samples).
    """

    name: str
    gamma: float | None = None
    degree: int = 3
    coef0: float = 0.0
    func: Callable | None = None
    shift: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def is_linear(self) -> bool:
        """True for the linear kernel, where w is explicit."""
        return self.name == "linear"

    def __call__(self, A, B) -> np.ndarray:
        """Kernel matrix K(A, B) as a dense ndarray of shape (n_a, n_b).

        A callable receives A and B as they are, as scikit-learn passes them (a LIL
        matrix, a list of strings: whatever its function takes); a sparse matrix it
        returns is made dense.
        """
        if self.name == "callable":
            K = _callable_values(self.func, A, B)
            expected = (_num_samples(A), _num_samples(B))
            if K.shape != expected:
                raise ValueError(
                    f"the kernel callable returned shape {K.shape}, expected "
                    f"{expected}: it must map (A, B) to K(A, B).")
            return self._finite(K)
        A, B = canonical(A), canonical(B)
        if self.name == "linear":
            K = pairwise.linear_kernel(A, B)
        elif self.name == "rbf":
            K = rbf(A, B, self.gamma, self.shift)
        elif self.name == "poly":
            K = pairwise.polynomial_kernel(A, B, degree=self.degree, gamma=self.gamma,
                                           coef0=self.coef0)
        elif self.name == "sigmoid":
            K = pairwise.sigmoid_kernel(A, B, gamma=self.gamma, coef0=self.coef0)
        else:
            raise ValueError("a precomputed kernel has no function; index the matrix instead.")
        return self._finite(np.asarray(K, dtype=float))

    def _finite(self, K) -> np.ndarray:
        """K itself, or a ValueError where it holds NaN or infinity."""
        if not np.all(np.isfinite(K)):
            raise ValueError(
                f"the {self.describe()} kernel gave NaN or infinite values on this data "
                "(overflow, or a callable that returns NaN): scale the features (e.g. "
                "sklearn.preprocessing.StandardScaler), lower gamma/degree, or fix the callable.")
        return K

    def gram(self, X) -> np.ndarray:
        """Training Gram matrix K(X, X) of shape (n_samples, n_samples)."""
        if self.name == "precomputed":
            return np.asarray(X, dtype=float)
        return self(X, X)

    def rows(self, X, idx) -> np.ndarray:
        """Rows ``K[idx, :]`` of the training Gram matrix, shape (len(idx), n_samples)."""
        if self.name == "precomputed":
            return np.asarray(X[idx], dtype=float)
        return self(X[idx], X)

    def cross(self, X_new, X_train) -> np.ndarray:
        """K(X_new, X_train) of shape (n_new, n_train); for precomputed, X_new itself."""
        if self.name == "precomputed":
            return np.asarray(X_new, dtype=float)
        return self(X_new, X_train)

    def diag(self, X) -> np.ndarray:
        """Diagonal k(xᵢ, xᵢ) of the Gram matrix, shape (n_samples,), without forming it."""
        X = canonical(X)
        if self.name == "precomputed":
            return np.asarray(np.diag(X), dtype=float).copy()
        if self.name == "rbf":
            return np.ones(X.shape[0])
        if self.name == "callable":
            return np.array([_callable_values(self.func, X[i:i + 1], X[i:i + 1])[0, 0]
                             for i in range(X.shape[0])], dtype=float)
        sq = row_sq_norms(X)
        if self.name == "linear":
            return sq
        if self.name == "poly":
            return (self.gamma * sq + self.coef0) ** self.degree
        return np.tanh(self.gamma * sq + self.coef0)

    def describe(self) -> str:
        """Short human-readable description, e.g. ``rbf(gamma=0.0333)``."""
        if self.name == "rbf":
            return f"rbf(gamma={self.gamma:.4g})"
        if self.name == "poly":
            return f"poly(degree={self.degree}, gamma={self.gamma:.4g}, coef0={self.coef0:g})"
        if self.name == "sigmoid":
            return f"sigmoid(gamma={self.gamma:.4g}, coef0={self.coef0:g})"
        return self.name


def make_kernel(kernel="rbf", X=None, *, gamma="scale", degree=3, coef0=0.0) -> Kernel:
    """Build a :class:`Kernel` from a scikit-learn style specification.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, callable or Kernel
        The kernel.  A callable is called as ``kernel(A, B)`` and must return the
        matrix K(A, B) of shape (n_a, n_b).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features), optional
        Training data, needed to resolve ``gamma="scale"``.
    gamma : {"scale", "auto"} or float, default="scale"
        See :func:`resolve_gamma`.  Ignored by linear, precomputed and callables.
    degree : int, default=3
        Polynomial degree (≥ 1).
    coef0 : float, default=0.0
        Independent term of ``poly`` and ``sigmoid``.

    Returns
    -------
    kernel : Kernel

    Raises
    ------
    ValueError
        Unknown kernel name, gamma ≤ 0, or degree < 1.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return Kernel("callable", func=kernel)
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}.")
    if kernel in ("linear", "precomputed"):
        return Kernel(kernel)
    if kernel == "poly" and (int(degree) != degree or degree < 1):
        raise ValueError(f"degree must be an integer ≥ 1, got {degree!r}.")
    if isinstance(coef0, bool) or not isinstance(coef0, (int, float, np.number)) \
            or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite number, got {coef0!r}.")
    g = resolve_gamma(gamma, X) if X is not None else resolve_gamma(
        gamma if not isinstance(gamma, str) else 1.0, np.zeros((1, 1)))
    return Kernel(kernel, gamma=g, degree=int(degree), coef0=float(coef0))


def n_polynomial_features(n_features: int, degree: int, coef0: float) -> int:
    """Number of columns of :func:`polynomial_features`: the monomials of degree ≤
    ``degree`` in ``n_features`` variables (exactly ``degree`` when coef0 = 0)."""
    from math import comb

    if coef0 == 0:
        return comb(n_features + degree - 1, degree)
    return comb(n_features + degree, degree)


def polynomial_features(X, gamma: float, coef0: float, degree: int) -> np.ndarray:
    """The explicit feature map of the polynomial kernel: Φ with ΦΦᵀ = (γXXᵀ + c₀)^p.

    By the multinomial theorem (γxᵀz + c₀)^p is the sum over multi-indices k of total
    degree t = Σⱼ kⱼ ≤ p of p! / ((p − t)! k!) c₀^(p−t) γ^t x^k z^k (k! = Πⱼ kⱼ!), so
    φ_k(x) is the monomial x^k (scikit-learn's ``PolynomialFeatures``) times the
    square root of that coefficient.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    gamma : float
        > 0.
    coef0 : float
        ≥ 0 (a negative coef0 has no real feature map).
    degree : int
        ≥ 1.

    Returns
    -------
    Phi : ndarray of shape (n_samples, :func:`n_polynomial_features`)

    Raises
    ------
    ValueError
        coef0 < 0, gamma ≤ 0 or a degree that is not an integer ≥ 1.

    References
    ----------
    B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press, 2002, §2.1
    (the feature space of the polynomial kernel).
    """
    from math import factorial

    from sklearn.preprocessing import PolynomialFeatures

    if coef0 < 0 or gamma <= 0 or int(degree) != degree or degree < 1:
        raise ValueError("the polynomial kernel has a real feature map for gamma > 0, "
                         f"coef0 ≥ 0 and an integer degree ≥ 1; got gamma={gamma!r}, "
                         f"coef0={coef0!r}, degree={degree!r}.")
    X = np.asarray(X, dtype=float)
    poly = PolynomialFeatures(int(degree), include_bias=True).fit(X[:1])
    powers = poly.powers_
    total = powers.sum(axis=1)
    keep = total == degree if coef0 == 0 else np.ones(total.size, dtype=bool)
    powers, total = powers[keep], total[keep]
    multinomial = np.array([factorial(degree) / (factorial(degree - t)
                                                 * np.prod([factorial(k) for k in row]))
                            for row, t in zip(powers, total, strict=True)])
    scale = np.sqrt(multinomial * gamma ** total * float(coef0) ** (degree - total))
    return poly.transform(X)[:, keep] * scale


def _callable_values(func, A, B) -> np.ndarray:
    """``func(A, B)`` as a float ndarray (a sparse matrix made dense), or a ValueError
    saying what it returned.

    Raises
    ------
    ValueError
        Values that are not real numbers (strings, objects, complex numbers).
    """
    K = func(A, B)
    if sp.issparse(K):      # e.g. safe_sparse_dot on sparse data: made dense, as scikit-learn
        K = K.toarray()
    K = np.asarray(K)
    if K.dtype.kind not in "biuf":
        raise ValueError(f"the kernel callable returned values of dtype {K.dtype} (e.g. "
                         f"{K.ravel()[:1].tolist()}); it must return real numbers: a float "
                         "ndarray of shape (len(A), len(B)).")
    return K.astype(float, copy=False)
