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
from sklearn.svm import SVR as SkSVR
from sklearn.svm import LinearSVC as SkLinearSVC
from sklearn.svm import LinearSVR as SkLinearSVR

from margin_opt import SVC, SVR
from margin_opt.estimators.linear import LinearSVC, LinearSVR
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
    SVC(kernel=kernel).fit(COMPRESSED, y)           # first-use costs outside the timing
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
        assert sp.issparse(sparse.dual_coef_)              # CSR, as scikit-learn's
        expected = K(Q, sv) @ sparse.dual_coef_.toarray()[0] + sparse.intercept_[0]
        for queries in (sp.csr_matrix(Q), Q):
            np.testing.assert_allclose(sparse.decision_function(queries), expected,
                                       rtol=0, atol=1e-12)
        # and the same problem as the fit on dense data (no map), to the solver's tol
        dense = SVC(kernel=kernel, gamma=0.3, C=2.0).fit(X, y)
        np.testing.assert_allclose(sparse.decision_function(Q), dense.decision_function(Q),
                                   atol=1e-5)
        if kernel == "linear":                  # CSR after sparse X, as scikit-learn's
            assert sp.issparse(sparse.coef_) and sparse.coef_.shape == (1, d)
            w = sparse.coef_.toarray()
            np.testing.assert_allclose(w, dense.coef_, atol=1e-5)
            np.testing.assert_allclose(w[0], sparse.dual_coef_.toarray()[0] @ sv, atol=1e-12)


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
    assert sp.issparse(clf.coef_)
    np.testing.assert_allclose(clf.coef_.toarray()[:, used], ref.coef_, atol=1e-7)


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


# ---------------------------------------------------------------- SVR, LinearSVC, LinearSVR
def _wide_regression_file(tmp_path):
    """Ten lines of real targets on the columns 1, 2, 3 and 2·10⁹ (one-based) of an
    svmlight file; also the same entries on four columns (the reference's data)."""
    rng = np.random.default_rng(3)
    V = np.round(rng.standard_normal((10, 4)), 3)
    t = np.round(V @ [1.5, -2.0, 0.5, 1.0] + 0.2 * rng.standard_normal(10), 3)
    cols = (1, 2, 3, WIDE)
    path = tmp_path / "wide_regression.svm"
    path.write_text("".join(
        f"{float(ti)!r} " + " ".join(f"{c}:{float(v)!r}" for c, v in zip(cols, row, strict=True)
                                     if v != 0) + "\n"
        for ti, row in zip(t, V, strict=True)))
    X, y = load_svmlight_file(str(path))
    assert X.shape == (10, WIDE)
    np.testing.assert_array_equal(y, t)
    return X, y, V


def _fit_predict_peak(make, X, y, narrow):
    """(fitted estimator, its predictions on X, the peak traced memory of fit + predict),
    the code loaded first by a fit on the narrow copy."""
    make().fit(narrow, y)
    tracemalloc.start()
    est = make().fit(X, y)
    pred = est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return est, pred, peak


