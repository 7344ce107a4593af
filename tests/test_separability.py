"""The separability LP and its Farkas alternative.

References: closed forms (XOR's hulls meet at (½, ½) with λ = ½ each; a 1-D set
whose certificate without intercept is λ = (2/3, 1/3)), the definitions written out
in numpy (yᵢ(w·xᵢ + b) ≥ 1; λ ≥ 0, Σ_class λ = 1, Σλᵢyᵢxᵢ = 0), strong LP duality
(the primal's t* equals the dual's optimum), the hard-margin QP written out in cvxpy,
and invariance under rescaling a feature.
"""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from margin_opt import (
    NotSeparableError,
    SeparabilityProblem,
    SolverError,
    SVMProblem,
    separability,
)
from margin_opt.datasets import load_dataset
from margin_opt.problems.cvxpy_runner import run_cvxpy
from margin_opt.problems.separability import decide, farkas_residual


@pytest.fixture(scope="module")
def raw_cancer():
    """Breast cancer with its raw features (0.001 to ~4000), labels ±1."""
    d = load_breast_cancer()
    return d.data, np.where(d.target == 1, 1.0, -1.0)


def assert_farkas(X, y, lam, fit_intercept=True, atol=1e-9):
    """The definition of a Farkas certificate, written out."""
    assert np.all(lam >= 0)
    if fit_intercept:
        assert lam[y > 0].sum() == pytest.approx(1) and lam[y < 0].sum() == pytest.approx(1)
    else:
        assert lam.sum() == pytest.approx(1)
    scale = np.abs(X).T @ lam
    np.testing.assert_array_less(np.abs(X.T @ (lam * y)), atol * np.maximum(scale, 1e-300) + 1e-300)


def assert_separator(X, y, w, b):
    assert np.min(y * (X @ w + b)) >= 1.0


# ---------------------------------------------------------------------- the two answers


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_separable_data_gets_a_verified_separator(lecture_iris, fit_intercept):
    X, y = lecture_iris
    r = separability(X, y, fit_intercept=fit_intercept)
    assert r.separable and r.farkas is None and np.isnan(r.residual)
    assert r.certificate.ok and r.margin_min >= 1.0
    assert_separator(X, y, r.w, r.b)
    if not fit_intercept:
        assert r.b == 0.0


def test_xor_gets_the_farkas_certificate_of_the_notes(xor):
    """The classes' hulls are the two diagonals of the unit square; they meet at
    (½, ½) with weight ½ on every point — the only certificate."""
    XOR_X, XOR_Y = xor
    r = separability(XOR_X, XOR_Y)
    assert not r.separable and r.w is None and r.certificate.ok
    np.testing.assert_allclose(r.farkas, [0.5, 0.5, 0.5, 0.5], atol=1e-12)
    assert_farkas(XOR_X, XOR_Y, r.farkas)
    assert r.residual <= 1e-12 and r.margin_min <= 1e-12


def test_certificate_without_intercept():
    """x = 1 (+1) and x = 2 (−1) are separable with an intercept, not through the origin:
    λ = (2/3, 1/3) (Σλ = 1, Σλᵢyᵢxᵢ = 2/3 − 2/3 = 0) is the certificate."""
    X, y = np.array([[1.0], [2.0]]), np.array([1.0, -1.0])
    assert separability(X, y).separable
    r = separability(X, y, fit_intercept=False)
    assert not r.separable
    np.testing.assert_allclose(r.farkas, [2 / 3, 1 / 3], rtol=1e-9)
    assert_farkas(X, y, r.farkas, fit_intercept=False)


