"""The one-class SVM's part of its certificate: the support table and the ν-property.

The conditions are those of the standard dual QP (:mod:`margin_opt.kkt`) with y = 1,
p = 0, uᵢ = sᵢ and Δ = νΣs, so sᵢ = f(xᵢ) = Σⱼ αⱼK(xᵢ, xⱼ) − ρ and, point by point,

    α = 0 ⇒ f(x) ≥ 0 (inside),   0 < α < s ⇒ f(x) = 0 (on the boundary),
    α = s ⇒ f(x) ≤ 0 (on it or outside: the outliers have ξ > 0).

The ν-property (Schölkopf et al. 2001, Proposition 4) follows from Σα = νΣs and the
box: every outlier has αᵢ = sᵢ, so their weight is at most Σα = νΣs, and every αᵢ ≤ sᵢ,
so the weight of the support vectors is at least νΣs.  The certificate reads it from
the answer itself:

    (outlier weight) / Σs  ≤  ν  ≤  (support-vector weight) / Σs,

outliers being the points with ξᵢ > tol (f(xᵢ) < −tol, units of f) and support vectors
those with αᵢ ≠ 0 (the exported ``support_``); a point within tol of the boundary is a
tie and counts as neither outlier nor inlier.  Without sample weights the fractions
are plain counts over n.

References
----------
B. Schölkopf, J. C. Platt, J. Shawe-Taylor, A. J. Smola and R. C. Williamson,
"Estimating the support of a high-dimensional distribution", Neural Computation 13(7),
2001, Proposition 4.
"""

from __future__ import annotations

import numpy as np

from ..certificate import Check, TableRow

__all__ = ["table", "nu_property"]


def nu_property(alpha, decision, weight, nu, tol) -> dict:
    """The ν-property of an answer: the fractions it bounds, and how far it is violated.

    Parameters
    ----------
    alpha : ndarray of shape (n_samples,)
        Multipliers (any scale: only αᵢ ≠ 0 is read).
    decision : ndarray of shape (n_samples,)
        f(xᵢ) on the training points, with −ρ.
    weight : ndarray of shape (n_samples,)
        Sample weights sᵢ ≥ 0 (ones without weights).
    nu : float
    tol : float
        The tie tolerance on f: outliers are the points with f(xᵢ) < −tol.

    Returns
    -------
    result : dict
        ``outlier_fraction`` (Σ_{f < −tol} sᵢ / Σs), ``support_fraction``
        (Σ_{α ≠ 0} sᵢ / Σs), ``n_outliers``, ``n_support`` and ``violation``:
        max(0, outlier_fraction − ν, ν − support_fraction).
    """
    weight = np.asarray(weight, dtype=float)
    total = float(weight.sum())
    outliers = np.asarray(decision) < -tol
    support = np.asarray(alpha) != 0
    out_frac = float(weight[outliers].sum()) / total
    sv_frac = float(weight[support].sum()) / total
    return {"outlier_fraction": out_frac, "support_fraction": sv_frac,
            "n_outliers": int(np.count_nonzero(outliers)),
            "n_support": int(np.count_nonzero(support)),
            "violation": max(0.0, out_frac - nu, nu - sv_frac)}


def table(problem, res, alpha, solution, tol):
    """(extra checks, table rows, quantities) of the one-class certificate.

    Parameters
    ----------
    problem : OneClassProblem
    res : margin_opt.kkt.DualQPChecks
        On the standard form (LIBSVM's scale): ``res.s`` is f on the training points.
    alpha : ndarray of shape (n_samples,)
        As certified.
    solution : Solution
        Its intercept is −ρ.
    tol : float

    Returns
    -------
    checks : list of Check
        ``nu_property``: max(0, outlier fraction − ν, ν − support fraction), held to
        ``tol`` (a fraction: with n points one outlier too many is 1/n).
    rows : list of TableRow
    quantities : dict
        ``nu``, ``rho`` (LIBSVM's scale), ``outlier_fraction``, ``support_fraction``,
        ``n_outliers``, ``n_support``, ``n_free``, ``n_at_bound``.
    """
    zero, free, at_u = res.zero, res.free, res.at_upper
    rows = [TableRow("α = 0", "f(x) ≥ 0", int(zero.sum()), res.contradicting(zero, tol)),
            TableRow("0 < α < s", "f(x) = 0", int(free.sum()), res.contradicting(free, tol)),
            TableRow("α = s", "f(x) ≤ 0", int(at_u.sum()), res.contradicting(at_u, tol))]
    nu = nu_property(alpha, res.s, problem.sample_weight, problem.nu, tol)
    checks = [Check("nu_property", nu.pop("violation"), tol,
                    "max(0, outlier fraction − ν, ν − support fraction): outliers "
                    "f < −tol, support vectors α ≠ 0, weighted by sᵢ/Σs")]
    quantities = {"nu": problem.nu, "rho": -solution.b, **nu, "n_free": int(free.sum()),
                  "n_at_bound": int(at_u.sum())}
    return checks, rows, quantities
