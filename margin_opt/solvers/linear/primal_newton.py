"""The hinge's face found along the Huber-smoothed primal: Newton's method in (w, b).

With few features (d ≪ n: a9a has d = 123, n = 16 281) the C-SVC is small in the
primal: d + 1 unknowns.  The hinge is not smooth, but its Huber smoothing

    P_h(w, b) = ½‖w‖² + Σᵢ cᵢ ℓ_h(tᵢ),   tᵢ = eᵢ − yᵢ(xᵢ·w + b) (+ bΔ),
    ℓ_h(t) = 0 (t ≤ 0),  t²/(2h) (0 < t < h),  t − h/2 (t ≥ h)

is piecewise quadratic, so Newton's method with an exact line search ends in a few
steps once the pieces settle (the finite Newton method).  Its dual is the C-SVC's dual
plus (h/2)Σαᵢ²/cᵢ, with αᵢ = cᵢ ℓ_h'(tᵢ) ∈ [0, cᵢ] and yᵀα = Δ at the optimum: as h
falls the smoothed optimum tends to the hinge's, and the points with 0 < tᵢ < h are
the face of the free multipliers.  :func:`huber_path` follows h down by a factor per
level (each level starts by the step that keeps the last level's pieces, the
predictor), first on all points, then on a working set W — the points within a band
of the margin; the others are fixed (α = c or 0), each level checked on all points in
O(nnz), any that crossed joining W.  The exact answer is then solved for on the face
(:func:`margin_opt.solvers.linear.face.solve_working_set`), whose certificate the
caller checks.

Each Newton step costs O(nnz(X_W)) for the margins and the gradient, O(|S| nnz(xᵢ)²)
for the Hessian I + (1/h)Σ_S cᵢ[xᵢ; 1][xᵢ; 1]ᵀ of the points S on the quadratic piece,
and one (d + 1) × (d + 1) solve.

References
----------
O. Chapelle, "Training a support vector machine in the primal", Neural Computation
19(5), 2007 (Newton's method on the Huber-smoothed hinge in the primal).
O. L. Mangasarian, "A finite Newton method for classification", Optimization Methods
and Software 17(5), 2002.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = ["PrimalPathOptions", "huber_path", "applies"]
_DEBUG = False
_PRED = True


@dataclass(frozen=True)
class PrimalPathOptions:
    """Tuning knobs of :func:`huber_path`.

    Parameters
    ----------
    max_features : int, default=300
        The path is taken only where d ≤ this (a (d + 1)² Hessian per Newton step).
    h_start : float, default=2.0
        The first h, relative to the largest margin target eᵢ (at w = 0, b = 0 every
        point then lies on the quadratic piece: a least-squares problem).
    shrink : float, default=0.3
        h ← shrink · h from one level to the next.
    h_last : float, default=1e-3
        The last level's h, relative to the largest eᵢ.
    band : float, default=1.0
        The working set W is the points with −band·h ≤ tᵢ ≤ (1 + band)·h.
    restrict : float, default=0.25
        Work on W (not all points) once it holds at most this fraction of them.
    level_steps : int, default=30
        Most Newton steps per level.
    checks : int, default=5
        Most times a level is solved again after points outside W crossed.
    """

    max_features: int = 300
    h_start: float = 2.0
    shrink: float = 0.3
    h_last: float = 1e-3
    band: float = 1.0
    restrict: float = 0.25
    level_steps: int = 30
    checks: int = 5

    def __post_init__(self):
        if not (self.max_features >= 1 and self.h_start > 0 and 0 < self.shrink < 1
                and 0 < self.h_last <= self.h_start and self.band >= 0
                and 0 < self.restrict <= 1 and self.level_steps >= 1 and self.checks >= 0):
            raise ValueError(f"PrimalPathOptions out of range: {self}.")


def applies(n_features, diag, upper, options) -> bool:
    """Whether the path serves a problem: the hinge (no diagonal D, finite bounds) with
    at most ``options.max_features`` features."""
    return (n_features <= options.max_features and not np.any(diag)
            and bool(np.all(np.isfinite(upper))))


@njit(cache=True, nogil=True)
def _hessian_csr(data, indices, indptr, rows, coef, d, H):
    """H += Σₖ coefₖ [x; 1][x; 1]ᵀ over x = X[rows[k]] (H of shape (d + 1, d + 1), only
    its upper triangle and the b column written)."""
    for k in range(rows.shape[0]):
        r = rows[k]
        a = coef[k]
        lo = indptr[r]
        hi = indptr[r + 1]
        for p in range(lo, hi):
            i = indices[p]
            v = a * data[p]
            H[i, d] += v
            for q in range(lo, hi):
                j = indices[q]
                if j >= i:
                    H[i, j] += v * data[q]
        H[d, d] += a


class _Rows:
    """The rows of X (CSR or dense) with signs, targets and bounds, restricted to W."""

    def __init__(self, X, y, e, c, idx):
        self.idx = idx
        self.X = X if idx is None else X[idx]
        self.y = y if idx is None else y[idx]
        self.e = e if idx is None else e[idx]
        self.c = c if idx is None else c[idx]
        self.sparse = sp.issparse(self.X)
        self.M = None
        self.on = None

    def margins(self, u, d, equality):
        f = self.X @ u[:d]
        if equality:
            f = f + u[d]
        return self.e - self.y * np.asarray(f).ravel()

    def direction(self, s, d, equality):
        f = self.X @ s[:d]
        if equality:
            f = f + s[d]
        return self.y * np.asarray(f).ravel()

    def xt(self, v):
        return np.asarray(self.X.T @ v).ravel()

    def gram(self, S, d):
        """Σ_{k∈S} cₖ [xₖ; 1][xₖ; 1]ᵀ, ndarray of shape (d + 1, d + 1) (upper triangle)."""
        H = np.zeros((d + 1, d + 1))
        if S.size == 0:
            return H
        coef = self.c[S]
        if self.sparse:
            _hessian_csr(self.X.data, self.X.indices, self.X.indptr, S, coef, d, H)
        else:
            XS = self.X[S]
            H[:d, :d] = XS.T @ (coef[:, None] * XS)
            H[:d, d] = XS.T @ coef
            H[d, d] = coef.sum()
        return H

    def hessian(self, on, d):
        """Σ over the points ``on`` (a mask) of cₖ [xₖ; 1][xₖ; 1]ᵀ, symmetric; kept from
        the last call and updated by the points that joined or left (rows of X are
        touched only for those)."""
        if self.on is None or self.on.size != on.size:
            self.M, self.on = self.gram(np.flatnonzero(on), d), on.copy()
        else:
            join = np.flatnonzero(on & ~self.on)
            leave = np.flatnonzero(self.on & ~on)
            if join.size + leave.size >= np.count_nonzero(on):
                self.M = self.gram(np.flatnonzero(on), d)
            elif join.size + leave.size:
                self.M = self.M + self.gram(join, d) - self.gram(leave, d)
            self.on = on.copy()
        return np.triu(self.M) + np.triu(self.M, 1).T


def _step(R, u, t, h, d, equality, gfix, delta, lp=None, on=None):
    """The Newton direction at u (lp: ℓ' of the points, on: a mask of those on the
    quadratic piece; by default read from t) and the gradient."""
    if lp is None:
        lp = np.clip(t / h, 0.0, 1.0)
        on = (t > 0.0) & (t < h)
    ya = R.y * (R.c * lp)
    g = np.empty(d + 1)
    g[:d] = u[:d] - R.xt(ya) - gfix[:d]
    g[d] = (delta - ya.sum() - gfix[d]) if equality else 0.0
    H = R.hessian(on, d) / h
    H[np.arange(d), np.arange(d)] += 1.0
    if equality:
        H[d, d] += 1e-12 * (1.0 + float(R.c.sum()) / h)
    else:
        H[d, :] = 0.0
        H[:, d] = 0.0
        H[d, d] = 1.0
    return -np.linalg.solve(H, g), g


def _line_search(R, u, s, t, dm, h, d, equality, gfix, delta):
    """The exact minimizer θ ≥ 0 of the (convex, piecewise quadratic) objective along s:
    a root of its derivative by safeguarded Newton steps; (θ, whether θ = 1 is exact)."""
    ws, ss = float(u[:d] @ s[:d]), float(s[:d] @ s[:d])
    lin = ws - float(gfix[:d] @ s[:d]) + ((delta - gfix[d]) * s[d] if equality else 0.0)
    cdm = R.c * dm
    scale = 1.0 + abs(lin) + float(np.abs(cdm).sum())

    def deriv(th):
        tt = t - th * dm
        on = (tt > 0.0) & (tt < h)
        d1 = lin + th * ss - float(np.clip(tt / h, 0.0, 1.0) @ cdm)
        d2 = ss + float(cdm[on] @ dm[on]) / h
        return d1, d2

    lo, hi, th = 0.0, np.inf, 1.0
    for _ in range(60):
        d1, d2 = deriv(th)
        if abs(d1) <= 1e-13 * scale:
            return th, th == 1.0
        if d1 < 0:
            lo = th
        else:
            hi = th
        nt = th - d1 / d2 if d2 > 0 else np.inf
        if not lo < nt < hi:
            nt = 0.5 * (lo + hi) if np.isfinite(hi) else 2.0 * max(th, 1.0)
        if nt == th:
            break
        th = nt
    return th, False


def huber_path(X, y, e, c, *, equality=True, delta=0.0, max_steps=10000, options=None):
    """Follow the Huber-smoothed primal's optimum down to ``h_last``.

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (n, d)
    y : ndarray of shape (n,)
        Signs ±1.
    e : ndarray of shape (n,)
        Margin targets (−p of the standard dual; 1 for the C-SVC).
    c : ndarray of shape (n,)
        Upper bounds of the multipliers (Cᵢ), finite and ≥ 0.
    equality : bool, default=True
        Whether the intercept b is free (the dual's yᵀα = Δ).
    delta : float, default=0.0
    max_steps : int, default=10000
        Most Newton steps in all (None is returned past them).
    options : PrimalPathOptions, optional

    Returns
    -------
    (alpha, W, h, steps) : the last level's multipliers αᵢ = cᵢ ℓ_h'(tᵢ) (in [0, cᵢ],
        yᵀα = Δ to the Newton step's precision), the working set W (indices of the
        points within the band), the last h and the number of Newton steps taken;
        None where ``max_steps`` did not suffice.
    """
    opts = PrimalPathOptions() if options is None else options
    n, d = X.shape
    emax = float(np.max(np.abs(e), initial=0.0)) or 1.0
    u = np.zeros(d + 1)
    R = _Rows(X, y, e, c, None)
    gfix = np.zeros(d + 1)
    h = opts.h_start * emax
    h_last = opts.h_last * emax
    steps = 0
    codes = None
    while True:
        for _check in range(opts.checks + 1):
            t = R.margins(u, d, equality)
            if codes is not None and codes.size == t.size:
                # the predictor: the step that keeps the last level's pieces
                on = codes == 1
                lp = np.where(on, t / h, np.where(codes == 2, 1.0, 0.0))
                s, _ = _step(R, u, t, h, d, equality, gfix, delta, lp, on)
                u = u + s
                t = R.margins(u, d, equality)
                steps += 1
            codes = None
            for _ in range(opts.level_steps):
                new = np.where(t <= 0.0, 0, np.where(t < h, 1, 2)).astype(np.int8)
                s, _ = _step(R, u, t, h, d, equality, gfix, delta)
                dm = R.direction(s, d, equality)
                th, full = _line_search(R, u, s, t, dm, h, d, equality, gfix, delta)
                u = u + th * s
                t = t - th * dm
                steps += 1
                if steps > max_steps:
                    return None
                settled = codes is not None and np.array_equal(new, codes)
                codes = new
                if full and settled:
                    break
            codes = np.where(t <= 0.0, 0, np.where(t < h, 1, 2)).astype(np.int8)
            if _DEBUG:
                print("level", h, "W", None if R.idx is None else R.idx.size, "steps", steps,
                      "S", int((codes == 1).sum()), "b", u[d])
            if R.idx is None:
                break
            # the points outside W must still lie on the piece they are fixed on
            t_all = _full_margins(X, y, e, u, d, equality)
            out = np.ones(n, dtype=bool)
            out[R.idx] = False
            cross = out & (((t_all < h) & fixed_u) | ((t_all > 0.0) & ~fixed_u))
            if not cross.any():
                break
            R, gfix, fixed_u, codes = _restrict(X, y, e, c, t_all, h, opts.band, d, equality,
                                                 keep=np.flatnonzero(cross))
        if h <= h_last:
            break
        # the next level: W shrinks to the band at the new h
        t_all = R.margins(u, d, equality) if R.idx is None else _full_margins(
            X, y, e, u, d, equality)
        h_old, h = h, max(h * opts.shrink, h_last)
        band = (t_all >= -opts.band * h_old) & (t_all <= (1.0 + opts.band) * h_old)
        if R.idx is not None or band.sum() <= opts.restrict * n:
            old_codes = np.where(t_all <= 0.0, 0, np.where(t_all < h_old, 1, 2))
            R, gfix, fixed_u, _ = _restrict(X, y, e, c, t_all, h_old, opts.band, d, equality)
            codes = old_codes[R.idx].astype(np.int8) if _PRED else None
        elif not _PRED:
            codes = None
        # (on all points the codes carry over as they are)
    t_all = _full_margins(X, y, e, u, d, equality)
    alpha = c * np.clip(t_all / h, 0.0, 1.0)
    W = np.flatnonzero((t_all >= -opts.band * h) & (t_all <= (1.0 + opts.band) * h))
    return alpha, W, h, steps


def _full_margins(X, y, e, u, d, equality):
    """tᵢ = eᵢ − yᵢ(xᵢ·w + b) of every point."""
    f = np.asarray(X @ u[:d]).ravel()
    if equality:
        f = f + u[d]
    return e - y * f


def _restrict(X, y, e, c, t_all, h, band, d, equality, keep=None):
    """The working set at h (the band, plus ``keep``) and the gradient of the fixed
    points (those with t > (1 + band)h carry α = c)."""
    inside = (t_all >= -band * h) & (t_all <= (1.0 + band) * h)
    if keep is not None:
        inside[keep] = True
    idx = np.flatnonzero(inside)
    fixed_u = t_all > (1.0 + band) * h
    fixed_u[idx] = False
    U = np.flatnonzero(fixed_u)
    gfix = np.zeros(d + 1)
    if U.size:
        v = np.zeros(t_all.size)
        v[U] = c[U] * y[U]
        gfix[:d] = np.asarray(X.T @ v).ravel()
        gfix[d] = v.sum() if equality else 0.0
    R = _Rows(X, y, e, c, idx)
    return R, gfix, fixed_u, None