def test_verification_fails_on_a_wrong_lambda(xor):
    XOR_X, XOR_Y = xor
    problem = SeparabilityProblem(XOR_X, XOR_Y)
    assert problem.verify_farkas([0.5, 0.5, 0.5, 0.5]).ok
    off = problem.verify_farkas([0.6, 0.4, 0.5, 0.5])          # the points do not meet
    assert not off.ok and off.failed() == ["farkas_residual"]
    assert off.farkas_residual == pytest.approx(0.1 / 0.9)    # Σλyx = (0.1, 0.1), Σλ|x| = 0.9
    assert not problem.verify_farkas([1.0, 1.0, 1.0, 1.0]).ok  # each class sums to 2
    assert problem.verify_farkas([1.0, 1.0, 1.0, 1.0]).failed() == ["farkas_normalization"]
    neg = problem.verify_farkas([1.5, -0.5, 0.5, 0.5])
    assert "farkas_sign" in neg.failed()
    # on separable data no λ verifies: the best one (the LP's) misses by its margin
    iris = load_dataset("iris-binary")
    X, y = iris.X[::4, :2], iris.y[::4]
    p = SeparabilityProblem(X, y)
    lam = p._farkas_candidate(p.solve("cvxpy-primal", solver="HIGHS").alpha)
    assert not p.verify_farkas(lam).ok


def test_margin_lp_strong_duality(lecture_iris):
    """t* of the margin LP equals the optimum of its dual (the hull distance), by HiGHS
    and by Clarabel; the dual route reads w, b from its multipliers."""
    X, y = lecture_iris
    p = SeparabilityProblem(X, y)
    ts = []
    for solver in ("HIGHS", "CLARABEL"):
        primal = p.solve("cvxpy-primal", solver=solver)
        dual = p.solve("cvxpy-dual", solver=solver)
        assert -primal.primal_objective == pytest.approx(-dual.dual_objective, rel=1e-7)
        assert p.certify(dual).ok and p.certify(dual).separable
        ts.append(-primal.primal_objective)
        cvx = p.dual()
        run_cvxpy(cvx, solver=solver)
        assert cvx.value == pytest.approx(ts[-1], rel=1e-7)
    assert ts[0] == pytest.approx(ts[1], rel=1e-7) and ts[0] > 0


def test_feasibility_formulation_is_the_notes_lp(lecture_iris, xor):
    XOR_X, XOR_Y = xor
    X, y = lecture_iris
    p = SeparabilityProblem(X, y)
    sol = p.solve("cvxpy-primal", formulation="feasibility", solver="HIGHS")
    assert np.min(y * (X @ sol.w + sol.b)) >= 1 - 1e-7
    with pytest.raises(NotSeparableError, match="not linearly separable"):
        SeparabilityProblem(XOR_X, XOR_Y).solve("cvxpy-primal", formulation="feasibility",
                                                solver="HIGHS")
    printed = str(p.primal("feasibility"))
    assert "minimize 0" in printed and "1.0 <=" in printed


def test_the_perceptron_method_decides_too(xor):
    XOR_X, XOR_Y = xor
    with pytest.warns(ConvergenceWarning, match="cycles"):
        r = separability(XOR_X, XOR_Y, method="perceptron")
    assert not r.separable and r.method == "perceptron"
    assert_farkas(XOR_X, XOR_Y, r.farkas)
    ok = separability(XOR_X, XOR_Y, kernel="rbf", gamma=1.0, method="perceptron")
    assert ok.separable


# ---------------------------------------------------------------------- scale


def test_unscaled_breast_cancer_is_separable(raw_cancer):
    """Raw features up to ~4000: the separator is verified on the raw data; the
    standardized data (same separability, with an intercept) is separable by the
    hard-margin QP written out in cvxpy."""
    X, y = raw_cancer
    r = separability(X, y)
    assert r.separable and r.certificate.ok
    assert_separator(X, y, r.w, r.b)
    Xs = StandardScaler().fit_transform(X)
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    qp = cp.Problem(cp.Minimize(cp.sum_squares(w)), [cp.multiply(y, Xs @ w + b) >= 1])
    qp.solve(solver="CLARABEL")
    assert qp.status == cp.OPTIMAL


def test_per_feature_residual_is_what_makes_scale_harmless(raw_cancer):
    """On raw breast cancer the LP's multipliers have a tiny residual in norm (the
    4000-sized features dominate it) though the data is separable: only the per-feature
    residual tells that λ is no certificate."""
    X, y = raw_cancer
    p = SeparabilityProblem(X, y)
    lam = p._farkas_candidate(p.solve("cvxpy-primal", solver="HIGHS").alpha)
    assert farkas_residual(X, y, lam, per_feature=False) < 1e-6
    assert farkas_residual(X, y, lam) > 1e-3
    assert not p.verify_farkas(lam).ok


