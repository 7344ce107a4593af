"""Safe screening between the points of a C-SVC path (margin_opt.problems.screening).

The reference is independent of SMO and of the rule: the exact cvxpy dual at C (Clarabel
at gaps and feasibility of 1e-11).  A multiplier is read at a bound within
TAU·Cᵢ: "α > 0" means α > TAU·Cᵢ, "α < C" means α < (1 − TAU)·Cᵢ.

Data: breast_cancer (standardized, RBF γ = 1/30) and digits 3 vs 8 (pixels / 16, RBF).
Measured screened fractions (C₀ → C): breast_cancer 1 → 1.01: 0.80, 1 → 1.03 and
1 → 0.97: 0.64, 1 → 1.1: 0.06 (from C₀ = 0.3 and 3 within 0.04 of these); digits
1 → 1.01: 0.80, 1 → 1.03: 0.53, 1 → 1.1: 0 (0.3 → 0.33: 0.01, 3 → 3.3: 0.08); no
sample screened wrongly in any of them.
"""

from dataclasses import replace

import numpy as np
import pytest
from sklearn.datasets import load_digits

from margin_opt import SVMProblem, SVRProblem
from margin_opt.datasets import load_dataset
from margin_opt.problems import path as path_module
from margin_opt.problems.path import problem_at
from margin_opt.problems.screening import Screening, screen, screen_sphere

