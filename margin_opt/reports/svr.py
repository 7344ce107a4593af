"""``margin-opt verify --model svr``: the ε-SVR by every method, certified."""

from __future__ import annotations

import time

from ..methods import get_method
from ..problems.svr import SVRProblem
from ..validation import libsvm_input
from .methods import TablePrinter, default_methods, finish, run_methods, run_ok

__all__ = ["verify"]


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
           plot=None, stream=None):
    """Solve one ε-SVR with several methods, certify each (tube table), tabulate.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    C : float, default=1.0
    epsilon : float, default=0.1
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Registry names (:mod:`margin_opt.methods`; default: the exact ones available).
    plot : str, optional
        PNG file: the fit with its tube for one-dimensional data, else the residuals
        against f(x) with the band ±ε, points by tube category.
    stream : file-like, optional
        Print the table there as the methods finish (see
        :func:`margin_opt.reports.svm.verify`), then the reference's certificate.

    Returns
    -------
    report : dict
    text : str
    ok : bool
    """
    problem = SVRProblem(dataset.X, dataset.y, C=C, epsilon=epsilon, kernel=kernel,
                         gamma=gamma)
    methods = list(methods or default_methods("svr", kernel, problem.n_samples))
    n, d = problem.n_samples, problem.X.shape[1]
    title = (f"margin-opt verify: {dataset.name} (n={n}, d={d}), ε-SVR C={problem.C:g} "
             f"ε={problem.epsilon:g}, kernel {problem.kernel.describe()}")
    printer = TablePrinter(title, stream) if stream is not None else None
    rows, solutions, ref = run_methods(problem, methods, external=_libsvm,
                                       on_row=printer and printer.row)
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": "svr", "C": problem.C, "epsilon": problem.epsilon,
                          "kernel": problem.kernel.describe()},
              "reference": ref, "rows": rows, "ok": run_ok(rows)}
    said = []
    if ref is not None:
        cert = problem.certify(solutions[ref], tol=get_method(ref).accuracy_for("svr"))
        report["tube_table"] = cert.to_dict()["table"]
        said += ["", str(cert)]
    if plot and ref is not None:
        from ..plots.svr import plot_tube_1d, plot_tube_residuals

        draw = plot_tube_1d if problem.X.shape[1] == 1 else plot_tube_residuals
        draw(problem, solutions[ref], file=plot)
        report["plots"] = [plot]
    return finish(report, title, rows, ref, said, printer, plot)
