"""Benchmark suite ``svr``: SMO on the ε-SVR's 2n-variable form against LIBSVM's SVR.

Same data, kernel, C, ε, tol (1e-3) and 200 MB cache for both, in one process;
our kernels JIT-compiled first, runs alternated and the best of ``repeats`` kept.
Each dual objective ½βᵀKβ + εΣ(a + â) − yᵀβ (β = a − â, LIBSVM's "obj") is
evaluated by the same code and compared with a tight reference (our SMO at
``ref_tol``).  Data: ``make_regression(n, 20, noise=10)`` standardized, RBF γ = 0.05,
C = 1, ε = 0.1, at n = 5000 and 20000.
"""

from __future__ import annotations

import numpy as np

from ..progress import progress

__all__ = ["run", "format_rows", "regression_data"]

SIZES = (5000, 20000)
QUICK_SIZES = (500, 1500)


def regression_data(n, random_state=0):
    """``make_regression(n, 20, noise=10)`` with features and target standardized."""
    from sklearn.datasets import make_regression
    from sklearn.preprocessing import StandardScaler

    X, y = make_regression(n, 20, noise=10.0, random_state=random_state)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def _objective(problem, a, a_star, chunk=512):
    """LIBSVM's minimized SVR objective, kernel rows computed ``chunk`` at a time."""
    beta = a - a_star
    nz = np.flatnonzero(beta)
    quad = 0.0
    for s in range(0, nz.size, chunk):
        idx = nz[s:s + chunk]
        quad += float(beta[idx] @ (problem.kernel(problem.X[idx], problem.X[nz]) @ beta[nz]))
    return 0.5 * quad + problem.epsilon * float((a + a_star).sum()) - float(problem.y @ beta)


def compare(n, *, C=1.0, epsilon=0.1, gamma=0.05, tol=1e-3, ref_tol=1e-6, repeats=3,
            cache_size=200, default=True):
    """Time our SMO, LIBSVM's SVR, oneDAL's (where installed) and ``margin_opt.SVR()``
    at its defaults (certificate included) on one problem; return one JSON-ready row."""
    from sklearn.svm import SVR

    from ..estimators.svr import SVR as OurSVR
    from ..problems.svr import SVRProblem
    from ..solvers.smo import solve_smo
    from .peers import best_of, load_average, onedal

    X, y = regression_data(n)
    problem = SVRProblem(X, y, C=C, epsilon=epsilon, kernel="rbf", gamma=gamma)
    qp = problem.to_standard_form()
    fns = {"ours": lambda: solve_smo(qp, tol=tol, cache_size=cache_size),
           "libsvm": lambda: SVR(C=C, epsilon=epsilon, kernel="rbf", gamma=gamma, tol=tol,
                                 cache_size=cache_size).fit(X, y)}
    DAL = onedal("SVR")
    if DAL is not None:
        fns["onedal"] = lambda: DAL(C=C, epsilon=epsilon, kernel="rbf", gamma=gamma, tol=tol,
                                    cache_size=cache_size).fit(X, y)
    if default:
        fns["default"] = lambda: OurSVR(C=C, epsilon=epsilon, kernel="rbf",
                                        gamma=gamma).fit(X, y)
    load = load_average()
    times, out = best_of(fns, repeats)
    res, svr = out["ours"], out["libsvm"]
    beta_lib = np.zeros(n)
    beta_lib[svr.support_] = svr.dual_coef_[0]
    ref = solve_smo(qp, tol=ref_tol, gap_tol=ref_tol, cache_size=cache_size)
    obj_ref = _objective(problem, ref.x[:n], ref.x[n:])
    obj_ours = _objective(problem, res.x[:n], res.x[n:])
    obj_lib = _objective(problem, np.maximum(beta_lib, 0), np.maximum(-beta_lib, 0))
    t_dal = times.get("onedal")
    row = {"n": n, "d": X.shape[1], "kernel": f"rbf(gamma={gamma:g})", "C": C,
           "epsilon": epsilon, "tol": tol, "time_ours": times["ours"],
           "time_libsvm": times["libsvm"], "time_onedal": t_dal,
           "ratio": times["ours"] / times["libsvm"], "obj_ours": obj_ours,
           "obj_libsvm": obj_lib, "obj_ref": obj_ref,
           "rel_err_ours": abs(obj_ours - obj_ref) / abs(obj_ref),
           "rel_err_libsvm": abs(obj_lib - obj_ref) / abs(obj_ref),
           "nsv_ours": int(np.count_nonzero(res.x[:n] - res.x[n:])),
           "nsv_libsvm": int(svr.support_.size), "iter_ours": int(res.nit),
           "iter_libsvm": int(np.sum(svr.n_iter_)), "repeats": repeats, "load": load}
    if default:
        row.update(time_default=times["default"],
                   default_certified=bool(out["default"].certificate_.ok))
    return row


def run(quick=False, sizes=None, repeats=None):
    """Run the suite; ``quick`` uses small sizes (a smoke test).

    Returns
    -------
    rows : list of dict
    """
    from ..solvers.smo import solve_smo

    X, y = regression_data(80)
    from ..problems.svr import SVRProblem

    solve_smo(SVRProblem(X, y, gamma=0.05).to_standard_form())  # JIT compile first
    from ..estimators.svr import SVR as OurSVR

    OurSVR(gamma=0.05).fit(X, y)
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    reps = repeats or (1 if not quick else 2)
    return [compare(n, repeats=reps if n > 5000 else max(reps, 3))
            for n in progress(sizes, desc="svr: sizes")]


def format_rows(rows) -> str:
    """The suite's table as text, with the load line."""
    from .peers import load_line

    def f(v):
        return "—" if v is None else f"{v:.3f}"

    lines = ["ε-SVR: SMO (margin_opt) at tol 1e-3 vs LIBSVM (sklearn.svm.SVR) and oneDAL; "
             f"SVR() = margin_opt.SVR() defaults, certificate included; {load_line()}",
             f"{'n':>7}{'d':>4}  {'oneDAL s':>9}{'LIBSVM s':>10}{'ours s':>9}{'ratio':>7}"
             f"{'SVR() s':>9}{'cert':>5}{'Δref ours':>11}{'Δref LIBSVM':>12}"
             f"{'nSV':>12}{'iter':>16}{'load':>6}"]
    for r in rows:
        cert = {True: "OK", False: "FAIL", None: "—"}[r.get("default_certified")]
        lines.append(
            f"{r['n']:>7}{r['d']:>4}  {f(r.get('time_onedal')):>9}{r['time_libsvm']:>10.3f}"
            f"{r['time_ours']:>9.3f}{r['ratio']:>7.2f}{f(r.get('time_default')):>9}{cert:>5}"
            f"{r['rel_err_ours']:>11.1e}{r['rel_err_libsvm']:>12.1e}"
            f"{r['nsv_ours']:>6}/{r['nsv_libsvm']:<5}{r['iter_ours']:>8}/{r['iter_libsvm']:<7}"
            f"{r.get('load', 0.0):>6.2f}")
    return "\n".join(lines)
