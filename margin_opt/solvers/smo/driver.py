"""Sequential Minimal Optimization for the LIBSVM standard dual QP.

``min_α ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  0 ≤ αᵢ ≤ uᵢ``,  ``Qᵢⱼ = yᵢyⱼK(x_{index[i]}, x_{index[j]})``.

C-SVC, the hard margin (u = ∞) and ε-SVR (2n variables through ``qp.index``)
are all this one form (:class:`~margin_opt.standard_forms.DualQP`), so this is
the only SMO in the project.  Q is never formed: kernel rows come on demand
from a row cache of ``cache_size`` MB (when the whole n×n kernel fits the
budget every row gets its own slot; otherwise least-recently-used rows are
evicted).  The compiled loop lives in :mod:`.loop`; the package's
modules are listed in :mod:`margin_opt.solvers.smo`.

References
----------
J. C. Platt, "Sequential minimal optimization: a fast algorithm for training
support vector machines", Microsoft Research MSR-TR-98-14, 1998.
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training support vector machines", JMLR 6:1889–1918, 2005.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011, §4.1.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

from ...exceptions import ConvergenceWarning, convergence_warnings_silenced
from ...kkt import violating_pair_gap
from ...parallel import FitThreads, one_blas_thread
from . import blocks as _blocks
from . import cache as _cache
from . import loop as _loop
from . import memory as _mem
from . import packed as _pk
from . import polish as _pol
from . import rows as _rows
from . import shrink as _shrink
from . import state as _st
from .options import DEFAULT, SMOOptions, resolve

__all__ = ["solve_smo", "run_status", "WSS", "SMOOptions"]

#: accepted working-set selection names
WSS = ("second-order", "first-order")

_MB = 2 ** 20
_DEFAULT_MAX_ITER = 10_000_000


def _check_options(tol, cache_size, wss, max_iter, callback_every, m, shrinking=True,
                   callback=None):
    if not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError(f"shrinking must be True or False, got {shrinking!r}.")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be a callable (called with the intermediate result) "
                         f"or None, got {callback!r}.")
    for name, value in (("tol", tol), ("cache_size", cache_size)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise ValueError(f"{name} must be a positive number, got {value!r}.")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}; LIBSVM's default "
                         "is 1e-3.")
    if not (np.isfinite(cache_size) and cache_size > 0):
        raise ValueError(f"cache_size must be a positive number of MB, got {cache_size!r}.")
    if wss not in WSS:
        raise ValueError(f"wss must be one of {WSS}, got {wss!r}.")
    if max_iter is None:
        max_iter = max(_DEFAULT_MAX_ITER, 100 * m)
    elif int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer or None, got {max_iter!r}.")
    if int(callback_every) != callback_every or callback_every < 1:
        raise ValueError(f"callback_every must be a positive integer, got {callback_every!r}.")
    return int(max_iter)


def _check_qp(qp):
    y = np.asarray(qp.y, dtype=np.float64).ravel()
    m = y.shape[0]
    if m == 0:
        raise ValueError("the dual QP has no variables.")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("qp.y must hold the signs ±1 of the variables.")
    p = np.asarray(qp.p, dtype=np.float64).ravel()
    C = np.asarray(qp.upper, dtype=np.float64).ravel()
    if p.shape != (m,) or C.shape != (m,):
        raise ValueError(f"qp.p and qp.upper must have shape ({m},), got {p.shape} and "
                         f"{C.shape}.")
    if not np.all(np.isfinite(p)):
        raise ValueError("qp.p contains NaN or infinity.")
    if np.any(np.isnan(C)) or np.any(C < 0):
        raise ValueError("qp.upper must be ≥ 0 (np.inf for no upper bound); check C and "
                         "sample_weight / class_weight.")
    index = np.ascontiguousarray(qp.data_index, dtype=np.int64)
    if index.shape != (m,):
        raise ValueError(f"qp.index must have shape ({m},), got {index.shape}.")
    return y, p, C, index


def _feasible_start(y, C, delta):
    """A point of the box with yᵀα = Δ (greedy fill), or ValueError."""
    alpha = np.zeros_like(y)
    if delta == 0.0:
        return alpha
    sign = 1.0 if delta > 0 else -1.0
    rest = abs(delta)
    for i in np.flatnonzero(y == sign):
        a = min(C[i], rest)
        alpha[i] = a
        rest -= a
        if rest <= 0.0:
            return alpha
    raise ValueError(f"the dual QP is infeasible: yᵀα = {delta:g} cannot be met within the box "
                     "0 ≤ α ≤ upper.")


def _project(alpha0, y, C, delta):
    """Euclidean projection of α0 onto {0 ≤ α ≤ C, yᵀα = Δ} (bisection on the multiplier)."""
    def h(lam):
        return float(y @ np.clip(alpha0 + lam * y, 0.0, C)) - delta

    finite = C[np.isfinite(C)]
    span = 1.0 + np.abs(alpha0).max() + (finite.max() if finite.size else 0.0) + abs(delta)
    lo, hi = -span, span
    if h(lo) > 0 or h(hi) < 0:
        raise ValueError(f"the dual QP is infeasible: yᵀα = {delta:g} cannot be met within the "
                         "box 0 ≤ α ≤ upper.")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if h(mid) < 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * span:
            break
    return np.clip(alpha0 + 0.5 * (lo + hi) * y, 0.0, C)


def _start_point(alpha0, y, C, delta, equality):
    if alpha0 is None:
        return _feasible_start(y, C, delta) if equality else np.zeros_like(y)
    a = np.array(alpha0, dtype=np.float64).ravel()     # a copy: the caller's array is kept
    if a.shape != y.shape:
        raise ValueError(f"alpha0 must have shape {y.shape}, got {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError("alpha0 contains NaN or infinity.")
    scale = 1.0 + np.abs(a).max()
    inside = np.all(a >= 0) and np.all(a <= C)
    if not equality:
        return np.clip(a, 0.0, C)
    if inside and abs(y @ a - delta) <= 1e-12 * scale * y.size:
        return a
    # e.g. a warm start from a larger C: move it to the nearest feasible point
    return _project(a, y, C, delta)


def _kernel_arrays(qp, n_slots_budget, dense_budget=0, narrow_min_bytes=_rows.NARROW_MIN_BYTES):
    """``(kd, gram, diag, csr)``: the :class:`~.rows.KernelArrays` of ``qp``;
    where a full matrix is at hand (precomputed, given, or a callable kernel), that
    matrix (a read-only or memory-mapped one is used as it is, never copied); the
    kernel diagonal; the CSR data for sparse X (else None)."""
    X = qp.X
    kernel = qp.kernel
    name = kernel.name
    gram = None
    if qp.gram is not None:
        gram = np.ascontiguousarray(np.asarray(qp.gram), dtype=np.float64)
    elif name == "precomputed":
        gram = np.ascontiguousarray(X.toarray() if sp.issparse(X) else np.asarray(X),
                                    dtype=np.float64)
    elif name not in _rows.KINDS:
        n = X.shape[0]
        if n > n_slots_budget:
            raise ValueError(
                f"a callable kernel needs the whole {n}×{n} kernel matrix "
                f"({n * n * 8 / _MB:.0f} MB) but cache_size allows only {n_slots_budget} rows: "
                "raise cache_size, pass the matrix with kernel='precomputed', or use a named "
                "kernel (linear, poly, rbf, sigmoid) whose rows are computed on demand.")
        gram = np.ascontiguousarray(kernel.gram(X), dtype=np.float64)
    if gram is not None:
        # the row cache holds the full matrix, and its compiled code needs it writable
        # (it is never written when all rows are valid); a read-only input is copied
        gram = np.require(gram, np.float64, ["C", "W"])
        n = gram.shape[0]
        if gram.shape != (n, n):
            raise ValueError(f"the kernel matrix must be square, got shape {gram.shape}.")
        return _rows.arrays(_rows.K_PRECOMPUTED, n=n), gram, np.diag(gram).copy(), None
    kd, csr = _rows.named_kernel_arrays(X, kernel, dense_budget, narrow_min_bytes)
    return kd, None, np.asarray(kernel.diag(X), dtype=np.float64), csr


def _unpermute(values, perm):
    """Values at positions k belong to variable perm[k]: back to the original order."""
    out = np.empty_like(values)
    out[perm] = values
    return out


def solve_smo(qp, *, tol=1e-3, gap_tol=None, polish=True, block_size=None, cache_size=200,
              shrinking=True, wss="second-order", max_iter=None, alpha0=None, callback=None,
              callback_every=1000, options=None):
    """Solve a :class:`~margin_opt.standard_forms.DualQP` by SMO (LIBSVM's algorithm).

    Parameters
    ----------
    qp : DualQP
        ``min ½αᵀQα + pᵀα s.t. yᵀα = Δ (if qp.equality), 0 ≤ αᵢ ≤ qp.upper[i]``.
        ``upper`` may hold ``np.inf`` (hard margin).  Dense or ``scipy.sparse`` X;
        a given kernel matrix may be read-only or memory-mapped (it is only read).
    tol : float, default=1e-3
        Stop when m(α) − M(α) ≤ tol, the maximal KKT violation of LIBSVM's
        stopping rule (in the units of the gradient, i.e. of p).
    gap_tol : float, optional
        Also require the relative duality gap ``|P − D| / max(|P|, |D|)`` ≤ gap_tol
        (:func:`margin_opt.kkt.relative_gap`), the
        quantity :func:`margin_opt.kkt.dual_qp_checks` certifies (P = ½αᵀQα + Σuₜξₜ
        with ξₜ = max(0, −(∇ₜ + yₜb)), D = −(½αᵀQα + pᵀα), both in O(m) from the
        gradient).  While it fails, SMO goes on at a tighter m − M.  None: m − M only
        (LIBSVM's rule).
    polish : bool, default=True
        For ``tol`` below 1e-3: run SMO to 1e-3, take a Newton step on the free
        multipliers (:mod:`margin_opt.solvers.smo.polish`), then run SMO on to
        ``tol``; likewise after a stall.  The stopping rule is the same; the long
        first-order tail is skipped.  For dense data or a given kernel matrix, the first
        polish's factorization starts on a second thread once m − M ≤ 10 × 1e-3
        (:class:`margin_opt.solvers.smo.polish.EarlyFactor`; ``cache["early_factor"]``).  Where
        the row cache holds every row, a second polish follows at once with the bound
        variables that violate the optimality conditions let in.
    block_size : int or None, default=None
        Working-set decomposition (:mod:`margin_opt.solvers.smo.blocks`, opt-in):
        each outer step solves the subproblem of ``block_size`` violating variables
        by this SMO on single-precision kernel rows from matrix products and updates
        the gradient once; the gradient is then recomputed in double and pair steps
        confirm the tolerance.  None or 0: pair steps only (LIBSVM's algorithm), the
        faster of the two as measured here (docs/smo.md).
    cache_size : float, default=200
        Kernel row cache in MB (2**20 bytes), float64 rows of length n_data.  When
        the whole kernel fits, every row gets a slot and is computed at most once
        (more often only on the active columns).  Memory is this plus O(n·d), and
        with the Newton polish up to half of it again (its factor, kept between the
        polishes of a run, a quarter; its gradient update's blocks another quarter; no
        polish where the free set is larger than that allows, see
        :func:`.polish.max_free`).  For sparse X a dense copy of
        the columns (faster whole rows) is kept when it fits a quarter of the budget,
        and is counted in it.  The cache's memory is kept for the next run in the
        process (:mod:`margin_opt.solvers.smo.memory`: no page faults for memory
        already touched; ``memory.release()`` frees it).
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic; the gradient is reconstructed before the
        final check, so the answer is the same as without it.
    wss : {"second-order", "first-order"}, default="second-order"
        Working-set selection: Fan–Chen–Lin WSS 2, or the maximal violating pair.
    max_iter : int or None, default=None
        Iteration limit (None: ``max(10**7, 100 m)`` as LIBSVM).  Reaching it gives
        status ``"max_iter"`` and a ``ConvergenceWarning``.
    alpha0 : array-like of shape (m,), optional
        Warm start (e.g. the α of a neighbouring C on a path).  A point outside
        ``{0 ≤ α ≤ upper, yᵀα = Δ}`` is first projected onto it; not modified.
    callback : callable, optional
        ``callback(intermediate_result)`` every ``callback_every`` iterations with
        an OptimizeResult (``x``, ``fun``, ``gap``, ``nit``; ``fun`` is exact only
        when no variable is shrunk at that moment).  Raising ``StopIteration``
        stops cleanly with status ``"stopped"``.
    callback_every : int, default=1000
        Iterations between callbacks.
    options : SMOOptions, optional
        Tuning knobs (:class:`~margin_opt.solvers.smo.options.SMOOptions`); None: the
        defaults.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` (α, ndarray of shape (m,)), ``b`` (intercept, LIBSVM's −ρ; 0.0 when
        ``qp.equality`` is False), ``grad`` (∇ = Qα + p), ``fun`` (½αᵀQα + pᵀα),
        ``nit``, ``status`` ("optimal" | "max_iter" | "stopped" | "stalled"),
        ``success``, ``message``, ``gap`` (final m − M, or the largest projected
        gradient without equality), ``duality_gap`` (relative, as above),
        ``n_polish``, ``cache`` (dict of row-cache statistics) and ``timings``
        (seconds: ``setup``, ``solve``, ``total``).

    Raises
    ------
    ValueError
        Bad options, a malformed QP, an infeasible equality, or a callable kernel
        whose full matrix exceeds ``cache_size``.

    Notes
    -----
    Without the equality (``qp.equality`` False: no intercept) the pairwise step
    does not apply; greedy single-variable coordinate descent with the same
    row cache is used instead, stopping when the largest projected gradient is
    ≤ tol.

    Progress test: when m − M has not halved within ``max(10**5, 10 m)``
    iterations (after a polish, where one is possible) the run stops with status
    ``"stalled"``, and likewise when a multiplier exceeds 1e12 (the dual diverges:
    e.g. the hard margin on data that no hyperplane separates).  Neither is a
    proof of anything; the caller decides (an exact method, a separability LP).

    References
    ----------
    Platt (1998); Fan, Chen and Lin, JMLR 6 (2005), WSS 2; Chang and Lin, LIBSVM
    (2011), §4.1.1 (stopping), §4.1.3 (b), §5.1 (shrinking, gradient reconstruction).
    """
    t0 = time.perf_counter()
    opts = resolve(options)
    y, p, C, index = _check_qp(qp)
    m = y.shape[0]
    max_iter = _check_options(tol, cache_size, wss, max_iter, callback_every, m,
                              shrinking=shrinking, callback=callback)
    if gap_tol is not None and not (isinstance(gap_tol, (int, float, np.number))
                                    and np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a positive finite number or None, got {gap_tol!r}.")
    n_data = qp.n_data
    if index.min() < 0 or index.max() >= n_data:
        raise ValueError(f"qp.index must hold data rows in [0, {n_data}).")
    if block_size is None:
        block_size = 0
    elif isinstance(block_size, bool) or int(block_size) != block_size or block_size < 0 or \
            block_size == 1:
        raise ValueError(f"block_size must be None, 0 or an integer ≥ 2, got {block_size!r}.")
    run = _SMORun(qp, y, p, C, index, cache_size, alpha0, shrinking, n_data, opts)
    if block_size and not run.equality:
        block_size = 0                      # coordinate descent has no blocks
    run.q = run.q_used = int(block_size)
    run.shrinking_wanted = run.shrinking
    if run.q:
        run.shrinking = False
    t1 = time.perf_counter()
    try:
        code, stopped = run.solve(float(tol), gap_tol, bool(polish), wss == "second-order",
                                  max_iter, callback, callback_every)
        run.polish_factor = None
        t2 = time.perf_counter()
        out = run.result(code, stopped, tol, gap_tol, max_iter)
    finally:
        run.release()
    out.timings = {"setup": t1 - t0, "solve": t2 - t1, "total": time.perf_counter() - t0}
    return out


def run_status(code, stopped, nit, gap, rel_gap, tol, gap_tol, max_iter, alpha_cap=None):
    """(status, message) of an SMO run that ended with ``code`` (``state.R_*``);
    ``ConvergenceWarning`` for "max_iter" and "stalled" (unless silenced on this thread).

    Parameters
    ----------
    code : int
        The run's ``state.R_*`` code.
    stopped : bool
        Stopped by the callback.
    nit : int
    gap, rel_gap : float
        The last m − M and the relative duality gap.
    tol, gap_tol : float
        The run's tolerances (``gap_tol`` None: none).
    max_iter : int
    alpha_cap : float, optional
        The run's :attr:`SMOOptions.alpha_cap` (None: the default), named in the
        message of ``R_CAP``.

    Returns
    -------
    status : str
        "optimal", "stopped", "stalled" or "max_iter".
    message : str
    """
    if alpha_cap is None:
        alpha_cap = DEFAULT.alpha_cap
    if stopped:
        status, msg = "stopped", f"stopped by the callback after {nit} iterations."
    elif code == _st.R_OPTIMAL:
        status = "optimal"
        msg = f"m(α) − M(α) = {gap:.3g} ≤ tol = {tol:g}"
        if gap_tol is not None:
            msg += f" and duality gap {rel_gap:.3g} ≤ gap_tol = {gap_tol:g}"
        msg += f" after {nit} iterations."
    elif code == _st.R_CAP:
        status = "stalled"
        msg = (f"a multiplier exceeded {alpha_cap:g} after {nit} iterations: the dual "
               "diverges (with upper = ∞, the hard margin, the classes are probably not "
               "separable in the feature space; a separability LP decides). Use a finite "
               "C, or an exact method.")
    elif code == _st.R_STALLED:
        status = "stalled"
        msg = (f"SMO stopped making progress after {nit} iterations: m(α) − M(α) = "
               f"{gap:.3g} (tol {tol:g}), duality gap {rel_gap:.3g}"
               + (f" (gap_tol {gap_tol:g})" if gap_tol is not None else "")
               + ". The problem is badly conditioned or degenerate (unscaled features, "
               "a huge C, a hard margin on non-separable data): scale the features, use "
               "a smaller C, or an exact method (cvxpy-dual).")
    else:
        status = "max_iter"
        msg = (f"SMO reached max_iter={max_iter} with m(α) − M(α) = {gap:.3g} > tol = "
               f"{tol:g}. Raise max_iter, loosen tol, scale the features (e.g. "
               "StandardScaler) or use a smaller C.")
    if status in ("max_iter", "stalled") and not convergence_warnings_silenced():
        warnings.warn(msg, ConvergenceWarning, stacklevel=4)
    return status, msg


class _SMORun:
    """The arrays of one SMO run and its phases: set up, iterate (and polish), read out.

    The per-variable arrays (α, ∇, Ḡ, y, p, C, QD, index) are permuted in place by
    shrinking; ``perm[k]`` is the original variable at position k.
    """

    def __init__(self, qp, y, p, C, index, cache_size, alpha0, shrinking, n_data,
                 opts: SMOOptions = DEFAULT):
        self.opts = opts
        self.pool = opts.memory if opts.memory is not None else _mem.POOL
        budget_rows = int(cache_size * _MB // (8 * n_data))
        self.kd, self.gram, diag, self.csr = _kernel_arrays(
            qp, budget_rows, dense_budget=cache_size * _MB / 4,
            narrow_min_bytes=opts.narrow_min_bytes)
        self.threads = FitThreads(opts.threads)     # the count, re-read as the load changes
        self.nthr = self.threads.threads
        m = y.shape[0]
        # a run that can never split a row or a pass runs serial code (state.py): its
        # compiled functions hold no parallel ones (a first small fit compiles less)
        self.serial = self.threads.allowed <= 1 or (n_data < opts.row_par_min and
                                                    m < opts.pass_par_min)
        self.kd = _rows.for_smo(self.kd, m, self.nthr, opts.row_par_min,
                                self.threads.allowed, serial=self.serial)
        cache_mb = cache_size - (self.kd.XT.nbytes / _MB if self.kd.sparse else 0.0)
        self.budget = cache_mb * _MB
        self.n_data = n_data
        self.equality = bool(qp.equality)
        self.delta = float(qp.delta)
        self.alpha = _start_point(alpha0, y, C, float(qp.delta), self.equality)
        self.QD = np.ascontiguousarray(diag[index])
        self.cc, self.n_slots = _cache.make_cache(self.gram, n_data, cache_mb, y.shape[0],
                                                     opts.packed_rows, self.pool)
        # Ḡ by data row: LIBSVM's Ḡₜ = yₜ·G_bar[index[t]] (see loop.init_gradient)
        self.G, self.G_bar = np.empty(m), np.zeros(n_data)
        self.perm = np.arange(m, dtype=np.int64)
        self.index = index.copy()
        self.all_cols = self.kd.all_cols
        self.st = _loop.start_state(m, self.opts.unshrink_start)
        self.fout = np.array([np.inf, np.inf])
        self.stall_window = opts.stall_window(m)
        self.n_polish = 0
        self.polish_factor = None       # the Cholesky factor kept between polishes
        self.early = None               # the first polish's factor, computed beside SMO
        self.early_state = "none"       # then "started", "used" or "discarded"
        self.q, self.q_used, self.rows, self.rows_block = 0, 0, None, 0
        self.rel_gap = np.nan
        self.y, self.p, self.C = y.copy(), p.copy(), C.copy()   # never the caller's arrays
        if np.any(self.alpha > 0.0):
            _loop.init_gradient(self.alpha, self.G, self.G_bar, self.y, self.p, self.C,
                                *self._args())
        else:       # α = 0 (a cold start): ∇ = p and Ḡ = 0, what init_gradient would give
            self.G[:] = self.p
        self.shrinking = bool(shrinking) and self.equality

    def _source(self):
        """Where the polish reads kernel rows (:class:`.polish.KernelSource`)."""
        return _pol.KernelSource(_rows.plain(self.kd), self.gram, self.csr, self.cc, self.st,
                                 self.nthr, self.n_data)

    def _duals(self):
        """The arrays the polish reads and updates (:class:`.polish.Duals`)."""
        return _pol.Duals(self.alpha, self.G, self.G_bar, self.y, self.C, self.index,
                          self.delta if self.equality else None, self.perm)

    def _args(self):
        return self.index, self.st, self.kd, self.cc, self.all_cols

    def release(self):
        """Give the row cache's memory back for the next run (:mod:`.memory`);
        the run can no longer iterate."""
        self._take_early()                 # the thread reads the data: done before we return
        if self.gram is None and self.cc is not None:
            self.pool.give(self.cc.cache)
        self.cc = None

    def _take_early(self):
        """The early factor (:class:`.polish.EarlyFactor`), waited for; None where there is none."""
        early, self.early = self.early, None
        return early.take() if early is not None else None

    def _look_early(self, tol):
        """At a look at m − M during the first phase: start the early factorization once
        m − M ≤ EARLY_AT·tol; True when done looking (started, or not wanted)."""
        if float(self.fout[0]) > self.opts.early_at * tol:
            return False
        self.early = _pol.start(self._source(), self.alpha, self.C, self.perm, self.index,
                                self.st[_st.S_ACTIVE_SUM], self.budget, self.opts)
        if self.early is not None:
            self.early_state = "started"
        return True

    def _unshrink(self):
        with one_blas_thread():      # the gradient reconstruction's BLAS in numba's threads
            while not _shrink.unshrink(self.alpha, self.G, self.G_bar, self.y, self.p, self.C,
                                       self.QD, self.index, self.perm, self.st, self.kd,
                                       self.cc, self.all_cols):
                self._reconstruct_by_tiles()

    def _reconstruct_by_tiles(self):
        """The gradient reconstruction that the compiled code left to Python (by BLAS
        tiles: :func:`.shrink.reconstruct_by_tiles`)."""
        _shrink.reconstruct_by_tiles(self.alpha, self.G, self.G_bar, self.y, self.p, self.C,
                                     self.index, self.st, self.kd, self.cc)

    def _polish(self, force=False, extra=None):
        """Newton polish of the free set (shrunk variables, all at a bound, keep stale
        gradients until the next unshrinking); resets the progress mark.
        ``force``: even where it costs more than SMO's tail would (SMO has stalled)."""
        if self.n_polish >= self.opts.polish_max:
            return False
        had_early = self.early is not None
        early = self._take_early()
        if early is not None and self.polish_factor is None:
            self.polish_factor = early   # extended or pinned to the free set as it is now
        with one_blas_thread():      # BLAS threads spin after a call and slow SMO's loop
            done, self.polish_factor = _pol.polish(
                self._source(), self._duals(), self.polish_factor, self.budget,
                self.st[_st.S_ACTIVE_SUM], force, extra, self.opts)
        if had_early:                # "discarded": it failed, or too much of F changed
            used = done and early is not None and self.polish_factor is early
            self.early_state = "used" if used else "discarded"
        if done:
            self.n_polish += 1
            _loop.after_polish(self.st, self.fout, self.opts.unshrink_start)
            if self.st[_st.S_ACTIVE] < self.alpha.shape[0]:
                # polished on the active set: the shrunk gradients are stale until the
                # next unshrinking reconstructs them (never taken as exact)
                self.st[_st.S_FULL_ITER] = -1
        return done

    def _box_newton(self, tol):
        """Projected Newton rounds (:func:`.polish.box_newton`) where coordinate descent
        (no equality) has stalled; True where they decreased the objective (at most
        ``polish_max`` times a run)."""
        if self.n_polish >= self.opts.polish_max:
            return False
        with one_blas_thread():
            done = _pol.box_newton(self._source(), self._duals(), self.budget, tol,
                                   self.opts.box_rounds, self.opts)
        if done:
            self.n_polish += 1
            _loop.after_polish(self.st, self.fout, self.opts.unshrink_start)
        return done > 0

    def relative_gap(self):
        """:func:`margin_opt.kkt.relative_gap` at SMO's intercept (see :func:`.loop.objectives`)."""
        b = float(_loop.calculate_b(self.alpha, self.G, self.y, self.C)) if self.equality else 0.0
        return float(_loop.relative_gap(self.alpha, self.G, self.y, self.p, self.C, b))

    def solve(self, tol, gap_tol, polish, wss2, max_iter, callback, callback_every):
        """SMO to ``tol`` (through the polish when asked) and the gap test; (code, stopped)."""
        opts = self.opts
        phase = max(tol, opts.polish_tol) if polish else tol
        floor = opts.tol_floor * max(1.0, float(np.abs(self.G).max()))
        stall_polished = False
        while True:
            early = polish and phase > tol and self.n_polish == 0 and \
                self.early_state == "none" and opts.early_factor and \
                _pol.possible(self._source())
            # at the polish tolerance SMO stops once the active variables are optimal:
            # the polish comes before the unshrinking, so that one gradient
            # reconstruction (SMO's next unshrinking) follows both
            code, stopped = self.iterate(phase, wss2, max_iter, callback, callback_every, early,
                                         stop_active=polish and phase > tol)
            if stopped or code in (_st.R_MAX_ITER, _st.R_CAP):
                return code, stopped
            if code == _st.R_STALLED:
                if polish and not self.equality and self._box_newton(tol):
                    continue                     # coordinate descent resumes from there
                if polish and not stall_polished and self._polish(force=True):
                    stall_polished = True                # one more chance, no more
                    continue
                return code, stopped
            if phase > tol:                              # optimal at the polish tolerance
                polished = self._polish()
                # further polishes where they are cheap: the factor is kept and the
                # gradient update reads its rows from a cache that holds them all
                again = polished and self.n_slots >= self.n_data
                if again:
                    self._unshrink()             # what follows reads every gradient
                if again and opts.enter_polish:
                    # the bound variables that SMO's tail would bring into the free set,
                    # let into a second polish at once (the factor extended by them)
                    extra = _pol.entering(self, min_violation=0.1 * tol, opts=opts)
                    if extra.size:
                        self._polish(extra=extra)
                # SMO stops again for another polish where m − M is still above it
                # (m − M from the gradient: every variable active and exact after a polish)
                gap = violating_pair_gap(self.y, self.alpha, self.G, self.C) if again else 0.0
                nxt = [x for x in opts.polish_at if tol < x < min(phase, gap)] if again else []
                phase = nxt[0] if nxt else tol
                if not nxt:
                    self.polish_factor = None    # no further polish planned: memory back
                continue
            if gap_tol is None:
                return code, stopped
            self.rel_gap = self.relative_gap()
            if self.rel_gap <= gap_tol:
                return code, stopped
            if phase <= floor:
                return _st.R_STALLED, stopped
            # "optimal" must certify: go on at a tighter m − M, by the factor the gap asks
            # for, by 2 to 4
            lo, hi = opts.gap_shrink
            phase = float(_loop.tighter_phase(phase, floor, float(self.fout[0]), gap_tol,
                                              self.rel_gap, lo, hi))
            self.st[_st.S_UNSHRINK] = self.opts.unshrink_start

    def iterate(self, tol, wss2, max_iter, callback, callback_every, early=False,
                stop_active=False):
        """Run the compiled loop, in chunks between callbacks, looks at m − M for the
        early factor (with ``early`` and no callback) and looks at the load (the thread
        count, :class:`margin_opt.parallel.FitThreads`); (code, stopped).  Every
        variable is active at the end, except with ``stop_active``, where the run may
        end as ``R_ACTIVE_OPTIMAL``: optimal on the active set, the others left shrunk
        (their gradients not reconstructed)."""
        early = early and callback is None
        a, G, y, p, C, st = self.alpha, self.G, self.y, self.p, self.C, self.st
        st[_st.S_STOP_ACTIVE] = int(bool(stop_active))
        if self.q:
            with one_blas_thread():
                if self.rows is None:
                    capacity = max(2 * self.q, int(self.budget // (4 * self.n_data)))
                    self.rows = _blocks.BlockRows(self.kd, self.gram, self.csr, capacity,
                                                  self.opts.block_chunk)
                code = _blocks.run_blocks(solve_smo, self.rows, a, G, y, C, self.index, st,
                                          self.fout, self.stall_window, tol, self.q, max_iter,
                                          self.opts)
                self.rows_block = self.rows.computed
                # from here on in double: the exact gradient, then pair steps (which
                # confirm the tolerance on it), the single-precision rows released
                _blocks.exact_gradient(self.kd, self.gram, self.csr, self.budget / 4, a, y, p,
                                       C, self.index, G, self.G_bar)
            self.q_used, self.q, self.rows = self.q, 0, None
            self.shrinking = self.shrinking_wanted
            if code != _st.R_OPTIMAL:
                return code, False
        # the next iteration at which each look is due (None: never), from here on
        start = int(st[_st.S_ITER])
        next_cb = start + int(callback_every) if callback is not None else None
        next_look = start + self.opts.early_chunk if early else None
        check = self.opts.thread_check_iter if self.threads.watching else 0
        next_check = start + check if check > 0 else None
        # back in Python every interrupt_iter iterations: a pending Ctrl-C is raised there
        work = self.opts.interrupt_work
        every = max(100, work // max(1, a.shape[0])) if work > 0 else 0
        next_int = start + every if every > 0 else None
        while True:
            stop_at = min(x for x in (max_iter, next_cb, next_look, next_check, next_int)
                          if x is not None)
            if self.equality:
                with one_blas_thread():   # unshrinking calls BLAS in numba's threads
                    code = _st.R_RECONSTRUCT
                    while code == _st.R_RECONSTRUCT:
                        code = _loop.smo_run_steps(
                            a, G, self.G_bar, y, p, C, self.QD, self.index, self.perm, st,
                            self.kd, self.cc, self.all_cols, tol, wss2, self.shrinking,
                            max_iter, stop_at, self.opts.alpha_cap, self.stall_window,
                            self.fout, self.pthr, self.opts.pass_par_min)
                        if code == _st.R_RECONSTRUCT:
                            self._reconstruct_by_tiles()
            else:
                code = _loop.coordinate_run(a, G, y, C, self.QD, self.index, st, self.kd,
                                            self.cc, self.all_cols, tol, max_iter, stop_at,
                                            self.opts.alpha_cap, self.stall_window, self.fout)
            if code != _st.R_CHUNK:
                break
            it = int(st[_st.S_ITER])
            if next_int is not None and it >= next_int:
                next_int = it + every
            if next_check is not None and it >= next_check:
                next_check = it + check
                self._refresh_threads()
            if next_look is not None and it >= next_look:
                next_look = None if self._look_early(tol) else it + self.opts.early_chunk
            if next_cb is None or it < next_cb:
                continue
            next_cb = it + int(callback_every)
            inter = OptimizeResult(x=_unpermute(a, self.perm), fun=float(0.5 * a @ (G + p)),
                                   gap=float(self.fout[0]), nit=int(st[_st.S_ITER]))
            try:
                callback(inter)
            except StopIteration:
                self._unshrink()
                return code, True
        if code != _st.R_ACTIVE_OPTIMAL:
            self._unshrink()
        return code, False

    def _refresh_threads(self):
        """The thread count re-read (:meth:`FitThreads.refresh`) and, where it changed,
        handed to the kernel rows and the passes from the next chunk on."""
        n = self.threads.refresh()
        if n != self.nthr:
            self.nthr = n
            if not self.serial:
                self.kd = self.kd._replace(nthr=n)

    @property
    def pthr(self):
        """The passes' thread count as the compiled loop takes it (None: a serial run)."""
        return None if self.serial else self.nthr

    def result(self, code, stopped, tol, gap_tol, max_iter):
        """The OptimizeResult of :func:`solve_smo` (timings added by the caller)."""
        st, a, G, y = self.st, self.alpha, self.G, self.y
        nit, gap = int(st[_st.S_ITER]), float(self.fout[0])
        rel_gap = self.relative_gap()
        status, msg = run_status(code, stopped, nit, gap, rel_gap, tol, gap_tol, max_iter,
                                 self.opts.alpha_cap)
        b = float(_loop.calculate_b(a, G, y, self.C)) if self.equality else 0.0
        fun = float(0.5 * a @ (G + self.p))
        cache = {"n_slots": int(self.n_slots),
                 "full_matrix": self.gram is not None or self.n_slots >= self.all_cols.size,
                 "cache_mb": float(self.cc.cache.nbytes / _MB),
                 "rows_full": int(st[_st.S_ROWS_FULL]), "rows_partial": int(st[_st.S_ROWS_PARTIAL]),
                 "hits": int(st[_st.S_HITS]), "misses": int(st[_st.S_MISSES]),
                 "packed_layouts": int(self.cc.pmeta[_pk.P_BUILDS]),
                 "packed_rows_kept": int(self.cc.pmeta[_pk.P_KEPT]),
                 "packed_rebuilds": int(self.cc.pmeta[_pk.P_REBUILDS]),
                 "reconstructions": int(st[_st.S_RECONSTRUCT]),
                 "reconstructions_blas": int(st[_st.S_GEMM]),
                 "mean_active": float(st[_st.S_ACTIVE_SUM] / max(nit, 1)),
                 "block_size": int(self.q_used), "rows_block": int(self.rows_block),
                 "early_factor": self.early_state,
                 "max_threads": int(self.threads.allowed), "threads": int(self.nthr),
                 "serial": bool(self.serial),
                 "thread_changes": int(self.threads.changes)}
        return OptimizeResult(
            x=_unpermute(a, self.perm), b=b, grad=_unpermute(G, self.perm), fun=fun, nit=nit,
            status=status, success=status == "optimal", message=msg, gap=gap,
            duality_gap=rel_gap, n_polish=self.n_polish, cache=cache)
