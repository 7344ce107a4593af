"""An active-set refinement of the standard dual QP with a linear kernel, in the primal.

With explicit features Φ (the linear kernel) the dual's quadratic term is ‖Φᵀβ‖², and
f = Φw + b: the margins of a primal point are known to u·Σⱼ|xᵢⱼwⱼ|, far more precisely
than f = Kβ from the multipliers (u·Σⱼ|Kᵢⱼβⱼ|, with entries ~1e7 and multipliers ~1e7 on
unscaled data: an error of order 1).  So where a dual solver's answer cannot be
certified in double precision, this refinement takes its active set and solves the
KKT system of that set exactly, in the primal:

* the free variables F (0 < αₜ < uₜ) have their constraint active,
  sₜ = yₜ(φₜ·w + b) + pₜ = 0, i.e. φₜ·w + b = −pₜyₜ;
* the variables at their bound U (αₜ = uₜ) contribute −Σ_U uₜsₜ to the objective;

and ½‖w‖² + Σ_U uₜξₜ is minimized over w (and b) on those equalities: a minimum-norm
least-squares problem in the d + 1 primal unknowns, solved by an orthogonal
factorization of the |F| × d constraint matrix (its conditioning, not that of the
kernel matrix, which is its square).  The multipliers follow from stationarity,
w = Σₜ yₜαₜφₜ and yᵀα = Δ, by bounded least squares (0 ≤ αₜ ≤ uₜ); points that
violate their constraint join F, and free points whose multiplier reaches a bound
leave it, until every condition holds (a primal–dual active-set method).  On a
linear-kernel SVM the free set has at most about d + 1 points, so each round costs
O(n·d + |F|·d²).

References
----------
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006,
§16.5 (active-set methods for convex QP) and §16.2 (equality-constrained QP by
orthogonal factorization).
M. Hintermüller, K. Ito and K. Kunisch, "The primal-dual active set strategy as a
semismooth Newton method", SIAM J. Optim. 13(3), 2002.
C. L. Lawson and R. J. Hanson, *Solving Least Squares Problems*, 1974 (bounded
least squares, BVLS: Stark and Parker, 1995).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult, lsq_linear

__all__ = ["refine_linear", "applies", "MAX_FREE"]

#: The refinement is skipped when more variables than this are free (the bounded
#: least squares of the multipliers is dense in |F|); a linear SVM has about d + 1.
MAX_FREE = 2000
#: Least-squares solves per equality QP (the first, then refinement on its residual).
REFINE_STEPS = 3
#: Largest n_data × |F| for the corrections of α in f (a dense matrix of that size).
F_SPACE_CELLS = 2 ** 24
#: Largest number of features (the least squares are dense in d).
MAX_FEATURES = 5000


def applies(qp) -> bool:
    """True when ``qp`` has a linear kernel on features of moderate width (and no
    diagonal: the squared losses' KKT systems are not this refinement's)."""
    return (qp.kernel.is_linear and qp.gram is None and qp.X.ndim == 2
            and qp.X.shape[1] <= MAX_FEATURES and getattr(qp, "diag", None) is None)


def _rows(X, idx) -> np.ndarray:
    R = X[idx]
    return R.toarray() if sp.issparse(R) else np.asarray(R, dtype=float)


def _data_sum(qp, T, weights) -> np.ndarray:
    """Σ_{t ∈ T} weightsₜ φ(x_{index[t]}) as Xᵀc (dense or sparse X), shape (d,)."""
    c = np.bincount(qp.data_index[T], weights=weights, minlength=qp.X.shape[0])
    return np.asarray(qp.X.T @ c).ravel()


def _stationarity(qp, w, alpha) -> np.ndarray:
    """w − Σₜ yₜαₜφ(x_{index[t]}), shape (d,)."""
    active = np.flatnonzero(alpha)
    return w - _data_sum(qp, active, qp.y[active] * alpha[active])


def _equality_qp(qp, XF, F, U, target):
    """(w, b) minimizing ½‖w‖² + Σ_U uₜξₜ with the constraints of F active."""
    y, up = qp.y, qp.upper
    g = _data_sum(qp, U, up[U] * y[U])
    cU = float(up[U] @ y[U])
    A, r = XF, target[F]
    if F.size == 0:                    # no intercept, every multiplier at a bound
        return g, 0.0
    if qp.equality:
        mu = A.mean(axis=0)
        A = A - mu
        rbar = float(r.mean())
        r = r - rbar
        h = g - (cU - qp.delta) * mu       # b's term in the objective: −(c_U − Δ)·b
    else:
        h = g
    w = h
    for _ in range(REFINE_STEPS):       # iterative refinement of the least squares
        res = r - A @ w
        w = w + np.linalg.lstsq(A, res, rcond=None)[0]
    b = rbar - float(mu @ w) if qp.equality else 0.0
    return w, b


def _multipliers(qp, XF, F, U, w, alpha_scale):
    """α with α_U = u_U, α_Z = 0 and α_F ∈ [0, u_F] fitting stationarity and yᵀα = Δ
    by bounded least squares; (α, the stationarity residual ‖w − Σyαφ‖∞ / max(1, ‖w‖∞),
    the equality residual |yᵀα − Δ| / ``alpha_scale``)."""
    y, up = qp.y, qp.upper
    alpha = np.zeros(y.size)
    alpha[U] = up[U]
    sigma = max(1.0, float(np.abs(w).max(initial=0.0)))
    M = (XF * y[F, None]).T / sigma
    rhs = (w - _data_sum(qp, U, up[U] * y[U])) / sigma
    if qp.equality:
        M = np.vstack([M, y[F][None, :] / alpha_scale])
        rhs = np.concatenate([rhs, [(qp.delta - float(up[U] @ y[U])) / alpha_scale]])
    if F.size:
        res = lsq_linear(M, rhs, bounds=(np.zeros(F.size), up[F]), method="bvls", tol=1e-15,
                         max_iter=max(100, 10 * F.size))
        alpha[F] = np.clip(res.x, 0.0, up[F])
    return alpha, *_residuals(qp, w, alpha, alpha_scale)


def _residuals(qp, w, alpha, alpha_scale):
    """(stationarity ‖w − Σyαφ‖∞ / max(1, ‖w‖∞), |yᵀα − Δ| / ``alpha_scale``)."""
    sigma = max(1.0, float(np.abs(w).max(initial=0.0)))
    stat = float(np.abs(_stationarity(qp, w, alpha)).max(initial=0.0)) / sigma
    eq = abs(float(qp.y @ alpha) - qp.delta) / alpha_scale if qp.equality else 0.0
    return stat, eq


def _refine_in_f(qp, XF, F, w, alpha, alpha_scale):
    """Up to two least-squares corrections of α_F on f = Φw − Σₜ yₜαₜK(·, x_{index[t]}) at
    the data points (and yᵀα = Δ), each kept only if it lowers the largest residual: the
    bounded fit above meets stationarity in the coordinates of w, where an error of
    u·‖w‖ becomes ‖xᵢ‖₁ times larger in f; the certificate reads β against Φw in f
    (in place)."""
    y, up = qp.y, qp.upper
    A = np.asarray(qp.X @ (XF * y[F, None]).T)
    if qp.equality:
        A = np.vstack([A, y[F][None, :] / alpha_scale])
    def residual(a):
        r = np.asarray(qp.X @ _stationarity(qp, w, a)).ravel()
        if qp.equality:
            r = np.concatenate([r, [(qp.delta - float(y @ a)) / alpha_scale]])
        return r

    r = residual(alpha)
    for _ in range(2):          # kept only where it helps (K's columns may be ill-conditioned)
        trial = alpha.copy()
        trial[F] = np.clip(alpha[F] + np.linalg.lstsq(A, r, rcond=None)[0], 0.0, up[F])
        r_trial = residual(trial)
        if np.abs(r_trial).max() >= np.abs(r).max():
            return
        alpha[F], r = trial[F], r_trial


def refine_linear(qp, alpha0, *, tol=1e-6, max_rounds=100) -> OptimizeResult:
    """Refine an approximate answer of a linear-kernel :class:`DualQP` to an exact one.

    Parameters
    ----------
    qp : DualQP
        With ``kernel.is_linear`` (see :func:`applies`); X dense or sparse.
    alpha0 : ndarray of shape (m,)
        An approximate answer (e.g. SMO's, stalled on unscaled data, or an
        interior-point one); its free and bounded variables give the first
        active set, read with multipliers below √tol × the scale (the largest bound,
        or max α without bounds) as 0 — an interior-point answer's inactive ones are
        of that order — and, failing that, below tol/100 × the scale (SMO's exact
        zeros, small free multipliers under large bounds).  Not modified.
    tol : float, default=1e-6
        The accuracy asked for: the refinement stops when the margins (units of f) hold
        to ``tol / 10``, and stationarity (relative to max(1, ‖w‖∞)) and yᵀα = Δ
        (relative to the largest bound, or to max α without bounds) to ``tol`` (the
        multipliers' least squares bottom out near 1e-9 on badly scaled features).
    max_rounds : int, default=100
        Active-set changes before giving up: the refinement is meant for answers whose
        active set is nearly right (an interior-point solver's: 1–40 rounds measured);
        from a far start (a stalled first-order run) it may need many more, or not
        settle.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` (α, ndarray of shape (m,)), ``w`` (ndarray of shape (n_features,)),
        ``b``, ``nit`` (rounds), ``status`` ("optimal", "max_iter", or "stalled": no
        free variable to fix b, too many free variables, an active set met twice, or
        multipliers that cannot meet stationarity), ``success``, ``message``,
        ``n_free``.
    """
    alpha0 = np.asarray(alpha0, dtype=float)
    first = None
    for zero in (np.sqrt(tol), 1e-2 * tol):
        res = _refine_from(qp, alpha0, tol, max_rounds, zero)
        if res.success:
            return res
        first = first or res
    return first


def _refine_from(qp, alpha0, tol, max_rounds, zero):
    """The rounds of :func:`refine_linear` from the active set of ``alpha0`` read with
    multipliers below ``zero`` × the scale counted as 0 (and as uₜ within it of uₜ)."""
    y, p, up = qp.y, qp.p, qp.upper
    idx = qp.data_index
    finite = up[np.isfinite(up)]
    tau = zero * max(1.0, float(finite.max()) if finite.size
                     else float(alpha0.max(initial=0.0)))
    target = -p * y                      # f on the margin of each variable
    movable = up > 0                     # uₜ = 0 (a zero weight): αₜ = 0, no constraint
    F = np.flatnonzero(movable & (alpha0 > tau) & (alpha0 < up - tau))
    U = np.flatnonzero(movable & (alpha0 >= up - tau))
    alpha, w, b = alpha0.copy(), np.zeros(qp.X.shape[1]), 0.0
    bar = tol / 10
    seen = set()
    status, msg = "stalled", ""
    for k in range(1, max_rounds + 1):
        key = (F.tobytes(), U.tobytes())
        if key in seen:
            msg = "an active set came back (cycling)"
            break
        seen.add(key)
        if (F.size == 0 and qp.equality) or F.size > MAX_FREE:
            msg = (f"{F.size} free variables (it needs between 1 and {MAX_FREE} with an "
                   "intercept to fix, at most that many without)")
            break
        XF = _rows(qp.X, idx[F])
        w, b = _equality_qp(qp, XF, F, U, target)
        s = y * (np.asarray(qp.X @ w).ravel()[idx] + b) + p
        alpha_scale = max(1.0, float(finite.max()) if finite.size
                          else float(alpha.max(initial=0.0)))
        alpha, stat, eq = _multipliers(qp, XF, F, U, w, alpha_scale)
        if qp.equality and not finite.size:     # its scale is max α: read it again
            eq = abs(float(y @ alpha) - qp.delta) / max(1.0, float(alpha.max(initial=0.0)))
        free_bad = float(np.abs(s[F]).max(initial=0.0)) > bar
        Z = np.setdiff1d(np.flatnonzero(movable), np.concatenate([F, U]))
        add_Z, add_U = Z[s[Z] < -bar], U[s[U] > bar]
        clamped = F[(alpha[F] <= 0.0) | (alpha[F] >= up[F])]
        if not (free_bad or add_Z.size or add_U.size) and max(stat, eq) <= tol:
            if F.size and qp.X.shape[0] * F.size <= F_SPACE_CELLS:
                corrected = alpha.copy()
                _refine_in_f(qp, XF, F, w, corrected, alpha_scale)
                if max(_residuals(qp, w, corrected, alpha_scale)) <= tol:
                    alpha = corrected
                    stat, eq = _residuals(qp, w, alpha, alpha_scale)
            return _result(alpha, w, b, k, "optimal", f"margins hold to {bar:g} and "
                           f"stationarity to {max(stat, eq):.1g} after {k} active-set rounds "
                           f"({F.size} free).", F.size)
        drop = clamped if (free_bad or not (add_Z.size or add_U.size)) else clamped[:0]
        if add_Z.size or add_U.size:
            new = np.concatenate([add_Z, add_U])
            viol = np.concatenate([-s[add_Z], s[add_U]])
            pick = new[np.argsort(-viol)[:max(1, new.size // 4)]]
            F, U = np.union1d(F, pick), np.setdiff1d(U, pick)
        elif not drop.size:
            msg = "the multipliers cannot meet stationarity on this active set"
            break
        F = np.setdiff1d(F, drop)
        U = np.union1d(U, drop[alpha[drop] >= up[drop]])
    else:
        status, msg = "max_iter", f"no exact active set within {max_rounds} rounds"
        k = max_rounds
    return _result(alpha, w, b, k, status, f"active-set refinement {status}: {msg}.", F.size)


def _result(alpha, w, b, nit, status, message, n_free):
    return OptimizeResult(x=alpha, w=w, b=float(b), nit=int(nit), status=status,
                          success=status == "optimal", message=message, n_free=int(n_free))
