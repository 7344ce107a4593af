"""KKT conditions of the C-SVC: intercept and α recovery, and the certificate.

For the primal point (w, b, ξ) and the dual point α the optimality conditions are

- primal feasibility: yᵢfᵢ ≥ 1 − ξᵢ, ξᵢ ≥ 0;
- dual feasibility: 0 ≤ αᵢ ≤ Cᵢ, yᵀα = 0 (with intercept);
- stationarity: w = Σᵢ αᵢyᵢφ(xᵢ);
- complementary slackness: αᵢ(yᵢfᵢ − 1 + ξᵢ) = 0 and (Cᵢ − αᵢ)ξᵢ = 0;

equivalently a zero duality gap, and LIBSVM's maximal-violating-pair gap
m(α) − M(α) = 0.  In terms of margins (the lecture notes' support-vector table):
α = 0 ⇒ yf ≥ 1, 0 < α < C ⇒ yf = 1, α = C ⇒ yf ≤ 1.

References
----------
R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
information for training SVM", JMLR 6, 2005 (the gap m(α) − M(α), eq. (7)–(9)).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from ..certificate import Certificate, Check, TableRow
from ..standard_forms import box_categories, violating_pair_gap

__all__ = ["certify", "intercept_from_free", "alpha_from_primal", "support_indices",
           "slack_cost", "SV_THRESHOLD"]

#: Relative floor under which an αᵢ never counts as a support vector.
SV_THRESHOLD = 1e-12


def _alpha_scale(problem, alpha) -> float:
    """Scale of α used to normalize residuals: max(1, max finite Cᵢ) or max(1, max α)."""
    if problem.hard_margin:
        return max(1.0, float(np.max(alpha, initial=0.0)))
    return max(1.0, float(problem.C_i.max()))


def slack_cost(problem, xi) -> float:
    """Σᵢ Cᵢξᵢ (0 for the hard margin, whose infeasibility is a primal residual)."""
    return 0.0 if problem.hard_margin else float(problem.C_i @ xi)


def support_indices(problem, alpha, decision) -> np.ndarray:
    """Indices of the support vectors: αᵢ > 0, read robustly for interior-point answers.

    An interior-point solver returns αᵢ·sᵢ ≈ μ > 0 instead of exact zeros, where
    sᵢ = yᵢfᵢ − 1 is the margin slack.  Point i counts as a support vector when
    αᵢ > SV_THRESHOLD·scale and αᵢ/scale ≥ (yᵢfᵢ − 1)₊, i.e. when its multiplier
    is more active than its margin constraint is slack (scale = max Cᵢ, or max α for
    the hard margin).  Exact zeros (SMO, LIBSVM) are never support vectors.
    """
    scale = float(np.max(alpha, initial=0.0)) if problem.hard_margin else float(problem.C_i.max())
    if scale <= 0:
        return np.empty(0, dtype=int)
    slack = np.maximum(0.0, problem.y * decision - 1.0)
    return np.flatnonzero((alpha > SV_THRESHOLD * scale) & (alpha / scale >= slack))


def _categories(problem, alpha, tau):
    """Boolean masks (zero, free, at_C) with relative threshold tau.

    A point with Cᵢ = 0 (zero sample or class weight) has α fixed at 0 and takes no
    part in the problem: it is in none of the three.
    """
    if problem.hard_margin:
        zero = alpha <= tau * _alpha_scale(problem, alpha)
        return zero, ~zero, np.zeros_like(zero)
    return box_categories(alpha, problem.C_i, tau)


def intercept_from_free(problem, alpha, f0, tau=1e-6) -> float:
    """Intercept from the KKT conditions given f0 = Σⱼ αⱼyⱼK(·, xⱼ) without b.

    The average of ``yᵢ − f0ᵢ`` over the free support vectors (0 < αᵢ < Cᵢ); when
    there are none, the midpoint of the interval of b allowed by the bounded
    points (LIBSVM's rule).

    Returns
    -------
    b : float
    """
    zero, free, at_c = _categories(problem, alpha, tau)
    r = problem.y - f0
    if free.any():
        return float(r[free].mean())
    pos = problem.y > 0
    lower = r[(pos & zero) | (~pos & at_c)]
    upper = r[(pos & at_c) | (~pos & zero)]
    lo = lower.max() if lower.size else (upper.min() if upper.size else 0.0)
    hi = upper.min() if upper.size else lo
    return float(0.5 * (lo + hi))


BANDS = (1e-6, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1)


def alpha_from_primal(problem, w, decision, band=None) -> np.ndarray:
    """Fill α from a primal point by the subgradient optimality condition.

    αᵢ = Cᵢ where yᵢfᵢ < 1 − band, 0 where yᵢfᵢ > 1 + band; on the margin, the
    values in [0, Cᵢ] minimizing ‖Σᵢαᵢyᵢφ(xᵢ) − w‖² + (yᵀα)² (scipy's bounded
    least squares), i.e. those that best satisfy stationarity and yᵀα = 0; then
    yᵀα = 0 is restored exactly within the box, so the dual objective at α is a
    true lower bound on the optimum.

    Parameters
    ----------
    w : ndarray of shape (r,)
        Weights in the coordinates of ``problem.features()``.
    decision : ndarray of shape (n_samples,)
        f(xᵢ) at that point.
    band : float, optional
        Half-width of the margin band.  By default each of :data:`BANDS` is tried and
        the α with the smallest duality gap is kept: an exact
        optimum has its free support vectors within 1e-6 of the margin, an iterate of
        a subgradient method only within its own accuracy.

    Returns
    -------
    alpha : ndarray of shape (n_samples,)
    """
    if band is not None:
        return _alpha_in_band(problem, w, decision, band)
    primal = 0.5 * float(w @ w) + slack_cost(problem, np.maximum(0, 1 - problem.y * decision))
    best, best_score = None, np.inf
    for bd in BANDS:
        alpha = _alpha_in_band(problem, w, decision, bd)
        beta = problem.y * alpha
        dual = float(alpha.sum() - 0.5 * beta @ problem.data.combination(beta))
        score = abs(primal - dual) / max(1.0, abs(primal))
        if score < best_score:
            best, best_score = alpha, score
        if score < 1e-9:
            break
    return best


def _alpha_in_band(problem, w, decision, band):
    y, C = problem.y, problem.C_i
    m = y * decision
    alpha = np.zeros(problem.n_samples)
    inside = m < 1 - band
    on = np.abs(m - 1) <= band
    if problem.hard_margin:
        on |= inside
    else:
        alpha[inside] = C[inside]
    if not on.any():
        return alpha
    Phi = problem.features()
    idx = np.flatnonzero(on)
    A = np.asarray(Phi[idx].T if not hasattr(Phi, "tocsr") else Phi[idx].T.toarray()) * y[idx]
    rhs = w - np.asarray(Phi.T @ (y * alpha)).ravel()
    rows, target = [A], [rhs]
    if problem.fit_intercept:
        rows.append(y[idx][None, :])
        target.append(np.array([-(y @ alpha)]))
    upper = C[idx] if not problem.hard_margin else np.full(idx.size, np.inf)
    res = lsq_linear(np.vstack(rows), np.concatenate(target), bounds=(0.0, upper),
                     method="bvls" if idx.size <= 2000 else "trf")
    alpha[idx] = np.clip(res.x, 0.0, upper)
    if problem.fit_intercept:
        _restore_equality(alpha, y, C if not problem.hard_margin else np.full(y.size, np.inf),
                          idx)
    return alpha


def _restore_equality(alpha, y, upper, prefer):
    """Move α inside its box until yᵀα = 0 exactly, margin points first.

    Least squares satisfies yᵀα = 0 only approximately; a dual objective is a
    lower bound on the optimum (weak duality) only at a feasible α, so the
    remaining imbalance is removed greedily: mass is taken from the side in excess
    (or added to the side in deficit) within the bounds.
    """
    order = np.r_[prefer, np.setdiff1d(np.arange(y.size), prefer)]
    excess = float(y @ alpha)
    for i in order:
        if abs(excess) <= 1e-14 * max(1.0, float(np.abs(alpha).max(initial=0.0))):
            break
        # changing αᵢ by d changes yᵀα by yᵢd; we need yᵢd = −excess
        d = -excess * y[i]
        d = max(d, -alpha[i]) if d < 0 else min(d, upper[i] - alpha[i])
        alpha[i] += d
        excess += y[i] * d


def _mvp_gap(problem, alpha, f0, tau):
    """LIBSVM's m(α) − M(α); here ∇ₜ = yₜf0ₜ − 1, bounds judged with threshold tau."""
    y = problem.y
    return violating_pair_gap(y, alpha, y * f0 - 1.0, problem.C_i, tau,
                              zero_scale=_alpha_scale(problem, alpha))


def _projected_gradient(problem, alpha, f0, tau):
    """Largest violation of the single-variable KKT conditions (no intercept)."""
    grad = problem.y * f0 - 1.0
    zero, free, at_c = _categories(problem, alpha, tau)
    viol = np.where(zero, np.maximum(0, -grad), np.where(at_c, np.maximum(0, grad), np.abs(grad)))
    viol[~(zero | free | at_c)] = 0.0  # Cᵢ = 0: fixed
    return float(viol.max(initial=0.0))


def certify(problem, solution, tol) -> Certificate:
    """The KKT certificate of ``solution`` for ``problem`` (see module docstring).

    Every residual is normalized to be dimensionless: margins are already so;
    α-residuals are divided by max(1, max Cᵢ) (hard margin: max(1, max α));
    stationarity by max(1, ‖w‖∞); the duality gap by max(1, |primal objective|).
    The margins f and objectives are recomputed from the solution's variables, so
    an edited ``b`` or α is caught.

    In the support-vector table (and for the sets of m(α) − M(α)) αᵢ counts as 0
    when αᵢ ≤ √tol·Cᵢ and as Cᵢ when αᵢ ≥ (1 − √tol)Cᵢ: an interior-point answer
    has αᵢ·sᵢ ≈ μ rather than exact zeros, so a multiplier of order √tol on a
    point off the margin is round-off of the barrier, while the margins are held
    to ``tol``.  Misplaced mass larger than that still shows in the complementary
    slackness and gap checks.
    """
    y = problem.y
    tau = np.sqrt(tol)
    alpha = np.asarray(solution.alpha, dtype=float)
    b = float(solution.b) if problem.fit_intercept else 0.0
    cs = _alpha_scale(problem, alpha)
    f0 = problem.decision_from_dual(alpha, 0.0)
    fp0, reg, stationarity, stat_desc = problem.data.primal_point(solution, y * alpha, f0)
    f_primal = fp0 + b
    margins = y * f_primal
    xi = np.zeros_like(alpha) if problem.hard_margin else np.asarray(solution.xi, dtype=float)

    primal_res = max(float(np.maximum(0.0, 1.0 - xi - margins).max(initial=0.0)),
                     float(np.maximum(0.0, -xi).max(initial=0.0)))
    box = float(np.maximum(0.0, -alpha).max(initial=0.0))
    if not problem.hard_margin:
        box = max(box, float(np.maximum(0.0, alpha - problem.C_i).max(initial=0.0)))
    eq = abs(float(y @ alpha)) if problem.fit_intercept else 0.0
    dual_res = max(box / cs, eq / cs, stationarity)
    cs1 = float(np.abs(alpha * (margins - 1.0 + xi)).max(initial=0.0))
    cs2 = 0.0 if problem.hard_margin else float(
        np.abs((problem.C_i - alpha) * xi).max(initial=0.0))
    primal_obj = reg + slack_cost(problem, xi)
    dual_obj = float(alpha.sum() - 0.5 * (y * alpha) @ f0)
    gap_abs = primal_obj - dual_obj
    gap_rel = abs(gap_abs) / max(1.0, abs(primal_obj))

    checks = [
        Check("primal_residual", primal_res, tol, "max(1 − ξ − y f)₊, max(−ξ)₊"),
        Check("dual_residual", dual_res, tol,
              "box and yᵀα = 0 (÷ max(1, C)), stationarity w = Σαᵢyᵢφ(xᵢ): " + stat_desc),
        Check("complementary_slackness", max(cs1, cs2) / cs, tol,
              "max|αᵢ(yᵢfᵢ − 1 + ξᵢ)|, max|(Cᵢ − αᵢ)ξᵢ|, ÷ max(1, C)"),
        Check("duality_gap", gap_rel, tol, "|P − D| / max(1, |P|)"),
    ]
    if problem.fit_intercept:
        checks.append(Check("mvp_gap", _mvp_gap(problem, alpha, f0, tau), tol,
                            "LIBSVM's m(α) − M(α) (its stopping rule)"))
    else:
        checks.append(Check("projected_gradient", _projected_gradient(problem, alpha, f0, tau),
                            tol, "largest violated ∇ᵢ sign condition (no intercept)"))

    zero, free, at_c = _categories(problem, alpha, tau)
    rows = [TableRow("α = 0", "y f(x) ≥ 1", int(zero.sum()),
                     np.flatnonzero(zero & (margins < 1 - tol))),
            TableRow("0 < α < C", "y f(x) = 1", int(free.sum()),
                     np.flatnonzero(free & (np.abs(margins - 1) > tol)))]
    if not problem.hard_margin:
        rows.append(TableRow("α = C", "y f(x) ≤ 1", int(at_c.sum()),
                             np.flatnonzero(at_c & (margins > 1 + tol))))
    quantities = {"primal_objective": primal_obj, "dual_objective": dual_obj,
                  "duality_gap_abs": gap_abs, "b": b, "n_support": int((free | at_c).sum()),
                  "n_free": int(free.sum()), "n_at_C": int(at_c.sum())}
    if not problem.hard_margin and np.any(problem.C_i == 0):
        quantities["n_fixed_C0"] = int(np.sum(problem.C_i == 0))
    if problem.hard_margin and solution.w is not None:
        quantities["geometric_margin"] = 2.0 / float(np.linalg.norm(solution.w))
    who = solution.method + (f", {solution.solver}" if solution.solver else "")
    title = f"SVM certificate ({who})"
    return Certificate(checks, rows, quantities, title=title)
