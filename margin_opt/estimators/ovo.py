"""One-vs-one multiclass SVM, as LIBSVM does it: k(k−1)/2 certified binary problems.

For classes i < j (in ``classes_`` order) the pair problem is the binary C-SVC
(:class:`~margin_opt.problems.svm.SVMProblem`) on the samples of classes i and j,
class i labelled +1, each solved by the estimator's method and certified.  Its
data are the samples of class i then those of class j (each in their original
order), as in LIBSVM's ``svm_train``, so that SMO visits them in LIBSVM's order.

Kernel values are shared across the pairs where that saves work: when the n × n
kernel matrix fits the cache budget, each class's diagonal block is computed once and
each off-diagonal block by the one pair that needs it (:class:`ClassBlocks`), so every
pair gets its whole kernel matrix with every entry computed once (LIBSVM recomputes
rows pair by pair); otherwise each pair's SMO computes and caches its own rows.
Pairs that share the matrix and are solved by SMO are solved in compiled calls that
release the GIL, on worker threads and on the fitting thread (work stealing).  On an
RBF or polynomial kernel (:func:`_batched_pairs`) a call takes a run of pairs: each
one's kernel block, SMO on it and the numbers of its certificate
(:func:`~margin_opt.solvers.smo.batch.block_pairs_run`), from which the fitting thread
makes its Solution and certificate (:mod:`margin_opt.problems.svm_batch`) while the
workers go on; a pair whose reading is not the whole story is read, certified and
repaired by the solve path (:func:`~margin_opt.problems.solve_path.finish`).  Other
kernels' pairs take one call each (:func:`~margin_opt.solvers.smo.solve_block_pair`:
the pair's kernel block and SMO, no Python between SMO's phases), a few pairs ahead of
the fitting thread, which builds the pairs' problems and reads, certifies and repairs
their answers in pair order.  Where the thread policy gives one thread (a parallel
job's worker, busy cores) there is no pool: the calls run on the fitting thread.  At
tol ≥ 1e-3 each pair's answer is the one the whole solve path gives, bit for bit;
below, SMO's tail is one compiled Newton step instead of the polish (the same optimum
within tol).  On any number of threads, whichever thread runs a pair, the fit is the
same.

The fitted attributes are LIBSVM's layout (``support_`` grouped by class,
``dual_coef_`` of shape (k − 1, n_SV), ``intercept_`` of shape (k(k − 1)/2,)), and
the decision values, the votes and their tie-breaking are LIBSVM's and
scikit-learn's.

References
----------
S. Knerr, L. Personnaz and G. Dreyfus, "Single-layer learning revisited: a stepwise
procedure for building and training a neural network", 1990 (one-vs-one).
C.-W. Hsu and C.-J. Lin, "A comparison of methods for multiclass support vector
machines", IEEE TNN 13(2), 2002.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM TIST
2(3), 2011, §7 (multi-class classification, the layout of the model).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import _ovr_decision_function

from ..certificate import CompositeCertificate
from ..exceptions import no_convergence_warnings
from ..kkt import READING, category_threshold
from ..parallel import current_policy, fit_threads, one_blas_thread
from ..problems.base import SV_THRESHOLD
from ..problems.kernel_data import check_scale
from ..problems.svm import SVMProblem
from ..problems.svm_batch import clean, pair_solution
from ..solvers.smo import block_pair_matrix, solve_block_pair, solve_smo_gram
from ..solvers.smo import rows as _rows
from ..solvers.smo.batch import block_pairs_run, pair_result
from ..solvers.smo.batch import pair_settings as batch_settings
from ..validation import check_box_bounds
from .base import backend_options, certify_result, solve_and_certify

__all__ = ["class_pairs", "OneVsOneFit", "ClassBlocks", "fit_one_vs_one",
           "ovo_votes", "ovr_from_ovo", "linear_decision", "GRAM_BUDGET_MB",
           "GRAM_OPTIONS", "SHARED_KERNELS"]

#: Memory budget (MB) under which the whole kernel matrix is computed once and shared
#: by the pairs, unless the estimator's ``cache_size`` (or its ``solver_options``'
#: ``cache_size``) says otherwise.
GRAM_BUDGET_MB = 200


def class_pairs(n_classes: int) -> list:
    """The pairs (i, j), i < j, in LIBSVM's order: (0, 1), (0, 2), …, (k − 2, k − 1)."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


