"""KKT conditions of the ε-SVR: intercept and multiplier recovery, and the certificate.

With residuals rᵢ = yᵢ − f(xᵢ) the optimality conditions are

- primal feasibility: rᵢ ≤ ε + ξᵢ, −rᵢ ≤ ε + ξᵢ*, ξ, ξ* ≥ 0;
- dual feasibility: 0 ≤ aᵢ, âᵢ ≤ Cᵢ, Σ(aᵢ − âᵢ) = 0;
- stationarity: w = Σ(aᵢ − âᵢ)φ(xᵢ);
- complementary slackness: aᵢ(ε + ξᵢ − rᵢ) = 0, âᵢ(ε + ξᵢ* + rᵢ) = 0,
  (Cᵢ − aᵢ)ξᵢ = 0, (Cᵢ − âᵢ)ξᵢ* = 0, and hence aᵢâᵢ = 0 (for ε > 0);

the tube table reads them point by point: inside the tube a = â = 0, on the upper
edge 0 < a < C (r = ε), above it a = C (r ≥ ε), on the lower edge 0 < â < C
(r = −ε), below it â = C (r ≤ −ε).

References
----------
A. J. Smola and B. Schölkopf, "A tutorial on support vector regression",
Statistics and Computing 14, 2004, §1.4 (the KKT conditions of the ε-SVR).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from ..certificate import Certificate, Check, TableRow
from ..standard_forms import box_categories, violating_pair_gap

__all__ = ["certify", "intercept_from_free", "multipliers_from_primal", "support_indices"]


def _scale(problem) -> float:
    return max(1.0, float(problem.C_i.max()))


def support_indices(problem, a, a_star, r) -> np.ndarray:
    """Support vectors: a multiplier more active than its tube constraint is slack.

    aᵢ counts when aᵢ/C ≥ (ε − rᵢ)₊ (and is not a rounding zero), âᵢ when
    âᵢ/C ≥ (ε + rᵢ)₊; exact zeros never count.
    """
    scale = float(problem.C_i.max())
    floor = 1e-12 * scale
    up = (a > floor) & (a / scale >= np.maximum(0.0, problem.epsilon - r))
    low = (a_star > floor) & (a_star / scale >= np.maximum(0.0, problem.epsilon + r))
    return np.flatnonzero(up | low)


def intercept_from_free(problem, a, a_star, f0, tau=1e-6) -> float:
    """b from the free multipliers (rᵢ = ±ε there), else the midpoint of its interval.

    Parameters
    ----------
    f0 : ndarray of shape (n_samples,)
        Σⱼ(aⱼ − âⱼ)K(·, xⱼ) without b.

    Returns
    -------
    b : float
    """
    eps, base = problem.epsilon, problem.y - f0
    za, fa, ca = box_categories(a, problem.C_i, tau)
    zs, fs, cs = box_categories(a_star, problem.C_i, tau)
    vals = np.r_[base[fa] - eps, base[fs] + eps]
    if vals.size:
        return float(vals.mean())
    inside = za & zs
    lower = np.r_[base[inside] - eps, base[cs] + eps]
    upper = np.r_[base[inside] + eps, base[ca] - eps]
    lo = lower.max() if lower.size else upper.min()
    hi = upper.min() if upper.size else lo
    return float(0.5 * (lo + hi))


def multipliers_from_primal(problem, w, decision, band=1e-6):
    """(a, â) from a primal point by the subgradient optimality condition.

    a = C where r > ε + band, â = C where r < −ε − band, both zero strictly inside
    the tube; on the edges the values in [0, C] that best satisfy stationarity and
    Σ(a − â) = 0 (bounded least squares).

    Returns
    -------
    a, a_star : ndarray of shape (n_samples,)
    """
    y, C, eps = problem.y, problem.C_i, problem.epsilon
    r = y - decision
    a, a_star = np.zeros_like(r), np.zeros_like(r)
    a[r > eps + band] = C[r > eps + band]
    a_star[r < -eps - band] = C[r < -eps - band]
    up = np.flatnonzero(np.abs(r - eps) <= band)
    low = np.flatnonzero(np.abs(r + eps) <= band)
    if up.size + low.size == 0:
        return a, a_star
    Phi = problem.data.features()

    def cols(idx):
        M = Phi[idx].T
        return np.asarray(M.toarray() if hasattr(M, "toarray") else M)

    A = np.hstack([cols(up), -cols(low)])
    rhs = w - problem.data.weights(a - a_star)
    A = np.vstack([A, np.r_[np.ones(up.size), -np.ones(low.size)][None, :]])
    rhs = np.r_[rhs, -(a - a_star).sum()]
    ub = np.r_[C[up], C[low]]
    res = lsq_linear(A, rhs, bounds=(0.0, ub), method="bvls" if ub.size <= 2000 else "trf")
    x = np.clip(res.x, 0.0, ub)
    a[up] = x[:up.size]
    a_star[low] = x[up.size:]
    return a, a_star


def certify(problem, solution, tol) -> Certificate:
    """The KKT certificate and tube table of an ε-SVR answer.

    At ε = 0 only a − â is determined, so (a, â) are read as (max(β, 0), max(−β, 0)).
    Residuals in target units (r, ε) are absolute; multiplier residuals are divided
    by max(1, max C); the duality gap by max(1, |P|).  Multipliers count as 0 when
    ≤ √tol·C and as C when ≥ (1 − √tol)C (see :func:`margin_opt.problems.svm_kkt.certify`).
    """
    y, eps, C = problem.y, problem.epsilon, problem.C_i
    tau = np.sqrt(tol)
    a = np.asarray(solution.alpha, dtype=float)
    a_star = np.asarray(solution.extra["alpha_star"], dtype=float)
    if eps == 0:
        # at ε = 0 only a − â is determined: read the answer as its canonical split
        beta = a - a_star
        a, a_star = np.maximum(beta, 0.0), np.maximum(-beta, 0.0)
    beta = a - a_star
    b = float(solution.b)
    cs = _scale(problem)
    f0 = problem.decision_from_dual(beta, 0.0)
    fp0, reg, stationarity, _ = problem.data.primal_point(solution, beta, f0)
    f_primal = fp0 + b
    r = y - f_primal
    xi = np.asarray(solution.xi, dtype=float)
    xi_star = np.asarray(solution.extra.get("xi_star", np.maximum(0, -r - eps)), dtype=float)

    primal_res = max(float(np.maximum(0, r - eps - xi).max()),
                     float(np.maximum(0, -r - eps - xi_star).max()),
                     float(np.maximum(0, -xi).max()), float(np.maximum(0, -xi_star).max()))
    box = max(float(np.maximum(0, -a).max()), float(np.maximum(0, -a_star).max()),
              float(np.maximum(0, a - C).max()), float(np.maximum(0, a_star - C).max()))
    dual_res = max(box / cs, abs(float(beta.sum())) / cs, stationarity)
    comp = max(float(np.abs(a * (eps + xi - r)).max()),
               float(np.abs(a_star * (eps + xi_star + r)).max()),
               float(np.abs((C - a) * xi).max()), float(np.abs((C - a_star) * xi_star).max()))
    product = float(np.abs(a * a_star).max()) / cs ** 2
    primal_obj = reg + float(C @ (xi + xi_star))
    dual_obj = -0.5 * float(beta @ f0) - eps * float((a + a_star).sum()) + float(y @ beta)
    gap_abs = primal_obj - dual_obj
    n = problem.n_samples
    grad = np.r_[f0 + eps - y, -f0 + eps + y]
    mvp = violating_pair_gap(np.r_[np.ones(n), -np.ones(n)], np.r_[a, a_star], grad,
                             np.r_[C, C], tau)
    checks = [
        Check("primal_residual", primal_res, tol, "tube constraints and ξ, ξ* ≥ 0 (target units)"),
        Check("dual_residual", dual_res, tol, "box, Σ(a − â) = 0 (÷ max(1, C)), stationarity"),
        Check("complementary_slackness", comp / cs, tol,
              "a(ε + ξ − r), â(ε + ξ* + r), (C − a)ξ, (C − â)ξ*, ÷ max(1, C)"),
        Check("a_times_a_star", product, tol, "max aᵢâᵢ ÷ max(1, C)²"),
        Check("duality_gap", abs(gap_abs) / max(1.0, abs(primal_obj)), tol,
              "|P − D| / max(1, |P|)"),
        Check("mvp_gap", mvp, tol, "LIBSVM's m(α) − M(α) on the 2n-variable form"),
    ]
    za, fa, ca = box_categories(a, problem.C_i, tau)
    zs, fs, cst = box_categories(a_star, problem.C_i, tau)
    inside = za & zs
    rows = [
        TableRow("inside (a = â = 0)", "|r| ≤ ε", int(inside.sum()),
                 np.flatnonzero(inside & (np.abs(r) > eps + tol))),
        TableRow("upper edge (0 < a < C)", "r = ε", int(fa.sum()),
                 np.flatnonzero(fa & (np.abs(r - eps) > tol))),
        TableRow("above (a = C)", "r ≥ ε", int(ca.sum()), np.flatnonzero(ca & (r < eps - tol))),
        TableRow("lower edge (0 < â < C)", "r = −ε", int(fs.sum()),
                 np.flatnonzero(fs & (np.abs(r + eps) > tol))),
        TableRow("below (â = C)", "r ≤ −ε", int(cst.sum()),
                 np.flatnonzero(cst & (r > -eps + tol))),
    ]
    quantities = {"primal_objective": primal_obj, "dual_objective": dual_obj,
                  "duality_gap_abs": gap_abs, "b": b, "n_support": int((~inside).sum())}
    who = solution.method + (f", {solution.solver}" if solution.solver else "")
    return Certificate(checks, rows, quantities, title=f"SVR certificate ({who})")
