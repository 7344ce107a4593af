"""ε-approximate regularization paths over C (margin_opt.problems.path), each claim
against a reference that does not use the path's own bound:

- at 50 log-uniform C of each range, ``path.solution_at(C)``'s accuracy certificate
  (computed by the problem at that C, and again by a problem built anew there by its
  constructor) passes with (P − D)/D ≤ ε;
- its objective is within ε of the cvxpy optimum at a few of those C;
- the point count grows like c/√ε (fitted c = N·√ε at ε = 1e-6 on these ranges:
  breast_cancer 0.845, digits 3-vs-8 1.04, diabetes 0.48, a9a 0.24);
- an interval claimed beyond its computed end fails the certificate outside it;
- bad input gets a specific ValueError, and the problem is not modified.

Data: breast_cancer (standardized, RBF), digits 3 vs 8 (pixels / 16, RBF), diabetes
(standardized, ε-SVR, RBF) and 2000 rows of a9a.t (linear kernel, w explicit).
"""

import math
from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest
from sklearn.datasets import load_digits

from margin_opt import OneClassProblem, SquaredHingeProblem, SVMProblem, SVRProblem
from margin_opt.datasets import load_dataset
from margin_opt.problems.path import COVER_MARGIN, Path, problem_at

EPS = 1e-6


def _digits():
    d = load_digits()
    keep = np.isin(d.target, (3, 8))
    return d.data[keep] / 16.0, d.target[keep]


def _a9a(request):
    a9a = request.getfixturevalue("a9a")
    rows = np.random.default_rng(0).choice(a9a.X.shape[0], 2000, replace=False)
    return a9a.X[rows], a9a.y[rows]


#: name -> (data(request), make(X, y, C), C range); each range's ε = 1e-6 path takes
#: 2–5 s on the development machine
CASES = {
    "breast_cancer": (lambda r: (load_dataset("breast_cancer").X,
                                 load_dataset("breast_cancer").y),
                      lambda X, y, C=1.0: SVMProblem(X, y, C=C, kernel="rbf"), (0.3, 3.0)),
    "digits-3-8": (lambda r: _digits(),
                   lambda X, y, C=1.0: SVMProblem(X, y, C=C, kernel="rbf"), (0.3, 3.0)),
    "diabetes-svr": (lambda r: (load_dataset("diabetes").X, load_dataset("diabetes").y),
                     lambda X, y, C=1.0: SVRProblem(X, y, C=C, epsilon=0.1, kernel="rbf"),
                     (0.3, 3.0)),
    "a9a-2000": (_a9a, lambda X, y, C=1.0: SVMProblem(X, y, C=C, kernel="linear"),
                 (0.03, 0.3)),
}
#: the fitted constant c of N ≈ c/√ε on each range (N·√ε at ε = 1e-6, measured; the
#: counts at 1e-2, 1e-4, 1e-6: 9, 85, 845; 11, 105, 1038; 6, 49, 482; 4, 25, 242)
FITTED = {"breast_cancer": 0.845, "digits-3-8": 1.04, "diabetes-svr": 0.48, "a9a-2000": 0.24}


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    """(name, X, y, make, problem, path at ε = 1e-6) of each data set."""
    data, make, span = CASES[request.param]
    X, y = data(request)
    problem = make(X, y)
    return request.param, X, y, make, problem, problem.path(C=span, eps=EPS)


def _log_uniform(span, k, seed):
    return np.exp(np.random.default_rng(seed).uniform(*np.log(span), k))


def test_every_C_of_the_range_is_certified_at_that_C(case):
    name, X, y, make, problem, path = case
    Cs = _log_uniform((path.C_min, path.C_max), 50, seed=1)
    for k, C in enumerate(Cs):
        sol = path.solution_at(C)
        cert = sol.certificate
        assert cert.ok, (name, C, cert.failed())
        assert cert.duality_gap <= EPS and sol.status == "optimal"
        # the path's closed-form bound is what the certificate recomputed from the arrays
        assert cert.duality_gap == pytest.approx(path.gap_bound(C), rel=1e-6, abs=1e-13)
        if k < 3:       # and a problem built anew at C by its constructor agrees
            fresh = make(X, y, C)
            again = fresh.certify(sol, tol=EPS, suboptimality=True)
            assert again.ok and again.duality_gap == pytest.approx(cert.duality_gap,
                                                                   rel=1e-6, abs=1e-13)


def test_objective_is_within_eps_of_the_cvxpy_optimum(case):
    name, X, y, make, problem, path = case
    for C in _log_uniform((path.C_min, path.C_max), 3, seed=2):
        sol = path.solution_at(C)
        ref = make(X, y, C).solve("cvxpy-dual")
        assert ref.certificate.ok
        optimum = ref.primal_objective
        rel = (sol.primal_objective - optimum) / optimum
        assert -1e-8 <= rel <= EPS + 1e-8, (name, C, rel)
        assert sol.dual_objective <= optimum * (1 + 1e-8)        # a lower bound, as claimed


