"""The KKT conditions of the Crammer–Singer SVM and its certificate.

With sᵢᵣ = f_{yᵢ}(xᵢ) − f_r(xᵢ) − (1 − δ_{yᵢ r}) + ξᵢ (the slack of constraint (i, r)),
multipliers λᵢᵣ and βᵢᵣ = Cᵢδ_{yᵢ r} − λᵢᵣ, the optimality conditions are

- primal feasibility   sᵢᵣ ≥ 0 (so ξᵢ ≥ 0, the row r = yᵢ);
- dual feasibility     λ ≥ 0, Σ_r λᵢᵣ = Cᵢ, Σᵢ βᵢᵣ = 0 (with intercepts);
- stationarity         w_r = Σᵢ βᵢᵣ φ(xᵢ);
- complementarity      λᵢᵣ sᵢᵣ = 0;

and the duality gap P − D = 0.  Read sample by sample with the margin
mᵢ = f_{yᵢ}(xᵢ) − max_{r≠yᵢ} f_r(xᵢ) and its own coefficient β_{i yᵢ} ∈ [0, Cᵢ], they give
the support-vector table of the binary SVM:

    β_{i yᵢ} = 0 ⇒ mᵢ ≥ 1,   0 < β_{i yᵢ} < Cᵢ ⇒ mᵢ = 1,   β_{i yᵢ} = Cᵢ ⇒ mᵢ ≤ 1

(β_{i yᵢ} > 0 means λᵢᵣ > 0 for some r ≠ yᵢ, whose constraint is then active, so
mᵢ = 1 − ξᵢ ≤ 1; β_{i yᵢ} < Cᵢ means λ_{i yᵢ} > 0, so ξᵢ = 0; β_{i yᵢ} = 0 means no
constraint r ≠ yᵢ is active with a multiplier, and ξᵢ = 0, so mᵢ ≥ 1).

References
----------
K. Crammer and Y. Singer, JMLR 2, 2001, §4 (the optimality conditions of the dual).
S. Boyd and L. Vandenberghe, *Convex Optimization*, CUP 2004, §5.5.3.
"""

from __future__ import annotations

import numpy as np

from ..certificate import Certificate, Check, TableRow
from ..kkt import box_categories, relative_gap

__all__ = ["certify", "primal_point"]


def primal_point(problem, variables, beta, f0):
    """f without b from the primal variables, ½Σ‖w_r‖², and the stationarity residual.

    Returns
    -------
    f0_primal : ndarray of shape (n_samples, n_classes)
    reg : float
    stationarity : float
    description : str
    """
    if variables.w is not None:
        w = np.asarray(variables.w, dtype=float)
        Phi = problem.data.features()
        w_dual = problem.data.weights(beta)
        return (np.asarray(Phi @ w), 0.5 * float(np.sum(w * w)),
                float(np.abs(w - w_dual).max(initial=0.0)) / max(1.0, np.abs(w).max()),
                "‖W − Σᵢβᵢφ(xᵢ)‖∞ / max(1, ‖W‖∞)")
    if variables.w_factor is not None:
        wf = np.asarray(variables.w_factor, dtype=float)
        fp = problem.data.features() @ wf
        return (fp, 0.5 * float(np.sum(wf * wf)),
                float(np.abs(fp - f0).max()) / max(1.0, np.abs(f0).max()),
                "‖F_primal − F_dual‖∞ / max(1, ‖F‖∞) (kernel)")
    return f0, 0.5 * float(np.sum(beta * f0)), 0.0, "holds by construction (dual point)"


def certify(problem, solution, tol) -> Certificate:
    """The certificate of a Crammer–Singer answer (see the module docstring).

    Residuals are in the units of f (margins), or divided by max(1, max Cᵢ)
    (multipliers), or relative (the gap); β_{i yᵢ} counts as 0 when ≤ √tol·Cᵢ and as Cᵢ
    when ≥ (1 − √tol)Cᵢ, as for the binary SVM.
    """
    n, k = problem.n_samples, problem.n_classes
    rows = np.arange(n)
    v = solution.variables
    lam = np.asarray(v.alpha, dtype=float)
    xi = np.asarray(v.xi, dtype=float)
    beta = problem.coefficients(lam)
    b = np.asarray(solution.intercept, dtype=float) if problem.fit_intercept else np.zeros(k)
    f0 = problem.combination(beta)
    fp0, reg, stationarity, stat_desc = primal_point(problem, v, beta, f0)
    F = fp0 + b
    Fy = F[rows, problem.y]
    s = Fy[:, None] - F - (1.0 - problem.Y) + xi[:, None]
    scale = max(1.0, float(problem.C_i.max(initial=0.0)))
    primal_res = float(np.maximum(0.0, -s).max(initial=0.0))
    dual_res = max(float(np.maximum(0.0, -lam).max(initial=0.0)),
                   float(np.abs(lam.sum(axis=1) - problem.C_i).max(initial=0.0)),
                   float(np.abs(beta.sum(axis=0)).max(initial=0.0))
                   if problem.fit_intercept else 0.0) / scale
    comp = float(np.abs(lam * s).max(initial=0.0)) / scale
    primal_obj = reg + float(problem.C_i @ xi)
    dual_obj = float(np.sum(problem.Y * beta)) - 0.5 * float(np.sum(beta * f0))
    gap = relative_gap(primal_obj, dual_obj)
    checks = [
        Check("primal_residual", primal_res, tol,
              "max(−sᵢᵣ)₊, sᵢᵣ = f_yᵢ − f_r − (1 − δ) + ξᵢ (units of f)"),
        Check("dual_residual", max(dual_res, stationarity), tol,
              "λ ≥ 0, Σ_r λᵢᵣ = Cᵢ, Σᵢ βᵢᵣ = 0 (÷ max(1, C)), stationarity: " + stat_desc),
        Check("complementary_slackness", comp, tol, "max|λᵢᵣ sᵢᵣ| ÷ max(1, C)"),
        Check("duality_gap", gap, tol, "|P − D| / max(|P|, |D|)"),
    ]
    beta_y = beta[rows, problem.y]
    zero, free, at_c = box_categories(beta_y, problem.C_i, np.sqrt(tol), scale)
    m = problem.margins(F)
    bad = (zero & (m < 1 - tol)) | (free & (np.abs(m - 1) > tol)) | (at_c & (m > 1 + tol))
    table = [TableRow("β_y = 0", "m ≥ 1", int(zero.sum()), np.flatnonzero(zero & bad)),
             TableRow("0 < β_y < C", "m = 1", int(free.sum()), np.flatnonzero(free & bad)),
             TableRow("β_y = C", "m ≤ 1", int(at_c.sum()), np.flatnonzero(at_c & bad))]
    quantities = {"primal_objective": primal_obj, "dual_objective": dual_obj,
                  "duality_gap_abs": primal_obj - dual_obj,
                  "n_support": int((free | at_c).sum()), "n_free": int(free.sum()),
                  "n_at_C": int(at_c.sum())}
    who = solution.method + (f", {solution.backend}" if solution.backend else "")
    return Certificate(checks, table, quantities,
                       title=f"{problem.certificate_name} certificate ({who})")
