"""Dual coordinate descent with w explicit (solvers/linear) and the squared-loss problems.

References: the cvxpy optimum of the same problem (objectives to 1e-6 relative) and
scikit-learn's liblinear (LinearSVC / LinearSVR) where the problem is the same
(no intercept).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.svm import LinearSVC as SkLinearSVC
from sklearn.svm import LinearSVR as SkLinearSVR

from margin_opt.methods import auto_method, not_applicable
from margin_opt.problems.squared import SquaredEpsilonProblem, SquaredHingeProblem
from margin_opt.problems.svm import SVMProblem
from margin_opt.problems.svr import SVRProblem
from margin_opt.solvers.linear import DCDOptions, solve_dcd


@pytest.fixture(scope="module")
def clf():
    X, y = make_classification(160, 8, flip_y=0.1, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def reg():
    X, y = make_regression(150, 6, noise=5.0, random_state=1)
    return X / 5.0, y / 10.0


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.mark.parametrize("P", [SVMProblem, SquaredHingeProblem])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_classification_matches_cvxpy(clf, P, fit_intercept):
    X, y = clf
    pr = P(X, y, C=0.7, fit_intercept=fit_intercept)
    ref = pr.solve("cvxpy-dual", certify=False)
    sol = pr.solve("dcd", tol=1e-8, gap_tol=1e-9)
    assert sol.status == "optimal" and sol.certificate.ok
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert _rel(sol.dual_objective, ref.dual_objective) < 1e-6
    if fit_intercept:       # yᵀα = 0 kept exactly
        assert abs(pr.y @ sol.variables.alpha) < 1e-12 * max(1, sol.variables.alpha.sum())
        assert abs(sol.b - ref.b) < 1e-4


@pytest.mark.parametrize("P", [SVRProblem, SquaredEpsilonProblem])
def test_regression_matches_cvxpy(reg, P):
    X, y = reg
    pr = P(X, y, C=0.3, epsilon=0.5, kernel="linear")
    ref = pr.solve("cvxpy-dual", certify=False)
    sol = pr.solve("dcd", tol=1e-8, gap_tol=1e-9)
    assert sol.status == "optimal" and sol.certificate.ok
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert abs(np.sum(sol.variables.alpha - sol.variables.alpha_star)) < 1e-10


def test_squared_problems_primal_equals_dual(clf, reg):
    """The two cvxpy forms of each new problem meet (strong duality)."""
    X, y = clf
    pr = SquaredHingeProblem(X[:60], y[:60], C=2.0)
    p, d = pr.solve("cvxpy-primal", certify=False), pr.solve("cvxpy-dual", certify=False)
    assert _rel(p.primal_objective, d.primal_objective) < 1e-6
    Xr, yr = reg
    pr = SquaredEpsilonProblem(Xr[:60], yr[:60], C=2.0, epsilon=0.2)
    p, d = pr.solve("cvxpy-primal", certify=False), pr.solve("cvxpy-dual", certify=False)
    assert _rel(p.primal_objective, d.primal_objective) < 1e-6
    text = str(pr)
    assert "Σᵢ Cᵢ(ξᵢ² + ξᵢ*²)" in text and "KKT table" in text


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_no_intercept_matches_liblinear(clf, loss):
    X, y = clf
    P = SVMProblem if loss == "hinge" else SquaredHingeProblem
    pr = P(X, y, C=0.5, fit_intercept=False)
    sol = pr.solve("dcd", tol=1e-8, gap_tol=1e-9)
    sk = SkLinearSVC(loss=loss, C=0.5, fit_intercept=False, tol=1e-10, max_iter=200000,
                     dual=True).fit(X, y)
    w = sk.coef_.ravel()
    yf = pr.y * (X @ w)
    xi = np.maximum(0, 1 - yf)
    obj = 0.5 * w @ w + 0.5 * (xi if loss == "hinge" else xi ** 2).sum()
    assert _rel(sol.primal_objective, obj) < 1e-6


def test_svr_no_intercept_matches_liblinear(reg):
    X, y = reg
    loss = "squared_epsilon_insensitive"
    pr = SquaredEpsilonProblem(X, y, C=0.4, epsilon=0.3, fit_intercept=False)
    sol = pr.solve("dcd", tol=1e-8, gap_tol=1e-9)
    sk = SkLinearSVR(loss=loss, C=0.4, epsilon=0.3, fit_intercept=False, tol=1e-10,
                     max_iter=200000, dual=True).fit(X, y)
    w = sk.coef_.ravel()
    r = np.maximum(0, np.abs(y - X @ w) - 0.3)
    assert _rel(sol.primal_objective, 0.5 * w @ w + 0.4 * (r ** 2).sum()) < 1e-6


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_sparse_indices_and_dense_agree(clf, itype):
    X, y = clf
    Xs = sp.csr_matrix(X)
    Xs = sp.csr_matrix((Xs.data, Xs.indices.astype(itype), Xs.indptr.astype(itype)),
                       shape=X.shape)
    dense = SVMProblem(X, y, C=1.0).solve("dcd", tol=1e-8, gap_tol=1e-9)
    sparse = SVMProblem(Xs, y, C=1.0).solve("dcd", tol=1e-8, gap_tol=1e-9)
    assert sparse.certificate.ok
    assert _rel(sparse.primal_objective, dense.primal_objective) < 1e-9


def test_weights_warm_start_and_callback(clf):
    X, y = clf
    sw = np.random.default_rng(0).uniform(0, 2, y.size)
    pr = SVMProblem(X, y, C=0.8, sample_weight=sw, class_weight={0: 2.0, 1: 0.5})
    ref = pr.solve("cvxpy-dual")
    qp = pr.to_standard_form()
    seen = []
    res = solve_dcd(qp, tol=1e-8, gap_tol=1e-9, callback=lambda r: seen.append(r.nit))
    assert res.status == "optimal" and seen == list(range(1, res.nit + 1))
    sol = pr.solution_from_standard(res.x, res.b)
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert np.all(res.x <= pr.C_i + 1e-15)
    warm = solve_dcd(qp, tol=1e-8, gap_tol=1e-9, alpha0=res.x, b0=res.b)
    assert warm.nit < res.nit

    def stop(r):
        raise StopIteration
    assert solve_dcd(qp, callback=stop).status == "stopped"


def test_max_iter_warns_and_certificate_fails_on_wrong_answer(clf):
    from margin_opt.exceptions import ConvergenceWarning

    X, y = clf
    pr = SVMProblem(X, y, C=0.7)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        short = solve_dcd(pr.to_standard_form(), tol=1e-10, max_iter=2)
    assert short.status == "max_iter"
    bad = pr.solution_from_standard(short.x, short.b)
    assert not pr.certify(bad, tol=1e-6).ok


def test_dense_large_has_no_n_by_n(monkeypatch):
    """A 100 000 × 100 dense problem: w explicit, certified, nothing n × n (the Gram
    matrix is never asked for)."""
    from margin_opt.problems import kernel_data

    def no_gram(self):
        raise AssertionError("n × n kernel matrix formed")
    monkeypatch.setattr(kernel_data.KernelData, "gram", no_gram)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 100)) / 10
    y = np.sign(X @ rng.standard_normal(100) + 0.1 * rng.standard_normal(100_000))
    pr = SquaredHingeProblem(X, y, C=0.01)
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7)
    assert sol.certificate.ok


def test_registry_applicability_and_policy(clf):
    X, y = clf
    assert not_applicable("dcd", SVMProblem(X, y, kernel="rbf")) is not None
    assert not_applicable("dcd", SVMProblem(X, y, kernel="linear")) is None
    assert auto_method("svc", linear=True, n_samples=10_000) == "dcd"
    assert auto_method("svc", linear=False, n_samples=10_000) == "smo"
    assert auto_method("svc", linear=True, n_samples=10_000, hard_margin=True) == "smo"
    with pytest.raises(ValueError, match="linear kernel"):
        SVMProblem(X, y, kernel="rbf").solve("dcd")
    with pytest.raises(ValueError, match="DCDOptions"):
        DCDOptions(tighten=1.0)


def test_linear_svr_goes_to_dcd_from_the_policys_size_and_agrees_with_cvxpy():
    # SVR(kernel="linear") from LINEAR_MIN_SAMPLES samples on: the registry's dcd (Ho and
    # Lin's dual, w explicit), certified, its objective and predictions those of the
    # cvxpy dual; below that size and for other kernels, SMO
    from sklearn.datasets import make_regression

    from margin_opt import SVR
    from margin_opt.methods import LINEAR_MIN_SAMPLES

    assert auto_method("svr", linear=True, n_samples=LINEAR_MIN_SAMPLES) == "dcd"
    assert auto_method("svr", linear=True, n_samples=LINEAR_MIN_SAMPLES - 1) == "smo"
    assert auto_method("svr", linear=False, n_samples=10 * LINEAR_MIN_SAMPLES) == "smo"
    X, y = make_regression(LINEAR_MIN_SAMPLES + 500, 8, noise=5.0, random_state=0)
    y = y / y.std()
    fit = SVR(kernel="linear", C=1.0, epsilon=0.1).fit(X, y)
    ref = SVR(kernel="linear", C=1.0, epsilon=0.1, solver="cvxpy-dual").fit(X, y)
    assert fit.solution_.method == "dcd" and fit.certificate_.ok
    assert fit.solution_.primal_objective == pytest.approx(ref.solution_.primal_objective,
                                                           rel=1e-7)
    np.testing.assert_allclose(fit.predict(X), ref.predict(X), atol=1e-6 * np.abs(y).max())


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("n", [300, 2000])
@pytest.mark.parametrize("C", [1.0, np.inf])
def test_one_policy_before_and_after_the_problem_is_posed(kernel, n, C):
    """auto_method (the facts before a problem is posed) and preferred_method (the
    posed problem) read the one table PREFERRED and agree."""
    from margin_opt.methods import preferred_method

    X, y = make_classification(n, 4, n_redundant=0, class_sep=3.0, random_state=0)
    pr = SVMProblem(X, y, C=C, kernel=kernel)
    assert preferred_method(pr) == auto_method(
        "svc", linear=kernel == "linear", n_samples=n, hard_margin=bool(np.isinf(C)))


def test_empty_rows_and_zero_columns(clf):
    X, y = clf
    X = np.hstack([X, np.zeros((X.shape[0], 3))])
    X[:5] = 0.0                                # empty rows: f = b there
    Xs = sp.csr_matrix(X)
    for A in (X, Xs):
        pr = SVMProblem(A, y, C=1.0)
        sol = pr.solve("dcd", tol=1e-8, gap_tol=1e-9)
        ref = pr.solve("cvxpy-dual")
        assert sol.certificate.ok and _rel(sol.primal_objective, ref.primal_objective) < 1e-6
        assert np.all(sol.w[-3:] == 0)


@pytest.mark.parametrize("primal", [True, False])
def test_free_face_newton_certifies_a9a_tail(a9a, primal):
    """a9a (d = 123 binary features): coordinate descent's tail on the nearly dependent
    free rows is long (2000 epochs left m − M at 1.5e-3 on these 2000 rows before the
    face's Newton steps); the active-set steps on the free face end it, certified at
    1e-6, with the cvxpy optimum's objective.  The default route (``primal``: the
    Huber-smoothed primal's path and the exact solve on its working set) gives the
    same."""
    X, y = a9a.X[:2000], a9a.y[:2000]
    pr = SVMProblem(X, y, C=1.0, kernel="linear")
    opts = DCDOptions() if primal else DCDOptions(primal=None)
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7, max_iter=1000, options=opts)
    assert sol.status == "optimal" and sol.certificate.ok
    ref = pr.solve("cvxpy-dual", certify=False)
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert _rel(sol.dual_objective, ref.dual_objective) < 1e-6
    assert abs(pr.y @ sol.variables.alpha) < 1e-12 * max(1, sol.variables.alpha.sum())


def test_newton_cg_step_is_the_face_minimizer():
    """Inside a wide box, one Newton-CG step (CG run to convergence) lands on the
    minimizer of the face's augmented Lagrangian, solved here in closed form."""
    from margin_opt.solvers.linear import face

    rng = np.random.default_rng(0)
    X = sp.random(30, 50, density=0.2, random_state=1, format="csr")
    rows = np.arange(30, dtype=np.int64)
    c = rng.choice([-1.0, 1.0], 30)
    v, lin, D = rng.random(30), rng.normal(size=30), np.full(30, 0.3)
    w = np.asarray(X.T @ (c * v)).ravel()
    lam, rho, e = 0.4, 2.0, float(c @ v) - 1.0
    out = face.newton_cg(face.Face(X, rows, c, v, np.full(30, -1e9), np.full(30, 1e9), lin, D),
                         w, face.Equality(lam, rho, e), max_cg=200, cg_tol=1e-12)
    # L(u) = ½‖Xᵀ(c∘u)‖² + lin·u + ½ D u² + λ(cᵀu − 1) + ρ/2 (cᵀu − 1)², Δ = 1
    A = X.toarray() * c[:, None]
    H = A @ A.T + np.diag(D) + rho * np.outer(c, c)
    exact = np.linalg.solve(H, -(lin + lam * c - rho * c))
    assert out is not None
    np.testing.assert_allclose(out[0], exact, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(out[1], np.asarray(X.T @ (c * exact)).ravel(), atol=1e-10)


def _heavy_face(m=40, d=120, seed=5):
    """A small face with power-law columns: (X, c, D)."""
    from margin_opt.datasets import make_text_like

    X, _ = make_text_like(m, d, 8, random_state=seed)
    rng = np.random.default_rng(seed)
    return X, rng.choice([-1.0, 1.0], m), rng.random(m) * 0.2


@pytest.mark.parametrize("k", [1, 7, 32])
@pytest.mark.parametrize("rho", [0.0, 1.5])
def test_heavy_columns_preconditioner_is_its_matrix_inverse(k, rho):
    """The Woodbury apply equals a dense solve with P = diag(‖tᵢ‖²) + D + C H Hᵀ C +
    ρccᵀ, H the k most frequent columns (built here from the definition), and with all
    columns heavy (floor 0) P is the face's Hessian itself: apply = A⁻¹."""
    from margin_opt.solvers.linear import face

    X, c, D = _heavy_face()
    A = X.toarray()
    counts = (A != 0).sum(axis=0)
    top = np.argsort(-counts, kind="stable")[:k]
    assert counts[top[-1]] > (counts[np.argsort(-counts, kind="stable")[k]])   # no tie
    H, T = A[:, top], np.delete(A, top, axis=1)
    E = np.maximum((T * T).sum(axis=1), 1e-3 * (A * A).sum(axis=1)) + D
    Cm = np.diag(c)
    P = np.diag(E) + Cm @ H @ H.T @ Cm + rho * np.outer(c, c)
    apply = face.heavy_columns_preconditioner(X, c, D, rho, k)
    r = np.random.default_rng(0).normal(size=c.size)
    np.testing.assert_allclose(apply(r), np.linalg.solve(P, r), rtol=1e-9, atol=1e-12)
    full = face.heavy_columns_preconditioner(X, c, D, rho, X.shape[1], floor=0.0)
    Hess = Cm @ A @ A.T @ Cm + np.diag(D) + rho * np.outer(c, c)
    np.testing.assert_allclose(full(r), np.linalg.solve(Hess, r), rtol=1e-8, atol=1e-10)


def test_heavy_columns_preconditioner_declines_a_singular_face():
    """More rows than non-empty columns (+1 with ρ): the Hessian is singular and no
    preconditioner is built (the plain CG steps apply); dense X: none either."""
    from margin_opt.solvers.linear import face

    X = sp.csr_matrix(np.kron(np.eye(3), np.ones((4, 1))))        # 12 rows, 3 columns
    c, D = np.ones(12), np.zeros(12)
    assert face.heavy_columns_preconditioner(X, c, D, 1.0, 2) is None
    Xs = sp.csr_matrix(np.eye(4))
    assert face.heavy_columns_preconditioner(Xs, np.ones(4), D[:4], 1.0, 2) \
        is not None
    assert face.heavy_columns_preconditioner(np.eye(4), np.ones(4), D[:4], 1.0,
                                             2) is None
    with pytest.raises(ValueError, match="cg_heavy_columns"):
        DCDOptions(cg_heavy_columns=-1)


@pytest.mark.parametrize("heavy", [0, 10])
def test_preconditioned_newton_cg_step_is_the_face_minimizer(heavy):
    """Inside a wide box, one Newton-CG step with the heavy-columns preconditioner
    (and without) lands on the closed-form minimizer of the face's augmented
    Lagrangian (power-law columns, signs, D and ρ > 0)."""
    from margin_opt.solvers.linear import face

    X, c, D = _heavy_face()
    m = c.size
    rng = np.random.default_rng(1)
    rows = np.arange(m, dtype=np.int64)
    v, lin = rng.random(m), rng.normal(size=m)
    w = np.asarray(X.T @ (c * v)).ravel()
    lam, rho, e = -0.3, 1.0, float(c @ v) - 2.0
    out = face.newton_cg(face.Face(X, rows, c, v, np.full(m, -1e9), np.full(m, 1e9), lin, D),
                         w, face.Equality(lam, rho, e), max_cg=300, cg_tol=1e-13,
                         heavy_columns=heavy)
    A = X.toarray() * c[:, None]
    Hess = A @ A.T + np.diag(D) + rho * np.outer(c, c)
    exact = np.linalg.solve(Hess, -(lin + lam * c - 2.0 * rho * c))
    assert out is not None
    np.testing.assert_allclose(out[0], exact, rtol=1e-7, atol=1e-9)


@pytest.fixture(scope="module")
def text_svr():
    """ε = 0 on text-like data, 1500 × 3000, and its cvxpy optimum."""
    from margin_opt.datasets import make_text_like

    X, y = make_text_like(1500, 3000, 20, regression=True, random_state=0)
    pr = SVRProblem(X, y, C=1.0, kernel="linear", epsilon=0.0)
    return pr, pr.solve("cvxpy-dual", certify=False)


@pytest.mark.parametrize("options", [dict(cg_heavy_columns=0, cg_cross_zero=False),
                                     dict(cg_heavy_columns=40), dict(cg_heavy_columns=300)])
def test_svr_with_preconditioned_cg_steps_matches_cvxpy(text_svr, options):
    """ε = 0 on text-like data (the free face ~ 40 % of the rows, where the Newton-CG
    steps apply): with and without the heavy-columns preconditioner (and the step
    across β = 0), certified at 1e-6 and the cvxpy optimum's objectives to 1e-6."""
    pr, ref = text_svr
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7, max_iter=3000,
                   options=DCDOptions(**options))
    assert sol.status == "optimal" and sol.certificate.ok
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert _rel(sol.dual_objective, ref.dual_objective) < 1e-6


@pytest.mark.parametrize("rho", [0.1])
def test_svr_retries_the_face_once_it_can_be_nonsingular(rho):
    """Dense 5000 × 300, ε = 0.1: the first Newton-CG step (on ~1000 free, beyond
    d + 1: a singular face) fails; the ~290 free at the end must still be stepped on
    (before: no step until the free set halved, 10 000 epochs and m(α) − M(α) = 1.6e-6
    at these ρ).  Certified at 1e-6, and the same objective as at ρ = 1."""
    X, y = make_regression(5000, 300, noise=5.0, random_state=0)
    X, y = X / X.std(), y / y.std()
    pr = SVRProblem(X, y, C=1.0, kernel="linear", epsilon=0.1)
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7, max_iter=10000,
                   options=DCDOptions(tube_rho_scale=rho))
    assert sol.status == "optimal" and sol.certificate.ok
    ref = pr.solve("dcd", tol=1e-6, gap_tol=9e-7, max_iter=10000,
                   options=DCDOptions(tube_rho_scale=None, rho_scale=1.0))
    assert _rel(sol.primal_objective, ref.primal_objective) < 2e-6


