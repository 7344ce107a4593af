"""Benchmark suite ``subgradient``: Pegasos and batch subgradient against the exact optimum.

Synthetic ``make_classification(n, 20 features, 10 informative, flip_y=0.05)``,
standardized, linear soft-margin SVM with C = 1 (λ = 1/n).  In one process, side by
side: the exact optimum (cvxpy primal, Clarabel), scikit-learn's ``SGDClassifier``
(hinge, alpha = 1/n) and ``LinearSVC`` (hinge), Pegasos given SGDClassifier's time
and 10× that time, and batch subgradient descent given 10× that time.  Each row
reports seconds, J and the relative suboptimality (J − J*)/J* of J in the
average-loss scale (the C form ½‖w‖² + CΣξ is C·n·J, so the ratio is the same).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from ..problems.svm import SVMProblem
from ..progress import progress
from ..solvers.subgradient import SCHEDULES, default_step_size, pegasos, subgradient_descent
from ..standard_forms import PrimalERM

__all__ = ["run", "format_rows", "convergence_runs", "make_problem"]


def make_problem(n, *, C=1.0, random_state=0) -> PrimalERM:
    """The benchmark's problem as a PrimalERM (n × 20, standardized, λ = 1/(C n))."""
    X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=random_state)
    X = StandardScaler().fit_transform(X)
    return PrimalERM(X, np.where(y == 1, 1.0, -1.0), 1.0 / (C * n), np.ones(n))


def _cvxpy_optimum(erm):
    """min J by the cvxpy primal with Clarabel: (J*, seconds)."""
    import cvxpy as cp

    n, d = erm.X.shape
    w, b = cp.Variable(d), cp.Variable()
    hinge = cp.pos(1 - cp.multiply(erm.y, erm.X @ w + b))
    prob = cp.Problem(cp.Minimize(erm.lam / 2 * cp.sum_squares(w) + cp.sum(hinge) / n))
    t0 = time.perf_counter()
    prob.solve(solver="CLARABEL")
    return float(prob.value), time.perf_counter() - t0


def _timed(fn):
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        out = fn()
    return out, time.perf_counter() - t0, any(
        issubclass(c.category, ConvergenceWarning) for c in caught)


def _time_limit(seconds):
    """A callback that stops a run after ``seconds`` of wall clock."""
    t0 = time.perf_counter()
    return lambda *args: time.perf_counter() - t0 >= seconds


def _warm_up():
    """Run each timed path once outside the timings (its imports and first calls)."""
    erm = make_problem(200)
    pegasos(erm, max_iter=1, random_state=0)
    SVMProblem(erm.X, erm.y, kernel="linear").solve("pegasos", max_iter=1, random_state=0)


def run(quick=False, *, sizes=None, random_state=0):
    """Run the suite.

    Parameters
    ----------
    quick : bool, default=False
        Small sizes (n = 2000) for a smoke run; the full suite uses n = 20000 and
        100000 (about 4 minutes on 2 cores).
    sizes : sequence of int, optional
        Override the sample sizes.
    random_state : int, default=0
        Seed of the data and of Pegasos' sampling.

    Returns
    -------
    rows : list of dict
        One per (n, method): ``n``, ``method``, ``seconds``, ``J``, ``rel_subopt``,
        ``time_vs_sgd`` (seconds / SGDClassifier's seconds), ``note``.
    """
    sizes = sizes or ((2000,) if quick else (20000, 100000))
    _warm_up()
    rows = []
    for n in progress(sizes, desc="subgradient: sizes"):
        rows += _rows_for(make_problem(n, random_state=random_state), random_state)
    return rows