@dataclass
class OneVsOneFit:
    """The fitted pairs, in LIBSVM's layout.

    Attributes
    ----------
    support : ndarray of int of shape (n_SV,)
        Rows of the training data, grouped by class, ascending within a class.
    n_support : ndarray of int32 of shape (n_classes,)
    dual_coef : ndarray of shape (n_classes − 1, n_SV)
    intercept : ndarray of shape (n_pairs,)
    n_iter : ndarray of int32 of shape (n_pairs,)
    solutions : list of Solution
        One per pair, on the pair's own data (class i then class j).
    certificate : CompositeCertificate, Certificate or None
        The pairs' certificates (the one certificate for two classes).
    coef : ndarray of shape (n_pairs, n_features) or None
        The primal w of each pair (linear kernel).
    pair_rows : list of ndarray of int
        The training rows of each pair's data, in the pair's order.
    shared_gram : bool
        Whether the pairs took their kernel blocks from one shared matrix.
    """

    support: np.ndarray
    n_support: np.ndarray
    dual_coef: np.ndarray
    intercept: np.ndarray
    n_iter: np.ndarray
    solutions: list
    certificate: object
    coef: np.ndarray | None
    pair_rows: list
    shared_gram: bool


#: Kernels whose matrix is shared: PSD by construction (a sigmoid or callable kernel
#: may be indefinite, so its pairs keep their own rows and their own PSD check).
SHARED_KERNELS = ("linear", "poly", "rbf")


class ClassBlocks:
    """The kernel matrix of the training data grouped by class, shared by the pairs.

    Pair (i, j) takes its block [[K_ii, K_ij], [K_ji, K_jj]].  For a named kernel on
    dense data the diagonal blocks K_cc are computed once per class and the
    off-diagonal one K_ji once, by the pair that needs it (K_ij is its transpose):
    every entry once, by the compiled code of SMO's rows, and no n × n matrix stored —
    copying the pairs' blocks out of a whole matrix streamed ~45 MB on digits and took
    as long as computing them.  Otherwise (sparse data, a sigmoid or callable kernel)
    the whole matrix is computed once and the pairs copy their blocks out of it.
    The caller has checked that the kernel values are finite
    (:func:`~margin_opt.problems.kernel_data.check_scale`).

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
    members : list of ndarray of int
        The rows of each class.
    kernel : Kernel
    """

    def __init__(self, X, members, kernel):
        sizes = np.array([m.size for m in members])
        self.stop = np.cumsum(sizes)
        self.start = self.stop - sizes
        Xg = X[np.concatenate(members)]
        self.K = None
        if sp.issparse(Xg) or kernel.name not in _rows.KINDS:
            self.K = kernel.gram(Xg)
            return
        self._kd, _ = _rows.named_kernel_arrays(Xg, kernel)
        self._diag = [None] * sizes.size
        self._lock = threading.Lock()

    def diag(self, c) -> np.ndarray:
        """K_cc, the kernel matrix of class c, computed on first use (by the thread that
        first needs it: the pairs' worker threads)."""
        with self._lock:
            if self._diag[c] is None:
                with one_blas_thread():     # small products: BLAS threads cost more
                    self._diag[c] = _rows.symmetric_block(
                        self._kd, np.arange(self.start[c], self.stop[c]))
            return self._diag[c]

    def pair(self, i, j) -> np.ndarray:
        """The kernel matrix of pair (i, j): class i's samples, then class j's."""
        ri = slice(self.start[i], self.stop[i])
        rj = slice(self.start[j], self.stop[j])
        if self.K is not None:
            ni = ri.stop - ri.start
            B = np.empty((ni + rj.stop - rj.start,) * 2)
            B[:ni, :ni] = self.K[ri, ri]
            B[:ni, ni:] = self.K[ri, rj]
            B[ni:, :ni] = self.K[rj, ri]
            B[ni:, ni:] = self.K[rj, rj]
            return B
        with one_blas_thread():         # the compiled pairs' own block (exactly mirrored)
            return block_pair_matrix(self._kd, self.diag(i), self.diag(j), ri.start, rj.start)


