"""The multiplier fill from a primal point (kkt.multipliers_from_primal): exactly
feasible, so its dual objective is a true lower bound, on both of its paths (exact
band least squares, and projected gradient for large bands: O(n·r)); the path is
chosen by its ``exact_band`` (0: projected gradient on every band)."""

import numpy as np
import pytest
from test_smo import data

from margin_opt import SVMProblem, kkt


@pytest.mark.parametrize("exact_band", [2000, 0])
def test_fill_is_feasible_and_a_lower_bound(exact_band):
    assert kkt.EXACT_BAND == 2000            # the default: the fill of p.solve below
    X, y = data(300, seed=7)
    p = SVMProblem(X, y, C=0.5, kernel="linear")
    ref = p.solve("cvxpy-dual")
    hinge = p.solve("cvxpy-hinge")           # its multipliers are filled by default
    # the fill of the same primal point, on the path ``exact_band`` chooses
    sol = p.solution_from_primal(hinge.w, hinge.b, exact_band=exact_band)
    if exact_band:
        np.testing.assert_array_equal(sol.alpha, hinge.alpha)
    a = sol.alpha
    assert np.all(a >= 0) and np.all(a <= 0.5)
    assert abs(p.y @ a) <= 1e-12 * max(1.0, a.sum())
    assert sol.dual_objective <= ref.primal_objective * (1 + 1e-9)
    gap = (sol.primal_objective - sol.dual_objective) / sol.primal_objective
    assert gap <= (1e-5 if exact_band else 1e-2)


def test_fill_of_an_inexact_point_stays_a_lower_bound():
    X, y = data(400, seed=8)
    p = SVMProblem(X, y, C=1.0, kernel="linear")
    ref = p.solve("cvxpy-dual")
    run = p.solve("pegasos", max_iter=2, random_state=0)
    sol = p.solution_from_primal(run.w, run.b, exact_band=0)    # projected gradient
    assert sol.dual_objective <= ref.primal_objective * (1 + 1e-9)
    assert sol.dual_objective > 0            # the scaling θ keeps the bound informative
