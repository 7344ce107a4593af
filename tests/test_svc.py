"""The SVC estimator follows scikit-learn and agrees with scikit-learn's SVC (LIBSVM)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC as SkSVC

from margin_opt import SVC


@pytest.fixture(scope="module")
def data(breast_cancer):
    rng = np.random.default_rng(0)
    idx = rng.permutation(breast_cancer.X.shape[0])
    X, y = breast_cancer.X[idx], np.where(breast_cancer.y[idx] > 0, "benign", "malignant")
    return X[:300], y[:300], X[300:], y[300:]


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_agrees_with_sklearn(data, kernel):
    X, y, Xt, yt = data
    ours = SVC(kernel=kernel, C=1.0).fit(X, y)
    ref = SkSVC(kernel=kernel, C=1.0, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt),
                               atol=1e-4)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    assert ours.certificate_.ok
    assert ours.dual_coef_.shape == (1, ours.support_.size)
    assert ours.support_vectors_.shape == (ours.support_.size, X.shape[1])
    if kernel == "linear":
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    else:
        assert not hasattr(ours, "coef_")


def test_precomputed(data):
    X, y, Xt, _ = data
    K, Kt = rbf_kernel(X, gamma=0.02), rbf_kernel(Xt, X, gamma=0.02)
    ours = SVC(kernel="precomputed").fit(K, y)
    ref = SkSVC(kernel="precomputed", tol=1e-8).fit(K, y)
    np.testing.assert_allclose(ours.decision_function(Kt), ref.decision_function(Kt), atol=1e-4)
    K_before = K.copy()
    ours.predict(Kt)
    np.testing.assert_array_equal(K, K_before)


def test_sklearn_conventions(data):
    X, y, _, _ = data
    est = SVC(C=2.0, kernel="linear")
    assert est.get_params()["C"] == 2.0
    c = clone(est)
    assert c.get_params() == est.get_params()
    assert not hasattr(c, "solution_")
    scores = cross_val_score(SVC(kernel="linear"), X[:150], y[:150], cv=3)
    assert scores.mean() > 0.9
    with pytest.raises(Exception, match="not fitted"):
        SVC().predict(X)
    with pytest.raises(ValueError, match="features"):
        SVC(kernel="linear").fit(X, y).predict(X[:, :5])


def test_hard_margin_estimator(separable):
    X, y = separable
    clf = SVC(C=np.inf, kernel="linear").fit(X, y)
    assert clf.certificate_.ok
    np.testing.assert_allclose(y[clf.support_] * clf.decision_function(X[clf.support_]), 1.0,
                               atol=1e-5)
    ref = SkSVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-4)


@pytest.mark.parametrize("C", [100.0, 1000.0])
def test_certificate_ok_at_large_C(data, C):
    from margin_opt import SVMProblem

    X, y, _, _ = data
    clf = SVC(C=C, kernel="rbf").fit(X, y)
    assert clf.certificate_.ok, clf.certificate_.failed()
    exact = SVMProblem(X, y, C=C, kernel="rbf").solve("cvxpy-dual")
    assert abs(clf.solution_.dual_objective / exact.dual_objective - 1) < 1e-6


def test_kernel_pegasos_predicts_what_it_found(data):
    X, y, _, _ = data
    clf = SVC(kernel="rbf", solver="pegasos",
              solver_options={"max_iter": 20, "random_state": 0}).fit(X[:200], y[:200])
    np.testing.assert_allclose(clf.decision_function(X[:200]), clf.solution_.decision,
                               atol=1e-8)


# ---------------------------------------------------------------- scikit-learn's interface
# SVC and SVR take scikit-learn's LIBSVM parameters and have its fitted attributes, with
# its dtypes and messages (issue 34, item 2); the reference is sklearn.svm itself.

def _libsvm_pair(kind):
    """(ours, scikit-learn's, X, y) for a binary and a 3-class SVC and an SVR on iris."""
    from sklearn.datasets import load_iris
    from sklearn.svm import SVR as SkSVR

    from margin_opt import SVR

    X, y = load_iris(return_X_y=True)
    if kind == "svr":
        return SVR(), SkSVR(tol=1e-10), X, X[:, 0]
    if kind == "binary":
        X, y = X[y < 2], y[y < 2]
    return SVC(), SkSVC(tol=1e-10), X, y


def _solutions(est):
    return est.solutions_ if hasattr(est, "solutions_") else [est.solution_]


@pytest.mark.filterwarnings("ignore:Attribute `prob:FutureWarning")   # sklearn 1.9's
@pytest.mark.parametrize("kind", ["binary", "multiclass", "svr"])
def test_sklearn_parameters_and_attributes(kind):
    """Every parameter of scikit-learn's estimator is accepted, and every fitted attribute
    it has (properties included: n_support_, probA_, probB_) exists here with its dtype
    and shape; support_, n_support_, fit_status_ and shape_fit_ equal LIBSVM's."""
    ours, ref, X, y = _libsvm_pair(kind)
    assert set(ref.get_params()) <= set(ours.get_params())
    ours.set_params(cache_size=100, max_iter=-1, shrinking=True, verbose=False).fit(X, y)
    ref.fit(X, y)
    names = [n for n in dir(ref) if n.endswith("_") and not n.startswith("_")
             and n != "coef_" and hasattr(ref, n)]
    assert {"fit_status_", "shape_fit_", "n_support_", "support_"} <= set(names)
    for name in names:
        mine, theirs = getattr(ours, name), getattr(ref, name)
        if isinstance(theirs, np.ndarray):
            assert isinstance(mine, np.ndarray), name
            assert mine.dtype == theirs.dtype, (name, mine.dtype, theirs.dtype)
            assert mine.shape == theirs.shape, (name, mine.shape, theirs.shape)
        else:
            assert type(mine) is type(theirs) or name == "n_iter_", name
    for name in ("support_", "n_support_", "probA_", "probB_"):
        if hasattr(ref, name):
            np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name))
    assert ours.fit_status_ == ref.fit_status_ == 0
    assert ours.shape_fit_ == ref.shape_fit_
    assert ours.certificate_.ok


