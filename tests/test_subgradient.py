"""Subgradient descent and Pegasos against the cvxpy optimum of the same objective J.

The reference J* is written here directly in cvxpy (not taken from the package), so
every check compares the backends with an independent solver.
"""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from margin_opt.datasets import load_dataset, shared_data_dir
from margin_opt.losses import EpsilonInsensitive, Hinge
from margin_opt.methods import get_method
from margin_opt.solvers.subgradient import optimum_radius, pegasos, subgradient_descent
from margin_opt.standard_forms import PrimalERM


def cvxpy_J(erm):
    """min J(w, b) by Clarabel; returns (J*, w*, b*)."""
    X = erm.X.toarray() if sp.issparse(erm.X) else erm.X
    n, d = X.shape
    w = cp.Variable(d)
    b = cp.Variable() if erm.fit_intercept else 0.0
    f = X @ w + b
    if isinstance(erm.loss, Hinge):
        loss = cp.pos(erm.loss.threshold - cp.multiply(erm.y, f))
    else:
        loss = cp.pos(cp.abs(erm.y - f) - erm.loss.epsilon)
    reg = cp.sum_squares(w)
    if erm.fit_intercept and erm.regularize_intercept:
        reg = reg + cp.square(b)
    prob = cp.Problem(cp.Minimize(erm.lam / 2 * reg + erm.sample_weight @ loss / n))
    prob.solve(solver="CLARABEL")
    return prob.value, w.value, (float(b.value) if erm.fit_intercept else 0.0)


def make_erm(n=200, d=5, C=1.0, seed=0, sparse=False, **kw):
    X, y = make_classification(n, d, n_informative=3, n_redundant=0, flip_y=0.05,
                               random_state=seed)
    X = StandardScaler().fit_transform(X) + 1.5  # uncentered on purpose: the bias matters
    y = np.where(y == 1, 1.0, -1.0)
    sw = kw.pop("sample_weight", np.ones(n))
    return PrimalERM(sp.csr_matrix(X) if sparse else X, y, 1.0 / (C * n), sw, **kw)


@pytest.fixture(scope="module")
def erm():
    return make_erm()


@pytest.fixture(scope="module")
def ref(erm):
    return cvxpy_J(erm)


# ------------------------------------------------------------------ batch subgradient


@pytest.mark.parametrize("schedule, step_size, max_iter, rel", [
    ("polyak", None, 3000, 1e-4),
    ("1/sqrt(t)", None, 3000, 2e-2),
    ("1/t", None, 3000, 5e-2),
    ("constant", 0.05, 3000, 2e-2),
])
def test_batch_schedules_approach_cvxpy_optimum(erm, ref, schedule, step_size, max_iter, rel):
    J_star = ref[0]
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        r = subgradient_descent(erm, schedule=schedule, step_size=step_size, tol=0.0,
                                max_iter=max_iter, f_star=J_star)
    assert r.status == "max_iter"
    assert r.fun >= J_star - 1e-7  # never below the optimum
    assert (r.fun - J_star) / J_star < rel
    assert r.fun == pytest.approx(erm.objective(r.w, r.b), rel=1e-12)


def test_batch_history_and_best_iterate(erm):
    w0 = np.full(erm.X.shape[1], 0.5)
    w0_copy = w0.copy()
    r = subgradient_descent(erm, schedule="1/sqrt(t)", w0=w0, b0=0.3, tol=1e-3, max_iter=50000)
    np.testing.assert_array_equal(w0, w0_copy)  # input untouched
    J, dp = r.history["J"], r.history["param_change"]
    assert J.shape == (r.nit + 1,) and dp.shape == (r.nit,)
    assert J[0] == pytest.approx(erm.objective(w0_copy, 0.3))
    assert r.fun == J.min() == J[r.best_iter]
    np.testing.assert_array_equal(r.w, r.w_best)
    assert J[-1] == pytest.approx(erm.objective(r.w_last, r.b_last))
    assert r.status == "optimal" and r.success
    assert dp[-1] <= 1e-3 < dp[:-1].min()