def test_points_are_certified_and_their_intervals_cover_the_range(case):
    name, X, y, make, problem, path = case
    assert path.points[0].C == path.C_min and path.points[0].C_lo < path.C_min
    assert path.points[-1].C_hi >= path.C_max
    for p, q in pairwise(path.points):
        assert p.C < q.C and q.C_lo <= p.C_hi          # no hole between neighbours
    for p in path:
        assert p.certificate.ok and p.certificate is p.solution.certificate
        assert p.C_lo < p.C < p.C_hi and p.gap_at_C <= path.tol
        assert p.gap_bound <= EPS * (1 - COVER_MARGIN) * (1 + 1e-9)
        assert p.solution.raw is None


def test_point_count_grows_like_one_over_sqrt_eps(case):
    name, X, y, make, problem, path = case
    counts = {eps: len(problem.path(C=(path.C_min, path.C_max), eps=eps))
              for eps in (1e-2, 1e-4)}
    counts[EPS] = len(path)
    slope = math.log(counts[EPS] / counts[1e-2]) / math.log(1e4)
    assert slope <= 0.52, (name, counts)          # 1/√ε is a slope of 0.5
    assert counts[1e-4] <= 12 * counts[1e-2] and counts[EPS] <= 11 * counts[1e-4]
    for eps, n in counts.items():       # within 10 % of c/√ε, + 2 for the range's ends
        assert n <= 1.1 * FITTED[name] / math.sqrt(eps) + 2, (name, counts)


