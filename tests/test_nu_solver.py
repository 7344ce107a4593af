"""The ν solver: the compiled SMO's two-equality mode (LIBSVM's Solver_NU) through
``solve_smo`` on a :class:`~margin_opt.standard_forms.DualQP` with ``delta2``.

``min ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  eᵀα = Δ₂,  0 ≤ α ≤ u`` in LIBSVM's scale: ν-SVC has
Q = yyᵀ∘K, p = 0, u = 1, Δ = 0, Δ₂ = νl; ν-SVR has LIBSVM's 2l variables (p = [−z, z],
y = [+1, −1], u = C, Δ = 0, Δ₂ = Cνl).  Independent references: the cvxpy optimum of
the same QP (Clarabel, tight tolerances; its equality multipliers are the read-out's
b = −ρ and c = −r), scikit-learn's NuSVC / NuSVR (LIBSVM: dual_coef_ = yα/r,
intercept_ = −ρ/r for ν-SVC; α − α*, −ρ for ν-SVR), the gradient recomputed from
scratch, and the ν-property.

References: C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory
and algorithms", Neural Computation 13(9), 2001; "LIBSVM", ACM TIST 2(3), 2011, §4.2.
"""

import dataclasses
import functools

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import OptimizeResult
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.preprocessing import StandardScaler
from sklearn.svm import NuSVC, NuSVR

from margin_opt import _core
from margin_opt.kernels import core_rows, core_spec, make_kernel
from margin_opt.solvers.smo import SMOOptions, solve_smo
from margin_opt.standard_forms import DualQP

#: scikit-learn's LIBSVM keeps kernel rows in single precision: at tol = 1e-6 its
#: C-form coefficients agree with ours to this fraction of their largest magnitude
#: (observed ≤ 6e-5 on these sets), its intercept to this times (1 + |b|) (≤ 3e-6)
SK_COEF_RTOL = 1e-3
SK_B_RTOL = 1e-4


@functools.cache
def _digits():
    d = load_digits()
    return d.data / 16.0, d.target


@functools.cache
def classification(name):
    """(X, y ±1, kernel name, kernel parameters) of a real binary set."""
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        return StandardScaler().fit_transform(X), np.where(y > 0, 1.0, -1.0), "rbf", \
            {"gamma": 0.05}
    X, t = _digits()
    a, b = {"digits_3v8": (3, 8), "digits_1v7": (1, 7), "digits_3v5_csr": (3, 5)}[name]
    keep = (t == a) | (t == b)
    y = np.where(t[keep] == a, 1.0, -1.0)
    if name == "digits_1v7":
        return X[keep], y, "poly", {"gamma": 0.05, "degree": 3, "coef0": 1.0}
    Xk = sp.csr_matrix(X[keep]) if name.endswith("csr") else X[keep]
    return Xk, y, "rbf", {"gamma": 0.02}


def nu_svc_qp(name, nu):
    """The ν-SVC dual of a set in LIBSVM's scale: Q = yyᵀ∘K, p = 0, u = 1, yᵀα = 0,
    eᵀα = νl."""
    X, y, kernel, kw = classification(name)
    n = y.size
    return DualQP(X=X, kernel=make_kernel(kernel, X, **kw), y=y, p=np.zeros(n),
                  upper=np.ones(n), delta=0.0, delta2=nu * n)


@functools.cache
def diabetes():
    X, z = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), (z - z.mean()) / z.std()


def nu_svr_qp(nu, C, gamma=0.1):
    """LIBSVM's solve_nu_svr: 2l variables (a, a*), p = [−z, z], y = [+1, −1], u = C,
    Σ a − Σ a* = 0, Σ a + Σ a* = Cνl."""
    X, z = diabetes()
    n = z.size
    return DualQP(X=X, kernel=make_kernel("rbf", X, gamma=gamma),
                  y=np.r_[np.ones(n), -np.ones(n)], p=np.r_[-z, z], upper=np.full(2 * n, C),
                  index=np.r_[np.arange(n), np.arange(n)], delta=0.0, delta2=C * nu * n)


