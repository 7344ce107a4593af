"""The ε-SVR's part of its certificate: the tube table and the product aᵢâᵢ.

The conditions are those of the standard dual QP (:mod:`margin_opt.kkt`) on
LIBSVM's 2n-variable form, with residuals rᵢ = yᵢ − f(xᵢ): s = ε − r for aᵢ and
s = ε + r for âᵢ.  The tube table reads them point by point: inside the tube
a = â = 0 (|r| ≤ ε), on the upper edge 0 < a < C (r = ε), above it a = C (r ≥ ε),
on the lower edge 0 < â < C (r = −ε), below it â = C (r ≤ −ε); and since a point
cannot be on both sides of the tube, aᵢâᵢ = 0 (for ε > 0).

References
----------
A. J. Smola and B. Schölkopf, "A tutorial on support vector regression",
Statistics and Computing 14, 2004, §1.4 (the KKT conditions of the ε-SVR).
"""

from __future__ import annotations

import numpy as np

from ..certificate import Check, TableRow

__all__ = ["table"]


def table(problem, res, alpha, tol):
    """(extra checks, table rows, quantities) of the SVR certificate.

    Parameters
    ----------
    problem : SVRProblem
    res : margin_opt.kkt.DualQPChecks
        On the 2n-variable form.
    alpha : ndarray of shape (2 n_samples,)
        [a; â] as certified.
    tol : float

    Returns
    -------
    checks : list of Check
        ``a_times_a_star``: max aᵢâᵢ ÷ max(1, C)².
    rows : list of TableRow
    quantities : dict
        ``n_support``.
    """
    n = problem.n_samples
    a, a_star = alpha[:n], alpha[n:]
    cs = max(1.0, float(problem.C_i.max()))
    zero, free, at_c = res.zero, res.free, res.at_upper
    off = np.zeros(n, dtype=bool)

    def upper_side(mask):      # a-variables: rows 0..n−1
        return res.contradicting(np.r_[mask[:n], off], tol)

    def lower_side(mask):      # â-variables: rows n..2n−1, reported as data rows
        return res.contradicting(np.r_[off, mask[n:]], tol) - n

    inside = zero[:n] & zero[n:]
    outside_tube = (res.s[:n] < -tol) | (res.s[n:] < -tol)     # |r| > ε + tol
    rows = [
        TableRow("inside (a = â = 0)", "|r| ≤ ε", int(inside.sum()),
                 np.flatnonzero(inside & outside_tube)),
        TableRow("upper edge (0 < a < C)", "r = ε", int(free[:n].sum()), upper_side(free)),
        TableRow("above (a = C)", "r ≥ ε", int(at_c[:n].sum()), upper_side(at_c)),
        TableRow("lower edge (0 < â < C)", "r = −ε", int(free[n:].sum()), lower_side(free)),
        TableRow("below (â = C)", "r ≤ −ε", int(at_c[n:].sum()), lower_side(at_c)),
    ]
    product = float(np.abs(a * a_star).max(initial=0.0)) / cs ** 2
    checks = [Check("a_times_a_star", product, tol, "max aᵢâᵢ ÷ max(1, C)²")]
    return checks, rows, {"n_support": int((~inside).sum())}
