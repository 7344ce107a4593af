"""Time the cvxpy dual of the RBF C-SVC in several exact forms, side by side.

    python benchmarks/bench_cvxpy_dual.py [n ...]

Data: make_classification(n, 20 features, 10 informative, flip_y=0.05), standardized,
RBF gamma=1/20, C=1.  Rows: the naive form (``quad_form(α, psd_wrap(Q))`` solved with
``Problem.solve``, which compiles it), margin_opt's ``solve("cvxpy-dual")`` (compiled
once, timed apart), the pivoted-Cholesky factor form, and Clarabel's multithreaded
faer LDL.  All runs use Clarabel; times are seconds on this machine, in one process.
"""

import sys
import time

import cvxpy as cp
import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from margin_opt import SVMProblem


def data(n):
    X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=0)
    return StandardScaler().fit_transform(X), y


def naive(problem):
    t0 = time.perf_counter()
    Q = (problem.y[:, None] * problem.y[None, :]) * problem.gram()
    a = cp.Variable(problem.n_samples)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.quad_form(a, cp.psd_wrap(Q))),
                      [a >= 0, a <= problem.C_i, problem.y @ a == 0])
    prob.solve(solver="CLARABEL")
    total = time.perf_counter() - t0
    return prob.value, {"compile": prob.compilation_time, "solve": prob.solver_stats.solve_time,
                        "total": total}


def main(sizes):
    print(f"{'n':>6} {'form':<22} {'compile s':>10} {'solve s':>9} {'total s':>9} "
          f"{'ratio':>7} {'dual objective':>16}")
    for n in sizes:
        X, y = data(n)
        rows = []
        p = SVMProblem(X, y, C=1.0, kernel="rbf", gamma=1 / 20)
        p.gram()
        val, t = naive(p)
        rows.append(("naive quad_form", val, t))
        for label, kw in [("margin_opt auto", {}),
                          ("factor (pivoted chol)", {"form": "factor"}),
                          ("auto + faer LDL", {"direct_solve_method": "faer"})]:
            s = p.solve("cvxpy-dual", **kw)
            rows.append((label, s.dual_objective, s.timings))
        base = rows[0][2]["total"]
        for label, val, t in rows:
            print(f"{n:>6} {label:<22} {t.get('compile', float('nan')):>10.2f} "
                  f"{t.get('solve', float('nan')):>9.2f} {t['total']:>9.2f} "
                  f"{t['total'] / base:>7.2f} {val:>16.8f}", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 2000, 4000])