def cvxpy_two_equalities(qp):
    """The optimum of the same QP by Clarabel: (value, α, b, c), b and c the
    multipliers of yᵀα = Δ and eᵀα = Δ₂ (∇ + yb + c = 0 on the free variables)."""
    m = qp.n_variables
    K = qp.kernel_rows(np.arange(m))
    K = 0.5 * (K + K.T)
    a = cp.Variable(m)
    ya = cp.multiply(qp.y, a)
    eq_y, eq_e = qp.y @ a == qp.delta, cp.sum(a) == qp.delta2
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(ya, cp.psd_wrap(K)) + qp.p @ a),
                      [a >= 0, a <= qp.upper, eq_y, eq_e])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11,
               max_iter=500)
    assert prob.status == cp.OPTIMAL
    return prob.value, a.value, float(eq_y.dual_value), float(eq_e.dual_value)


@functools.cache
def reference(kind, *args):
    qp = nu_svc_qp(*args) if kind == "svc" else nu_svr_qp(*args)
    return cvxpy_two_equalities(qp)


def assert_nu_optimal(qp, res, ref, tol):
    """The answer of a two-equality QP: feasible exactly (box, yᵀα = Δ and eᵀα = Δ₂ to
    1e-9), its objective within 1e-6 of the reference's (relative), each sign's m − M at
    most tol from the gradient recomputed here, and the read-out (b = −ρ, c = −r) the
    reference's multipliers."""
    value, _, b_ref, c_ref = ref
    a, y, u = res.x, qp.y, qp.upper
    assert np.all(a >= 0.0) and np.all(a <= u)
    assert abs(float(y @ a) - qp.delta) <= 1e-9
    assert abs(float(a.sum()) - qp.delta2) <= 1e-9
    assert abs(res.fun - value) <= 1e-6 * abs(value)
    G = qp.q_rows(np.arange(qp.n_variables)) @ a + qp.p
    np.testing.assert_allclose(res.grad, G, atol=1e-9 * (1 + np.abs(G).max()))
    up = np.where(y > 0, a < u, a > 0)
    low = np.where(y > 0, a > 0, a < u)
    for sign in (y > 0, y < 0):
        gap = np.max(-y[up & sign] * G[up & sign]) + np.max(y[low & sign] * G[low & sign])
        assert gap <= tol * (1 + 1e-6)
    scale = 1e-5 * (1 + abs(b_ref) + abs(c_ref))
    assert abs(-res.rho - b_ref) <= scale and abs(-res.r - c_ref) <= scale


SVC_CASES = [("breast_cancer", 0.1), ("breast_cancer", 0.4), ("digits_3v8", 0.1),
             ("digits_3v8", 0.4), ("digits_1v7", 0.2), ("digits_3v5_csr", 0.1),
             ("digits_3v5_csr", 0.4)]


@pytest.mark.parametrize("name,nu", SVC_CASES)
def test_nu_svc_matches_cvxpy(name, nu):
    qp = nu_svc_qp(name, nu)
    res = solve_smo(qp, tol=1e-6)
    assert res.status == "optimal" and res.success
    assert_nu_optimal(qp, res, reference("svc", name, nu), 1e-6)
    # r₁ = r + ρ and r₂ = r − ρ are the gradient's level on each sign's free variables
    free = (res.x > 1e-8) & (res.x < 1 - 1e-8)
    for sign, level in ((qp.y > 0, res.r + res.rho), (qp.y < 0, res.r - res.rho)):
        if (free & sign).any():
            assert np.abs(res.grad[free & sign] - level).max() <= 1e-5 * (1 + abs(level))
    assert res.duality_gap <= 1e-5


@pytest.mark.parametrize("name,nu", SVC_CASES)
def test_nu_svc_matches_scikit_learn(name, nu):
    qp = nu_svc_qp(name, nu)
    X, y, kernel, kw = classification(name)
    res = solve_smo(qp, tol=1e-6, polish=False)
    sk = NuSVC(nu=nu, kernel=kernel, tol=1e-6, **kw).fit(X, y)
    assert list(sk.classes_) == [-1.0, 1.0]        # its decision is positive for y = +1
    dual = sk.dual_coef_.toarray() if sp.issparse(sk.dual_coef_) else sk.dual_coef_
    coef = np.zeros(y.size)
    coef[sk.support_] = dual[0]
    ours = y * res.x / res.r                       # LIBSVM's solve_nu_svc rescaling
    assert np.abs(ours - coef).max() <= SK_COEF_RTOL * np.abs(coef).max()
    b = sk.intercept_[0]
    assert abs(-res.rho / res.r - b) <= SK_B_RTOL * (1 + abs(b))
    # the same selection, start and stopping rule: LIBSVM's iteration count (observed
    # within 10 %; shrinking's details differ)
    assert 0.5 * sk.n_iter_[0] <= res.nit <= 2.0 * sk.n_iter_[0]


