"""Truth on every input: certified by default, no false certificate, clear errors.

Each test reproduces a case that failed before (issue 11) and checks it against an
independent reference: the cvxpy optimum, an eigenvalue computed by numpy, or the
error a user should see.
"""

import warnings

import numpy as np
import pytest

from margin_opt import SVC, SVR, SVMProblem, SVRProblem
from margin_opt.exceptions import (
    ConvergenceWarning,
    InaccurateSolutionWarning,
    NonConvexWarning,
    NotCertifiedError,
    SolverError,
)
from margin_opt.problems import solve_path


@pytest.fixture(scope="module")
def bc(breast_cancer):
    return breast_cancer.X[:200], breast_cancer.y[:200]


# ------------------------------------------------------------------ non-convex problems

@pytest.mark.parametrize("kernel,kw", [("sigmoid", {"gamma": 2.0, "coef0": 1.0}),
                                       (lambda A, B: -(A @ B.T), {})])
def test_non_psd_kernel_never_certifies(bc, kernel, kw):
    X, y = bc
    p = SVMProblem(X, y, kernel=kernel, **kw)
    K = p.gram()
    assert np.linalg.eigvalsh(K)[0] < -1.0          # independent: numpy's spectrum
    duals = []
    for seed in range(3):                           # SMO from different starting points
        alpha0 = np.random.default_rng(seed).uniform(0, 1, y.size) if seed else None
        with pytest.warns(NonConvexWarning, match="not positive semidefinite"):
            sol = p.solve("smo", tol=1e-6, alpha0=alpha0)
        assert sol.status == "optimal_inaccurate"
        cert = p.certify(sol, tol=1e-5)
        assert not cert.ok and "psd_kernel" in cert.failed()
        assert "not positive semidefinite" in str(cert) and "stationary point" in str(cert)
        duals.append(sol.dual_objective)
    with pytest.raises(ValueError, match="not positive semidefinite"):
        p.solve("cvxpy-dual")


def test_sigmoid_svc_warns_at_fit(bc):
    X, y = bc
    with pytest.warns(NonConvexWarning):
        clf = SVC(kernel="sigmoid", gamma=2.0, coef0=1.0).fit(X, y)
    assert not clf.certificate_.ok


def test_psd_sigmoid_is_certified():
    """Where the sigmoid Gram matrix is PSD on the data, the fit certifies (no warning)."""
    X = np.random.default_rng(0).normal(size=(20, 60))
    y = np.r_[np.zeros(10), np.ones(10)]
    p = SVMProblem(X, y, kernel="sigmoid", gamma=0.01, coef0=0.0)   # ≈ 0.01·xᵀz: PSD here
    assert np.linalg.eigvalsh(p.gram())[0] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvexWarning)
        clf = SVC(kernel="sigmoid", gamma=0.01, coef0=0.0).fit(X, y)
    assert clf.certificate_.ok and clf.certificate_.psd_kernel == 0.0


# ------------------------------------------------------------------ certified by default

