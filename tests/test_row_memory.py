"""The row cache's memory kept between SMO runs (:mod:`margin_opt.solvers.smo.memory`).

The reference for every run on kept memory is the same run on fresh memory (nothing
kept): the multipliers must agree bit for bit, whatever the kept buffer held; and
LIBSVM's decision values on the same problem."""

import os
import sys
import threading

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from margin_opt.kernels import make_kernel
from margin_opt.solvers.smo import SMOOptions, solve_smo
from margin_opt.solvers.smo import memory as mem
from margin_opt.standard_forms import DualQP

_MB = 2 ** 20
CACHE_MB = 8            # 524 slots for 2000 rows: the cache evicts, and packs rows


@pytest.fixture(autouse=True)
def _nothing_kept():
    mem.release()
    yield
    mem.release()


def _qp(n=2000, seed=0):
    X, y = make_classification(n, 10, n_informative=6, flip_y=0.05, random_state=seed)
    X = StandardScaler().fit_transform(X)
    y = np.where(y > 0, 1.0, -1.0)
    return DualQP(X=X, kernel=make_kernel("rbf", X, gamma=0.1), y=y, p=-np.ones(n),
                  upper=np.ones(n))


def test_a_run_on_kept_memory_never_reads_what_it_held():
    qp = _qp()
    none = mem.RowMemory(keep_mb=0)
    fresh = solve_smo(qp, tol=1e-6, cache_size=CACHE_MB, options=SMOOptions(memory=none))
    assert none.kept_mb() == 0.0                           # nothing kept when keep_mb = 0
    pool = mem.RowMemory(keep_mb=512)
    kept_by = SMOOptions(memory=pool)
    poison = np.full(CACHE_MB * _MB // 8, np.nan)
    pool.give(poison)
    kept = solve_smo(qp, tol=1e-6, cache_size=CACHE_MB, options=kept_by)
    assert np.isfinite(poison).any()                       # the run did use that buffer
    assert len(pool._free) == 1 and pool._free[0] is poison  # and gave it back
    assert mem.kept_mb() == 0.0                            # not the process's pool
    assert kept.nit == fresh.nit and kept.cache["misses"] == fresh.cache["misses"]
    np.testing.assert_array_equal(kept.x, fresh.x)
    assert kept.b == fresh.b
    # on the first run's leftovers
    again = solve_smo(qp, tol=1e-6, cache_size=CACHE_MB, options=kept_by)
    np.testing.assert_array_equal(again.x, fresh.x)
    # and the answer is LIBSVM's
    lib = SVC(C=1.0, kernel="rbf", gamma=0.1, tol=1e-8).fit(qp.X, qp.y)
    beta = kept.x * qp.y
    f = qp.kernel(qp.X, qp.X[beta != 0]) @ beta[beta != 0] + kept.b
    np.testing.assert_allclose(f, lib.decision_function(qp.X), atol=1e-4)


def test_the_memory_comes_back_when_a_run_raises():
    qp = _qp(1000)

    def boom(intermediate_result):
        raise RuntimeError("user callback failed")

    with pytest.raises(RuntimeError, match="user callback failed"):
        solve_smo(qp, cache_size=CACHE_MB, callback=boom, callback_every=10)
    assert mem.kept_mb() == CACHE_MB
    buf = mem.POOL._free[0]
    with pytest.raises(ValueError, match="block_size"):     # refused before it takes one
        solve_smo(qp, cache_size=CACHE_MB, block_size=1)
    solve_smo(qp, cache_size=CACHE_MB)
    assert len(mem.POOL._free) == 1 and mem.POOL._free[0] is buf     # reused, not a second one


def test_runs_at_once_take_their_own_buffers_and_agree_with_one_at_a_time():
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
    a, b = mem.take(100), mem.take(100)
    assert not np.shares_memory(a, b)                      # two takers, two buffers
    mem.give(a)
    mem.give(b)


def test_what_is_kept_is_bounded_and_can_be_released():
    pool = mem.RowMemory(keep_mb=20)                      # a pool of its own
    small = pool.take(_MB // 8)                             # 1 MB: below the heap's size
    pool.give(small)
    assert pool.kept_mb() == 0.0
    bufs = [pool.take(8 * _MB // 8) for _ in range(3)]      # three of 8 MB
    for b in bufs:
        pool.give(b)
    assert pool.kept_mb() == 16.0                           # the oldest dropped
    assert not any(b is mem._root(bufs[0]) for b in pool._free)
    pool.keep_mb = 40
    pool.give(bufs[1])                                      # given twice: kept once
    assert len({id(b) for b in pool._free}) == len(pool._free) == 2
    pool.give(np.empty(41 * _MB // 8))                      # larger than keep_mb: not kept
    assert pool.kept_mb() == 16.0
    pool.release()
    six, ten = pool.take(6 * _MB // 8), pool.take(10 * _MB // 8)
    pool.give(ten)
    pool.give(six)
    got = pool.take(5 * _MB // 8, reserve=30 * _MB // 8)    # the smallest that fits
    assert got.size == 5 * _MB // 8 and mem._root(got) is mem._root(six)
    assert mem._root(pool.take(7 * _MB // 8)) is mem._root(ten)
    new = pool.take(11 * _MB // 8, reserve=12 * _MB // 8)   # none fits: a new one, reserved
    assert mem._root(new).nbytes == 12 * _MB
    pool.give(new)
    pool.keep_mb = 0                                        # lowered: trimmed at the next give
    pool.give(got)
    assert pool.kept_mb() == 0.0


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux",
                    reason="fork is what is tested")
def test_a_forked_process_neither_sees_nor_writes_the_parents_buffers():
    buf = mem.take(8 * _MB // 8)
    buf[:] = 1.0
    mem.give(buf)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                           # the child
        try:
            ok = mem.kept_mb() == 0.0                      # nothing kept from the parent
            buf[:] = 42.0                                  # its copy of the memory
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    seen = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    assert seen == b"1"
    assert np.all(buf == 1.0) and mem.kept_mb() == 8.0     # the parent's, untouched