@pytest.mark.parametrize("factor", [1.0, 1e-6, 1e6])
def test_not_separable_raw_features_at_any_scale(raw_cancer, factor):
    """Mean radius and mean texture overlap; rescaling a feature changes nothing."""
    X, y = raw_cancer
    X2 = X[:, :2] * [1.0, factor]
    r = separability(X2, y)
    assert not r.separable and r.residual <= 1e-7
    assert_farkas(X2, y, r.farkas, atol=1e-7)


def test_undecided_raises(raw_cancer):
    X, y = raw_cancer
    with pytest.raises(SolverError, match="undecided"):
        separability(X[:, :2], y, tol=1e-300)


# ---------------------------------------------------------------------- kernels


def test_kernels_decide_in_the_feature_space(xor):
    XOR_X, XOR_Y = xor
    # RBF on distinct points: the kernel matrix is positive definite, f = y interpolates
    r = separability(XOR_X, XOR_Y, kernel="rbf", gamma=1.0)
    assert r.separable and r.method == "interpolation"
    L = r.problem.features()
    assert np.min(XOR_Y * (L @ r.w + r.b)) >= 1.0
    # degree 2 has the feature x₁x₂ that separates XOR
    assert separability(XOR_X, XOR_Y, kernel="poly", degree=2, gamma=1.0, coef0=1.0).separable
    # degree 1 is the linear kernel again: the certificate in the factor's coordinates
    r1 = separability(XOR_X, XOR_Y, kernel="poly", degree=1, gamma=1.0, coef0=0.0)
    assert not r1.separable and r1.residual <= 1e-7
    K = XOR_X @ XOR_X.T
    beta = r1.farkas * XOR_Y
    assert abs(beta @ K @ beta) < 1e-12 and abs(r1.farkas @ XOR_Y) < 1e-12


def test_bad_input_is_refused(xor):
    XOR_X, XOR_Y = xor
    with pytest.raises(ValueError, match="single class"):
        separability(XOR_X, np.ones(4))
    with pytest.raises(ValueError, match="NaN"):
        separability(np.where(XOR_X == 1, np.nan, 0.0), XOR_Y)
    with pytest.raises(ValueError, match="formulation"):
        SeparabilityProblem(XOR_X, XOR_Y).primal("hinge")


def test_a_hard_margin_problem_is_decided_on_its_own_kernel_data(xor):
    """What the hard-margin SVM needs: its data, its kernel matrix not computed again."""
    X, y = xor
    svm = SVMProblem(X, y, C=np.inf, kernel="rbf", gamma=1.0)
    K = svm.gram()
    sep = SeparabilityProblem.from_problem(svm)
    assert sep.data is svm.data and sep.gram() is K
    assert decide(sep).separable
    lin = decide(SeparabilityProblem.from_problem(SVMProblem(X, y, C=np.inf,
                                                             fit_intercept=False)))
    assert not lin.separable and lin.farkas.sum() == pytest.approx(1)


QUIET_SCRIPT = """
import numpy as np
from margin_opt import SVC, separability
from margin_opt.datasets import load_dataset
d = load_dataset("iris-binary")
separability(d.X, d.y)                            # the HiGHS LP, first in this process
separability(d.X[:, :2], d.y, solver="CLARABEL")
SVC().fit(d.X, d.y)                               # a default fit
SVC(C=np.inf, kernel="linear").fit(d.X, d.y)      # the hard margin asks the LP first
"""


def test_solvers_keep_quiet(capfd):
    """No banner or solver chatter on stdout or stderr unless verbose (HiGHS writes its
    banner on file descriptor 1 when a process makes its first Highs object): a fresh
    interpreter, its descriptors captured; then the same at the descriptor level here
    (capfd) for a second LP."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", QUIET_SCRIPT], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == ""
    X, y = load_dataset("iris-binary").X, load_dataset("iris-binary").y
    capfd.readouterr()
    assert separability(X, y).separable
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    separability(X, y, verbose=True)                # verbose: the solver's log is shown
    assert "HiGHS" in capfd.readouterr().out
