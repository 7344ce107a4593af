"""The Crammer–Singer problem: primal = dual in cvxpy, liblinear's optimum, its certificate."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import LinearSVC

from margin_opt import SVC, MulticlassSVMProblem
from margin_opt.methods import method_names
from margin_opt.solution import MulticlassVariables


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_primal_and_dual_agree_and_certify(iris, kernel):
    X, y = iris
    p = MulticlassSVMProblem(X, y, C=1.0, kernel=kernel)
    dual, primal = p.solve("cvxpy-dual"), p.solve("cvxpy-primal")
    assert isinstance(dual.variables, MulticlassVariables)
    assert dual.dual_coef.shape == (3, 150) and dual.intercept.shape == (3,)
    assert abs(dual.dual_objective - primal.primal_objective) < 1e-7 * primal.primal_objective
    np.testing.assert_allclose(dual.intercept, primal.intercept, atol=1e-6)
    np.testing.assert_allclose(dual.decision, primal.decision, atol=1e-6)
    np.testing.assert_allclose(dual.dual_coef.sum(axis=0), 0.0, atol=1e-9)  # Σ_r βᵢᵣ = 0
    for sol in (dual, primal):
        cert = p.certify(sol)
        assert cert.ok, cert
        assert cert.n_support == sol.support_.size


def test_without_intercept_is_liblinear_optimum(iris):
    X, y = iris
    p = MulticlassSVMProblem(X, y, C=1.0, fit_intercept=False)
    sol = p.solve("cvxpy-dual")
    ref = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=1.0, tol=1e-10,
                    max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(sol.variables.w.T, ref.coef_, atol=1e-6)
    assert p.certify(sol).ok


def test_certificate_catches_a_wrong_answer(iris):
    X, y = iris
    p = MulticlassSVMProblem(X, y, C=1.0)
    sol = p.solve("cvxpy-dual")
    wrong = p.solution_from_standard(0.9 * sol.variables.alpha + 0.1 * p.C_i[:, None] / 3,
                                     sol.intercept)
    cert = p.certify(wrong)
    assert not cert.ok and "duality_gap" in cert.failed()


def test_printable_problems_and_registry(iris):
    X, y = iris
    p = MulticlassSVMProblem(X[::5], y[::5], C=2.0)
    assert "beta" in str(p.dual()) and "xi" in str(p.primal())
    assert method_names("multiclass") == ["cvxpy-dual", "cvxpy-primal", "sequential-dual"]
    with pytest.raises(ValueError, match="unknown method 'smo' for the multiclass problem"):
        p.solve("smo")
    with pytest.raises(ValueError, match="finite C"):
        MulticlassSVMProblem(X, y, C=np.inf)


def test_estimator(iris):
    X, y = iris
    clf = SVC(multi_class="crammer_singer", kernel="linear").fit(X, y)
    p = MulticlassSVMProblem(X, y, C=1.0)
    sol = p.solve("cvxpy-dual")
    assert clf.certificate_.ok and clf.dual_coef_.shape == (3, clf.support_.size)
    assert clf.solution_.method == "sequential-dual"    # the registry's choice for linear
    # certified at tol=1e-6: a relative gap ≤ 1e-6 bounds ½‖W − W*‖² ≤ 1e-6·P (P ≈ 17
    # here, ‖ΔW‖ ≤ 6e-3); the answers agree far closer than that bound
    np.testing.assert_allclose(clf.decision_function(X), sol.decision, atol=1e-4)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(sol.decision, axis=1))
    np.testing.assert_allclose(clf.coef_, sol.variables.w.T, atol=1e-4)
    assert abs(clf.certificate_.quantities["primal_objective"] - sol.primal_objective) \
        <= 1e-6 * sol.primal_objective
    rbf = SVC(multi_class="crammer_singer", gamma=0.5).fit(X, y)
    assert rbf.certificate_.ok and rbf.score(X, y) > 0.95
    with pytest.raises(ValueError, match="crammer_singer"):
        SVC(multi_class="crammer_singer", solver="smo").fit(X, y)
    binary = SVC(multi_class="crammer_singer", kernel="linear").fit(X[:100], y[:100])
    assert binary.decision_function(X[:100]).shape == (100,)


@pytest.mark.parametrize("seed", [34, 40, 41, 55])
def test_extreme_weights_are_certified_by_the_last_repairs(seed):
    """Crammer–Singer with C ~1e3 and sample weights ~1e3 (a random search, issue 45,
    item 8): the sequential dual stops at max_iter from zero and Clarabel's default
    answers fail complementarity by ~4e-6.  The solve path's last repairs run Clarabel
    to 1e-12 (seeds 34, 40 certify there) and then the sequential dual warm-started from
    that answer (41, 55: Clarabel alone leaves complementarity at 1e-5).  The objective
    is that of a tight solve of the cvxpy primal, a feasible primal point."""
    from margin_opt.problems.solve_path import TIGHT_CLARABEL

    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(15, 40)), int(rng.integers(1, 3))
    C = float(10 ** rng.uniform(1, 4))
    w = np.where(rng.random(n) < 0.5, 1.0, 10 ** rng.uniform(2, 3.7))
    X, y = rng.normal(size=(n, d)), rng.integers(0, 3, n)
    y[:3] = np.arange(3)
    X[:, 0] += 0.8 * y
    model = SVC(kernel="linear", multi_class="crammer_singer", C=C).fit(X, y, sample_weight=w)
    assert model.certificate_.ok
    ref = MulticlassSVMProblem(X, y, C=C, sample_weight=w).solve("cvxpy-primal",
                                                                 **TIGHT_CLARABEL)
    assert abs(model.solution_.primal_objective - ref.primal_objective) <= \
        1e-6 * abs(ref.primal_objective)