def fit_one_vs_one(est, X, y_index, classes, weight, kernel, *, solver, on_pair=None
                   ) -> OneVsOneFit:
    """Solve and certify the k(k − 1)/2 pair problems; assemble LIBSVM's layout.

    Parameters
    ----------
    est : SVC
        Its ``C``, ``fit_intercept``, ``tol``, ``solver_options`` and ``certify`` are
        used.
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
        Validated data; the Gram matrix (n_samples, n_samples) for a precomputed kernel.
    y_index : ndarray of int of shape (n_samples,)
        Class of each sample as a position in ``classes``.
    classes : ndarray of shape (n_classes,)
    weight : ndarray of shape (n_samples,)
        Sample weight × class weight (≥ 0): sample i has the box bound C·weightᵢ.
    kernel : Kernel
        Resolved on the whole training data (``gamma="scale"`` sees all of X).
    solver : str
        The registry method of every pair.
    on_pair : callable, optional
        ``on_pair(p, problem, solution)`` after pair p is solved (e.g. to calibrate
        probabilities while the pair's kernel block is at hand).

    Returns
    -------
    fit : OneVsOneFit
    """
    k = classes.size
    n = X.shape[0]
    pairs = class_pairs(k)
    precomputed = kernel.name == "precomputed"
    members = [np.flatnonzero(y_index == c) for c in range(k)]
    budget = float((est.solver_options or {}).get("cache_size",
                                                  getattr(est, "cache_size", GRAM_BUDGET_MB)))
    share = k > 2 and kernel.name in SHARED_KERNELS and n * n * 8 <= budget * 2 ** 20
    # the kernel's overflow check once on all of X, not on every pair's rows
    scale_checked = kernel.name not in ("precomputed", "callable")
    if scale_checked:
        check_scale(X, kernel)
    blocks = ClassBlocks(X, members, kernel) if share else None

    def solve_pair(pair, p=None):
        i, j = pair
        if k == 2:
            idx, positive = np.arange(n), y_index == 1     # classes_[1] is +1
        else:
            idx = np.concatenate([members[i], members[j]])
            positive = y_index[idx] == i                   # class i is +1, as LIBSVM
        Xp = X if k == 2 else (X[np.ix_(idx, idx)] if precomputed else X[idx])
        problem = SVMProblem.from_validated(
            Xp, np.where(positive, 1.0, -1.0), C=est.C, kernel=kernel,
            fit_intercept=est.fit_intercept, sample_weight=weight[idx],
            gram=blocks.pair(i, j) if share else None, scale_checked=scale_checked)
        sol, cert = solve_and_certify(est, problem, solver=solver)
        if on_pair is not None:
            on_pair(p, problem, sol)
        return sol, cert, idx

    def pair_problem(pair, Xc):
        """Pair (i, j)'s problem (its kernel block not attached yet) and SMO's options;
        its rows taken from ``Xc``, the data centred once for the RBF kernel (else X)."""
        i, j = pair
        idx = np.concatenate([members[i], members[j]])
        problem = SVMProblem.from_validated(
            (X if Xc is None else Xc)[idx], np.where(y_index[idx] == i, 1.0, -1.0),
            C=est.C, kernel=kernel, fit_intercept=est.fit_intercept,
            sample_weight=weight[idx], scale_checked=scale_checked, centred=Xc is not None,
            centre_linear=False)     # SMO runs on the shared (uncentred) kernel blocks
        return problem, backend_options(est, problem, solver), idx

    # Where the pairs share the kernel matrix and SMO solves them, each pair's kernel
    # block and SMO run on a worker thread (BLAS and numba on one thread there, the GIL
    # released), a few pairs ahead of this thread, which reads, certifies and repairs
    # the answers in pair order (solve_path.finish).  Otherwise one pair at a time
    # through the whole solve path: with ``on_pair`` (calibration: its own
    # cross-validated fits, in pair order), a ``callback`` or ``verbose``, a warm start or the
    # block algorithm (solve_smo's options), or another solver (pegasos draws from
    # NumPy's global generator; cvxpy's fits are not worth it).
    # (not the hard margin: its infeasibility is decided by the separability LP first)
    if on_pair is None and solver == "smo" and share and est.fit_intercept and \
            np.isfinite(est.C) and set(est.solver_options or {}) <= GRAM_OPTIONS and \
            not getattr(est, "verbose", False):
        nthr = fit_threads()
        workers = _pair_workers(members, pairs, budget, nthr)
        # the RBF distances of the pairs' own rows (their standard forms, a repair's
        # rows) on the data centred once, not on a centred copy made per pair
        Xc = X - X.mean(axis=0) if kernel.name == "rbf" and not sp.issparse(X) else None
        done = []
        batched = blocks.K is None and _read_compiled(kernel)
        if batched:
            with one_blas_thread():     # BLAS's pools limited once for the whole run
                done = _batched_pairs(est, y_index, weight, members, pairs, blocks, solver,
                                      workers, lambda pair: pair_problem(pair, Xc))
        elif workers == 0:
            # one thread (a parallel job's worker, a busy machine): no pool, each pair's
            # compiled call on this thread, then its answer read and certified
            with one_blas_thread():
                for pair in pairs:
                    problem, options, idx = pair_problem(pair, Xc)
                    job = _Ran(_smo_on_block(blocks, *pair, problem._qp, options,
                                             bool(est.certify)))
                    done.append(_finish_pair(est, problem, options, idx, job))
        else:
            # pairs submitted and not yet read (each holds its kernel block once solved):
            # one per worker, and up to _AHEAD more where the budget holds their blocks
            window = max(workers, min(workers + _AHEAD,
                                      _blocks_in_budget(members, pairs, budget) - 1))
            with one_blas_thread(), ThreadPoolExecutor(
                    workers, initializer=numba.set_num_threads, initargs=(1,)) as pool:
                ahead = deque()
                try:
                    for pair in pairs:
                        problem, options, idx = pair_problem(pair, Xc)
                        # the layout (y, p, upper) only: its arrays are read, never written
                        job = _PairJob(pool, (blocks, *pair, problem._qp, options,
                                              bool(est.certify)))
                        ahead.append((problem, options, idx, job))
                        if len(ahead) > window:
                            done.append(_finish_pair(est, *ahead.popleft(), _jobs(ahead)))
                    while ahead:
                        done.append(_finish_pair(est, *ahead.popleft(), _jobs(ahead)))
                except BaseException:
                    for *_, job in ahead:       # the error is raised now, not after them
                        job.future.cancel()
                    raise
    else:
        done = [solve_pair(pair, p) for p, pair in enumerate(pairs)]
    solutions = [sol for sol, _, _ in done]
    certs = [cert for _, cert, _ in done]
    rows = [idx for _, _, idx in done]
    return _assemble(est, X, y_index, classes, pairs, solutions, certs, rows, kernel, share)


