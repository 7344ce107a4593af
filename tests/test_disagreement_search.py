"""A standing disagreement search: random problems from the families that broke before.

Each generated problem (n 5–200, d 1–10, linear / poly / RBF, C from 1e-3 to 1e4,
imbalanced classes, duplicated points with opposite labels, sample weights with
zeros, some without intercept, a quarter ε-SVR) is fitted by the default estimator,
which must end certified (or with a checked refusal, below), and every backend's
certified answer must agree with the cvxpy dual's optimum (the reference, itself
certified; the primal's where Clarabel fails on the dual).  The default run checks 25
problems, the same in every run (derandomized, so that CI is reproducible); ``-m slow``
draws 300 fresh ones.

A default fit may end with ``NotCertifiedError`` at the rounding level of f = Kβ
instead of a certificate (the product's promise is a certificate that holds or a
specific error); the search accepts that only after checking the claim
(:func:`_check_refusal`): the level, computed from scikit-learn's kernel matrix at a
certified fit at the tolerance the error names, is at least a tenth of TOL and at least
a hundredth of that tolerance, and that fit agrees with the reference; where no
tolerance is named, cvxpy's answer puts the level above 5e-4.  The family that ends so:
cubic kernels on unscaled data (entries 1e6–1e9, C = 1e2–1e4), the ε-SVR on
one-dimensional data and the SVC without intercept on two-dimensional data, where f is
known only to 5e-6–2e-3 (the slow run's failures up to 2026-11-22, now checked
refusals; the README, "what it cannot vouch for").
"""

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import pairwise_kernels

from margin_opt import SVC, SVR, SVMProblem, SVRProblem
from margin_opt.bench.truth import exported_model_check
from margin_opt.exceptions import NotCertifiedError, SolverError

TOL = 1e-6
#: the tolerance a rounding-level refusal names ("… or ask for tol ≥ 1e-04.")
_NAMED_TOL = re.compile(r"ask for tol ≥ ([0-9.e+-]+)\.")


