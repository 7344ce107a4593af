"""The one-class SVM against independent references: scikit-learn's OneClassSVM (LIBSVM),
the cvxpy optimum of Schölkopf et al.'s primal and dual, and the ν-property.

Agreement with scikit-learn is held to what its LIBSVM can give: it caches the kernel
in float32, so its multipliers are within ~3e-6 of the exact optimum even at
tol=1e-10 (its answer's own m(α) − M(α), read in double, is ~2e-7 there).  The
tolerances below: ``dual_coef_`` 1e-5 absolute (multipliers in [0, 1]), ``offset_``
1e-6 relative, ``decision_function`` 1e-5 × max(1, ρ), ``support_`` equal.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_wine
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.svm import OneClassSVM as SkOneClassSVM
from sklearn.utils._param_validation import InvalidParameterError

from margin_opt import ConvergenceWarning, OneClassProblem, OneClassSVM, Solution
from margin_opt.estimators import one_class as one_class_estimator
from margin_opt.problems import one_class as one_class_module
from margin_opt.standard_forms import DualQP

#: the agreement with scikit-learn's LIBSVM (see the module docstring)
ALPHA_ATOL, RHO_RTOL, F_RTOL = 1e-5, 1e-6, 1e-5


@pytest.fixture(scope="module")
def cancer(breast_cancer):
    return breast_cancer.X                      # 569 × 30, standardized


@pytest.fixture(scope="module")
def digits():
    return load_digits().data / 16.0            # 1797 × 64 in [0, 1], mostly zeros


@pytest.fixture(scope="module")
def wine():
    return StandardScaler().fit_transform(load_wine().data)     # 178 × 13


def assert_matches_sklearn(ours, theirs, X, rows=None):
    """support_, dual_coef_, offset_/intercept_, decision_function and predict agree.
    ``rows``: the rows of X scikit-learn saw (weights ≤ 0 drop samples there)."""
    rows = np.arange(ours.shape_fit_[0]) if rows is None else rows
    np.testing.assert_array_equal(ours.support_, rows[theirs.support_])
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    # CSR where fitted on sparse X, as scikit-learn's (sparse in, sparse out)
    for name in ("dual_coef_", "support_vectors_"):
        assert sp.issparse(getattr(ours, name)) == sp.issparse(getattr(theirs, name)), name
    theirs_coef, ours_coef = (c.toarray() if sp.issparse(c) else c
                              for c in (theirs.dual_coef_, ours.dual_coef_))
    np.testing.assert_allclose(ours_coef, theirs_coef, rtol=0, atol=ALPHA_ATOL)
    np.testing.assert_allclose(ours.offset_, theirs.offset_, rtol=RHO_RTOL)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=RHO_RTOL)
    scale = max(1.0, abs(theirs.offset_[0]))
    f = ours.decision_function(X)
    np.testing.assert_allclose(f, theirs.decision_function(X), rtol=0, atol=F_RTOL * scale)
    np.testing.assert_allclose(ours.score_samples(X), theirs.score_samples(X), rtol=0,
                               atol=F_RTOL * scale)
    clear = np.abs(f) > 10 * F_RTOL * scale      # the points on the boundary are ties
    np.testing.assert_array_equal(ours.predict(X)[clear], theirs.predict(X)[clear])
    assert ours.certificate_.ok and ours.fit_status_ == 0


# ---------------------------------------------------------------------- scikit-learn

@pytest.mark.parametrize("nu,gamma", [(0.1, "scale"), (0.5, "scale"), (0.3, 0.01)])
def test_matches_sklearn_on_breast_cancer(cancer, nu, gamma):
    ours = OneClassSVM(nu=nu, gamma=gamma).fit(cancer)
    theirs = SkOneClassSVM(nu=nu, gamma=gamma, tol=1e-10).fit(cancer)
    assert_matches_sklearn(ours, theirs, cancer)
    assert ours.shape_fit_ == theirs.shape_fit_ and ours.n_features_in_ == 30


def test_matches_sklearn_on_digits_dense_and_sparse(digits):
    ours = OneClassSVM(nu=0.2).fit(digits)
    theirs = SkOneClassSVM(nu=0.2, tol=1e-10).fit(digits)
    assert_matches_sklearn(ours, theirs, digits)
    Xs = sp.csr_matrix(digits)
    ours_s = OneClassSVM(nu=0.2).fit(Xs)
    assert_matches_sklearn(ours_s, SkOneClassSVM(nu=0.2, tol=1e-10).fit(Xs), Xs)
    assert sp.issparse(ours_s.support_vectors_)
    np.testing.assert_array_equal(ours_s.support_, ours.support_)
    np.testing.assert_allclose(ours_s.decision_function(Xs), ours.decision_function(digits),
                               atol=1e-9 * ours.offset_[0])


def test_matches_sklearn_linear_weighted_and_precomputed(breast_cancer_raw, cancer):
    X = MinMaxScaler().fit_transform(breast_cancer_raw[0])    # off the origin: ρ > 0
    ours = OneClassSVM(nu=0.3, kernel="linear").fit(X)
    theirs = SkOneClassSVM(nu=0.3, kernel="linear", tol=1e-10).fit(X)
    assert_matches_sklearn(ours, theirs, X)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=ALPHA_ATOL * 10)
    np.testing.assert_allclose(ours.coef_, ours.dual_coef_ @ ours.support_vectors_)
    # LIBSVM's weights: 0 ≤ αᵢ ≤ sᵢ, Σα = νΣs; a weight ≤ 0 drops the sample
    sw = np.random.default_rng(0).uniform(0.2, 3.0, cancer.shape[0])
    sw[:10] = 0.0
    ours = OneClassSVM(nu=0.3).fit(cancer, sample_weight=sw)
    theirs = SkOneClassSVM(nu=0.3, tol=1e-10).fit(cancer, sample_weight=sw)
    assert_matches_sklearn(ours, theirs, cancer, rows=np.flatnonzero(sw > 0))
    assert ours.dual_coef_.sum() == pytest.approx(0.3 * sw.sum(), rel=1e-12)
    K = rbf_kernel(cancer, gamma=0.05)
    ours = OneClassSVM(nu=0.3, kernel="precomputed").fit(K)
    theirs = SkOneClassSVM(nu=0.3, kernel="precomputed", tol=1e-10).fit(K)
    assert_matches_sklearn(ours, theirs, K[:100])


def test_certifies_sklearns_answer(cancer):
    """LIBSVM's answer read into our problem certifies at its accuracy (float32 cache)."""
    theirs = SkOneClassSVM(nu=0.3, tol=1e-10).fit(cancer)
    problem = OneClassProblem(cancer, nu=0.3)
    sol = Solution.from_sklearn(theirs, problem)
    assert problem.certify(sol, tol=1e-5).ok
    assert sol.b == theirs.intercept_[0]
    mine = problem.solve("smo", tol=1e-8)
    assert abs(sol.dual_objective - mine.dual_objective) < 1e-9 * abs(mine.dual_objective)
    with pytest.raises(ValueError, match="nu=0.3"):
        OneClassProblem(cancer, nu=0.5).solution_from_sklearn(theirs)


