"""The C-SVC's part of its certificate: the support-vector table of the lecture notes.

The conditions themselves are those of the standard dual QP
(:mod:`margin_opt.kkt`): with sᵢ = yᵢfᵢ − 1 they read, point by point,

    α = 0 ⇒ y f ≥ 1,   0 < α < C ⇒ y f = 1,   α = C ⇒ y f ≤ 1

(the hard margin has no α = C row).  Points with Cᵢ = 0 (zero sample or class
weight) have α fixed at 0 and take no part.

References
----------
C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.
"""

from __future__ import annotations

import numpy as np

from ..certificate import TableRow

__all__ = ["table", "table_rows"]


def table(problem, res, alpha, solution, tol):
    """(extra checks, table rows, quantities) of the SVM certificate.

    Parameters
    ----------
    problem : SVMProblem
    res : margin_opt.kkt.DualQPChecks
    alpha : ndarray of shape (n_samples,)
    solution : Solution
    tol : float

    Returns
    -------
    checks : list of Check
        None beyond the standard dual's.
    rows : list of TableRow
    quantities : dict
        ``n_support`` (every α ≠ 0: the exported support vectors), ``n_free``,
        ``n_at_C`` (categories at the table's threshold; and ``n_fixed_C0`` for zero weights,
        ``geometric_margin`` 2/‖w‖ for an explicit hard margin).
    """
    zero, free, at_c = res.zero, res.free, res.at_upper
    rows, quantities = table_rows(
        (_count(zero), _count(free), _count(at_c)),
        (res.contradicting(zero, tol), res.contradicting(free, tol),
         res.contradicting(at_c, tol)),
        _count(np.asarray(alpha) != 0), _count(problem.C_i == 0), problem.hard_margin)
    if problem.hard_margin and solution.w is not None:
        quantities["geometric_margin"] = 2.0 / float(np.linalg.norm(solution.w))
    return [], rows, quantities


def table_rows(counts, contradicting, n_support, n_fixed, hard_margin):
    """(table rows, quantities) of the SVM certificate from the categories' counts.

    Parameters
    ----------
    counts : tuple of int
        Points with α = 0, 0 < α < C and α = C (at the table's threshold).
    contradicting : tuple of ndarray of int
        The points of each category whose margin contradicts it.
    n_support : int
        Every α ≠ 0 (the exported support vectors).
    n_fixed : int
        Points with Cᵢ = 0.
    hard_margin : bool
        No α = C row.

    Returns
    -------
    rows : list of TableRow
    quantities : dict
    """
    rows = [TableRow("α = 0", "y f(x) ≥ 1", counts[0], contradicting[0]),
            TableRow("0 < α < C", "y f(x) = 1", counts[1], contradicting[1])]
    if not hard_margin:
        rows.append(TableRow("α = C", "y f(x) ≤ 1", counts[2], contradicting[2]))
    # the exported model's support vectors (every α ≠ 0, ``support_``); the table's
    # categories read α at the threshold min(√tol, 0.5)
    quantities = {"n_support": n_support, "n_free": counts[1], "n_at_C": counts[2]}
    if not hard_margin and n_fixed:
        quantities["n_fixed_C0"] = n_fixed
    return rows, quantities


def _count(mask) -> int:
    """The number of True entries of a mask (as int)."""
    return int(np.count_nonzero(mask))