@pytest.mark.parametrize("kind", ["binary", "svr"])
def test_coef_message_on_a_kernel(kind):
    """coef_ on a non-linear kernel: scikit-learn's AttributeError and message, fitted or
    not; set for the linear kernel; a refit with another kernel drops it."""
    ours, ref, X, y = _libsvm_pair(kind)
    with pytest.raises(AttributeError) as theirs:
        _ = ref.fit(X, y).coef_
    with pytest.raises(AttributeError) as mine:
        _ = ours.coef_
    assert str(mine.value) == str(theirs.value) == \
        "coef_ is only available when using a linear kernel"
    with pytest.raises(AttributeError, match="^coef_ is only available"):
        _ = ours.fit(X, y).coef_
    assert not hasattr(ours, "coef_")
    lin = ours.set_params(kernel="linear").fit(X, y)
    np.testing.assert_allclose(lin.coef_, ref.set_params(kernel="linear").fit(X, y).coef_,
                               atol=1e-4)
    with pytest.raises(AttributeError, match="only available when using a linear kernel"):
        _ = lin.set_params(kernel="rbf").fit(X, y).coef_
    with pytest.raises(AttributeError, match="no attribute 'not_there_'"):
        _ = ours.not_there_


@pytest.mark.parametrize("kind", ["binary", "multiclass", "svr"])
def test_max_iter_stops_warns_and_says_not_optimal(kind):
    """max_iter is honoured as by LIBSVM: the run stops there, warns (ConvergenceWarning),
    fit_status_ is 1 as scikit-learn's; the answer is kept, not repaired, and its
    certificate says it is not optimal (the dual objective is short of cvxpy's optimum).
    The default (-1) is certified."""
    from sklearn.exceptions import ConvergenceWarning

    ours, ref, X, y = _libsvm_pair(kind)
    with pytest.warns(ConvergenceWarning):
        ref.set_params(max_iter=3).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        ours.set_params(max_iter=3).fit(X, y)
    assert ours.fit_status_ == ref.fit_status_ == 1
    assert not ours.certificate_.ok
    cert = ours.certificate_
    parts = list(cert.parts.values()) if hasattr(cert, "parts") else [cert]
    assert any("max_iter=3" in note for part in parts for note in part.notes)
    assert np.all(np.asarray(ours.n_iter_) <= 3)
    sols = _solutions(ours)
    assert any(s.status == "max_iter" for s in sols)
    full = clone(ours).set_params(max_iter=-1).fit(X, y)
    assert full.fit_status_ == 0 and full.certificate_.ok
    short = [s.dual_objective for s in sols]
    best = [s.dual_objective for s in _solutions(full)]
    assert all(a < b - 1e-3 * max(1.0, abs(b)) for a, b in zip(short, best, strict=True))