@pytest.mark.parametrize("P", [SVMProblem, SVRProblem])
def test_wide_sparse_with_cg_steps_matches_cvxpy(P):
    """Sparse wide data (d > n: the free face's Hessian has full rank, where the
    projected Newton-CG steps apply), the hinge and the ε = 0 tube: certified at 1e-6
    and the cvxpy optimum's objective."""
    from margin_opt.datasets import make_text_like

    X, y = make_text_like(600, 1500, 20, regression=P is SVRProblem, random_state=0)
    pr = P(X, y, C=1.0, kernel="linear", **({"epsilon": 0.0} if P is SVRProblem else {}))
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7, max_iter=3000)
    assert sol.status == "optimal" and sol.certificate.ok
    ref = pr.solve("cvxpy-dual", certify=False)
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert _rel(sol.dual_objective, ref.dual_objective) < 1e-6


@pytest.mark.parametrize("layout", ["dense", "int32", "int64"])
def test_row_kernels_with_prefetch_match_scipy(layout):
    """The compiled row operations (spans, weights, decision, a copy of some rows, gram, the
    primal Hessian; the epochs' and the Newton-CG products' prefetching, which reads
    ahead to the last row) equal scipy's products on an unsorted list of rows with
    repeats, empty rows included, for the three layouts."""
    from margin_opt.solvers.linear import coordinate as cd

    rng = np.random.default_rng(3)
    A = sp.random(70, 30, density=0.3, random_state=4, format="csr")
    A = sp.csr_matrix(A.toarray() * (rng.random((70, 1)) > 0.1))     # some empty rows
    X = A.toarray() if layout == "dense" else A
    if layout == "int64":
        X = sp.csr_matrix((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                          shape=A.shape)
    x = cd.linear_x(X)
    if layout == "int64":       # linear_x narrows the indices where they fit: built directly
        from margin_opt import _core
        x = _core.LinearX.csr(X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64),
                              X.shape[1])
    dense = layout == "dense"
    assert x.index_bits == {"dense": 0, "int32": 32, "int64": 64}[layout]
    rows = rng.integers(0, 70, 90).astype(np.int64)
    coef = rng.standard_normal(90)
    w = x.weights(rows, coef)
    np.testing.assert_allclose(w, A[rows].T @ coef, rtol=1e-12, atol=1e-12)
    v = rng.standard_normal(30)
    np.testing.assert_allclose(x.decision(rows, v), A[rows] @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.decision(None, v), A @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.row_norms(), A.multiply(A).sum(axis=1).A1, rtol=1e-12)
    np.testing.assert_allclose(x.gram(rows[:20]), (A[rows[:20]] @ A[rows[:20]].T).toarray(),
                               rtol=1e-12, atol=1e-12)
    H = np.zeros((31, 31))
    x.add_hessian(rows[:20], coef[:20], H)
    B = np.hstack([A[rows[:20]].toarray(), np.ones((20, 1))])
    np.testing.assert_allclose(np.triu(H), np.triu(B.T @ (coef[:20, None] * B)), rtol=1e-10,
                               atol=1e-12)
    xc = cd.linear_x(X[rows])               # rows copied next to each other (newton_cg)
    local = np.arange(90, dtype=np.int64)
    np.testing.assert_allclose(xc.weights(local, coef), A[rows].T @ coef, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(xc.decision(None, v), A[rows] @ v, rtol=1e-12, atol=1e-12)
    span = cd.spans(x, None if dense else X.indptr, rows)
    data = X.ravel() if dense else X.data
    indices = None if dense else X.indices
    for t, r in enumerate(rows):
        lo, hi = span[t]
        if dense:
            np.testing.assert_array_equal(data[lo:hi], A[r].toarray().ravel())
        else:
            np.testing.assert_array_equal(data[lo:hi], A[r].data)
            np.testing.assert_array_equal(indices[lo:hi], A[r].indices)


@pytest.mark.parametrize("layout", ["dense", "int32"])
def test_one_epoch_is_the_exact_coordinate_steps(clf, layout):
    """An epoch (the packed per-variable record, spans, prefetching) takes liblinear's
    exact one-variable steps: replayed in Python in the epoch's own visiting order,
    from the same start, the iterate is the same (hinge with the augmented intercept,
    and Ho and Lin's ε-SVR step)."""
    from margin_opt.solvers.linear import coordinate as cd
    from margin_opt.solvers.linear.dcd import _epoch_arrays

    X, y = clf
    Xin = X if layout == "dense" else sp.csr_matrix(X)
    x = cd.linear_x(Xin)
    n = X.shape[0]
    yy = np.where(y == 1, 1.0, -1.0)
    rows = np.arange(n, dtype=np.int64)
    qd = np.einsum("ij,ij->i", X, X)
    rng0 = np.random.default_rng(0)
    upper = np.full(n, 0.7)
    alpha = np.clip(rng0.random(n) - 0.3, 0.0, 0.7)
    lam, rho = 0.2, float(qd.mean())
    span, rec = _epoch_arrays(x, Xin, rows, qd, (yy, -np.ones(n)), upper, np.zeros(n))
    w = X.T @ (yy * alpha)
    state = cd.CDState()
    state.lam, state.rho, state.sum, state.rng = lam, rho, float(yy @ alpha), 7
    order = np.arange(n, dtype=np.int64)
    a, ww = alpha.copy(), w.copy()
    x.epoch_margin(span, rec, alpha, w, order, n, state, True, 0.0)
    sya = float(yy @ a)
    for t in order:             # the visiting order the epoch used (nothing shrunk)
        g = yy[t] * (X[t] @ ww) - 1.0 + yy[t] * (lam + rho * sya)
        new = min(max(a[t] - g / (qd[t] + rho), 0.0), 0.7)
        if abs(g) > 1e-12 and not (a[t] == 0 and g >= 0) and not (a[t] == 0.7 and g <= 0):
            ww += yy[t] * (new - a[t]) * X[t]
            sya += yy[t] * (new - a[t])
            a[t] = new
    np.testing.assert_allclose(alpha, a, atol=1e-10)
    np.testing.assert_allclose(w, ww, atol=1e-10)
    assert abs(state.sum - yy @ alpha) < 1e-10

    # ε-SVR, Ho and Lin's step in β (no intercept), ε = 0.1, u = 0.5
    z = rng0.standard_normal(n)
    beta = np.clip(rng0.standard_normal(n), -0.5, 0.5) * (rng0.random(n) < 0.5)
    span, rec = _epoch_arrays(x, Xin, rows, qd, (z, np.full(n, 0.1)), np.full(n, 0.5),
                              np.zeros(n))
    w = X.T @ beta
    b0, w0 = beta.copy(), w.copy()
    state = cd.CDState()
    state.sum, state.rng = float(beta.sum()), 11
    x.epoch_tube(span, rec, beta, w, order, n, state, False, 0.0)
    for i in order:
        g = X[i] @ w0 - z[i]
        gp, gn, h = g + 0.1, g - 0.1, qd[i]
        step = -gp / h if gp < h * b0[i] else (-gn / h if gn > h * b0[i] else -b0[i])
        if abs(step) >= 1e-12:
            new = min(max(b0[i] + step, -0.5), 0.5)
            w0 += (new - b0[i]) * X[i]
            b0[i] = new
    np.testing.assert_allclose(beta, b0, atol=1e-10)
    np.testing.assert_allclose(w, w0, atol=1e-10)


@pytest.mark.parametrize("model", ["hinge", "svr"])
def test_empty_rows_without_intercept_reach_the_cvxpy_optimum(model):
    # an empty row has no curvature without the intercept's column (hinge: Qₜₜ = 0):
    # the coordinate step runs to a bound (it raised ZeroDivisionError); d > 300 keeps
    # the few-features route out, so the epochs answer
    import cvxpy as cp
    import scipy.sparse as sp

    from margin_opt import LinearSVC, LinearSVR
    rng = np.random.default_rng(3)
    X = sp.random(300, 320, density=0.03, random_state=4, format="lil")
    X[5, :] = 0
    X[17, :] = 0
    X = X.tocsr()
    w = cp.Variable(320)
    if model == "hinge":
        y = np.where(rng.random(300) > 0.5, 1.0, -1.0)
        est = LinearSVC(loss="hinge", fit_intercept=False, C=2.0).fit(X, y)
        loss = cp.sum(cp.pos(1 - cp.multiply(y, X @ w)))
    else:
        y = rng.normal(size=300)
        y[[5, 17]] = [2.0, -3.0]
        est = LinearSVR(fit_intercept=False, C=2.0, epsilon=0.1).fit(X, y)
        loss = cp.sum(cp.pos(cp.abs(y - X @ w) - 0.1))
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 2.0 * loss))
    ref.solve(solver="CLARABEL")
    assert est.certificate_.ok
    assert est.certificate_.quantities["primal_objective"] == pytest.approx(ref.value, rel=1e-6)