def test_polyak_converges_and_stops_on_tol(erm, ref):
    r = subgradient_descent(erm, schedule="polyak", f_star=ref[0], tol=1e-7, max_iter=200000)
    assert r.status == "optimal"
    assert r.fun - ref[0] < 1e-4 * ref[0]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kw", [
    {"fit_intercept": False},
    {"regularize_intercept": True},
    {"sample_weight": np.random.default_rng(1).uniform(0.2, 3.0, 200)},
])
def test_batch_variants_of_the_intercept_and_weights(kw):
    erm = make_erm(**kw)
    J_star, w_star, _ = cvxpy_J(erm)
    assert np.linalg.norm(w_star) <= optimum_radius(erm)
    r = subgradient_descent(erm, schedule="polyak", f_star=J_star, tol=0.0, max_iter=3000)
    assert J_star - 1e-7 <= r.fun < J_star * (1 + 1e-3)
    if not erm.fit_intercept:
        assert r.b == 0.0


def test_epsilon_insensitive_loss():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 + rng.normal(scale=0.3, size=150)
    erm = PrimalERM(X, y, 1.0 / 150, np.ones(150), loss=EpsilonInsensitive(0.2))
    J_star, w_star, _ = cvxpy_J(erm)
    assert np.linalg.norm(w_star) <= optimum_radius(erm)
    r = subgradient_descent(erm, schedule="polyak", f_star=J_star, tol=0.0, max_iter=3000)
    assert J_star - 1e-7 <= r.fun < J_star * (1 + 1e-3)
    p = pegasos(erm, max_iter=300, batch_size=4, random_state=0)
    assert J_star - 1e-7 <= p.fun < J_star * (1 + 1e-2)


def test_sparse_batch_matches_dense(erm):
    with pytest.warns(ConvergenceWarning):
        dense = subgradient_descent(erm, schedule="1/sqrt(t)", tol=0.0, max_iter=200)
    with pytest.warns(ConvergenceWarning):
        sparse = subgradient_descent(make_erm(sparse=True), schedule="1/sqrt(t)", tol=0.0,
                                     max_iter=200)
    np.testing.assert_allclose(sparse.history["J"], dense.history["J"], rtol=1e-12)
    np.testing.assert_allclose(sparse.w, dense.w, rtol=1e-10)


def test_callback_stops(erm):
    seen = []

    def cb(t, w, b, J):
        seen.append(J)
        return t == 5

    r = subgradient_descent(erm, schedule="1/t", max_iter=100, callback=cb)
    assert r.status == "stopped" and r.nit == 5 and len(seen) == 5
    np.testing.assert_allclose(r.history["J"][1:], seen)


@pytest.mark.parametrize("kw, match", [
    ({"schedule": "constant"}, "needs a step_size"),
    ({"schedule": "polyak"}, "needs f_star"),
    ({"schedule": "1/t^2"}, "unknown schedule"),
    ({"schedule": "constant", "step_size": -1.0}, "step_size"),
    ({"w0": np.zeros(3)}, r"shape \(5,\)"),
    ({"tol": -1.0}, "tol"),
    ({"max_iter": 0}, "max_iter"),
])
def test_batch_bad_input(erm, kw, match):
    with pytest.raises(ValueError, match=match):
        subgradient_descent(erm, **kw)


def test_b0_without_intercept_and_wrong_form():
    with pytest.raises(ValueError, match="no intercept"):
        subgradient_descent(make_erm(fit_intercept=False), b0=1.0)
    with pytest.raises(TypeError, match="PrimalERM"):
        subgradient_descent(np.zeros((3, 3)))


# --------------------------------------------------------------------------- Pegasos


@pytest.mark.parametrize("batch_size", [1, 8])
def test_pegasos_reaches_cvxpy_optimum(erm, ref, batch_size):
    r = pegasos(erm, batch_size=batch_size, max_iter=300, random_state=0)
    assert r.status == "max_iter" and r.nit == 300
    J = r.history["J"]
    assert J.shape == (301,) and J[0] == pytest.approx(1.0)  # w = 0, b = 0: mean hinge = 1
    assert r.fun == pytest.approx(erm.objective(r.w, r.b), rel=1e-10) == J.min()
    assert ref[0] - 1e-7 <= r.fun < ref[0] * (1 + 2e-3)


