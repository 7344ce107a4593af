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
    for kw in ({"penalty": "l1", "loss": "hinge"}, {"penalty": "l1", "dual": True},
               {"loss": "hinge", "dual": False}):      # scikit-learn's unsupported sets
        with pytest.raises(ValueError, match="Unsupported set of arguments.*penalty="):
            LinearSVC(**kw).fit(X, y)
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


def _weighted_squared_hinge_case(seed):
    """Cases of a random search (issue 45, item 8) that were refused although a tight
    cvxpy solve certifies them: dcd stopped at max_iter and the cvxpy answers failed
    only the KKT table, which read multipliers of 1e-12–1e-5 as positive."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(30, 400)), int(rng.integers(2, 30))
    C = float(10 ** rng.uniform(-2, 2))
    w = 10 ** rng.uniform(-2, 2, n) if rng.random() < 0.5 else None
    X, y = make_classification(n, d, n_informative=min(d, 2), n_redundant=0,
                               random_state=seed, flip_y=0.1)
    return X * 10 ** rng.uniform(-1, 1), y, C, w


@pytest.mark.parametrize("seed", [8, 78])
def test_solvable_squared_hinge_fits_are_certified_and_a_wrong_answer_is_not(seed):
    X, y, C, w = _weighted_squared_hinge_case(seed)
    problem = SquaredHingeProblem(X, y, C=C, sample_weight=w, kernel="linear")
    sol = problem.solve("cvxpy-dual")
    assert problem.certify(sol, tol=1e-6).ok
    ours = LinearSVC(loss="squared_hinge", C=C).fit(X, y, sample_weight=w)
    assert ours.certificate_.ok
    ref = SkLinearSVC(loss="squared_hinge", C=C, tol=1e-12, max_iter=10**6,
                      intercept_scaling=1e3).fit(X, y, sample_weight=w)
    scale = max(1.0, np.abs(ref.decision_function(X)).max())
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X),
                               atol=1e-3 * scale)
    alpha = np.array(sol.variables.alpha, dtype=float)
    outside = int(np.argmax(y * 2 - 1 == np.sign(ours.decision_function(X))
                            * (np.abs(ours.decision_function(X)) > 1.5)))
    wrong = alpha.copy()
    wrong[outside] += 1.0                        # a multiplier on a point off the margin
    assert not problem.certify(alpha=wrong, b=sol.b, tol=1e-6).ok


@pytest.mark.parametrize("sparse_X", [False, True])
def test_sparsify_and_densify_keep_the_predictions(sparse_X):
    # scikit-learn's SparseCoefMixin contract (test_sparse.py: sparsify, then the same
    # predictions): coef_ as CSR and back, the same decision values to the last bit
    import scipy.sparse as sp
    from sklearn.datasets import load_iris, make_regression

    from margin_opt import LinearSVC, LinearSVR

    X, y = load_iris(return_X_y=True)
    Xs = sp.csr_matrix(X) if sparse_X else X
    clf = LinearSVC().fit(Xs, y)
    dense_scores, pred = clf.decision_function(Xs), clf.predict(Xs)
    assert clf.sparsify() is clf and sp.issparse(clf.coef_) and clf.coef_.shape == (3, 4)
    np.testing.assert_array_equal(clf.predict(Xs), pred)
    np.testing.assert_allclose(clf.decision_function(Xs), dense_scores, rtol=1e-14, atol=1e-14)
    assert clf.densify() is clf and isinstance(clf.coef_, np.ndarray) and clf.coef_.shape == (3, 4)
    np.testing.assert_array_equal(clf.predict(Xs), pred)
    Xr, yr = make_regression(80, 6, noise=1.0, random_state=0)
    reg = LinearSVR(C=1.0).fit(Xr, yr)
    before = reg.predict(Xr)
    assert reg.sparsify().coef_.shape == (1, 6)
    np.testing.assert_allclose(reg.predict(Xr), before, rtol=1e-14, atol=1e-12)
    assert reg.densify().coef_.shape == (6,)


def test_verbose_prints_one_line_per_solve(capsys):
    from sklearn.datasets import load_iris

    from margin_opt import LinearSVC

    X, y = load_iris(return_X_y=True)
    LinearSVC(verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("[LinearSVC] dcd: optimal") for line in lines)
    LinearSVC().fit(X, y)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("C", [0.01, 0.1, 1.0])
def test_l1_penalty_is_liblinears_problem_certified(C):
    # LinearSVC(penalty="l1"): liblinear's -s 5 problem (the bias column regularized),
    # certified; the weights are scikit-learn's (liblinear at tol 1e-10) within 1e-5,
    # with the same zero pattern, and the objective is the cvxpy primal's and dual's
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from margin_opt.problems.l1_svm import L1SVMProblem

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = LinearSVC(penalty="l1", dual=False, C=C, intercept_scaling=1).fit(X, y)
    lib = SkLinearSVC(penalty="l1", dual=False, C=C, tol=1e-10, max_iter=100000).fit(X, y)
    assert ours.certificate_.ok and ours.solutions_[0].method == "cd"
    np.testing.assert_allclose(ours.coef_, lib.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, lib.intercept_, atol=1e-5)
    np.testing.assert_array_equal(ours.coef_ != 0, np.abs(lib.coef_) > 1e-9)
    problem = L1SVMProblem(np.hstack([X, np.ones((X.shape[0], 1))]), y, C=C)
    w = np.r_[ours.coef_[0], ours.intercept_]
    primal, dual = problem.primal(), problem.dual()
    primal.solve()
    dual.solve()
    assert abs(problem.primal_objective(w) - primal.value) <= 1e-6 * primal.value
    assert abs(problem.primal_objective(w) - dual.value) <= 1e-6 * primal.value


def test_l1_certificate_fails_on_wrong_answers():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from margin_opt.problems.l1_svm import L1SVMProblem

    X, y = load_breast_cancer(return_X_y=True)
    problem = L1SVMProblem(StandardScaler().fit_transform(X), y, C=0.1)
    w = problem.solve("cd", certify=1e-8).variables.w
    assert problem.certify(w, 1e-8).ok
    scaled = 1.01 * w                                   # every weight 1 % too large
    assert {"duality_gap", "optimality"} <= set(problem.certify(scaled, 1e-6).failed())
    moved = w.copy()
    moved[np.flatnonzero(w == 0)[0]] = 1e-3             # a zero weight made nonzero
    assert "optimality" in problem.certify(moved, 1e-6).failed()
    with pytest.raises(ValueError, match="C must be"):
        L1SVMProblem(X, y, C=0.0)


def test_l1_penalty_sparse_multiclass_and_weights():
    # CSR X gives the dense answer; ten classes one-vs-rest, each certified, predicting
    # as scikit-learn's; sample weights are Cᵢ = C·sᵢ (a zero weight drops the sample)
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:600] / 16.0, y[:600]
    dense = LinearSVC(penalty="l1", dual=False, C=0.1).fit(X, y)
    sparse = LinearSVC(penalty="l1", dual=False, C=0.1).fit(sp.csr_matrix(X), y)
    lib = SkLinearSVC(penalty="l1", dual=False, C=0.1, tol=1e-10, max_iter=100000).fit(X, y)
    assert dense.certificate_.ok and len(dense.certificate_) == 10
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-6)
    np.testing.assert_allclose(dense.coef_, lib.coef_, atol=1e-4)
    assert (dense.predict(X) == lib.predict(X)).mean() >= 0.99
    sw = np.ones(y.size)
    sw[:50] = 0.0
    weighted = LinearSVC(penalty="l1", dual=False, C=0.1).fit(X, y, sample_weight=sw)
    dropped = LinearSVC(penalty="l1", dual=False, C=0.1).fit(X[50:], y[50:])
    np.testing.assert_allclose(weighted.coef_, dropped.coef_, atol=1e-6)


def test_l1_binding_refuses_what_it_cannot_read():
    # the compiled passes' arguments are checked before the GIL is released
    from margin_opt import _core

    X = np.ones((5, 3))
    cols = _core.LinearX.dense(np.ascontiguousarray(X.T))       # 3 features × 5 samples
    y, C, w, margin = np.ones(5), np.ones(5), np.zeros(3), np.ones(5)
    ok = (cols, y, C, np.ones(3), w, margin, np.arange(3), _core.L1State(), 0.1, 10)
    assert np.isfinite(_core.l1_squared_hinge(*ok))
    bad = {1: (np.ones(4), "y"), 3: (np.ones(2), "col_sq"), 5: (np.ones(4), "margin"),
           6: (np.array([0, 1, 7]), "order"), 2: (-np.ones(5), "C")}
    for at, (value, match) in bad.items():
        args = list(ok)
        args[at] = value
        with pytest.raises(ValueError, match=match):
            _core.l1_squared_hinge(*args)
