"""The KKT toolkit of the standard dual QP, shared by every model that is an instance of it.

C-SVC, the hard margin and ε-SVR are all the LIBSVM form
(:class:`~margin_opt.standard_forms.DualQP`)

    min_α ½αᵀQα + pᵀα   s.t.  yᵀα = Δ,  0 ≤ αₜ ≤ uₜ,   Qₜₛ = yₜyₛK(x_{index[t]}, x_{index[s]}),

whose primal has one constraint per variable t, written with the decision values f:

    sₜ + ξₜ ≥ 0,  ξₜ ≥ 0,   sₜ = yₜ f(x_{index[t]}) + pₜ

(C-SVC: sᵢ = yᵢfᵢ − 1, the margin constraint; ε-SVR: ε − rᵢ for aᵢ and ε + rᵢ for âᵢ,
the two tube constraints, r = y − f).  The optimality conditions are then the same
for every model:

- primal feasibility  sₜ + ξₜ ≥ 0, ξₜ ≥ 0;
- dual feasibility    0 ≤ αₜ ≤ uₜ, yᵀα = Δ (with intercept);
- stationarity        w = Σₜ yₜαₜ φ(x_{index[t]});
- complementarity     αₜ(sₜ + ξₜ) = 0, (uₜ − αₜ)ξₜ = 0;

so αₜ = 0 ⇒ sₜ ≥ 0, 0 < αₜ < uₜ ⇒ sₜ = 0, αₜ = uₜ ⇒ sₜ ≤ 0 (the lecture notes'
support-vector table, and the tube table of the SVR).  This module measures them
(:func:`dual_qp_checks`), recovers the intercept (:func:`intercept_from_gradient`)
and multipliers from a primal point that keep the dual feasible
(:func:`multipliers_from_primal`); each model keeps only its table.

References
----------
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training SVM", JMLR 6, 2005 (m(α) − M(α), eq. (7)–(9)).
C.-C. Chang and C.-J. Lin, LIBSVM, ACM TIST 2(3), 2011, §4.1.3 (the intercept).
S. Boyd and L. Vandenberghe, *Convex Optimization*, CUP 2004, §5.5.3 (KKT).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import lsq_linear

from ._core import dual_qp_reading as _compiled_reading
from .certificate import Check

__all__ = ["category_threshold", "TAU_MAX", "box_categories", "violating_pair_gap",
           "projected_gradient",
           "intercept_from_gradient", "restore_equality", "coefficients", "intercept_cost",
           "multipliers_from_primal", "dual_qp_checks", "DualQPChecks", "BANDS", "check_list",
           "Measured", "PrimalReading", "dual_qp_reading", "READING"]

#: The denominator's floor of :func:`relative_gap` (the smallest normal double: a gap
#: is relative at every scale of C and the weights, C = 1e-300 included).
GAP_FLOOR = float(np.finfo(float).tiny)


def relative_gap(primal, dual) -> float:
    """|P − D| / max(|P|, |D|): the duality gap relative to the objective's own scale.

    Relative at every scale: with C or the sample weights far below 1 the objective is
    too (P ≈ ΣCᵢξᵢ), and a gap divided by max(1, |P|) was an absolute test that a
    primal 64 % above the optimum passed (objective 1.6e-6).  Used by every
    certificate and by every solver's stopping rule, so that a solver stops where the
    certificate will pass.

    Parameters
    ----------
    primal, dual : float

    Returns
    -------
    float
        0 where P = D (both 0 included); NaN where P or D is NaN.
    """
    primal, dual = float(primal), float(dual)
    return abs(primal - dual) / max(abs(primal), abs(dual), GAP_FLOOR)


#: The largest threshold of the categories of a certificate (:func:`category_threshold`).
TAU_MAX = 0.5


def category_threshold(tol) -> float:
    """The relative threshold τ = min(√tol, :data:`TAU_MAX`) at which a certificate at
    ``tol`` reads a multiplier as 0 (αₜ ≤ τuₜ) or at its bound (αₜ ≥ (1 − τ)uₜ).

    √tol: an interior-point answer's multipliers off the margin are of order √tol.
    Capped below 1 so that any tol > 0 can be honoured: at τ ≥ 1 every multiplier,
    those at their bound included, would read as 0 and the m(α) − M(α) gap of a
    right answer would fail.
    """
    return float(min(np.sqrt(tol), TAU_MAX))


#: Half-widths of the margin band tried by :func:`multipliers_from_primal`.
BANDS = (1e-6, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1)


def box_categories(v, upper, tau, zero_scale=1.0):
    """Masks (at_zero, free, at_upper) of variables in boxes [0, uₜ], threshold tau.

    vₜ counts as 0 when vₜ ≤ τuₜ (τ·zero_scale where uₜ is infinite) and as uₜ when
    vₜ ≥ (1 − τ)uₜ (answers of interior-point solvers meet their bounds only
    approximately).  Variables with uₜ = 0 are fixed and in none of the three.

    Parameters
    ----------
    v, upper : ndarray of shape (m,)
        Values and upper bounds (``inf`` allowed).
    tau : float
        Relative threshold.
    zero_scale : float, default=1.0
        Scale of the zero threshold of unbounded variables.

    Returns
    -------
    at_zero, free, at_upper : ndarray of bool, shape (m,)
    """
    finite = np.isfinite(upper)
    ref = np.where(finite, upper, zero_scale)
    fixed = upper == 0
    zero = (v <= tau * ref) & ~fixed
    at_u = finite & (v >= (1 - tau) * np.where(finite, upper, 0.0)) & ~zero & ~fixed
    return zero, ~zero & ~at_u & ~fixed, at_u


def violating_pair_gap(y, alpha, grad, upper, tau=0.0, zero_scale=None) -> float:
    """LIBSVM's optimality measure m(α) − M(α) of the standard dual.

    ``m(α) = max_{t ∈ I_up} −yₜ∇ₜ`` and ``M(α) = min_{t ∈ I_low} −yₜ∇ₜ`` with
    ``I_up = {αₜ < uₜ, yₜ = 1} ∪ {αₜ > 0, yₜ = −1}`` and
    ``I_low = {αₜ < uₜ, yₜ = −1} ∪ {αₜ > 0, yₜ = 1}``; α is optimal iff the gap is
    ≤ 0 (LIBSVM stops when it is ≤ tol).

    Parameters
    ----------
    y : ndarray of shape (m,)
        Signs ±1.
    alpha : ndarray of shape (m,)
    grad : ndarray of shape (m,)
        ∇ = Qα + p.
    upper : ndarray of shape (m,)
        Upper bounds (``inf`` allowed; 0 fixes the variable, e.g. a zero sample weight).
    tau : float, default=0.0
        Relative threshold of :func:`box_categories` for answers of interior-point
        solvers, whose bounds are met only approximately.
    zero_scale : float, optional
        Scale for the zero threshold of unbounded variables (default 1).

    Returns
    -------
    gap : float
        max(0, m(α) − M(α)); 0 when one of the sets is empty.

    References
    ----------
    R.-E. Fan, P.-H. Chen and C.-J. Lin, JMLR 6, 2005, eq. (9).
    """
    zero, _, at_u = box_categories(alpha, upper, tau, 1.0 if zero_scale is None else zero_scale)
    movable = upper > 0
    below_u, above_0 = ~at_u & movable, ~zero & movable
    g = -y * grad
    pos = y > 0
    i_up = (below_u & pos) | (above_0 & ~pos)
    i_low = (below_u & ~pos) | (above_0 & pos)
    if not i_up.any() or not i_low.any():
        return 0.0
    return float(max(0.0, g[i_up].max() - g[i_low].min()))


def projected_gradient(alpha, grad, upper, tau=0.0, zero_scale=1.0) -> float:
    """Largest violation of the single-variable conditions (the form without yᵀα = Δ).

    ∇ₜ ≥ 0 at αₜ = 0, ∇ₜ = 0 when free, ∇ₜ ≤ 0 at αₜ = uₜ.

    Returns
    -------
    violation : float
    """
    zero, free, at_u = box_categories(alpha, upper, tau, zero_scale)
    viol = np.where(zero, np.maximum(0, -grad), np.where(at_u, np.maximum(0, grad),
                                                         np.abs(grad)))
    viol[~(zero | free | at_u)] = 0.0  # uₜ = 0: fixed
    return float(viol.max(initial=0.0))


def intercept_from_gradient(y, alpha, grad, upper, tau=1e-6, zero_scale=1.0) -> float:
    """The intercept b = −ρ of LIBSVM's rule, from the gradient ∇ = Qα + p without b.

    The mean of −yₜ∇ₜ over the free variables; when there are none, the midpoint of
    the interval of b that the variables at their bounds allow.

    Parameters
    ----------
    y, alpha, grad, upper : ndarray of shape (m,)
    tau : float, default=1e-6
        Threshold of :func:`box_categories`.
    zero_scale : float, default=1.0

    Returns
    -------
    b : float

    References
    ----------
    C.-C. Chang and C.-J. Lin, LIBSVM, ACM TIST 2(3), 2011, §4.1.3.
    """
    zero, free, at_u = box_categories(alpha, upper, tau, zero_scale)
    g = -y * grad
    if free.any():
        return float(g[free].mean())
    pos = y > 0
    lower = g[(pos & zero) | (~pos & at_u)]
    upper_b = g[(pos & at_u) | (~pos & zero)]
    lo = lower.max() if lower.size else (upper_b.min() if upper_b.size else 0.0)
    hi = upper_b.min() if upper_b.size else lo
    return float(0.5 * (lo + hi))


def restore_equality(alpha, y, upper, delta=0.0, prefer=()) -> np.ndarray:
    """Move α inside its box until yᵀα = Δ exactly, ``prefer`` first (in place, returned).

    A dual objective is a lower bound on the optimum (weak duality) only at a
    feasible α, so a remaining imbalance is removed greedily: mass is taken from the
    side in excess, or added to the side in deficit, within the bounds (``prefer`` in
    its order, then the others by index; the others are listed only where ``prefer``
    did not suffice).
    """
    prefer = np.asarray(prefer, dtype=int)
    excess = float(y @ alpha) - delta
    top = float(np.abs(alpha).max(initial=0.0))
    for pass_ in range(2):
        if pass_ == 0:
            order = prefer
        else:
            rest = np.ones(y.size, dtype=bool)
            rest[prefer] = False
            order = np.flatnonzero(rest)
        for i in order:
            # relative to α's own scale (not to 1: with C = 1e-300 an imbalance of
            # 12·C is no rounding, and a dual objective there is no lower bound)
            if abs(excess) <= 1e-14 * max(top, abs(delta)):
                return alpha
            d = -excess * y[i]  # changing αᵢ by d changes yᵀα by yᵢd
            d = max(d, -alpha[i]) if d < 0 else min(d, upper[i] - alpha[i])
            was = abs(alpha[i])
            alpha[i] += d
            excess += y[i] * d
            if abs(alpha[i]) >= top:
                top = abs(alpha[i])
            elif was == top:            # the largest one shrank
                top = float(np.abs(alpha).max(initial=0.0))
    return alpha


def intercept_cost(qp, b) -> float:
    """Δ·b: the primal objective's intercept term of a standard dual with yᵀα = Δ.

    The primal whose dual is :class:`~margin_opt.standard_forms.DualQP` minimizes
    ½‖w‖² + Σ uₜξₜ + Δ·b (the Lagrangian is stationary in b exactly where yᵀα = Δ):
    0 for the C-SVC and the ε-SVR (Δ = 0), −νn·ρ for the one-class SVM (b = −ρ,
    Δ = νn in LIBSVM's scale).  0 without the equality.
    """
    return float(qp.delta) * float(b) if qp.equality and qp.delta != 0.0 else 0.0


def coefficients(qp, alpha) -> np.ndarray:
    """β with f = Σⱼ βⱼK(·, xⱼ) + b: βⱼ = Σ_{t: index[t] = j} yₜαₜ, ndarray of shape (n_data,)."""
    if qp.index is None and qp.n_variables == qp.n_data:
        return qp.y * alpha + 0.0       # one variable per row (the sum's value; no −0.0)
    return np.bincount(qp.data_index, weights=qp.y * alpha, minlength=qp.n_data)


def _columns(Phi, rows):
    M = Phi[rows].T
    return np.asarray(M.toarray() if hasattr(M, "toarray") else M)


#: Band sizes up to which the band's least squares are solved exactly (scipy's BVLS);
#: above, by a fixed number of projected-gradient steps, O(|band|·r) each: the default
#: of :func:`multipliers_from_primal`'s ``exact_band``.
EXACT_BAND = 2000
PG_STEPS = 12


def _band_least_squares(Phi, on, rows, y, up, rhs, eq_rhs, equality, start, exact_band):
    """min ½‖Σ_{t∈on} yₜαₜφₜ − rhs‖² (+ ½(y_onᵀα − eq_rhs)²) over 0 ≤ α ≤ u_on.

    Exact (BVLS) for bands of at most ``exact_band`` variables; else projected gradient
    with exact steps on the quadratic, from ``start``: O(PG_STEPS·|on|·r), never an
    |on| × |on| matrix.
    """
    yo, uo = y[on], up[on]          # variables ``on`` sit on data rows ``rows``
    if on.size <= exact_band:
        A = _columns(Phi, rows) * yo
        if equality:
            A = np.vstack([A, yo[None, :]])
            rhs = np.r_[rhs, eq_rhs]
        return np.clip(lsq_linear(A, rhs, bounds=(0.0, uo), method="bvls").x, 0.0, uo)
    Po = Phi[rows]

    def apply(a):                                  # (Aα, yᵀα)
        return np.asarray(Po.T @ (yo * a)).ravel(), float(yo @ a)

    a = np.clip(start, 0.0, uo)
    for _ in range(PG_STEPS):
        v, e = apply(a)
        rv, re = v - rhs, (e - eq_rhs if equality else 0.0)
        g = yo * np.asarray(Po @ rv).ravel() + (re * yo if equality else 0.0)
        # the projected direction: no move against an active bound
        g[((a <= 0.0) & (g > 0)) | ((a >= uo) & (g < 0))] = 0.0
        Ag, eg = apply(g)
        den = float(Ag @ Ag) + (eg * eg if equality else 0.0)
        if den <= 0.0:
            break
        t = float(g @ g) / den
        a = np.clip(a - t * g, 0.0, uo)
    return a


def _multipliers_in_band(qp, Phi, w, decision, band, exact_band):
    y, up, idx = qp.y, qp.upper, qp.data_index
    s = y * decision[idx] + qp.p
    finite = np.isfinite(up)
    alpha = np.zeros(y.size)
    inside = (s < -band) & finite
    alpha[inside] = up[inside]
    on = np.flatnonzero(((np.abs(s) <= band) | ((s < -band) & ~finite)) & (up > 0))
    if on.size:
        rhs = w - np.asarray(Phi.T @ coefficients(qp, alpha)).ravel()
        start = np.where(np.isfinite(up[on]), 0.5 * up[on], 0.0)
        alpha[on] = _band_least_squares(Phi, on, idx[on], y, up, rhs, qp.delta - y @ alpha,
                                        qp.equality, start, exact_band)
    if qp.equality:
        restore_equality(alpha, y, up, qp.delta, prefer=on)
    if not qp.equality or qp.delta == 0.0:
        # θα stays feasible for θ ∈ [0, 1]; the θ that maximizes the dual objective
        # −(½θ²αᵀQα + θpᵀα) can only tighten the bound (it matters for inexact w)
        wa = np.asarray(Phi.T @ coefficients(qp, alpha)).ravel()
        q, lin = float(wa @ wa), float(qp.p @ alpha)
        if q > 0.0 and -lin < q:
            alpha *= max(0.0, -lin / q)
    return alpha


def multipliers_from_primal(qp, Phi, w, decision, *, dual_objective=None, primal_objective=None,
                            band=None, exact_band=EXACT_BAND) -> np.ndarray:
    """Fill α from a primal point by the subgradient optimality condition.

    αₜ = uₜ where sₜ < −band, 0 where sₜ > band (sₜ = yₜf(x_{index[t]}) + pₜ); on the
    band, the values in [0, uₜ] minimizing ‖Σₜ yₜαₜφₜ − w‖² + (yᵀα − Δ)², i.e. those
    that best satisfy stationarity and the equality (scipy's bounded least squares
    on bands of at most ``exact_band`` variables; above, :data:`PG_STEPS`
    projected-gradient steps, so the fill costs O(n·r) on any data); then yᵀα = Δ
    is restored exactly within the box, so the dual objective at α is a true lower
    bound on the optimum whatever the accuracy of the fill.

    Parameters
    ----------
    qp : DualQP
        The model's standard form (its y, p, upper, index, equality, Δ are used).
    Phi : {ndarray, sparse matrix} of shape (n_data, r)
        Features the primal is linear in.
    w : ndarray of shape (r,)
    decision : ndarray of shape (n_data,)
        f(xⱼ) at the primal point.
    dual_objective : callable, optional
        α ↦ dual objective; with ``primal_objective`` it selects the band.
    primal_objective : float, optional
    band : float, optional
        Half-width of the margin band.  By default the bands of :data:`BANDS` are
        tried, narrowest first, and the α with the smallest duality gap kept (an
        exact optimum has its free multipliers within 1e-6 of the margin, an iterate
        of a subgradient method only within its own accuracy); the search stops
        once the gap is below 1e-9.
    exact_band : int, default=2000
        Bands of up to this many variables are filled exactly (scipy's bounded least
        squares on a dense band × r matrix: O(band·r) memory and a solve of
        O(band·r·min(band, r)) per iteration); larger ones by :data:`PG_STEPS` steps of
        projected gradient (O(band·r) each, never a band × band matrix).  0 takes the
        projected gradient for every band.

    Returns
    -------
    alpha : ndarray of shape (m,)
    """
    w = np.asarray(w, dtype=float)
    if band is not None or dual_objective is None:
        return _multipliers_in_band(qp, Phi, w, decision, BANDS[0] if band is None else band,
                                    exact_band)
    best, best_score = None, np.inf
    for bd in BANDS:
        alpha = _multipliers_in_band(qp, Phi, w, decision, bd, exact_band)
        # relative to P itself (not to max(1, |P|): with C = 1e-300 every gap is < 1e-9)
        score = abs(primal_objective - dual_objective(alpha)) / max(abs(primal_objective),
                                                                    np.finfo(float).tiny)
        if score < best_score:
            best, best_score = alpha, score
        # every band is tried: the gap is not monotone in the band (a narrow band that
        # holds a few points can be worse than none, and a wider one far better)
        if score < 1e-9:
            break
    return best


@dataclass(frozen=True)
class DualQPChecks:
    """What :func:`dual_qp_checks` measured: the checks and the per-variable reading.

    Attributes
    ----------
    checks : list of Check
    s : ndarray of shape (m,)
        sₜ = yₜ f_primal(x_{index[t]}) + pₜ, read against the categories.
    zero, free, at_upper : ndarray of bool, shape (m,)
        Categories of the multipliers (threshold √tol).
    primal_objective, dual_objective : float
        ½‖w‖² + Σ uₜξₜ (finite uₜ) + Δ·b and −(½αᵀQα + pᵀα).
    """

    checks: list
    s: np.ndarray
    zero: np.ndarray
    free: np.ndarray
    at_upper: np.ndarray
    primal_objective: float
    dual_objective: float

    _bad: dict = field(default_factory=dict, compare=False, repr=False)

    def contradicting(self, mask, tol):
        """Indices in ``mask`` whose sₜ contradicts their category (|margin error| > tol)."""
        if tol not in self._bad:        # once per tol, for the table's three rows
            s = self.s
            self._bad[tol] = (self.zero & (s < -tol)) | (self.free & (np.abs(s) > tol)) | \
                (self.at_upper & (s > tol))
        return np.nonzero(mask & self._bad[tol])[0]


@dataclass(frozen=True)
class PrimalReading:
    """What a problem read of an answer's primal side for :func:`dual_qp_checks`.

    Attributes
    ----------
    f0_dual : ndarray of shape (n_data,)
        Σⱼ βⱼK(·, xⱼ) from α (the dual side, without b).
    f_primal : ndarray of shape (n_data,)
        f from the primal variables, with b.
    reg : float
        ½‖w‖² of the primal point.
    stationarity : float
        Normalized residual of w = Σβⱼφ(xⱼ); ``stat_desc`` says how it was measured.
    stat_desc : str
    f0_gradient : ndarray of shape (n_data,), optional
        f without b from which the gradient ∇ = y·f + p of the m − M gap is read:
        by default ``f0_dual``; an answer with explicit primal weights passes Φw,
        which double precision knows to u·Σⱼ|xᵢⱼwⱼ| where Kβ carries
        u·Σⱼ|Kᵢⱼβⱼ| (of order 1 on unscaled data with large multipliers), while
        stationarity checks that w and β agree.
    quad : float, optional
        βᵀKβ for the dual objective, by default β·``f0_dual``; an answer with explicit
        primal weights passes ‖Φᵀβ‖², a sum of squares that keeps its relative
        precision where β·Kβ sums terms of both signs ~1e4 times larger.
    b : float, default=0.0
        The intercept of the primal point: with yᵀα = Δ the primal objective has the
        term Δ·b (:func:`intercept_cost`; 0 where Δ = 0, the C-SVC and the ε-SVR).
    """

    f0_dual: np.ndarray
    f_primal: np.ndarray
    reg: float
    stationarity: float
    stat_desc: str
    f0_gradient: np.ndarray | None = None
    quad: float | None = None
    b: float = 0.0


def dual_qp_checks(qp, alpha, xi, primal, tol, alpha_scale) -> DualQPChecks:
    """The KKT checks of an answer to the standard dual QP and its primal.

    Every residual is dimensionless or in the units of f: margins sₜ as they are;
    α-residuals divided by ``alpha_scale`` (max(1, max finite uₜ), or max(1, max α)
    without bounds); the duality gap by max(|P|, |D|) (:func:`relative_gap`).
    Multipliers count as 0 when
    ≤ τuₜ and as uₜ when ≥ (1 − τ)uₜ, τ = min(√tol, 0.5)
    (:func:`category_threshold`): an interior-point answer has αₜsₜ ≈ μ
    rather than exact zeros, so a multiplier of order √tol on a point off the margin
    is round-off of the barrier; misplaced mass larger than that shows in the
    complementarity and gap checks.

    Parameters
    ----------
    qp : DualQP
    alpha, xi : ndarray of shape (m,)
        Multipliers and primal slacks per variable.
    primal : PrimalReading
        The primal side as read: f, ½‖w‖², stationarity, b.
    tol : float
    alpha_scale : float

    With a diagonal ``qp.diag`` = D (the squared losses, ``upper = inf``) the gradient
    is ∇ = Qα + Dα + p, the primal objective ½‖w‖² + Σ ξₜ²/(2Dₜ) (= Σ Cₜξₜ²) and the
    dual −(½αᵀ(Q + D)α + pᵀα); the slacks ξ are then kept where uₜ is infinite.

    Returns
    -------
    result : DualQPChecks
        Checks ``primal_residual``, ``dual_residual``, ``complementary_slackness``,
        ``duality_gap`` and ``mvp_gap`` (``projected_gradient`` without equality).
    """
    f0_dual, f_primal, f0_gradient, quad, b = (primal.f0_dual, primal.f_primal,
                                               primal.f0_gradient, primal.quad, primal.b)
    y, p, up, idx = qp.y, qp.p, qp.upper, qp.data_index
    finite = np.isfinite(up)
    tau = category_threshold(tol)
    diag = getattr(qp, "diag", None)
    dalpha = np.zeros(y.size) if diag is None else np.asarray(diag, float) * alpha
    # the per-variable reading in one vectorized pass (the same arithmetic as
    # box_categories, violating_pair_gap / projected_gradient and the residuals, with
    # the masks and margins computed once)
    s, zero, free, at_u, r = _residual_pass(
        _f64(y), _f64(p), _f64(up), np.ascontiguousarray(idx, dtype=np.int64),
        _f64(alpha), _f64(xi), _f64(f_primal),
        _f64(f0_dual if f0_gradient is None else f0_gradient), _f64(dalpha), float(tau),
        float(alpha_scale), bool(qp.equality))
    primal_res, box, comp, optimality = (float(v) for v in r)
    eq = abs(float(y @ alpha) - qp.delta) if qp.equality else 0.0
    if quad is None:
        quad = float(coefficients(qp, alpha) @ f0_dual)
    primal_obj = primal.reg + float(up[finite] @ xi[finite]) + intercept_cost(qp, b)
    dual_obj = -(0.5 * quad + float(p @ alpha))
    if diag is not None:
        sq = np.asarray(diag) > 0
        primal_obj += float(np.sum(xi[sq] ** 2 / (2.0 * np.asarray(diag)[sq])))
        dual_obj -= 0.5 * float(dalpha @ alpha)
    checks = check_list(Measured(primal_res, box, eq, primal.stationarity, primal.stat_desc,
                                 comp, primal_obj, dual_obj, optimality),
                        tol, alpha_scale, qp.equality, f0_gradient is not None)
    return DualQPChecks(checks, s, zero, free, at_u, primal_obj, dual_obj)


@dataclass(frozen=True)
class Measured:
    """The numbers a dual QP's checks are made of (:func:`check_list`): the largest
    primal infeasibility (units of f), box violation and ``|yᵀα − Δ|`` (units of α),
    the stationarity residual and what it measured, the largest complementarity
    product, the primal and dual objectives, and m(α) − M(α) (or the projected
    gradient without the equality)."""

    primal_res: float
    box: float
    eq: float
    stationarity: float
    stat_desc: str
    comp: float
    primal_obj: float
    dual_obj: float
    optimality: float


def check_list(m, tol, alpha_scale, equality, through_w=False) -> list:
    """The checks of :func:`dual_qp_checks` from the numbers it measured (also those of
    :func:`dual_qp_reading`, read for many small problems).

    Parameters
    ----------
    m : Measured
    tol, alpha_scale : float
        The tolerance; max(1, largest bound), the scale of the multipliers.
    equality : bool
    through_w : bool, default=False
        The gradient was read through Φw.

    Returns
    -------
    checks : list of Check
    """
    gap_rel = relative_gap(m.primal_obj, m.dual_obj)
    checks = [
        Check("primal_residual", m.primal_res, tol, "max(−s − ξ)₊, max(−ξ)₊ (units of f)"),
        Check("dual_residual", _max_nan(m.box / alpha_scale, m.eq / alpha_scale,
                                        m.stationarity), tol,
              "box and yᵀα = Δ (÷ max(1, C)), stationarity: " + m.stat_desc),
        Check("complementary_slackness", m.comp / alpha_scale, tol,
              "max|αₜ(sₜ + ξₜ)|, max|(uₜ − αₜ)ξₜ|, ÷ max(1, C)"),
        Check("duality_gap", gap_rel, tol, "|P − D| / max(|P|, |D|)"),
    ]
    through = ", ∇ from Φw" if through_w else ""
    if equality:
        checks.append(Check("mvp_gap", m.optimality, tol,
                            "LIBSVM's m(α) − M(α) (its stopping rule)" + through))
    else:
        checks.append(Check("projected_gradient", m.optimality, tol,
                            "largest violated ∇ₜ sign condition (no intercept)" + through))
    return checks


def _max_nan(*values) -> float:
    """The largest value, NaN if any is NaN (Python's max drops a NaN not in front)."""
    return float("nan") if any(np.isnan(v) for v in values) else max(values)


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _residual_pass(y, p, up, idx, alpha, xi, f_primal, f_gradient, dalpha, tau, zero_scale,
                   equality):
    """The per-variable part of :func:`dual_qp_checks` in one vectorized pass.

    Parameters
    ----------
    y, p, up, alpha, xi, dalpha : ndarray of shape (m,)
        Signs, linear term, upper bounds (``inf`` allowed), multipliers, slacks and
        the diagonal term Dα of the gradient (zeros but for the squared losses).
    idx : ndarray of int of shape (m,) or None
        The data row of each variable (None: variable t on row t).
    f_primal, f_gradient : ndarray of shape (n_data,)
        f with b (the margins) and f without b (the gradient).
    tau, zero_scale : float
        The threshold and zero scale of :func:`box_categories`.
    equality : bool
        Measure m(α) − M(α) (:func:`violating_pair_gap`), else
        :func:`projected_gradient`.

    Returns
    -------
    s : ndarray of shape (m,)
        sₜ = yₜf_primal[index[t]] + pₜ.
    zero, free, at_upper : ndarray of bool, shape (m,)
        The categories of :func:`box_categories`.
    r : ndarray of shape (4,)
        [primal residual, box violation, complementarity, m(α) − M(α) or the
        projected gradient] (the gradient ∇ = y·f_gradient + p + Dα), all NaN when a
        multiplier, slack, margin or gradient is not finite or a bound is NaN (a check
        never passes NaN).
    """
    with np.errstate(invalid="ignore", over="ignore"):     # a non-finite input: NaN below
        if idx is None:
            st = y * f_primal + p
            grad = y * f_gradient + p + dalpha
        else:
            st = y * f_primal[idx] + p
            grad = y * f_gradient[idx] + p + dalpha
    fin = np.isfinite(up)
    fixed = up == 0
    zero = (alpha <= tau * np.where(fin, up, zero_scale)) & ~fixed
    at_u = fin & (alpha >= (1 - tau) * np.where(fin, up, 0.0)) & ~zero & ~fixed
    free = ~zero & ~at_u & ~fixed
    if not (np.isfinite(st).all() and np.isfinite(grad).all() and np.isfinite(alpha).all()
            and np.isfinite(xi).all() and not np.isnan(up).any()):
        return st, zero, free, at_u, np.full(4, np.nan)
    primal_res = max(0.0, float(np.max(-st - xi, initial=0.0)), float(np.max(-xi, initial=0.0)))
    box = max(0.0, float(np.max(-alpha, initial=0.0)),
              float(np.max(alpha[fin] - up[fin], initial=0.0)))
    comp = max(0.0, float(np.max(np.abs(alpha * (st + xi)), initial=0.0)),
               float(np.max(np.abs((up[fin] - alpha[fin]) * xi[fin]), initial=0.0)))
    if equality:
        movable = up > 0
        below_u, above_0 = ~at_u & movable, ~zero & movable
        g = -y * grad
        pos = y > 0
        i_up = np.where(pos, below_u, above_0)
        i_low = np.where(pos, above_0, below_u)
        if i_up.any() and i_low.any():
            viol = max(0.0, float(g[i_up].max() - g[i_low].min()))
        else:
            viol = 0.0
    else:
        viol = max(0.0, float(np.max(-grad[zero], initial=0.0)),
                   float(np.max(grad[at_u], initial=0.0)),
                   float(np.max(np.abs(grad[free]), initial=0.0)))
    return st, zero, free, at_u, np.array([primal_res, box, comp, viol])


#: The numbers :func:`dual_qp_reading` writes, by position: the four of
#: :func:`_residual_pass` (primal residual, box violation, complementarity, m(α) − M(α)),
#: ``|yᵀα|``, βᵀKβ, the slack cost Σ uₜξₜ, the counts of the three categories, of the
#: nonzero multipliers, of the points contradicting each category at ``tol``, and of the
#: multipliers that :meth:`~margin_opt.problems.base.KernelProblem.drop_negligible`
#: would consider (a reading with any is not used: the whole solve path reads it).
READING = ("primal_res", "box", "comp", "optimality", "eq", "quad", "slack", "n_zero",
           "n_free", "n_at_upper", "n_support", "bad_zero", "bad_free", "bad_at_upper",
           "n_negligible")


def dual_qp_reading(K, y, p, up, alpha, b, tol, tau, sv_threshold, decision, xi, num):
    """The certificate's numbers of a dual QP with the equality yᵀα = 0 and one variable
    per row of its kernel matrix K (a C-SVC: no index, no diagonal), read from α and b
    alone: f0 = Kβ (β = yα, by the rows of the nonzero βⱼ: K is symmetric), the
    decision values f = f0 + b, the slacks ξ = (−s)₊ (s = yf + p), the per-variable
    pass of :func:`dual_qp_checks`, its objectives' terms, and the counts of the
    support-vector table (:data:`READING`, written to ``num``).

    The same conditions as :func:`dual_qp_checks` at ``tol`` (category threshold
    ``tau``, α-residuals ÷ max(1, max uₜ)), for the many small problems of a
    one-vs-one fit, in one compiled pass (``margin_opt._core.dual_qp_reading``,
    src/core/reading.cpp; the GIL released): Kβ is summed over the rows of the nonzero
    βⱼ, so the values agree with the solve path's to rounding.

    Parameters
    ----------
    K : ndarray of shape (m, m)
        Exactly symmetric.
    y, p, up, alpha : ndarray of shape (m,)
    b : float
    tol, tau, sv_threshold : float
        The tolerance, :func:`category_threshold` of it, and the relative threshold
        below which a nonzero multiplier is negligible
        (:data:`~margin_opt.problems.base.SV_THRESHOLD`).
    decision, xi : ndarray of float64 of shape (m,), C-contiguous
        Written: f on the rows, with b, and ξ.
    num : ndarray of float64 of shape (len(READING),), C-contiguous
        Written.

    Raises
    ------
    ValueError
        Shapes that do not match.
    """
    _compiled_reading(_f64(K), _f64(y), _f64(p), _f64(up), _f64(alpha), float(b), float(tol),
                      float(tau), float(sv_threshold), decision, xi, num)
