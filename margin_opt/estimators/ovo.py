"""One-vs-one multiclass SVM, as LIBSVM does it: k(k−1)/2 certified binary problems.

For classes i < j (in ``classes_`` order) the pair problem is the binary C-SVC
(:class:`~margin_opt.problems.svm.SVMProblem`) on the samples of classes i and j,
class i labelled +1, each solved by the estimator's method and certified.  Its
data are the samples of class i then those of class j (each in their original
order), as in LIBSVM's ``svm_train``, so that SMO visits them in LIBSVM's order.

Kernel values are shared across the pairs where that saves work: when the n × n
kernel matrix fits the cache budget every value of it is computed once, each class's
diagonal block up front and each pair's off-diagonal block by the pair
(:class:`ClassBlocks`; LIBSVM recomputes rows pair by pair); otherwise each pair's SMO
computes and caches its own rows.  Pairs that share the
matrix and are solved by SMO run on worker threads, a few pairs ahead of the fitting
thread (the compiled SMO releases the GIL; the fitting thread takes a queued pair
itself while it waits), and the fitting thread builds the pairs' problems and reads,
certifies and repairs their answers in pair order
(:func:`~margin_opt.problems.solve_path.finish`).  Where the thread policy gives one
thread (a parallel job's worker, busy cores) there is no pool: the pairs run on the
fitting thread.  Each pair's answer is the one the whole solve path gives on its
block; on any number of threads, whichever thread runs a pair, the fit is the same.

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

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import _ovr_decision_function

from .._core import ClassKernel, pair_block
from ..certificate import CompositeCertificate
from ..exceptions import no_convergence_warnings
from ..kernels import CORE_KINDS, core_rows, core_spec, engine_gram
from ..kkt import READING, category_threshold, dual_qp_reading
from ..methods import get_method
from ..parallel import core_threads, current_policy, one_blas_thread
from ..problems.base import SV_THRESHOLD
from ..problems.kernel_data import check_scale
from ..problems.svm import SVMProblem
from ..problems.svm_batch import PairSource, clean, pair_solution, solve_pairs
from ..standard_forms import DualQP
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
    """The kernel values of the training data grouped by class, shared by the pairs.

    Pair (i, j) takes its block [[K_ii, K_ij], [K_ji, K_jj]], exactly symmetric.  For a
    named kernel on dense data (the compiled ``ClassKernel``, src/core/kernel.cpp) each
    class's diagonal block K_cc is computed once, here, and each pair computes its own
    K_ij (K_ji its transpose) on the worker thread that solves it: every entry once, no
    n × n matrix, and most of the kernel's work beside the fitting thread's Python.
    Otherwise (sparse data) the whole matrix is computed once and each pair's block is
    copied out of it (by the core, the GIL released).  The caller has checked that the
    kernel values are finite (:func:`~margin_opt.problems.kernel_data.check_scale`) and
    that the matrix fits the cache budget.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
    members : list of ndarray of int
        The rows of each class.
    kernel : Kernel
    """

    def __init__(self, X, members, kernel):
        sizes = np.array([m.size for m in members], dtype=np.int64)
        self.stop = np.cumsum(sizes)
        self.start = self.stop - sizes
        self.rows = np.concatenate(members)      # the training rows, class by class
        Xg = X[self.rows]
        self.K = self._classes = None
        if not sp.issparse(Xg) and kernel.name in CORE_KINDS:
            with one_blas_thread():         # the classes' blocks on the core's threads
                self._classes = ClassKernel(core_spec(kernel), core_rows(Xg), sizes,
                                            core_threads())
        else:
            self.K = engine_gram(kernel, Xg, threads=core_threads())

    def source(self, pairs, upper) -> PairSource:
        """The pairs as the compiled batch takes them, ``upper`` (n_samples,) each
        training row's box bound (put in the classes' row order here)."""
        return PairSource(self._classes, self.K, self.stop - self.start,
                          np.asarray(pairs, dtype=np.int64).reshape(-1, 2),
                          np.ascontiguousarray(upper[self.rows]))

    def pair(self, i, j) -> np.ndarray:
        """The kernel matrix of pair (i, j): class i's samples, then class j's (computed
        or copied by the core, the GIL released)."""
        i0, j0 = int(self.start[i]), int(self.start[j])
        ni, nj = int(self.stop[i]) - i0, int(self.stop[j]) - j0
        B = np.empty((ni + nj, ni + nj))
        if self._classes is not None:
            self._classes.pair(int(i), int(j), B)
        else:
            pair_block(self.K, i0, ni, j0, nj, B)
        return B


def fit_one_vs_one(est, X, y_index, classes, weight, kernel, *, solver, on_pair=None,
                   problem_factory=None, rescale=None) -> OneVsOneFit:
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
    problem_factory : callable, optional
        ``problem_factory(X_pair, y_pm, weight_pair, gram)`` → the pair's binary problem
        (e.g. :class:`~margin_opt.problems.nu.NuSVCProblem`) instead of the C-SVC; the
        pairs then go one by one through the whole solve path (the compiled pair batch
        is the C-SVC's only).
    rescale : callable, optional
        ``rescale(solution)`` → the factor of the pair's exported coefficients,
        intercept and w (the ν-SVC's 1/r: LIBSVM's C-SVC scale); default 1.

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
        if problem_factory is not None:
            problem = problem_factory(Xp, np.where(positive, 1.0, -1.0), weight[idx],
                                      blocks.pair(i, j) if share else None)
            sol, cert = solve_and_certify(est, problem, solver=solver)
            if on_pair is not None:
                on_pair(p, problem, sol)
            return sol, cert, idx
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
    # block, SMO and its certificate's numbers run on a worker thread (BLAS on one
    # thread there, the GIL released in SMO), a few pairs ahead of this thread, which
    # makes their Solutions and certificates in pair order, and reads, certifies and
    # repairs through the solve path (solve_path.finish) any pair whose reading is not
    # the whole story.  Otherwise one pair at a time through the whole solve path: with
    # ``on_pair`` (calibration: its own cross-validated fits, in pair order), a
    # ``callback`` or ``verbose``, a warm start (solve_smo's options), or another solver
    # (pegasos draws from NumPy's global generator; cvxpy's fits are not worth it).
    # (not the hard margin: its infeasibility is decided by the separability LP first)
    if problem_factory is None and on_pair is None and solver == "smo" and share and \
            est.fit_intercept and \
            np.isfinite(est.C) and set(est.solver_options or {}) <= GRAM_OPTIONS and \
            not getattr(est, "verbose", False):
        threads = _pair_threads(members, pairs, budget)
        # the RBF distances of the pairs' own rows (a repair's problem) on the data
        # centred once, not on a centred copy made per pair
        Xc = X - X.mean(axis=0) if kernel.name == "rbf" and not sp.issparse(X) else None
        # (≥ 0, finite: checked once here for every pair)
        C_rows = np.ascontiguousarray(check_box_bounds(est.C, weight), dtype=np.float64)
        options = backend_options(est, None, solver, max_box=float(C_rows.max()))
        # a reading is the whole story only for a kernel PSD by construction whose answer
        # has no explicit primal weights (RBF; poly with coef0 ≥ 0): a linear kernel's
        # certificate reads f through w, another kernel's has its PSD check
        read_kernel = kernel.name == "rbf" or (kernel.name == "poly" and kernel.coef0 >= 0)
        reading = (float(est.tol), category_threshold(float(est.tol)), SV_THRESHOLD) \
            if read_kernel else None

        def layout(pair):
            """Pair (i, j)'s standard form (its kernel block attached where needed)."""
            i, j = pair
            idx = np.concatenate([members[i], members[j]])
            y = np.where(y_index[idx] == i, 1.0, -1.0)
            qp = DualQP(X=None, kernel=kernel, y=y, p=-np.ones(idx.size), upper=C_rows[idx])
            return _PairLayout(pair, idx, qp)

        def repair(lay):
            return pair_problem(lay.pair, Xc)[:2]

        # every pair's first phase in compiled calls, the pairs side by side on the
        # core's threads; a pair that does not settle there, through the whole driver
        # here (its polish, its gap test), then each pair read and certified in order
        with one_blas_thread():
            answers = solve_pairs(blocks.source(pairs, C_rows), options, reading, threads)
            done = [_finish_pair(est, layout(pair), blocks, answer, (options, reading),
                                 repair) for pair, answer in zip(pairs, answers, strict=True)]
    else:
        done = [solve_pair(pair, p) for p, pair in enumerate(pairs)]
    solutions = [sol for sol, _, _ in done]
    certs = [cert for _, cert, _ in done]
    rows = [idx for _, _, idx in done]
    return _assemble(est, X, y_index, classes, pairs, solutions, certs, rows, kernel, share,
                     rescale)