#: ``solver_options`` under which the pairs run in compiled calls on worker threads
#: (the others: a callback, a warm start, the block algorithm, the polish switch, go
#: through :func:`~margin_opt.solvers.smo.solve_smo`)
GRAM_OPTIONS = {"tol", "gap_tol", "max_iter", "shrinking", "wss", "cache_size"}


def _smo_on_block(blocks, i, j, qp, options, quiet):
    """(K, result, mirrored): pair (i, j)'s kernel block and SMO's result on it, on a
    worker thread, in one compiled call where the block is computed from the classes'
    rows (then mirrored: exactly symmetric); else copied out of the whole matrix."""
    # one that stops short is repaired by finish when the fit is certified (``quiet``);
    # without a certificate nothing repairs it, and its ConvergenceWarning is issued
    with no_convergence_warnings() if quiet else nullcontext():
        if blocks.K is None:
            return *solve_block_pair(blocks._kd, blocks.diag(i), blocks.diag(j),
                                     blocks.start[i], blocks.start[j], qp, **options), True
        K = blocks.pair(i, j)
        return K, solve_smo_gram(replace(qp, gram=K), **options), False


#: Pairs submitted beyond one per worker: queued work for the workers while this
#: thread reads the answers, and for this thread to take while it waits.
_AHEAD = 2


