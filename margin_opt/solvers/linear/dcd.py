"""Dual coordinate descent with w explicit: liblinear's solver for the standard dual QP.

:func:`solve_dcd` takes a :class:`~margin_opt.standard_forms.DualQP` whose kernel is
linear (or whose features are explicit) and solves

    min_α ½αᵀ(Q + D)α + pᵀα   s.t.  [yᵀα = Δ,]  0 ≤ αₜ ≤ uₜ,   Q = YXXᵀY

by exact one-variable steps, keeping w = Σₜ yₜαₜ x_{index[t]} so that a step costs
O(nnz(xₜ)) and Q is never formed (memory O(nnz(X) + n)).  It serves:

- the C-SVC without intercept (liblinear's problem) and with the lecture's free,
  unregularized intercept b (the constraint yᵀα = 0);
- the squared hinge (D = diag(1/(2Cᵢ)), no upper bound);
- ε-SVR, L1 and L2 losses, in Ho and Lin's one-variable-per-sample form.

**The free intercept.** b is the multiplier of yᵀα = Δ.  The method of multipliers
(augmented Lagrangian) solves, for a fixed λ, the box-constrained problem with the
extra term λ(yᵀα − Δ) + ρ/2 (yᵀα − Δ)² — liblinear's problem with a bias feature of
value √ρ, whose gradient is read at f = Xw + b, b = λ + ρ(yᵀα − Δ) — then sets λ to
that b, until yᵀα = Δ to within the tolerance.  The final α is then made exactly
feasible (:func:`margin_opt.kkt.restore_equality`), w recomputed from it, b set by
LIBSVM's rule from the free multipliers, and the run is accepted only when LIBSVM's
m(α) − M(α) ≤ ``tol`` and the relative duality gap ≤ ``gap_tol``, measured exactly
in O(nnz) (the quantities the certificate checks); otherwise it goes on at a
tighter inner tolerance.

References
----------
C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
coordinate descent method for large-scale linear SVM", ICML 2008.
C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression", JMLR 13, 2012.
R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
for large linear classification", JMLR 9, 2008.
D. P. Bertsekas, *Constrained Optimization and Lagrange Multiplier Methods*, 1982, ch. 2.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

from ... import kkt
from ...exceptions import ConvergenceWarning, convergence_warnings_silenced
from ...kkt import relative_gap
from ...parallel import one_blas_thread
from . import coordinate as cd
from . import face
from .primal_newton import PrimalPathOptions, huber_path
from .primal_newton import applies as primal_applies

__all__ = ["solve_dcd", "DCDOptions", "applies"]


#: the first inner tolerance, times ``tol`` (divided by ``tighten`` each time the exact check
#: fails)
_INNER_TOL_FACTOR = 0.5
#: epochs between looks at the progress: where the largest projected gradient has not fallen
#: below _STALL_RATIO times its value at the last look, Newton steps on the face of the free
#: multipliers are taken (face.newton_dense; a9a's long tail on few features ends there)
_LOOK_EVERY = 16
#: a look finds a stall when the projected-gradient gap fell by less than this
_STALL_RATIO = 0.5
#: no dense Newton step while more multipliers than this are free (O(|F|³) each; beyond d + 1
#: most steps move one multiplier to its bound); the Newton-CG steps take those
_MAX_FREE = 200
#: dense Newton steps per look, at most (each stops at the first bound met)
_NEWTON_ROUNDS = 50
#: the shrunk variables are checked again once when the gap of the active ones first falls below
#: this times the inner tolerance (LIBSVM does it at 10·tol): those shrunk early join before the
#: tail instead of restarting it
_UNSHRINK_FACTOR = 1000.0
#: conjugate-gradient products per Newton-CG step while the free set changes
_CG_MAX_ITER = 20
#: ... and once it has settled (its size moved by < 1 %)
_CG_MAX_ITER_SETTLED = 50
#: their relative residual once it has settled (``cg_tol`` before)
_CG_TOL_SETTLED = 1e-4
#: ε-SVR: epochs in Ho and Lin's one-variable-per-sample form before the run goes on in the
#: standard form's (a, â), where the dense Newton steps apply, once at most _MAX_FREE are free
_TUBE_EPOCHS = 100


@dataclass(frozen=True)
class DCDOptions:
    """Tuning knobs of :func:`solve_dcd`.

    Parameters
    ----------
    rho_scale : float, default=0.2
        ρ of the augmented Lagrangian (free intercept) relative to the mean ‖xₜ‖² (the
        bias feature's squared value against the rows' squared norms).  The smaller ρ,
        the weaker the coupling ρyyᵀ that every coordinate step pays for (its
        curvature Qₜₜ + ρ) and that conditions the face's Newton-CG steps, but the
        slower λ ← b converges; with many free multipliers the latter stays fast down
        to small ρ.  Text-like set (unit rows): 1.0 → 0.2 took the hinge with
        intercept from 250 epochs to 193 (three data seeds: 20–25 % less CPU), the
        squared hinge from 79 to 55; 0.05 and below: the λ steps lag and exact checks
        fail (0.003: 420+ epochs).
    rho_growth : float, default=4.0
    rho_growth_below : float, default=0.25
    rho_growth_max : float, default=64.0
        ρ is multiplied by ``rho_growth`` at an exact multiplier step (the inner
        problem converged) where |yᵀα − Δ| did not fall below ``rho_growth_below``
        times its value at the previous one (Bertsekas's rule): few free multipliers
        make λ ← b slow at small ρ (an ε-SVR, n = 150, tol 1e-8, at
        ``tube_rho_scale`` 0.1: 273 epochs without it, 61 with it, 56 at ρ 1), up to
        ``rho_growth_max`` times its start (a large ρ makes every coordinate step
        short).  1: ρ fixed.
    tighten : float, default=4.0
        The inner tolerance (at first ``_INNER_TOL_FACTOR`` × ``tol``) is divided by this
        each time the exact check fails.
    primal : PrimalPathOptions or None, default=PrimalPathOptions()
        With few features (d ≤ ``primal.max_features``), the hinge (no D) and one
        variable per data row, first follow the Huber-smoothed primal in (w, b)
        (:func:`primal_newton.huber_path`) and solve the dual exactly on the working
        set it leaves (:func:`face.solve_working_set`); accepted where the exact
        check passes (the same as the epochs' end), else the epochs go on from that
        α.  Not taken with ``alpha0`` or a ``callback`` (warm starts and per-epoch
        reports are the epochs').  None: epochs only.
    cg_tol : float, default=0.05
        Their relative residual.
    cg_heavy_columns : int, default=300
        Sparse X: the conjugate gradients are preconditioned by the face's this many
        most frequent columns exactly and the others by their diagonal
        (:func:`face.heavy_columns_preconditioner`; 0: none).
    tube_rho_scale : float or None, default=0.1
        ε-SVR in Ho and Lin's form: ρ relative to the mean ‖xᵢ‖² (None:
        ``rho_scale``).  Every βᵢ enters the equality Σβᵢ = 0 with the same sign, so
        ρ11ᵀ couples all of them: on the text-like set (ε = 0, C = 1) ρ at 0.1 of the
        mean fitted in 7.3 CPU-s against 8.9 s at 1.0 (0.01: 7.1 s; 4.0: 14.5 s), ε = 0.1
        in 3.7 s against 6.1 s.
    cg_cross_zero : bool, default=True
        ε-SVR with εᵢ = 0: the Newton-CG step may move βᵢ across 0 (the loss has no
        kink there), not only to 0.

    Raises
    ------
    ValueError
        A knob ≤ 0 (or ``tighten`` ≤ 1, ``cg_heavy_columns`` < 0).
    """

    rho_scale: float = 0.2
    rho_growth: float = 4.0
    rho_growth_max: float = 64.0
    rho_growth_below: float = 0.25
    tighten: float = 4.0
    cg_tol: float = 0.05
    cg_heavy_columns: int = 300
    cg_cross_zero: bool = True
    tube_rho_scale: float | None = 0.1
    primal: PrimalPathOptions | None = PrimalPathOptions()

    def __post_init__(self):
        if not (self.rho_scale > 0 and self.tighten > 1 and self.cg_heavy_columns >= 0
                and (self.tube_rho_scale is None or self.tube_rho_scale > 0)
                and self.rho_growth >= 1 and self.rho_growth_max >= 1
                and 0 < self.rho_growth_below <= 1):
            raise ValueError(f"DCDOptions needs rho_scale > 0, tube_rho_scale > 0 (or None), "
                             f"tighten > 1, cg_heavy_columns >= 0, "
                             f"rho_growth and rho_growth_max >= 1 and "
                             f"0 < rho_growth_below <= 1, got {self}.")


def applies(qp) -> str | None:
    """Why :func:`solve_dcd` cannot take ``qp`` (a reason), or None when it can."""
    if not qp.kernel.is_linear:
        return "dual coordinate descent keeps w explicit: it needs the linear kernel " \
               "(or an explicit feature map)"
    return None


def _rows_of(X):
    """X as the row operations read it: C-ordered float64, or CSR in canonical form."""
    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        return X
    return np.ascontiguousarray(X, dtype=np.float64)


def _tube_layout(qp):
    """(z, ε, u, D) per sample when ``qp`` is the ε-SVR's 2n-variable form, else None."""
    n = qp.n_data
    if qp.index is None or qp.n_variables != 2 * n:
        return None
    idx = np.asarray(qp.index)
    ar = np.arange(n)
    if not (np.array_equal(idx[:n], ar) and np.array_equal(idx[n:], ar)
            and np.all(qp.y[:n] == 1) and np.all(qp.y[n:] == -1)
            and np.array_equal(qp.upper[:n], qp.upper[n:])):
        return None
    diag = _diag(qp)
    if not np.array_equal(diag[:n], diag[n:]):
        return None
    p = np.asarray(qp.p, dtype=float)
    return (0.5 * (p[n:] - p[:n]), 0.5 * (p[:n] + p[n:]), np.asarray(qp.upper[:n], float),
            diag[:n].copy())


def _reset_bounds(state):
    """Forget the previous epoch's projected-gradient bounds: no variable is shrunk on
    them in the next epoch (liblinear's restart of shrinking)."""
    state.pg_max_old, state.pg_min_old = np.inf, -np.inf


def _diag(qp) -> np.ndarray:
    d = getattr(qp, "diag", None)
    return np.zeros(qp.n_variables) if d is None else np.asarray(d, dtype=float)


def _check(qp, tol, gap_tol, max_iter):
    why = applies(qp)
    if why is not None:
        raise ValueError(why + "; use method='smo' for other kernels.")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}.")
    if gap_tol is not None and not gap_tol > 0:
        raise ValueError(f"gap_tol must be positive or None, got {gap_tol!r}.")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer (epochs), got {max_iter!r}.")


def solve_dcd(qp, *, tol=1e-3, gap_tol=None, max_iter=10000, shrinking=True, alpha0=None,
              b0=0.0, random_state=0, callback=None, options=None):
    """Solve a linear :class:`~margin_opt.standard_forms.DualQP` by dual coordinate descent.

    Parameters
    ----------
    qp : DualQP
        Linear kernel; dense or CSR X (int32 or int64 indices); ``qp.diag`` (the
        squared losses' D) may be set, with ``upper = inf``.  ``qp.gram`` is not used.
    tol : float, default=1e-3
        Stop when LIBSVM's m(α) − M(α) (with intercept) or the largest projected
        gradient (without) is ≤ tol, measured exactly from w at the end (units of f).
    gap_tol : float, optional
        Also require the relative duality gap ``|P − D| / max(|P|, |D|)`` ≤ gap_tol
        (:func:`margin_opt.kkt.relative_gap`)
        (P = ½‖w‖² + Σuₜξₜ + Σ ξₜ²/(2Dₜ), D = −(½αᵀ(Q + D)α + pᵀα)).
    max_iter : int, default=10000
        Epochs (passes over the active variables); reaching it gives status
        ``"max_iter"`` and a ``ConvergenceWarning``.  The few-features route
        (``options.primal``) counts its Newton steps against it too, and gives way to
        the epochs where they run out.
    shrinking : bool, default=True
        liblinear's shrinking: variables at a bound whose gradient exceeds the
        previous epoch's projected-gradient bounds are left out until the active
        ones converge; then all are checked again.
    alpha0 : array-like of shape (m,), optional
        Warm start (clipped into the box; not modified).
    b0 : float, default=0.0
        Warm start of the intercept (the multiplier λ).
    random_state : int, default=0
        Seed of the epochs' random permutations.
    callback : callable, optional
        ``callback(intermediate_result)`` after every epoch with an OptimizeResult
        (``nit``, ``pg_gap``, ``active``, ``b``); raising ``StopIteration`` stops with
        status ``"stopped"``.
    options : DCDOptions, optional

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` (α of the standard form, exactly feasible), ``b``, ``w`` of shape
        (n_features,), ``status``, ``message``, ``nit`` (epochs; the Newton steps
        where the few-features route of ``options.primal`` answered), ``fun`` (the
        minimized dual objective), ``gap``, ``rel_gap``, ``history`` (``pg_gap`` per
        epoch), ``timings`` (seconds: ``setup``, ``solve``, and within the solve the
        ``epochs``, the face's Newton steps ``newton`` and the exact checks ``check``).

    Raises
    ------
    ValueError
        A kernel that is not linear, bad tolerances or ``max_iter``, ``alpha0`` of the
        wrong shape or not finite.

    References
    ----------
    C.-J. Hsieh et al., ICML 2008; C.-H. Ho and C.-J. Lin, JMLR 13, 2012.
    """
    t0 = time.perf_counter()
    _check(qp, tol, gap_tol, max_iter)
    opts = DCDOptions() if options is None else options
    if not isinstance(opts, DCDOptions):
        raise TypeError(f"options must be a DCDOptions, got {type(opts).__name__}.")
    Xr = _rows_of(qp.X)
    x = cd.linear_x(Xr)
    m = qp.n_variables
    y = np.asarray(qp.y, dtype=float)
    upper = np.asarray(qp.upper, dtype=float)
    diag = _diag(qp)
    alpha = np.zeros(m)
    if alpha0 is not None:
        a0 = np.array(alpha0, dtype=float).ravel()
        if a0.shape != (m,) or not np.all(np.isfinite(a0)):
            raise ValueError(f"alpha0 must be a finite array of shape ({m},).")
        alpha = np.clip(a0, 0.0, upper)
    rows = np.ascontiguousarray(qp.data_index, dtype=np.int64)
    if alpha0 is None and callback is None and opts.primal is not None:
        path = _primal_path(qp, x, rows, tol, gap_tol, max_iter, opts.primal)
        if path is not None:
            final, steps = path
            if final.ok:
                return _result(final, "optimal", _message(final, qp.equality, tol, gap_tol),
                               steps, {"pg_gap": [], "active": []}, t0, t0)
            alpha = final.alpha.copy()      # the epochs go on from there
    norms = x.row_norms()
    tube = _tube_layout(qp)
    equality = bool(qp.equality)
    delta = float(qp.delta)
    if tube is not None:
        z, eps, u_var, d_var = tube
        n = qp.n_data
        var = alpha[:n] - alpha[n:]             # β = a − â
        u_var = np.ascontiguousarray(u_var)
        qd = norms
        w = x.weights(np.arange(n, dtype=np.int64), var)
        sy = float(var.sum())
    else:
        var = alpha
        u_var, d_var = upper, diag
        qd = norms[rows]
        w = x.weights(rows, y * var)
        sy = float(y @ var)
    span, rec = _epoch_arrays(x, Xr, rows if tube is None else np.arange(qp.n_data), qd,
                              (qp.y, qp.p) if tube is None else tube[:2], u_var, d_var)
    movable = u_var > 0
    scale = opts.rho_scale if tube is None or opts.tube_rho_scale is None else \
        opts.tube_rho_scale
    rho = scale * (float(qd[movable].mean()) if movable.any() else 1.0)
    rho = rho if rho > 0 else 1.0
    rho_max = rho * opts.rho_growth_max
    state = cd.CDState()
    state.lam, state.rho, state.sum = float(b0), rho if equality else 0.0, sy
    seed = (int(random_state) * 2654435761 + 88172645463325252) % 2 ** 64
    state.rng = seed or 1
    order = np.arange(var.size, dtype=np.int64)
    active = var.size
    eps_inner = _INNER_TOL_FACTOR * tol
    eps_b = 0.5 * tol
    history = {"pg_gap": [], "active": []}
    last_gap = np.inf
    unshrunk = False                # LIBSVM's early unshrinking done
    cg_free = (-1, np.inf)          # (|F| at the last step, no step above this |F|)
    checked = False                 # the exact check failed with variables shrunk
    last_residual = np.inf          # |yᵀα − Δ| at the last exact multiplier step
    status, message, nit, final = None, "", 0, None
    spent = dict.fromkeys(("epochs", "newton", "check"), 0.0)
    t1 = time.perf_counter()
    with one_blas_thread():     # BLAS threads spin after a call and slow the epochs
        while nit < max_iter:
            if tube is not None and nit >= _TUBE_EPOCHS and \
                    np.count_nonzero((var != 0.0) & (np.abs(var) < u_var)) <= _MAX_FREE:
                # the tail in the standard form (a, â), where the Newton steps apply
                n = qp.n_data
                var = np.concatenate([np.maximum(var, 0.0), np.maximum(-var, 0.0)])
                tube, u_var, d_var, qd = None, upper, diag, norms[rows]
                span, rec = _epoch_arrays(x, Xr, rows, qd, (qp.y, qp.p), u_var, d_var)
                order = np.arange(var.size, dtype=np.int64)
                active = var.size
                _reset_bounds(state)
                state.sum = float(y @ var)
            te = time.perf_counter()
            if tube is not None:
                active, v_max, _ = x.epoch_tube(span, rec, var, w, order, active, state,
                                                equality, delta)
                pg_gap = v_max
            else:
                active, pg_max, pg_min = x.epoch_margin(span, rec, var, w, order, active,
                                                        state, equality, delta)
                pg_gap = pg_max - pg_min if pg_max >= pg_min else 0.0
            spent["epochs"] += time.perf_counter() - te
            nit += 1
            history["pg_gap"].append(pg_gap)
            history["active"].append(active)
            b_now = state.lam + state.rho * (state.sum - delta) if equality else 0.0
            if callback is not None:
                try:
                    callback(OptimizeResult(nit=nit, pg_gap=pg_gap, active=active, b=b_now))
                except StopIteration:
                    status, message = "stopped", f"stopped by the callback after {nit} epochs"
                    break
            stalled = False
            if nit % _LOOK_EVERY == 0:
                stalled = pg_gap > _STALL_RATIO * last_gap   # little progress
                last_gap = pg_gap
                if equality:
                    # the inexact method of multipliers, λ ← b at each look (not only once
                    # the inner problem converged: text-like squared hinge 132 epochs → 78)
                    state.lam = b_now
            if stalled and pg_gap > eps_inner:
                te = time.perf_counter()
                stepped = None
                if tube is None:
                    stepped = face.newton_dense(x, qp, rows, var, w, diag, equality, delta,
                                                _MAX_FREE, _NEWTON_ROUNDS)
                if stepped is not None:
                    w, b_face = stepped
                    state.sum = float(y @ var)
                    if equality:
                        state.lam = b_face - state.rho * (state.sum - delta)
                    _reset_bounds(state)
                else:                       # many free: a projected Newton-CG step
                    w, cg_free = _cg_step(Xr, var, w, _Standard(tube, rows, y, qp.p, u_var,
                                                                d_var, delta),
                                          state, opts, cg_free)
                spent["newton"] += time.perf_counter() - te
            if shrinking and not unshrunk and pg_gap <= _UNSHRINK_FACTOR * eps_inner \
                    and active < var.size:
                # LIBSVM's early unshrinking: the variables shrunk while w was far from
                # its end are checked once before the tail, not after it
                unshrunk = True
                active = var.size
                _reset_bounds(state)
                continue
            if pg_gap <= eps_inner:
                shift = 0.0
                if equality:
                    state.sum = float(var.sum()) if tube is not None else float(y @ var)
                    shift = state.rho * (state.sum - delta)
                if active < var.size and (checked or abs(shift) > eps_b):
                    # the shrunk ones join before λ moves (with them held, λ would run
                    # off) or after the exact check failed at this tolerance
                    active = var.size
                    _reset_bounds(state)
                    continue
                if abs(shift) > eps_b:          # the multiplier step λ ← b
                    state.lam += shift
                    residual = abs(state.sum - delta)
                    if residual > opts.rho_growth_below * last_residual:
                        # yᵀα = Δ approached too slowly
                        state.rho = min(state.rho * opts.rho_growth, rho_max)
                    last_residual = residual
                    _reset_bounds(state)
                    continue
                # the exact check reads every variable (the shrunk ones too) from α:
                # where it passes, no epoch over all of them is needed to end the run
                te = time.perf_counter()
                final = _final(qp, x, var, tube, equality, delta, diag, tol, gap_tol)
                spent["check"] += time.perf_counter() - te
                if final.ok:
                    status = "optimal"
                    message = _message(final, equality, tol, gap_tol)
                    break
                _reset_bounds(state)
                if active < var.size:            # the shrunk ones are checked again
                    checked = True
                    active = var.size
                    continue
                checked = False
                eps_inner /= opts.tighten
                eps_b /= opts.tighten
                continue
            if shrinking:
                if tube is not None:
                    state.pg_max_old = pg_gap
                else:
                    state.pg_max_old = pg_max if pg_max > 0 else np.inf
                    state.pg_min_old = pg_min if pg_min < 0 else -np.inf
    if final is None or status != "optimal":
        final = _final(qp, x, var, tube, equality, delta, diag, tol, gap_tol)
        if status is None:
            status = "max_iter"
            message = (f"reached max_iter = {max_iter} epochs with the optimality measure "
                       f"{final.viol:.2e} (tol {tol:g}); raise max_iter or tol, or scale "
                       "the features")
            if not convergence_warnings_silenced():
                warnings.warn("dcd: " + message, ConvergenceWarning, stacklevel=2)
    return _result(final, status, message, nit, history, t0, t1, spent)


def _message(final, equality, tol, gap_tol):
    return (f"m(α) − M(α) = {final.viol:.2e} ≤ tol = {tol:g}" if equality else
            f"max projected gradient {final.viol:.2e} ≤ tol = {tol:g}") + (
        f", relative gap {final.rel_gap:.2e}" if gap_tol is not None else "")


def _result(final, status, message, nit, history, t0, t1, spent=None):
    t2 = time.perf_counter()
    return OptimizeResult(x=final.alpha, b=final.b, w=final.w, status=status, message=message,
                          success=status == "optimal", nit=nit, fun=final.dual,
                          gap=final.viol, rel_gap=final.rel_gap, history=history,
                          timings={"setup": t1 - t0, "solve": t2 - t1, **(spent or {}),
                                   "total": time.perf_counter() - t0})


def _primal_path(qp, x, rows, tol, gap_tol, max_iter, popts):
    """The few-features route (:class:`DCDOptions` ``primal``): (the exact reading
    :func:`_final` of its α, the Newton steps taken), or None where it does not apply
    or its Newton steps (counted against ``max_iter``) ran out."""
    n, d = qp.n_data, x.d
    upper = np.asarray(qp.upper, dtype=float)
    if qp.n_variables != n or not np.array_equal(rows, np.arange(n)) or \
            not primal_applies(d, _diag(qp), upper, popts):
        return None
    X = qp.X.tocsr() if sp.issparse(qp.X) else np.asarray(qp.X, dtype=float)
    y = np.asarray(qp.y, dtype=float)
    p = np.asarray(qp.p, dtype=float)
    equality, delta = bool(qp.equality), float(qp.delta)
    with one_blas_thread():
        path = huber_path(X, y, -p, upper, equality=equality, delta=delta, max_steps=max_iter,
                          options=popts)
        if path is None:
            return None
        alpha, W, _, steps = path
        out = face.solve_working_set(X, y, p, upper, delta, alpha, W, equality=equality,
                                     tol=0.01 * tol)
        var = alpha if out is None else out[0]
        return _final(qp, x, var, None, equality, delta, np.zeros(n), tol, gap_tol), steps


def _epoch_arrays(x, X, rows, qd, signs_and_linear, upper, diag):
    """What an epoch reads per variable, laid out for it: (span, rec).

    ``span`` (m, 2) where each variable's data row lies (:func:`coordinate.spans`);
    ``rec`` (m, REC_WIDTH), one row a variable: (yₜ, pₜ, uₜ, Dₜ, Qₜₜ + Dₜ) for
    ``LinearX.epoch_margin``, (zᵢ, εᵢ, uᵢ, Dᵢ, ‖xᵢ‖² + Dᵢ) for
    ``LinearX.epoch_tube`` (``signs_and_linear`` = (y, p) or (z, ε)).  One
    cache line a variable instead of six arrays read at random, and no
    ``rows → indptr`` chain of dependent loads.
    """
    first, second = signs_and_linear
    span = cd.spans(x, None if x.is_dense else X.indptr, rows)
    rec = np.empty((qd.size, cd.REC_WIDTH))
    rec[:, 0], rec[:, 1], rec[:, 2], rec[:, 3] = first, second, upper, diag
    rec[:, 4] = qd + diag
    return span, rec


@dataclass
class _Final:
    ok: bool
    alpha: np.ndarray
    w: np.ndarray
    b: float
    viol: float
    rel_gap: float
    dual: float


def _final(qp, x, var, tube, equality, delta, diag, tol, gap_tol):
    """The exact reading of the current iterate: α of the standard form made feasible,
    w from it, b by LIBSVM's rule, the optimality measure and the relative gap."""
    y, p, upper = qp.y, np.asarray(qp.p, dtype=float), np.asarray(qp.upper, dtype=float)
    if tube is not None:
        alpha = np.concatenate([np.maximum(var, 0.0), np.maximum(-var, 0.0)])
    else:
        alpha = var.copy()
    if equality:
        zero, free, _ = kkt.box_categories(alpha, upper, 0.0)
        kkt.restore_equality(alpha, y, upper, delta, prefer=np.flatnonzero(free))
    rows = np.ascontiguousarray(qp.data_index, dtype=np.int64)
    w = x.weights(rows, y * alpha)
    f0 = x.decision(None, w)
    grad = y * f0[rows] + p + diag * alpha
    scale = max(1.0, float(np.max(alpha, initial=0.0)))
    if equality:
        b = kkt.intercept_from_gradient(y, alpha, grad, upper, tau=0.0, zero_scale=scale)
        viol = kkt.violating_pair_gap(y, alpha, grad, upper)
    else:
        b = 0.0
        viol = kkt.projected_gradient(alpha, grad, upper)
    s = y * (f0[rows] + b) + p
    xi = np.maximum(0.0, -s)
    reg = 0.5 * float(w @ w)
    fin = np.isfinite(upper)
    sq = diag > 0
    primal = reg + float(upper[fin] @ xi[fin]) + float(np.sum(xi[sq] ** 2 / (2.0 * diag[sq])))
    dual = -(reg + 0.5 * float(diag @ (alpha * alpha)) + float(p @ alpha))
    rel_gap = relative_gap(primal, dual)
    ok = viol <= tol and (gap_tol is None or rel_gap <= gap_tol)
    return _Final(ok, alpha, w, float(b), float(viol), float(rel_gap), -dual)


@dataclass(frozen=True)
class _Standard:
    """What a Newton-CG step reads of the run's standard form: the tube (z, ε, …) of
    ε-SVR or None, the variables' data rows, labels y, linear terms p, upper bounds,
    diagonal D, and the equality's right-hand side Δ."""

    tube: tuple | None
    rows: np.ndarray
    y: np.ndarray
    p: np.ndarray
    upper: np.ndarray
    diag: np.ndarray
    delta: float


def _cg_step(X, var, w, form, state, opts, last_free):
    """A projected Newton-CG step on the free variables (:func:`face.newton_cg`), in
    place on ``var`` and ``state.sum``; (the new w, or ``w`` itself when none is taken;
    the number free).  A cheap, inexact step while the free set changes; a precise
    one (``_CG_MAX_ITER_SETTLED``, ``_CG_TOL_SETTLED``) once its size moved by less than
    1 % since the last step: the face is then the optimum's and its minimizer ends
    the tail.

    ``last_free`` is (|F| at the last step, the |F| above which none is tried): where
    a step was refused (beyond the rank of X_F the face's Hessian is singular and its
    Newton direction runs along the null space: on a9a no step is taken), none is
    tried again until the free set has shrunk by half, or to d + 1 where it was
    larger (a dense 5000 × 300 ε-SVR's first step, on ~1000 free, failed; its ~290
    then ran 10 000 epochs)."""
    tube, rows, y, p, upper, diag, delta = (form.tube, form.rows, form.y, form.p, form.upper,
                                            form.diag, form.delta)
    if tube is not None:
        z, eps = tube[0], tube[1]
        F = np.flatnonzero((var != 0.0) & (np.abs(var) < upper))
        if F.size == 0 or F.size > last_free[1]:
            return w, last_free
        v = var[F]
        pos = v > 0
        c = np.ones(F.size)
        # ε = 0: no kink at β = 0 (the whole box [−u, u] is the face's), else β keeps
        # its sign
        wide = (eps[F] == 0.0) if opts.cg_cross_zero else np.zeros(F.size, dtype=bool)
        lo = np.where(pos & ~wide, 0.0, -upper[F])
        hi = np.where(~pos & ~wide, 0.0, upper[F])
        lin = -z[F] + np.where(pos, eps[F], -eps[F])
        rF = F
    else:
        F = np.flatnonzero((var > 0.0) & (var < upper))
        if F.size == 0 or F.size > last_free[1]:
            return w, last_free
        v, c = var[F], y[F]
        lo, hi, lin = np.zeros(F.size), upper[F], np.asarray(p, dtype=float)[F]
        rF = rows[F]
    settled = abs(F.size - last_free[0]) < 0.01 * F.size
    out = face.newton_cg(face.Face(X, rF, c, v, lo, hi, lin, diag[F]), w,
                         face.Equality(state.lam, state.rho, state.sum - delta),
                         max_cg=_CG_MAX_ITER_SETTLED if settled else _CG_MAX_ITER,
                         cg_tol=_CG_TOL_SETTLED if settled else opts.cg_tol,
                         heavy_columns=opts.cg_heavy_columns)
    if out is None:         # none until the free set has shrunk by half, or below d + 1
        rank = X.shape[1] + 1   # (beyond it the face's Hessian is singular)
        return w, (F.size, max(0.5 * F.size, rank) if F.size > rank else 0.5 * F.size)
    state.sum += float(c @ (out[0] - v))
    var[F] = out[0]
    return out[1], (F.size, np.inf)
