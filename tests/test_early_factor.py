"""The polish's first factorization computed beside SMO (margin_opt.solvers.smo.polish).

References: LIBSVM at tol 1e-10 (the same problem, an independent solver) and the run
without the early factor (the polish factorizing itself).
"""

import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR as SkSVR

from margin_opt.problems.svr import SVRProblem
from margin_opt.solvers.smo import SMOOptions, solve_smo
from margin_opt.solvers.smo import polish as early
from margin_opt.solvers.smo import rows as kb

GAMMA, C, EPS = 0.05, 1.0, 0.1


@pytest.fixture(scope="module")
def svr_data():
    X, t = make_regression(1500, 20, noise=5.0, random_state=3)
    return StandardScaler().fit_transform(X), (t - t.mean()) / t.std()


def _solve(X, t, kernel="rbf", options=None):
    qp = SVRProblem(X, t, C=C, epsilon=EPS, kernel=kernel, gamma=GAMMA).to_standard_form()
    return solve_smo(qp, tol=1e-6, gap_tol=1e-7, options=options)


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


def test_early_factor_is_used_and_the_answer_is_libsvms(svr_data, libsvm):
    X, t = svr_data
    res = _solve(X, t)
    assert res.status == "optimal" and res.n_polish >= 1
    assert res.cache["early_factor"] == "used"
    beta, b = libsvm
    np.testing.assert_allclose(_beta(res), beta, atol=1e-5)
    assert abs(res.b - b) <= 1e-5
    # the same run again: the thread's timing changes nothing
    again = _solve(X, t)
    np.testing.assert_array_equal(again.x, res.x)
    assert again.nit == res.nit
    # without it (the polish factorizes the free set at 1e-3 itself): the same optimum
    plain = _solve(X, t, options=SMOOptions(early_min_free=10 ** 9))
    assert plain.cache["early_factor"] == "none" and plain.status == "optimal"
    assert abs(plain.fun - res.fun) <= 1e-9 * abs(plain.fun)
    np.testing.assert_allclose(_beta(plain), _beta(res), atol=2e-6)


def test_a_failed_thread_leaves_the_polish_to_factorize(svr_data, monkeypatch):
    X, t = svr_data
    plain = _solve(X, t, options=SMOOptions(early_min_free=10 ** 9))

    block = kb.symmetric_block

    def fail_on_the_thread(*a, **k):
        if threading.current_thread().name == "margin-opt-early-factor":
            raise MemoryError("no room for K_FF")
        return block(*a, **k)

    monkeypatch.setattr(kb, "symmetric_block", fail_on_the_thread)
    res = _solve(X, t)
    assert res.cache["early_factor"] == "discarded"
    # the polish then factorizes the free set itself: the plain run, bit for bit
    np.testing.assert_array_equal(res.x, plain.x)
    assert res.nit == plain.nit and res.status == "optimal"


def test_given_kernel_matrix_and_sparse_data(svr_data, libsvm):
    X, t = svr_data
    K = np.exp(-GAMMA * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    res = _solve(K, t, kernel="precomputed")
    assert res.cache["early_factor"] == "used"       # K_FF from the matrix, never the cache
    beta, _ = libsvm
    np.testing.assert_allclose(_beta(res), beta, atol=1e-5)
    sparse = _solve(sp.csr_matrix(X), t)               # the thread would read SMO's cache
    assert sparse.cache["early_factor"] == "none" and sparse.status == "optimal"
    np.testing.assert_allclose(_beta(sparse), beta, atol=1e-5)


def test_small_free_set_starts_no_thread(svr_data):
    X, t = svr_data
    res = _solve(X[:300], t[:300])
    assert res.cache["early_factor"] == "none" and res.status == "optimal"


def test_looks_at_the_gap_change_nothing_and_nor_does_a_slow_thread(svr_data, monkeypatch):
    # SMO in chunks of early_chunk iterations (looking at m − M, never starting:
    # early_at = 0)
    # against one call (no look), with a small cache (rows evicted and recomputed): bit
    # for bit; then a thread slowed by 0.3 s against one at full speed: bit for bit
    X, t = svr_data
    qp = SVRProblem(X, t, C=C, epsilon=EPS, kernel="rbf", gamma=GAMMA).to_standard_form()
    looked = solve_smo(qp, tol=1e-6, gap_tol=1e-7, cache_size=3,
                       options=SMOOptions(early_at=0.0))
    once = solve_smo(qp, tol=1e-6, gap_tol=1e-7, cache_size=3,
                     options=SMOOptions(early_at=0.0, early_factor=False))
    assert looked.cache["early_factor"] == once.cache["early_factor"] == "none"
    assert looked.cache["misses"] > 2 * X.shape[0]                 # evictions
    np.testing.assert_array_equal(looked.x, once.x)
    assert looked.nit == once.nit and looked.status == "optimal"
    fast = _solve(X, t)
    compute = early.EarlyFactor._compute

    def slow(self, *a):
        time.sleep(0.3)
        compute(self, *a)

    monkeypatch.setattr(early.EarlyFactor, "_compute", slow)
    late = _solve(X, t)
    assert fast.cache["early_factor"] == late.cache["early_factor"] == "used"
    np.testing.assert_array_equal(late.x, fast.x)
    assert late.nit == fast.nit
