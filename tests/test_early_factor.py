"""The Newton polish on ε-SVR at n = 1500, dense rows, a given kernel matrix and CSR
rows (the problems on which the earlier solver's early factorization beside SMO was
tested; the compiled solver factorizes at the polish itself).

References: LIBSVM at tol 1e-10 (the same problem, an independent solver), the same
run repeated, and the same run in one compiled call.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_regression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR as SkSVR

from margin_opt.problems.svr import SVRProblem
from margin_opt.solvers.smo import SMOOptions, solve_smo

GAMMA, C, EPS = 0.05, 1.0, 0.1


@pytest.fixture(scope="module")
def svr_data():
    X, t = make_regression(1500, 20, noise=5.0, random_state=3)
    return StandardScaler().fit_transform(X), (t - t.mean()) / t.std()


def _qp(X, t, kernel="rbf"):
    return SVRProblem(X, t, C=C, epsilon=EPS, kernel=kernel, gamma=GAMMA).to_standard_form()


def _solve(X, t, kernel="rbf", **kw):
    return solve_smo(_qp(X, t, kernel), tol=1e-6, gap_tol=1e-7, **kw)


def _beta(res):
    n = res.x.size // 2
    return res.x[:n] - res.x[n:]


@pytest.fixture(scope="module")
def libsvm(svr_data):
    X, t = svr_data
    ref = SkSVR(C=C, epsilon=EPS, gamma=GAMMA, tol=1e-10).fit(X, t)
    beta = np.zeros(X.shape[0])
    beta[ref.support_] = ref.dual_coef_[0]
    return beta, ref.intercept_[0]


def test_polished_answer_is_libsvms_and_repeatable(svr_data, libsvm):
    X, t = svr_data
    res = _solve(X, t)
    assert res.status == "optimal" and res.n_polish >= 1
    beta, b = libsvm
    np.testing.assert_allclose(_beta(res), beta, atol=1e-5)
    assert abs(res.b - b) <= 1e-5
    # the same run again: the same iterates, bit for bit
    again = _solve(X, t)
    np.testing.assert_array_equal(again.x, res.x)
    assert again.nit == res.nit
    # without the polish: the same optimum
    plain = _solve(X, t, polish=False)
    assert plain.status == "optimal" and plain.n_polish == 0
    assert abs(plain.fun - res.fun) <= 1e-9 * abs(plain.fun)
    np.testing.assert_allclose(_beta(plain), _beta(res), atol=2e-6)


def test_given_kernel_matrix_and_sparse_data(svr_data, libsvm):
    X, t = svr_data
    K = rbf_kernel(X, gamma=GAMMA)
    beta, b = libsvm
    for data, kernel, layout in ((K, "precomputed", "matrix"),
                                 (sp.csr_matrix(X), "rbf", "sparse-transpose")):
        res = _solve(data, t, kernel=kernel)
        assert res.status == "optimal" and res.n_polish >= 1
        assert res.cache["layout"] == layout
        np.testing.assert_allclose(_beta(res), beta, atol=1e-5)
        assert abs(res.b - b) <= 1e-5


def test_returns_to_python_change_nothing_with_a_small_cache(svr_data):
    # SMO in chunks of 100 iterations (interrupt_work=1: a return to Python, a look at
    # the thread count and a pending Ctrl-C each time) against one compiled call to the
    # end, with a small cache (rows evicted and computed again) and through the polish:
    # bit for bit
    X, t = svr_data
    qp = _qp(X, t)
    chunked = solve_smo(qp, tol=1e-6, gap_tol=1e-7, cache_size=3,
                        options=SMOOptions(interrupt_work=1))
    once = solve_smo(qp, tol=1e-6, gap_tol=1e-7, cache_size=3,
                     options=SMOOptions(interrupt_work=0))
    assert once.cache["misses"] > 2 * X.shape[0]                 # evictions
    assert once.nit > 1000 and once.status == "optimal"
    np.testing.assert_array_equal(chunked.x, once.x)
    assert chunked.nit == once.nit and chunked.b == once.b
