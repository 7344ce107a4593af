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