class _PairJob:
    """A pair's compiled call (:func:`_smo_on_block`), queued for the workers; the fitting
    thread runs it itself when it needs its answer, or is waiting for another, before a
    worker has started it.  On two cores the pairs' compiled calls (~0.6 ms each on
    digits) and the fitting thread's Python (~0.5 ms a pair) are equal shares: with
    both threads kept busy neither waits for the other.  The answer does not depend on
    the thread (one thread per call, the same compiled code)."""

    def __init__(self, pool, args):
        self.args = args
        self.future = pool.submit(_smo_on_block, *args)

    def _run(self):
        return _smo_on_block(*self.args)

    def take(self) -> bool:
        """Run the call on this thread if no worker has started it (False otherwise)."""
        if not self.future.cancel():
            return False
        done = Future()
        try:
            done.set_result(self._run())
        except Exception as exc:        # raised where the pair's answer is read
            done.set_exception(exc)
        self.future = done
        return True

    def result(self, later=()):
        """The call's (K, result, mirrored): run here if not started; while a worker
        runs it, the ``later`` jobs (pairs behind it) not yet started are run here."""
        if not self.take():
            for job in later:
                if self.future.done():
                    break
                job.take()
        return self.future.result()


class _Ran:
    """A pair's compiled call already run on this thread (the pool-free path)."""

    def __init__(self, value):
        self.value = value

    def result(self, later=()):
        return self.value


def _jobs(ahead):
    """The jobs of the pairs submitted and not yet read, in pair order."""
    return (job for *_, job in ahead)


def _read_compiled(kernel) -> bool:
    """Whether the pairs' certificates are read in compiled code
    (:func:`_batched_pairs`): a kernel PSD by construction whose answers have no
    explicit primal weights (RBF; polynomial with coef0 ≥ 0).  A linear kernel's
    certificate reads f through w, that of a kernel not PSD by construction has its
    PSD check: the whole solve path's."""
    return kernel.name == "rbf" or (kernel.name == "poly" and kernel.coef0 >= 0)


#: Pairs per compiled call of :func:`_batched_pairs` where the pairs are shared by threads
_CHUNK = 3


class _PairsJob(_PairJob):
    """A compiled call over a run of pairs (:func:`~margin_opt.solvers.smo.batch.
    block_pairs_run`), queued for the workers, taken by the fitting thread as a pair's."""

    def __init__(self, pool, args):
        self.args = args
        self.future = pool.submit(block_pairs_run, *args)

    def _run(self):
        return block_pairs_run(*self.args)


