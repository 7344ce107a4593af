"""Sequential Minimal Optimization for the LIBSVM standard dual QP.

``min_α ½αᵀQα + pᵀα  s.t.  yᵀα = Δ,  0 ≤ αᵢ ≤ uᵢ``,  ``Qᵢⱼ = yᵢyⱼK(x_{index[i]}, x_{index[j]})``.

C-SVC, the hard margin (u = ∞) and ε-SVR (2n variables through ``qp.index``)
are all this one form (:class:`~margin_opt.standard_forms.DualQP`), so this is
the only SMO in the project; the ν forms add ``eᵀα = Δ₂`` (``qp.delta2``), which the
same solver holds in its ν mode (LIBSVM's Solver_NU: pairs within one sign of y).
Q is never formed: kernel rows come on demand from a row cache of ``cache_size`` MB.
The iterations run in the compiled core (``margin_opt._core.SMO``: src/core/smo.hpp,
LIBSVM's Cache, Kernel and Solver);
this module runs the phases of a run (SMO to a loose tolerance, the Newton polish
of :mod:`.polish`, SMO on, the duality-gap test), the callbacks, the thread count
and the interruptions between chunks of iterations.

References
----------
J. C. Platt, "Sequential minimal optimization: a fast algorithm for training
support vector machines", Microsoft Research MSR-TR-98-14, 1998.
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training support vector machines", JMLR 6:1889–1918, 2005.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
TIST 2(3), 2011, §4.1 and §4.2 (two equalities).
C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
algorithms", Neural Computation 13(9):2119–2147, 2001.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

from ... import _core
from ...exceptions import ConvergenceWarning, convergence_warnings_silenced
from ...kernels import CORE_KINDS, core_rows, core_spec, engine_gram
from ...kernels.expansion import binary_expansion, evaluate
from ...parallel import FitThreads, one_blas_thread
from . import polish as _pol
from .options import DEFAULT, SMOOptions, resolve

__all__ = ["solve_smo", "solve_pairs", "PairSource", "run_status", "WSS", "SMOOptions"]

#: accepted working-set selection names
WSS = ("second-order", "first-order")

_MB = 2 ** 20
_DEFAULT_MAX_ITER = 10_000_000

#: relative to the gradient's scale: an m − M target below it is rounding, and the gap
#: test stops tightening there
TOL_FLOOR = 1e-15
#: where m − M met ``tol`` but the duality gap failed ``gap_tol``, the next m − M target
#: is the last times GAP_AIM·gap_tol / gap clipped to GAP_SHRINK
GAP_AIM = 0.8
GAP_SHRINK = (0.25, 0.5)
#: Newton polishes per run, at most
POLISH_MAX = 4
#: Newton rounds on the box QP where coordinate descent (no equality) stalls
BOX_ROUNDS = 20
#: a polish reuses the last one's factor where at most this many variables joined the
#: free set (or an eighth of it) and at most FACE_REUSE_OUT left it (pinned)
FACE_REUSE_IN = 64
FACE_REUSE_OUT = 64
#: bound variables let into a polish beyond half the free set's size
ENTER_EXTRA = 64


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


def _check_two_equalities(qp, y, C):
    """The ν forms' constraints yᵀα = Δ₁, eᵀα = Δ₂ within the box, or a ValueError that
    says what to do; (Δ₁, Δ₂).  The two fix each sign's sum: Σ_{y=+1} α = (Δ₂ + Δ₁)/2
    and Σ_{y=−1} α = (Δ₂ − Δ₁)/2, each within [0, Σ u] of its sign."""
    if not qp.equality:
        raise ValueError("qp.delta2 (the second equality eᵀα = Δ₂) needs the first, "
                         "yᵀα = Δ: set equality=True.")
    d1, d2 = float(qp.delta), float(qp.delta2)
    if not (np.isfinite(d1) and np.isfinite(d2)):
        raise ValueError(f"qp.delta and qp.delta2 must be finite, got {d1!r} and {d2!r}.")
    pos = y > 0
    if pos.all() or not pos.any():
        raise ValueError("two equalities need variables of both signs of y (with one sign, "
                         "yᵀα = Δ and eᵀα = Δ₂ are one constraint: drop delta2).")
    cap_p, cap_n = float(C[pos].sum()), float(C[~pos].sum())
    lo, hi = abs(d1), min(2 * cap_p - d1, 2 * cap_n + d1)
    slack = 1e-12 * max(1.0, abs(d2), min(cap_p, cap_n))
    if not (lo - slack <= d2 <= hi + slack):
        hint = ""
        if d1 == 0.0 and np.all(C == 1.0):
            hint = (f" In LIBSVM's ν-SVC scale (u = 1, Δ = 0, Δ₂ = νl) that is ν ≤ "
                    f"2·min(l₊, l₋)/l = {hi / y.size:.6g}: lower ν (or balance the classes).")
        raise ValueError(
            f"the dual QP is infeasible: yᵀα = {d1:g} and eᵀα = {d2:g} need Σ α = "
            f"{(d2 + d1) / 2:g} over the y = +1 variables (the box allows [0, {cap_p:g}]) "
            f"and {(d2 - d1) / 2:g} over the y = −1 ones ([0, {cap_n:g}]); Δ₂ must lie in "
            f"[{lo:g}, {hi:g}].{hint}")
    return d1, d2


def _sign_targets(y, d1, d2):
    """Each sign's share of the two equalities: [(mask, Σ α over it)], y = +1 first."""
    pos = y > 0
    return [(pos, 0.5 * (d2 + d1)), (~pos, 0.5 * (d2 - d1))]


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