def _wide_weights(coef):
    """A CSR coef_ of shape (m, WIDE) read at the columns 0, 1, 2, WIDE − 1 (scipy's column
    indexing would take memory O(WIDE))."""
    w = coef.tocoo()
    assert set(w.col) <= {0, 1, 2, WIDE - 1}
    out = np.zeros((coef.shape[0], 4))
    out[w.row, np.searchsorted([0, 1, 2, WIDE - 1], w.col)] = w.data
    return out


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_svr_on_file_with_feature_index_2e9(tmp_path, kernel):
    X, y, V = _wide_regression_file(tmp_path)
    narrow = sp.csr_matrix(V)                   # the same entries on columns 0..3: no map
    reg, pred, peak = _fit_predict_peak(lambda: SVR(kernel=kernel, tol=1e-9), X, y, narrow)
    assert peak < 50e6, peak                    # 640 MB at n_features = 2·10⁷ before
    assert reg._columns is not None and reg.certificate_.ok and reg.n_features_in_ == WIDE
    assert sp.issparse(reg.support_vectors_)
    assert reg.support_vectors_.shape == (reg.support_.size, WIDE)
    # scikit-learn's SVR (LIBSVM, sparse) on the very same data
    sk = SkSVR(kernel=kernel, tol=1e-10).fit(_int32(X), y)
    np.testing.assert_allclose(pred, sk.predict(_int32(X)), rtol=1e-6)
    # our fit on the four columns, with the gamma of the user's data (scikit-learn's)
    ref = SVR(kernel=kernel, gamma=sk._gamma, tol=1e-9).fit(narrow, y)
    assert ref._columns is None
    np.testing.assert_allclose(pred, ref.predict(narrow), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(reg.support_, ref.support_)
    assert sp.issparse(reg.dual_coef_) and sp.issparse(ref.dual_coef_)   # sparse X: CSR
    np.testing.assert_allclose(reg.dual_coef_.toarray(), ref.dual_coef_.toarray(), rtol=1e-12,
                               atol=1e-12)
    if kernel == "linear":      # w in the user's columns: CSR, as scikit-learn's
        assert sp.issparse(reg.coef_) and reg.coef_.shape == (1, WIDE)
        np.testing.assert_allclose(_wide_weights(reg.coef_), ref.coef_.toarray(), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("intercept_scaling", [None, 1.0])
def test_linear_svr_on_file_with_feature_index_2e9(tmp_path, intercept_scaling):
    X, y, V = _wide_regression_file(tmp_path)
    narrow = sp.csr_matrix(V)
    reg, pred, peak = _fit_predict_peak(
        lambda: LinearSVR(tol=1e-10, intercept_scaling=intercept_scaling), X, y, narrow)
    assert peak < 50e6, peak                    # 960 MB at n_features = 2·10⁷ before
    assert reg._columns is not None and reg.certificate_.ok and reg.n_features_in_ == WIDE
    assert sp.issparse(reg.coef_) and reg.coef_.shape == (1, WIDE)
    ref = LinearSVR(tol=1e-10, intercept_scaling=intercept_scaling).fit(narrow, y)
    assert ref._columns is None
    np.testing.assert_allclose(pred, ref.predict(narrow), rtol=1e-6)
    np.testing.assert_allclose(_wide_weights(reg.coef_)[0], ref.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(reg.intercept_, ref.intercept_, rtol=1e-6)
    if intercept_scaling is not None:
        # scikit-learn's (liblinear's) problem; liblinear keeps a dense w of n_features
        # doubles (16 GB here), so it is run on the four non-empty columns, where it is
        # the same problem (a column without an entry has weight 0)
        sk = SkLinearSVR(tol=1e-10, intercept_scaling=intercept_scaling, dual=True,
                         max_iter=1_000_000).fit(V, y)
        np.testing.assert_allclose(pred, sk.predict(V), rtol=1e-6)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("intercept_scaling", [None, 1.0])
def test_linear_svc_on_two_line_file(tmp_path, loss, intercept_scaling):
    X, y = _wide_file(tmp_path)
    narrow = sp.csr_matrix(COMPRESSED)
    clf, dec, peak = _fit_predict_peak(
        lambda: LinearSVC(loss=loss, tol=1e-10, intercept_scaling=intercept_scaling), X, y,
        narrow)
    assert peak < 50e6, peak                    # 960 MB at n_features = 2·10⁷ before
    assert clf._columns is not None and clf.certificate_.ok and clf.n_features_in_ == WIDE
    np.testing.assert_array_equal(clf.predict(X), y)
    assert sp.issparse(clf.coef_) and clf.coef_.shape == (1, WIDE)
    # our fit without the map: the same entries on three columns (the intercept is ours,
    # free or liblinear's regularized bias column, so the reference is margin_opt's)
    ref = LinearSVC(loss=loss, tol=1e-10, intercept_scaling=intercept_scaling).fit(narrow, y)
    assert ref._columns is None
    np.testing.assert_allclose(dec, ref.decision_function(narrow), rtol=1e-6)
    w = clf.coef_.tocoo()
    assert set(w.col) <= {0, 2, WIDE - 1}
    full = dict(zip(w.col.tolist(), w.data, strict=True))
    np.testing.assert_allclose([full.get(j, 0.0) for j in (0, 2, WIDE - 1)], ref.coef_[0],
                               rtol=1e-6, atol=1e-9)
    if loss == "squared_hinge" and intercept_scaling is not None:
        # liblinear's problem, on the non-empty columns (its dense w would take 16 GB);
        # its hinge (L1-loss) solver stops short on this two-point problem (its answer
        # moves with max_iter), so only the squared hinge is compared
        sk = SkLinearSVC(tol=1e-10, intercept_scaling=intercept_scaling, dual=True,
                         max_iter=1_000_000).fit(COMPRESSED, y)
        np.testing.assert_allclose(dec, sk.decision_function(COMPRESSED), rtol=1e-6)


def _few_columns(n, d, seed):
    """Sparse (n, d) data with entries in a handful of columns, and those columns."""
    rng = np.random.default_rng(seed)
    cols = np.array([4, 17, 900, 31_000, d - 1])
    V = rng.standard_normal((n, cols.size))
    V[rng.random(V.shape) < 0.2] = 0.0
    X = sp.csr_matrix((V.ravel(), (np.repeat(np.arange(n), cols.size), np.tile(cols, n))),
                      shape=(n, d))
    X.eliminate_zeros()
    return X, V, cols


@pytest.mark.parametrize("multi_class", ["ovr", "crammer_singer"])
def test_linear_svc_dense_coef_where_it_fits(multi_class):
    """d = 10⁵: posed on five columns, coef_ dense in the user's columns (zero off them),
    the answer of the fit without the map; queries' entries in unseen columns ignored."""
    d = 100_000
    X, V, cols = _few_columns(60, d, 5)
    y = np.argmax(V[:, :3] + 0.3 * np.random.default_rng(6).standard_normal((60, 3)), axis=1)
    clf = LinearSVC(tol=1e-9, multi_class=multi_class).fit(X, y)
    assert clf._columns is not None
    assert isinstance(clf.coef_, np.ndarray) and clf.coef_.shape == (3, d)
    ref = LinearSVC(tol=1e-9, multi_class=multi_class).fit(sp.csr_matrix(V), y)
    np.testing.assert_allclose(clf.coef_[:, cols], ref.coef_, rtol=1e-6, atol=1e-9)
    assert not np.any(np.delete(clf.coef_, cols, axis=1))
    np.testing.assert_allclose(clf.intercept_, ref.intercept_, rtol=1e-6, atol=1e-9)
    Q = X[:7].toarray()
    Q[:, [0, 50_000]] = 3.0                                 # never seen in training
    for queries in (Q, sp.csr_matrix(Q)):
        np.testing.assert_allclose(clf.decision_function(queries),
                                   Q @ clf.coef_.T + clf.intercept_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(sp.csr_matrix(V)))


def test_linear_svr_dense_coef_where_it_fits_and_refit():
    d = 100_000
    X, V, cols = _few_columns(40, d, 7)
    y = V @ [1.0, -1.0, 2.0, 0.5, 0.0] + 0.1 * np.random.default_rng(8).standard_normal(40)
    reg = LinearSVR(tol=1e-9).fit(X, y)
    assert reg._columns is not None
    assert isinstance(reg.coef_, np.ndarray) and reg.coef_.shape == (d,)
    ref = LinearSVR(tol=1e-9).fit(sp.csr_matrix(V), y)
    np.testing.assert_allclose(reg.coef_[cols], ref.coef_, rtol=1e-6, atol=1e-9)
    Q = X[:5].toarray()
    Q[:, 1] = 2.0                                           # never seen in training
    np.testing.assert_allclose(reg.predict(Q), Q @ reg.coef_ + reg.intercept_[0],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(reg.predict(X), ref.predict(sp.csr_matrix(V)), rtol=1e-6)
    reg.fit(sp.csr_matrix(V), y)                             # a refit without the map
    assert reg._columns is None and reg.coef_.shape == (cols.size,)
    np.testing.assert_allclose(reg.predict(V), ref.predict(V), rtol=1e-12)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_svr_queries_with_features_unseen_in_training(kernel):
    """SVR's model evaluated on the user's d columns by scikit-learn's kernels: a query's
    entries in columns empty in training count in its norm (RBF) and nowhere else."""
    d = 100_000
    X, V, cols = _few_columns(30, d, 9)
    y = V @ [1.0, 0.5, -1.0, 0.0, 2.0]
    K = {"rbf": lambda A, B: rbf_kernel(A, B, gamma=0.3), "linear": linear_kernel,
         "poly": lambda A, B: polynomial_kernel(A, B, degree=3, gamma=0.3, coef0=1.0)}[kernel]
    reg = SVR(kernel=kernel, gamma=0.3, coef0=1.0, C=2.0).fit(X, y)
    assert reg._columns is not None
    sv = reg.support_vectors_.toarray()
    assert sv.shape == (reg.support_.size, d)
    Q = X[:6].toarray()
    Q[:, [7, 99_998]] = np.random.default_rng(10).standard_normal((6, 2))
    expected = K(Q, sv) @ reg.dual_coef_.toarray()[0] + reg.intercept_[0]
    for queries in (sp.csr_matrix(Q), Q):
        np.testing.assert_allclose(reg.predict(queries), expected, rtol=1e-10, atol=1e-10)
    ref = SVR(kernel=kernel, gamma=0.3, coef0=1.0, C=2.0).fit(sp.csr_matrix(V), y)
    np.testing.assert_allclose(reg.predict(X), ref.predict(sp.csr_matrix(V)), rtol=1e-9,
                               atol=1e-9)
    if kernel == "linear":                  # CSR after sparse X, as scikit-learn's
        assert sp.issparse(reg.coef_) and reg.coef_.shape == (1, d)
        np.testing.assert_allclose(reg.coef_.toarray()[0, cols], ref.coef_.toarray()[0],
                                   rtol=1e-9, atol=1e-9)