# ---------------------------------------------------------------------- cvxpy

def test_objectives_agree_with_the_cvxpy_primal_and_dual(wine):
    """Schölkopf et al.'s primal and dual, solved by cvxpy as printed: the same optimum,
    and (× s² = (νn)², LIBSVM's scale) SMO's."""
    nu = 0.2
    problem = OneClassProblem(wine, nu=nu)
    primal, dual = problem.primal(), problem.dual()
    assert "rho" in str(primal) and "alpha" in str(dual)
    primal.solve(solver="CLARABEL")
    dual.solve(solver="CLARABEL")
    assert abs(primal.value + dual.value) < 1e-7 * abs(dual.value)   # P* = −½αᵀKα = −D*
    s = nu * wine.shape[0]
    assert problem.scale == pytest.approx(s)
    smo = problem.solve("smo", tol=1e-9)
    assert smo.certificate.ok
    assert abs(smo.dual_objective - s * s * primal.value) < 1e-7 * abs(smo.dual_objective)
    assert abs(smo.primal_objective - smo.dual_objective) < 1e-9 * abs(smo.dual_objective)
    # ρ is the multiplier of Σα = 1; the paper's α × s are LIBSVM's
    np.testing.assert_allclose(s * dual.var_dict["alpha"].value, smo.alpha, atol=1e-5)
    assert s * primal.var_dict["rho"].value == pytest.approx(-smo.b, rel=1e-6)
    for method in ("cvxpy-dual", "cvxpy-primal"):
        sol = problem.solve(method)
        assert sol.certificate.ok, (method, sol.certificate.failed())
        assert abs(sol.dual_objective - smo.dual_objective) < 1e-7 * abs(smo.dual_objective)
        assert sol.b == pytest.approx(smo.b, rel=1e-6)