def _start_point(alpha0, y, C, delta, equality, delta2=None):
    if delta2 is not None:
        return _start_two(alpha0, y, C, delta, delta2)
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


def _start_two(alpha0, y, C, d1, d2):
    """A start with yᵀα = Δ₁ and eᵀα = Δ₂: each sign's sum filled greedily in variable
    order (LIBSVM's solve_nu_svc / solve_nu_svr), or ``alpha0`` projected onto each
    sign's {0 ≤ α ≤ u, Σ α = its share} (the two equalities decouple by sign)."""
    a = np.zeros_like(y)
    if alpha0 is not None:
        a0 = np.array(alpha0, dtype=np.float64).ravel()
        if a0.shape != y.shape:
            raise ValueError(f"alpha0 must have shape {y.shape}, got {a0.shape}.")
        if not np.all(np.isfinite(a0)):
            raise ValueError("alpha0 contains NaN or infinity.")
    for mask, target in _sign_targets(y, d1, d2):
        ones = np.ones(int(mask.sum()))
        target = min(max(target, 0.0), float(C[mask].sum()))     # (within the check's slack)
        if alpha0 is None:
            a[mask] = _feasible_start(ones, C[mask], target) if target > 0 else 0.0
        else:
            a[mask] = _project(a0[mask], ones, C[mask], target)
    return a


