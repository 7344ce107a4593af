"""A case of a random search where SMO's tail after the first Newton polish was long
(ε-SVR, n = 1253: the bound variables violating the optimality conditions had to enter
the free set one SMO step at a time; the earlier solver let them in at a second polish).

References: LIBSVM at tol 1e-10, and SMO without the polish.
"""

import numpy as np
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR as SkSVR

from margin_opt.problems.svr import SVRProblem
from margin_opt.solvers.smo import solve_smo

GAMMA, C, EPS = 0.08766755306519577, 5.208209992023871, 0.1


def _svr(n=1253):
    X, t = make_regression(n, 10, noise=5.0, random_state=32)
    X = StandardScaler().fit_transform(X)
    t = (t - t.mean()) / t.std()
    return X, t, SVRProblem(X, t, C=C, epsilon=EPS, kernel="rbf",
                            gamma=GAMMA).to_standard_form()


def test_polished_answer_ends_smos_tail_and_is_libsvms():
    X, t, qp = _svr()
    on = solve_smo(qp, tol=1e-6, gap_tol=1e-7)
    off = solve_smo(qp, tol=1e-6, gap_tol=1e-7, polish=False)
    assert on.status == off.status == "optimal"
    assert on.n_polish >= 1 and off.n_polish == 0
    assert on.nit < off.nit                 # SMO's tail shortened by the polish
    assert abs(on.fun - off.fun) <= 1e-9 * abs(off.fun)
    ref = SkSVR(C=C, epsilon=EPS, gamma=GAMMA, tol=1e-10).fit(X, t)
    beta = np.zeros(X.shape[0])
    beta[ref.support_] = ref.dual_coef_[0]
    n = X.shape[0]
    np.testing.assert_allclose(on.x[:n] - on.x[n:], beta, atol=1e-5 * C)
    assert abs(on.b - ref.intercept_[0]) <= 1e-5
    # the relative duality gap asked for is met
    assert on.duality_gap <= 1e-7