def _rows_for(erm, random_state):
    from sklearn.linear_model import SGDClassifier
    from sklearn.svm import LinearSVC

    X, y, n = erm.X, erm.y, erm.n_samples
    J_star, t_cvx = _cvxpy_optimum(erm)
    rows = []
    sgd, t_sgd, warned = _timed(lambda: SGDClassifier(
        loss="hinge", alpha=erm.lam, random_state=random_state).fit(X, y))

    def row(method, seconds, J, note=""):
        rows.append({"n": n, "method": method, "seconds": seconds, "J": J,
                     "rel_subopt": (J - J_star) / J_star, "time_vs_sgd": seconds / t_sgd,
                     "note": note})

    row("cvxpy primal (Clarabel)", t_cvx, J_star, "exact optimum")
    row("SGDClassifier(hinge)", t_sgd, erm.objective(sgd.coef_.ravel(), sgd.intercept_[0]),
        f"{sgd.n_iter_} epochs" + (", ConvergenceWarning" if warned else ""))
    svc, t_svc, warned = _timed(lambda: LinearSVC(C=1.0 / (erm.lam * n), loss="hinge", dual=True,
                                                  random_state=random_state).fit(X, y))
    row("LinearSVC(hinge)", t_svc, erm.objective(svc.coef_.ravel(), svc.intercept_[0]),
        "bias regularized by liblinear" + (", ConvergenceWarning" if warned else ""))
    for factor in (1, 10):
        for batch in (1, 10):
            res, t, _ = _timed(lambda f=factor, k=batch: pegasos(
                erm, batch_size=k, max_iter=10**9, max_time=f * t_sgd,
                random_state=random_state))
            row(f"Pegasos (batch {batch}), {factor}× SGD time", t, res.fun, f"{res.nit} epochs")
    # the whole solve call, Solution and multipliers included, given SGD's time
    problem = SVMProblem(X, y, C=1.0 / (erm.lam * n), kernel="linear")
    sol, t, _ = _timed(lambda: problem.solve("pegasos", max_time=t_sgd,
                                             random_state=random_state))
    row("Pegasos problem.solve (Solution + α), SGD time", t,
        sol.primal_objective / problem.erm_scale,
        f"solver {sol.timings.get('solve', float('nan')):.2f} s, dual bound "
        f"{sol.dual_objective / problem.erm_scale:.4g}")
    res, t, _ = _timed(lambda: subgradient_descent(
        erm, schedule="1/sqrt(t)", tol=0.0, max_iter=10**9, callback=_time_limit(10 * t_sgd)))
    row("batch subgradient 1/sqrt(t), 10× SGD time", t, res.fun, f"{res.nit} iterations")
    return rows


def format_rows(rows) -> str:
    """The rows as a fixed-width table (one line per row) under the load line."""
    from .peers import load_line

    head = f"{'n':>7}  {'method':<48} {'seconds':>8} {'×SGD':>6} {'(J−J*)/J*':>10}  note"
    lines = [load_line(), head, "-" * len(head)]
    for r in rows:
        ratio = "" if r["time_vs_sgd"] is None else f"{r['time_vs_sgd']:.1f}"
        lines.append(f"{r['n']:>7}  {r['method']:<48} {r['seconds']:>8.2f} {ratio:>6} "
                     f"{r['rel_subopt']:>10.2e}  {r['note']}")
    return "\n".join(lines)


def convergence_runs(erm, J_star, *, max_iter=2000, batch_size=1, random_state=0):
    """J traces of the batch method under every schedule and of Pegasos, for plotting.

    Parameters
    ----------
    erm : PrimalERM
    J_star : float
        Optimal J (for the Polyak step).
    max_iter : int, default=2000
        Iterations of each batch run; Pegasos gets about as many stochastic steps.
    batch_size : int, default=1
        Pegasos' mini-batch.
    random_state : int, default=0

    Returns
    -------
    runs : dict of str to ndarray or (ndarray, ndarray)
        Label -> J per iteration, or -> (steps, J) for Pegasos (J after each epoch),
        as :func:`margin_opt.plots.convergence.plot_convergence` takes them.
    """
    runs = {}
    eta = default_step_size(erm)
    for schedule in SCHEDULES:
        step = eta / np.sqrt(max_iter) if schedule == "constant" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = subgradient_descent(erm, schedule=schedule, step_size=step, tol=0.0,
                                      max_iter=max_iter, f_star=J_star)
        label = f"batch {schedule}" + (f" (η = {step:.2g})" if step else "")
        runs[label] = res.history["J"]
    per_epoch = -(-erm.n_samples // batch_size)
    res = pegasos(erm, batch_size=batch_size, max_iter=max(1, max_iter // per_epoch),
                  random_state=random_state)
    runs[f"Pegasos (batch {batch_size}, averaged)"] = (
        np.arange(res.nit + 1) * per_epoch, res.history["J"])
    return runs
