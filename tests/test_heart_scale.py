"""LIBSVM's canonical example, reproduced from the heart_scale shipped in the package.

``svm-train heart_scale`` (C-SVC, C = 1, RBF γ = 1/#features = 1/13, tol 1e-3) prints,
in every LIBSVM release from 2.85 to 3.24 (README example and published runs)::

    optimization finished, #iter = 162
    nu = 0.431029
    obj = -100.877288, rho = 0.424462
    nSV = 132, nBSV = 107

scikit-learn's bundled LIBSVM stops elsewhere on the same problem (148 iterations,
ρ = 0.424515): at tol 1e-3 the intercept is only fixed to within the stopping
tolerance, so ρ is checked against both to 1e-3 and against svm-train's to its printed
precision.  The exact dual optimum 100.8772916 comes from cvxpy (Clarabel).

These tests must pass on a fresh clone: the shared data folder is replaced by an
empty one.
"""

import numpy as np
import pytest

from margin_opt import SVMProblem
from margin_opt.datasets import PACKAGED, load_dataset, packaged_data_path, shared_data_dir

LIBSVM = {"obj": -100.877288, "rho": 0.424462, "nSV": 132, "nBSV": 107, "iter": 162,
          "nu": 0.431029}
SKLEARN_RHO = 0.424515
DUAL_OPTIMUM = 100.8772916


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    """heart_scale loaded with MARGIN_OPT_DATA and the cwd at an empty folder."""
    empty = tmp_path_factory.mktemp("no_shared_data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MARGIN_OPT_DATA", str(empty))
        mp.chdir(empty)
        assert shared_data_dir() == empty  # the shared folder is out of reach
        data = load_dataset("heart_scale")
    assert str(packaged_data_path("heart_scale")) in data.description
    return data


@pytest.fixture(scope="module")
def problem(heart):
    return SVMProblem(heart.X, heart.y, C=1.0, kernel="rbf", gamma=1 / 13)


def _libsvm_sign(y):
    """+1 when LIBSVM's +1 class (the first label in the file) is our classes_[1] (max)."""
    return 1.0 if y[0] == np.max(y) else -1.0


def test_packaged_file():
    path = packaged_data_path("heart_scale")
    assert PACKAGED == ("heart_scale",)
    assert path.stat().st_size == 27670
    assert (path.parent / "LICENSE-LIBSVM").read_text().count("Chih-Jen Lin") == 1
    with pytest.raises(ValueError, match="not shipped"):
        packaged_data_path("a9a.t")


def test_shape_and_labels(heart):
    assert heart.X.shape == (270, 13)
    assert set(np.unique(heart.y)) == {-1.0, 1.0}
    assert np.abs(heart.X).max() <= 1.0


def test_dual_optimum_cvxpy(problem, heart):
    sol = problem.solve("cvxpy-dual")
    assert sol.dual_objective == pytest.approx(DUAL_OPTIMUM, rel=1e-6)
    assert problem.certify(sol, tol=1e-6).ok
    # the exact intercept lies within svm-train's stopping tolerance of −ρ
    assert sol.b == pytest.approx(-_libsvm_sign(heart.y) * LIBSVM["rho"], abs=1e-3)


def test_svm_train_run_smo(problem, heart):
    """SMO at LIBSVM's default tol 1e-3 takes svm-train's path to its printed numbers."""
    sol = problem.solve("smo", tol=1e-3)
    alpha = sol.alpha
    assert sol.dual_objective == pytest.approx(DUAL_OPTIMUM, rel=1e-6)
    assert -sol.dual_objective == pytest.approx(LIBSVM["obj"], rel=1e-6)
    assert sol.support_.size == LIBSVM["nSV"]
    assert np.sum(alpha >= problem.C_i) == LIBSVM["nBSV"]
    assert alpha.sum() / (1.0 * heart.y.size) == pytest.approx(LIBSVM["nu"], abs=5e-7)
    b_libsvm = -_libsvm_sign(heart.y) * LIBSVM["rho"]
    assert sol.b == pytest.approx(b_libsvm, abs=5e-7)  # svm-train prints ρ to 6 decimals
    assert sol.b == pytest.approx(-_libsvm_sign(heart.y) * SKLEARN_RHO, abs=1e-3)
    assert sol.n_iter == LIBSVM["iter"]
    assert problem.certify(sol, tol=1e-3).ok
