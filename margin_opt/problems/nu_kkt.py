"""The ν problems' part of their certificate: the support table, the ν-property and
the equivalent one-equality problem.

The KKT conditions are those of the standard dual QP (:mod:`margin_opt.kkt`) relaxed
at the answer's multiplier c of eᵀα = Δ₂ (sₜ = yₜf(x_{index[t]}) + c + pₜ), so point
by point, for the ν-SVC in LIBSVM's scale (c = −r)::

    α = 0 ⇒ y f(x) ≥ r,   0 < α < u ⇒ y f(x) = r,   α = u ⇒ y f(x) ≤ r,

and for the ν-SVR the ε-SVR's tube table with ε = c.

**The ν-property** (Schölkopf et al. 2000, Propositions 1 and 5) follows from
eᵀα = νΣu and the box: every margin error (ξ > 0) has αₜ = uₜ, so their weight is at
most νΣu; every αₜ ≤ uₜ, so the support vectors' weight is at least νΣu.  The
certificate reads it from the answer itself, weighted by uᵢ/Σu (plain counts over n
without weights)::

    (margin-error weight) / Σu  ≤  ν  ≤  (support-vector weight) / Σu,

margin errors being the points with s < −tol (units of f, LIBSVM's scale: y f(x) < r −
tol for the ν-SVC, |z − f(x)| > ε + tol for the ν-SVR), support vectors those with a
nonzero multiplier (the exported ``support_``).  Held to ``tol`` as a fraction.

**The equivalent problem.**  ν-SVC: the C-SVC with Cᵢ = uᵢ/r (C = 1/r) and the answer
α/r, b/r, certified by :class:`~margin_opt.problems.svm.SVMProblem`'s own certificate at
tol·max(1, 1/r) (its f is the ν answer's divided by r, and so are its residuals).
ν-SVR: the ε-SVR with the same C, ε = c and the same (a, a*), b, certified by
:class:`~margin_opt.problems.svr.SVRProblem`'s certificate at tol.

References
----------
B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
algorithms", Neural Computation 12(5), 2000.
C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
algorithms", Neural Computation 13(9), 2001 (C = 1/r).
"""

from __future__ import annotations

import numpy as np

from ..certificate import Check, TableRow
from ..kkt import category_threshold, violating_pair_gap
from . import svr_kkt
from .one_class_kkt import nu_property

__all__ = ["table", "equivalent_checks"]


def table(problem, res, alpha, solution, tol):
    """(checks, table rows, quantities) of a ν certificate, read on the relaxed form.

    Parameters
    ----------
    problem : NuSVCProblem or NuSVRProblem
        The relaxed view (its standard form p + c).
    res : margin_opt.kkt.DualQPChecks
    alpha : ndarray of shape (n_variables,)
    solution : Solution
    tol : float

    Returns
    -------
    checks : list of Check
        ``nu_property`` (and the ν-SVR's ``a_times_a_star``).
    rows : list of TableRow
    quantities : dict
        ``nu``, ``error_fraction``, ``support_fraction``, ``n_errors``, ``n_support``.
    """
    if problem.model == "nu-svc":
        zero, free, at_u = res.zero, res.free, res.at_upper
        rows = [TableRow("α = 0", "y f(x) ≥ r", int(zero.sum()), res.contradicting(zero, tol)),
                TableRow("0 < α < u", "y f(x) = r", int(free.sum()),
                         res.contradicting(free, tol)),
                TableRow("α = u", "y f(x) ≤ r", int(at_u.sum()), res.contradicting(at_u, tol))]
        checks = []
        nu = nu_property(alpha, res.s, problem.sample_weight, problem.nu, tol)
        extra = {"n_free": int(free.sum()), "n_at_bound": int(at_u.sum())}
    else:
        # (not the ε-SVR's a·a* = 0: at ε = 0 both multipliers of a point may be
        # nonzero, and the ν problem's Σ(a + a*) = νΣu may need them)
        _, rows, _ = svr_kkt.table(problem, res, alpha, tol)
        checks = []
        n = problem.n_samples
        nu = nu_property(alpha[:n] + alpha[n:], np.minimum(res.s[:n], res.s[n:]),
                         problem.sample_weight, problem.nu, tol)
        # support vectors counted per multiplier (a point with a, a* ≠ 0 twice), the form
        # Σ(a + a*) = νΣu bounds whatever ε; per point where ε > 0 (then a·a* = 0)
        w = np.r_[problem.sample_weight, problem.sample_weight]
        sv = float(w[alpha != 0].sum()) / float(problem.sample_weight.sum())
        nu["support_fraction"] = sv
        nu["violation"] = max(0.0, nu["outlier_fraction"] - problem.nu, problem.nu - sv)
        extra = {}
    checks.append(Check("nu_property", nu.pop("violation"), tol,
                        "max(0, error fraction − ν, ν − support fraction): margin errors "
                        "s < −tol, support vectors α ≠ 0, weighted by uᵢ/Σu"))
    quantities = {"nu": problem.nu, "nu_mvp_gap": sign_gap(problem, res, alpha, tol),
                  "error_fraction": nu["outlier_fraction"],
                  "support_fraction": nu["support_fraction"], "n_errors": nu["n_outliers"],
                  "n_support": nu["n_support"], **extra}
    return checks, rows, quantities


