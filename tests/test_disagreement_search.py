"""A standing disagreement search: random problems from the families that broke before.

Each generated problem (n 5–200, d 1–10, linear / poly / RBF, C from 1e-3 to 1e4,
imbalanced classes, duplicated points with opposite labels, sample weights with
zeros, some without intercept, a quarter ε-SVR) is fitted by the default estimator,
which must end certified, and every backend's certified answer must agree with the
cvxpy dual's optimum (the reference, itself certified; the primal's where Clarabel
fails on the dual).  The default run checks 25 problems, the same in every run
(derandomized, so that CI is reproducible); ``-m slow`` draws 300 fresh ones.

Known failures of the slow run (2026-11-22): ε-SVR with a cubic kernel on unscaled
one-dimensional data (kernel entries ~1e8, C = 1e2–1e4, ε = 0) ends with
``NotCertifiedError``: every method fails ``mvp_gap``, whose gradient carries a
rounding error above 1e-6 at that scale (see the README, "what it cannot vouch for").
The error names that rounding level, u·maxᵢ Σⱼ|Kᵢⱼβⱼ|, and a tolerance that certifies
(tested in ``test_truth.py``). Three later runs of 300 fresh problems found no
failure.  A run on 2026-11-22 found two of the same family for the SVC without
intercept: a cubic kernel on unscaled two-dimensional data (entries 1.4e7–6e7,
multipliers up to 3.2e3), where f = Kβ is known only to 5e-6–4e-5 and every method
fails ``projected_gradient``; the error names the tolerance that certifies (1e-4,
1e-3).  The code of the start of that day fails them the same way.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from margin_opt import SVC, SVR, SVMProblem, SVRProblem
from margin_opt.exceptions import SolverError

TOL = 1e-6


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


def _check(case):
    model, X, y, params, weights = case
    Problem, Estimator = (SVMProblem, SVC) if model == "svc" else (SVRProblem, SVR)
    problem = Problem(X, y, sample_weight=weights, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = problem.solve("cvxpy-dual", certify=TOL, fallback=True)
        except SolverError:     # Clarabel can fail on the dual (e.g. linear ε-SVR, C = 1e4,
            ref = problem.solve("cvxpy-primal", certify=TOL, fallback=True)   # ε = 0)
        est = Estimator(**params).fit(X, y, sample_weight=weights)
    assert ref.certificate.ok, str(ref.certificate)
    # the default fit ends certified, at the cvxpy optimum
    assert est.certificate_.ok, str(est.certificate_)
    scale = max(1.0, abs(ref.dual_objective))
    assert abs(est.solution_.dual_objective - ref.dual_objective) <= 10 * TOL * scale
    assert abs(est.solution_.primal_objective - ref.primal_objective) <= 10 * TOL * scale
    # no certificate is false: whatever a backend returns, if its certificate holds at
    # tol, its objectives bracket the optimum within that accuracy
    for method, options, tol in _backends(problem):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sol = problem.solve(method, certify=tol, **options)
            except SolverError:     # a solver that gives up (Clarabel on a badly scaled
                continue            # cubic primal) vouches for nothing: no false certificate
        if sol.certificate.ok:
            assert sol.dual_objective <= ref.dual_objective + 10 * TOL * scale, method
            assert abs(sol.primal_objective - ref.primal_objective) <= 10 * tol * scale, method


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


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems())
def test_default_fits_certify_and_agree_many(case):
    _check(case)