def test_pegasos_layouts_agree(erm):
    """Dense rows, CSR rows and the linear Gram matrix run the same iterates."""
    kw = dict(batch_size=3, max_iter=20, random_state=7)
    dense = pegasos(erm, **kw)
    sparse = pegasos(make_erm(sparse=True), **kw)
    gram = pegasos(erm, kernel_gram=linear_kernel(erm.X), **kw)
    np.testing.assert_allclose(sparse.history["J"], dense.history["J"], rtol=1e-9)
    np.testing.assert_allclose(gram.history["J"], dense.history["J"], rtol=1e-9)
    np.testing.assert_allclose(sparse.w, dense.w, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gram.beta @ erm.X, dense.w, rtol=1e-7, atol=1e-9)
    assert gram.w is None and gram.b == pytest.approx(dense.b)


def test_pegasos_reproducible_and_options(erm, ref):
    a = pegasos(erm, max_iter=5, random_state=3)
    b = pegasos(erm, max_iter=5, random_state=3)
    np.testing.assert_array_equal(a.w, b.w)
    plain = pegasos(erm, max_iter=100, random_state=0, averaging=False, projection=False)
    assert plain.fun >= ref[0] - 1e-7
    assert np.all(np.isfinite(plain.history["J"]))
    assert plain.w_last.shape == plain.w.shape
    assert plain.fun > pegasos(erm, max_iter=100, random_state=0).fun  # averaging helps


def test_pegasos_max_time_and_callback(erm):
    r = pegasos(erm, max_iter=10**9, max_time=0.2, random_state=0)
    assert r.status == "stopped" and "max_time" in r.message
    assert r.history["time"][-1] >= 0.2
    r = pegasos(erm, max_iter=50, random_state=0, callback=lambda e, w, b, J: e == 3)
    assert r.status == "stopped" and r.nit == 3


@pytest.mark.parametrize("variant", [{"fit_intercept": False}, {"regularize_intercept": True}])
def test_pegasos_intercept_variants(variant):
    erm = make_erm(**variant)
    J_star = cvxpy_J(erm)[0]
    r = pegasos(erm, batch_size=4, max_iter=300, random_state=0)
    assert J_star - 1e-7 <= r.fun < J_star * (1 + 5e-3)


def test_kernel_pegasos_against_libsvm():
    """RBF kernel: J of Pegasos' β against J of LIBSVM's optimum (same C, same kernel)."""
    X, y = make_classification(150, 4, random_state=1, flip_y=0.05)
    y = np.where(y == 1, 1.0, -1.0)
    n, C = 150, 1.0
    K = rbf_kernel(X, gamma=0.5)
    erm = PrimalERM(X, y, 1.0 / (C * n), np.ones(n))
    svc = SVC(C=C, kernel="precomputed", tol=1e-8).fit(K, y)
    c = np.zeros(n)
    c[svc.support_] = svc.dual_coef_.ravel()

    def J(beta, b):
        f = K @ beta + b
        return 0.5 * erm.lam * beta @ K @ beta + np.maximum(0, 1 - y * f).mean()

    J_ref = J(c, svc.intercept_[0])
    r = pegasos(erm, kernel_gram=K, batch_size=4, max_iter=300, random_state=0)
    assert r.fun == pytest.approx(J(r.beta, r.b), rel=1e-10)
    assert J_ref * (1 - 1e-6) <= r.fun < J_ref * (1 + 5e-3)


@pytest.mark.parametrize("kw, match", [
    ({"batch_size": 0}, "batch_size"),
    ({"max_iter": 1.5}, "max_iter"),
    ({"max_time": 0.0}, "max_time"),
    ({"kernel_gram": np.eye(3)}, r"\(200, 200\)"),
])
def test_pegasos_bad_input(erm, kw, match):
    with pytest.raises(ValueError, match=match):
        pegasos(erm, **kw)


def test_registry_resolves_both():
    for name, fn in (("subgradient", subgradient_descent), ("pegasos", pegasos)):
        spec = get_method(name)
        assert spec.load() is fn and spec.standard_form == "PrimalERM"


def test_pegasos_sparse_real_data_a9a():
    if shared_data_dir() is None or not (shared_data_dir() / "a9a.t").exists():
        pytest.skip("../shared/data/a9a.t is absent (a fresh clone has no shared data)")
    data = load_dataset("a9a.t")
    X, y = data.X[:1500], np.where(data.y[:1500] > 0, 1.0, -1.0)
    erm = PrimalERM(X, y, 1.0 / 1500, np.ones(1500))
    J_star = cvxpy_J(erm)[0]
    r = pegasos(erm, batch_size=4, max_iter=200, random_state=0)
    assert J_star - 1e-7 <= r.fun < J_star * (1 + 5e-3)