def _small_inaccurate_problem():
    """A 6-point RBF problem with C = 10 where SMO at tol 1e-6 meets m − M ≤ tol but its
    duality gap exceeds 1e-6 relative (found by the agreement search)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(6, 2))
    y = np.array([0, 1, 0, 1, 1, 0])
    return SVMProblem(X, y, C=10.0, kernel="rbf", gamma=1.0)


def test_optimal_only_when_the_certificate_holds(bc):
    X, y = bc
    p = SVMProblem(X, y, C=1.0, kernel="rbf")
    loose = p.solve("smo", tol=1e-1, certify=1e-6)      # a loose run, held to 1e-6
    if not loose.certificate.ok:
        assert loose.status == "optimal_inaccurate"
    good = p.solve("smo", tol=1e-6)
    assert good.status == "optimal" and good.certificate.ok


def test_fallback_repairs_and_records(bc):
    X, y = bc
    p = SVMProblem(X, y, C=1.0, kernel="rbf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = p.solve("smo", tol=0.5, max_iter=3, certify=1e-6, fallback=True)
    assert sol.certificate.ok and sol.attempts[0]["method"] == "smo"
    assert sol.attempts[0]["failed"] and "fallback" in " ".join(sol.certificate.notes)
    ref = p.solve("cvxpy-dual")
    assert abs(sol.dual_objective - ref.dual_objective) <= 1e-6 * ref.dual_objective


def test_not_certified_error_says_why(bc):
    X, y = bc
    assert solve_path.FallbackOptions().exact_max_n == 2500
    p = SVMProblem(X, y, C=1.0, kernel="rbf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotCertifiedError, match="smo ended max_iter.*cvxpy-dual") as e:
            p.solve("smo", max_iter=3, certify=1e-6,
                    fallback=solve_path.FallbackOptions(exact_max_n=10))
    assert f"not tried at n = {X.shape[0]} > 10 with a kernel" in str(e.value)


def test_estimator_default_is_certified_even_where_smo_alone_is_not():
    p = _small_inaccurate_problem()
    clf = SVC(C=10.0, kernel="rbf", gamma=1.0).fit(p.X, p.classes_[(p.y > 0).astype(int)])
    assert clf.certificate_.ok and clf.solution_.status == "optimal"


def test_cubic_kernel_through_its_monomials_where_the_dense_dual_fails():
    # found by `margin-opt bench truth` (seed 3072605250): a cubic kernel with entries
    # ~1e6 and a large C; Clarabel fails on the dual written with the dense kernel
    # matrix, SMO stalls; the default fit certifies (through the kernel's 35 monomials
    # where the answer is refined in the primal)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(84, 4)) * 5.0
    y = X @ rng.normal(size=4) + rng.normal(scale=0.3, size=84)
    w = rng.uniform(0, 2, 84) * (rng.uniform(size=84) > 0.2)
    params = dict(C=226.0, epsilon=0.0, kernel="poly", gamma=0.33, degree=3, coef0=1.0)
    p = SVRProblem(X, y, sample_weight=w, **params)
    assert p.data.w_basis().shape == (84, 35)
    with pytest.raises(SolverError):
        p.solve("cvxpy-dual", quad_form="quad_form")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg = SVR(**params).fit(X, y, sample_weight=w)
    assert reg.certificate_.ok and reg.solution_.method != "smo"
    assert [a["method"] for a in reg.solution_.attempts][0] == "smo"
    ref = p.solve("cvxpy-loss")                 # the unconstrained ε-insensitive form
    assert abs(reg.solution_.primal_objective - ref.primal_objective) <= \
        1e-6 * abs(ref.primal_objective)


# ------------------------------------------------------------------ numerics

def test_rbf_far_from_the_origin_certifies(bc):
    X, y = bc
    near = SVMProblem(X, y, kernel="rbf", gamma=0.05).solve("cvxpy-dual")
    far = SVMProblem(X + 1e6, y, kernel="rbf", gamma=0.05)
    sol = far.solve("smo", tol=1e-6)
    assert sol.status == "optimal" and sol.certificate.ok
    assert abs(sol.dual_objective - near.dual_objective) <= 1e-6 * near.dual_objective


@pytest.mark.parametrize("weights", ["sample", "class"])
def test_weightless_class_gives_a_finite_certified_intercept(bc, weights):
    X, y = bc
    sw = np.where(y == 1, 0.0, 1.0) if weights == "sample" else None
    cw = {1.0: 0.0} if weights == "class" else None
    p = SVMProblem(X, y, C=1.0, kernel="rbf", sample_weight=sw, class_weight=cw)
    sol = p.solve("smo", tol=1e-6)
    ref = p.solve("cvxpy-dual")
    assert np.isfinite(sol.b) and sol.certificate.ok
    assert abs(sol.dual_objective - ref.dual_objective) <= 1e-6 * max(1, ref.dual_objective)
    # the estimator, as scikit-learn's, asks for a class with positive weight
    with pytest.raises(ValueError, match="no sample with positive weight"):
        SVC(class_weight={1.0: 0.0}).fit(X, y)


def test_inaccurate_cvxpy_answer_warns(bc):
    X, y = bc
    with pytest.warns(InaccurateSolutionWarning):
        sol = SVMProblem(X, y, kernel="rbf").solve("cvxpy-dual", solver="SCS", max_iters=20)
    assert sol.status == "optimal_inaccurate" and not sol.certificate.ok


# ------------------------------------------------------------------ clear errors

def test_bad_inputs_get_specific_errors(bc):
    X, y = bc
    cases = [
        (lambda: SVMProblem(X, y, fit_intercept="no"), "fit_intercept must be True or False"),
        (lambda: SVMProblem(X, y, C=1e300), "C=np.inf for the hard margin"),
        (lambda: SVMProblem(X * 1e300, y).solve("cvxpy-dual"), "too large"),
        (lambda: SVMProblem(X * 1e200, y, kernel="rbf").solve("smo"), "too large"),
        (lambda: SVMProblem(X, y, kernel=lambda A, B: np.full((len(A), len(B)), np.nan))
         .solve("smo"), "NaN or infinite values"),
        (lambda: SVMProblem(X[:4], np.array([1, "a", 1, "a"], dtype=object)),
         "mixes strings"),
        (lambda: SVRProblem(X, y).certify(SVMProblem(X, y).solve()), "is SVRProblem"),
    ]
    for make, match in cases:
        with pytest.raises(ValueError, match=match):
            make()


def test_solver_failures_are_ours(bc):
    X, y = bc
    p = SVMProblem(X * 1e140, y)
    try:
        p.solve("cvxpy-dual")
    except (SolverError, ValueError):
        pass                                    # ours, with a message saying what to do


def test_verify_on_a_directory_is_an_error_not_a_traceback(capsys, tmp_path):
    from margin_opt import cli

    assert cli.main(["verify", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


# ------------------------------------------------------------------ the hard margin

@pytest.mark.parametrize("fit_intercept", [True, False])
def test_hard_margin_not_separable_is_decided_by_the_lp(fit_intercept):
    from sklearn.datasets import make_classification

    from margin_opt import NotSeparableError, separability

    X, y = make_classification(2000, 20, flip_y=0.1, random_state=0)
    with pytest.raises(NotSeparableError, match="Farkas certificate"):
        SVMProblem(X, y, C=np.inf, fit_intercept=fit_intercept).solve("smo")
    # independent check of the certificate: λ ≥ 0, one per class, Σλᵢyᵢxᵢ = 0
    r = separability(X, y, fit_intercept=fit_intercept)
    lam, s = r.farkas, np.where(y == 1, 1.0, -1.0)
    assert np.all(lam >= 0)
    if fit_intercept:
        assert abs(lam[s > 0].sum() - 1) < 1e-9 and abs(lam[s < 0].sum() - 1) < 1e-9
    scale = np.abs(X).T @ lam
    assert np.max(np.abs(X.T @ (s * lam)) / scale) < 1e-7


def test_hard_margin_separable_data_is_never_called_inseparable(breast_cancer):
    """Standardized breast_cancer is linearly separable (its hard margin certifies in
    cvxpy); the old radius rule in SMO called it inseparable."""
    X, y = breast_cancer.X, breast_cancer.y
    ref = SVMProblem(X, y, C=np.inf).solve("cvxpy-dual")
    assert ref.certificate.ok
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SVC(kernel="linear", C=np.inf).fit(X, y)
    assert clf.certificate_.ok
    assert abs(clf.solution_.dual_objective - ref.dual_objective) <= 1e-6 * ref.dual_objective


def _scaled_reference(X, y, C):
    """The raw-feature linear SVM solved by cvxpy in standardized coordinates
    (v = σ∘w, the norm weighted back): the same optimum, a well-scaled problem."""
    import cvxpy as cp

    mu, sd = X.mean(axis=0), X.std(axis=0)
    Xs = (X - mu) / sd
    v, b = cp.Variable(X.shape[1]), cp.Variable()
    margins = cp.multiply(y, Xs @ v + b)
    obj = 0.5 * cp.sum_squares(cp.multiply(v, 1 / sd))
    if np.isinf(C):
        prob = cp.Problem(cp.Minimize(obj), [margins >= 1])
    else:
        prob = cp.Problem(cp.Minimize(obj + C * cp.sum(cp.pos(1 - margins))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # "may be inaccurate" on the hard margin
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return prob.value


@pytest.mark.parametrize("C", [1.0, 1e4, np.inf])
def test_unscaled_breast_cancer(breast_cancer_raw, C):
    """Raw features (0.001 to 4000), linear kernel: every C certifies at 1e-6, the hard
    margin included (multipliers ~7e7 times kernel entries ~8e6: f = Kβ is known only
    to ~0.3 in double, f = Xw to ~1e-8, so the answer is refined and checked in the
    primal), and agrees with cvxpy on the standardized coordinates."""
    X, y = breast_cancer_raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SVC(kernel="linear", C=C).fit(X, y)
    sol, cert = clf.solution_, clf.certificate_
    assert cert.ok and sol.status == "optimal"
    ref = _scaled_reference(X, 2.0 * y - 1, C)
    # the reference's interior point is itself inaccurate on the hard margin (its
    # margins are off by 3e-4): 1e-5 there; to rounding on the soft margins
    assert sol.primal_objective == pytest.approx(ref, rel=1e-5 if np.isinf(C) else 1e-9)
    if C == 1.0:        # the optimum; LIBSVM stops 2 % above it
        assert sol.dual_objective == pytest.approx(48.8757257, rel=1e-6)
    if np.isinf(C):
        yf = (2.0 * y - 1) * clf.decision_function(X)
        assert yf.min() >= 1 - 1e-6
        assert sol.method == "active-set"


def test_a_repaired_fit_does_not_warn(breast_cancer_raw):
    """SMO stalls on the raw features and the fallback certifies: the stall is in
    ``solution_.attempts``, and no ConvergenceWarning is left beside a certified answer."""
    X, y = breast_cancer_raw
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = SVC(kernel="linear", C=1.0).fit(X, y)
    assert clf.certificate_.ok
    assert clf.solution_.attempts[0]["method"] == "smo"
    assert clf.solution_.attempts[0]["status"] == "stalled"


def test_unscaled_hard_margin_certificate_fails_on_wrong_answers(breast_cancer_raw):
    """The primal reading of the certificate is no looser: a w shrunk by 1e-6, or one
    multiplier moved by 1e-4 of itself, fails; and the m − M gap read from Kβ (the
    dual side) would fail the right answer at its rounding level (~4e-2)."""
    from margin_opt import kkt

    X, y = breast_cancer_raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SVC(kernel="linear", C=np.inf).fit(X, y)
    sol = clf.solution_
    p = SVMProblem(X, 2.0 * y - 1, C=np.inf, kernel="linear")
    v = sol.variables
    shrunk = p.solution_from_primal(v.w * (1 - 1e-6), sol.b, alpha=v.alpha)
    assert "primal_residual" in p.certify(shrunk).failed()
    alpha = v.alpha.copy()
    k = int(np.argmax(alpha))
    alpha[k] *= 1 + 1e-4
    moved = p.solution_from_primal(v.w, sol.b, alpha=alpha)
    assert "dual_residual" in p.certify(moved).failed()
    qp = p.to_standard_form()
    f0 = p.data.combination(p.coefficients(v.alpha))
    dual_side = kkt.violating_pair_gap(qp.y, v.alpha, qp.y * f0 + qp.p, qp.upper,
                                       1e-3, max(1.0, v.alpha.max()))
    assert dual_side > 1e-3


def test_multipliers_must_reproduce_the_certified_f(breast_cancer_raw):
    """Where f is read through w (Kβ known only to 1e-4 at C = 1e4), β must still give
    f = Φw within tol + 2 × that level: two multipliers of one class moved by ±4e-7
    (1.6e-10 of themselves) keep stationarity in w to 5e-7 and every other check,
    but move Kβ by 0.13, and the certificate fails on f_consistency (found in review)."""
    X, y = breast_cancer_raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SVC(kernel="linear", C=1e4).fit(X, y)
    sol = clf.solution_
    v = sol.variables
    p = SVMProblem(X, 2.0 * y - 1, C=1e4, kernel="linear")
    assert p.certify(sol).ok
    alpha, ys = v.alpha.copy(), 2.0 * y - 1
    free = np.flatnonzero((alpha > 1e-3) & (alpha < 1e4 - 1e-3))
    k = free[0]
    m = next(t for t in free[1:] if ys[t] == ys[k])
    eps = 0.5e-6 * np.abs(v.w).max() / np.abs(X[k] - X[m]).max()
    alpha[k] += eps
    alpha[m] -= eps
    cert = p.certify(p.solution_from_weights(v.w, sol.b, alpha))
    assert cert.failed() == ["f_consistency"]


def test_a_non_convex_run_that_stops_short_still_warns():
    # with fallback, a first run's ConvergenceWarning is held back for the repairs; a
    # non-convex problem is not repaired, so it must still be said (found in review)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    p = SVMProblem(X, np.where(X[:, 0] > 0, 1.0, -1.0), kernel="sigmoid", gamma=2.0,
                   coef0=1.0)
    with pytest.warns(NonConvexWarning), pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = p.solve("smo", fallback=True, max_iter=5)
    assert sol.status == "max_iter"


def test_rounding_advice_when_nothing_certifies(monkeypatch, breast_cancer_raw):
    """Where no answer certifies and the residuals are at the rounding level of Kβ, the
    error says so and names no useful tolerance (the unscaled hard margin, with the
    primal refinement switched off)."""
    X, y = breast_cancer_raw
    monkeypatch.setattr(solve_path, "_active_set", lambda *a: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotCertifiedError, match="mvp_gap") as info:
            SVC(kernel="linear", C=np.inf).fit(X, y)
    # f = Kβ is known only to ~0.3 there (multipliers ~7e7 times kernel entries ~8e6),
    # no tolerance to ask for, and no C to lower
    assert "rounding level" in str(info.value)
    assert "nor any useful tolerance" in str(info.value)
    assert "smaller C" not in str(info.value)


def _cubic_svr_unscaled(seed=0, n=40):
    # the slow search's failing family: ε-SVR, cubic kernel, unscaled 1-D data
    # (kernel entries ~1e8), C = 1e3, ε = 0
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1)) * 10
    y = X[:, 0] * rng.normal() + rng.normal(scale=0.3, size=n)
    return X, y, dict(kernel="poly", degree=3, gamma=1.0, coef0=1.0, C=1000.0, epsilon=0.0)


def test_rounding_level_exact_and_its_bound():
    # u·maxᵢ Σⱼ|Kᵢⱼβⱼ| against scikit-learn's kernel matrix; beyond the exact size the
    # Cauchy–Schwarz bound, which is never below it
    from sklearn.metrics.pairwise import polynomial_kernel

    X, y, kw = _cubic_svr_unscaled()
    problem = SVRProblem(X, y, **kw)
    beta = np.random.default_rng(1).normal(size=X.shape[0]) * 100
    beta[::3] = 0.0
    K = polynomial_kernel(X, X, degree=3, gamma=1.0, coef0=1.0)
    want = np.finfo(float).eps / 2 * (np.abs(K) @ np.abs(beta)).max()
    level, k_max = problem.data.rounding_level(beta)
    assert level == pytest.approx(want, rel=1e-12)
    assert k_max == pytest.approx(np.abs(K[:, beta != 0]).max(), rel=1e-12)
    # a fresh problem (no kernel matrix at hand) above exact_max: the bound
    bound, _ = SVRProblem(X, y, **kw).data.rounding_level(beta, exact_max=0)
    assert want <= bound <= 50 * want


@pytest.mark.parametrize("seed", range(6))
def test_unscaled_cubic_certifies_through_its_monomials(seed):
    # the slow search's failing family: f = Kβ is known only to ~2e-5 from the
    # multipliers, but the kernel's 4 monomials are explicit and f = Φw is known to
    # ~1e-12: the default fit certifies at 1e-6 and agrees with the ε-insensitive form
    X, y, kw = _cubic_svr_unscaled(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = SVR(**kw).fit(X, y)
    assert reg.certificate_.ok
    problem = SVRProblem(X, y, **kw)
    level, _ = problem.data.rounding_level(
        problem.coefficients(reg.solution_.variables.standard_alpha))
    assert level > 1e-6                          # no dual reading could have vouched
    ref = problem.solve("cvxpy-loss")
    assert reg.solution_.primal_objective == pytest.approx(ref.primal_objective, rel=1e-6)


def test_not_certified_names_the_rounding_level_and_its_advice_works():
    # the same problems through their kernel matrix (precomputed: no feature map, so
    # no w): no double-precision answer certifies at 1e-6; the error says that the
    # residuals are at the rounding level of f = Kβ and what to do; both remedies work
    import re

    from sklearn.preprocessing import StandardScaler

    X, y, kw = _cubic_svr_unscaled()
    cubic = {"kernel": "precomputed", "C": kw["C"], "epsilon": kw["epsilon"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotCertifiedError, match="rounding level") as info:
            SVR(**cubic).fit((X @ X.T + 1.0) ** 3, y)
        tol = float(re.search(r"tol ≥ ([0-9e.+-]+)\.", str(info.value)).group(1))
        assert 1e-5 <= tol <= 1e-2
        assert SVR(tol=tol, **cubic).fit((X @ X.T + 1.0) ** 3, y).certificate_.ok
        Xs = StandardScaler().fit_transform(X)
        assert SVR(**cubic).fit((Xs @ Xs.T + 1.0) ** 3, y).certificate_.ok


def test_rounding_level_of_a_scaled_problem_is_negligible():
    # the diagnosis is only for answers at the rounding level: on scaled features
    # (kernel entries ≤ 1) the level is far below any tolerance
    X, y, _ = _cubic_svr_unscaled()
    problem = SVRProblem(X / 10, y, kernel="rbf", gamma=1.0, C=1.0, epsilon=0.1)
    sol = problem.solve("smo", tol=1e-6)
    level, _ = problem.data.rounding_level(problem.coefficients(sol.variables.standard_alpha))
    assert 0 < level < 1e-12