#: ``solver_options`` under which the pairs run in compiled calls on worker threads
#: (the others: a callback, a warm start, the block algorithm, the polish switch, go
#: through :func:`~margin_opt.solvers.smo.solve_smo`)
GRAM_OPTIONS = {"tol", "gap_tol", "max_iter", "shrinking", "wss", "cache_size"}


@dataclass
class _PairLayout:
    """A pair of the shared-matrix path: (i, j), its training rows, its standard form."""

    pair: tuple
    idx: np.ndarray
    qp: DualQP


def _pair_run(blocks, lay, options, reading, quiet):
    """(K, result, reading) of one pair, on a worker thread: its kernel block
    (:meth:`ClassBlocks.pair`, exactly symmetric), SMO on it (the GIL released) and, where
    SMO ended optimal and ``reading`` (tol, category threshold, SV threshold) is given,
    its certificate's numbers (:func:`margin_opt.kkt.dual_qp_reading`:
    ``(decision, xi, num)``; None otherwise)."""
    # one that stops short is repaired by finish when the fit is certified; one left
    # stopped short is reported once for the whole fit by the estimator (warn_stopped),
    # so the estimators pass ``quiet``
    with no_convergence_warnings() if quiet else nullcontext():
        K = blocks.pair(*lay.pair)
        qp = lay.qp
        res = get_method("smo").load()(
            DualQP(X=None, kernel=qp.kernel, y=qp.y, p=qp.p, upper=qp.upper, gram=K),
            **options)
    if reading is None or res.status != "optimal" or \
            not (np.isfinite(res.x).all() and np.isfinite(res.b)):
        return K, res, None
    m = K.shape[0]
    decision, xi, num = np.empty(m), np.empty(m), np.empty(len(READING))
    tol, tau, sv_threshold = reading
    dual_qp_reading(K, lay.qp.y, lay.qp.p, lay.qp.upper, res.x, float(res.b), tol, tau,
                    sv_threshold, decision, xi, num)
    return K, res, (decision, xi, num)


