"""The L1-regularized squared hinge by primal coordinate descent (liblinear's ``-s 5``).

``min_w ‖w‖₁ + Σᵢ Cᵢ max(0, 1 − yᵢwᵀxᵢ)²``: one feature at a time, a Newton step on the
smooth loss with the L1 term's soft threshold and an Armijo line search (CDN), the
features whose zero weight looks optimal shrunk between passes.  The passes are compiled
(``margin_opt._core.l1_squared_hinge``, src/core/linear.cpp); this module runs them to
liblinear's stopping rule and on, tightening it, until the duality gap the problem
measures (:meth:`margin_opt.problems.l1_svm.L1SVMProblem.measure`: the duality gap and the
optimality conditions) is at most ``gap_tol``.

References
----------
K.-W. Chang, C.-J. Hsieh and C.-J. Lin, "Coordinate descent method for large-scale
L2-loss linear support vector machines", JMLR 9:1369–1398, 2008.
G.-X. Yuan, K.-W. Chang, C.-J. Hsieh and C.-J. Lin, "A comparison of optimization methods
and software for large-scale L1-regularized linear classification", JMLR 11, 2010.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeResult

from ... import _core
from ...exceptions import ConvergenceWarning
from .coordinate import linear_x

__all__ = ["solve_l1_squared_hinge"]

#: liblinear's stopping rule for ``-s 5`` is relative to the first pass's summed
#: violation; where the gap is still above ``gap_tol`` the rule is tightened by this factor
EPS_SHRINK = 0.1
#: the tightest relative rule tried (rounding below it)
EPS_FLOOR = 1e-15


def solve_l1_squared_hinge(X, y, C, measure, *, tol=1e-4, gap_tol=None, max_iter=1000,
                           random_state=0, w0=None):
    """Coordinate descent on ``min ‖w‖₁ + Σ Cᵢ max(0, 1 − yᵢwᵀxᵢ)²``.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels ±1.
    C : ndarray of shape (n_samples,)
        Cᵢ ≥ 0, finite.
    measure : callable
        ``measure(w) -> float``: the largest of the certificate's measures of w (the
        relative duality gap, the optimality conditions' violation: the problem's own).
    tol : float, default=1e-4
        liblinear's stopping rule: the summed violation of the optimality conditions
        at most ``tol`` times the first pass's.
    gap_tol : float, optional
        Go on (the rule tightened by :data:`EPS_SHRINK`) until ``measure(w) ≤ gap_tol``.
    max_iter : int, default=1000
        Passes over the features, in all.
    random_state : int, default=0
        Seed of the visiting order.
    w0 : ndarray of shape (n_features,), optional
        A start (zeros by default).

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x`` (w), ``nit`` (passes), ``status`` ("optimal" or "max_iter"), ``message``,
        ``violation`` (the last pass's summed violation), ``measure`` (the certificate's
        largest measure at the end), ``timings``.
    """
    t0 = time.perf_counter()
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    cols = linear_x(X.T.tocsr() if sp.issparse(X) else np.ascontiguousarray(np.asarray(X).T))
    sq = X.multiply(X) if sp.issparse(X) else np.square(X)
    col_sq = np.ascontiguousarray(np.asarray(sq.T @ C).ravel(), dtype=np.float64)
    d = X.shape[1]
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
    margin = 1.0 - y * np.asarray(X @ w).ravel()
    order = np.arange(d, dtype=np.int64)
    state = _core.L1State()
    state.rng = int(random_state) * 2654435761 % (2 ** 64) or 1
    eps, rel_gap, violation = float(tol), np.inf, np.inf
    while True:
        violation = _core.l1_squared_hinge(cols, y, C, col_sq, w, margin, order, state, eps,
                                           int(max_iter))
        # the margins, kept with w step by step, recomputed for the gap
        margin[:] = 1.0 - y * np.asarray(X @ w).ravel()
        rel_gap = float(measure(w))
        if gap_tol is None or rel_gap <= gap_tol or state.passes >= max_iter \
                or eps <= EPS_FLOOR:
            break
        eps = max(EPS_FLOOR, eps * EPS_SHRINK)
        state.active, state.gmax_old = -1, np.inf
    reached = state.passes < max_iter and (gap_tol is None or rel_gap <= gap_tol)
    if reached:
        status, msg = "optimal", (f"summed violation {violation:.3g} ≤ {eps:g} × the first "
                                  f"pass's after {state.passes} passes; certificate measure "
                                  f"{rel_gap:.3g}")
    else:
        status, msg = "max_iter", (f"stopped at max_iter={max_iter} passes (certificate measure "
                                   f"{rel_gap:.3g}); raise max_iter or tol.")
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)
    total = time.perf_counter() - t0
    return OptimizeResult(x=w, nit=int(state.passes), status=status,
                          success=status == "optimal", message=msg, violation=violation,
                          measure=rel_gap, timings={"solve": total, "total": total})