def test_cache_size_and_shrinking_honoured(breast_cancer):
    """cache_size (MB) is SMO's row-cache budget and shrinking its heuristic: a 0.5 MB
    cache holds fewer rows than the 569 of breast cancer, shrinking=False keeps every
    variable active (LIBSVM's meaning); the optimum is the same (LIBSVM's)."""
    from sklearn.preprocessing import StandardScaler

    X = StandardScaler().fit_transform(breast_cancer.X)
    y = breast_cancer.y
    ref = SkSVC(C=100, tol=1e-10).fit(X, y)
    runs = {kw: SVC(C=100, **dict(kw)).fit(X, y) for kw in
            ((), (("cache_size", 0.5),), (("shrinking", False),))}
    caches = {kw: est.solution_.raw.cache for kw, est in runs.items()}
    # every row fits 200 MB: each computed at most once (or twice: on the active set,
    # then whole); 0.5 MB holds 115 rows of 569: none computed fewer times
    assert caches[()]["misses"] <= 2 * 569 and caches[()]["mean_active"] < 569
    assert caches[(("cache_size", 0.5),)]["misses"] >= caches[()]["misses"]
    assert caches[(("shrinking", False),)]["mean_active"] == 569
    for est in runs.values():
        assert est.certificate_.ok
        np.testing.assert_array_equal(est.support_, ref.support_)
        np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X),
                                   atol=1e-4)
        assert est.solution_.dual_objective == pytest.approx(
            runs[()].solution_.dual_objective, rel=1e-6)


@pytest.mark.parametrize("kind", ["binary", "multiclass", "svr"])
def test_verbose_prints_only_when_asked(kind, capfd):
    ours, _, X, y = _libsvm_pair(kind)
    ours.fit(X, y)
    assert capfd.readouterr().out == ""
    ours.set_params(verbose=True).fit(X, y)
    out = capfd.readouterr().out
    n_problems = 3 if kind == "multiclass" else 1
    assert out.count("#iter") >= n_problems and "optimal" in out
    ours.set_params(solver="cvxpy-dual").fit(X, y)
    assert "Clarabel" in capfd.readouterr().out      # the conic solver's own log


@pytest.mark.parametrize("kw", [{"max_iter": 0}, {"max_iter": -2}, {"cache_size": 0},
                                {"shrinking": "yes"}])
def test_libsvm_parameters_validated(kw):
    from sklearn.utils._param_validation import InvalidParameterError

    ours, _, X, y = _libsvm_pair("binary")
    with pytest.raises(InvalidParameterError, match=next(iter(kw))):
        ours.set_params(**kw).fit(X, y)


def _exact_ties():
    """(ours, scikit-learn's, X_train, y, X_test): models whose decision value is exactly
    0 on every test row (symmetric training sets, test points on the boundary)."""
    from sklearn.linear_model import Perceptron as SkPerceptron
    from sklearn.svm import LinearSVC as SkLinearSVC

    from margin_opt import LinearSVC, Perceptron

    y = np.array(["no", "yes"])
    K, K_test = np.eye(2), np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    X, X_test = np.array([[-1.0, 2.0], [1.0, 2.0]]), np.array([[0.0, 0.0], [0.0, 5.0]])
    return {
        "SVC precomputed": (SVC(kernel="precomputed"), SkSVC(kernel="precomputed"), K, y,
                            K_test),
        "SVC linear": (SVC(kernel="linear"), SkSVC(kernel="linear"), X, y, X_test),
        "LinearSVC": (LinearSVC(fit_intercept=False), SkLinearSVC(fit_intercept=False),
                      X[:, :1], y, np.zeros((2, 1))),
        "Perceptron": (Perceptron(), SkPerceptron(fit_intercept=False), X, y, X_test),
    }