# ---------------------------------------------------------------- through SVMProblem


@pytest.fixture(scope="module")
def cancer_problem():
    from margin_opt.problems.svm import SVMProblem

    data = load_dataset("breast_cancer")
    return SVMProblem(data.X[:300], data.y[:300], C=0.5)


@pytest.fixture(scope="module")
def cancer_optimum(cancer_problem):
    return cancer_problem.solve(method="cvxpy-primal")


@pytest.mark.parametrize("method, options, rel", [
    ("subgradient", {"schedule": "1/sqrt(t)", "tol": 0.0, "max_iter": 4000}, 5e-3),
    ("pegasos", {"batch_size": 4, "max_iter": 300, "random_state": 0}, 1e-2),
])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_problem_solve_within_suboptimality(cancer_problem, cancer_optimum, method, options,
                                            rel):
    P_star = cancer_optimum.primal_objective
    sol = cancer_problem.solve(method=method, **options)
    assert P_star * (1 - 1e-6) <= sol.primal_objective < P_star * (1 + rel)
    hist = sol.history["objective"]  # the C form ½‖w‖² + CΣξ, entry 0 at the start
    C, n = cancer_problem.C, cancer_problem.n_samples
    assert hist[0] == pytest.approx(C * n * 1.0)  # w = 0, b = 0: every ξᵢ = 1
    assert hist.min() == pytest.approx(sol.primal_objective, rel=1e-9)
    cert = cancer_problem.certify(sol)
    gap = cert.to_dict()["quantities"]["duality_gap_abs"]
    # α filled from the subgradient: the gap bounds the suboptimality from above
    assert gap >= sol.primal_objective - P_star - 1e-6 * P_star
    assert np.isfinite(gap)


def test_problem_kernel_pegasos_and_svc(cancer_problem):
    from margin_opt.estimators.svc import SVC as OurSVC
    from margin_opt.problems.svm import SVMProblem

    data = load_dataset("breast_cancer")
    X, y = data.X[:200], data.y[:200]
    problem = SVMProblem(X, y, C=1.0, kernel="rbf", gamma=0.02)
    ref = problem.solve(method="cvxpy-dual")
    sol = problem.solve(method="pegasos", batch_size=4, max_iter=300, random_state=0)
    assert ref.primal_objective * (1 - 1e-6) <= sol.primal_objective
    assert sol.primal_objective < ref.primal_objective * (1 + 1e-2)
    clf = OurSVC(C=1.0, kernel="linear", solver="pegasos",
                 solver_options={"max_iter": 100, "random_state": 0, "batch_size": 4}).fit(X, y)
    ref_clf = OurSVC(C=1.0, kernel="linear").fit(X, y)
    assert np.mean(clf.predict(X) == ref_clf.predict(X)) > 0.97


def test_convergence_plot(erm, ref, tmp_path):
    pytest.importorskip("matplotlib")
    from margin_opt.bench.subgradient import convergence_runs
    from margin_opt.plots.convergence import plot_convergence

    runs = convergence_runs(erm, ref[0], max_iter=300)
    assert len(runs) == 5  # four schedules and Pegasos
    for trace in runs.values():
        J = trace[1] if isinstance(trace, tuple) else trace
        assert np.min(J) >= ref[0] - 1e-7
    ax = plot_convergence(runs, ref[0], lam=erm.lam, file=tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0
    assert len(ax.get_lines()) == 7  # five runs and two reference slopes
    with pytest.raises(ValueError, match="empty"):
        plot_convergence({}, ref[0])


# ------------------------------------------- issue 45: a tiny C, and the accuracy promised


def _unbalanced():
    """60 points, 24 of class 0 and 36 of class 1 (the majority)."""
    X, y = make_classification(n_samples=60, n_features=4, weights=[0.4], random_state=0)
    assert np.bincount(y).tolist() == [24, 36]
    return X, y


@pytest.mark.parametrize("erm_loss", [Hinge(), EpsilonInsensitive(0.3)])
def test_best_intercept_minimizes_J_in_b(erm_loss):
    from margin_opt.solvers.subgradient import best_intercept

    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 15))
        y = rng.choice([-1.0, 1.0], n) if isinstance(erm_loss, Hinge) else rng.standard_normal(n)
        sw = rng.choice([0.0, 0.5, 1.0, 2.0], n)
        sw[0] = 1.0
        f0 = rng.standard_normal(n)
        erm = PrimalERM(np.zeros((n, 1)), y, 1.0, sw, loss=erm_loss)
        b = best_intercept(erm, f0)
        grid = np.linspace(-6, 6, 12001)
        J = sw @ erm_loss.value(y[:, None], f0[:, None] + grid[None, :])
        assert sw @ erm_loss.value(y, f0 + b) <= J.min() + 1e-12
    reg = PrimalERM(np.zeros((3, 1)), np.array([1.0, -1, 1]), 1.0, np.ones(3),
                    regularize_intercept=True)
    assert best_intercept(reg, np.zeros(3)) is None      # b in the regularizer: not this form