@pytest.mark.parametrize("name,nu", SVC_CASES)
def test_nu_property(name, nu):
    """Chang and Lin (2001), ν-SVC's property: the fraction of margin errors (y f(x) < 1
    in the C-form f = Σ (yα/r) K + (−ρ/r)) is at most ν, which is at most the fraction of
    support vectors (α > 0)."""
    qp = nu_svc_qp(name, nu)
    res = solve_smo(qp, tol=1e-6)
    X, y, _, _ = classification(name)
    K = qp.kernel_rows(np.arange(y.size))
    f = K @ (y * res.x / res.r) - res.rho / res.r
    n = y.size
    errors = np.count_nonzero(y * f < 1 - 1e-4)
    support = np.count_nonzero(res.x > 0)
    at_bound = np.count_nonzero(res.x >= 1.0)
    assert at_bound / n <= nu + 1e-12 and errors / n <= nu + 1e-12
    assert support / n >= nu - 1e-12
    # KKT in the C-form: a margin error is at the bound
    assert np.all(res.x[y * f < 1 - 1e-4] >= 1.0 - 1e-6)


@pytest.mark.parametrize("nu,C", [(0.2, 1.0), (0.5, 10.0)])
def test_nu_svr_matches_cvxpy_and_scikit_learn(nu, C):
    qp = nu_svr_qp(nu, C)
    res = solve_smo(qp, tol=1e-6)
    assert res.status == "optimal"
    assert_nu_optimal(qp, res, reference("svr", nu, C), 1e-6)
    X, z = diabetes()
    n = z.size
    sk = NuSVR(nu=nu, C=C, gamma=0.1, tol=1e-6).fit(X, z)
    coef = np.zeros(n)
    coef[sk.support_] = sk.dual_coef_[0]
    beta = res.x[:n] - res.x[n:]
    assert np.abs(beta - coef).max() <= SK_COEF_RTOL * np.abs(coef).max()
    assert abs(-res.rho - sk.intercept_[0]) <= SK_B_RTOL * (1 + abs(sk.intercept_[0]))
    assert -res.r > 0                                # ε = −r, the tube's half-width
    plain = solve_smo(qp, tol=1e-6, polish=False)
    assert 0.5 * sk.n_iter_ <= plain.nit <= 2.0 * sk.n_iter_


def test_polish_keeps_both_equalities():
    """The Newton polish with its second multiplier (forced: no cost test) reaches the
    answer of the unpolished run, both equalities kept exactly."""
    for qp in (nu_svc_qp("breast_cancer", 0.1), nu_svr_qp(0.5, 10.0)):
        forced = solve_smo(qp, tol=1e-8, options=SMOOptions(polish_overhead=0.0))
        plain = solve_smo(qp, tol=1e-8, polish=False)
        assert forced.n_polish >= 1 and plain.n_polish == 0
        assert abs(float(qp.y @ forced.x)) <= 1e-9
        assert abs(float(forced.x.sum()) - qp.delta2) <= 1e-9
        assert abs(forced.fun - plain.fun) <= 1e-9 * abs(plain.fun)
        assert abs(forced.rho - plain.rho) <= 1e-6 and abs(forced.r - plain.r) <= 1e-6


@pytest.mark.parametrize("variant", [{"shrinking": False}, {"wss": "first-order"},
                                     {"cache_size": 0.05}, {"gap_tol": 1e-10}])
def test_variants_reach_the_same_optimum(variant):
    qp = nu_svc_qp("digits_3v8", 0.2)
    res = solve_smo(qp, tol=1e-6, **({"max_iter": 200_000} | variant))
    assert res.status == "optimal"
    assert_nu_optimal(qp, res, reference("svc", "digits_3v8", 0.2), 1e-6)
    if "gap_tol" in variant:
        assert res.duality_gap <= 1e-10