def test_csr_index_types_give_one_answer():
    # scipy builds int32 indices, load_svmlight_file int64: both are read with int32
    # indices where they fit (coordinate.linear_x: less memory to stream), and dense
    # data gives the same answer
    import scipy.sparse as sp

    from margin_opt import LinearSVC
    from margin_opt.solvers.linear import coordinate

    rng = np.random.default_rng(5)
    X32 = sp.random(200, 40, density=0.2, random_state=6, format="csr")
    y = np.where(X32 @ rng.normal(size=40) > 0, 1, -1)
    y3 = np.digitize(X32 @ rng.normal(size=40), [-0.3, 0.3])
    X64 = X32.copy()
    X64.indices, X64.indptr = X64.indices.astype(np.int64), X64.indptr.astype(np.int64)
    fits = {}
    for name, X in (("32", X32), ("64", X64), ("dense", X32.toarray())):
        fits[name] = (LinearSVC().fit(X, y),                        # the epochs
                      LinearSVC(loss="hinge").fit(X, y),            # the primal route
                      LinearSVC(multi_class="crammer_singer").fit(X, y3))
    assert coordinate.linear_x(X64).index_bits == 32
    for a, b in zip(fits["32"], fits["64"], strict=True):
        np.testing.assert_array_equal(a.coef_, b.coef_)
    for a, b in zip(fits["32"], fits["dense"], strict=True):
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-7)
    assert X64.indices.dtype == np.int64            # the caller's matrix untouched