def _finish_pair(est, lay, blocks, answer, run, repair):
    """A pair's Solution and certificate, on the fitting thread, from its first phase's
    ``answer`` (:func:`~margin_opt.solvers.smo.driver.solve_pairs`: (result, reading),
    or None where it did not settle there: then the whole driver runs here,
    :func:`_pair_run` with ``run`` = (options, reading)): from its reading
    (:func:`margin_opt.problems.svm_batch.pair_solution`) where that is its whole story
    (:func:`margin_opt.problems.svm_batch.clean`), else by the whole solve path on its
    problem (``repair(lay)``: (problem, options); :func:`certify_result`: its repairs,
    warnings and errors)."""
    K = None
    if answer is None:
        K, res, read = _pair_run(blocks, lay, *run, True)
    else:
        res, read = answer
    certify = bool(est.certify)
    sol = cert = None
    if read is not None and clean(res, res.x, read[2], certify):
        upper = lay.qp.upper
        sol, cert = pair_solution(res.x, lay.qp.y, lay.qp.p, float(res.b), *read, res,
                                  tol=float(est.tol) if certify else None,
                                  alpha_scale=max(1.0, float(upper.max())),
                                  n_fixed=int(np.count_nonzero(upper == 0)))
    if sol is None or (certify and not cert.ok):
        problem, options = repair(lay)
        problem.data.use_gram(blocks.pair(*lay.pair) if K is None else K, symmetric=True)
        sol, cert = certify_result(est, problem, res, options)
    return sol, cert, lay.idx


def _pair_threads(members, pairs, budget_mb, nthr=None):
    """Pairs solved side by side: ``nthr`` threads (None: the thread policy's count,
    :func:`margin_opt.parallel.core_threads`), at most the number of pairs, and no more
    than the cache budget holds (:func:`_blocks_in_budget`, one per thread); the thread
    policy's :attr:`~margin_opt.parallel.ThreadPolicy.pair_workers` where it gives one."""
    forced = current_policy().pair_workers
    if forced is not None:
        return int(forced)
    nthr = core_threads() if nthr is None else nthr
    return max(1, min(nthr, len(pairs), _blocks_in_budget(members, pairs, budget_mb)))


def _blocks_in_budget(members, pairs, budget_mb) -> int:
    """Kernel blocks of the largest pair that the cache budget holds beside the classes'
    diagonal blocks."""
    sizes = np.array([m.size for m in members], dtype=float)
    largest = max(sizes[i] + sizes[j] for i, j in pairs)
    room = budget_mb * 2 ** 20 / 8 - float(sizes @ sizes)
    return int(room // (largest * largest)) if largest > 0 else len(pairs)


def _assemble(est, X, y_index, classes, pairs, solutions, certs, rows, kernel, share,
              rescale=None):
    k = classes.size
    factor = [1.0 if rescale is None else float(rescale(s)) for s in solutions]
    # every pair's support vectors (training rows) and their coefficients, in pair order
    sv = np.concatenate([idx[sol.support_] for sol, idx in zip(solutions, rows, strict=True)])
    coef = np.concatenate([np.asarray(sol.dual_coef)[0, sol.support_] * f
                           for sol, f in zip(solutions, factor, strict=True)])
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
    intercept = np.array([float(s.b) * f for s, f in zip(solutions, factor, strict=True)])
    n_iter = np.array([0 if s.n_iter is None else int(s.n_iter) for s in solutions],
                      dtype=np.int32)
    coef = None
    if kernel.is_linear:
        coef = np.vstack([np.asarray(s.w, dtype=float) * f
                          for s, f in zip(solutions, factor, strict=True)])
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
