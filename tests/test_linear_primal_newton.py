"""The few-features route of dcd: the Huber-smoothed primal's path (solvers/linear/
primal_newton.py) and the exact solve on its working set (face.box_qp,
face.solve_working_set).

References: the cvxpy optimum of the same problem (Clarabel), independent of our code:
the Huber-smoothed primal written with cvxpy's huber atom, the box QP and the C-SVC
dual.  The data are small and degenerate on purpose: few features, rows repeated many
times (the face of the free multipliers is then singular), per-sample bounds.
"""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from margin_opt import kkt
from margin_opt.problems.svm import SVMProblem
from margin_opt.solvers.linear import DCDOptions, face, solve_dcd
from margin_opt.solvers.linear.primal_newton import PrimalPathOptions, huber_path


def _repeated(seed, n=240, d=3, distinct=12, flip=0.15):
    """n rows drawn from ``distinct`` binary patterns (each repeated ~n/distinct times,
    with both labels on some), labels from a planted rule with flips."""
    rng = np.random.default_rng(seed)
    base = (rng.random((distinct, d)) < 0.5).astype(float)
    base[0] = 0.0                                     # an empty row too
    X = base[rng.integers(0, distinct, n)]
    y = np.where(X @ rng.standard_normal(d) + 0.2 * rng.standard_normal(n) > 0.3, 1, -1)
    y[rng.random(n) < flip] *= -1
    if abs(y.sum()) == n:
        y[0] = -y[0]
    return X, y


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_huber_path_reaches_the_smoothed_optimum(seed, fit_intercept):
    """At its last level h the path's α gives w = Σ yᵢαᵢxᵢ and b of the Huber-smoothed
    primal's optimum, by cvxpy's huber atom: ℓ_h(t) = huber(max(t, 0), h) / (2h)."""
    X, y = _repeated(seed)
    c = np.random.default_rng(seed).uniform(0.5, 2.0, X.shape[0])
    h = 0.05
    alpha, W, h_end, _ = huber_path(X, y.astype(float), np.ones(X.shape[0]), c,
                                    equality=fit_intercept,
                                    options=PrimalPathOptions(h_last=h / 2.0, h_start=2.0))
    w = X.T @ (y * alpha)
    wv, bv = cp.Variable(X.shape[1]), cp.Variable()
    t = 1 - cp.multiply(y, X @ wv + (bv if fit_intercept else 0.0))
    obj = 0.5 * cp.sum_squares(wv) + c @ cp.huber(cp.pos(t), h_end) / (2 * h_end)
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-12,
                                       tol_gap_rel=1e-12, tol_feas=1e-12)
    np.testing.assert_allclose(w, wv.value, atol=1e-6)
    if fit_intercept:
        assert abs(y @ alpha) < 1e-8 * c.sum()
    assert np.all((alpha >= 0) & (alpha <= c))
    assert np.all(np.isin(np.flatnonzero((alpha > 0) & (alpha < c)), W))


