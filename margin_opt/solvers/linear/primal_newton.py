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
from scipy.linalg import lapack

from ... import _core
from .coordinate import linear_x

__all__ = ["PrimalPathOptions", "huber_path", "applies"]



#: work on the working set W (not all points) once it holds at most this fraction of them
_RESTRICT = 0.25
#: most Newton steps per level
_LEVEL_STEPS = 30
#: most times a level is solved again after points outside W crossed
_CHECKS = 5
#: levels before the last end at a Newton step that moved at most this fraction of the points
#: on the quadratic piece to another piece (the last level ends at a full step that moved
#: none: its exact minimizer): on the working set, where an early end makes points outside it
#: cross (_LOOSE), and on all points, the first levels, whose answer the next one corrects
_LOOSE = 0.01
_LOOSE_ALL = 0.1


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
    """

    max_features: int = 300
    h_start: float = 2.0
    shrink: float = 0.3
    h_last: float = 1e-3
    band: float = 1.0

    def __post_init__(self):
        if not (self.max_features >= 1 and self.h_start > 0 and 0 < self.shrink < 1
                and 0 < self.h_last <= self.h_start and self.band >= 0):
            raise ValueError(f"PrimalPathOptions out of range: {self}.")


def applies(n_features, diag, upper, options) -> bool:
    """Whether the path serves a problem: the hinge (no diagonal D, finite bounds) with
    at most ``options.max_features`` features.

    Parameters
    ----------
    n_features : int
    diag : ndarray of shape (n,)
        The standard dual's diagonal D (zeros for the hinge).
    upper : ndarray of shape (n,)
        The box's upper bounds Cᵢ.
    options : PrimalPathOptions

    Returns
    -------
    bool
    """
    return (n_features <= options.max_features and not np.any(diag)
            and bool(np.all(np.isfinite(upper))))


class _Rows:
    """The rows of X (CSR or dense) with signs, targets and bounds, restricted to W."""

    def __init__(self, X, y, e, c, idx):
        self.idx = idx
        self.X = X if idx is None else X[idx]
        self.y = y if idx is None else y[idx]
        self.e = e if idx is None else e[idx]
        self.c = c if idx is None else c[idx]
        self.sparse = sp.issparse(self.X)
        # the compiled products' view of sparse rows
        self.lx = linear_x(self.X) if self.sparse else None
        self.M = None
        self.on = None

    def direction(self, s, d, equality):
        """yᵢ(xᵢ·s_w + s_b) of the rows."""
        f = self.X @ s[:d]
        return self.y * (f + s[d] if equality else f)

    def margins(self, u, d, equality):
        """tᵢ = eᵢ − yᵢ(xᵢ·w + b) of the rows."""
        return self.e - self.direction(u, d, equality)

    def xt(self, v):
        """Xᵀv over the rows."""
        if self.sparse:
            return self.lx.weights(np.arange(self.X.shape[0], dtype=np.int64), v)
        return self.X.T @ v

    def gram(self, S, d):
        """Σ_{k∈S} cₖ [xₖ; 1][xₖ; 1]ᵀ, ndarray of shape (d + 1, d + 1) (upper triangle)."""
        H = np.zeros((d + 1, d + 1))
        if S.size == 0:
            return H
        coef = self.c[S]
        if self.sparse:
            self.lx.add_hessian(S.astype(np.int64), coef, H)
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
        return self.M


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
    H = R.hessian(on, d) / h          # its upper triangle, read by dposv
    H[np.arange(d), np.arange(d)] += 1.0
    if equality:
        H[d, d] += 1e-12 * (1.0 + float(R.c.sum()) / h)
    else:
        H[d, :] = 0.0
        H[:, d] = 0.0
        H[d, d] = 1.0
    _, s, info = lapack.dposv(H, g, lower=0)
    if info != 0:
        s = np.linalg.lstsq(H + np.triu(H, 1).T, g, rcond=None)[0]
    return -s, g


def _line_search(R, u, s, t, dm, h, d, equality, gfix, delta):
    """The exact minimizer θ ≥ 0 of the (convex, piecewise quadratic) objective along s
    (``_core.huber_line_step``: safeguarded Newton steps on the derivative, nondecreasing
    and piecewise linear); (θ, whether θ = 1 is exact)."""
    ss = float(s[:d] @ s[:d])
    lin = float(u[:d] @ s[:d]) - float(gfix[:d] @ s[:d]) + \
        ((delta - gfix[d]) * s[d] if equality else 0.0)
    scale = 1.0 + abs(lin) + float(R.c @ np.abs(dm))
    return _core.huber_line_step(t, dm, R.c, h, lin, ss, scale)


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
    fixed_u = None
    h = opts.h_start * emax
    h_last = opts.h_last * emax
    steps = 0
    codes = None
    while True:
        last = h <= h_last
        u0 = u
        for check in range(_CHECKS + 1):
            t = R.margins(u, d, equality)
            if codes is not None:
                # the predictor: the step that keeps the last level's pieces
                on = codes == 1
                lp = np.where(on, t / h, np.where(codes == 2, 1.0, 0.0))
                s, _ = _step(R, u, t, h, d, equality, gfix, delta, lp, on)
                u = u + s
                t = R.margins(u, d, equality)
                steps += 1
            u, t, steps = _level(R, u, t, h, d, equality, gfix, delta, steps,
                                 _LEVEL_STEPS, 0.0 if last else (
                                     _LOOSE if R.idx is not None else _LOOSE_ALL))
            if steps > max_steps:
                return None
            codes = None
            if R.idx is None:
                t_all = t
                break
            # the points outside W must still lie on the piece they are fixed on
            t_all = _full_margins(X, y, e, u, d, equality)
            out = np.ones(n, dtype=bool)
            out[R.idx] = False
            cross = out & (((t_all < h) & fixed_u) | ((t_all > 0.0) & ~fixed_u))
            if not cross.any():
                break
            # again from the level's start, the crossed points in W (all points at the end)
            u = u0
            keep = np.union1d(R.idx, np.flatnonzero(cross))
            if check == _CHECKS - 1 or keep.size > _RESTRICT * n:
                R, gfix, fixed_u = _Rows(X, y, e, c, None), np.zeros(d + 1), None
            else:
                R, gfix, fixed_u = _restrict(X, y, e, c, t_all, np.inf, 0.0, d, equality,
                                             keep=keep, fixed=fixed_u)
        if last:
            break
        h_old, h = h, max(h * opts.shrink, h_last)
        codes = _codes(t_all, h_old)
        band = (t_all >= -opts.band * h_old) & (t_all <= (1.0 + opts.band) * h_old)
        if R.idx is not None or np.count_nonzero(band) <= _RESTRICT * n:
            # W: the band of the last level; the others fixed on their pieces
            R, gfix, fixed_u = _restrict(X, y, e, c, t_all, h_old, opts.band, d, equality)
            codes = codes[R.idx]
    alpha = c * np.clip(t_all / h, 0.0, 1.0)
    W = np.flatnonzero((t_all >= -opts.band * h) & (t_all <= (1.0 + opts.band) * h))
    return alpha, W, h, steps


def _codes(t, h):
    """The piece of each point: 0 (t ≤ 0), 1 (0 < t < h), 2 (t ≥ h)."""
    return (t > 0.0).astype(np.int8) + (t >= h)


def _level(R, u, t, h, d, equality, gfix, delta, steps, max_steps, loose):
    """Newton steps with the exact line search at h until a full step leaves every point
    on the piece it was taken on (then u is the level's exact minimizer), or, with
    ``loose`` > 0, until a full step moves at most that fraction of the points on the
    quadratic piece; (u, t, steps)."""
    for _ in range(max_steps):
        codes = _codes(t, h)
        s, _ = _step(R, u, t, h, d, equality, gfix, delta)
        dm = R.direction(s, d, equality)
        th, full = _line_search(R, u, s, t, dm, h, d, equality, gfix, delta)
        u = u + th * s
        t = t - th * dm
        steps += 1
        moved = np.count_nonzero(_codes(t, h) != codes)
        if (full and moved == 0) or (loose and moved <= loose * np.count_nonzero(codes == 1)):
            break
    return u, t, steps


def _full_margins(X, y, e, u, d, equality):
    """tᵢ = eᵢ − yᵢ(xᵢ·w + b) of every point."""
    return _Rows(X, y, e, None, None).margins(u, d, equality)


def _restrict(X, y, e, c, t_all, h, band, d, equality, keep=None, fixed=None):
    """The working set at h — the band −band·h ≤ t ≤ (1 + band)·h, or ``keep`` — and the
    gradient of the points fixed on the linear piece (α = c): those with t > (1 + band)h,
    or where ``fixed`` (their mask) is given, those it names outside ``keep``;
    (rows of W, that gradient, the mask)."""
    if keep is None:
        inside = (t_all >= -band * h) & (t_all <= (1.0 + band) * h)
        idx = np.flatnonzero(inside)
    else:
        idx = np.asarray(keep, dtype=np.int64)
    fixed_u = (t_all > (1.0 + band) * h) if fixed is None else fixed.copy()
    fixed_u[idx] = False
    gfix = np.zeros(d + 1)
    if fixed_u.any():
        v = np.where(fixed_u, c * y, 0.0)
        gfix[:d] = _Rows(X, v, None, None, None).xt(v)
        gfix[d] = v.sum() if equality else 0.0
    return _Rows(X, y, e, c, idx), gfix, fixed_u
