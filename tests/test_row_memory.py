"""SMO runs one after another and side by side, each with its own row cache (the earlier
solver kept the cache's memory between runs; the compiled solver's cache belongs to its
run).

The reference for every run is the same run alone (the multipliers must agree bit for
bit), and LIBSVM's decision values on the same problem."""

import threading

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from margin_opt.kernels import make_kernel
from margin_opt.solvers.smo import solve_smo
from margin_opt.standard_forms import DualQP

CACHE_MB = 8            # 524 rows of 2000: the cache evicts


def _qp(n=2000, seed=0):
    X, y = make_classification(n, 10, n_informative=6, flip_y=0.05, random_state=seed)
    X = StandardScaler().fit_transform(X)
    y = np.where(y > 0, 1.0, -1.0)
    return DualQP(X=X, kernel=make_kernel("rbf", X, gamma=0.1), y=y, p=-np.ones(n),
                  upper=np.ones(n))


def test_runs_in_a_row_agree_and_are_libsvms():
    qp = _qp()
    first = solve_smo(qp, tol=1e-6, cache_size=CACHE_MB)
    again = solve_smo(qp, tol=1e-6, cache_size=CACHE_MB)
    assert first.status == "optimal"
    assert again.nit == first.nit and again.cache["misses"] == first.cache["misses"]
    np.testing.assert_array_equal(again.x, first.x)
    assert again.b == first.b
    lib = SVC(C=1.0, kernel="rbf", gamma=0.1, tol=1e-8).fit(qp.X, qp.y)
    beta = first.x * qp.y
    f = qp.kernel(qp.X, qp.X[beta != 0]) @ beta[beta != 0] + first.b
    np.testing.assert_allclose(f, lib.decision_function(qp.X), atol=1e-4)


def test_an_error_in_a_run_leaves_the_next_run_alone():
    # an exception from the callback (not StopIteration) reaches the caller; the next
    # run is the run of a fresh process's
    qp = _qp(1000)
    ref = solve_smo(qp, cache_size=CACHE_MB)

    def boom(intermediate_result):
        raise RuntimeError("user callback failed")

    with pytest.raises(RuntimeError, match="user callback failed"):
        solve_smo(qp, cache_size=CACHE_MB, callback=boom, callback_every=10)
    after = solve_smo(qp, cache_size=CACHE_MB)
    assert after.nit == ref.nit
    np.testing.assert_array_equal(after.x, ref.x)


def test_runs_at_once_agree_with_one_at_a_time():
    # two runs on two threads at once (the compiled iterations release the GIL): each
    # the run alone, bit for bit
    qps = [_qp(1500, seed=s) for s in (1, 2)]
    alone = [solve_smo(q, tol=1e-6, cache_size=CACHE_MB).x for q in qps]
    out = [None, None]
    barrier = threading.Barrier(2)

    def work(k):
        barrier.wait()
        out[k] = solve_smo(qps[k], tol=1e-6, cache_size=CACHE_MB).x

    threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in (0, 1):
        np.testing.assert_array_equal(out[k], alone[k])
