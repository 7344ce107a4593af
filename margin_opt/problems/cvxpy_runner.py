"""Compile and solve a cvxpy problem with timings, mapping statuses to our errors.

Shared by every problem module: compilation and solving are timed separately
(cvxpy's compilation of a dense kernel dual is a large part of its cost), an
inaccurate answer warns, and infeasible / unbounded / failed solves raise
margin_opt's own exceptions instead of cvxpy tracebacks.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..exceptions import (
    WARNINGS_LOCK,
    InaccurateSolutionWarning,
    InfeasibleError,
    SolverError,
    UnboundedError,
)
from ..lazy import lazy_module

if TYPE_CHECKING:
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")  # imported on first use: the cvxpy forms only

__all__ = ["run_cvxpy", "CvxpyRun", "DEFAULT_SOLVER", "CLARABEL_TIGHT"]

DEFAULT_SOLVER = "CLARABEL"

#: Clarabel settings used unless overridden: tighter than its defaults (1e-8) so
#: that certificates at tol=1e-6 see an answer accurate beyond the tolerance.
CLARABEL_TIGHT = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11,
                  "tol_ktratio": 1e-8}


@dataclass(frozen=True)
class CvxpyRun:
    """What one cvxpy solve reported.

    Attributes
    ----------
    status : str
        ``"optimal"`` or ``"optimal_inaccurate"``.
    timings : dict
        ``{"compile": s, "solve": s, "unpack": s}`` in seconds.
    n_iter : int or None
    solver : str
    """

    status: str
    timings: dict
    n_iter: int | None
    solver: str


def run_cvxpy(problem: cp.Problem, *, solver=None, verbose=False, on_infeasible=None,
              on_unbounded=None, tight=True, **options) -> CvxpyRun:
    """Compile, solve and unpack ``problem``; the one place cvxpy is called.

    Parameters
    ----------
    problem : cvxpy.Problem
    solver : str, optional
        A cvxpy solver name (default ``"CLARABEL"``, an interior-point conic
        solver with tight default tolerances 1e-8).
    verbose : bool, default=False
    on_infeasible, on_unbounded : callable, optional
        Called with the status to build the exception raised for an infeasible
        or unbounded problem (e.g. ``NotSeparableError`` for a hard margin); return
        None to use the generic error.
    tight : bool, default=True
        Use :data:`CLARABEL_TIGHT` under the options for Clarabel.
    **options
        Passed to the solver; they override the tight defaults.

    Returns
    -------
    run : CvxpyRun
        An ``optimal_inaccurate`` status warns (InaccurateSolutionWarning).

    Raises
    ------
    InfeasibleError, UnboundedError, SolverError
    """
    solver = (solver or DEFAULT_SOLVER).upper()
    if solver == "CLARABEL" and tight:
        options = {**CLARABEL_TIGHT, **options}
    if solver not in cp.installed_solvers():
        raise SolverError(f"solver {solver!r} is not installed; installed: "
                          f"{cp.installed_solvers()}. Pass solver=None for {DEFAULT_SOLVER}.")
    t0 = time.perf_counter()
    try:
        data, chain, inverse = problem.get_problem_data(solver)
    except cp.error.SolverError as exc:
        raise SolverError(f"cvxpy could not compile the problem for {solver}: {exc}") from None
    except (AttributeError, TypeError, IndexError, KeyError, ArithmeticError) as exc:
        # cvxpy's own bugs on degenerate data (e.g. "'Constant' object has no attribute
        # 'id'" when a quadratic form's matrix is folded into a constant): never raw
        raise SolverError(
            f"cvxpy failed while compiling the problem for {solver} ({type(exc).__name__}: "
            f"{exc}); this happens on degenerate data (kernel values that overflow or "
            "vanish, features of an extreme scale): scale the features (e.g. "
            "sklearn.preprocessing.StandardScaler) or choose another method (e.g. 'smo').") \
            from None
    t1 = time.perf_counter()
    if solver == "HIGHS" and not verbose:
        _silence_highs_banner()
    try:
        raw = chain.solve_via_data(problem, data, warm_start=False, verbose=verbose,
                                   solver_opts=options)
    except cp.error.SolverError as exc:
        raise SolverError(f"{solver} failed ({exc}); try another solver, e.g. solver='SCS', "
                          "or rescale the data.") from None
    t2 = time.perf_counter()
    # as cvxpy's Problem.solve does: the solver's inverse data carries its options
    from cvxpy.reductions.solvers.solver_inverse_data import SolverInverseData

    inverse[-1] = SolverInverseData(inverse[-1], chain.solver, options)
    # replaced by our own warning below (under the lock: one-vs-one pairs run on threads)
    with WARNINGS_LOCK, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        try:
            problem.unpack_results(raw, chain, inverse)
        except cp.error.SolverError:
            raise SolverError(f"{solver} failed on this problem (no usable answer); rescale the "
                              "data (e.g. StandardScaler) or try another solver, e.g. "
                              "solver='SCS'.") from None
    t3 = time.perf_counter()
    status = problem.status
    n_iter = getattr(problem.solver_stats, "num_iters", None)
    timings = {"compile": t1 - t0, "solve": t2 - t1, "unpack": t3 - t2}
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise ((on_infeasible and on_infeasible(status)) or
               InfeasibleError(f"{solver} reports the problem {status}."))
    if status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        raise ((on_unbounded and on_unbounded(status)) or
               UnboundedError(f"{solver} reports the problem {status}."))
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise SolverError(f"{solver} stopped with status {status!r}; try another solver "
                          "(solver='SCS' or 'OSQP') or rescale the data.")
    if status == cp.OPTIMAL_INACCURATE:
        warnings.warn(f"{solver} returned an inaccurate solution (status optimal_inaccurate): "
                      "check it with problem.certify(solution), or try another solver.",
                      InaccurateSolutionWarning, stacklevel=3)
    return CvxpyRun(status, timings, n_iter, solver)


_banner_lock = threading.Lock()
_banner_done = []


def _silence_highs_banner():
    """Let HiGHS print its banner to /dev/null.

    HiGHS writes "Running HiGHS ... Copyright ..." on file descriptor 1 when the
    process creates its first ``Highs`` object, whatever ``log_to_console`` says (cvxpy
    sets that option only after creating the object).  Creating that first object here,
    with descriptor 1 pointed at /dev/null for the moment it takes, keeps a solve with
    ``verbose=False`` quiet; later objects print nothing unless ``verbose``.
    """
    if _banner_done:
        return
    with _banner_lock:
        if _banner_done:
            return
        try:
            import highspy
        except ImportError:     # cvxpy's HIGHS interface is then not installed either
            _banner_done.append(True)
            return
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 1)
                try:
                    highspy.Highs()
                finally:
                    os.dup2(saved, 1)
        finally:
            os.close(saved)
        _banner_done.append(True)