def sign_gap(problem, res, alpha, tol) -> float:
    """LIBSVM's ν stopping rule, max over the signs of y of m(α) − M(α) within the sign
    (Chang and Lin 2001): the optimality of α for both equalities, whatever b and c.
    Read from s, which differs from the gradient by a constant on each sign."""
    qp = problem._qp
    tau = category_threshold(tol)
    scale = problem._alpha_scale(alpha)
    gap = 0.0
    for sign in (qp.y > 0, qp.y < 0):
        gap = max(gap, violating_pair_gap(np.ones(int(sign.sum())), alpha[sign], res.s[sign],
                                          qp.upper[sign], tau, scale))
    return gap


def _worst(cert, tol_eq) -> float:
    """The equivalent certificate's verdict as one number: tol_eq times its largest
    check-to-tolerance ratio (∞ for a failed check held to 0, ≥ 2·tol_eq for a table
    with contradicting points), so that it is ≤ tol_eq exactly when that certificate
    holds."""
    ratio = 0.0
    for c in cert.checks:
        if c.tol > 0:
            ratio = max(ratio, c.value / c.tol)
        elif not c.passed:
            ratio = float("inf")
    if any(r.n_contradicting for r in cert.table):
        ratio = max(ratio, 2.0)
    return ratio * tol_eq


def equivalent_checks(problem, solution, c, tol):
    """(checks, notes, quantities) of the equivalent one-equality problem.

    Parameters
    ----------
    problem : NuSVCProblem or NuSVRProblem
    solution : Solution
    c : float
        The answer's multiplier of eᵀα = Δ₂ (−r for the ν-SVC, ε for the ν-SVR).
    tol : float

    Returns
    -------
    checks : list of Check
        ν-SVC: ``margin_positive`` (r > 0) and ``equivalent_c_svc``; ν-SVR:
        ``equivalent_epsilon_svr`` (where ε ≥ 0).
    notes : list of str
    quantities : dict
        ``C_equivalent`` = 1/r, or ``epsilon`` = c.
    """
    notes = []
    if problem.model == "nu-svc":
        r = -c
        checks = [Check("margin_positive", 0.0 if r > 0 else float("inf"), 0.0,
                        "r > 0: the margin of the answer (LIBSVM divides by it)")]
        if not r > 0:
            notes.append(f"r = {r:.3g} ≤ 0: no equivalent C-SVC (C = 1/r).")
            return checks, notes, {"r": r}
        tol_eq = tol * max(1.0, 1.0 / r)
        eq_problem, eq_sol = problem.equivalent_solution(solution, r)
        cert = eq_problem.certify(eq_sol, tol=tol_eq)
        checks.append(Check("equivalent_c_svc", _worst(cert, tol_eq), tol_eq,
                            f"the C-SVC with C = 1/r = {1 / r:.6g} certifies α/r, b/r at "
                            f"tol·max(1, 1/r) (its worst check ÷ tolerance × tol_eq"
                            + (f"; failed {', '.join(cert.failed())}" if not cert.ok else "")
                            + ")"))
        return checks, notes, {"r": r, "C_equivalent": 1.0 / r}
    if not c >= 0:
        notes.append(f"ε = {c:.3g} < 0: there is no equivalent ε-SVR.")
        return [Check("equivalent_epsilon_svr", float("inf"), tol, "ε ≥ 0 needed")], notes, \
            {"epsilon": c}
    eq_problem, eq_sol = problem.equivalent_solution(solution, c)
    cert = eq_problem.certify(eq_sol, tol=tol)
    return [Check("equivalent_epsilon_svr", _worst(cert, tol), tol,
                  f"the ε-SVR with the same C and ε = {c:.6g} certifies (a, a*), b"
                  + (f"; failed {', '.join(cert.failed())}" if not cert.ok else ""))], \
        notes, {"epsilon": c}
