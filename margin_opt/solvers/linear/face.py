"""Second-order steps on the face of the free variables of dual coordinate descent.

Coordinate descent's tail is long where the free variables F (strictly inside their
box) are coupled: few features make their rows nearly dependent (a9a: d = 123), or
many free variables share the features (ε-SVR with ε = 0: about d of them lie on the
fit).  With the bounded variables fixed the dual is a quadratic on the face of F, and
a Newton step on it moves all of F at once.  Two forms, both with w explicit (the
Hessian on F, Q_FF + D_F, is never formed from more than X_F):

- :func:`newton_dense`: few free variables — the |F| × |F| KKT system with the
  equality yᵀα = Δ exact, an active-set method on the face (each step to the first
  bound, that variable leaving F);
- :func:`newton_cg`: many — conjugate gradients on the augmented Lagrangian's Hessian
  Q_FF + D_F + ρccᵀ by products with X_F (O(nnz(X_F)) each), then a projected step
  into the face's box, halved until the objective falls (projected Newton).

References
----------
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., 2006, §16.5 (active-set
methods), §5.1 and §7.1 (conjugate gradients, inexact Newton).
D. P. Bertsekas, "Projected Newton methods for optimization problems with simple
constraints", SIAM J. Control Optim. 20(2), 1982.
"""

from __future__ import annotations

import numpy as np

from ... import kkt
from . import coordinate as cd

__all__ = ["newton_dense", "newton_cg"]


def newton_dense(X4, qp, rows, alpha, w, diag, equality, delta, max_free, rounds):
    """Newton steps on the face of the free multipliers F (0 < αₜ < uₜ), in place: an
    active-set method on the face; (the new w, b) or None.

    ``X4`` is (dense, data, indices, indptr, d) of X.  α is first made exactly feasible
    (yᵀα = Δ, :func:`margin_opt.kkt.restore_equality`).  Each round solves, with the
    others fixed, the KKT system of the face

        [H + μI  y_F] [Δ_F]   [−∇_F]
        [y_Fᵀ     0 ] [ b ] = [  0 ],   H = Q_FF + D_F,  ∇_F = y_F ⊙ (X_F w) + p_F + D_Fα_F

    (no b row without intercept), with μ = 1e-10·max diag H so that Δ is a descent
    direction even where H is singular (|F| beyond the rank of X_F: along its null
    space the objective is linear and the step runs to a bound).  α_F moves by θΔ,
    θ = min(1, the first bound): a multiplier that reaches its bound leaves F and the
    face is solved again, until θ = 1 (the face's minimizer) or ``rounds``.  Every
    round lowers the objective and keeps yᵀα = Δ; b is the multiplier of the face's
    equality.
    """
    dense, data, indices, indptr, d = X4
    upper, y = qp.upper, qp.y
    F = np.flatnonzero((alpha > 0) & (alpha < upper))
    if F.size == 0 or F.size > max_free:
        return None
    p = np.asarray(qp.p, dtype=float)
    if equality and float(y @ alpha) != delta:
        kkt.restore_equality(alpha, y, upper, delta, prefer=F)
        w = cd.weights(dense, data, indices, indptr, d, rows, y * alpha)
        F = np.flatnonzero((alpha > 0) & (alpha < upper))
    b, moved = 0.0, False
    for _ in range(rounds):
        if F.size == 0:
            break
        yF, rF = y[F], rows[F]
        H = cd.gram_rows(dense, data, indices, indptr, d, rF) * np.outer(yF, yF)
        H[np.diag_indices_from(H)] += diag[F] + 1e-10 * max(1.0, float(np.max(np.diag(H))))
        grad = yF * cd.decision_rows(dense, data, indices, indptr, d, rF, w) + p[F] + \
            diag[F] * alpha[F]
        if equality:
            K = np.zeros((F.size + 1, F.size + 1))
            K[:-1, :-1], K[:-1, -1], K[-1, :-1] = H, yF, yF
            rhs = np.append(-grad, 0.0)
        else:
            K, rhs = H, -grad
        try:
            sol = np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(sol)):
            break
        step = sol[:F.size]
        if equality:
            b = float(sol[-1])
        old, uF = alpha[F], upper[F]
        with np.errstate(divide="ignore", invalid="ignore"):
            lim = np.where(step > 0, (uF - old) / step,
                           np.where(step < 0, -old / step, np.inf))
        theta = min(1.0, float(lim.min(initial=np.inf)))
        new = old + theta * step
        if theta < 1.0:                 # the blocking ones exactly at their bound
            hit = lim <= theta
            new[hit] = np.where(step[hit] > 0, uF[hit], 0.0)
        new = np.clip(new, 0.0, uF)
        alpha[F] = new
        moved = True
        w = w + cd.weights(dense, data, indices, indptr, d, rF, yF * (new - old))
        if theta >= 1.0:
            break
        F = F[(new > 0) & (new < uF)]
    return (w, b) if moved else None


