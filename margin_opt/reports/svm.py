"""``margin-opt verify`` for the C-SVC: every method, certified, one row each."""

from __future__ import annotations

import time

from ..problems.svm import SVMProblem
from ..solution import Solution
from ..validation import libsvm_input
from .methods import (
    TablePrinter,
    default_methods,
    format_table,
    plot_histories,
    run_methods,
    run_ok,
)

__all__ = ["verify"]


def _libsvm(problem: SVMProblem) -> Solution:
    from sklearn.svm import SVC as SkSVC

    if problem.hard_margin:
        raise ValueError("LIBSVM has no hard margin; use a finite C")
    k = problem.kernel
    sk = SkSVC(C=problem.C, kernel=k.name, gamma=k.gamma or "scale", degree=k.degree,
               coef0=k.coef0, tol=1e-6, cache_size=500)
    labels = problem.classes_[(problem.y > 0).astype(int)]
    t0 = time.perf_counter()
    sk.fit(libsvm_input(problem.X), labels)
    elapsed = time.perf_counter() - t0
    sol = Solution.from_sklearn(sk, problem)
    sol.timings["total"] = elapsed
    return sol


def verify(dataset, *, C=1.0, kernel="rbf", gamma="scale", methods=None, plot=None,
           stream=None):
    """Solve one C-SVC with several methods, certify each, and tabulate.

    Parameters
    ----------
    dataset : margin_opt.datasets.Dataset
    C : float, default=1.0
        ``inf`` poses the hard margin.
    kernel : str, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
    methods : list of str, optional
        Registry names (:mod:`margin_opt.methods`); default :func:`default_methods`.
    plot : str, optional
        PNG file(s), named by :func:`margin_opt.plots.figure_paths`: the reference
        answer's picture (the decision boundary with margins and support vectors for
        two features, else the functional margins against α by support-vector
        category) and, with iterative methods, their suboptimality by iteration.
    stream : file-like, optional
        Print the table there as the methods finish (the title and header first,
        each row when its method is done, flushed), instead of only returning it.

    Returns
    -------
    report : dict
        JSON-ready: the data, the problem, one row per method.
    text : str
        The printed table.
    ok : bool
        True when every certificate passed.
    """
    problem = SVMProblem(dataset.X, dataset.y, C=C, kernel=kernel, gamma=gamma)
    methods = list(methods or default_methods("svc", kernel, problem.n_samples))
    if not set(methods) & {"cvxpy-dual", "cvxpy-primal", "smo"}:
        methods.insert(0, "cvxpy-dual")  # the reference the iterative methods are held to
    n, d = problem.n_samples, problem.X.shape[1]
    title = (f"margin-opt verify: {dataset.name} (n={n}, d={d}), C-SVC C={problem.C:g}, "
             f"kernel {problem.kernel.describe()}")
    printer = TablePrinter(title, stream) if stream is not None else None
    rows, solutions, ref = run_methods(problem, methods, external=_libsvm,
                                       on_row=printer and printer.row)
    report = {"data": {"name": dataset.name, "n_samples": n, "n_features": d},
              "problem": {"model": "svc", "C": problem.C, "kernel": problem.kernel.describe()},
              "reference": ref, "rows": rows, "ok": run_ok(rows)}
    text = format_table(title, rows, ref)
    said = []
    if plot:
        report["plots"], line = _plots(problem, solutions, ref, rows, plot)
        said.append(line)
    if printer is not None:
        printer.close(rows, ref, said)
    return report, "\n".join([text, *said]), report["ok"]


def _plots(problem, solutions, ref, rows, file):
    """Write the figures of a verify run; (paths, a line saying what was written)."""
    from ..plots import figure_paths
    from ..plots.svc import plot_decision_boundary, plot_margins_vs_alpha

    if ref is None:
        return [], "plot: no figure, since no method's answer certified."
    parts = ["boundary" if problem.X.shape[1] == 2 else "margins"]
    iterative = [r["method"] for r in rows if r.get("iterative") and r["method"] in solutions]
    if iterative:
        parts.append("convergence")
    where = figure_paths(file, parts)
    draw = plot_decision_boundary if parts[0] == "boundary" else plot_margins_vs_alpha
    tol = next(r["tol"] for r in rows if r["method"] == ref)
    draw(problem, solutions[ref], tol=tol, file=where[parts[0]],
         title=f"{ref}: {parts[0]} (n = {problem.n_samples})")
    paths = [where[parts[0]]]
    if iterative and plot_histories(solutions, solutions[ref], problem, where["convergence"]):
        paths.append(where["convergence"])
    return paths, "plots: " + ", ".join(paths)
