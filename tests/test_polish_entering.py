"""The second Newton polish with the bound variables that violate the optimality
conditions let in (margin_opt.solvers.smo.polish.entering).

References: the KKT conditions of the dual written out per variable (LIBSVM's I_up /
I_low sets), LIBSVM at tol 1e-10, and SMO without this step.
"""

import numpy as np
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR as SkSVR

from margin_opt.problems.svr import SVRProblem
from margin_opt.solvers.smo import SMOOptions, solve_smo
from margin_opt.solvers.smo import polish as pol

# a case of a random search where SMO's tail after the first polish was long (3101
# iterations in all without this step)
GAMMA, C, EPS = 0.08766755306519577, 5.208209992023871, 0.1


def _svr(n=1253):
    X, t = make_regression(n, 10, noise=5.0, random_state=32)
    X = StandardScaler().fit_transform(X)
    t = (t - t.mean()) / t.std()
    return X, t, SVRProblem(X, t, C=C, epsilon=EPS, kernel="rbf",
                            gamma=GAMMA).to_standard_form()


class _Run:
    def __init__(self, alpha, G, y, C, index=None):
        self.alpha, self.G, self.y, self.C = alpha, G, y, C
        self.index = np.arange(alpha.size) if index is None else index
        self.n_data = int(self.index.max()) + 1


def test_entering_are_the_bound_kkt_violators_largest_first():
    # written out: with g = −y∇, a variable in I_up (may move up along y) violates where
    # g > −ρ, one in I_low where g < −ρ, ρ the mean of y∇ over the free variables; the
    # free ones never enter
    rng = np.random.default_rng(0)
    m = 400
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    Cv = np.full(m, 2.0)
    alpha = np.choose(rng.integers(0, 3, m), [np.zeros(m), Cv, rng.uniform(0.1, 1.9, m)])
    G = rng.normal(size=m)
    free = (alpha > 0) & (alpha < Cv)
    rho = np.mean((y * G)[free])
    g = -y * G
    up = np.where(y > 0, alpha < Cv, alpha > 0) & ~free
    low = np.where(y > 0, alpha > 0, alpha < Cv) & ~free
    viol = np.zeros(m)
    viol[up] = np.maximum(g[up] + rho, 0.0)
    viol[low] = np.maximum(-rho - g[low], 0.0)
    every = np.flatnonzero(viol > 0)
    assert 20 < every.size < m - free.sum()
    run = _Run(alpha, G, y, Cv)
    np.testing.assert_array_equal(pol.entering(run, m), every)
    top = pol.entering(run, 10)
    np.testing.assert_array_equal(top, np.sort(every[np.argsort(-viol[every])[:10]]))
    assert pol.entering(_Run(np.zeros(m), G, y, Cv), m).size == 0     # no free variable
    # above a violation floor only
    floor = np.median(viol[every])
    np.testing.assert_array_equal(pol.entering(run, m, min_violation=floor),
                                  every[viol[every] > floor])
    # ε-SVR: two variables per data row (α then α*); none on a free variable's row, one
    # per row (the larger violation) where both violate
    index = np.r_[np.arange(m // 2), np.arange(m // 2)]
    got = pol.entering(_Run(alpha, G, y, Cv, index), m)
    rows_free = set(index[free])
    want, seen = [], set(rows_free)
    for t in every[np.argsort(-viol[every], kind="stable")]:
        if index[t] not in seen:
            seen.add(index[t])
            want.append(t)
    np.testing.assert_array_equal(got, np.sort(want))
    assert not set(index[got]) & rows_free and len(set(index[got])) == got.size
    assert got.size < every.size                        # the rule took some out


def test_entering_polish_ends_smos_tail_and_the_answer_is_libsvms():
    X, t, qp = _svr()
    on = solve_smo(qp, tol=1e-6, gap_tol=1e-7)
    off = solve_smo(qp, tol=1e-6, gap_tol=1e-7, options=SMOOptions(enter_polish=False))
    assert on.status == off.status == "optimal"
    assert on.nit < off.nit                 # SMO's tail to the second polish skipped
    assert abs(on.fun - off.fun) <= 1e-9 * abs(off.fun)
    ref = SkSVR(C=C, epsilon=EPS, gamma=GAMMA, tol=1e-10).fit(X, t)
    beta = np.zeros(X.shape[0])
    beta[ref.support_] = ref.dual_coef_[0]
    n = X.shape[0]
    np.testing.assert_allclose(on.x[:n] - on.x[n:], beta, atol=1e-5 * C)
    assert abs(on.b - ref.intercept_[0]) <= 1e-5
