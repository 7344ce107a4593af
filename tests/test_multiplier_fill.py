"""The multiplier fill from a primal point (kkt.multipliers_from_primal): exactly
feasible, so its dual objective is a true lower bound, on both of its paths (exact
band least squares, and projected gradient for large bands: O(n·r))."""

import numpy as np
import pytest
from test_smo import data

from margin_opt import SVMProblem, kkt


@pytest.mark.parametrize("exact_band", [2000, 0])
def test_fill_is_feasible_and_a_lower_bound(monkeypatch, exact_band):
    monkeypatch.setattr(kkt, "EXACT_BAND", exact_band)
    X, y = data(300, seed=7)
    p = SVMProblem(X, y, C=0.5, kernel="linear")
    ref = p.solve("cvxpy-dual")
    sol = p.solve("cvxpy-hinge")
    a = sol.alpha
    assert np.all(a >= 0) and np.all(a <= 0.5)
    assert abs(p.y @ a) <= 1e-12 * max(1.0, a.sum())
    assert sol.dual_objective <= ref.primal_objective * (1 + 1e-9)
    gap = (sol.primal_objective - sol.dual_objective) / sol.primal_objective
    assert gap <= (1e-5 if exact_band else 1e-2)


def test_fill_of_an_inexact_point_stays_a_lower_bound(monkeypatch):
    monkeypatch.setattr(kkt, "EXACT_BAND", 0)
    X, y = data(400, seed=8)
    p = SVMProblem(X, y, C=1.0, kernel="linear")
    ref = p.solve("cvxpy-dual")
    sol = p.solve("pegasos", max_iter=2, random_state=0)
    assert sol.dual_objective <= ref.primal_objective * (1 + 1e-9)
    assert sol.dual_objective > 0            # the scaling θ keeps the bound informative