#: a multiplier within TAU·Cᵢ of a bound is read at it
TAU = 1e-6
TIGHT = dict(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
#: C₀ of the path points, and the steps C = C₀·t screened from them
C0S = [0.3, 1.0, 3.0]
STEPS = [0.97, 1.01, 1.03, 1.1]


def _digits():
    d = load_digits()
    keep = np.isin(d.target, (3, 8))
    return d.data[keep] / 16.0, d.target[keep]


def _breast_cancer():
    d = load_dataset("breast_cancer")
    return d.X, d.y


DATA = {"breast_cancer": _breast_cancer, "digits-3-8": _digits}


@pytest.fixture(scope="module", params=list(DATA))
def case(request):
    X, y = DATA[request.param]()
    problem = SVMProblem(X, y, kernel="rbf")
    grid = problem.path(C=C0S, eps=1e-4)            # each point solved and certified
    return request.param, problem, grid


def _exact(problem, C):
    sol = problem_at(problem, C).solve("cvxpy-dual", **TIGHT)
    assert sol.certificate.ok
    return sol


def _exact_alpha(problem, C):
    return _exact(problem, C).variables.alpha, problem_at(problem, C).C_i


def _violations(scr, alpha, Ci):
    """(screened to 0 with α > 0, screened to C with α < C) at the exact optimum."""
    wrong_zero = np.flatnonzero(alpha[scr.at_zero] > TAU * Ci[scr.at_zero])
    wrong_upper = np.flatnonzero(alpha[scr.at_upper] < (1.0 - TAU) * Ci[scr.at_upper])
    return scr.at_zero[wrong_zero], scr.at_upper[wrong_upper]


def test_screened_multipliers_hold_at_the_exact_optimum(case):
    name, problem, grid = case
    fractions, reach = {}, {}
    for point in grid:
        for t in STEPS:
            C = point.C * t
            scr = screen(problem, point, C)
            ref = _exact(problem, C)
            alpha, Ci = ref.variables.alpha, problem_at(problem, C).C_i
            # the sphere holds w*: ‖w* − ŵ‖ ≤ r, read through K
            dbeta = problem.y * alpha - point.beta
            dist = np.sqrt(max(float(dbeta @ problem.data.combination(dbeta)), 0.0))
            assert dist <= scr.radius, (name, point.C, C, dist, scr.radius)
            reach[(point.C, t)] = dist / scr.radius
            zero, upper = _violations(scr, alpha, Ci)
            assert zero.size == 0 and upper.size == 0, (name, point.C, C, zero, upper)
            fractions[(point.C, t)] = scr.fraction
            # every margin yᵢf*(xᵢ) of the exact optimum lies in its interval
            exact = problem_at(problem, C).solve("smo", tol=1e-9)
            margins = problem.y * exact.decision
            slack = 1e-6 * (1.0 + np.abs(margins))
            assert np.all(scr.low <= margins + slack) and np.all(margins - slack <= scr.high)
            lo, hi = scr.b_range
            assert lo <= exact.b <= hi
    print(name, {k: round(v, 3) for k, v in fractions.items()})
    # the radius is not slack by 2: half of it would miss w* on some step
    assert max(reach.values()) > 0.5, reach
    # the test proves something: many samples are screened on the short steps
    assert max(fractions.values()) > 0.5
    assert sum(f > 0 for f in fractions.values()) >= len(fractions) // 2


def test_at_its_own_C_almost_everything_is_decided(case):
    _, problem, grid = case
    point = grid[1]
    scr = screen(problem, point, point.C)
    assert scr.fraction > 0.8                  # the gap there is the point's own, tiny
    assert scr.radius < 0.05


@pytest.mark.parametrize("shrink", [0.0, 0.01])
def test_a_smaller_sphere_screens_wrongly(shrink):
    """The rule with its radius shrunk (0: trust the previous answer's margins as they
    are; 1 % of the gap-safe radius) screens samples wrongly on a step C₀ = 1 → 1.5.

    Measured on both data sets: the gap-safe sphere is loose coordinatewise (w* − ŵ is
    not aligned with any φ(xᵢ)), and a radius of 5 % of it, or a quarter of the true
    ‖w* − ŵ‖, still screens nothing wrongly on these steps; 1–3 % does.  A halved
    radius is caught by the sphere's own check instead (w* outside it, in
    test_screened_multipliers_hold_at_the_exact_optimum).
    """
    problem = SVMProblem(*_breast_cancer(), kernel="rbf")
    grid = problem.path(C=[1.0], eps=1e-4)
    point, C = grid[0], 1.5
    safe = screen(problem, point, C)
    a_hat = problem.data.combination(point.beta)
    unsafe = screen_sphere(problem, C, a_hat, shrink * safe.radius)
    alpha, Ci = _exact_alpha(problem, C)
    assert all(v.size == 0 for v in _violations(safe, alpha, Ci))
    zero, upper = _violations(unsafe, alpha, Ci)
    assert zero.size + upper.size > 0
    # and not by a hair: the wrongly screened multipliers are far from their bound
    worst = max(np.max(alpha[zero] / Ci[zero], initial=0.0),
                np.max(1.0 - alpha[upper] / Ci[upper], initial=0.0))
    assert worst > 1e-3


def test_no_intercept_and_weights_stay_safe():
    X, y = _breast_cancer()
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    for kw in (dict(fit_intercept=False), dict(sample_weight=w, class_weight="balanced")):
        problem = SVMProblem(X, y, kernel="rbf", **kw)
        point = problem.path(C=[1.0], eps=1e-4)[0]
        for C in (0.98, 1.02):
            scr = screen(problem, point, C)
            assert scr.n_screened > 0
            if not problem.fit_intercept:
                assert scr.b_range == (0.0, 0.0)
            alpha, Ci = _exact_alpha(problem, C)
            assert all(v.size == 0 for v in _violations(scr, alpha, Ci)), kw


def test_screened_path_is_certified_on_the_full_problem():
    problem = SVMProblem(*_breast_cancer(), kernel="rbf")
    plain = problem.path(C=(0.3, 3.0), eps=1e-4)
    path = problem.path(C=(0.3, 3.0), eps=1e-4, screening=True)
    fractions = [p.screening.fraction for p in path if p.screening is not None]
    assert len(fractions) == len(path) - 1 and min(fractions) > 0.3
    reduced = [p for p in path if "unscreened" in p.solution.backend]
    assert len(reduced) == len(path) - 1           # none needed the full solve
    for p in path:
        # the full problem at the point's C certifies its answer
        cert = problem_at(problem, p.C).certify(p.solution, tol=path.tol)
        assert cert.ok and p.certificate.ok
    assert abs(len(path) - len(plain)) <= 2
    for C in (0.5, 1.0, 2.9):
        sol = path.solution_at(C)
        assert sol.certificate.ok and sol.certificate.duality_gap <= 1e-4


def test_a_wrong_screening_fails_the_full_certificate(monkeypatch):
    """A screening that fixes true support vectors at 0 gives a reduced answer the full
    certificate rejects; the point is then solved by the full solve path."""
    problem = SVMProblem(*_breast_cancer(), kernel="rbf")

    def wrong(problem, point, C):
        scr = screen(problem, point, C)
        sv = np.flatnonzero(point.alpha > 0)[:20]          # support vectors at C₀
        return replace(scr, at_zero=np.union1d(scr.at_zero, sv),
                       at_upper=np.setdiff1d(scr.at_upper, sv))

    monkeypatch.setattr(path_module, "screen", wrong)
    path = problem.path(C=[1.0, 1.01], eps=1e-4, screening=True)
    second = path[1]
    assert isinstance(second.screening, Screening) and second.screening.n_screened > 0
    assert "unscreened" not in second.solution.backend        # the full solve took over
    assert second.certificate.ok
    exact, _ = _exact_alpha(problem, 1.01)
    assert np.max(np.abs(second.alpha - exact)) < 1e-3


def test_screening_is_for_the_c_svc():
    d = load_dataset("diabetes")
    svr = SVRProblem(d.X, d.y, kernel="rbf")
    point = svr.path(C=[1.0], eps=1e-4)[0]
    with pytest.raises(ValueError, match="C-SVC"):
        screen(svr, point, 1.1)
    # a path of the SVR ignores the option (nothing to screen with)
    path = svr.path(C=[1.0, 1.01], eps=1e-4, screening=True)
    assert all(p.screening is None for p in path)
