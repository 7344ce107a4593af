"""Time the cvxpy dual of the C-SVC in several exact forms, side by side.

    python benchmarks/bench_cvxpy_dual.py [--kernel rbf|poly2] [--forms auto,...] [n ...]

Data: make_classification(n, 20 features, 10 informative, flip_y=0.05), standardized,
C = 1, RBF gamma = 1/20 (or the degree-2 polynomial kernel, gamma = 1/20, coef0 = 1,
whose Gram matrix has rank at most 231 = C(22, 2)).

Rows: the naive form (``quad_form(α, psd_wrap(Q))`` solved with ``Problem.solve``,
which compiles it), margin_opt's ``solve("cvxpy-dual")`` (compiled once, timed
apart), the pivoted-Cholesky factor form, and Clarabel's multithreaded faer LDL.
All runs use Clarabel; times are seconds on this machine, in one process.
"""

import time

import cvxpy as cp
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


FORMS = {"auto": ("margin_opt auto", {}),
         "factor": ("factor (pivoted chol)", {"form": "factor"}),
         "quad_form": ("quad_form, compiled once", {"form": "quad_form"}),
         "faer": ("auto + faer LDL", {"direct_solve_method": "faer"})}


def main(sizes, kernel="rbf", forms=("auto", "factor", "faer")):
    kw = ({"kernel": "rbf", "gamma": 1 / 20} if kernel == "rbf" else
          {"kernel": "poly", "degree": 2, "gamma": 1 / 20, "coef0": 1.0})
    print(f"kernel {kernel}")
    print(f"{'n':>6} {'form':<22} {'compile s':>10} {'solve s':>9} {'total s':>9} "
          f"{'ratio':>7} {'dual objective':>16}")
    for n in sizes:
        X, y = data(n)
        rows = []
        p = SVMProblem(X, y, C=1.0, **kw)
        p.gram()
        val, t = naive(p)
        rows.append(("naive quad_form", val, t))
        for name in forms:
            label, options = FORMS[name]
            s = p.solve("cvxpy-dual", **options)
            rows.append((label, s.dual_objective, s.timings))
        base = rows[0][2]["total"]
        for label, val, t in rows:
            print(f"{n:>6} {label:<22} {t.get('compile', float('nan')):>10.2f} "
                  f"{t.get('solve', float('nan')):>9.2f} {t['total']:>9.2f} "
                  f"{t['total'] / base:>7.2f} {val:>16.8f}", flush=True)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", type=int, default=[1000, 2000, 4000])
    ap.add_argument("--kernel", choices=["rbf", "poly2"], default="rbf")
    ap.add_argument("--forms", default="auto,factor,faer")
    a = ap.parse_args()
    main(a.sizes, a.kernel, a.forms.split(","))