def newton_cg(X4, rows, c, v, lo, hi, lin, diag, w, lam, rho, e, *, max_cg=50,
              cg_tol=0.05, halvings=8):
    """One projected Newton step on the face of the free variables F; (v_F, w) or None.

    The objective, with the variables outside F fixed, is the augmented Lagrangian

        L(v) = ½‖w‖² + Σ_F (linₜvₜ + ½Dₜvₜ²) + λe + ρ/2 e²,  w = w₀ + Σ_F cₜvₜ x_{rows[t]},
        e = Σ cₜvₜ − Δ (e given at the current v).

    Its Newton direction s solves (Q_FF + D_F + ρccᵀ) s = −∇L by conjugate gradients
    (at most ``max_cg`` products, each O(nnz(X_F)), to a relative residual
    ``cg_tol``; a direction of zero curvature stops them).  The step is then
    v(θ) = clip(v + θs, lo, hi) for θ = 1, ½, ¼, … (``halvings``): the first whose
    exact change of L (computed from the changes, no cancellation) is negative is
    taken.

    Parameters
    ----------
    X4 : tuple
        (dense, data, indices, indptr, d) of X.
    rows : ndarray of shape (|F|,)
        The data rows of the free variables.
    c : ndarray of shape (|F|,)
        Their signs in w (yₜ, or 1 for Ho and Lin's β).
    v, lo, hi, lin, diag : ndarray of shape (|F|,)
        Their values, the face's box, linear terms and diagonal D.
    w : ndarray of shape (d,)
    lam, rho, e : float
        λ, ρ and the equality's residual (ρ = 0: no intercept).

    Returns
    -------
    (v_new, w_new) or None when no step lowers L.
    """
    X4, rows = cd.compact_rows(X4, rows)        # the products read X_F in order
    dense, data, indices, indptr, d = X4

    def hess(u):
        wu = cd.weights(dense, data, indices, indptr, d, rows, c * u)
        out = c * cd.decision_rows(dense, data, indices, indptr, d, rows, wu) + diag * u
        if rho:
            out += rho * c * float(c @ u)
        return out

    b = lam + rho * e
    g = c * cd.decision_rows(dense, data, indices, indptr, d, rows, w) + lin + diag * v + c * b
    s = np.zeros_like(v)
    r = -g
    q = r.copy()
    rr = float(r @ r)
    stop = cg_tol * cg_tol * rr
    for _ in range(max_cg):
        Hq = hess(q)
        qHq = float(q @ Hq)
        if not qHq > 1e-12 * float(q @ q):      # zero curvature: the objective is linear
            if not s.any():
                s = q
            break
        a = rr / qHq
        s += a * q
        r -= a * Hq
        rr_new = float(r @ r)
        if rr_new <= stop:
            break
        q = r + (rr_new / rr) * q
        rr = rr_new
    theta = 1.0
    for _ in range(halvings):
        dv = np.clip(v + theta * s, lo, hi) - v
        dw = cd.weights(dense, data, indices, indptr, d, rows, c * dv)
        de = float(c @ dv)
        change = (float(w @ dw) + 0.5 * float(dw @ dw) + float(lin @ dv)
                  + float(diag @ (v * dv + 0.5 * dv * dv)) + lam * de
                  + rho * (e * de + 0.5 * de * de))
        if change < 0.0:
            return v + dv, w + dw
        theta *= 0.5
    return None
