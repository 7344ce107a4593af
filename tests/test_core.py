"""The compiled core (margin_opt._core, src/core): its checks of what it is given, its
thread pool (sleeping workers, a fork, two callers at once) and the kernel engine's
values against scikit-learn's pairwise kernels (the reference)."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise

from margin_opt import _core
from margin_opt.kernels import make_kernel
from margin_opt.kernels.expansion import binary_expansion, evaluate


def _dense_problem(n=500, n_sv=120, d=7, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n_sv, d)), rng.normal(size=n_sv)


def _engine(Q, SV, w, gamma, threads, block_rows=16):
    shift = SV.mean(axis=0)
    SVc = np.ascontiguousarray(SV - shift)
    support = _core.Support(_core.Rows.dense(SVc), np.einsum("ij,ij->i", SVc, SVc), shift=shift)
    tiles = np.array([[lo, min(lo + 32, len(SV)), 0] for lo in range(0, len(SV), 32)],
                     dtype=np.int64)
    z = np.zeros(1, dtype=np.int64)
    ex = _core.Expansion(np.ascontiguousarray(w[:, None]), tiles, z, z, z - 1, z,
                         np.array([0.25]), 1)
    out = np.empty((len(Q), 1))
    _core.expansion_values(_core.KernelSpec(2, gamma, 0.0, 3), _core.Rows.dense(Q), support,
                           ex, out, threads=threads, block_rows=block_rows)
    return out[:, 0]


def test_the_engine_equals_scikit_learns_rbf_on_any_thread_count():
    Q, SV, w = _dense_problem()
    ref = pairwise.rbf_kernel(Q, SV, gamma=0.3) @ w + 0.25
    one = _engine(Q, SV, w, 0.3, threads=1)
    np.testing.assert_allclose(one, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    for threads in (2, 3, 7):
        np.testing.assert_array_equal(_engine(Q, SV, w, 0.3, threads=threads), one)


@pytest.mark.parametrize("name", ["linear", "poly", "rbf", "sigmoid"])
def test_sparse_and_dense_queries_agree_with_the_reference(name):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 30))
    X[rng.random(X.shape) < 0.7] = 0.0
    kernel = make_kernel(name, X, gamma=0.05, coef0=0.5, degree=3)
    coef = rng.normal(size=(1, 40))
    ex = binary_expansion(coef, [0.5])
    ref = {"linear": pairwise.linear_kernel(X, X[:40]),
           "poly": pairwise.polynomial_kernel(X, X[:40], degree=3, gamma=0.05, coef0=0.5),
           "rbf": pairwise.rbf_kernel(X, X[:40], gamma=0.05),
           "sigmoid": pairwise.sigmoid_kernel(X, X[:40], gamma=0.05, coef0=0.5)}[name]
    ref = ref @ coef[0] + 0.5
    for Q in (X, sp.csr_matrix(X)):
        got = evaluate(kernel, Q, Q[:40], ex, nthr=2)[:, 0]
        np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-11 * np.abs(ref).max())


def test_wrong_arguments_are_value_errors_not_reads_out_of_bounds():
    data, indptr = np.ones(3), np.array([0, 2, 3], dtype=np.int64)
    with pytest.raises(ValueError, match="sorted, unique and below n_cols"):
        _core.Rows.csr(data, np.array([0, 9, 1], dtype=np.int64), indptr, 5)
    with pytest.raises(ValueError, match="sorted, unique"):
        _core.Rows.csr(data, np.array([2, 1, 1], dtype=np.int64), indptr, 5)
    with pytest.raises(ValueError, match="indptr"):
        _core.Rows.csr(data, np.array([0, 1, 1], dtype=np.int64),
                       np.array([0, 2, 4], dtype=np.int64), 5)
    W = np.ones((4, 1))
    z = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="tile"):
        _core.Expansion(W, np.array([[0, 5, 0]], dtype=np.int64), z, z, z - 1, z, np.zeros(1), 1)
    with pytest.raises(ValueError, match="a_slot"):
        _core.Expansion(W, np.array([[0, 4, 0]], dtype=np.int64), z + 1, z, z - 1, z,
                        np.zeros(1), 1)
    with pytest.raises(ValueError, match="kind"):
        _core.KernelSpec(7, 1.0, 0.0, 3)
    rows = _core.Rows.dense(np.ones((4, 3)))
    with pytest.raises(ValueError, match="shift"):
        _core.Support(rows, np.ones(4))
    support = _core.Support(rows, np.ones(4), shift=np.zeros(3))
    ex = _core.Expansion(W, np.array([[0, 4, 0]], dtype=np.int64), z, z, z - 1, z,
                         np.zeros(1), 1)
    with pytest.raises(ValueError, match="differ in width"):
        _core.expansion_values(_core.KernelSpec(0, 1.0, 0.0, 1),
                               _core.Rows.dense(np.ones((2, 5))), support, ex,
                               np.empty((2, 1)), threads=1, block_rows=4)
    with pytest.raises(ValueError, match="out must be"):
        _core.expansion_values(_core.KernelSpec(0, 1.0, 0.0, 1), rows, support, ex,
                               np.empty((3, 1)), threads=1, block_rows=4)


def test_the_linear_and_pair_bindings_refuse_what_they_cannot_read_safely():
    # review findings: each of these read or wrote outside an array (or into a freed
    # temporary) before its check; now a ValueError, or a TypeError where an array
    # would have been converted (a copy the core would keep a pointer to, or write into)
    with pytest.raises(TypeError):                  # Fortran order: no converted copy
        _core.LinearX.dense(np.asfortranarray(np.ones((20, 3))))
    with pytest.raises(ValueError, match="indptr"):  # a row past nnz, before the last fails
        _core.LinearX.csr(np.ones(5), np.zeros(5, np.int32), np.array([0, 100, 5], np.int32), 3)
    with pytest.raises(ValueError, match="indptr"):
        _core.Rows.csr(np.ones(3), np.zeros(3, np.int64), np.array([0, 9, 3], np.int64), 2)
    with pytest.raises(ValueError, match="inside K"):   # i0 + ni overflows
        _core.pair_block(np.ones((4, 4)), 2 ** 63 - 1, 1, 0, 0, np.zeros((1, 1)))
    rows = _core.Rows.dense(np.ones((4, 3)))
    with pytest.raises(ValueError, match="add up"):     # sizes whose sum overflows to n
        _core.ClassKernel(_core.KernelSpec(2, 1.0, 0.0, 3), rows,
                          np.array([2 ** 62, 2 ** 62, 2 ** 62, 2 ** 62 + 4], np.int64), 1)
    x = _core.LinearX.dense(np.ones((4, 3)))
    with pytest.raises(TypeError):                  # float32 H: the sums would be lost
        x.add_hessian(np.arange(2), np.ones(2), np.zeros((4, 4), np.float32))
    H = np.zeros((4, 4))
    x.add_hessian(np.arange(2), np.ones(2), H)
    assert H[3, 3] == 2.0


def test_the_pair_batch_refuses_what_it_cannot_read_and_solves_as_solve_smo():
    # a one-vs-one batch's arguments are checked before any pair runs; its answers are
    # solve_smo's on each pair's block (the same first phase), and LIBSVM's within tol
    from sklearn.datasets import load_iris
    from sklearn.svm import SVC as LibSVC

    from margin_opt.solvers.smo import solve_smo
    from margin_opt.standard_forms import DualQP

    X, y = load_iris(return_X_y=True)
    K = pairwise.rbf_kernel(X, gamma=0.5)           # rows grouped by class already
    sizes = np.bincount(y).astype(np.int64)
    pairs = np.array([[0, 1], [0, 2], [1, 2]], np.int64)
    limits = np.tile([10 ** 6, 10 ** 5], (3, 1)).astype(np.int64)
    upper = np.ones(150)
    bad = [((None, K, sizes, np.array([[0, 3]], np.int64), upper, limits[:1]), "pairs"),
           ((None, K, sizes, np.array([[1, 1]], np.int64), upper, limits[:1]), "pairs"),
           ((None, K[:, :149].copy(), sizes, pairs, upper, limits), "shape"),
           ((None, K, sizes, pairs, upper[:149], limits), "upper"),
           ((None, K, sizes, pairs, -upper, limits), "upper"),
           ((None, K, sizes, pairs, upper, limits[:2]), "limits"),
           ((None, None, sizes, pairs, upper, limits), "ClassKernel or")]
    for args, match in bad:
        with pytest.raises(ValueError, match=match):
            _core.PairBatch(*args)
    batch = _core.PairBatch(None, K, sizes, pairs, upper, limits)
    stop = _core.PairStopping()
    stop.phase = stop.tol = 1e-3
    with pytest.raises(ValueError, match="first and last"):
        batch.solve(0, 4, _core.SolverSettings(), stop, None, 1)
    batch.solve(0, 3, _core.SolverSettings(), stop, None, 2)
    stats = dict(zip(_core.PAIR_STATS, batch.stats.T, strict=True))
    assert (stats["settled"] == 1).all()
    lib = LibSVC(gamma=0.5, tol=1e-3).fit(X, y)
    for q, (i, j) in enumerate(pairs):
        rows = np.r_[np.flatnonzero(y == i), np.flatnonzero(y == j)]
        yp = np.where(y[rows] == i, 1.0, -1.0)
        ref = solve_smo(DualQP(X=None, kernel=None, y=yp, p=-np.ones(rows.size),
                               upper=np.ones(rows.size), gram=K[np.ix_(rows, rows)]))
        lo, hi = batch.offset[q], batch.offset[q + 1]
        np.testing.assert_array_equal(batch.alpha[lo:hi], ref.x)
        assert stats["b"][q] == ref.b and stats["iterations"][q] == ref.nit
        assert abs(stats["b"][q] - lib.intercept_[q]) <= 1e-2     # LIBSVM's, at its tol


def test_read_only_inputs_are_taken_without_a_copy_and_left_unchanged():
    Q, SV, w = _dense_problem(n=50, n_sv=10)
    frozen = Q.copy()
    frozen.flags.writeable = False
    before = frozen.copy()
    np.testing.assert_array_equal(_engine(frozen, SV, w, 0.5, threads=2),
                                  _engine(Q, SV, w, 0.5, threads=2))
    np.testing.assert_array_equal(frozen, before)


def test_idle_workers_sleep():
    """After a parallel call the pool's workers watch for the next job for 50 µs, then
    wait on a condition variable: the process uses no CPU while it sleeps (a spinning
    worker would use ~all of it).  BLAS on one thread, as the library calls the core
    (OpenBLAS's own workers spin ~0.1 s after a call)."""
    from margin_opt.parallel import one_blas_thread

    Q, SV, w = _dense_problem(n=2000)
    with one_blas_thread():
        _engine(Q, SV, w, 0.3, threads=2)
    assert _core.pool_workers() >= 1
    t0 = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - t0 < 0.1


def test_two_callers_at_once_get_the_serial_answer():
    Q, SV, w = _dense_problem(n=3000, n_sv=300)
    ref = _engine(Q, SV, w, 0.3, threads=1)
    results = [None] * 4

    def work(i):
        results[i] = _engine(Q, SV, w, 0.3, threads=2)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, ref)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_fork_after_a_parallel_call_computes_in_the_child(tmp_path):
    """A child forked after the pool has run starts a pool of its own and answers as the
    parent does (in a subprocess, with a time limit: a hang is a failure)."""
    script = tmp_path / "fork_after_core.py"
    script.write_text(textwrap.dedent(f"""
        import multiprocessing as mp, sys
        import numpy as np
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_core import _dense_problem, _engine
        Q, SV, w = _dense_problem(n=4000, n_sv=200)
        parent = _engine(Q, SV, w, 0.3, threads=2)

        def child(_):
            return _engine(Q, SV, w, 0.3, threads=2)

        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map(child, range(4))
        assert all(np.array_equal(g, parent) for g in got)
        print("ok")
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_the_instruction_set_build_is_named():
    assert _core.instruction_set() in ("base", "v3", "v4")


@pytest.mark.parametrize("level", ["base", "v3"])
def test_every_instruction_set_build_gives_the_reference(level):
    """The lower builds of the kernel loops (MARGIN_OPT_ISA caps the level) give
    scikit-learn's values too, on whatever CPU runs the tests."""
    code = textwrap.dedent("""
        import numpy as np
        from sklearn.metrics import pairwise
        from margin_opt import _core
        from margin_opt.kernels import make_kernel
        from margin_opt.kernels.expansion import binary_expansion, evaluate
        import scipy.sparse as sp
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 9)); X[X < 0.3] = 0.0
        coef = rng.normal(size=(1, 50))
        for Q in (X, sp.csr_matrix(X)):
            for name, ref in (("rbf", pairwise.rbf_kernel(X, X[:50], gamma=0.2)),
                              ("poly", pairwise.polynomial_kernel(X, X[:50], 3, 0.2, 1.0))):
                k = make_kernel(name, X, gamma=0.2, coef0=1.0, degree=3)
                got = evaluate(k, Q, Q[:50], binary_expansion(coef, [0.0]), nthr=2)[:, 0]
                want = ref @ coef[0]
                assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * abs(want).max())
        print(_core.instruction_set())
    """)
    env = dict(os.environ, MARGIN_OPT_ISA=level)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ({"base"} if level == "base" else {"base", "v3"})
