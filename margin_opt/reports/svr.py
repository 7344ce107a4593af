"""``margin-opt verify --model svr``: the ε-SVR by every method, certified."""

from __future__ import annotations

import time

from ..problems.svr import SVRProblem
from ..solvers import available_backends
from ..validation import libsvm_input
from .methods import format_table, run_methods
from .svm import CVXPY_KERNEL_MAX_N

__all__ = ["verify", "METHODS"]

#: method -> (solve keywords or None for LIBSVM, certificate tolerance); see
#: :data:`margin_opt.reports.svm.METHODS` for why some are held to looser tolerances.
METHODS = {
    "cvxpy-dual": ({"method": "cvxpy-dual"}, 1e-6),
    "cvxpy-primal": ({"method": "cvxpy-primal", "form": "slack"}, 1e-6),
    "cvxpy-loss": ({"method": "cvxpy-primal", "form": "loss"}, 1e-4),
    "smo": ({"method": "smo", "tol": 1e-6}, 1e-5),
    "libsvm": (None, 1e-4),
    "subgradient": ({"method": "subgradient", "schedule": "1/sqrt(t)", "tol": 0.0,
                     "max_iter": 5000}, 1e-2),
}


def _libsvm(problem: SVRProblem):
    from sklearn.svm import SVR as SkSVR

    k = problem.kernel
    sk = SkSVR(C=problem.C, epsilon=problem.epsilon, kernel=k.name, gamma=k.gamma or "scale",
               degree=k.degree, coef0=k.coef0, tol=1e-6, cache_size=500)
    t0 = time.perf_counter()
    sk.fit(libsvm_input(problem.X), problem.y)
    elapsed = time.perf_counter() - t0
    sol = problem.solution_from_sklearn(sk)
    sol.timings["total"] = elapsed
    return sol


def verify(dataset, *, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", methods=None,
           plot=None):
    """Solve one ε-SVR with several methods, certify each (tube table), tabulate.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    C : float, default=1.0
    epsilon : float, default=0.1
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Names from :data:`METHODS` (default: the exact ones available).
    plot : str, optional
        PNG file: the fit with its tube for one-dimensional data, else the residuals
        against f(x) with the band ±ε, points by tube category.

    Returns
    -------
    report : dict
    text : str
    ok : bool
    """
    problem = SVRProblem(dataset.X, dataset.y, C=C, epsilon=epsilon, kernel=kernel,
                         gamma=gamma)
    default = ["cvxpy-dual", "cvxpy-primal", "cvxpy-loss"]
    if kernel != "linear" and problem.n_samples > CVXPY_KERNEL_MAX_N:
        default = []  # a dense 2n-variable cvxpy dual would take too long
    default += ["smo"] if "smo" in available_backends() else []
    table = dict(METHODS)
    if problem.C > 1:  # see margin_opt.reports.svm.verify
        table["smo"] = ({**METHODS["smo"][0], "tol": 1e-6 / problem.C}, METHODS["smo"][1])
    rows, solutions, ref = run_methods(problem, list(methods or default + ["libsvm"]), table,
                                       external=_libsvm)
    n, d = problem.n_samples, problem.X.shape[1]
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": "svr", "C": problem.C, "epsilon": problem.epsilon,
                          "kernel": problem.kernel.describe()},
              "reference": ref, "rows": rows, "ok": all(r["ok"] for r in rows)}
    if ref is not None:
        cert = problem.certify(solutions[ref], tol=METHODS[ref][1])
        report["tube_table"] = cert.to_dict()["table"]
    if plot and ref is not None:
        from ..plots.svr import plot_tube_1d, plot_tube_residuals

        draw = plot_tube_1d if problem.X.shape[1] == 1 else plot_tube_residuals
        draw(problem, solutions[ref], file=plot)
        report["plot"] = plot
    title = (f"margin-opt verify: {dataset.name} (n={n}, d={d}), ε-SVR C={problem.C:g} "
             f"ε={problem.epsilon:g}, kernel {problem.kernel.describe()}")
    text = format_table(title, rows, ref)
    if ref is not None:
        text += "\n\n" + str(cert)
    return report, text, report["ok"]