@pytest.mark.parametrize("equality", [True, False])
def test_box_qp_on_a_singular_face_matches_cvxpy(equality):
    """min ½αᵀGα + qᵀα, 0 ≤ α ≤ u [, yᵀα = r] with G = ZZᵀ of rank 2 and 30 variables
    (repeated rows): the active-set answer's objective is cvxpy's, its KKT holds."""
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((6, 2))[rng.integers(0, 6, 30)]
    y = rng.choice([-1.0, 1.0], 30)
    Z = y[:, None] * Z
    G, q, u = Z @ Z.T, -np.ones(30), rng.uniform(0.5, 1.5, 30)
    a0 = np.full(30, 0.0)
    r = 0.0
    a, b, _, ok = face.box_qp(G, q, y, r, u, a0.copy(), equality=equality)
    assert ok
    x = cp.Variable(30)
    cons = [x >= 0, x <= u] + ([y @ x == r] if equality else [])
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Z.T @ x) + q @ x), cons)
    ref.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    mine = 0.5 * a @ G @ a + q @ a
    assert _rel(mine, ref.value) < 1e-8
    assert np.all((a >= 0) & (a <= u))
    grad = G @ a + q
    gap = kkt.violating_pair_gap(y, a, grad, u) if equality else \
        kkt.projected_gradient(a, grad, u)
    assert gap < 1e-8
    if equality:
        assert abs(y @ a - r) < 1e-12


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_working_set_solve_from_a_poor_start_matches_cvxpy(fit_intercept, sparse):
    """solve_working_set from α = 0 with a working set of 5 points: the violators join
    until the certificate's measure holds on all points; the dual objective is the
    cvxpy dual's, and one perturbed multiplier makes the measure fail."""
    X, y = _repeated(4, n=300, d=4, distinct=15)
    A = sp.csr_matrix(X) if sparse else X
    pr = SVMProblem(A, y, C=0.8, kernel="linear", fit_intercept=fit_intercept)
    qp = pr.to_standard_form()
    p, u, ys = np.asarray(qp.p), np.asarray(qp.upper), np.asarray(qp.y, dtype=float)
    out = face.solve_working_set(A, ys, p, u, 0.0, np.zeros(300), np.arange(5),
                                 equality=fit_intercept, tol=1e-9)
    assert out is not None
    alpha, w = out
    grad = ys * (X @ w) + p
    measure = kkt.violating_pair_gap if fit_intercept else kkt.projected_gradient
    args = (ys, alpha, grad, u) if fit_intercept else (alpha, grad, u)
    assert measure(*args) <= 1e-9
    ref = pr.solve("cvxpy-dual", certify=False)
    dual = -(0.5 * w @ w + p @ alpha)
    assert _rel(dual, ref.dual_objective) < 1e-7
    bad = alpha.copy()
    i = int(np.argmax(alpha > 0))
    bad[i] *= 0.5
    wb = X.T @ (ys * bad)
    args = (ys, bad, ys * (X @ wb) + p, u) if fit_intercept else (bad, ys * (X @ wb) + p, u)
    assert measure(*args) > 1e-3


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.05, 5.0])
def test_dcd_on_repeated_rows_and_few_features_matches_cvxpy(seed, fit_intercept, C):
    """The default dcd (which takes the primal route here: d = 3) on 400 rows from 10
    patterns with sample weights: certified at 1e-6 with the cvxpy optimum's objective,
    and, with the intercept, the same as the epochs alone (DCDOptions(primal=None))."""
    X, y = _repeated(seed, n=400, distinct=10)
    sw = np.random.default_rng(seed).uniform(0.2, 3.0, 400)
    pr = SVMProblem(sp.csr_matrix(X), y, C=C, kernel="linear", fit_intercept=fit_intercept,
                    sample_weight=sw)
    sol = pr.solve("dcd", tol=1e-6, gap_tol=9e-7)
    assert sol.status == "optimal" and sol.certificate.ok
    ref = pr.solve("cvxpy-dual", certify=False)
    assert _rel(sol.primal_objective, ref.primal_objective) < 1e-6
    assert _rel(sol.dual_objective, ref.dual_objective) < 1e-6
    if not fit_intercept:
        return
    epochs = solve_dcd(pr.to_standard_form(), tol=1e-6, gap_tol=9e-7,
                       options=DCDOptions(primal=None))
    assert epochs.status == "optimal"
    assert _rel(sol.dual_objective, -epochs.fun) < 1e-7


def test_primal_route_counts_its_steps_against_max_iter():
    """max_iter bounds the route's Newton steps too: with 2, it gives up, the epochs
    run out and warn (no answer is passed as optimal)."""
    from margin_opt.exceptions import ConvergenceWarning

    X, y = _repeated(0, n=400)
    qp = SVMProblem(X, y, C=1.0, kernel="linear").to_standard_form()
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = solve_dcd(qp, tol=1e-10, max_iter=2)
    assert res.status == "max_iter"


def test_primal_path_options_are_checked():
    with pytest.raises(ValueError, match="PrimalPathOptions"):
        PrimalPathOptions(shrink=1.5)


def test_equal_rows_are_grouped_exactly_even_where_keys_collide():
    """face._equal_rows groups equal rows; two different rows whose keys collide
    ([cos 2, 0] and [0, cos 1] under the key's weights (cos 1, cos 2)) stay apart."""
    from margin_opt.solvers.linear.face import _equal_rows

    v = np.cos(np.arange(1, 3))
    A = np.array([[v[1], 0.0], [0.0, v[0]], [1.0, 2.0], [0.0, v[0]], [1.0, 2.0]])
    assert A[0] @ v == A[1] @ v                     # the keys collide exactly
    first, group = _equal_rows(A)
    assert len(first) == 3
    np.testing.assert_array_equal(A[first][group], A)
    assert group[1] == group[3] and group[2] == group[4] and group[0] != group[1]


def test_working_set_from_an_empty_set_and_an_unbalanced_start():
    # a Newton iterate's yᵀα is off by rounding; with W empty the free variables join W
    # before W must balance the others (it returned None, and the route gave up)
    from margin_opt.solvers.linear.face import solve_working_set

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=40))
    p, u = -np.ones(40), np.ones(40)
    a = np.zeros(40)
    a[0] = 1e-8
    out = solve_working_set(X, y, p, u, 0.0, a, [], tol=1e-9)
    ref = solve_working_set(X, y, p, u, 0.0, a, [0], tol=1e-9)
    assert out is not None and ref is not None

    def dual(alpha):
        v = X.T @ (y * alpha)
        return 0.5 * v @ v + p @ alpha
    assert dual(out[0]) == pytest.approx(dual(ref[0]), rel=1e-9, abs=1e-12)
    assert abs(y @ out[0]) <= 1e-9