def test_warm_start_is_projected_onto_both_equalities():
    qp = nu_svc_qp("breast_cancer", 0.4)
    rng = np.random.default_rng(0)
    res = solve_smo(qp, tol=1e-6, alpha0=rng.uniform(-0.5, 1.5, qp.n_variables))
    assert_nu_optimal(qp, res, reference("svc", "breast_cancer", 0.4), 1e-6)


def _refusing_kernel(A, B):
    raise AssertionError("kernel work before the feasibility check")


@pytest.mark.parametrize("change,match", [
    ({"delta2": 0.9 * 569}, r"infeasible.*ν ≤ 2·min\(l₊, l₋\)/l = 0\.74\d*: lower ν"),
    ({"delta2": 10.0, "delta": 20.0}, r"infeasible.*Δ₂ must lie in \[20, "),
    ({"equality": False}, r"needs the first"),
    ({"delta2": np.nan}, r"must be finite"),
])
def test_infeasible_nu_is_a_specific_error_before_kernel_work(change, match):
    X, y, _, _ = classification("breast_cancer")
    n = y.size
    qp = DualQP(X=X, kernel=make_kernel(_refusing_kernel), y=y, p=np.zeros(n),
                upper=np.ones(n), delta=0.0, delta2=0.3 * n)
    with pytest.raises(ValueError, match=match):
        solve_smo(dataclasses.replace(qp, **change))


def test_one_sign_only_is_refused():
    X, _, _, _ = classification("breast_cancer")
    n = X.shape[0]
    qp = DualQP(X=X, kernel=make_kernel(_refusing_kernel), y=np.ones(n), p=np.zeros(n),
                upper=np.ones(n), delta=10.0, delta2=10.0)
    with pytest.raises(ValueError, match="both signs"):
        solve_smo(qp)


def test_a_wrong_solver_fails_the_checks():
    """The checks see a solver that drops the second equality (the C-SVC mode on the ν
    QP, from the ν start: it goes to α = 0, off eᵀα = νl) and a wrong read-out (ρ and r
    exchanged)."""
    qp = nu_svc_qp("breast_cancer", 0.4)
    ref = reference("svc", "breast_cancer", 0.4)
    right = solve_smo(qp, tol=1e-6)
    assert_nu_optimal(qp, right, ref, 1e-6)
    one = dataclasses.replace(qp, delta2=None)
    wrong = solve_smo(one, tol=1e-6, alpha0=right.x)
    assert wrong.status == "optimal" and abs(float(wrong.x.sum()) - qp.delta2) > 1.0
    wrong.rho, wrong.r = right.rho, right.r
    with pytest.raises(AssertionError):
        assert_nu_optimal(qp, wrong, ref, 1e-6)
    swapped = OptimizeResult(right)
    swapped.rho, swapped.r = right.r, right.rho
    with pytest.raises(AssertionError):
        assert_nu_optimal(qp, swapped, ref, 1e-6)


def test_core_read_outs_belong_to_their_mode():
    X, y, _, kw = classification("breast_cancer")
    n = y.size
    alpha0 = np.zeros(n)
    alpha0[np.flatnonzero(y > 0)[:10]] = alpha0[np.flatnonzero(y < 0)[:10]] = 1.0
    kernel = make_kernel("rbf", X, **kw)

    def smo(two):
        settings = _core.SolverSettings()
        settings.two_equalities = two
        return _core.SMO(core_spec(kernel), core_rows(X), None, y, np.zeros(n), np.ones(n),
                         np.arange(n, dtype=np.int64), alpha0, True, 0.0, settings, 1e6)

    nu, c = smo(True), smo(False)
    nu.run(1e-6, 100_000, 100_000)
    nu.unshrink()
    rho, r = nu.nu_rho()
    assert np.isfinite(rho) and np.isfinite(r)
    with pytest.raises(ValueError, match="nu_rho"):
        nu.intercept()
    with pytest.raises(ValueError, match="two equalities"):
        c.nu_rho()
    with pytest.raises(ValueError, match="needs two equalities"):
        c.relative_gap(0.0, 1.0)
