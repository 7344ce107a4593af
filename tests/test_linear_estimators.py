"""LinearSVC / LinearSVR: scikit-learn's checks, liblinear's answers where the problem is
liblinear's (intercept_scaling), the free intercept against cvxpy, bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.svm import LinearSVC as SkLinearSVC
from sklearn.svm import LinearSVR as SkLinearSVR
from sklearn.utils.estimator_checks import parametrize_with_checks

from margin_opt.estimators.linear import LinearSVC, LinearSVR
from margin_opt.problems.squared import SquaredHingeProblem

#: scikit-learn's PER_ESTIMATOR_XFAIL_CHECKS for LinearSVC / LinearSVR (version 1.9),
#: reason verbatim
SKLEARN_XFAIL = {
    "check_sample_weight_equivalence_on_dense_data":
        "sample_weight is not equivalent to removing/repeating samples.",
    "check_sample_weight_equivalence_on_sparse_data":
        "sample_weight is not equivalent to removing/repeating samples.",
}


@parametrize_with_checks([LinearSVC(), LinearSVR(), LinearSVC(loss="hinge")],
                         expected_failed_checks=lambda est: SKLEARN_XFAIL)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        check(estimator)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_intercept_scaling_is_liblinears_problem(loss):
    X, y = make_classification(300, 6, n_classes=3, n_informative=4, random_state=0)
    ours = LinearSVC(loss=loss, intercept_scaling=1.0).fit(X, y)
    ref = SkLinearSVC(loss=loss, intercept_scaling=1.0, tol=1e-10, max_iter=200000).fit(X, y)
    assert ours.certificate_.ok
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
def test_svr_intercept_scaling_is_liblinears_problem(loss):
    X, y = make_regression(200, 5, noise=3, random_state=0)
    ours = LinearSVR(loss=loss, epsilon=1.0, intercept_scaling=1.0).fit(X, y)
    ref = SkLinearSVR(loss=loss, epsilon=1.0, intercept_scaling=1.0, tol=1e-10,
                      max_iter=1000000).fit(X, y)
    assert ours.certificate_.ok
    np.testing.assert_allclose(ours.coef_, ref.coef_.ravel(), atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)


def test_free_intercept_is_the_lectures_problem():
    """The default (free b) is the cvxpy optimum of ½‖w‖² + C Σ ξ², and differs from
    liblinear's regularized bias."""
    X, y = make_classification(120, 4, random_state=3)
    X[:, 0] += 5.0                               # an offset makes the two differ
    ours = LinearSVC(C=1.0).fit(X, y)
    ref = SquaredHingeProblem(X, y, C=1.0).solve("cvxpy-primal", certify=False)
    np.testing.assert_allclose(ours.coef_.ravel(), ref.w, atol=1e-4)
    assert abs(ours.intercept_[0] - ref.b) < 1e-4
    lib = LinearSVC(C=1.0, intercept_scaling=1.0).fit(X, y)
    assert abs(lib.intercept_[0] - ours.intercept_[0]) > 1e-3


def test_bad_input():
    X, y = make_classification(50, 4, random_state=0)
    with pytest.raises(ValueError, match="2 classes"):
        LinearSVC().fit(X, np.zeros(50))
    Xs = sp.csr_matrix(X)
    Xs.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):      # scikit-learn's check, sparse too
        LinearSVC().fit(Xs, y)
    Xs.data[3] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        LinearSVR().fit(Xs, X[:, 0])
    with pytest.raises(ValueError, match="constant"):
        LinearSVR().fit(X, np.ones(50))
    with pytest.raises(ValueError, match=r"penalty='l2'.*LinearSVC\(penalty='l1'"):
        LinearSVC(penalty="l1").fit(X, y)              # scikit-learn's name, refused clearly
    np.testing.assert_array_equal(LinearSVC(penalty="l2").fit(X, y).coef_,
                                  LinearSVC().fit(X, y).coef_)
    Xz = np.hstack([X, np.zeros((50, 2))])
    Xz[:3] = 0.0                                          # empty rows, zero columns
    m = LinearSVC().fit(sp.csr_matrix(Xz), y)
    assert m.certificate_.ok and np.all(m.coef_[:, -2:] == 0)


def test_crammer_singer_routes_to_the_cs_problem():
    from sklearn.datasets import load_iris

    from margin_opt.problems.multiclass import MulticlassSVMProblem

    X, y = load_iris(return_X_y=True)
    X, y = X[::3], y[::3]
    ours = LinearSVC(multi_class="crammer_singer", C=0.5).fit(X, y)
    ref = MulticlassSVMProblem(X, y, C=0.5, kernel="linear").solve("cvxpy-primal",
                                                                    certify=False)
    assert ours.certificate_.ok and ours.coef_.shape == (3, 4)
    scores = ours.decision_function(X)
    np.testing.assert_allclose(scores, X @ np.asarray(ref.variables.w) + ref.intercept,
                               atol=1e-4)


def test_svc_linear_routed_to_dcd_takes_libsvm_parameters():
    """SVC(kernel="linear") from LINEAR_MIN_SAMPLES on goes to dcd, which has no row cache:
    scikit-learn's cache_size/shrinking must not reach it as unknown options (they did
    once: TypeError), and the answer is the SMO problem's optimum."""
    from sklearn.datasets import make_classification

    from margin_opt import SVC
    from margin_opt.methods import LINEAR_MIN_SAMPLES

    X, y = make_classification(LINEAR_MIN_SAMPLES, 5, random_state=0)
    ours = SVC(kernel="linear", C=0.1, cache_size=50, shrinking=False).fit(X, y)
    ref = SVC(kernel="linear", C=0.1, solver="smo").fit(X, y)
    assert ours.certificate_.ok and ref.certificate_.ok
    np.testing.assert_allclose(ours.solution_.dual_objective, ref.solution_.dual_objective,
                               rtol=1e-6)