def test_standard_form_is_libsvms_and_smo_solves_it(wine):
    problem = OneClassProblem(wine, nu=0.25)
    qp = problem.to_standard_form()
    n = wine.shape[0]
    assert isinstance(qp, DualQP) and qp.equality
    np.testing.assert_array_equal(qp.y, np.ones(n))
    np.testing.assert_array_equal(qp.p, np.zeros(n))
    np.testing.assert_array_equal(qp.upper, np.ones(n))
    assert qp.delta == pytest.approx(0.25 * n)
    sol = problem.solve("smo", tol=1e-8)          # the registry's SMO, C-SVC's own
    assert sol.method == "smo" and sol.status == "optimal" and sol.certificate.ok
    assert sol.alpha.sum() == pytest.approx(0.25 * n, rel=1e-12)
    assert qp.objective(sol.alpha) == pytest.approx(-sol.dual_objective, rel=1e-12)
    # SMO's own gap test (the estimators' gap_tol) leaves out the primal's Δ·b: not
    # passed on where Δ ≠ 0, so the run ends optimal, not stalled
    assert problem.solve("smo", tol=1e-6, gap_tol=9e-7).status == "optimal"
    # ρ as LIBSVM reads it: the mean of (Kα)ᵢ over the free multipliers
    Kalpha = rbf_kernel(wine, gamma=problem.kernel.gamma) @ sol.alpha
    free = (sol.alpha > 0) & (sol.alpha < 1)
    assert free.any() and -sol.b == pytest.approx(Kalpha[free].mean(), rel=1e-9)
    text = str(problem)
    assert "Σᵢ αᵢ = 1" in text and "Σα = 44.5" in text and "smo" in text
    assert problem._repr_latex_().startswith("$")


# ---------------------------------------------------------------------- the ν-property

@pytest.mark.parametrize("nu", [0.02, 0.1, 0.3, 0.6, 0.9, 1.0])
def test_nu_property_holds(cancer, nu):
    """Outliers (ξ > tol) ≤ ν ≤ support vectors, read from the fitted model itself."""
    model = OneClassSVM(nu=nu).fit(cancer)
    cert = model.certificate_
    assert cert.ok and cert.nu_property == 0.0
    n = cancer.shape[0]
    f = model.decision_function(cancer)
    outliers = np.mean(f < -model.tol)
    assert outliers <= nu <= model.support_.size / n
    assert cert.quantities["outlier_fraction"] == pytest.approx(outliers)
    assert cert.quantities["support_fraction"] == pytest.approx(model.support_.size / n)
    inside = np.setdiff1d(np.arange(n), model.support_)     # α = 0: f ≥ 0 (to tol)
    assert np.all(f[inside] >= -model.tol)
    if nu == 1.0:       # every α at its bound; ρ = max(Kα), the finite end of its optima
        np.testing.assert_allclose(model.dual_coef_, 1.0)
        assert f.max() == pytest.approx(0.0, abs=1e-9 * model.offset_[0])
        assert np.isfinite(model.offset_[0])


def test_nu_property_with_weights(wine):
    sw = np.random.default_rng(1).uniform(0.1, 5.0, wine.shape[0])
    model = OneClassSVM(nu=0.3).fit(wine, sample_weight=sw)
    q = model.certificate_.quantities
    f = model.decision_function(wine)
    assert sw[f < -model.tol].sum() / sw.sum() == pytest.approx(q["outlier_fraction"])
    assert q["outlier_fraction"] <= 0.3 <= q["support_fraction"]
    assert model.certificate_.ok


# ---------------------------------------------------------------------- the certificate

def test_certificate_fails_on_a_wrong_answer(cancer):
    problem = OneClassProblem(cancer, nu=0.3)
    good = problem.solve("smo", tol=1e-8)
    assert problem.certify(good, tol=1e-6).ok
    alpha = good.alpha.copy()
    # mass moved from a bounded multiplier to one at 0: feasible, Σα kept, not optimal
    i = np.flatnonzero(alpha == 1.0)[0]
    j = np.flatnonzero(alpha == 0.0)[0]
    alpha[i], alpha[j] = 0.5, 0.5
    wrong = problem.certify(alpha=alpha, tol=1e-6)
    assert not wrong.ok
    assert {"complementary_slackness", "mvp_gap"} <= set(wrong.failed())
    # the right multipliers with a wrong ρ: twice as many outliers as ν allows
    f = good.decision - good.b       # Kα
    rho = np.quantile(f, 0.6)
    wrong = problem.certify(alpha=good.alpha, b=-rho, tol=1e-6)
    assert not wrong.ok
    assert {"nu_property", "complementary_slackness", "duality_gap"} <= set(wrong.failed())
    assert wrong.quantities["outlier_fraction"] > 0.5


