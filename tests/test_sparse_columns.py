"""Sparse data with far fewer non-empty columns than features (issue 45, finding 3): the
fit is posed on the columns that hold an entry (kernels.ColumnMap), so memory follows
the data, not the feature count, and every answer is the one on the user's columns
(scikit-learn's SVC on the same data, and our fit on the compressed columns)."""

import time
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC as SkSVC

from margin_opt import SVC
from margin_opt.kernels import ColumnMap

#: the largest feature index of the two-line file (2·10⁹ columns, 4 entries)
WIDE = 2_000_000_000


def _wide_file(tmp_path):
    path = tmp_path / "wide.svm"
    path.write_text(f"1 1:1 {WIDE}:1\n-1 3:1 {WIDE}:2\n")
    X, y = load_svmlight_file(str(path))
    assert X.shape == (2, WIDE)             # one-based: the entries sit in columns 0, 2, d − 1
    return X, y


def _int32(X):
    """X with 32-bit indices (scikit-learn's SVC refuses 64-bit ones)."""
    return sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                         shape=X.shape)


#: the same data on its three non-empty columns (0, 2, d − 1), dense
COMPRESSED = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 2.0]])


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_two_line_file_with_feature_index_2e9(tmp_path, kernel):
    X, y = _wide_file(tmp_path)
    SVC(kernel=kernel).fit(COMPRESSED, y)           # numba's code loaded outside the timing
    tracemalloc.start()
    t0 = time.perf_counter()
    clf = SVC(kernel=kernel).fit(X, y)
    dec, pred = clf.decision_function(X), clf.predict(X)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50e6 and elapsed < 2.0, (peak, elapsed)   # was 19.6 GB
    assert clf.certificate_.ok and clf.n_features_in_ == WIDE
    assert clf.support_vectors_.shape == (2, WIDE) and sp.issparse(clf.support_vectors_)
    # scikit-learn's SVC (LIBSVM) on the very same data
    sk = SkSVC(kernel=kernel).fit(_int32(X), y)
    np.testing.assert_allclose(dec, sk.decision_function(_int32(X)), atol=1e-6)
    np.testing.assert_array_equal(pred, sk.predict(_int32(X)))
    # our fit on the compressed columns, with the gamma of the user's data (scikit-learn's)
    ref = SVC(kernel=kernel, gamma=sk._gamma).fit(COMPRESSED, y)
    np.testing.assert_allclose(dec, ref.decision_function(COMPRESSED), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(pred, ref.predict(COMPRESSED))
    if kernel == "linear":      # w in the user's columns: sparse where a dense one would not fit
        assert sp.issparse(clf.coef_) and clf.coef_.shape == (1, WIDE)
        w = clf.coef_.tocoo()                   # (scipy's column indexing would take d)
        assert set(w.col) <= {0, 2, WIDE - 1}
        full = dict(zip(w.col.tolist(), w.data, strict=True))
        np.testing.assert_allclose([full.get(j, 0.0) for j in (0, 2, WIDE - 1)], ref.coef_[0],
                                   atol=1e-12)


def test_queries_with_features_unseen_in_training():
    """A query's entries in columns empty in training count in its norm (RBF) and in
    nothing else: the values of the fit on the user's columns."""
    d = 100_000
    rng = np.random.default_rng(0)
    cols = np.array([3, 10, 500, 70_000])
    X = np.zeros((30, d))
    X[:, cols] = rng.standard_normal((30, cols.size))
    y = np.where(X[:, 3] + 0.3 * rng.standard_normal(30) > 0, "a", "b")
    Q = np.zeros((5, d))
    Q[:, cols] = rng.standard_normal((5, cols.size))
    Q[:, [7, 99_999]] = rng.standard_normal((5, 2))         # never seen in training
    kernels = {"rbf": lambda A, B: rbf_kernel(A, B, gamma=0.3), "linear": linear_kernel,
               "poly": lambda A, B: polynomial_kernel(A, B, degree=3, gamma=0.3, coef0=0)}
    for kernel, K in kernels.items():
        sparse = SVC(kernel=kernel, gamma=0.3, C=2.0).fit(sp.csr_matrix(X), y)
        assert sparse._columns is not None                  # posed on 4 columns
        # its model evaluated on the user's d columns by scikit-learn's kernels
        sv = sparse.support_vectors_.toarray()
        assert sv.shape == (sparse.support_.size, d)
        expected = K(Q, sv) @ sparse.dual_coef_[0] + sparse.intercept_[0]
        for queries in (sp.csr_matrix(Q), Q):
            np.testing.assert_allclose(sparse.decision_function(queries), expected,
                                       rtol=0, atol=1e-12)
        # and the same problem as the fit on dense data (no map), to the solver's tol
        dense = SVC(kernel=kernel, gamma=0.3, C=2.0).fit(X, y)
        np.testing.assert_allclose(sparse.decision_function(Q), dense.decision_function(Q),
                                   atol=1e-5)
        if kernel == "linear":                  # dense where it fits, as before
            assert isinstance(sparse.coef_, np.ndarray) and sparse.coef_.shape == (1, d)
            np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-5)
            np.testing.assert_allclose(sparse.coef_[0], sparse.dual_coef_[0] @ sv, atol=1e-12)


def test_multiclass_on_compressed_columns():
    d = 200_000
    rng = np.random.default_rng(1)
    X = sp.random(60, d, density=2e-5, random_state=2, format="csr")
    X = X + sp.csr_matrix((rng.standard_normal(60), (np.arange(60), rng.integers(0, 5, 60))),
                          shape=(60, d))
    y = rng.integers(0, 3, 60)
    clf = SVC(kernel="linear", C=1.0).fit(X, y)
    assert clf._columns is not None and clf.coef_.shape == (3, d)
    used = np.unique(X.indices)
    ref = SVC(kernel="linear", C=1.0, tol=1e-9).fit(X[:, used].toarray(), y)
    clf = SVC(kernel="linear", C=1.0, tol=1e-9).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(
        X[:, used].toarray()), atol=1e-7)
    np.testing.assert_allclose(clf.coef_[:, used], ref.coef_, atol=1e-7)


def test_column_map_round_trip():
    X = sp.csr_matrix(([1.0, 2.0, 3.0], ([0, 1, 1], [5, 5, 90_000])), shape=(2, 100_000))
    cmap = ColumnMap.of(X, "rbf")
    np.testing.assert_array_equal(cmap.columns, [5, 90_000])
    np.testing.assert_array_equal(cmap.compress(X).toarray(), [[1, 0], [2, 3]])
    Q = sp.csr_matrix(([3.0, 4.0, 1.0], ([0, 0, 1], [7, 8, 5])), shape=(2, 100_000))
    np.testing.assert_array_equal(cmap.compress(Q, rest=True).toarray(), [[0, 0, 5], [1, 0, 0]])
    np.testing.assert_array_equal(cmap.expand([[1.0, 2.0]])[0, [5, 90_000]], [1, 2])
    assert ColumnMap.of(X.toarray(), "rbf") is None         # dense: nothing to compress
    assert ColumnMap.of(X, "precomputed") is None
    assert ColumnMap.of(X[:, :1000], "rbf") is None          # few features: left as they are
