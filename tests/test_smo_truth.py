"""SMO tells the truth on every input (issue 11): stopping on what the certificate
checks, a progress test, no heuristic "unbounded", robust kernel rows, read-only
kernel matrices.

References: the certificate (:func:`margin_opt.kkt.dual_qp_checks`, computed from α
alone), closed forms, the cvxpy optimum, and the same problem on unshifted data.
"""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler
from test_smo import cvxpy_optimum, data, svc_qp

from margin_opt import SVMProblem, SVRProblem
from margin_opt.exceptions import ConvergenceWarning
from margin_opt.methods import stopping_options
from margin_opt.solution import STATUSES
from margin_opt.solvers.smo import solve_smo
from margin_opt.standard_forms import DualQP


def _certificate(problem, res, tol):
    return problem.certify(problem.solution_from_standard(res.x, res.b), tol=tol)


def _check(cert, name):
    return next(c for c in cert.checks if c.name == name)


def _svr_problem():
    X, y = make_regression(200, 5, noise=10.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    return SVRProblem(X, (y - y.mean()) / y.std(), C=10.0, epsilon=0.1, kernel="rbf",
                      gamma=0.2)


def test_gap_tol_stops_on_the_certified_duality_gap():
    problem = _svr_problem()
    qp = problem.to_standard_form()
    loose = solve_smo(qp, tol=1e-3, polish=False)
    # m − M ≤ tol alone leaves a duality gap the certificate rejects at 1e-4 ...
    assert _check(_certificate(problem, loose, 1e-4), "duality_gap").value > 1e-4
    res = solve_smo(qp, tol=1e-3, gap_tol=1e-4, polish=False)
    assert res.status == "optimal" and res.duality_gap <= 1e-4
    # ... with gap_tol the same tolerance certifies, gap measured independently
    cert = _certificate(problem, res, 1e-4)
    assert _check(cert, "duality_gap").value <= 1e-4
    assert _check(cert, "mvp_gap").value <= 1e-3


def test_estimator_stopping_policy_asks_for_the_gap():
    opts = stopping_options("smo", 1e-6, 1.0)
    assert opts["gap_tol"] <= 1e-6 and opts["tol"] <= 1e-6


def test_default_path_certifies_at_its_tolerance():
    problem = _svr_problem()
    res = solve_smo(problem.to_standard_form(), **stopping_options("smo", 1e-6, 10.0))
    assert res.status == "optimal"
    assert _certificate(problem, res, 1e-6).ok


def test_stalled_is_a_status():
    assert "stalled" in STATUSES


def test_hard_margin_without_intercept_on_overlapping_data_stalls_early():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0.5, 1, (50, 2)), rng.normal(-0.5, 1, (50, 2))])
    y = np.r_[np.ones(50), -np.ones(50)]
    qp = DualQP(X=X, kernel=svc_qp(X, y, np.inf, "linear").kernel, y=y, p=-np.ones(100),
                upper=np.full(100, np.inf), equality=False)
    with pytest.warns(ConvergenceWarning, match="progress|exceeded"):
        res = solve_smo(qp, tol=1e-6)
    assert res.status == "stalled" and not res.success
    assert res.nit < 1_000_000            # default max_iter is 10**7
    assert "progress" in res.message or "exceeded" in res.message


def test_hard_margin_with_intercept_on_overlapping_data_never_says_unbounded():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0.5, 1, (50, 2)), rng.normal(-0.5, 1, (50, 2))])
    y = np.r_[np.ones(50), -np.ones(50)]
    with pytest.warns(ConvergenceWarning):
        res = solve_smo(svc_qp(X, y, np.inf, "linear"), tol=1e-6)
    assert res.status == "stalled" and res.nit < 1_000_000


def test_normal_runs_do_not_stall():
    X, y = data(300, seed=3)
    for C in (0.1, 1.0, 100.0):
        assert solve_smo(svc_qp(X, y, C, "rbf", gamma=0.5), tol=1e-8).status == "optimal"


