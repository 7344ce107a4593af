"""Many binary C-SVC problems read at once: the pairs of a one-vs-one fit.

A one-vs-one fit solves k(k − 1)/2 small C-SVCs; building each pair's problem object
and reading and certifying it through the solve path
(:func:`margin_opt.problems.solve_path.finish`: Kβ, the certificate's ~40 small array
operations, its report) costs more than its SMO run.  Here the numbers of each pair's
certificate are those that :func:`margin_opt.kkt.dual_qp_reading` measured on the
worker thread that solved it, while its kernel matrix was at hand
(:func:`margin_opt.estimators.ovo.fit_one_vs_one`), and this module only turns them
into the pair's :class:`~margin_opt.solution.Solution` and
:class:`~margin_opt.certificate.Certificate`: the same checks, tolerances, table and
quantities as :meth:`SVMProblem.certify <margin_opt.problems.base.KernelProblem.certify>`
of the same answer (its values to rounding: Kβ is summed in another order).

A reading is used only where it is the whole story (:func:`clean`): SMO's status
optimal, finite, no multiplier that the solve path would drop as negligible, and, when
certified, every check passed and no point contradicting its category.  Any other
pair goes through the whole solve path (its repairs, its warnings, its errors).

References
----------
C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.
C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM TIST
2(3), 2011, §4.1 (the stopping rule), §7 (one-vs-one).
"""

from __future__ import annotations

import numpy as np

from .. import kkt
from ..certificate import Certificate
from ..solution import Solution, SVCVariables
from ..solvers.smo.driver import PairSource, solve_pairs
from .svm import SVMProblem
from .svm_kkt import table_rows

__all__ = ["clean", "pair_solution", "solve_pairs", "PairSource"]

_R = {name: k for k, name in enumerate(kkt.READING)}
_NONE = np.empty(0, dtype=np.int64)


def clean(res, alpha, num, certify) -> bool:
    """Whether pair's reading ``num`` (:data:`margin_opt.kkt.READING`) is its answer's
    whole story: SMO's ``res`` optimal, α finite, no negligible multiplier, and with
    ``certify``, no point contradicting its category (the checks are then held to their
    tolerance by the caller: :attr:`Certificate.ok`)."""
    if res.status != "optimal" or num[_R["n_negligible"]] != 0 or \
            not np.isfinite(alpha).all():
        return False
    return not certify or not (num[_R["bad_zero"]] or num[_R["bad_free"]]
                               or num[_R["bad_at_upper"]])


def pair_solution(alpha, y, p, b, decision, xi, num, res, *, tol=None, alpha_scale=1.0,
                  n_fixed=0, method="smo"):
    """A pair's Solution (and certificate) from its reading.

    Parameters
    ----------
    alpha, y, p : ndarray of shape (m,)
        The pair's multipliers, labels ±1 and linear term (−1).
    b : float
    decision, xi : ndarray of shape (m,)
        f (with b) and the slacks, as read.
    num : ndarray of shape (len(margin_opt.kkt.READING),)
        The reading; :func:`clean` must hold.
    res : scipy.optimize.OptimizeResult
        SMO's result (the Solution's ``raw``, status, iterations and message).
    tol : float, optional
        The certificate's tolerance; None: no certificate.
    alpha_scale : float, default=1.0
        max(1, largest Cᵢ) of the pair.
    n_fixed : int, default=0
        Points with Cᵢ = 0.
    method : str, default="smo"

    Returns
    -------
    solution : Solution
        As :func:`~margin_opt.problems.solve_path.finish` makes it, with its
        ``certificate``.
    certificate : Certificate or None
    """
    quad = float(num[_R["quad"]])
    primal = 0.5 * quad + float(num[_R["slack"]])
    dual = -(0.5 * quad + float(p @ alpha))
    sol = Solution(variables=SVCVariables(alpha=alpha, xi=xi), dual_coef=(y * alpha + 0.0)[None],
                   intercept=np.array([b]), decision=decision, primal_objective=primal,
                   dual_objective=dual, support_=np.flatnonzero(alpha), status=res.status,
                   method=method, backend=method, n_iter=res.nit, message=res.message,
                   formulation="DualQP", raw=res, timings=dict(res.timings))
    if tol is None:
        return sol, None
    checks = kkt.check_list(kkt.Measured(num[_R["primal_res"]], num[_R["box"]], num[_R["eq"]],
                                         0.0, "holds by construction (kernel, dual point)",
                                         num[_R["comp"]], primal, dual, num[_R["optimality"]]),
                            tol, alpha_scale, True)
    rows, more = table_rows((int(num[_R["n_zero"]]), int(num[_R["n_free"]]),
                             int(num[_R["n_at_upper"]])), (_NONE, _NONE, _NONE),
                            int(num[_R["n_support"]]), int(n_fixed), False)
    quantities = {"primal_objective": primal, "dual_objective": dual,
                  "duality_gap_abs": primal - dual, "b": b, **more}
    cert = Certificate(checks, rows, quantities,
                       title=f"{SVMProblem.certificate_name} certificate ({method}, {method})")
    sol.record_certificate(cert)
    return sol, cert
