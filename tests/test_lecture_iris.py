"""The lecture's subgradient run on iris, reproduced to the printed 6 decimals.

The lecture printed ``Iteration 0. J: 3.728947``, ``Iteration 1000. J: 0.376952``, ...,
``Iteration 21000. J: 0.304293`` (constant step 0.01 from w = (1, 1), b = 1, λ = 0.1,
bias not regularized, stop when the parameter change ≤ 5e-4).
"""

import runpy
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "lecture_subgradient_iris.py"

#: The numbers the lecture printed (published values, not computed here).
LECTURE = {0: "3.728947", 1000: "0.376952", 21000: "0.304293"}


@pytest.fixture(scope="module")
def lecture_run():
    return runpy.run_path(str(EXAMPLE))["run"]()


def test_lecture_printed_values(lecture_run):
    result, lines, _ = lecture_run
    J = result.history["J"]
    for k, printed in LECTURE.items():
        assert f"{J[k]:.6f}" == printed
        assert f"Iteration {k}. J: {printed}" in lines


def test_lecture_stopping_rule(lecture_run):
    result, lines, _ = lecture_run
    # the lecture's last print was at 21000: it stopped before 22000
    assert result.status == "optimal"
    assert 21000 < result.nit < 22000
    dp = result.history["param_change"]
    assert dp[-1] <= 5e-4 < dp[:-1].min()
    assert lines[-1 - 3] == "Iteration 21000. J: 0.304293"


def test_lecture_distance_to_cvxpy_optimum(lecture_run):
    result, lines, J_star = lecture_run
    J_last = result.history["J"][-1]
    assert J_star < J_last < J_star + 5e-3  # constant steps stall a little above J*
    assert result.fun <= J_last  # the best iterate is returned
    assert "cvxpy optimum J*" in lines[-1]
    assert np.isfinite(J_star)