@pytest.mark.parametrize("name", ["SVC precomputed", "SVC linear", "LinearSVC", "Perceptron"])
def test_exact_tie_predicts_as_sklearn(name):
    """Issue 45 item 7: at decision_function(x) == 0 exactly, each binary classifier
    predicts the class its scikit-learn counterpart predicts: SVC (LIBSVM's vote)
    classes_[1], LinearSVC and Perceptron (decision > 0) classes_[0]."""
    ours, ref, X, y, X_test = _exact_ties()[name]
    ours.fit(X, y)
    ref.fit(X, y)
    assert np.all(ref.decision_function(X_test) == 0)
    assert np.all(ours.decision_function(X_test) == 0)
    np.testing.assert_array_equal(ours.predict(X_test), ref.predict(X_test))
    expected = "yes" if name.startswith("SVC") else "no"
    assert list(ours.predict(X_test)) == [expected] * len(X_test)


# ---------------------------------------------------------------- sparse input, callables
# scikit-learn's contract on sparse X and on callable kernels (issue 46): fitted on sparse
# X, support_vectors_, dual_coef_ (and a linear kernel's coef_) are CSR matrices, as
# sklearn.svm.SVC's, whose values are the reference; a callable receives X as given.

def _iris(kind):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return (X, (y > 0).astype(int)) if kind == "binary" else (X, y)


@pytest.mark.parametrize("container", ["csr_matrix", "csr_array", "lil_matrix"])
@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_sparse_fit_has_sklearn_sparse_attributes(container, kind):
    import pickle

    import scipy.sparse as sp

    X, y = _iris(kind)
    Xs = getattr(sp, container)(X)
    ours = SVC(gamma=0.5, tol=1e-10).fit(Xs, y)
    ref = SkSVC(gamma=0.5, tol=1e-12).fit(Xs, y)
    assert ours.certificate_.ok
    for name in ("support_vectors_", "dual_coef_"):
        mine, theirs = getattr(ours, name), getattr(ref, name)
        assert type(mine) is type(theirs) is sp.csr_matrix, name    # sparse_interface
        assert mine.shape == theirs.shape, name
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.support_vectors_.toarray(),
                                  ref.support_vectors_.toarray())
    theirs = ref.dual_coef_.toarray()           # unique: the RBF kernel matrix is PD
    np.testing.assert_allclose(ours.dual_coef_.toarray(), theirs, rtol=1e-6,
                               atol=1e-6 * np.abs(theirs).max())
    for Q in (Xs, X):
        np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))
        np.testing.assert_allclose(ours.decision_function(Q), ref.decision_function(Q),
                                   atol=1e-6)
    # the answers of the fit on dense X, whose attributes stay dense
    dense = SVC(gamma=0.5, tol=1e-10).fit(X, y)
    assert isinstance(dense.support_vectors_, np.ndarray)
    assert isinstance(dense.dual_coef_, np.ndarray)
    np.testing.assert_allclose(ours.decision_function(X), dense.decision_function(X),
                               atol=1e-7)
    again = pickle.loads(pickle.dumps(ours))
    assert sp.issparse(again.dual_coef_)
    np.testing.assert_array_equal(again.decision_function(Xs), ours.decision_function(Xs))


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_sparse_linear_coef_is_csr_as_sklearn(kind):
    import scipy.sparse as sp

    X, y = _iris(kind)
    Xs = sp.csr_matrix(X)
    ours = SVC(kernel="linear", tol=1e-10).fit(Xs, y)
    ref = SkSVC(kernel="linear", tol=1e-12).fit(Xs, y)
    assert type(ours.coef_) is type(ref.coef_) is sp.csr_matrix
    assert ours.coef_.shape == ref.coef_.shape
    np.testing.assert_allclose(ours.coef_.toarray(), ref.coef_.toarray(), atol=1e-4)
    for Q in (Xs, X):
        np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))
        np.testing.assert_allclose(ours.decision_function(Q), ref.decision_function(Q),
                                   atol=1e-4)
    assert ours.certificate_.ok