# ---------------------------------------------------------------------- input checks

@pytest.mark.parametrize("nu", [0.0, -0.1, 1.5, float("nan"), True])
def test_infeasible_nu_is_refused_before_any_kernel_work(monkeypatch, cancer, nu):
    def no_kernel(*args, **kwargs):
        raise AssertionError("kernel work before the check of nu")

    monkeypatch.setattr(one_class_module, "KernelData", no_kernel)
    monkeypatch.setattr(one_class_estimator, "make_kernel", no_kernel)
    bad = cancer.copy()
    bad[0, 0] = np.nan                  # ν is checked even before the data
    with pytest.raises(InvalidParameterError, match=r"'nu' parameter of OneClassProblem.*"
                                                    r"nu=0\.1"):
        OneClassProblem(bad, nu=nu)
    with pytest.raises(ValueError, match=r"'nu' parameter of OneClassSVM must be a float in "
                                         r"the range \(0\.0, 1\.0\].*infeasible"):
        OneClassSVM(nu=nu).fit(bad)
    if nu == 1.5:
        with pytest.raises(ValueError, match="no α meets for ν > 1"):
            OneClassSVM(nu=nu).fit(bad)


def test_inputs_are_not_modified(cancer):
    X = cancer[:200].copy()
    X_before = X.copy()
    sw = np.linspace(0.0, 2.0, 200)
    sw_before = sw.copy()
    OneClassSVM(nu=0.3).fit(X, sample_weight=sw)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(sw, sw_before)
    Xs = sp.csr_matrix(X)
    data = Xs.data.copy()
    OneClassSVM(nu=0.3).fit(Xs).decision_function(Xs)
    np.testing.assert_array_equal(Xs.data, data)
    K = rbf_kernel(X, gamma=0.1)
    K_before = K.copy()
    problem = OneClassProblem(K, nu=0.2, kernel="precomputed")
    problem.solve("smo")
    np.testing.assert_array_equal(K, K_before)


def test_estimator_api(wine):
    model = OneClassSVM(nu=0.2)
    assert model.fit_predict(wine).shape == (wine.shape[0],)
    assert set(np.unique(model.predict(wine))) <= {-1, 1}
    assert model.n_support_.dtype == np.int32 and model.support_.dtype == np.int32
    np.testing.assert_allclose(model.score_samples(wine) - model.offset_,
                               model.decision_function(wine))
    np.testing.assert_array_equal(model.offset_, -model.intercept_)
    with pytest.raises(AttributeError, match="only available when using a linear kernel"):
        _ = model.coef_
    assert model.solution_.variables.alpha.shape == (wine.shape[0],)
    with pytest.warns(ConvergenceWarning):
        stopped = OneClassSVM(nu=0.2, max_iter=2).fit(wine)
    assert stopped.fit_status_ == 1 and not stopped.certificate_.ok
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OneClassSVM(nu=0.2, solver="cvxpy-dual").fit(wine)


def test_cvxpy_forms_in_the_papers_scale(wine):
    problem = OneClassProblem(wine, nu=0.5, kernel="linear")
    dual = problem.dual()
    box = dual.constraints[1].args[1].value        # α ≤ 1/(νn)
    np.testing.assert_allclose(box, 1.0 / (0.5 * wine.shape[0]))
    assert len(dual.constraints) == 3 and isinstance(dual.objective, cp.Minimize)
    with pytest.raises(ValueError, match="formulation"):
        problem.primal("hinge")
    with pytest.raises(ValueError, match="no λ"):
        problem.to_primal_erm()


def test_nu_one_is_optimal_at_once_with_a_finite_gap(cancer):
    # ν = 1: every α at its bound, so the bound ones leave b an interval with one
    # infinite end; SMO reads its finite end (LIBSVM's would be ρ = inf) and stops
    # optimal with a finite duality gap, not "stalled" with NaN
    est = OneClassSVM(nu=1.0).fit(cancer)
    sol = est.solution_
    assert sol.status == "optimal" and np.isfinite(sol.raw.duality_gap)
    assert sol.raw.duality_gap <= 1e-9 and est.certificate_.ok
    assert np.isfinite(est.offset_).all()
