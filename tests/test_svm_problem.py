"""SVMProblem against independent references: the other formulations, LIBSVM, closed forms."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC as SkSVC

from margin_opt import NotSeparableError, Solution, SVMProblem
from margin_opt.datasets import load_dataset


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def _subsample(X, y, n, seed=0):
    idx = np.random.default_rng(seed).choice(X.shape[0], n, replace=False)
    return X[idx], y[idx]


CASES = [
    ("breast_cancer", "linear", 1.0),
    ("breast_cancer", "rbf", 10.0),
    ("iris-binary", "poly", 0.5),
    ("breast_cancer", "poly", 100.0),
]


@pytest.mark.parametrize("name,kernel,C", CASES)
def test_slack_hinge_dual_agree(name, kernel, C):
    d = load_dataset(name)
    X, y = _subsample(d.X, d.y, min(200, d.X.shape[0]))
    p = SVMProblem(X, y, C=C, kernel=kernel)
    dual = p.solve("cvxpy-dual")
    slack = p.solve("cvxpy-primal", formulation="slack")
    hinge = p.solve("cvxpy-primal", formulation="hinge")
    for s in (slack, hinge):
        assert rel(s.primal_objective, dual.dual_objective) < 1e-6
    assert rel(dual.primal_objective, dual.dual_objective) < 1e-6
    np.testing.assert_allclose(slack.decision, dual.decision, atol=1e-5)
    assert p.certify(dual).ok and p.certify(slack).ok
    assert p.certify(hinge, tol=1e-5).ok


def test_heart_scale_forms(heart_scale):
    p = SVMProblem(heart_scale.X, heart_scale.y, C=1.0, kernel="rbf")
    dual, slack = p.solve("cvxpy-dual"), p.solve("cvxpy-primal")
    assert rel(slack.primal_objective, dual.dual_objective) < 1e-6
    assert p.certify(dual).ok


def test_sparse_a9a_subsample(a9a):
    X, y = _subsample(a9a.X, a9a.y, 300)
    assert sp.issparse(X)
    p = SVMProblem(X, y, C=1.0, kernel="linear")
    dual, slack = p.solve("cvxpy-dual"), p.solve("cvxpy-primal")
    assert rel(slack.primal_objective, dual.dual_objective) < 1e-6
    assert p.certify(dual).ok
    sk = SkSVC(kernel="linear", C=1.0, tol=1e-8).fit(X, y)
    assert rel(Solution.from_sklearn(sk, p).dual_objective, dual.dual_objective) < 1e-6


def _assert_same_support(ours, sk, ypm, problem):
    """Same support set, except points lying exactly on the margin, where α = 0 and a
    tiny α > 0 are both optimal (the dual is not unique there), and an interior-point
    answer's tiny multipliers that it keeps because together they move f by more than
    the support budget (each one's own effect on f below 1e-5)."""
    diff = set(ours.support_) ^ set(sk.support_)
    margins = ypm * ours.decision
    K = problem.gram()
    effect = ours.alpha * np.abs(K).max(axis=0)
    assert all(abs(margins[i] - 1) < 1e-5 or effect[i] < 1e-5 for i in diff), sorted(diff)
    on_margin = [i for i in diff if abs(margins[i] - 1) < 1e-5]
    assert len(on_margin) <= 0.05 * max(1, len(sk.support_))
    # the exported model (the solution's support and coefficients) is the certified f
    f = K[:, ours.support_] @ ours.dual_coef[0, ours.support_] + ours.b
    np.testing.assert_allclose(f, ours.decision, atol=1e-9 * max(1, np.abs(f).max()))


def test_sigmoid_indefinite_is_refused(breast_cancer):
    p = SVMProblem(breast_cancer.X[:100], breast_cancer.y[:100], kernel="sigmoid", gamma=0.5)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        p.solve()


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_agrees_with_libsvm_breast_cancer(breast_cancer, kernel):
    X, y = breast_cancer.X, breast_cancer.y
    p = SVMProblem(X, y, C=1.0, kernel=kernel)
    ours = p.solve("cvxpy-dual")
    sk = SkSVC(C=1.0, kernel=kernel, gamma="scale", tol=1e-8).fit(X, y)
    theirs = Solution.from_sklearn(sk, p)
    assert rel(ours.dual_objective, theirs.dual_objective) < 1e-6
    assert abs(ours.b - sk.intercept_[0]) < 1e-4
    _assert_same_support(ours, sk, y * 2 - 1, p)
    np.testing.assert_array_equal(np.sign(ours.decision), np.sign(sk.decision_function(X)))


def test_agrees_with_libsvm_heart_scale(heart_scale):
    X, y = heart_scale.X, heart_scale.y
    p = SVMProblem(X, y, C=1.0, kernel="rbf")
    ours = p.solve("cvxpy-dual")
    sk = SkSVC(C=1.0, kernel="rbf", gamma="scale", tol=1e-8).fit(X, y)
    assert rel(ours.dual_objective, Solution.from_sklearn(sk, p).dual_objective) < 1e-6
    _assert_same_support(ours, sk, y, p)


def test_weights_agree_with_libsvm(breast_cancer):
    X, y = _subsample(breast_cancer.X, breast_cancer.y, 150, seed=3)
    sw = np.random.default_rng(0).uniform(0.2, 2.0, size=y.size)
    p = SVMProblem(X, y, C=2.0, kernel="rbf", sample_weight=sw, class_weight={0.0: 3.0})
    ours = p.solve("cvxpy-dual")
    sk = SkSVC(C=2.0, kernel="rbf", tol=1e-8, class_weight={0.0: 3.0}).fit(X, y, sample_weight=sw)
    assert rel(ours.dual_objective, Solution.from_sklearn(sk, p).dual_objective) < 1e-6
    assert np.all(ours.alpha <= p.C_i * (1 + 1e-9))


def test_lambda_form_equals_C_form(breast_cancer):
    """λ/2‖w‖² + mean hinge, written directly in cvxpy, has the same minimizer; J* = λ P*."""
    X, y = _subsample(breast_cancer.X, breast_cancer.y, 150)
    ypm = np.where(y > 0, 1.0, -1.0)
    lam = 0.05
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    J = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w)
                               + cp.sum(cp.pos(1 - cp.multiply(ypm, X @ w + b))) / y.size))
    J.solve(solver="CLARABEL")
    p = SVMProblem.from_lambda(X, y, lam)
    assert p.C == pytest.approx(1 / (lam * y.size))
    sol = p.solve("cvxpy-primal")
    np.testing.assert_allclose(sol.w, w.value, atol=1e-5)
    assert sol.b == pytest.approx(b.value, abs=1e-5)
    assert lam * sol.primal_objective == pytest.approx(J.value, rel=1e-6)
    with pytest.raises(ValueError, match="lam"):
        SVMProblem.from_lambda(X, y, 0.0)