@pytest.mark.parametrize("solver", ["pegasos", "subgradient"])
@pytest.mark.parametrize("tiny", ["C", "sample_weight"])
def test_tiny_C_gives_the_optimal_intercept(solver, tiny):
    """C = 1e-300 (or every weight 1e-300): w* ≈ 0 and b* = +1, the majority's side —
    not w = 0, b = 0 (class 0 for all 60 points) with a passing certificate."""
    from margin_opt import SVC as OurSVC

    X, y = _unbalanced()
    C, sw = (1e-300, None) if tiny == "C" else (1.0, np.full(60, 1e-300))
    ours = OurSVC(kernel="linear", solver=solver, C=C).fit(X, y, sample_weight=sw)
    smo = OurSVC(kernel="linear", solver="smo", C=C).fit(X, y, sample_weight=sw)
    ref = SVC(kernel="linear", C=1e-300).fit(X, y)            # LIBSVM
    assert ours.intercept_[0] == pytest.approx(1.0) == ref.intercept_[0] == smo.intercept_[0]
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_array_equal(ours.predict(X), np.ones(60))     # the majority class
    assert np.abs(ours.coef_).max() < 1e-290
    assert ours.certificate_.ok


def test_certificate_fails_on_w0_b0_at_tiny_C():
    from margin_opt.problems.svm import SVMProblem

    X, y = _unbalanced()
    for problem in (SVMProblem(X, y, C=1e-300, kernel="linear"),
                    SVMProblem(X, y, C=1.0, kernel="linear", sample_weight=np.full(60, 1e-300))):
        wrong = problem.solution_from_primal(np.zeros(4), 0.0, method="wrong")
        right = problem.solution_from_primal(np.zeros(4), 1.0, method="right")
        for suboptimality in (False, True):
            bad = problem.certify(wrong, tol=1e-2, suboptimality=suboptimality)
            assert not bad.ok, bad
            assert problem.certify(right, tol=1e-2, suboptimality=suboptimality).ok
        # the multipliers filled for b = 0 are feasible (yᵀα = 0): a true lower bound,
        # 12 C short of P (the 12 more points of the majority)
        assert abs(problem.y @ wrong.alpha) <= 1e-14 * wrong.alpha.max()
        gap = (wrong.primal_objective - wrong.dual_objective) / wrong.primal_objective
        assert gap == pytest.approx(12 / 60)


def test_verify_iterative_methods_reach_their_accuracy(capsys):
    """The documented `margin-opt verify --methods subgradient,pegasos` (breast_cancer,
    linear, C = 1) exits 0: both reach the 1e-2 their registry entry documents, as their
    accuracy certificate proves (and cvxpy's optimum, the independent reference, shows)."""
    import json

    from margin_opt import cli

    assert get_method("subgradient").accuracy_for("svc") == 1e-2
    assert cli.main(["verify", "--methods", "subgradient,pegasos", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {r["method"]: r for r in report["rows"]}
    assert report["ok"] and report["reference"] == "cvxpy-dual"
    for m in ("subgradient", "pegasos"):
        r = rows[m]
        assert r["ok"] and r["iterative"] and r["tol"] == 1e-2
        assert r["gap"] <= 1e-2
        # weak duality: the distance to the optimum is at most the certified gap
        assert r["agreement"] <= r["gap"] * (1 + 1e-9) + 1e-12
        assert r["agreement"] <= 5e-3 and r["time"] < 10