def test_a_claimed_interval_beyond_its_end_fails_the_certificate_outside_it(breast_cancer):
    problem = SVMProblem(breast_cancer.X, breast_cancer.y, kernel="rbf")
    path = problem.path(C=(0.5, 2.0), eps=1e-4)
    p = path[len(path) // 2]
    inside = 0.5 * (p.C + p.C_hi)
    assert path.solution_at(inside).certificate.ok
    above, below = p.C + 2 * (p.C_hi - p.C), p.C - 2 * (p.C - p.C_lo)
    wrong = replace(p, C_lo=p.C - 3 * (p.C - p.C_lo), C_hi=p.C + 3 * (p.C_hi - p.C))
    claimed = Path(problem, [wrong], path.eps, (wrong.C_lo, wrong.C_hi), path.method, path.tol)
    for C in (above, below):
        cert = claimed.solution_at(C).certificate
        assert not cert.ok and cert.failed() == ["suboptimality"]
        assert cert.duality_gap > 2 * path.eps          # the gap grows as (C − C₀)²
        assert path.solution_at(C).certificate.ok      # the true path covers C by another point


def test_scaling_the_model_with_the_multipliers_leaves_a_gap_linear_in_C(breast_cancer):
    """Why the path keeps each point's model: the scaled model (w = tw₀, b = tb₀, the
    pair the multipliers tα₀ define) has a gap that grows linearly in t − 1, the kept
    model's grows as (t − 1)² (both certified at C = tC₀ by the problem there)."""
    problem = SVMProblem(breast_cancer.X, breast_cancer.y, kernel="rbf")
    p = problem.path(C=[1.0], eps=1e-6, tol=1e-9)[0]
    everywhere = replace(p, C_lo=0.0, C_hi=math.inf)    # read the gap beyond the interval
    kept = Path(problem, [everywhere], 1e-6, (p.C, p.C), "smo", 1e-9)
    gaps = {}
    for d in (1e-3, 1e-2):
        at = problem_at(problem, p.C * (1 + d))
        scaled = at.solution_from_standard((1 + d) * p.alpha, (1 + d) * p.b)
        gaps[d] = (at.certify(scaled, tol=1, suboptimality=True).duality_gap,
                   kept.solution_at(p.C * (1 + d)).certificate.duality_gap)
    assert gaps[1e-2][0] / gaps[1e-3][0] == pytest.approx(10, rel=0.2)      # linear
    assert gaps[1e-2][1] / gaps[1e-3][1] == pytest.approx(100, rel=0.1)     # quadratic
    assert gaps[1e-3][1] < 1e-2 * gaps[1e-3][0]


def test_solution_at_keeps_the_points_model_and_rescales_its_multipliers(breast_cancer):
    problem = SVMProblem(breast_cancer.X, breast_cancer.y, kernel="rbf")
    path = problem.path(C=(1.0, 1.2), eps=1e-4)
    C = 1.1
    sol, p = path.solution_at(C), path.point_at(C)
    np.testing.assert_allclose(sol.decision, p.solution.decision, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(sol.dual_coef[0], p.beta)
    assert sol.b == p.b
    s = float(p.bound.scale(C))
    np.testing.assert_allclose(sol.variables.standard_alpha, s * p.alpha, rtol=1e-12)
    assert np.all(sol.variables.standard_alpha <= C * problem.sample_weight * (1 + 1e-15))


def test_the_problem_is_not_modified(breast_cancer):
    problem = SVMProblem(breast_cancer.X, breast_cancer.y, C=3.0, kernel="rbf")
    before = problem.solve("smo", tol=1e-6)
    C_i, upper, text = problem.C_i.copy(), problem.to_standard_form().upper, str(problem)
    path = problem.path(C=(0.1, 1.0), eps=1e-3)
    path.solution_at(0.5)
    assert problem.C == 3.0 and problem.hard_margin is False
    np.testing.assert_array_equal(problem.C_i, C_i)
    np.testing.assert_array_equal(problem.to_standard_form().upper, upper)
    assert str(problem) == text
    after = problem.solve("smo", tol=1e-6)
    assert after.primal_objective == pytest.approx(before.primal_objective, rel=1e-9)
    hard = SVMProblem(breast_cancer.X, breast_cancer.y, C=np.inf, kernel="rbf")
    assert len(hard.path(C=[1.0], eps=1e-3)) == 1 and hard.hard_margin and hard.C == np.inf


def test_a_grid_path_certifies_each_value_and_covers_only_around_them(breast_cancer):
    problem = SVMProblem(breast_cancer.X, breast_cancer.y, kernel="linear")
    grid = [0.01, 0.1, 1.0, 0.1]
    path = problem.path(C=grid, eps=1e-4)
    assert len(path) == 3 and path.grid and list(path.C) == [0.01, 0.1, 1.0]
    for p in path:
        assert p.certificate.ok and p.covers(p.C)
        assert path.solution_at(p.C).certificate.ok
    with pytest.raises(ValueError, match="no point of this path covers C=0.3"):
        path.solution_at(0.3)
    assert "grid of the C-SVC" in str(path) and "3 points" in str(path)
    assert repr(path).startswith("Path(3 points, grid C in [0.01, 1]")


def test_an_svr_whose_tube_holds_every_point_is_one_point_for_every_C():
    d = load_dataset("diabetes")
    path = SVRProblem(d.X, d.y, epsilon=10.0, kernel="rbf").path(C=(0.01, 100.0))
    assert len(path) == 1 and path[0].C_hi == math.inf
    sol = path.solution_at(50.0)
    assert sol.certificate.ok and sol.certificate.duality_gap == 0.0


def test_table(breast_cancer):
    path = SVMProblem(breast_cancer.X, breast_cancer.y, kernel="rbf").path(
        C=(0.1, 10.0), eps=1e-4)
    text = str(path)
    lines = text.splitlines()
    assert lines[0].startswith("ε-path of the C-SVC (n = 569, kernel rbf")
    assert f"{len(path)} points" in lines[0] and "covers C in" in lines[1]
    assert len(lines) == 2 + 17 and "…" in text         # long paths: both ends shown
    assert "<table>" in path._repr_html_()
    assert len(path.intervals) == len(path) and list(path) == list(path.points)


@pytest.mark.parametrize("kwargs, message", [
    (dict(C=(0.0, 1.0)), "C must be a positive finite number, got 0.0"),
    (dict(C=(-1.0, 1.0)), "C must be a positive finite number, got -1.0"),
    (dict(C=(1.0, np.inf)), "C must be a positive finite number, got inf"),
    (dict(C=(1.0, 1.0)), r"C_min must be below C_max, got C=\(1, 1\)"),
    (dict(C=(2.0, 1.0)), r"C_min must be below C_max, got C=\(2, 1\)"),
    (dict(C=(1.0, 2.0, 3.0)), "takes two values"),
    (dict(C=[]), "the grid of C values is empty"),
    (dict(C=1.0), "C must be a tuple"),
    (dict(C=(0.1, 1.0), eps=0.0), r"eps must be in \(0, 1\).*exact path"),
    (dict(C=(0.1, 1.0), eps=-1e-3), r"eps must be in \(0, 1\).*exact path"),
    (dict(C=(0.1, 1.0), eps=1.0), r"eps must be in \(0, 1\).*certifies nothing"),
    (dict(C=(0.1, 1.0), eps=2.0), r"eps must be in \(0, 1\).*certifies nothing"),
    (dict(C=(0.1, 1.0), eps="small"), "eps must be a number"),
    (dict(C=(0.1, 1.0), method="sequential-dual"), "unknown method 'sequential-dual'"),
    (dict(C=(0.1, 1.0), tol=0.0), "tol must be > 0"),
])
def test_bad_input_is_refused(breast_cancer, kwargs, message):
    problem = SVMProblem(breast_cancer.X[:60], breast_cancer.y[:60])
    with pytest.raises(ValueError, match=message):
        problem.path(**kwargs)


def test_other_models_are_refused(breast_cancer):
    X, y = breast_cancer.X[:60], breast_cancer.y[:60]
    for problem in (SquaredHingeProblem(X, y), OneClassProblem(X)):
        with pytest.raises(ValueError, match="made for the C-SVC .* and the ε-SVR"):
            problem.path(C=(0.1, 1.0))


def test_solution_at_refuses_C_outside_every_interval(breast_cancer):
    path = SVMProblem(breast_cancer.X, breast_cancer.y).path(C=(0.1, 0.2), eps=1e-3)
    for C in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="C must be a positive finite number"):
            path.solution_at(C)
    with pytest.raises(ValueError, match="no point of this path covers C=5"):
        path.solution_at(5.0)
