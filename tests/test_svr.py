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


# ---------------------------------------------------------------- scikit-learn's contract
# issue 46: sparse in, sparse out; C=np.inf accepted; a callable kernel gets X as given

@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_sparse_fit_has_sklearn_sparse_attributes(kernel):
    import pickle

    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6))
    X[rng.random(X.shape) < 0.5] = 0.0
    y = X @ [1.0, -2.0, 0.5, 0.0, 1.5, -1.0] + 0.1 * rng.standard_normal(80)
    Xs = sp.csr_matrix(X)
    ours = SVR(kernel=kernel, gamma=1.0, C=2.0, tol=1e-10).fit(Xs, y)
    ref = SkSVR(kernel=kernel, gamma=1.0, C=2.0, tol=1e-12).fit(Xs, y)
    assert ours.certificate_.ok
    names = ("support_vectors_", "dual_coef_") + (("coef_",) if kernel == "linear" else ())
    for name in names:
        mine, theirs = getattr(ours, name), getattr(ref, name)
        assert type(mine) is type(theirs) is sp.csr_matrix, name
        assert mine.shape == theirs.shape, name
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.support_vectors_.toarray(),
                                  ref.support_vectors_.toarray())
    if kernel == "rbf":         # unique (a PD kernel matrix), the linear kernel's w is
        theirs = ref.dual_coef_.toarray()
        np.testing.assert_allclose(ours.dual_coef_.toarray(), theirs, rtol=1e-6,
                                   atol=1e-6 * np.abs(theirs).max())
    else:
        theirs = ref.coef_.toarray()
        np.testing.assert_allclose(ours.coef_.toarray(), theirs, rtol=1e-6,
                                   atol=1e-6 * np.abs(theirs).max())
    for Q in (Xs, X):
        np.testing.assert_allclose(ours.predict(Q), ref.predict(Q), rtol=1e-6,
                                   atol=1e-6 * np.abs(y).max())
    dense = SVR(kernel=kernel, gamma=1.0, C=2.0, tol=1e-10).fit(X, y)
    assert isinstance(dense.dual_coef_, np.ndarray)
    np.testing.assert_allclose(ours.predict(X), dense.predict(X), atol=1e-7)
    again = pickle.loads(pickle.dumps(ours))
    np.testing.assert_array_equal(again.predict(Xs), ours.predict(Xs))
    empty = SVR(kernel="linear").fit(sp.csr_matrix(np.eye(4)), [0.04, 0.04, 0.10, 0.16])
    assert empty.support_vectors_.data.size == empty.dual_coef_.data.size == 0  # sklearn's


def test_infinite_C_as_sklearn():
    """C=np.inf is accepted (scikit-learn's constraint): every target within epsilon, the
    predictions of scikit-learn's C=np.inf; where no function of the kernel fits the tube
    the fit says so instead of returning a model that does not fit it."""
    from margin_opt import InfeasibleError, NotCertifiedError

    X, y = make_regression(n_samples=60, n_features=8, random_state=0)
    ours = SVR(C=np.inf).fit(X, y)
    ref = SkSVR(C=np.inf, tol=1e-8).fit(X, y)
    assert ours.certificate_.ok and ours.C == np.inf
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-5, atol=1e-4)
    assert np.all(np.abs(ours.predict(X) - y) <= ours.epsilon * (1 + 1e-6))
    np.testing.assert_allclose(ours.predict(X), SVR(C=1e10).fit(X, y).predict(X), rtol=1e-6)
    Xn, yn = make_regression(n_samples=60, n_features=3, noise=10.0, random_state=0)
    with pytest.raises((InfeasibleError, NotCertifiedError), match=r"C=np.inf.*epsilon"):
        SVR(C=np.inf, kernel="linear").fit(Xn, yn)


def test_callable_kernel_on_strings():
    """A callable kernel receives the list of strings as given (scikit-learn's
    test_custom_kernel_not_array_input); the model is the linear kernel's on the counts."""
    data = ["A A", "A", "B", "B B", "A B", "A A B", "B B B", "A"]
    counts = np.array([[s.count("A"), s.count("B")] for s in data], dtype=float)
    y = counts @ [1.0, -0.5]

    def kernel(A, B):
        assert isinstance(A, list) and isinstance(B, list)
        ca = np.array([[a.count("A"), a.count("B")] for a in A], dtype=float)
        cb = np.array([[b.count("A"), b.count("B")] for b in B], dtype=float)
        return ca @ cb.T

    ours = SVR(kernel=kernel).fit(data, y)
    assert ours.certificate_.ok and not hasattr(ours, "n_features_in_")
    linear = SVR(kernel="linear").fit(counts, y)
    np.testing.assert_allclose(ours.predict(data), linear.predict(counts), atol=1e-6)
    np.testing.assert_allclose(ours.predict(data), SkSVR(kernel=kernel).fit(data, y).predict(data),
                               atol=1e-3)
