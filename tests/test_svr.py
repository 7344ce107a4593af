"""ε-SVR against independent references: the other formulations, LIBSVM, the tube KKT."""

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.svm import SVR as SkSVR

from margin_opt import SVR, ConvergenceWarning, SVRProblem
from margin_opt.datasets import load_dataset


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.fixture(scope="module")
def diabetes():
    d = load_dataset("diabetes")
    return d.X[:200], d.y[:200]


@pytest.mark.parametrize("kernel,C,eps", [("linear", 1.0, 0.1), ("rbf", 3.0, 0.2),
                                          ("poly", 0.5, 0.05)])
def test_forms_agree_and_match_libsvm(diabetes, kernel, C, eps):
    X, y = diabetes
    p = SVRProblem(X, y, C=C, epsilon=eps, kernel=kernel)
    dual = p.solve("cvxpy-dual")
    slack = p.solve("cvxpy-primal", formulation="slack")
    loss = p.solve("cvxpy-primal", formulation="loss")
    smo = p.solve("smo", tol=1e-8)
    assert rel(dual.primal_objective, dual.dual_objective) < 1e-6
    assert rel(smo.dual_objective, dual.dual_objective) < 1e-6
    assert p.certify(smo, tol=1e-5).ok
    assert rel(slack.primal_objective, dual.dual_objective) < 1e-6
    assert rel(loss.primal_objective, dual.dual_objective) < 1e-6
    sk = SkSVR(kernel=kernel, C=C, epsilon=eps, tol=1e-8).fit(X, y)
    theirs = p.solution_from_sklearn(sk)
    assert rel(theirs.dual_objective, dual.dual_objective) < 1e-6
    np.testing.assert_allclose(dual.decision, sk.predict(X), atol=1e-4)
    assert abs(dual.b - sk.intercept_[0]) < 1e-4
    assert abs(p.kkt_intercept(dual.variables.standard_alpha) - dual.b) < 1e-6
    assert p.certify(dual).ok and p.certify(slack).ok
    assert p.certify(theirs, tol=1e-4).ok


def test_tube_table_and_multiplier_pattern(diabetes):
    X, y = diabetes
    p = SVRProblem(X, y, C=1.0, epsilon=0.3)
    sol = p.solve()
    cert = p.certify(sol)
    r = y - sol.decision
    a, a_star = sol.alpha, sol.alpha_star
    assert np.all(a[r < 0.3 - 1e-6] < 1e-6)          # a > 0 only on/above the upper edge
    assert np.all(a_star[r > -0.3 + 1e-6] < 1e-6)    # â > 0 only on/below the lower edge
    np.testing.assert_allclose(sol.dual_coef[0], a - a_star)
    counts = {row.category.split(" (")[0]: row.count for row in cert.table}
    assert sum(counts.values()) == y.size
    assert counts["inside"] == int(np.sum(np.abs(r) < 0.3 - 1e-6))
    assert cert.a_times_a_star < 1e-10
    assert "upper edge" in str(cert)


def test_certificate_fails_on_wrong_answers(diabetes):
    X, y = diabetes
    p = SVRProblem(X, y, C=1.0, epsilon=0.1)
    sol = p.solve()
    assert not p.certify(alpha=sol.alpha * 1.02, alpha_star=sol.alpha_star, b=sol.b).ok
    assert not p.certify(alpha=sol.alpha, alpha_star=sol.alpha_star, b=sol.b + 1e-3).ok
    a = sol.alpha.copy()
    a[np.argmax(a)] = 0.0
    assert not p.certify(alpha=a, alpha_star=sol.alpha_star, b=sol.b).ok
    # both multipliers of a point positive: feasible-looking but not optimal
    both = sol.alpha_star.copy()
    i = np.flatnonzero(sol.alpha > 1e-3)[0]
    both[i] += 0.5 * min(sol.alpha[i], 1)
    assert not p.certify(alpha=sol.alpha, alpha_star=both, b=sol.b).ok


def test_subgradient_linear(diabetes):
    X, y = diabetes
    p = SVRProblem(X, y, C=1.0, epsilon=0.1, kernel="linear")
    exact = p.solve("cvxpy-primal")
    with pytest.warns(ConvergenceWarning, match="max_iter"):   # tol=0: runs to max_iter
        sg = p.solve("subgradient", schedule="1/sqrt(t)", tol=0.0, max_iter=4000)
    assert exact.primal_objective <= sg.primal_objective < exact.primal_objective * 1.01
    assert sg.dual_objective <= exact.primal_objective * (1 + 1e-9)   # a true lower bound
    assert sg.history["objective"][0] > sg.primal_objective


@pytest.mark.parametrize("kw,match", [
    ({"epsilon": -0.1}, "epsilon"), ({"C": 0.0}, "C must"), ({"C": np.inf}, "finite C"),
])
def test_bad_parameters(diabetes, kw, match):
    X, y = diabetes
    with pytest.raises(ValueError, match=match):
        SVRProblem(X, y, **kw)


def test_bad_targets(diabetes):
    X, y = diabetes
    with pytest.raises(ValueError, match="constant"):
        SVRProblem(X, np.full(y.size, 3.0))
    with pytest.raises(ValueError, match="NaN|infinity"):
        SVRProblem(X, np.where(np.arange(y.size) == 3, np.nan, y))
    with pytest.raises(ValueError, match="at least 2 samples"):
        SVRProblem(X[:1], y[:1])


def test_estimator_matches_sklearn():
    X, y = make_regression(300, 5, noise=5.0, random_state=0)
    y = (y - y.mean()) / y.std()
    ours = SVR(C=2.0, epsilon=0.1, kernel="rbf").fit(X[:200], y[:200])
    ref = SkSVR(C=2.0, epsilon=0.1, kernel="rbf", tol=1e-8).fit(X[:200], y[:200])
    np.testing.assert_allclose(ours.predict(X[200:]), ref.predict(X[200:]), atol=1e-4)
    assert ours.certificate_.ok
    assert ours.score(X[200:], y[200:]) == pytest.approx(ref.score(X[200:], y[200:]), abs=1e-4)
    lin = SVR(kernel="linear").fit(X, y)
    assert lin.coef_.shape == (1, 5)