def test_sparse_fit_probabilities_and_sparray_config():
    """predict_proba on a sparse fit is the dense fit's; under scikit-learn's
    set_config(sparse_interface="sparray") the attributes are csr_array, as scikit-learn's."""
    import scipy.sparse as sp
    from sklearn import config_context

    X, y = _iris("multiclass")
    kw = dict(gamma=0.5, tol=1e-10, probability=True, random_state=0)
    sparse = SVC(**kw).fit(sp.csr_matrix(X), y)
    dense = SVC(**kw).fit(X, y)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X),
                               atol=1e-6)
    with config_context(sparse_interface="sparray"):
        ours = SVC(kernel="linear").fit(sp.csr_matrix(X), y)
        ref = SkSVC(kernel="linear").fit(sp.csr_matrix(X), y)
    for name in ("support_vectors_", "dual_coef_", "coef_"):
        assert type(getattr(ours, name)) is type(getattr(ref, name)) is sp.csr_array, name
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def _string_kernel(seen):
    """A kernel on strings (counts of 'A' and 'B'), recording the types it receives."""
    def kernel(A, B):
        seen.append((type(A), type(B)))
        ca = np.array([[a.count("A"), a.count("B")] for a in A], dtype=float)
        cb = np.array([[b.count("A"), b.count("B")] for b in B], dtype=float)
        return ca @ cb.T
    return kernel


def test_callable_kernel_receives_x_as_given():
    """A callable kernel gets X untouched (scikit-learn's test_custom_kernel_not_array_input
    and test_svc_with_custom_kernel): strings in a list, a LIL matrix; its sparse result
    is made dense; the model is the precomputed kernel's and the linear kernel's."""
    import scipy.sparse as sp
    from sklearn.utils.extmath import safe_sparse_dot

    data = ["A A", "A", "B", "B B", "A B", "A A B", "B B B", "A"]
    counts = np.array([[s.count("A"), s.count("B")] for s in data], dtype=float)
    y = np.array([1, 1, 2, 2, 1, 1, 2, 1])
    seen = []
    strings = SVC(kernel=_string_kernel(seen)).fit(data, y)
    assert seen and all(a is list and b is list for a, b in seen)
    assert strings.support_vectors_ == [data[i] for i in strings.support_]
    assert not hasattr(strings, "n_features_in_") and strings.shape_fit_ == (len(data),)
    assert strings.certificate_.ok
    linear = SVC(kernel="linear").fit(counts, y)
    ref = SkSVC(kernel=_string_kernel([])).fit(data, y)
    for other, Q in ((linear, counts), (ref, data)):
        np.testing.assert_allclose(strings.decision_function(data), other.decision_function(Q),
                                   atol=1e-6)
        np.testing.assert_array_equal(strings.predict(data), other.predict(Q))
    types = []

    def sparse_dot(A, B):
        types.append((type(A), type(B)))
        return safe_sparse_dot(A, B.T)          # sparse for sparse A, B

    lil = sp.lil_matrix(counts)
    clf = SVC(kernel=sparse_dot).fit(lil, y)
    assert types and all(a is sp.lil_matrix and b is sp.lil_matrix for a, b in types)
    np.testing.assert_array_equal(clf.predict(lil), linear.predict(counts))
    np.testing.assert_allclose(clf.decision_function(lil), linear.decision_function(counts),
                               atol=1e-6)


def test_scikit_learn_small_rules():
    """A sparse precomputed kernel: scikit-learn's TypeError; predict_proba after
    probability was switched on after a fit without it: its NotFittedError; max_iter
    stopping a one-vs-one fit: one ConvergenceWarning in scikit-learn's words."""
    import warnings

    import scipy.sparse as sp
    from sklearn.exceptions import ConvergenceWarning, NotFittedError

    X, y = _iris("multiclass")
    with pytest.raises(TypeError, match="Sparse precomputed"):
        SVC(kernel="precomputed").fit(sp.csr_matrix(np.eye(4)), [0, 1, 0, 1])
    clf = SVC().fit(X, y)
    assert not hasattr(clf, "predict_proba")
    clf.probability = True
    assert hasattr(clf, "predict_proba")
    with pytest.raises(NotFittedError, match="not available when fitted with probability=False"):
        clf.predict_proba(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SVC(max_iter=2).fit(X, y)
    words = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(words) == 1
    assert words[0].startswith("Solver terminated early (max_iter=2).  Consider "
                               "pre-processing your data with StandardScaler or MinMaxScaler.")