def test_hard_margin_geometry(separable):
    X, y = separable
    p = SVMProblem(X, y, C=np.inf)
    for method in ("cvxpy-dual", "cvxpy-primal"):
        sol = p.solve(method)
        assert p.certify(sol).ok
        # the multipliers that matter sit on the margin (an interior-point answer also
        # keeps tiny ones whose sum the exported model needs: support_ is every α ≠ 0)
        sv = np.flatnonzero(sol.alpha > 1e-6 * sol.alpha.max())
        np.testing.assert_allclose(y[sv] * sol.decision[sv], 1.0, atol=1e-6)
        assert np.all(y * sol.decision >= 1 - 1e-7)
        cert = p.certify(sol)
        assert cert.geometric_margin == pytest.approx(2 / np.linalg.norm(sol.w))
    # closed form: the distance between the closest points of the two convex hulls
    # equals the margin; LIBSVM with a huge C gives the same hyperplane
    sk = SkSVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(sol.w, sk.coef_[0], rtol=1e-4)


def test_hard_margin_two_points_closed_form():
    X = np.array([[0.0, 0.0], [2.0, 0.0]])
    y = np.array([-1, 1])
    sol = SVMProblem(X, y, C=np.inf).solve("cvxpy-dual")
    np.testing.assert_allclose(sol.w, [1.0, 0.0], atol=1e-7)
    assert sol.b == pytest.approx(-1.0, abs=1e-7)
    np.testing.assert_allclose(sol.alpha, [0.5, 0.5], atol=1e-7)


@pytest.mark.parametrize("method", ["cvxpy-dual", "cvxpy-primal"])
def test_not_separable(method):
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1, -1, 1, -1])
    with pytest.raises(NotSeparableError, match="finite C"):
        SVMProblem(X, y, C=np.inf).solve(method)