@st.composite
def problems(draw):
    n = draw(st.integers(5, 200))
    d = draw(st.integers(1, 10))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** draw(st.floats(-1, 1))
    regression = draw(st.floats(0, 1)) < 0.25
    kernel = draw(st.sampled_from(["linear", "poly", "rbf"]))
    kw = {}
    if kernel != "linear":
        kw["gamma"] = 10.0 ** draw(st.floats(-2, 0.5)) / d
    if kernel == "poly":
        kw.update(degree=draw(st.integers(1, 3)), coef0=1.0)
    C = 10.0 ** draw(st.floats(-3, 4))
    weights = None
    if draw(st.booleans()):
        weights = rng.uniform(0, 2, n) * (rng.uniform(size=n) > 0.2)
        if not np.any(weights > 0):
            weights[0] = 1.0
    if regression:
        y = X @ rng.normal(size=d) + rng.normal(scale=0.3, size=n)
        if np.ptp(y) == 0:
            y[0] += 1.0
        eps = float(draw(st.sampled_from([0.0, 0.05, 0.3]))) * float(np.std(y))
        return "svr", X, y, dict(C=C, epsilon=eps, kernel=kernel, **kw), weights
    p_pos = draw(st.floats(0.05, 0.5))
    y = np.where(rng.uniform(size=n) < p_pos, 1, 0)
    y[:2] = [0, 1]                                           # two classes
    if draw(st.booleans()):                                  # duplicated, opposite labels
        k = draw(st.integers(1, max(1, n // 4)))
        X[n - k:] = X[:k]
        y[n - k:] = 1 - y[:k]
    fit_intercept = draw(st.floats(0, 1)) > 0.2
    if weights is not None:
        for c in (0, 1):                    # every class keeps a sample with positive weight
            if not np.any(weights[y == c] > 0):
                weights[np.flatnonzero(y == c)[0]] = 1.0
    return "svc", X, y, dict(C=C, kernel=kernel, fit_intercept=fit_intercept, **kw), weights


def _backends(problem):
    """(method, options, tolerance) of every backend that can pose the problem."""
    out = [("smo", {"tol": TOL}, TOL), ("cvxpy-primal", {}, TOL)]
    if problem.explicit_w and not problem.hard_margin:
        out.append(("subgradient", {"schedule": "1/sqrt(t)", "max_iter": 300, "tol": 0.0}, 1e-2))
    if problem.model == "svc" and not problem.hard_margin:
        out.append(("pegasos", {"max_iter": 20, "random_state": 0}, 1e-2))
    return out


def _reference(problem, tol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return problem.solve("cvxpy-dual", certify=tol, fallback=True)
        except SolverError:     # Clarabel can fail on the dual (e.g. linear ε-SVR, C = 1e4,
            return problem.solve("cvxpy-primal", certify=tol, fallback=True)   # ε = 0)


def _fit(Estimator, params, X, y, weights, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Estimator(**params, **kw).fit(X, y, sample_weight=weights)


def _level(problem, params, X, alpha):
    """u·maxᵢ Σⱼ|Kᵢⱼβⱼ|, how precisely f = Kβ is known in double precision, from the
    kernel matrix as scikit-learn computes it (not the library's kernel code)."""
    kw = {k: params[k] for k in ("gamma", "degree", "coef0") if k in params}
    K = pairwise_kernels(X, metric=params.get("kernel", "rbf"), **kw)
    beta = np.abs(problem.coefficients(alpha))
    return np.finfo(float).eps / 2 * float((np.abs(K) @ beta).max())


def _no_false_certificate(problem, ref, floor):
    """Whatever a backend returns, if its certificate holds at its tolerance (at least
    ``floor``), its objectives bracket the reference optimum within that accuracy."""
    scale = max(1.0, abs(ref.dual_objective))
    for method, options, tol in _backends(problem):
        tol = max(tol, floor)
        if method == "smo":
            options = dict(options, tol=tol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sol = problem.solve(method, certify=tol, **options)
            except SolverError:     # a solver that gives up (Clarabel on a badly scaled
                continue            # cubic primal) vouches for nothing: no false certificate
        if sol.certificate.ok:
            assert sol.dual_objective <= ref.dual_objective + 10 * floor * scale, method
            assert abs(sol.primal_objective - ref.primal_objective) <= 10 * tol * scale, method


def _check_refusal(exc, problem, Estimator, params, X, y, weights):
    """A default fit may end with the rounding-level NotCertifiedError instead of a
    certificate (the product's promise: a certificate that holds, or a specific error),
    but only where its claim is true.  The level of f = Kβ is computed here (from
    scikit-learn's kernel matrix) at a certified fit at the tolerance the error names:
    it must be at least a tenth of the default TOL (no certificate at TOL could be
    trusted) and the named tolerance at most 100× it (the library names the least power
    of ten ≥ 10× the level: not an inflated one); at that tolerance the fit must agree
    with the reference, and no backend's certificate may hold at a wrong answer.  Where
    the error names no tolerance (the level is above 1e-3), that level is checked on
    cvxpy's uncertified answer."""
    msg = str(exc)
    if "rounding level" not in msg:
        raise exc
    named = _NAMED_TOL.search(msg)
    if named is None:
        assert "nor any useful tolerance" in msg, msg
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sol = problem.solve("cvxpy-dual", certify=False)
            except SolverError:
                sol = problem.solve("cvxpy-primal", certify=False)
        level = _level(problem, params, X, sol.variables.standard_alpha)
        assert level >= 5e-4, f"refusal not justified: f = Kβ is known to {level:.2g}; {msg}"
        return
    tol = float(named.group(1))
    assert TOL < tol <= 1e-2, msg
    est = _fit(Estimator, params, X, y, weights, tol=tol)
    assert est.certificate_.ok, str(est.certificate_)
    level = _level(problem, params, X, est.solution_.variables.standard_alpha)
    assert level >= 0.1 * TOL, f"refusal not justified: f = Kβ is known to {level:.2g}; {msg}"
    assert tol <= 100 * level, f"named tolerance {tol:g} inflated: the level is {level:.2g}"
    ref = _reference(problem, tol)
    assert ref.certificate.ok, str(ref.certificate)
    scale = max(1.0, abs(ref.dual_objective))
    assert abs(est.solution_.dual_objective - ref.dual_objective) <= 10 * tol * scale
    assert abs(est.solution_.primal_objective - ref.primal_objective) <= 10 * tol * scale
    _no_false_certificate(problem, ref, tol)


def _check(case):
    model, X, y, params, weights = case
    Problem, Estimator = (SVMProblem, SVC) if model == "svc" else (SVRProblem, SVR)
    problem = Problem(X, y, sample_weight=weights, **params)
    try:
        est = _fit(Estimator, params, X, y, weights)
    except NotCertifiedError as exc:
        _check_refusal(exc, problem, Estimator, params, X, y, weights)
        return
    ref = _reference(problem, TOL)
    assert ref.certificate.ok, str(ref.certificate)
    # the default fit ends certified, at the cvxpy optimum
    assert est.certificate_.ok, str(est.certificate_)
    scale = max(1.0, abs(ref.dual_objective))
    assert abs(est.solution_.dual_objective - ref.dual_objective) <= 10 * TOL * scale
    assert abs(est.solution_.primal_objective - ref.primal_objective) <= 10 * TOL * scale
    # the exported model (support_vectors_, dual_coef_, intercept_, coef_) is the
    # certified answer: its values on the training data are the f the certificate read
    ex = exported_model_check(est, X)
    assert ex["ok"], ex
    _no_false_certificate(problem, ref, TOL)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)           # the same 25 in every CI run; the slow run explores
@given(problems())
def test_default_fits_certify_and_agree(case):
    _check(case)


def test_reference_where_the_dual_solver_fails():
    # found by the search: Clarabel fails on this dual; the default fit certifies by
    # the primal and the reference is the primal's optimum
    rng = np.random.default_rng(0)
    X = rng.normal(size=(34, 2))
    y = X @ rng.normal(size=2) + rng.normal(scale=0.3, size=34)
    with pytest.raises(SolverError):
        SVRProblem(X, y, C=1e4, epsilon=0.0, kernel="linear").solve("cvxpy-dual")
    _check(("svr", X, y, dict(C=1e4, epsilon=0.0, kernel="linear"), None))


def _unscaled_cubic():
    # the known family: a cubic kernel on unscaled 2-D data, no intercept (entries ~1e8)
    rng = np.random.default_rng(21)
    X = rng.normal(size=(40, 2)) * 10.0
    y = (rng.uniform(size=40) < 0.4).astype(int)
    y[:2] = [0, 1]
    return X, y, dict(C=1e3, kernel="poly", degree=3, coef0=1.0, gamma=1.5, fit_intercept=False)


def test_rounding_refusal_is_checked(monkeypatch):
    # the default fit refuses with the rounding-level error; the search accepts that only
    # after checking its claim (the level, and a certified fit at the tolerance it names).
    # The refusal is what the solve path says once every repair has failed; whether one
    # of them, the active-set refinement on the monomials (tried twice in the chain),
    # rescues this case depends on the rounding of the machine's BLAS (it did on an AMD
    # EPYC, not where the case was found), so that repair is left out here
    import margin_opt.problems.solve_path as solve_path

    monkeypatch.setattr(solve_path, "_active_set", lambda *args, **kwargs: None)
    X, y, params = _unscaled_cubic()
    with pytest.raises(NotCertifiedError, match=r"rounding level.*ask for tol ≥ 1e-03"):
        _fit(SVC, params, X, y, None)
    _check(("svc", X, y, params, None))


def _unscaled_cubic_svr():
    # the same family for the ε-SVR on 1-D data: entries up to 2.8e9, f known to ~2e-3
    rng = np.random.default_rng(30)
    n = int(rng.integers(15, 60))
    X = rng.normal(size=(n, 1)) * 10.0
    y = X @ rng.normal(size=1) + rng.normal(scale=0.3, size=n)
    C, gamma = 10.0 ** rng.uniform(2, 4), 10.0 ** rng.uniform(-0.5, 0.5)
    return X, y, dict(C=C, epsilon=0.0, kernel="poly", degree=3, coef0=1.0, gamma=gamma)


def test_refusal_without_a_useful_tolerance_is_checked():
    X, y, params = _unscaled_cubic_svr()
    with pytest.raises(NotCertifiedError, match="nor any useful tolerance"):
        _fit(SVR, params, X, y, None)
    _check(("svr", X, y, params, None))


def test_a_false_refusal_fails_the_search():
    # refusals claimed where they are not true must not pass the check: on a well-scaled
    # problem (f = Kβ known to ~1e-13), and a tolerance inflated 10× on the unscaled one;
    # an error that is not the rounding refusal propagates
    X, y, params = _unscaled_cubic()
    problem = SVMProblem(X, y, **params)
    inflated = NotCertifiedError("no answer certified at tol=1e-06. These residuals are at "
                                 "the rounding level of this problem: … or ask for tol ≥ 1e-02.")
    with pytest.raises(AssertionError, match="inflated"):
        _check_refusal(inflated, problem, SVC, params, X, y, None)
    X = X / 10.0
    params = dict(params, C=1.0)
    problem = SVMProblem(X, y, **params)
    claims = ["… or ask for tol ≥ 1e-03.", "… cannot see past (nor any useful tolerance at "
              "this scale): scale the features so that the kernel entries are O(1)."]
    for claim in claims:
        exc = NotCertifiedError("no answer certified at tol=1e-06. These residuals are at the "
                                "rounding level of this problem: " + claim)
        with pytest.raises(AssertionError, match="refusal not justified"):
            _check_refusal(exc, problem, SVC, params, X, y, None)
    other = NotCertifiedError("no answer certified at tol=1e-06: smo ended max_iter.")
    with pytest.raises(NotCertifiedError, match="max_iter"):
        _check_refusal(other, problem, SVC, params, X, y, None)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems())
def test_default_fits_certify_and_agree_many(case):
    _check(case)
