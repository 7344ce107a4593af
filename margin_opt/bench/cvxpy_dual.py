"""Benchmark suite ``cvxpy-dual``: the C-SVC dual in cvxpy, in several exact forms.

Data: ``make_classification(n, 20 features, 10 informative, flip_y=0.05)``,
standardized, C = 1, RBF γ = 1/20 (or, with ``kernel="poly2"``, the degree-2
polynomial kernel γ = 1/20, coef0 = 1, whose Gram matrix has rank at most
231 = C(22, 2)).

Rows, side by side in one process, all with Clarabel: the naive form
(``quad_form(α, psd_wrap(Q))`` solved by ``Problem.solve``, which compiles it),
margin_opt's ``solve("cvxpy-dual")`` (its automatic form, compiled once and timed
apart), the pivoted-Cholesky factor form, and Clarabel's multithreaded faer LDL.
Each row gives compile, solve and total seconds, the total's ratio to the naive
form and the dual objective (every form must reach the same optimum).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from ..problems.svm import SVMProblem
from ..progress import progress

__all__ = ["run", "format_rows", "FORMS", "KERNELS"]

#: form name -> (row label, options of ``solve("cvxpy-dual", ...)``)
FORMS = {"auto": ("margin_opt auto", {}),
         "factor": ("factor (pivoted chol)", {"quad_form": "factor"}),
         "quad_form": ("quad_form, compiled once", {"quad_form": "quad_form"}),
         "faer": ("auto + faer LDL", {"direct_solve_method": "faer"})}

#: kernel name -> SVMProblem keyword arguments
KERNELS = {"rbf": {"kernel": "rbf", "gamma": 1 / 20},
           "poly2": {"kernel": "poly", "degree": 2, "gamma": 1 / 20, "coef0": 1.0}}


def _data(n):
    X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=0)
    return StandardScaler().fit_transform(X), y


def _naive(problem):
    """The textbook form, compiled and solved by ``Problem.solve``: (objective, times)."""
    import cvxpy as cp

    t0 = time.perf_counter()
    Q = (problem.y[:, None] * problem.y[None, :]) * problem.gram()
    a = cp.Variable(problem.n_samples)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.quad_form(a, cp.psd_wrap(Q))),
                      [a >= 0, a <= problem.C_i, problem.y @ a == 0])
    prob.solve(solver="CLARABEL")
    total = time.perf_counter() - t0
    return float(prob.value), {"compile": prob.compilation_time,
                               "solve": prob.solver_stats.solve_time, "total": total}


def run(quick=False, *, sizes=None, kernel="rbf", forms=("auto", "factor", "faer")) -> list:
    """Time each form of the dual on each size; one row per (n, form).

    Parameters
    ----------
    quick : bool, default=False
        n = 300 only (a smoke test).
    sizes : list of int, optional
        Sample sizes (default 1000, 2000, 4000).
    kernel : {"rbf", "poly2"}, default="rbf"
    forms : sequence of str, default=("auto", "factor", "faer")
        Keys of :data:`FORMS`, timed after the naive form.

    Returns
    -------
    rows : list of dict
        ``n``, ``kernel``, ``form``, ``compile``, ``solve``, ``total`` (seconds),
        ``ratio`` (total over the naive form's) and ``dual_objective``.

    Raises
    ------
    ValueError
        An unknown kernel or form.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        raise ValueError(f"unknown form(s) {unknown}; choose from {sorted(FORMS)}")
    sizes = list(sizes or ([300] if quick else [1000, 2000, 4000]))
    rows = []
    warm = SVMProblem(*_data(40), C=1.0, **KERNELS[kernel])  # first-use costs, untimed
    _naive(warm)
    warm.solve("cvxpy-dual")
    for n in progress(sizes, desc="cvxpy-dual: sizes"):
        X, y = _data(n)
        problem = SVMProblem(X, y, C=1.0, **KERNELS[kernel])
        problem.gram()
        value, times = _naive(problem)
        found = [("naive quad_form", value, times)]
        for name in forms:
            label, options = FORMS[name]
            sol = problem.solve("cvxpy-dual", **options)
            found.append((label, float(sol.dual_objective), dict(sol.timings)))
        base = found[0][2]["total"]
        for label, value, times in found:
            rows.append({"n": n, "kernel": kernel, "form": label,
                         "compile": times.get("compile", np.nan),
                         "solve": times.get("solve", np.nan), "total": times["total"],
                         "ratio": times["total"] / base, "dual_objective": value})
    return rows


def format_rows(rows) -> str:
    """The rows as a text table under the load line."""
    from .peers import load_line

    head = (f"{'n':>6} {'kernel':<6} {'form':<24} {'compile s':>10} {'solve s':>9} "
            f"{'total s':>9} {'ratio':>7} {'dual objective':>16}")
    lines = [f"the C-SVC dual in cvxpy (Clarabel), ratio to the naive quad_form; {load_line()}",
             head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['n']:>6} {r['kernel']:<6} {r['form']:<24} {r['compile']:>10.2f} "
                     f"{r['solve']:>9.2f} {r['total']:>9.2f} {r['ratio']:>7.2f} "
                     f"{r['dual_objective']:>16.8f}")
    return "\n".join(lines)