def test_hard_margin_with_a_tiny_margin_is_solved_not_called_unbounded():
    # separable with geometric margin 1e-2 at radius ~1e3 (1e-5 × R): the old radius
    # rule declared it non-separable; the optimum is the closed form α = 1/(2m²)·(1, 1)
    m, R = 1e-2, 1e3
    X = np.array([[R, m], [R, -m], [R, 3 * m], [R, -3 * m]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    qp = svc_qp(X, y, np.inf, "linear")
    res = solve_smo(qp, tol=1e-9)
    assert res.status == "optimal"
    w = (res.x * y) @ X
    assert np.min(y * (X @ w + res.b)) >= 1 - 1e-6
    np.testing.assert_allclose(res.x, [1 / (2 * m * m), 1 / (2 * m * m), 0, 0], rtol=1e-6)


@pytest.mark.parametrize("shift", [1e6, -3e7])
def test_rbf_rows_are_translation_invariant(shift):
    X, y = data(80, seed=1)
    base = solve_smo(svc_qp(X, y, 1.0, "rbf", gamma=0.3), tol=1e-9)
    moved = solve_smo(svc_qp(X + shift, y, 1.0, "rbf", gamma=0.3), tol=1e-9)
    assert moved.status == "optimal"
    np.testing.assert_allclose(moved.x, base.x, atol=1e-7)
    problem = SVMProblem(X + shift, y, C=1.0, kernel="rbf", gamma=0.3)
    assert _certificate(problem, moved, 1e-6).ok


def test_rbf_with_a_huge_gamma_and_duplicates_matches_its_exact_kernel():
    X, y = data(40, seed=2)
    X = np.vstack([X, X[:5]])                       # duplicates: K = 1 there, 0 elsewhere
    y = np.r_[y, y[:5]]
    res = solve_smo(svc_qp(X, y, 1.0, "rbf", gamma=1e300), tol=1e-10)
    same = (np.abs(X[:, None, :] - X[None, :, :]).sum(axis=2) == 0).astype(float)
    ref = solve_smo(svc_qp(same, y, 1.0, "precomputed"), tol=1e-10)
    assert res.status == "optimal"
    np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-10)
    problem = SVMProblem(X, y, C=1.0, kernel="rbf", gamma=1e300)
    assert _certificate(problem, res, 1e-6).ok


def test_read_only_and_memory_mapped_kernels_are_used_without_copying(tmp_path):
    X, y = data(60, seed=4)
    K = np.exp(-0.2 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    ref = solve_smo(svc_qp(K, y, 1.0, "precomputed"), tol=1e-9)
    np.save(tmp_path / "K.npy", K)
    Km = np.load(tmp_path / "K.npy", mmap_mode="r")
    Kro = K.copy()
    Kro.flags.writeable = False
    for M in (Km, Kro):
        res = solve_smo(svc_qp(M, y, 1.0, "precomputed"), tol=1e-9)
        np.testing.assert_allclose(res.x, ref.x, atol=1e-10)
        qp = svc_qp(X, y, 1.0, "rbf", gamma=0.2)
        res = solve_smo(DualQP(X=X, kernel=qp.kernel, y=qp.y, p=qp.p, upper=qp.upper, gram=M),
                        tol=1e-9)
        np.testing.assert_allclose(res.x, ref.x, atol=1e-10)


def test_polished_answer_is_the_optimum():
    X, y = data(150, seed=5)
    qp = svc_qp(X, y, 3.0, "rbf", gamma=0.4)
    ref, _ = cvxpy_optimum(qp)
    # polished at m − M = 1e-3 and 1e-5 on the way to 1e-8, or SMO alone: the optimum
    # (150 variables: a polish pays here only without its fixed cost, polish_overhead=0;
    # with the defaults SMO runs its tail, no polish, to the same optimum)
    from margin_opt.solvers.smo import SMOOptions

    res = solve_smo(qp, tol=1e-8, options=SMOOptions(polish_overhead=0))
    assert res.status == "optimal" and res.n_polish >= 1
    assert abs(res.fun - ref) <= 1e-7 * abs(ref)
    plain = solve_smo(qp, tol=1e-8, polish=False)
    assert plain.n_polish == 0 and abs(plain.fun - ref) <= 1e-7 * abs(ref)
    default = solve_smo(qp, tol=1e-8)
    assert default.status == "optimal" and default.n_polish == 0
    assert abs(default.fun - ref) <= 1e-7 * abs(ref)


def test_cvxpy_reference_of_the_tiny_margin_problem():
    # the closed form above is the cvxpy optimum too
    m, R = 1e-2, 1e3
    X = np.array([[R, m], [R, -m], [R, 3 * m], [R, -3 * m]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    w, b = cp.Variable(2), cp.Variable()
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), [cp.multiply(y, X @ w + b) >= 1]).solve()
    np.testing.assert_allclose(w.value, [0, 1 / m], rtol=1e-6, atol=1e-6)


def test_two_polishes_reach_libsvms_optimum():
    # ε-SVR (2n variables sharing kernel rows): SMO to 1e-3, a Newton polish, SMO to
    # 1e-5, a second polish, SMO to 1e-8; the answer against LIBSVM at tol 1e-10 and
    # against SMO without any polish
    from sklearn.svm import SVR as SkSVR

    from margin_opt.bench.svr import regression_data

    X, t = regression_data(1500)
    problem = SVRProblem(X, t, C=1.0, epsilon=0.1, kernel="rbf", gamma=0.05)
    qp = problem.to_standard_form()
    res = solve_smo(qp, tol=1e-8)
    assert res.status == "optimal" and res.n_polish >= 1
    plain = solve_smo(qp, tol=1e-8, polish=False)
    assert plain.n_polish == 0 and res.nit < plain.nit
    assert abs(res.fun - plain.fun) <= 1e-9 * abs(plain.fun)
    lib = SkSVR(C=1.0, epsilon=0.1, gamma=0.05, tol=1e-10).fit(X, t)
    sol = problem.solution_from_standard(res.x)
    assert problem.certify(sol, tol=1e-6).ok
    ref = problem.solution_from_sklearn(lib)       # coefficients are ill-conditioned
    assert abs(sol.dual_objective - ref.dual_objective) <= 1e-8 * abs(ref.dual_objective)
    np.testing.assert_allclose(sol.decision, lib.predict(X), atol=1e-5)


def test_gradient_exact_after_polish_and_shrinking():
    # after a polish every gradient is exact; shrinking right after it and stopping at
    # once must not leave a stale gradient (the shrunk ones are not recomputed then):
    # the returned gradient is Qα + p computed afresh from the kernel matrix
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = make_regression(1500, 5, noise=5.0, random_state=3)   # shrinks (600 does not)
    X = StandardScaler().fit_transform(X)
    y = (y - y.mean()) / y.std()
    problem = SVRProblem(X, y, C=1.0, epsilon=0.1, gamma=0.2)
    qp = problem.to_standard_form()
    res = solve_smo(qp, tol=1e-8)
    assert res.status == "optimal" and res.n_polish >= 1
    assert res.cache["mean_active"] < qp.n_variables          # shrinking took place
    K = rbf_kernel(X, X, gamma=0.2)
    idx = qp.data_index
    beta = np.zeros(X.shape[0])
    np.add.at(beta, idx, qp.y * res.x)
    grad = qp.y * (K @ beta)[idx] + qp.p
    np.testing.assert_allclose(res.grad, grad, atol=1e-10)


def test_polish_after_shrinking_reaches_libsvms_optimum():
    # SMO shrinks on its way to the polish tolerance; the polish reads every gradient
    # (reconstructed) and SMO goes on shrinking: the returned gradient is Qα + p
    # afresh, the optimum LIBSVM's (tol 1e-10) and that of the run without shrinking
    from sklearn.datasets import make_classification
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVC as SkSVC

    X, y = make_classification(2500, 20, n_informative=10, flip_y=0.05, random_state=0)
    X = StandardScaler().fit_transform(X)
    problem = SVMProblem(X, y, C=1.0, kernel="rbf", gamma=0.05)
    qp = problem.to_standard_form()
    res = solve_smo(qp, tol=1e-6, gap_tol=1e-7)
    assert res.status == "optimal" and res.n_polish >= 1
    assert res.cache["mean_active"] < qp.n_variables          # shrinking took place
    K = rbf_kernel(X, X, gamma=0.05)
    grad = qp.y * (K @ (qp.y * res.x)) + qp.p
    np.testing.assert_allclose(res.grad, grad, atol=1e-10)
    plain = solve_smo(qp, tol=1e-6, gap_tol=1e-7, shrinking=False)
    assert abs(res.fun - plain.fun) <= 1e-9 * abs(plain.fun)
    lib = SkSVC(C=1.0, gamma=0.05, tol=1e-10).fit(X, y)
    sol = problem.solution_from_standard(res.x, res.b)
    assert problem.certify(sol, tol=1e-6).ok
    ref = problem.solution_from_sklearn(lib)
    assert abs(sol.dual_objective - ref.dual_objective) <= 1e-8 * abs(ref.dual_objective)
    np.testing.assert_allclose(sol.decision, lib.decision_function(X), atol=1e-5)
