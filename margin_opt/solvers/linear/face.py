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

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp

from ... import kkt
from . import coordinate as cd

__all__ = ["newton_dense", "newton_cg", "Face", "Equality", "heavy_columns_preconditioner",
           "box_qp", "solve_working_set"]


def newton_dense(x, qp, rows, alpha, w, diag, equality, delta, max_free, rounds):
    """Newton steps on the face of the free multipliers F (0 < αₜ < uₜ), in place: an
    active-set method on the face; (the new w, b) or None.

    ``x`` is X as a :class:`margin_opt._core.LinearX`.  α is first made exactly feasible
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
    upper, y = qp.upper, qp.y
    F = np.flatnonzero((alpha > 0) & (alpha < upper))
    if F.size == 0 or F.size > max_free:
        return None
    p = np.asarray(qp.p, dtype=float)
    if equality and float(y @ alpha) != delta:
        kkt.restore_equality(alpha, y, upper, delta, prefer=F)
        w = x.weights(rows, y * alpha)
        F = np.flatnonzero((alpha > 0) & (alpha < upper))
    b, moved = 0.0, False
    for _ in range(rounds):
        if F.size == 0:
            break
        yF, rF = y[F], rows[F]
        H = x.gram(rF) * np.outer(yF, yF)
        H[np.diag_indices_from(H)] += diag[F] + 1e-10 * max(1.0, float(np.max(np.diag(H))))
        grad = yF * x.decision(rF, w) + p[F] + \
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
        w = w + x.weights(rF, yF * (new - old))
        if theta >= 1.0:
            break
        F = F[(new > 0) & (new < uF)]
    return (w, b) if moved else None


@dataclass(frozen=True)
class Face:
    """The free variables F of a projected Newton-CG step: the data X (ndarray or
    scipy CSR of shape (n_samples, n_features), C-ordered float64 or sorted CSR), their
    data rows, signs c in w (yₜ, or 1 for Ho and Lin's β), values v, box [lo, hi],
    linear terms lin and diagonal D (``diag``), each ndarray of shape (|F|,)."""

    X: object
    rows: np.ndarray
    c: np.ndarray
    v: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lin: np.ndarray
    diag: np.ndarray


@dataclass(frozen=True)
class Equality:
    """The augmented Lagrangian's intercept terms: the multiplier λ (``lam``), the
    penalty ρ (``rho``; 0: no intercept) and the equality's residual e = Σ cₜvₜ − Δ."""

    lam: float = 0.0
    rho: float = 0.0
    e: float = 0.0


def newton_cg(face, w, eq, *, max_cg=50, cg_tol=0.05, halvings=8, heavy_columns=0):
    """One projected Newton step on the face of the free variables F; (v_F, w) or None.

    The objective, with the variables outside F fixed, is the augmented Lagrangian

        L(v) = ½‖w‖² + Σ_F (linₜvₜ + ½Dₜvₜ²) + λe + ρ/2 e²,  w = w₀ + Σ_F cₜvₜ x_{rows[t]},
        e = Σ cₜvₜ − Δ (e given at the current v).

    Its Newton direction s solves (Q_FF + D_F + ρccᵀ) s = −∇L by conjugate gradients
    (at most ``max_cg`` products, each O(nnz(X_F)), to a relative residual
    ``cg_tol``; a direction of zero curvature stops them).  The step is then
    v(θ) = clip(v + θs, lo, hi) for θ = 1, ½, ¼, … (``halvings``): the first whose
    exact change of L (computed from the changes, no cancellation) is negative is
    taken.  With ``heavy_columns`` = k > 0 (sparse X) the conjugate gradients are
    preconditioned by :func:`heavy_columns_preconditioner` (the k most frequent
    columns of X_F exactly, the others by their diagonal); where no θ lowers L along
    that direction, the plain one is tried.

    Parameters
    ----------
    face : Face
        The free variables, their data and box.
    w : ndarray of shape (d,)
    eq : Equality
        λ, ρ and the equality's residual (ρ = 0: no intercept).
    max_cg : int, default=50
        Conjugate-gradient products per step, at most.
    cg_tol : float, default=0.05
        Relative residual ‖r‖/‖g‖ at which the conjugate gradients stop.
    halvings : int, default=8
        Step lengths θ = 1, ½, ¼, … tried before the step is refused.
    heavy_columns : int, default=0
        k of :func:`heavy_columns_preconditioner` (0: no preconditioner).

    Returns
    -------
    (v_new, w_new) or None when no step lowers L.
    """
    X, c, v, lo, hi, lin, diag = face.X, face.c, face.v, face.lo, face.hi, face.lin, face.diag
    lam, rho, e = eq.lam, eq.rho, eq.e
    XF = X[np.asarray(face.rows, dtype=np.int64)]   # a copy: the products read X_F in order
    xF = cd.linear_x(XF)
    local = np.arange(XF.shape[0], dtype=np.int64)

    def hess(u):
        wu = xF.weights(local, c * u)
        out = c * xF.decision(None, wu) + diag * u
        if rho:
            out += rho * c * float(c @ u)
        return out

    b = lam + rho * e
    g = c * xF.decision(None, w) + lin + diag * v + c * b
    precondition = heavy_columns_preconditioner(XF, c, diag, rho, heavy_columns) \
        if heavy_columns > 0 else None
    for apply in ([precondition, None] if precondition is not None else [None]):
        s = _conjugate_gradients(hess, -g, max_cg, cg_tol, apply)
        theta = 1.0
        for _ in range(halvings):
            dv = np.clip(v + theta * s, lo, hi) - v
            dw = xF.weights(local, c * dv)
            de = float(c @ dv)
            change = (float(w @ dw) + 0.5 * float(dw @ dw) + float(lin @ dv)
                      + float(diag @ (v * dv + 0.5 * dv * dv)) + lam * de
                      + rho * (e * de + 0.5 * de * de))
            if change < 0.0:
                return v + dv, w + dw
            theta *= 0.5
    return None     # (a preconditioned direction that failed was tried again without)


def _conjugate_gradients(hess, rhs, max_cg, cg_tol, precondition=None):
    """(Preconditioned) conjugate gradients for hess(s) = rhs from s = 0: at most
    ``max_cg`` products, to ‖r‖ ≤ ``cg_tol``·‖rhs‖; at zero curvature the iterate (or,
    at the first product, that direction) is returned."""
    s = np.zeros_like(rhs)
    r = rhs.copy()
    z = r if precondition is None else precondition(r)
    q = z.copy()
    rz = float(r @ z)
    stop = cg_tol * cg_tol * float(r @ r)
    for _ in range(max_cg):
        Hq = hess(q)
        qHq = float(q @ Hq)
        if not qHq > 1e-12 * float(q @ q):      # zero curvature: the objective is linear
            return s if s.any() else q
        a = rz / qHq
        s += a * q
        r -= a * Hq
        if float(r @ r) <= stop:
            break
        z = r if precondition is None else precondition(r)
        rz_new = float(r @ z)
        q = z + (rz_new / rz) * q
        rz = rz_new
    return s


def heavy_columns_preconditioner(X, c, diag, rho, k, *, floor=1e-3):
    """P⁻¹ for the face's Hessian A = C X Xᵀ C + D + ρccᵀ (C = diag(c)) of sparse X
    whose column frequencies follow a power law; a function r ↦ P⁻¹r, or None.

    X = [H T] is split into its k most frequent columns H and the rest T.  Rare
    columns seldom share a row, so T Tᵀ is close to its diagonal, and

        P = E + U Uᵀ,   E = diag(‖tᵢ‖²) + D,   U = [C H, √ρ c]   (|F| × (k + 1))

    keeps the heavy columns' coupling (and the intercept's rank one) exactly.  P⁻¹ is
    applied by the Sherman–Morrison–Woodbury formula with one (k + 1)² Cholesky
    factor of I + Uᵀ E⁻¹ U: O(nnz(H) + k²) per application.  Where a row lies in H
    alone, its ‖tᵢ‖² is raised to ``floor``·‖xᵢ‖² (E stays positive definite).  None
    where X has more rows than non-empty columns (+ 1 with ρ): A is then singular and
    the preconditioned iterates grow along its null space (the text-like ε-SVR's
    first face: no step lowered L), where plain CG's first products still descend.

    Parameters
    ----------
    X : scipy CSR matrix or ndarray of shape (m, d)
        The face's rows (dense X: no preconditioner).
    c : ndarray of shape (m,)
        The signs.
    diag : ndarray of shape (m,)
        D (≥ 0).
    rho : float
        ρ ≥ 0.
    k : int
        Heavy columns kept (at most the non-empty ones).
    floor : float, default=1e-3
        Smallest share of ‖xᵢ‖² kept in E's diagonal for a row whose mass lies in H.

    Returns
    -------
    callable or None
        ``apply(r)`` with r of shape (m,); None for dense X, k ≤ 0, no rows, or more
        rows than non-empty columns.

    References
    ----------
    W. W. Hager, "Updating the inverse of a matrix", SIAM Review 31(2), 1989
    (the Woodbury formula); Y. Saad, *Iterative Methods for Sparse Linear Systems*,
    2nd ed., 2003, ch. 9 (preconditioned conjugate gradients).
    """
    if not sp.issparse(X) or k <= 0 or X.shape[0] <= 0:
        return None
    X = sp.csr_matrix(X)
    (m, d), data, indices, indptr = X.shape, X.data, X.indices, X.indptr
    counts = np.bincount(indices, minlength=d)
    used = int(np.count_nonzero(counts))
    if m > used + (1 if rho else 0):
        return None     # A is singular: preconditioned CG would run along its null space
    k = min(int(k), used)
    if k == 0 and not rho:
        return None
    top = np.argpartition(-counts, k - 1)[:k] if 0 < k < d else np.arange(k)
    H = sp.csr_matrix(sp.diags(c) @ X[:, top])
    norm2 = np.bincount(np.repeat(np.arange(m), np.diff(indptr)), weights=data * data,
                        minlength=m)
    heavy2 = np.asarray(H.multiply(H).sum(axis=1)).ravel()
    E = np.maximum(norm2 - heavy2, floor * norm2) + diag
    E = np.where(E > 0, E, 1.0)     # empty rows without D: any positive value
    U = sp.hstack([H, np.sqrt(rho) * c[:, None]], format="csr") if rho else H
    Ut = U.T.tocsr()
    S = (Ut @ sp.diags(1.0 / E) @ U).toarray()
    S[np.diag_indices_from(S)] += 1.0
    factor = sl.cho_factor(S)

    def apply(r):
        x = r / E
        return x - (U @ sl.cho_solve(factor, Ut @ x)) / E

    return apply


def box_qp(G, q, y, r, upper, alpha, *, equality=True, mu=None, tol=None, max_iter=1000):
    """An active-set method for ``min ½αᵀGα + qᵀα, 0 ≤ α ≤ u, yᵀα = r`` (dense, G PSD
    and possibly singular), from a feasible α (in place); (α, b, iterations, ok).

    Each iteration solves the KKT system of the free set F (G_FF + μI, with the row
    yᵀ when ``equality``): μ = 1e-12·max Gᵢᵢ (default) makes it solvable where G_FF is
    singular (F beyond the rank of its rows, duplicate rows); along such a null space
    the step runs to a bound.  A blocked step (the first bound met) takes that variable
    out of F; at the face's minimizer the bounded variable whose multiplier has the
    wrong sign by most (beyond ``tol``) joins F, until none does.  b is the multiplier
    of the equality (with α's reduced gradient ∇ + b·y).

    Parameters
    ----------
    G : ndarray of shape (k, k)
        Symmetric positive semidefinite.
    q : ndarray of shape (k,)
    y : ndarray of shape (k,)
        The equality's coefficients (±1).
    r : float
        The equality's right-hand side.
    upper : ndarray of shape (k,)
        The box's upper bounds u (the lower ones are 0).
    alpha : ndarray of shape (k,)
        A feasible start; overwritten with the answer.
    equality : bool, default=True
    mu : float, optional
        The regularization of G_FF (default 1e-12·max Gᵢᵢ).
    tol : float, optional
        How wrong a bounded variable's multiplier may be before it joins F.
    max_iter : int, default=1000

    Returns
    -------
    alpha : ndarray of shape (k,)
        The same array as given, at the minimizer.
    b : float
        The equality's multiplier (0 without it).
    n_iter : int
    ok : bool
        False where ``max_iter`` ran out or a KKT system could not be solved.

    References
    ----------
    J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., 2006, §16.5.
    """
    m = alpha.size
    if m == 0:
        return alpha, 0.0, 0, True
    dmax = max(1.0, float(np.max(np.diag(G))))
    mu = 1e-12 * dmax if mu is None else mu
    F = np.flatnonzero((alpha > 0) & (alpha < upper))
    b = 0.0
    grad = G @ alpha + q
    tol = 1e-9 * max(1.0, float(np.max(np.abs(grad)))) if tol is None else tol
    for it in range(max_iter):
        if F.size:
            k = F.size
            if equality:
                K = np.empty((k + 1, k + 1))
                K[:k, :k] = G[np.ix_(F, F)]
                K[:k, k] = y[F]
                K[k, :k] = y[F]
                K[k, k] = 0.0
                rhs = np.append(-grad[F], 0.0)
            else:
                K = G[np.ix_(F, F)]
                rhs = -grad[F]
            K[np.arange(k), np.arange(k)] += mu
            try:
                sol = np.linalg.solve(K, rhs)
            except np.linalg.LinAlgError:
                return alpha, b, it, False
            if not np.all(np.isfinite(sol)):
                return alpha, b, it, False
            s = sol[:k]
            if equality:
                b = float(sol[k])
            old, uF = alpha[F], upper[F]
            with np.errstate(divide="ignore", invalid="ignore"):
                lim = np.where(s > 0, (uF - old) / s, np.where(s < 0, -old / s, np.inf))
            theta = min(1.0, float(lim.min(initial=np.inf)))
            new = old + theta * s
            if theta < 1.0:
                hit = lim <= theta
                new[hit] = np.where(s[hit] > 0, uF[hit], 0.0)
            new = np.clip(new, 0.0, uF)
            alpha[F] = new
            grad += G[:, F] @ (new - old)
            if theta < 1.0:
                F = F[(new > 0) & (new < uF)]
                continue
        elif equality:
            b = _middle_intercept(y, alpha, grad, upper)
        red = grad + b * y if equality else grad
        viol = np.where(alpha <= 0, -red, np.where(alpha >= upper, red, 0.0))
        viol[F] = 0.0
        j = int(np.argmax(viol))
        if viol[j] <= tol:
            return alpha, b, it, True
        F = np.append(F, j)
    return alpha, b, max_iter, False


def _middle_intercept(y, alpha, grad, upper):
    """The middle of LIBSVM's interval [M(α), m(α)] for b where no variable is free."""
    v = -y * grad
    up = ((alpha < upper) & (y > 0)) | ((alpha > 0) & (y < 0))
    low = ((alpha < upper) & (y < 0)) | ((alpha > 0) & (y > 0))
    hi = float(v[up].max(initial=-np.inf))
    lo = float(v[low].min(initial=np.inf))
    if np.isfinite(hi) and np.isfinite(lo):
        return -0.5 * (hi + lo)
    return -hi if np.isfinite(hi) else (-lo if np.isfinite(lo) else 0.0)


def _equal_rows(A):
    """(index of each group's first row, group of each row) of the equal rows of A: by
    a key per row (a fixed combination of its entries, equal for equal rows), checked
    entry by entry — where two different rows share a key, by np.unique(axis=0)."""
    key = A @ np.cos(np.arange(1, A.shape[1] + 1))
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    group = group.ravel()
    if not np.array_equal(A, A[first][group]):
        _, first, group = np.unique(A, axis=0, return_index=True, return_inverse=True)
        group = group.ravel()
    return first, group


def _violating_pair(y, alpha, grad, upper):
    """LIBSVM's maximal violating pair (i ∈ I_up with the largest −yᵢ∇ᵢ, j ∈ I_low with
    the smallest)."""
    v = -y * grad
    up = ((alpha < upper) & (y > 0)) | ((alpha > 0) & (y < 0))
    low = ((alpha < upper) & (y < 0)) | ((alpha > 0) & (y > 0))
    i = int(np.argmax(np.where(up, v, -np.inf)))
    j = int(np.argmin(np.where(low, v, np.inf)))
    return sorted({i, j})


def _split(total, group, upper):
    """Values in [0, upperᵢ] per member whose sums by group are ``total``: each group's
    members filled to their bounds in turn (at most one strictly between; within
    1e-12 of the group's bound a member is put at its bound, so that rounding in the
    sums leaves none just inside)."""
    if group.size == 0:
        return np.zeros(0)
    order = np.argsort(group, kind="stable")
    g, u = group[order], upper[order]
    before = np.cumsum(u) - u
    firsts = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
    start = np.zeros(total.size)
    start[g[firsts]] = before[firsts]
    room = total[g] - (before - start[g])        # what is left for this member on
    slack = 1e-12 * np.bincount(g, weights=u, minlength=total.size)[g]
    out = np.empty(group.size)
    out[order] = np.where(room >= u - slack, u, np.where(room <= slack, 0.0, room))
    return out


def solve_working_set(X, y, p, upper, delta, alpha, W, *, equality=True, tol=1e-9,
                      rounds=20, max_add=500, max_size=2000):
    """The dual solved exactly on a working set W with the others fixed, grown by the
    violators until LIBSVM's m(α) − M(α) ≤ ``tol`` on all points; (α, w) or None.

    ``X`` is the data (CSR or dense, one row per variable), ``alpha`` a point of the
    box (not modified).  Each round: α_W is made to satisfy yᵀα = Δ within W's box,
    the QP on W (G = Z_W Z_Wᵀ, Z_W = diag(y_W) X_W, dense) is solved by
    :func:`box_qp` with the variables of equal rows, signs and linear terms merged
    into one (their gradients are equal; duplicate rows made the face singular),
    w = Σ yₜαₜxₜ and the gradient of all points are read in O(nnz),
    and the variables outside W that violate their condition at the QP's b (by more
    than ``tol``, at most ``max_add`` of them, the worst first) join W.  Every round
    lowers the objective (the QP starts from the last α), so the rounds end; None
    where W has more than ``max_size`` distinct rows, the QP fails or ``rounds`` pass.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
    y : ndarray of shape (n,)
        The signs (±1).
    p : ndarray of shape (n,)
        The dual's linear term.
    upper : ndarray of shape (n,)
        The box's upper bounds.
    delta : float
        The equality's right-hand side Δ (yᵀα = Δ).
    alpha : ndarray of shape (n,)
        The start, a point of the box.
    W : array-like of int
        The first working set (may be empty: the free variables, or the worst
        violators, start it).
    equality : bool, default=True
    tol : float, default=1e-9
        The m(α) − M(α) (or the largest projected gradient) to reach on all points.
    rounds, max_add, max_size : int
        The most rounds, violators added a round, and distinct rows in W.

    Returns
    -------
    (alpha, w) : tuple of ndarray of shapes (n,) and (d,), or None

    References
    ----------
    T. Joachims, "Making large-scale SVM learning practical", 1999 (working sets);
    J. Nocedal and S. J. Wright, 2006, §16.5.
    """
    alpha = np.array(alpha, dtype=float)
    W = np.unique(np.asarray(W, dtype=np.int64))
    sparse = sp.issparse(X)
    for _ in range(rounds):
        if W.size == 0:               # first the free variables (before W must balance)
            W = np.flatnonzero((alpha > 0) & (alpha < upper))
            if W.size == 0:           # all at bounds: the worst violators join
                grad = y * np.asarray(X @ np.asarray(X.T @ (y * alpha)).ravel()).ravel() + p
                if equality:
                    W = np.array(_violating_pair(y, alpha, grad, upper), dtype=np.int64)
                else:
                    pg = np.where(alpha <= 0, np.minimum(grad, 0.0), np.maximum(grad, 0.0))
                    W = np.array([int(np.argmax(np.abs(pg)))], dtype=np.int64)
        out_coef = y * alpha
        out_coef[W] = 0.0
        w_fix = np.asarray(X.T @ out_coef).ravel()
        aW, yW, uW = alpha[W].copy(), y[W], upper[W]
        r = float(delta - (y @ alpha - yW @ aW)) if equality else 0.0
        if equality:
            kkt.restore_equality(aW, yW, uW, r, prefer=np.flatnonzero((aW > 0) & (aW < uW)))
            if abs(float(yW @ aW) - r) > 1e-9 * max(1.0, float(np.abs(uW).sum())):
                return None             # W cannot balance the fixed ones
        XW = X[W].toarray() if sparse else np.asarray(X[W], dtype=float)
        # variables of equal rows, signs and linear terms have equal gradients: one
        # variable per group (its bound the sum), split back by filling them in turn
        first, group = _equal_rows(np.column_stack([XW, yW, p[W]]))
        if first.size > max_size:
            return None
        k = first.size
        Z = yW[first, None] * XW[first]
        G = Z @ Z.T
        q = Z @ w_fix + p[W][first]
        ug = np.bincount(group, weights=uW, minlength=k)
        ag = np.minimum(np.bincount(group, weights=aW, minlength=k), ug)
        ag, b, _, ok = box_qp(G, q, yW[first], r, ug, ag, equality=equality)
        if not ok:
            return None
        alpha[W] = _split(ag, group, uW)
        w = w_fix + Z.T @ ag
        grad = y * np.asarray(X @ w).ravel() + p
        if equality:
            gap = kkt.violating_pair_gap(y, alpha, grad, upper)
        else:
            gap = kkt.projected_gradient(alpha, grad, upper)
        if gap <= tol:
            return alpha, w
        red = grad + b * y if equality else grad
        viol = np.where(alpha <= 0, -red, np.where(alpha >= upper, red, np.abs(red)))
        viol[W] = 0.0
        add = np.flatnonzero(viol > 0.5 * tol)
        if add.size == 0:
            return None
        if add.size > max_add:
            add = add[np.argpartition(-viol[add], max_add)[:max_add]]
        W = np.union1d(W, add)
    return None