def test_no_intercept_matches_cvxpy_by_hand(breast_cancer):
    X, y = _subsample(breast_cancer.X, breast_cancer.y, 120, seed=5)
    ypm = np.where(y > 0, 1.0, -1.0)
    p = SVMProblem(X, y, C=0.5, fit_intercept=False)
    sol = p.solve("cvxpy-dual")
    w = cp.Variable(X.shape[1])
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)
                                 + 0.5 * cp.sum(cp.pos(1 - cp.multiply(ypm, X @ w)))))
    ref.solve(solver="CLARABEL")
    assert rel(sol.dual_objective, ref.value) < 1e-6
    assert sol.b == 0.0 and p.certify(sol).ok


def test_feature_map_primal_equals_kernel_dual():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.2, 1, -1)

    def phi(V):
        return np.c_[V[:, 0] ** 2, np.sqrt(2) * V[:, 0] * V[:, 1], V[:, 1] ** 2]

    mapped = SVMProblem(X, y, C=5.0, feature_map=phi).solve("cvxpy-primal")
    kern = SVMProblem(X, y, C=5.0, kernel="poly", degree=2, gamma=1.0, coef0=0.0)
    dual = kern.solve("cvxpy-dual")
    assert mapped.w.shape == (3,)
    assert rel(mapped.primal_objective, dual.dual_objective) < 1e-6
    np.testing.assert_allclose(mapped.decision, dual.decision, atol=1e-5)


def test_precomputed_equals_kernel(breast_cancer):
    X, y = _subsample(breast_cancer.X, breast_cancer.y, 100)
    p = SVMProblem(X, y, kernel="rbf", gamma=0.05)
    K = p.gram()
    q = SVMProblem(K, y, kernel="precomputed")
    assert rel(q.solve().dual_objective, p.solve().dual_objective) < 1e-8


@pytest.mark.parametrize("form", ["quad_form", "factor"])
def test_dual_forms_agree(form, breast_cancer):
    X, y = _subsample(breast_cancer.X, breast_cancer.y, 120)
    p = SVMProblem(X, y, kernel="rbf")
    auto = p.solve(quad_form="auto").dual_objective
    assert rel(p.solve(quad_form=form).dual_objective, auto) < 1e-7


def test_printable_problems():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    y = np.array([0, 1, 1])
    p = SVMProblem(X, y)
    primal, dual = p.primal(), p.dual()
    assert set(primal.var_dict) == {"w", "b", "xi"}
    assert set(dual.var_dict) == {"alpha"}
    assert "alpha" in str(dual) and "xi" in str(primal)
    assert set(p.primal("hinge").var_dict) >= {"w", "b"}
    assert len(dual.constraints) == 3 and len(SVMProblem(X, y, C=np.inf).dual().constraints) == 2


def test_label_mapping_documented():
    X = np.array([[0.0], [1.0], [3.0], [4.0]])
    p = SVMProblem(X, np.array(["spam", "ham", "spam", "ham"]))
    assert list(p.classes_) == ["ham", "spam"]
    np.testing.assert_array_equal(p.y, [1, -1, 1, -1])


def test_inaccurate_warns_and_errors_are_ours(breast_cancer):
    from margin_opt import InaccurateSolutionWarning, SolverError

    p = SVMProblem(breast_cancer.X[:200], breast_cancer.y[:200], kernel="rbf")
    with pytest.warns(InaccurateSolutionWarning, match="inaccurate"):
        sol = p.solve("cvxpy-dual", solver="SCS", max_iters=20)
    assert sol.status == "optimal_inaccurate"
    assert not p.certify(sol).ok
    with pytest.raises(SolverError, match="not installed"):
        p.solve("cvxpy-dual", solver="NO_SUCH_SOLVER")
    with pytest.raises(ValueError, match="unknown method"):
        p.solve("newton")


def test_timings_reported(breast_cancer):
    p = SVMProblem(breast_cancer.X[:100], breast_cancer.y[:100], kernel="rbf")
    sol = p.solve()
    assert {"build", "compile", "solve", "total"} <= set(sol.timings)
    assert sol.timings["total"] >= sol.timings["solve"] > 0
    assert abs(p.kkt_intercept(sol.alpha) - sol.b) < 1e-6     # the two recoveries of b agree