def _batched_pairs(est, y_index, weight, members, pairs, blocks, solver, workers, problem_of):
    """Solve and read every pair in compiled calls (:func:`~margin_opt.solvers.smo.batch.
    block_pairs_run`: the pair's kernel block, SMO, its certificate's numbers), a few
    pairs a call, on ``workers`` threads beside this one (0: one call here); then each
    pair's Solution and certificate from its reading
    (:func:`margin_opt.problems.svm_batch.pair_solution`), or, for a pair whose reading
    is not its whole story (:func:`margin_opt.problems.svm_batch.clean`: stopped short,
    a negligible multiplier, a certificate that fails), the whole solve path on its
    kernel block (:func:`certify_result`: its repairs, warnings and errors).  Called
    with BLAS on one thread (:func:`~margin_opt.parallel.one_blas_thread`).

    Returns
    -------
    done : list of (Solution, Certificate or None, ndarray of int)
        One per pair, in pair order.
    """
    t0 = time.perf_counter()
    sizes = np.array([m.size for m in members], dtype=np.int64)
    class_start = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    pi = np.array([i for i, _ in pairs], dtype=np.int64)
    pj = np.array([j for _, j in pairs], dtype=np.int64)
    m_pair = sizes[pi] + sizes[pj]
    offsets = np.r_[0, np.cumsum(m_pair)].astype(np.int64)
    rows = np.concatenate([members[c] for i, j in pairs for c in (i, j)])
    y = np.where(y_index[rows] == np.repeat(pi, m_pair), 1.0, -1.0)
    p = np.full(rows.size, -1.0)
    C_rows = check_box_bounds(est.C, weight)
    C = C_rows[rows]
    starts = offsets[:-1]
    max_box = np.maximum.reduceat(C, starts)
    options = backend_options(est, None, solver, max_box=float(max_box.max()))
    settings = batch_settings(m_pair, **options)
    tol = float(est.tol)
    diag = np.concatenate([blocks.diag(c).ravel() for c in range(sizes.size)])
    diag_start = np.r_[0, np.cumsum(sizes * sizes)[:-1]].astype(np.int64)
    alpha, grad = np.empty(rows.size), np.empty(rows.size)
    decision, xi = np.empty(rows.size), np.empty(rows.size)
    out = np.empty((len(pairs), 6))
    num = np.empty((len(pairs), len(READING)))
    fixed = (blocks._kd, diag, diag_start, class_start, pi, pj, offsets, y, p, C,
             settings["tol"], settings["gap_tol"], settings["wss2"], settings["shrinking"],
             settings["max_iter"], settings["stall_window"], settings["kn"],
             settings["polish"], tol, category_threshold(tol), SV_THRESHOLD)
    written = (alpha, grad, out, decision, xi, num)
    alpha_scale = np.maximum(1.0, max_box)
    n_fixed = np.add.reduceat((C == 0).astype(np.int64), starts)
    certify = bool(est.certify)
    done = [None] * len(pairs)

    def read(lo, hi):
        """Pairs lo … hi − 1's Solutions and certificates, from their readings."""
        share = (time.perf_counter() - t0) / len(pairs)
        # a run that stopped short warns where nothing will repair it (no certificate)
        with no_convergence_warnings() if certify else nullcontext():
            results = [pair_result(alpha[offsets[q]:offsets[q + 1]],
                                   grad[offsets[q]:offsets[q + 1]], out[q],
                                   p[offsets[q]:offsets[q + 1]], settings, q, options["tol"],
                                   options.get("gap_tol"), share) for q in range(lo, hi)]
        for q, res in zip(range(lo, hi), results, strict=True):
            o, e = offsets[q], offsets[q + 1]
            sol = cert = None
            if clean(res, res.x, num[q], certify):
                sol, cert = pair_solution(res.x, y[o:e], p[o:e], res.b, decision[o:e],
                                          xi[o:e], num[q], res,
                                          tol=tol if certify else None,
                                          alpha_scale=float(alpha_scale[q]),
                                          n_fixed=int(n_fixed[q]))
            if sol is None or (certify and not cert.ok):
                # the whole solve path on the pair's block: its repairs, warnings, errors
                problem, pair_options, _ = problem_of(pairs[q])
                problem.data.use_gram(blocks.pair(*pairs[q]), symmetric=True)
                sol, cert = certify_result(est, problem, res, pair_options)
            done[q] = (sol, cert, rows[o:e])

    if workers == 0:
        block_pairs_run(*fixed, 0, len(pairs), *written)
        read(0, len(pairs))
        return done
    # runs of pairs queued for the workers; this thread takes those not started when it
    # needs them, and reads each run's pairs while the workers go on
    with ThreadPoolExecutor(workers, initializer=numba.set_num_threads,
                            initargs=(1,)) as pool:
        bounds = [(lo, min(lo + _CHUNK, len(pairs))) for lo in range(0, len(pairs), _CHUNK)]
        jobs = [_PairsJob(pool, (*fixed, lo, hi, *written)) for lo, hi in bounds]
        try:
            for k, job in enumerate(jobs):
                job.result(jobs[k + 1:])
                read(*bounds[k])
        except BaseException:
            for job in jobs:
                job.future.cancel()
            raise
    return done


def _finish_pair(est, problem, options, idx, job, later=()):
    """Pair's Solution and certificate (:func:`certify_result`), on the fitting thread."""
    K, res, mirrored = job.result(later)
    problem.data.use_gram(K, symmetric=mirrored)
    sol, cert = certify_result(est, problem, res, options)
    return sol, cert, idx


def _pair_workers(members, pairs, budget_mb, nthr):
    """Worker threads of the compiled pairs, for ``nthr`` threads
    (:func:`margin_opt.parallel.fit_threads`, read once by the caller): the fitting
    thread keeps a core (for its Python, and the calls no worker has started) and the
    workers share the others (on 2 cores one worker: two measured 5–15 % slower on
    digits), no more
    than the pairs nor than the cache budget holds (:func:`_blocks_in_budget`, one
    block per thread); 0 (no pool: the pairs run on the fitting thread) where
    ``nthr`` is 1 (a joblib worker's share, busy cores).  The thread policy's own count
    (:attr:`ThreadPolicy.pair_workers <margin_opt.parallel.ThreadPolicy>`) where it
    gives one."""
    forced = current_policy().pair_workers
    if forced is not None:
        return int(forced)
    if nthr <= 1:
        return 0
    return max(1, min(_pair_threads(members, pairs, budget_mb, nthr), nthr - 1))