def _kernel_source(qp, cache_size):
    """``(spec, rows, gram)``: what the compiled solver reads its kernel values from: a
    named kernel on the data rows, or a kernel matrix (given, precomputed, or a callable
    kernel's, computed here; a read-only or memory-mapped one is read in place)."""
    X, kernel = qp.X, qp.kernel
    gram = None
    if qp.gram is not None:
        gram = np.asarray(qp.gram)
    elif kernel.name == "precomputed":
        gram = X.toarray() if sp.issparse(X) else np.asarray(X)
    elif kernel.name not in CORE_KINDS:
        n = X.shape[0]
        budget_rows = int(cache_size * _MB // (8 * n))
        if n > budget_rows:
            raise ValueError(
                f"a callable kernel needs the whole {n}×{n} kernel matrix "
                f"({n * n * 8 / _MB:.0f} MB) but cache_size allows only {budget_rows} rows: "
                "raise cache_size, pass the matrix with kernel='precomputed', or use a named "
                "kernel (linear, poly, rbf, sigmoid) whose rows are computed on demand.")
        gram = kernel.gram(X)
    if gram is not None:
        gram = np.ascontiguousarray(gram, dtype=np.float64)
        n = gram.shape[0]
        if gram.ndim != 2 or gram.shape != (n, n):
            raise ValueError(f"the kernel matrix must be square, got shape {gram.shape}.")
        return _core.KernelSpec(0, 1.0, 0.0, 1), None, gram
    return core_spec(kernel), core_rows(X), None


def _signed(K, y):
    """Q = diag(y) K diag(y), in the place of K (a fresh block: no other copy)."""
    K *= y[:, None]
    K *= y[None, :]
    return K


class _OneThread:
    """The thread count of a run whose rows are too short to split: one, never re-read
    (what :class:`~margin_opt.parallel.FitThreads` gives for ``max_threads=1``, without
    reading the environment and the affinity once per run: a one-vs-one fit's many
    small pairs)."""

    threads = allowed = 1
    changes = 0
    watching = False

    def refresh(self) -> int:
        return 1


class _SMORun:
    """One SMO run: the compiled solver, its phases (SMO, polish, gap test), its read-out."""

    def __init__(self, qp, y, p, C, index, cache_size, alpha0, shrinking, wss, opts):
        self.opts = opts
        self.y, self.p, self.C = y, p, C
        self.equality = bool(qp.equality)
        self.delta = float(qp.delta)
        self.two = getattr(qp, "delta2", None) is not None   # ν mode: eᵀα = Δ₂ held too
        self.budget = float(cache_size) * _MB
        # rows shorter than the core's split never use a second thread: no load reading
        small = max(qp.n_data, y.shape[0]) < _core.ROW_SPLIT_MIN
        self.threads = _OneThread() if small else FitThreads(opts.threads)
        self.nthr = self.threads.threads
        spec, rows, gram = _kernel_source(qp, cache_size)
        self.X, self.kernel, self.gram, self.index = qp.X, qp.kernel, gram, index
        alpha = _start_point(alpha0, y, C, self.delta, self.equality,
                             float(qp.delta2) if self.two else None)
        settings = _core.SolverSettings()
        settings.second_order = wss == "second-order"
        settings.shrinking = bool(shrinking)
        settings.cache_bytes = self.budget
        settings.threads = int(self.nthr)
        settings.alpha_cap = float(opts.alpha_cap)
        settings.stall_window = int(opts.stall_window(y.shape[0]))
        settings.two_equalities = self.two
        # (no BLAS in the solver: kernel rows are the core's own loops)
        self.smo = _core.SMO(spec, rows, gram, y, p, C, index, alpha, self.equality,
                             self.delta, settings, self.budget / 4)
        self.n_polish = 0
        self._face = None                  # the last polish's variables and factor
        self.rel_gap = np.nan
        self._final_b = None               # (b, c) of the gap test that ended the run (read)
        self._alpha = np.empty_like(y)
        self._grad = np.empty_like(y)

    def read(self):
        """(α, ∇) in the caller's variable order (every variable made active first)."""
        self.smo.unshrink()
        self.smo.read(self._alpha, self._grad)
        return self._alpha, self._grad

    def multipliers(self):
        """(b, c): the multipliers of yᵀα = Δ (b = −ρ, LIBSVM's) and of eᵀα = Δ₂ (c = −r
        of the ν mode's read-out; 0.0 with one equality), so that ∇ₜ + yₜb + c is ≥ 0 at
        αₜ = 0, ≤ 0 at uₜ and 0 where free (every variable active: after :meth:`read`)."""
        if self.two:
            rho, r = self.smo.nu_rho()
            return -rho, -r
        return self.smo.intercept(), 0.0

    def polish(self, tol, force=False) -> bool:
        """One Newton step (:func:`.polish.newton_step`) on the free set and the bound
        variables that violate the optimality conditions by more than 0.1·``tol`` (the
        largest, at most half as many as the free ones and 64 more: those SMO's tail
        would bring in), where it costs less than the SMO work done so far
        (``force``: whatever it costs, SMO has stalled); True where taken."""
        overhead = self.opts.polish_overhead
        if (self.n_polish >= POLISH_MAX and not force) or \
                not (force or _pol.worth_it(0, self.smo.active_sum, overhead)):
            return False
        alpha, grad = self.read()
        C, y = self.C, self.y
        free = (alpha > 0.0) & (alpha < C)
        # s = ∇ + y b + c: ≥ 0 at α = 0, ≤ 0 at α = C, 0 where free (the slack's sign)
        b, c = self.multipliers()
        s = grad + y * b + c
        viol = np.where((alpha <= 0.0) & ~free, -s, 0.0) + \
            np.where((alpha >= C) & ~free, s, 0.0)
        cand = np.flatnonzero(viol > 0.1 * tol)
        room = int(free.sum()) // 2 + ENTER_EXTRA
        if cand.size > room:
            cand = cand[np.argsort(-viol[cand], kind="stable")[:room]]
        F = np.union1d(np.flatnonzero(free), cand)
        if F.size == 0 or F.size > self._face_limit():
            return False
        if not force and not _pol.worth_it(F.size, float(self.smo.active_sum), overhead):
            return False
        # one BLAS thread: LAPACK's sums depend on its thread count, and the answer must
        # not (two fits at once, a joblib worker, a busy machine: the same iterates)
        with one_blas_thread():
            face, pinned = self._face_for(F)
            if face is None:
                return False
            W = face.W
            new = _pol.newton_step(face, grad[W], alpha[W], C[W], y[W], self.equality, pinned,
                                   two_equalities=self.two)
        if new is None:
            return False
        self.smo.assign_with_gradient(W, new, self._gradient_change(W, new - alpha[W]))
        self.n_polish += 1
        return True

    def _face_for(self, F):
        """The last polish's face where it still serves F (the variables that left
        pinned, at most :data:`FACE_REUSE_OUT`; those that joined added to its factor,
        at most :data:`FACE_REUSE_IN` or an eighth of F), else a new one; (face or None
        where Q_FF cannot be factored, the pinned mask)."""
        y, face = self.y, self._face
        if face is not None:
            joined = np.setdiff1d(F, face.W, assume_unique=True)
            pinned = ~np.isin(face.W, F, assume_unique=True)
            if joined.size <= max(FACE_REUSE_IN, F.size // 8) and \
                    int(pinned.sum()) <= FACE_REUSE_OUT and \
                    face.W.size + joined.size <= self._face_limit():
                try:
                    if joined.size:
                        yW, yJ = y[face.W], y[joined]
                        cross = self._kernel_cross(self.index[face.W], self.index[joined])
                        cross *= yW[:, None]
                        cross *= yJ[None, :]
                        face.extend(joined, cross, _signed(
                            self._kernel_block(self.index[joined]), yJ))
                    return face, np.concatenate([pinned, np.zeros(joined.size, bool)])
                except (np.linalg.LinAlgError, ValueError):
                    pass                       # a new factorization below
        try:
            self._face = _pol.Face(F, _signed(self._kernel_block(self.index[F]), y[F]))
        except (np.linalg.LinAlgError, ValueError):
            self._face = None
        return self._face, None

    def _face_limit(self) -> int:
        return min(self.opts.polish_max_free, _pol.max_free(self.budget))

    def _kernel_cross(self, rows, cols) -> np.ndarray:
        """K[rows, cols] over data rows (the kernel's own products, or the given matrix)."""
        if self.gram is not None:
            return self.gram[np.ix_(rows, cols)]
        return self.kernel(self.X[rows], self.X[cols])

    def _kernel_block(self, rows) -> np.ndarray:
        """K[rows, rows] over data rows, from the kernel engine (or the given matrix)."""
        if self.gram is not None:
            return self.gram[np.ix_(rows, rows)]
        return engine_gram(self.kernel, self.X[rows], threads=self.nthr)

    def _gradient_change(self, F, delta) -> np.ndarray:
        """Q[:, F] Δ (the gradient's change, every variable): y ∘ (K β)[index] with β the
        coefficients yΔ summed by data row, K β by the kernel engine's expansion."""
        beta = np.zeros(self.gram.shape[0] if self.gram is not None else self.X.shape[0])
        np.add.at(beta, self.index[F], self.y[F] * delta)
        rows = np.flatnonzero(beta)
        if self.gram is not None:
            f = self.gram[rows].T @ beta[rows]       # K symmetric: its rows, contiguous
        else:
            ex = binary_expansion(beta[rows][None, :], [0.0])
            f = evaluate(self.kernel, self.X, self.X[rows], ex, nthr=self.nthr)[:, 0]
        return self.y * f[self.index]

    def solve(self, tol, gap_tol, polish, max_iter, callback, callback_every):
        """SMO to ``tol`` (through the polish when asked) and the gap test; (code, stopped)."""
        opts = self.opts
        stops = [x for x in opts.polish_at if x > tol] if polish else []
        phase = stops.pop(0) if stops else tol
        floor = None
        stall_polishes = 0
        while True:
            # at a polish stop that the work so far cannot pay for (a small problem), the
            # compiled run goes on to tol without returning (the polish's fixed cost)
            code, stopped = self.iterate(phase, max_iter, callback, callback_every,
                                         then_tol=tol if phase > tol else -1.0)
            if stopped or code in (_core.R_MAX_ITER, _core.R_CAP):
                return code, stopped
            if phase > tol and code == _core.R_OPTIMAL and self.smo.last_gap <= tol:
                phase, stops = tol, []                   # went on to tol: no polish
            if code == _core.R_STALLED:
                # one more chance with the equality; without it (coordinate descent, which
                # moves one bound at a time) Newton rounds on the box QP, as many as it takes
                rounds = 1 if self.equality else BOX_ROUNDS
                if polish and stall_polishes < rounds and self.polish(phase, force=True):
                    stall_polishes += 1
                    continue
                return code, stopped
            if phase > tol:                              # a polish stop reached
                self.polish(phase)
                phase = stops.pop(0) if stops else tol
                continue
            if gap_tol is None:
                return code, stopped
            alpha, grad = self.read()
            b, c = self.multipliers()
            self.rel_gap = self.smo.relative_gap(b, c)
            if self.rel_gap <= gap_tol:
                self._final_b = (b, c)     # (α, ∇) as read: the result's, read once
                return code, stopped
            if floor is None:
                floor = TOL_FLOOR * max(1.0, float(np.abs(grad).max()))
            if phase <= floor:
                return _core.R_STALLED, stopped
            # "optimal" must certify: go on at a tighter m − M, by the factor the gap
            # asks for (the gap shrinks about in proportion), by 2 to 4
            shrink = min(GAP_SHRINK[1], max(GAP_SHRINK[0], GAP_AIM * gap_tol / self.rel_gap))
            phase = max(floor, min(phase, float(self.smo.last_gap)) * shrink)

    def iterate(self, tol, max_iter, callback, callback_every, then_tol=-1.0):
        """The compiled iterations to ``tol``, in chunks between callbacks, looks at the
        load (the thread count) and returns to Python (a pending Ctrl-C); (code, stopped).
        ``then_tol`` (below ``tol``; negative: none): where ``tol`` is reached with less
        SMO work than a polish's fixed cost (:attr:`SMOOptions.polish_overhead`), on to
        ``then_tol``."""
        smo = self.smo
        start = int(smo.iterations)
        next_cb = start + int(callback_every) if callback is not None else None
        check = self.opts.thread_check_iter if self.threads.watching else 0
        next_check = start + check if check > 0 else None
        work = self.opts.interrupt_work
        every = max(100, work // max(1, self.y.shape[0])) if work > 0 else 0
        next_int = start + every if every > 0 else None
        while True:
            stop_at = min(x for x in (max_iter, next_cb, next_check, next_int) if x is not None)
            code = smo.run(tol, max_iter, stop_at, then_tol, self.opts.polish_overhead)
            if code != _core.R_CHUNK:
                return code, False
            it = int(smo.iterations)
            if next_int is not None and it >= next_int:
                next_int = it + every
            if next_check is not None and it >= next_check:
                next_check = it + check
                n = self.threads.refresh()
                if n != self.nthr:
                    self.nthr = n
                    smo.set_threads(n)
            if next_cb is None or it < next_cb:
                continue
            next_cb = it + int(callback_every)
            alpha, grad = self.read()
            inter = OptimizeResult(x=alpha.copy(), fun=float(0.5 * alpha @ (grad + self.p)),
                                   gap=float(smo.last_gap), nit=it)
            try:
                callback(inter)
            except StopIteration:
                return code, True

    def result(self, code, stopped, tol, gap_tol, max_iter):
        """The OptimizeResult of :func:`solve_smo` (timings added by the caller)."""
        smo = self.smo
        if self._final_b is not None:
            # the gap test's reading, nothing run since: not read again (copies: the
            # run's buffers are not handed out)
            alpha, grad = self._alpha.copy(), self._grad.copy()
            (b, c), rel_gap = self._final_b, self.rel_gap
        else:
            alpha, grad = self.read()
            alpha, grad = alpha.copy(), grad.copy()
            b, c = self.multipliers()
            rel_gap = self.smo.relative_gap(b, c)
        nit, gap = int(smo.iterations), float(smo.last_gap)
        status = run_status(code, stopped, nit, gap, rel_gap, tol, gap_tol, max_iter,
                            self.opts.alpha_cap)
        cache = {"layout": smo.layout, "hits": int(smo.hits), "misses": int(smo.misses),
                 "recuts": int(smo.recuts), "reconstructions": int(smo.reconstructions),
                 "mean_active": float(smo.active_sum / max(nit, 1)),
                 "max_threads": int(self.threads.allowed), "threads": int(self.nthr),
                 "thread_changes": int(self.threads.changes)}
        out = _outcome(_Answer(alpha, grad, b, rel_gap, nit, gap), self.p, status,
                       self.n_polish, cache)
        if self.two:
            out.rho, out.r = -b, -c
        return out


@dataclass
class _Answer:
    """A run's answer as read: α and ∇ (caller's order), b, the relative duality gap,
    the iterations and the last m − M."""

    alpha: np.ndarray
    grad: np.ndarray
    b: float
    rel_gap: float
    nit: int
    gap: float


def _outcome(ans, p, status, n_polish, cache) -> OptimizeResult:
    """The OptimizeResult of :func:`solve_smo` for answer ``ans`` (``status``: (status,
    message) of :func:`run_status`; timings added by the caller)."""
    status, msg = status
    fun = float(0.5 * ans.alpha @ (ans.grad + p))
    return OptimizeResult(
        x=ans.alpha, b=ans.b, grad=ans.grad, fun=fun, nit=ans.nit, status=status,
        success=status == "optimal", message=msg, gap=ans.gap, duality_gap=ans.rel_gap,
        n_polish=n_polish, cache=cache)


def solve_smo(qp, *, tol=1e-3, gap_tol=None, polish=True, cache_size=200, shrinking=True,
              wss="second-order", max_iter=None, alpha0=None, callback=None,
              callback_every=1000, options=None):
    """Solve a :class:`~margin_opt.standard_forms.DualQP` by SMO (LIBSVM's algorithm).

    Parameters
    ----------
    qp : DualQP
        ``min ½αᵀQα + pᵀα s.t. yᵀα = Δ (if qp.equality), 0 ≤ αᵢ ≤ qp.upper[i]``.
        ``upper`` may hold ``np.inf`` (hard margin).  Dense or ``scipy.sparse`` X;
        a given kernel matrix may be read-only or memory-mapped (it is only read).
        With ``qp.delta2`` (the ν forms) also ``eᵀα = Δ₂``: the solver's ν mode
        (LIBSVM's Solver_NU: each pair within one sign of y, so that both sums stay;
        shrinking by each sign's extremes), from LIBSVM's start (each sign's share
        filled in variable order) or ``alpha0`` projected onto the two equalities.
    tol : float, default=1e-3
        Stop when m(α) − M(α) ≤ tol, the maximal KKT violation of LIBSVM's
        stopping rule (in the units of the gradient, i.e. of p).
    gap_tol : float, optional
        Also require the relative duality gap ``|P − D| / max(|P|, |D|)`` ≤ gap_tol
        (:func:`margin_opt.kkt.relative_gap`), the
        quantity :func:`margin_opt.kkt.dual_qp_checks` certifies (P = ½αᵀQα + Σuₜξₜ
        + Δb with ξₜ = max(0, −(∇ₜ + yₜb)), D = −(½αᵀQα + pᵀα), both in O(m) from the
        gradient; with two equalities ξₜ = max(0, −(∇ₜ + yₜb + c)) and P gains Δ₂c,
        c = −r).  While it fails, SMO goes on at a tighter m − M.  None: m − M only
        (LIBSVM's rule; with two equalities the larger of the two signs' m − M).
    polish : bool, default=True
        SMO stops at m − M = 1e-3 and 1e-5 (those above ``tol``,
        :attr:`SMOOptions.polish_at`) for a Newton step on the free multipliers and the
        bound ones that violate the optimality conditions
        (:mod:`margin_opt.solvers.smo.polish`), then runs on to ``tol``; likewise once
        after a stall (repeatedly, without the equality).  The stopping rule is the
        same; the long first-order tail is skipped.  A step is taken only where it
        costs less than the SMO work done so far (:func:`.polish.worth_it`).  With two
        equalities the step keeps both (a second multiplier in its KKT system,
        :func:`.polish.newton_step`).
    cache_size : float, default=200
        Kernel row cache in MB (2**20 bytes), float64 rows of length n_data (or of
        the active variables, once shrinking leaves few).  Memory is this plus O(n·d),
        and with the Newton polish the free set's block Q_FF (no polish where it
        would exceed a quarter of the budget, see :func:`.polish.max_free`).  For
        sparse X a dense transpose of the data (faster rows) is kept where it fits a
        quarter of the budget (in single precision where its values allow).
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
        (seconds: ``setup``, ``solve``, ``total``).  With two equalities also ``rho``
        and ``r`` (LIBSVM's Solver_NU read-out: r₁, r₂ the gradient's level on the free
        variables of y = +1 and of y = −1, ρ = (r₁ − r₂)/2 = −b, r = (r₁ + r₂)/2, the
        multiplier of eᵀα being −r); for ν-SVC in LIBSVM's scale the C-form
        coefficients are yα/r and its intercept −ρ/r, for ν-SVR ε = −r.

    Raises
    ------
    ValueError
        Bad options, a malformed QP, an infeasible equality (with two: Δ₂ outside the
        range the box and Δ allow, e.g. ν above 2·min(l₊, l₋)/l for ν-SVC, said before
        any kernel work), or a callable kernel whose full matrix exceeds
        ``cache_size``.

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
    (2011), §4.1.1 (stopping), §4.1.3 (b), §4.2 (two equalities), §5.1 (shrinking,
    gradient reconstruction); Chang and Lin, Neural Computation 13(9), 2001 (the ν
    solver).
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
    if getattr(qp, "delta2", None) is not None:
        _check_two_equalities(qp, y, C)
    run = _SMORun(qp, y, p, C, index, cache_size, alpha0, shrinking, wss, opts)
    t1 = time.perf_counter()
    code, stopped = run.solve(float(tol), gap_tol, bool(polish), max_iter, callback,
                              callback_every)
    t2 = time.perf_counter()
    out = run.result(code, stopped, tol, gap_tol, max_iter)
    out.timings = {"setup": t1 - t0, "solve": t2 - t1, "total": time.perf_counter() - t0}
    return out


#: kernel-block entries (Σ m² over the pairs) handed to one compiled call of
#: :func:`solve_pairs`: Python takes control back between calls (a pending Ctrl-C)
BATCH_ENTRIES = 2 ** 24


@dataclass
class PairSource:
    """The pairs of a one-vs-one fit as :func:`solve_pairs` takes them: the classes'
    kernel (``_core.ClassKernel``, dense rows) or the class-grouped kernel matrix ``K``
    (n, n); the class sizes (n_classes,); the pairs (n_pairs, 2) of class indices
    (class i's rows +1); each row's box bound ``upper`` (n,), in the grouped order."""

    classes: object
    K: np.ndarray | None
    sizes: np.ndarray
    pairs: np.ndarray
    upper: np.ndarray


def solve_pairs(source, options, reading, threads):
    """The first phase of :func:`solve_smo` (SMO to its first stop, the intercept and
    the duality-gap test, tightening m − M as :func:`solve_smo` does) on every pair of
    a one-vs-one fit, in compiled calls that run the pairs side by side on the core's
    threads (``_core.PairBatch``: src/core/one_vs_one.hpp), each pair on one thread
    (the answers do not depend on the thread count).

    Parameters
    ----------
    source : PairSource
    options : dict
        :func:`solve_smo`'s keywords among ``tol``, ``gap_tol``, ``max_iter``,
        ``shrinking``, ``wss`` and ``cache_size``.
    reading : tuple of (float, float, float) or None
        (tol, category threshold, SV threshold) of each settled pair's certificate
        reading (:func:`margin_opt.kkt.dual_qp_reading`, on its kernel block); None:
        none.
    threads : int

    Returns
    -------
    answers : list
        Per pair, (result, read): the OptimizeResult :func:`solve_smo` returns for the
        pair, and its reading ``(decision, xi, num)`` (None where not asked for or not
        finite); or None where the pair did not settle in the first phase (a polish
        stop above ``tol`` reached, a stall, ``max_iter``, the gap test's floor):
        :func:`solve_smo` solves that one whole.

    Raises
    ------
    ValueError
        Bad options (as :func:`solve_smo`).
    """
    t0 = time.perf_counter()
    opts = DEFAULT
    tol = options.get("tol", 1e-3)
    gap_tol = options.get("gap_tol")
    m = source.sizes[source.pairs].sum(axis=1)
    max_iter = options.get("max_iter")
    _check_options(tol, options.get("cache_size", 200), options.get("wss", "second-order"),
                   max_iter, 1, int(m.max()), shrinking=options.get("shrinking", True))
    if gap_tol is not None and not (np.isfinite(gap_tol) and gap_tol > 0):
        raise ValueError(f"gap_tol must be a positive finite number or None, got {gap_tol!r}.")
    limits = np.empty((m.size, 2), dtype=np.int64)
    limits[:, 0] = np.maximum(_DEFAULT_MAX_ITER, 100 * m) if max_iter is None else max_iter
    limits[:, 1] = [opts.stall_window(int(x)) for x in m]
    settings = _core.SolverSettings()
    settings.second_order = options.get("wss", "second-order") == "second-order"
    settings.shrinking = bool(options.get("shrinking", True))
    settings.alpha_cap = float(opts.alpha_cap)
    stop = _core.PairStopping()
    stops = [x for x in opts.polish_at if x > tol]
    stop.phase, stop.tol = (stops[0] if stops else tol), float(tol)
    stop.gap_tol = -1.0 if gap_tol is None else float(gap_tol)
    stop.min_work = float(opts.polish_overhead)
    # the gap test's tightening, as solve()'s (the same targets, in the same order)
    stop.tol_floor, stop.gap_aim = TOL_FLOOR, GAP_AIM
    stop.shrink_min, stop.shrink_max = GAP_SHRINK
    batch = _core.PairBatch(source.classes, source.K, source.sizes, source.pairs,
                            source.upper, limits)
    first, work = 0, np.cumsum(m.astype(float) ** 2)
    while first < m.size:
        # pairs up to BATCH_ENTRIES further, at least one per thread
        last = max(first + threads, int(np.searchsorted(
            work, (work[first - 1] if first else 0.0) + BATCH_ENTRIES, side="right")))
        batch.solve(first, min(last, m.size), settings, stop, reading, threads)
        first = min(last, m.size)
    t1 = time.perf_counter()
    stats = batch.stats.copy()
    offset = batch.offset.copy()
    arrays = [batch.alpha.copy(), batch.grad.copy()]
    if reading is not None:
        arrays += [batch.decision.copy(), batch.xi.copy()]
    num = batch.num.copy()
    col = {name: k for k, name in enumerate(_core.PAIR_STATS)}
    timings = {"setup": 0.0, "solve": (t1 - t0) / m.size, "total": (t1 - t0) / m.size}
    answers = []
    for q in range(m.size):
        row = stats[q]
        if not row[col["settled"]]:
            answers.append(None)
            continue
        lo, hi = offset[q], offset[q + 1]
        alpha, grad = arrays[0][lo:hi], arrays[1][lo:hi]
        ans = _Answer(alpha, grad, float(row[col["b"]]), float(row[col["rel_gap"]]),
                      int(row[col["iterations"]]), float(row[col["last_gap"]]))
        status = run_status(_core.R_OPTIMAL, False, ans.nit, ans.gap, ans.rel_gap, tol,
                            gap_tol, int(limits[q, 0]), opts.alpha_cap)
        cache = {"layout": "matrix", "hits": int(row[col["hits"]]), "misses": 0, "recuts": 0,
                 "reconstructions": int(row[col["reconstructions"]]),
                 "mean_active": float(row[col["active_sum"]] / max(ans.nit, 1)),
                 "max_threads": 1, "threads": 1, "thread_changes": 0}
        res = _outcome(ans, -np.ones(hi - lo), status, 0, cache)
        res.timings = dict(timings)
        read = None
        if reading is not None and np.isfinite(ans.b) and np.isfinite(alpha).all():
            read = (arrays[2][lo:hi], arrays[3][lo:hi], num[q])
        answers.append((res, read))
    return answers


def run_status(code, stopped, nit, gap, rel_gap, tol, gap_tol, max_iter, alpha_cap=None):
    """(status, message) of an SMO run that ended with ``code`` (``margin_opt._core.R_*``);
    ``ConvergenceWarning`` for "max_iter" and "stalled" (unless silenced on this thread).

    Parameters
    ----------
    code : int
        The run's code (``margin_opt._core.R_*``).
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
    elif code == _core.R_OPTIMAL:
        status = "optimal"
        msg = f"m(α) − M(α) = {gap:.3g} ≤ tol = {tol:g}"
        if gap_tol is not None:
            msg += f" and duality gap {rel_gap:.3g} ≤ gap_tol = {gap_tol:g}"
        msg += f" after {nit} iterations."
    elif code == _core.R_CAP:
        status = "stalled"
        msg = (f"a multiplier exceeded {alpha_cap:g} after {nit} iterations: the dual "
               "diverges (with upper = ∞, the hard margin, the classes are probably not "
               "separable in the feature space; a separability LP decides). Use a finite "
               "C, or an exact method.")
    elif code == _core.R_STALLED:
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
