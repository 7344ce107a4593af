"""Boosting problems against closed forms and scipy references."""

import numpy as np
import pytest
from scipy.optimize import linprog, minimize, minimize_scalar

from margin_opt.problems.boosting import (
    ALPHA_MAX,
    EPS_MIN,
    MaxMarginLP,
    StageLineSearch,
    TotallyCorrectiveProblem,
    closed_form_alpha,
)


def _stage(seed, n=150):
    rng = np.random.default_rng(seed)
    w = rng.random(n) ** rng.integers(1, 8)
    m = np.where(rng.random(n) < rng.uniform(0.02, 0.45), -1.0, 1.0)
    if w[m < 0].sum() >= w[m > 0].sum():  # keep ε < ½ (the AdaBoost case)
        m = -m
    return w, m


@pytest.mark.parametrize("seed", range(12))
def test_line_search_cvxpy_matches_closed_form(seed):
    w, m = _stage(seed)
    stage = StageLineSearch(w, m)
    eps = w[m < 0].sum() / w.sum()
    assert stage.error == pytest.approx(eps, rel=1e-14)
    a = stage.closed_form()
    assert a == 0.5 * np.log((1 - stage.error) / stage.error)
    assert abs(stage.solve() - a) <= 1e-6
    # the stage's minimum value is Z = 2 sqrt(eps (1 - eps))
    assert stage.objective(a) == pytest.approx(2 * np.sqrt(eps * (1 - eps)), rel=1e-12)


@pytest.mark.parametrize("eps", [1e-6, 1e-3, 0.05, 0.2, 0.35, 0.49, 0.4999])
def test_line_search_over_error_grid(eps):
    stage = StageLineSearch([1 - eps, eps], [1.0, -1.0])
    ref = minimize_scalar(lambda a: (1 - eps) * np.exp(-a) + eps * np.exp(a),
                          bracket=(0.0, 1.0), tol=1e-14).x
    assert stage.closed_form() == pytest.approx(ref, abs=1e-6)
    assert abs(stage.solve() - stage.closed_form()) <= 1e-6


def test_line_search_real_valued_margins():
    rng = np.random.default_rng(3)
    w = rng.random(40)
    m = rng.normal(0.3, 1.0, 40)
    stage = StageLineSearch(w, m)
    ref = minimize_scalar(stage.objective, bracket=(0.0, 1.0), tol=1e-14).x
    assert stage.solve() == pytest.approx(ref, abs=1e-6)


def test_perfect_and_useless_learners():
    assert closed_form_alpha(0.0) == ALPHA_MAX
    assert ALPHA_MAX == pytest.approx(0.5 * np.log((1 - EPS_MIN) / EPS_MIN))
    assert closed_form_alpha(0.5) == 0.0
    with pytest.raises(ValueError, match="no finite minimizer"):
        StageLineSearch([1.0, 2.0], [1.0, 1.0]).solve()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        closed_form_alpha(1.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        closed_form_alpha(np.nan)
    assert "alpha" in str(StageLineSearch([1.0, 2.0], [1.0, -1.0]).primal())


@pytest.mark.parametrize("seed", range(3))
def test_totally_corrective_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    n, T = 200, 8
    M = np.where(rng.random((n, T)) < 0.3, -1.0, 1.0)
    w = rng.random(n)
    bound = rng.uniform(0.5, 4.0)
    tc = TotallyCorrectiveProblem(M, w, l1_bound=bound)
    a = tc.solve()
    ref = minimize(lambda x: np.log(tc.objective(x)), np.full(T, bound / (2 * T)),
                   method="SLSQP", bounds=[(0, None)] * T,
                   constraints=[{"type": "ineq", "fun": lambda x: bound - x.sum()}],
                   options={"ftol": 1e-14, "maxiter": 1000})
    assert ref.success
    assert tc.objective(a) == pytest.approx(tc.objective(ref.x), rel=1e-7)
    assert np.all(a >= 0) and a.sum() <= bound * (1 + 1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_margin_lp_matches_linprog(seed):
    rng = np.random.default_rng(seed)
    n, T = 120, 10
    M = np.where(rng.random((n, T)) < 0.35, -1.0, 1.0)
    M[:, 0] = rng.normal(size=n)  # one real-valued learner too
    res = MaxMarginLP(M).solve()
    ref = linprog(np.r_[np.zeros(T), -1.0], A_ub=np.c_[-M, np.ones(n)], b_ub=np.zeros(n),
                  A_eq=np.r_[np.ones(T), 0.0][None], b_eq=[1.0],
                  bounds=[(0, None)] * T + [(None, None)])
    assert res.margin == pytest.approx(-ref.fun, abs=1e-7)
    assert res.weights.sum() == pytest.approx(1.0) and np.all(res.weights >= 0)
    assert (M @ res.weights).min() == pytest.approx(res.margin, abs=1e-7)
    # LP duality: under the dual distribution no learner has an edge above rho*
    d = res.sample_weights
    assert d.sum() == pytest.approx(1.0) and np.all(d >= 0)
    assert (d @ M).max() <= res.margin + 1e-7


def test_problem_shapes_are_checked():
    with pytest.raises(ValueError, match="2-D"):
        TotallyCorrectiveProblem(np.ones(3))
    with pytest.raises(ValueError, match="n_learners"):
        MaxMarginLP(np.ones((3, 0)))