def _pair_threads(members, pairs, budget_mb, nthr=None):
    """Pairs solved side by side: ``nthr`` threads (None: the thread policy's count,
    :func:`margin_opt.parallel.fit_threads`), at most the number of pairs, and no more
    than the cache budget holds (:func:`_blocks_in_budget`, one per thread)."""
    nthr = fit_threads() if nthr is None else nthr
    return max(1, min(nthr, len(pairs), _blocks_in_budget(members, pairs, budget_mb)))


def _blocks_in_budget(members, pairs, budget_mb) -> int:
    """Kernel blocks of the largest pair that the cache budget holds beside the classes'
    diagonal blocks."""
    sizes = np.array([m.size for m in members], dtype=float)
    largest = max(sizes[i] + sizes[j] for i, j in pairs)
    room = budget_mb * 2 ** 20 / 8 - float(sizes @ sizes)
    return int(room // (largest * largest)) if largest > 0 else len(pairs)


def _assemble(est, X, y_index, classes, pairs, solutions, certs, rows, kernel, share):
    k = classes.size
    # every pair's support vectors (training rows) and their coefficients, in pair order
    sv = np.concatenate([idx[sol.support_] for sol, idx in zip(solutions, rows, strict=True)])
    coef = np.concatenate([np.asarray(sol.dual_coef)[0, sol.support_] for sol in solutions])
    of_pair = np.repeat(np.arange(len(pairs)), [sol.support_.size for sol in solutions])
    is_sv = np.zeros(X.shape[0], dtype=bool)
    is_sv[sv] = True
    per_class = [np.flatnonzero(is_sv & (y_index == c)) for c in range(k)]
    support = np.concatenate(per_class).astype(np.int32)
    n_support = np.array([m.size for m in per_class], dtype=np.int32)
    column = np.full(X.shape[0], -1)
    column[support] = np.arange(support.size)
    dual_coef = np.zeros((k - 1, support.size))
    # class i's coefficients of pair (i, j) go to row j − 1, class j's to row i
    pi, pj = np.array(pairs, dtype=np.int64).reshape(-1, 2)[of_pair].T
    dual_coef[np.where(y_index[sv] == pi, pj - 1, pi), column[sv]] = coef
    intercept = np.array([float(s.b) for s in solutions])
    n_iter = np.array([0 if s.n_iter is None else int(s.n_iter) for s in solutions],
                      dtype=np.int32)
    coef = None
    if kernel.is_linear:
        coef = np.vstack([np.asarray(s.w, dtype=float) for s in solutions])
    certificate = None
    if est.certify:
        if k == 2:
            certificate = certs[0]
        else:
            names = [f"{classes[i]} vs {classes[j]}" for i, j in pairs]
            certificate = CompositeCertificate(
                dict(zip(names, certs, strict=True)), title="one-vs-one SVM certificate",
                keys=[(classes[i], classes[j]) for i, j in pairs])
    return OneVsOneFit(support, n_support, dual_coef, intercept, n_iter, solutions, certificate,
                       coef, rows, share)


def linear_decision(X, coef, intercept) -> np.ndarray:
    """Decision values X wᵀ + b of every pair, ndarray of shape (n_samples, n_pairs)."""
    out = X @ coef.T
    return np.asarray(out.toarray() if sp.issparse(out) else out) + intercept


def ovo_votes(dec, n_classes) -> np.ndarray:
    """LIBSVM's votes: pair (i, j) votes for i when its value is > 0, else for j.

    Returns
    -------
    votes : ndarray of int of shape (n_samples, n_classes)
    """
    votes = np.zeros((dec.shape[0], n_classes), dtype=np.int64)
    for p, (i, j) in enumerate(class_pairs(n_classes)):
        pos = dec[:, p] > 0
        votes[:, i] += pos
        votes[:, j] += ~pos
    return votes


def ovr_from_ovo(dec, n_classes) -> np.ndarray:
    """scikit-learn's one-vs-rest shape of the one-vs-one values (votes + confidences).

    ``votes + s / (3(|s| + 1))`` with s the summed pair values of each class, as
    ``sklearn.svm.SVC(decision_function_shape="ovr")`` returns.

    Returns
    -------
    decision : ndarray of shape (n_samples, n_classes)
    """
    return _ovr_decision_function(dec < 0, -dec, n_classes)