@pytest.mark.parametrize("model", ["squared_hinge", "svr"])
def test_zero_weights_without_intercept_reach_the_cvxpy_optimum(model):
    # a zero weight makes the box [0, 0]: the variable is fixed, never a violation (the
    # epochs counted its gradient as one and ran to max_iter)
    import cvxpy as cp

    from margin_opt import LinearSVC, LinearSVR
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 5))
    score = X @ rng.normal(size=5) + 0.3 * rng.normal(size=150)
    sw = rng.uniform(0.0, 2.0, 150)
    rng.normal(size=150)
    sw[::13] = 0.0
    w = cp.Variable(5)
    f = X @ w
    if model == "squared_hinge":        # this draw ran to max_iter before
        y = np.sign(score + 0.5 * rng.normal(size=150))
        y[y == 0] = 1.0
        est = LinearSVC(C=10.0, fit_intercept=False).fit(X, y, sample_weight=sw)
        loss = sw @ cp.square(cp.pos(1 - cp.multiply(y, f)))
    else:
        y = X @ rng.normal(size=5) + 0.3 * rng.normal(size=150)
        est = LinearSVR(C=10.0, epsilon=0.1, fit_intercept=False).fit(X, y, sample_weight=sw)
        loss = sw @ cp.pos(cp.abs(y - f) - 0.1)
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 10.0 * loss))
    ref.solve(solver="CLARABEL")
    assert est.certificate_.ok
    assert est.certificate_.quantities["primal_objective"] == pytest.approx(ref.value, rel=1e-6)


@pytest.mark.parametrize("P", [SVMProblem, SquaredHingeProblem, SVRProblem])
@pytest.mark.parametrize("opts", [dict(rho_scale=0.01, rho_growth=1.0), dict(rho_scale=0.01),
                                  dict(), dict(rho_scale=3.0)])
def test_free_intercept_at_any_rho_reaches_the_clarabel_optimum(P, opts):
    """The free intercept by the method of multipliers at a tiny ρ (λ ← b slow; with and
    without ρ's growth), the default and a large one, shrinking on (the run may end on
    the exact check with variables still shrunk; the multiplier steps wait for them):
    certified at 1e-6 and the cvxpy (Clarabel) optimum's objective to 1e-6."""
    from margin_opt.datasets import make_text_like

    X, y = make_text_like(400, 300, 15, regression=P is SVRProblem, random_state=2)
    extra = {"epsilon": 0.05} if P is SVRProblem else {}
    pr = P(X, y, C=1.0, kernel="linear", **extra)
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7, max_iter=5000,
                   options=DCDOptions(primal=None, **opts))
    assert sol.status == "optimal" and sol.certificate.ok
    assert abs(pr.y @ sol.variables.alpha if P is not SVRProblem else
               np.sum(sol.variables.alpha - sol.variables.alpha_star)) < 1e-10
    ref = pr.solve("cvxpy-dual", certify=False)
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert set(sol.timings) >= {"epochs", "newton", "check"}


def test_rho_options_are_checked():
    for bad in (dict(rho_growth=0.5), dict(rho_growth_below=0.0), dict(rho_growth_below=2.0),
                dict(rho_growth_max=0.5)):
        with pytest.raises(ValueError, match="rho_growth"):
            DCDOptions(**bad)
